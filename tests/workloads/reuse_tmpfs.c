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
 *   cow_bytes = 0 (in the parent and in the child)
 *
 * The process pins itself to one CPU first, so no page of it sits in another
 * CPU's LRU batch (an extra reference there would make the kernel copy
 * instead of reuse).  On x86-64, rseq is unregistered and the child is
 * created and reaped without any other user-memory write in between (see
 * cow_fork.c), so the child copies nothing either, and the parent's pages
 * are all exclusive again before it touches any of them.  (The dynamic
 * loader's relocation writes add about ten file-CoW pages; they are not
 * anonymous CoW.)
 *
 * Usage: reuse_tmpfs [MiB=64] [tmpfs_MiB=16]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth reuse_bytes B
 *   truth tmpfs_io_bytes B
 *   truth cow_bytes 0
 *   truth pid PID
 *   truth child_pid PID
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#define PAGE 4096UL
#define CHILD_STACK (64 * 1024UL)
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

/* Stop the kernel from writing the TLS rseq area (shared with the child). */
static void rseq_unregister(void)
{
	unsigned int lens[] = { __rseq_size, 32, 20 };
	void *area;

	if (__rseq_size == 0)
		return;
	area = (char *)__builtin_thread_pointer() + __rseq_offset;
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		if (syscall(__NR_rseq, area, lens[i], RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0)
			return;
	/* best effort */
}

/* The child exits at once, touching nothing but its own fresh stack. */
static int child_fn(void *arg)
{
	(void)arg;
	return 0;
}

#if defined(__x86_64__) && !defined(WORKLOAD_PORTABLE_FORK)
/*
 * clone(SIGCHLD) running fn(arg) in the child on stack_top; in the parent,
 * write one byte per page in [p, p + n pages), close close_fd if >= 0, and
 * wait4 the child into *status, with no other user-memory write in between.
 * Returns the child pid or -errno.
 */
static long clone_touch_wait(int (*fn)(void *), void *arg, void *stack_top,
			     volatile char *p, unsigned long n, long close_fd, int *status)
{
	register long r12 asm("r12") = (long)fn;
	register long r13 asm("r13") = (long)arg;
	register long r14 asm("r14") = (long)p;
	register long r15 asm("r15") = (long)n;
	register long rbx asm("rbx") = close_fd;
	register long r9 asm("r9") = (long)status;
	register long rsi asm("rsi") = (long)stack_top;
	long ret;

	asm volatile(
		"mov $56, %%eax\n\t"		/* clone(SIGCHLD, stack_top, 0, 0, 0) */
		"mov $17, %%edi\n\t"
		"xor %%edx, %%edx\n\t"
		"xor %%r10d, %%r10d\n\t"
		"xor %%r8d, %%r8d\n\t"
		"syscall\n\t"
		"test %%rax, %%rax\n\t"
		"jnz 1f\n\t"
		/* child, on its own stack */
		"xor %%ebp, %%ebp\n\t"
		"mov %%r13, %%rdi\n\t"
		"call *%%r12\n\t"
		"mov %%eax, %%edi\n\t"
		"mov $231, %%eax\n\t"		/* exit_group */
		"syscall\n\t"
		"ud2\n"
		"1:\n\t"
		"js 9f\n\t"			/* clone failed */
		"mov %%rax, %%r12\n\t"		/* child pid */
		"test %%r15, %%r15\n\t"
		"jz 3f\n"
		"2:\n\t"
		"movb $1, (%%r14)\n\t"
		"add $4096, %%r14\n\t"
		"dec %%r15\n\t"
		"jnz 2b\n"
		"3:\n\t"
		"test %%rbx, %%rbx\n\t"
		"js 4f\n\t"
		"mov %%rbx, %%rdi\n\t"
		"mov $3, %%eax\n\t"		/* close */
		"syscall\n"
		"4:\n\t"
		"mov %%r12, %%rdi\n\t"		/* wait4(pid, status, 0, NULL) */
		"mov %%r9, %%rsi\n\t"
		"xor %%edx, %%edx\n\t"
		"xor %%r10d, %%r10d\n\t"
		"mov $61, %%eax\n\t"
		"syscall\n\t"
		"cmp $-4, %%rax\n\t"		/* -EINTR: retry */
		"je 4b\n"
		"9:\n"
		: "=&a"(ret), "+r"(r12), "+r"(r14), "+r"(r15), "+r"(rsi)
		: "r"(r13), "r"(rbx), "r"(r9)
		: "rdi", "rdx", "r10", "r8", "rcx", "r11", "memory", "cc");
	return ret;
}
#else
/* Portable fallback: a few incidental CoW pages may appear on both sides. */
static long clone_touch_wait(int (*fn)(void *), void *arg, void *stack_top,
			     volatile char *p, unsigned long n, long close_fd, int *status)
{
	pid_t pid;

	(void)stack_top;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn(arg));
	for (unsigned long i = 0; i < n; i++)
		p[i * PAGE] = 1;
	if (close_fd >= 0)
		close(close_fd);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return pid;
}
#endif

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

	/* The child is gone: every write-protect fault reuses the page. */
	for (unsigned long i = 0; i < npages; i++)
		((volatile char *)buf)[i * PAGE] = 0x3c;

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
	printf("truth cow_bytes 0\n");
	printf("truth pid %d\n", (int)getpid());
	printf("truth child_pid %ld\n", pid);
	if (fflush(stdout))
		die("stdout");
	return 0;
}
