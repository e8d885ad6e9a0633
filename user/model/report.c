// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * report.c - the report model (report.h): struct metrics filled from BPF
 * records and memory.stat and summed by the metric table's rules; the
 * report as its JSON object (schema memacct.report/v1, the canonical form a
 * recording and the daemon's log keep); the verdicts. Printed by
 * out/report_print.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cgroup_labels.h"
#include "memlimits.h"
#include "metric_table.h"
#include "oom.h"
#include "proc.h"
#include "report.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

void flows_add(struct memacct_flows *to, const struct memacct_flows *f)
{
	__u64 *t = (__u64 *)to;
	const __u64 *v = (const __u64 *)f;

	for (size_t i = 0; i < sizeof(*f) / sizeof(__u64); i++)
		t[i] += v[i];
}

void metrics_add_flows(struct metrics *t, const struct metrics *m)
{
	for (int id = 0; id < M_NR; id++)
		if (metric_is_bpf_flow(id))
			*metric_ptr(t, id) += metric_get(m, id);
	for (int i = 0; i < MEMACCT_MR_NR; i++)
		t->numa_migrated_by_reason[i] += m->numa_migrated_by_reason[i];
	for (int i = 0; i < MEMACCT_COW_KIND_NR; i++)
		t->cow_by_kind[i] += m->cow_by_kind[i];
}

void metrics_add(struct metrics *t, const struct metrics *m, bool exited)
{
	for (int id = 0; id < M_NR; id++) {
		unsigned int rule = metric_table[id].total;

		if (rule == TR_ALL || (rule == TR_LIVE && !exited))
			*metric_ptr(t, id) += metric_get(m, id);
	}
	for (int k = 0; k < MEMACCT_MR_NR; k++)
		t->numa_migrated_by_reason[k] += m->numa_migrated_by_reason[k];
	for (int k = 0; k < MEMACCT_COW_KIND_NR; k++)
		t->cow_by_kind[k] += m->cow_by_kind[k];
	if (!exited)
		t->rss_sum += m->rss;
	t->dma_estimate |= m->dma_estimate;
}

void metrics_add_row(struct metrics *t, const struct proc_row *row)
{
	metrics_add(t, &row->m, row->exited);
}

void metrics_sum_rows(struct metrics *t, const struct proc_row *rows, size_t n)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++)
		metrics_add_row(t, &rows[i]);
}

void metrics_clamp_flows(struct metrics *m, const struct metrics *prev)
{
	for (int id = 0; id < M_NR; id++)
		if ((metric_table[id].flags & MF_FLOW) && metric_get(m, id) < metric_get(prev, id))
			*metric_ptr(m, id) = metric_get(prev, id);
	for (int i = 0; i < MEMACCT_MR_NR; i++)
		if (m->numa_migrated_by_reason[i] < prev->numa_migrated_by_reason[i])
			m->numa_migrated_by_reason[i] = prev->numa_migrated_by_reason[i];
	for (int i = 0; i < MEMACCT_COW_KIND_NR; i++)
		if (m->cow_by_kind[i] < prev->cow_by_kind[i])
			m->cow_by_kind[i] = prev->cow_by_kind[i];
}

void metrics_hold_bpf_flows(struct metrics *m, const struct metrics *prev)
{
	for (int id = 0; id < M_NR; id++)
		if ((metric_table[id].flags & MF_FLOW) && metric_is_bpf_flow(id))
			*metric_ptr(m, id) = metric_get(prev, id);
	memcpy(m->numa_migrated_by_reason, prev->numa_migrated_by_reason,
	       sizeof(m->numa_migrated_by_reason));
	memcpy(m->cow_by_kind, prev->cow_by_kind, sizeof(m->cow_by_kind));
}

void report_free(struct report *r)
{
	free(r->ooms);
	r->ooms = NULL;
	json_decref(r->ooms_rec);
	r->ooms_rec = NULL;
	json_decref(r->oom_warnings);
	r->oom_warnings = NULL;
	r->nooms = 0;
	free(r->procs);
	r->procs = NULL;
	r->nprocs = 0;
	for (size_t i = 0; i < r->ncowm; i++)
		free((char *)r->cowm[i].path);
	free(r->cowm);
	r->cowm = NULL;
	r->ncowm = 0;
	page_cache_free(&r->page_cache);
	r->has_page_cache = false;
}

const char *const cow_kind_names[MEMACCT_COW_KIND_NR] = {
	[0] = "unknown",
	[MEMACCT_COW_KIND_ANON] = "anon",
	[MEMACCT_COW_KIND_HEAP] = "heap",
	[MEMACCT_COW_KIND_STACK] = "stack",
	[MEMACCT_COW_KIND_FILE] = "file",
};

uint64_t metrics_cow_unknown(const struct metrics *m)
{
	uint64_t all = m->cow_copied + m->cow_file_copied, kinds = 0;

	for (int i = 1; i < MEMACCT_COW_KIND_NR; i++)
		kinds += m->cow_by_kind[i];
	return all > kinds ? all - kinds : 0;
}

const char *const migrate_reason_names[MEMACCT_MR_NR] = {
	[MEMACCT_MR_COMPACTION] = "compaction",
	[MEMACCT_MR_MEMORY_FAILURE] = "memory_failure",
	[MEMACCT_MR_MEMORY_HOTPLUG] = "memory_hotplug",
	[MEMACCT_MR_SYSCALL] = "syscall",
	[MEMACCT_MR_MEMPOLICY_MBIND] = "mempolicy_mbind",
	[MEMACCT_MR_NUMA_MISPLACED] = "numa_misplaced",
	[MEMACCT_MR_CONTIG_RANGE] = "contig_range",
	[MEMACCT_MR_OTHER] = "other",
};

const char *const drop_names[MEMACCT_DROP_NR] = {
	[MEMACCT_DROP_PROC_MAP_FULL] = "proc_map_full",
	[MEMACCT_DROP_CGROUP_MAP_FULL] = "cgroup_map_full",
	[MEMACCT_DROP_RINGBUF_FULL] = "ringbuf_full",
	[MEMACCT_DROP_TASK_STORAGE] = "task_storage",
	[MEMACCT_DROP_VMA_BUSY] = "vma_busy",
	[MEMACCT_DROP_DMA_WINDOW_FULL] = "dma_window_full",
	[MEMACCT_DROP_OOM_VICTIM_FULL] = "oom_victim_map_full",
	[MEMACCT_DROP_PROC_ALLOC] = "proc_alloc_failed",
	[MEMACCT_DROP_DMA_RANGE_FULL] = "dma_range_map_full",
	[MEMACCT_DROP_DMA_RANGE_SLOTS] = "dma_range_slots_full",
	[MEMACCT_DROP_NV_RANGE_UNKNOWN] = "nvidia_range_unknown",
	[MEMACCT_DROP_OOM_RING_FULL] = "oom_ring_full",
	[MEMACCT_DROP_COW_MAPS] = "cow_map_full",
	[MEMACCT_DROP_PAGE_CACHE_FILES] = "page_cache_map_full",
};

bool report_drop_is_loss(int cause)
{
	/* not lost: a row (ringbuf_full), the mapping of copies counted
	 * (cow_map_full), the file of pages in memory.stat's file
	 * (page_cache_map_full): said apart */
	return cause != MEMACCT_DROP_RINGBUF_FULL && cause != MEMACCT_DROP_COW_MAPS &&
	       cause != MEMACCT_DROP_PAGE_CACHE_FILES;
}

uint64_t report_dropped_total(const uint64_t dropped[MEMACCT_DROP_NR])
{
	uint64_t n = 0;

	for (int i = 0; i < MEMACCT_DROP_NR; i++)
		if (report_drop_is_loss(i))
			n += dropped[i];
	return n;
}

uint64_t report_flows_lost_bytes(const struct metrics *lost)
{
	uint64_t classified = lost->cow_copied + lost->cow_file_copied + lost->zero_fill +
			      lost->fault_unclassified;

	return classified > lost->fault_alloc ? classified : lost->fault_alloc;
}

const char *const nv_call_names[MEMACCT_NV_NR] = {
	[MEMACCT_NV_PIN_OK] = "pinned",
	[MEMACCT_NV_PIN_FAILED] = "failed",
	[MEMACCT_NV_FREE_KNOWN] = "freed",
};

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

json_t *report_nv_calls_json(const uint64_t calls[MEMACCT_NV_NR])
{
	json_t *o = json_object();

	for (int i = 0; i < MEMACCT_NV_NR; i++)
		set_u64(o, nv_call_names[i], calls[i]);
	return o;
}

json_t *report_flows_lost_json(const struct metrics *lost)
{
	json_t *j = json_object();
	uint64_t mask = metric_flow_mask(true);

	set_u64(j, "flows_lost_bytes", report_flows_lost_bytes(lost));
	for (int id = 0; id < M_NR; id++)
		if (mask & MBIT(id))
			set_u64(j, metric_table[id].key, metric_get(lost, id));
	return j;
}

void report_metrics_json(json_t *o, const struct metrics *m, unsigned int skip)
{
	for (int id = 0; id < M_NR; id++) {
		if (metric_table[id].flags & skip)
			continue;
		if (m->unknown & MBIT(id))
			json_object_set_new(o, metric_table[id].key, json_null());
		else
			set_u64(o, metric_table[id].key, metric_get(m, id));
		if (id == M_DMA_PINNED_PEAK)
			json_object_set_new(o, "dma_pinned_estimate", json_boolean(m->dma_estimate));
		if (id == M_COW_FILE_COPIED && (m->unknown & MBIT(id))) {
			json_object_set_new(o, "cow_copied_bytes_by_mapping_kind", json_null());
		} else if (id == M_COW_FILE_COPIED) {	/* both CoW figures, by kind */
			json_t *by = json_object();

			for (int i = 1; i < MEMACCT_COW_KIND_NR; i++)
				set_u64(by, cow_kind_names[i], m->cow_by_kind[i]);
			set_u64(by, cow_kind_names[0], metrics_cow_unknown(m));
			json_object_set_new(o, "cow_copied_bytes_by_mapping_kind", by);
		}
		if (id == M_NUMA_MIGRATED && (m->unknown & MBIT(id))) {
			json_object_set_new(o, "numa_migrated_bytes_by_reason", json_null());
		} else if (id == M_NUMA_MIGRATED) {	/* its split, beside it */
			json_t *by = json_object();

			for (int i = 0; i < MEMACCT_MR_NR; i++)
				set_u64(by, migrate_reason_names[i], m->numa_migrated_by_reason[i]);
			json_object_set_new(o, "numa_migrated_bytes_by_reason", by);
		}
	}
}

bool report_host_verdict_due(const struct report *r, char *buf, size_t len)
{
	const struct hostpin *h = &r->host;

	return r->has_host && h->known && h->mem_total &&
	       h->foll_pinned * 100 >= (uint64_t)VERDICT_PIN_PCT * h->mem_total &&
	       report_host_verdict(h, buf, len);
}

json_t *report_oom_json(const struct report *r, size_t i)
{
	if (r->ooms)
		return oom_json(&r->ooms[i]);
	return json_incref(json_array_get(r->ooms_rec, i));
}

/* The report's "cgroup" object: where it is, its id and hierarchy version. */
static json_t *report_cgroup_json(const struct report *r)
{
	json_t *cg = json_object();
	struct cg_labels l;

	json_object_set_new(cg, "path", json_string_sanitized(r->cg.rel));
	json_object_set_new(cg, "fs_path", json_string_sanitized(r->cg.path));
	set_u64(cg, "id", r->cg.id);
	json_object_set_new(cg, "version", json_integer(r->cg.version));
	cgroup_path_labels(r->cg.rel, NULL, &l);
	json_object_set_new(cg, "job", l.job[0] ? json_string_sanitized(l.job) : json_null());
	return cg;
}

/*
 * A row's copied mappings (issue 42), largest first: "cow_by_mapping" and
 * what no slot holds, "cow_by_mapping_unattributed_bytes" (the process's
 * CoW bytes, anon and file, less the mappings').
 */
static void report_cowm_json(json_t *j, const struct report *r, const struct proc_row *p)
{
	json_t *a;
	uint64_t sum = 0, all = p->m.cow_copied + p->m.cow_file_copied;

	/* not read, or the row's CoW not measured (no fault hook, no flows) */
	if (!r->has_cowm || (p->m.unknown & (MBIT(M_COW_COPIED) | MBIT(M_COW_FILE_COPIED))))
		return;
	a = json_array();

	for (uint32_t i = 0; i < p->cowm_n; i++) {
		const struct cow_mapping *m = &r->cowm[p->cowm_first + i];
		json_t *o = json_object();

		json_object_set_new(o, "start", json_integer((json_int_t)m->start));
		json_object_set_new(o, "end", json_integer((json_int_t)m->end));
		json_object_set_new(o, "kind", json_string(cowm_kind_name(m)));
		json_object_set_new(o, "path", m->path ? json_string_sanitized(m->path) : json_null());
		json_object_set_new(o, "bytes", json_integer((json_int_t)m->bytes));
		json_object_set_new(o, "parent_resident_bytes", m->has_parent ?
				    json_integer((json_int_t)m->parent_rss) : json_null());
		json_object_set_new(o, "share_of_parent", m->has_parent && m->parent_rss ?
				    json_real((double)m->bytes / m->parent_rss) : json_null());
		json_array_append_new(a, o);
		sum += m->bytes;
	}
	json_object_set_new(j, "cow_by_mapping", a);
	json_object_set_new(j, "cow_by_mapping_unattributed_bytes",
			    json_integer((json_int_t)(all > sum ? all - sum : 0)));
}

/* One member of "processes": who, how it ended, its figures. */
static json_t *report_proc_json(const struct report *r, const struct proc_row *p)
{
	json_t *j = json_object();

	json_object_set_new(j, "pid", json_integer(p->pid));
	json_object_set_new(j, "ppid", json_integer(p->ppid));
	json_object_set_new(j, "comm", json_string_sanitized(p->comm));
	json_object_set_new(j, "exited", json_boolean(p->exited));
	if (p->exited) {	/* the wait status split: code, or signal */
		json_object_set_new(j, "exit_code", WIFEXITED(p->exit_code) ?
				    json_integer(WEXITSTATUS(p->exit_code)) : json_null());
		json_object_set_new(j, "exit_signal", WIFSIGNALED(p->exit_code) ?
				    json_integer(WTERMSIG(p->exit_code)) : json_null());
		json_object_set_new(j, "oom_killed", json_boolean(p->oom_killed));
	}
	report_metrics_json(j, &p->m, MF_TOTALS);
	report_cowm_json(j, r, p);
	return j;
}

/* OOM kill @i as a sentence of "verdict" and an entry of "verdict_details". */
static void report_oom_verdict_json(const struct report *r, size_t i, json_t *arr, json_t *det)
{
	json_t *k = report_oom_json(r, i), *d = json_object();
	const char *cause = json_string_value(json_object_get(k, "cause"));
	const char *text = json_string_value(json_object_get(k, "verdict"));
	json_int_t bytes = json_integer_value(json_object_get(k, "cause_bytes"));
	json_int_t limit = json_integer_value(json_object_get(k, "limit_bytes"));

	json_array_append_new(arr, json_string(text ? text : ""));
	json_object_set_new(d, "kind", json_string("oom"));
	json_object_set_new(d, "cause", json_string(cause ? cause : "anon"));
	json_object_set_new(d, "text", json_string(text ? text : ""));
	json_object_set_new(d, "pid", json_copy(json_object_get(k, "pid")));
	set_u64(d, "bytes", (uint64_t)bytes);
	/* limit_bytes: null host-wide */
	if (limit) {
		set_u64(d, "of_bytes", (uint64_t)limit);
		json_object_set_new(d, "percent",
				    json_real(100.0 * (uint64_t)bytes / (uint64_t)limit));
	}
	json_array_append_new(det, d);
	json_decref(k);
}

/* Verdict @v as a sentence of "verdict" and an entry of "verdict_details". */
static void report_verdict_json(const struct verdict *v, json_t *arr, json_t *det)
{
	json_t *d = json_object();

	json_array_append_new(arr, json_string_sanitized(v->text));
	json_object_set_new(d, "kind", json_string(v->kind));
	json_object_set_new(d, "text", json_string_sanitized(v->text));
	if (v->pid)
		json_object_set_new(d, "pid", json_integer(v->pid));
	if (v->processes)
		set_u64(d, "processes", v->processes);
	set_u64(d, "bytes", v->bytes);
	if (v->of_bytes) {
		set_u64(d, "of_bytes", v->of_bytes);
		json_object_set_new(d, "percent", json_real(100.0 * v->bytes / v->of_bytes));
	}
	if (v->since_attach)
		json_object_set_new(d, "since_attach", json_true());
	if (v->map_kind) {
		json_t *m = json_object();

		json_object_set_new(m, "kind", json_string(v->map_kind));
		json_object_set_new(m, "name", json_string_sanitized(v->map_name));
		set_u64(m, "copied_bytes", v->map_copied);
		set_u64(m, "parent_resident_bytes", v->map_parent_rss);
		set_u64(m, "worst_case_bytes", v->worst_bytes);
		json_object_set_new(d, "mapping", m);
	}
	json_array_append_new(det, d);
}

/* A final report's "verdict", "verdict_details" and "verdicts_unlisted". */
static void report_verdicts_json(json_t *o, const struct report *r)
{
	struct verdict *v;
	int all = report_verdicts_all(r, &v), n = all < 0 ? 0 :
		  all < REPORT_VERDICTS_LISTED ? all : REPORT_VERDICTS_LISTED;
	char hv[320];
	json_t *arr = json_array(), *det = json_array();

	/* each OOM kill first: what the user needs most */
	for (size_t i = 0; i < r->nooms; i++)
		report_oom_verdict_json(r, i, arr, det);
	for (int i = 0; i < n; i++)
		report_verdict_json(&v[i], arr, det);
	/* the host's pinned share: a sentence in verdict only (no
	 * process or cgroup figure to detail) */
	if (report_host_verdict_due(r, hv, sizeof(hv)))
		json_array_append_new(arr, json_string_sanitized(hv));
	json_object_set_new(o, "verdict", arr);
	json_object_set_new(o, "verdict_details", det);
	set_u64(o, "verdicts_unlisted", all > n ? all - n : 0);
	free(v);
}

/* What the kernel side could not record or resolve: drops, NVIDIA calls, lost flows. */
static void report_losses_json(json_t *o, const struct report *r)
{
	json_t *drops = json_object();

	set_u64(o, "dropped_events", r->dropped_events);
	for (int i = 0; i < MEMACCT_DROP_NR; i++)
		set_u64(drops, drop_names[i], r->dropped[i]);
	json_object_set_new(o, "dropped_events_by_cause", drops);
	json_object_set_new(o, "nvidia_pin_calls", report_nv_calls_json(r->nv_calls));
	json_object_set_new(o, "flows_lost", report_flows_lost_json(&r->flows_lost));
	set_u64(o, "vma_lockless_lookups", r->vma_lockless_lookups);
	set_u64(o, "bpf_runs_skipped", r->bpf_runs_skipped);
}

json_t *report_json(const struct report *r)
{
	json_t *o = json_object(), *t = json_object(), *procs = json_array();
	bool run_or_attach = r->command &&
			     (!strcmp(r->command, "run") || !strcmp(r->command, "attach"));

	json_object_set_new(o, "schema", json_string(REPORT_SCHEMA));
	json_object_set_new(o, "command", json_string(r->command));
	if (timestamps) {
		char ts[40];

		json_object_set_new(o, "timestamp", json_string(fmt_time_now(ts, sizeof(ts), true)));
	}
	json_object_set_new(o, "cgroup", report_cgroup_json(r));
	json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
	if (r->has_exit_status)
		json_object_set_new(o, "exit_status", json_integer(r->exit_status));
	json_object_set_new(o, "final", json_boolean(r->final));
	json_object_set_new(o, "totals_of", json_string(r->totals_of_rows ? "processes" : "cgroup"));
	if (r->replayed_from)
		json_object_set_new(o, "replayed_from", json_string_sanitized(r->replayed_from));
	report_metrics_json(t, &r->totals, 0);
	if (run_or_attach)
		json_object_set_new(t, "limit_bytes", r->has_limit ?
				    json_integer((json_int_t)r->limit_bytes) : json_null());
	json_object_set_new(o, "totals", t);
	for (size_t i = 0; i < r->nprocs; i++)
		json_array_append_new(procs, report_proc_json(r, &r->procs[i]));
	json_object_set_new(o, "processes", procs);
	if (r->phases && r->phases_json)
		r->phases_json(o, r->phases);
	if (r->nexited_folded) {	/* exited processes without a row: flows only */
		json_t *j = json_object();

		json_object_set_new(j, "count", json_integer((json_int_t)r->nexited_folded));
		report_metrics_json(j, &r->exited_folded, MF_TOTALS);
		json_object_set_new(o, "exited_folded", j);
	}
	if (run_or_attach) {
		json_t *ooms = json_array();

		for (size_t i = 0; i < r->nooms; i++)
			json_array_append_new(ooms, report_oom_json(r, i));
		json_object_set_new(o, "oom_kills", ooms);
		set_u64(o, "oom_kills_unlisted", r->ooms_unlisted);
		json_object_set_new(o, "oom_warnings", r->oom_warnings ?
				    json_incref(r->oom_warnings) : json_array());
		set_u64(o, "oom_warnings_unlisted", r->oom_warnings_unlisted);
		json_object_set_new(o, "page_cache_by_file", r->has_page_cache ?
				    page_cache_json(&r->page_cache) : json_null());
	}
	report_losses_json(o, r);
	if (r->has_host)
		json_object_set_new(o, "host", report_host_json(r));
	if (r->final)
		report_verdicts_json(o, r);
	return o;
}

static json_t *u64_or_null(bool known, uint64_t v)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

/* The budget fields of @m into @o (hostpin.h struct hostmem). */
static void hostmem_json(json_t *o, const struct hostmem *m)
{
	bool k = m->meminfo;

	json_object_set_new(o, "mem_free_bytes", u64_or_null(k, m->mem_free));
	json_object_set_new(o, "mem_available_bytes", u64_or_null(k && m->avail_known,
								 m->mem_available));
	json_object_set_new(o, "page_cache_bytes", u64_or_null(k, m->page_cache));
	json_object_set_new(o, "reclaimable_page_cache_bytes", u64_or_null(k, m->reclaimable));
	json_object_set_new(o, "dirty_bytes", u64_or_null(k, m->dirty));
	json_object_set_new(o, "writeback_bytes", u64_or_null(k, m->writeback));
	json_object_set_new(o, "file_pages_bytes", u64_or_null(k, m->file_pages));
	json_object_set_new(o, "shmem_bytes", u64_or_null(k, m->shmem));
	json_object_set_new(o, "unevictable_bytes", u64_or_null(k, m->unevictable));
	json_object_set_new(o, "mlocked_bytes", u64_or_null(k, m->mlocked));
	json_object_set_new(o, "hugetlb_bytes", u64_or_null(k && m->hugetlb_known, m->hugetlb));
	json_object_set_new(o, "hugetlb_reserved_bytes", u64_or_null(k && m->rsvd_known,
								    m->hugetlb_reserved));
	json_object_set_new(o, "pcp_free_bytes", u64_or_null(k && m->pcp_known, m->pcp_free));
	json_object_set_new(o, "unowned_kernel_bytes", u64_or_null(k && m->unowned_known,
								  m->unowned));
}

json_t *report_host_json(const struct report *r)
{
	char uv[512];
	const struct hostpin *h = &r->host;
	json_t *o = json_object(), *nodes = json_array();
	uint64_t un = h->foll_pinned > r->dma_attributed ? h->foll_pinned - r->dma_attributed : 0;

	json_object_set_new(o, "foll_pin_counters", json_boolean(h->known));
	json_object_set_new(o, "foll_pinned_bytes", u64_or_null(h->known, h->foll_pinned));
	json_object_set_new(o, "dma_pinned_attributed_bytes",
			    u64_or_null(r->dma_attribution, r->dma_attributed));
	json_object_set_new(o, "dma_pinned_unattributed_bytes",
			    u64_or_null(h->known && r->dma_attribution, un));
	json_object_set_new(o, "foll_pin_acquired_bytes",
			    u64_or_null(r->foll_since, r->foll_acquired_since));
	json_object_set_new(o, "foll_pin_released_bytes",
			    u64_or_null(r->foll_since, r->foll_released_since));
	json_object_set_new(o, "foll_pinned_peak_bytes",
			    u64_or_null(r->foll_since, r->foll_pinned_peak));
	json_object_set_new(o, "dma_pin_windows", json_boolean(r->dma_windows));
	set_u64(o, "mem_total_bytes", h->mem_total);
	json_object_set_new(o, "foll_pinned_pct_of_mem",
			    h->known && h->mem_total ?
			    json_real(100.0 * h->foll_pinned / h->mem_total) : json_null());
	json_object_set_new(o, "refreshed", json_boolean(h->refreshed));
	hostmem_json(o, &h->mem);
	json_object_set_new(o, "unified_memory", json_boolean(h->uma));
	json_object_set_new(o, "unified_memory_source",
			    h->uma_source[0] ? json_string_sanitized(h->uma_source) : json_null());
	json_object_set_new(o, "unified_memory_verdict",
			    hostmem_uma_verdict(h, uv, sizeof(uv)) ?
			    json_string_sanitized(uv) : json_null());
	for (int i = 0; i < h->nnodes; i++) {
		json_t *n = json_object();

		json_object_set_new(n, "node", json_integer(h->nodes[i].node));
		json_object_set_new(n, "foll_pinned_bytes",
				    u64_or_null(h->nodes[i].known, h->nodes[i].foll_pinned));
		set_u64(n, "mem_total_bytes", h->nodes[i].mem_total);
		json_object_set_new(n, "cpuless", h->nodes[i].cpu_known ?
				    json_boolean(h->nodes[i].cpuless) : json_null());
		hostmem_json(n, &h->nodes[i].mem);
		json_array_append_new(nodes, n);
	}
	json_object_set_new(o, "nodes", nodes);
	return o;
}

void report_host_line(const struct report *r, char *buf, size_t len)
{
	const struct hostpin *h = &r->host;
	char b[3][16];

	if (!h->known) {
		snprintf(buf, len, "host: DMA pins: unknown on this kernel (no nr_foll_pin_* in "
			 "/proc/vmstat); RAM %s", fmt_bytes(b[0], 16, h->mem_total));
		return;
	}
	snprintf(buf, len, "host: DMA pins (FOLL_PIN) %s = %.1f%% of RAM %s; not attributed "
		 "to the processes here: %s", fmt_bytes(b[0], 16, h->foll_pinned),
		 h->mem_total ? 100.0 * h->foll_pinned / h->mem_total : 0.0,
		 fmt_bytes(b[1], 16, h->mem_total),
		 r->dma_attribution ?
		 fmt_bytes(b[2], 16, h->foll_pinned > r->dma_attributed ?
			   h->foll_pinned - r->dma_attributed : 0) : "unknown");
}

bool report_host_verdict(const struct hostpin *h, char *buf, size_t len)
{
	double pct;
	char b[2][16];

	if (!h->known || !h->mem_total)
		return false;
	pct = 100.0 * h->foll_pinned / h->mem_total;
	snprintf(buf, len, "host pins %s for DMA (FOLL_PIN), %.1f%% of its %s RAM: %s the "
		 "%d-%d%% rule of thumb%s", fmt_bytes(b[0], 16, h->foll_pinned), pct,
		 fmt_bytes(b[1], 16, h->mem_total),
		 pct > HOSTPIN_RULE_HIGH_PCT ? "over" : pct > HOSTPIN_RULE_LOW_PCT ? "within" :
		 "under", HOSTPIN_RULE_LOW_PCT, HOSTPIN_RULE_HIGH_PCT,
		 pct > HOSTPIN_RULE_LOW_PCT ?
		 " (pinned pages are never reclaimed, not even by swap)" : "");
	return true;
}

void report_comm(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	dst[i] = '\0';
}

static int pct_of(uint64_t part, uint64_t whole)
{
	return whole ? (int)(part * 100.0 / whole + 0.5) : 0;
}

/* Python (CPython, PyTorch DataLoader workers) by comm. */
static bool is_python(const char *comm)
{
	return !strncmp(comm, "python", 6) || !strncmp(comm, "pt_", 3);
}

/* The copied mappings of @par's children, grouped: the heap, the stack, the
 * anonymous mappings together (malloc's and Python's arenas are many), each
 * file. */
struct cowm_group {
	const char *kind;
	const char *path;		/* files only */
	uint64_t copied, parent_rss;
	int nmaps;
};

/* The group holding most of @par's children's copies into @v (map_*), with
 * the worst case: every child copying all of its resident bytes. */
static void cow_verdict_mapping(const struct report *r, const struct proc_row *par, int kids,
				struct verdict *v)
{
	struct cowm_group g[64];
	uint64_t seen[512];
	int ng = 0, nseen = 0, best = -1;

	for (size_t j = 0; j < r->nprocs; j++) {
		const struct proc_row *c = &r->procs[j];

		if (c->ppid != par->pid || !c->m.cow_copied)
			continue;
		for (uint32_t i = 0; i < c->cowm_n; i++) {
			const struct cow_mapping *m = &r->cowm[c->cowm_first + i];
			const char *kind = cowm_kind_name(m);
			bool file = m->kind == MEMACCT_COW_KIND_FILE, dup = false;
			int k;

			for (k = 0; k < ng; k++)
				if (!strcmp(g[k].kind, kind) &&
				    (!file || (g[k].path && m->path && !strcmp(g[k].path, m->path))))
					break;
			if (k == ng) {
				if (ng == (int)(sizeof(g) / sizeof(g[0])))
					continue;
				g[ng++] = (struct cowm_group){ .kind = kind, .path = file ? m->path : NULL };
			}
			g[k].copied += m->bytes;
			for (int s = 0; s < nseen && !dup; s++)
				dup = seen[s] == m->start;
			if (!dup && nseen < (int)(sizeof(seen) / sizeof(seen[0]))) {
				seen[nseen++] = m->start;
				g[k].parent_rss += m->has_parent ? m->parent_rss : 0;
				g[k].nmaps++;
			}
		}
	}
	for (int k = 0; k < ng; k++)
		if (best < 0 || g[k].copied > g[best].copied)
			best = k;
	if (best < 0 || !g[best].parent_rss)
		return;
	v->map_kind = g[best].kind;
	if (g[best].path)
		snprintf(v->map_name, sizeof(v->map_name), "%s", g[best].path);
	else if (!strcmp(g[best].kind, "anon"))
		snprintf(v->map_name, sizeof(v->map_name), "anonymous mappings (%d)", g[best].nmaps);
	else
		snprintf(v->map_name, sizeof(v->map_name), "[%s]", g[best].kind);
	v->map_copied = g[best].copied;
	v->map_parent_rss = g[best].parent_rss;
	v->worst_bytes = g[best].parent_rss * (uint64_t)kids;
}

/* CoW of the children of each parent in the report, against the parent's peak RSS. */
static int cow_verdicts(const struct report *r, struct verdict *v, int max)
{
	bool attach = r->command && !strcmp(r->command, "attach");
	int n = 0;

	for (size_t i = 0; i < r->nprocs && n < max; i++) {
		const struct proc_row *par = &r->procs[i];
		uint64_t cow = 0, peak = par->m.rss_peak, avg;
		int lo = 0, hi = 0, kids = 0;
		bool py = is_python(par->comm);
		char b[3][16], comm[32], range[64], each[32], mapping[320];

		for (size_t j = 0; j < r->nprocs; j++) {
			const struct proc_row *c = &r->procs[j];

			if (j == i || c->ppid != par->pid || !c->m.cow_copied)
				continue;
			cow += c->m.cow_copied;
			lo = !kids || c->pid < lo ? c->pid : lo;
			hi = !kids || c->pid > hi ? c->pid : hi;
			py |= is_python(c->comm);
			kids++;
		}
		if (!kids || cow < VERDICT_MIN_BYTES)
			continue;
		avg = cow / kids;
		if (peak && pct_of(avg, peak) < VERDICT_COW_PCT)
			continue;
		report_comm(comm, sizeof(comm), par->comm);
		v[n] = (struct verdict){ .kind = "cow_blowup", .pid = par->pid,
					 .processes = (uint64_t)kids, .bytes = cow,
					 .of_bytes = peak, .since_attach = attach };
		cow_verdict_mapping(r, par, kids, &v[n]);
		mapping[0] = '\0';
		if (v[n].map_kind) {
			char m[2][16];

			/* issue 42: the copied mapping and how far it can go */
			snprintf(mapping, sizeof(mapping),
				 "; most of it from the parent's %s, %s resident, copied %d%% by %s "
				 "so far; at most %s if every %s copies all of it",
				 v[n].map_name, fmt_bytes(m[0], 16, v[n].map_parent_rss),
				 pct_of(v[n].map_copied / kids, v[n].map_parent_rss),
				 kids > 1 ? "each on average" : "it",
				 fmt_bytes(m[1], 16, v[n].worst_bytes),
				 kids > 1 ? (py ? "worker" : "child") : "one");
		}
		if (kids > 1)
			snprintf(range, sizeof(range), "%d %s (PIDs %d..%d)", kids,
				 py ? "workers" : "forked children", lo, hi);
		else
			snprintf(range, sizeof(range), "%s PID %d", py ? "worker" : "forked child",
				 lo);
		if (kids > 1)
			snprintf(each, sizeof(each), "%s each, ", fmt_bytes(b[1], 16, avg));
		else
			each[0] = '\0';
		snprintf(v[n].text, sizeof(v[n].text),
			 "%s of %s %d copied %s of %s parent's memory by copy-on-write%s (%s%d%% "
			 "of the parent's %s peak RSS)%s: %s",
			 range, comm, par->pid, fmt_bytes(b[0], 16, cow),
			 kids > 1 ? "their" : "its", attach ? " since attach" : "", each,
			 pct_of(avg, peak), fmt_bytes(b[2], 16, peak), mapping,
			 /* measured on tests/workloads/dataloader_demo.py (issue 41):
			  * 371 MiB a worker as a list, the same with --freeze, 3.3 MiB
			  * with --storage numpy */
			 py ? "cause: reference-count writes to Python objects shared at fork "
			      "(gc.freeze() does not stop them: 371 MiB a worker either way in "
			      "the README's demo); fix: keep samples in numpy/Arrow buffers, not "
			      "Python objects (3.3 MiB a worker there)" :
			      "cause: writes to memory inherited at fork; fix: allocate what each "
			      "child writes after the fork, fork before filling large buffers, or "
			      "share read-mostly data with MAP_SHARED");
		n++;
	}
	return n;
}

/* The largest process by @field (offset into struct metrics), NULL if none has any. */
static const struct proc_row *largest(const struct report *r, size_t off)
{
	const struct proc_row *best = NULL;

	for (size_t i = 0; i < r->nprocs; i++) {
		uint64_t x = *(const uint64_t *)((const char *)&r->procs[i].m + off);

		if (x && (!best || x > *(const uint64_t *)((const char *)&best->m + off)))
			best = &r->procs[i];
	}
	return best;
}

int report_verdicts(const struct report *r, struct verdict *v, int max)
{
	const struct metrics *t = &r->totals;
	const struct proc_row *p;
	char b[4][16], comm[32], who[200], label[72], (*numa)[320];
	uint64_t pin, mem;
	int n = cow_verdicts(r, v, max), nn;

	/* page cache the kernel can drop: clean file pages, memory.stat peaks */
	if (n < max && t->reclaimable_peak >= VERDICT_MIN_BYTES && t->rss_peak &&
	    pct_of(t->reclaimable_peak, t->rss_peak) >= VERDICT_FILE_PCT) {
		who[0] = '\0';
		p = largest(r, offsetof(struct metrics, file));
		if (p) {
			report_comm(comm, sizeof(comm), p->comm);
			snprintf(who, sizeof(who), "; most file-backed RSS: PID %d (%s), %s",
				 p->pid, comm, fmt_bytes(b[2], 16, p->m.file));
		}
		/* the file whose cache it most was (page_cache.h, largest
		 * peak first): named */
		if (r->has_page_cache && r->page_cache.n &&
		    r->page_cache.f[0].peak >= VERDICT_MIN_BYTES) {
			size_t l = strlen(who);

			snprintf(who + l, sizeof(who) - l, "; largest file: %s, peak %s",
				 page_cache_file_label(&r->page_cache.f[0], label, sizeof(label)),
				 fmt_bytes(b[3], 16, r->page_cache.f[0].peak));
		}
		v[n] = (struct verdict){ .kind = "file_reclaimable", .bytes = t->reclaimable_peak,
					 .of_bytes = t->rss_peak };
		snprintf(v[n].text, sizeof(v[n].text),
			 "%d%% of the cgroup's %s peak charge was reclaimable page cache (clean "
			 "pages of mmap'd and read files, peak %s%s): the kernel drops it under "
			 "pressure before anything else; size limits on the rest, the working set",
			 pct_of(t->reclaimable_peak, t->rss_peak), fmt_bytes(b[0], 16, t->rss_peak),
			 fmt_bytes(b[1], 16, t->reclaimable_peak), who);
		n++;
	}
	/* pinned memory against 10-15% of RAM */
	pin = t->pinned_peak;
	p = largest(r, offsetof(struct metrics, pinned_peak));
	if (p && p->m.pinned_peak > pin)
		pin = p->m.pinned_peak;
	mem = r->mem_total ? r->mem_total : mem_total_bytes();
	if (n < max && mem && pin >= VERDICT_MIN_BYTES && pct_of(pin, mem) >= VERDICT_PIN_PCT) {
		int pc = pct_of(pin, mem);

		who[0] = '\0';
		if (p) {
			report_comm(comm, sizeof(comm), p->comm);
			snprintf(who, sizeof(who), "; most: PID %d (%s), %s", p->pid, comm,
				 fmt_bytes(b[2], 16, p->m.pinned_peak));
		}
		v[n] = (struct verdict){ .kind = "pinned", .pid = p ? p->pid : 0, .bytes = pin,
					 .of_bytes = mem };
		snprintf(v[n].text, sizeof(v[n].text),
			 "pinned memory (mlocked + pinned_vm) peaked at %s, %d%% of RAM (%s)%s: "
			 "%s the 10-15%% of RAM that can be pinned before reclaim and compaction "
			 "run short; fix: pin only buffers in flight, cap it with audit "
			 "--pinned-cap or RLIMIT_MEMLOCK", fmt_bytes(b[0], 16, pin), pc,
			 fmt_bytes(b[1], 16, mem), who, pc > 15 ? "over" : "at the edge of");
		n++;
	}
	/* one a process at most: room for every one that fits in @v */
	numa = n < max ? calloc(max - n, sizeof(*numa)) : NULL;
	nn = numa ? report_numa_verdicts(r, numa, max - n) : 0;
	for (int i = 0, k = 0; i < nn && k < (int)r->nprocs; k++) {
		const struct proc_row *q = &r->procs[k];

		if (!q->has_numa_peak || !numa_over_threshold(&q->numa_peak, numa_threshold_pct,
							   NUMA_THRESHOLD_MIN_BYTES))
			continue;
		v[n] = (struct verdict){ .kind = "remote_numa", .pid = q->pid,
					 .bytes = q->numa_peak.remote, .of_bytes = q->numa_peak.bytes };
		snprintf(v[n].text, sizeof(v[n].text), "%s", numa[i++]);
		n++;
	}
	free(numa);
	return n;
}

int report_verdicts_all(const struct report *r, struct verdict **out)
{
	/* one a process at most of each per-process kind (cow_blowup of a
	 * parent, remote_numa), and two of the whole report */
	int max = 2 * (int)r->nprocs + 2, n;
	struct verdict *v = calloc(max, sizeof(*v));

	*out = v;
	if (!v)
		return -ENOMEM;
	n = report_verdicts(r, v, max);
	return n;
}

int report_numa_verdicts(const struct report *r, char (*out)[320], int max)
{
	char who[96], comm[32];
	int n = 0;

	for (size_t i = 0; i < r->nprocs && n < max; i++) {
		const struct proc_row *p = &r->procs[i];

		if (!p->has_numa_peak)
			continue;
		report_comm(comm, sizeof(comm), p->comm);
		snprintf(who, sizeof(who), "PID %d (%s)", p->pid, comm);
		n += numa_verdict(out[n], sizeof(out[n]), who, p->pid, &p->numa_peak,
				  numa_threshold_pct, NUMA_THRESHOLD_MIN_BYTES, true);
	}
	return n;
}


/* "1", "1,3" */
static void node_list(char *buf, size_t len, uint64_t mask)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int n = 0; n < NUMA_MAX_NODES && o + 4 < len; n++)
		if (mask >> n & 1)
			o += snprintf(buf + o, len - o, "%s%d", o ? "," : "", n);
}

bool numa_verdict(char *buf, size_t len, const char *who, pid_t pid,
		  const struct numa_brief *b, unsigned int pct, uint64_t min_bytes, bool past)
{
	char nodes[128], sz[16], total[16];
	bool many;

	if (!numa_over_threshold(b, pct, min_bytes))
		return false;
	node_list(nodes, sizeof(nodes), b->remote_nodes);
	many = b->remote_nodes & (b->remote_nodes - 1);
	snprintf(buf, len, "%d%% of %s's resident pages (%s of %s) %s on node%s %s while it "
		 "%s on node %d (%s): bind with numactl --cpunodebind=%d --membind=%d, or "
		 "move them with migratepages %d %s %d",
		 (int)((long double)b->remote * 100 / (b->bytes ? b->bytes : 1) + 0.5L), who,
		 fmt_bytes(sz, sizeof(sz), b->remote), fmt_bytes(total, sizeof(total), b->bytes),
		 past ? "were" : "are", many ? "s" : "", nodes, past ? "ran" : "runs", b->home,
		 numa_home_source_name(b->source), b->home, b->home, (int)pid, nodes, b->home);
	return true;
}

bool hostmem_uma_verdict(const struct hostpin *h, char *buf, size_t len)
{
	char b[2][16];

	if (!h->uma || !h->mem.meminfo)
		return false;
	snprintf(buf, len, "unified memory: a CUDA allocation can get %s now (MemFree) and "
		 "%s after reclaim (MemAvailable); cgroup limits do not bound GPU "
		 "allocations here; instead of drop_caches, free a job's page cache with "
		 "memacct reclaim --cgroup CG --file-only",
		 fmt_bytes(b[0], 16, h->mem.mem_free),
		 h->mem.avail_known ? fmt_bytes(b[1], 16, h->mem.mem_available) : "unknown");
	return true;
}
