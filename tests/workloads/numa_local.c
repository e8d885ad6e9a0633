/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * numa_local: ground truth for the per-node stock (numa_maps) on any number
 * of nodes, with no memory policy. Maps MiB of private anonymous memory
 * (THP off) and writes every page; maps 8 MiB more, 2 MiB aligned, with
 * MADV_HUGEPAGE (transparent huge pages where the kernel gives them) and
 * writes it too. With --node N it first binds the first mapping to node N
 * (mbind MPOL_BIND, raw syscall) and pins itself to the CPUs of node 0 via
 * sched_setaffinity of CPU 0: then the whole buffer is remote (2 nodes).
 * Prints the truth and "ready PID", then waits for SIGTERM or SECONDS.
 *
 * Usage: numa_local [MiB=32] [--node N] [--seconds S=60]
 * Output (stdout):
 *   truth map_start ADDR        (decimal) start of the MiB mapping
 *   truth map_bytes B           MiB * 1 MiB, every page written
 *   truth thp_start ADDR        start of the 8 MiB MADV_HUGEPAGE mapping
 *   truth thp_bytes B
 *   ready PID
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MiB		(1024UL * 1024)
#define MPOL_BIND	2

static void die(const char *what)
{
	fprintf(stderr, "numa_local: %s: %s\n", what, strerror(errno));
	exit(1);
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long mib = 32, seconds = 60, node_mask;
	size_t len, thp_len = 8 * MiB;
	int node = -1;
	char *p, *raw, *thp;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--node") && i + 1 < argc)
			node = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtoul(argv[++i], NULL, 10);
		else
			mib = strtoul(argv[i], NULL, 10);
	}
	len = mib * MiB;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise");
	if (node >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
		node_mask = 1UL << node;
		if (syscall(SYS_mbind, p, len, MPOL_BIND, &node_mask, 64, 0))
			die("mbind");
	}
	memset(p, 0x5a, len);
	/* 2 MiB aligned, so a huge page can back it */
	raw = mmap(NULL, thp_len + 2 * MiB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap");
	thp = (char *)(((uintptr_t)raw + 2 * MiB - 1) & ~(uintptr_t)(2 * MiB - 1));
	madvise(thp, thp_len, MADV_HUGEPAGE);	/* best effort: THP may be off */
	memset(thp, 0x5a, thp_len);
	printf("truth map_start %llu\n", (unsigned long long)(uintptr_t)p);
	printf("truth map_bytes %zu\n", len);
	printf("truth thp_start %llu\n", (unsigned long long)(uintptr_t)thp);
	printf("truth thp_bytes %zu\n", thp_len);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long i = 0; i < seconds * 10 && !stop; i++)
		usleep(100000);
	return 0;
}
