/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_fork: ground truth for anonymous copy-on-write after fork().
 *
 * The parent maps MiB of private anonymous memory (THP disabled on it, so
 * every fault is one 4 KiB page) and writes every page, so the pages are
 * present and exclusively owned.  It then forks:
 *
 *   default          the child writes one byte in each of the first 1/den of
 *                    the pages and exits; the parent waits.  Every such write
 *                    copies the page in the child:
 *                      child_cow_bytes = (pages / den) * PAGE, parent_cow_bytes = 0
 *   --parent-writes  the child stays alive, holding the pages, while the
 *                    parent writes the first 1/den of the pages, then exits:
 *                      child_cow_bytes = 0, parent_cow_bytes = (pages / den) * PAGE
 *
 * On x86-64 the truth is exact at page granularity for the whole process,
 * not only for the buffer: rseq is unregistered first (the kernel would
 * otherwise write the TLS rseq area on return to user space, a CoW), the
 * child runs on its own fresh stack and touches nothing else, and between
 * clone() and the reaping wait4() the parent writes no user memory except
 * the buffer (raw syscalls in inline assembly; wait4's status goes to a page
 * untouched before the fork, i.e. a zero fill, not a copy).  Elsewhere (or
 * built with -DWORKLOAD_PORTABLE_FORK) a plain fork() is used and a few
 * incidental CoW pages (stack, libc data) may be added on top of the truth.
 * In every case the dynamic loader's relocation writes add about ten
 * file-CoW pages (private file mappings), which are not anonymous CoW.
 *
 * --hold: after printing the truth, the process stays until its stdin ends
 * (a test moves it to another cgroup meanwhile).
 *
 * Usage: cow_fork [MiB=100] [den=4] [--parent-writes] [--hold]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth child_cow_bytes B
 *   truth parent_cow_bytes B
 *   truth parent_pid PID
 *   truth child_pid PID
 *   truth exact 1|0       1: the CoW truths are exact for the whole process
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "raw_fork.h"

static void die(const char *what)
{
	fprintf(stderr, "cow_fork: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: cow_fork [MiB=100] [den=4] [--parent-writes] [--hold]\n");
	exit(2);
}

struct child_args {
	volatile char *buf;
	unsigned long npages;	/* pages the child writes */
	int rfd, wfd;		/* >= 0: wait for EOF on rfd before exiting */
};

/* Runs on its own fresh stack; writes nothing but the buffer and that stack. */
static int child_fn(void *arg)
{
	struct child_args *ca = arg;
	volatile char *p = ca->buf;
	char c;

	for (unsigned long i = 0; i < ca->npages; i++)
		p[i * PAGE] = 2;
	if (ca->rfd >= 0) {
		raw3(__NR_close, ca->wfd, 0, 0);
		while (raw3(__NR_read, ca->rfd, (long)&c, 1) > 0)
			;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = 100, den = 4, npages, ncow;
	int parent_writes = 0, hold = 0, npos = 0, pfd[2] = { -1, -1 };
	struct child_args ca;
	char *buf, *stack, *scratch;
	int *status;
	long pid;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long v;

		if (!strcmp(argv[i], "--parent-writes")) {
			parent_writes = 1;
			continue;
		}
		if (!strcmp(argv[i], "--hold")) {
			hold = 1;
			continue;
		}
		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || v == 0 || npos > 1)
			usage();
		if (npos++ == 0)
			mib = v;
		else
			den = v;
	}
	npages = mib * (1024 * 1024 / PAGE);
	ncow = npages / den;

	rseq_unregister();

	buf = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap buffer");
	if (madvise(buf, npages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	memset(buf, 0x5a, npages * PAGE);	/* present and exclusively owned */

	/* Untouched before the fork: first touches are zero fills, never copies. */
	stack = mmap(NULL, CHILD_STACK + PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		die("mmap child stack");
	scratch = stack;		/* first page: wait4 status */
	status = (int *)scratch;

	ca.buf = buf;
	ca.npages = parent_writes ? 0 : ncow;
	ca.rfd = ca.wfd = -1;
	if (parent_writes) {
		if (pipe(pfd))
			die("pipe");
		ca.rfd = pfd[0];
		ca.wfd = pfd[1];
	}
	fflush(NULL);

	pid = clone_touch_wait(child_fn, &ca, stack + PAGE + CHILD_STACK,
			       buf, parent_writes ? ncow : 0,
			       parent_writes ? pfd[1] : -1, status);
	if (pid < 0) {
		errno = (int)-pid;
		die("clone/wait4");
	}
	if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
		fprintf(stderr, "cow_fork: child %ld failed (status 0x%x)\n", pid, *status);
		return 1;
	}
	if (parent_writes)
		close(pfd[0]);

	printf("truth buffer_bytes %lu\n", npages * PAGE);
	printf("truth child_cow_bytes %lu\n", parent_writes ? 0 : ncow * PAGE);
	printf("truth parent_cow_bytes %lu\n", parent_writes ? ncow * PAGE : 0);
	printf("truth parent_pid %d\n", (int)getpid());
	printf("truth child_pid %ld\n", pid);
	printf("truth exact %d\n", RAW_FORK_EXACT);
	if (fflush(stdout))
		die("stdout");
	while (hold) {
		char c;
		ssize_t n = read(0, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	return 0;
}
