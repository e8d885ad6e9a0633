// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_figures.c - figures a user found wrong (issue #26), each
 * against the kernel's own: the RSS peak of a process that exec'd, the
 * faults of short-lived processes in the totals, the CSV and --raw tables a
 * script reads, and the README's examples run as written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "integration.h"

/* the kernel runs sched_process_exit before exit_mm() from 6.16 on (kernel
 * commit "exit: move and extend sched_process_exit() tracepoint") */
static bool exit_sees_mm(void)
{
	return kernel_at_least(6, 16);
}

/*
 * exec_shrink touches 64 MiB, then execs itself, and the new image touches
 * 8 MiB and exits. RSS PEAK is the exiting image's (VmHWM, which the image
 * prints just before it exits), not signal->maxrss, which holds the 64 MiB
 * image too. Kernels before 6.16 keep no mm at the exit tracepoint: there
 * signal->maxrss cannot tell the images apart and the figure is unknown.
 */
START_TEST(test_rss_peak_after_exec)
{
	struct result *r = memacct_run("exec_shrink 64 8");
	long long pre = truth(r, "pre_bytes"), hwm = truth(r, "vmhwm_bytes");
	json_t *p = proc_by_pid(r, truth(r, "pid")), *peak;

	ck_assert(json_is_true(json_object_get(p, "exited")));
	peak = json_object_get(p, "rss_peak_bytes");
	if (json_is_null(peak)) {
		ck_assert_msg(!exit_sees_mm(), "RSS PEAK unknown on a kernel whose exit "
			      "tracepoint sees the mm");
		printf("  %-40s unknown (no mm at exit before 6.16)  truth %lld\n",
		       "RSS PEAK after exec", hwm);
	} else {
		/* the workload maps nothing after it reads VmHWM (it runs
		 * its exit path's code first, and _exit()s): the peak at exit
		 * is VmHWM to the byte. With libc's exit run after the read
		 * it was 16 or 32 pages over (fault-around on libc's text). */
		long long got = json_integer_value(peak);

		ck_assert_msg(got < pre, "RSS PEAK %lld holds the image before the exec (%lld)",
			      got, pre);
		ck_assert_msg(got == hwm, "RSS PEAK %lld, VmHWM before exit %lld (%+lld pages)",
			      got, hwm, (got - hwm) / (long long)PAGE);
		printf("  %-40s memacct %12lld  VmHWM %12lld\n", "RSS PEAK after exec", got, hwm);
	}
	result_free(r);
}
END_TEST

/*
 * The totals' faults are at least the sum of the rows': memory.stat's
 * pgfault lags (flushed every ~2 s), and /bin/true's 50 faults were "faults
 * 0" in 5 of 6 runs.
 */
START_TEST(test_short_lived_faults_in_totals)
{
	for (int i = 0; i < 6; i++) {
		/* odd runs: one process of a few ms; even: 21 of them */
		struct result *r = i % 2 ? run_cmd("%s -j run -- true", memacct) :
				   run_cmd("%s -j run -- %s/short_lived 20 4", memacct, workloads);
		json_t *procs, *p;
		long long rows = 0, total;
		size_t j;

		ck_assert_msg(r->report, "no report: %s", r->out);
		procs = json_object_get(r->report, "processes");
		json_array_foreach(procs, j, p)
			rows += jint(p, "page_faults_total");
		total = jint(json_object_get(r->report, "totals"), "page_faults_total");
		ck_assert_msg(json_array_size(procs) == (i % 2 ? 1 : 21), "%zu rows",
			      json_array_size(procs));
		ck_assert_msg(rows > 0 && total >= rows, "run %d: totals %lld < the rows' %lld",
			      i, total, rows);
		if (i < 2)
			printf("  %-40s totals %12lld  rows %12lld\n", i ? "faults of true" :
			       "faults of 21 processes", total, rows);
		result_free(r);
	}
}
END_TEST

/*
 * A process whose leader exits first and whose helper thread ends it with
 * exit_group() (every DataLoader worker: main thread, then its queue
 * feeder): its faults are every thread's, the zombie leader's too. Truth:
 * getrusage(RUSAGE_SELF) read by the last thread just before exit_group(),
 * which maps nothing after it; up to 4 faults of the exit path allowed. On
 * b27f6ef memacct gave the helper's alone (~260 of ~4,400). The order of
 * the exits is the workload's (the leader waits to be a zombie): one run.
 */
START_TEST(test_faults_leader_exits_first)
{
	struct result *r = memacct_run("thread_exit 4096 256");
	json_t *p = proc_by_pid(r, truth(r, "pid"));
	long long want = truth(r, "faults"), got = jint(p, "page_faults_total");

	ck_assert_int_eq(r->status, 0);
	ck_assert(json_is_true(json_object_get(p, "exited")));
	ck_assert_msg(want >= 4096 + 256, "getrusage %lld faults", want);
	ck_assert_msg(got >= want && got <= want + 4,
		      "page_faults_total %lld, getrusage before exit %lld", got, want);
	printf("  %-40s memacct %12lld  truth %12lld\n", "faults, leader exits first", got,
	       want);
	result_free(r);
}
END_TEST

/* The fields of a CSV line (no quoted field in these tables), CR dropped. */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\r")] = '\0';
	for (char *s = line;; s++) {
		char *e = strchr(s, ',');

		if (n < max)
			f[n++] = s;
		if (!e)
			return n;
		*e = '\0';
		s = e;
	}
}

static int col_of(char **h, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(h[i], name))
			return i;
	ck_abort_msg("no CSV column %s", name);
	return -1;
}

/*
 * --csv for scripts: PIDs are integers (no x), EXITED says which rows are
 * gone, ELAPSED_S (with -i) and TIME (with -T) say when each report was
 * taken; the header once.
 */
START_TEST(test_csv_columns)
{
	struct result *r = run_cmd("%s -T run --csv -i 200ms -- sh -c '%s/cow_fork 16 2; "
				   "sleep 0.5'", memacct, workloads);
	char *save, *line, *h[32], *f[32];
	int nh = 0, pid_col = -1, ex_col = -1, el_col = -1, time_col = -1, headers = 0;
	int rows = 0, child_rows_exited = 0;
	long long child = truth(r, "child_pid");
	double last_elapsed = -1;

	ck_assert_int_eq(r->status, 0);
	for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int n;

		if (!strncmp(line, "truth ", 6))
			continue;
		if (!strncmp(line, "PID,", 4)) {
			headers++;
			nh = csv_split(line, h, 32);
			pid_col = col_of(h, nh, "PID");
			ex_col = col_of(h, nh, "EXITED");
			el_col = col_of(h, nh, "ELAPSED_S");
			time_col = col_of(h, nh, "TIME");
			continue;
		}
		ck_assert_msg(nh, "a row before the header: %s", line);
		n = csv_split(line, f, 32);
		ck_assert_int_eq(n, nh);
		ck_assert_msg(strlen(f[time_col]) == 24 && f[time_col][10] == 'T',
			      "TIME not RFC 3339: %s", f[time_col]);
		ck_assert_msg(atof(f[el_col]) >= last_elapsed - 1e-9 || !f[pid_col][0],
			      "ELAPSED_S went back: %s", f[el_col]);
		last_elapsed = atof(f[el_col]);
		/* the total and the folded exited: no PID, what the row is in
		 * COMM (issue 41: TOTAL was in the PID column) */
		if (!f[pid_col][0]) {
			const char *comm = f[col_of(h, nh, "COMM")];

			ck_assert_msg(!strcmp(comm, "TOTAL (cgroup)") || strstr(comm, " more exited)"),
				      "a row without a PID that is neither the total nor the folded "
				      "exited: %s", line);
			if (comm[0] == 'T')
				ck_assert_str_eq(f[ex_col], "");
			continue;
		}
		rows++;
		ck_assert_msg(f[pid_col][strspn(f[pid_col], "0123456789")] == '\0' && f[pid_col][0],
			      "PID not an integer: '%s'", f[pid_col]);
		ck_assert_msg(!strcmp(f[ex_col], "0") || !strcmp(f[ex_col], "1"), "EXITED '%s'",
			      f[ex_col]);
		if (atoll(f[pid_col]) == child && !strcmp(f[ex_col], "1"))
			child_rows_exited++;
	}
	ck_assert_int_eq(headers, 1);
	ck_assert_msg(rows >= 3 && child_rows_exited >= 1,
		      "the exited child never has EXITED 1 (%d rows):\n%s", rows, r->out);
	printf("  %-40s %d rows, child exited in %d reports\n", "run --csv -T -i", rows,
	       child_rows_exited);
	result_free(r);

	/* without -i nor -T: EXITED only */
	r = run_cmd("%s run --csv -- true", memacct);
	ck_assert_int_eq(r->status, 0);
	{
		static const char *const want[] = {
			"PID,COMM,RSS,RSS_PEAK,ANON,FILE,COW,FILE_COW,ZEROFILL,PINNED,EXITED\r\n",
			"PID,COMM,RSS,RSS_PEAK,ANON,FILE,COW,FILE_COW,REMOTE,PINNED,EXITED\r\n",
		};

		ck_assert_msg(!strncmp(r->out, want[0], strlen(want[0])) ||
			      !strncmp(r->out, want[1], strlen(want[1])), "header: %s", r->out);
	}
	result_free(r);
}
END_TEST

/* --raw: the table alone, its first line the header by column names */
START_TEST(test_raw_table_only)
{
	struct result *r = run_cmd("%s --bytes run --raw -- %s/cow_fork 16 2 | grep -v '^truth '",
				   memacct, workloads);
	char *save, *line;
	int n = 0;

	ck_assert_int_eq(r->status, 0);
	ck_assert_msg(!strncmp(r->out, "PID COMM RSS RSS_PEAK ", 22), "first line: %s", r->out);
	for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *save2, *tok;
		int field = 0;

		if (n++ == 0)
			continue;
		/* every row: PID (or TOTAL), COMM, then integers ("-": not measured,
		 * as an exited row's RSS where the exit tracepoint has no mm) */
		for (tok = strtok_r(line, " ", &save2); tok; tok = strtok_r(NULL, " ", &save2))
			if (field++ >= 2)
				ck_assert_msg(!strcmp(tok, "-") ||
					      tok[strspn(tok, "0123456789")] == '\0',
					      "not a table row (field %d '%s')", field, tok);
		ck_assert_msg(field == 10, "%d fields in a table row", field);
	}
	ck_assert_int_ge(n, 4);	/* header, parent, child, TOTAL */
	result_free(r);
}
END_TEST

/*
 * The README's examples as written: every `memacct ... -- CMD` in
 * backquotes and the indented `.output/memacct` lines of its Example, run
 * from the top of the tree with CMD a real workload. README.md is read, so
 * an example added there is run here too.
 */
START_TEST(test_readme_examples)
{
	char path[4096], *text = NULL, *p, dir[] = "/tmp/memacct-readme-XXXXXX";
	size_t cap = 0;
	FILE *f;
	int ran = 0;

	snprintf(path, sizeof(path), "%s/../README.md", testsdir);
	f = fopen(path, "r");
	if (!f && errno == ENOENT) {	/* the vmtest guests carry tests/ alone */
		SKIP_TEST("%s: no README.md beside tests/ here", path);
		return;
	}
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert(getdelim(&text, &cap, '\0', f) > 0);
	fclose(f);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (p = text; (p = strchr(p, '`'));) {
		char *e = strchr(p + 1, '`'), cmd[1024], line[2048];
		struct result *r;
		char *c = cmd;

		if (!e)
			break;
		snprintf(cmd, sizeof(cmd), "%.*s", (int)(e - p - 1), p + 1);
		p = e + 1;
		if (strncmp(cmd, "memacct ", 8) && strncmp(cmd, ".output/memacct ", 16))
			continue;
		if (!strstr(cmd, " -- "))
			continue;	/* a synopsis or option, not an example */
		c += strncmp(cmd, "memacct ", 8) ? 16 : 8;
		/* CMD: a real workload; the files it names land in a scratch dir */
		{
			char *at = strstr(c, " -- "), args[1024];

			snprintf(args, sizeof(args), "%.*s", (int)(at - c), c);
			snprintf(line, sizeof(line), "cd %s && %s %s -- %s", dir, memacct, args,
				 strcmp(at + 4, "CMD") ? at + 4 : "true");
			if (!strncmp(at + 4, ".output/workloads/", 18))
				snprintf(line, sizeof(line), "cd %s && %s %s -- %s/%s", dir, memacct,
					 args, workloads, at + 4 + 18);
		}
		r = run_cmd("%s", line);
		printf("  README: %-60s exit %d\n", cmd, r->status);
		ck_assert_msg(r->status == 0, "README example '%s' exits %d:\n%s", cmd, r->status,
			      r->out);
		ck_assert_msg(r->out[0] || strstr(cmd, "-o "), "'%s' printed nothing", cmd);
		result_free(r);
		ran++;
	}
	ck_assert_msg(ran >= 3, "%d examples found in README.md", ran);
	{
		struct result *r = run_cmd("cd %s && wc -c r.jsonl mem.csv && head -c 300 r.jsonl "
					   "&& rm -f r.jsonl mem.csv && rmdir %s", dir, dir);

		ck_assert_msg(r->status == 0 && strstr(r->out, "memacct.report/v1"),
			      "the -o files: %s", r->out);
		result_free(r);
	}
	free(text);
}
END_TEST

/* VmRSS of @pid in bytes, or -1 */
static long long vmrss(long long pid)
{
	char path[64], line[256];
	long long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lld kB", &kib) == 1)
			break;
	fclose(f);
	return kib < 0 ? -1 : kib * 1024;
}

/*
 * attach --pid: TOTAL is labelled a sum of processes, in the table and in
 * JSON (totals_of), and is the sum of its rows, each row the kernel's VmRSS.
 */
START_TEST(test_attach_pid_totals_are_sums)
{
	/* the tree's output away from ours: run_cmd() reads to EOF */
	struct result *r = run_cmd("sh -c 'sleep 30 & sleep 30 & wait' >/dev/null 2>&1 & P=$!; "
				   "sleep 0.3; "
				   "echo truth tree $P; %s -j attach -p $P 300ms 2; rc=$?; "
				   "echo truth rc $rc", memacct);
	json_t *procs = json_object_get(r->report, "processes"), *p, *t;
	long long sum = 0, tree = truth(r, "tree");
	size_t i;

	ck_assert_msg(r->report && truth(r, "rc") == 0, "%s", r->out);
	t = json_object_get(r->report, "totals");
	ck_assert_str_eq(json_string_value(json_object_get(r->report, "totals_of")), "processes");
	ck_assert_int_eq(json_array_size(procs), 3);
	json_array_foreach(procs, i, p) {
		long long rss = jint(p, "rss_bytes"), kernel = vmrss(jint(p, "pid"));

		kill((pid_t)jint(p, "pid"), SIGKILL);	/* read: the tree may go */
		ck_assert_msg(kernel > 0 && llabs(rss - kernel) <= (long long)SLACK,
			      "PID %lld: RSS %lld, VmRSS %lld", jint(p, "pid"), rss, kernel);
		sum += rss;
	}
	ck_assert_int_eq(jint(t, "rss_bytes"), sum);
	ck_assert_int_eq(jint(t, "rss_sum_bytes"), sum);
	printf("  %-40s totals %12lld  rows %12lld\n", "attach --pid: RSS", jint(t, "rss_bytes"),
	       sum);
	result_free(r);
	kill((pid_t)tree, SIGKILL);	/* and its sleeps above: nothing left in our cgroup */

	r = run_cmd("sleep 5 >/dev/null 2>&1 & P=$!; %s attach -p $P 300ms 1; kill $P", memacct);
	ck_assert_msg(strstr(r->out, "TOTAL (processes)") && !strstr(r->out, "(cgroup)"),
		      "%s", r->out);
	result_free(r);
}
END_TEST

Suite *figures_suite(void)
{
	Suite *s = suite_create("figures");
	TCase *tc = tcase_swept("figures", 300);

	tcase_add_test(tc, test_rss_peak_after_exec);
	tcase_add_test(tc, test_short_lived_faults_in_totals);
	tcase_add_test(tc, test_faults_leader_exits_first);
	tcase_add_test(tc, test_csv_columns);
	tcase_add_test(tc, test_raw_table_only);
	tcase_add_test(tc, test_readme_examples);
	tcase_add_test(tc, test_attach_pid_totals_are_sums);
	suite_add_tcase(s, tc);
	return s;
}
