/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * metric_table.h - what each figure of struct metrics (report.h) is: its
 * JSON key (memacct.report/v1, docs/metrics.md), its per-cgroup OpenMetrics
 * family (docs/daemon.md), unit, counter or gauge, help, kernel source and
 * where BPF counts it. JSON, OpenMetrics, the run/attach table, the daemon's
 * clamp and explain's unknown-as-null iterate metric_table[], as bpftool's
 * metrics[] drives its printers. A new flow is a field of struct
 * memacct_flows counted by BPF, its field in struct metrics, and a row here.
 */
#ifndef MEMACCT_METRIC_TABLE_H
#define MEMACCT_METRIC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "report.h"

/* Rows, in the order JSON prints them. */
enum metric_id {
	M_RSS, M_ANON, M_FILE, M_SHMEM, M_RSS_PEAK,
	M_MLOCKED, M_MLOCKED_PEAK, M_PINNED_VM, M_PINNED_VM_PEAK, M_PINNED, M_PINNED_PEAK,
	M_DMA_PINNED, M_DMA_PINNED_PEAK, M_REMOTE_NUMA, M_REMOTE_NUMA_PEAK,
	M_COW_COPIED, M_COW_FILE_COPIED, M_ZERO_FILL, M_FAULT_UNCLASSIFIED, M_FAULT_ALLOC,
	M_REMOTE_NUMA_ALLOC, M_NUMA_MIGRATED, M_NUMA_TASK_MOVES, M_NUMA_TASK_SWAPS,
	M_PAGE_FAULTS, M_MAJOR_FAULTS, M_OOM_KILLS, M_MEMCG_RECLAIMS,
	/* cgroup totals only */
	M_USAGE, M_RECLAIMABLE, M_ANON_PEAK, M_FILE_PEAK, M_SHMEM_PEAK, M_RECLAIMABLE_PEAK,
	M_RSS_SUM, M_WORKING_SET,
	M_NR
};

/* struct metric_def.flags */
#define MF_BYTES	(1U << 0)	/* bytes; else a count */
#define MF_FLOW		(1U << 1)	/* since attach: a counter, never goes down */
#define MF_TOTALS	(1U << 2)	/* a cgroup's figure: in "totals" only */
#define MF_MEMCG_STAT	(1U << 3)	/* daemon: from memory.stat (or numa_stat):
					 * no sample when it could not be read */
#define MF_REMOTE	(1U << 4)	/* daemon: no samples on a one-node host */
#define MF_SAMPLED	(1U << 5)	/* a peak memacct samples while attached
					 * (run/attach), not the kernel's */

struct metric_def {
	const char *key;	/* JSON key */
	const char *family;	/* the daemon's per-cgroup family, without
				 * _total; NULL: not exported per cgroup */
	const char *help;	/* the family's HELP */
	const char *source;	/* where the kernel keeps it (docs/metrics.md) */
	size_t off;		/* offsetof(struct metrics, ...) */
	int flow_word;		/* BPF flows: first __u64 of struct
				 * memacct_flows it sums; -1: not from BPF */
	int flow_words;		/* how many (a split by reason: all of them) */
	unsigned int flags;	/* MF_* */
};

extern const struct metric_def metric_table[M_NR];

/* a bit of struct metrics.unknown */
#define MBIT(id)	(1ULL << (id))
_Static_assert(M_NR <= 64, "struct metrics.unknown has a bit per row");

/*
 * metric_flow_mask() - MBIT()s of the flows (MF_FLOW rows) that BPF counts
 * (@bpf) or that come from the kernel's own counters (!@bpf: page faults).
 */
uint64_t metric_flow_mask(bool bpf);

/* metric_get() - @m's figure of row @id (bytes or a count, per MF_BYTES). */
static inline uint64_t metric_get(const struct metrics *m, enum metric_id id)
{
	return *(const uint64_t *)((const char *)m + metric_table[id].off);
}

static inline uint64_t *metric_ptr(struct metrics *m, enum metric_id id)
{
	return (uint64_t *)((char *)m + metric_table[id].off);
}

/* metric_is_bpf_flow() - counted by the BPF side (struct memacct_flows). */
static inline bool metric_is_bpf_flow(enum metric_id id)
{
	return metric_table[id].flow_word >= 0;
}

#endif
