// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_record.c - `run --record FILE` and `memacct report FILE`
 * (docs/run.md "Recording"): real workloads (tests/workloads/phases.c with
 * its marks, twice in a shell under -i 100ms; an OOM kill under
 * --memory-max) recorded, and what report prints from the file compared
 * byte for byte with what run printed itself (-o FILE keeps CMD's output
 * apart), as text and as -j. Then files report must refuse or take in
 * part: a last line cut off, garbage, a recording on a full disk (the job
 * goes on, the file holds whole lines).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "integration.h"

static char dir[64];

static void setup(void)
{
	struct result *r;

	snprintf(dir, sizeof(dir), "/tmp/memacct-record-%d", (int)getpid());
	r = run_cmd("mkdir -p %s", dir);
	result_free(r);
}

static void teardown(void)
{
	struct result *r;

	umount2(dir, MNT_DETACH);	/* test_record_full_disk's tmpfs */
	r = run_cmd("rm -rf %s", dir);
	result_free(r);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	ck_assert_msg(f, "open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	ck_assert_int_eq(fread(buf, 1, n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = n;
	return buf;
}

/* the lines of a recording of each kind; fails on a line that does not parse */
static void count_kinds(const char *path, int *interval, int *mark, int *final, int *oom)
{
	char line[1 << 20];
	FILE *f = fopen(path, "r");
	int n = 0;

	*interval = *mark = *final = *oom = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);
		const char *k;

		ck_assert_msg(j, "line %d of %s does not parse", n + 1, path);
		if (n++ == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(j, "format")),
					 "memacct.record/v1");
			json_decref(j);
			continue;
		}
		k = json_string_value(json_object_get(j, "kind"));
		ck_assert_ptr_nonnull(k);
		*interval += !strcmp(k, "interval");
		*mark += !strcmp(k, "mark");
		*final += !strcmp(k, "final");
		*oom += !strcmp(k, "oom");
		json_decref(j);
	}
	fclose(f);
}

/*
 * `memacct [-j] -o OUT run ARGS --record REC -- CMD` (@cmd NULL: `memacct
 * [-j] -o OUT ARGS --record REC`, attach), then `memacct report [-j] REC >
 * REP`: REP must be OUT, byte for byte. Returns memacct's status.
 */
static int record_and_compare(const char *tag, bool json, const char *run_args,
			      const char *cmd)
{
	char out[128], rec[128], rep[128];
	struct result *r;
	size_t lo, lr;
	char *a, *b;
	int status;

	snprintf(out, sizeof(out), "%s/%s.out", dir, tag);
	snprintf(rec, sizeof(rec), "%s/%s.jsonl", dir, tag);
	snprintf(rep, sizeof(rep), "%s/%s.rep", dir, tag);
	if (cmd)
		r = run_cmd("%s %s -o %s run %s --record %s -- %s > /dev/null", memacct,
			    json ? "-j" : "", out, run_args, rec, cmd);
	else
		r = run_cmd("%s %s -o %s %s --record %s", memacct, json ? "-j" : "", out, run_args,
			    rec);
	status = r->status;
	result_free(r);
	r = run_cmd("%s report %s %s > %s", memacct, json ? "-j" : "", rec, rep);
	ck_assert_msg(r->status == 0, "memacct report %s: exit %d", rec, r->status);
	result_free(r);
	a = slurp(out, &lo);
	b = slurp(rep, &lr);
	ck_assert_msg(lo > 0, "run printed nothing to %s", out);
	if (lo != lr || memcmp(a, b, lo)) {
		r = run_cmd("diff %s %s | head -20", out, rep);
		ck_abort_msg("%s: memacct report %s differs from what run printed (%zu vs %zu "
			     "bytes):\n%s", tag, rec, lr, lo, r->out);
	}
	printf("  %-44s %zu bytes of reports, the same from %s\n", tag, lo, rec);
	free(a);
	free(b);
	return status;
}

/* tests/validate_json.py: every line of @file valid against docs/@schema */
static void validate(const char *schema, const char *file)
{
	struct result *r;

	if (access("/usr/bin/python3", X_OK)) {	/* the vmtest guests have no Python */
		printf("  %s not validated: no /usr/bin/python3 here\n", file);
		return;
	}
	r = run_cmd("/usr/bin/python3 %s/validate_json.py %s/../docs/%s %s 2>&1", testsdir,
		    testsdir, schema, file);
	ck_assert_msg(r->status == 0, "%s against %s (rc %d):\n%s", file, schema, r->status,
		      r->out);
	printf("  %s", r->out);
	result_free(r);
}

/* phases.c's three marked phases, twice, with a report every 100 ms */
START_TEST(test_record_phases_interval)
{
	char cmd[512];
	int interval, mark, final, oom;

	snprintf(cmd, sizeof(cmd), "sh -c '%s/phases && sleep 0.5 && %s/phases'", workloads,
		 workloads);
	ck_assert_int_eq(record_and_compare("text", false, "-i 100ms", cmd), 0);
	/* the budget per parameter and the mappings' locked bytes, as text */
	ck_assert_int_eq(record_and_compare("text-params", false,
					    "-i 100ms --params 1e6 --expect-bytes-per-param 40", cmd), 0);
	ck_assert_int_eq(record_and_compare("json", true, "-i 100ms --params 1e6", cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/json.jsonl", dir);
	count_kinds(cmd, &interval, &mark, &final, &oom);
	printf("  recording: %d interval, %d mark, %d final lines\n", interval, mark, final);
	ck_assert_int_ge(interval, 4);	/* >= 0.5 s at 100 ms */
	ck_assert_int_eq(mark, 8);	/* 3 phases and "end", twice */
	ck_assert_int_eq(final, 1);
	validate("memacct.record.v1.schema.json", cmd);
	snprintf(cmd, sizeof(cmd), "%s/json.rep", dir);
	validate("memacct.report.v1.schema.json", cmd);
}
END_TEST

/*
 * CMD ends before the process it started (a daemon it left): an "exit"
 * snapshot when CMD ended, samples each second without -i, and report
 * prints run's final report with CMD's status.
 */
START_TEST(test_record_exit)
{
	char line[1 << 16], rec[128];
	int exits = 0, samples = 0, n = 0;
	FILE *f;

	ck_assert_int_eq(record_and_compare("exit", false, "", "sh -c 'sleep 3.5 & exit 3'"), 3);
	snprintf(rec, sizeof(rec), "%s/exit.jsonl", dir);
	f = fopen(rec, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);
		const char *k = json_string_value(json_object_get(j, "kind"));

		ck_assert_ptr_nonnull(j);
		if (n++ && !strcmp(k, "exit")) {
			exits++;
			ck_assert_int_eq(samples, 0);	/* at once, before the first sample */
		}
		samples += n > 1 && !strcmp(k, "sample");
		json_decref(j);
	}
	fclose(f);
	printf("  CMD gone, its child left: %d exit line, %d samples\n", exits, samples);
	ck_assert_int_eq(exits, 1);
	ck_assert_int_ge(samples, 2);
}
END_TEST

/* an OOM kill: its post-mortem and verdict printed again from the file */
START_TEST(test_record_oom)
{
	char cmd[256], rec[128];
	int interval, mark, final, oom;

	snprintf(cmd, sizeof(cmd), "%s/oom 128", workloads);
	ck_assert_int_eq(record_and_compare("oom", false, "--memory-max 64M", cmd), 137);
	ck_assert_int_eq(record_and_compare("oomj", true, "--memory-max 64M", cmd), 137);
	snprintf(rec, sizeof(rec), "%s/oomj.jsonl", dir);
	count_kinds(rec, &interval, &mark, &final, &oom);
	ck_assert_int_ge(oom, 1);
	ck_assert_int_eq(final, 1);
}
END_TEST

/* memacct killed while writing: the last line cut off */
START_TEST(test_record_cut)
{
	char cmd[512], rec[128];
	struct result *r;
	struct stat st;
	size_t lo;
	char *run_out;

	snprintf(cmd, sizeof(cmd), "sh -c '%s/phases && sleep 0.5 && %s/phases'", workloads,
		 workloads);
	record_and_compare("cut", false, "-i 100ms", cmd);
	snprintf(rec, sizeof(rec), "%s/cut.jsonl", dir);
	ck_assert_int_eq(stat(rec, &st), 0);
	ck_assert_int_eq(truncate(rec, st.st_size - 200), 0);	/* the final line, cut */
	r = run_cmd("%s report %s 2>%s/cut.err", memacct, rec, dir);
	ck_assert_int_eq(r->status, 1);
	/* what it printed: run's reports but the final one */
	run_out = slurp(strcat(strcpy(cmd, dir), "/cut.out"), &lo);
	ck_assert_msg(strlen(r->out) > 0 && strlen(r->out) < lo &&
		      !strncmp(run_out, r->out, strlen(r->out)),
		      "not a part of what run printed: %s", r->out);
	ck_assert_ptr_null(strstr(r->out, ", final"));
	free(run_out);
	result_free(r);
	r = run_cmd("cat %s/cut.err", dir);
	ck_assert_msg(strstr(r->out, "cut off") && strstr(r->out, "no final report"),
		      "stderr: %s", r->out);
	result_free(r);
}
END_TEST

/* files that are no recording: exit 2 and a sentence that says so */
START_TEST(test_record_garbage)
{
	static const char *const bad[] = {
		"printf 'root:x:0:0::/root:/bin/sh\\n'",	/* text */
		"printf '{\"a\": 1}\\n'",			/* another JSON */
		"head -c 4096 /dev/urandom",			/* binary */
		"true",						/* empty */
	};
	struct result *r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run_cmd("%s > %s/bad; %s report %s/bad 2>&1", bad[i], dir, memacct, dir);
		ck_assert_msg(r->status == 2 && strstr(r->out, "is not a memacct recording"),
			      "%s: exit %d: %s", bad[i], r->status, r->out);
		result_free(r);
	}
	r = run_cmd("%s report %s/none 2>&1", memacct, dir);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
	/* no end of line: at most RECORD_LINE_MAX read (grew without end) */
	r = run_cmd("%s report /dev/zero 2>&1", memacct);
	ck_assert_msg(r->status == 2 && strstr(r->out, "line 1 is longer than 256 MiB"),
		      "exit %d: %s", r->status, r->out);
	result_free(r);
	/* a directory: usage (2), said so (was 4, "Input/output error") */
	r = run_cmd("%s report %s 2>&1", memacct, dir);
	ck_assert_msg(r->status == 2 && strstr(r->out, "is a directory"), "exit %d: %s", r->status,
		      r->out);
	result_free(r);
	/* a header, then a snapshot whose report is none */
	r = run_cmd("printf '{\"format\":\"memacct.record/v1\"}\\n{\"t\":1,\"kind\":\"final\","
		    "\"report\":{\"schema\":\"x\"}}\\n' > %s/bad; %s report %s/bad 2>&1", dir, memacct,
		    dir);
	ck_assert_msg(r->status == 2 && strstr(r->out, "holds no memacct.report/v1 report"),
		      "exit %d: %s", r->status, r->out);
	result_free(r);
}
END_TEST

/*
 * The job comes first: a recording on a full disk (a 64 KiB tmpfs) stops,
 * CMD runs to its end with its own status, run says so, the file holds
 * whole lines, and report prints them with status 1 (no final report).
 */
START_TEST(test_record_full_disk)
{
	char mnt[96], cmd[512];
	struct result *r;
	int interval, mark, final, oom;

	snprintf(mnt, sizeof(mnt), "%s/full", dir);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		SKIP_TEST("mount tmpfs: %s", strerror(errno));
		return;
	}
	snprintf(cmd, sizeof(cmd), "sh -c '%s/phases storm 1000 > /dev/null; sleep 1; exit 7'",
		 workloads);
	r = run_cmd("%s -o /dev/null run -i 100ms --record %s/r.jsonl -- %s 2>&1", memacct, mnt,
		    cmd);
	ck_assert_int_eq(r->status, 7);
	ck_assert_msg(strstr(r->out, "stopped") && strstr(r->out, "No space left"),
		      "run did not say the recording stopped: %s", r->out);
	result_free(r);
	snprintf(cmd, sizeof(cmd), "%s/r.jsonl", mnt);
	count_kinds(cmd, &interval, &mark, &final, &oom);	/* whole lines only */
	printf("  full disk: %d mark and %d interval lines kept\n", mark, interval);
	ck_assert_int_eq(final, 0);
	r = run_cmd("%s report %s > /dev/null 2>&1", memacct, cmd);
	ck_assert_int_eq(r->status, 1);
	result_free(r);
	umount2(mnt, MNT_DETACH);
}
END_TEST

/*
 * attach --record: a cgroup of the test's (its name with our PID) where a
 * process allocates 1 MiB every 50 ms, attached for 2 s at 200 ms; report's
 * output is attach's own, text and JSON.
 */
START_TEST(test_record_attach)
{
	char cg[256], args[512];
	struct result *r;

	snprintf(cg, sizeof(cg), "%s/memacct-record-%d", cgroot, (int)getpid());
	ck_assert_msg(!mkdir(cg, 0755), "mkdir %s: %s", cg, strerror(errno));
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec /usr/bin/python3 -c \""
		    "import time\nb = []\nfor i in range(120): b.append(bytearray(1 << 20)); "
		    "time.sleep(0.05)\"' > /dev/null 2>&1 & echo \"truth pid $!\"", cg);
	snprintf(args, sizeof(args), "attach --cgroup %s -i 200ms --duration 2s", cg);
	record_and_compare("attach", false, args, NULL);
	record_and_compare("attachj", true, args, NULL);
	kill((pid_t)truth(r, "pid"), SIGKILL);
	result_free(r);
	for (int i = 0; i < 50 && rmdir(cg) && errno == EBUSY; i++)
		usleep(100000);
}
END_TEST

static const char *const class_labels[] = {
	"owned anon", "CoW-copied", "reclaimable page cache", "shmem", "pinned",
	"seconds since the start", "RSS per process", "class=\"phase-name\"", "Final report",
};

/*
 * @html loaded by Debian's chromium, headless: no console error, no
 * reference outside the file, the timeline's six classes and their labels
 * (class_labels) and every one of @labels in the DOM ("A\nB": either);
 * the screenshot (@png) a PNG. Returns its size.
 */
static long long check_in_chromium(const char *html, const char *const *labels, size_t n,
				   const char *png)
{
	struct result *r;
	long long size;
	int areas = 0;

	/* self-contained: nothing to fetch (the SVG namespace is a name) */
	r = run_cmd("grep -c -E 'src=|href=|<script|<link|url\\(http' %s", html);
	ck_assert_msg(atoi(r->out) == 0, "%s refers to something outside it", html);
	result_free(r);
	r = run_cmd("cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		    "--enable-logging=stderr --v=0 --dump-dom file://%s 2> %s/chromium.err",
		    dir, dir, html, dir);
	ck_assert_msg(r->status == 0 && strstr(r->out, "</svg>"), "chromium: exit %d, %.300s",
		      r->status, r->out);
	for (size_t i = 0; i < sizeof(class_labels) / sizeof(class_labels[0]); i++)
		ck_assert_msg(strstr(r->out, class_labels[i]), "'%s' not in the DOM",
			      class_labels[i]);
	for (size_t i = 0; i < n; i++) {
		/* "A\nB": A or B (a phase's name on its band, or its number
		 * there and its name in the key below: report_html.c) */
		const char *nl = strchr(labels[i], '\n');
		char a[128];

		snprintf(a, sizeof(a), "%.*s", nl ? (int)(nl - labels[i]) : (int)strlen(labels[i]),
			 labels[i]);
		ck_assert_msg(strstr(r->out, a) || (nl && strstr(r->out, nl + 1)),
			      "'%s' not in the DOM", labels[i]);
	}
	for (char *p = r->out; (p = strstr(p, "class=\"area\"")); p++)
		areas++;
	ck_assert_int_eq(areas, 6);
	result_free(r);
	r = run_cmd("grep -E 'CONSOLE|Uncaught|ERR_FILE|Failed to load' %s/chromium.err", dir);
	ck_assert_msg(r->out[0] == '\0', "the page logged errors: %s", r->out);
	result_free(r);
	r = run_cmd("cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		    "--hide-scrollbars --window-size=1040,1300 --screenshot=%s file://%s "
		    "> /dev/null 2>&1; head -c 8 %s | od -An -c | tr -d ' '; echo; "
		    "echo \"truth size $(stat -c %%s %s)\"", dir, dir, png, html, png, png);
	ck_assert_msg(strstr(r->out, "211PNG"), "no PNG screenshot: %s", r->out);
	size = truth(r, "size");
	ck_assert_int_gt(size, 20000);
	result_free(r);
	return size;
}

static bool no_chromium(const char *test)
{
	if (!system("command -v chromium > /dev/null 2>&1"))
		return false;
	skip_test(test, "no chromium here (apt-get install chromium: make deps)");
	return true;
}


/*
 * report --html in a real browser: a recording of phases.c's marks under
 * --memory-max 256M and -i 100ms drawn; the DOM holds the classes' labels,
 * the limit, each phase's name and the phases' tables.
 */
START_TEST(test_record_html)
{
	static const char *const labels[] = {
		"limit 256 MiB", ">alloc</text>", ">cow</text>\n2 cow", ">lock</text>\n3 lock",
		"phase \"alloc\":",
	};
	char cmd[512], rec[128], html[128], png[128];
	struct result *r;
	long long size;

	if (no_chromium(__func__))
		return;
	snprintf(cmd, sizeof(cmd), "sh -c '%s/phases && sleep 0.3 && %s/phases'", workloads,
		 workloads);
	snprintf(rec, sizeof(rec), "%s/h.jsonl", dir);
	snprintf(html, sizeof(html), "%s/h.html", dir);
	snprintf(png, sizeof(png), "%s/h.png", dir);
	r = run_cmd("%s -o /dev/null run -i 100ms --memory-max 256M --record %s -- %s "
		    "> /dev/null 2>&1 && %s report --html %s %s", memacct, rec, cmd, memacct, html,
		    rec);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	size = check_in_chromium(html, labels, sizeof(labels) / sizeof(labels[0]), png);
	printf("  report --html: the DOM holds every label, 6 classes, the phases; "
	       "screenshot %lld bytes\n", size);
}
END_TEST

/*
 * The README's demo (tests/workloads/dataloader_demo.py: a DataLoader's 4
 * forked workers copy the parent's Python objects, marked "build list" and
 * "epoch") under run --record: report prints run's own output, and its
 * page (docs/report-dataloader.png is its screenshot) loads in chromium
 * with both phases, their CoW by mapping kind and the workers' lines. Skipped without chromium or
 * Debian's torch.
 */
START_TEST(test_record_html_dataloader)
{
	/* a phase's name on its band, or its number there and its name in
	 * the key: "build list" is ~15% of the run, near the edge */
	static const char *const labels[] = { ">build list</text>\n1 build list",
					      ">epoch</text>\n2 epoch", " python3</text>",
					      "copy-on-write", "COW BY MAPPING  " };
	char cmd[256], html[128], png[128], rec[128];
	struct result *r;
	long long size;

	if (no_chromium(__func__))
		return;
	if (system("/usr/bin/python3 -c 'import torch, numpy' 2> /dev/null")) {
		SKIP_TEST("no torch or numpy for /usr/bin/python3 (python3-torch: make deps)");
		return;
	}
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/workloads/dataloader_demo.py", testsdir);
	ck_assert_int_eq(record_and_compare("dataloader", false, "", cmd), 0);
	snprintf(rec, sizeof(rec), "%s/dataloader.jsonl", dir);
	snprintf(html, sizeof(html), "%s/dataloader.html", dir);
	snprintf(png, sizeof(png), "%s/dataloader.png", dir);
	r = run_cmd("%s report --html %s %s", memacct, html, rec);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	size = check_in_chromium(html, labels, sizeof(labels) / sizeof(labels[0]), png);
	printf("  the DataLoader demo's page: both phases, the workers; screenshot %lld bytes\n",
	       size);
}
END_TEST

/*
 * A recording is input (issue 41 item 6): a .rec whose header's command,
 * argv, start_iso and cgroup path hold markup gives a page where each is
 * text, escaped, and no element of its own (was: command and start_iso
 * written as they were: a crafted file ran script in the reader's browser).
 */
START_TEST(test_record_html_hostile)
{
	char rec[128], bad[128], html[128];
	int n[5] = { -1, -1, -1, -1, -1 };
	struct result *r;

	snprintf(rec, sizeof(rec), "%s/hostile.jsonl", dir);
	snprintf(bad, sizeof(bad), "%s/hostile-edited.jsonl", dir);
	snprintf(html, sizeof(html), "%s/hostile.html", dir);
	r = run_cmd("%s -o /dev/null run --record %s -- /bin/true > /dev/null 2>&1 && "
		    "sed -E '1s/\"command\":\"[^\"]*\"/\"command\":\"<script>alert(1)<\\/script>\"/; "
		    "1s/\"start_iso\":\"[^\"]*\"/\"start_iso\":\"<img src=x onerror=alert(2)>\"/; "
		    "1s/\"argv\":\\[[^]]*\\]/\"argv\":[\"<b>x<\\/b>\",\"\\&amp;\"]/; "
		    "1s/\"path\":\"[^\"]*\"/\"path\":\"\\/<svg onload=alert(3)>\"/' %s > %s && "
		    "grep -c '<script>alert' %s && %s report --html %s %s",
		    memacct, rec, rec, bad, bad, memacct, html, bad);
	ck_assert_msg(r->status == 0 && atoi(r->out) == 1, "rc %d: %s", r->status, r->out);
	result_free(r);
	/* the strings are there, as text; no element of theirs */
	r = run_cmd("grep -c -E '<script|<img|<b>x|<svg onload' %s; "
		    "grep -c -F -e '&lt;script&gt;alert(1)' %s; grep -c -F -e '&lt;img src=x' %s; "
		    "grep -c -F -e '&lt;svg onload=alert(3)&gt;' %s; grep -c -F -e '&amp;amp;' %s",
		    html, html, html, html, html);
	ck_assert_int_eq(sscanf(r->out, "%d %d %d %d %d", &n[0], &n[1], &n[2], &n[3], &n[4]), 5);
	ck_assert_msg(n[0] == 0 && n[1] > 0 && n[2] > 0 && n[3] > 0 && n[4] > 0,
		      "lines with the recording's markup %d; escaped: command %d, start_iso %d, "
		      "cgroup %d, argv %d", n[0], n[1], n[2], n[3], n[4]);
	result_free(r);
}
END_TEST

/* ---- test_record_html_numbers's readers of the page */

/* &amp; &lt; &gt; &quot; &#39; (report_html.c esc()) undone, in place */
static void html_unescape(char *s)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
		{ "&#39;", '\'' },
	};
	char *w = s;

	while (*s) {
		size_t i, n = sizeof(ents) / sizeof(ents[0]);

		for (i = 0; i < n && strncmp(s, ents[i].ent, strlen(ents[i].ent)); i++)
			;
		if (i < n) {
			*w++ = ents[i].c;
			s += strlen(ents[i].ent);
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* the text between @open and the next @close in @html, unescaped (free it) */
static char *html_between(const char *html, const char *open, const char *close)
{
	const char *a = strstr(html, open), *b;
	char *s;

	ck_assert_msg(a, "no '%s' in the page", open);
	a += strlen(open);
	b = strstr(a, close);
	ck_assert_msg(b, "no '%s' after '%s' in the page", close, open);
	s = strndup(a, b - a);
	html_unescape(s);
	return s;
}

/* every line of @path a JSON object, in order (memacct -j report) */
static json_t *load_json_lines(const char *path)
{
	json_t *all = json_array();
	size_t len;
	char *buf = slurp(path, &len), *save, *line;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);

		ck_assert_msg(json_is_object(j), "a line of %s is no JSON object: %.80s", path, line);
		json_array_append_new(all, j);
	}
	free(buf);
	return all;
}

/*
 * A figure as the page prints it without --bytes ("57.5 MiB", "408 KiB",
 * "0 B": fmt_bytes(), three significant digits) is @exact rounded: within
 * half a unit of its last digit.
 */
static void assert_rounds(const char *what, const char *printed, long long exact)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	char unit[8];
	double v, scale = 1, half = 0.5;
	const char *dot = strchr(printed, '.');
	size_t u;

	ck_assert_msg(sscanf(printed, "%lf %7s", &v, unit) == 2, "%s: '%s' is no size", what,
		      printed);
	for (u = 0; u < sizeof(units) / sizeof(units[0]) && strcmp(unit, units[u]); u++)
		scale *= 1024;
	ck_assert_msg(u < sizeof(units) / sizeof(units[0]), "%s: unit '%s'", what, unit);
	for (const char *p = dot ? dot + 1 : NULL; p && *p >= '0' && *p <= '9'; p++)
		half /= 10;
	ck_assert_msg(fabs(exact / scale - v) <= half * (1 + 1e-9),
		      "%s: the page prints %s, the recording's JSON %lld", what, printed, exact);
	printf("  %-40s page %12s  JSON %12lld  (at its precision)\n", what, printed, exact);
}

/*
 * The final report's table and summary in the --bytes page's <pre
 * id="final"> (report_print.c): the row of @pid and the TOTAL row, each
 * cell read by its header, and the "cgroup: charged" line, each equal to
 * the final JSON report's figure. "-" is a figure not measured (JSON null),
 * "~" the mark of an estimate.
 */
static void assert_final_table(const char *pre, long long pid, json_t *proc, json_t *totals)
{
	static const struct { const char *col, *key; } cols[] = {
		{ "RSS", "rss_bytes" }, { "RSS_PEAK", "rss_peak_bytes" }, { "ANON", "anon_bytes" },
		{ "FILE", "file_bytes" }, { "SHMEM", "shmem_bytes" },
		{ "MLOCKED", "mlocked_bytes" }, { "PINNED_VM", "pinned_vm_bytes" },
		{ "PINNED", "pinned_bytes" }, { "PINNED_PEAK", "pinned_peak_bytes" },
		{ "DMA", "dma_pinned_bytes" }, { "REMOTE_RSS", "remote_numa_bytes" },
		{ "COW", "cow_copied_bytes" }, { "FILE_COW", "cow_file_copied_bytes" },
		{ "ZEROFILL", "zero_fill_bytes" }, { "REMOTE", "remote_numa_alloc_bytes" },
		{ "MIGRATED", "numa_migrated_bytes" }, { "FAULTS", "page_faults_total" },
		{ "MAJFLT", "major_faults_total" },
	};
	static const char *const two_words[] = { "RSS PEAK", "FILE COW", "PINNED VM",
						 "PINNED PEAK", "REMOTE RSS" };
	char *text = strdup(pre), *save, *line, *hdr[32], *hsave;
	const char *sum[5] = { "usage_bytes", "rss_peak_bytes", "reclaimable_bytes",
			       "reclaimable_peak_bytes", "anon_peak_bytes" };
	unsigned long long s[5];
	int nh = 0, rows = 0, cells = 0;

	strtok_r(text, "\n", &save);			/* "memacct run: cgroup ..." */
	line = strtok_r(NULL, "\n", &save);		/* the header */
	ck_assert_msg(line && strstr(line, "PID COMM"), "no table header: %s", pre);
	for (size_t i = 0; i < sizeof(two_words) / sizeof(two_words[0]); i++)
		for (char *p = line; (p = strstr(p, two_words[i])); p++)
			p[strchr(two_words[i], ' ') - two_words[i]] = '_';
	for (char *h = strtok_r(line, " ", &hsave); h && nh < 32; h = strtok_r(NULL, " ", &hsave))
		hdr[nh++] = h;
	ck_assert_msg(nh > 3 && !strcmp(hdr[0], "PID") && !strcmp(hdr[1], "COMM"),
		      "table header: %s", pre);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *tok[32], *tsave;
		json_t *o;
		int nt = 0;

		if (!strncmp(line, "cgroup: charged ", 16)) {
			ck_assert_int_eq(sscanf(line, "cgroup: charged %llu (peak %llu); reclaimable "
						"page cache %llu (peak* %llu); anon peak* %llu",
						&s[0], &s[1], &s[2], &s[3], &s[4]), 5);
			for (int i = 0; i < 5; i++)
				ck_assert_msg((long long)s[i] == jint(totals, sum[i]),
					      "'cgroup: charged' line: %llu, totals' %s %lld", s[i],
					      sum[i], jint(totals, sum[i]));
			continue;
		}
		for (char *t = strtok_r(line, " ", &tsave); t && nt < 32; t = strtok_r(NULL, " ", &tsave))
			tok[nt++] = t;
		if (nt > 1 && !strcmp(tok[0], "TOTAL") && !strcmp(tok[1], "(cgroup)"))
			o = totals;		/* not the footnote's "TOTAL (cgroup):" */
		else if (nt > 1 && atoll(tok[0]) == pid)
			o = proc;		/* "PIDx COMM", x: exited */
		else
			continue;
		ck_assert_msg(nt == nh, "a row of %d cells under %d headers: %s", nt, nh, pre);
		rows++;
		for (int i = 2; i < nh; i++) {
			const char *key = NULL, *v = tok[i] + (tok[i][0] == '~');
			json_t *j;

			for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
				if (!strcmp(hdr[i], cols[c].col))
					key = cols[c].key;
			ck_assert_msg(key, "column %s: no JSON key known for it", hdr[i]);
			j = json_object_get(o, key);
			if (!strcmp(v, "-")) {	/* not measured */
				ck_assert_msg(json_is_null(j), "%s %s: '-' but JSON %s", tok[0],
					      hdr[i], key);
				continue;
			}
			ck_assert_msg(strspn(v, "0123456789") == strlen(v) && json_is_integer(j) &&
				      strtoll(v, NULL, 10) == json_integer_value(j),
				      "the page's final table, row %s, %s: '%s'; the JSON's %s %lld",
				      tok[0], hdr[i], tok[i], key, (long long)json_integer_value(j));
			cells++;
		}
	}
	ck_assert_msg(rows == 2, "%d of the 2 rows (PID %lld, TOTAL) in the final table: %s",
		      rows, pid, pre);
	printf("  final table: %d cells of PID %lld and TOTAL, and the 'cgroup: charged' line, "
	       "each the JSON's to the byte\n", cells, pid);
	free(text);
}

/*
 * The numbers report --html prints (issue 47 finding 6), against the
 * recording's JSON and the workload's own truth. numa_local writes every
 * page of 48 MiB (THP off) and 8 MiB (THP where given) of anonymous memory,
 * says "ready" and sleeps 3 s, under -i 100ms and --memory-max 128M; the
 * shell it pipes into reads its VmRSS at "ready" and its VmHWM 1 s later,
 * asleep (it maps no anonymous page after "ready"). The page is
 * written twice: with --bytes every figure is exact bytes, compared to the
 * byte; without, three significant digits, compared at that precision.
 */
START_TEST(test_record_html_numbers)
{
	char rec[128], jrep[128], trep[128], bhtml[128], hhtml[128], want[64];
	long long pid, touched, vmrss, vmhwm, peak = 0, limit = 128 * MiB, lag;
	const long long fault_around = 64 * 1024;	/* mm/memory.c fault_around_bytes */
	const char *comm = "numa_local";
	int interval, mark, final, oom, nlive = 0, nsnap;
	long long rss[256];
	json_t *reps, *last, *fproc = NULL, *ftot, *rep;
	struct result *r;
	char *b, *h, *text, *s, *p;
	double y0 = -1, yt = -1, tick = 0, worst = 0;
	size_t len, i;

	snprintf(rec, sizeof(rec), "%s/n.jsonl", dir);
	snprintf(jrep, sizeof(jrep), "%s/n.json", dir);
	snprintf(trep, sizeof(trep), "%s/n.txt", dir);
	snprintf(bhtml, sizeof(bhtml), "%s/n-bytes.html", dir);
	snprintf(hhtml, sizeof(hhtml), "%s/n.html", dir);
	r = run_cmd("%s -o /dev/null run -i 100ms --memory-max 128M --record %s -- sh -c '"
		    "%s/numa_local 48 --seconds 3 | while read -r k a b; do echo \"$k $a $b\"; "
		    "if [ \"$k\" = ready ]; then echo \"truth pid $a\"; "
		    "for when in ready late; do sed -nE \"s/^(VmRSS|VmHWM):[[:space:]]+([0-9]+) "
		    "kB$/kernel ${when}_\\1_kib \\2/p\" /proc/$a/status; sleep 1; done; fi; done'",
		    memacct, rec, workloads);
	ck_assert_msg(r->status == 0, "memacct run: exit %d: %s", r->status, r->out);
	pid = truth(r, "pid");
	touched = truth(r, "map_bytes") + truth(r, "thp_bytes");
	vmrss = truth(r, "ready_VmRSS_kib") * 1024;
	vmhwm = truth(r, "late_VmHWM_kib") * 1024;
	result_free(r);
	r = run_cmd("%s -j report %s > %s && %s report %s > %s && %s --bytes report --html %s %s "
		    "&& %s report --html %s %s", memacct, rec, jrep, memacct, rec, trep, memacct,
		    bhtml, rec, memacct, hhtml, rec);
	ck_assert_msg(r->status == 0, "memacct report: exit %d", r->status);
	result_free(r);

	/* the page draws every snapshot; report -j prints the interval and
	 * final ones: here, all of them */
	count_kinds(rec, &interval, &mark, &final, &oom);
	text = slurp(rec, &len);
	for (nsnap = -1, p = text; (p = strchr(p, '\n')); p++)
		nsnap++;		/* its lines but the header */
	free(text);
	reps = load_json_lines(jrep);
	ck_assert_msg(interval + final == nsnap && json_array_size(reps) == (size_t)nsnap,
		      "%d snapshots: %d interval, %d final; report -j printed %zu", nsnap,
		      interval, final, json_array_size(reps));
	ck_assert_int_eq(final, 1);
	/* the RSS of each snapshot where the process is live: the page's line */
	json_array_foreach(reps, i, rep) {
		json_t *procs = json_object_get(rep, "processes"), *o;
		size_t k;

		json_array_foreach(procs, k, o) {
			if (jint(o, "pid") != pid ||
			    strcmp(json_string_value(json_object_get(o, "comm")) ?: "", comm))
				continue;
			if (i + 1 == json_array_size(reps))
				fproc = o;
			if (json_is_true(json_object_get(o, "exited")))
				continue;
			ck_assert_int_lt(nlive, 256);
			rss[nlive] = jint(o, "rss_bytes");
			peak = rss[nlive] > peak ? rss[nlive] : peak;
			nlive++;
		}
	}
	last = json_array_get(reps, json_array_size(reps) - 1);
	ftot = json_object_get(last, "totals");
	ck_assert_msg(fproc, "PID %lld not in the final report", pid);
	ck_assert_int_ge(nlive, 5);	/* 3 s at 100 ms */
	printf("  %d snapshots, PID %lld (%s) live in %d; truth: touched %lld, VmRSS %lld at "
	       "\"ready\", VmHWM %lld 1 s later\n", nsnap, pid, comm, nlive, touched, vmrss, vmhwm);

	/* ---- the --bytes page: exact bytes */
	b = slurp(bhtml, &len);
	snprintf(want, sizeof(want), "<title>PID %lld (%s) RSS, peak ", pid, comm);
	s = html_between(b, want, "</title>");
	assert_exact("page's RSS peak (series of the JSON)", strtoll(s, NULL, 10), peak);
	free(s);
	/* the limit, on the plot and in the legend */
	snprintf(want, sizeof(want), ">limit %lld</text>", jint(ftot, "limit_bytes"));
	for (p = b, i = 0; (p = strstr(p, want)); p++)
		i++;
	ck_assert_msg(i == 2, "'%s' %zu times in the page, not 2 (the line, the legend)", want, i);
	assert_exact("page's limit (totals' limit_bytes)", jint(ftot, "limit_bytes"), limit);
	/* "started ..., 2.2 s, 22 snapshots</p>": the last one's time */
	s = html_between(b, "<p id=\"meta\">", "</p>");
	snprintf(want, sizeof(want), ", %.1f s, %d snapshots",
		 json_real_value(json_object_get(last, "elapsed_s")), nsnap);
	ck_assert_msg(strlen(s) > strlen(want) && !strcmp(s + strlen(s) - strlen(want), want),
		      "meta '%s', the JSON's '%s'", s, want);
	free(s);
	/*
	 * The line, a point a live snapshot in order; each point's height is
	 * its RSS on the axis (its "0" tick and its highest tick, exact bytes
	 * with --bytes). Each coordinate is printed to 0.1 px: the tolerance
	 * is their rounding, about 30 pages here (a pixel is ~0.4 MB), so
	 * this finds a wrong series, not a page off (the title does).
	 */
	for (p = b; (p = strstr(p, "<line x1=\"")); p++) {
		unsigned long long v;
		double y;

		if (sscanf(p, "<line x1=\"%*d\" x2=\"%*d\" y1=\"%lf\" y2=\"%*f\" stroke=\"#ddd\"/>"
			   "<text x=\"%*d\" y=\"%*f\" text-anchor=\"end\">%llu</text>", &y, &v) != 2)
			continue;
		if (!v)
			y0 = y;
		else if (v > tick) {
			tick = v;
			yt = y;
		}
	}
	ck_assert_msg(y0 > 0 && tick > 0, "no y axis ticks in %s", bhtml);
	snprintf(want, sizeof(want), "data-pid=\"%lld\"", pid);
	p = strstr(b, want);
	ck_assert_msg(p && (p = strstr(p, "points=\"")), "no line of PID %lld", pid);
	p += strlen("points=\"");
	for (i = 0; *p != '"'; i++) {
		double x, y, at, tol;
		char *e;

		x = strtod(p, &e);
		ck_assert_msg(e != p && *e == ',', "points: %.40s", p);
		y = strtod(e + 1, &p);
		ck_assert_msg(i < (size_t)nlive && x > 0, "more points than %d live snapshots",
			      nlive);
		at = y0 - (y0 - yt) * (double)rss[i] / tick;
		tol = 0.1 + 0.1 * rss[i] / tick + 0.01;
		ck_assert_msg(fabs(y - at) <= tol, "point %zu at y %.1f, its RSS %lld at y %.2f "
			      "(+-%.2f)", i, y, rss[i], at, tol);
		worst = fabs(y - at) > worst ? fabs(y - at) : worst;
		while (*p == ' ')
			p++;
	}
	ck_assert_msg(i == (size_t)nlive, "%zu points, %d live snapshots", i, nlive);
	printf("  the line: %zu points, each its snapshot's RSS on the axis (off by %.2f px at "
	       "most)\n", i, worst);
	s = html_between(b, "<pre id=\"final\">", "</pre>");
	assert_final_table(s, pid, fproc, ftot);
	free(s);
	free(b);

	/* ---- the page without --bytes: at its precision, and the final
	 * report the same text as report's own */
	h = slurp(hhtml, &len);
	snprintf(want, sizeof(want), "<title>PID %lld (%s) RSS, peak ", pid, comm);
	s = html_between(h, want, "</title>");
	assert_rounds("page's RSS peak, in units", s, peak);
	free(s);
	s = html_between(h, "<pre id=\"final\">", "</pre>");
	text = slurp(trep, &len);
	for (p = text + len; p > text && (p[-1] != '\n' || strncmp(p, "memacct run: ", 13)); p--)
		;	/* the last report's first line */
	ck_assert_msg(!strcmp(s, p), "the page's final report:\n%s\nreport's:\n%s", s, p);
	printf("  the page's final report: %zu bytes, report's final report to the byte\n",
	       strlen(s));
	free(s);
	free(text);
	free(h);

	/*
	 * ---- the workload's truth. From "ready" on it maps no anonymous
	 * page and frees nothing: each snapshot after it (over 20) reads at
	 * least that VmRSS. Above it, only the file pages its sleep loop's
	 * libc calls fault in after "ready" (usleep(): 16 pages here, one
	 * fault-around), all in its VmHWM 1 s later, and what its exit() can
	 * fault in the microseconds a last snapshot may catch: one more
	 * fault-around at most. The buffer's every page is resident: VmRSS at
	 * least the bytes touched, less what the RSS counters' per-CPU parts
	 * can hold back (rss_counter_lag_bytes(); none where /proc sums them,
	 * 6.16+).
	 */
	lag = rss_counter_lag_bytes();
	ck_assert_msg(peak >= vmrss && peak <= vmhwm + fault_around,
		      "the page's peak %lld; VmRSS %lld at \"ready\", VmHWM %lld 1 s later",
		      peak, vmrss, vmhwm);
	ck_assert_msg(vmrss + lag >= touched, "VmRSS %lld below the %lld bytes touched (lag %lld)",
		      vmrss, touched, lag);
	/* at the exit (the final table): the anon pages, the buffer and the
	 * loader's, heap and stack (~25 pages), all zero-filled; none above
	 * the RSS */
	ck_assert_msg(jint(fproc, "anon_bytes") >= touched && jint(fproc, "anon_bytes") <= vmrss &&
		      jint(fproc, "zero_fill_bytes") >= touched,
		      "final row: anon %lld, zero fills %lld; touched %lld, VmRSS %lld",
		      jint(fproc, "anon_bytes"), jint(fproc, "zero_fill_bytes"), touched, vmrss);
	/* the cgroup's peak charge held the buffer; above it by at most 8
	 * MiB: the other pages of numa_local, sh and sed, and page cache first
	 * read here (libc and the binaries, ~3 MiB cold) and, on v2, the
	 * kernel's (page tables, ~120 KiB) */
	ck_assert_msg(jint(ftot, "rss_peak_bytes") >= touched &&
		      jint(ftot, "rss_peak_bytes") <= touched + 8 * (long long)MiB,
		      "the cgroup's peak %lld; %lld bytes touched", jint(ftot, "rss_peak_bytes"),
		      touched);
	printf("  truth: VmRSS %lld <= page's peak %lld <= VmHWM %lld + 64 KiB; touched %lld; "
	       "final anon %lld, zero fills %lld; cgroup peak %lld\n", vmrss, peak, vmhwm, touched,
	       jint(fproc, "anon_bytes"), jint(fproc, "zero_fill_bytes"),
	       jint(ftot, "rss_peak_bytes"));
	json_decref(reps);
}
END_TEST

Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_swept("record", 300);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_record_phases_interval);
	tcase_add_test(tc, test_record_exit);
	tcase_add_test(tc, test_record_oom);
	tcase_add_test(tc, test_record_cut);
	tcase_add_test(tc, test_record_garbage);
	tcase_add_test(tc, test_record_full_disk);
	tcase_add_test(tc, test_record_attach);
	tcase_add_test(tc, test_record_html);
	tcase_add_test(tc, test_record_html_dataloader);
	tcase_add_test(tc, test_record_html_hostile);
	tcase_add_test(tc, test_record_html_numbers);
	suite_add_tcase(s, tc);
	return s;
}
