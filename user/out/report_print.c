// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * report_print.c - printers of the report model (report.h): the process
 * table, the lines after it, a compact JSON line, the host's budget.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "memlimits.h"
#include "metric_table.h"
#include "oom.h"
#include "oom_print.h"
#include "proc.h"
#include "phases.h"
#include "phases_print.h"
#include "report.h"
#include "report_print.h"
#include "table.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* A figure of hostmem or "unknown". */
static const char *fmt_known(char *b, bool known, uint64_t v)
{
	return known ? fmt_bytes(b, 16, v) : "unknown";
}

void print_host_budget(FILE *f, const struct hostpin *h)
{
	const struct hostmem *m = &h->mem;
	char b[9][16];

	if (!m->meminfo)
		return;
	fprintf(f, "host memory: free %s, available %s, page cache %s (reclaimable %s), "
		"unevictable %s (mlocked %s),\n  hugetlb %s (reserved %s), unowned kernel %s\n",
		fmt_bytes(b[0], 16, m->mem_free), fmt_known(b[1], m->avail_known, m->mem_available),
		fmt_bytes(b[2], 16, m->page_cache), fmt_bytes(b[3], 16, m->reclaimable),
		fmt_bytes(b[4], 16, m->unevictable), fmt_bytes(b[5], 16, m->mlocked),
		fmt_known(b[6], m->hugetlb_known, m->hugetlb),
		fmt_known(b[7], m->rsvd_known, m->hugetlb_reserved),
		fmt_known(b[8], m->unowned_known, m->unowned));
	for (int i = 0; i < h->nnodes; i++) {
		const struct hostpin_node *n = &h->nodes[i];

		if (!n->mem.meminfo)
			continue;
		fprintf(f, "  node %d%s: total %s, free %s, page cache %s (reclaimable %s), "
			"shmem %s, unevictable %s\n", n->node,
			n->cpu_known && n->cpuless ? " (no CPU)" : "",
			fmt_bytes(b[0], 16, n->mem_total), fmt_bytes(b[1], 16, n->mem.mem_free),
			fmt_bytes(b[2], 16, n->mem.page_cache), fmt_bytes(b[3], 16, n->mem.reclaimable),
			fmt_bytes(b[4], 16, n->mem.shmem), fmt_bytes(b[5], 16, n->mem.unevictable));
	}
}

void print_report_json(FILE *f, const struct report *r)
{
	json_t *o = report_json(r);

	json_dumpf(o, f, JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', f);
	fflush(f);
	json_decref(o);
}

/*
 * The process table of run and attach (docs/metrics.md names each figure):
 * by default PID .. PINNED, 7 + 1 + 15 + 8 x 9 = 95 columns while the
 * figures fit, with REMOTE (remote-NUMA allocations) in ZEROFILL's place on
 * hosts with several NUMA nodes; --columns picks any of them. A figure's
 * column is the COL() of its METRIC_ROWS row (metric_table.h), the others
 * are here.
 */
/* COL() and NO_COL of a row, apart: RC_ROW() calls RC_FIG(id, rank, name,
 * header, width, help) for a COL(), nothing for NO_COL */
#define COL(rank, name, header, width, help)	COL_, rank, name, header, width, help
#define NO_COL					NO_COL_, 0
#define RC_ROW(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
	       top_col) \
	RC_ROW_(id, col)
#define RC_ROW_(id, has, ...)			RC_ROW_##has(id, __VA_ARGS__)
#define RC_ROW_COL_(id, ...)			RC_FIG(id, __VA_ARGS__)
#define RC_ROW_NO_COL_(id, ...)

#define RC_FIG(id, rank, ...)	+ 1
enum { RC_NFIGS = 0 METRIC_ROWS(RC_ROW) };	/* figure columns */
#undef RC_FIG
#define RC_FIG(id, rank, ...)	+ (1ULL << (rank))
_Static_assert((0 METRIC_ROWS(RC_ROW)) == (1ULL << RC_NFIGS) - 1,
	       "metric_table.h COL() ranks: 0, 1, ... each once");
#undef RC_FIG

enum {
	RC_PID, RC_COMM,
	RC_FIGS,				/* the figure of rank 0 */
	RC_PPID = RC_FIGS + 9,			/* between ranks 8 and 9 */
	RC_EXITED = RC_FIGS + RC_NFIGS + 1, RC_ELAPSED_S, RC_TIME,
	RC_NR
};
/* the column of the figure of rank @rank */
#define RC_RANK(rank)	(RC_FIGS + (rank) + ((rank) >= RC_PPID - RC_FIGS))

/* RC_RSS, RC_COW_COPIED, ...: the column of a figure, named by its row */
#define RC_FIG(id, rank, ...)	RC_##id = RC_RANK(rank),
enum { METRIC_ROWS(RC_ROW) };
#undef RC_FIG
/* --columns selects into sel[TABLE_MAX_COLS]: every column must fit */
_Static_assert(RC_NR <= TABLE_MAX_COLS, "more run/attach columns than TABLE_MAX_COLS");

static const struct table_col report_cols[RC_NR] = {
	[RC_PID]	= { "PID", "PID", 7, false, "process ID; x: exited (sizes at exit); TOTAL: the cgroup" },
	[RC_COMM]	= { "COMM", "COMM", 15, true, "command name" },
#define RC_FIG(id, rank, name, header, width, help) \
	[RC_##id]	= { name, header, width, false, help },
	METRIC_ROWS(RC_ROW)
#undef RC_FIG
	[RC_PPID]	= { "PPID", "PPID", 7, false, "parent process ID (-: TOTAL, folded rows)" },
	[RC_EXITED]	= { "EXITED", "EXITED", 6, false, "1: exited (sizes at exit), 0: live" },
	[RC_ELAPSED_S]	= { "ELAPSED_S", "ELAPSED S", 9, false, "seconds since the start, at this report" },
	[RC_TIME]	= { "TIME", "TIME", 24, true, "wall-clock time of the report (RFC 3339 UTC)" },
};

static struct table_opts report_table;
static bool report_timed;	/* -i: reports come in a series */

void report_table_timed(bool timed)
{
	report_timed = timed;
}

int report_table_getopt(int opt, const char *arg)
{
	if (opt == OPT_TABLE_CSV)
		bytes_output = true;	/* CSV is for scripts: figures in bytes */
	return table_getopt(opt, arg, report_cols, RC_NR, &report_table);
}

/* the cells of one row: PID, PPID and COMM given, figures formatted into @b */
static void report_row_cells(const char **cells, char (*b)[24], const char *pid, const char *ppid,
			     const char *comm, const struct metrics *m)
{
	static const struct { int col; enum metric_id id; } figs[] = {
#define RC_FIG(id, ...)	{ RC_##id, M_##id },
		METRIC_ROWS(RC_ROW)
#undef RC_FIG
	};
	/* "~" before an estimated figure (DMA pins under concurrency); not
	 * in CSV, whose figures are numbers (-j has dma_pinned_estimate) */
	const char *est = m->dma_estimate && !report_table.csv ? "~" : "";
	char v[22];

	cells[RC_PID] = pid;
	cells[RC_PPID] = ppid;
	cells[RC_COMM] = comm;
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		enum metric_id id = figs[i].id;
		uint64_t x = metric_get(m, id);

		if (m->unknown & MBIT(id))	/* not measured: no figure */
			snprintf(v, sizeof(v), "%s", report_table.csv ? "" : "-");
		else if (metric_table[id].flags & MF_BYTES)
			fmt_bytes(v, sizeof(v), x);
		else
			snprintf(v, sizeof(v), "%llu", (unsigned long long)x);
		snprintf(b[figs[i].col], sizeof(b[0]), "%s%s",
			 id == M_PINNED || id == M_DMA_PINNED ? est : "", v);
		cells[figs[i].col] = b[figs[i].col];
	}
}

/* The default columns; on several NUMA nodes RC_REMOTE_NUMA_ALLOC takes
 * RC_ZERO_FILL's place, DEF_ZERO_FILL. */
static const int report_def[] = { RC_PID, RC_COMM, RC_RSS, RC_RSS_PEAK, RC_ANON, RC_FILE,
				  RC_COW_COPIED, RC_COW_FILE_COPIED, RC_ZERO_FILL, RC_PINNED };
#define DEF_NR		(sizeof(report_def) / sizeof(report_def[0]))
#define DEF_ZERO_FILL	8
_Static_assert(DEF_ZERO_FILL < DEF_NR, "ZEROFILL among the default columns");

const char *report_columns_help(void)
{
	static char *help;
	bool in_def[RC_NR] = { false };
	bool first = true;
	size_t len;
	FILE *f;

	if (help || !(f = open_memstream(&help, &len)))
		return help ? help : "The process table's columns (docs/metrics.md).";
	fputs("The process table's columns, comma-separated as lsblk -o takes them (default ", f);
	for (size_t i = 0; i < DEF_NR; i++) {
		in_def[report_def[i]] = true;
		fprintf(f, "%s%s", i ? ", " : "", report_cols[report_def[i]].name);
	}
	in_def[RC_REMOTE_NUMA_ALLOC] = true;
	fprintf(f, ", with %s in %s's place on several NUMA nodes); also",
		report_cols[RC_REMOTE_NUMA_ALLOC].name, report_cols[report_def[DEF_ZERO_FILL]].name);
	for (int c = 0; c < RC_NR; c++)
		if (!in_def[c]) {
			fprintf(f, "%s %s", first ? "" : ",", report_cols[c].name);
			first = false;
		}
	fputs(" (docs/metrics.md). A bad name lists them all.", f);
	fclose(f);
	return text_wrap(help, 64);
}

/*
 * The process table: a row per process, the folded exited ones, TOTAL. As
 * CSV with --csv, its header line before the first report's rows only.
 */
static void print_report_table(FILE *f, const struct report *r)
{
	static bool csv_header_done;
	struct row_ids { char pid[24], ppid[16], comm[16]; } *ids;
	char elapsed[24], when[32], folded[40] = "(more exited)";
	size_t nrows = r->nprocs + !!r->nexited_folded + 1, row = 0;
	const char **cells = calloc(nrows * RC_NR, sizeof(*cells));
	char (*b)[24] = calloc(nrows * RC_NR, sizeof(*b));
	int sel[TABLE_MAX_COLS], nsel = report_table.nsel;
	int err = -ENOMEM;

	ids = calloc(nrows, sizeof(*ids));
	if (!cells || !b || !ids)
		goto out_free;
	if (nsel) {
		memcpy(sel, report_table.sel, nsel * sizeof(sel[0]));
	} else {
		nsel = DEF_NR;
		memcpy(sel, report_def, sizeof(report_def));
		if (r->numa_multi)	/* in ZEROFILL's place */
			sel[DEF_ZERO_FILL] = RC_REMOTE_NUMA_ALLOC;
		/* scripts get the state and the time as columns of their own,
		 * not as marks in the PID field */
		if (report_table.csv) {
			sel[nsel++] = RC_EXITED;
			if (report_timed)
				sel[nsel++] = RC_ELAPSED_S;
			if (timestamps)
				sel[nsel++] = RC_TIME;
		}
	}
	snprintf(elapsed, sizeof(elapsed), "%.3f", r->elapsed_s);
	fmt_time_now(when, sizeof(when), true);
	for (; row < r->nprocs; row++) {
		const struct proc_row *p = &r->procs[row];
		struct row_ids *id = &ids[row];

		/* x, K: marks for a person; CSV has EXITED (and -j oom_killed) */
		snprintf(id->pid, sizeof(id->pid), "%d%s", p->pid, report_table.csv ? "" :
			 p->oom_killed ? "K" : p->exited ? "x" : "");
		snprintf(id->ppid, sizeof(id->ppid), "%d", p->ppid);
		report_comm(id->comm, sizeof(id->comm), p->comm);
		report_row_cells(cells + row * RC_NR, b + row * RC_NR, id->pid, id->ppid,
				 id->comm, &p->m);
		cells[row * RC_NR + RC_EXITED] = p->exited ? "1" : "0";
	}
	if (r->nexited_folded) {
		if (report_table.csv)	/* no PID: the count goes in COMM */
			snprintf(folded, sizeof(folded), "(%zu more exited)", r->nexited_folded);
		else
			snprintf(ids[row].pid, sizeof(ids[row].pid), "+%zux", r->nexited_folded);
		report_row_cells(cells + row * RC_NR, b + row * RC_NR, ids[row].pid,
				 report_table.csv ? "" : "-", folded, &r->exited_folded);
		cells[row * RC_NR + RC_EXITED] = "1";
		row++;
	}
	/* CSV: PID and PPID stay integers or empty (issue 41: "TOTAL" in the
	 * PID column); what the row is goes in COMM */
	if (report_table.csv)
		report_row_cells(cells + row * RC_NR, b + row * RC_NR, "", "",
				 r->totals_of_rows ? "TOTAL (processes)" : "TOTAL (cgroup)",
				 &r->totals);
	else
		report_row_cells(cells + row * RC_NR, b + row * RC_NR, "TOTAL", "-",
				 r->totals_of_rows ? "(processes)" : "(cgroup)", &r->totals);
	for (size_t i = 0; i < nrows; i++) {
		cells[i * RC_NR + RC_ELAPSED_S] = elapsed;
		cells[i * RC_NR + RC_TIME] = when;
	}
	if (report_table.csv) {
		err = table_print_csv(f, report_cols, RC_NR, sel, nsel, cells, nrows,
				      !csv_header_done);
		csv_header_done = true;
	} else {
		err = table_print(f, report_cols, RC_NR, sel, nsel, report_table.raw, cells,
				  nrows);
	}
out_free:
	if (err)
		p_err("the process table cannot be printed: %s", strerror(-err));
	free(ids);
	free(cells);
	free(b);
}

/*
 * The NUMA table under it on hosts with several nodes: per process its home
 * node, resident bytes off it (sampled), allocations on a remote node and
 * migrations (flows); for a person only: --raw and --csv print the process
 * table alone (-j has these figures), --columns is the process table's.
 */
static void print_numa_table(FILE *f, const struct report *r)
{
	static const struct table_col cols[] = {
		{ "PID", "PID", 7, false, "" }, { "COMM", "COMM", 15, true, "" },
		{ "HOME", "HOME", 5, false, "" }, { "REMOTE_RSS", "REMOTE RSS", 11, false, "" },
		{ "REMOTE_PEAK", "REMOTE PEAK", 11, false, "" },
		{ "ALLOC_REM", "ALLOC REM", 11, false, "" }, { "MIGRATED", "MIGRATED", 11, false, "" },
	};
	enum { NC = sizeof(cols) / sizeof(cols[0]) };
	static const int sel[NC] = { 0, 1, 2, 3, 4, 5, 6 };
	char (*b)[24] = calloc(r->nprocs * NC, sizeof(*b));
	const char **cells = calloc(r->nprocs * NC, sizeof(*cells));
	int err = -ENOMEM;

	if (!b || !cells)
		goto out_free;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_row *p = &r->procs[i];
		char (*c)[24] = b + i * NC;

		snprintf(c[0], sizeof(c[0]), "%d%s", p->pid, p->exited ? "x" : "");
		report_comm(c[1], 16, p->comm);
		if (p->has_numa_peak && p->numa_peak.home >= 0)
			snprintf(c[2], sizeof(c[2]), "%d", p->numa_peak.home);
		else
			snprintf(c[2], sizeof(c[2]), "?");
		fmt_bytes(c[3], sizeof(c[3]), p->m.remote_numa);
		fmt_bytes(c[4], sizeof(c[4]), p->m.remote_numa_peak);
		fmt_bytes(c[5], sizeof(c[5]), p->m.remote_numa_alloc);
		fmt_bytes(c[6], sizeof(c[6]), p->m.numa_migrated);
		for (int k = 0; k < NC; k++)
			cells[i * NC + k] = c[k];
	}
	err = table_print(f, cols, NC, sel, NC, false, cells, r->nprocs);
out_free:
	if (err)
		p_err("the NUMA table cannot be printed: %s", strerror(-err));
	free(cells);
	free(b);
}

/* The cgroup's summary lines under the table: charge and peaks, pins, the
 * host's pins, faults and kills, and on several nodes the NUMA lines and table. */
static void print_summary(FILE *f, const struct report *r)
{
	const struct metrics *t = &r->totals;
	char b[6][16];

	/* the kernel keeps no high-water mark of these: the largest of the
	 * memory.stat samples (every 250 ms and at each report), so named */
	fprintf(f, "cgroup: charged %s (peak %s); reclaimable page cache %s (peak* %s); "
		"anon peak* %s\n",
		fmt_bytes(b[0], 16, t->usage),
		fmt_known(b[1], !(t->unknown & MBIT(M_RSS_PEAK)), t->rss_peak),
		fmt_bytes(b[2], 16, t->reclaimable),
		fmt_known(b[3], !(t->unknown & MBIT(M_RECLAIMABLE_PEAK)), t->reclaimable_peak),
		fmt_known(b[4], !(t->unknown & MBIT(M_ANON_PEAK)), t->anon_peak));
	fprintf(f, "pinned: mlocked %s (peak %s), pinned_vm %s (peak %s), DMA %s%s (peak %s)\n",
		fmt_bytes(b[0], 16, t->mlocked), fmt_bytes(b[1], 16, t->mlocked_peak),
		fmt_bytes(b[2], 16, t->pinned_vm), fmt_bytes(b[3], 16, t->pinned_vm_peak),
		t->dma_estimate ? "~" : "", fmt_bytes(b[4], 16, t->dma_pinned),
		fmt_bytes(b[5], 16, t->dma_pinned_peak));
	if (r->has_host) {
		char hl[320];

		report_host_line(r, hl, sizeof(hl));
		fprintf(f, "%s\n", hl);
	}
	fprintf(f, "faults %llu (major %llu), OOM kills %llu, memcg reclaims %llu",
		(unsigned long long)t->page_faults, (unsigned long long)t->major_faults,
		(unsigned long long)t->oom_kills, (unsigned long long)t->memcg_reclaims);
	if (r->has_exit_status)
		fprintf(f, ", exit status %d", r->exit_status);
	fputc('\n', f);
	if (r->numa_multi) {
		fprintf(f, "NUMA: %s allocated on a remote node, %s migrated; resident off the "
			"home node %s (peak %s)\n",
			fmt_bytes(b[4], 16, t->remote_numa_alloc),
			fmt_bytes(b[5], 16, t->numa_migrated), fmt_bytes(b[0], 16, t->remote_numa),
			fmt_bytes(b[1], 16, t->remote_numa_peak));
		print_numa_table(f, r);
		fprintf(f, "REMOTE RSS: resident off the home node, sampled (exited: last sample); "
			"ALLOC REM: flow\n");
	}
}

void print_page_cache_files(FILE *f, const struct page_cache_files *pc, const char *since)
{
	char b[2][16], label[51];	/* a line within 100 columns */
	size_t shown = 0;

	if (!pc->n)
		return;
	fprintf(f, "page cache by file: %s now in %zu files, charged here %s "
		"(-j page_cache_by_file):\n", fmt_bytes(b[0], 16, pc->bytes), pc->count, since);
	fprintf(f, "  %9s %9s  %s\n", "NOW", "PEAK", "FILE");
	for (size_t i = 0; i < pc->n && shown < 5; i++) {
		const struct page_cache_file *x = &pc->f[i];

		if (!x->peak)
			continue;	/* cached before start, nothing added since */
		page_cache_file_label(x, label, sizeof(label));
		fprintf(f, "  %9s %9s  %s%s\n", fmt_bytes(b[0], 16, x->bytes),
			fmt_bytes(b[1], 16, x->peak), label,
			!x->resolved ? "" : x->mapped ? " (mapped)" : x->open ? " (open)" :
			x->held_before ? " (held by the job; nobody now)" :
			" (nobody maps or opens it)");
		shown++;
	}
}

/*
 * Pins for DMA that no window saw: with the DMA-pin windows off, FOLL_PIN
 * pages pinned on the host since start beyond the pinned_vm peak of the
 * processes here (io_uring buffers are FOLL_PIN and pinned_vm both) are
 * named, never silent, even when they were released before this report.
 */
static void print_unwatched_pins(FILE *f, const struct report *r)
{
	char a[16], p[16];

	if (!r->has_host || !r->foll_since || r->dma_windows ||
	    r->foll_acquired_since <= r->totals.pinned_vm_peak)
		return;
	fprintf(f, "NOTE: the host pinned %s for DMA (FOLL_PIN) since memacct started, peak %s "
		"outstanding;\n      the DMA-pin windows were off, so no process is named: "
		"--dma-pins on attributes them\n      (host-wide counters: other processes' "
		"pins and O_DIRECT I/O count too)\n",
		fmt_bytes(a, sizeof(a), r->foll_acquired_since),
		fmt_bytes(p, sizeof(p), r->foll_pinned_peak));
}

/* What was not measured or not recorded: unclassified copies, dropped
 * events, flows without a record, exits without a row, unwatched pins. */
static void print_losses(FILE *f, const struct report *r)
{
	char u[16];

	if (r->totals.fault_unclassified)
		fprintf(f, "NOTE: %s of write-fault copies could not be classified as CoW or not "
			"(VMA unreadable; -j fault_unclassified_bytes)\n",
			fmt_bytes(u, sizeof(u), r->totals.fault_unclassified));
	if (r->dropped_events) {
		fprintf(f, "WARNING: %llu events could not be recorded:",
			(unsigned long long)r->dropped_events);
		for (int i = 0; i < MEMACCT_DROP_NR; i++)
			if (r->dropped[i] && report_drop_is_loss(i))
				fprintf(f, " %s %llu", drop_names[i],
					(unsigned long long)r->dropped[i]);
		fprintf(f, " (causes: memacct(1) DROPPED EVENTS)\n");
	}
	if (report_flows_lost_bytes(&r->flows_lost))
		fprintf(f, "WARNING: %s of fault-allocated pages found no record: not in the "
			"totals (-j flows_lost)\n",
			fmt_bytes(u, sizeof(u), report_flows_lost_bytes(&r->flows_lost)));
	if (r->dropped[MEMACCT_DROP_RINGBUF_FULL])
		fprintf(f, "NOTE: %llu exited processes have no row (ring buffer full: "
			"ringbuf_full); their flows are in the totals\n",
			(unsigned long long)r->dropped[MEMACCT_DROP_RINGBUF_FULL]);
	if (r->dropped[MEMACCT_DROP_COW_MAPS])
		fprintf(f, "NOTE: %llu batches of CoW copies in more mappings than memacct keeps "
			"per process (cow_map_full):\n      counted in COW and FILE COW, not by "
			"mapping (-j cow_by_mapping_unattributed_bytes)\n",
			(unsigned long long)r->dropped[MEMACCT_DROP_COW_MAPS]);
	print_unwatched_pins(f, r);
}

/*
 * The footnotes: marks, peaks, what TOTAL is, attach's window, estimates.
 * Under the first report and the final one: not repeated under every
 * --interval report (issue 41: attach's five lines every interval).
 */
static void print_footnotes(FILE *f, const struct report *r)
{
	static bool said;

	if (said && !r->final)
		return;
	said = true;
	fprintf(f, "x = exited (sizes at exit)%s; RSS PEAK: the kernel's high-water mark since "
		"the last exec\n", r->nooms ? "; K = OOM-killed (sizes at the kill)" : "");
	/* a daemon's log replayed has none: it samples no memory.stat */
	if (!(r->totals.unknown & MBIT(M_ANON_PEAK)))
		fprintf(f, "peak*: the largest memory.stat sample (every 250 ms): the kernel keeps "
			"no high-water mark\n");
	if (r->totals_of_rows)
		fprintf(f, "TOTAL (processes): sums of the rows (stocks: of the live ones)\n");
	else
		fprintf(f, "TOTAL (cgroup): the cgroup's own stocks now (RSS: its charge), peaks and "
			"flows; not a sum of rows\n");
	if (r->command && !strcmp(r->command, "attach"))
		fprintf(f, "COW, FILE COW, %s, faults: since attach (%.1f s); copies made before "
			"attach are not seen\n", r->numa_multi ? "REMOTE" : "ZEROFILL",
			r->elapsed_s);
	if (r->totals.dma_estimate)
		fprintf(f, "~ = estimate: DMA pins measured while another pin was in progress\n");
	if (r->totals.unknown & MBIT(M_COW_COPIED))	/* the classifier's (metric_fault_mask()) */
		fprintf(f, "- = not measured: no fault hook (MEMACCT_FAULT_HOOK=none, or a kernel "
			"without one): no CoW, file CoW or zero-fill figures\n");
}

/* The OOM kills (a post-mortem each in the final report), then its verdicts. */
static void print_kills_verdicts(FILE *f, const struct report *r)
{
	for (size_t i = 0; i < r->nooms; i++) {
		json_t *j = report_oom_json(r, i);
		const char *verdict = json_string_value(json_object_get(j, "verdict"));

		if (r->final)
			oom_print_json(f, j, false);
		else
			print_wrapped(f, "", verdict ? verdict : "");
		json_decref(j);
	}
	if (r->ooms_unlisted)
		fprintf(f, "NOTE: %llu more OOM kills, counted only (the first %zu are listed)\n",
			(unsigned long long)r->ooms_unlisted, r->nooms);
	for (size_t i = 0; i < json_array_size(r->oom_warnings); i++)
		oom_warning_print(f, "", json_array_get(r->oom_warnings, i));
	if (r->oom_warnings_unlisted)
		fprintf(f, "NOTE: %llu more OOM forecast warnings, counted only\n",
			(unsigned long long)r->oom_warnings_unlisted);
	if (r->final) {
		struct verdict *v;
		int all = report_verdicts_all(r, &v), n = all < 0 ? 0 :
			  all < REPORT_VERDICTS_LISTED ? all : REPORT_VERDICTS_LISTED;
		char hv[320];

		for (int i = 0; i < n; i++)
			print_wrapped(f, "Verdict: ", v[i].text);
		free(v);
		if (all > n)
			fprintf(f, "NOTE: %d more verdicts, not listed (the first %d are; JSON "
				"verdicts_unlisted)\n", all - n, n);
		if (report_host_verdict_due(r, hv, sizeof(hv)))
			print_wrapped(f, "Verdict: ", hv);
	}
}

void print_report_plain(FILE *f, const struct report *r)
{
	if (report_table.csv || report_table.raw) {
		/* the tables only: the lines for a person are neither CSV nor
		 * fields a script splits (-j has them all) */
		print_report_table(f, r);	/* one table: -j has the NUMA figures */
		return;
	}
	if (timestamps) {
		char ts[16];

		fprintf(f, "%s ", fmt_time_now(ts, sizeof(ts), false));
	}
	fprintf(f, "memacct %s: cgroup %s (v%d), %.1f s%s\n", r->command, r->cg.rel,
		r->cg.version, r->elapsed_s, r->final ? ", final" : "");
	print_report_table(f, r);
	print_summary(f, r);
	if (r->has_page_cache)
		print_page_cache_files(f, &r->page_cache, "since start");
	print_losses(f, r);
	print_footnotes(f, r);
	print_kills_verdicts(f, r);
	if (r->phases)
		print_phases_plain(f, r->phases);
	fflush(f);
}

int print_report(FILE *f, const struct report *r)
{
	if (f == stdout)	/* -o FILE: never mixed with run's CMD on stdout */
		f = report_stream();
	if (reports_closed())
		return -EPIPE;
	errno = 0;	/* report_written(): the errno of a write that failed */
	if (json_output)
		print_report_json(f, r);
	else
		print_report_plain(f, r);
	return report_written(f);
}

void limits_note(const struct memcg *cg, const struct limits_req *req, const struct report *r)
{
	char b[16];

	if (!limits_any(req) || (!r->totals.oom_kills && !r->totals.memcg_reclaims))
		return;
	fmt_bytes(b, sizeof(b), req->set[LIMIT_MAX] ? req->val[LIMIT_MAX] :
		  req->val[LIMIT_HIGH]);
	fprintf(stderr, "memacct: limit %s %s bit in %s: %llu OOM kill(s), %llu memcg reclaim(s)",
		req->set[LIMIT_MAX] ? "--memory-max" : "--memory-high", b, cg->path,
		(unsigned long long)r->totals.oom_kills,
		(unsigned long long)r->totals.memcg_reclaims);
	/* the victims, by the BPF oom:mark_victim of each */
	for (size_t i = 0, n = 0; i < r->nprocs; i++) {
		if (!r->procs[i].m.oom_kills)
			continue;
		fprintf(stderr, "%s pid %d (%s)", n++ ? "," : "; OOM-killed:", r->procs[i].pid,
			r->procs[i].comm);
	}
	fputc('\n', stderr);
}
