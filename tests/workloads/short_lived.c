/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * short_lived: ground truth for many short-lived processes.
 *
 * The parent allocates a 16-page buffer (page aligned, 64 KiB) and writes
 * it, then forks N children, at most BATCH alive at a time.  Each child
 * writes one byte in each of the 16 pages (16 copy-on-write copies, plus the
 * few incidental ones of glibc's fork and exit paths) and _exit(0)s at once;
 * the parent reaps them all.  Every child must be seen and accounted even
 * though it lives for well under a millisecond:
 *   children = N, per_child_touched_bytes = 65536
 *
 * Usage: short_lived [N=200] [BATCH=8]
 * Output (stdout):
 *   truth children N
 *   truth per_child_touched_bytes 65536
 *   truth pid PID                (the parent)
 *   truth parent_pid PID         (the same)
 *   truth child_pid PID          (N lines, in fork order)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "page.h"
#define TOUCH_PAGES 16

static void die(const char *what)
{
	fprintf(stderr, "short_lived: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: short_lived [N=200] [BATCH=8]\n");
	exit(2);
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = wait(&status)) < 0)
		if (errno != EINTR)
			die("wait");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "short_lived: child %d failed (status 0x%x)\n", (int)pid, status);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned long n = 200, batch = 8, alive = 0;
	volatile char *buf;
	pid_t *pids;
	void *mem;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || v == 0 || i > 2)
			usage();
		if (i == 1)
			n = v;
		else
			batch = v;
	}
	pids = calloc(n, sizeof(*pids));
	if (!pids)
		die("calloc");
	errno = posix_memalign(&mem, PAGE, TOUCH_PAGES * PAGE);
	if (errno)
		die("posix_memalign");
	buf = mem;
	memset(mem, 0x5a, TOUCH_PAGES * PAGE);
	fflush(NULL);

	for (unsigned long i = 0; i < n; i++) {
		pid_t pid;

		if (alive == batch) {
			reap();
			alive--;
		}
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			for (unsigned long p = 0; p < TOUCH_PAGES; p++)
				buf[p * PAGE] = (char)i;
			_exit(0);
		}
		pids[i] = pid;
		alive++;
	}
	while (alive--)
		reap();

	printf("truth children %lu\n", n);
	printf("truth per_child_touched_bytes %lu\n", TOUCH_PAGES * PAGE);
	printf("truth pid %d\n", (int)getpid());
	printf("truth parent_pid %d\n", (int)getpid());
	for (unsigned long i = 0; i < n; i++)
		printf("truth child_pid %d\n", (int)pids[i]);
	if (fflush(stdout))
		die("stdout");
	return 0;
}
