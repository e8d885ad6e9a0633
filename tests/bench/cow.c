// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * cow: touch a buffer, fork, the child writes every page; ns per CoW copy,
 * wall clock and the child's CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
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
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256, len = mib << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 4, fd[2];
	double total = 0, cpu = 0;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	for (int r = 0; r < rounds; r++) {
		double t[2];
		pid_t c;

		if (pipe(fd))
			return 1;
		c = fork();
		if (c == 0) {
			double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);

			for (size_t i = 0; i < len; i += 4096)
				p[i] = 2;
			t[0] = now(CLOCK_MONOTONIC) - t0;
			t[1] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
			if (write(fd[1], t, sizeof(t)) != sizeof(t))
				_exit(1);
			_exit(0);
		}
		if (read(fd[0], t, sizeof(t)) != sizeof(t))
			return 1;
		waitpid(c, NULL, 0);
		close(fd[0]);
		close(fd[1]);
		total += t[0];
		cpu += t[1];
	}
	printf("ns_per_cow %.1f cpu_ns_per_cow %.1f\n", total / (rounds * (len / 4096)),
	       cpu / (rounds * (len / 4096)));
	return 0;
}
