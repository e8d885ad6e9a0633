/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * numa_bind: ground truth for remote NUMA allocations and migrations, with
 * raw syscalls (no libnuma). Needs at least two NUMA nodes (tests/vmtest/
 * boots a 2-node qemu guest); on one node it prints "skip ..." and exits 0.
 *
 * 1. Pins itself to CPU 0 (node 0), maps MiB of private anonymous memory
 *    (THP off), binds it to node 1 with mbind(MPOL_BIND) and writes every
 *    page: every page is allocated by a fault on node 0's CPU on node 1:
 *      remote_numa_alloc_bytes = MiB * 1 MiB
 * 2. move_pages() moves the first 1,024 pages to node 0 (4 MiB):
 *      move_pages_bytes = pages the kernel reports moved (status == 0)
 * 3. migrate_pages() moves every page of the process from node 0 to node 1
 *    (the 4 MiB back, plus whatever of its stack, libc data... was on 0):
 *      migrate_pages_bytes = /proc/vmstat pgmigrate_success delta
 * Both migrations have reason MR_SYSCALL; numa_migrated_bytes is their sum
 * (the pgmigrate_success delta over steps 2 and 3; the guest is quiet).
 *
 * --pause stops after each step so that another tool can read the stocks
 * (remote_numa_bytes of `memacct explain PID`, /proc/PID/numa_maps): it
 * prints "truth pid", "truth buffer_start 0x..." and "truth buffer_bytes",
 * then after step 1 "ready bound", after step 2 "ready moved", after step 3
 * "ready migrated", each once stdout is flushed, and waits for SIGUSR1
 * before going on (exit after the last). The buffer's pages on node 1 are
 * then: bound, all of it; moved, buffer_bytes - move_pages_bytes;
 * migrated, all of it again.
 *
 * Usage: numa_bind [MiB=32] [--pause]
 * Output (stdout): truth KEY VALUE lines (and the ready lines with --pause).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "page.h"
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#define MOVE_PAGES	1024

static void die(const char *what)
{
	fprintf(stderr, "numa_bind: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long long vmstat(const char *key)
{
	char name[64];
	long long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		die("/proc/vmstat");
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key))
			found = v;
	fclose(f);
	return found;
}

static int online_nodes(void)
{
	int n = 0;
	char path[64];

	for (int i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", i);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/* --pause: say where we are, then wait for SIGUSR1 (blocked since start) */
static void stop_at(int pause, const char *step)
{
	sigset_t set;
	int sig;

	if (!pause)
		return;
	printf("ready %s\n", step);
	if (fflush(stdout))
		die("stdout");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) || sig != SIGUSR1)
		;
}

int main(int argc, char **argv)
{
	unsigned long mib = 32, len, mask, old_nodes, new_nodes, i;
	long long before, mid, after;
	void *pages[MOVE_PAGES];
	int nodes[MOVE_PAGES], status[MOVE_PAGES], moved = 0, pause = 0, npos = 0;
	cpu_set_t set;
	sigset_t usr1;
	char *buf;
	long left;

	for (int a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--pause")) {
			pause = 1;
			continue;
		}
		mib = strtoul(argv[a], &end, 10);
		if (*end || !mib || mib > 4096 || npos++) {
			fprintf(stderr, "usage: numa_bind [MiB=32] [--pause]\n");
			return 2;
		}
	}
	/* blocked before any "ready": a SIGUSR1 sent at once is not lost */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &usr1, NULL))
		die("sigprocmask");
	if (online_nodes() < 2) {
		printf("skip numa_bind needs 2 NUMA nodes, this host has %d\n", online_nodes());
		return 0;
	}
	len = mib << 20;
	if (len < MOVE_PAGES * PAGE)
		len = MOVE_PAGES * PAGE;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	madvise(buf, len, MADV_NOHUGEPAGE);
	mask = 1UL << 1;
	if (syscall(SYS_mbind, buf, len, MPOL_BIND, &mask, sizeof(mask) * 8, 0))
		die("mbind");
	for (i = 0; i < len; i += PAGE)
		buf[i] = 1;
	printf("truth remote_numa_alloc_bytes %lu\n", len);
	if (pause) {
		printf("truth pid %d\n", getpid());
		printf("truth buffer_start %p\n", (void *)buf);
		printf("truth buffer_bytes %lu\n", len);
	}
	fflush(stdout);
	stop_at(pause, "bound");

	for (i = 0; i < MOVE_PAGES; i++) {
		pages[i] = buf + i * PAGE;
		nodes[i] = 0;
		status[i] = -1;
	}
	before = vmstat("pgmigrate_success");
	left = syscall(SYS_move_pages, 0, MOVE_PAGES, pages, nodes, status, MPOL_MF_MOVE);
	if (left < 0)
		die("move_pages");
	mid = vmstat("pgmigrate_success");
	for (i = 0; i < MOVE_PAGES; i++)
		moved += status[i] == 0;
	printf("truth move_pages_bytes %lu\n", moved * PAGE);
	stop_at(pause, "moved");

	old_nodes = 1UL << 0;
	new_nodes = 1UL << 1;
	left = syscall(SYS_migrate_pages, 0, sizeof(old_nodes) * 8, &old_nodes, &new_nodes);
	if (left < 0)
		die("migrate_pages");
	after = vmstat("pgmigrate_success");
	printf("truth move_pages_vmstat_bytes %llu\n", (mid - before) * PAGE);
	printf("truth migrate_pages_bytes %llu\n", (after - mid) * PAGE);
	printf("truth migrate_pages_not_moved %ld\n", left);
	printf("truth numa_migrated_bytes %llu\n", (after - before) * PAGE);
	if (!pause)
		printf("truth pid %d\n", getpid());
	stop_at(pause, "migrated");
	return 0;
}
