// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * switch: two processes on one CPU pass a byte back and forth through two
 * pipes N times: every hop is a context switch (the sched_switch tracepoint
 * memacct attaches to). Prints ns per switch, wall clock and CPU time of
 * both processes (getrusage).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double cpu_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int ab[2], ba[2];
	cpu_set_t set;
	double t0, t1;
	char c = 0;
	pid_t pid;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (n <= 0 || sched_setaffinity(0, sizeof(set), &set) || pipe(ab) || pipe(ba))
		return 1;
	t0 = now();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	waitpid(pid, NULL, 0);
	t1 = now();
	/* 2 switches per round trip */
	printf("ns_per_switch %.1f cpu_ns_per_switch %.1f\n", (t1 - t0) / (2.0 * n),
	       (cpu_ns(RUSAGE_SELF) + cpu_ns(RUSAGE_CHILDREN)) / (2.0 * n));
	return 0;
}
