/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * many_maps: a process with very many mappings, to benchmark
 * `memacct explain` (/proc/PID/smaps walking).
 *
 * Creates N one-page mappings side by side in one reserved range.  The
 * protections alternate (read-write, read-only) so that no two neighbours
 * can merge, and every third mapping is a private mapping of a small
 * temporary file (at varying offsets) instead of anonymous memory.  Each
 * mapping gets one page touched: written if read-write (anonymous: a zero
 * fill; file: a file CoW), read if read-only (anonymous: the zero page;
 * file: the page-cache page).  Then it prints "ready PID" and sleeps until
 * SIGTERM/SIGINT or until SECONDS have elapsed, removes its file and exits 0.
 *
 * The file goes in $TMPDIR, else /var/tmp, else /tmp.
 *
 * Usage: many_maps [N=10000] [SECONDS=120]
 * Output (stdout):
 *   truth mappings N
 *   truth anon_mappings N
 *   truth file_mappings N
 *   truth written_bytes B          (pages written, one per read-write mapping)
 *   truth file_cow_bytes B         (the written file-backed ones)
 *   truth pid PID
 *   ready PID
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "page.h"
#define FILE_PAGES 64

static char path[4096];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void die(const char *what)
{
	fprintf(stderr, "many_maps: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: many_maps [N=10000] [SECONDS=120]\n");
	exit(2);
}

static int make_file(void)
{
	const char *dirs[] = { getenv("TMPDIR"), "/var/tmp", "/tmp" };
	char page[PAGE];
	int fd = -1;

	for (unsigned int i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && fd < 0; i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/memacct-many_maps.XXXXXX", dirs[i]);
		fd = mkstemp(path);
	}
	if (fd < 0) {
		path[0] = 0;
		die("mkstemp");
	}
	atexit(cleanup);
	for (int i = 0; i < FILE_PAGES; i++) {
		memset(page, 'a' + i % 26, sizeof(page));
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			die("write");
	}
	return fd;
}

int main(int argc, char **argv)
{
	unsigned long n = 10000, seconds = 120, nanon = 0, nfile = 0, written = 0, fcow = 0;
	unsigned long sum = 0;
	struct sigaction sa;
	struct timespec ts;
	char *base;
	int fd;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || i > 2 || (i == 1 && v == 0))
			usage();
		if (i == 1)
			n = v;
		else
			seconds = v;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		die("sigaction");

	fd = make_file();
	base = mmap(NULL, n * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		die("mmap reserve");

	for (unsigned long i = 0; i < n; i++) {
		int rw = (i % 2) == 0, file = (i % 3) == 2;
		int prot = rw ? PROT_READ | PROT_WRITE : PROT_READ;
		volatile char *p;

		if (file)
			p = mmap(base + i * PAGE, PAGE, prot, MAP_PRIVATE | MAP_FIXED, fd,
				 (off_t)((i * 7) % FILE_PAGES) * PAGE);
		else
			p = mmap(base + i * PAGE, PAGE, prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			die("mmap (vm.max_map_count too low?)");
		if (rw) {
			p[0] = 1;
			written++;
			fcow += file;
		} else {
			sum += p[0];
		}
		nfile += file;
		nanon += !file;
	}
	(void)sum;

	printf("truth mappings %lu\n", n);
	printf("truth anon_mappings %lu\n", nanon);
	printf("truth file_mappings %lu\n", nfile);
	printf("truth written_bytes %lu\n", written * PAGE);
	printf("truth file_cow_bytes %lu\n", fcow * PAGE);
	printf("truth pid %d\n", (int)getpid());
	printf("ready %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = 0;
	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;	/* atexit removes the file */
}
