// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * fuzz_parsers.c - libFuzzer target over every parser of kernel files
 * (proc.h, smaps.h, numa.h, cgroup.h, cgroup_labels.h (paths), memlimits.h,
 * bpf_loader.h, shmem_orphans.h) and of
 * command-line values (util.h). The first byte picks the parser, the rest is
 * the file's text (NUL-terminated copy). Built and run by `make fuzz`
 * (clang -fsanitize=fuzzer,address,undefined; any crash, leak or UB report
 * fails); the seeds are tests/data, each prefixed with its parser's byte.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "cgroup_labels.h"
#include "memlimits.h"
#include "numa.h"
#include "proc.h"
#include "shmem_orphans.h"
#include "smaps.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool no_v2_memory(const char *mnt)
{
	return false;
}

/* each line of @text (cut in place) to the maps and tmpfs mountinfo line parsers */
static void lines_to_shmem_parsers(char *text)
{
	char *save = NULL, mnt[64];
	uint64_t dev, ino;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		parse_maps_devino(l, &dev, &ino);
		parse_mountinfo_tmpfs(l, mnt, sizeof(mnt));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, out[PATH_MAX];
	int version;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 16) {
	case 0: {
		struct proc_status st;

		parse_status(text, &st);
		break;
	}
	case 1: {
		struct numa_maps nm;

		parse_numa_maps(text, &nm, true);
		numa_maps_free(&nm);
		parse_numa_maps(text, &nm, false);
		numa_maps_free(&nm);
		break;
	}
	case 2: {
		struct proc_stat st;

		parse_stat(text, &st);
		parse_stat_processor(text);
		break;
	}
	case 3:	/* was smaps_rollup (removed: nothing read it); kept free so
		 * that the corpus's selector bytes keep their meaning */
		break;
	case 4: {
		struct smaps s;

		parse_smaps(text, &s);
		smaps_free(&s);
		lines_to_shmem_parsers(text);	/* smaps holds maps lines */
		break;
	}
	case 5:
		parse_mountinfo_memcg(text, out, &version, no_v2_memory);
		lines_to_shmem_parsers(text);
		break;
	case 6:
		parse_proc_cgroup(text, 1, out, sizeof(out));
		parse_proc_cgroup(text, 2, out, sizeof(out));
		break;
	case 7: {
		struct memcg_stat st;

		parse_memory_stat(text, 1, &st);
		parse_memory_stat(text, 2, &st);
		break;
	}
	case 8: {
		uint64_t v;

		parse_oom_kill(text, &v);
		parse_memory_pressure(text, &v, &v);
		break;
	}
	case 9: {
		uint64_t nodes[NUMA_MAX_NODES];

		parse_numa_stat(text, 1, 4096, nodes);
		parse_numa_stat(text, 2, 4096, nodes);
		break;
	}
	case 10: {
		struct memacct_node_range r[64];
		int n;

		parse_zoneinfo(text, r, 64, &n);
		break;
	}
	case 11: {
		bool set[1024] = { false };	/* the caller zeroes it */

		parse_cpulist(text, set, 1024);
		break;
	}
	case 12: {
		struct limits_state st;

		parse_limits_state(text, &st);
		break;
	}
	case 13: {
		uint64_t b;
		bool unlimited;

		parse_limit_value(text, &b, &unlimited);
		break;
	}
	case 14: {	/* a cgroup path: its labels and job, with one --job-from */
		static struct job_rules rules;
		struct cg_labels l;

		if (!rules.n && job_rules_add(&rules, "--job-from", "/batch/([^/]+)"))
			break;
		cgroup_path_labels(text, &rules, &l);
		cgroup_path_labels(text, NULL, &l);
		cgroup_job_name_ok(text);
		break;
	}
	default: {
		uint64_t v;

		parse_size(text, 1ULL << 40, &v);
		parse_duration(text, &v);
		parse_u64(text, &v);
		break;
	}
	}
	free(text);
	return 0;
}
