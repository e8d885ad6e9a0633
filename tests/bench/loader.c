// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * loader: a DataLoader-like workload. The parent holds a 128 MiB "dataset"
 * (anonymous, shared with workers by fork: CoW) and a 64 MiB file; 4 workers
 * per epoch are forked, each read()s its shard of the file, decodes it into
 * freshly malloc'd batches, reads the dataset and writes a little into it.
 * Prints elapsed seconds and the CPU seconds of the parent and its workers
 * (user + system, getrusage), which other load on the machine disturbs less.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DATASET (128UL << 20)
#define FILESZ (64UL << 20)
#define WORKERS 4
#define BATCH (1UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv(const struct timeval *t)
{
	return t->tv_sec + t->tv_usec / 1e6;
}

static void worker(int w, const char *path, volatile char *ds)
{
	int fd = open(path, O_RDONLY);
	size_t shard = FILESZ / WORKERS;
	char *buf = malloc(BATCH);
	unsigned long sum = 0;

	for (size_t off = w * shard; off < (w + 1) * shard; off += BATCH) {
		char *batch = malloc(BATCH);

		if (pread(fd, buf, BATCH, off) != (ssize_t)BATCH)
			_exit(1);
		for (size_t i = 0; i < BATCH; i += 64)
			batch[i] = buf[i] ^ ds[(off + i) % DATASET];
		for (size_t i = 0; i < BATCH; i += 4096)
			sum += batch[i];
		ds[(off * 7) % DATASET] = (char)sum;	/* a few CoW copies */
		free(batch);
	}
	_exit(sum == 42);
}

int main(int argc, char **argv)
{
	int epochs = argc > 1 ? atoi(argv[1]) : 6;
	char path[] = "/tmp/memacct-bench-XXXXXX";
	int fd = mkstemp(path);
	char *ds = malloc(DATASET), *chunk = malloc(BATCH);
	struct rusage ru0, ru1, rc0, rc1;
	double t0;

	if (fd < 0 || !ds || !chunk)
		return 1;
	memset(chunk, 7, BATCH);
	for (size_t i = 0; i < FILESZ; i += BATCH)
		if (write(fd, chunk, BATCH) != (ssize_t)BATCH)
			return 1;
	memset(ds, 3, DATASET);
	getrusage(RUSAGE_SELF, &ru0);
	getrusage(RUSAGE_CHILDREN, &rc0);
	t0 = now();
	for (int e = 0; e < epochs; e++) {
		for (int w = 0; w < WORKERS; w++)
			if (fork() == 0)
				worker(w, path, ds);
		for (int w = 0; w < WORKERS; w++)
			wait(NULL);
	}
	t0 = now() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	getrusage(RUSAGE_CHILDREN, &rc1);
	printf("seconds %.4f cpu_seconds %.4f\n", t0,
	       tv(&ru1.ru_utime) + tv(&ru1.ru_stime) - tv(&ru0.ru_utime) - tv(&ru0.ru_stime) +
	       tv(&rc1.ru_utime) + tv(&rc1.ru_stime) - tv(&rc0.ru_utime) - tv(&rc0.ru_stime));
	unlink(path);
	return 0;
}
