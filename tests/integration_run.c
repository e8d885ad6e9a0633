// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_run.c - `memacct run` under signals (reliability audit
 * 2026-11 D2, D6): a stop signal never reaches a PID recycled after CMD
 * was reaped, a daemonized descendant does not keep run alive, and no
 * memacct-run-PID cgroup outlives run (SIGKILL, an early SIGINT).
 * memacct is exec'd directly (a background sh would ignore SIGINT).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "cgroup.h"
#include "integration.h"
#include "util.h"


static pid_t run_pid, victim, cg_pid;	/* cg_pid: memacct-run-PID to remove */

/* memacct ARGV... with stdout and stderr to @out; dies with the test runner */
static pid_t spawn_memacct(const char *out, char *const argv[])
{
	pid_t p = fork();

	if (p == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(memacct, argv);
		_exit(127);
	}
	cg_pid = p;
	return p;
}

/* whether @path contains @needle */
static bool file_has(const char *path, const char *needle)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* waitpid() for at most @ms; true when @p was reaped (status in *st) */
static bool wait_ms(pid_t p, int *st, long ms)
{
	for (long t = 0; t <= ms; t += 20) {
		if (waitpid(p, st, WNOHANG) == p)
			return true;
		sleep_ms(20);
	}
	return false;
}

static int count_procs(const char *cg)
{
	char path[PATH_MAX + 16], line[32];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* Kill what a failed test left in the cgroup of run @pid, then remove it. */
static void remove_run_cgroup(pid_t pid)
{
	char cg[PATH_MAX], path[PATH_MAX + 16], line[32];
	FILE *f;

	if (run_cgroup_find(pid, cg, sizeof(cg)))
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	for (int i = 0; i < 50 && (f = fopen(path, "r")); i++) {
		int n = 0;

		while (fgets(line, sizeof(line), f)) {
			int p = atoi(line);

			if (p > 1)
				kill(p, SIGKILL);
			n++;
		}
		fclose(f);
		if (!n && !rmdir(cg))
			return;
		sleep_ms(100);
	}
}

static void teardown(void)
{
	if (victim > 0) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	if (run_pid > 0) {
		kill(run_pid, SIGKILL);
		waitpid(run_pid, NULL, 0);
	}
	if (cg_pid > 0)
		remove_run_cgroup(cg_pid);
	{
		char cg[CGROOT_MAX + 64];

		snprintf(cg, sizeof(cg), "%s/memacct-dur-%d", cgroot, (int)getpid());
		rmdir(cg);
	}
	victim = run_pid = cg_pid = 0;
}

/* A child of ours whose PID is @want (ns_last_pid), or 0 after 200 tries. */
static pid_t fork_with_pid(pid_t want)
{
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t p;

		if (!f)
			return 0;
		fprintf(f, "%d", (int)want - 1);
		if (fclose(f))
			return 0;
		p = fork();
		if (p < 0)
			return 0;
		if (p == 0) {	/* libcheck's handlers must not run in it: exec */
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(127);
		}
		if (p == want)
			return p;
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	return 0;
}

/*
 * D2: CMD leaves a daemon and exits; CMD is reaped and its PID given to an
 * unrelated process; SIGTERM to run must spare that process, end the daemon
 * (it is in run's cgroup) and end run.
 */
START_TEST(test_run_stop_after_cmd)
{
	char pidfile[] = "/tmp/memacct-run-cmdpid-XXXXXX", out[] = "/tmp/memacct-run-out-XXXXXX";
	char script[256], cg[PATH_MAX];
	pid_t cmd = 0;
	int st = 0, fd;

	fd = mkstemp(pidfile);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(script, sizeof(script),
		 "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $$ > %s; exit 0", pidfile);
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "run", "--", "/bin/sh", "-c",
						      script, NULL });
	ck_assert(run_pid > 0);
	/* CMD has written its PID and has been reaped by run */
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(pidfile, "r");

		if (f) {
			if (fscanf(f, "%d", &cmd) != 1)
				cmd = 0;
			fclose(f);
		}
		if (cmd > 0 && kill(cmd, 0) && errno == ESRCH)
			break;
		sleep_ms(20);
	}
	ck_assert_msg(cmd > 0 && kill(cmd, 0) && errno == ESRCH, "CMD %d not reaped", (int)cmd);
	ck_assert_msg(!run_cgroup_find(run_pid, cg, sizeof(cg)), "no cgroup of run %d",
		      (int)run_pid);
	victim = fork_with_pid(cmd);
	if (!victim)
		printf("  note: PID %d could not be recycled (busy host): the victim half is "
		       "not tested this time\n", (int)cmd);
	printf("  run %d, CMD %d, recycled-PID process %d\n", (int)run_pid, (int)cmd, (int)victim);
	fflush(stdout);
	ck_assert_int_eq(kill(run_pid, SIGTERM), 0);
	ck_assert_msg(wait_ms(run_pid, &st, 10000), "run still running 10 s after SIGTERM");
	run_pid = 0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run status %#x", st);
	if (victim) {
		ck_assert_msg(waitpid(victim, &st, WNOHANG) == 0,
			      "the process given CMD's old PID %d was signalled", (int)cmd);
		printf("  %-40s alive (PID %d, CMD's old PID)\n", "recycled-PID process", (int)cmd);
	}
	ck_assert_msg(access(cg, F_OK) != 0, "%s left behind", cg);
	unlink(pidfile);
	unlink(out);
}
END_TEST

/* D6: run killed with SIGKILL: CMD does not run on in the cgroup; the next run removes it. */
START_TEST(test_run_sigkill_cleaned)
{
	char out[] = "/tmp/memacct-run-out-XXXXXX", cg[PATH_MAX], *text;
	struct result *r;
	int fd, n = -1;
	pid_t killed;

	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "run", "--memory-max", "200M",
						      "--", "sleep", "60", NULL });
	ck_assert(run_pid > 0);
	for (int i = 0; i < 500 && (run_cgroup_find(run_pid, cg, sizeof(cg)) ||
				    (n = count_procs(cg)) < 1); i++)
		sleep_ms(20);
	ck_assert_msg(n == 1, "CMD never appeared in %s", cg);
	ck_assert_int_eq(kill(run_pid, SIGKILL), 0);
	waitpid(run_pid, NULL, 0);
	killed = run_pid;
	for (int i = 0; i < 100 && (n = count_procs(cg)) > 0; i++)
		sleep_ms(20);
	ck_assert_msg(n == 0, "%d process(es) still running in %s after run was killed", n, cg);
	r = run_cmd("%s run -- true 2>&1", memacct);
	text = r->out;
	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(access(cg, F_OK) != 0, "%s not removed by the next run", cg);
	ck_assert_msg(strstr(text, cg), "the next run does not say it removed %s: %s", cg, text);
	result_free(r);
	run_pid = 0;
	(void)killed;
	unlink(out);
}
END_TEST

/* D6: SIGINT while run loads its BPF side: a clean exit, no cgroup left. */
START_TEST(test_run_early_sigint)
{
	char out[] = "/tmp/memacct-run-out-XXXXXX", cg[PATH_MAX];
	int fd, st = 0, found = -1;

	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "run", "--", "true", NULL });
	ck_assert(run_pid > 0);
	for (int i = 0; i < 5000 && (found = run_cgroup_find(run_pid, cg, sizeof(cg))); i++)
		sleep_ms(1);
	ck_assert_msg(found == 0, "the cgroup of run %d never created", (int)run_pid);
	ck_assert_int_eq(kill(run_pid, SIGINT), 0);
	ck_assert_msg(wait_ms(run_pid, &st, 10000), "run still running 10 s after SIGINT");
	run_pid = 0;
	ck_assert_msg(WIFEXITED(st), "run killed by signal %d (status %#x)",
		      WIFSIGNALED(st) ? WTERMSIG(st) : 0, st);
	ck_assert_msg(access(cg, F_OK) != 0, "%s left behind", cg);
	unlink(out);
}
END_TEST

/* CPU seconds (user + system) used by @pid so far, -1 if unreadable. */
static double cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

/*
 * D5: durations near 2^64 ns mean "never", not a deadline wrapped into the
 * past: attach --interval prints no interval report in 2 s, explain --watch
 * and audit --watch keep watching, idle.
 */
START_TEST(test_huge_durations)
{
	char out[] = "/tmp/memacct-dur-out-XXXXXX", cg[CGROOT_MAX + 64];
	struct result *r;
	int fd, st, lines = 0;
	double cpu, cpu0;

	snprintf(cg, sizeof(cg), "%s/memacct-dur-%d", cgroot, (int)getpid());
	rmdir(cg);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	r = run_cmd("%s -j attach --cgroup %s --interval 18446744073s --duration 2s", memacct, cg);
	for (char *p = r->out; (p = strchr(p, '\n')); p++)
		lines++;
	ck_assert_msg(r->status == 0 && lines == 1,
		      "attach --interval 18446744073s --duration 2s: rc %d, %d lines", r->status, lines);
	result_free(r);
	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* explain --watch: still watching after 2 s, and idle */
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "explain", "--cgroup", cg,
						      "--watch", "18446744073s", NULL });
	ck_assert(run_pid > 0);
	/* from its "watching" line on (the BPF load before it takes seconds of
	 * CPU where the verifier runs slowly: qemu TCG guests) */
	for (int i = 0; i < 600 && !file_has(out, "watching"); i++)
		sleep_ms(100);
	ck_assert_msg(file_has(out, "watching"), "explain --watch never started watching");
	cpu0 = cpu_s(run_pid);
	sleep_ms(2500);
	ck_assert_msg(waitpid(run_pid, &st, WNOHANG) == 0, "explain --watch 18446744073s ended at once");
	cpu = cpu_s(run_pid) - cpu0;
	printf("  %-40s %.2f s CPU in 2.5 s\n", "explain --watch 18446744073s", cpu);
	ck_assert_msg(cpu >= 0 && cpu < 1.0, "explain --watch used %.2f s of CPU in 2.5 s", cpu);
	kill(run_pid, SIGINT);
	ck_assert(wait_ms(run_pid, &st, 10000));
	/* audit --watch: idle between re-reads */
	ck_assert(truncate(out, 0) == 0);	/* explain's lines are not audit's */
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "audit", "--cgroup", cg,
						      "--watch", "18446744073s", NULL });
	ck_assert(run_pid > 0);
	/* from its line saying how it watches on (BPF events, or /proc polling
	 * without them): the BPF load before it is seconds of CPU under qemu
	 * TCG, more than 2.5 s on a slow CI host */
	for (int i = 0; i < 600 && !file_has(out, " every "); i++)
		sleep_ms(100);
	ck_assert_msg(file_has(out, " every "), "audit --watch never said how it watches");
	cpu0 = cpu_s(run_pid);
	sleep_ms(2500);
	ck_assert_msg(waitpid(run_pid, &st, WNOHANG) == 0, "audit --watch ended: status %#x", st);
	cpu = cpu_s(run_pid) - cpu0;
	printf("  %-40s %.2f s CPU in 2.5 s\n", "audit --watch 18446744073s", cpu);
	ck_assert_msg(cpu >= 0 && cpu < 1.0, "audit --watch used %.2f s of CPU in 2.5 s", cpu);
	kill(run_pid, SIGTERM);
	ck_assert(wait_ms(run_pid, &st, 10000));
	run_pid = 0;
	rmdir(cg);
	unlink(out);
}
END_TEST

/* D9: attach --pid of a kernel thread or of a zombie is refused (rc 2), not the root cgroup. */
START_TEST(test_attach_pid_without_mm)
{
	struct result *r;
	pid_t z;

	r = run_cmd("%s attach --pid 2 --duration 1s 2>&1", memacct);
	ck_assert_msg(r->status == 2 && strstr(r->out, "kernel thread"),
		      "attach --pid 2 (kthreadd): rc %d: %.300s", r->status, r->out);
	result_free(r);
	z = fork();
	if (z == 0)
		_exit(0);
	victim = z;	/* reaped by teardown */
	for (int i = 0; i < 100; i++) {
		char path[64], state = 0, buf[512], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)z);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			state = p[2];
		if (f)
			fclose(f);
		if (state == 'Z')
			break;
		sleep_ms(10);
	}
	r = run_cmd("%s attach --pid %d --duration 1s 2>&1", memacct, (int)z);
	ck_assert_msg(r->status == 2 && strstr(r->out, "zombie"),
		      "attach --pid <zombie>: rc %d: %.300s", r->status, r->out);
	result_free(r);
	r = run_cmd("%s attach --pid 4194303 --duration 1s 2>&1", memacct);
	ck_assert_msg(r->status == 2, "attach --pid <none>: rc %d", r->status);
	result_free(r);
}
END_TEST

/*
 * D8: 3,000 short-lived children: the report lists at most
 * 2 x 512 exited rows, the others are counted in "exited_folded", and no
 * child's copy-on-write is lost from the totals (16 pages each, truth).
 */
START_TEST(test_exited_rows_bounded)
{
	struct result *r = memacct_run("short_lived 3000 16");
	json_t *procs = json_object_get(r->report, "processes"), *p, *folded;
	long long parent = truth(r, "pid"), listed = 0, nfold, want, cow;
	size_t i;

	json_array_foreach(procs, i, p)
		if (jint(p, "ppid") == parent && json_is_true(json_object_get(p, "exited")))
			listed++;
	folded = json_object_get(r->report, "exited_folded");
	ck_assert_msg(folded, "no exited_folded with %lld children", truth(r, "children"));
	nfold = jint(folded, "count");
	printf("  %-40s %lld listed + %lld folded = %lld, truth %lld\n", "short-lived children",
	       listed, nfold, listed + nfold, truth(r, "children"));
	ck_assert_int_eq(listed + nfold, truth(r, "children"));
	ck_assert_msg(json_array_size(procs) <= 2 * 512 + 2, "%zu process rows",
		      json_array_size(procs));
	want = truth(r, "children") * truth(r, "per_child_touched_bytes");
	cow = jint(json_object_get(r->report, "totals"), "cow_copied_bytes");
	printf("  %-40s memacct %12lld  truth >= %9lld\n", "children cow_copied_bytes", cow, want);
	ck_assert_msg(cow >= want && cow < want * 2, "cow_copied_bytes %lld, truth %lld", cow,
		      want);
	ck_assert_int_eq(jint(r->report, "dropped_events"), 0);
	result_free(r);
}
END_TEST

/* The totals object of the last JSON line of @path, or NULL (new reference). */
static json_t *last_totals(const char *path, json_t **report)
{
	char line[1 << 16];
	json_t *last = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		json_t *j = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;

		if (j) {
			json_decref(last);
			last = j;
		}
	}
	fclose(f);
	*report = last;
	return last ? json_object_get(last, "totals") : NULL;
}

/* D15: the final summary of attach keeps the peaks of a cgroup removed meanwhile. */
START_TEST(test_attach_keeps_peaks_of_removed_cgroup)
{
	char out[] = "/tmp/memacct-peaks-XXXXXX", cg[CGROOT_MAX + 64], cgarg[CGROOT_MAX + 96];
	json_t *rep = NULL, *t;
	long long anon_peak_before, anon_peak_final;
	struct result *w;
	int fd, st;

	snprintf(cg, sizeof(cg), "%s/memacct-dur-%d", cgroot, (int)getpid());
	rmdir(cg);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cgarg, sizeof(cgarg), "memacct-dur-%d", (int)getpid());
	run_pid = spawn_memacct(out, (char *const[]){ "memacct", "-j", "attach", "--cgroup", cgarg,
						      "--interval", "300ms", NULL });
	for (int i = 0; i < 200 && !last_totals(out, &rep); i++) {
		json_decref(rep);
		rep = NULL;
		sleep_ms(50);
	}
	json_decref(rep);
	rep = NULL;
	w = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/mlock_steps mlock 16 1'", cg,
		    workloads);
	ck_assert_int_eq(w->status, 0);
	result_free(w);
	sleep_ms(700);	/* two more interval reports */
	t = last_totals(out, &rep);
	ck_assert_ptr_nonnull(t);
	anon_peak_before = jint(t, "anon_peak_bytes");
	json_decref(rep);
	ck_assert_msg(anon_peak_before >= 16 * (long long)MiB, "anon peak %lld with 16 MiB mlocked",
		      anon_peak_before);
	ck_assert_int_eq(rmdir(cg), 0);
	ck_assert_msg(wait_ms(run_pid, &st, 10000), "attach did not end when its cgroup went");
	run_pid = 0;
	t = last_totals(out, &rep);
	ck_assert_ptr_nonnull(t);
	anon_peak_final = jint(t, "anon_peak_bytes");
	printf("  %-40s interval %lld, final %lld\n", "anon_peak_bytes of a removed cgroup",
	       anon_peak_before, anon_peak_final);
	ck_assert_msg(json_is_true(json_object_get(rep, "final")), "last line is not the summary");
	ck_assert_int_ge(anon_peak_final, anon_peak_before);
	ck_assert_int_ge(jint(t, "rss_peak_bytes"), 16 * (long long)MiB);
	json_decref(rep);
	unlink(out);
}
END_TEST

/*
 * D12: a cgroup argument that cannot name a cgroup ("..", ".", "", a file,
 * a 5,000-byte name) is a usage error (2) in attach, audit and explain, as
 * README says; explain keeps 4 for a name that matches nothing (docs/explain.md).
 */
START_TEST(test_bad_cgroup_names_rc2)
{
	static char longname[5001];
	const char *names[] = { "..", ".", "''", "../..", longname };
	const char *cmds[] = { "attach --duration 1s --cgroup", "audit --cgroup", "explain --cgroup" };

	memset(longname, 'a', sizeof(longname) - 1);
	for (size_t c = 0; c < 3; c++)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			struct result *r;

			if (c == 2 && names[i] == longname)
				continue;	/* explain: no such cgroup is 4 (docs/explain.md) */
			r = run_cmd("%s %s %s 2>&1", memacct, cmds[c], names[i]);

			ck_assert_msg(r->status == 2, "%s %.20s: rc %d: %.200s", cmds[c], names[i],
				      r->status, r->out);
			result_free(r);
		}
}
END_TEST

/* ---- containment (issue 23 part 2, issue 7) -------------------------- */

/* the number after @key ("" for the file's first) in @cg/@file, or -1 */
static long long cg_file_num(const char *cg, const char *file, const char *key)
{
	char path[PATH_MAX + 32], line[128], fmt[64];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	snprintf(fmt, sizeof(fmt), "%s%s%%lld", key, *key ? " " : "");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * The kernel's OOM kill count of cgroup @cg: v1 memory.oom_control (kills
 * of its own tasks only), v2 memory.events (its subtree's). -1 unreadable.
 */
static long long kernel_oom_kills(const char *cg)
{
	return cg_file_num(cg, cgversion == 1 ? "memory.oom_control" : "memory.events",
			   "oom_kill");
}

/*
 * Whether the subtree of @cg reached @cg's own limit of @limit bytes: v1
 * memory.max_usage_in_bytes (memory.failcnt stays 0 on 6.18), v2
 * memory.events "max" (times the limit was hit).
 */
static bool kernel_limit_reached(const char *cg, long long limit)
{
	if (cgversion == 1)
		return cg_file_num(cg, "memory.max_usage_in_bytes", "") >= limit;
	return cg_file_num(cg, "memory.events", "max") >= 1;
}

/* rmdir @cg's memacct-* children (kept runs, a kept run's leaf), then @cg */
static int rmdir_run_tree(const char *cg)
{
	char pat[PATH_MAX + 16];
	glob_t g;

	snprintf(pat, sizeof(pat), "%s/memacct-*", cg);
	if (!glob(pat, GLOB_ONLYDIR, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			rmdir(g.gl_pathv[i]);
		globfree(&g);
	}
	return rmdir(cg);
}

static char contain_cg[PATH_MAX];	/* memacct-contain-RUNNER, removed by teardown */

static void contain_teardown(void)
{
	teardown();
	if (contain_cg[0]) {
		rmdir_run_tree(contain_cg);
		contain_cg[0] = '\0';
	}
}

/* cgroup.fs_path of a report (borrowed), or "" */
static const char *report_cg(json_t *rep)
{
	const char *p = json_string_value(json_object_get(json_object_get(rep, "cgroup"),
							  "fs_path"));

	return p ? p : "";
}

/*
 * --keep-cgroup: the cgroup stays, and the next run leaves it alone (issue
 * 41: the next run removed it as a dead run's, "removed ..., left by a
 * memacct run that is gone").
 */
START_TEST(test_run_kept_cgroup_stays)
{
	struct result *r = run_cmd("%s -j run --keep-cgroup -- true", memacct);
	char cg[PATH_MAX];

	ck_assert_msg(r->report, "no report: %s", r->out);
	snprintf(cg, sizeof(cg), "%s", report_cg(r->report));
	result_free(r);
	ck_assert_msg(strstr(cg, "/memacct-keep-"), "kept as %s", cg);
	ck_assert_msg(access(cg, F_OK) == 0, "%s not kept", cg);
	r = run_cmd("%s run -- true 2>&1", memacct);
	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(access(cg, F_OK) == 0, "the next run removed the kept %s: %s", cg, r->out);
	printf("  %-40s %s kept across the next run\n", "run --keep-cgroup", cg);
	result_free(r);
	ck_assert_int_eq(rmdir(cg), 0);
}
END_TEST

/* the first line of @text that parses as a JSON object (new reference), or NULL */
static json_t *first_report(const char *text)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		json_t *j = *l == '{' ? json_loads(l, JSON_DISABLE_EOF_CHECK, NULL) : NULL;

		if (j)
			return j;
	}
	return NULL;
}

/* @path is a cgroup strictly below @dir that a run made (a kept one's
 * name starts with "memacct-keep-") */
static bool run_cgroup_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	const char *base = strrchr(path, '/');

	return !strncmp(path, dir, n) && path[n] == '/' && base &&
	       (!strncmp(base + 1, "memacct-run-", 12) || !strncmp(base + 1, "memacct-keep-", 13));
}

/* the memory cgroup (absolute) that /proc/PID/cgroup text in file @f names */
static bool cgroup_from_file(const char *f, char *abs, size_t len)
{
	char text[4096], rel[PATH_MAX];
	size_t n;
	FILE *fp = fopen(f, "r");

	if (!fp)
		return false;
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	if (parse_proc_cgroup(text, cgversion, rel, sizeof(rel)))
		return false;
	return snprintf(abs, len, "%s%s", cgroot, rel) < (int)len;
}

/*
 * Issue 23, 2: `run --memory-max 64M -- sh -c "memacct run -- W; W"` where W
 * needs 128 MiB: the nested run was not OOM-killed (its cgroup was made at
 * the root), the direct W was. Now the nested run's cgroup is below the
 * outer one and W is OOM-killed there too (v1). On v2 the shell beside the
 * inner memacct keeps the memory controller from the outer cgroup's
 * children, and the limit keeps run from going above: exit 3, nothing
 * escapes. Run as the outer CMD itself (alone in the outer cgroup), the
 * inner run is OOM-killed on v1 and v2 (a leaf of its own on v2). Truth:
 * the exit statuses and the kernel's oom_kill counts of the inner cgroup
 * (kept) and of the outer one.
 */
START_TEST(test_run_nested_oom)
{
	char inner[] = "/tmp/memacct-nest-XXXXXX", outer[PATH_MAX], *text = NULL;
	json_t *irep = NULL;
	struct result *r;
	long long kills, ikills = -1;
	int fd;

	if (getenv("MEMACCT_SANITIZE")) {	/* make check SANITIZE=1 */
		SKIP_TEST("memacct's own memory under ASan (shadow, quarantine) does not fit the "
			  "limit it runs under here; make check runs it");
		return;
	}
	fd = mkstemp(inner);
	ck_assert_int_ge(fd, 0);
	close(fd);
	r = run_cmd("%s -j run --keep-cgroup --memory-max 64M -- sh -c '"
		    "%s -j run --keep-cgroup -- %s/oom 128 > %s 2>&1; echo \"truth inner_rc $?\"; "
		    "%s/oom 128 > /dev/null 2>&1; echo \"truth direct_rc $?\"' 2>/dev/null",
		    memacct, memacct, workloads, inner, workloads);
	ck_assert_msg(r->report, "no report of the outer run: %.500s", r->out);
	snprintf(outer, sizeof(outer), "%s", report_cg(r->report));
	kills = kernel_oom_kills(outer);
	ck_assert_int_ge(read_file(inner, &text, 1 << 20), 0);
	irep = first_report(text);
	if (irep)
		ikills = kernel_oom_kills(report_cg(irep));
	printf("  %-40s inner rc %lld, direct rc %lld, kernel oom_kill inner %lld, outer %lld\n",
	       "run --memory-max 64M -- sh -c", truth(r, "inner_rc"), truth(r, "direct_rc"),
	       ikills, kills);
	ck_assert_int_eq(r->status, 0);
	ck_assert_int_eq(truth(r, "direct_rc"), 137);
	if (cgversion == 1) {
		ck_assert_msg(truth(r, "inner_rc") == 137, "the nested run escaped the limit: "
			      "rc %lld: %.300s", truth(r, "inner_rc"), text);
		ck_assert_msg(irep && run_cgroup_below(report_cg(irep), outer),
			      "inner cgroup %s not below %s", irep ? report_cg(irep) : "?", outer);
		ck_assert_int_ge(ikills, 1);
		ck_assert_int_ge(kills, 1);	/* v1: the direct one's, in the outer cgroup */
	} else {
		ck_assert_msg(truth(r, "inner_rc") == 3 && strstr(text, "no place for CMD's cgroup"),
			      "v2, a shell beside the nested run: rc %lld: %.300s",
			      truth(r, "inner_rc"), text);
		ck_assert_int_ge(kills, 1);
	}
	free(text);
	json_decref(irep);
	result_free(r);
	ck_assert_int_eq(rmdir_run_tree(outer), 0);

	/* the nested run as the outer CMD: alone in the outer cgroup */
	r = run_cmd("%s -j run --keep-cgroup --memory-max 64M -- %s -j run --keep-cgroup -- "
		    "%s/oom 128 2>/dev/null", memacct, memacct, workloads);
	ck_assert_msg(r->report, "no report of the outer run: %.500s", r->out);
	snprintf(outer, sizeof(outer), "%s", report_cg(r->report));
	irep = first_report(r->out);
	ikills = irep ? kernel_oom_kills(report_cg(irep)) : -1;
	printf("  %-40s rc %d, inner cgroup %s, kernel oom_kill %lld\n",
	       "run --memory-max 64M -- memacct run", r->status, irep ? report_cg(irep) : "?",
	       ikills);
	ck_assert_msg(r->status == 137, "the nested run escaped the limit: rc %d", r->status);
	ck_assert_msg(irep && irep != r->report && run_cgroup_below(report_cg(irep), outer),
		      "inner cgroup %s not below %s", irep ? report_cg(irep) : "?", outer);
	ck_assert_int_ge(ikills, 1);
	ck_assert(kernel_limit_reached(outer, 64 * MiB));
	json_decref(irep);
	result_free(r);
	ck_assert_int_eq(rmdir_run_tree(outer), 0);
	unlink(inner);
}
END_TEST

/*
 * Issue 23, 2: the outer run's report showed 2,603 CoW pages where its
 * workload copied ~5,194 (the nested run's half was at the root). Now the
 * outer totals hold the nested run's copies: cow_fork's truth.
 */
START_TEST(test_run_nested_cow)
{
	struct result *r = run_cmd("%s -j run -- %s -j run -- %s/cow_fork 100 4 2>/dev/null",
				   memacct, memacct, workloads);
	json_t *irep = first_report(r->out);
	long long want = truth(r, "child_cow_bytes");

	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(irep && irep != r->report, "no report of the nested run");
	ck_assert_msg(run_cgroup_below(report_cg(irep), report_cg(r->report)), "%s not below %s",
		      report_cg(irep), report_cg(r->report));
	assert_near("nested run cow_copied_bytes",
		    jint(json_object_get(irep, "totals"), "cow_copied_bytes"), want);
	assert_near("outer run cow_copied_bytes",
		    jint(json_object_get(r->report, "totals"), "cow_copied_bytes"), want);
	json_decref(irep);
	result_free(r);
}
END_TEST

/*
 * run takes itself out of the OOM killer's choice once CMD runs (the
 * kernel once killed memacct right after CMD under the limit they shared:
 * test_run_below_caller in the v2 guest), and CMD and what it forks keep
 * their own oom_score_adj. Without CAP_SYS_RESOURCE (some containers) the
 * kernel refuses -1000: memacct stays at its own value and says so at -v.
 */
START_TEST(test_run_oom_score_adj)
{
	struct result *r = run_cmd("%s -v run -- sh -c 'sleep 0.5; echo \"truth cmd $(cat "
				   "/proc/self/oom_score_adj)\"; echo \"truth run $(cat "
				   "/proc/$PPID/oom_score_adj)\"; sh -c \"echo truth grandchild "
				   "\\$(cat /proc/self/oom_score_adj)\"' 2>&1", memacct);
	char *st = NULL, *cap;
	unsigned long long eff = 0;
	long long own;
	bool can;

	ck_assert_int_ge(read_file("/proc/self/status", &st, 1 << 16), 0);
	cap = strstr(st, "CapEff:");
	ck_assert_ptr_nonnull(cap);
	eff = strtoull(cap + strlen("CapEff:"), NULL, 16);
	free(st);
	can = eff & (1ULL << 24);	/* CAP_SYS_RESOURCE */
	ck_assert_int_ge(read_file("/proc/self/oom_score_adj", &st, 64), 0);
	own = atoll(st);	/* what memacct, CMD and its child inherit */
	free(st);
	printf("  oom_score_adj: CMD %lld, its child %lld, memacct run %lld, this test %lld "
	       "(CAP_SYS_RESOURCE: %s)\n", truth(r, "cmd"), truth(r, "grandchild"),
	       truth(r, "run"), own, can ? "yes" : "no");
	ck_assert_int_eq(r->status, 0);
	ck_assert_int_eq(truth(r, "cmd"), own);
	ck_assert_int_eq(truth(r, "grandchild"), own);
	if (can)
		ck_assert_int_eq(truth(r, "run"), -1000);
	else
		ck_assert_msg(truth(r, "run") == own && strstr(r->out, "oom_score_adj -1000: "),
			      "run %lld without CAP_SYS_RESOURCE, and no word at -v:\n%.2000s",
			      truth(r, "run"), r->out);
	result_free(r);
}
END_TEST

/*
 * Issue 23, 2: run from a limited cgroup of ours makes its cgroup below it,
 * and the limit binds CMD (OOM kill, as the kernel counts it in our
 * cgroup). memacct alone there (exec):
 * below it on v1 and v2. A shell beside it: below it on v1; on v2 exit 3.
 * (That the outer accounting includes CMD: test_run_nested_cow.)
 */
START_TEST(test_run_below_caller)
{
	char t[PATH_MAX], f[PATH_MAX + 32], script[PATH_MAX + 64], cmdcg[PATH_MAX];
	char pat[PATH_MAX + 32], *sc = NULL;
	struct result *r;
	glob_t g;
	FILE *fp;

	if (getenv("MEMACCT_SANITIZE")) {	/* make check SANITIZE=1 */
		SKIP_TEST("memacct's own memory under ASan (shadow, quarantine) does not fit the "
			  "limit it runs under here; make check runs it");
		return;
	}
	snprintf(t, sizeof(t), "%s/memacct-contain-%d", cgroot, (int)getpid());
	rmdir(t);
	ck_assert_int_eq(mkdir(t, 0755), 0);
	snprintf(contain_cg, sizeof(contain_cg), "%s", t);
	snprintf(f, sizeof(f), "%s/%s", t, cgversion == 1 ? "memory.limit_in_bytes" :
		 "memory.max");
	fp = fopen(f, "w");
	ck_assert_msg(fp && fprintf(fp, "100663296\n") > 0 && !fclose(fp), "limit on %s", t);
	/* no swap to escape to (absent without swap accounting) */
	snprintf(f, sizeof(f), "%s/%s", t, cgversion == 1 ? "memory.memsw.limit_in_bytes" :
		 "memory.swap.max");
	write_file(f, cgversion == 1 ? "100663296" : "0");
	snprintf(f, sizeof(f), "/tmp/memacct-contain-%d.cg", (int)getpid());
	snprintf(script, sizeof(script), "/tmp/memacct-contain-%d.sh", (int)getpid());
	fp = fopen(script, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "cat /proc/self/cgroup > %s\nexec \"$@\"\n", f);
	fclose(fp);

	/* memacct alone in the cgroup */
	unlink(f);
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s -j run -- sh %s %s/oom 192' "
		    "2>&1", t, memacct, script, workloads);
	ck_assert_msg(cgroup_from_file(f, cmdcg, sizeof(cmdcg)), "CMD did not run: %.500s",
		      r->out);
	printf("  %-40s rc %d, CMD in %s, limit reached %d, oom_kill %lld\n",
	       "exec run in a 96M cgroup", r->status, cmdcg,
	       kernel_limit_reached(t, 96 * MiB), kernel_oom_kills(t));
	ck_assert_msg(run_cgroup_below(cmdcg, t), "CMD ran in %s, not below %s", cmdcg, t);
	ck_assert_msg(r->status == 137, "CMD was not OOM-killed under %s: rc %d", t, r->status);
	ck_assert(kernel_limit_reached(t, 96 * MiB));
	if (cgversion == 2)
		ck_assert_int_ge(kernel_oom_kills(t), 1);
	result_free(r);
	/* nothing of run's left in it; v2: the controller off again */
	snprintf(pat, sizeof(pat), "%s/memacct-*", t);
	ck_assert_msg(glob(pat, GLOB_ONLYDIR, NULL, &g) == GLOB_NOMATCH, "%s left",
		      g.gl_pathc ? g.gl_pathv[0] : "?");
	if (cgversion == 2) {
		snprintf(pat, sizeof(pat), "%s/cgroup.subtree_control", t);
		ck_assert_int_ge(read_file(pat, &sc, 4096), 0);
		ck_assert_msg(!strstr(sc, "memory"), "%s: %s", pat, sc);
		free(sc);
	}

	/* a shell beside memacct */
	unlink(f);
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && %s -j run -- sh %s true; "
		    "echo \"truth rc $?\"' 2>&1", t, memacct, script);
	if (cgversion == 1) {
		ck_assert_msg(truth(r, "rc") == 0 && cgroup_from_file(f, cmdcg, sizeof(cmdcg)),
			      "rc %lld: %.500s", truth(r, "rc"), r->out);
		printf("  %-40s rc 0, CMD in %s\n", "run beside a shell", cmdcg);
		ck_assert_msg(run_cgroup_below(cmdcg, t), "CMD ran in %s, not below %s", cmdcg, t);
	} else {
		ck_assert_msg(truth(r, "rc") == 3 && access(f, F_OK) &&
			      strstr(r->out, "no place for CMD's cgroup"),
			      "v2, a shell beside run in a limited cgroup: rc %lld: %.500s",
			      truth(r, "rc"), r->out);
		printf("  %-40s rc 3 (no place below %s)\n", "run beside a shell", t);
	}
	result_free(r);
	unlink(f);
	unlink(script);
	for (int i = 0; i < 50 && rmdir(t); i++)
		sleep_ms(100);
	ck_assert_msg(access(t, F_OK), "%s not removed", t);
	contain_cg[0] = '\0';
}
END_TEST

/*
 * Issue 7: two runs that are PID 1 in PID namespaces of their own run side
 * by side (both wanted memacct-run-1: the second failed, rc 4), and a run
 * on the host meanwhile does not call them "left by a run that was killed".
 */
START_TEST(test_run_pid_namespaces)
{
	char d[64], f[80], a[PATH_MAX], b[PATH_MAX];
	struct result *r;

	if (system("unshare -pf --mount-proc true > /dev/null 2>&1")) {
		SKIP_TEST("unshare -pf --mount-proc does not work here");
		return;
	}
	snprintf(d, sizeof(d), "/tmp/memacct-pidns-%d", (int)getpid());
	r = run_cmd("M=%s; D=%s; rm -f $D.*; "
		    "for i in 1 2; do { unshare -pf --mount-proc $M -j run -- sh -c "
		    "'cat /proc/self/cgroup > '$D.cg$i'; echo $$ > '$D.pid$i'; sleep 4' "
		    "> $D.out$i 2>&1; echo $? > $D.rc$i; } & done; "
		    "up() { [ -s $D.pid$1 ] || [ -s $D.rc$1 ]; }; "
		    "i=0; while { ! up 1 || ! up 2; } && [ $i -lt 300 ]; do "
		    "sleep 0.1; i=$((i+1)); done; "
		    "$M run -- true > $D.host 2>&1; echo \"truth host_rc $?\"; wait; "
		    "echo \"truth rc1 $(cat $D.rc1)\"; echo \"truth rc2 $(cat $D.rc2)\"; "
		    "grep -c 'left by a memacct run' $D.host | sed 's/^/truth host_stale /'; "
		    "for i in 1 2; do echo \"== run $i\"; tail -c 600 $D.out$i; done",
		    memacct, d);
	printf("  %-40s rc %lld and %lld, host run rc %lld, its stale warnings %lld\n",
	       "two runs, PID 1 each", truth(r, "rc1"), truth(r, "rc2"), truth(r, "host_rc"),
	       truth(r, "host_stale"));
	ck_assert_msg(truth(r, "rc1") == 0 && truth(r, "rc2") == 0 && truth(r, "host_rc") == 0 &&
		      truth(r, "host_stale") == 0, "%.1500s", r->out);
	snprintf(f, sizeof(f), "%s.cg1", d);
	ck_assert(cgroup_from_file(f, a, sizeof(a)));
	snprintf(f, sizeof(f), "%s.cg2", d);
	ck_assert(cgroup_from_file(f, b, sizeof(b)));
	printf("  %-40s %s\n%-42s %s\n", "their cgroups", a, "", b);
	ck_assert_str_ne(a, b);
	ck_assert_msg(strstr(a, "/memacct-run-1-") && strstr(b, "/memacct-run-1-"), "%s, %s", a, b);
	result_free(r);
	r = run_cmd("rm -f %s.*", d);
	result_free(r);
}
END_TEST

Suite *run_suite(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_swept("run-signals", 60);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_run_stop_after_cmd);
	tcase_add_test(tc, test_run_sigkill_cleaned);
	tcase_add_test(tc, test_run_early_sigint);
	tcase_add_test(tc, test_run_kept_cgroup_stays);
	suite_add_tcase(s, tc);
		tc = tcase_swept("run-contain", 120);
	tcase_add_checked_fixture(tc, NULL, contain_teardown);
	tcase_add_test(tc, test_run_nested_oom);
	tcase_add_test(tc, test_run_nested_cow);
	tcase_add_test(tc, test_run_oom_score_adj);
	tcase_add_test(tc, test_run_below_caller);
	tcase_add_test(tc, test_run_pid_namespaces);
	suite_add_tcase(s, tc);
		tc = tcase_swept("durations", 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_huge_durations);
	suite_add_tcase(s, tc);
		tc = tcase_swept("attach-input", 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_attach_pid_without_mm);
	tcase_add_test(tc, test_bad_cgroup_names_rc2);
	suite_add_tcase(s, tc);
		tc = tcase_swept("report-bounds", 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_exited_rows_bounded);
	tcase_add_test(tc, test_attach_keeps_peaks_of_removed_cgroup);
	suite_add_tcase(s, tc);
	return s;
}
