/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * zero_fill: ground truth that writing to a page first mapped by a read
 * fault (the shared zero page) is a zero fill, not a copy-on-write.
 *
 * Maps MiB of private anonymous memory (THP disabled on it, so each fault is
 * one 4 KiB page), READS every page (each read fault maps the shared zero
 * page; RssAnon does not grow), then WRITES every page (each write fault on
 * the zero page allocates a zeroed page):
 *   cow_bytes = 0, zero_fill_bytes = MiB * 2^20
 * (zero_fill_bytes counts the buffer only; the loader, libc and stack add a
 * few zero-filled pages of their own.)
 *
 * Usage: zero_fill [MiB=64]
 * Output (stdout):
 *   kernel RssAnon_after_read_bytes B    RssAnon from /proc/self/status
 *   kernel RssAnon_after_write_bytes B
 *   truth buffer_bytes B
 *   truth cow_bytes 0
 *   truth zero_fill_bytes B
 *   truth pid PID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define PAGE 4096UL

static void die(const char *what)
{
	fprintf(stderr, "zero_fill: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "Key:   N kB" from /proc/self/status, in bytes. */
static long long status_bytes(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("open /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	if (v < 0) {
		fprintf(stderr, "zero_fill: no %s in /proc/self/status\n", key);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, npages, sum = 0;
	long long rss_read, rss_write;
	volatile char *buf;
	char *end;

	if (argc > 2) {
		fprintf(stderr, "usage: zero_fill [MiB=64]\n");
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		mib = strtoul(argv[1], &end, 10);
		if (errno || *end || mib == 0) {
			fprintf(stderr, "usage: zero_fill [MiB=64]\n");
			return 2;
		}
	}
	npages = mib * (1024 * 1024 / PAGE);

	buf = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (madvise((void *)buf, npages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");

	for (unsigned long i = 0; i < npages; i++)	/* maps the zero page */
		sum += buf[i * PAGE];
	if (sum != 0) {
		fprintf(stderr, "zero_fill: fresh anonymous memory is not zero\n");
		return 1;
	}
	rss_read = status_bytes("RssAnon");

	for (unsigned long i = 0; i < npages; i++)	/* zero page -> new zeroed page */
		buf[i * PAGE] = 1;
	rss_write = status_bytes("RssAnon");

	printf("kernel RssAnon_after_read_bytes %lld\n", rss_read);
	printf("kernel RssAnon_after_write_bytes %lld\n", rss_write);
	printf("truth buffer_bytes %lu\n", npages * PAGE);
	printf("truth cow_bytes 0\n");
	printf("truth zero_fill_bytes %lu\n", npages * PAGE);
	printf("truth pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	if (rss_write - rss_read < (long long)(npages * PAGE)) {
		fprintf(stderr, "zero_fill: RssAnon grew by %lld, expected at least %lu\n",
			rss_write - rss_read, npages * PAGE);
		return 1;
	}
	return 0;
}
