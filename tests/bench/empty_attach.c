// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * empty_attach OBJ...: load and attach every program of each OBJ (bench
 * only: the empty-programs floor of tests/bench/paired.py), print "ready",
 * detach on stdin EOF. A perf_event program goes on a PERF_COUNT_SW_PAGE_FAULTS
 * event of every CPU (sample_period 1), as memacct's perf event fault hook.
 * With BPF_STATS=1 also enables kernel bpf_stats while attached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* @prog on the page-fault software event of every CPU: 0, or -1 */
static int attach_fault_events(struct bpf_program *prog)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0;

	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
			.config = PERF_COUNT_SW_PAGE_FAULTS, .sample_period = 1,
		};
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			continue;	/* offline */
		if (!bpf_program__attach_perf_event(prog, fd))
			return -1;
		n++;
	}
	return n ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj[8];
	struct bpf_program *prog;
	const char *st = getenv("BPF_STATS");
	int stats_fd = -1, n = argc - 1;
	char c;

	if (n < 1 || n > 8) {
		fprintf(stderr, "usage: empty_attach OBJ...\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		obj[i] = bpf_object__open_file(argv[i + 1], NULL);
		if (!obj[i] || bpf_object__load(obj[i])) {
			fprintf(stderr, "empty_attach: cannot load %s\n", argv[i + 1]);
			return 4;
		}
		bpf_object__for_each_program(prog, obj[i]) {
			if (bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT ?
			    attach_fault_events(prog) != 0 : !bpf_program__attach(prog)) {
				fprintf(stderr, "empty_attach: cannot attach %s\n",
					bpf_program__name(prog));
				return 4;
			}
		}
	}
	if (st && *st == '1')
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	if (stats_fd >= 0)
		close(stats_fd);
	for (int i = 0; i < n; i++)
		bpf_object__close(obj[i]);
	return 0;
}
