// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * fork: N times fork a child that exits at once, and wait for it: one
 * sched_process_fork and one sched_process_exit (the process's last thread)
 * per round. Prints ns per fork+exit, wall clock and CPU time of the parent
 * and its children (getrusage).
 */
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
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	double t0, c0;

	if (n <= 0)
		return 2;
	t0 = now();
	c0 = cpu_ns(RUSAGE_SELF);
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	printf("ns_per_fork %.1f cpu_ns_per_fork %.1f\n", (now() - t0) / n,
	       (cpu_ns(RUSAGE_SELF) - c0 + cpu_ns(RUSAGE_CHILDREN)) / n);
	return 0;
}
