// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* report_html.c - a recording drawn as one self-contained HTML page (report_html.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "phases.h"
#include "oom_print.h"
#include "phases_print.h"
#include "report_html.h"
#include "report_print.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define HTML_LINES	8	/* processes drawn: the largest RSS peaks */
#define HTML_EVENTS	200	/* exit markers drawn; more are counted */

/* The classes stacked, bottom first (docs/run.md "Recording"). */
enum { C_PINNED, C_ANON, C_COW, C_SHMEM, C_CACHE, C_RECLAIMABLE, C_NR };

static const struct {
	const char *name, *color, *help;
} classes[C_NR] = {
	[C_PINNED] = { "pinned", "#d62728",
		       "mlocked + pinned_vm + DMA-pinned: never reclaimed" },
	[C_ANON] = { "owned anon", "#1f77b4", "anonymous memory, less the pinned and CoW-copied" },
	[C_COW] = { "CoW-copied", "#ff7f0e",
		    "pages the live processes copied on write (each one's copies, freed with it; "
		    "at most the anon)" },
	[C_SHMEM] = { "shmem", "#9467bd", "tmpfs, shared anonymous, SysV and memfd" },
	[C_CACHE] = { "page cache (dirty, in use)", "#8c564b",
		      "file pages not reclaimable now: dirty, under writeback" },
	[C_RECLAIMABLE] = { "reclaimable page cache", "#98df8a",
			    "clean file pages the kernel takes back under pressure" },
};

static const char *const line_colors[HTML_LINES] = {
	"#17becf", "#e377c2", "#bcbd22", "#7f7f7f", "#393b79", "#8c6d31", "#843c39", "#7b4173",
};

struct html_point {
	double t;
	uint64_t c[C_NR];
	uint64_t usage;
};

struct html_series {
	int pid;
	char comm[64];
	double *t;		/* its n samples: times and RSS, each grown apart */
	uint64_t *v;
	size_t n, cap_t, cap_v;
	uint64_t peak;
	bool live;		/* in the last snapshot, live */
	bool exit_marked;
};

enum html_ev { EV_EXIT, EV_OOM, EV_FORECAST };

struct html_event {
	double t;
	enum html_ev kind;
	char text[480];
};

struct html_doc {
	struct html_point *pts;
	size_t npts, cap_pts;
	struct html_series *procs;
	size_t nprocs, cap_procs;
	/* procs by pid and comm: open addressing, each slot an index into
	 * procs plus 1 (0: empty), at most half full (series_of()) */
	size_t *slot, nslot;
	struct html_event *ev;
	size_t nev, cap_ev;
	uint64_t exits_unmarked;
	size_t ooms_seen, warnings_seen;
	struct phases phases;	/* the final report's */
	char *final_text;	/* print_report_plain() of the final report */
	size_t final_len;
	bool has_limit;
	uint64_t limit;
};

struct html_doc *html_new(void)
{
	struct html_doc *d = calloc(1, sizeof(*d));

	if (d)
		d->phases.fd = d->phases.child_fd = -1;
	return d;
}

void html_free(struct html_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nprocs; i++) {
		free(d->procs[i].t);
		free(d->procs[i].v);
	}
	free(d->procs);
	free(d->slot);
	free(d->pts);
	free(d->ev);
	free(d->final_text);
	phases_free(&d->phases);
	free(d);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The copies made on write by the processes of @r still alive: a copy is
 * its process's own page, freed with it at the latest (issue 41: the
 * cgroup's flow since the start drew the parent's memory as CoW once the
 * workers that copied had exited).
 */
static uint64_t cow_of_live(const struct report *r)
{
	uint64_t v = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		if (!r->procs[i].exited && !(r->procs[i].m.unknown & MBIT(M_COW_COPIED)))
			v += r->procs[i].m.cow_copied;
	return v;
}

/* the cgroup's stocks split into classes that do not overlap; @cow_live:
 * cow_of_live() */
static void split_classes(const struct metrics *t, uint64_t cow_live, struct html_point *p)
{
	uint64_t anon = t->unknown & MBIT(M_ANON) ? 0 : t->anon;
	uint64_t pinned = min64(t->pinned, t->usage);
	uint64_t pinned_anon = min64(pinned, anon);
	uint64_t cow = min64(cow_live, sub0(anon, pinned_anon));

	p->c[C_PINNED] = pinned;
	p->c[C_COW] = cow;
	p->c[C_ANON] = sub0(anon, pinned_anon + cow);
	p->c[C_SHMEM] = t->shmem;
	p->c[C_RECLAIMABLE] = t->reclaimable;
	/* memory.stat file holds shmem (v2) and the pinned file pages */
	p->c[C_CACHE] = sub0(t->file, t->shmem + t->reclaimable + (pinned - pinned_anon));
	p->usage = t->usage;
}

static size_t series_hash(int pid, const char *comm)
{
	uint64_t h = (uint64_t)(unsigned int)pid * 0x9e3779b97f4a7c15ULL;

	for (; *comm; comm++)		/* FNV-1a over the name */
		h = (h ^ (unsigned char)*comm) * 0x100000001b3ULL;
	return (size_t)(h ^ h >> 29);
}

/* d->slot rebuilt with @n slots (a power of 2); -ENOMEM leaves it as it was */
static int series_rehash(struct html_doc *d, size_t n)
{
	size_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < d->nprocs; i++) {
		size_t j = series_hash(d->procs[i].pid, d->procs[i].comm) & (n - 1);

		while (slot[j])
			j = (j + 1) & (n - 1);
		slot[j] = i + 1;
	}
	free(d->slot);
	d->slot = slot;
	d->nslot = n;
	return 0;
}

/* The series of @row's process (its pid and comm), made at its first
 * sample: a hash lookup, so that a snapshot of N processes costs O(N), not
 * O(N^2) (issue 41 item 6: 300,000 processes took over 60 s). NULL: ENOMEM. */
static struct html_series *series_of(struct html_doc *d, const struct proc_row *row)
{
	struct html_series *s;
	size_t j;

	if ((d->nprocs + 1) * 2 > d->nslot &&
	    series_rehash(d, d->nslot ? d->nslot * 2 : 1024))
		return NULL;
	for (j = series_hash(row->pid, row->comm) & (d->nslot - 1); d->slot[j];
	     j = (j + 1) & (d->nslot - 1)) {
		s = &d->procs[d->slot[j] - 1];
		if (s->pid == row->pid && !strncmp(s->comm, row->comm, sizeof(s->comm) - 1))
			return s;
	}
	s = array_grow(&d->procs, d->nprocs, &d->cap_procs, sizeof(*s));
	if (!s)
		return NULL;
	d->nprocs++;
	d->slot[j] = d->nprocs;
	memset(s, 0, sizeof(*s));
	s->pid = row->pid;
	snprintf(s->comm, sizeof(s->comm), "%s", row->comm);
	return s;
}

static int add_event(struct html_doc *d, double t, enum html_ev kind, const char *text)
{
	struct html_event *e;

	if (kind == EV_EXIT && d->nev >= HTML_EVENTS) {
		d->exits_unmarked++;
		return 0;
	}
	e = array_grow(&d->ev, d->nev, &d->cap_ev, sizeof(*e));
	if (!e)
		return -ENOMEM;
	d->nev++;
	e->t = t;
	e->kind = kind;
	snprintf(e->text, sizeof(e->text), "%s", text);
	return 0;
}

static int add_row(struct html_doc *d, const struct proc_row *row, double t)
{
	struct html_series *s = series_of(d, row);
	char text[200];
	uint64_t *vp;
	double *tp;

	if (!s)
		return -ENOMEM;
	if (row->exited) {
		if (s->exit_marked)
			return 0;
		s->exit_marked = true;
		if (WIFSIGNALED(row->exit_code))
			snprintf(text, sizeof(text), "PID %d (%s) %s by signal %d", row->pid,
				 row->comm, row->oom_killed ? "OOM-killed" : "killed",
				 WTERMSIG(row->exit_code));
		else
			snprintf(text, sizeof(text), "PID %d (%s) exited, status %d", row->pid,
				 row->comm, WEXITSTATUS(row->exit_code));
		return add_event(d, t, EV_EXIT, text);
	}
	tp = array_grow(&s->t, s->n, &s->cap_t, sizeof(*tp));
	vp = tp ? array_grow(&s->v, s->n, &s->cap_v, sizeof(*vp)) : NULL;
	if (!vp)
		return -ENOMEM;
	*tp = t;
	*vp = row->m.rss;
	s->n++;
	if (row->m.rss > s->peak)
		s->peak = row->m.rss;
	return 0;
}

int html_add(struct html_doc *d, const struct report *r, const char *kind)
{
	struct html_point *p;
	int err;

	p = array_grow(&d->pts, d->npts, &d->cap_pts, sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->npts++;
	p->t = r->elapsed_s;
	split_classes(&r->totals, cow_of_live(r), p);
	d->has_limit = r->has_limit;
	d->limit = r->limit_bytes;
	for (size_t i = 0; i < r->nprocs; i++) {
		err = add_row(d, &r->procs[i], r->elapsed_s);
		if (err)
			return err;
	}
	for (; d->ooms_seen < r->nooms; d->ooms_seen++) {
		json_t *k = report_oom_json(r, d->ooms_seen);
		const char *v = json_string_value(json_object_get(k, "verdict"));

		err = add_event(d, r->elapsed_s, EV_OOM, v ? v : "OOM kill");
		json_decref(k);
		if (err)
			return err;
	}
	/* each OOM forecast warning at its own time (docs/metrics.md) */
	for (; d->warnings_seen < json_array_size(r->oom_warnings); d->warnings_seen++) {
		json_t *w = json_array_get(r->oom_warnings, d->warnings_seen);
		char *text = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&text, &len);

		if (!mf)
			return -ENOMEM;
		oom_warning_print(mf, "", w);
		fclose(mf);
		err = add_event(d, json_number_value(json_object_get(w, "t_s")), EV_FORECAST,
				text ? text : "OOM forecast");
		free(text);
		if (err)
			return err;
	}
	if (strcmp(kind, "final"))
		return 0;
	if (r->phases) {	/* a copy of the final report's (its owner frees it) */
		json_t *o = json_object();

		/* the report's own members (--expect-bytes-per-param too) */
		phases_report_json(o, r->phases);
		phases_free(&d->phases);
		err = phases_from_json(&d->phases, o);
		json_decref(o);
		if (err)
			return err;
	}
	free(d->final_text);
	{
		FILE *f = open_memstream(&d->final_text, &d->final_len);

		if (!f)
			return -ENOMEM;
		struct report c = *r;

		c.phases = NULL;	/* drawn apart, above it */
		print_report_plain(f, &c);
		fclose(f);
	}
	return 0;
}

/* ------------------------------------------------------------ writing */

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

/* the plot area, pixels */
#define W	980
#define H	440
#define X0	80
#define X1	700
#define Y0	40	/* phase bands above it */
#define Y1	400

struct scale {
	double tmax;
	uint64_t ymax;
};

static double sx(const struct scale *s, double t)
{
	return X0 + (X1 - X0) * (s->tmax > 0 ? t / s->tmax : 0);
}

static double sy(const struct scale *s, uint64_t v)
{
	return Y1 - (Y1 - Y0) * ((double)v / (double)s->ymax);
}

static uint64_t stack_top(const struct html_point *p, int upto)
{
	uint64_t v = 0;

	for (int c = 0; c <= upto; c++)
		v += p->c[c];
	return v;
}

static void draw_axes(FILE *f, const struct scale *s)
{
	static const double steps[] = { 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
					600, 900, 1800, 3600, 7200, 14400, 28800, 86400 };
	double step = steps[0];
	uint64_t ystep = 4096;
	char b[16];

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && s->tmax / steps[i] > 8; i++)
		step = i + 1 < sizeof(steps) / sizeof(steps[0]) ? steps[i + 1] : steps[i];
	while (s->ymax / ystep > 6)
		ystep *= 2;
	fprintf(f, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	for (uint64_t v = 0; v <= s->ymax; v += ystep) {
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", X0, X1,
			sy(s, v), sy(s, v), X0 - 4, sy(s, v) + 4, fmt_bytes(b, sizeof(b), v));
	}
	for (double t = 0; t <= s->tmax + 1e-9; t += step)
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", sx(s, t),
			sx(s, t), Y1, Y1 + 4, sx(s, t), Y1 + 16, t);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds since the start"
		"</text>\n<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>"
		"<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n</g>\n",
		(X0 + X1) / 2, Y1 + 32, X0, X1, Y1, Y1, X0, X0, Y0, Y1);
}

static void draw_stack(FILE *f, const struct html_doc *d, const struct scale *s)
{
	fprintf(f, "<g class=\"stack\">\n");
	for (int c = 0; c < C_NR; c++) {
		fprintf(f, "<path class=\"area\" data-class=\"%s\" fill=\"%s\" stroke=\"none\" d=\"",
			classes[c].name, classes[c].color);
		for (size_t i = 0; i < d->npts; i++)
			fprintf(f, "%c%.1f,%.1f ", i ? 'L' : 'M', sx(s, d->pts[i].t),
				sy(s, stack_top(&d->pts[i], c)));
		for (size_t i = d->npts; i-- > 0;)
			fprintf(f, "L%.1f,%.1f ", sx(s, d->pts[i].t),
				sy(s, c ? stack_top(&d->pts[i], c - 1) : 0));
		fprintf(f, "Z\"><title>%s: %s</title></path>\n", classes[c].name, classes[c].help);
	}
	fprintf(f, "</g>\n");
}

static int cmp_peak_desc(const void *a, const void *b)
{
	const struct html_series *x = *(const struct html_series *const *)a;
	const struct html_series *y = *(const struct html_series *const *)b;

	return x->peak < y->peak ? 1 : x->peak > y->peak ? -1 : 0;
}

/* the processes of the largest RSS peaks, largest first; returns how many */
static size_t top_series(const struct html_doc *d, const struct html_series **top)
{
	const struct html_series **all = malloc((d->nprocs ? d->nprocs : 1) * sizeof(*all));
	size_t n = 0, k = 0;

	if (!all)
		return 0;
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].n)
			all[n++] = &d->procs[i];
	qsort(all, n, sizeof(*all), cmp_peak_desc);
	for (; k < n && k < HTML_LINES; k++)
		top[k] = all[k];
	free(all);
	return k;
}

/* Whether two series would draw as one line: the same snapshots, each RSS
 * within 1% of the larger peak (identical DataLoader workers). */
static bool same_line(const struct html_series *a, const struct html_series *b)
{
	uint64_t tol = (a->peak > b->peak ? a->peak : b->peak) / 100;

	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->t[i] != b->t[i] ||
		    (a->v[i] > b->v[i] ? a->v[i] - b->v[i] : b->v[i] - a->v[i]) > tol)
			return false;
	return true;
}

/*
 * Line @k's place among the top lines it coincides with (same_line()):
 * *@nth of *@of. Coinciding lines are drawn dashed in turns (one dash of
 * each colour), so that four identical workers show four colours, not one.
 */
static void line_group(const struct html_series **top, size_t n, size_t k, size_t *nth,
		       size_t *of)
{
	*nth = 0;
	*of = 0;
	for (size_t j = 0; j < n; j++)
		if (j == k || same_line(top[k], top[j])) {
			if (j < k)
				(*nth)++;
			(*of)++;
		}
}

/* the stroke-dasharray and -dashoffset of line @k (none when alone) */
static void line_dash(FILE *f, const struct html_series **top, size_t n, size_t k)
{
	size_t nth, of;

	line_group(top, n, k, &nth, &of);
	if (of > 1)
		fprintf(f, " stroke-dasharray=\"6,%zu\" stroke-dashoffset=\"%zu\"", 6 * (of - 1),
			6 * nth);
}

static void draw_lines(FILE *f, const struct scale *s, const struct html_series **top, size_t n)
{
	char b[16];

	fprintf(f, "<g class=\"rss\" fill=\"none\" stroke-width=\"1.5\">\n");
	for (size_t k = 0; k < n; k++) {
		fprintf(f, "<polyline class=\"proc\" data-pid=\"%d\" stroke=\"%s\"", top[k]->pid,
			line_colors[k]);
		line_dash(f, top, n, k);
		fprintf(f, " points=\"");
		for (size_t i = 0; i < top[k]->n; i++)
			fprintf(f, "%.1f,%.1f ", sx(s, top[k]->t[i]), sy(s, top[k]->v[i]));
		fprintf(f, "\"><title>PID %d (", top[k]->pid);
		esc(f, top[k]->comm);
		fprintf(f, ") RSS, peak %s</title></polyline>\n",
			fmt_bytes(b, sizeof(b), top[k]->peak));
	}
	fprintf(f, "</g>\n");
}

/*
 * Whether phase @i's band shows its name (else its number, when that fits:
 * phase_key() then lists the names): a name clipped to a narrow band read
 * as another word ("tmp", "clea"). Width of 11 px sans-serif: ~6.5 px a
 * character, generous for narrow letters.
 */
static bool band_fits(const struct scale *s, const struct phase *ph, size_t chars)
{
	return sx(s, ph->end_s) - sx(s, ph->start_s) >= 6.5 * (double)chars + 6;
}

static size_t digits(size_t v)
{
	size_t n = 1;

	for (; v >= 10; v /= 10)
		n++;
	return n;
}

static void draw_phases(FILE *f, const struct html_doc *d, const struct scale *s)
{
	fprintf(f, "<g class=\"phases\" font-size=\"11\">\n");
	for (size_t i = 0; i < d->phases.ndone; i++) {
		const struct phase *ph = &d->phases.done[i];
		double a = sx(s, ph->start_s), b = sx(s, ph->end_s);
		bool name = band_fits(s, ph, strlen(ph->name)), num = band_fits(s, ph, digits(i + 1));

		fprintf(f, "<rect class=\"phase\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			"fill=\"%s\" stroke=\"#888\"><title>phase ", a, Y0 - 24,
			b - a > 0.5 ? b - a : 0.5, 20, i % 2 ? "#e8e8f4" : "#f4f0e0");
		esc(f, ph->name);
		fprintf(f, ": %.3f s to %.3f s</title></rect>\n"
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#888\" "
			"stroke-dasharray=\"3,3\"/>\n"
			"<text class=\"phase-name\" x=\"%.1f\" y=\"%d\" clip-path=\"url(#clip%zu)\">",
			ph->start_s, ph->end_s, a, a, Y0 - 4, Y1, a + 3, Y0 - 10, i);
		if (name)
			esc(f, ph->name);
		else if (num)
			fprintf(f, "%zu", i + 1);
		fprintf(f, "</text>\n<clipPath id=\"clip%zu\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			"height=\"20\"/></clipPath>\n", i, a, Y0 - 24, b - a > 0.5 ? b - a : 0.5);
	}
	fprintf(f, "</g>\n");
}

/* Below the timeline, the names of the phases whose band is too narrow
 * for it (draw_phases()): "N name" each; nothing when every name fits. */
static void phase_key(FILE *f, const struct html_doc *d, const struct scale *s)
{
	bool any = false;

	for (size_t i = 0; i < d->phases.ndone; i++) {
		const struct phase *ph = &d->phases.done[i];

		if (band_fits(s, ph, strlen(ph->name)))
			continue;
		fprintf(f, "%s%zu ", any ? ", " : "<p id=\"phase-key\">Narrow phases: ", i + 1);
		esc(f, ph->name);
		if (!band_fits(s, ph, digits(i + 1)))
			fprintf(f, " (%.3f s to %.3f s)", ph->start_s, ph->end_s);
		any = true;
	}
	if (any)
		fprintf(f, "</p>\n");
}

static void draw_events(FILE *f, const struct html_doc *d, const struct scale *s)
{
	fprintf(f, "<g class=\"events\">\n");
	for (size_t i = 0; i < d->nev; i++) {
		const struct html_event *e = &d->ev[i];
		double x = sx(s, e->t);

		if (e->kind == EV_OOM)
			fprintf(f, "<g class=\"oom\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
				"stroke=\"#d00\" stroke-width=\"2\"/><path d=\"M%.1f,%d l-6,-10 h12 z\" "
				"fill=\"#d00\"/><title>OOM kill at %.2f s: ", x, x, Y0, Y1, x, Y0,
				e->t);
		else if (e->kind == EV_FORECAST)
			fprintf(f, "<g class=\"forecast\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
				"y2=\"%d\" stroke=\"#e80\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>"
				"<path d=\"M%.1f,%d l-6,-10 h12 z\" fill=\"#e80\"/><title>%.2f s: ", x, x,
				Y0, Y1, x, Y0, e->t);
		else
			fprintf(f, "<g class=\"exit\"><circle cx=\"%.1f\" cy=\"%d\" r=\"3\" "
				"fill=\"#555\"/><title>%.2f s: ", x, Y1, e->t);
		esc(f, e->text);
		fprintf(f, "</title></g>\n");
	}
	fprintf(f, "</g>\n");
}

static void draw_limit(FILE *f, const struct html_doc *d, const struct scale *s)
{
	char b[16];

	if (!d->has_limit || d->limit > s->ymax)
		return;
	fprintf(f, "<g class=\"limit\"><line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"8,4\"/><text x=\"%d\" "
		"y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">limit %s</text></g>\n", X0, X1,
		sy(s, d->limit), sy(s, d->limit), X1, sy(s, d->limit) - 3,
		fmt_bytes(b, sizeof(b), d->limit));
}

static void draw_legend(FILE *f, const struct html_doc *d, const struct scale *s,
			const struct html_series **top, size_t n)
{
	char b[16], lim[48] = ": none";
	int y = Y0;

	fprintf(f, "<g class=\"legend\" font-size=\"12\">\n");
	if (d->has_limit)
		snprintf(lim, sizeof(lim), " %s%s", fmt_bytes(b, sizeof(b), d->limit),
			 d->limit > s->ymax ? " (above)" : "");
	for (int c = C_NR; c-- > 0; y += 18) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n", X1 + 20, y, classes[c].color,
			X1 + 38, y + 10, classes[c].name);
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" "
		"stroke-dasharray=\"8,4\"/><text x=\"%d\" y=\"%d\">limit%s</text>\n", X1 + 20,
		X1 + 32, y + 6, y + 6, X1 + 38, y + 10, lim);
	y += 24;
	fprintf(f, "<text x=\"%d\" y=\"%d\">RSS per process:</text>\n", X1 + 20, y + 10);
	y += 18;
	for (size_t k = 0; k < n; k++, y += 16) {
		size_t nth, of;

		line_group(top, n, k, &nth, &of);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">%d ", X1 + 20, X1 + 32, y + 6,
			y + 6, line_colors[k], X1 + 38, y + 10, top[k]->pid);
		esc(f, top[k]->comm);
		if (of > 1)
			fprintf(f, " (1 of %zu identical lines)", of);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#d00\">&#9660; OOM kill</text>"
		"<text x=\"%d\" y=\"%d\" fill=\"#e80\">&#9660; OOM forecast</text>"
		"<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"#555\"/><text x=\"%d\" y=\"%d\">"
		"exit</text>\n</g>\n", X1 + 20, y + 14, X1 + 20, y + 28, X1 + 25, y + 42, X1 + 38,
		y + 46);
}

/*
 * The timeline's scale: its end (the last snapshot or phase) and its top
 * (the stack, the usage, the largest peaks, a limit not far above them),
 * with a margin.
 */
static void html_scale(const struct html_doc *d, const struct html_series *const *top,
		       size_t ntop, struct scale *s)
{
	size_t i;

	for (i = 0; i < d->npts; i++) {
		uint64_t top_v = stack_top(&d->pts[i], C_NR - 1);

		s->tmax = d->pts[i].t > s->tmax ? d->pts[i].t : s->tmax;
		s->ymax = top_v > s->ymax ? top_v : s->ymax;
		s->ymax = d->pts[i].usage > s->ymax ? d->pts[i].usage : s->ymax;
	}
	for (i = 0; i < ntop; i++)
		s->ymax = top[i]->peak > s->ymax ? top[i]->peak : s->ymax;
	for (i = 0; i < d->phases.ndone; i++)
		s->tmax = d->phases.done[i].end_s > s->tmax ? d->phases.done[i].end_s : s->tmax;
	/* a limit up to 4x the figures is drawn; one far above them (none,
	 * or a host's worth) would flatten them: the legend gives it */
	if (d->has_limit && d->limit <= s->ymax * 4 && d->limit > s->ymax)
		s->ymax = d->limit;
	s->ymax += s->ymax / 20;
	if (s->tmax <= 0)
		s->tmax = 1;
}

/* The "Phases" section: the phases table as print_phases_plain() writes it. */
static void html_phases(FILE *f, const struct html_doc *d)
{
	fprintf(f, "<h2>Phases</h2>\n<pre id=\"phases\">");
	if (d->phases.ndone) {
		char *t = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&t, &len);

		if (m) {
			print_phases_plain(m, &d->phases);
			fclose(m);
			esc(f, t);
			free(t);
		}
	} else {
		fputs("no phase marks", f);
	}
	fprintf(f, "</pre>\n");
}

int html_write(struct html_doc *d, FILE *f, const json_t *header)
{
	const json_t *argv = json_object_get(header, "argv"), *a;
	const json_t *cg = json_object_get(header, "cgroup");
	const struct html_series *top[HTML_LINES];
	struct scale s = { 0, 1 << 20 };
	size_t ntop = top_series(d, top), i;
	char cmd[1024] = "";

	json_array_foreach(argv, i, a)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s%s", i ? " " : "",
			 json_string_value(a) ?: "");
	html_scale(d, top, ntop, &s);

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<title>memacct: ");
	esc(f, cmd[0] ? cmd : json_string_value(json_object_get(header, "command")) ?: "");
	fprintf(f, "</title>\n<style>body{font-family:sans-serif;margin:16px;color:#222}"
		"pre{font-size:12px;background:#f8f8f8;padding:8px;overflow-x:auto}"
		"h1{font-size:18px}h2{font-size:15px}</style>\n</head><body>\n<h1>memacct ");
	/* every string of the recording is escaped: a .rec is input */
	esc(f, json_string_value(json_object_get(header, "command")) ?: "");
	fprintf(f, ": ");
	esc(f, cmd);
	fprintf(f, "</h1>\n<p id=\"meta\">cgroup ");
	esc(f, json_string_value(json_object_get(cg, "path")) ?: "?");
	fprintf(f, ", started ");
	esc(f, json_string_value(json_object_get(header, "start_iso")) ?: "?");
	fprintf(f, ", %.1f s, %zu snapshots</p>\n", s.tmax, d->npts);
	fprintf(f, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		"<title>the cgroup's memory over time, by class</title>\n", W, H, W, H);
	draw_axes(f, &s);
	draw_stack(f, d, &s);
	draw_lines(f, &s, top, ntop);
	draw_limit(f, d, &s);
	draw_phases(f, d, &s);
	draw_events(f, d, &s);
	draw_legend(f, d, &s, top, ntop);
	fprintf(f, "</svg>\n");
	phase_key(f, d, &s);
	if (d->exits_unmarked)
		fprintf(f, "<p>%llu more exits not marked</p>\n",
			(unsigned long long)d->exits_unmarked);
	fprintf(f, "<p class=\"note\">Stacked: the cgroup's memory.stat split into classes that "
		"do not overlap; pinned memory counted once (out of anon, or out of the page cache "
		"where it is file); CoW-copied is what the live processes copied on write (a "
		"process's copies go with it), at most the anon left. Lines: each process's RSS "
		"(the %d largest peaks); lines that coincide (identical workers) are drawn dashed in "
		"turns, one colour each.</p>\n", HTML_LINES);
	html_phases(f, d);
	fprintf(f, "<h2>Final report</h2>\n<pre id=\"final\">");
	esc(f, d->final_text ? d->final_text : "none: the recording ends early");
	fprintf(f, "</pre>\n</body></html>\n");
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
