/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom_cause: memory of a known make-up, then growth until the OOM killer
 * takes a process, in a cgroup with a memory limit (memacct run
 * --memory-max). Each mode fills one class first, so that the post-mortem
 * must name it as the cause (docs/metrics.md "OOM kills"):
 *
 *   oom_cause mlock LOCK_MIB GROW_MIB   mlock() LOCK_MIB of anon memory,
 *                                       then grow anon by GROW_MIB
 *   oom_cause shm PATH SHM_MIB GROW_MIB write SHM_MIB into the tmpfs file
 *                                       PATH (kept: the caller removes it),
 *                                       then grow anon by GROW_MIB
 *   oom_cause cow BUF_MIB WORKERS       touch BUF_MIB of anon, fork WORKERS
 *                                       children that each write every page
 *                                       (CoW copies), one a second, and
 *                                       hold the copies for 3 s
 *   oom_cause storm N MIB               fork N children one after the other,
 *                                       each touching MIB of anon: N kills
 *                                       (the child, by far the largest and
 *                                       at oom_score_adj 1000, is the victim)
 *
 * Growth is 1 MiB every 10 ms, so that memacct's once-a-second samples see
 * it. Ground truth on stdout, flushed before the memory it describes is
 * touched: "truth pid P" (the process that grows), "truth mlocked_bytes B",
 * "truth shm_bytes B", "truth cow_buffer_bytes B", "truth worker W P",
 * "truth storm_children N". A process the OOM killer does not take exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define MIB (1024 * 1024UL)

static long page;

static void usage(void)
{
	fprintf(stderr, "usage: oom_cause mlock LOCK_MIB GROW_MIB | shm PATH SHM_MIB GROW_MIB | "
		"cow BUF_MIB WORKERS | storm N MIB\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v)
		usage();
	return v;
}

static void flush(void)
{
	if (fflush(stdout)) {
		fprintf(stderr, "oom_cause: stdout: %s\n", strerror(errno));
		exit(1);
	}
}

static char *anon(unsigned long bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "oom_cause: mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

static void touch(char *p, unsigned long bytes)
{
	for (unsigned long off = 0; off < bytes; off += page)
		((volatile char *)p)[off] = (char)(off >> 12 | 1);
}

/* grow anon memory 1 MiB at a time, 10 ms apart, until killed */
static void grow(unsigned long mib)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (unsigned long i = 0; i < mib; i++) {
		touch(anon(MIB), MIB);
		nanosleep(&ts, NULL);
	}
}

static void mode_mlock(unsigned long lock_mib, unsigned long grow_mib)
{
	char *p = anon(lock_mib * MIB);

	printf("truth pid %d\ntruth mlocked_bytes %lu\n", (int)getpid(), lock_mib * MIB);
	flush();
	if (mlock(p, lock_mib * MIB)) {	/* faults every page in */
		fprintf(stderr, "oom_cause: mlock: %s\n", strerror(errno));
		exit(1);
	}
	grow(grow_mib);
}

static void mode_shm(const char *path, unsigned long shm_mib, unsigned long grow_mib)
{
	char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		fprintf(stderr, "oom_cause: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	printf("truth pid %d\ntruth shm_bytes %lu\n", (int)getpid(), shm_mib * MIB);
	flush();
	memset(buf, 0x5a, sizeof(buf));
	for (unsigned long i = 0; i < shm_mib * MIB / sizeof(buf); i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "oom_cause: writing %s: %s\n", path, strerror(errno));
			exit(1);
		}
	}
	close(fd);
	grow(grow_mib);
}

static void mode_cow(unsigned long buf_mib, unsigned long workers)
{
	unsigned long bytes = buf_mib * MIB;
	char *p = anon(bytes);

	touch(p, bytes);
	printf("truth pid %d\ntruth cow_buffer_bytes %lu\n", (int)getpid(), bytes);
	flush();
	for (unsigned long w = 0; w < workers; w++) {
		pid_t c = fork();

		if (c < 0) {
			fprintf(stderr, "oom_cause: fork: %s\n", strerror(errno));
			exit(1);
		}
		if (c == 0) {	/* a worker: copies the parent's pages by writing them */
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			for (unsigned long off = 0; off < bytes; off += MIB) {
				for (unsigned long o = off; o < off + MIB; o += page)
					((volatile char *)p)[o] = 2;
				nanosleep(&ts, NULL);
			}
			sleep(3);	/* holds its copies while the next copies */
			_exit(0);
		}
		printf("truth worker %lu %d\n", w, (int)c);
		flush();
		sleep(1);	/* the next once this one copied (~0.5 s) */
	}
	for (;;)
		if (wait(NULL) < 0 && errno == ECHILD)
			break;
}

static void mode_storm(unsigned long n, unsigned long mib)
{
	printf("truth pid %d\ntruth storm_children %lu\n", (int)getpid(), n);
	flush();
	for (unsigned long i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0) {
			fprintf(stderr, "oom_cause: fork: %s\n", strerror(errno));
			exit(1);
		}
		if (c == 0) {
			/* the victim before the parent whenever both can be
			 * chosen (raising needs no privilege) */
			int fd = open("/proc/self/oom_score_adj", O_WRONLY);

			if (fd >= 0) {
				if (write(fd, "1000", 4) != 4)
					_exit(1);
				close(fd);
			}
			touch(anon(mib * MIB), mib * MIB);
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	if (argc == 4 && !strcmp(argv[1], "mlock"))
		mode_mlock(num(argv[2]), num(argv[3]));
	else if (argc == 5 && !strcmp(argv[1], "shm"))
		mode_shm(argv[2], num(argv[3]), num(argv[4]));
	else if (argc == 4 && !strcmp(argv[1], "cow"))
		mode_cow(num(argv[2]), num(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "storm"))
		mode_storm(num(argv[2]), num(argv[3]));
	else
		usage();
	return 0;
}
