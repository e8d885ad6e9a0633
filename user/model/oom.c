// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * oom.c - OOM kill post-mortems (oom.h): the BPF record of the victim at
 * oom:mark_victim, the limited memcg's stocks, the processes sampled before
 * the kill, what grew, and the verdict (docs/metrics.md "OOM kills").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cgroup.h"
#include "fill.h"
#include "hostpin.h"
#include "memlimits.h"
#include "metric_table.h"
#include "oom.h"
#include "util.h"

uint64_t boot_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * usage >= OOM_NEAR_PCT of @cg's own limit (memory.max / limit_in_bytes);
 * unlimited: no; a file that cannot be read: yes
 */
static bool level_near(const struct memcg *cg)
{
	uint64_t limit, usage;
	int err = memcg_limit_read(cg, LIMIT_MAX, &limit);

	if (err)
		return err != -ERANGE;
	return memcg_read_usage(cg, &usage) || oom_usage_near(usage, limit);
}

bool oom_host_near(void)
{
	struct hm_fields f = { 0 };
	char *text = NULL;
	bool near = true;

	if (read_file("/proc/meminfo", &text, 1 << 16) >= 0 && !parse_meminfo(text, &f) &&
	    (f.have & (1ULL << HM_MEM_TOTAL)) && (f.have & (1ULL << HM_MEM_AVAILABLE)))
		near = f.v[HM_MEM_AVAILABLE] < f.v[HM_MEM_TOTAL] / 100 * OOM_NEAR_HOST_PCT;
	free(text);
	return near;
}

bool oom_near(const struct memcg *cg)
{
	struct memcg up = *cg;

	for (; up.level > 0; up.level--) {
		if (level_near(&up))
			return true;
		*strrchr(up.path, '/') = '\0';
	}
	return oom_host_near();
}

bool oom_usage_near(uint64_t usage, uint64_t max)
{
	return usage >= max / 100 * OOM_NEAR_PCT;
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct oom_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

void oom_hist_push(struct oom_hist *h, uint64_t boot_ns, struct oom_proc *p, size_t n,
		   size_t unsampled)
{
	struct oom_sample *s = &h->s[h->next % OOM_HIST_SAMPLES];

	/* by pid: sample_find() is a binary search (a host-wide kill's
	 * growth looks up every process: 10,000 × 10,000 linear steps) */
	qsort(p, n, sizeof(*p), cmp_proc_pid);

	for (int i = 0; h->keep_ns && i < OOM_HIST_SAMPLES; i++)
		if (h->s[i].p && boot_ns - h->s[i].boot_ns > h->keep_ns) {
			free(h->s[i].p);
			h->s[i].p = NULL;
			h->s[i].n = 0;
		}
	free(s->p);
	s->boot_ns = boot_ns;
	s->p = p;
	s->n = n;
	s->unsampled = unsampled;
	h->next++;
}

void oom_hist_free(struct oom_hist *h)
{
	for (int i = 0; i < OOM_HIST_SAMPLES; i++)
		free(h->s[i].p);
	memset(h, 0, sizeof(*h));
}

void oom_from_event(struct oom_kill *k, const struct memacct_oom_event *ev, long page_size,
		    uint64_t unmeasured)
{
	uint64_t ps = page_size, now_boot = boot_now_ns();
	struct timespec rt;
	struct metrics *m = &k->victim.m;

	memset(k, 0, sizeof(*k));
	k->seq = ev->seq;
	k->unmeasured = unmeasured;
	k->boot_ns = ev->ts_ns;
	clock_gettime(CLOCK_REALTIME, &rt);
	k->time = rt.tv_sec + rt.tv_nsec / 1e9 -
		  (now_boot > ev->ts_ns ? (now_boot - ev->ts_ns) / 1e9 : 0);
	k->pid = ev->key.tgid;
	k->tid = ev->tid;
	k->ppid = ev->ppid;
	k->oom_score_adj = ev->oom_score_adj;
	k->flags = ev->flags;
	memcpy(k->comm, ev->comm, MEMACCT_COMM_LEN);
	k->comm[MEMACCT_COMM_LEN] = '\0';
	k->memcg_id = ev->memcg_id;
	k->has_limit = ev->flags & MEMACCT_OOM_LIMIT;
	k->limit_memcg_id = ev->limit_memcg_id;
	k->limit_bytes = ev->limit_pages * ps;
	k->usage_bytes = ev->usage_pages * ps;
	k->victim.pid = k->pid;
	k->victim.start_ns = ev->key.start_boottime_ns;
	k->victim.memcg_id = ev->memcg_id;
	memcpy(k->victim.comm, k->comm, sizeof(k->comm));
	if (ev->flags & MEMACCT_OOM_MM) {
		k->swap_bytes = ev->swap_ents_pages * ps;
		k->total_vm_bytes = ev->total_vm_pages * ps;
	}
	metrics_from_oom_event(m, ev, ps);
	k->sample_age_s = NAN;
}

/* ------------------------------------------------------- cgroup paths */

struct path_find {
	struct oom_kill *k;
	struct memcg *lim;		/* the limited memcg, when found */
	bool victim_found, lim_found;
};

static int path_find_one(const struct memcg *cg, void *ctx)
{
	struct path_find *pf = ctx;
	struct oom_kill *k = pf->k;

	if (!pf->victim_found && cg->id == k->memcg_id) {
		snprintf(k->cgroup, OOM_PATH, "%s", cg->rel);
		pf->victim_found = true;
	}
	if (!pf->lim_found && cg->id == k->limit_memcg_id) {
		snprintf(k->limit_cgroup, OOM_PATH, "%s", cg->rel);
		*pf->lim = *cg;
		pf->lim_found = true;
	}
	return pf->victim_found && pf->lim_found;
}

/*
 * The paths of the victim's memcg and the limited one, and the limited
 * one itself into @lim: one walk. Whether @lim was found.
 */
static bool oom_paths(struct oom_kill *k, struct memcg *lim)
{
	struct path_find pf = { k, lim, !k->memcg_id, !k->has_limit || !k->limit_memcg_id };

	if (!pf.victim_found || !pf.lim_found)
		memcg_walk(path_find_one, &pf);
	return k->has_limit && pf.lim_found;
}

/* ------------------------------------------------------------- stocks */

/* @lim: the limited memcg (NULL: a host-wide OOM, or not found) */
static void oom_stocks(struct oom_kill *k, const struct memcg *lim)
{
	struct hostpin hp;

	if (k->has_limit) {
		if (!lim || memcg_read_stat(lim, &k->st))
			return;
		k->has_stocks = true;
		/* v1's soft limit is no memory.high: v2 only */
		k->has_high = lim->version == 2 && !memcg_limit_read(lim, LIMIT_HIGH, &k->high_bytes);
	} else {
		if (hostpin_read(&hp, false) < 0 || !hp.mem.meminfo)
			return;
		k->host = hp.mem;
		k->mem_total = hp.mem_total;
		k->has_stocks = true;
	}
	k->stocks_after_s = (boot_now_ns() - k->boot_ns) / 1e9;
}

/* -------------------------------------------------- processes, growth */

const struct oom_sample *oom_sample_before(const struct oom_hist *h, uint64_t t)
{
	const struct oom_sample *best = NULL;

	for (int i = 0; h && i < OOM_HIST_SAMPLES; i++) {
		const struct oom_sample *s = &h->s[i];

		if (s->p && s->boot_ns <= t && (!best || s->boot_ns > best->boot_ns))
			best = s;
	}
	return best;
}

/*
 * The sample the processes are taken from: the first one after the kill
 * (made when its record was read: every process but the victim as it is
 * then, ~0.1 s later), or the newest before it when that one is nearer to
 * the kill. The record can be read seconds late (a loaded TCG guest: the
 * loop was in a 1,024-process sample when the kill came); a sample from
 * before then can be older still, taken while the processes were being made.
 */
static const struct oom_sample *sample_near(const struct oom_hist *h, uint64_t t)
{
	const struct oom_sample *after = NULL, *before = oom_sample_before(h, t);

	for (int i = 0; h && i < OOM_HIST_SAMPLES; i++) {
		const struct oom_sample *s = &h->s[i];

		if (s->p && s->boot_ns > t && (!after || s->boot_ns < after->boot_ns))
			after = s;
	}
	if (!after)
		return before;
	if (!before || after->boot_ns - t <= OOM_SAMPLE_NS)
		return after;
	return after->boot_ns - t < t - before->boot_ns ? after : before;
}

/* The oldest sample within @window_ns before @t, or NULL. */
static const struct oom_sample *sample_window_start(const struct oom_hist *h, uint64_t t,
						    uint64_t window_ns)
{
	const struct oom_sample *best = NULL;

	for (int i = 0; h && i < OOM_HIST_SAMPLES; i++) {
		const struct oom_sample *s = &h->s[i];

		if (s->p && s->boot_ns <= t && t - s->boot_ns <= window_ns &&
		    (!best || s->boot_ns < best->boot_ns))
			best = s;
	}
	return best;
}

/* @pid's record in @s (sorted by oom_hist_push()), of the process started
 * at @start (0: any) */
static const struct oom_proc *sample_find(const struct oom_sample *s, int pid, uint64_t start)
{
	size_t lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {	/* the first record of @pid */
		size_t mid = lo + (hi - lo) / 2;

		if (s->p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; s && lo < s->n && s->p[lo].pid == pid; lo++)
		if (!start || !s->p[lo].start_ns || s->p[lo].start_ns == start)
			return &s->p[lo];
	return NULL;
}

const struct oom_proc *oom_top_grower(const struct oom_hist *h, enum metric_id id,
				      uint64_t *bytes)
{
	const struct oom_sample *newest = oom_sample_before(h, UINT64_MAX), *oldest;
	const struct oom_proc *top = NULL;
	int64_t best = 0;

	if (!newest)
		return NULL;
	oldest = sample_window_start(h, newest->boot_ns, UINT64_MAX);
	for (size_t i = 0; i < newest->n; i++) {
		const struct oom_proc *p = &newest->p[i];
		const struct oom_proc *was = oldest != newest ?
					     sample_find(oldest, p->pid, p->start_ns) : NULL;
		uint64_t now = metric_get(&p->m, id);
		int64_t grew = (int64_t)now - (was ? (int64_t)metric_get(&was->m, id) : 0);

		if (grew > best) {
			best = grew;
			top = p;
			*bytes = now;
		}
	}
	return top;
}

static bool id_in(const uint64_t *ids, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static int cmp_rss_desc(const void *a, const void *b)
{
	const struct oom_proc *x = a, *y = b;

	return x->m.rss < y->m.rss ? 1 : x->m.rss > y->m.rss ? -1 : 0;
}

static int cmp_grew_desc(const void *a, const void *b)
{
	const struct oom_grew *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/*
 * What grew in each of the @n processes @all (the victim as at the kill,
 * the others as in sample @last) since the oldest sample within @window_ns
 * before the kill: from OOM_GREW_MIN_BYTES, the largest OOM_GREW_MAX.
 */
static void oom_growth(struct oom_kill *k, const struct oom_hist *h, uint64_t window_ns,
		       const struct oom_proc *all, size_t n, const struct oom_sample *last)
{
	const struct oom_sample *first = sample_window_start(h, k->boot_ns, window_ns);
	static const enum metric_id keys[] = {
		M_ANON, M_SHMEM, M_FILE, M_MLOCKED, M_PINNED_VM, M_DMA_PINNED,
		M_COW_COPIED,
	};
	struct oom_grew g[OOM_GREW_MAX * 4];
	size_t ng = 0;

	for (size_t i = 0; first && i < n; i++) {
		const struct oom_proc *was = sample_find(first, all[i].pid, all[i].start_ns);
		bool victim = all[i].pid == k->pid;
		uint64_t t_now = victim && (k->flags & MEMACCT_OOM_MM) ? k->boot_ns :
				 last->boot_ns;

		if (!was || t_now <= first->boot_ns)
			continue;
		for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
			int64_t d = (int64_t)metric_get(&all[i].m, keys[j]) -
				    (int64_t)metric_get(&was->m, keys[j]);

			if (d < (int64_t)OOM_GREW_MIN_BYTES)
				continue;
			if (ng == sizeof(g) / sizeof(g[0])) {
				qsort(g, ng, sizeof(g[0]), cmp_grew_desc);
				ng = OOM_GREW_MAX;
			}
			g[ng].pid = all[i].pid;
			memcpy(g[ng].comm, all[i].comm, sizeof(g[ng].comm));
			g[ng].key = metric_table[keys[j]].key;
			g[ng].bytes = d;
			g[ng].seconds = (t_now - first->boot_ns) / 1e9;
			ng++;
		}
	}
	if (ng)
		qsort(g, ng, sizeof(g[0]), cmp_grew_desc);
	k->ngrew = ng < OOM_GREW_MAX ? ng : OOM_GREW_MAX;
	memcpy(k->grew, g, k->ngrew * sizeof(g[0]));
}

/*
 * The processes of the limited memcg's subtree (host-wide: every one) in
 * the sample sample_near() picks, the victim as at the kill; their sums for
 * the verdict, and what grew. @lim: the limited memcg (NULL: host-wide, or
 * not found: then the victim alone when the OOM was a memcg's).
 */
static void oom_procs(struct oom_kill *k, const struct oom_hist *h, uint64_t window_ns,
		      const struct memcg *lim)
{
	const struct oom_sample *last = sample_near(h, k->boot_ns);
	uint64_t *ids = NULL;
	struct oom_proc *all;
	size_t n = 0;
	int nids = -1;
	bool victim_in = false;

	if (!(k->flags & MEMACCT_OOM_TASK)) {	/* pid only: name it from the sample */
		const struct oom_proc *v = sample_find(oom_sample_before(h, k->boot_ns), k->pid, 0);

		if (v) {
			k->victim = *v;
			memcpy(k->comm, v->comm, sizeof(k->comm));
			if (!k->memcg_id)
				k->memcg_id = v->memcg_id;
		}
	}
	if (!last)
		return;
	k->sample_age_s = ((double)k->boot_ns - (double)last->boot_ns) / 1e9;
	k->nprocs_unsampled = last->unsampled;
	if (lim)
		nids = memcg_descendant_ids(lim, &ids);
	all = calloc(last->n + 1, sizeof(*all));
	if (!all) {
		free(ids);
		return;
	}
	for (size_t i = 0; i < last->n; i++) {
		const struct oom_proc *p = &last->p[i];

		if (k->has_limit && (nids < 0 || !id_in(ids, nids, p->memcg_id)))
			continue;
		if (p->pid == k->pid) {
			all[n++] = k->victim;	/* as at the kill */
			victim_in = true;
			continue;
		}
		all[n++] = *p;
	}
	if (!victim_in && k->victim.pid == k->pid && (k->flags & MEMACCT_OOM_TASK ||
						      k->victim.comm[0]))
		all[n++] = k->victim;
	free(ids);
	for (size_t i = 0; i < n; i++) {
		k->pinned_bytes += all[i].m.pinned;
		k->cow_bytes += all[i].m.cow_copied;
		k->anon_bytes += all[i].m.anon;
	}
	k->nprocs_all = n;
	if (n)
		qsort(all, n, sizeof(*all), cmp_rss_desc);
	k->nprocs = n < OOM_PROCS_MAX ? n : OOM_PROCS_MAX;
	memcpy(k->procs, all, k->nprocs * sizeof(*all));

	oom_growth(k, h, window_ns, all, n, last);
	free(all);
}

/* ------------------------------------------------------------ verdict */

const char *oom_key_word(const char *key)
{
	static const struct { const char *key, *word; } w[] = {
		{ "anon_bytes", "anon" }, { "shmem_bytes", "shmem" },
		{ "file_bytes", "page cache" }, { "mlocked_bytes", "mlocked" },
		{ "pinned_vm_bytes", "pinned_vm" }, { "dma_pinned_bytes", "DMA-pinned" },
		{ "cow_copied_bytes", "CoW copies" },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(w[i].key, key))
			return w[i].word;
	return key;
}

static bool at_least(uint64_t part, uint64_t whole)
{
	return whole && part * 100 >= (uint64_t)OOM_CAUSE_PCT * whole;
}

/* The forked processes that copied most, "PID 12 (w), PID 13 (w)" */
static void cow_names(const struct oom_kill *k, char *buf, size_t len, size_t *nworkers)
{
	const struct oom_proc *top[3] = { 0 };
	size_t off = 0;

	*nworkers = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < k->nprocs; i++) {
		const struct oom_proc *p = &k->procs[i];

		if (p->m.cow_copied < OOM_GREW_MIN_BYTES)
			continue;
		(*nworkers)++;
		for (int j = 0; j < 3; j++) {
			if (!top[j] || p->m.cow_copied > top[j]->m.cow_copied) {
				memmove(&top[j + 1], &top[j], (2 - j) * sizeof(top[0]));
				top[j] = p;
				break;
			}
		}
	}
	for (int j = 0; j < 3 && top[j] && off < len; j++) {
		char b[16];

		off += snprintf(buf + off, len - off, "%sPID %d (%s) %s", j ? ", " : "",
				top[j]->pid, top[j]->comm, fmt_bytes(b, sizeof(b), top[j]->m.cow_copied));
	}
}

/* the verdict: docs/metrics.md "OOM kills" gives these rules */
/* What an OOM kill's memory was made of, from its sample or its victim. */
struct oom_parts {
	uint64_t shmem, cache, reclaimable, mlocked, pinned_vm, dma;
};

/*
 * @p from the processes sampled (the victim alone without a sample, whose
 * pinned, CoW and anon bytes then stand for the kill's) and the cgroup's or
 * host's stocks.
 */
static void oom_parts_of(struct oom_kill *k, struct oom_parts *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < k->nprocs; i++) {
		p->mlocked += k->procs[i].m.mlocked;
		p->pinned_vm += k->procs[i].m.pinned_vm;
		p->dma += k->procs[i].m.dma_pinned;
	}
	if (!k->nprocs) {	/* no sample: the victim alone */
		k->pinned_bytes = k->victim.m.pinned;
		k->cow_bytes = k->victim.m.cow_copied;
		k->anon_bytes = k->victim.m.anon;
		p->mlocked = k->victim.m.mlocked;
		p->pinned_vm = k->victim.m.pinned_vm;
		p->dma = k->victim.m.dma_pinned;
	}
	if (k->has_stocks && k->has_limit) {
		p->shmem = k->st.shmem;
		p->cache = k->st.file > k->st.shmem ? k->st.file - k->st.shmem : 0;
		p->reclaimable = memcg_reclaimable(&k->st);
	} else if (k->has_stocks) {
		p->shmem = k->host.shmem;
		p->cache = k->host.page_cache;
		p->reclaimable = k->host.reclaimable;
	} else {
		p->shmem = k->victim.m.shmem;
	}
}

/*
 * The cause: the first of pinned, CoW, shmem and page cache that makes up
 * enough of @base (at_least()), else anon. Sets k->cause and k->cause_bytes,
 * and its sentence into @cause.
 */
static void oom_cause(struct oom_kill *k, const struct oom_parts *p, uint64_t base,
		      char *cause, size_t len)
{
	char b[4][16];

	if (at_least(k->pinned_bytes, base)) {
		k->cause = "pinned";
		k->cause_bytes = k->pinned_bytes;
		snprintf(cause, len, "%s of it was pinned (mlocked %s + pinned_vm %s + "
			 "DMA %s), which reclaim can never free",
			 fmt_bytes(b[0], 16, k->pinned_bytes), fmt_bytes(b[1], 16, p->mlocked),
			 fmt_bytes(b[2], 16, p->pinned_vm), fmt_bytes(b[3], 16, p->dma));
	} else if (at_least(k->cow_bytes, base)) {
		char names[200];
		size_t nw;

		cow_names(k, names, sizeof(names), &nw);
		k->cause = "cow";
		k->cause_bytes = k->cow_bytes;
		snprintf(cause, len, "%s of it were copy-on-write copies made by %zu "
			 "forked process%s (%s): each wrote to pages shared with its parent",
			 fmt_bytes(b[0], 16, k->cow_bytes), nw, nw == 1 ? "" : "es",
			 names[0] ? names : "none sampled");
	} else if (at_least(p->shmem, base)) {
		k->cause = "shmem";
		k->cause_bytes = p->shmem;
		snprintf(cause, len, "%s of it was shmem (tmpfs, /dev/shm, shared "
			 "anonymous memory), which stays charged until its files are removed and "
			 "can only go to swap", fmt_bytes(b[0], 16, p->shmem));
	} else if (at_least(p->reclaimable, base)) {
		k->cause = "page_cache";
		k->cause_bytes = p->reclaimable;
		snprintf(cause, len, "%s of it was clean page cache that reclaim could "
			 "have dropped, yet the limit was hit: allocations outran reclaim",
			 fmt_bytes(b[0], 16, p->reclaimable));
	} else {
		const struct oom_proc *big = k->nprocs ? &k->procs[0] : &k->victim;

		for (size_t i = 0; i < k->nprocs; i++)
			if (k->procs[i].m.anon > big->m.anon)
				big = &k->procs[i];
		k->cause = "anon";
		k->cause_bytes = k->anon_bytes;
		snprintf(cause, len, "its processes' anonymous memory (%s, %s of it in "
			 "PID %d %s) was above what the %s allows: the working set does not fit",
			 fmt_bytes(b[0], 16, k->anon_bytes), fmt_bytes(b[1], 16, big->m.anon),
			 big->pid, big->comm, k->has_limit ? "limit" : "host's memory");
	}
}

static void oom_verdict(struct oom_kill *k)
{
	struct oom_parts p;
	char b[8][16], cause[400], where[OOM_PATH + 64], grew[200] = "";
	size_t off = 0;
	uint64_t base;
	int n;

	/* a host-wide verdict's base when no stocks were read (late, or
	 * /proc/meminfo failed then): MemTotal does not change */
	if (!k->has_limit && !k->mem_total)
		k->mem_total = mem_total_bytes();
	base = k->has_limit ? k->limit_bytes : k->mem_total;
	oom_parts_of(k, &p);
	oom_cause(k, &p, base, cause, sizeof(cause));
	if (k->has_limit)
		snprintf(where, sizeof(where), "in %s at its %s limit",
			 k->limit_cgroup[0] ? k->limit_cgroup : "a memory cgroup",
			 fmt_bytes(b[4], 16, k->limit_bytes));
	else
		snprintf(where, sizeof(where), "by the host-wide OOM killer (no memory cgroup at "
			 "its limit; MemTotal %s)",
			 k->mem_total ? fmt_bytes(b[4], 16, k->mem_total) : "unread");
	if (k->ngrew) {
		const struct oom_grew *g = &k->grew[0];

		snprintf(grew, sizeof(grew), "; in the last %.1f s %s grew by %s in PID %d (%s)",
			 g->seconds, oom_key_word(g->key), fmt_bytes(b[5], 16, (uint64_t)g->bytes),
			 g->pid, g->comm);
	}
	n = snprintf(k->verdict, sizeof(k->verdict), "OOM: %s (PID %d) was killed %s; %s",
		     k->comm[0] ? k->comm : "?", k->pid, where, cause);
	off = n > 0 && (size_t)n < sizeof(k->verdict) ? (size_t)n : sizeof(k->verdict) - 1;
	n = snprintf(k->verdict + off, sizeof(k->verdict) - off, "; %s anon, %s page cache (%s "
		     "reclaimable), %s shmem, %s pinned%s",
		     fmt_bytes(b[0], 16, k->anon_bytes), fmt_bytes(b[1], 16, p.cache),
		     fmt_bytes(b[2], 16, p.reclaimable), fmt_bytes(b[3], 16, p.shmem),
		     fmt_bytes(b[6], 16, k->pinned_bytes), grew);
	(void)n;
}

void oom_explain(struct oom_kill *k, const struct oom_hist *h, uint64_t window_ns)
{
	struct memcg lim;
	bool found = oom_paths(k, &lim);

	oom_stocks(k, found ? &lim : NULL);
	oom_procs(k, h, window_ns, found ? &lim : NULL);
	oom_verdict(k);
}

void oom_explain_late(struct oom_kill *k)
{
	struct memcg lim;

	oom_paths(k, &lim);
	oom_verdict(k);
}

/* --------------------------------------------------------------- JSON */

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* the figures a process has in a post-mortem, under the report's keys */
static const enum metric_id proc_keys[] = {
	M_RSS, M_ANON, M_FILE, M_SHMEM, M_MLOCKED, M_PINNED_VM, M_DMA_PINNED, M_PINNED,
	M_COW_COPIED, M_COW_FILE_COPIED, M_ZERO_FILL, M_REMOTE_NUMA_ALLOC,
};

/* @p's figures; those not read (@stocks, @flows) or not measured null */
static json_t *proc_json(const struct oom_proc *p, bool stocks, bool flows, uint64_t unmeasured)
{
	json_t *o = json_object();

	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "comm", json_string_sanitized(p->comm));
	for (size_t i = 0; i < sizeof(proc_keys) / sizeof(proc_keys[0]); i++) {
		enum metric_id id = proc_keys[i];
		bool flow = metric_table[id].flags & MF_FLOW, known = flow ? flows : stocks;

		if (id == M_DMA_PINNED || id == M_PINNED)
			known = stocks || flows;
		known = known && !(unmeasured & MBIT(id));
		json_object_set_new(o, metric_table[id].key,
				    known ? json_integer((json_int_t)metric_get(&p->m, id)) :
					    json_null());
	}
	return o;
}

static json_t *stocks_json(const struct oom_kill *k)
{
	json_t *o;

	if (!k->has_stocks)
		return json_null();
	o = json_object();
	json_object_set_new(o, "read_after_kill_s", json_real(k->stocks_after_s));
	if (k->has_limit) {
		const struct memcg_stat *s = &k->st;

		json_object_set_new(o, "source", json_string("memory.stat"));
		set_u64(o, "usage_bytes", s->usage);
		json_object_set_new(o, "limit_bytes", json_integer((json_int_t)k->limit_bytes));
		json_object_set_new(o, "high_bytes", k->has_high ?
				    json_integer((json_int_t)k->high_bytes) : json_null());
		set_u64(o, "anon_bytes", s->anon);
		set_u64(o, "file_bytes", s->file);
		set_u64(o, "shmem_bytes", s->shmem);
		set_u64(o, "reclaimable_bytes", memcg_reclaimable(s));
		set_u64(o, "unevictable_bytes", s->unevictable);
		set_u64(o, "slab_reclaimable_bytes", s->slab_reclaimable);
		json_object_set_new(o, "slab_bytes", s->slab ? json_integer(s->slab) : json_null());
		json_object_set_new(o, "kernel_bytes",
				    s->kernel ? json_integer(s->kernel) : json_null());
		if (s->has_oom_kill)
			set_u64(o, "oom_kill", s->oom_kill);
		return o;
	}
	json_object_set_new(o, "source", json_string("/proc/meminfo"));
	set_u64(o, "mem_total_bytes", k->mem_total);
	set_u64(o, "mem_free_bytes", k->host.mem_free);
	json_object_set_new(o, "mem_available_bytes", k->host.avail_known ?
			    json_integer(k->host.mem_available) : json_null());
	set_u64(o, "page_cache_bytes", k->host.page_cache);
	set_u64(o, "reclaimable_bytes", k->host.reclaimable);
	set_u64(o, "shmem_bytes", k->host.shmem);
	set_u64(o, "unevictable_bytes", k->host.unevictable);
	set_u64(o, "mlocked_bytes", k->host.mlocked);
	return o;
}

json_t *oom_json(const struct oom_kill *k)
{
	json_t *o = json_object(), *procs = json_array(), *grew = json_array(), *v;
	char ts[40];
	time_t t = (time_t)k->time;
	struct tm tm;

	set_u64(o, "seq", k->seq);
	json_object_set_new(o, "pid", json_integer(k->pid));
	json_object_set_new(o, "tid", json_integer(k->tid));
	json_object_set_new(o, "comm", json_string_sanitized(k->comm));
	json_object_set_new(o, "cgroup", k->cgroup[0] ? json_string_sanitized(k->cgroup) :
			    json_null());
	json_object_set_new(o, "time", json_real(k->time));
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "time_iso", json_string(ts));
	json_object_set_new(o, "host_wide", json_boolean(!k->has_limit));
	json_object_set_new(o, "limit_cgroup", k->has_limit && k->limit_cgroup[0] ?
			    json_string_sanitized(k->limit_cgroup) : json_null());
	json_object_set_new(o, "limit_bytes", k->has_limit ? json_integer(k->limit_bytes) :
			    json_null());
	json_object_set_new(o, "usage_bytes", k->has_limit ? json_integer(k->usage_bytes) :
			    json_null());
	json_object_set_new(o, "limit_found_by", !k->has_limit ? json_null() :
			    json_string(k->flags & MEMACCT_OOM_LIMIT_EVENT ? "oom_event" : "usage"));
	if (k->forecast) {
		json_t *fc = json_object();

		json_object_set_new(fc, "warned_s_before", json_real(k->forecast_before_s));
		json_object_set_new(fc, "eta_s", json_real(k->forecast_eta_s));
		json_object_set_new(fc, "growing_class", json_string(k->forecast_class));
		json_object_set_new(o, "forecast", fc);
	} else {
		json_object_set_new(o, "forecast", json_null());
	}
	v = proc_json(&k->victim, k->flags & MEMACCT_OOM_MM || !(k->flags & MEMACCT_OOM_TASK),
		      k->flags & MEMACCT_OOM_FLOWS || !(k->flags & MEMACCT_OOM_TASK), k->unmeasured);
	json_object_set_new(v, "ppid", json_integer(k->ppid));
	json_object_set_new(v, "swap_bytes", k->flags & MEMACCT_OOM_MM ?
			    json_integer(k->swap_bytes) : json_null());
	json_object_set_new(v, "total_vm_bytes", k->flags & MEMACCT_OOM_MM ?
			    json_integer(k->total_vm_bytes) : json_null());
	json_object_set_new(v, "oom_score_adj", k->flags & MEMACCT_OOM_TASK ?
			    json_integer(k->oom_score_adj) : json_null());
	json_object_set_new(v, "at_kill", json_boolean(k->flags & MEMACCT_OOM_MM));
	json_object_set_new(o, "victim", v);
	json_object_set_new(o, "cgroup_stocks", stocks_json(k));
	for (size_t i = 0; i < k->nprocs; i++)
		json_array_append_new(procs, proc_json(&k->procs[i], true, true, k->unmeasured));
	json_object_set_new(o, "processes", procs);
	json_object_set_new(o, "processes_total", json_integer((json_int_t)k->nprocs_all));
	json_object_set_new(o, "processes_unsampled",
			    json_integer((json_int_t)k->nprocs_unsampled));
	json_object_set_new(o, "sample_age_s", !isnan(k->sample_age_s) ?
			    json_real(k->sample_age_s) : json_null());
	for (size_t i = 0; i < k->ngrew; i++) {
		json_t *g = json_object();

		json_object_set_new(g, "pid", json_integer(k->grew[i].pid));
		json_object_set_new(g, "comm", json_string_sanitized(k->grew[i].comm));
		json_object_set_new(g, "key", json_string(k->grew[i].key));
		json_object_set_new(g, "bytes", json_integer(k->grew[i].bytes));
		json_object_set_new(g, "seconds", json_real(k->grew[i].seconds));
		json_array_append_new(grew, g);
	}
	json_object_set_new(o, "grew", grew);
	json_object_set_new(o, "cause", k->cause ? json_string(k->cause) : json_null());
	set_u64(o, "cause_bytes", k->cause_bytes);
	set_u64(o, "pinned_bytes", k->pinned_bytes);
	if (k->unmeasured & MBIT(M_COW_COPIED))
		json_object_set_new(o, "cow_copied_bytes", json_null());
	else
		set_u64(o, "cow_copied_bytes", k->cow_bytes);
	set_u64(o, "anon_bytes", k->anon_bytes);
	json_object_set_new(o, "verdict", json_string_sanitized(k->verdict));
	return o;
}
