// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * fork N: N times fork a child that exits at once, and wait for it: one
 * sched_process_fork and one sched_process_exit (the process's last thread)
 * per round. Parent and child on CPU 0 (no migration, no cache transfer
 * between CPUs). The rounds run in batches of BATCH; printed are the median
 * over batches of the CPU time per round (parent and children, getrusage),
 * so that a burst of other work on the machine moves one batch, not the
 * figure, and the wall clock per round over all of them.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 50

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* CPU time of this process and of its waited-for children, ns */
static double cpu_ns(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) * 1e9 +
	       (s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
		c.ru_stime.tv_usec) * 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char *end;
	long n = argc > 1 ? strtol(argv[1], &end, 10) : 2000;
	long nb;
	double t0, *per;
	cpu_set_t set;

	if (argc > 1 && (*end || n < BATCH)) {
		fprintf(stderr, "usage: fork N (N >= %d)\n", BATCH);
		return 2;
	}
	nb = n / BATCH;
	per = calloc(nb, sizeof(*per));
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (!per || sched_setaffinity(0, sizeof(set), &set))
		return 1;
	t0 = now();
	for (long b = 0; b < nb; b++) {
		double c0 = cpu_ns();

		for (long i = 0; i < BATCH; i++) {
			pid_t pid = fork();

			if (pid < 0)
				return 1;
			if (pid == 0)
				_exit(0);
			if (waitpid(pid, NULL, 0) != pid)
				return 1;
		}
		per[b] = (cpu_ns() - c0) / BATCH;
	}
	qsort(per, nb, sizeof(*per), cmp_double);
	printf("ns_per_fork %.1f cpu_ns_per_fork %.1f\n", (now() - t0) / (nb * BATCH),
	       nb % 2 ? per[nb / 2] : (per[nb / 2 - 1] + per[nb / 2]) / 2);
	free(per);
	return 0;
}
