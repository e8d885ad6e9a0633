// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_audit.c - root tests of `memacct audit` (pinned caps, evidence,
 * --enforce-rlimit) and of the limits of run/attach (--memory-max,
 * --memory-high: OOM reported, old values restored after SIGINT and after
 * SIGKILL of memacct). Each test makes its own cgroup
 * memacct-test-audit-PID and removes it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "integration.h"

static char cg[256], outf[300];

static void make_cg(void)
{
	snprintf(cg, sizeof(cg), "%s/memacct-test-audit-%d", cgroot, getpid());
	ck_assert_msg(!mkdir(cg, 0755) || errno == EEXIST, "mkdir %s: %s", cg, strerror(errno));
	snprintf(outf, sizeof(outf), "/tmp/memacct-audit-%d.out", getpid());
}

static void remove_cg(void)
{
	for (int i = 0; i < 100 && rmdir(cg) && errno == EBUSY; i++)
		usleep(50000);
	unlink(outf);
	cg[0] = '\0';
}

/* start `PREFIX WORKLOAD ARGS` in the cgroup; returns its pid once it printed "ready" */
static int start_in_cg(const char *prefix, const char *args)
{
	char cmd[2048], *buf = NULL;
	int pid = 0;

	/* PREFIX is a shell-like command taking "-c SCRIPT" (capsh ... --), or "" for sh */
	snprintf(cmd, sizeof(cmd),
		 "%s -c 'echo $$ > %s/cgroup.procs && exec %s/%s' > %s 2>&1 &",
		 prefix[0] ? prefix : "sh", cg, workloads, args, outf);
	ck_assert_int_eq(system(cmd), 0);
	for (int i = 0; i < 200 && !pid; i++) {
		FILE *f = fopen(outf, "r");
		char line[256];

		if (f) {
			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "ready %d", &pid) == 1)
					break;
			fclose(f);
		}
		if (!pid)
			usleep(50000);
	}
	free(buf);
	ck_assert_msg(pid > 0, "workload %s did not get ready", args);
	return pid;
}

static void stop_pid(int pid)
{
	kill(pid, SIGKILL);
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		usleep(20000);
}

static long long json_path_int(json_t *o, const char *k)
{
	return jint(o, k);
}

static json_t *audit_proc(json_t *rep, int pid)
{
	json_t *cgs = json_object_get(rep, "cgroups"), *c, *p;
	size_t i, j;

	json_array_foreach(cgs, i, c)
		json_array_foreach(json_object_get(c, "processes"), j, p)
			if (jint(p, "pid") == pid)
				return p;
	ck_abort_msg("pid %d not in the audit", pid);
	return NULL;
}

static void pinned_cap(const char *mode, const char *key)
{
	struct result *r;
	json_t *p, *maps;
	char args[64];
	int pid;

	make_cg();
	snprintf(args, sizeof(args), "mlock_steps %s 64 30", mode);
	pid = start_in_cg("", args);

	r = run_cmd("%s -j audit --cgroup %s --pinned-cap 32M", memacct, cg);
	ck_assert_msg(r->report, "no JSON: %s", r->out);
	ck_assert_int_eq(r->status, 1);
	ck_assert_str_eq(json_string_value(json_object_get(r->report, "verdict")), "exceeded");
	p = audit_proc(r->report, pid);
	assert_near(key, json_path_int(p, key), 64 * MiB);
	maps = json_object_get(p, "locked_mappings");
	if (!strcmp(key, "mlocked_bytes")) {
		ck_assert_int_ge(json_array_size(maps), 1);
		assert_near("locked mapping (smaps Locked)",
			    jint(json_array_get(maps, 0), "locked_bytes"), 64 * MiB);
	}
	printf("  audit %s --pinned-cap 32M: exit %d\n", mode, r->status);
	result_free(r);

	r = run_cmd("%s audit --cgroup %s --pinned-cap 32M", memacct, cg);
	ck_assert_int_eq(r->status, 1);
	ck_assert_msg(strstr(r->out, "EXCEEDED") && strstr(r->out, "mlock_steps"),
		      "plain output names the process: %s", r->out);
	result_free(r);
	/* the process table (libsmartcols), exact bytes: its row's MLOCKED or
	 * PINNED VM column against the workload's 64 MiB */
	r = run_cmd("%s --bytes audit --cgroup %s --pinned-cap 32M | awk '$1 == %d && $2 == "
		    "\"mlock_steps\" { print \"truth col\", $%d }'", memacct, cg, pid,
		    !strcmp(key, "mlocked_bytes") ? 3 : 4);
	ck_assert_msg(r->nt == 1, "no table row of pid %d: %s", pid, r->out);
	assert_near("audit table row", r->t[0].val, 64 * MiB);
	result_free(r);

	r = run_cmd("%s -j audit --cgroup %s --pinned-cap 96M", memacct, cg);
	printf("  audit %s --pinned-cap 96M: exit %d\n", mode, r->status);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	stop_pid(pid);
	remove_cg();
}

START_TEST(test_audit_mlock_cap) { pinned_cap("mlock", "mlocked_bytes"); }
END_TEST
START_TEST(test_audit_io_uring_cap) { pinned_cap("io_uring", "pinned_vm_bytes"); }
END_TEST

/* ---- audit --watch: event-driven, catches a spike of ~50 ms ------------ */

/* whole file, malloc'd ("" when missing) */
static char *slurp(const char *path)
{
	char *buf = calloc(1, 1);
	size_t len = 0, n;
	char chunk[4096];
	FILE *f = fopen(path, "r");

	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf = realloc(buf, len + n + 1);
		memcpy(buf + len, chunk, n);
		len += n;
		buf[len] = '\0';
	}
	if (f)
		fclose(f);
	return buf;
}

/* wait (generous timeout: 30 s) until @path contains @needle */
static bool wait_for(const char *path, const char *needle)
{
	for (int i = 0; i < 600; i++) {
		char *buf = slurp(path);
		bool found = strstr(buf, needle) != NULL;

		free(buf);
		if (found)
			return true;
		usleep(50000);
	}
	return false;
}

/* "truth KEY V" printed by the workload into outf */
static long long outf_truth(const char *key)
{
	char *buf = slurp(outf), *l, want[80];
	long long v = -1;

	snprintf(want, sizeof(want), "truth %s ", key);
	for (l = strstr(buf, want); l; l = strstr(l + 1, want))
		v = atoll(l + strlen(want));
	free(buf);
	ck_assert_msg(v >= 0, "workload printed no '%s'", want);
	return v;
}

/* the line of @buf that starts with @prefix, copied into @line ("" if none) */
static void line_of(const char *buf, const char *prefix, char *line, size_t len)
{
	const char *l = buf;

	line[0] = '\0';
	while (l && *l) {
		if (!strncmp(l, prefix, strlen(prefix))) {
			snprintf(line, len, "%.*s", (int)strcspn(l, "\n"), l);
			return;
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
}

/*
 * `memacct [FLAG] audit --cgroup CG --pinned-cap CAP --watch 10s` while
 * mlock_spike MODE pins 64 MiB for 50 ms: the /proc re-read (every 10 s)
 * cannot see it, only the BPF change events can. Returns the watch's exit
 * status; its stdout and stderr are left in @wout / @werr.
 */
static int watch_spike(const char *mode, const char *flag, const char *cap, int *wl_pid,
		       char *wout, char *werr, size_t len)
{
	char args[64], tag[64];
	pid_t w;
	int st;

	make_cg();
	snprintf(wout, len, "/tmp/memacct-watch-%d.out", getpid());
	snprintf(werr, len, "/tmp/memacct-watch-%d.err", getpid());
	snprintf(args, sizeof(args), "mlock_spike %s 64 50 30", mode);
	*wl_pid = start_in_cg("", args);
	w = fork();
	if (w == 0) {
		int o = open(wout, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(werr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		char *argv[10];
		int a = 0;

		/* a failed assertion ends the test's process: the watch with it */
		prctl(PR_SET_PDEATHSIG, SIGINT);
		dup2(o, 1);
		dup2(e, 2);
		argv[a++] = "memacct";
		if (flag[0])
			argv[a++] = (char *)flag;
		argv[a++] = "audit";
		argv[a++] = "--cgroup";
		argv[a++] = cg;
		argv[a++] = "--pinned-cap";
		argv[a++] = (char *)cap;
		argv[a++] = "--watch";
		argv[a++] = "10s";
		argv[a] = NULL;
		execv(memacct, argv);
		_exit(127);
	}
	ck_assert_msg(wait_for(werr, "BPF events on every"), "watch did not start on BPF "
		      "events: %s", slurp(werr));
	kill(*wl_pid, SIGUSR1);
	ck_assert_msg(wait_for(outf, "done"), "workload did not finish its spike");
	/* the watch has handled both changes (the release names after_* bytes) */
	if (!strcmp(flag, "-v")) {
		snprintf(tag, sizeof(tag), "audit: pid %d (mlock_spike) %s:", *wl_pid,
			 strcmp(mode, "mlock") ? "io_uring_register" : "munlock");
		ck_assert_msg(wait_for(werr, tag), "no release event '%s' in %s", tag, werr);
	} else {
		/* with -j the line is on stderr: stdout has only JSON objects */
		const char *f = strcmp(flag, "-j") ? wout : werr;

		ck_assert_msg(wait_for(f, "back within caps"), "no 'back within' line: %s",
			      slurp(f));
	}
	kill(w, SIGINT);
	ck_assert_int_eq(waitpid(w, &st, 0), w);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void watch_cleanup(int wl_pid, const char *wout, const char *werr)
{
	stop_pid(wl_pid);
	unlink(wout);
	unlink(werr);
	remove_cg();
}

START_TEST(test_audit_watch_mlock_spike)
{
	char wout[128], werr[128], line[512], want[64], *out;
	long long spike, after;
	int pid, status;

	status = watch_spike("mlock", "", "32M", &pid, wout, werr, sizeof(wout));
	out = slurp(wout);
	spike = outf_truth("spike_locked_bytes");
	after = outf_truth("after_locked_bytes");
	line_of(out, "EXCEEDED", line, sizeof(line));
	printf("  watch mlock 64 MiB for 50 ms, cap 32M: exit %d, VmLck truth %lld -> %lld\n"
	       "    %s\n", status, spike, after, line);
	ck_assert_int_eq(spike, 64 * MiB);
	snprintf(want, sizeof(want), "pid %d (mlock_spike)", pid);
	ck_assert_msg(strstr(line, want), "crossing names %s: %s", want, out);
	snprintf(want, sizeof(want), "mlocked %lld pinned_vm", spike);
	ck_assert_msg(strstr(line, want), "crossing names the VmLck truth (%s): %s", want, out);
	line_of(out, "ok ", line, sizeof(line));
	snprintf(want, sizeof(want), "mlocked %lld pinned_vm", after);
	ck_assert_msg(strstr(line, want) && strstr(line, "munlock"),
		      "release names the VmLck truth after munlock (%s): %s", want, out);
	ck_assert_int_eq(status, 1);
	free(out);
	watch_cleanup(pid, wout, werr);

	/* the same spike under a 96M cap: seen (-v shows each event), not a crossing */
	status = watch_spike("mlock", "-v", "96M", &pid, wout, werr, sizeof(wout));
	out = slurp(wout);
	printf("  watch mlock 64 MiB for 50 ms, cap 96M: exit %d\n", status);
	ck_assert_msg(!strstr(out, "EXCEEDED"), "no crossing under 96M: %s", out);
	ck_assert_int_eq(status, 0);
	free(out);
	out = slurp(werr);
	snprintf(want, sizeof(want), "audit: pid %d (mlock_spike) mlock: mlocked %lld ", pid,
		 outf_truth("spike_locked_bytes"));
	ck_assert_msg(strstr(out, want), "the spike was seen (%s)", want);
	free(out);
	watch_cleanup(pid, wout, werr);
}
END_TEST

START_TEST(test_audit_watch_io_uring_spike)
{
	char wout[128], werr[128], line[8192], *out;
	json_t *j, *t;
	long long spike;
	int pid, status;

	status = watch_spike("io_uring", "-j", "32M", &pid, wout, werr, sizeof(wout));
	out = slurp(wout);
	spike = outf_truth("spike_pinned_vm_bytes");
	line_of(out, "{", line, sizeof(line));
	j = json_loads(line, 0, NULL);
	ck_assert_msg(j, "no JSON object at the crossing: %s", out);
	t = json_object_get(j, "trigger");
	printf("  watch io_uring 64 MiB for 50 ms, cap 32M: exit %d, VmPin truth %lld, "
	       "trigger pid %lld pinned_vm_bytes %lld\n", status, spike, jint(t, "pid"),
	       jint(t, "pinned_vm_bytes"));
	ck_assert_int_eq(spike, 64 * MiB);
	ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "exceeded");
	ck_assert_str_eq(json_string_value(json_object_get(t, "source")), "bpf");
	ck_assert_int_eq(jint(t, "pid"), pid);
	ck_assert_int_eq(jint(t, "pinned_vm_bytes"), spike);
	ck_assert_int_eq(status, 1);
	json_decref(j);
	free(out);
	/* stdout of audit -j --watch: nothing but schema-valid objects */
	if (!access("/usr/bin/python3", X_OK)) {
		struct result *v = run_cmd("/usr/bin/python3 %s/validate_json.py "
					   "%s/../docs/memacct.report.v1.schema.json %s 2>&1",
					   testsdir, testsdir, wout);

		ck_assert_msg(v->status == 0, "audit -j --watch stdout: %s", v->out);
		result_free(v);
	}
	watch_cleanup(pid, wout, werr);
}
END_TEST

START_TEST(test_audit_usage_errors)
{
	struct result *r = run_cmd("%s audit --pinned-cap 12Q 2>&1", memacct);

	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "12Q"), "names the bad token: %s", r->out);
	result_free(r);
	r = run_cmd("%s audit --cgroup no-such-cgroup-memacct 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
}
END_TEST

static long long soft_memlock(int pid)
{
	char path[64], line[256];
	long long v = -2;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max locked memory", 17)) {
			char s[32];

			sscanf(line + 17, "%31s", s);
			v = strcmp(s, "unlimited") ? atoll(s) : -1;
		}
	fclose(f);
	return v;
}

START_TEST(test_audit_enforce_rlimit)
{
	struct result *r;
	struct rlimit own, eight = { 8 * MiB, 8 * MiB };
	long long before, after, restored;
	char line[256];
	int pid, e = -1;
	FILE *f;

	if (system("command -v capsh >/dev/null") != 0) {
		SKIP_TEST("no capsh to drop CAP_IPC_LOCK (mlock ignores RLIMIT_MEMLOCK with it)");
		return;
	}
	make_cg();
	/*
	 * without CAP_IPC_LOCK, 4 MiB, then 1 MiB more after 3 s; under an
	 * RLIMIT_MEMLOCK of 8 MiB, the default since Linux 5.16 (9dcc38e2813e):
	 * set here for the workload to inherit, as the default was 64 KiB before
	 */
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &own), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &eight), 0);
	pid = start_in_cg("capsh --drop=cap_ipc_lock --", "audit_mlock_more 4 3 10");
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &own), 0);
	before = soft_memlock(pid);
	r = run_cmd("%s audit --cgroup %s --enforce-rlimit 2>&1", memacct, cg);
	ck_assert_msg(strstr(r->out, "enforce: pid"), "action logged: %s", r->out);
	result_free(r);
	after = soft_memlock(pid);
	printf("  enforce: RLIMIT_MEMLOCK soft %lld -> %lld (holds 4 MiB)\n", before, after);
	ck_assert_int_eq(after, 4 * MiB);
	for (int i = 0; i < 100 && e < 0; i++) {
		f = fopen(outf, "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "truth second_mlock_errno %d", &e);
		if (f)
			fclose(f);
		if (e < 0)
			usleep(100000);
	}
	printf("  enforce: next mlock errno %d\n", e);
	ck_assert_msg(e == ENOMEM || e == EPERM, "next mlock must fail, errno %d", e);
	r = run_cmd("%s audit --restore-rlimit 2>&1", memacct);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	/* a per-process cap above what it holds: the line gives both, each once
	 * (it printed the cap twice: "8.00 MiB -> 6.00 MiB (holds 6.00 MiB)") */
	r = run_cmd("%s audit --cgroup %s --enforce-rlimit --per-process-cap 6M 2>&1", memacct, cg);
	line_of(r->out, "memacct: enforce: pid", line, sizeof(line));
	printf("  enforce with a 6 MiB cap: %s\n", line);
	ck_assert_msg(strstr(line, "-> 6.00 MiB (holds 4.00 MiB)"), "cap and holding: %s", r->out);
	result_free(r);
	r = run_cmd("%s audit --restore-rlimit 2>&1", memacct);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	restored = soft_memlock(pid);
	printf("  enforce: restored soft %lld\n", restored);
	ck_assert_int_eq(restored, before);
	stop_pid(pid);
	remove_cg();
}
END_TEST

/* "KEY N" in the file @name of cgroup directory @dir; -1 when absent */
static long long cg_file_key(const char *dir, const char *name, const char *key)
{
	char path[512], *buf, *l, want[64];
	long long v = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf = slurp(path);
	snprintf(want, sizeof(want), "%s ", key);
	for (l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, want, strlen(want)))
			v = atoll(l + strlen(want));
	free(buf);
	return v;
}

/* the kernel's OOM kills and limit hits of a cgroup directory (v1 or v2) */
static void cg_oom_truth(const char *dir, long long *oom_kill, long long *limit_hits)
{
	char path[512], *buf;

	snprintf(path, sizeof(path), "%s/memory.failcnt", dir);
	if (access(path, F_OK) == 0) {	/* v1 */
		*oom_kill = cg_file_key(dir, "memory.oom_control", "oom_kill");
		buf = slurp(path);
		*limit_hits = atoll(buf);
		free(buf);
	} else {
		*oom_kill = cg_file_key(dir, "memory.events", "oom_kill");
		*limit_hits = cg_file_key(dir, "memory.events", "max");
	}
}

/*
 * run --memory-max 64M of a 128 MiB allocator: the OOM kill and the memcg
 * reclaim are in the report itself, table and JSON, and agree with the
 * kernel's own counters of the cgroup (kept with --keep-cgroup to read them).
 */
START_TEST(test_run_memory_max_oom)
{
	struct result *r = run_cmd("%s -j run --keep-cgroup --memory-max 64M -- %s/oom 128 2>&1",
				   memacct, workloads);
	long long oom_kill, hits, victim = truth(r, "pid");
	const char *dir;
	char line[512], want[64], path[512], rel[256];
	json_t *t, *p, *rep;

	ck_assert_msg(r->report, "no JSON report: %s", r->out);
	t = json_object_get(r->report, "totals");
	dir = json_string_value(json_object_get(json_object_get(r->report, "cgroup"), "fs_path"));
	ck_assert_ptr_nonnull(dir);
	cg_oom_truth(dir, &oom_kill, &hits);
	p = proc_by_pid(r, victim);
	printf("  run --memory-max 64M, oom 128: exit %d, oom_kills %lld (kernel %lld), "
	       "memcg_reclaims %lld (kernel: limit hit %lld times); victim %lld oom_kills %lld\n",
	       r->status, jint(t, "oom_kills_total"), oom_kill, jint(t, "memcg_reclaims_total"),
	       hits, victim, jint(p, "oom_kills_total"));
	ck_assert_int_eq(r->status, 128 + SIGKILL);
	ck_assert_msg(!strstr(r->out, "truth touched_bytes"), "the allocator was not killed");
	ck_assert_int_ge(oom_kill, 1);
	ck_assert_int_eq(jint(t, "oom_kills_total"), oom_kill);
	ck_assert_int_eq(jint(p, "oom_kills_total"), 1);	/* mark_victim of that pid */
	ck_assert_int_eq(jint(p, "exit_signal"), SIGKILL);
	ck_assert_msg(json_is_null(json_object_get(p, "exit_code")), "exit_code of a killed process");
	ck_assert_msg(json_is_true(json_object_get(p, "oom_killed")), "the victim is marked");
	/* the kernel hit the limit, so it reclaimed in the cgroup before the OOM */
	ck_assert_int_ge(hits, 1);
	ck_assert_int_ge(jint(t, "memcg_reclaims_total"), 1);
	ck_assert_int_ge(jint(t, "memcg_reclaims_total"), jint(p, "memcg_reclaims_total"));
	ck_assert_msg(strstr(r->out, "OOM kill") && strstr(r->out, "memacct-keep-"),
		      "OOM note names the cgroup: %s", r->out);
	snprintf(want, sizeof(want), "OOM-killed: pid %lld (oom)", victim);
	ck_assert_msg(strstr(r->out, want), "OOM note names the victim (%s): %s", want, r->out);
	rep = json_incref(r->report);	/* keeps dir valid */
	ck_assert_int_eq(rmdir(dir), 0);
	result_free(r);

	/* the table's summary line says it too, not only stderr */
	r = run_cmd("%s run --keep-cgroup --memory-max 64M -- %s/oom 128 2>/dev/null", memacct,
		    workloads);
	line_of(r->out, "memacct run: cgroup /", line, sizeof(line));
	/* the header's path is below the hierarchy's root (run's cgroup is below ours) */
	ck_assert_msg(sscanf(line, "memacct run: cgroup /%255s", rel) == 1, "header: %s", r->out);
	snprintf(path, sizeof(path), "%s/%s", cgroot, rel);
	cg_oom_truth(path, &oom_kill, &hits);
	ck_assert_int_eq(rmdir(path), 0);
	json_decref(rep);
	line_of(r->out, "faults ", line, sizeof(line));
	printf("    %s (kernel: oom_kill %lld)\n", line, oom_kill);
	ck_assert_int_eq(r->status, 128 + SIGKILL);
	ck_assert_int_ge(oom_kill, 1);
	snprintf(want, sizeof(want), "OOM kills %lld,", oom_kill);
	ck_assert_msg(strstr(line, want), "table: '%s' in '%s'", want, line);
	ck_assert_msg(strstr(line, "memcg reclaims ") && !strstr(line, "memcg reclaims 0,"),
		      "table shows the reclaim: %s", line);
	result_free(r);

	r = run_cmd("%s run --memory-max 4x -- true 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "'4x'"), "names the bad token: %s", r->out);
	result_free(r);
}
END_TEST

/*
 * run of a command that cannot start: the shell's status for it (127 not
 * found, 126 not executable), no process row (the vfork child that shared
 * memacct's memory was reported as "memacct"), the reason in the JSON
 * report; as text, no report, the reason on stderr.
 */
static void failed_exec(const char *cmd, int want_errno)
{
	struct result *sh = run_cmd("sh -c '%s' 2>/dev/null", cmd);
	struct result *r = run_cmd("%s -j run -- %s", memacct, cmd);
	json_t *e;

	ck_assert_msg(r->report, "no JSON report: %s", r->out);
	e = json_object_get(r->report, "exec_error");
	printf("  run -- %s: exit %d (sh: %d), %zu process rows, exec_error %s\n", cmd, r->status,
	       sh->status, json_array_size(json_object_get(r->report, "processes")),
	       json_string_value(json_object_get(e, "message")));
	ck_assert_int_eq(r->status, sh->status);
	ck_assert_int_eq(jint(r->report, "exit_status"), sh->status);
	ck_assert_int_eq(json_array_size(json_object_get(r->report, "processes")), 0);
	ck_assert_int_eq(jint(e, "errno"), want_errno);
	ck_assert_str_eq(json_string_value(json_object_get(e, "command")), cmd);
	result_free(r);

	/* text: no report at all (it would be the empty cgroup's), the reason
	 * on stderr (issue #26) */
	r = run_cmd("%s run -- %s 2>/dev/null", memacct, cmd);
	ck_assert_int_eq(r->status, sh->status);
	ck_assert_msg(!r->out[0], "a report for a CMD that did not start: %s", r->out);
	result_free(r);
	r = run_cmd("%s run -- %s 2>&1 >/dev/null", memacct, cmd);
	ck_assert_msg(strstr(r->out, "cannot run '") && strstr(r->out, cmd),
		      "stderr names CMD: %s", r->out);
	result_free(r);
	result_free(sh);
}

START_TEST(test_run_exec_failure)
{
	char noexec[64];
	FILE *f;

	failed_exec("/nonexistent/memacct-no-such-command", ENOENT);
	/* exists, no x bit at all: EACCES even for root */
	snprintf(noexec, sizeof(noexec), "/tmp/memacct-noexec-%d", getpid());
	f = fopen(noexec, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	chmod(noexec, 0644);
	failed_exec(noexec, EACCES);
	unlink(noexec);
}
END_TEST

static void read_trim(const char *file, char *buf, size_t len)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* start attach in the background; wait until the limit is written */
static pid_t attach_bg(const char *high_file, const char *want)
{
	char val[64];
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", 1);

		dup2(fd, 1);
		execl(memacct, "memacct", "attach", "--cgroup", cg, "--memory-high", "100M",
		      "--interval", "10s", NULL);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) {	/* 30 s: loading BPF on a busy machine */
		read_trim(high_file, val, sizeof(val));
		if (!strcmp(val, want))
			break;
		usleep(50000);
	}
	ck_assert_str_eq(val, want);
	usleep(500000);
	return pid;
}

START_TEST(test_attach_memory_high_restore)
{
	const char *file = cgversion == 1 ? "memory.soft_limit_in_bytes" : "memory.high";
	char old[64], now[64], state[128];
	struct stat stb;
	struct result *r;
	pid_t pid;
	int st;

	make_cg();
	read_trim(file, old, sizeof(old));
	/* SIGINT: attach restores before exiting */
	pid = attach_bg(file, "104857600");
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	read_trim(file, now, sizeof(now));
	printf("  attach --memory-high 100M, SIGINT: %s -> 104857600 -> %s\n", old, now);
	ck_assert_str_eq(now, old);

	/* SIGKILL: the state file stays, the next memacct start restores */
	pid = attach_bg(file, "104857600");
	stat(cg, &stb);
	snprintf(state, sizeof(state), "/run/memacct/limits-%llu.state",
		 (unsigned long long)stb.st_ino);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	read_trim(file, now, sizeof(now));
	ck_assert_str_eq(now, "104857600");
	ck_assert_msg(access(state, F_OK) == 0, "state file %s kept after SIGKILL", state);
	r = run_cmd("%s attach --cgroup %s --duration 500ms >/dev/null", memacct, cg);
	result_free(r);
	read_trim(file, now, sizeof(now));
	printf("  attach --memory-high 100M, SIGKILL, next start: %s\n", now);
	ck_assert_str_eq(now, old);
	ck_assert_msg(access(state, F_OK) != 0, "state file %s removed", state);
	remove_cg();
}
END_TEST

START_TEST(test_attach_refuses_below_usage)
{
	char old[64], now[64];
	struct result *r;
	int pid;

	make_cg();
	read_trim(cgversion == 1 ? "memory.limit_in_bytes" : "memory.max", old, sizeof(old));
	pid = start_in_cg("", "mlock_steps mlock 32 30");
	r = run_cmd("%s attach --cgroup %s --memory-max 8M --duration 1s 2>&1", memacct, cg);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "OOM") && strstr(r->out, "--force"),
		      "explains what would happen: %s", r->out);
	result_free(r);
	read_trim(cgversion == 1 ? "memory.limit_in_bytes" : "memory.max", now, sizeof(now));
	ck_assert_str_eq(now, old);
	stop_pid(pid);
	remove_cg();
}
END_TEST

/*
 * audit without --cgroup walks every memory cgroup that has processes: it
 * stopped at 64 without a word. 70 cgroups of ours, one sleeping process
 * each: all 70 are audited.
 */
START_TEST(test_audit_all_cgroups_unbounded)
{
	char path[400];
	struct result *r;
	json_t *c;
	size_t i, ours = 0, all;
	int pids[70];

	make_cg();
	for (int k = 0; k < 70; k++) {
		snprintf(path, sizeof(path), "%s/c%d", cg, k);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		pids[k] = fork();
		if (pids[k] == 0) {
			FILE *f;

			snprintf(path, sizeof(path), "%s/c%d/cgroup.procs", cg, k);
			f = fopen(path, "w");
			if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
				_exit(126);
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(127);
		}
	}
	/* each child in its cgroup before the audit (a fixed 0.3 s found 62 of
	 * the 70 there once, under load) */
	for (int k = 0; k < 70; k++) {
		char *procs = NULL;

		snprintf(path, sizeof(path), "%s/c%d/cgroup.procs", cg, k);
		for (int t = 0; t < 500; t++) {
			free(procs);
			procs = slurp(path);
			if (procs && procs[0])
				break;
			usleep(20000);
		}
		ck_assert_msg(procs && procs[0], "child %d not in %s after 10 s", k, path);
		free(procs);
	}
	r = run_cmd("%s -j audit", memacct);
	all = json_array_size(json_object_get(r->report, "cgroups"));
	json_array_foreach(json_object_get(r->report, "cgroups"), i, c)
		if (!strncmp(json_string_value(json_object_get(c, "path")), cg, strlen(cg)))
			ours++;
	for (int k = 0; k < 70; k++) {
		kill(pids[k], SIGKILL);
		waitpid(pids[k], NULL, 0);
		snprintf(path, sizeof(path), "%s/c%d", cg, k);
		for (int t = 0; t < 100 && rmdir(path) && errno == EBUSY; t++)
			usleep(20000);
	}
	printf("  audit without --cgroup: %zu cgroups with processes, %zu of our 70\n", all, ours);
	ck_assert_int_eq(r->status, 0);
	ck_assert_int_eq(ours, 70);
	result_free(r);
	remove_cg();
}
END_TEST

/* after a failed assertion too: the processes a test started in its cgroup
 * (ours: make_cg() made it), then the cgroup */
static void teardown(void)
{
	char path[300];
	FILE *f;
	int pid;

	if (!cg[0])
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "r");
	while (f && fscanf(f, "%d", &pid) == 1)
		stop_pid(pid);
	if (f)
		fclose(f);
	remove_cg();
}

Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_swept("root", 120);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_audit_mlock_cap);
	tcase_add_test(tc, test_audit_io_uring_cap);
	tcase_add_test(tc, test_audit_watch_mlock_spike);
	tcase_add_test(tc, test_audit_watch_io_uring_spike);
	tcase_add_test(tc, test_audit_usage_errors);
	tcase_add_test(tc, test_audit_enforce_rlimit);
	tcase_add_test(tc, test_audit_all_cgroups_unbounded);
	tcase_add_test(tc, test_run_memory_max_oom);
	tcase_add_test(tc, test_run_exec_failure);
	tcase_add_test(tc, test_attach_memory_high_restore);
	tcase_add_test(tc, test_attach_refuses_below_usage);
	suite_add_tcase(s, tc);
	return s;
}
