// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_faulthook.c - the fault hook (issue #24): the loader's choice
 * (the tracepoint exceptions:page_fault_user where the kernel has it, else
 * the PERF_COUNT_SW_PAGE_FAULTS perf event), its override
 * MEMACCT_FAULT_HOOK, and the ground-truth fault checks of integration.c
 * (CoW after fork, zero fill, file CoW, none for MAP_SHARED writes and
 * reuse: the same functions) run again with the perf event hook forced;
 * then CoW and zero fills of a process hopping between CPUs (one perf
 * event per CPU).
 */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include "integration.h"

/*
 * The kernel offers the tracepoint: its BTF names btf_trace_page_fault_user
 * (what the loader looks for), read here from the raw BTF's strings; tracefs
 * shows the same event where it is mounted.
 */
static bool have_fault_tracepoint(void)
{
	static const char name[] = "btf_trace_page_fault_user";
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "r");
	size_t cap = 1 << 20, len = 0, n;
	char *buf = malloc(cap);
	bool found = false;

	ck_assert_ptr_nonnull(buf);
	ck_assert_msg(f, "/sys/kernel/btf/vmlinux: %s", strerror(errno));
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
	}
	fclose(f);
	/* a string of the BTF string table: NUL before and after */
	for (char *p = buf; (p = memmem(p, len - (p - buf), name, sizeof(name))) != NULL;
	     p += sizeof(name))
		if (p > buf && p[-1] == '\0') {
			found = true;
			break;
		}
	free(buf);
	if (access("/sys/kernel/tracing/events/exceptions", F_OK) == 0)
		ck_assert_int_eq(found, access("/sys/kernel/tracing/events/exceptions/page_fault_user",
					       F_OK) == 0);
	return found;
}

static void force_perf(void)
{
	ck_assert_int_eq(setenv("MEMACCT_FAULT_HOOK", "perf", 1), 0);
}

static void unforce(void)
{
	unsetenv("MEMACCT_FAULT_HOOK");
}

/* The hook `memacct -v run` says it picked, with MEMACCT_FAULT_HOOK=@env
 * (NULL: unset): "tracepoint", "perf", "none", or "" when it said none */
static char *hook_picked(const char *env, int *status)
{
	static char hook[32];
	struct result *r;
	char *p;

	r = run_cmd("%s%s %s -v run -- true 2>&1 >/dev/null", env ? "MEMACCT_FAULT_HOOK=" : "env -u MEMACCT_FAULT_HOOK",
		    env ? env : "", memacct);
	*status = r->status;
	hook[0] = '\0';
	p = strstr(r->out, "fault hook: ");
	if (p)
		sscanf(p + 12, "%31[a-z]", hook);
	if (!p) {	/* what it said instead: its Error: line */
		char *e = strstr(r->out, "Error: ");

		printf("  MEMACCT_FAULT_HOOK=%s: exit %d, %.*s\n", env ? env : "(unset)", r->status,
		       e ? (int)strcspn(e, "\n") : 0, e ? e : "");
	}
	result_free(r);
	return hook;
}

START_TEST(test_hook_choice)
{
	bool tp = have_fault_tracepoint();
	int status;
	char *h;

	h = hook_picked(NULL, &status);
	ck_assert_int_eq(status, 0);
	printf("  kernel %s exceptions:page_fault_user: picked %s\n", tp ? "has" : "lacks", h);
	ck_assert_str_eq(h, tp ? "tracepoint" : "perf");

	h = hook_picked("perf", &status);
	ck_assert_int_eq(status, 0);
	ck_assert_str_eq(h, "perf");

	h = hook_picked("tracepoint", &status);
	if (tp) {
		ck_assert_int_eq(status, 0);
		ck_assert_str_eq(h, "tracepoint");
	} else {	/* forced and not there: an environment error, no fallback */
		ck_assert_int_eq(status, 3);
	}
	/* a value that names no hook: refused before anything loads */
	h = hook_picked("kprobe", &status);
	ck_assert_int_eq(status, 3);
	ck_assert_str_eq(h, "");
}
END_TEST

/*
 * MEMACCT_FAULT_HOOK=none: no fault program loads, and the figures only the
 * classifier gives (MF_FAULT rows: CoW, file CoW, zero fill, unclassified,
 * fault_alloc, remote_numa_alloc) are null in -j and "-" in the table with
 * a footnote, never a 0 that reads as measured; the kernel's own figures
 * (RSS, faults) are there. The daemon says fault_hook="none" and publishes
 * no sample of those families.
 */
START_TEST(test_hook_none)
{
	static const char *const keys[] = { "cow_copied_bytes", "cow_file_copied_bytes",
					    "zero_fill_bytes", "fault_unclassified_bytes",
					    "fault_alloc_bytes", "remote_numa_alloc_bytes" };
	char pin[96], cmd[512];
	struct result *r;
	json_t *t, *p;
	size_t i, k;
	int port;
	pid_t d;

	r = run_cmd("MEMACCT_FAULT_HOOK=none %s -j run -- %s/cow_fork 16 4", memacct, workloads);
	ck_assert_msg(r->status == 0 && r->report, "run (rc %d): %.2000s", r->status, r->out);
	t = json_object_get(r->report, "totals");
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		ck_assert_msg(json_is_null(json_object_get(t, keys[k])), "totals.%s not null",
			      keys[k]);
	json_array_foreach(json_object_get(r->report, "processes"), i, p)
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			ck_assert_msg(json_is_null(json_object_get(p, keys[k])),
				      "process %lld: %s not null", jint(p, "pid"), keys[k]);
	ck_assert_int_gt(jint(t, "page_faults_total"), 0);
	ck_assert_int_gt(jint(t, "rss_peak_bytes"), 0);
	printf("  hook none: %zu rows, the classifier's %zu figures null, faults %lld\n", i,
	       sizeof(keys) / sizeof(keys[0]), jint(t, "page_faults_total"));
	result_free(r);

	r = run_cmd("MEMACCT_FAULT_HOOK=none %s run --columns PID,COMM,COW,ZEROFILL -- "
		    "%s/cow_fork 16 4", memacct, workloads);
	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(strstr(r->out, "  TOTAL (cgroup)               -        -"),
		      "TOTAL's COW and ZEROFILL not \"-\":\n%.2000s", r->out);
	ck_assert_msg(strstr(r->out, "- = not measured: no fault hook"), "no footnote:\n%.2000s",
		      r->out);
	result_free(r);

	port = free_port();
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/memacct-fh-none-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "exec env MEMACCT_FAULT_HOOK=none %s daemon --listen "
		 "127.0.0.1:%d --pin-path %s --interval 1s >/dev/null 2>&1", memacct, port, pin);
	d = spawn_daemon(cmd, port);
	ck_assert_int_gt(d, 0);
	sleep_ms(1500);
	r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
	kill(d, SIGINT);
	waitpid(d, NULL, 0);
	result_free(run_cmd("%s detach --pin-path %s >/dev/null 2>&1", memacct, pin));
	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(strstr(r->out, "memacct_kernel_features{fault_hook=\"none\"} 1"),
		      "no fault_hook=\"none\"");
	ck_assert_msg(strstr(r->out, "# TYPE memacct_cow_copied_bytes_total counter"),
		      "no memacct_cow_copied_bytes family");
	ck_assert_msg(!strstr(r->out, "\nmemacct_cow_copied_bytes_total{"),
		      "a memacct_cow_copied_bytes_total sample without a fault hook");
	ck_assert_msg(strstr(r->out, "\nmemacct_rss_bytes{") || strstr(r->out, "\nmemacct_usage_bytes{"),
		      "no per-cgroup stock samples");
	printf("  daemon, hook none: fault_hook=\"none\", no CoW sample, stocks there\n");
	result_free(r);

	/* an OOM post-mortem: the victim's and the kill's CoW null, not 0 */
	r = run_cmd("MEMACCT_FAULT_HOOK=none %s -j run --memory-max 64M -- %s/oom 128 2>/dev/null",
		    memacct, workloads);
	ck_assert_msg(r->report, "no report (rc %d): %.2000s", r->status, r->out);
	t = json_array_get(json_object_get(r->report, "oom_kills"), 0);
	ck_assert_msg(json_is_object(t), "no oom_kills: %.2000s", r->out);
	ck_assert_msg(json_is_null(json_object_get(t, "cow_copied_bytes")), "kill's CoW not null");
	p = json_object_get(t, "victim");
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		ck_assert_msg(!json_object_get(p, keys[k]) || json_is_null(json_object_get(p, keys[k])),
			      "victim's %s not null", keys[k]);
	ck_assert_msg(json_is_integer(json_object_get(p, "anon_bytes")) ||
		      json_is_null(json_object_get(p, "anon_bytes")), "victim without anon_bytes");
	printf("  OOM, hook none: the kill's and the victim's CoW null\n");
	result_free(r);
}
END_TEST

/* integration.c's fault checks, with the perf event hook forced (fixture) */
START_TEST(test_perf_cow_fork_child) { fault_cow_fork_child("perf"); }
END_TEST

START_TEST(test_perf_cow_fork_parent_writes) { fault_cow_fork_parent_writes("perf"); }
END_TEST

START_TEST(test_perf_zero_fill) { fault_zero_fill("perf"); }
END_TEST

START_TEST(test_perf_zero_fill_thp) { fault_zero_fill_thp("perf"); }
END_TEST

START_TEST(test_perf_cow_maps) { fault_cow_maps("perf"); }
END_TEST

START_TEST(test_perf_file_private_write)
{
	fault_file_private("perf", "32", "MAP_PRIVATE write: file cow");
}
END_TEST

START_TEST(test_perf_file_private_read_first)
{
	fault_file_private("perf", "32 --read-first", "MAP_PRIVATE read+write: file cow");
}
END_TEST

START_TEST(test_perf_file_shared) { fault_file_shared("perf"); }
END_TEST

START_TEST(test_perf_reuse_tmpfs) { fault_reuse_tmpfs("perf"); }
END_TEST

/*
 * MAP_PRIVATE shmem (a memfd that starts as holes): read faults allocate
 * the page-cache page itself, which the perf hook cannot tell from a copy
 * at the allocation; it counts it only when the page is anon once the
 * fault has finished (bpf/faults.bpf.h cand_resolve()). Run with the
 * kernel's own choice of hook (choice case) and with perf forced.
 */
static void shmem_private(const char *what)
{
	struct result *r = memacct_run("shmem_private 16");
	json_t *t = json_object_get(r->report, "totals");

	printf("  %s: %lld bytes read from holes, never written\n", what,
	       truth(r, "read_only_bytes"));
	assert_near(what, jint(t, "cow_file_copied_bytes"), truth(r, "file_cow_bytes"));
	assert_near("MAP_PRIVATE shmem: anon cow", jint(t, "cow_copied_bytes"),
		    truth(r, "cow_bytes"));
	result_free(r);
}

/*
 * perf_event_open refused (here by a seccomp filter, tests/workloads/
 * deny_perf.c): the message names the knobs with their values, exit 3, no
 * quiet fallback.
 */
START_TEST(test_perf_refused)
{
	struct result *r = run_cmd("MEMACCT_FAULT_HOOK=perf %s/deny_perf %s run -- true 2>&1",
				   workloads, memacct);

	printf("  perf_event_open denied by seccomp: exit %d\n", r->status);
	ck_assert_int_eq(r->status, 3);
	ck_assert_msg(strstr(r->out, "perf_event_paranoid") && strstr(r->out, "CAP_PERFMON") &&
		      strstr(r->out, "seccomp filter (ACTIVE here") && strstr(r->out, "lockdown"),
		      "the refusal does not name its knobs: %s", r->out);
	result_free(r);
}
END_TEST

START_TEST(test_shmem_private)
{
	shmem_private("MAP_PRIVATE shmem, the kernel's hook: file cow");
}
END_TEST

START_TEST(test_perf_shmem_private)
{
	shmem_private("perf hook: MAP_PRIVATE shmem: file cow");
}
END_TEST

/*
 * Zero fills and CoW copies of a parent and child that move to the next CPU
 * every 64 pages: with one perf event per CPU every fault is seen, and the
 * fault state follows the thread. With a single CPU allowed there is no
 * move to test.
 */
START_TEST(test_perf_cpu_hops)
{
	struct result *r = memacct_run("cow_hop 32 2 64");

	if (truth(r, "allowed_cpus") < 2) {
		SKIP_TEST("one CPU allowed here: no migration to test");
		result_free(r);
		return;
	}
	printf("  hops: the parent wrote on %lld CPUs, the child on %lld\n",
	       truth(r, "parent_cpus"), truth(r, "child_cpus"));
	ck_assert_int_ge(truth(r, "parent_cpus"), 2);
	ck_assert_int_ge(truth(r, "child_cpus"), 2);
	assert_near("perf hook, CPU hops: parent zero fill",
		    jint(proc_by_pid(r, truth(r, "parent_pid")), "zero_fill_bytes"),
		    truth(r, "zero_fill_bytes"));
	assert_near("perf hook, CPU hops: child cow",
		    jint(proc_by_pid(r, truth(r, "child_pid")), "cow_copied_bytes"),
		    truth(r, "child_cow_bytes"));
	result_free(r);
}
END_TEST

Suite *faulthook_suite(void)
{
	Suite *s = suite_create("faulthook");
	TCase *choice = tcase_swept("choice", 120);
	TCase *tc = tcase_swept("perf", 300);

	tcase_add_test(choice, test_hook_choice);
	tcase_add_test(choice, test_shmem_private);
	tcase_add_test(choice, test_perf_refused);
	tcase_add_test(choice, test_hook_none);
	suite_add_tcase(s, choice);
	tcase_add_checked_fixture(tc, force_perf, unforce);
	tcase_add_test(tc, test_perf_cow_fork_child);
	tcase_add_test(tc, test_perf_cow_fork_parent_writes);
	tcase_add_test(tc, test_perf_zero_fill);
	tcase_add_test(tc, test_perf_zero_fill_thp);
	tcase_add_test(tc, test_perf_cow_maps);
	tcase_add_test(tc, test_perf_file_private_write);
	tcase_add_test(tc, test_perf_file_private_read_first);
	tcase_add_test(tc, test_perf_file_shared);
	tcase_add_test(tc, test_perf_reuse_tmpfs);
	tcase_add_test(tc, test_perf_shmem_private);
	tcase_add_test(tc, test_perf_cpu_hops);
	suite_add_tcase(s, tc);
	return s;
}
