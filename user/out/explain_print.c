// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* explain_print.c - the printers of `memacct explain` (explain.h): JSON and text. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "explain.h"
#include "explain_print.h"
#include "jsonw.h"
#include "report.h"
#include "report_print.h"
#include "table.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static const char *const part_keys[PART_NR] = {
	"private_anon_bytes", "shared_anon_bytes", "file_clean_bytes", "file_dirty_bytes",
	"shmem_bytes", "other_bytes",
};

static const char *const part_labels[PART_NR] = {
	"private anonymous", "anonymous shared since fork", "file-backed clean",
	"file-backed dirty", "shmem (tmpfs, /dev/shm, memfd)", "other (devices, vdso)",
};

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

static void sum_json(json_t *o, const struct xsum *s)
{
	set_u64(o, "pss_bytes", s->pss);
	set_u64(o, "uss_bytes", s->uss);
	set_u64(o, "swap_bytes", s->swap);
	set_u64(o, "reclaimable_bytes", s->reclaimable);
	set_u64(o, "shared_bytes", s->shared);
	set_u64(o, "private_anon_bytes", s->private_anon);
	set_u64(o, "file_clean_bytes", s->file_clean);
	set_u64(o, "file_dirty_bytes", s->file_dirty);
	set_u64(o, "lazyfree_bytes", s->lazyfree);
}

static int cmp_mref_rss(const void *a, const void *b)
{
	const struct smaps_map *x = ((const struct mref *)a)->m, *y = ((const struct mref *)b)->m;

	if (x->rss != y->rss)
		return x->rss < y->rss ? 1 : -1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every mapping (or the @top largest), largest RSS first. */
static struct mref *sorted_mappings(const struct explain *e, size_t *n)
{
	size_t cap = 0;
	struct mref *refs;

	for (size_t i = 0; i < e->nprocs; i++)
		cap += e->procs[i].sm.n;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	*n = 0;
	if (!refs)
		return NULL;
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++)
			refs[(*n)++] = (struct mref){ &e->procs[i].sm.maps[j],
						      e->procs[i].row.pid };
	qsort(refs, *n, sizeof(*refs), cmp_mref_rss);
	return refs;
}

/*
 * A mapping's "dma_pinned_bytes": exact where the process's pinned ranges
 * are all known (a daemon's pins), else null (unknown).
 */
static void dma_json(struct jw *w, const struct explain *e, pid_t pid, const struct smaps_map *m)
{
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].row.pid == pid && e->procs[i].ranges_all) {
			jw_u64(w, "dma_pinned_bytes", dma_in_map(&e->procs[i], m));
			return;
		}
	jw_null(w, "dma_pinned_bytes");
}

/* "0x..." of an address */
static void addr_json(struct jw *w, const char *key, unsigned long long a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", a);
	jw_str(w, key, buf);
}

/*
 * The mappings array, streamed: with 10,000 mappings, building and freeing
 * 200,000 jansson nodes took longer than reading smaps itself.
 */
static void write_mappings_json(struct jw *w, const struct explain *e, size_t top)
{
	struct mref *refs;
	size_t n, i;

	refs = sorted_mappings(e, &n);
	jw_open(w, "mappings", '[');
	for (i = 0; refs && i < n && (!top || i < top); i++) {
		const struct smaps_map *m = refs[i].m;

		jw_open(w, NULL, '{');
		jw_int(w, "pid", refs[i].pid);
		addr_json(w, "start", m->start);
		addr_json(w, "end", m->end);
		jw_str(w, "path", m->path);
		jw_bool(w, "deleted", m->deleted);
		jw_str(w, "kind", smaps_kind_name(m->kind));
		jw_str(w, "perms", m->perms);
		jw_bool(w, "private", smaps_private(m));
		jw_u64(w, "size_bytes", m->size);
		jw_u64(w, "rss_bytes", m->rss);
		jw_u64(w, "pss_bytes", m->pss);
		jw_u64(w, "private_clean_bytes", m->private_clean);
		jw_u64(w, "private_dirty_bytes", m->private_dirty);
		jw_u64(w, "shared_clean_bytes", m->shared_clean);
		jw_u64(w, "shared_dirty_bytes", m->shared_dirty);
		jw_u64(w, "reclaimable_bytes", smaps_reclaimable(m));
		jw_u64(w, "locked_bytes", smaps_locked(m));
		jw_u64(w, "swap_bytes", m->swap);
		jw_u64(w, "anonymous_bytes", m->anonymous);
		dma_json(w, e, refs[i].pid, m);
		jw_close(w);
	}
	jw_close(w);
	free(refs);
}

/* One numa_maps mapping with resident pages, joined with its smaps record. */
struct nref {
	const struct numa_map *nmap;
	const struct smaps_map *sm;	/* same start in smaps, or NULL */
	const struct xproc *x;
};

static int cmp_nref(const void *a, const void *b)
{
	const struct nref *x = a, *y = b;

	if (x->nmap->bytes != y->nmap->bytes)
		return x->nmap->bytes < y->nmap->bytes ? 1 : -1;
	if (x->x->row.pid != y->x->row.pid)
		return x->x->row.pid < y->x->row.pid ? -1 : 1;
	return x->nmap->start < y->nmap->start ? -1 : x->nmap->start > y->nmap->start;
}

/* numa_maps mappings with resident pages, largest first; NULL on ENOMEM. */
static struct nref *sorted_numa_mappings(const struct explain *e, size_t *n)
{
	struct nref *refs;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < e->nprocs; i++)
		cap += e->procs[i].has_numa ? e->procs[i].nm.n : 0;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	if (!refs)
		return NULL;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		size_t j = 0;

		if (!x->has_numa)
			continue;
		/* both files list mappings by address: merge on start */
		for (size_t k = 0; k < x->nm.n; k++) {
			const struct numa_map *m = &x->nm.maps[k];

			while (j < x->sm.n && x->sm.maps[j].start < m->start)
				j++;
			if (!m->bytes)
				continue;
			refs[(*n)++] = (struct nref){ m, j < x->sm.n && x->sm.maps[j].start ==
							m->start ? &x->sm.maps[j] : NULL, x };
		}
	}
	qsort(refs, *n, sizeof(*refs), cmp_nref);
	return refs;
}

static uint64_t nref_remote(const struct nref *r)
{
	int home = r->x->nu.home;

	return home >= 0 ? r->nmap->bytes - r->nmap->node_bytes[home] : 0;
}

/* {"0": n, "1": n} over the nodes shown (and any other with bytes). */
static json_t *node_bytes_json(const struct explain *e, const uint64_t *nb)
{
	json_t *o = json_object();
	char key[8];

	for (int n = 0; n < NUMA_MAX_NODES; n++)
		if ((e->numa_nodes >> n & 1) || nb[n]) {
			snprintf(key, sizeof(key), "%d", n);
			json_object_set_new(o, key, json_integer((json_int_t)nb[n]));
		}
	return o;
}

static json_t *usage_json(const struct explain *e, const struct numa_usage *u, json_t *o)
{
	json_object_set_new(o, "home_node", u->home >= 0 ? json_integer(u->home) : json_null());
	json_object_set_new(o, "home_node_source", json_string(numa_home_source_name(u->source)));
	json_object_set_new(o, "bytes_by_node", node_bytes_json(e, u->node_bytes));
	set_u64(o, "remote_numa_bytes", u->remote);
	return o;
}

/* The "numa" object but its "mappings" and closing brace (new reference). */
static json_t *numa_json(const struct explain *e)
{
	json_t *o = json_object(), *procs = json_array();

	json_object_set_new(o, "nodes", json_integer(e->topo.nnodes));
	json_object_set_new(o, "bytes_by_node", node_bytes_json(e, e->numa_node_bytes));
	set_u64(o, "remote_numa_bytes", e->numa_remote);
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		json_t *p = json_object();

		json_object_set_new(p, "pid", json_integer(x->row.pid));
		if (x->has_numa) {
			usage_json(e, &x->nu, p);
		} else {
			json_object_set_new(p, "home_node", json_null());
			json_object_set_new(p, "home_node_source", json_null());
			json_object_set_new(p, "bytes_by_node", json_null());
			json_object_set_new(p, "remote_numa_bytes", json_null());
		}
		json_array_append_new(procs, p);
	}
	json_object_set_new(o, "processes", procs);
	if (e->cgroup_mode)
		json_object_set_new(o, "cgroup", e->has_cg_numa ?
				    usage_json(e, &e->cg_numa, json_object()) : json_null());
	return o;
}

/* "numa": numa_json()'s members, then its mappings, streamed (they can be many). */
static void write_numa_json(struct jw *w, const struct explain *e, size_t top)
{
	json_t *o = numa_json(e), *v;
	const char *key;
	struct nref *refs;
	size_t n, i;

	jw_open(w, "numa", '{');
	json_object_foreach(o, key, v)
		jw_json(w, key, v);
	json_decref(o);
	refs = sorted_numa_mappings(e, &n);
	jw_open(w, "mappings", '[');
	for (i = 0; refs && i < n && (!top || i < top); i++) {
		const struct nref *r = &refs[i];
		json_t *nb = node_bytes_json(e, r->nmap->node_bytes);

		jw_open(w, NULL, '{');
		jw_int(w, "pid", r->x->row.pid);
		addr_json(w, "start", r->nmap->start);
		if (r->sm)
			addr_json(w, "end", r->sm->end);
		else
			jw_null(w, "end");
		jw_str(w, "path", r->sm ? r->sm->path : r->nmap->path);
		jw_json(w, "bytes_by_node", nb);
		jw_u64(w, "remote_bytes", nref_remote(r));
		jw_close(w);
		json_decref(nb);
	}
	jw_close(w);
	jw_close(w);
	free(refs);
}

/* Bytes per node per mapping, top N (nodes with bytes in the rows shown). */
static void print_numa_plain(const struct explain *e, size_t top)
{
	int cols[8], ncols = 0;
	uint64_t shown = 0;
	char b[16], path[256];
	struct nref *refs;
	size_t n, i;

	printf("\nNUMA: %d node%s", e->topo.nnodes, e->topo.nnodes == 1 ? "" : "s");
	for (int k = 0; k < NUMA_MAX_NODES; k++)
		if (e->numa_nodes >> k & 1)
			printf("%s node %d %s", shown++ ? "," : ":", k,
			       fmt_bytes(b, 16, e->numa_node_bytes[k]));
	printf("; on a remote node %s\n", fmt_bytes(b, 16, e->numa_remote));
	for (i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		if (!x->has_numa)
			continue;
		if (e->cgroup_mode && !x->nu.remote)
			continue;
		if (x->nu.home < 0) {
			printf("  pid %d: home node unknown, %s resident\n", x->row.pid,
			       fmt_bytes(b, 16, x->nu.bytes));
			continue;
		}
		printf("  pid %d: home node %d (%s), remote %s of %s\n", x->row.pid, x->nu.home,
		       numa_home_source_name(x->nu.source), fmt_bytes(path, 16, x->nu.remote),
		       fmt_bytes(b, 16, x->nu.bytes));
	}
	if (e->has_cg_numa && e->cg_numa.home >= 0)
		printf("  cgroup (memory.numa_stat): home node %d (%s), remote %s of %s\n",
		       e->cg_numa.home, numa_home_source_name(e->cg_numa.source),
		       fmt_bytes(path, 16, e->cg_numa.remote), fmt_bytes(b, 16, e->cg_numa.bytes));
	if (e->topo.nnodes < 2 && !(e->numa_nodes & ~1ULL))
		return;		/* one node: the table would repeat RSS */
	refs = sorted_numa_mappings(e, &n);
	if (!refs || !n) {
		free(refs);
		return;
	}
	for (int k = 0; k < NUMA_MAX_NODES && ncols < 8; k++) {
		bool used = false;

		for (i = 0; i < n && i < top && !used; i++)
			used = refs[i].nmap->node_bytes[k];
		if (used || (e->numa_nodes >> k & 1 && e->topo.nnodes <= 8))
			cols[ncols++] = k;
	}
	printf("%-28s %7s", "START-END", "PID");
	for (int c = 0; c < ncols; c++) {
		char h[8];

		snprintf(h, sizeof(h), "N%d", cols[c]);
		printf(" %9s", h);
	}
	printf(" %9s  %s\n", "REMOTE", "PATH");
	for (i = 0; i < n && i < top; i++) {
		const struct nref *r = &refs[i];
		const char *p = r->sm ? r->sm->path : r->nmap->path;
		char range[40];

		if (r->sm)
			snprintf(range, sizeof(range), "%llx-%llx", (unsigned long long)r->sm->start,
				 (unsigned long long)r->sm->end);
		else
			snprintf(range, sizeof(range), "%llx-?", (unsigned long long)r->nmap->start);
		printf("%-28s %7d", range, r->x->row.pid);
		for (int c = 0; c < ncols; c++)
			printf(" %9s", fmt_bytes(b, 16, r->nmap->node_bytes[cols[c]]));
		safe_path(path, sizeof(path), p ? p : "");
		printf(" %9s  %s\n", fmt_bytes(b, 16, nref_remote(r)), path);
	}
	free(refs);
}

static void kind_sums(const struct explain *e, struct xsum k[SMAPS_KIND_NR])
{
	memset(k, 0, sizeof(struct xsum) * SMAPS_KIND_NR);
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++) {
			const struct smaps_map *m = &e->procs[i].sm.maps[j];

			xsum_add(&k[m->kind], m);
		}
}

static json_t *hex_json(uint64_t a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

/*
 * "dma_pinned_ranges" of @x: each known pinned range (start, end, bytes,
 * source "nvidia" or "xdp", the fd, and the mapping holding it or null);
 * null when no daemon's pins told the ranges.
 */
static json_t *ranges_json(const struct xproc *x)
{
	json_t *arr;

	if (!x->has_ranges)
		return json_null();
	arr = json_array();
	for (size_t k = 0; k < x->ranges.n; k++) {
		const struct dma_range *r = &x->ranges.v[k];
		const struct smaps_map *m = dma_range_map(x, r);
		json_t *j = json_object(), *mj = json_null();

		json_object_set_new(j, "start", hex_json(r->start));
		json_object_set_new(j, "end", hex_json(r->end));
		set_u64(j, "bytes", r->end - r->start);
		json_object_set_new(j, "source", json_string(dma_source_name(r->src)));
		json_object_set_new(j, "fd", json_integer(r->fd));
		if (m) {
			mj = json_object();
			json_object_set_new(mj, "start", hex_json(m->start));
			json_object_set_new(mj, "end", hex_json(m->end));
			json_object_set_new(mj, "perms", json_string(m->perms));
			json_object_set_new(mj, "path", m->path ? json_string_sanitized(m->path) :
					    json_null());
			json_object_set_new(mj, "deleted", json_boolean(m->deleted));
			json_object_set_new(mj, "kind", json_string(smaps_kind_name(m->kind)));
		}
		json_object_set_new(j, "mapping", mj);
		json_array_append_new(arr, j);
	}
	return arr;
}

/* Each process row of the report gets its smaps sums and its DMA-pinned ranges. */
static void explain_procs_json(const struct explain *e, json_t *procs)
{
	json_t *p;
	size_t i;

	json_array_foreach(procs, i, p) {
		const struct xproc *x = NULL;
		json_int_t pid = json_integer_value(json_object_get(p, "pid"));

		for (size_t k = 0; k < e->nprocs; k++)
			if (e->procs[k].row.pid == pid)
				x = &e->procs[k];
		if (!x)
			continue;
		sum_json(p, &x->sum);
		json_object_set_new(p, "dma_pinned_ranges", ranges_json(x));
	}
}

/* "files": the mapped files, largest first, the first @top of them (0: all). */
static json_t *explain_files_json(const struct explain *e, size_t top)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < e->nfiles && (!top || i < top); i++) {
		const struct xfile *f = &e->files[i];
		json_t *j = json_object();

		json_object_set_new(j, "path", json_string_sanitized(f->m->path));
		json_object_set_new(j, "deleted", json_boolean(f->m->deleted));
		json_object_set_new(j, "kind", json_string(smaps_kind_name(f->m->kind)));
		set_u64(j, "rss_bytes", f->rss);
		set_u64(j, "pss_bytes", f->pss);
		set_u64(j, "reclaimable_bytes", f->reclaimable);
		json_object_set_new(j, "cached_bytes", f->has_cached ?
				    json_integer((json_int_t)f->cached) : json_null());
		json_object_set_new(j, "size_bytes", f->has_size ?
				    json_integer((json_int_t)f->size) : json_null());
		json_array_append_new(arr, j);
	}
	return arr;
}

/* "breakdown": the parts of RSS (PSS for a cgroup) in bytes and percent. */
static json_t *explain_breakdown_json(const struct explain *e)
{
	uint64_t v[PART_NR];
	int pc[PART_NR];
	json_t *bd = json_object(), *pj = json_object();

	parts_sum(e, v);
	pct_partition(v, PART_NR, pc);
	json_object_set_new(bd, "basis", json_string(e->cgroup_mode ? "pss" : "rss"));
	set_u64(bd, "total_bytes", e->total.rss);
	for (int k = 0; k < PART_NR; k++) {
		char key[32];

		set_u64(bd, part_keys[k], v[k]);
		snprintf(key, sizeof(key), "%.*s", (int)(strlen(part_keys[k]) - 6), part_keys[k]);
		json_object_set_new(pj, key, json_integer(pc[k]));
	}
	json_object_set_new(bd, "percent", pj);
	return bd;
}

/* "kinds": the smaps sums of each kind of mapping, with its share of RSS. */
static json_t *explain_kinds_json(const struct explain *e)
{
	struct xsum kinds[SMAPS_KIND_NR];
	int kind_pct[SMAPS_KIND_NR];
	uint64_t kr[SMAPS_KIND_NR];
	json_t *ms = json_object();

	kind_sums(e, kinds);
	for (int k = 0; k < SMAPS_KIND_NR; k++)
		kr[k] = kinds[k].rss;
	pct_partition(kr, SMAPS_KIND_NR, kind_pct);
	for (int k = 0; k < SMAPS_KIND_NR; k++) {
		json_t *j = json_object();

		set_u64(j, "rss_bytes", kinds[k].rss);
		json_object_set_new(j, "rss_percent", json_integer(kind_pct[k]));
		set_u64(j, "pss_bytes", kinds[k].pss);
		set_u64(j, "uss_bytes", kinds[k].uss);
		set_u64(j, "reclaimable_bytes", kinds[k].reclaimable);
		set_u64(j, "locked_bytes", kinds[k].locked);
		set_u64(j, "swap_bytes", kinds[k].swap);
		json_object_set_new(ms, smaps_kind_name(k), j);
	}
	return ms;
}

/* "memory_stat": the cgroup's memory.stat figures, or null without one. */
static json_t *explain_memory_stat_json(const struct explain *e)
{
	const struct memcg_stat *c = &e->cst;
	json_t *ms;

	if (!e->has_stat)
		return json_null();
	ms = json_object();
	set_u64(ms, "anon_bytes", c->anon);
	set_u64(ms, "file_bytes", c->file);
	set_u64(ms, "active_file_bytes", c->active_file);
	set_u64(ms, "inactive_file_bytes", c->inactive_file);
	set_u64(ms, "dirty_bytes", c->file_dirty);
	set_u64(ms, "writeback_bytes", c->file_writeback);
	set_u64(ms, "shmem_bytes", c->shmem);
	set_u64(ms, "unevictable_bytes", c->unevictable);
	set_u64(ms, "slab_reclaimable_bytes", c->slab_reclaimable);
	set_u64(ms, "usage_bytes", c->usage);
	return ms;
}

/* "charge_parts": memcg_charge_parts() of the cgroup, or null without its memory.stat */
static json_t *explain_charge_parts_json(const struct explain *e)
{
	const struct memcg_parts *pt = &e->parts;
	char key[48];
	json_t *o;

	if (!e->has_stat || !pt->usage)
		return json_null();
	o = json_object();
	set_u64(o, "usage_bytes", pt->usage);
	for (int i = 0; i < MEMCG_PART_NR; i++) {
		snprintf(key, sizeof(key), "%s_bytes", memcg_part_name(i));
		set_u64(o, key, pt->part[i]);
	}
	json_object_set_new(o, "largest", json_string(memcg_part_name(pt->largest)));
	set_u64(o, "working_set_bytes", pt->working_set);
	set_u64(o, "working_set_reclaimable_bytes", pt->working_set_reclaimable);
	return o;
}

/*
 * "orphaned_shmem": tmpfs files that no process maps or holds open with
 * pages charged to the cgroup (shmem_orphans_scan()); null when not read
 * (not --cgroup, no /proc/kpagecgroup, not root).
 */
static json_t *explain_orphans_json(const struct explain *e)
{
	const struct shmem_orphans *so = &e->orphans;
	json_t *o, *arr;

	if (!e->has_orphans)
		return json_null();
	o = json_object();
	set_u64(o, "bytes", so->charged);
	set_u64(o, "files_count", so->files_charged);
	set_u64(o, "files_walked", so->files_walked);
	set_u64(o, "files_unreadable", so->unreadable);
	json_object_set_new(o, "walk_truncated", json_boolean(so->truncated));
	arr = json_array();
	for (size_t i = 0; i < so->nfiles; i++) {
		const struct shmem_orphan *f = &so->files[i];
		json_t *j = json_object();

		json_object_set_new(j, "path", json_string_sanitized(f->path));
		set_u64(j, "bytes", f->charged);
		set_u64(j, "resident_bytes", f->resident);
		set_u64(j, "allocated_bytes", f->allocated);
		set_u64(j, "size_bytes", f->size);
		set_u64(j, "inode", f->ino);
		json_array_append_new(arr, j);
	}
	json_object_set_new(o, "files", arr);
	return o;
}

static json_t *explain_json(const struct explain *e, const struct report *r, size_t top)
{
	json_t *o = report_json(r), *t = json_object_get(o, "totals"), *arr;

	sum_json(t, &e->total);
	set_u64(t, "shmem_bytes", e->cgroup_mode ? e->total.shmem_pss : e->total.shmem);
	set_u64(t, "mlocked_bytes", e->total.locked);
	json_object_set_new(o, "cow_source", json_string(e->watched ? "watch" :
			    e->daemon_cow ? "daemon" : "none"));
	explain_procs_json(e, json_object_get(o, "processes"));
	json_object_set_new(o, "files", explain_files_json(e, top));
	json_object_set_new(o, "breakdown", explain_breakdown_json(e));
	json_object_set_new(o, "kinds", explain_kinds_json(e));
	json_object_set_new(o, "memory_stat", explain_memory_stat_json(e));
	json_object_set_new(o, "charge_parts", explain_charge_parts_json(e));
	json_object_set_new(o, "orphaned_shmem", explain_orphans_json(e));
	json_object_set_new(o, "page_cache_by_file", e->has_page_cache ?
			    page_cache_json(&e->page_cache) : json_null());
	arr = json_array();
	for (int k = 0; k < e->nverdict; k++)
		json_array_append_new(arr, json_string_sanitized(e->verdict[k]));
	json_object_set_new(o, "verdict", arr);
	json_object_set_new(o, "verdicts_unlisted", json_integer(e->verdicts_unlisted));
	return o;
}

enum { PC_PID, PC_COMM, PC_RSS, PC_PSS, PC_USS, PC_SHARED, PC_RECLAIM, PC_NR };
static const struct table_col proc_cols[PC_NR] = {
	[PC_PID] = { "PID", "PID", 7, false, "process ID" },
	[PC_COMM] = { "COMM", "COMM", 15, true, "command name" },
	[PC_RSS] = { "RSS", "RSS", 9, false, "resident bytes" },
	[PC_PSS] = { "PSS", "PSS", 9, false, "proportional set size" },
	[PC_USS] = { "USS", "USS", 9, false, "unique set size" },
	[PC_SHARED] = { "SHARED", "SHARED", 9, false, "shared with other processes" },
	[PC_RECLAIM] = { "RECLAIM", "RECLAIM", 9, false, "clean page cache and LazyFree" },
};

enum { MC_PID, MC_RANGE, MC_KIND, MC_PERM, MC_RSS, MC_PSS, MC_DIRTY, MC_RECLAIM, MC_LOCKED,
       MC_PATH, MC_NR };
static const struct table_col map_cols[MC_NR] = {
	[MC_PID] = { "PID", "PID", 7, false, "process ID" },
	[MC_RANGE] = { "START-END", "START-END", 28, true, "addresses" },
	[MC_KIND] = { "KIND", "KIND", 6, true, "anon, file, shmem, ..." },
	[MC_PERM] = { "PERM", "PERM", 4, false, "permissions" },
	[MC_RSS] = { "RSS", "RSS", 9, false, "resident bytes" },
	[MC_PSS] = { "PSS", "PSS", 9, false, "proportional set size" },
	[MC_DIRTY] = { "DIRTY", "DIRTY", 9, false, "dirty bytes" },
	[MC_RECLAIM] = { "RECLAIM", "RECLAIM", 9, false, "reclaimable bytes" },
	[MC_LOCKED] = { "LOCKED", "LOCKED", 9, false, "mlocked bytes" },
	[MC_PATH] = { "PATH", " PATH", 0, true, "mapped file or [name]" },
};

enum { CC_PID, CC_RANGE, CC_KIND, CC_COPIED, CC_PARENT, CC_SHARE, CC_PATH, CC_NR };
static const struct table_col cowm_cols[CC_NR] = {
	[CC_PID] = { "PID", "PID", 7, false, "process ID" },
	[CC_RANGE] = { "START-END", "START-END", 28, true, "the mapping at its first copy" },
	[CC_KIND] = { "KIND", "KIND", 5, true, "heap, anon, stack, file, shmem" },
	[CC_COPIED] = { "COPIED", "COPIED", 9, false, "bytes copied by CoW in it" },
	[CC_PARENT] = { "PARENT_RSS", "PARENT_RSS", 10, false,
			"the parent's resident bytes of it" },
	[CC_SHARE] = { "%PARENT", "%PARENT", 7, false, "copied / PARENT_RSS" },
	[CC_PATH] = { "PATH", " PATH", 0, true, "mapped file or [name]" },
};

enum { FC_RSS, FC_PSS, FC_RECLAIM, FC_CACHED, FC_SIZE, FC_PATH, FC_NR };
static const struct table_col file_cols[FC_NR] = {
	[FC_RSS] = { "RSS", "RSS", 9, false, "resident, summed over mappers" },
	[FC_PSS] = { "PSS", "PSS", 9, false, "each page once" },
	[FC_RECLAIM] = { "RECLAIM", "RECLAIM", 9, false, "reclaimable" },
	[FC_CACHED] = { "CACHED", "CACHED", 9, false, "in the page cache (cachestat, mincore)" },
	[FC_SIZE] = { "SIZE", "SIZE", 9, false, "file size" },
	[FC_PATH] = { "PATH", " PATH", 0, true, "file" },
};

enum { KC_KIND, KC_RSS, KC_PCT, KC_PSS, KC_USS, KC_RECLAIM, KC_LOCKED, KC_SWAP, KC_NR };
static const struct table_col kind_cols[KC_NR] = {
	[KC_KIND] = { "KIND", "KIND", 7, true, "kind of mapping" },
	[KC_RSS] = { "RSS", "RSS", 9, false, "resident bytes" },
	[KC_PCT] = { "%RSS", "%RSS", 5, false, "share of the RSS" },
	[KC_PSS] = { "PSS", "PSS", 9, false, "proportional set size" },
	[KC_USS] = { "USS", "USS", 9, false, "unique set size" },
	[KC_RECLAIM] = { "RECLAIM", "RECLAIM", 9, false, "reclaimable" },
	[KC_LOCKED] = { "LOCKED", "LOCKED", 9, false, "mlocked" },
	[KC_SWAP] = { "SWAP", "SWAP", 9, false, "swapped out" },
};

static void value_line(const char *what, uint64_t v)
{
	char b[16];

	printf("  %-36s %10s\n", what, fmt_bytes(b, 16, v));
}

/* The head: who, RSS/PSS/USS/swap, the parts of RSS (or PSS) that add up to it. */
static void print_head(const struct explain *e, const struct report *r)
{
	const struct xsum *t = &e->total;
	uint64_t v[PART_NR];
	int pc[PART_NR];
	char b[4][16], comm[64];

	if (e->cgroup_mode) {
		printf("memacct explain: cgroup %s (v%d), %zu processes\n", r->cg.rel,
		       r->cg.version, e->nprocs);
	} else {
		safe_path(comm, sizeof(comm), r->procs[0].comm);
		printf("memacct explain: pid %d (%s), cgroup %s\n", e->procs[0].row.pid, comm,
		       r->cg.rel[0] ? r->cg.rel : "?");
	}
	printf("%s %s   PSS %s   USS %s   swap %s\n",
	       e->cgroup_mode ? "resident, shared counted once:" : "RSS",
	       fmt_bytes(b[0], 16, e->cgroup_mode ? t->pss : t->rss), fmt_bytes(b[1], 16, t->pss),
	       fmt_bytes(b[2], 16, t->uss), fmt_bytes(b[3], 16, t->swap));
	parts_sum(e, v);
	pct_partition(v, PART_NR, pc);
	printf("%s is made of (the parts add up to 100%%):\n",
	       e->cgroup_mode ? "PSS (shared pages counted once)" : "RSS");
	for (int k = 0; k < PART_NR; k++)
		printf("  %-36s %10s  %3d%%\n", part_labels[k], fmt_bytes(b[0], 16, v[k]), pc[k]);
}

/* The words of each part of the charge, in enum memcg_part's order */
static const char *const part_words[MEMCG_PART_NR] = {
	"anon", "shmem (tmpfs, /dev/shm)", "page cache, active", "page cache, inactive",
	"page cache, unevictable", "kernel", "socket buffers", "other",
};

/*
 * The cgroup's charge split into parts that add up to it (memcg_charge_parts()),
 * largest first, and the kubelet's working set with what reclaim could still
 * free of it.
 */
static void print_charge_parts(const struct memcg_parts *pt, int version)
{
	int order[MEMCG_PART_NR];
	char b[3][16];

	for (int i = 0; i < MEMCG_PART_NR; i++)
		order[i] = i;
	for (int i = 1; i < MEMCG_PART_NR; i++)	/* largest first, stable */
		for (int j = i; j > 0 && pt->part[order[j]] > pt->part[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	printf("the cgroup's charge (%s) %s is made of:\n",
	       version == 1 ? "memory.usage_in_bytes" : "memory.current",
	       fmt_bytes(b[0], 16, pt->usage));
	for (int i = 0; i < MEMCG_PART_NR; i++) {
		uint64_t v = pt->part[order[i]];

		if (!v)
			continue;
		printf("  %-36s %10s  %3.0f%%\n", part_words[order[i]], fmt_bytes(b[0], 16, v),
		       pt->usage ? 100.0 * v / pt->usage : 0.0);
	}
	printf("working set (the kubelet's: charge - inactive page cache) %s, of which reclaim "
	       "can still free %s\n  (active page cache, reclaimable slab): the kubelet counts "
	       "it as used\n", fmt_bytes(b[1], 16, pt->working_set),
	       fmt_bytes(b[2], 16, pt->working_set_reclaimable));
}

/* tmpfs files that no process maps or holds open, charged to the cgroup: the 10 largest */
static void print_orphans(const struct shmem_orphans *o)
{
	char b[2][16], path[PATH_MAX];

	printf("tmpfs files that no process maps or holds open, charged to the cgroup: %s in %"
	       PRIu64 " file%s%s\n", fmt_bytes(b[0], 16, o->charged), o->files_charged,
	       o->files_charged == 1 ? "" : "s", o->truncated ? " (walk cut short)" : "");
	for (size_t i = 0; i < o->nfiles && i < 10; i++) {
		safe_path(path, sizeof(path), o->files[i].path);
		printf("  %10s  %s (%s resident)\n", fmt_bytes(b[0], 16, o->files[i].charged), path,
		       fmt_bytes(b[1], 16, o->files[i].resident));
	}
}

/* Views that overlap the parts: CoW, shared, mlocked, reclaimable, DMA; the
 * host's pins and budget; the cgroup's memory.stat. */
static void print_views(const struct explain *e, const struct report *r)
{
	const struct xsum *t = &e->total;
	char b[9][16];

	printf("Other views of the same pages (they overlap the parts):\n");
	if (e->watched)
		value_line("CoW-copied while watched (flow)", explain_cow_total(e));
	else if (e->daemon_cow)
		value_line("CoW-copied since the daemon attached", explain_cow_total(e));
	else
		printf("  %-36s %10s\n", "CoW-copied since fork", "unknown");
	value_line(e->cgroup_mode ? "shared between processes (once)" :
		   "shared with other processes", t->shared);
	value_line("mlocked", t->locked);
	value_line(e->cgroup_mode ? "reclaimable (memory.stat, once)" :
		   "reclaimable (clean unlocked + LazyFree)", t->reclaimable);
	if (e->watched)
		value_line("pinned for DMA while watched", dma_total(e));
	else if (e->daemon_dma)
		value_line("pinned for DMA (daemon's pins)", dma_total(e));
	else
		printf("  %-36s %10s\n", "pinned for DMA", "unknown");
	if (r->has_host) {
		char hl[320];

		report_host_line(r, hl, sizeof(hl));
		printf("%s\n", hl);
		print_host_budget(stdout, &r->host);
	}
	if (e->has_stat) {
		const struct memcg_stat *c = &e->cst;

		printf("cgroup memory.stat: anon %s, file %s (active %s, inactive %s), dirty %s, "
		       "writeback %s,\n  shmem %s, unevictable %s, slab reclaimable %s\n",
		       fmt_bytes(b[0], 16, c->anon), fmt_bytes(b[1], 16, c->file),
		       fmt_bytes(b[2], 16, c->active_file), fmt_bytes(b[3], 16, c->inactive_file),
		       fmt_bytes(b[4], 16, c->file_dirty), fmt_bytes(b[5], 16, c->file_writeback),
		       fmt_bytes(b[6], 16, c->shmem), fmt_bytes(b[7], 16, c->unevictable),
		       fmt_bytes(b[8], 16, c->slab_reclaimable));
		if (e->parts.usage)
			print_charge_parts(&e->parts, r->cg.version);
	}
	if (e->has_orphans)
		print_orphans(&e->orphans);
	if (e->has_page_cache)
		print_page_cache_files(stdout, &e->page_cache, "since the daemon started");
}

/* --cgroup: a row per process (RSS, PSS, USS, shared, reclaimable). */
static void print_procs_table(const struct explain *e)
{
	struct table_cells tc;

	table_cells_init(&tc, PC_NR, e->nprocs, 24);
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		snprintf(table_cell(&tc, i, PC_PID), tc.cell, "%d", x->row.pid);
		safe_path(table_cell(&tc, i, PC_COMM), 16, x->row.comm);
		table_cells_bytes(&tc, i, PC_RSS, x->sum.rss);
		table_cells_bytes(&tc, i, PC_PSS, x->sum.pss);
		table_cells_bytes(&tc, i, PC_USS, x->sum.uss);
		table_cells_bytes(&tc, i, PC_SHARED, x->sum.shared);
		table_cells_bytes(&tc, i, PC_RECLAIM, x->sum.reclaimable);
	}
	putchar('\n');
	fflush(stdout);
	if (table_cells_print(stdout, &tc, proc_cols, e->nprocs, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
}

/* --by mapping: the @top largest mappings by RSS (a PID column for a cgroup). */
static void print_by_mapping(const struct explain *e, size_t top)
{
	size_t n, rows;
	struct mref *refs = sorted_mappings(e, &n);
	/* the PID column for a cgroup only: the table from its second */
	const struct table_col *cols = e->cgroup_mode ? map_cols : map_cols + 1;
	int o = e->cgroup_mode ? 0 : -1;	/* column shift without PID */
	struct table_cells tc;
	char path[256];

	rows = refs ? (n < top ? n : top) : 0;
	printf("\nLargest mappings by RSS:\n");
	fflush(stdout);
	table_cells_init(&tc, e->cgroup_mode ? MC_NR : MC_NR - 1, rows, 300);
	for (size_t i = 0; i < rows; i++) {
		const struct smaps_map *m = refs[i].m;

		if (e->cgroup_mode)
			snprintf(table_cell(&tc, i, MC_PID), tc.cell, "%d", (int)refs[i].pid);
		snprintf(table_cell(&tc, i, MC_RANGE + o), tc.cell, "%llx-%llx",
			 (unsigned long long)m->start, (unsigned long long)m->end);
		snprintf(table_cell(&tc, i, MC_KIND + o), tc.cell, "%s", smaps_kind_name(m->kind));
		snprintf(table_cell(&tc, i, MC_PERM + o), tc.cell, "%s", m->perms);
		table_cells_bytes(&tc, i, MC_RSS + o, m->rss);
		table_cells_bytes(&tc, i, MC_PSS + o, m->pss);
		table_cells_bytes(&tc, i, MC_DIRTY + o, m->shared_dirty + m->private_dirty);
		table_cells_bytes(&tc, i, MC_RECLAIM + o, smaps_reclaimable(m));
		table_cells_bytes(&tc, i, MC_LOCKED + o, smaps_locked(m));
		safe_path(path, sizeof(path), m->path ? m->path : "");
		snprintf(table_cell(&tc, i, MC_PATH + o), tc.cell, " %s%s", path,
			 m->deleted ? " (deleted)" : "");
	}
	if (table_cells_print(stdout, &tc, cols, rows, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
	free(refs);
}

/*
 * The processes' CoW copies by mapping (issue 42), the @top largest of each
 * (the watch's or a daemon's; cow_by_mapping in JSON). Nothing without.
 */
static void print_cow_mappings(const struct report *r, size_t top)
{
	size_t rows = 0, i = 0;
	struct table_cells tc;
	char path[256];

	for (size_t k = 0; k < r->nprocs; k++)
		rows += r->procs[k].cowm_n < top ? r->procs[k].cowm_n : top;
	if (!rows)
		return;
	printf("\nCoW copies by mapping (each process's largest; PARENT_RSS when first seen):\n");
	fflush(stdout);
	table_cells_init(&tc, CC_NR, rows, 300);
	for (size_t k = 0; k < r->nprocs; k++) {
		const struct proc_row *row = &r->procs[k];

		for (uint32_t j = 0; j < row->cowm_n && j < top; j++, i++) {
			const struct cow_mapping *m = &r->cowm[row->cowm_first + j];

			snprintf(table_cell(&tc, i, CC_PID), tc.cell, "%d", row->pid);
			snprintf(table_cell(&tc, i, CC_RANGE), tc.cell, "%llx-%llx",
				 (unsigned long long)m->start, (unsigned long long)m->end);
			snprintf(table_cell(&tc, i, CC_KIND), tc.cell, "%s", cowm_kind_name(m));
			table_cells_bytes(&tc, i, CC_COPIED, m->bytes);
			if (m->has_parent) {
				table_cells_bytes(&tc, i, CC_PARENT, m->parent_rss);
				snprintf(table_cell(&tc, i, CC_SHARE), tc.cell, "%.0f%%",
					 m->parent_rss ? 100.0 * m->bytes / m->parent_rss : 0.0);
			} else {
				snprintf(table_cell(&tc, i, CC_PARENT), tc.cell, "-");
				snprintf(table_cell(&tc, i, CC_SHARE), tc.cell, "-");
			}
			safe_path(path, sizeof(path), m->path ? m->path : "");
			snprintf(table_cell(&tc, i, CC_PATH), tc.cell, " %s", path);
		}
	}
	if (table_cells_print(stdout, &tc, cowm_cols, rows, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
}

/* --by file: the @top files by RSS, with their page-cache residency and size. */
static void print_by_file(const struct explain *e, size_t top)
{
	size_t rows = e->nfiles < top ? e->nfiles : top;
	struct table_cells tc;
	char path[256];

	printf("\nFiles by RSS (RSS summed over mappers; PSS counts each page once):\n");
	fflush(stdout);
	table_cells_init(&tc, FC_NR, rows, 300);
	for (size_t i = 0; i < rows; i++) {
		const struct xfile *f = &e->files[i];

		table_cells_bytes(&tc, i, FC_RSS, f->rss);
		table_cells_bytes(&tc, i, FC_PSS, f->pss);
		table_cells_bytes(&tc, i, FC_RECLAIM, f->reclaimable);
		if (f->has_cached)
			table_cells_bytes(&tc, i, FC_CACHED, f->cached);
		else
			snprintf(table_cell(&tc, i, FC_CACHED), tc.cell, "?");
		if (f->has_size)
			table_cells_bytes(&tc, i, FC_SIZE, f->size);
		else
			snprintf(table_cell(&tc, i, FC_SIZE), tc.cell, "?");
		safe_path(path, sizeof(path), f->m->path);
		snprintf(table_cell(&tc, i, FC_PATH), tc.cell, " %s%s", path,
			 f->m->deleted ? " (deleted)" : "");
	}
	if (table_cells_print(stdout, &tc, file_cols, rows, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
}

/* --by kind: a row per kind of mapping, its share of the RSS summed. */
static void print_by_kind(const struct explain *e)
{
	struct xsum k[SMAPS_KIND_NR];
	uint64_t kr[SMAPS_KIND_NR];
	int kp[SMAPS_KIND_NR];
	struct table_cells tc;

	kind_sums(e, k);
	for (int j = 0; j < SMAPS_KIND_NR; j++)
		kr[j] = k[j].rss;
	pct_partition(kr, SMAPS_KIND_NR, kp);
	printf("\nBy kind (%%RSS: share of the RSS summed over %s, adds up to 100%%):\n",
	       e->cgroup_mode ? "the processes" : "the mappings");
	fflush(stdout);
	table_cells_init(&tc, KC_NR, SMAPS_KIND_NR, 24);
	for (int j = 0; j < SMAPS_KIND_NR; j++) {
		snprintf(table_cell(&tc, j, KC_KIND), tc.cell, "%s", smaps_kind_name(j));
		table_cells_bytes(&tc, j, KC_RSS, k[j].rss);
		snprintf(table_cell(&tc, j, KC_PCT), tc.cell, "%d%%", kp[j]);
		table_cells_bytes(&tc, j, KC_PSS, k[j].pss);
		table_cells_bytes(&tc, j, KC_USS, k[j].uss);
		table_cells_bytes(&tc, j, KC_RECLAIM, k[j].reclaimable);
		table_cells_bytes(&tc, j, KC_LOCKED, k[j].locked);
		table_cells_bytes(&tc, j, KC_SWAP, k[j].swap);
	}
	if (table_cells_print(stdout, &tc, kind_cols, SMAPS_KIND_NR, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
}

void explain_print_plain(const struct explain *e, const struct report *r, enum by by,
			 size_t top)
{
	print_head(e, r);
	print_views(e, r);
	if (e->cgroup_mode)
		print_procs_table(e);
	if (!top)
		top = 10;
	if (by == BY_MAPPING)
		print_by_mapping(e, top);
	else if (by == BY_FILE)
		print_by_file(e, top);
	else
		print_by_kind(e);
	print_cow_mappings(r, top);
	if (e->has_topo)
		print_numa_plain(e, top);
	printf("\nVerdict:\n");
	for (int j = 0; j < e->nverdict; j++)
		printf("  - %s\n", e->verdict[j]);
	if (e->verdicts_unlisted)
		printf("  NOTE: %d more verdicts, not listed (JSON: verdicts_unlisted)\n",
		       e->verdicts_unlisted);
	fflush(stdout);
}

int explain_print_json(FILE *f, const struct explain *e, const struct report *r, size_t top)
{
	json_t *o = explain_json(e, r, top), *v;
	const char *key;
	struct jw w;

	if (!o) {
		p_err("building the JSON report: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* report_json()'s members, then the mappings streamed */
	jw_init(&w, f);
	jw_open(&w, NULL, '{');
	json_object_foreach(o, key, v)
		jw_json(&w, key, v);
	json_decref(o);
	write_mappings_json(&w, e, top);
	if (e->has_topo)
		write_numa_json(&w, e, top);
	else
		jw_null(&w, "numa");
	jw_close(&w);
	/* -EIO (a full disk, a closed pipe): main() says it, exit 4 */
	if (jw_end(&w) == -EINVAL) {
		p_err("encoding the JSON report: a value jansson could not encode");
		return -EINVAL;
	}
	return 0;
}
