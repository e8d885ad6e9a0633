// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* collect.c - one collection of the daemon (collect.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect.h"
#include "dma_ranges.h"
#include "fill.h"
#include "metric_table.h"
#include "records.h"
#include "util.h"

static int cmp_cgi(const void *a, const void *b)
{
	const struct cgi *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct cgi *cgi_find(struct cgi *v, size_t n, uint64_t id)
{
	struct cgi k = { .id = id };

	return bsearch(&k, v, n, sizeof(*v), cmp_cgi);
}

static bool filter_wants(const struct collector *o, const char *rel)
{
	if (!o->nfilters)
		return true;
	for (int i = 0; i < o->nfilters; i++) {
		size_t n = strlen(o->filters[i]);

		if (!strcmp(o->filters[i], "/") ||
		    (!strncmp(rel, o->filters[i], n) && (rel[n] == '\0' || rel[n] == '/')))
			return true;
	}
	return false;
}

struct walk {
	struct cgi *v;
	size_t n, cap;
	size_t max;		/* cgroups the walk holds (collector.max_cgroups) */
	const struct collector *o;
	long unwalked;		/* directories whose path is too long to open */
};

/* @ino: the cgroup directory's inode number, its kernfs id (the BPF side's memcg id) */
static int walk_add(struct walk *w, uint64_t ino, const char *rel, uint64_t parent, int level)
{
	struct cgi *c;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct cgi *nv;

		/* up to w->max exactly: doubling alone stopped at 65,536 */
		if (w->cap >= w->max)
			return -E2BIG;
		if (cap > w->max)
			cap = w->max;
		nv = realloc(w->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		w->v = nv;
		w->cap = cap;
	}
	c = &w->v[w->n];
	memset(c, 0, sizeof(*c));
	c->id = ino;
	c->parent_id = parent;
	c->level = level;
	c->rel = strdup(rel);
	if (!c->rel)
		return -ENOMEM;
	c->wanted = filter_wants(w->o, rel);
	w->n++;
	return 0;
}

/*
 * Every cgroup below @root into @w, @w->v[0] being the root: breadth first
 * over @w->v itself (each entry's directory is root + rel), so any depth the
 * kernel allows is walked, with no recursion and no depth bound (the walk
 * stopped at 64 levels: deeper cgroups were silently missing, issue 23).
 * What cannot be opened by path, a directory whose path would exceed
 * PATH_MAX, is counted in @w->unwalked (its subtree is missing too), not
 * skipped silently.
 */
static void walk_tree(struct walk *w, const char *root)
{
	for (size_t i = 0; i < w->n; i++) {
		char a[PATH_MAX], r[PATH_MAX];
		uint64_t id = w->v[i].id;
		int level = w->v[i].level;
		struct dirent *de;
		DIR *d;

		/* w->v moves as it grows: what the children need, copied */
		snprintf(r, sizeof(r), "%s", level ? w->v[i].rel : "");
		snprintf(a, sizeof(a), "%s%s", root, r);
		d = opendir(a);
		if (!d)
			continue;	/* removed meanwhile */
		while ((de = readdir(d))) {
			char ca[PATH_MAX], cr[PATH_MAX];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if (snprintf(ca, sizeof(ca), "%s/%s", a, de->d_name) >= (int)sizeof(ca) ||
			    snprintf(cr, sizeof(cr), "%s/%s", r, de->d_name) >= (int)sizeof(cr)) {
				w->unwalked++;
				continue;
			}
			/* d_ino is the inode number a stat() gives (kernfs_fop_readdir():
			 * kernfs_ino()): no path lookup per cgroup */
			if (walk_add(w, de->d_ino, cr, id, level + 1))
				w->unwalked++;
		}
		closedir(d);
	}
}

#define FLOW_WORDS	(sizeof(struct memacct_flows) / sizeof(__u64))


static int cmp_level_desc(const void *a, const void *b)
{
	const struct cgi *const *x = a, *const *y = b;

	return (*y)->level - (*x)->level;
}

/* Local values to hierarchical: each cgroup's totals added to its parent. */
static void aggregate(struct cgi *v, size_t n)
{
	struct cgi **order = malloc(n * sizeof(*order));

	if (!order)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = &v[i];
	qsort(order, n, sizeof(*order), cmp_level_desc);
	for (size_t i = 0; i < n; i++) {
		struct cgi *c = order[i], *p;

		if (!c->level || !(p = cgi_find(v, n, c->parent_id)))
			continue;
		flows_add(&p->f, &c->f);
		p->rss += c->rss;
		p->mlocked += c->mlocked;
		p->pinned_vm += c->pinned_vm;
		p->dma += c->dma;
		/* a parent's peak: a lower bound (its children's peaks were
		 * not reached at one instant) */
		if (c->dma_peak > p->dma_peak)
			p->dma_peak = c->dma_peak;
		if (p->dma > p->dma_peak)
			p->dma_peak = p->dma;
	}
	free(order);
}

/* a and b start with a struct memacct_proc_key (proc_flow, top_key) */
static int cmp_key(const void *a, const void *b)
{
	const struct memacct_proc_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->start_boottime_ns < y->start_boottime_ns ? -1 :
	       x->start_boottime_ns > y->start_boottime_ns;
}

struct top_key {
	struct memacct_proc_key key;
	size_t i;		/* index of the top process in collection.st */
};

/* read_flows()'s state across the records of one read (records_read()) */
struct flows_read {
	struct collector *cs;
	struct collection *col;
	bool whole;			/* the walk left no cgroup out */
	long entries;			/* of the cgroups map */
	uint64_t *unknown, *stale;	/* cgroups map keys not walked: new, or twice */
	size_t nunknown, cap_unknown, nstale, cap_stale;
	struct memacct_proc_key *dead;	/* exited records, deleted after the read */
	size_t ndead, cap_dead;
	size_t cap_pf;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A `cgroups` map record: its flows and DMA pins to its cgroup. A key of a
 * cgroup unknown for two collections in a row belongs to a removed cgroup
 * (the entry existed before the second walk, so its cgroup would have been
 * seen): it is deleted after the read so that cgroup churn cannot fill the
 * map. Nothing is deleted after a walk that left cgroups out (!whole): an
 * entry missing from it may be of a live cgroup below the cut, whose exited
 * flows would be deleted with it, without a word; they stay until a whole
 * walk. Out of memory, a key is kept: a later collection deletes it.
 */
static int take_cgroup(void *ctx, uint64_t id, const struct memacct_cgroup *rec)
{
	struct flows_read *fr = ctx;
	const struct collector *cs = fr->cs;
	struct cgi *c = cgi_find(fr->col->cg, fr->col->ncg, id);
	uint64_t *slot;

	fr->entries++;
	if (c) {
		flows_add(&c->f, &rec->f);
		c->dma = rec->pin.dma_pinned_pages;
		c->dma_peak = rec->pin.dma_pinned_peak_pages;
	} else if (fr->whole && cs->unknown &&
		   bsearch(&id, cs->unknown, cs->nunknown, sizeof(id), cmp_u64)) {
		if ((slot = array_grow(&fr->stale, fr->nstale, &fr->cap_stale, sizeof(*slot)))) {
			*slot = id;
			fr->nstale++;
		}
	} else if ((slot = array_grow(&fr->unknown, fr->nunknown, &fr->cap_unknown, sizeof(*slot)))) {
		*slot = id;
		fr->nunknown++;
	}
	return 0;
}

/*
 * A `procs` map record: a live process's flows to its cgroup and into
 * col->pf, DMA pins net of those in mlocked memory; an exited one (folded
 * into the cgroups map at exit already) noted for deletion.
 */
static int take_proc(const struct memacct_proc_key *key, const struct memacct_proc *p, void *ctx)
{
	struct flows_read *fr = ctx;
	struct collection *col = fr->col;
	const struct memacct_pinned *pin = &p->pin;
	struct proc_flow *pf;
	uint64_t ov = 0;
	bool unknown = false;
	struct cgi *c;

	if (p->flags & MEMACCT_PROC_EXITED) {
		struct memacct_proc_key *k = array_grow(&fr->dead, fr->ndead, &fr->cap_dead, sizeof(*k));

		if (k) {	/* else kept: a later collection deletes it */
			*k = *key;
			fr->ndead++;
		}
		return 0;
	}
	/* DMA pins in mlocked memory are in VmLck already: net of them, as
	 * run/attach show them (session.c), never counted twice */
	if (pin->dma_pinned_pages && pin->locked_vm_pages) {
		ov = dma_locked_overlap(key->tgid, p, &unknown) / (uint64_t)fr->cs->page_size;
		if (ov > pin->dma_pinned_pages)
			ov = pin->dma_pinned_pages;
	}
	if ((c = cgi_find(col->cg, col->ncg, p->memcg_id))) {
		flows_add(&c->f, &p->f);
		c->dma -= ov < c->dma ? ov : c->dma;
		c->dma_peak -= ov < c->dma_peak ? ov : c->dma_peak;
	}
	pf = array_grow(&col->pf, col->npf, &fr->cap_pf, sizeof(*pf));
	if (!pf)
		return 0;	/* only this top process's own flows are left out */
	pf->key = *key;
	pf->f = p->f;
	pf->dma = pin->dma_pinned_pages - ov;
	pf->dma_peak = pin->dma_pinned_peak_pages -
		       (ov < pin->dma_pinned_peak_pages ? ov : pin->dma_pinned_peak_pages);
	pf->dma_est = unknown || (pin->dma_flags & MEMACCT_DMA_ESTIMATE);
	col->npf++;
	return 0;
}

/* A read is done again: what the last one gave is forgotten. */
static void flows_restart(void *ctx)
{
	struct flows_read *fr = ctx;

	for (size_t i = 0; i < fr->col->ncg; i++) {
		memset(&fr->col->cg[i].f, 0, sizeof(fr->col->cg[i].f));
		fr->col->cg[i].dma = fr->col->cg[i].dma_peak = 0;
	}
	fr->col->npf = 0;
	fr->entries = 0;
	fr->nunknown = fr->nstale = fr->ndead = 0;
}

static int cmp_prev(const void *a, const void *b)
{
	const struct prev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t rss_of(const struct memacct_task_stock *t)
{
	return t->rss_anon_pages + t->rss_file_pages + t->rss_shmem_pages;
}

static int cmp_rss_desc(const void *a, const void *b)
{
	uint64_t rx = rss_of(a), ry = rss_of(b);

	return rx < ry ? 1 : rx > ry ? -1 : 0;
}

/* min-heap of indices into @v by RSS: the root is the smallest kept */
static void heap_down(const struct memacct_task_stock *v, long *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		long t;

		if (l < n && rss_of(&v[h[l]]) < rss_of(&v[h[m]]))
			m = l;
		if (l + 1 < n && rss_of(&v[h[l + 1]]) < rss_of(&v[h[m]]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * Put the @k largest records by RSS first, largest first, in O(n log k)
 * rather than sorting all of them; the records after the first @k are no
 * longer meaningful (their sums were taken already). Returns the count kept.
 */
static size_t top_first(struct memacct_task_stock *v, size_t n, size_t k)
{
	struct memacct_task_stock *tmp;
	long *h;

	if (k > n)
		k = n;
	if (!k)
		return 0;
	h = malloc(k * sizeof(*h));
	tmp = malloc(k * sizeof(*tmp));
	if (!h || !tmp) {
		free(h);
		free(tmp);
		qsort(v, n, sizeof(*v), cmp_rss_desc);
		return k;
	}
	for (size_t i = 0; i < k; i++)
		h[i] = i;
	for (size_t i = k / 2; i-- > 0;)
		heap_down(v, h, k, i);
	for (size_t i = k; i < n; i++)
		if (rss_of(&v[i]) > rss_of(&v[h[0]])) {
			h[0] = i;
			heap_down(v, h, k, 0);
		}
	for (size_t i = 0; i < k; i++)
		tmp[i] = v[h[i]];
	qsort(tmp, k, sizeof(*tmp), cmp_rss_desc);
	memcpy(v, tmp, k * sizeof(*tmp));
	free(tmp);
	free(h);
	return k;
}


void collection_free(struct collection *c)
{
	for (size_t i = 0; i < c->ncg; i++)
		free(c->cg[i].rel);
	free(c->cg);
	free(c->pf);
	free(c->topf);
	free(c->top);
	free(c->comms);
	page_cache_free(&c->page_cache);
	memset(c, 0, sizeof(*c));
}


static uint64_t pg(const struct collector *cs, uint64_t pages)
{
	return pages * (uint64_t)cs->page_size;
}

/* records_read()'s counters: the pinned .bss (pin_counters()). */
static int pinned_counters(void *ctx, struct pin_counters *c)
{
	const struct flows_read *fr = ctx;

	return pin_counters(fr->cs->pin, c);
}

/*
 * Flows of every cgroup: the cgroups map's records, then live processes',
 * from one read that saw every move and exit fold whole (records_read(),
 * shared with session.c): a process exiting between the two maps' reads
 * would be in neither (a counter lower for one collection, held by the
 * clamp, but not across a restart), a move could be counted twice. When a
 * move still overlapped the last read, col->flows_torn: collect() keeps the
 * published flows for this collection (9,200 cgroups removed during
 * collections once left a parent 1,878 pages high, held there by the clamp).
 * Then exited records and stale cgroup keys are deleted (after the read:
 * deleting the key a bpf_map_get_next_key() walk stands on makes the kernel
 * restart it from the first key, kernel/bpf/hashtab.c
 * htab_map_get_next_key(), so live entries were added again: reliability
 * audit D1).
 */
static void read_flows(struct collector *cs, struct collection *col)
{
	struct flows_read fr = { .cs = cs, .col = col, .whole = !col->cgroups_unwalked };
	struct records_reader rd = {
		.cgroups_fd = cs->pin->cgroups_fd, .procs_fd = cs->pin->procs_fd,
		.counters = pinned_counters, .cgroup = take_cgroup, .proc = take_proc,
		.restart = flows_restart, .ctx = &fr,
	};

	records_read(&rd, NULL, 0, &col->counters, &col->flows_torn);
	for (size_t i = 0; i < fr.nstale; i++)
		if (!bpf_map_delete_elem(cs->pin->cgroups_fd, &fr.stale[i]))
			fr.entries--;
	for (size_t i = 0; i < fr.ndead; i++)
		bpf_map_delete_elem(cs->pin->procs_fd, &fr.dead[i]);
	dma_ranges_prune(cs->pin->dma_ranges_fd, cs->pin->procs_fd);
	/* CoW slots of exits whose records a full ring lost (the daemon
	 * deletes the others as it drains the ring: include/memacct.h) */
	if (col->counters.dropped[MEMACCT_DROP_RINGBUF_FULL] != cs->ringbuf_full_pruned) {
		cs->ringbuf_full_pruned = col->counters.dropped[MEMACCT_DROP_RINGBUF_FULL];
		if (cs->rb)
			ring_buffer__consume(cs->rb);
		cow_maps_prune(cs->pin->cow_maps_fd, cs->pin->procs_fd);
	}
	if (fr.unknown)
		qsort(fr.unknown, fr.nunknown, sizeof(*fr.unknown), cmp_u64);
	free(cs->unknown);
	cs->unknown = fr.unknown;
	cs->nunknown = fr.nunknown;
	col->cgroups_used = fr.entries;
	free(fr.stale);
	free(fr.dead);
}

/*
 * A flow summed over records: a cgroup a process moved into holds a
 * negative offset (u64 arithmetic wrapping below 0) that the process's own
 * flows make up; a read that still overlapped a move after the retries of
 * read_flows() can see the offset without them. That reads as 0 here, and
 * the clamp keeps what was published.
 */
static uint64_t nonneg(uint64_t v)
{
	return (int64_t)v < 0 ? 0 : v;
}

static void flows_nonneg(struct memacct_flows *f)
{
	__u64 *w = (__u64 *)f;

	for (size_t i = 0; i < FLOW_WORDS; i++)
		w[i] = nonneg(w[i]);
}

/*
 * What a cgroup publishes (docs/metrics.md; the daemon's families are the
 * rows of metric_table.h with a family): hierarchical BPF flows, the sums
 * of the process pass, memory.stat. rss_bytes is the charge, as in every
 * other report; the processes' RSS summed is rss_sum_bytes
 * (memacct_rss_bytes).
 */
static void metrics_of_cgi(const struct collector *cs, const struct collection *col,
			   const struct cgi *c, struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	metrics_from_bpf_flows(m, &c->f, cs->page_size);
	m->unknown |= col->unmeasured;
	m->rss_sum = pg(cs, c->rss);
	m->mlocked = pg(cs, c->mlocked);
	m->pinned_vm = pg(cs, c->pinned_vm);
	m->dma_pinned = pg(cs, c->dma);
	m->dma_pinned_peak = pg(cs, c->dma_peak);
	metrics_pinned_sum(m);
	m->remote_numa = c->remote_numa;
	m->remote_numa_peak = c->remote_numa;
	if (!c->st_ok)
		return;
	metrics_from_memcg_stat(m, &c->st);
	/* memory.peak (v2, 5.19+) or max_usage_in_bytes (v1); else unknown,
	 * never a 0 under the charge (issue 41 item 8) */
	m->rss_peak = c->st.has_peak ? c->st.peak : 0;
	if (!c->st.has_peak)
		m->unknown |= MBIT(M_RSS_PEAK);
	metrics_from_memcg_events(m, &c->st, NULL);
}

/*
 * The walk of the cgroup tree below the root into col->cg, sorted by id,
 * warning once about each new count of cgroups it could not walk.
 */
static int collect_walk(struct collector *cs, struct collection *col)
{
	struct walk w = { .o = cs, .max = cs->max_cgroups ? cs->max_cgroups : COLLECT_MAX_CGROUPS };
	struct stat st;

	if (stat(cs->root, &st) || walk_add(&w, st.st_ino, "/", 0, 0)) {
		free(w.v);
		return -ENOENT;
	}
	walk_tree(&w, cs->root);
	if (w.unwalked && w.unwalked != cs->unwalked)
		p_warn("%ld cgroup%s below %s not walked (a path longer than PATH_MAX, more than "
		       "%d cgroups, or out of memory): left out of every figure with their subtrees "
		       "(memacct_cgroups_unwalked)", w.unwalked, w.unwalked == 1 ? "" : "s",
		       cs->root, (int)w.max);
	cs->unwalked = w.unwalked;
	qsort(w.v, w.n, sizeof(*w.v), cmp_cgi);
	col->cg = w.v;
	col->ncg = w.n;
	col->cgroups_unwalked = w.unwalked;
	return 0;
}

/* The processes' stocks from the task iterator, added to their cgroups. */
static void collect_task_stocks(struct collector *cs, struct collection *col)
{
	/* ppid, start time, peak RSS and faults: only the top processes show them */
	col->nst = pin_read_stocks(cs->pin, cs->top_n > 0, &col->st);
	if (col->nst < 0) {
		p_warn("reading the processes' stocks: %s", strerror(-col->nst));
		col->nst = 0;
	}
	for (long i = 0; i < col->nst; i++) {
		const struct memacct_task_stock *t = &col->st[i];
		struct cgi *c = cgi_find(col->cg, col->ncg, t->memcg_id);

		col->pinned_vm_pages += t->pinned_vm_pages;
		if (!c)
			continue;
		c->rss += rss_of(t);
		c->mlocked += t->locked_vm_pages;
		c->pinned_vm += t->pinned_vm_pages;
	}
}

/*
 * One wanted cgroup's figures: its memcg files, path labels, limits and
 * NUMA usage joined with its flows into c->m, held to what was published
 * before. false when it went away since the walk (no series this time).
 */
static bool collect_cgroup(struct collector *cs, struct collection *col, struct cgi *c)
{
	struct memcg m = { .id = c->id, .version = cs->version, .level = c->level };
	struct prev k = { .id = c->id }, *old;
	int err;

	snprintf(m.path, sizeof(m.path), "%s%s", cs->root, c->level ? c->rel : "");
	snprintf(m.rel, sizeof(m.rel), "%s", c->rel);
	/* its files by openat(): 5 to 9 of them, no walk of the path each */
	err = memcg_dir_open(&m);
	if (!err)
		err = memcg_read_stat(&m, &c->st);
	if ((err == -ENOENT || err == -ENODEV) && access(m.path, F_OK)) {
		/* removed since the walk: no series this collection
		 * (its flows are its parent's now, cgroup_rmdir); a v2
		 * cgroup without the memory controller keeps its own */
		memcg_dir_close(&m);
		c->wanted = false;
		return false;
	}
	c->st_ok = !err;
	/* every sample of the cgroup carries them: parsed once here,
	 * not per family (30 families, 2 texts) */
	cgroup_path_labels(c->rel, cs->jobs, &c->labels);
	if (c->st_ok) {	/* absent figures stay absent, whatever the error */
		memcg_read_bounds(&m, &c->bounds);
		/* v1's kmem is not read each collection: in "other"; the
		 * v2 root has no memory.current (parts.usage 0: none) */
		if (cs->version == 1 || c->level)
			memcg_charge_parts(&c->st, cs->version, 0,
					   cs->version == 1 && !c->level, &c->parts);
	}
	if (cs->numa_multi) {	/* one node: every page is on its home node */
		struct numa_usage u;

		if (!memcg_numa_usage(cs->topo, &m, &u))
			c->remote_numa = u.remote;
	}
	memcg_dir_close(&m);
	flows_nonneg(&c->f);
	metrics_of_cgi(cs, col, c, &c->m);
	old = cs->prev ? bsearch(&k, cs->prev, cs->nprev, sizeof(k), cmp_prev) : NULL;
	if (old && col->flows_torn)	/* a move overlapped: as published */
		metrics_hold_bpf_flows(&c->m, &old->m);
	if (old)	/* published counters never go down */
		metrics_clamp_flows(&c->m, &old->m);
	/* the largest sample since this daemon first saw the cgroup (issue
	 * 40: it was this sample, as run's running max is not) */
	if (old && old->m.remote_numa_peak > c->m.remote_numa_peak)
		c->m.remote_numa_peak = old->m.remote_numa_peak;
	return true;
}

/*
 * @c's forecast state from the last collection's (@cs->fcs, by id as the
 * walk: *@j, a cursor into it, moves past what is older than @c, and the
 * state taken leaves it), else a new one; NULL when out of memory.
 */
static struct fc_state *fc_state_of(struct collector *cs, size_t *j, const struct cgi *c)
{
	struct fc_state *f;

	while (*j < cs->nfcs && cs->fcs[*j]->id < c->id)
		(*j)++;
	if (*j < cs->nfcs && cs->fcs[*j]->id == c->id) {
		f = cs->fcs[*j];
		cs->fcs[(*j)++] = NULL;
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (f)
		f->id = c->id;
	return f;
}

/* @c's OOM forecast (its own memory.max) from this collection's memory.stat,
 * its CoW copies and pins (c->m, published this collection) */
static void forecast_cgroup(struct fc_state *f, struct cgi *c, uint64_t now)
{
	struct fc_estimate e;

	fc_add(&f->fc, now, &c->st, c->m.cow_copied, c->m.pinned_vm + c->m.dma_pinned);
	if (!fc_estimate(&f->fc, c->bounds.max, &e)) {
		c->has_eta = true;
		c->oom_eta_s = e.eta_s;
		c->oom_grows = e.grows;
	}
}

/*
 * Every wanted cgroup's figures and OOM forecast; what they were published
 * as, and the forecasts of the limited ones, kept for the next time.
 */
static void collect_cgroups(struct collector *cs, struct collection *col)
{
	struct prev *np = calloc(col->ncg ? col->ncg : 1, sizeof(*np));
	struct fc_state **nf = calloc(col->ncg ? col->ncg : 1, sizeof(*nf));
	size_t nnp = 0, nnf = 0, j = 0;
	uint64_t now = now_ns();

	for (size_t i = 0; i < col->ncg; i++) {
		struct cgi *c = &col->cg[i];

		if (!c->wanted || !collect_cgroup(cs, col, c))
			continue;
		if (np)
			np[nnp++] = (struct prev){ .id = c->id, .m = c->m };
		if (nf && c->st_ok && c->bounds.has_max && (nf[nnf] = fc_state_of(cs, &j, c)))
			forecast_cgroup(nf[nnf++], c, now);
	}
	if (np) {	/* cgroups that vanished are forgotten here */
		free(cs->prev);
		cs->prev = np;
		cs->nprev = nnp;
	}
	if (nf) {	/* the walk is by id: so is nf */
		for (size_t i = 0; i < cs->nfcs; i++)
			free(cs->fcs[i]);
		free(cs->fcs);
		cs->fcs = nf;
		cs->nfcs = nnf;
	}
}

/* col->topf: the flows of each of the first col->ntop processes, in one pass. */
static void collect_top_flows(struct collection *col)
{
	struct top_key *keys;

	col->topf = calloc(col->ntop ? col->ntop : 1, sizeof(*col->topf));
	if (!col->topf || !col->ntop)
		return;
	keys = malloc(col->ntop * sizeof(*keys));
	for (size_t i = 0; keys && i < col->ntop; i++)
		keys[i] = (struct top_key){ { .tgid = col->st[i].tgid,
			.start_boottime_ns = col->st[i].start_boottime_ns }, i };
	if (keys) {
		qsort(keys, col->ntop, sizeof(*keys), cmp_key);
		for (long j = 0; j < col->npf; j++) {
			struct top_key *k = bsearch(&col->pf[j].key, keys, col->ntop,
						    sizeof(*keys), cmp_key);

			if (k)
				col->topf[k->i] = &col->pf[j].f;
		}
	}
	free(keys);
}

/*
 * @row of top process @t (one of the first col->ntop of col->st): pid,
 * ppid, comm, start, its stocks from the task walk (mm->rss_stat,
 * hiwater_rss, locked_vm, pinned_vm; faults from signal->min_flt/maj_flt)
 * and, where the kernel side has its record, its flows and DMA pins. Bytes
 * by @page_size; figures of no record stay 0.
 */
static void collect_top_row(const struct collection *col, const struct memacct_task_stock *t,
			    uint64_t page_size, struct proc_row *row)
{
	const struct memacct_flows *f = flow_of(col, t);
	struct metrics *m = &row->m;

	memset(row, 0, sizeof(*row));
	row->pid = t->tgid;
	row->ppid = t->ppid;
	memcpy(row->comm, t->comm, MEMACCT_COMM_LEN);
	row->start_boottime_ns = t->start_boottime_ns;
	if (f)	/* every flow first: the stocks below are not flows */
		metrics_from_bpf_flows(m, f, page_size);
	m->unknown |= col->unmeasured;
	metrics_from_task_stock(m, t, page_size);
	if (f) {
		m->dma_pinned = pflow_of(f)->dma * page_size;
		m->dma_pinned_peak = pflow_of(f)->dma_peak * page_size;
		m->dma_estimate = pflow_of(f)->dma_est;
	}
	metrics_pinned_sum(m);
}

/* a cgroup's id and its index in col->cg */
struct id_ix {
	uint64_t id;
	size_t i;
};

static int cmp_id_ix(const void *a, const void *b)
{
	uint64_t x = ((const struct id_ix *)a)->id, y = ((const struct id_ix *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * The page cache by (memcg, file) (page_cache.h) into col->page_cache and
 * each cgroup's slice of it. Records of memcgs the walk did not find are
 * pruned, with those whose pages are all gone, when the walk was whole.
 */
static void collect_page_cache(struct collector *cs, struct collection *col)
{
	struct page_cache_query q = { .per_memcg = true };
	int fd = cs->pin->page_cache_fd, err;
	struct id_ix *ix;
	uint64_t *live;
	size_t j;

	if (fd < 0)
		return;
	ix = malloc((col->ncg + 1) * sizeof(*ix));
	live = malloc((col->ncg + 1) * sizeof(*live));
	if (!ix || !live) {
		free(ix);
		free(live);
		return;
	}
	for (size_t i = 0; i < col->ncg; i++)
		ix[i] = (struct id_ix){ col->cg[i].id, i };
	qsort(ix, col->ncg, sizeof(*ix), cmp_id_ix);
	for (size_t i = 0; i < col->ncg; i++)
		live[i] = ix[i].id;
	if (!col->cgroups_unwalked) {	/* a cgroup not walked is not gone */
		q.live = live;
		q.nlive = col->ncg;
	}
	err = page_cache_read(fd, cs->page_size, &q, &col->page_cache);
	free(live);
	if (err)
		p_warn("memacct_page_cache_file_bytes: %s (its samples left out)", strerror(-err));
	/* sorted by memcg id: each memcg's run of files to its cgroup */
	for (size_t k = 0; !err && k < col->page_cache.n; k = j) {
		const struct page_cache_file *f = &col->page_cache.f[k];
		struct id_ix key = { f->memcg_id, 0 }, *c;

		for (j = k; j < col->page_cache.n && col->page_cache.f[j].memcg_id == f->memcg_id; j++)
			;
		c = col->ncg ? bsearch(&key, ix, col->ncg, sizeof(*ix), cmp_id_ix) : NULL;
		if (c) {
			col->cg[c->i].pcf = f;
			col->cg[c->i].npcf = j - k;
		}
	}
	free(ix);
}

int collect(struct collector *cs, struct collection *col)
{
	memset(col, 0, sizeof(*col));
	col->unmeasured = cs->unmeasured;
	if (cs->rb)
		ring_buffer__consume(cs->rb);
	if (collect_walk(cs, col))
		return -ENOENT;
	read_flows(cs, col);
	collect_page_cache(cs, col);
	col->bpf_runs_skipped = pin_run_misses(cs->pin);
	collect_task_stocks(cs, col);
	aggregate(col->cg, col->ncg);
	collect_cgroups(cs, col);
	/* before top_first(): the records after its first k are not all
	 * processes any more (a machine of more processes than
	 * --top-processes counted some twice) */
	col->comms = comm_sums(col->st, col->nst, &col->ncomms);
	if (!col->comms)
		p_warn("memacct_comm_*: %s (their samples left out)", strerror(ENOMEM));
	col->ntop = top_first(col->st, col->nst, cs->top_n);
	collect_top_flows(col);
	/* once for every text that shows them (Prometheus, OpenMetrics, JSON log) */
	col->top = calloc(col->ntop ? col->ntop : 1, sizeof(*col->top));
	for (size_t i = 0; col->top && i < col->ntop; i++)
		collect_top_row(col, &col->st[i], cs->page_size, &col->top[i]);
	col->procs_used = col->npf;
	return 0;
}


/* the slot of (@memcg_id, @comm) in the open-addressed @v of @cap (a power of 2) */
static struct comm_sum *comm_slot(struct comm_sum *v, size_t cap, uint64_t memcg_id,
				  const char *comm)
{
	uint64_t w[2];
	size_t i;

	memcpy(w, comm, sizeof(w));
	_Static_assert(sizeof(w) == MEMACCT_COMM_LEN, "comm is two words");
	i = (size_t)(((memcg_id ^ w[0] * 0x9e3779b97f4a7c15ULL ^ w[1] * 0xc2b2ae3d27d4eb4fULL) *
		      0xff51afd7ed558ccdULL) >> 20) & (cap - 1);
	while (v[i].used && (v[i].memcg_id != memcg_id || memcmp(v[i].comm, comm, MEMACCT_COMM_LEN)))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* @v of @cap slots rehashed into twice as many; NULL (and @v freed) when out of memory */
static struct comm_sum *comm_grow(struct comm_sum *v, size_t cap)
{
	struct comm_sum *nv = calloc(2 * cap, sizeof(*nv));

	for (size_t i = 0; nv && i < cap; i++)
		if (v[i].used)
			*comm_slot(nv, 2 * cap, v[i].memcg_id, v[i].comm) = v[i];
	free(v);
	return nv;
}

struct comm_sum *comm_sums(const struct memacct_task_stock *st, long nst, size_t *n)
{
	size_t cap = 64, used = 0, k = 0;
	struct comm_sum *v = calloc(cap, sizeof(*v));

	/*
	 * One pass over the processes into a hash table: no sort of 10,000.
	 * Sized by the (memcg, comm) pairs, not by the processes (10,000
	 * sleeping copies of one program are one slot): at most half full.
	 */
	*n = 0;
	for (long i = 0; v && i < nst; i++) {
		const struct memacct_task_stock *t = &st[i];
		struct comm_sum *e = comm_slot(v, cap, t->memcg_id, t->comm);

		if (!e->used) {
			if (2 * (used + 1) > cap) {
				v = comm_grow(v, cap);
				cap *= 2;
				if (!v)
					break;
				e = comm_slot(v, cap, t->memcg_id, t->comm);
			}
			e->used = true;
			e->memcg_id = t->memcg_id;
			memcpy(e->comm, t->comm, MEMACCT_COMM_LEN);
			used++;
		}
		e->rss_pages += rss_of(t);
		e->n++;
	}
	/* the slots in use to the front: each text walks only those */
	for (size_t i = 0; v && i < cap; i++)
		if (v[i].used)
			v[k++] = v[i];
	*n = v ? k : 0;
	return v;
}

void collector_free(struct collector *cs)
{
	for (size_t i = 0; i < cs->nfcs; i++)
		free(cs->fcs[i]);
	free(cs->fcs);
	cs->fcs = NULL;
	cs->nfcs = 0;
	free(cs->prev);
	free(cs->unknown);
	cs->prev = NULL;
	cs->unknown = NULL;
	cs->nprev = cs->nunknown = 0;
}
