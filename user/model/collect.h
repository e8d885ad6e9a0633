/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * collect.h - one collection of `memacct daemon`: every memory cgroup of the
 * hierarchy (a readdir walk), the BPF side's flows (pinned cgroups and procs
 * maps, include/memacct.h), every process's stocks (pin_read_stocks()), memory.stat
 * and memory.numa_stat; hierarchical sums, and counters clamped so that
 * nothing published goes down. The printers (daemon.c) only read it.
 */
#ifndef MEMACCT_COLLECT_H
#define MEMACCT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"
#include "cgroup_labels.h"
#include "memacct.h"
#include "memlimits.h"
#include "numa.h"
#include "oom_forecast.h"
#include "page_cache.h"
#include "pin.h"
#include "report.h"

#define COLLECT_MAX_CGROUPS	100000	/* more: left out, counted (cgroups_unwalked) */

/* A memory cgroup seen in this collection. */
struct cgi {
	uint64_t id;
	uint64_t parent_id;
	int level;
	char *rel;		/* path below the hierarchy root ("/" for the root) */
	bool wanted;		/* passes --cgroup-filter */
	struct cg_labels labels;	/* of rel, once per collection (wanted ones) */
	/* local (this cgroup only), then hierarchical after aggregate() */
	struct memacct_flows f;	/* BPF flows: pages and counts */
	uint64_t rss, mlocked, pinned_vm;
	uint64_t dma, dma_peak;	/* DMA pins (pages): the BPF cgroups map */
	struct memcg_stat st;
	bool st_ok;
	struct memcg_parts parts;	/* st's charge in parts (st_ok, usage: not the v2
					 * root; v1: its kmem in "other") */
	struct memcg_bounds bounds;	/* limits, pressure: read when st_ok */
	/* the OOM forecast of its own memory.max (oom_forecast.h): has_eta
	 * while its unreclaimable bytes grow toward it */
	bool has_eta;
	double oom_eta_s;
	enum fc_class oom_grows;
	uint64_t remote_numa;	/* bytes off the home node (memory.numa_stat) */
	struct metrics m;	/* what is published: bytes, counters clamped */
	/* its own page cache by file (page_cache.h), largest first: a slice of
	 * the collection's page_cache, npcf 0 when none */
	const struct page_cache_file *pcf;
	size_t npcf;
};

/* A limited cgroup's OOM forecast, kept from one collection to the next. */
struct fc_state {
	uint64_t id;
	struct oom_forecast fc;
};

/* Counters last published, per cgroup id: published values never go down. */
struct prev {
	uint64_t id;
	struct metrics m;
};

/* A process's record of the procs map: its flows and DMA pins. */
struct proc_flow {
	struct memacct_proc_key key;
	struct memacct_flows f;
	uint64_t dma;		/* DMA pins (pages), net of mlocked ranges */
	uint64_t dma_peak;
	bool dma_est;		/* MEMACCT_DMA_ESTIMATE, or maybe mlocked */
};

/* Processes of one cgroup (its own, not below) with one comm. */
struct comm_sum {
	uint64_t memcg_id;
	char comm[MEMACCT_COMM_LEN + 1];
	bool used;			/* a slot of comm_sums()'s table in use */
	uint64_t rss_pages, n;		/* RssAnon + RssFile + RssShmem; processes */
};

/* One collection: cgroups, processes and the BPF side's counters. */
struct collection {
	struct cgi *cg;
	size_t ncg;
	/* MBIT()s not measured by the pinned kernel side: the classifier's
	 * figures when it runs without a fault hook (metric_fault_mask()) */
	uint64_t unmeasured;
	/* runs of the pinned programs the kernel skipped (pin_run_misses()) */
	uint64_t bpf_runs_skipped;
	/* the first ntop: top by RSS, largest first; the records after them
	 * are no longer every process (sums are taken before). Not owned:
	 * pin_read_stocks()'s, valid until the next collection */
	struct memacct_task_stock *st;
	long nst;
	uint64_t pinned_vm_pages;	/* mm->pinned_vm of every process, summed */
	size_t ntop;
	struct proc_flow *pf;		/* unsorted */
	long npf;
	const struct memacct_flows **topf;	/* flows of st[i], i < ntop, or NULL */
	/* the collector's row of st[i], i < ntop (report.h, as run/attach's
	 * rows): pid, comm, stocks from the task walk and, where the kernel
	 * side has its record, flows and DMA pins (figures of no record stay
	 * 0); NULL when out of memory */
	struct proc_row *top;
	struct pin_counters counters;	/* the BPF side's, read with the flows */
	bool flows_torn;		/* a move between records overlapped the
					 * last read of the flows (read_flows()) */
	struct comm_sum *comms;		/* comm_sums() of st; NULL: out of memory */
	size_t ncomms;
	long procs_used, cgroups_used;
	long cgroups_unwalked;		/* directories the walk could not open (collect()) */
	/* page cache by (memcg, file) (page_cache.h), sorted by memcg: the
	 * cgroups' pcf point into it; n 0 without the map (older pins) */
	struct page_cache_files page_cache;
};

/* pflow_of() - the proc_flow whose flows @f are (col->topf points into col->pf). */
static inline const struct proc_flow *pflow_of(const struct memacct_flows *f)
{
	return (const struct proc_flow *)((const char *)f - offsetof(struct proc_flow, f));
}

/* flow_of() - flows of a top process (@t one of the first col->ntop), or NULL. */
static inline const struct memacct_flows *flow_of(const struct collection *col,
						  const struct memacct_task_stock *t)
{
	size_t i = t - col->st;

	return col->topf && i < col->ntop ? col->topf[i] : NULL;
}

/* What collect() reads from, and keeps from one collection to the next. */
struct collector {
	struct pinned *pin;		/* the kernel side's pinned maps (pin.h) */
	struct ring_buffer *rb;		/* exit records, drained; NULL: none */
	const char *root;		/* the memory hierarchy's mount point */
	int version;			/* cgroup version 1 or 2 */
	long page_size;			/* bytes */
	const char *const *filters;	/* --cgroup-filter, normalized; NULL: all */
	const struct job_rules *jobs;	/* --job-from (cgroup_labels.h); NULL: none */
	int nfilters;
	int top_n;			/* processes with series of their own */
	size_t max_cgroups;		/* cgroups a walk holds; 0: COLLECT_MAX_CGROUPS */
	bool numa_multi;		/* several nodes: memory.numa_stat read */
	const struct numa_topo *topo;
	/* metric_fault_mask() of the pinned kernel side's fault hook
	 * (pin->fault_hook "none"), set once the pins are open; each
	 * collection's col->unmeasured */
	uint64_t unmeasured;
	/* kept between collections (collector_free()) */
	struct prev *prev;		/* counters published, sorted by id */
	size_t nprev;
	struct fc_state **fcs;		/* forecasts of the limited cgroups, by id */
	size_t nfcs;
	uint64_t *unknown;		/* cgroups map keys missing from the last walk */
	size_t nunknown;
	long unwalked;			/* the last walk's cgroups_unwalked (said once) */
	uint64_t ringbuf_full_pruned;	/* dropped[RINGBUF_FULL] at the last
					 * cow_maps_prune() */
};

/*
 * collect() - one collection into @col (zeroed first; collection_free()
 * frees it): the cgroups below cs->root, their hierarchical flows in pages
 * (BPF maps, read again while a move overlapped the read), the processes'
 * stocks (pin_read_stocks()), memory.stat of the wanted cgroups, and for each its
 * published figures in cgi.m (bytes; counters never below the last
 * collection's). Cgroups it cannot walk (a path past PATH_MAX, more than
 * cs->max_cgroups) are left out with their subtrees and counted in
 * col->cgroups_unwalked, with a warning when that count changes (they made
 * no -E2BIG: the walk skipped them silently). 0, or -ENOENT (the root is
 * gone).
 */
int collect(struct collector *cs, struct collection *col);
void collection_free(struct collection *col);
/* collector_free() - what @cs kept between collections. */
void collector_free(struct collector *cs);
/*
 * comm_sums() - the @nst processes of @st summed per (memcg, comm) in one
 * pass through an open-addressed table: *@n sums, one per (memcg, comm),
 * malloc'd (caller frees); NULL when out of memory.
 */
struct comm_sum *comm_sums(const struct memacct_task_stock *st, long nst, size_t *n);
/* cgi_find() - the cgroup of id @id in @v (sorted by id, @n of them), or NULL. */
struct cgi *cgi_find(struct cgi *v, size_t n, uint64_t id);

#endif
