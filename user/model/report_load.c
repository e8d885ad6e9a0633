// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * report_load.c - the report model read back from its own JSON
 * (memacct.report/v1, report_json()): what `memacct report` prints from a
 * recording (record.h) or from the daemon's --json-log goes through the
 * printers of report.c and phases_print.c, never through printers of its
 * own. Every field a printer reads is restored; report_json() of the result
 * gives the object it was read from again (tests/integration_record.c
 * compares them byte for byte).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "metric_table.h"
#include "phases.h"
#include "report.h"
#include "smaps.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static uint64_t ju64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static bool jknown(const json_t *o, const char *key)
{
	return json_is_integer(json_object_get(o, key));
}

static double jreal(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0.0;
}

static bool jbool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void jstr(char *dst, size_t len, const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(dst, len, "%s", s ? s : "");
}

void report_metrics_from_json(struct metrics *m, const json_t *o, unsigned int skip)
{
	const json_t *by = json_object_get(o, "numa_migrated_bytes_by_reason");

	memset(m, 0, sizeof(*m));
	for (int id = 0; id < M_NR; id++) {
		const json_t *v = json_object_get(o, metric_table[id].key);

		if (metric_table[id].flags & skip)
			continue;
		if (json_is_integer(v))
			*metric_ptr(m, id) = (uint64_t)json_integer_value(v);
		else
			m->unknown |= MBIT(id);
	}
	m->dma_estimate = jbool(o, "dma_pinned_estimate");
	for (int i = 0; i < MEMACCT_MR_NR; i++)
		m->numa_migrated_by_reason[i] = ju64(by, migrate_reason_names[i]);
	by = json_object_get(o, "cow_copied_bytes_by_mapping_kind");
	for (int i = 1; i < MEMACCT_COW_KIND_NR; i++)
		m->cow_by_kind[i] = ju64(by, cow_kind_names[i]);
}

/* The inverse of report.c hostmem_json(): null is "not known". */
static void hostmem_from_json(struct hostmem *m, const json_t *o)
{
	m->meminfo = jknown(o, "mem_free_bytes");
	m->mem_free = ju64(o, "mem_free_bytes");
	m->avail_known = jknown(o, "mem_available_bytes");
	m->mem_available = ju64(o, "mem_available_bytes");
	m->page_cache = ju64(o, "page_cache_bytes");
	m->reclaimable = ju64(o, "reclaimable_page_cache_bytes");
	m->dirty = ju64(o, "dirty_bytes");
	m->writeback = ju64(o, "writeback_bytes");
	m->file_pages = ju64(o, "file_pages_bytes");
	m->shmem = ju64(o, "shmem_bytes");
	m->unevictable = ju64(o, "unevictable_bytes");
	m->mlocked = ju64(o, "mlocked_bytes");
	m->hugetlb_known = jknown(o, "hugetlb_bytes");
	m->hugetlb = ju64(o, "hugetlb_bytes");
	m->rsvd_known = jknown(o, "hugetlb_reserved_bytes");
	m->hugetlb_reserved = ju64(o, "hugetlb_reserved_bytes");
	m->pcp_known = jknown(o, "pcp_free_bytes");
	m->pcp_free = ju64(o, "pcp_free_bytes");
	m->unowned_known = jknown(o, "unowned_kernel_bytes");
	m->unowned = ju64(o, "unowned_kernel_bytes");
}

/* The inverse of report_host_json(). */
static void host_from_json(struct report *r, const json_t *o)
{
	struct hostpin *h = &r->host;
	const json_t *nodes = json_object_get(o, "nodes"), *n;
	size_t i;

	r->has_host = true;
	h->known = jbool(o, "foll_pin_counters");
	h->foll_pinned = ju64(o, "foll_pinned_bytes");
	r->dma_attribution = jknown(o, "dma_pinned_attributed_bytes");
	r->dma_attributed = ju64(o, "dma_pinned_attributed_bytes");
	r->foll_since = jknown(o, "foll_pin_acquired_bytes");
	r->foll_acquired_since = ju64(o, "foll_pin_acquired_bytes");
	r->foll_released_since = ju64(o, "foll_pin_released_bytes");
	r->foll_pinned_peak = ju64(o, "foll_pinned_peak_bytes");
	r->dma_windows = jbool(o, "dma_pin_windows");
	h->mem_total = ju64(o, "mem_total_bytes");
	h->refreshed = jbool(o, "refreshed");
	hostmem_from_json(&h->mem, o);
	h->uma = jbool(o, "unified_memory");
	jstr(h->uma_source, sizeof(h->uma_source), o, "unified_memory_source");
	json_array_foreach(nodes, i, n) {
		struct hostpin_node *hn = &h->nodes[h->nnodes];

		if (h->nnodes >= HOSTPIN_MAX_NODES)
			break;
		hn->node = (int)ju64(n, "node");
		hn->known = jknown(n, "foll_pinned_bytes");
		hn->foll_pinned = ju64(n, "foll_pinned_bytes");
		hn->mem_total = ju64(n, "mem_total_bytes");
		hn->cpu_known = json_is_boolean(json_object_get(n, "cpuless"));
		hn->cpuless = jbool(n, "cpuless");
		hostmem_from_json(&hn->mem, n);
		h->nnodes++;
	}
}

/* A wait status with the same WIFEXITED/WEXITSTATUS/WIFSIGNALED/WTERMSIG. */
static int wait_status_from_json(const json_t *p)
{
	if (json_is_integer(json_object_get(p, "exit_signal")))
		return (int)(ju64(p, "exit_signal") & 0x7f);
	return (int)((ju64(p, "exit_code") & 0xff) << 8);
}

/* A row's "cow_by_mapping" into r->cowm (paths copied). */
static int cowm_from_json(struct report *r, struct proc_row *row, const json_t *a, size_t *cap)
{
	const json_t *e;
	size_t i;

	row->cowm_first = (uint32_t)r->ncowm;
	json_array_foreach(a, i, e) {
		struct cow_mapping *m = array_grow(&r->cowm, r->ncowm, cap, sizeof(*m));
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *path = json_string_value(json_object_get(e, "path"));
		const json_t *par = json_object_get(e, "parent_resident_bytes");

		if (!m)
			return -ENOMEM;
		*m = (struct cow_mapping){ .start = ju64(e, "start"), .end = ju64(e, "end"),
					   .bytes = ju64(e, "bytes"),
					   .kind = MEMACCT_COW_KIND_ANON,
					   .has_parent = json_is_integer(par),
					   .parent_rss = json_integer_value(par) };
		if (kind && !strcmp(kind, "heap"))
			m->kind = MEMACCT_COW_KIND_HEAP;
		else if (kind && !strcmp(kind, "stack"))
			m->kind = MEMACCT_COW_KIND_STACK;
		else if (kind && (!strcmp(kind, "file") || !strcmp(kind, "shmem")))
			m->kind = MEMACCT_COW_KIND_FILE;
		m->shmem = kind && !strcmp(kind, "shmem");
		if (path && !(m->path = strdup(path)))
			return -ENOMEM;
		r->ncowm++;
		row->cowm_n++;
	}
	return 0;
}

static int procs_from_json(struct report *r, const json_t *a)
{
	const json_t *p;
	size_t i, cap = 0;

	r->nprocs = 0;
	r->procs = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	json_array_foreach(a, i, p) {
		struct proc_row *row = &r->procs[r->nprocs++];

		row->pid = (int)json_integer_value(json_object_get(p, "pid"));
		row->ppid = (int)json_integer_value(json_object_get(p, "ppid"));
		jstr(row->comm, sizeof(row->comm), p, "comm");
		row->exited = jbool(p, "exited");
		if (row->exited)
			row->exit_code = wait_status_from_json(p);
		row->oom_killed = jbool(p, "oom_killed");
		report_metrics_from_json(&row->m, p, MF_TOTALS);
		r->has_cowm |= json_is_array(json_object_get(p, "cow_by_mapping"));
		if (cowm_from_json(r, row, json_object_get(p, "cow_by_mapping"), &cap))
			return -ENOMEM;
	}
	return 0;
}

int page_cache_from_json(const json_t *o, struct page_cache_files *pc)
{
	const json_t *a = json_object_get(o, "files"), *e;
	size_t i;

	memset(pc, 0, sizeof(*pc));
	if (!json_is_object(o) || !json_is_array(a))
		return -EINVAL;
	pc->f = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*pc->f));
	if (!pc->f)
		return -ENOMEM;
	json_array_foreach(a, i, e) {
		struct page_cache_file *f = &pc->f[pc->n++];
		const char *path = json_string_value(json_object_get(e, "path"));
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *dev = json_string_value(json_object_get(e, "dev"));
		unsigned int maj = 0, min = 0;

		if (dev && sscanf(dev, "%u:%u", &maj, &min) != 2)
			maj = min = 0;
		f->dev = makedev(maj, min);
		f->ino = ju64(e, "inode");
		f->bytes = ju64(e, "bytes");
		f->added = ju64(e, "added_bytes");
		f->removed = ju64(e, "removed_bytes");
		f->peak = ju64(e, "peak_bytes");
		f->before = json_is_true(json_object_get(e, "cached_before_start"));
		f->resolved = !json_is_null(json_object_get(e, "mapped"));
		f->mapped = json_is_true(json_object_get(e, "mapped"));
		f->open = json_is_true(json_object_get(e, "open"));
		f->held_before = json_is_true(json_object_get(e, "path_held_before"));
		snprintf(f->name, sizeof(f->name), "%s", name ? name : "");
		if (path && !(f->path = strdup(path))) {
			page_cache_free(pc);
			return -ENOMEM;
		}
	}
	pc->bytes = ju64(o, "bytes");
	pc->count = ju64(o, "files_count");
	pc->untracked_removed = ju64(o, "untracked_removed_bytes");
	pc->unrecorded_added = ju64(o, "unrecorded_added_bytes");
	return 0;
}

int report_from_json(const json_t *o, struct report *r)
{
	const json_t *cg = json_object_get(o, "cgroup"), *t = json_object_get(o, "totals");
	const json_t *v, *drops = json_object_get(o, "dropped_events_by_cause");
	const char *schema = json_string_value(json_object_get(o, "schema"));
	int err;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o) || !schema || strcmp(schema, REPORT_SCHEMA) ||
	    !json_is_object(cg) || !json_is_object(t) ||
	    !json_is_string(json_object_get(o, "command")))
		return -EINVAL;
	/* a string of the model (report_json() reads it, never frees it) */
	r->command = json_string_value(json_object_get(o, "command"));
	jstr(r->cg.rel, sizeof(r->cg.rel), cg, "path");
	jstr(r->cg.path, sizeof(r->cg.path), cg, "fs_path");
	r->cg.id = ju64(cg, "id");
	r->cg.version = (int)ju64(cg, "version");
	r->elapsed_s = jreal(o, "elapsed_s");
	v = json_object_get(o, "exit_status");
	r->has_exit_status = json_is_integer(v);
	r->exit_status = (int)json_integer_value(v);
	r->final = jbool(o, "final");
	report_metrics_from_json(&r->totals, t, 0);
	r->has_limit = jknown(t, "limit_bytes");
	r->limit_bytes = ju64(t, "limit_bytes");
	err = procs_from_json(r, json_object_get(o, "processes"));
	if (err)
		return err;
	v = json_object_get(o, "exited_folded");
	if (json_is_object(v)) {
		r->nexited_folded = ju64(v, "count");
		report_metrics_from_json(&r->exited_folded, v, MF_TOTALS);
	}
	v = json_object_get(o, "oom_kills");
	if (json_array_size(v)) {
		r->ooms_rec = json_incref((json_t *)v);
		r->nooms = json_array_size(v);
	}
	r->ooms_unlisted = ju64(o, "oom_kills_unlisted");
	v = json_object_get(o, "oom_warnings");
	if (json_array_size(v))
		r->oom_warnings = json_incref((json_t *)v);
	r->oom_warnings_unlisted = ju64(o, "oom_warnings_unlisted");
	for (int i = 0; i < MEMACCT_DROP_NR; i++)
		r->dropped[i] = ju64(drops, drop_names[i]);
	r->dropped_events = ju64(o, "dropped_events");
	for (int i = 0; i < MEMACCT_NV_NR; i++)
		r->nv_calls[i] = ju64(json_object_get(o, "nvidia_pin_calls"), nv_call_names[i]);
	report_metrics_from_json(&r->flows_lost, json_object_get(o, "flows_lost"), MF_TOTALS);
	r->flows_lost.unknown = 0;
	r->vma_lockless_lookups = ju64(o, "vma_lockless_lookups");
	r->bpf_runs_skipped = ju64(o, "bpf_runs_skipped");
	v = json_object_get(o, "host");
	if (json_is_object(v))
		host_from_json(r, v);
	v = json_object_get(o, "page_cache_by_file");
	if (json_is_object(v)) {
		err = page_cache_from_json(v, &r->page_cache);
		if (err)
			return err;
		r->has_page_cache = true;
	}
	return 0;
}

static const char *const change_names[] = { "appeared", "grew", "shrank", "vanished" };

static void delta_from_json(struct phase_proc *d, const json_t *o, unsigned int skip)
{
	for (int id = 0; id < M_NR; id++) {
		const json_t *v = json_object_get(o, metric_table[id].key);

		if (metric_table[id].flags & skip)
			continue;
		if (json_is_integer(v))
			d->d[id] = json_integer_value(v);
		else
			d->unknown |= MBIT(id);
	}
	for (int k = 0; k < MEMACCT_COW_KIND_NR; k++)
		d->cow_by_kind[k] = json_integer_value(json_object_get(json_object_get(o,
					"cow_copied_bytes_by_mapping_kind"), cow_kind_names[k]));
}

static int phase_maps_from_json(struct phase *ph, const json_t *a)
{
	const json_t *m;
	size_t i;

	ph->maps = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*ph->maps));
	if (!ph->maps)
		return -ENOMEM;
	json_array_foreach(a, i, m) {
		struct phase_map *pm = &ph->maps[ph->nmaps++];
		const char *ch = json_string_value(json_object_get(m, "change"));
		const char *kind = json_string_value(json_object_get(m, "kind"));

		pm->pid = (int)ju64(m, "pid");
		for (int c = 0; ch && c < 4; c++)
			if (!strcmp(ch, change_names[c]))
				pm->change = c;
		pm->start = ju64(m, "addr_start");
		pm->end = ju64(m, "addr_end");
		pm->kind = SMAPS_OTHER;
		for (int k = 0; kind && k < SMAPS_KIND_NR; k++)
			if (!strcmp(kind, smaps_kind_name(k)))
				pm->kind = k;
		jstr(pm->path, sizeof(pm->path), m, "path");
		pm->size = ju64(m, "size_bytes");
		pm->rss = ju64(m, "rss_bytes");
		pm->locked = ju64(m, "locked_bytes");
		pm->size_change = json_integer_value(json_object_get(m, "size_change_bytes"));
		pm->rss_change = json_integer_value(json_object_get(m, "rss_change_bytes"));
		pm->freed_in = -1;
	}
	return 0;
}

/* freed_in: a phase's name in JSON; the first later phase of that name */
static void phase_freed_from_json(struct phases *p, size_t i, const json_t *a)
{
	struct phase *ph = &p->done[i];

	for (size_t j = 0; j < ph->nmaps; j++) {
		const char *name = json_string_value(json_object_get(json_array_get(a, j),
								     "freed_in"));

		for (size_t k = i + 1; name && k < p->ndone; k++)
			if (!strcmp(p->done[k].name, name)) {
				ph->maps[j].freed_in = (int)k;
				break;
			}
	}
}

int phases_from_json(struct phases *p, const json_t *o)
{
	const json_t *a = json_object_get(o, "phases"), *ph;
	size_t i;
	int err;

	memset(p, 0, sizeof(*p));
	p->fd = p->child_fd = -1;
	p->params = jreal(o, "params");
	p->expect_bpp = jreal(o, "expect_bytes_per_param");
	p->refused = ju64(o, "phases_refused");
	p->failed = ju64(o, "marks_failed");
	if (!json_array_size(a))
		return 0;
	p->done = calloc(json_array_size(a), sizeof(*p->done));
	if (!p->done)
		return -ENOMEM;
	p->cap = json_array_size(a);
	json_array_foreach(a, i, ph) {
		struct phase *d = &p->done[p->ndone++];
		const json_t *procs = json_object_get(ph, "processes"), *po;
		size_t j;

		jstr(d->name, sizeof(d->name), ph, "name");
		d->start_s = jreal(ph, "start");
		d->end_s = jreal(ph, "end");
		d->procs = calloc(json_array_size(procs) ? json_array_size(procs) : 1,
				  sizeof(*d->procs));
		if (!d->procs)
			return -ENOMEM;
		json_array_foreach(procs, j, po) {
			struct phase_proc *pp = &d->procs[d->nprocs++];

			pp->pid = (int)ju64(po, "pid");
			jstr(pp->comm, sizeof(pp->comm), po, "comm");
			pp->appeared = jbool(po, "appeared");
			pp->exited = jbool(po, "exited");
			delta_from_json(pp, po, MF_TOTALS);
		}
		delta_from_json(&d->totals, json_object_get(ph, "totals"), 0);
		err = phase_maps_from_json(d, json_object_get(ph, "mappings"));
		if (err)
			return err;
	}
	json_array_foreach(a, i, ph)
		phase_freed_from_json(p, i, json_object_get(ph, "mappings"));
	return 0;
}
