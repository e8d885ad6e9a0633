/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * raw_fork.h: fork without incidental copy-on-write, for the workloads whose
 * ground truth counts CoW pages exactly (cow_fork.c, reuse_tmpfs.c).
 *
 * Between clone() and the reaping wait4() the parent must write no user
 * memory except the pages it means to write, and the child nothing but its
 * own fresh stack and those pages: any other write (a libc variable, errno,
 * the stack frame of fork(), the kernel's rseq update of the TLS area) would
 * copy a page and add to the truth.  On x86-64 the whole sequence is raw
 * syscalls in inline assembly; elsewhere (or with -DWORKLOAD_PORTABLE_FORK)
 * plain fork() is used and a few incidental CoW pages may appear.
 */
#ifndef MEMACCT_RAW_FORK_H
#define MEMACCT_RAW_FORK_H

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "page.h"
#define CHILD_STACK (64 * 1024UL)

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
	/* best effort: at worst one incidental CoW page */
}

#if defined(__x86_64__) && !defined(WORKLOAD_PORTABLE_FORK)
/* the whole process's CoW is the truth, to the page (cow_fork.c) */
#define RAW_FORK_EXACT 1

/* A three-argument syscall that writes no user memory (no errno). */
static inline __attribute__((always_inline)) long
raw3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
	return ret;
}

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
/* a plain fork(): a few incidental CoW pages on top of the truth */
#define RAW_FORK_EXACT 0

static inline long raw3(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

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

#endif /* MEMACCT_RAW_FORK_H */
