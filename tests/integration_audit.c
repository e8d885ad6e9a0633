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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "integration.h"

static char cg[256], outf[300];

static void make_cg(void)
{
	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/memory/memacct-test-audit-%d", getpid());
	if (access("/sys/fs/cgroup/memory", F_OK) != 0)
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/memacct-test-audit-%d", getpid());
	ck_assert_msg(!mkdir(cg, 0755) || errno == EEXIST, "mkdir %s: %s", cg, strerror(errno));
	snprintf(outf, sizeof(outf), "/tmp/memacct-audit-%d.out", getpid());
}

static void remove_cg(void)
{
	for (int i = 0; i < 100 && rmdir(cg) && errno == EBUSY; i++)
		usleep(50000);
	unlink(outf);
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
	long long before, after, restored;
	char line[256];
	int pid, e = -1;
	FILE *f;

	if (system("command -v capsh >/dev/null") != 0) {
		printf("SKIP enforce-rlimit: no capsh to drop CAP_IPC_LOCK (mlock ignores "
		       "RLIMIT_MEMLOCK with it)\n");
		return;
	}
	make_cg();
	/* without CAP_IPC_LOCK, 4 MiB (below the 8 MiB default), then 1 MiB more after 3 s */
	pid = start_in_cg("capsh --drop=cap_ipc_lock --", "audit_mlock_more 4 3 10");
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
	restored = soft_memlock(pid);
	printf("  enforce: restored soft %lld\n", restored);
	ck_assert_int_eq(restored, before);
	stop_pid(pid);
	remove_cg();
}
END_TEST

START_TEST(test_run_memory_max_oom)
{
	struct result *r = run_cmd("%s -j run --memory-max 64M -- %s/oom 128 2>&1", memacct,
				   workloads);
	json_t *t;

	ck_assert_msg(r->report, "no JSON report: %s", r->out);
	t = json_object_get(r->report, "totals");
	printf("  run --memory-max 64M, oom 128: exit %d, oom_kills %lld, memcg_reclaims %lld\n",
	       r->status, jint(t, "oom_kills_total"), jint(t, "memcg_reclaims_total"));
	ck_assert_int_eq(r->status, 128 + SIGKILL);
	ck_assert_int_ge(jint(t, "oom_kills_total"), 1);
	ck_assert_msg(strstr(r->out, "OOM kill") && strstr(r->out, "memacct-run-"),
		      "OOM note names the cgroup: %s", r->out);
	result_free(r);
	r = run_cmd("%s run --memory-max 4x -- true 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "'4x'"), "names the bad token: %s", r->out);
	result_free(r);
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
	for (int i = 0; i < 200; i++) {
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
	bool v1 = strstr(cg, "/memory/") || access("/sys/fs/cgroup/memory", F_OK) == 0;
	const char *file = v1 ? "memory.soft_limit_in_bytes" : "memory.high";
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
	read_trim(access("/sys/fs/cgroup/memory", F_OK) == 0 ? "memory.limit_in_bytes" :
		  "memory.max", old, sizeof(old));
	pid = start_in_cg("", "mlock_steps mlock 32 30");
	r = run_cmd("%s attach --cgroup %s --memory-max 8M --duration 1s 2>&1", memacct, cg);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "OOM") && strstr(r->out, "--force"),
		      "explains what would happen: %s", r->out);
	result_free(r);
	read_trim(access("/sys/fs/cgroup/memory", F_OK) == 0 ? "memory.limit_in_bytes" :
		  "memory.max", now, sizeof(now));
	ck_assert_str_eq(now, old);
	stop_pid(pid);
	remove_cg();
}
END_TEST

Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("root");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_audit_mlock_cap);
	tcase_add_test(tc, test_audit_io_uring_cap);
	tcase_add_test(tc, test_audit_usage_errors);
	tcase_add_test(tc, test_audit_enforce_rlimit);
	tcase_add_test(tc, test_run_memory_max_oom);
	tcase_add_test(tc, test_attach_memory_high_restore);
	tcase_add_test(tc, test_attach_refuses_below_usage);
	suite_add_tcase(s, tc);
	return s;
}
