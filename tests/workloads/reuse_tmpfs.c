/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * reuse_tmpfs: ground truth that write faults which do not copy are not
 * counted as copy-on-write.
 *
 *  1. Maps MiB of private anonymous memory (THP disabled on it) and writes
 *     every page: present and exclusively owned.
 *  2. Forks a child that exits at once, and reaps it.  fork() write-protected
 *     every page in the parent; with the child gone the parent is again the
 *     only owner, so writing every page again takes a write-protect fault per
 *     page that REUSES the page (no copy): reuse_bytes = MiB * 2^20.
 *  3. write()s tmpfs_MiB of the buffer into a file on tmpfs (/dev/shm) and
 *     read()s it back into the buffer: page-cache copies, no CoW.
 *   cow_bytes = the buffer's pages whose frame the second write changed
 *   (pagemap): 0 when the kernel reused every page, as it nearly always
 *   does; in the parent (the child copies nothing)
 *   file_cow_bytes = the file pages the process copied, read from
 *   /proc/self/smaps at the end (vm_status.h): the loader's relocation
 *   writes and .data, none of them the workload's
 *
 * The process pins itself to one CPU first, so no page of it sits in another
 * CPU's LRU batch (an extra reference there would make the kernel copy
 * instead of reuse).  On x86-64, rseq is unregistered and the child is
 * created and reaped without any other user-memory write in between (see
 * cow_fork.c), so the child copies nothing either, and the parent's pages
 * are all exclusive again before it touches any of them.  (The dynamic
 * loader's relocation writes add about ten file-CoW pages; they are not
 * anonymous CoW, and file_cow_bytes counts them.)
 *
 * Usage: reuse_tmpfs [MiB=64] [tmpfs_MiB=16]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth reuse_bytes B
 *   truth tmpfs_io_bytes B
 *   truth cow_bytes 0
 *   truth file_cow_bytes B
 *   truth pid PID
 *   truth child_pid PID
 *   truth exact 1|0      0: a plain fork() (not x86-64), whose child may copy
 *                        a few pages (libc's .data: file CoW) before it exits
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "pagemap.h"
#include "raw_fork.h"
#include "vm_status.h"

#define TMPFS_MAGIC_ 0x01021994

static char path[64];

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void die(const char *what)
{
	fprintf(stderr, "reuse_tmpfs: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: reuse_tmpfs [MiB=64] [tmpfs_MiB=16]  (tmpfs_MiB <= MiB)\n");
	exit(2);
}

/* The child exits at once, touching nothing but its own fresh stack. */
static int child_fn(void *arg)
{
	(void)arg;
	return 0;
}

static void xfer(int fd, char *buf, size_t len, int do_write)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = do_write ? write(fd, buf + off, len - off)
				     : read(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(do_write ? "write tmpfs file" : "read tmpfs file");
		if (n == 0) {
			fprintf(stderr, "reuse_tmpfs: short read of tmpfs file\n");
			exit(1);
		}
		off += n;
	}
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, tmib = 16, npages, tbytes;
	char *buf, *stack;
	cpu_set_t set;
	struct statfs sfs;
	int *status, cpu, fd;
	uint64_t *before, *after;
	unsigned long copied = 0;
	long pid;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || v == 0 || i > 2)
			usage();
		if (i == 1)
			mib = v;
		else
			tmib = v;
	}
	if (tmib > mib)
		usage();
	npages = mib * (1024 * 1024 / PAGE);
	tbytes = tmib * 1024 * 1024;

	cpu = sched_getcpu();
	if (cpu < 0)
		die("sched_getcpu");
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	rseq_unregister();

	buf = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap buffer");
	if (madvise(buf, npages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	memset(buf, 0x5a, npages * PAGE);	/* present and exclusively owned */

	stack = mmap(NULL, CHILD_STACK + PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		die("mmap child stack");
	status = (int *)stack;		/* first page: wait4 status */
	fflush(NULL);

	pid = clone_touch_wait(child_fn, NULL, stack + PAGE + CHILD_STACK, buf, 0, -1, status);
	if (pid < 0) {
		errno = (int)-pid;
		die("clone/wait4");
	}
	if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
		fprintf(stderr, "reuse_tmpfs: child %ld failed (status 0x%x)\n", pid, *status);
		return 1;
	}

	/* The child is gone: every write-protect fault reuses the page, unless
	 * the kernel finds an extra reference on it (wp_can_reuse_anon_folio():
	 * a batch, the swap cache) and copies: the frames before and after
	 * tell (pagemap; the arrays' pages are first touched now, zero fills) */
	before = calloc(npages, sizeof(*before));
	after = calloc(npages, sizeof(*after));
	if (!before || !after)
		die("calloc");
	pagemap_frames("reuse_tmpfs", buf, npages, before);
	for (unsigned long i = 0; i < npages; i++)
		((volatile char *)buf)[i * PAGE] = 0x3c;
	pagemap_frames("reuse_tmpfs", buf, npages, after);
	for (unsigned long i = 0; i < npages; i++)
		copied += before[i] != after[i];

	snprintf(path, sizeof(path), "/dev/shm/memacct-reuse.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		path[0] = 0;
		die("mkstemp /dev/shm");
	}
	atexit(cleanup);
	if (fstatfs(fd, &sfs))
		die("fstatfs");
	if (sfs.f_type != TMPFS_MAGIC_) {
		fprintf(stderr, "reuse_tmpfs: /dev/shm is not tmpfs\n");
		return 1;
	}
	xfer(fd, buf, tbytes, 1);
	if (lseek(fd, 0, SEEK_SET) != 0)
		die("lseek");
	memset(buf, 0, tbytes);
	xfer(fd, buf, tbytes, 0);
	for (unsigned long i = 0; i < tbytes; i += PAGE)
		if (buf[i] != 0x3c || buf[i + 1] != 0x5a) {
			fprintf(stderr, "reuse_tmpfs: tmpfs data mismatch at %lu\n", i);
			return 1;
		}
	close(fd);

	printf("truth buffer_bytes %lu\n", npages * PAGE);
	printf("truth reuse_bytes %lu\n", npages * PAGE);
	printf("truth tmpfs_io_bytes %lu\n", tbytes);
	printf("truth cow_bytes %lu\n", copied * PAGE);
	printf("truth file_cow_bytes %lld\n", private_file_anon_bytes("reuse_tmpfs"));
	printf("truth pid %d\n", (int)getpid());
	printf("truth child_pid %ld\n", pid);
	printf("truth exact %d\n", RAW_FORK_EXACT);
	if (fflush(stdout))
		die("stdout");
	return 0;
}
