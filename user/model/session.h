/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * session.h - one accounting session over a memory cgroup subtree: the BPF
 * side attached, exit records collected, and reports built on demand from
 * BPF flows plus the kernel's own stocks (/proc/PID/status, memory.stat).
 */
#ifndef MEMACCT_SESSION_H
#define MEMACCT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup.h"
#include "cow_maps.h"
#include "page_cache.h"
#include "numa.h"
#include "oom.h"
#include "oom_forecast.h"
#include "report.h"

struct memacct_bpf;
struct ring_buffer;
struct fault_base;
struct numa_sample;

/* Exited processes listed one by one in a report, at most (the largest RSS
 * peaks); the others are folded (session.exited_folded). */
#define SESSION_EXITED_ROWS 512

struct session {
	struct memacct_bpf *skel;
	struct ring_buffer *rb;
	struct memcg cg;
	uint64_t t0_ns;
	long page_size;
	bool numa_multi;
	struct proc_row *exited;	/* exit records received so far, listed */
	size_t nexited, cap_exited;
	/* exited processes past SESSION_EXITED_ROWS, smallest RSS peak first:
	 * their flows summed, no row each (memory and output stay bounded) */
	struct metrics exited_folded;
	size_t nexited_folded;
	struct fault_base *base;	/* fault counters of processes alive at start */
	size_t nbase;
	struct memcg_stat cg_base;	/* memory.stat counters at start */
	uint64_t sampled_ns;		/* last memory.stat sample for the peaks */
	uint64_t anon_peak, file_peak, shmem_peak, reclaimable_peak;
	uint64_t usage_peak;		/* charge high-water mark seen in reports */
	/* several NUMA nodes only: numa_maps of every process, memory.numa_stat */
	struct numa_topo topo;
	struct numa_sample *numa;	/* per process (pid, start) sampled */
	size_t nnuma, cap_numa;
	uint64_t numa_sampled_ns;	/* last sample, at most one a second */
	uint64_t cg_remote_peak;
	pid_t exclude_pid;		/* > 0: left out of every report (session_report()) */
	/* processes with DMA pins in mlocked mappings, last seen alive: the
	 * overlap subtracted from their exit records too (their mappings are
	 * gone by then); sampled at most once a second */
	struct dma_overlap *dma_ov;
	size_t ndma_ov, cap_dma_ov;
	uint64_t dma_sampled_ns;
	/* the host's FOLL_PIN counters at start (bytes) and the peak of the
	 * bytes outstanding, sampled with memory.stat (report.h foll_since) */
	bool foll_known;
	uint64_t foll_acquired0, foll_released0, foll_pinned_peak;
	struct metrics last_flows;	/* flows of the last report's totals:
					 * a later one never reads lower */
	/* OOM kills in the subtree (oom.h): the processes sampled once a
	 * second, and each kill's post-mortem, made as its record is read */
	struct oom_hist oom_hist;
	uint64_t oom_sampled_ns;
	struct oom_kill *ooms;		/* the first SESSION_OOM_KILLS in full */
	size_t nooms;
	uint64_t ooms_unlisted;		/* kills past them: counted only */
	/* the OOM forecast (oom_forecast.h) of the smallest limit of the
	 * cgroup and its ancestors (none: the host), a sample a second; a warning each time it
	 * falls below oom_warn_s (0: none), again once it rose past twice
	 * that or stopped growing */
	double oom_warn_s;		/* set by the caller after session_start() */
	struct oom_forecast fc;
	uint64_t fc_sampled_ns;
	struct memcg fc_cg;		/* whose limit: memcg_smallest_limit(),
					 * looked for every FC_TARGET_NS; id 0 none */
	bool fc_host;			/* none binds: the host's MemTotal */
	uint64_t fc_cg_ns;
	bool fc_warned;			/* since it last stopped growing */
	struct oom_warning *warnings;	/* the first SESSION_OOM_WARNINGS */
	size_t nwarnings;
	uint64_t warnings_unlisted;
	/* CoW by mapping (cow_maps.h): the mappings read, a second after the
	 * first copy in each at most; the slots of exited processes that kept
	 * a row (their exit records) */
	struct cowm_catalog cowm;
	uint64_t cowm_sampled_ns;
	/* paths of the largest files of the page cache, as the job's processes
	 * held them (page_cache.h), once a second: named at the end */
	struct page_cache_paths pc_paths;
	uint64_t pc_sampled_ns;
	struct cowm_exited {
		pid_t pid, ppid;
		uint64_t start_ns;
		struct memacct_cow_maps cm;
	} *cowx;
	size_t ncowx, cap_cowx;
};

/* OOM kills a session keeps in full (a storm's further kills are counted) */
#define SESSION_OOM_KILLS 64
/* OOM forecast warnings a session keeps */
#define SESSION_OOM_WARNINGS 16

/*
 * session_start() - attach the BPF side filtered to @cg's subtree and take
 * the baseline of the processes already in it. Returns 0 or negative errno
 * (the error is printed).
 */
int session_start(struct session *s, const struct memcg *cg);

/*
 * session_oom_seen() - tell the kernel side's OOM limit walk that memcg
 * @cgid had @events OOM events of its own (memory.events.local "oom") when
 * the session began, unless it knows the memcg already (bpf/oom.bpf.c
 * memcg_oom_seen): a kill whose limit is @cgid's is then told by the count,
 * not by usage. session_start() does it for v2; run for its own new cgroup
 * (0 events) on v1. 0 or negative errno.
 */
int session_oom_seen(const struct session *s, uint64_t cgid, uint64_t events);

/*
 * session_poll() - wait up to @timeout_ms for exit records, and sample the
 * cgroup's memory.stat (at most every 250 ms) for the peaks of anon, file,
 * shmem and reclaimable page cache, and once a second for the OOM forecast
 * of its own limit (a warning in s->warnings when it falls below
 * s->oom_warn_s). With several NUMA nodes, also (at most
 * once a second) every process's numa_maps and the cgroup's
 * memory.numa_stat for the remote-NUMA stocks and their peaks. 0 or -errno.
 */
int session_poll(struct session *s, int timeout_ms);

/*
 * session_report() - fill @r (owned by the caller, report_free()) with every
 * process seen in the subtree since start, live and exited, and the
 * cgroup's totals. A process whose pid is s->exclude_pid is left out of the
 * rows and totals (run: the vfork child whose exec failed, whose row would
 * be memacct's own memory). Returns 0 or negative errno.
 */
int session_report(struct session *s, struct report *r);

/*
 * session_cgroup_exited() - the flows (bytes and counts since start) of the
 * processes that exited while in cgroup @id itself (not below): the BPF
 * cgroups map, which sched_process_exit folds each exiting process's
 * record into. @m is zeroed first. 0, or -ENOENT when none exited there.
 */
int session_cgroup_exited(const struct session *s, uint64_t id, struct metrics *m);

/* session_stop() - detach the BPF side and free everything of @s. */
void session_stop(struct session *s);
/*
 * session_stop_detached() - the same, but the kernel's slow release of the
 * classic tracepoints' perf events is left to a helper process that ends
 * with ours (bpf_loader.h loader_stop_detached()): call it last, just
 * before exiting.
 */
void session_stop_detached(struct session *s);

#endif
