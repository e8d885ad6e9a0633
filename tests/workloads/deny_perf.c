/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * deny_perf: run CMD under a seccomp filter that fails perf_event_open(2)
 * with EACCES, as a container runtime's default profile or a hardened
 * service does (tests of memacct's perf event fault hook: its refusal must
 * name the knobs, and memacct exit 3).
 *
 * Usage: deny_perf CMD [ARG...]
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (argc < 2) {
		fprintf(stderr, "usage: deny_perf CMD [ARG...]\n");
		return 2;
	}
	/* root keeps CAP_SYS_ADMIN: no_new_privs only so that others can */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "deny_perf: seccomp: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "deny_perf: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
