// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * phases_print.c - the phases of a run (phases.h) as JSON ("phases" of the
 * final report, schema $defs/phase) and as a table per phase: the output
 * side of phases.c, as explain_print.c is explain.c's.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "phases.h"
#include "phases_print.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static const char *const change_names[] = { "appeared", "grew", "shrank", "vanished" };

static void delta_json(json_t *o, const struct phase_proc *d, unsigned int skip, double params)
{
	json_t *per = params > 0 ? json_object() : NULL;

	for (int id = 0; id < M_NR; id++) {
		const char *key = metric_table[id].key;

		if (metric_table[id].flags & skip)
			continue;
		if (d->unknown & MBIT(id)) {
			json_object_set_new(o, key, json_null());
			continue;
		}
		json_object_set_new(o, key, json_integer(d->d[id]));
		if (per && (metric_table[id].flags & MF_BYTES))
			json_object_set_new(per, key, json_real(d->d[id] / params));
	}
	if (!(metric_table[M_COW_COPIED].flags & skip)) {
		json_t *by = NULL;

		if (!(d->unknown & MBIT(M_COW_COPIED))) {
			by = json_object();
			for (int k = 1; k <= MEMACCT_COW_KIND_NR; k++)	/* as the report's */
				json_object_set_new(by, cow_kind_names[k % MEMACCT_COW_KIND_NR],
						    json_integer(d->cow_by_kind[k %
							MEMACCT_COW_KIND_NR]));
		}
		json_object_set_new(o, "cow_copied_bytes_by_mapping_kind", by ? by : json_null());
	}
	if (per)
		json_object_set_new(o, "per_param", per);
}

/* the phase where @m went, or null: still mapped at the last mark */
static json_t *freed_in_json(const struct phases *p, const struct phase_map *m)
{
	return m->freed_in >= 0 ? json_string_sanitized(p->done[m->freed_in].name) : json_null();
}

/* printf at @n of @buf (@len bytes): the new length, at most @len - 1 */
static size_t __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (n + 1 >= len)
		return n;
	va_start(ap, fmt);
	k = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (k < 0)
		return n;
	return n + (size_t)k < len ? n + (size_t)k : len - 1;
}

void phase_verdict(char *buf, size_t len, const struct phase_budget *b, double expect_bpp)
{
	const char *sep = " (";
	size_t n;

	if (!len)
		return;
	buf[0] = '\0';
	if (b->excess <= 0) {
		append(buf, len, 0, "within %g B/param", expect_bpp);
		return;
	}
	n = append(buf, len, 0, "%.2f B/param above %g: %.2f pinned", b->excess, expect_bpp,
		   b->excess_pinned);
	if (b->mlocked > 0)
		n = append(buf, len, n, "%smlocked %.2f", sep, b->mlocked), sep = ", ";
	if (b->pinned_vm > 0)
		n = append(buf, len, n, "%spinned_vm %.2f", sep, b->pinned_vm), sep = ", ";
	if (b->dma_pinned > 0)
		n = append(buf, len, n, "%sDMA %.2f", sep, b->dma_pinned), sep = ", ";
	if (sep[0] == ',')
		n = append(buf, len, n, ")");
	append(buf, len, n, ", %.2f unpinned", b->excess_unpinned);
}

/* a mapping a budget names, and its share per parameter */
static json_t *budget_map_json(const struct phases *p, int e, int j)
{
	const struct phase_map *m = &p->done[e].maps[j];
	json_t *o = json_object();

	json_object_set_new(o, "phase", json_string_sanitized(p->done[e].name));
	json_object_set_new(o, "pid", json_integer(m->pid));
	json_object_set_new(o, "change", json_string(change_names[m->change]));
	json_object_set_new(o, "addr_start", json_integer((json_int_t)m->start));
	json_object_set_new(o, "addr_end", json_integer((json_int_t)m->end));
	json_object_set_new(o, "kind", json_string(smaps_kind_name(m->kind)));
	json_object_set_new(o, "path", m->path[0] ? json_string_sanitized(m->path) : json_null());
	json_object_set_new(o, "rss_change_bytes", json_integer(m->rss_change));
	json_object_set_new(o, "locked_bytes", json_integer((json_int_t)m->locked));
	json_object_set_new(o, "per_param", json_real(m->rss_change / p->params));
	return o;
}

/* "bytes_per_param" of phase @i: phase_budget() and its verdict, or NULL */
static json_t *budget_json(const struct phases *p, size_t i)
{
	struct phase_budget b;
	json_t *o, *maps;
	char v[512];

	if (phase_budget(p, i, &b))
		return NULL;
	o = json_object();
	maps = json_array();
	json_object_set_new(o, "expected", json_real(p->expect_bpp));
	json_object_set_new(o, "change", json_real(b.change));
	json_object_set_new(o, "cumulative", json_real(b.cumulative));
	json_object_set_new(o, "excess", json_real(b.excess));
	json_object_set_new(o, "pinned", json_real(b.pinned));
	json_object_set_new(o, "mlocked", json_real(b.mlocked));
	json_object_set_new(o, "pinned_vm", json_real(b.pinned_vm));
	json_object_set_new(o, "dma_pinned", json_real(b.dma_pinned));
	json_object_set_new(o, "unpinned", json_real(b.unpinned));
	json_object_set_new(o, "excess_pinned", json_real(b.excess_pinned));
	json_object_set_new(o, "excess_unpinned", json_real(b.excess_unpinned));
	json_object_set_new(o, "file", json_real(b.file));
	for (int k = 0; k < b.ntop; k++)
		json_array_append_new(maps, budget_map_json(p, b.top[k].phase, b.top[k].map));
	json_object_set_new(o, "largest_mappings", maps);
	phase_verdict(v, sizeof(v), &b, p->expect_bpp);
	json_object_set_new(o, "verdict", json_string(v));
	return o;
}

json_t *phases_json(const struct phases *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->ndone; i++) {
		const struct phase *ph = &p->done[i];
		json_t *o = json_object(), *procs = json_array(), *maps = json_array();
		json_t *t = json_object();

		json_object_set_new(o, "name", json_string_sanitized(ph->name));
		json_object_set_new(o, "start", json_real(ph->start_s));
		json_object_set_new(o, "end", json_real(ph->end_s));
		for (size_t j = 0; j < ph->nprocs; j++) {
			const struct phase_proc *d = &ph->procs[j];
			json_t *po = json_object();

			json_object_set_new(po, "pid", json_integer(d->pid));
			json_object_set_new(po, "comm", json_string_sanitized(d->comm));
			json_object_set_new(po, "appeared", json_boolean(d->appeared));
			json_object_set_new(po, "exited", json_boolean(d->exited));
			delta_json(po, d, MF_TOTALS, p->params);
			json_array_append_new(procs, po);
		}
		json_object_set_new(o, "processes", procs);
		delta_json(t, &ph->totals, 0, p->params);
		json_object_set_new(o, "totals", t);
		for (size_t j = 0; j < ph->nmaps; j++) {
			const struct phase_map *m = &ph->maps[j];
			json_t *mo = json_object();

			json_object_set_new(mo, "pid", json_integer(m->pid));
			json_object_set_new(mo, "change", json_string(change_names[m->change]));
			json_object_set_new(mo, "addr_start", json_integer((json_int_t)m->start));
			json_object_set_new(mo, "addr_end", json_integer((json_int_t)m->end));
			json_object_set_new(mo, "kind", json_string(smaps_kind_name(m->kind)));
			json_object_set_new(mo, "path", m->path[0] ?
					    json_string_sanitized(m->path) : json_null());
			json_object_set_new(mo, "size_bytes", json_integer((json_int_t)m->size));
			json_object_set_new(mo, "rss_bytes", json_integer((json_int_t)m->rss));
			json_object_set_new(mo, "locked_bytes",
					    json_integer((json_int_t)m->locked));
			json_object_set_new(mo, "size_change_bytes", json_integer(m->size_change));
			json_object_set_new(mo, "rss_change_bytes", json_integer(m->rss_change));
			if (m->change == MAP_APPEARED || m->change == MAP_GREW)
				json_object_set_new(mo, "freed_in", freed_in_json(p, m));
			json_array_append_new(maps, mo);
		}
		json_object_set_new(o, "mappings", maps);
		if (p->params > 0) {
			json_t *b = budget_json(p, i);

			json_object_set_new(o, "bytes_per_param", b ? b : json_null());
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* "+64.0 MiB", "-8.00 MiB", "0"; exact with --bytes */
static char *fmt_delta(char *buf, size_t len, int64_t v, bool bytes)
{
	char b[32];

	if (!v)
		return snprintf(buf, len, "0"), buf;
	if (!bytes)
		snprintf(b, sizeof(b), "%llu", (unsigned long long)(v < 0 ? -v : v));
	else
		fmt_bytes(b, sizeof(b), (uint64_t)(v < 0 ? -v : v));
	snprintf(buf, len, "%c%s", v < 0 ? '-' : '+', b);
	return buf;
}

/* the table's columns: the report's stocks and flows */
static const enum metric_id phase_cols[] = {
	M_RSS, M_ANON, M_FILE, M_SHMEM, M_MLOCKED, M_PINNED_VM, M_DMA_PINNED,
	M_COW_COPIED, M_ZERO_FILL, M_PAGE_FAULTS,
};
static const char *const phase_col_names[] = {
	"RSS", "ANON", "FILE", "SHMEM", "MLOCKED", "PINNED_VM", "DMA", "COW", "ZEROFILL", "FAULTS",
};
#define NCOLS (sizeof(phase_cols) / sizeof(phase_cols[0]))

static void print_delta_row(FILE *f, const char *pid, const char *comm,
			    const struct phase_proc *d)
{
	char b[40];

	fprintf(f, "%8s %-15.15s", pid, comm);
	for (size_t c = 0; c < NCOLS; c++) {
		enum metric_id id = phase_cols[c];

		if (d->unknown & MBIT(id))
			fprintf(f, " %10s", "-");
		else
			fprintf(f, " %10s", fmt_delta(b, sizeof(b), d->d[id],
						      metric_table[id].flags & MF_BYTES));
	}
	fputc('\n', f);
}

/*
 * The CoW copies of @d (the cgroup's) in the phase by the kind of mapping
 * copied (issue 42): one line of the kinds that moved, no kind last;
 * nothing when none moved or CoW is unknown.
 */
static void print_cow_kinds(FILE *f, const struct phase_proc *d)
{
	const char *sep = " ";
	char b[40];

	if (d->unknown & MBIT(M_COW_COPIED))
		return;
	for (int k = 1; k <= MEMACCT_COW_KIND_NR; k++) {
		int i = k % MEMACCT_COW_KIND_NR;	/* [0], no kind, last */

		if (!d->cow_by_kind[i])
			continue;
		if (sep[0] == ' ')
			fprintf(f, "%8s %-15s", "", "COW BY MAPPING");
		fprintf(f, "%s%s %s", sep, cow_kind_names[i],
			fmt_delta(b, sizeof(b), d->cow_by_kind[i], true));
		sep = ", ";
	}
	if (sep[0] == ',')
		fprintf(f, " (anon and private file copies, the cgroup's)\n");
}

/* each phase against --expect-bytes-per-param, and what exceeds it */
static void print_budget_plain(FILE *f, const struct phases *p)
{
	fprintf(f, "\nbytes per parameter: the cgroup's anon + shmem, %.0f parameters, against ",
		p->params);
	if (p->expect_bpp == PHASE_ADAM_MIXED_BPP)
		fprintf(f, "the %g B/param of mixed-precision Adam (fp16 params and grads, fp32 "
			"master weights, m and v)\n", p->expect_bpp);
	else
		fprintf(f, "the expected %g B/param (--expect-bytes-per-param)\n", p->expect_bpp);
	for (size_t i = 0; i < p->ndone; i++) {
		struct phase_budget bu;
		char v[512], b[40], c[40];

		if (phase_budget(p, i, &bu)) {
			fprintf(f, "  \"%s\": anon or shmem unknown\n", p->done[i].name);
			continue;
		}
		phase_verdict(v, sizeof(v), &bu, p->expect_bpp);
		fprintf(f, "  \"%s\": %+.2f B/param, %.2f cumulative: %s", p->done[i].name,
			bu.change, bu.cumulative, v);
		if (bu.file >= 0.005 || bu.file <= -0.005)
			fprintf(f, "; page cache %+.2f apart", bu.file);
		fputc('\n', f);
		if (bu.excess <= 0)
			continue;
		for (int k = 0; k < bu.ntop; k++) {
			const struct phase_map *m = &p->done[bu.top[k].phase].maps[bu.top[k].map];

			fmt_bytes(b, sizeof(b), m->size);
			fmt_delta(c, sizeof(c), m->rss_change, true);
			fprintf(f, "      %.2f B/param: %s %s %llx-%llx, rss %s",
				m->rss_change / p->params, b,
				m->path[0] ? m->path : smaps_kind_name(m->kind),
				(unsigned long long)m->start, (unsigned long long)m->end, c);
			if (m->locked)
				fprintf(f, ", locked %s", fmt_bytes(b, sizeof(b), m->locked));
			fprintf(f, " (pid %d), %s in \"%s\"\n", m->pid, change_names[m->change],
				p->done[bu.top[k].phase].name);
		}
	}
}

void print_phases_plain(FILE *f, const struct phases *p)
{
	for (size_t i = 0; i < p->ndone; i++) {
		const struct phase *ph = &p->done[i];
		char pid[16], b[40], c[40];

		fprintf(f, "\nphase \"%s\": %.3f s to %.3f s (%.3f s)\n", ph->name, ph->start_s,
			ph->end_s, ph->end_s - ph->start_s);
		fprintf(f, "%8s %-15s", "PID", "COMM");
		for (size_t k = 0; k < NCOLS; k++)
			fprintf(f, " %10s", phase_col_names[k]);
		fputc('\n', f);
		for (size_t j = 0; j < ph->nprocs; j++) {
			const struct phase_proc *d = &ph->procs[j];

			snprintf(pid, sizeof(pid), "%d%s%s", d->pid, d->appeared ? "+" : "",
				 d->exited ? "x" : "");
			print_delta_row(f, pid, d->comm, d);
		}
		/* the cgroup's change over the phase, not a sum of the rows:
		 * exited workers and unlinked files take theirs back (issue 41:
		 * rows of +794 MiB over a TOTAL of -262 MiB, unlabelled) */
		print_delta_row(f, "TOTAL", "(cgroup change)", &ph->totals);
		print_cow_kinds(f, &ph->totals);
		if (p->params > 0) {
			fprintf(f, "%8s %-15s", "B/PARAM", "");
			for (size_t k = 0; k < NCOLS; k++) {
				enum metric_id id = phase_cols[k];

				if (ph->totals.unknown & MBIT(id) ||
				    !(metric_table[id].flags & MF_BYTES))
					fprintf(f, " %10s", "-");
				else if (!ph->totals.d[id])
					fprintf(f, " %10s", "0");
				else
					fprintf(f, " %+10.3g", ph->totals.d[id] / p->params);
			}
			fputc('\n', f);
		}
		size_t unlisted = 0;

		for (size_t j = 0; j < ph->nmaps; j++) {
			const struct phase_map *m = &ph->maps[j];

			/* address space without memory (a glibc arena's 64 MiB
			 * reserve, a guard region): not a line of its own here,
			 * only counted (issue 41: "rss 0" lines filled the
			 * README job's epoch table); -j lists every one */
			if ((uint64_t)(m->rss_change < 0 ? -m->rss_change : m->rss_change) <
			    PHASE_MAP_MIN_BYTES && !m->locked) {
				unlisted++;
				continue;
			}
			fmt_bytes(b, sizeof(b), m->change == MAP_VANISHED ?
				  (uint64_t)-m->size_change : m->size);
			fmt_delta(c, sizeof(c), m->rss_change, true);
			fprintf(f, "  %d %s %llx-%llx %s %s, rss %s", m->pid,
				change_names[m->change], (unsigned long long)m->start,
				(unsigned long long)m->end, b, smaps_kind_name(m->kind), c);
			if (m->locked)
				fprintf(f, ", locked %s", fmt_bytes(b, sizeof(b), m->locked));
			fprintf(f, "%s%s", m->path[0] ? " " : "", m->path);
			if (m->change == MAP_VANISHED || m->change == MAP_SHRANK)
				fputc('\n', f);
			else if (m->freed_in >= 0)
				fprintf(f, "; freed in \"%s\"\n", p->done[m->freed_in].name);
			else
				fprintf(f, "; not freed by the last mark\n");
		}
		if (unlisted)
			fprintf(f, "  and %zu mapping%s whose size changed with under 1 MiB of RSS "
				"(address space, not memory: -j lists %s)\n", unlisted,
				unlisted == 1 ? "" : "s", unlisted == 1 ? "it" : "them");
	}
	if (p->params > 0 && p->ndone)
		print_budget_plain(f, p);
	if (p->refused)
		fprintf(f, "phases: %llu marks past the first %d phases were refused\n",
			(unsigned long long)p->refused, PHASES_MAX);
	if (p->failed > p->refused)
		fprintf(f, "phases: %llu marks failed (answered \"error\": not 'phase NAME' or "
			"'end', or the snapshot failed); no phase was made of them\n",
			(unsigned long long)(p->failed - p->refused));
}

void phases_report_json(json_t *o, const struct phases *p)
{
	if (p->params > 0) {
		json_object_set_new(o, "params", json_real(p->params));
		json_object_set_new(o, "expect_bytes_per_param", json_real(p->expect_bpp));
	}
	json_object_set_new(o, "phases", phases_json(p));
	json_object_set_new(o, "phases_refused", json_integer((json_int_t)p->refused));
	json_object_set_new(o, "marks_failed", json_integer((json_int_t)p->failed));
}
