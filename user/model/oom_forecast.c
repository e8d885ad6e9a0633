// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * oom_forecast.c - the time until a limited cgroup's unreclaimable bytes
 * reach its limit, and the class that grows (oom_forecast.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hostpin.h"
#include "oom.h"
#include "oom_forecast.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define FC_MINUTE_NS	60000000000ULL

static const char *const class_names[FC_CLASSES] = {
	[FC_ANON] = "anon", [FC_SHMEM] = "shmem", [FC_KERNEL] = "kernel",
	[FC_MLOCKED] = "mlocked", [FC_COW] = "cow", [FC_PINNED] = "pinned",
};

const char *fc_class_name(enum fc_class c)
{
	return c < FC_CLASSES ? class_names[c] : "?";
}

/* anon + shmem + kernel: FC_MLOCKED, FC_COW and FC_PINNED lie within the
 * first two */
static uint64_t unreclaimable(const struct fc_sample *s)
{
	return s->bytes[FC_ANON] + s->bytes[FC_SHMEM] + s->bytes[FC_KERNEL];
}

static const struct fc_sample *nth(const struct oom_forecast *f, unsigned int i)
{
	unsigned int first = f->n < FC_SAMPLES ? 0 : f->next;

	return &f->s[(first + i) % FC_SAMPLES];
}

void fc_add(struct oom_forecast *f, uint64_t t_ns, const struct memcg_stat *st,
	    uint64_t cow_bytes, uint64_t pinned_bytes)
{
	struct fc_sample *s;

	if (f->n && t_ns < nth(f, f->n - 1)->t_ns + 500000000ULL)
		return;
	if (!f->minute_start_ns)
		f->minute_start_ns = t_ns;
	if (f->n == FC_SAMPLES) {	/* the oldest leaves: its minute's peak */
		uint64_t u = unreclaimable(&f->s[f->next]);

		if (t_ns - f->minute_start_ns >= FC_MINUTE_NS) {
			f->minute = (f->minute + 1) % FC_PEAK_MINUTES;
			f->minute_peak[f->minute] = 0;
			f->minute_start_ns = t_ns;
		}
		if (u > f->minute_peak[f->minute])
			f->minute_peak[f->minute] = u;
	}
	s = &f->s[f->next];
	s->t_ns = t_ns;
	s->bytes[FC_ANON] = st->anon;
	s->bytes[FC_SHMEM] = st->shmem;
	s->bytes[FC_KERNEL] = st->slab_unreclaimable + st->kernel_stack + st->pagetables +
			      st->percpu + st->vmalloc + st->sock;
	s->bytes[FC_MLOCKED] = st->unevictable;
	s->bytes[FC_COW] = cow_bytes;
	s->bytes[FC_PINNED] = pinned_bytes;
	f->next = (f->next + 1) % FC_SAMPLES;
	if (f->n < FC_SAMPLES)
		f->n++;
}

int fc_host_stat(const struct hostmem *m, uint64_t mem_total, struct memcg_stat *st)
{
	uint64_t used, anon, shmem;

	if (!m->meminfo || !m->avail_known || !m->anon_known)
		return -ENODATA;
	memset(st, 0, sizeof(*st));
	used = mem_total - min_u64(m->mem_available, mem_total);
	anon = min_u64(m->anon, used);
	shmem = min_u64(m->shmem, used - anon);
	st->anon = anon;
	st->shmem = shmem;
	st->slab_unreclaimable = used - anon - shmem;
	st->unevictable = m->unevictable;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Theil-Sen: the median of the slopes (bytes/s) of every pair of samples
 * from @from on, of class @c (FC_CLASSES: the unreclaimable total).
 */
static double median_slope(const struct oom_forecast *f, unsigned int from, int c)
{
	double slopes[FC_SAMPLES * (FC_SAMPLES - 1) / 2];
	size_t n = 0;

	for (unsigned int i = from; i < f->n; i++) {
		const struct fc_sample *a = nth(f, i);

		for (unsigned int j = i + 1; j < f->n; j++) {
			const struct fc_sample *b = nth(f, j);
			double ya = c == FC_CLASSES ? (double)unreclaimable(a) : (double)a->bytes[c];
			double yb = c == FC_CLASSES ? (double)unreclaimable(b) : (double)b->bytes[c];

			slopes[n++] = (yb - ya) * 1e9 / (double)(b->t_ns - a->t_ns);
		}
	}
	if (!n)
		return 0;
	qsort(slopes, n, sizeof(slopes[0]), cmp_double);
	return n % 2 ? slopes[n / 2] : (slopes[n / 2 - 1] + slopes[n / 2]) / 2;
}

/* The Theil-Sen line's level at the last sample: the median of each
 * sample from @from on carried there along @slope (bytes/s). */
static double level_now(const struct oom_forecast *f, unsigned int from, double slope)
{
	double y[FC_SAMPLES];
	uint64_t t_last = nth(f, f->n - 1)->t_ns;
	size_t n = 0;

	for (unsigned int i = from; i < f->n; i++)
		y[n++] = (double)unreclaimable(nth(f, i)) +
			 slope * (double)(t_last - nth(f, i)->t_ns) / 1e9;
	qsort(y, n, sizeof(y[0]), cmp_double);
	return n % 2 ? y[n / 2] : (y[n / 2 - 1] + y[n / 2]) / 2;
}

/* the median of the last three samples' unreclaimable bytes (n >= 3) */
static uint64_t median3(const struct oom_forecast *f)
{
	uint64_t a = unreclaimable(nth(f, f->n - 3)), b = unreclaimable(nth(f, f->n - 2));
	uint64_t c = unreclaimable(nth(f, f->n - 1)), lo = a < b ? a : b, hi = a < b ? b : a;

	return c < lo ? lo : c > hi ? hi : c;
}

int fc_estimate(const struct oom_forecast *f, uint64_t limit, struct fc_estimate *e)
{
	const struct fc_sample *last;
	uint64_t span, half_ns, before = 0, recent = 0, margin;
	unsigned int half = 0;
	double level;

	memset(e, 0, sizeof(*e));
	e->limit = limit;
	if (f->n < 3)
		return -EAGAIN;
	last = nth(f, f->n - 1);
	span = last->t_ns - nth(f, 0)->t_ns;
	if (span < FC_MIN_SPAN_NS)
		return -EAGAIN;
	/* the older half of the window: its peak, and the minutes' before */
	half_ns = last->t_ns - span / 2;
	for (; half < f->n && nth(f, half)->t_ns < half_ns; half++)
		before = max_u64(before, unreclaimable(nth(f, half)));
	for (int m = 0; m < FC_PEAK_MINUTES; m++)
		before = max_u64(before, f->minute_peak[m]);
	for (unsigned int i = half; i < f->n; i++)
		recent = max_u64(recent, unreclaimable(nth(f, i)));
	/* growing: the newer half's peak (measured) passes every earlier one,
	 * and so does the level now, the median of the last 3 samples (a kill
	 * or a free ends the forecast at once, one dip does not). Tested
	 * first: the daemon's calm cgroups cost no sort. */
	margin = max_u64(limit / 100, 1ULL << 20);
	e->unreclaimable = unreclaimable(last);
	if (recent <= before + margin || median3(f) <= before + margin)
		return -ENODATA;
	e->slope = median_slope(f, half, FC_CLASSES);
	if (e->slope <= 0)
		return -ENODATA;
	/* the level on the fitted line, not the last sample: a buffer freed
	 * just now neither hides the growth nor makes it */
	level = level_now(f, half, e->slope);
	e->unreclaimable = level > 0 ? (uint64_t)level : 0;
	e->headroom = limit > e->unreclaimable ? limit - e->unreclaimable : 0;
	e->eta_s = (double)e->headroom / e->slope;
	for (int c = FC_ANON; c <= FC_KERNEL; c++) {
		double s = median_slope(f, half, c);

		if (c == FC_ANON || s > e->grows_slope) {
			e->grows = c;
			e->grows_slope = s;
		}
	}
	/* what grows within anon or shmem, named when it makes half of it:
	 * mlocked or pinned pages (in either), CoW copies (anon only) */
	if (e->grows != FC_KERNEL) {
		double half_slope = e->grows_slope / 2;

		for (int c = FC_MLOCKED; c <= FC_PINNED; c++) {
			double s;

			if (c == FC_COW && e->grows != FC_ANON)
				continue;
			s = median_slope(f, half, c);
			if (s >= half_slope && s > 0 &&
			    (e->grows < FC_MLOCKED || s > e->grows_slope)) {
				e->grows = c;
				e->grows_slope = s;
			}
		}
	}
	return 0;
}

void fc_top_process(const struct oom_hist *h, struct oom_warning *w)
{
	static const enum metric_id ids[FC_CLASSES] = {
		[FC_ANON] = M_ANON, [FC_SHMEM] = M_SHMEM, [FC_MLOCKED] = M_MLOCKED,
		[FC_COW] = M_COW_COPIED, [FC_PINNED] = M_PINNED,
	};
	const struct oom_proc *p = w->e.grows == FC_KERNEL ? NULL :
				   oom_top_grower(h, ids[w->e.grows], &w->top_bytes);

	w->top_pid = p ? p->pid : 0;
	if (p)
		snprintf(w->top_comm, sizeof(w->top_comm), "%s", p->comm);
}

json_t *oom_warning_json(const struct oom_warning *w)
{
	json_t *o = json_object();

	json_object_set_new(o, "time", json_real(w->time));
	json_object_set_new(o, "t_s", json_real(w->t_s));
	json_object_set_new(o, "cgroup", json_string_sanitized(w->cgroup));
	json_object_set_new(o, "host_wide", json_boolean(w->host_wide));
	json_object_set_new(o, "eta_s", json_real(w->e.eta_s));
	json_object_set_new(o, "limit_bytes", json_integer((json_int_t)w->e.limit));
	json_object_set_new(o, "unreclaimable_bytes", json_integer((json_int_t)w->e.unreclaimable));
	json_object_set_new(o, "headroom_bytes", json_integer((json_int_t)w->e.headroom));
	json_object_set_new(o, "growth_bytes_per_s", json_real(w->e.slope));
	json_object_set_new(o, "growing_class", json_string(fc_class_name(w->e.grows)));
	json_object_set_new(o, "growing_class_bytes_per_s", json_real(w->e.grows_slope));
	json_object_set_new(o, "top_pid", w->top_pid ? json_integer(w->top_pid) : json_null());
	json_object_set_new(o, "top_comm", w->top_pid ? json_string_sanitized(w->top_comm) : json_null());
	json_object_set_new(o, "top_bytes", w->top_pid ? json_integer((json_int_t)w->top_bytes) :
			    json_null());
	return o;
}
