// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* fault: mmap anonymous memory, touch every page, munmap; prints ns per fault. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256, len = mib << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 8;
	double t0 = now();
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
	printf("ns_per_fault %.1f\n", (now() - t0) / faults);
	return 0;
}
