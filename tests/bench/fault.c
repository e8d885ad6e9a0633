// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * fault: mmap anonymous memory, touch every page, munmap; prints ns per fault,
 * wall clock and the thread's CPU time (the latter does not count time spent
 * waiting for a CPU taken by other work: what tests/bench.sh compares).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256, len = mib << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 8;
	double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
	size_t faults = 0;

	for (int r = 0; r < rounds; r++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		madvise(p, len, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < len; i += 4096, faults++)
			p[i] = 1;
		munmap(p, len);
	}
	printf("ns_per_fault %.1f cpu_ns_per_fault %.1f\n", (now(CLOCK_MONOTONIC) - t0) / faults,
	       (now(CLOCK_THREAD_CPUTIME_ID) - c0) / faults);
	return 0;
}
