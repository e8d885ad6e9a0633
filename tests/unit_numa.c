// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_numa.c - unit tests of user/proc/numa.c. Captured on 6.18 (one node):
 *   numa_maps_self      /tmp/numa_touch: a 32 MiB anonymous buffer touched
 *                       (MADV_NOHUGEPAGE), [heap], [stack], libraries
 *   numa_maps_hostile   explain_file_mmap "/var/tmp/a b\nc=d (deleted)" 4
 *                       --unlink: space, newline and '=' in a deleted name
 *   numa_stat_v1        /sys/fs/cgroup/memory/memory.numa_stat (v1 root)
 * Captured in a 2-node qemu guest (Debian 6.12.95 cloud kernel, cgroup v2):
 *   numa_maps_guest_2node  numa_local 32 --node 1: 32 MiB bound to node 1
 *   numa_stat_v2_guest     memory.numa_stat of a fresh v2 cgroup
 * Written in the kernel's format (fs/proc/task_mmu.c show_numa_map(),
 * mm/mempolicy.c mpol_to_str(), mm/memcontrol*.c numa_stat show functions,
 * Documentation/admin-guide/cgroup-v2.rst), for what one node cannot show:
 *   numa_maps_2node     two nodes; policies with spaces and flags
 *                       ("weighted interleave:0-1", "prefer (many):0-1",
 *                       "bind=static:1"); hugetlb 2 MiB and 1 GiB pages
 *                       ("huge", kernelpagesize_kB); an escaped file name;
 *                       mappings with no resident page
 *   numa_stat_v1_2node  v1 numa_stat of two nodes (pages)
 *   numa_stat_v2        v2 memory.numa_stat (bytes, every key of 6.x)
 *   numa_stat_v2_old    v2 without the LRU lines
 *   node_2n/            /sys/devices/system/node of 2 nodes, CPUs 0,2 | 1,3
 */
#define _GNU_SOURCE
#include "check_util.h"
#include "bpf_loader.h"
#include "numa.h"
#include "report.h"
#include "report_print.h"
#include "util.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)
#define PG 4096ULL

static struct numa_maps load_maps(const char *name, bool keep, int want)
{
	struct numa_maps nm;
	char *text = load_data(name);
	int n = parse_numa_maps(text, &nm, keep);

	free(text);
	ck_assert_int_eq(n, want);
	return nm;
}

static const struct numa_map *at(const struct numa_maps *nm, uint64_t start)
{
	for (size_t i = 0; i < nm->n; i++)
		if (nm->maps[i].start == start)
			return &nm->maps[i];
	ck_abort_msg("no mapping at %llx", (unsigned long long)start);
	return NULL;
}

/* sum of N<node>=<pages> x kernelpagesize_kB, computed independently */
static uint64_t naive_sum(const char *name, int node)
{
	char *text = load_data(name), *save = NULL, *line;
	uint64_t total = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t kb = 0, pages = 0;
		char *tok, *s2 = NULL;

		for (tok = strtok_r(line, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
			int n;
			unsigned long long v;

			if (sscanf(tok, "kernelpagesize_kB=%llu", &v) == 1)
				kb = v;
			else if (sscanf(tok, "N%d=%llu", &n, &v) == 2 && (node < 0 || n == node))
				pages += v;
		}
		total += pages * kb * KiB;
	}
	free(text);
	return total;
}

START_TEST(test_numa_maps_self)
{
	struct numa_maps nm = load_maps("numa_maps_self", true, 24);
	const struct numa_map *m = at(&nm, 0x7fec6c000000ULL);

	ck_assert_uint_eq(m->node_bytes[0], 32 * MiB);
	ck_assert_uint_eq(m->bytes, 32 * MiB);
	ck_assert_uint_eq(m->page_size, 4 * KiB);
	ck_assert_ptr_null(m->path);
	ck_assert(!m->huge);
	ck_assert_str_eq(at(&nm, 0x562e8df4e000ULL)->path, "[heap]");
	ck_assert_uint_eq(at(&nm, 0x562e8df4e000ULL)->bytes, 2 * PG);
	ck_assert_str_eq(at(&nm, 0x7ffef319f000ULL)->path, "[stack]");
	ck_assert_uint_eq(nm.nodes, 1);
	ck_assert_uint_eq(nm.node_bytes[0], naive_sum("numa_maps_self", 0));
	ck_assert_uint_eq(nm.bytes, nm.node_bytes[0]);
	ck_assert_uint_eq(nm.n, 24);
	numa_maps_free(&nm);
}
END_TEST

START_TEST(test_numa_maps_2node)
{
	struct numa_maps nm = load_maps("numa_maps_2node", true, 14), sums;
	const struct numa_map *m;
	uint64_t n0 = 2872 * PG + 2 * MiB, n1 = 9997 * PG + 4 * MiB + 1024 * MiB;

	ck_assert_uint_eq(nm.node_bytes[0], n0);
	ck_assert_uint_eq(nm.node_bytes[1], n1);
	ck_assert_uint_eq(nm.node_bytes[0], naive_sum("numa_maps_2node", 0));
	ck_assert_uint_eq(nm.node_bytes[1], naive_sum("numa_maps_2node", 1));
	ck_assert_uint_eq(nm.bytes, n0 + n1);
	ck_assert_uint_eq(nm.nodes, 3);
	/* bound to node 1 */
	m = at(&nm, 0x7f3a40000000ULL);
	ck_assert_uint_eq(m->node_bytes[1], 32 * MiB);
	ck_assert_uint_eq(m->node_bytes[0], 0);
	/* policies with spaces and flags do not hide the counts */
	ck_assert_uint_eq(at(&nm, 0x7f3a43800000ULL)->node_bytes[0], 3 * PG);
	ck_assert_uint_eq(at(&nm, 0x7f3a43a00000ULL)->node_bytes[1], 2 * PG);
	ck_assert_uint_eq(at(&nm, 0x7f3a43c00000ULL)->node_bytes[1], PG);
	/* hugetlb: counts are huge pages */
	m = at(&nm, 0x7f3a44000000ULL);
	ck_assert(m->huge);
	ck_assert_uint_eq(m->page_size, 2 * MiB);
	ck_assert_uint_eq(m->node_bytes[0], 2 * MiB);
	ck_assert_uint_eq(m->node_bytes[1], 4 * MiB);
	ck_assert_str_eq(m->path, "/anon_hugepage (deleted)");
	m = at(&nm, 0x7f3a80000000ULL);
	ck_assert_uint_eq(m->node_bytes[1], 1024 * MiB);
	/* escaped name: space, newline, '=' */
	m = at(&nm, 0x7f3ac0000000ULL);
	ck_assert_str_eq(m->path, "/data/train set\nv2=final.bin");
	ck_assert_uint_eq(m->bytes, 25 * PG);
	/* no resident page */
	ck_assert_uint_eq(at(&nm, 0x7f3ac0100000ULL)->bytes, 0);
	ck_assert_uint_eq(at(&nm, 0x7f3ac0200000ULL)->bytes, 0);
	ck_assert_str_eq(at(&nm, 0x7f3ac0200000ULL)->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* sums only: same figures, no mappings kept */
	sums = load_maps("numa_maps_2node", false, 14);
	ck_assert_ptr_null(sums.maps);
	ck_assert_uint_eq(sums.bytes, nm.bytes);
	ck_assert_uint_eq(sums.node_bytes[1], n1);
	numa_maps_free(&sums);
	numa_maps_free(&nm);
}
END_TEST

/* 6.12 qemu guest, 2 nodes: numa_local 32 --node 1 (bound to node 1, on CPU 0) */
START_TEST(test_numa_maps_guest)
{
	struct numa_maps nm = load_maps("numa_maps_guest_2node", true, 13);
	const struct numa_map *m = at(&nm, 0x7f7ecf200000ULL);

	ck_assert_uint_eq(m->node_bytes[1], 32 * MiB);
	ck_assert_uint_eq(m->node_bytes[0], 0);
	ck_assert_uint_eq(at(&nm, 0x7f7ece800000ULL)->node_bytes[0], 8 * MiB);
	/* what explain reported in the guest for the process */
	ck_assert_uint_eq(nm.node_bytes[1], 34217984);
	ck_assert_uint_eq(nm.node_bytes[0], 8441856);
	ck_assert_uint_eq(nm.node_bytes[1], naive_sum("numa_maps_guest_2node", 1));
	numa_maps_free(&nm);
}
END_TEST

START_TEST(test_numa_maps_hostile)
{
	struct numa_maps nm = load_maps("numa_maps_hostile", true, 24);
	const struct numa_map *m = NULL;

	for (size_t i = 0; i < nm.n; i++)
		if (nm.maps[i].path && !strncmp(nm.maps[i].path, "/var/tmp/", 9))
			m = &nm.maps[i];
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->path, "/var/tmp/a b\nc=d (deleted) (deleted)");
	ck_assert_uint_eq(m->bytes, 4 * MiB);
	ck_assert_uint_eq(nm.bytes, naive_sum("numa_maps_hostile", -1));
	numa_maps_free(&nm);
}
END_TEST

START_TEST(test_numa_maps_bad)
{
	struct numa_maps nm;

	ck_assert_int_eq(parse_numa_maps("", &nm, true), 0);
	ck_assert_uint_eq(nm.bytes, 0);
	ck_assert_int_eq(parse_numa_maps("zzz default N0=1 kernelpagesize_kB=4\n", &nm, true),
			 -EINVAL);
	ck_assert_int_eq(parse_numa_maps("7f00 default N64=1 kernelpagesize_kB=4\n", &nm, true),
			 -ERANGE);
	ck_assert_int_eq(parse_numa_maps("7f00 default anon=1 N0=1\n", &nm, true), -EINVAL);
	ck_assert_int_eq(parse_numa_maps("7f00 default N0=x kernelpagesize_kB=4\n", &nm, false),
			 -EINVAL);
	ck_assert_int_eq(parse_numa_maps("7f00 default N0=1 kernelpagesize_kB=\n", &nm, false),
			 -EINVAL);
	/* the last line without '\n' still counts */
	ck_assert_int_eq(parse_numa_maps("7f00 default N0=1 N1=2 kernelpagesize_kB=4", &nm, false),
			 1);
	ck_assert_uint_eq(nm.node_bytes[1], 2 * PG);
	numa_maps_free(&nm);
}
END_TEST

START_TEST(test_cpulist)
{
	bool set[64] = { false };

	ck_assert_int_eq(parse_cpulist("0-3,8,10-11\n", set, 64), 7);
	ck_assert(set[0] && set[3] && set[8] && set[10] && set[11]);
	ck_assert(!set[4] && !set[9] && !set[12]);
	memset(set, 0, sizeof(set));
	ck_assert_int_eq(parse_cpulist("\n", set, 64), 0);
	ck_assert_int_eq(parse_cpulist("", set, 64), 0);
	ck_assert_int_eq(parse_cpulist("3-1", set, 64), -EINVAL);
	ck_assert_int_eq(parse_cpulist("0-64", set, 64), -ERANGE);
	ck_assert_int_eq(parse_cpulist("a", set, 64), -EINVAL);
	ck_assert_int_eq(parse_cpulist("0,,1", set, 64), -EINVAL);
	ck_assert_int_eq(parse_cpulist("0-", set, 64), -EINVAL);
}
END_TEST

static struct numa_topo topo_2n(void)
{
	struct numa_topo t;

	ck_assert_int_eq(numa_topo_read_at(DATA_DIR "/node_2n", &t), 0);
	return t;
}

START_TEST(test_topo)
{
	struct numa_topo t = topo_2n(), live;

	ck_assert_int_eq(t.nnodes, 2);
	ck_assert_uint_eq(t.mem_nodes, 3);
	ck_assert_int_eq(t.ncpus, 4);
	ck_assert_int_eq(numa_cpu_node(&t, 0), 0);
	ck_assert_int_eq(numa_cpu_node(&t, 1), 1);
	ck_assert_int_eq(numa_cpu_node(&t, 2), 0);
	ck_assert_int_eq(numa_cpu_node(&t, 3), 1);
	ck_assert_int_eq(numa_cpu_node(&t, 4), -1);
	numa_topo_free(&t);
	/* this host: sysfs agrees with /proc/zoneinfo (nodes with memory) */
	ck_assert_int_eq(numa_topo_read(&live), 0);
	ck_assert_int_eq(live.nnodes, loader_numa_nodes());
	ck_assert_int_ge(live.ncpus, 1);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < live.ncpus; c++)
		ck_assert_int_ge(numa_cpu_node(&live, c), 0);
	numa_topo_free(&live);
}
END_TEST

START_TEST(test_home_choose)
{
	struct numa_topo t = topo_2n();
	bool node0[4] = { true, false, true, false }, all[4] = { true, true, true, true };
	bool cpu3[4] = { false, false, false, true }, wide[16] = { false };
	enum numa_home_source src;

	ck_assert_int_eq(numa_home_choose(&t, node0, 4, (int[]){ 1, 3 }, 2, &src), 0);
	ck_assert_int_eq(src, NUMA_HOME_AFFINITY);
	ck_assert_int_eq(numa_home_choose(&t, cpu3, 4, NULL, 0, &src), 1);
	ck_assert_int_eq(src, NUMA_HOME_AFFINITY);
	/* CPUs no node lists do not make the mask span two nodes */
	wide[1] = wide[9] = true;
	ck_assert_int_eq(numa_home_choose(&t, wide, 16, NULL, 0, &src), 1);
	ck_assert_int_eq(src, NUMA_HOME_AFFINITY);
	/* spanning both: majority of the threads' last CPUs */
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 1, 0, 3 }, 3, &src), 1);
	ck_assert_int_eq(src, NUMA_HOME_LAST_CPU);
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 0, 1, 3, 2, 2 }, 5, &src), 0);
	/* ties go to the leader's node */
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 2, 1 }, 2, &src), 0);
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 1, 0 }, 2, &src), 1);
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 3, 0, 1, 2 }, 4, &src), 1);
	/* nothing known */
	ck_assert_int_eq(numa_home_choose(&t, all, 4, NULL, 0, &src), -ENOENT);
	ck_assert_int_eq(src, NUMA_HOME_UNKNOWN);
	ck_assert_int_eq(numa_home_choose(&t, all, 4, (int[]){ 7 }, 1, &src), -ENOENT);
	ck_assert_str_eq(numa_home_source_name(NUMA_HOME_LAST_CPU), "last_cpu");
	ck_assert_str_eq(numa_home_source_name(NUMA_HOME_MOST_PAGES), "most_pages");
	numa_topo_free(&t);
}
END_TEST

/* field 39 of a stat text, split independently (after the last ')') */
static int field39(const char *name)
{
	char *text = load_data(name), *p = strrchr(text, ')'), *save = NULL, *tok;
	int field = 2, cpu = -1;

	ck_assert_ptr_nonnull(p);
	for (tok = strtok_r(p + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (++field == 39)
			cpu = atoi(tok);
	free(text);
	return cpu;
}

START_TEST(test_stat_processor)
{
	char *text;

	text = load_data("stat_self");
	ck_assert_int_eq(parse_stat_processor(text), field39("stat_self"));
	free(text);
	text = load_data("stat_hostile");
	ck_assert_int_eq(parse_stat_processor(text), field39("stat_hostile"));
	ck_assert_int_ge(parse_stat_processor(text), 0);
	free(text);
	text = load_data("stat_truncated");
	ck_assert_int_eq(parse_stat_processor(text), -EINVAL);
	free(text);
	ck_assert_int_eq(parse_stat_processor("garbage"), -EINVAL);
	/* this very thread: the kernel says where it is; it must be a CPU we know */
	{
		char path[64], *t;
		int cpu;

		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)gettid());
		ck_assert_int_gt(read_file(path, &t, 4096), 0);
		cpu = parse_stat_processor(t);
		free(t);
		ck_assert_int_ge(cpu, 0);
		ck_assert_int_lt(cpu, sysconf(_SC_NPROCESSORS_CONF));
	}
}
END_TEST

START_TEST(test_numa_stat)
{
	uint64_t nb[NUMA_MAX_NODES];
	char *text;

	text = load_data("numa_stat_v1");
	ck_assert_int_eq(parse_numa_stat(text, 1, PG, nb), 1);
	ck_assert_uint_eq(nb[0], 585233 * PG);		/* hierarchical_total */
	free(text);
	text = load_data("numa_stat_v1_2node");
	ck_assert_int_eq(parse_numa_stat(text, 1, PG, nb), 3);
	ck_assert_uint_eq(nb[0], 5000 * PG);
	ck_assert_uint_eq(nb[1], 15000 * PG);
	free(text);
	/* a v1 file without the hierarchical lines: the cgroup's own total */
	ck_assert_int_eq(parse_numa_stat("total=30 N0=10 N1=20\nfile=1 N0=1 N1=0\n", 1, PG, nb), 3);
	ck_assert_uint_eq(nb[1], 20 * PG);
	text = load_data("numa_stat_v2");	/* anon + file */
	ck_assert_int_eq(parse_numa_stat(text, 2, PG, nb), 3);
	ck_assert_uint_eq(nb[0], 8388608 + 4194304);
	ck_assert_uint_eq(nb[1], 33554432 + 1048576);
	free(text);
	text = load_data("numa_stat_v2_guest");	/* 6.12: LRU lines lag behind anon */
	ck_assert_int_eq(parse_numa_stat(text, 2, PG, nb), 3);
	ck_assert_uint_eq(nb[0], 12288);
	ck_assert_uint_eq(nb[1], 49152);
	free(text);
	text = load_data("numa_stat_v2_old");
	ck_assert_int_eq(parse_numa_stat(text, 2, PG, nb), 3);
	ck_assert_uint_eq(nb[0], 8388608 + 4194304);
	ck_assert_uint_eq(nb[1], 33554432 + 1048576);
	free(text);
	/* no anon/file lines: the LRU lines */
	ck_assert_int_eq(parse_numa_stat("active_anon N0=1 N1=2\ninactive_file N0=10 N1=20\n"
					 "unevictable N0=100 N1=200\n", 2, PG, nb), 3);
	ck_assert_uint_eq(nb[0], 111);
	ck_assert_uint_eq(nb[1], 222);
	ck_assert_int_eq(parse_numa_stat("anon N0=x\n", 2, PG, nb), -EINVAL);
	ck_assert_int_eq(parse_numa_stat("anon N70=1\n", 2, PG, nb), -ERANGE);
	ck_assert_int_eq(parse_numa_stat("", 1, PG, nb), 0);
	/* "anon_thp" is not "anon" */
	ck_assert_int_eq(parse_numa_stat("anon_thp N0=5\n", 2, PG, nb), 0);
}
END_TEST

START_TEST(test_cgroup_home)
{
	struct numa_topo t = topo_2n();
	struct numa_usage u = { 0 };
	char *text = load_data("numa_stat_v2");

	ck_assert_int_eq(parse_numa_stat(text, 2, PG, u.node_bytes), 3);
	free(text);
	ck_assert_int_eq(numa_cgroup_home(&t, NULL, &u), 1);
	ck_assert_int_eq(u.source, NUMA_HOME_MOST_PAGES);
	ck_assert_uint_eq(u.remote, 12582912);
	ck_assert_uint_eq(u.bytes, 12582912 + 34603008);
	ck_assert_int_eq(numa_cgroup_home(&t, "0,2\n", &u), 0);
	ck_assert_int_eq(u.source, NUMA_HOME_CPUSET);
	ck_assert_uint_eq(u.remote, 34603008);
	ck_assert_int_eq(numa_cgroup_home(&t, "0-3\n", &u), 1);
	ck_assert_int_eq(u.source, NUMA_HOME_MOST_PAGES);
	numa_topo_free(&t);
}
END_TEST

START_TEST(test_verdict)
{
	struct numa_usage u = { .home = 0, .source = NUMA_HOME_AFFINITY };
	struct numa_brief b;
	char buf[320];

	u.node_bytes[0] = 1 * MiB;
	u.node_bytes[1] = 32 * MiB;
	numa_usage_finish(&u);
	ck_assert_uint_eq(u.remote, 32 * MiB);
	numa_brief_of(&u, &b);
	ck_assert_uint_eq(b.remote_nodes, 2);
	ck_assert(numa_verdict(buf, sizeof(buf), "PID 123 (python)", 123, &b,
			       NUMA_THRESHOLD_PCT_DEFAULT, NUMA_THRESHOLD_MIN_BYTES, false));
	ck_assert_str_eq(buf, "97% of PID 123 (python)'s resident pages (32.0 MiB of 33.0 MiB) "
			 "are on node 1 while it runs on node 0 (affinity): bind with numactl "
			 "--cpunodebind=0 --membind=0, or move them with migratepages 123 1 0");
	/* several remote nodes, past tense */
	u.node_bytes[2] = 32 * MiB;
	u.home = 0;
	numa_usage_finish(&u);
	numa_brief_of(&u, &b);
	ck_assert(numa_verdict(buf, sizeof(buf), "PID 9 (w)", 9, &b, 10, 16 * MiB, true));
	ck_assert_msg(strstr(buf, "were on nodes 1,2 while it ran on node 0") &&
		      strstr(buf, "migratepages 9 1,2 0"), "%s", buf);
	/* under the minimum bytes */
	u.node_bytes[1] = 8 * MiB;
	u.node_bytes[2] = 0;
	numa_usage_finish(&u);
	numa_brief_of(&u, &b);
	ck_assert(!numa_verdict(buf, sizeof(buf), "x", 1, &b, 10, NUMA_THRESHOLD_MIN_BYTES, false));
	ck_assert(numa_over_threshold(&b, 10, 8 * MiB));
	/* under the share: 20 MiB of 1 GiB */
	u.node_bytes[0] = 1004 * MiB;
	u.node_bytes[1] = 20 * MiB;
	numa_usage_finish(&u);
	numa_brief_of(&u, &b);
	ck_assert(!numa_over_threshold(&b, 10, NUMA_THRESHOLD_MIN_BYTES));
	ck_assert(numa_over_threshold(&b, 1, NUMA_THRESHOLD_MIN_BYTES));
	/* home unknown: never a verdict */
	u.home = -1;
	numa_usage_finish(&u);
	numa_brief_of(&u, &b);
	ck_assert_uint_eq(b.remote, 0);
	ck_assert(!numa_over_threshold(&b, 0, 0));
}
END_TEST

START_TEST(test_proc_usage_self)
{
	struct numa_topo t;
	struct numa_usage u;
	struct numa_maps nm;
	size_t len = 8 * MiB;
	char *buf;

	ck_assert_int_eq(numa_topo_read(&t), 0);
	buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 1, len);
	ck_assert_int_eq(numa_proc_usage(&t, getpid(), &u, &nm), 0);
	ck_assert_int_ge(u.home, 0);
	ck_assert_uint_ge(u.bytes, len);
	ck_assert_uint_eq(u.bytes, nm.bytes);
	ck_assert_uint_eq(u.remote, u.bytes - u.node_bytes[u.home]);
	if (t.nnodes == 1) {
		ck_assert_int_eq(u.home, 0);
		ck_assert_int_eq(u.source, NUMA_HOME_AFFINITY);
		ck_assert_uint_eq(u.remote, 0);
	}
	numa_maps_free(&nm);
	free(buf);
	ck_assert_int_eq(numa_proc_usage(&t, 0x7ffffff0, &u, NULL), -ENOENT);
	numa_topo_free(&t);
}
END_TEST

/* one node: per-node bytes from smaps, hugetlb included, numa_maps not read */
START_TEST(test_smaps_usage)
{
	static const char text[] =
		"00400000-00402000 r-xp 00000000 08:01 42 /usr/bin/x\n"
		"Rss:                   8 kB\nShared_Hugetlb:        0 kB\nPrivate_Hugetlb:       0 kB\n"
		"VmFlags: rd ex mr mw me\n"
		"7f0000000000-7f0000400000 rw-s 00000000 00:0f 77 /anon_hugepage (deleted)\n"
		"Rss:                   0 kB\nShared_Hugetlb:        0 kB\nPrivate_Hugetlb:    4096 kB\n"
		"VmFlags: rd wr sh mr mw me ms de ht\n"
		"7f1000000000-7f1000001000 rw-p 00000000 00:00 0\n"
		"Rss:                   0 kB\nVmFlags: rd wr mr mw me ac\n";
	struct numa_topo one = { .nnodes = 1, .mem_nodes = 1 }, two = topo_2n();
	struct numa_usage u;
	struct numa_maps nm;
	struct smaps s;

	ck_assert_int_eq(parse_smaps(text, &s), 3);
	ck_assert_int_eq(numa_smaps_usage(&one, &s, &u, &nm), 0);
	ck_assert_uint_eq(nm.n, 2);		/* the empty mapping is left out */
	ck_assert_uint_eq(nm.maps[0].start, 0x400000);
	ck_assert_str_eq(nm.maps[0].path, "/usr/bin/x");
	ck_assert_uint_eq(nm.maps[1].node_bytes[0], 4 * MiB);
	ck_assert(nm.maps[1].huge);
	ck_assert_uint_eq(u.bytes, 4 * MiB + 8192);
	ck_assert_uint_eq(u.node_bytes[0], u.bytes);
	ck_assert_int_eq(u.home, 0);
	ck_assert_int_eq(u.source, NUMA_HOME_ONLY_NODE);
	ck_assert_str_eq(numa_home_source_name(u.source), "only_node");
	ck_assert_uint_eq(u.remote, 0);
	numa_maps_free(&nm);
	ck_assert_int_eq(numa_smaps_usage(&two, &s, &u, &nm), -EINVAL);
	ck_assert_uint_eq(nm.n, 0);
	numa_topo_free(&two);
	smaps_free(&s);
}
END_TEST

/* run/attach: the NUMA block and the verdict of a final report (several nodes) */
START_TEST(test_report_numa)
{
	struct proc_row rows[2] = { 0 };
	struct report r = { .command = "run", .final = true, .numa_multi = true,
			    .procs = rows, .nprocs = 2 };
	struct numa_usage u = { .home = 0, .source = NUMA_HOME_AFFINITY };
	char *text, *line, *save;
	size_t len;
	json_t *o, *v;
	FILE *f;

	snprintf(r.cg.rel, sizeof(r.cg.rel), "/memacct-run-1");
	u.node_bytes[0] = 9 * MiB;
	u.node_bytes[1] = 32 * MiB;
	numa_usage_finish(&u);
	rows[0].pid = 177;
	rows[0].exited = true;
	snprintf(rows[0].comm, sizeof(rows[0].comm), "numa\033local");
	rows[0].m.remote_numa = rows[0].m.remote_numa_peak = u.remote;
	rows[0].has_numa_peak = true;
	numa_brief_of(&u, &rows[0].numa_peak);
	rows[1].pid = 178;		/* never sampled: no verdict */
	snprintf(rows[1].comm, sizeof(rows[1].comm), "quiet");
	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	/* the verdict is wrapped at 100 columns */
	ck_assert_msg(strstr(text, "Verdict: 78% of PID 177 (numa?local)'s resident pages "
			     "(32.0 MiB of 41.0 MiB) were on node 1 while it\n  ran on node 0"),
		      "%s", text);
	ck_assert_ptr_null(strstr(text, "PID 178 (quiet)'s"));
	ck_assert_ptr_nonnull(strstr(text, "REMOTE RSS"));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ck_assert_msg(!strncmp(line, "Verdict: ", 9) || strlen(line) <= 100,
			      "%zu columns: %s", strlen(line), line);
	free(text);
	o = report_json(&r);
	v = json_object_get(o, "verdict");
	ck_assert_int_eq(json_array_size(v), 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(v, 0)), "migratepages 177 1 0"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(o,
			 "processes"), 0), "remote_numa_peak_bytes")), 32 * MiB);
	json_decref(o);
	/* interval reports carry no verdict; a higher threshold silences it */
	r.final = false;
	o = report_json(&r);
	ck_assert_ptr_null(json_object_get(o, "verdict"));
	json_decref(o);
	r.final = true;
	numa_threshold_pct = 90;
	o = report_json(&r);
	ck_assert_int_eq(json_array_size(json_object_get(o, "verdict")), 0);
	json_decref(o);
	numa_threshold_pct = NUMA_THRESHOLD_PCT_DEFAULT;
}
END_TEST

Suite *numa_suite(void)
{
	Suite *s = suite_create("numa");
	TCase *tc = tcase_create("parsers");

	tcase_add_test(tc, test_numa_maps_self);
	tcase_add_test(tc, test_numa_maps_2node);
	tcase_add_test(tc, test_numa_maps_hostile);
	tcase_add_test(tc, test_numa_maps_guest);
	tcase_add_test(tc, test_numa_maps_bad);
	tcase_add_test(tc, test_cpulist);
	tcase_add_test(tc, test_numa_stat);
	tcase_add_test(tc, test_stat_processor);
	suite_add_tcase(s, tc);
	tc = tcase_create("home");
	tcase_add_test(tc, test_topo);
	tcase_add_test(tc, test_home_choose);
	tcase_add_test(tc, test_cgroup_home);
	tcase_add_test(tc, test_verdict);
	tcase_add_test(tc, test_proc_usage_self);
	tcase_add_test(tc, test_smaps_usage);
	tcase_add_test(tc, test_report_numa);
	suite_add_tcase(s, tc);
	return s;
}
