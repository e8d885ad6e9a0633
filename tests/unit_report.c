// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* unit_report.c - report printers (JSON escaping, table width) and zoneinfo. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "bpf_loader.h"
#include "check_util.h"
#include "cow_maps.h"
#include "explain.h"
#include "explain_print.h"
#include "fill.h"
#include "jsonw.h"
#include "metric_table.h"
#include "metrics.h"
#include "output_om.h"
#include "page_cache.h"
#include "report.h"
#include "report_print.h"
#include "table.h"
#include "util.h"

static struct report *sample_report(const char *comm)
{
	static struct proc_row rows[2];
	static struct report r;

	memset(&r, 0, sizeof(r));
	memset(rows, 0, sizeof(rows));
	r.command = "run";
	snprintf(r.cg.rel, sizeof(r.cg.rel), "/memacct-run-1");
	snprintf(r.cg.path, sizeof(r.cg.path), "/sys/fs/cgroup/memory/memacct-run-1");
	r.cg.id = 42;
	r.cg.version = 1;
	r.has_exit_status = true;
	rows[0].pid = 4194304;
	rows[0].ppid = 1;
	snprintf(rows[0].comm, sizeof(rows[0].comm), "%s", comm);
	rows[0].exited = true;
	rows[0].m.rss = 1023ULL << 30;
	rows[0].m.rss_peak = 999ULL << 40;
	rows[0].m.cow_copied = 25ULL << 20;
	rows[0].m.pinned = 1;
	rows[1].pid = 7;
	snprintf(rows[1].comm, sizeof(rows[1].comm), "python3");
	rows[1].m.anon = 12345678;
	r.procs = rows;
	r.nprocs = 2;
	r.totals.cow_copied = 25ULL << 20;
	r.dropped[MEMACCT_DROP_RINGBUF_FULL] = 3;
	r.dropped[MEMACCT_DROP_TASK_STORAGE] = 2;
	r.dropped[MEMACCT_DROP_COW_MAPS] = 454;
	r.dropped_events = report_dropped_total(r.dropped);
	return &r;
}

/* Every byte a hostile comm may hold survives a JSON round trip. */
START_TEST(test_json_hostile_comm)
{
	const char hostile[] = "a\"b\\c\n\t\x01\x1f\x7f\xff\xc3(";
	struct report *r = sample_report(hostile);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	json_t *j, *p;
	const char *comm;

	print_report_json(f, r);
	fclose(f);
	ck_assert_msg(strchr(text, '\n') == text + len - 1, "one line: %s", text);
	/* C0 controls escaped, non-ASCII as \uXXXX (DEL is legal JSON) */
	for (size_t i = 0; i + 1 < len; i++)
		ck_assert_msg((unsigned char)text[i] >= 0x20 && (unsigned char)text[i] <= 0x7f,
			      "raw byte 0x%02x at %zu", (unsigned char)text[i], i);
	j = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(j);
	p = json_array_get(json_object_get(j, "processes"), 0);
	comm = json_string_value(json_object_get(p, "comm"));
	/* valid bytes kept, invalid UTF-8 (0xff, truncated 0xc3) as U+FFFD */
	ck_assert_str_eq(comm, "a\"b\\c\n\t\x01\x1f\x7f\xef\xbf\xbd\xef\xbf\xbd(");
	ck_assert_int_eq(json_integer_value(json_object_get(p, "cow_copied_bytes")), 25 << 20);
	/* ringbuf_full kept its record, cow_map_full its copies: by cause,
	 * never in the events lost (D20) */
	ck_assert_int_eq(json_integer_value(json_object_get(j, "dropped_events")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
			 "dropped_events_by_cause"), "cow_map_full")), 454);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
			 "dropped_events_by_cause"), "ringbuf_full")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "memacct.report/v1");
	json_decref(j);
	free(text);
}

/*
 * CSV as RFC 4180 has it: a header of names, CRLF line ends, a field with a
 * comma, a quote, a line break or a blank at an end quoted (quotes doubled),
 * NULL as an empty field; --raw with --csv refused.
 */
START_TEST(test_table_csv)
{
	static const struct table_col cols[] = {
		{ "PID", "PID", 7, false, "" }, { "COMM", "COMM", 15, true, "" },
		{ "RSS", "RSS", 8, false, "" },
	};
	static const int sel[] = { 0, 1, 2 };
	const char *cells[] = {
		"7", "a,b", "4096",
		"8", "say \"hi\"", NULL,
		"9", " lead", "1",
		"10", "two\nlines", "2",
	};
	struct table_opts o = { 0 };
	char *text;
	size_t len;
	FILE *f;

	f = open_memstream(&text, &len);
	ck_assert_int_eq(table_print_csv(f, cols, 3, sel, 3, cells, 4, true), 0);
	fclose(f);
	ck_assert_str_eq(text, "PID,COMM,RSS\r\n7,\"a,b\",4096\r\n8,\"say \"\"hi\"\"\",\r\n"
			       "9,\" lead\",1\r\n10,\"two\nlines\",2\r\n");
	free(text);
	f = open_memstream(&text, &len);
	ck_assert_int_eq(table_print_csv(f, cols, 3, sel + 1, 1, cells, 1, false), 0);
	fclose(f);
	ck_assert_str_eq(text, "\"a,b\"\r\n");
	free(text);
	ck_assert_int_eq(table_getopt(OPT_TABLE_CSV, NULL, cols, 3, &o), 0);
	ck_assert(o.csv);
	ck_assert_int_eq(table_getopt(OPT_TABLE_RAW, NULL, cols, 3, &o), -EINVAL);
}
END_TEST
END_TEST

START_TEST(test_json_sanitized_utf8)
{
	json_t *j = json_string_sanitized("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xed\xa0\x80");

	/* é, €, an emoji kept; a UTF-16 surrogate (ED A0 80) is invalid */
	ck_assert_str_eq(json_string_value(j),
			 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(j);
}
END_TEST

/* Tables fit 100 columns and show no raw control bytes. */
/*
 * D10: two cgroups whose paths differ only past byte 1,019 (six 200-byte
 * components, then leaf-one / leaf-two) are two series, each with its whole
 * path as the label value, in both text formats.
 */
START_TEST(test_long_labels_distinct)
{
	char path[2][1400], *p;
	size_t off = 0;

	for (int c = 0; c < 6; c++) {
		path[0][off++] = '/';
		memset(path[0] + off, 'a' + c, 200);
		off += 200;
	}
	path[0][off] = '\0';
	memcpy(path[1], path[0], off);
	memcpy(path[1] + off, "/leaf-two", 10);
	memcpy(path[0] + off, "/leaf-one", 10);
	for (int om = 0; om < 2; om++) {
		struct mbuf b;
		const char *text;

		mbuf_init(&b, om);
		metrics_family(&b, "memacct_usage_bytes", MT_GAUGE, "bytes", "test");
		for (int i = 0; i < 2; i++) {
			struct mlabel l = { "cgroup", path[i] };

			metrics_sample_u64(&b, &l, 1, 4096);
		}
		text = metrics_end(&b);
		for (int i = 0; i < 2; i++) {
			char want[3000];

			snprintf(want, sizeof(want), "memacct_usage_bytes{cgroup=\"%s\"} 4096\n", path[i]);
			p = strstr(text, want);
			ck_assert_msg(p, "series of %s cut (%zu bytes of label)", path[i] + 1000,
				      strlen(path[i]));
		}
		mbuf_free(&b);
	}
}
END_TEST

/* The footnotes under the first report and the final one, not under
 * every --interval report (issue 41: attach repeated five lines). */
START_TEST(test_footnotes_once)
{
	struct report *r = sample_report("python3");
	char *text, *at;
	size_t len;
	int n = 0;
	FILE *f;

	r->command = "attach";
	f = open_memstream(&text, &len);
	for (int i = 0; i < 4; i++) {
		r->final = i == 3;
		print_report_plain(f, r);
	}
	fclose(f);
	for (at = text; (at = strstr(at, "TOTAL (cgroup): the cgroup's own")); at++)
		n++;
	ck_assert_msg(n == 2, "%d footnotes in 4 reports (3 interval, 1 final):\n%s", n, text);
	ck_assert_ptr_nonnull(strstr(strstr(text, ", final\n"), "since attach"));
	free(text);
}
END_TEST

START_TEST(test_table_width)
{
	struct report *r = sample_report("evil\033[2Jname-that-is-long");
	char *text, *line, *save;
	size_t len;
	FILE *f;

	for (int numa = 0; numa < 2; numa++) {
		r->numa_multi = numa;
		f = open_memstream(&text, &len);
		print_report_plain(f, r);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(text, "1023 GiB"));
		ck_assert_ptr_nonnull(strstr(text, "25.0 MiB"));
		ck_assert_ptr_nonnull(strstr(text, "4194304x"));
		ck_assert_ptr_nonnull(strstr(text, numa ? "REMOTE" : "ZEROFILL"));
		ck_assert_ptr_nonnull(strstr(text, "WARNING: 2 events"));
		/* the cause is named, and where it is explained */
		ck_assert_ptr_nonnull(strstr(text, "task_storage 2 (causes: memacct(1)"));
		/* ringbuf_full loses a row, no flow: a note, not among the warnings (D20) */
		ck_assert_ptr_null(strstr(text, "ringbuf_full 3"));
		ck_assert_ptr_nonnull(strstr(text, "NOTE: 3 exited processes have no row"));
		/* cow_map_full loses a mapping's name, no copy: a note too */
		ck_assert_ptr_null(strstr(text, "cow_map_full 454"));
		ck_assert_ptr_nonnull(strstr(text, "NOTE: 454 batches of CoW copies"));
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			ck_assert_msg(strlen(line) <= 100, "%zu columns: %s", strlen(line), line);
			for (const char *c = line; *c; c++)
				ck_assert_msg((unsigned char)*c >= 0x20, "control byte in: %s", line);
		}
		free(text);
	}
}
END_TEST

START_TEST(test_zoneinfo_one_node)
{
	struct memacct_node_range r[MEMACCT_MAX_NODE_RANGES];
	char *text = load_data("zoneinfo_1node");
	int nodes = 0, n = parse_zoneinfo(text, r, MEMACCT_MAX_NODE_RANGES, &nodes);

	ck_assert_int_ge(n, 3);
	ck_assert_int_eq(nodes, 1);
	ck_assert_int_eq(r[0].start_pfn, 1);
	ck_assert_int_eq(r[0].end_pfn, 4096);
	ck_assert_int_eq(r[1].start_pfn, 4096);
	ck_assert_int_eq(r[1].end_pfn, 4096 + 1044480);
	free(text);
}
END_TEST

START_TEST(test_zoneinfo_two_nodes)
{
	struct memacct_node_range r[MEMACCT_MAX_NODE_RANGES];
	char *text = load_data("zoneinfo_2node");
	int nodes = 0, n = parse_zoneinfo(text, r, MEMACCT_MAX_NODE_RANGES, &nodes);

	ck_assert_int_eq(n, 3);		/* empty zones left out */
	ck_assert_int_eq(nodes, 2);
	ck_assert_int_eq(r[2].node, 1);
	ck_assert_int_eq(r[2].start_pfn, 262144);
	ck_assert_int_eq(r[2].end_pfn, 524288);
	ck_assert_int_eq(parse_zoneinfo(text, r, 2, &nodes), -E2BIG);
	free(text);
}
END_TEST

/*
 * The CoW verdict's mapping (issue 42): 2 workers of a parent copied from
 * its two anonymous mappings (64 + 32 MiB resident: one group, the
 * anonymous mappings together) and its heap (8 MiB); the group holding most
 * of the copies is named, with the worst case (its resident bytes × 2), in
 * the text and in verdict_details[].mapping. cowm_rows() joins slots with
 * the parent's mappings: largest first, the parent's path and resident
 * bytes, a slot the parent does not hold without them.
 */
START_TEST(test_verdict_cow_mapping)
{
	static struct proc_row rows[3];
	static struct cow_mapping maps[6];
	struct cowm_vma par[2] = {
		{ .pid = 100, .as_parent = true, .start = 0x10000, .end = 0x20000, .rss = 0x8000,
		  .path = "[heap]" },
		{ .pid = 100, .as_parent = true, .start = 0x7000000, .end = 0x8000000,
		  .rss = 0x1000000 },
	};
	struct cowm_catalog cat = { .v = par, .n = 2, .cap = 2 };
	struct memacct_cow_maps cm = { 0 };
	struct cow_mapping out[MEMACCT_COW_MAPS];
	struct report r = { 0 };
	struct verdict v[4];
	json_t *j, *m;
	char *text;
	size_t len, n;
	FILE *f;

	cm.m[3] = (struct memacct_cow_map){ 0x10000 | MEMACCT_COW_KIND_HEAP, 0x20000, 2 };
	cm.m[9] = (struct memacct_cow_map){ 0x7000000 | MEMACCT_COW_KIND_ANON, 0x8000000, 5 };
	cm.m[20] = (struct memacct_cow_map){ 0x9000000 | MEMACCT_COW_KIND_ANON, 0x9100000, 1 };
	n = cowm_rows(&cat, 101, 100, &cm, 4096, out);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(out[0].start, 0x7000000);
	ck_assert_uint_eq(out[0].bytes, 5 * 4096);
	ck_assert(out[0].has_parent && out[0].parent_rss == 0x1000000 && !out[0].path);
	ck_assert_str_eq(cowm_kind_name(&out[1]), "heap");
	ck_assert_str_eq(out[1].path, "[heap]");
	ck_assert(!out[2].has_parent);	/* the parent does not hold it */

	r.command = "run";
	r.final = true;
	r.procs = rows;
	r.nprocs = 3;
	r.has_cowm = true;
	r.cowm = maps;
	r.ncowm = 6;
	rows[0] = (struct proc_row){ .pid = 100, .ppid = 1, .comm = "loader" };
	rows[0].m.rss_peak = 200ULL << 20;
	for (int i = 1; i <= 2; i++) {
		rows[i] = (struct proc_row){ .pid = 100 + i, .ppid = 100, .comm = "loader",
					     .cowm_first = 3 * (i - 1), .cowm_n = 3 };
		rows[i].m.cow_copied = 60ULL << 20;
		maps[3 * (i - 1)] = (struct cow_mapping){ .start = 0x7000000, .bytes = 40ULL << 20,
							  .kind = MEMACCT_COW_KIND_ANON,
							  .has_parent = true,
							  .parent_rss = 64ULL << 20 };
		maps[3 * (i - 1) + 1] = (struct cow_mapping){ .start = 0x9000000,
							      .bytes = 12ULL << 20,
							      .kind = MEMACCT_COW_KIND_ANON,
							      .has_parent = true,
							      .parent_rss = 32ULL << 20 };
		maps[3 * (i - 1) + 2] = (struct cow_mapping){ .start = 0x10000,
							      .bytes = 8ULL << 20,
							      .kind = MEMACCT_COW_KIND_HEAP,
							      .has_parent = true,
							      .parent_rss = 8ULL << 20 };
	}
	ck_assert_int_eq(report_verdicts(&r, v, 4), 1);
	ck_assert_str_eq(v[0].map_kind, "anon");
	ck_assert_str_eq(v[0].map_name, "anonymous mappings (2)");
	ck_assert_uint_eq(v[0].map_copied, 104ULL << 20);
	ck_assert_uint_eq(v[0].map_parent_rss, 96ULL << 20);
	ck_assert_uint_eq(v[0].worst_bytes, 192ULL << 20);
	ck_assert_msg(strstr(v[0].text, "most of it from the parent's anonymous mappings (2), "
				       "96.0 MiB resident, copied 54% by each on average so far; "
				       "at most 192 MiB if every child copies all of it"),
		      "%s", v[0].text);
	f = open_memstream(&text, &len);
	print_report_json(f, &r);
	fclose(f);
	j = json_loads(text, 0, NULL);
	free(text);
	m = json_object_get(json_array_get(json_object_get(j, "verdict_details"), 0), "mapping");
	ck_assert_int_eq(json_integer_value(json_object_get(m, "worst_case_bytes")), 192LL << 20);
	ck_assert_int_eq(json_array_size(json_object_get(json_array_get(json_object_get(j,
		"processes"), 1), "cow_by_mapping")), 3);
	json_decref(j);
}
END_TEST

/*
 * The parent's resident bytes of a mapping come from a read of its smaps at
 * a child's copies, never from the read made for the parent's own copies
 * while it still filled the mapping (the CI of stop 55: TCG guests' parents,
 * sampled mid-fill, gave their workers 9-75% of the Rss). The parent here
 * copies 16 of 64 pages, is read for those, fills all 64 and forks: the
 * child's row has the 64.
 */
START_TEST(test_cowm_parent_read_after_fork)
{
	const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), npg = 64;
	struct memacct_cow_maps own = { 0 }, kid = { 0 };
	struct cow_mapping out[MEMACCT_COW_MAPS];
	struct cowm_catalog cat = { 0 };
	char *buf, *area;
	int hold[2];
	pid_t pid;

	/* a VMA of its own: a PROT_NONE page either side (not merged) */
	area = mmap(NULL, (npg + 2) * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(area != MAP_FAILED);
	buf = area + pg;
	ck_assert_int_eq(mprotect(buf, npg * pg, PROT_READ | PROT_WRITE), 0);
	memset(buf, 1, 16 * pg);
	own.m[0] = (struct memacct_cow_map){ (uint64_t)(uintptr_t)buf | MEMACCT_COW_KIND_ANON,
					     (uint64_t)(uintptr_t)buf + npg * pg, 16 };
	ck_assert_int_eq(cowm_catalog_note(&cat, getpid(), 1, &own), 1);
	ck_assert_uint_eq(cowm_rows(&cat, getpid(), 1, &own, pg, out), 1);
	ck_assert(!out[0].has_parent);
	memset(buf, 2, npg * pg);
	ck_assert_int_eq(pipe(hold), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		char c;

		close(hold[1]);
		_exit(read(hold[0], &c, 1) < 0);
	}
	close(hold[0]);
	kid.m[5] = own.m[0];
	kid.m[5].pages = 8;
	ck_assert_int_eq(cowm_catalog_note(&cat, pid, getpid(), &kid), 1);
	ck_assert_uint_eq(cowm_rows(&cat, pid, getpid(), &kid, pg, out), 1);
	ck_assert(out[0].has_parent);
	ck_assert_uint_eq(out[0].parent_rss, npg * pg);
	ck_assert_uint_eq(out[0].bytes, 8 * pg);
	close(hold[1]);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	cowm_catalog_free(&cat);
	munmap(area, (npg + 2) * pg);
}
END_TEST

/*
 * Verdicts of a final report: a parent and 4 Python workers that copied
 * 300 MiB each of its 640 MiB; 1 GiB of a 1.5 GiB peak charge reclaimable;
 * 3 GiB pinned of 16 GiB RAM. Below the thresholds: nothing said.
 */
START_TEST(test_verdicts)
{
	static struct proc_row rows[6];
	struct report r = { 0 };
	struct verdict v[16];
	char *text;
	size_t len;
	FILE *f;
	json_t *j, *d;
	int n;

	memset(rows, 0, sizeof(rows));
	r.command = "run";
	r.final = true;
	r.procs = rows;
	r.nprocs = 6;
	r.mem_total = 16ULL << 30;
	rows[0].pid = 100;
	rows[0].ppid = 1;
	snprintf(rows[0].comm, sizeof(rows[0].comm), "python3");
	rows[0].m.rss_peak = 640ULL << 20;
	for (int i = 1; i <= 4; i++) {
		rows[i].pid = 100 + i;
		rows[i].ppid = 100;
		snprintf(rows[i].comm, sizeof(rows[i].comm), "python3");
		rows[i].m.cow_copied = 300ULL << 20;
	}
	rows[5].pid = 200;	/* a child of nobody in the report: not a fork family */
	rows[5].ppid = 1;
	rows[5].m.cow_copied = 1ULL << 30;
	rows[5].m.pinned_peak = 3ULL << 30;
	r.totals.rss_peak = 1536ULL << 20;
	r.totals.reclaimable_peak = 1ULL << 30;
	r.totals.pinned_peak = 3ULL << 30;

	n = report_verdicts(&r, v, 16);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(v[0].kind, "cow_blowup");
	ck_assert_int_eq(v[0].pid, 100);
	ck_assert_int_eq(v[0].processes, 4);
	ck_assert_uint_eq(v[0].bytes, 1200ULL << 20);
	ck_assert_uint_eq(v[0].of_bytes, 640ULL << 20);
	ck_assert_msg(strstr(v[0].text, "4 workers (PIDs 101..104) of python3 100 copied 1.17 GiB") &&
		      strstr(v[0].text, "300 MiB each, 47% of the parent's 640 MiB peak RSS") &&
		      strstr(v[0].text, "numpy/Arrow buffers") &&
		      strstr(v[0].text, "gc.freeze() does not stop them"), "%s", v[0].text);
	ck_assert(!v[0].since_attach);
	ck_assert_str_eq(v[1].kind, "file_reclaimable");
	ck_assert_msg(strstr(v[1].text, "67% of the cgroup's 1.50 GiB peak charge"), "%s", v[1].text);
	ck_assert_str_eq(v[2].kind, "pinned");
	ck_assert_int_eq(v[2].pid, 200);
	ck_assert_msg(strstr(v[2].text, "peaked at 3.00 GiB, 19% of RAM (16.0 GiB)") &&
		      strstr(v[2].text, "over the 10-15%"), "%s", v[2].text);

	/* attach: CoW since attach; JSON verdict and verdict_details agree */
	r.command = "attach";
	f = open_memstream(&text, &len);
	print_report_json(f, &r);
	fclose(f);
	j = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_array_size(json_object_get(j, "verdict")), 3);
	d = json_array_get(json_object_get(j, "verdict_details"), 0);
	ck_assert(json_is_true(json_object_get(d, "since_attach")));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "bytes")), 1200LL << 20);
	ck_assert_msg(strstr(json_string_value(json_object_get(d, "text")), "since attach"),
		      "%s", json_string_value(json_object_get(d, "text")));
	ck_assert_str_eq(json_string_value(json_object_get(d, "text")),
			 json_string_value(json_array_get(json_object_get(j, "verdict"), 0)));
	json_decref(j);
	free(text);
	/* the table: verdicts wrapped within 100 columns, attach says since attach */
	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "Verdict: 4 workers"));
	ck_assert_ptr_nonnull(strstr(text, "COW, FILE COW, ZEROFILL, faults: since attach"));
	for (char *l = text, *e; (e = strchr(l, '\n')); l = e + 1)
		ck_assert_msg(e - l <= 100, "%.*s", (int)(e - l), l);
	free(text);

	/* below every threshold: no verdict */
	for (int i = 1; i <= 4; i++)
		rows[i].m.cow_copied = 15ULL << 20;	/* 60 MiB in all, 2% each */
	r.totals.reclaimable_peak = 100ULL << 20;	/* 6.5% */
	r.totals.pinned_peak = 1ULL << 30;		/* 6% */
	rows[5].m.pinned_peak = 0;
	ck_assert_int_eq(report_verdicts(&r, v, 16), 0);
}
END_TEST

/*
 * Verdicts at their limit (REPORT_VERDICTS_LISTED, 16 listed): 20 parents
 * each with a forked child whose CoW is half the parent's peak make 20
 * cow_blowup verdicts. report_verdicts_all() finds all 20 (no array of 16
 * inside: remote NUMA verdicts had one), the JSON lists 16 and says
 * verdicts_unlisted 4, the table 16 Verdict lines and a NOTE. They were cut
 * at 16 without a word.
 */
START_TEST(test_verdicts_unlisted)
{
	enum { PARENTS = 20 };
	static struct proc_row rows[2 * PARENTS];
	struct report r = { 0 };
	struct verdict *v;
	char *text;
	size_t len;
	int n, lines = 0;
	json_t *j;
	FILE *f;

	memset(rows, 0, sizeof(rows));
	r.command = "run";
	r.final = true;
	r.procs = rows;
	r.nprocs = 2 * PARENTS;
	r.mem_total = 64ULL << 30;
	for (int i = 0; i < PARENTS; i++) {
		rows[2 * i].pid = 1000 + 2 * i;
		rows[2 * i].ppid = 1;
		snprintf(rows[2 * i].comm, sizeof(rows[2 * i].comm), "server");
		rows[2 * i].m.rss_peak = 64ULL << 20;
		rows[2 * i + 1].pid = 1001 + 2 * i;
		rows[2 * i + 1].ppid = rows[2 * i].pid;
		snprintf(rows[2 * i + 1].comm, sizeof(rows[2 * i + 1].comm), "server");
		rows[2 * i + 1].m.cow_copied = 32ULL << 20;
	}
	n = report_verdicts_all(&r, &v);
	ck_assert_int_eq(n, PARENTS);
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(v[i].kind, "cow_blowup");
		ck_assert_int_eq(v[i].pid, 1000 + 2 * i);
	}
	free(v);

	f = open_memstream(&text, &len);
	print_report_json(f, &r);
	fclose(f);
	j = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_array_size(json_object_get(j, "verdict")), REPORT_VERDICTS_LISTED);
	ck_assert_int_eq(json_array_size(json_object_get(j, "verdict_details")),
			 REPORT_VERDICTS_LISTED);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "verdicts_unlisted")),
			 PARENTS - REPORT_VERDICTS_LISTED);
	json_decref(j);
	free(text);

	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	for (char *l = text; (l = strstr(l, "Verdict: ")); l++)
		lines++;
	ck_assert_int_eq(lines, REPORT_VERDICTS_LISTED);
	ck_assert_msg(strstr(text, "NOTE: 4 more verdicts, not listed (the first 16 are; JSON "
			      "verdicts_unlisted)"), "%s", text);
	free(text);

	/* 16 exactly: all listed, nothing unlisted, no NOTE */
	r.nprocs = 2 * REPORT_VERDICTS_LISTED;
	f = open_memstream(&text, &len);
	print_report_json(f, &r);
	fclose(f);
	j = json_loads(text, 0, NULL);
	ck_assert_int_eq(json_array_size(json_object_get(j, "verdict")), REPORT_VERDICTS_LISTED);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "verdicts_unlisted")), 0);
	json_decref(j);
	free(text);
	f = open_memstream(&text, &len);
	print_report_plain(f, &r);
	fclose(f);
	ck_assert_ptr_null(strstr(text, "more verdicts"));
	free(text);
}
END_TEST

/*
 * The run/attach table as scripts parse it: tests/data/report_table is the
 * default output of four reports (run; attach on two NUMA nodes with a
 * folded and an estimated row; --bytes; a final run with a verdict) as the
 * hand-formatted printf tables wrote it before libsmartcols. The first
 * report, whose figures fit their columns, must come out byte for byte;
 * in the others a wider figure now widens its whole column (printf pushed
 * the rest of its line right), so every line must split on blanks into the
 * same fields. On failure the text is in /tmp/memacct-report_table.actual.
 */
static void golden_reports(FILE *f)
{
	struct report *r = sample_report("worker");

	r->procs[0].exited = false;	/* every figure fits its column */
	print_report_plain(f, r);
	r->procs[0].exited = true;	/* from here on, some do not */
	r->procs[0].m.rss_peak = 99ULL << 40;	/* 15 digits: the printf tables cut 16 */
	r->command = "attach";
	r->numa_multi = true;
	r->elapsed_s = 12.25;
	r->procs[0].has_numa_peak = true;
	r->procs[0].numa_peak.home = 1;
	r->procs[0].m.remote_numa = 3ULL << 20;
	r->procs[0].m.remote_numa_alloc = 5ULL << 20;
	r->procs[1].m.numa_migrated = 4096;
	r->nexited_folded = 37;
	r->exited_folded.rss = 777;
	r->exited_folded.cow_copied = 1ULL << 30;
	r->totals.remote_numa_alloc = 5ULL << 20;
	r->totals.fault_unclassified = 8192;
	r->totals.dma_estimate = true;
	r->totals.dma_pinned = 64ULL << 20;
	r->procs[1].m.dma_estimate = true;
	r->procs[1].m.pinned = 64ULL << 20;
	print_report_plain(f, r);
	bytes_output = true;
	print_report_plain(f, r);
	bytes_output = false;
	r->command = "run";
	r->final = true;
	r->mem_total = 1ULL << 30;
	r->totals.pinned_peak = 512ULL << 20;
	r->procs[1].m.pinned_peak = 512ULL << 20;
	print_report_plain(f, r);
}

START_TEST(test_table_golden)
{
	char *text, *want = load_data("report_table");
	char *tl, *wl, *ts, *ws, *first;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	golden_reports(f);
	fclose(f);
	f = fopen("/tmp/memacct-report_table.actual", "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	/* the first report: up to the second "memacct " line */
	first = strstr(want + 1, "\nmemacct ");
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(!strncmp(text, want, first - want), "the default table changed: diff -u "
		      "tests/data/report_table /tmp/memacct-report_table.actual");
	for (tl = strtok_r(text, "\n", &ts), wl = strtok_r(want, "\n", &ws); tl && wl;
	     tl = strtok_r(NULL, "\n", &ts), wl = strtok_r(NULL, "\n", &ws)) {
		char *a = tl, *b = wl;

		for (;;) {
			a += strspn(a, " ");
			b += strspn(b, " ");
			ck_assert_msg(strcspn(a, " ") == strcspn(b, " ") &&
				      !strncmp(a, b, strcspn(a, " ")),
				      "fields differ:\n%s\n%s", tl, wl);
			if (!*a)
				break;
			a += strcspn(a, " ");
			b += strcspn(b, " ");
		}
	}
	ck_assert_msg(!tl && !wl, "not the same lines");
	free(text);
	free(want);
}
END_TEST

/*
 * --columns and --raw: names as lsblk -o takes them (any case, '-' for '_'),
 * a bad list refused whole; raw fields unpadded, a blank as \x20, headers
 * by name, and --bytes figures exact.
 */
START_TEST(test_table_columns_raw)
{
	static const struct table_col cols[] = {
		{ "PID", "PID", 7, false, "" }, { "RSS_PEAK", "RSS PEAK", 8, false, "" },
	};
	struct report *r = sample_report("my worker");
	struct table_opts o = { 0 };
	char *text;
	size_t len;
	FILE *f;

	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "rss-peak,Pid", cols, 2, &o), 0);
	ck_assert_int_eq(o.nsel, 2);
	ck_assert_int_eq(o.sel[0], 1);
	ck_assert_int_eq(o.sel[1], 0);
	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "pid,rss", cols, 2, &o), -EINVAL);
	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "pid,PID", cols, 2, &o), -EINVAL);
	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "", cols, 2, &o), -EINVAL);
	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "pid,", cols, 2, &o), -EINVAL);
	ck_assert_int_eq(table_getopt(OPT_TABLE_COLUMNS, "rss_peakx", cols, 2, &o), -EINVAL);
	ck_assert(!o.raw);
	ck_assert_int_eq(table_getopt(OPT_TABLE_RAW, NULL, cols, 2, &o), 0);
	ck_assert(o.raw);

	/* the report's own table: a bad name keeps the default */
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_COLUMNS, "pid,nope"), -EINVAL);
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_COLUMNS, "pid,comm,cow,faults,ppid"), 0);
	r->procs[1].m.page_faults = 12;
	r->procs[1].ppid = 3;
	f = open_memstream(&text, &len);
	print_report_plain(f, r);
	fclose(f);
	ck_assert_msg(strstr(text, "\n     PID COMM                 COW   FAULTS    PPID\n"
				"4194304x my worker       25.0 MiB        0       1\n"
				"       7 python3              0 B       12       3\n"
				"   TOTAL (cgroup)        25.0 MiB        0       -\n"), "%s", text);
	free(text);
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_RAW, NULL), 0);
	bytes_output = true;
	f = open_memstream(&text, &len);
	print_report_plain(f, r);
	fclose(f);
	bytes_output = false;
	/* the table alone: no line for a person a script would have to skip */
	ck_assert_str_eq(text, "PID COMM COW FAULTS PPID\n"
			 "4194304x my\\x20worker 26214400 0 1\n"
			 "7 python3 0 12 3\n"
			 "TOTAL (cgroup) 26214400 0 -\n");
	free(text);
}
END_TEST

/* Whether @name is in @text as a word of its own (not inside PINNED_VM). */
static bool has_word(const char *text, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p++)
		if ((p == text || strchr(" ,(\n", p[-1])) && strchr(" ,).\n", p[len]))
			return true;
	return false;
}

/*
 * --columns' --help names every column the option takes (those a bad name
 * lists), from the same table, in lines of at most 64 characters: a column
 * added to metric_table.h is in the help with no edit of usage.c.
 */
START_TEST(test_columns_help_every_column)
{
	const char *help = report_columns_help();
	char line[256], name[32];
	int n = 0, saved = dup(2);
	FILE *tmp = tmpfile();

	ck_assert_ptr_nonnull(tmp);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fileno(tmp), 2), 2);
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_COLUMNS, "nosuch"), -EINVAL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp))
		if (!strncmp(line, "  ", 2) && sscanf(line, "%31s", name) == 1) {
			ck_assert_msg(has_word(help, name), "--columns' help lacks %s:\n%s", name,
				      help);
			n++;
		}
	fclose(tmp);
	ck_assert_int_ge(n, 24);	/* PID, COMM, the figures, PPID, EXITED, ... */
	for (const char *l = help; *l; l += strcspn(l, "\n") + !!l[strcspn(l, "\n")])
		ck_assert_msg(strcspn(l, "\n") <= 64, "a line over 64 characters: %s", l);
}
END_TEST

/*
 * Every column of the run/attach table shows its own figure: each figure of
 * TOTAL a distinct value, the table as CSV with every column but TIME, in
 * the order --columns lists them.
 */
START_TEST(test_table_every_column)
{
	static const char head[] = "PID,COMM,RSS,RSS_PEAK,ANON,FILE,COW,FILE_COW,ZEROFILL,"
		"REMOTE,PINNED,PPID,SHMEM,MLOCKED,PINNED_VM,DMA,PINNED_PEAK,REMOTE_RSS,MIGRATED,"
		"FAULTS,MAJFLT,EXITED,ELAPSED_S\r\n";
	struct report *r = sample_report("w");
	char *text, *total;
	size_t len;
	FILE *f;

	for (int id = 0; id < M_NR; id++)
		*metric_ptr(&r->totals, id) = 1000 + id;
	r->totals.unknown = 0;
	r->totals.dma_estimate = true;	/* no ~ in CSV */
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_COLUMNS, "PID,COMM,RSS,RSS_PEAK,ANON,"
		"FILE,COW,FILE_COW,ZEROFILL,REMOTE,PINNED,PPID,SHMEM,MLOCKED,PINNED_VM,DMA,"
		"PINNED_PEAK,REMOTE_RSS,MIGRATED,FAULTS,MAJFLT,EXITED,ELAPSED_S"), 0);
	ck_assert_int_eq(report_table_getopt(OPT_TABLE_CSV, NULL), 0);
	f = open_memstream(&text, &len);
	print_report_plain(f, r);
	fclose(f);
	bytes_output = false;
	ck_assert_msg(!strncmp(text, head, strlen(head)), "%s", text);
	/* the total's PID and PPID empty, what it is in COMM (issue 41) */
	total = strstr(text, "\r\n,TOTAL (cgroup),");
	ck_assert_msg(total, "%s", text);
	ck_assert_str_eq(total + 2, ",TOTAL (cgroup),1000,1004,1001,1002,1015,1016,1017,1020,"
			 "1009,,1003,1005,1007,1011,1010,1013,1021,1024,1025,,0.000\r\n");
	free(text);
}
END_TEST

/* tests/data/vmstat_pinned: /proc/vmstat of the 6.18 host while dma_pin held
 * a 64 MiB AF_XDP UMEM (after stat_refresh); vmstat_old: the same without
 * the nr_foll_pin_* lines, as kernels before 5.7 print it. */
START_TEST(test_foll_pin_vmstat)
{
	char *text = NULL;
	uint64_t acq = 0, rel = 0;

	ck_assert_int_ge(read_file("data/vmstat_pinned", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_foll_pin(text, &acq, &rel), 0);
	ck_assert_uint_eq(acq, 598018);
	ck_assert_uint_eq(rel, 581634);
	ck_assert_uint_eq(acq - rel, 16384);	/* 64 MiB of 4 KiB pages */
	free(text);
	ck_assert_int_ge(read_file("data/vmstat_old", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_foll_pin(text, &acq, &rel), -ENOENT);
	free(text);
	/* a prefix of the key is not the key */
	ck_assert_int_eq(parse_foll_pin("nr_foll_pin_acquired_x 5\nnr_foll_pin_released 3\n",
					&acq, &rel), -ENOENT);
}
END_TEST

START_TEST(test_mem_total)
{
	char *text = NULL;
	uint64_t v = 0;

	ck_assert_int_ge(read_file("data/meminfo", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_mem_total(text, &v), 0);
	ck_assert_uint_eq(v, 24683656ULL * 1024);
	free(text);
	ck_assert_int_ge(read_file("data/node_meminfo", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_mem_total(text, &v), 0);
	ck_assert_uint_eq(v, 7431968ULL * 1024);
	free(text);
	ck_assert_int_eq(parse_mem_total("MemFree: 1 kB\n", &v), -ENOENT);
}
END_TEST

/*
 * The budget of tests/data/meminfo (the 6.18 host) and node_meminfo, each
 * figure worked out by hand from the file: unowned = 24683656 - 23225572
 * (free) - 307860 - 914068 - 12800 (LRU) - 132480 (Slab) - 0 (KReclaimable
 * - SReclaimable) - 4648 - 1456 - 34768 (PageTables, Percpu, VmallocUsed;
 * KernelStack 2272 inside it) = 50004 kB.
 */
START_TEST(test_meminfo_budget)
{
	char *text = NULL;
	struct hm_fields f;
	struct hostmem m;
	uint64_t v;

	ck_assert_int_ge(read_file("data/meminfo", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_meminfo(text, &f), 0);
	hostmem_from_fields(&m, &f, 0, true);
	ck_assert_uint_eq(m.mem_free, 23225572ULL * 1024);
	ck_assert(m.avail_known);
	ck_assert_uint_eq(m.mem_available, 23688296ULL * 1024);
	ck_assert_uint_eq(m.page_cache, (306260ULL + 325040) * 1024);
	ck_assert_uint_eq(m.reclaimable, (306260ULL + 325040 - 1948) * 1024);
	ck_assert_uint_eq(m.file_pages, (638312ULL + 1948 + 0) * 1024);
	ck_assert_uint_eq(m.unevictable, 12800ULL * 1024);
	ck_assert_uint_eq(m.mlocked, 11096ULL * 1024);
	ck_assert(m.hugetlb_known && m.rsvd_known);
	ck_assert_uint_eq(m.hugetlb, 0);
	ck_assert(m.unowned_known);
	ck_assert_uint_eq(m.unowned, 50004ULL * 1024);
	/* a kernel without Percpu (before 4.20): unknown, never a guess */
	*strstr(text, "Percpu") = 'p';
	ck_assert_int_eq(parse_meminfo(text, &f), 0);
	ck_assert_int_eq(hostmem_unowned(&f, &v), -ENOENT);
	free(text);
	/* a node: no MemAvailable, no unowned figure, HugePages_Total x the
	 * host's Hugepagesize */
	ck_assert_int_ge(read_file("data/node_meminfo", &text, 1 << 20), 0);
	ck_assert_int_eq(parse_meminfo(text, &f), 0);
	hostmem_from_fields(&m, &f, 2048, false);
	ck_assert_uint_eq(m.mem_free, 5974168ULL * 1024);
	ck_assert(!m.avail_known && !m.unowned_known && !m.rsvd_known);
	ck_assert_uint_eq(m.file_pages, 640260ULL * 1024);
	ck_assert_uint_eq(m.page_cache, (306260ULL + 325040) * 1024);
	ck_assert_uint_eq(m.shmem, 8960ULL * 1024);
	ck_assert(m.hugetlb_known);
	ck_assert_uint_eq(m.hugetlb, 0);
	free(text);
	/* "Active" is not "Active(file)", a prefix is not a key */
	ck_assert_int_eq(parse_meminfo("MemTotal: 100 kB\nActive(file): 7 kB\nMemFreeX: 3 kB\n", &f), 0);
	ck_assert(!(f.have & 1ULL << HM_ACTIVE) && !(f.have & 1ULL << HM_MEM_FREE));
	ck_assert_uint_eq(f.v[HM_ACTIVE_FILE], 7);
	ck_assert_int_eq(parse_meminfo("MemFree: 1 kB\n", &f), -ENOENT);
}
END_TEST

/* Per-CPU free pages per node from a zoneinfo text as mm/vmstat.c prints
 * it (two nodes, two CPUs, a zone with none). */
START_TEST(test_zoneinfo_pcp)
{
	static const char text[] =
		"Node 0, zone      DMA\n  pages free     3840\n  pagesets\n    cpu: 0\n"
		"              count:    0\n              high:     0\n"
		"Node 0, zone   Normal\n  pagesets\n    cpu: 0\n              count:    7403\n"
		"              high:     7569\n    cpu: 1\n              count:    12\n"
		"Node 1, zone   Normal\n  pagesets\n    cpu: 0\n              count:    5\n"
		"  node_unreclaimable:  0\n";
	uint64_t per[4], total;

	ck_assert_int_eq(parse_zoneinfo_pcp(text, per, 4, &total), 0);
	ck_assert_uint_eq(per[0], 7415);
	ck_assert_uint_eq(per[1], 5);
	ck_assert_uint_eq(per[2], 0);
	ck_assert_uint_eq(total, 7420);
	/* a node beyond @max counts in the total only */
	ck_assert_int_eq(parse_zoneinfo_pcp(text, per, 1, &total), 0);
	ck_assert_uint_eq(per[0], 7415);
	ck_assert_uint_eq(total, 7420);
	ck_assert_int_eq(parse_zoneinfo_pcp("count: 5\n", per, 4, &total), -ENOENT);
}
END_TEST

/* Unified memory from tests/data/uma/: a GB10's information file, a Jetson
 * device tree, an H100 (discrete: no), and MEMACCT_UMA both ways. */
START_TEST(test_uma_detect)
{
	char src[160];

	ck_assert(hostmem_uma("data/uma/gb10", NULL, src, sizeof(src)));
	ck_assert_msg(strstr(src, "Model NVIDIA GB10") && strstr(src, "000f:01:00.0"), "%s", src);
	ck_assert(hostmem_uma("data/uma/jetson", "", src, sizeof(src)));
	ck_assert_msg(strstr(src, "nvidia,tegra234"), "%s", src);
	ck_assert(!hostmem_uma("data/uma/h100", NULL, src, sizeof(src)));
	ck_assert_str_eq(src, "");
	ck_assert(!hostmem_uma("data/uma/none", NULL, src, sizeof(src)));
	ck_assert(hostmem_uma("data/uma/h100", "1", src, sizeof(src)));
	ck_assert_str_eq(src, "MEMACCT_UMA=1");
	ck_assert(!hostmem_uma("data/uma/gb10", "off", src, sizeof(src)));
	ck_assert_str_eq(src, "MEMACCT_UMA=off");
	/* anything else: detected as without it */
	ck_assert(hostmem_uma("data/uma/gb10", "maybe", src, sizeof(src)));
}
END_TEST

/* The UMA verdict, and the budget in JSON: nodes' MemAvailable null, a
 * CPU-less node flagged. */
START_TEST(test_host_budget_json)
{
	struct report *r = sample_report("x");
	json_t *h, *n;
	char v[512];

	r->has_host = true;
	r->host.mem_total = 128ULL << 30;
	r->host.mem = (struct hostmem){ .meminfo = true, .mem_free = 42ULL << 30,
		.avail_known = true, .mem_available = 116ULL << 30 };
	r->host.nnodes = 2;
	r->host.nodes[0] = (struct hostpin_node){ .node = 0, .cpu_known = true,
		.mem = { .meminfo = true } };
	r->host.nodes[1] = (struct hostpin_node){ .node = 1, .cpu_known = true, .cpuless = true,
		.mem = { .meminfo = true, .page_cache = 1 << 20 } };
	ck_assert(!hostmem_uma_verdict(&r->host, v, sizeof(v)));
	h = report_host_json(r);
	ck_assert(json_is_null(json_object_get(h, "unified_memory_verdict")));
	ck_assert(json_is_null(json_object_get(h, "unowned_kernel_bytes")));
	n = json_array_get(json_object_get(h, "nodes"), 1);
	ck_assert(json_is_true(json_object_get(n, "cpuless")));
	ck_assert(json_is_null(json_object_get(n, "mem_available_bytes")));
	ck_assert_int_eq(json_integer_value(json_object_get(n, "page_cache_bytes")), 1 << 20);
	json_decref(h);
	r->host.uma = true;
	ck_assert(hostmem_uma_verdict(&r->host, v, sizeof(v)));
	ck_assert_msg(strstr(v, "42.0 GiB now (MemFree)") && strstr(v, "116 GiB after reclaim") &&
		      strstr(v, "cgroup limits do not bound") &&
		      strstr(v, "memacct reclaim --cgroup CG --file-only"), "%s", v);
	h = report_host_json(r);
	ck_assert_str_eq(json_string_value(json_object_get(h, "unified_memory_verdict")), v);
	json_decref(h);
}
END_TEST

/* The daemon's budget gauges: a sample per node where the kernel gives the
 * figure, none where it does not (MemAvailable, unowned per node). */
START_TEST(test_host_budget_metrics)
{
	struct hostpin h = { .mem_total = 8ULL << 30, .uma = true, .nnodes = 2 };
	struct mbuf b;

	h.mem = (struct hostmem){ .meminfo = true, .mem_free = 4096, .avail_known = true,
		.mem_available = 8192, .unowned_known = true, .unowned = 12288 };
	h.nodes[0] = (struct hostpin_node){ .node = 0, .cpu_known = true,
		.mem = { .meminfo = true, .mem_free = 1024 } };
	h.nodes[1] = (struct hostpin_node){ .node = 2, .cpu_known = true, .cpuless = true,
		.mem = { .meminfo = true, .page_cache = 4096000 } };
	mbuf_init(&b, false);
	hostmem_metrics(&b, &h);
	ck_assert_msg(strstr(b.s, "memacct_host_mem_free_bytes 4096\n") &&
		      strstr(b.s, "memacct_host_mem_free_bytes{node=\"0\"} 1024\n") &&
		      strstr(b.s, "memacct_host_page_cache_bytes{node=\"2\"} 4096000\n") &&
		      strstr(b.s, "memacct_host_mem_available_bytes 8192\n") &&
		      !strstr(b.s, "memacct_host_mem_available_bytes{") &&
		      strstr(b.s, "memacct_host_unowned_kernel_bytes 12288\n") &&
		      !strstr(b.s, "memacct_host_unowned_kernel_bytes{") &&
		      !strstr(b.s, "memacct_host_pcp_free_bytes") &&
		      strstr(b.s, "memacct_host_node_cpuless{node=\"2\"} 1\n") &&
		      strstr(b.s, "memacct_host_node_cpuless{node=\"0\"} 0\n") &&
		      strstr(b.s, "memacct_host_unified_memory 1\n"), "%s", b.s);
	mbuf_free(&b);
}
END_TEST

/* Unknown counters are null and said so, never 0. */
START_TEST(test_host_unknown)
{
	struct report *r = sample_report("x");
	json_t *h, *n;
	char line[320];

	r->has_host = true;
	r->host.known = false;
	r->host.mem_total = 8ULL << 30;
	r->host.nnodes = 1;
	r->host.nodes[0] = (struct hostpin_node){ .node = 0, .mem_total = 8ULL << 30 };
	h = report_host_json(r);
	ck_assert(json_is_null(json_object_get(h, "foll_pinned_bytes")));
	ck_assert(json_is_null(json_object_get(h, "dma_pinned_unattributed_bytes")));
	ck_assert(json_is_false(json_object_get(h, "foll_pin_counters")));
	ck_assert_int_eq(json_integer_value(json_object_get(h, "mem_total_bytes")), 8LL << 30);
	n = json_array_get(json_object_get(h, "nodes"), 0);
	ck_assert(json_is_null(json_object_get(n, "foll_pinned_bytes")));
	json_decref(h);
	report_host_line(r, line, sizeof(line));
	ck_assert_msg(strstr(line, "DMA pins: unknown on this kernel"), "%s", line);
	ck_assert(!report_host_verdict(&r->host, line, sizeof(line)));
}
END_TEST

START_TEST(test_host_known)
{
	struct report *r = sample_report("x");
	json_t *h;
	char line[320];

	r->has_host = true;
	r->host.known = true;
	r->host.mem_total = 1000ULL << 20;
	r->host.foll_pinned = 200ULL << 20;	/* 20% */
	r->dma_attribution = true;
	r->dma_attributed = 64ULL << 20;
	h = report_host_json(r);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "foll_pinned_bytes")), 200LL << 20);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "dma_pinned_unattributed_bytes")),
			 136LL << 20);
	json_decref(h);
	ck_assert(report_host_verdict(&r->host, line, sizeof(line)));
	ck_assert_msg(strstr(line, "20.0%") && strstr(line, "over the 10-15%"), "%s", line);
	r->host.foll_pinned = 50ULL << 20;
	ck_assert(report_host_verdict(&r->host, line, sizeof(line)));
	ck_assert_msg(strstr(line, "under the 10-15%"), "%s", line);
}
END_TEST

/* Each row names its figure right: suffixes, offsets, and every BPF flow
 * word read by exactly one row (a flow added to struct memacct_flows without
 * its row fails here). */
START_TEST(test_metric_table_rows)
{
	int words[sizeof(struct memacct_flows) / sizeof(__u64)] = { 0 };
	bool offs[sizeof(struct metrics) / sizeof(uint64_t)] = { false };

	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *d = &metric_table[id];
		const char *suffix = d->flags & MF_BYTES ? "_bytes" : "_total";

		ck_assert_msg(d->key && d->help && d->source, "row %d incomplete", id);
		ck_assert_msg(strlen(d->key) > strlen(suffix) &&
			      !strcmp(d->key + strlen(d->key) - strlen(suffix), suffix),
			      "%s: a %s key ends in %s", d->key,
			      d->flags & MF_BYTES ? "bytes" : "count", suffix);
		ck_assert_msg(d->off % sizeof(uint64_t) == 0 && d->off < sizeof(struct metrics) &&
			      !offs[d->off / sizeof(uint64_t)], "%s: field reused", d->key);
		offs[d->off / sizeof(uint64_t)] = true;
		if (d->family) {
			size_t n = strlen(d->family);

			ck_assert_msg(!strncmp(d->family, "memacct_", 8) &&
				      (n < 6 || strcmp(d->family + n - 6, "_total")),
				      "%s: family name", d->family);
			ck_assert_msg(!(d->flags & MF_BYTES) ==
				      !(n > 6 && !strcmp(d->family + n - 6, "_bytes")),
				      "%s: unit suffix", d->family);
		}
		ck_assert_msg(!metric_is_bpf_flow(id) || (d->flags & MF_FLOW),
			      "%s: a BPF flow is a counter", d->key);
		for (int w = 0; metric_is_bpf_flow(id) && w < d->flow_words; w++) {
			ck_assert_int_lt(d->flow_word + w, (int)(sizeof(words) / sizeof(words[0])));
			words[d->flow_word + w]++;
		}
	}
	/* cow_kind_pages[] is read beside the table: a split of two of its
	 * rows (struct metrics cow_by_kind, user/model/fill.c) */
	for (size_t w = 0; w < MEMACCT_COW_KIND_NR; w++)
		words[offsetof(struct memacct_flows, cow_kind_pages) / sizeof(__u64) + w]++;
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		ck_assert_msg(words[w] == 1, "struct memacct_flows word %zu read by %d rows",
			      w, words[w]);
}
END_TEST

/*
 * The daemon's per-process families are gauges named memacct_process_<key>
 * (cmd/daemon.c, a TOP_PROC() row): a count's key ends in _total, which a
 * gauge must not (promtool check metrics refuses it), so only a row of
 * bytes may have one.
 */
START_TEST(test_top_proc_rows_bytes)
{
#define TOP_PROC(help)		1
#define NO_TOP_PROC		0
#define TP_ROW(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
	       top_col) { M_##id, top_proc },
	static const struct { enum metric_id id; int top_proc; } rows[] = { METRIC_ROWS(TP_ROW) };
#undef TP_ROW
#undef NO_TOP_PROC
#undef TOP_PROC
	int n = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct metric_def *d = &metric_table[rows[i].id];

		n += rows[i].top_proc;
		ck_assert_msg(!rows[i].top_proc || (d->flags & MF_BYTES),
			      "%s: a count's per-process gauge memacct_process_%s ends in _total",
			      d->key, d->key);
	}
	ck_assert_int_gt(n, 0);
}
END_TEST

/*
 * Every BPF flow a row reads is counted by the BPF side: its field of
 * struct memacct_flows is added to in one of bpf/'s units or headers (a
 * figure with an ABI word, a row and no increment would ship as an
 * unfailing 0).
 */
START_TEST(test_bpf_flows_counted)
{
#define BPF(field)		#field
#define NO_BPF			NULL
#define FC_ROW(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
	       top_col) { key, bpf },
	static const struct { const char *key, *field; } rows[] = { METRIC_ROWS(FC_ROW) };
#undef FC_ROW
#undef NO_BPF
#undef BPF
	char *src = NULL, want[128];
	size_t len = 0;
	struct dirent *de;
	int n = 0;
	FILE *all = open_memstream(&src, &len);
	DIR *d = opendir("../bpf");

	ck_assert_msg(d, "opendir ../bpf: %s (run the tests from tests/)", strerror(errno));
	while ((de = readdir(d))) {
		char name[300], *text;

		if (!strstr(de->d_name, ".bpf."))
			continue;
		snprintf(name, sizeof(name), "../../bpf/%s", de->d_name);
		text = load_data(name);
		fputs(text, all);
		free(text);
	}
	closedir(d);
	fclose(all);

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!rows[i].field)
			continue;
		snprintf(want, sizeof(want), "__sync_fetch_and_add(&f->%s", rows[i].field);
		ck_assert_msg(strstr(src, want), "%s: no '%s' in bpf/", rows[i].key, want);
		n++;
	}
	ck_assert_int_gt(n, 0);
	free(src);
}
END_TEST

/* Every row is documented: its key in docs/metrics.md and the schema, its
 * family in docs/daemon.md. */
START_TEST(test_metric_table_docs)
{
	char *metrics = load_data("../../docs/metrics.md"), *daemon = load_data("../../docs/daemon.md");
	char *schema = load_data("../../docs/memacct.report.v1.schema.json");
	char want[128];

	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *d = &metric_table[id];

		xsnprintf(want, sizeof(want), "`%s`", d->key);
		ck_assert_msg(strstr(metrics, want), "%s not in docs/metrics.md", want);
		xsnprintf(want, sizeof(want), "\"%s\"", d->key);
		ck_assert_msg(strstr(schema, want), "%s not in the JSON schema", want);
		if (!d->family)
			continue;
		xsnprintf(want, sizeof(want), "`%s%s`", d->family,
			  d->flags & MF_FLOW ? "_total" : "");
		ck_assert_msg(strstr(daemon, want), "%s not in docs/daemon.md", want);
	}
	free(metrics);
	free(daemon);
	free(schema);
}
END_TEST

/*
 * And the other way: every key in the first column of docs/metrics.md's
 * metric table is a row of the table, or one of the few figures beside the
 * rows (a flag, a split): a row removed or renamed leaves no doc behind.
 */
START_TEST(test_metric_docs_have_rows)
{
	static const char *const beside[] = { "dma_pinned_estimate", "numa_migrated_bytes_by_reason" };
	char *metrics = load_data("../../docs/metrics.md"), *line, *save, *start;
	int keys = 0;

	start = strstr(metrics, "| key | definition | source |");
	ck_assert_ptr_nonnull(start);
	for (line = strtok_r(start, "\n", &save); line && line[0] == '|';
	     line = strtok_r(NULL, "\n", &save)) {
		char *end = strchr(line + 1, '|'), *k = line;

		*end = '\0';
		while ((k = strchr(k, '`'))) {
			char *e = strchr(k + 1, '`');
			bool found = false;

			ck_assert_ptr_nonnull(e);
			*e = '\0';
			for (int id = 0; id < M_NR && !found; id++)
				found = !strcmp(metric_table[id].key, k + 1);
			for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]) && !found; i++)
				found = !strcmp(beside[i], k + 1);
			ck_assert_msg(found, "docs/metrics.md documents `%s`, which no row of "
				      "user/model/metric_table.h has", k + 1);
			keys++;
			k = e + 1;
		}
	}
	ck_assert_int_ge(keys, M_NR);
	free(metrics);
}
END_TEST

/*
 * Every per-cgroup family the daemon writes (om_cgroup_families(): the
 * table's rows and the limit, peak and pressure families beside them) is
 * in docs/daemon.md, written as a series is there; a cgroup that has every
 * figure gets a sample of each, and one removed since the walk none.
 */
START_TEST(test_cgroup_families_docs)
{
	char *daemon = load_data("../../docs/daemon.md");
	struct cgi c[2] = { 0 };
	const char *text, *l;
	struct mbuf b;
	int n = 0;

	c[0] = (struct cgi){ .id = 1, .rel = "/", .wanted = true, .st_ok = true,
			     .st = { .peak = 4096, .has_peak = true },
			     .bounds = { .max = 8192, .high = 4096, .psi_some_us = 1500000,
					 .psi_full_us = 250000, .has_max = true, .has_high = true,
					 .has_psi = true } };
	c[0].parts.usage = 8192;
	c[0].parts.part[MEMCG_PART_SHMEM] = 8192;
	c[0].parts.working_set_reclaimable = 4096;
	c[0].has_eta = true;
	c[0].oom_eta_s = 42.5;
	c[0].oom_grows = FC_SHMEM;
	c[1] = c[0];
	c[1].id = 2;
	c[1].rel = "/gone";
	c[1].wanted = false;	/* collect(): removed between the walk and the read */
	mbuf_init(&b, false);
	om_cgroup_families(&b, c, 2, false);
	text = metrics_end(&b);
	for (l = text; (l = strstr(l, "# TYPE ")); l++) {
		char name[128], want[140], *p;
		size_t len = strcspn(l + 7, " ");

		ck_assert_uint_lt(len, sizeof(name));
		memcpy(name, l + 7, len);
		name[len] = '\0';
		xsnprintf(want, sizeof(want), "`%s", name);
		for (p = strstr(daemon, want); p; p = strstr(p + 1, want))
			if (p[strlen(want)] == '`' || p[strlen(want)] == '{')
				break;
		ck_assert_msg(p, "%s not in docs/daemon.md", want);
		n++;
	}
	ck_assert_int_gt(n, 20);
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_limit_bytes{cgroup=\"/\"} 8192\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_high_bytes{cgroup=\"/\"} 4096\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_peak_bytes{cgroup=\"/\"} 4096\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_pressure_waiting_seconds_total"
				     "{cgroup=\"/\"} 1.5\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_pressure_stalled_seconds_total"
				     "{cgroup=\"/\"} 0.25\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_memory_part_bytes{cgroup=\"/\",part=\"shmem\"} "
				     "8192\n"));
	ck_assert_ptr_null(strstr(text, "part=\"anon\""));	/* from its first byte */
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_working_set_reclaimable_bytes{cgroup=\"/\"} "
				     "4096\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemacct_oom_eta_seconds{cgroup=\"/\",class=\"shmem\"} "
				     "42.5\n"));
	ck_assert_ptr_null(strstr(text, "\"/gone\""));
	mbuf_free(&b);
	/* absent figures: no sample, never a 0 */
	c[0].bounds = (struct memcg_bounds){ 0 };
	c[0].has_eta = false;
	c[0].st.has_peak = false;
	mbuf_init(&b, false);
	om_cgroup_families(&b, c, 1, false);
	text = metrics_end(&b);
	ck_assert_ptr_null(strstr(text, "\nmemacct_memory_limit_bytes{"));
	ck_assert_ptr_null(strstr(text, "\nmemacct_oom_eta_seconds{"));
	ck_assert_ptr_null(strstr(text, "\nmemacct_memory_high_bytes{"));
	ck_assert_ptr_null(strstr(text, "\nmemacct_memory_peak_bytes{"));
	ck_assert_ptr_null(strstr(text, "\nmemacct_memory_pressure_waiting_seconds_total{"));
	mbuf_free(&b);
	free(daemon);
}
END_TEST

/*
 * Every memacct family the shipped dashboard and rules query is one that
 * docs/daemon.md documents as the daemon writes it (name, _total and all):
 * no panel or alert on a name the daemon does not export.
 */
START_TEST(test_deploy_families_documented)
{
	static const char *const files[] = {
		"../../docs/deploy/grafana-dashboard.json",
		"../../docs/deploy/memacct-alerts.rules.yml",
		"../../docs/deploy/memacct-kubernetes.rules.yml",
	};
	char *daemon = load_data("../../docs/daemon.md");
	int n = 0;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *text = load_data(files[f]);

		for (const char *p = text; (p = strstr(p, "memacct_")); ) {
			size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
			char want[140];
			const char *d;

			ck_assert_uint_lt(len, sizeof(want) - 2);
			want[0] = '`';
			memcpy(want + 1, p, len);
			want[len + 1] = '\0';
			for (d = strstr(daemon, want); d; d = strstr(d + 1, want))
				if (d[len + 1] == '`' || d[len + 1] == '{')
					break;
			ck_assert_msg(d, "%s: %s not in docs/daemon.md", files[f] + 6, want + 1);
			n++;
			p += len;
		}
		free(text);
	}
	ck_assert_int_gt(n, 40);
	free(daemon);
}
END_TEST

/*
 * One process's stocks through each source (task walk, /proc/PID/status,
 * exit record, OOM record) fill the same figures at a 16K page size; an
 * exit record without its mm leaves them unknown, and RSS PEAK of an
 * exec'd image that never grew past its exec unknown; DMA pins net of
 * mlocked ones never go below 0.
 */
START_TEST(test_fill_sources)
{
	const uint64_t ps = 16384;
	const enum metric_id stocks[] = { M_RSS, M_ANON, M_FILE, M_SHMEM, M_MLOCKED,
					  M_PINNED_VM };
	struct memacct_task_stock t = { .rss_anon_pages = 7, .rss_file_pages = 5,
					.rss_shmem_pages = 3, .locked_vm_pages = 2,
					.pinned_vm_pages = 1, .hiwater_rss_pages = 20,
					.min_flt = 100, .maj_flt = 4 };
	struct proc_status st = { .rss = 15 * ps, .rss_anon = 7 * ps, .rss_file = 5 * ps,
				  .rss_shmem = 3 * ps, .hwm = 20 * ps, .locked = 2 * ps,
				  .pinned = 1 * ps, .has_mm = true };
	struct memacct_proc p = { .flags = MEMACCT_PROC_EXIT_MM, .exit_rss_anon_pages = 7,
				  .exit_rss_file_pages = 5, .exit_rss_shmem_pages = 3,
				  .exit_maxrss_pages = 20, .exit_min_flt = 100,
				  .exit_maj_flt = 4,
				  .pin = { .locked_vm_pages = 2, .pinned_vm_pages = 1 } };
	struct memacct_oom_event ev = { .flags = MEMACCT_OOM_MM, .rss_anon_pages = 7,
					.rss_file_pages = 5, .rss_shmem_pages = 3,
					.locked_vm_pages = 2, .pinned_vm_pages = 1 };
	struct metrics a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

	metrics_from_task_stock(&a, &t, ps);
	metrics_from_proc_status(&b, &st);
	metrics_from_exit_record(&c, &p, ps);
	metrics_from_oom_event(&d, &ev, ps);
	for (size_t i = 0; i < sizeof(stocks) / sizeof(stocks[0]); i++) {
		ck_assert_uint_eq(metric_get(&a, stocks[i]), metric_get(&b, stocks[i]));
		ck_assert_uint_eq(metric_get(&a, stocks[i]), metric_get(&c, stocks[i]));
		ck_assert_uint_eq(metric_get(&a, stocks[i]), metric_get(&d, stocks[i]));
	}
	ck_assert_uint_eq(a.rss, 15 * ps);
	ck_assert_uint_eq(a.rss_peak, 20 * ps);
	ck_assert_uint_eq(b.rss_peak, 20 * ps);
	ck_assert_uint_eq(c.rss_peak, 20 * ps);
	ck_assert_uint_eq(a.page_faults, 104);
	ck_assert_uint_eq(c.page_faults, 104);
	ck_assert_uint_eq(c.major_faults, 4);
	ck_assert_uint_eq(d.pinned, 3 * ps);
	ck_assert_uint_eq(a.unknown | b.unknown | c.unknown, 0);
	/* a high-water mark below the RSS (read apart): at least the RSS */
	st.hwm = ps;
	metrics_from_proc_status(&b, &st);
	ck_assert_uint_eq(b.rss_peak, 15 * ps);

	/* exit after exit_mm() (before 6.16), an exec'd image that never grew */
	p.flags = MEMACCT_PROC_EXECED;
	p.exec_maxrss_pages = 20;
	memset(&c, 0, sizeof(c));
	metrics_from_exit_record(&c, &p, ps);
	ck_assert(c.unknown & MBIT(M_RSS) && c.unknown & MBIT(M_ANON) &&
		  c.unknown & MBIT(M_FILE) && c.unknown & MBIT(M_SHMEM));
	ck_assert(c.unknown & MBIT(M_RSS_PEAK));
	p.exit_maxrss_pages = 21;	/* grew past its exec: its own peak */
	memset(&c, 0, sizeof(c));
	metrics_from_exit_record(&c, &p, ps);
	ck_assert(!(c.unknown & MBIT(M_RSS_PEAK)));
	ck_assert_uint_eq(c.rss_peak, 21 * ps);

	/* DMA pins net of mlocked ones, never below 0; pinned summed after */
	memset(&p, 0, sizeof(p));
	p.pin.dma_pinned_pages = 4;
	p.pin.dma_pinned_peak_pages = 6;
	p.pin.dma_flags = MEMACCT_DMA_ESTIMATE;
	memset(&a, 0, sizeof(a));
	metrics_from_proc_record(&a, &p, ps);
	ck_assert(a.dma_estimate);
	metrics_dma_net(&a, 5 * ps);
	ck_assert_uint_eq(a.dma_pinned, 0);
	ck_assert_uint_eq(a.dma_pinned_peak, ps);
	a.mlocked = 5 * ps;
	metrics_pinned_sum(&a);
	ck_assert_uint_eq(a.pinned, 5 * ps);
	/* a cgroup record's pins add up; its DMA estimate carries over */
	memset(&a, 0, sizeof(a));
	metrics_add_cgroup_pins(&a, &p.pin, ps);
	metrics_add_cgroup_pins(&a, &p.pin, ps);
	ck_assert_uint_eq(a.dma_pinned, 8 * ps);
	ck_assert_uint_eq(a.dma_pinned_peak, 12 * ps);
	ck_assert(a.dma_estimate);

	/* memory.stat's events since a base; OOM kills at least BPF's */
	{
		struct memcg_stat now = { .pgfault = 1000, .pgmajfault = 10, .oom_kill = 3,
					  .has_oom_kill = true };
		struct memcg_stat base = { .pgfault = 400, .pgmajfault = 4, .oom_kill = 1 };

		memset(&a, 0, sizeof(a));
		a.oom_kills = 5;
		metrics_from_memcg_events(&a, &now, &base);
		ck_assert_uint_eq(a.page_faults, 600);
		ck_assert_uint_eq(a.major_faults, 6);
		ck_assert_uint_eq(a.oom_kills, 5);
		a.oom_kills = 1;
		metrics_from_memcg_events(&a, &now, NULL);
		ck_assert_uint_eq(a.page_faults, 1000);
		ck_assert_uint_eq(a.oom_kills, 3);
		now.has_oom_kill = false;	/* no oom_kill in memory.events or oom_control */
		a.oom_kills = 1;
		metrics_from_memcg_events(&a, &now, NULL);
		ck_assert_uint_eq(a.oom_kills, 1);
	}
}
END_TEST

/* BPF pages to bytes, sums, the clamp and JSON, all through the table. */
START_TEST(test_metric_table_flows)
{
	struct memacct_flows f;
	struct metrics m = { 0 }, t = { 0 }, prev = { 0 };
	__u64 *w = (__u64 *)&f;
	json_t *o = json_object();

	for (size_t i = 0; i < sizeof(f) / sizeof(__u64); i++)
		w[i] = i + 1;
	metrics_from_bpf_flows(&m, &f, 4096);
	ck_assert_uint_eq(m.cow_copied, f.cow_copied_pages * 4096);
	ck_assert_uint_eq(m.cow_file_copied, f.cow_file_copied_pages * 4096);
	ck_assert_uint_eq(m.oom_kills, f.oom_kills);
	ck_assert_uint_eq(m.numa_migrated_by_reason[MEMACCT_MR_OTHER],
			  f.numa_migrated_pages[MEMACCT_MR_OTHER] * 4096);
	ck_assert_uint_eq(m.numa_migrated, (uint64_t)(f.numa_migrated_pages[0] +
			  f.numa_migrated_pages[MEMACCT_MR_NR - 1]) * MEMACCT_MR_NR / 2 * 4096);
	metrics_add_flows(&t, &m);
	metrics_add_flows(&t, &m);
	for (int id = 0; id < M_NR; id++)
		ck_assert_uint_eq(metric_get(&t, id), metric_is_bpf_flow(id) ?
				  2 * metric_get(&m, id) : 0);
	/* the clamp holds counters, not gauges */
	prev = t;
	prev.rss = 1 << 20;
	metrics_clamp_flows(&m, &prev);
	ck_assert_uint_eq(m.cow_copied, t.cow_copied);
	ck_assert_uint_eq(m.numa_migrated_by_reason[1], t.numa_migrated_by_reason[1]);
	ck_assert_uint_eq(m.rss, 0);
	report_metrics_json(o, &m, 0);
	for (int id = 0; id < M_NR; id++)
		ck_assert_uint_eq((uint64_t)json_integer_value(json_object_get(o, metric_table[id].key)),
				  metric_get(&m, id));
	json_decref(o);
	o = json_object();
	report_metrics_json(o, &m, MF_TOTALS);
	ck_assert_ptr_null(json_object_get(o, "usage_bytes"));
	ck_assert_ptr_nonnull(json_object_get(o, "numa_migrated_bytes_by_reason"));
	json_decref(o);
}
END_TEST

/* The streaming writer: what it writes parses back to what was written. */
START_TEST(test_jsonw)
{
	json_t *emb = json_pack("{s:i,s:[s,n]}", "a", 1, "b", "x\"y", 0), *o, *m;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct jw w;

	jw_init(&w, f);
	jw_open(&w, NULL, '{');
	jw_u64(&w, "big", UINT64_MAX >> 1);
	jw_int(&w, "neg", -5);
	jw_bool(&w, "t", true);
	jw_null(&w, "nothing");
	jw_str(&w, "hostile", "a\"b\\c\n\x01\xff\xc3\xa9");
	jw_str(&w, "none", NULL);
	jw_str(&w, "plain", " /lib/x.so~");	/* written directly, as jansson would */
	jw_str(&w, "edge", "\x1f\x7f");	/* through jansson */
	jw_json(&w, "emb", emb);
	jw_open(&w, "arr", '[');
	jw_open(&w, NULL, '{');
	jw_u64(&w, "x", 1);
	jw_close(&w);
	jw_open(&w, NULL, '[');
	jw_close(&w);
	jw_u64(&w, NULL, 2);
	jw_close(&w);
	jw_close(&w);
	ck_assert_int_eq(jw_end(&w), 0);
	fclose(f);
	o = json_loads(text, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", text);
	ck_assert_msg(!strchr(text, '\xff') && text[len - 1] == '\n', "%s", text);
	ck_assert_uint_eq(json_integer_value(json_object_get(o, "big")), UINT64_MAX >> 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "neg")), -5);
	ck_assert(json_is_true(json_object_get(o, "t")));
	ck_assert(json_is_null(json_object_get(o, "nothing")) && json_is_null(json_object_get(o, "none")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "hostile")),
			 "a\"b\\c\n\x01\xef\xbf\xbd\xc3\xa9");
	ck_assert_msg(strstr(text, ",\"plain\":\" /lib/x.so~\","), "%s", text);
	ck_assert_str_eq(json_string_value(json_object_get(o, "edge")), "\x1f\x7f");
	ck_assert(json_equal(json_object_get(o, "emb"), emb));
	m = json_object_get(o, "arr");
	ck_assert_int_eq(json_array_size(m), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(m, 0), "x")), 1);
	ck_assert_int_eq(json_integer_value(json_array_get(m, 2)), 2);
	json_decref(o);
	free(text);
	json_decref(emb);

	/* misuse: a key in an array, none in an object, a value left open */
	f = open_memstream(&text, &len);
	jw_init(&w, f);
	jw_open(&w, NULL, '[');
	jw_u64(&w, "k", 1);
	jw_close(&w);
	ck_assert_int_eq(jw_end(&w), -EINVAL);
	jw_init(&w, f);
	jw_open(&w, NULL, '{');
	jw_u64(&w, NULL, 1);
	ck_assert_int_eq(jw_end(&w), -EINVAL);
	jw_init(&w, f);
	jw_open(&w, NULL, '{');
	ck_assert_int_eq(jw_end(&w), -EINVAL);
	fclose(f);
	free(text);

	/* a full disk */
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	jw_init(&w, f);
	jw_open(&w, NULL, '[');
	jw_close(&w);
	ck_assert_int_eq(jw_end(&w), -EIO);
	fclose(f);
}
END_TEST

/* Σ of a "Key:  N kB" smaps field over @text, in bytes */
static long long smaps_sum(const char *text, const char *key)
{
	long long sum = 0;
	size_t n = strlen(key);

	for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ':')
			sum += atoll(l + n + 1) * 1024;
	return sum;
}

/*
 * explain's JSON on captured files (data/status_self, data/smaps_self):
 * the model built by explain's own functions, printed by explain_print_json(),
 * parsed back: figures equal the files' sums, what explain did not measure
 * is null, the breakdown adds up, one mapping per smaps entry; and the
 * whole object validates against docs/memacct.report.v1.schema.json.
 */
START_TEST(test_explain_json_fixture)
{
	char *sm = load_data("smaps_self"), *st = load_data("status_self"), *text = NULL;
	char path[] = "/tmp/memacct-unit-explain-XXXXXX", cmd[512];
	struct explain e;
	struct proc_status ps;
	struct xproc x;
	struct report r;
	json_t *o, *t, *bd;
	size_t len = 0;
	long long parts = 0;
	FILE *f;
	int fd;

	memset(&e, 0, sizeof(e));
	memset(&x, 0, sizeof(x));
	memset(&r, 0, sizeof(r));
	x.row.pid = 4242;
	ck_assert_int_eq(parse_status(st, &ps), 0);
	snprintf(x.row.comm, sizeof(x.row.comm), "%s", ps.name);
	metrics_from_proc_status(&x.row.m, &ps);
	ck_assert_int_eq(parse_smaps(sm, &x.sm), 38);
	explain_sum_proc(&x);
	e.procs = &x;
	e.nprocs = 1;
	explain_total_up(&e);
	r.command = "explain";
	r.cg.version = 2;
	snprintf(r.cg.rel, sizeof(r.cg.rel), "/job");
	snprintf(r.cg.path, sizeof(r.cg.path), "/sys/fs/cgroup/job");
	ck_assert_int_eq(explain_fill_report(&e, &r), 0);
	f = open_memstream(&text, &len);
	ck_assert_int_eq(explain_print_json(f, &e, &r, 0), EXIT_OK);
	fclose(f);
	o = json_loads(text, 0, NULL);
	ck_assert_msg(o, "not JSON: %.300s", text);
	t = json_object_get(o, "totals");
	ck_assert_int_eq(json_integer_value(json_object_get(t, "rss_bytes")), smaps_sum(sm, "Rss"));
	ck_assert_int_eq(json_integer_value(json_object_get(t, "pss_bytes")), smaps_sum(sm, "Pss"));
	ck_assert_int_eq(json_integer_value(json_object_get(t, "swap_bytes")), smaps_sum(sm, "Swap"));
	ck_assert_int_eq(json_array_size(json_object_get(o, "mappings")), 38);
	/* not watched, no daemon: flows, DMA and NUMA unknown, never 0 */
	ck_assert(json_is_null(json_object_get(t, "cow_copied_bytes")));
	ck_assert(json_is_null(json_object_get(t, "page_faults_total")));
	ck_assert(json_is_null(json_object_get(t, "dma_pinned_bytes")));
	ck_assert(json_is_null(json_object_get(t, "remote_numa_bytes")));
	ck_assert(json_is_null(json_object_get(json_array_get(json_object_get(o, "processes"), 0),
					       "cow_copied_bytes")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "cow_source")), "none");
	bd = json_object_get(o, "breakdown");
	for (int i = 0; i < 6; i++) {
		static const char *const k[] = { "private_anon_bytes", "shared_anon_bytes",
			"file_clean_bytes", "file_dirty_bytes", "shmem_bytes", "other_bytes" };

		parts += json_integer_value(json_object_get(bd, k[i]));
	}
	ck_assert_int_eq(parts, smaps_sum(sm, "Rss"));
	json_decref(o);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	xsnprintf(cmd, sizeof(cmd), "/usr/bin/python3 validate_json.py "
		  "../docs/memacct.report.v1.schema.json %s >&2", path);
	ck_assert_msg(system(cmd) == 0, "explain's JSON fails the schema: %.400s", text);
	unlink(path);
	free(text);
	report_free(&r);
	smaps_free(&x.sm);
	free(sm);
	free(st);
}
END_TEST

/* page cache by file (issue 43): each file named as the text shows it (a
 * holder's path, else the kernel's name with dev:ino, a block device's own
 * cache by its device), and page_cache_by_file's keys (null holders when
 * not looked up) */
START_TEST(test_page_cache_labels)
{
	struct page_cache_file f[3] = {
		{ .dev = makedev(254, 0), .ino = 404912, .bytes = 64 << 20, .added = 64 << 20,
		  .name = "pc64" },
		{ .dev = makedev(0, 3), .ino = (254ULL << 20) | 1, .bytes = 1 << 20,
		  .added = 1 << 20, .name = MEMACCT_BDEV_NAME },
		{ .dev = makedev(254, 0), .ino = 7, .added = 4096, .removed = 8192, .before = true,
		  .name = "old", .path = "/data/old", .resolved = true, .open = true },
	};
	struct page_cache_files pc = { .f = f, .n = 3, .count = 3, .bytes = 65 << 20 };
	char b[128];
	json_t *j, *x;

	ck_assert_str_eq(page_cache_file_label(&f[0], b, sizeof(b)),
			 "pc64 (dev 254:0 ino 404912)");
	ck_assert_str_eq(page_cache_file_label(&f[1], b, sizeof(b)),
			 "block device 254:1 (metadata, raw reads)");
	ck_assert_str_eq(page_cache_file_label(&f[2], b, sizeof(b)), "/data/old");
	/* a long name cut, never its device and inode */
	snprintf(f[0].name, sizeof(f[0].name), "_ctypes.cpython-311-x86_64-linux-gnu.so");
	ck_assert_str_eq(page_cache_file_label(&f[0], b, 32), "_ctyp... (dev 254:0 ino 404912)");

	snprintf(f[0].name, sizeof(f[0].name), "pc64");
	j = page_cache_json(&pc);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "files_count")), 3);
	x = json_array_get(json_object_get(j, "files"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(x, "dev")), "254:0");
	ck_assert(json_is_null(json_object_get(x, "path")));
	ck_assert(json_is_null(json_object_get(x, "mapped")));
	x = json_array_get(json_object_get(j, "files"), 2);
	ck_assert(json_is_true(json_object_get(x, "cached_before_start")));
	ck_assert(json_is_true(json_object_get(x, "open")));
	ck_assert(json_is_false(json_object_get(x, "mapped")));
	/* read back as memacct report does: the same JSON again */
	{
		struct page_cache_files back;
		json_t *j2;

		ck_assert_int_eq(page_cache_from_json(j, &back), 0);
		j2 = page_cache_json(&back);
		ck_assert(json_equal(j, j2));
		json_decref(j2);
		page_cache_free(&back);
	}
	json_decref(j);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("printers");

	tcase_add_test(tc, test_json_hostile_comm);
	tcase_add_test(tc, test_json_sanitized_utf8);
	tcase_add_test(tc, test_table_width);
	tcase_add_test(tc, test_footnotes_once);
	tcase_add_test(tc, test_table_golden);
	tcase_add_test(tc, test_table_columns_raw);
	tcase_add_test(tc, test_columns_help_every_column);
	tcase_add_test(tc, test_table_every_column);
	tcase_add_test(tc, test_table_csv);
	tcase_add_test(tc, test_long_labels_distinct);
	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_verdict_cow_mapping);
	tcase_add_test(tc, test_cowm_parent_read_after_fork);
	tcase_add_test(tc, test_verdicts_unlisted);
	tcase_add_test(tc, test_zoneinfo_one_node);
	tcase_add_test(tc, test_zoneinfo_two_nodes);
	tcase_add_test(tc, test_foll_pin_vmstat);
	tcase_add_test(tc, test_mem_total);
	tcase_add_test(tc, test_meminfo_budget);
	tcase_add_test(tc, test_zoneinfo_pcp);
	tcase_add_test(tc, test_uma_detect);
	tcase_add_test(tc, test_host_budget_json);
	tcase_add_test(tc, test_host_budget_metrics);
	tcase_add_test(tc, test_host_unknown);
	tcase_add_test(tc, test_host_known);
	tcase_add_test(tc, test_metric_table_rows);
	tcase_add_test(tc, test_top_proc_rows_bytes);
	tcase_add_test(tc, test_bpf_flows_counted);
	tcase_add_test(tc, test_metric_table_docs);
	tcase_add_test(tc, test_metric_docs_have_rows);
	tcase_add_test(tc, test_cgroup_families_docs);
	tcase_add_test(tc, test_deploy_families_documented);
	tcase_add_test(tc, test_metric_table_flows);
	tcase_add_test(tc, test_fill_sources);
	tcase_add_test(tc, test_jsonw);
	tcase_add_test(tc, test_page_cache_labels);
	suite_add_tcase(s, tc);

	tc = tcase_create("schema");	/* runs python3 validate_json.py */
	tcase_set_timeout(tc, TOOL_TIMEOUT_S);
	tcase_add_test(tc, test_explain_json_fixture);
	suite_add_tcase(s, tc);
	return s;
}
