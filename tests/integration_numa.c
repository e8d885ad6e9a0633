// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_numa.c - root tests of the remote-NUMA stock (docs/numa.md)
 * on the nodes this host has. tests/workloads/numa_local maps and writes
 * 32 MiB (THP off) and 8 MiB with MADV_HUGEPAGE; memacct's per-node figures
 * are compared with the kernel's own files read here, independently of
 * memacct's parsers: the mapping's smaps Rss, the sum of numa_maps
 * N<node>=<pages> x kernelpagesize_kB, and the cgroup's memory.numa_stat.
 * The 2-node ground truth (32 MiB bound to node 1 while running on node 0:
 * remote_numa_bytes = 32 MiB) runs in qemu guests (tests/vmtest/).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "integration.h"
#include "memacct.skel.h"
#include "util.h"

static struct memcg cg;
static bool have_cg;
static FILE *wl;
static long long wl_pid;
static long long map_start, map_bytes, thp_start, thp_bytes;

/* Start numa_local (in @in_cg) and read its truth up to "ready PID". */
static void start_workload(const char *in_cg)
{
	char cmd[8192], line[512], k[64];
	long long v;

	if (in_cg)
		snprintf(cmd, sizeof(cmd), "echo $$ > '%s/cgroup.procs' && exec %s/numa_local 32",
			 in_cg, workloads);
	else
		snprintf(cmd, sizeof(cmd), "exec %s/numa_local 32", workloads);
	wl = popen(cmd, "r");
	ck_assert(wl);
	wl_pid = map_start = map_bytes = thp_start = thp_bytes = -1;
	while (fgets(line, sizeof(line), wl)) {
		if (sscanf(line, "truth %63s %lld", k, &v) == 2) {
			if (!strcmp(k, "map_start"))
				map_start = v;
			else if (!strcmp(k, "map_bytes"))
				map_bytes = v;
			else if (!strcmp(k, "thp_start"))
				thp_start = v;
			else if (!strcmp(k, "thp_bytes"))
				thp_bytes = v;
		} else if (sscanf(line, "ready %lld", &v) == 1) {
			wl_pid = v;
			break;
		}
	}
	ck_assert_msg(wl_pid > 0 && map_start > 0 && map_bytes == 32 * (long long)MiB &&
		      thp_start > 0, "numa_local printed no truth");
}

static void setup(void)
{
	wl = NULL;
	have_cg = false;
}

static void teardown(void)
{
	if (wl) {
		kill((pid_t)wl_pid, SIGTERM);
		pclose(wl);
		wl = NULL;
	}
	if (have_cg)
		memcg_remove(&cg);
	have_cg = false;
}

/* Rss and AnonHugePages (bytes) of the smaps record holding @addr; its start. */
static void smaps_of(long long pid, long long addr, long long *start, long long *rss,
		     long long *anon_huge)
{
	char path[64], line[4096];
	unsigned long long s, e;
	bool in = false;
	long long kb;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/smaps", pid);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	*rss = *anon_huge = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (unsigned long long)addr >= s && (unsigned long long)addr < e;
			if (in)
				*start = (long long)s;
		} else if (in && sscanf(line, "Rss: %lld kB", &kb) == 1) {
			*rss = kb * 1024;
		} else if (in && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) {
			*anon_huge = kb * 1024;
		}
	}
	fclose(f);
	ck_assert_msg(*rss >= 0, "no smaps record holds 0x%llx", addr);
}

/* Sum over every line of numa_maps of N<node>=<pages> x kernelpagesize_kB. */
static long long numa_maps_sum(long long pid, int node)
{
	char path[64], line[8192], *tok, *save;
	long long total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/numa_maps", pid);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		long long pages = 0, kb = 0, v;
		int n;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			if (sscanf(tok, "kernelpagesize_kB=%lld", &v) == 1)
				kb = v;
			else if (sscanf(tok, "N%d=%lld", &n, &v) == 2 && (node < 0 || n == node))
				pages += v;
		}
		total += pages * kb * 1024;
	}
	fclose(f);
	return total;
}

/* Rss + Shared_Hugetlb + Private_Hugetlb of /proc/PID/smaps_rollup. */
static long long rollup_resident(long long pid)
{
	char path[64], line[256];
	long long rss = -1, hugetlb = 0, kb;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/smaps_rollup", pid);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Rss: %lld kB", &kb) == 1)
			rss = kb * 1024;
		else if (sscanf(line, "Shared_Hugetlb: %lld kB", &kb) == 1 ||
			 sscanf(line, "Private_Hugetlb: %lld kB", &kb) == 1)
			hugetlb += kb * 1024;
	fclose(f);
	ck_assert_msg(rss >= 0, "%s has no Rss", path);
	return rss + hugetlb;
}

static long long node_sum(json_t *by)
{
	const char *k;
	json_t *v;
	long long s = 0;

	ck_assert_msg(json_is_object(by), "bytes_by_node is not an object");
	json_object_foreach(by, k, v)
		s += json_integer_value(v);
	return s;
}

static json_t *numa_mapping(json_t *numa, long long pid, long long start)
{
	char hex[32];
	size_t i;
	json_t *m;

	snprintf(hex, sizeof(hex), "0x%llx", start);
	json_array_foreach(json_object_get(numa, "mappings"), i, m)
		if (json_integer_value(json_object_get(m, "pid")) == pid &&
		    !strcmp(json_string_value(json_object_get(m, "start")), hex))
			return m;
	ck_abort_msg("numa.mappings has no %s of pid %lld", hex, pid);
	return NULL;
}

static json_t *numa_proc(json_t *numa, long long pid)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(numa, "processes"), i, p)
		if (json_integer_value(json_object_get(p, "pid")) == pid)
			return p;
	ck_abort_msg("numa.processes has no pid %lld", pid);
	return NULL;
}

/* One mapping: per-node bytes vs its smaps Rss; remote vs the home node. */
static void check_mapping(json_t *numa, json_t *proc, long long addr, long long want,
			  const char *what)
{
	long long start, rss, huge, home = jint(proc, "home_node");
	json_t *m, *by;
	char key[16];

	smaps_of(wl_pid, addr, &start, &rss, &huge);
	m = numa_mapping(numa, wl_pid, start);
	by = json_object_get(m, "bytes_by_node");
	snprintf(key, sizeof(key), "%lld", home);
	fprintf(stderr, "  %-40s memacct %12lld  smaps Rss %12lld  (AnonHugePages %lld)\n",
		what, node_sum(by), rss, huge);
	ck_assert_int_eq(node_sum(by), rss);
	if (want >= 0)
		ck_assert_int_eq(rss, want);
	ck_assert_int_eq(jint(m, "remote_bytes"), rss - jint(by, key));
	if (jint(numa, "nodes") == 1) {
		ck_assert_int_eq(jint(by, "0"), rss);
		ck_assert_int_eq(jint(m, "remote_bytes"), 0);
	}
}

START_TEST(test_explain_numa_pid)
{
	struct result *r;
	json_t *numa, *proc, *jp;
	long long sum, truth_sum, n0;
	bool one_node;
	size_t i;

	start_workload(NULL);
	r = run_cmd("%s -j explain %lld", memacct, wl_pid);
	ck_assert_msg(r->status == 0 && r->report, "explain: status %d\n%s", r->status, r->out);
	numa = json_object_get(r->report, "numa");
	ck_assert_msg(json_is_object(numa), "no numa object");
	ck_assert_int_ge(jint(numa, "nodes"), 1);
	proc = numa_proc(numa, wl_pid);
	ck_assert_int_ge(jint(proc, "home_node"), 0);
	/* the 32 MiB buffer (every page written) and the MADV_HUGEPAGE one */
	check_mapping(numa, proc, map_start, map_bytes, "32 MiB buffer: bytes_by_node");
	check_mapping(numa, proc, thp_start, -1, "MADV_HUGEPAGE 8 MiB: bytes_by_node");
	/*
	 * the process, vs the kernel's own figures read here after explain: on
	 * several nodes numa_maps summed; on one node explain does not read
	 * numa_maps (docs/numa.md) and every resident byte is on node 0:
	 * smaps_rollup's Rss + hugetlb (numa_maps differs by a page or so:
	 * it leaves out some special mappings)
	 */
	sum = node_sum(json_object_get(proc, "bytes_by_node"));
	one_node = jint(numa, "nodes") == 1;
	truth_sum = one_node ? rollup_resident(wl_pid) : numa_maps_sum(wl_pid, -1);
	fprintf(stderr, "  %-40s memacct %12lld  %s %12lld\n", "process bytes_by_node sum",
		sum, one_node ? "smaps_rollup" : "numa_maps", truth_sum);
	ck_assert_int_eq(sum, truth_sum);
	n0 = one_node ? truth_sum : numa_maps_sum(wl_pid, 0);
	ck_assert_int_eq(jint(json_object_get(proc, "bytes_by_node"), "0"), n0);
	ck_assert_int_eq(jint(proc, "remote_numa_bytes"), one_node ? 0 :
			 sum - numa_maps_sum(wl_pid, (int)jint(proc, "home_node")));
	/* processes[] and totals carry the same figure */
	json_array_foreach(json_object_get(r->report, "processes"), i, jp)
		if (jint(jp, "pid") == wl_pid)
			ck_assert_int_eq(jint(jp, "remote_numa_bytes"),
					 jint(proc, "remote_numa_bytes"));
	ck_assert_int_eq(jint(json_object_get(r->report, "totals"), "remote_numa_bytes"),
			 jint(proc, "remote_numa_bytes"));
	if (jint(numa, "nodes") == 1) {
		ck_assert_str_eq(json_string_value(json_object_get(proc, "home_node_source")),
				 "only_node");
		ck_assert_int_eq(jint(proc, "remote_numa_bytes"), 0);
		ck_assert_int_eq(jint(numa, "remote_numa_bytes"), 0);
	}
	/* --top limits numa.mappings like the other arrays; largest first */
	result_free(r);
	r = run_cmd("%s -j explain --top 2 %lld", memacct, wl_pid);
	ck_assert_msg(r->status == 0 && r->report, "explain --top 2 failed");
	numa = json_object_get(r->report, "numa");
	ck_assert_int_eq(json_array_size(json_object_get(numa, "mappings")), 2);
	ck_assert_int_eq(node_sum(json_object_get(json_array_get(json_object_get(numa,
			 "mappings"), 0), "bytes_by_node")), map_bytes);
	result_free(r);
	/* --numa-threshold: a percentage; 0 still needs remote bytes to name anyone */
	r = run_cmd("%s -j explain --numa-threshold 101 %lld", memacct, wl_pid);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
	r = run_cmd("%s -j explain --numa-threshold 0 %lld", memacct, wl_pid);
	ck_assert_msg(r->status == 0 && r->report, "explain --numa-threshold 0 failed");
	if (jint(json_object_get(r->report, "totals"), "remote_numa_bytes") == 0) {
		size_t k;
		json_t *v;

		json_array_foreach(json_object_get(r->report, "verdict"), k, v)
			ck_assert_msg(!strstr(json_string_value(v), "while it runs on node"),
				      "NUMA verdict without remote bytes: %s", json_string_value(v));
	}
	result_free(r);
	/* the table has the section */
	r = run_cmd("%s explain %lld", memacct, wl_pid);
	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(strstr(r->out, "\nNUMA: "), "no NUMA section in:\n%s", r->out);
	result_free(r);
}
END_TEST

/* numa_stat's line @key ("hierarchical_total" v1) node @node, in bytes */
static long long numa_stat_v1(const struct memcg *c, const char *key, int node)
{
	char path[PATH_MAX + 32], line[4096], want[80], *p;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.numa_stat", c->path);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	snprintf(want, sizeof(want), " N%d=", node);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == '=' &&
		    (p = strstr(line, want)))
			v = atoll(p + strlen(want)) * sysconf(_SC_PAGESIZE);
	fclose(f);
	return v;
}

START_TEST(test_explain_numa_cgroup)
{
	char name[64];
	struct result *r;
	json_t *numa, *c, *proc;
	long long got, want;
	int err;

	snprintf(name, sizeof(name), "memacct-test-numa-%d", getpid());
	err = memcg_create(name, &cg);
	ck_assert_msg(!err, "creating %s: %s", name, strerror(-err));
	have_cg = true;
	start_workload(cg.path);
	r = run_cmd("%s -j explain --cgroup '%s'", memacct, cg.path);
	ck_assert_msg(r->status == 0 && r->report, "explain --cgroup: %d\n%s", r->status, r->out);
	numa = json_object_get(r->report, "numa");
	c = json_object_get(numa, "cgroup");
	ck_assert_msg(json_is_object(c), "no numa.cgroup");
	proc = numa_proc(numa, wl_pid);
	check_mapping(numa, proc, map_start, map_bytes, "--cgroup: 32 MiB buffer");
	got = node_sum(json_object_get(c, "bytes_by_node"));
	snprintf(name, sizeof(name), "%lld", jint(c, "home_node"));
	ck_assert_int_eq(jint(c, "remote_numa_bytes"),
			 got - jint(json_object_get(c, "bytes_by_node"), name));
	ck_assert_int_eq(jint(json_object_get(r->report, "totals"), "remote_numa_bytes"),
			 jint(c, "remote_numa_bytes"));
	if (cg.version == 1) {
		want = numa_stat_v1(&cg, "hierarchical_total", 0);
		fprintf(stderr, "  %-40s memacct %12lld  numa_stat %12lld\n",
			"cgroup node 0 (hierarchical_total)", jint(json_object_get(c,
			"bytes_by_node"), "0"), want);
		assert_near("numa.cgroup bytes_by_node[0]",
			    jint(json_object_get(c, "bytes_by_node"), "0"), want);
	}
	/* the workload's pages are charged here: at least the 40 MiB it wrote */
	ck_assert_int_ge(got, map_bytes + thp_bytes - (long long)SLACK);
	if (jint(numa, "nodes") == 1) {
		ck_assert_int_eq(jint(c, "remote_numa_bytes"), 0);
		ck_assert_int_eq(jint(c, "home_node"), 0);
	}
	result_free(r);
}
END_TEST

/* run: the new keys are there; on one node nothing is sampled (0). */
START_TEST(test_run_numa_keys)
{
	struct result *r = memacct_run("numa_local 4 --seconds 1");
	json_t *t = json_object_get(r->report, "totals"), *p;
	size_t i;

	ck_assert_int_ge(jint(t, "remote_numa_bytes"), 0);
	ck_assert_int_ge(jint(t, "remote_numa_peak_bytes"), jint(t, "remote_numa_bytes"));
	ck_assert(json_is_array(json_object_get(r->report, "verdict")));
	json_array_foreach(json_object_get(r->report, "processes"), i, p)
		ck_assert_int_ge(jint(p, "remote_numa_peak_bytes"), jint(p, "remote_numa_bytes"));
	result_free(r);
}
END_TEST

/*
 * The struct page array base that page_node() turns page addresses into
 * frame numbers with (remote-NUMA bytes on hosts with several nodes). The
 * loader measures it on such hosts; here it is measured on this one. A base
 * made from one page's struct page and another page's frame number would
 * not repeat across measurements nor sit on the 1 GiB boundary that x86_64
 * places the randomized vmemmap region on (arch/x86/mm/kaslr.c, PUD_SIZE).
 */
START_TEST(test_vmemmap_base)
{
	struct memacct_bpf *skel = memacct_bpf__open();
	struct bpf_program *prog;
	uint64_t base = 0, again = 0;
	char *cmdline = NULL;

	ck_assert_ptr_nonnull(skel);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.vmemmap_probe);
	ck_assert_int_eq(memacct_bpf__load(skel), 0);
	ck_assert_int_eq(loader_measure_vmemmap(skel, &base), 0);
	ck_assert_int_eq(loader_measure_vmemmap(skel, &again), 0);
	ck_assert_msg(base == again, "base %#llx then %#llx", (unsigned long long)base,
		      (unsigned long long)again);
	ck_assert_msg(base >= 0xff00000000000000ULL, "base %#llx is no kernel address",
		      (unsigned long long)base);
#if defined(__x86_64__)
	ck_assert_msg(!(base & ((1ULL << 30) - 1)), "base %#llx not 1 GiB aligned",
		      (unsigned long long)base);
	/* without memory-layout KASLR, VMEMMAP_START (pgtable_64_types.h) */
	if (read_file("/proc/cmdline", &cmdline, 1 << 16) > 0 && strstr(cmdline, "nokaslr"))
		ck_assert_msg(base == 0xffffea0000000000ULL, "base %#llx under nokaslr",
			      (unsigned long long)base);
#endif
	free(cmdline);
	printf("ok   vmemmap base %#llx, sizeof(struct page) %u\n", (unsigned long long)base,
	       skel->bss->vmemmap_struct_size);
	memacct_bpf__destroy(skel);
}
END_TEST

Suite *numa_suite(void)
{
	Suite *s = suite_create("numa");
	TCase *tc = tcase_swept("stock", 120);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_explain_numa_pid);
	tcase_add_test(tc, test_explain_numa_cgroup);
	tcase_add_test(tc, test_run_numa_keys);
	suite_add_tcase(s, tc);
		tc = tcase_swept("vmemmap", 60);
	tcase_add_test(tc, test_vmemmap_base);
	suite_add_tcase(s, tc);
	return s;
}
