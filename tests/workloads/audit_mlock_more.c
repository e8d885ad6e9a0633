/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * audit_mlock_more: ground truth for `memacct audit --enforce-rlimit`.
 * mlocks MiB, prints "ready PID", waits DELAY seconds (during which the
 * RLIMIT_MEMLOCK may be lowered from outside), then tries to mlock 1 MiB
 * more and prints the outcome, then holds HOLD seconds.
 * Run without CAP_IPC_LOCK (capsh --drop=cap_ipc_lock), or mlock ignores
 * the limit.
 *
 * Usage: audit_mlock_more MiB DELAY HOLD
 * Output: ready PID; truth first_mlock_errno E; truth second_mlock_errno E
 * (0 = success); truth rlimit_memlock_cur B (as seen before the 2nd mlock)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define MIB (1024 * 1024UL)

int main(int argc, char **argv)
{
	unsigned long mib, delay, hold;
	struct rlimit rl;
	char *p, *q;
	int e;

	if (argc != 4) {
		fprintf(stderr, "usage: audit_mlock_more MiB DELAY HOLD\n");
		return 2;
	}
	mib = strtoul(argv[1], NULL, 10);
	delay = strtoul(argv[2], NULL, 10);
	hold = strtoul(argv[3], NULL, 10);
	p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || q == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	e = mlock(p, mib * MIB) ? errno : 0;
	printf("truth first_mlock_errno %d\n", e);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sleep(delay);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	printf("truth rlimit_memlock_cur %llu\n", (unsigned long long)rl.rlim_cur);
	e = mlock(q, MIB) ? errno : 0;
	printf("truth second_mlock_errno %d\n", e);
	fflush(stdout);
	sleep(hold);
	return 0;
}
