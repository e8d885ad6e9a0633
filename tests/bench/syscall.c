// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * syscall: N getppid() calls (a syscall no memacct program hooks): what
 * putting every syscall of every task on the kernel's slow path costs once
 * any syscalls:* tracepoint is attached (TIF_SYSCALL_TRACEPOINT /
 * SYSCALL_WORK_SYSCALL_TRACEPOINT), whichever syscall it names. Prints ns
 * per call, wall clock and the thread's CPU time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	double t0, c0;

	if (n <= 0)
		return 2;
	t0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);	/* not the libc wrapper: no caching */
	printf("ns_per_syscall %.1f cpu_ns_per_syscall %.1f\n", (now(CLOCK_MONOTONIC) - t0) / n,
	       (now(CLOCK_THREAD_CPUTIME_ID) - c0) / n);
	return 0;
}
