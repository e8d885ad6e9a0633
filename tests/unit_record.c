// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_record.c - unit tests of a recording's pieces (user/out/record.c,
 * user/model/report_load.c): the patches between snapshots (record_diff() then
 * record_apply() gives the new snapshot back, whatever changed), and the
 * report model read back from its JSON (report_json() of what
 * report_from_json() read is the object it read: null figures, exited
 * rows, signals, the host and its nodes, phases with mappings).
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include "check_util.h"
#include "metric_table.h"
#include "phases.h"
#include "phases_print.h"
#include "record.h"
#include "report.h"
#include "report_html.h"
#include "report_print.h"

static void roundtrip(const char *a_s, const char *b_s)
{
	json_t *a = json_loads(a_s, 0, NULL), *b = json_loads(b_s, 0, NULL), *p, *got;
	char *ps;

	ck_assert_msg(a && b, "bad test JSON");
	p = record_diff(a, b);
	ck_assert_msg((p == NULL) == (json_equal(a, b) != 0), "%s -> %s: a patch iff they differ", a_s, b_s);
	ps = p ? json_dumps(p, JSON_COMPACT) : strdup("null");
	got = p ? record_apply(json_deep_copy(a), p) : json_deep_copy(a);
	ck_assert_msg(json_equal(got, b), "%s -> %s: patch %s gives %s", a_s, b_s, ps,
		      json_dumps(got, JSON_COMPACT));
	free(ps);
	json_decref(p);
	json_decref(got);
	json_decref(a);
	json_decref(b);
}

START_TEST(test_diff_apply)
{
	static const char *const pairs[][2] = {
		{ "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2}" },		/* none */
		{ "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":3}" },
		{ "{\"a\":1}", "{\"a\":1,\"c\":[1,2]}" },		/* added */
		{ "{\"a\":1,\"c\":2}", "{\"a\":1}" },			/* gone */
		{ "{\"a\":null}", "{\"a\":{\"x\":1}}" },		/* null, then an object */
		{ "{\"a\":{\"x\":1}}", "{\"a\":null}" },
		{ "{\"a\":{\"x\":1,\"y\":{\"z\":[1,2,3]}}}", "{\"a\":{\"x\":1,\"y\":{\"z\":[1,5,3]}}}" },
		{ "{\"p\":[{\"pid\":1,\"r\":5},{\"pid\":2,\"r\":6}]}",
		  "{\"p\":[{\"pid\":1,\"r\":5},{\"pid\":2,\"r\":7}]}" },	/* one element */
		{ "{\"p\":[{\"pid\":1}]}", "{\"p\":[{\"pid\":1},{\"pid\":2}]}" },	/* longer */
		{ "{\"p\":[{\"pid\":1},{\"pid\":2}]}", "{\"p\":[]}" },
		{ "{\"p\":[{\"pid\":1,\"r\":1},{\"pid\":3,\"r\":3}]}",		/* one came */
		  "{\"p\":[{\"pid\":1,\"r\":1},{\"pid\":2,\"r\":2},{\"pid\":3,\"r\":4}]}" },
		{ "{\"p\":[{\"pid\":1,\"exited\":false,\"r\":1}]}",	/* a pid reused */
		  "{\"p\":[{\"pid\":1,\"exited\":false,\"r\":2},{\"pid\":1,\"exited\":true}]}" },
		{ "{\"p\":[1,2,3]}", "{\"p\":[1,3]}" },
		{ "[{\"pid\":1},{\"pid\":2},{\"pid\":3},{\"pid\":4},{\"pid\":5}]",	/* runs */
		  "[{\"pid\":1},{\"pid\":2},{\"pid\":9},{\"pid\":3},{\"pid\":4,\"r\":1},{\"pid\":5}]" },
		{ "[{\"pid\":7,\"exited\":true,\"r\":1},{\"pid\":7,\"exited\":true,\"r\":2}]",
		  "[{\"pid\":7,\"exited\":true,\"r\":1},{\"pid\":7,\"exited\":true,\"r\":3},"
		  "{\"pid\":8}]" },					/* one key twice */
		{ "{\"p\":[1,2]}", "{\"p\":{\"~a\":[[0,5]]}}" },	/* an array, then an object */
		{ "{\"p\":{\"x\":1}}", "{\"p\":[1]}" },
		{ "{\"t\":0.5}", "{\"t\":0.75}" },
		{ "{\"t\":1}", "{\"t\":1.0}" },				/* an integer, then a real */
		{ "[1,{\"a\":2}]", "[1,{\"a\":3}]" },
		{ "{\"s\":\"x\"}", "{\"s\":true}" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		roundtrip(pairs[i][0], pairs[i][1]);
		roundtrip(pairs[i][1], pairs[i][0]);
	}
}
END_TEST

/* a report with every kind of field a printer reads */
static void fill_report(struct report *r, struct proc_row *rows)
{
	memset(r, 0, sizeof(*r));
	r->command = "run";
	snprintf(r->cg.rel, sizeof(r->cg.rel), "/a/memacct-run-1-abcdef01");
	snprintf(r->cg.path, sizeof(r->cg.path), "/sys/fs/cgroup/a/memacct-run-1-abcdef01");
	r->cg.id = 1234;
	r->cg.version = 2;
	r->elapsed_s = 12.345678901234;
	r->final = true;
	r->has_exit_status = true;
	r->exit_status = 137;
	for (int id = 0; id < M_NR; id++)
		*metric_ptr(&r->totals, id) = 4096ULL * (id + 1);
	r->totals.unknown = MBIT(M_REMOTE_NUMA) | MBIT(M_NUMA_MIGRATED);
	r->totals.dma_estimate = true;
	r->has_limit = true;
	r->limit_bytes = 64ULL << 20;
	memset(rows, 0, 3 * sizeof(*rows));
	rows[0] = (struct proc_row){ .pid = 10, .ppid = 1, .comm = "python3" };
	rows[0].m.rss = 100 << 20;
	rows[0].m.rss_peak = 200 << 20;
	rows[0].m.cow_copied = 50 << 20;
	rows[1] = (struct proc_row){ .pid = 11, .ppid = 10, .comm = "pt_data\x01worker",
				     .exited = true, .exit_code = SIGKILL, .oom_killed = true };
	rows[1].m.unknown = MBIT(M_RSS) | MBIT(M_ANON);
	rows[1].m.numa_migrated_by_reason[1] = 8192;
	rows[2] = (struct proc_row){ .pid = 12, .ppid = 10, .comm = "sh", .exited = true,
				     .exit_code = 3 << 8 };
	r->procs = rows;
	r->nprocs = 3;
	r->nexited_folded = 7;
	r->exited_folded.cow_copied = 1 << 20;
	r->dropped[1] = 3;
	r->dropped_events = report_dropped_total(r->dropped);
	r->nv_calls[0] = 2;
	r->flows_lost.zero_fill = 4096;
	r->vma_lockless_lookups = 9;
	r->has_host = true;
	r->host.known = true;
	r->host.foll_pinned = 1 << 30;
	r->host.mem_total = 16ULL << 30;
	r->host.mem.meminfo = true;
	r->host.mem.mem_free = 3ULL << 30;
	r->host.mem.hugetlb_known = true;
	r->host.uma = true;
	snprintf(r->host.uma_source, sizeof(r->host.uma_source), "test");
	r->host.nnodes = 2;
	r->host.nodes[1].node = 1;
	r->host.nodes[1].known = true;
	r->host.nodes[1].cpu_known = true;
	r->host.nodes[1].cpuless = true;
	r->host.nodes[1].mem.meminfo = true;
	r->host.nodes[1].mem.shmem = 12345;
	r->dma_attribution = true;
	r->dma_attributed = 1 << 20;
	r->mem_total = 16ULL << 30;
}

static void fill_phases(struct phases *p)
{
	static struct phase ph[2];
	static struct phase_proc pp[1];
	static struct phase_map pm[2];

	memset(p, 0, sizeof(*p));
	p->fd = p->child_fd = -1;
	p->params = 1.5e9;
	p->refused = 2;
	pp[0] = (struct phase_proc){ .pid = 10, .comm = "python3", .appeared = true };
	pp[0].d[M_ANON] = -(8 << 20);
	pp[0].unknown = MBIT(M_RSS);
	pm[0] = (struct phase_map){ .pid = 10, .change = MAP_APPEARED, .start = 0x7f0000000000,
				    .end = 0x7f0004000000, .kind = SMAPS_ANON, .size = 64 << 20,
				    .rss = 64 << 20, .size_change = 64 << 20,
				    .rss_change = 64 << 20, .freed_in = 1 };
	pm[1] = (struct phase_map){ .pid = 10, .change = MAP_VANISHED, .start = 0x1000,
				    .end = 0x2000, .kind = SMAPS_FILE, .path = "/lib/x.so",
				    .size_change = -4096, .freed_in = -1 };
	snprintf(ph[0].name, sizeof(ph[0].name), "first step");
	ph[0].start_s = 0.25;
	ph[0].end_s = 1.5;
	ph[0].procs = pp;
	ph[0].nprocs = 1;
	ph[0].totals.d[M_COW_COPIED] = 16 << 20;
	ph[0].maps = pm;
	ph[0].nmaps = 1;
	snprintf(ph[1].name, sizeof(ph[1].name), "lock");
	ph[1].start_s = 1.5;
	ph[1].end_s = 2.0;
	ph[1].maps = pm + 1;
	ph[1].nmaps = 1;
	p->done = ph;
	p->ndone = 2;
}

START_TEST(test_report_from_json)
{
	struct proc_row rows[3];
	struct phases ph, back_ph;
	struct report r, back;
	json_t *o, *o2;
	char *s1, *s2;

	fill_report(&r, rows);
	fill_phases(&ph);
	report_set_phases(&r, &ph);
	o = report_json(&r);
	ck_assert_int_eq(report_from_json(o, &back), 0);
	ck_assert_int_eq(phases_from_json(&back_ph, o), 0);
	report_set_phases(&back, &back_ph);
	back.mem_total = r.mem_total;
	ck_assert_int_eq(back.nprocs, 3);
	ck_assert(WIFSIGNALED(back.procs[1].exit_code));
	ck_assert_int_eq(WTERMSIG(back.procs[1].exit_code), SIGKILL);
	ck_assert_int_eq(WEXITSTATUS(back.procs[2].exit_code), 3);
	ck_assert_int_eq(back_ph.done[0].maps[0].freed_in, 1);
	o2 = report_json(&back);
	s1 = json_dumps(o, JSON_COMPACT);
	s2 = json_dumps(o2, JSON_COMPACT);
	ck_assert_str_eq(s2, s1);
	free(s1);
	free(s2);
	json_decref(o2);
	phases_free(&back_ph);
	report_free(&back);
	json_decref(o);
}
END_TEST

/*
 * The phase table's TOTAL is the cgroup's change over the phase, not a sum
 * of its rows, and says so in its label (issue 41: worker rows of +794 MiB
 * over an unlabelled TOTAL of -262 MiB).
 */
START_TEST(test_phase_total_labelled)
{
	struct phases ph;
	char *text = NULL, *total;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fill_phases(&ph);
	ph.done[0].procs[0].d[M_RSS] = 794 << 20;
	ph.done[0].procs[0].unknown = 0;
	ph.done[0].totals.d[M_RSS] = -(262 << 20);
	print_phases_plain(f, &ph);
	fclose(f);
	total = strstr(text, "   TOTAL ");
	ck_assert_msg(total && !strncmp(total + 9, "(cgroup change)", 15), "%s", text);
	ck_assert_msg(strstr(total, "-262 MiB"), "%s", text);
	free(text);
}
END_TEST

START_TEST(test_report_from_json_refused)
{
	static const char *const bad[] = {
		"{}", "[]", "{\"schema\":\"other/v1\",\"command\":\"run\"}",
		"{\"schema\":\"memacct.report/v1\",\"command\":\"run\",\"cgroup\":{}}",
	};
	struct report r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *o = json_loads(bad[i], 0, NULL);

		ck_assert_int_eq(report_from_json(o, &r), -EINVAL);
		report_free(&r);
		json_decref(o);
	}
}
END_TEST

/*
 * report --html over snapshots of many processes (issue 41 item 6: each
 * row's series was found by a walk of every series): each process keeps
 * its own series, a pid reused by another comm is another process, and
 * the 8 lines drawn are the 8 largest peaks. 20,000 processes in 3
 * snapshots, then the pid of the largest reused by another comm.
 */
START_TEST(test_html_many_processes)
{
	enum { N = 20000 };
	struct html_doc *d = html_new();
	struct report r;
	json_t *hdr = json_pack("{s:s, s:s}", "command", "run", "start_iso", "2026-11-29T00:00:00Z");
	char *text = NULL, want[64];
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_nonnull(d);
	memset(&r, 0, sizeof(r));
	r.procs = calloc(N, sizeof(*r.procs));
	ck_assert_ptr_nonnull(r.procs);
	r.nprocs = N;
	for (int snap = 1; snap <= 3; snap++) {
		r.elapsed_s = snap;
		for (int i = 0; i < N; i++) {
			r.procs[i].pid = i + 1;
			snprintf(r.procs[i].comm, sizeof(r.procs[i].comm), "w%d", i + 1);
			/* peaks: pid N largest, at the second snapshot */
			r.procs[i].m.rss = (uint64_t)(i + 1) * 4096 * (snap == 2 ? 3 : snap);
		}
		if (snap == 3) {	/* pid N exec'd: another comm, a small RSS */
			snprintf(r.procs[N - 1].comm, sizeof(r.procs[N - 1].comm), "exec'd");
			r.procs[N - 1].m.rss = 4096;
		}
		ck_assert_int_eq(html_add(d, &r, snap == 3 ? "final" : "interval"), 0);
	}
	f = open_memstream(&text, &len);
	ck_assert_int_eq(html_write(d, f, hdr), 0);
	fclose(f);
	/* the 8 largest peaks: pids N..N-7, each as the "w" process it was */
	for (int k = 0; k < 8; k++) {
		snprintf(want, sizeof(want), "\"><title>PID %d (w%d) RSS", N - k, N - k);
		ck_assert_msg(strstr(text, want), "no line '%s'", want);
	}
	snprintf(want, sizeof(want), "PID %d (w%d) RSS", N - 8, N - 8);
	ck_assert_msg(!strstr(text, want), "a 9th line: %s", want);
	ck_assert_msg(!strstr(text, "(exec&#39;d) RSS") && !strstr(text, "(exec'd) RSS"),
		      "the exec'd process drawn as one of the largest");
	free(text);
	free(r.procs);
	json_decref(hdr);
	html_free(d);
}
END_TEST

/*
 * A daemon's log replayed for a cgroup (report --cgroup): the daemon
 * samples no memory.stat peaks, and a kernel without memory.peak gives no
 * charge peak: "unknown", not a 0 under the charge, and no footnote about
 * 250 ms samples (issue 41 item 8).
 */
START_TEST(test_replayed_peaks_unknown)
{
	struct proc_row rows[3];
	struct report r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	fill_report(&r, rows);
	r.totals.unknown |= MBIT(M_RSS_PEAK) | MBIT(M_ANON_PEAK) | MBIT(M_FILE_PEAK) |
			    MBIT(M_SHMEM_PEAK) | MBIT(M_RECLAIMABLE_PEAK);
	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	ck_assert_msg(strstr(text, "(peak unknown); reclaimable page cache") &&
		      strstr(text, "(peak* unknown); anon peak* unknown"), "%s", text);
	ck_assert_msg(!strstr(text, "every 250 ms"), "the samples' footnote:\n%s", text);
	free(text);
	/* sampled: the figures and the footnote */
	r.totals.unknown &= ~(MBIT(M_RSS_PEAK) | MBIT(M_ANON_PEAK) | MBIT(M_RECLAIMABLE_PEAK));
	text = NULL;
	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	ck_assert_msg(strstr(text, "every 250 ms") && !strstr(text, "unknown); anon"), "%s", text);
	free(text);
}
END_TEST

/* the y of the top edge (@top) or the bottom edge of class @cls's area at
 * its @i-th of @n points, from the path's "M x,y L ..." (top edge left to
 * right, then the bottom edge right to left) */
static double area_y(const char *html, const char *cls, size_t i, size_t n, bool top)
{
	char key[64];
	const char *p;
	size_t want = top ? i : 2 * n - 1 - i;
	double x, y = -1;

	snprintf(key, sizeof(key), "data-class=\"%s\"", cls);
	p = strstr(html, key);
	ck_assert_msg(p, "no area %s", cls);
	p = strstr(p, " d=\"") + 4;
	for (size_t k = 0; k <= want; k++) {
		ck_assert_int_eq(sscanf(p + 1, "%lf,%lf", &x, &y), 2);
		p = strchr(p + 1, ' ') + 1;
	}
	return y;
}

/*
 * The picture (issue 41 item 4): a parent and four identical workers that
 * copy 40 MiB each, then exit. CoW-copied is what the live processes copied:
 * drawn while the workers live, gone once they exit (it drew the parent's
 * memory as CoW, the cgroup's flow since the start); the four coinciding
 * worker lines dashed in turns; a phase too narrow for its name shows its
 * number, and the names below the timeline.
 */
START_TEST(test_html_picture)
{
	struct html_doc *d = html_new();
	struct proc_row rows[5];
	struct report r;
	struct phases ph;
	struct phase done[2];
	json_t *hdr = json_pack("{s:s, s:s}", "command", "run", "start_iso", "2026-11-29T00:00:00Z");
	char *text = NULL, want[96];
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_nonnull(d);
	memset(&r, 0, sizeof(r));
	memset(done, 0, sizeof(done));
	r.procs = rows;
	r.nprocs = 5;
	for (int snap = 1; snap <= 3; snap++) {
		memset(rows, 0, sizeof(rows));
		r.elapsed_s = snap;
		rows[0] = (struct proc_row){ .pid = 10, .comm = "python3" };
		rows[0].m.rss = rows[0].m.anon = 100 << 20;
		for (int w = 1; w <= 4; w++) {
			rows[w] = (struct proc_row){ .pid = 10 + w, .comm = "pt_data_worker",
						     .exited = snap == 3 };
			rows[w].m.rss = snap == 1 ? 60 << 20 : 100 << 20;
			rows[w].m.cow_copied = snap == 1 ? 0 : 40 << 20;
		}
		/* the cgroup: the workers' copies on top of the shared pages,
		 * its CoW flow stays at 160 MiB once they are gone */
		r.totals.anon = r.totals.usage = snap == 2 ? 260 << 20 : 100 << 20;
		r.totals.cow_copied = snap == 1 ? 0 : 160 << 20;
		if (snap == 3) {
			snprintf(done[0].name, sizeof(done[0].name), "epoch");
			done[0].start_s = 0;
			done[0].end_s = 2.9;
			snprintf(done[1].name, sizeof(done[1].name), "cleanup");
			done[1].start_s = 2.9;
			done[1].end_s = 2.91;
			memset(&ph, 0, sizeof(ph));
			ph.fd = ph.child_fd = -1;
			ph.done = done;
			ph.ndone = 2;
			r.phases = &ph;
		}
		ck_assert_int_eq(html_add(d, &r, snap == 3 ? "final" : "interval"), 0);
	}
	f = open_memstream(&text, &len);
	ck_assert_int_eq(html_write(d, f, hdr), 0);
	fclose(f);
	/* CoW: 160 MiB thick while the workers live, nothing once they exited */
	ck_assert(area_y(text, "CoW-copied", 1, 3, true) < area_y(text, "CoW-copied", 1, 3, false));
	ck_assert_msg(area_y(text, "CoW-copied", 2, 3, true) == area_y(text, "CoW-copied", 2, 3, false),
		      "CoW drawn after the workers exited");
	/* four coinciding lines, one dash of each colour in turn */
	for (int w = 0; w < 4; w++) {
		snprintf(want, sizeof(want), "data-pid=\"%d\" stroke=\"", 11 + w);
		ck_assert_msg(strstr(text, want), "no line of pid %d", 11 + w);
		snprintf(want, sizeof(want), "stroke-dasharray=\"6,18\" stroke-dashoffset=\"%d\"",
			 6 * w);
		ck_assert_msg(strstr(text, want), "no dash '%s'", want);
	}
	ck_assert_msg(strstr(text, "pt_data_worker (1 of 4 identical lines)"), "legend");
	{	/* the parent's line is its own: solid */
		const char *a = strstr(text, "data-pid=\"10\""), *b = a ? strstr(a, "points") : NULL;

		ck_assert_msg(a && b && !memmem(a, b - a, "dasharray", 9), "the parent dashed");
	}
	/* "cleanup" is 10 ms of 2.91 s: its number, its name below */
	ck_assert_msg(strstr(text, ">epoch</text>"), "the wide band's name");
	ck_assert_msg(!strstr(text, ">cleanup</text>") && !strstr(text, ">clea"),
		      "a narrow band's name cut");
	ck_assert_msg(strstr(text, "Narrow phases: 2 cleanup"), "no key of the narrow phases");
	free(text);
	json_decref(hdr);
	r.phases = NULL;
	html_free(d);
}
END_TEST

Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");

	tcase_add_test(tc, test_diff_apply);
	tcase_add_test(tc, test_report_from_json);
	tcase_add_test(tc, test_report_from_json_refused);
	tcase_add_test(tc, test_phase_total_labelled);
	tcase_add_test(tc, test_html_many_processes);
	tcase_add_test(tc, test_html_picture);
	tcase_add_test(tc, test_replayed_peaks_unknown);
	suite_add_tcase(s, tc);
	return s;
}
