/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * report.h - the one report model every command fills and every printer
 * (table, JSON schema memacct.report/v1, OpenMetrics) reads.
 * Every field is bytes unless its name says count; docs/metrics.md says which
 * kernel source each one comes from.
 */
#ifndef MEMACCT_REPORT_H
#define MEMACCT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "cgroup.h"
#include "cow_maps.h"
#include "page_cache.h"
#include "hostpin.h"
#include "memacct.h"
#include "metric_table.h"
#include "numa.h"

#define REPORT_SCHEMA "memacct.report/v1"

struct oom_kill;
struct phases;

struct proc_row {
	int pid, ppid;
	char comm[64];
	bool exited;
	int exit_code;			/* wait status, exited rows only */
	bool oom_killed;		/* the victim of an OOM kill (oom_kills):
					 * its stocks are those at the kill */
	uint64_t start_boottime_ns;
	uint64_t dma_locked;		/* bytes of its DMA pins in mlocked mappings
					 * (counted as mlocked, not as dma_pinned) */
	struct metrics m;
	bool has_numa_peak;		/* numa_peak was sampled (several nodes) */
	struct numa_brief numa_peak;	/* the sample with the most remote bytes */
	/* its copied mappings: report.cowm[cowm_first .. + cowm_n), largest
	 * first (cow_maps.h) */
	uint32_t cowm_first, cowm_n;
};

struct report {
	const char *command;		/* "run", "attach", ... */
	struct memcg cg;
	double elapsed_s;
	bool has_exit_status;
	int exit_status;
	bool final;			/* the summary at the end, not an interval */
	bool totals_of_rows;		/* totals: sums of the rows (attach --pid), not
					 * the cgroup's own figures */
	const char *replayed_from;	/* memacct report of a daemon's --json-log: the
					 * file this cgroup's report was read from */
	struct metrics totals;
	struct proc_row *procs;		/* owned; sorted by pid */
	size_t nprocs;
	/* the rows' copied mappings (proc_row.cowm_*); owned, paths too.
	 * has_cowm false: not read (the daemon's log, explain without
	 * flows): the rows' JSON has no cow_by_mapping */
	bool has_cowm;
	struct cow_mapping *cowm;
	size_t ncowm;
	/* exited processes without a row of their own (session.h
	 * SESSION_EXITED_ROWS): count, and their flows (in the totals too) */
	size_t nexited_folded;
	struct metrics exited_folded;
	/* the page cache charged to the subtree by file (page_cache.h); owned.
	 * has_page_cache false: not read (the daemon's log, explain) */
	bool has_page_cache;
	struct page_cache_files page_cache;
	uint64_t dropped_events;
	uint64_t dropped[MEMACCT_DROP_NR];
	/* NVIDIA RM pinning calls the BPF side decoded (bpf/ nv_calls[]) */
	uint64_t nv_calls[MEMACCT_NV_NR];
	/* flows that found no record at all (bpf/records.bpf.c lost_flows):
	 * not in the totals; 0 unless the fallback record was deleted */
	struct metrics flows_lost;
	uint64_t vma_lockless_lookups;	/* count: VMAs read by the lockless walk */
	uint64_t bpf_runs_skipped;	/* count: runs the kernel skipped (prog_run_misses()) */
	bool numa_multi;		/* several NUMA nodes: remote figures shown */
	uint64_t mem_total;		/* MemTotal for the verdicts; 0: read /proc/meminfo */
	/* the host's pinned memory (hostpin.h); has_host false: not read */
	bool has_host;
	struct hostpin host;
	uint64_t dma_attributed;	/* bytes of FOLL_PIN attributed (dma_pinned
					 * of every process seen, pinned_vm of
					 * this report's live processes) */
	bool dma_attribution;		/* the BPF side reads the FOLL_PIN counters */
	/* the host's FOLL_PIN pins since the session started (run, attach):
	 * nr_foll_pin_acquired/_released moved by, in bytes, and the peak of
	 * the bytes outstanding (sampled every 250 ms and at each report):
	 * pins made and gone between two reports, which no window saw where
	 * the DMA-pin windows are off (issue 39). foll_since false: not read */
	bool foll_since;
	uint64_t foll_acquired_since, foll_released_since, foll_pinned_peak;
	bool dma_windows;		/* the DMA-pin windows were on */
	/* the cgroup's own memory limit (memory.max / memory.limit_in_bytes) */
	bool has_limit;
	uint64_t limit_bytes;
	/* OOM kills in the subtree, each a post-mortem (oom.h); owned */
	struct oom_kill *ooms;
	size_t nooms;
	/* or, read back from a report's JSON (report_from_json(), ooms NULL):
	 * their oom_json() objects, an array of nooms (owned). The printers
	 * read every kill as its JSON object (report_oom_json()) */
	json_t *ooms_rec;
	uint64_t ooms_unlisted;		/* kills past SESSION_OOM_KILLS: counted only */
	/* OOM forecasts that fell below run/attach's --oom-warn: an array of
	 * oom_warning_json() objects (owned), NULL when none */
	json_t *oom_warnings;
	uint64_t oom_warnings_unlisted;	/* past SESSION_OOM_WARNINGS */
	/* run's phase marks (phases.h), borrowed: "phases" in JSON, a table
	 * per phase after the report; NULL: none. Their JSON members are
	 * written by @phases_json (out/phases_print.h phases_report_json(),
	 * set with them): the report, which phases hold, knows no phases. */
	const struct phases *phases;
	void (*phases_json)(json_t *o, const struct phases *p);
};

/* Names of enum memacct_migrate_reason and enum memacct_drop, as JSON keys
 * and OpenMetrics label values. */
extern const char *const migrate_reason_names[MEMACCT_MR_NR];
/* enum memacct_cow_kind's names; [0] "unknown": the copies of no kind (the
 * rest of cow_copied + cow_file_copied: kernels before 5.17) */
extern const char *const cow_kind_names[MEMACCT_COW_KIND_NR];
/* metrics_cow_unknown() - @m's CoW bytes (anon and file) of no kind */
uint64_t metrics_cow_unknown(const struct metrics *m);
extern const char *const drop_names[MEMACCT_DROP_NR];
/* "pinned", "failed", "freed": enum memacct_nv_call (JSON keys, metric labels) */
extern const char *const nv_call_names[MEMACCT_NV_NR];
/*
 * report_dropped_total() - events lost, by the BPF side's drop counters
 * (.bss, bpf/records.bpf.h drop()): every cause but ringbuf_full, which
 * costs an exited process its row, no flow (the kernel folded them into
 * its cgroup), and cow_map_full, copies counted whose mapping is not
 * known. Both stay in dropped_events_by_cause.
 */
uint64_t report_dropped_total(const uint64_t dropped[MEMACCT_DROP_NR]);
/* report_drop_is_loss() - whether drop cause @cause (enum MEMACCT_DROP_*)
 * loses events, so counts in report_dropped_total() and the WARNING line */
bool report_drop_is_loss(int cause);

/*
 * report_flows_lost_bytes() - bytes of the pages allocated by faults in
 * @lost: CoW, file CoW, zero fills and unclassified copies (disjoint), or
 * fault_alloc where it is counted and larger (several NUMA nodes); the
 * single figure "flows_lost_bytes".
 */
uint64_t report_flows_lost_bytes(const struct metrics *lost);

void report_free(struct report *r);

/*
 * report_from_json() - @r read back from @o, a memacct.report/v1 object
 * (report_json(): a recording's snapshot, a line of the daemon's
 * --json-log): every field the printers read, so that report_json(@r)
 * gives @o again. @r borrows strings of @o (keep @o until report_free()).
 * 0, -EINVAL (not a report object), or -ENOMEM. The phases are read apart
 * (phases_from_json()); mem_total and the NUMA samples are not in the
 * object (a recording's header has them).
 */
int report_from_json(const json_t *o, struct report *r);
/*
 * page_cache_from_json() - a report's "page_cache_by_file" (page_cache_json())
 * read back into *@pc (page_cache_free()), so that memacct report FILE
 * prints it as run did. 0, -EINVAL (not such an object), -ENOMEM.
 */
int page_cache_from_json(const json_t *o, struct page_cache_files *pc);
/*
 * report_metrics_from_json() - @m (zeroed first) from the metric keys of
 * @o (report_metrics_json()), but rows with a flag in @skip; null, or a
 * key missing, is unknown (@m->unknown).
 */
void report_metrics_from_json(struct metrics *m, const json_t *o, unsigned int skip);

/* flows_add() - @to += @f, every flow (struct memacct_flows is an array of
 * __u64, pages and counts): the daemon's sums and run/attach's subtree. */
void flows_add(struct memacct_flows *to, const struct memacct_flows *f);

/*
 * metrics_sum_rows() - @t = the sum of the @n @rows by each figure's rule
 * (metric_table.h TR_*): stocks over the live rows, flows and peaks over
 * every row, nothing of the cgroup-only figures; rss_sum the live rows' RSS.
 * A sum of peaks bounds the peak of the sum from above.
 */
void metrics_sum_rows(struct metrics *t, const struct proc_row *rows, size_t n);
/*
 * metrics_add() - @m added to the sum @t by the same rules, as a live row,
 * or an exited one (@exited: its stocks left out); metrics_add_row() - a
 * row's (rows inside a caller's structs: audit; top's rows per cgroup).
 */
void metrics_add(struct metrics *t, const struct metrics *m, bool exited);
void metrics_add_row(struct metrics *t, const struct proc_row *row);
/* metrics_add_flows() - add @m's BPF flows (counts since attach) to @t. */
void metrics_add_flows(struct metrics *t, const struct metrics *m);
/*
 * metrics_clamp_flows() - every flow of @m (MF_FLOW: counters) at least
 * @prev's, so that a published counter never goes down (a read that
 * overlapped a move, a memory.stat counter of a recreated cgroup).
 */
void metrics_clamp_flows(struct metrics *m, const struct metrics *prev);
/*
 * metrics_hold_bpf_flows() - every BPF flow of @m (metric_is_bpf_flow())
 * set to @prev's: a read of the flows that a move between records
 * overlapped, which could count the move twice, is not published.
 */
void metrics_hold_bpf_flows(struct metrics *m, const struct metrics *prev);

/* report_comm() - @src (a comm) into @dst for a table or a sentence: control
 * bytes shown as '?'. */
void report_comm(char *dst, size_t len, const char *src);

/* One finding of a final run/attach report (JSON verdict_details). */
struct verdict {
	const char *kind;		/* "cow_blowup", "file_reclaimable", "pinned", "remote_numa" */
	char text[800];			/* the sentence, with its figures */
	int pid;			/* the process it is about, 0: none */
	uint64_t processes;		/* cow_blowup: processes that copied */
	uint64_t bytes, of_bytes;	/* the figure and what it is compared with (0: none) */
	bool since_attach;		/* attach: flows count since attach only */
	/* cow_blowup: the parent's mapping (or the anonymous ones together)
	 * that holds most of the copies (cow_maps.h); map_kind NULL: none */
	const char *map_kind;		/* cowm_kind_name() */
	char map_name[160];		/* [heap], [stack], a path, "anonymous mappings (N)" */
	uint64_t map_copied;		/* bytes copied of it by the processes */
	uint64_t map_parent_rss;	/* the parent's resident bytes of it */
	uint64_t worst_bytes;		/* map_parent_rss × processes: every one copies all */
};

/* Verdict thresholds: a finding is named at or above them. */
#define VERDICT_MIN_BYTES	(16ULL << 20)
#define VERDICT_COW_PCT		10	/* CoW per child, % of the parent's peak RSS */
#define VERDICT_FILE_PCT	10	/* reclaimable page cache, % of the peak charge */
#define VERDICT_PIN_PCT		10	/* pinned, % of MemTotal (10-15% rule) */

/*
 * report_verdicts() - the diagnosis of a final run/attach report into @v (at
 * most @max): CoW blow-up of forked processes (flows from BPF: cow_copied of
 * each child of a parent in the report, against the parent's peak RSS);
 * the reclaimable share of page cache (memory.stat peaks); pinned memory
 * (BPF peaks of mm->locked_vm + pinned_vm) against r->mem_total or
 * /proc/meminfo MemTotal; remote NUMA (report_numa_verdicts()). Returns the
 * number written; nothing is estimated.
 */
int report_verdicts(const struct report *r, struct verdict *v, int max);

/*
 * report_verdicts_all() - every verdict of @r (report_verdicts() into an
 * array that holds them all), *@out malloc'd (the caller frees it, also on
 * error). Returns their number, or -ENOMEM. A report lists the first
 * REPORT_VERDICTS_LISTED and counts the rest (verdicts_unlisted).
 */
#define REPORT_VERDICTS_LISTED	16
int report_verdicts_all(const struct report *r, struct verdict **out);

/*
 * report_host_json() - the "host" object of @r (new reference): FOLL_PIN
 * bytes host-wide and per node, the part not attributed, MemTotal and the
 * percentage; null figures where the kernel lacks the counters.
 */
json_t *report_host_json(const struct report *r);

/*
 * report_host_line() - one line for the tables: "host: DMA pins ..." or
 * "host: DMA pins: unknown on this kernel ...", into @buf of @len bytes.
 */
void report_host_line(const struct report *r, char *buf, size_t len);

/*
 * report_host_verdict_due() - the host's pinned-share verdict of a final
 * run/attach report, into @buf: only at or over VERDICT_PIN_PCT of
 * MemTotal, as every other verdict there is only said over its threshold
 * (explain states it always).
 */
bool report_host_verdict_due(const struct report *r, char *buf, size_t len);

/*
 * report_host_verdict() - the verdict on the host's pinned share against the
 * 10-15% of RAM rule, into @buf; false when the counters are unknown.
 */
bool report_host_verdict(const struct hostpin *h, char *buf, size_t len);

/*
 * report_numa_verdicts() - for a final run/attach report, one sentence per
 * process whose sampled remote-NUMA peak was over numa_threshold_pct and
 * NUMA_THRESHOLD_MIN_BYTES, into @out (at most @max lines of @len bytes).
 * Returns the number written.
 */
int report_numa_verdicts(const struct report *r, char (*out)[320], int max);

/*
 * report_nv_calls_json() - the "nvidia_pin_calls" object (new reference):
 * NVIDIA RM calls that pinned user memory, that failed, and frees of a
 * range memacct knew, counts since the kernel side was loaded.
 */
json_t *report_nv_calls_json(const uint64_t calls[MEMACCT_NV_NR]);

/* report_flows_lost_json() - @lost's BPF flows (metric keys, bytes and
 * counts) as a new JSON object. */
json_t *report_flows_lost_json(const struct metrics *lost);

/*
 * report_metrics_json() - the v1 metric keys of @m (metric_table.h) added to
 * @obj, but those of rows with a flag in @skip (MF_TOTALS: a process's).
 */
void report_metrics_json(json_t *obj, const struct metrics *m, unsigned int skip);

/*
 * report_oom_json() - OOM kill @i of @r as its "oom_kills" object (new
 * reference): oom_json() of a live kill, or the object read back.
 */
json_t *report_oom_json(const struct report *r, size_t i);

/* report_json() - the whole report as a memacct.report/v1 object (new ref). */
json_t *report_json(const struct report *r);

/*
 * hostmem_uma_verdict() - on a unified-memory host, what a CUDA
 * allocation can get now (MemFree: cudaMemGetInfo's free) and after
 * reclaim (MemAvailable), that cgroup limits do not bound it, and the
 * targeted alternative to drop_caches. False (nothing written) elsewhere.
 */
bool hostmem_uma_verdict(const struct hostpin *h, char *buf, size_t len);

/*
 * numa_verdict() - "62% of PID 123 (python)'s resident pages (1.20 GiB) are
 * on node 1 while it runs on node 0: bind with numactl ..." into @buf
 * (@past: "were" / "ran", for a peak sampled during run/attach) when @b is
 * over the threshold (numa_over_threshold(), numa.h). Returns true when a
 * sentence was written.
 */
bool numa_verdict(char *buf, size_t len, const char *who, pid_t pid,
		  const struct numa_brief *b, unsigned int pct, uint64_t min_bytes, bool past);

#endif
