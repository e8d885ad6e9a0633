/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom.h - OOM kill post-mortems: what the memory of the cgroup that hit its
 * limit (or of the host) was made of at the kill. The BPF side records the
 * victim at oom:mark_victim (include/memacct.h struct memacct_oom_event);
 * userspace adds, as soon as it reads the record, the limited memcg's
 * stocks, its processes from the last sample before the kill, what grew in
 * the seconds before, and a verdict naming the largest cause
 * (docs/metrics.md "OOM kills"). run, attach, the daemon and `memacct oom`
 * fill and print the same struct oom_kill. Sizes in bytes.
 */
#ifndef MEMACCT_OOM_H
#define MEMACCT_OOM_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "memacct.h"
#include "cgroup.h"
#include "hostpin.h"
#include "metric_table.h"

#define OOM_HIST_SAMPLES	8	/* samples of the processes kept */
#define OOM_SAMPLE_NS		1000000000ULL	/* run/attach: one a second */
#define OOM_GREW_WINDOW_NS	5000000000ULL	/* "grew in the last N s": <= 5 s */
#define OOM_GREW_MIN_BYTES	(1ULL << 20)	/* growth named from 1 MiB */
#define OOM_PROCS_MAX		32	/* processes listed, the largest RSS */
#define OOM_GREW_MAX		8
#define OOM_CAUSE_PCT		25	/* a cause is named at >= 25% of the limit */
#define OOM_NEAR_PCT		50	/* oom_near(): usage >= 50% of a limit */
#define OOM_NEAR_HOST_PCT	25	/* oom_near(): MemAvailable < 25% of MemTotal */
#define OOM_PATH		PATH_MAX	/* cgroup paths (struct memcg.rel) */

/* One process of a sample (or the victim at the kill): bytes, and flows. */
struct oom_proc {
	int pid;
	uint64_t start_ns;		/* memacct_proc_key.start_boottime_ns; 0 unknown */
	uint64_t memcg_id;
	char comm[MEMACCT_COMM_LEN + 1];
	struct metrics m;		/* rss, anon, file, shmem, mlocked,
					 * pinned_vm, dma_pinned, pinned, and
					 * the BPF flows (cow_copied, ...) */
};

/* The processes at one moment (CLOCK_BOOTTIME, as the BPF record's ts). */
struct oom_sample {
	uint64_t boot_ns;
	struct oom_proc *p;		/* owned */
	size_t n;
	size_t unsampled;		/* live processes left out: the sample was full */
};

/* The last OOM_HIST_SAMPLES samples, a ring; zeroed is empty. */
struct oom_hist {
	struct oom_sample s[OOM_HIST_SAMPLES];
	unsigned int next;
	/* samples older than this before the newest are freed (the window
	 * of "grew" needs no older one); 0: kept until the ring reuses them */
	uint64_t keep_ns;
};

/* What grew in the seconds before the kill, in one process. */
struct oom_grew {
	int pid;
	char comm[MEMACCT_COMM_LEN + 1];
	const char *key;		/* a report key: "anon_bytes", ... */
	int64_t bytes;
	double seconds;
};

struct oom_kill {
	uint64_t seq;			/* the BPF side's kill number since load */
	uint64_t boot_ns;		/* CLOCK_BOOTTIME of the kill */
	double time;			/* Unix time of the kill, s */
	int pid, tid, ppid, oom_score_adj;
	unsigned int flags;		/* MEMACCT_OOM_* */
	char comm[MEMACCT_COMM_LEN + 1];
	uint64_t memcg_id;
	char cgroup[OOM_PATH];		/* the victim's memcg ("" unknown) */
	bool has_limit;			/* a memcg at its limit: a memcg OOM */
	uint64_t limit_memcg_id;
	char limit_cgroup[OOM_PATH];
	uint64_t limit_bytes, usage_bytes;	/* page_counter at the kill */
	struct oom_proc victim;		/* at the kill (BPF: the mm intact) */
	uint64_t swap_bytes, total_vm_bytes;
	/* the limited memcg's memory.stat (or the host's meminfo), read as
	 * soon as the record was: its anon and usage no longer hold the
	 * victim's, its page cache and shmem do */
	bool has_stocks;
	struct memcg_stat st;		/* memcg OOM */
	bool has_high;			/* v2 memory.high below "max" */
	uint64_t high_bytes;
	struct hostmem host;		/* host-wide OOM */
	uint64_t mem_total;
	double stocks_after_s;		/* read this long after the kill */
	/* the processes of the limited memcg (host: all) in the sample made
	 * when the record was read (else the last before the kill), the
	 * victim as at the kill */
	struct oom_proc procs[OOM_PROCS_MAX];
	size_t nprocs, nprocs_all;
	size_t nprocs_unsampled;	/* the sample's processes left out (any
					 * memcg): it was full */
	/* metric ids no program measured (metric_fault_mask(): no fault
	 * hook on this kernel side): null in the JSON, "-" in words */
	uint64_t unmeasured;
	double sample_age_s;		/* how long before the kill it was taken
					 * (< 0: after it); NAN: no sample */
	struct oom_grew grew[OOM_GREW_MAX];
	size_t ngrew;
	/* run/attach: the last OOM forecast warning for its limited memcg
	 * before the kill (oom_forecast.h): how long before, what it said */
	bool forecast;
	double forecast_before_s, forecast_eta_s;
	char forecast_class[8];
	/* the verdict: docs/metrics.md "OOM kills" */
	const char *cause;		/* "pinned", "cow", "shmem", "page_cache", "anon" */
	uint64_t cause_bytes;
	uint64_t pinned_bytes, cow_bytes, anon_bytes;	/* the memcg's, summed */
	char verdict[800];
};

/*
 * oom_hist_push() - add a sample of @n processes at @boot_ns (CLOCK_BOOTTIME
 * ns) to @h, which takes @p (malloc'd) and frees the oldest sample;
 * @unsampled live processes were left out of it (a sample of a bounded
 * size), 0 when it holds them all. Samples more than @h->keep_ns older
 * than @boot_ns are freed (none when it is 0). @p is sorted by pid.
 */
void oom_hist_push(struct oom_hist *h, uint64_t boot_ns, struct oom_proc *p, size_t n,
		   size_t unsampled);
void oom_hist_free(struct oom_hist *h);
/* oom_sample_before() - @h's newest sample taken at or before @t (CLOCK_BOOTTIME ns), or NULL */
const struct oom_sample *oom_sample_before(const struct oom_hist *h, uint64_t t);
/*
 * oom_top_grower() - the process of @h's newest sample whose figure @id
 * grew most since @h's oldest sample (all of it for a process the oldest
 * lacks, or when there is one sample); its figure now in *@bytes. NULL
 * when none grew or there is no sample.
 */
const struct oom_proc *oom_top_grower(const struct oom_hist *h, enum metric_id id,
				      uint64_t *bytes);

/*
 * oom_near() - whether an OOM kill may come soon to the processes of @cg,
 * so that run and attach take their samples of them (OOM_SAMPLE_NS; a
 * sample reads /proc/PID/status of up to 1,024 processes): some memory
 * cgroup from @cg up to the root uses at least OOM_NEAR_PCT of its limit
 * (v2 memory.current of memory.max, v1 memory.usage_in_bytes of
 * memory.limit_in_bytes), or the host's MemAvailable is below
 * OOM_NEAR_HOST_PCT of MemTotal (/proc/meminfo). Two small files a level
 * and /proc/meminfo. A file that cannot be read counts as near (true).
 */
bool oom_near(const struct memcg *cg);

/* oom_host_near() - the host part of oom_near(): MemAvailable below
 * OOM_NEAR_HOST_PCT of MemTotal (/proc/meminfo); unreadable: true. */
bool oom_host_near(void);

/* oom_usage_near() - @usage (bytes) at least OOM_NEAR_PCT of limit @max (bytes). */
bool oom_usage_near(uint64_t usage, uint64_t max);

/* boot_now_ns() - CLOCK_BOOTTIME, ns: the clock of bpf_ktime_get_boot_ns() */
uint64_t boot_now_ns(void);

/*
 * oom_from_event() - @k from the BPF record @ev (pages → bytes with
 * @page_size): victim, its stocks and flows at the kill, the limit and the
 * usage of the memcg that hit it. @unmeasured: the figures the kernel side
 * did not measure (metric_fault_mask() of its fault hook), k->unmeasured.
 * Paths, stocks and verdict: oom_explain().
 */
void oom_from_event(struct oom_kill *k, const struct memacct_oom_event *ev, long page_size,
		    uint64_t unmeasured);

/*
 * oom_explain() - what userspace adds to @k, at once after the record was
 * read: cgroup paths (a walk of the hierarchy), the limited memcg's
 * memory.stat or, host-wide, /proc/meminfo, the processes of the last
 * sample of @h (NULL: none) before the kill that were in the limited
 * memcg's subtree, what grew in the @window_ns before it (run/attach:
 * OOM_GREW_WINDOW_NS; the daemon: its last collections), and the verdict.
 * A pid-only record (kernels before 6.7) takes the victim's name and
 * figures from the sample.
 */
void oom_explain(struct oom_kill *k, const struct oom_hist *h, uint64_t window_ns);

/*
 * oom_explain_late() - what can still be said of a kill long after it
 * (memacct oom, a record of the pinned history the daemon never read): the
 * cgroup paths and a verdict from the victim's own figures at the kill,
 * no stocks, no other processes.
 */
void oom_explain_late(struct oom_kill *k);

/* oom_json() - @k as the JSON object of "oom_kills" (new reference). */
json_t *oom_json(const struct oom_kill *k);

/* oom_key_word() - a metric key of a post-mortem for a sentence:
 * "anon_bytes" -> "anon"; other keys as they are. */
const char *oom_key_word(const char *key);

#endif
