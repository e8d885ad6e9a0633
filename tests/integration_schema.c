// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_schema.c - every command's -j output, and every line of the
 * daemon's --json-log, validated against docs/memacct.report.v1.schema.json
 * (JSON Schema 2020-12) by Debian's python3-jsonschema (tests/validate_json.py);
 * errors in -j mode go to stderr, never stdout. Runs last: it also validates
 * every report the other suites printed (json_log_path).
 */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration.h"

#define VALIDATOR "/usr/bin/python3"

static char dir[256];

/* validate_json.py on @file; fails the test with its output when invalid. */
static void validate(const char *file)
{
	struct result *r;

	if (access(VALIDATOR, X_OK)) {	/* the vmtest guests have no Python */
		printf("  %s not validated: no %s on this machine\n", file, VALIDATOR);
		return;
	}
	r = run_cmd(VALIDATOR " %s/validate_json.py %s/../docs/memacct.report.v1.schema.json "
				   "%s 2>&1", testsdir, testsdir, file);

	ck_assert_msg(r->status == 0, "%s against the schema (rc %d):\n%s", file, r->status, r->out);
	printf("  %s\n", r->out);
	result_free(r);
}

/* Lines of @file that are JSON objects whose @key is @val ("" = any). */
static int count_objects(const char *file, const char *key, const char *val)
{
	char line[1 << 16];
	int n = 0;
	FILE *f = fopen(file, "r");

	ck_assert_msg(f, "%s missing", file);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);
		json_t *v = j ? json_object_get(j, key) : NULL;

		if (v && (!val[0] || (json_is_string(v) && !strcmp(json_string_value(v), val)) ||
			  (json_is_boolean(v) && !strcmp(val, json_is_true(v) ? "true" : "false"))))
			n++;
		json_decref(j);
	}
	fclose(f);
	return n;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/memacct-schema-%d", getpid());
	mkdir(dir, 0755);
}

static void teardown(void)
{
	struct result *r = run_cmd("rm -rf %s", dir);

	result_free(r);
}

START_TEST(test_schema_self)
{
	struct result *r;

	if (access(VALIDATOR, X_OK)) {
		SKIP_TEST("no %s on this machine (the vmtest guests have no Python; "
			  "every other machine runs make deps)", VALIDATOR);
		return;
	}
	r = run_cmd(VALIDATOR " -c 'import jsonschema' 2>&1");

	ck_assert_msg(r->status == 0, "python3-jsonschema missing (make deps installs it): %s",
		      r->out);
	result_free(r);
	/* the validator itself rejects what it must: an unknown key, a negative
	 * byte count, an error object */
	r = run_cmd("printf '%%s\\n' '{\"error\": \"x\"}' > %s/bad.jsonl; "
		    VALIDATOR " %s/validate_json.py %s/../docs/memacct.report.v1.schema.json "
		    "%s/bad.jsonl", dir, testsdir, testsdir, dir);
	ck_assert_msg(r->status == 1, "an error object passed the schema: %s", r->out);
	result_free(r);
	r = run_cmd("%s -j run -- true | sed 's/\"rss_bytes\":[0-9]*/\"rss_bytes\":-1/; "
		    "s/\"final\"/\"not_in_schema\":1,\"final\"/' > %s/bad2.jsonl; "
		    VALIDATOR " %s/validate_json.py %s/../docs/memacct.report.v1.schema.json "
		    "%s/bad2.jsonl", memacct, dir, testsdir, testsdir, dir);
	ck_assert_msg(r->status == 1 && strstr(r->out, "not_in_schema") && strstr(r->out, "-1"),
		      "a bad report passed the schema: %s", r->out);
	result_free(r);
}
END_TEST

/* run (interval and final), run whose CMD cannot start, and the errors */
START_TEST(test_schema_run)
{
	char f[300];
	struct result *r;

	snprintf(f, sizeof(f), "%s/run.jsonl", dir);
	r = run_cmd("%s -j run --interval 300ms -- sh -c '%s/cow_fork 16 2 >/dev/null; sleep 0.8' > %s",
		    memacct, workloads, f);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	ck_assert_int_eq(count_objects(f, "final", "true"), 1);
	ck_assert_msg(count_objects(f, "final", "false") >= 1, "run -j --interval: no interval report");
	r = run_cmd("%s -j run -- /nonexistent/cmd >> %s", memacct, f);
	ck_assert_int_eq(r->status, 127);
	result_free(r);
	ck_assert_int_eq(count_objects(f, "exec_error", ""), 1);
	validate(f);

	/* errors: stderr only, stdout empty */
	/* no such process: a usage error, as attach --pid (D12) */
	r = run_cmd("%s -j explain 2147483646 2>/dev/null", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(!r->out[0], "error on stdout: %s", r->out);
	result_free(r);
	r = run_cmd("%s -j run --interval nope -- true 2>/dev/null", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(!r->out[0], "error on stdout: %s", r->out);
	result_free(r);
}
END_TEST

/*
 * attach (--cgroup, --pid), explain (PID, --cgroup, --by file, --watch) and
 * audit on a cgroup that memacct run created (so nothing of anyone else's
 * is touched), then the daemon's --json-log.
 */
START_TEST(test_schema_commands)
{
	char f[300], cmd[8192], parent[PATH_MAX];
	struct result *r;

	ck_assert_int_eq(run_cgroup_parent(parent, sizeof(parent)), 0);
	snprintf(f, sizeof(f), "%s/cmds.jsonl", dir);
	snprintf(cmd, sizeof(cmd),
		 "D=%s; %s run -- sh -c 'echo $$ > '$D'/pid; exec sleep 30' > /dev/null & R=$!; "
		 "i=0; while [ ! -s $D/pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
		 "CG=$(ls -d %s/memacct-run-$R-*); P=$(cat $D/pid); rc=0; "
		 "%s -j attach --cgroup $CG --interval 300ms --duration 1s >> %s || rc=1; "
		 "%s -j attach --pid $P --duration 500ms >> %s || rc=2; "
		 "%s -j explain $P >> %s || rc=3; "
		 "%s -j explain --cgroup $CG >> %s || rc=4; "
		 "%s -j explain --cgroup $CG --by file --top 3 >> %s || rc=5; "
		 "%s -j explain --watch 500ms $P >> %s || rc=6; "
		 "%s -j audit --cgroup $CG --pinned-cap 1G --per-process-cap 10%% >> %s || rc=7; "
		 "%s -j audit >> %s || rc=8; "
		 "kill $P; wait $R; exit $rc",
		 dir, memacct, parent, memacct, f, memacct, f, memacct, f, memacct, f, memacct, f,
		 memacct, f, memacct, f, memacct, f);
	r = run_cmd("%s", cmd);
	ck_assert_msg(r->status == 0, "step %d failed", r->status);
	result_free(r);
	ck_assert_msg(count_objects(f, "command", "attach") >= 3, "attach reports missing");
	ck_assert_int_eq(count_objects(f, "command", "explain"), 4);
	ck_assert_int_eq(count_objects(f, "command", "audit"), 2);
	validate(f);

	/* the daemon's JSON log: its own pin path, stopped and detached */
	snprintf(f, sizeof(f), "%s/daemon.jsonl", dir);
	r = run_cmd("P=/sys/fs/bpf/memacct-schema-%d; "
		    "%s daemon --listen 127.0.0.1:%d --interval 300ms --pin-path $P --json-log %s "
		    ">/dev/null 2>&1 & D=$!; i=0; "
		    "while [ $(cat %s 2>/dev/null | wc -l) -lt 2 ] && [ $i -lt 100 ]; do "
		    "sleep 0.1; i=$((i+1)); done; kill -TERM $D; wait $D; rc=$?; "
		    "%s detach --pin-path $P; exit $rc",
		    getpid(), memacct, 20000 + getpid() % 10000, f, f, memacct);
	ck_assert_msg(r->status == 0, "daemon exited %d", r->status);
	result_free(r);
	ck_assert_msg(count_objects(f, "command", "daemon") >= 2, "daemon log has < 2 lines");
	validate(f);
}
END_TEST

/* what every other suite printed with -j (collected by run_cmd()) */
START_TEST(test_schema_all_reports)
{
	if (getenv("CK_RUN_SUITE") || getenv("CK_RUN_CASE") || access(json_log_path, R_OK)) {
		SKIP_TEST("only some suites ran (CK_RUN_SUITE, CK_RUN_CASE): nothing collected "
			  "to validate");
		return;
	}
	ck_assert_msg(count_objects(json_log_path, "schema", "") >= 20,
		      "fewer than 20 reports collected in %s", json_log_path);
	validate(json_log_path);
}
END_TEST

/* verdict_details entry of @kind, or NULL */
static json_t *verdict_of(json_t *report, const char *kind)
{
	json_t *d, *v;
	size_t i;

	json_array_foreach(json_object_get(report, "verdict_details"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "kind")), kind))
			return d;
	v = json_object_get(report, "verdict");
	printf("  no %s verdict among %zu\n", kind, json_array_size(v));
	return NULL;
}

/*
 * run ends with a diagnosis whose figures are the report's own: a child
 * that copies half of a 64 MiB buffer (cow_fork), then a 128 MiB file read
 * through mmap (reclaimable page cache); a small run gets none.
 */
START_TEST(test_run_verdicts)
{
	struct result *r;
	json_t *d, *t;

	r = memacct_run("cow_fork 64 2");
	ck_assert_int_eq(r->status, 0);
	d = verdict_of(r->report, "cow_blowup");
	ck_assert_msg(d, "no CoW verdict: %s", r->out);
	assert_near("verdict: CoW bytes", jint(d, "bytes"), truth(r, "child_cow_bytes"));
	ck_assert_int_eq(jint(d, "pid"), truth(r, "parent_pid"));
	ck_assert_int_eq(jint(d, "processes"), 1);
	ck_assert_int_eq(jint(d, "of_bytes"),
			 jint(proc_by_pid(r, truth(r, "parent_pid")), "rss_peak_bytes"));
	ck_assert_msg(strstr(json_string_value(json_object_get(d, "text")), "cause:") &&
		      strstr(json_string_value(json_object_get(d, "text")), "fix:"),
		      "verdict without cause and fix: %s",
		      json_string_value(json_object_get(d, "text")));
	ck_assert(!verdict_of(r->report, "pinned"));
	result_free(r);

	r = memacct_run("explain_file_mmap /var/tmp/memacct-verdict-file 128 --seconds 1");
	ck_assert_int_eq(r->status, 0);
	t = json_object_get(r->report, "totals");
	d = verdict_of(r->report, "file_reclaimable");
	ck_assert_msg(d, "no page-cache verdict: %s", r->out);
	ck_assert_int_eq(jint(d, "bytes"), jint(t, "reclaimable_peak_bytes"));
	ck_assert_int_eq(jint(d, "of_bytes"), jint(t, "rss_peak_bytes"));
	ck_assert_msg(jint(d, "bytes") >= truth(r, "file_bytes") * 9 / 10, "reclaimable %lld",
		      jint(d, "bytes"));
	ck_assert(!verdict_of(r->report, "cow_blowup"));
	result_free(r);

	r = run_cmd("%s -j run -- true", memacct);
	ck_assert_int_eq(json_array_size(json_object_get(r->report, "verdict")), 0);
	result_free(r);
}
END_TEST

/* -o FILE, -T, --bytes, explain -p PID (bcc/vmstat-style conventions) */
START_TEST(test_conventions)
{
	char f[300];
	struct result *r;
	json_t *j;

	/* -o: CMD's stdout stays CMD's, the report goes to FILE */
	snprintf(f, sizeof(f), "%s/out.jsonl", dir);
	r = run_cmd("%s -o %s -T -j run -- sh -c 'echo hello from CMD'", memacct, f);
	ck_assert_int_eq(r->status, 0);
	ck_assert_str_eq(r->out, "hello from CMD\n");
	result_free(r);
	ck_assert_int_eq(count_objects(f, "command", "run"), 1);
	ck_assert_int_eq(count_objects(f, "timestamp", ""), 1);
	validate(f);
	r = run_cmd("cat %s", f);
	ck_assert_msg(r->report && json_is_string(json_object_get(r->report, "timestamp")),
		      "%s", r->out);
	result_free(r);
	/* -o for a command without CMD: explain -p PID into FILE */
	r = run_cmd("sleep 20 & P=$!; %s -o %s -j explain -p $P; rc=$?; "
		    "%s -j explain $P > %s/pos.json; kill $P; echo \"truth pid $P\"; exit $rc",
		    memacct, f, memacct, dir);
	ck_assert_int_eq(r->status, 0);
	ck_assert_int_eq(count_objects(f, "command", "explain"), 1);
	result_free(r);
	r = run_cmd("cat %s", f);
	j = json_array_get(json_object_get(r->report, "processes"), 0);
	ck_assert_ptr_nonnull(j);
	result_free(r);
	r = run_cmd("%s -j explain -p 1 2 2>/dev/null", memacct);
	ck_assert_int_eq(r->status, 2);	/* -p and a positional PID */
	result_free(r);

	/* attach -p PID INTERVAL COUNT: COUNT reports, the last the summary */
	snprintf(f, sizeof(f), "%s/count.jsonl", dir);
	r = run_cmd("sleep 20 & P=$!; %s -j attach -p $P 300ms 3 > %s; rc=$?; kill $P; exit $rc",
		    memacct, f);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	ck_assert_int_eq(count_objects(f, "final", "true"), 1);
	ck_assert_msg(count_objects(f, "command", "attach") >= 2 &&
		      count_objects(f, "command", "attach") <= 3, "not 3 reports");
	validate(f);
	r = run_cmd("%s attach -p 1 1s 0 2>/dev/null; echo \"truth rc $?\"", memacct);
	ck_assert_int_eq(truth(r, "rc"), 2);
	result_free(r);

	/* --bytes: exact figures in the table; -T: the time first */
	r = run_cmd("%s -T --bytes run -- %s/cow_fork 16 2", memacct, workloads);
	ck_assert_int_eq(r->status, 0);
	{
		long long want = truth(r, "child_cow_bytes");
		bool found = false;

		/* the child's COW column: its exact bytes, as in -j (16 pages of slack) */
		for (const char *p = r->out; *p; p++) {
			char *e;
			long long v;

			if (p > r->out && p[-1] != ' ')
				continue;
			v = strtoll(p, &e, 10);
			if (e > p && *e == ' ' && v >= want && v <= want + (long long)SLACK)
				found = true;
		}
		ck_assert_msg(found, "no exact CoW bytes (truth %lld):\n%s", want, r->out);
	}
	ck_assert_msg(!strstr(r->out, "MiB"), "units with --bytes:\n%s", r->out);
	ck_assert_msg(strstr(r->out, ":") && strstr(r->out, " memacct run: cgroup"),
		      "no timestamp:\n%s", r->out);
	result_free(r);
}
END_TEST

/*
 * run --columns --raw --bytes (libsmartcols, as lsblk -o/--raw): the rows
 * hold the chosen columns only, one field each, and the figures are the
 * kernel's: cow_fork's child copied child_cow_bytes (its truth, 16 pages
 * of slack), its PPID is the parent. A bad column name runs nothing.
 */
START_TEST(test_table_columns)
{
	long long child, parent, want, cow = -1, total = -1;
	char *save, *line, f[300];
	bool header = false;
	struct result *r;
	int rows = 0;

	r = run_cmd("%s --bytes run --raw --columns pid,ppid,comm,cow,rss_peak -- %s/cow_fork 16 2",
		    memacct, workloads);
	ck_assert_int_eq(r->status, 0);
	child = truth(r, "child_pid");
	parent = truth(r, "parent_pid");
	want = truth(r, "child_cow_bytes");
	for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char pid[32], ppid[32], comm[64], extra[8];
		long long c, peak;

		if (!strcmp(line, "PID PPID COMM COW RSS_PEAK")) {
			header = true;
			continue;
		}
		if (!header || !strncmp(line, "cgroup: ", 8))
			header = false;
		if (!header)
			continue;
		ck_assert_msg(sscanf(line, "%31s %31s %63s %lld %lld %7s", pid, ppid, comm, &c,
				     &peak, extra) == 5, "not 5 fields: %s", line);
		rows++;
		if (atoll(pid) == child) {
			ck_assert_int_eq(atoll(ppid), parent);
			ck_assert_str_eq(comm, "cow_fork");
			ck_assert_int_gt(peak, 16LL << 20);	/* the 16 MiB buffer */
			cow = c;
		}
		if (!strcmp(pid, "TOTAL")) {
			ck_assert_str_eq(comm, "(cgroup)");
			ck_assert_str_eq(ppid, "-");
			total = c;
		}
	}
	ck_assert_msg(rows >= 3 && cow >= 0 && total >= 0, "no table:\n%s", r->out);
	ck_assert_msg(cow >= want && cow <= want + (long long)SLACK,
		      "child COW %lld, truth %lld", cow, want);
	printf("  %-40s memacct %12lld  truth %12lld\n", "run --raw --columns: child COW", cow, want);
	ck_assert_msg(total >= cow, "TOTAL COW %lld < the child's %lld", total, cow);
	result_free(r);

	/* --csv: the table alone, CRLF lines, figures in bytes without --bytes */
	r = run_cmd("%s run --csv --columns pid,comm,cow -- %s/cow_fork 16 2", memacct, workloads);
	ck_assert_int_eq(r->status, 0);
	child = truth(r, "child_pid");
	want = truth(r, "child_cow_bytes");
	cow = -1;
	header = false;
	rows = 0;
	for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long pid, c;
		char comm[64];

		if (!strncmp(line, "truth ", 6))
			continue;
		ck_assert_msg(line[strlen(line) - 1] == '\r', "not a CRLF line: %s", line);
		if (!header) {
			ck_assert_str_eq(line, "PID,COMM,COW\r");
			header = true;
			continue;
		}
		rows++;
		if (!strncmp(line, ",TOTAL (cgroup),", 16))
			continue;
		ck_assert_msg(sscanf(line, "%lld%*[x],%63[^,],%lld\r", &pid, comm, &c) == 3 ||
			      sscanf(line, "%lld,%63[^,],%lld\r", &pid, comm, &c) == 3,
			      "not a CSV row of 3 fields: %s", line);
		if (pid == child)
			cow = c;
	}
	ck_assert_msg(rows >= 3 && cow >= 0, "no CSV table:\n%s", r->out);
	ck_assert_msg(cow >= want && cow <= want + (long long)SLACK,
		      "child COW %lld, truth %lld", cow, want);
	printf("  %-40s memacct %12lld  truth %12lld\n", "run --csv: child COW", cow, want);
	result_free(r);

	snprintf(f, sizeof(f), "%s/ran", dir);
	r = run_cmd("%s run --columns pid,nope -- touch %s 2>&1", memacct, f);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "no column 'nope'") && strstr(r->out, "FILE_COW"), "%s",
		      r->out);
	ck_assert_msg(access(f, F_OK), "CMD ran despite a bad --columns");
	result_free(r);
}
END_TEST

/* help: exit 0 on stdout; a bad command or option: 2 on stderr */
START_TEST(test_help_exit_codes)
{
	static const char *const ok[] = {
		"help", "--help", "help run", "help detach", "run --help", "attach --help",
		"explain --help", "audit --help", "daemon --help", "detach --help",
	};
	struct result *r;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = run_cmd("%s %s 2>&1", memacct, ok[i]);
		ck_assert_msg(r->status == 0, "memacct %s: rc %d", ok[i], r->status);
		ck_assert_msg(strstr(r->out, "Usage: memacct"), "memacct %s: %s", ok[i], r->out);
		result_free(r);
	}
	r = run_cmd("%s help nosuch 2>/dev/null; echo \"truth rc $?\"", memacct);
	ck_assert_int_eq(truth(r, "rc"), 2);
	ck_assert_msg(!strstr(r->out, "Usage"), "help nosuch printed on stdout: %s", r->out);
	result_free(r);
	r = run_cmd("%s detach --nosuch 2>/dev/null; echo \"truth rc $?\"", memacct);
	ck_assert_int_eq(truth(r, "rc"), 2);
	result_free(r);
}
END_TEST

Suite *schema_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_swept("schema", 120);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_schema_self);
	tcase_add_test(tc, test_schema_run);
	tcase_add_test(tc, test_schema_commands);
	tcase_add_test(tc, test_help_exit_codes);
	tcase_add_test(tc, test_run_verdicts);
	tcase_add_test(tc, test_conventions);
	tcase_add_test(tc, test_table_columns);
	tcase_add_test(tc, test_schema_all_reports);
	suite_add_tcase(s, tc);
	return s;
}
