/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom: allocates and writes MiB of anonymous memory, page by page, so that
 * it gets OOM-killed in a cgroup whose memory limit is below MiB (e.g. 128
 * MiB under memory.max=64M, swap disabled for the cgroup).
 *
 * Ground truth: the target size and pid are printed (and flushed) BEFORE any
 * memory is touched; if the process survives to the end it prints
 * touched_bytes and exits 0, otherwise it dies by SIGKILL from the OOM
 * killer (exit status 128+9 in a shell) after having faulted in about the
 * cgroup's limit.  Progress goes to stderr every 8 MiB.
 *
 * Usage: oom [MiB=128 [HOLD_S]]: with HOLD_S, the memory is held that many
 * seconds after touched_bytes is printed (a process that a limit above its
 * cgroup's makes the victim: test_oom_limit_parent).
 * Output (stdout):
 *   truth target_bytes B
 *   truth pid PID
 *   truth touched_bytes B          (only if not killed)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "page.h"
#define MIB (1024 * 1024UL)

int main(int argc, char **argv)
{
	unsigned long mib = 128, hold = 0, len;
	volatile char *p;
	char *end;

	if (argc > 3) {
		fprintf(stderr, "usage: oom [MiB=128 [HOLD_S]]\n");
		return 2;
	}
	if (argc >= 2) {
		errno = 0;
		mib = strtoul(argv[1], &end, 10);
		if (errno || *end || mib == 0) {
			fprintf(stderr, "usage: oom [MiB=128 [HOLD_S]]\n");
			return 2;
		}
	}
	if (argc == 3) {
		errno = 0;
		hold = strtoul(argv[2], &end, 10);
		if (errno || *end) {
			fprintf(stderr, "usage: oom [MiB=128 [HOLD_S]]\n");
			return 2;
		}
	}
	len = mib * MIB;

	printf("truth target_bytes %lu\n", len);
	printf("truth pid %d\n", (int)getpid());
	if (fflush(stdout)) {
		fprintf(stderr, "oom: stdout: %s\n", strerror(errno));
		return 1;
	}

	/* MAP_NORESERVE: fail by the OOM killer at fault time, not at mmap. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "oom: mmap %lu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	for (unsigned long off = 0; off < len; off += PAGE) {
		p[off] = (char)(off >> 12);
		if ((off + PAGE) % (8 * MIB) == 0)
			fprintf(stderr, "oom: touched %lu MiB\n", (off + PAGE) / MIB);
	}

	printf("truth touched_bytes %lu\n", len);
	if (fflush(stdout)) {
		fprintf(stderr, "oom: stdout: %s\n", strerror(errno));
		return 1;
	}
	sleep(hold);
	return 0;
}
