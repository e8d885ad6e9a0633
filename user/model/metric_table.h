/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * metric_table.h - what each figure of struct metrics is: its
 * JSON key (memacct.report/v1, docs/metrics.md), its per-cgroup OpenMetrics
 * family (docs/daemon.md), unit, counter or gauge, help, kernel source and
 * where BPF counts it. JSON, OpenMetrics, the run/attach table, the daemon's
 * clamp and explain's unknown-as-null iterate metric_table[], as bpftool's
 * metrics[] drives its printers.
 */
#ifndef MEMACCT_METRIC_TABLE_H
#define MEMACCT_METRIC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "memacct.h"

/*
 * The one list of memacct's figures, in the order JSON prints them:
 *   X(ID, field, JSON key, per-cgroup family or NULL, MF_* flags,
 *     TR_* rule of a sum of rows, BPF(struct memacct_flows field) or NO_BPF,
 *     help, kernel source, run/attach column or NO_COL, the daemon's
 *     per-process family or NO_TOP_PROC, top's column or NO_TOP_COL)
 * The column is COL(rank, --columns name, header, least width, help), rank
 * its place among the figure columns of the process table (0, 1, ... each
 * once: the order --columns lists them in; report_print.c puts PID and COMM
 * before them, PPID before rank 9, EXITED, ELAPSED_S and TIME after).
 * TOP_PROC(help): the daemon's gauge memacct_process_<JSON key> of each of
 * its --top-processes, in the order of the rows (cmd/daemon.c).
 * TOP_COL(rank, name, sort key, width, VIEW_* views): top's column (top.c;
 * rank as COL()'s, after PID and PROCS, before COMM and CGROUP; an MF_REMOTE
 * figure's shows on hosts with several NUMA nodes only).
 * It makes enum metric_id (M_ID), the uint64_t fields of struct metrics,
 * metric_table[] (metric_table.c), the figure columns of run, attach and
 * top (report_print.c, top.c) and the daemon's per-process families: a new
 * figure is its ABI word and BPF increment (include/memacct.h, bpf/), one
 * X() here and its docs row.
 */
#define METRIC_ROWS(X) \
	X(RSS, rss, "rss_bytes", NULL, MF_BYTES, TR_LIVE, NO_BPF, \
	  "Resident bytes; a cgroup's: its charge", \
	  "/proc/PID/status VmRSS, mm->rss_stat at exit; cgroup: memory.usage_in_bytes / " \
	  "memory.current", \
	  COL(0, "RSS", "RSS", 8, "resident bytes (TOTAL: the cgroup's charge)"), \
	  TOP_PROC("RSS of the top processes by RSS"), TOP_COL(0, "RSS", 'm', 10, VIEW_PROCS)) \
	X(ANON, anon, "anon_bytes", "memacct_anon_bytes", \
	  MF_BYTES | MF_MEMCG_STAT, TR_LIVE, NO_BPF, \
	  "Anonymous memory charged to the cgroup (memory.stat)", \
	  "RssAnon, MM_ANONPAGES; cgroup: memory.stat total_rss / anon", \
	  COL(2, "ANON", "ANON", 8, "resident anonymous memory"), \
	  TOP_PROC("RssAnon of the top processes"), TOP_COL(2, "ANON", 'a', 10, VIEW_BOTH)) \
	X(FILE, file, "file_bytes", "memacct_file_bytes", \
	  MF_BYTES | MF_MEMCG_STAT, TR_LIVE, NO_BPF, \
	  "Page cache charged to the cgroup (memory.stat)", \
	  "RssFile, MM_FILEPAGES; cgroup: memory.stat total_cache / file", \
	  COL(3, "FILE", "FILE", 8, "resident file pages"), \
	  TOP_PROC("RssFile of the top processes"), TOP_COL(3, "FILE", 'f', 10, VIEW_BOTH)) \
	X(SHMEM, shmem, "shmem_bytes", "memacct_shmem_bytes", \
	  MF_BYTES | MF_MEMCG_STAT, TR_LIVE, NO_BPF, \
	  "Shared memory and tmpfs charged to the cgroup (memory.stat)", \
	  "RssShmem, MM_SHMEMPAGES; cgroup: memory.stat total_shmem / shmem", \
	  COL(9, "SHMEM", "SHMEM", 8, "resident shmem"), \
	  TOP_PROC("RssShmem of the top processes"), TOP_COL(4, "SHMEM", 's', 10, VIEW_BOTH)) \
	X(RSS_PEAK, rss_peak, "rss_peak_bytes", NULL, MF_BYTES, TR_ALL, NO_BPF, \
	  "The kernel's RSS high-water mark", \
	  "VmHWM; at exit mm->hiwater_rss (6.16+) or signal->maxrss (docs/metrics.md); " \
	  "cgroup: memory.max_usage_in_bytes / memory.peak", \
	  COL(1, "RSS_PEAK", "RSS PEAK", 8, "the kernel's RSS high-water mark"), NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(MLOCKED, mlocked, "mlocked_bytes", "memacct_mlocked_bytes", MF_BYTES, TR_LIVE, NO_BPF, \
	  "mm->locked_vm (VmLck) of the cgroup's processes", \
	  "mm->locked_vm: /proc/PID/status VmLck, the daemon's process pass", \
	  COL(10, "MLOCKED", "MLOCKED", 8, "mlocked (VmLck)"), NO_TOP_PROC, NO_TOP_COL) \
	X(MLOCKED_PEAK, mlocked_peak, "mlocked_peak_bytes", NULL, MF_BYTES, TR_ALL, NO_BPF, \
	  "Peak of mm->locked_vm", \
	  "BPF at sys_exit of mlock/munlock/mmap/munmap/mremap/brk and at exit", NO_COL, \
	  NO_TOP_PROC, NO_TOP_COL) \
	X(PINNED_VM, pinned_vm, "pinned_vm_bytes", "memacct_pinned_vm_bytes", \
	  MF_BYTES, TR_LIVE, NO_BPF, \
	  "mm->pinned_vm (VmPin) of the cgroup's processes", \
	  "mm->pinned_vm: /proc/PID/status VmPin, the daemon's process pass", \
	  COL(11, "PINNED_VM", "PINNED VM", 9, "pinned_vm (VmPin)"), NO_TOP_PROC, NO_TOP_COL) \
	X(PINNED_VM_PEAK, pinned_vm_peak, "pinned_vm_peak_bytes", NULL, MF_BYTES, TR_ALL, NO_BPF, \
	  "Peak of mm->pinned_vm", \
	  "BPF at sys_exit_io_uring_register and the mlocked_peak hooks", NO_COL, NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(PINNED, pinned, "pinned_bytes", "memacct_pinned_bytes", MF_BYTES, TR_LIVE, NO_BPF, \
	  "mlocked plus pinned_vm plus DMA pins of the cgroup's processes", \
	  "locked_vm + pinned_vm + dma_pinned", \
	  COL(8, "PINNED", "PINNED", 8, "mlocked + pinned_vm + DMA (~: estimate)"), \
	  TOP_PROC("VmLck+VmPin+DMA pins of the top processes"), \
	  TOP_COL(6, "PINNED", 'l', 10, VIEW_BOTH)) \
	X(PINNED_PEAK, pinned_peak, "pinned_peak_bytes", NULL, MF_BYTES, TR_ALL, NO_BPF, \
	  "Peak of pinned_bytes (a lower bound)", \
	  "BPF peaks of locked_vm + pinned_vm, the DMA peak, now", \
	  COL(13, "PINNED_PEAK", "PINNED PEAK", 11, "the peak of PINNED"), NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(DMA_PINNED, dma_pinned, "dma_pinned_bytes", "memacct_dma_pinned_bytes", \
	  MF_BYTES, TR_LIVE, NO_BPF, \
	  "Pages pinned with FOLL_PIN (pin_user_pages: CUDA host memory, AF_XDP UMEM, ...) " \
	  "by the cgroup's processes that VmLck and VmPin do not show, until the kernel " \
	  "unpins them", \
	  "BPF: nr_foll_pin_acquired - nr_foll_pin_released across the pinning syscalls", \
	  COL(12, "DMA", "DMA", 8, "FOLL_PIN pages neither VmLck nor VmPin shows (~: estimate)"), \
	  NO_TOP_PROC, NO_TOP_COL) \
	X(DMA_PINNED_PEAK, dma_pinned_peak, "dma_pinned_peak_bytes", "memacct_dma_pinned_peak_bytes", \
	  MF_BYTES, TR_ALL, NO_BPF, \
	  "High-water mark of memacct_dma_pinned_bytes since attach (a lower bound above leaf " \
	  "cgroups)", \
	  "BPF, as dma_pinned_bytes", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(REMOTE_NUMA, remote_numa, "remote_numa_bytes", "memacct_remote_numa_bytes", \
	  MF_BYTES | MF_MEMCG_STAT | MF_REMOTE, TR_LIVE, NO_BPF, \
	  "Resident bytes on NUMA nodes other than the cgroup's home node " \
	  "(memory.numa_stat; no samples on one node)", \
	  "/proc/PID/numa_maps; cgroup: memory.numa_stat", \
	  COL(14, "REMOTE_RSS", "REMOTE RSS", 10, "resident off the home NUMA node, sampled"), \
	  NO_TOP_PROC, TOP_COL(10, "REMOTE", 'N', 10, VIEW_BOTH)) \
	X(REMOTE_NUMA_PEAK, remote_numa_peak, "remote_numa_peak_bytes", NULL, \
	  MF_BYTES, TR_ALL, NO_BPF, \
	  "Largest sample of remote_numa_bytes", \
	  "as remote_numa_bytes", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(COW_COPIED, cow_copied, "cow_copied_bytes", "memacct_cow_copied_bytes", \
	  MF_BYTES | MF_FLOW | MF_FAULT, TR_ALL, BPF(cow_copied_pages), \
	  "Anonymous copy-on-write copies since the kernel side was attached", \
	  "BPF: fault hook (x86: exceptions:page_fault_user/page_fault_kernel; elsewhere the " \
	  "perf page-faults event) + mm_page_alloc classifier", \
	  COL(4, "COW", "COW", 8, "anon pages copied on write"), \
	  TOP_PROC("CoW copies of the top processes since attach " \
	  "(a gauge: a series per pid, never a counter to rate across pids)"), \
	  TOP_COL(7, "COW", 'c', 10, VIEW_BOTH)) \
	X(COW_FILE_COPIED, cow_file_copied, "cow_file_copied_bytes", "memacct_cow_file_copied_bytes", \
	  MF_BYTES | MF_FLOW | MF_FAULT, TR_ALL, BPF(cow_file_copied_pages), \
	  "First writes to MAP_PRIVATE file pages since attach", \
	  "BPF: as cow_copied_bytes", \
	  COL(5, "FILE_COW", "FILE COW", 8, "MAP_PRIVATE file pages copied on write"), \
	  NO_TOP_PROC, NO_TOP_COL) \
	X(ZERO_FILL, zero_fill, "zero_fill_bytes", "memacct_zero_fill_bytes", \
	  MF_BYTES | MF_FLOW | MF_FAULT, TR_ALL, BPF(zero_fill_pages), \
	  "Anonymous pages allocated zeroed by a fault since attach (first touch: not CoW)", \
	  "BPF: as cow_copied_bytes (__GFP_ZERO)", \
	  COL(6, "ZEROFILL", "ZEROFILL", 8, "anon pages zero-filled by a fault"), NO_TOP_PROC, \
	  TOP_COL(8, "ZERO", 'z', 10, VIEW_BOTH)) \
	X(FAULT_UNCLASSIFIED, fault_unclassified, "fault_unclassified_bytes", \
	  "memacct_fault_unclassified_bytes", \
	  MF_BYTES | MF_FLOW | MF_FAULT, TR_ALL, BPF(fault_unclassified_pages), \
	  "Write-fault copies or fills whose VMA could not be read (CoW or not unknown) " \
	  "since attach", \
	  "BPF: as cow_copied_bytes, no VMA", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(FAULT_ALLOC, fault_alloc, "fault_alloc_bytes", NULL, \
	  MF_BYTES | MF_FLOW | MF_FAULT, TR_ALL, BPF(fault_alloc_pages), \
	  "User pages allocated inside page faults since attach", \
	  "BPF: mm_page_alloc while a fault of the task is in flight", NO_COL, NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(REMOTE_NUMA_ALLOC, remote_numa_alloc, "remote_numa_alloc_bytes", \
	  "memacct_remote_numa_alloc_bytes", \
	  MF_BYTES | MF_FLOW | MF_FAULT | MF_REMOTE, TR_ALL, BPF(remote_numa_alloc_pages), \
	  "User pages allocated on a node other than the faulting CPU's since attach", \
	  "BPF: mm_page_alloc page node vs bpf_get_numa_node_id()", \
	  COL(7, "REMOTE", "REMOTE", 8, "pages allocated on a remote NUMA node"), NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(NUMA_MIGRATED, numa_migrated, "numa_migrated_bytes", "memacct_numa_migrated_bytes", \
	  MF_BYTES | MF_FLOW, TR_ALL, BPF(numa_migrated_pages), \
	  "Pages migrated between NUMA nodes since attach", \
	  "BPF: migrate:mm_migrate_pages (succeeded), by reason", \
	  COL(15, "MIGRATED", "MIGRATED", 8, "pages migrated between NUMA nodes"), NO_TOP_PROC, \
	  NO_TOP_COL) \
	X(NUMA_TASK_MOVES, numa_task_moves, "numa_task_moves_total", NULL, \
	  MF_FLOW, TR_ALL, BPF(numa_task_moves), \
	  "NUMA-balancing task moves since attach", \
	  "BPF: sched_move_numa", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(NUMA_TASK_SWAPS, numa_task_swaps, "numa_task_swaps_total", NULL, \
	  MF_FLOW, TR_ALL, BPF(numa_task_swaps), \
	  "NUMA-balancing task swaps since attach", \
	  "BPF: sched_swap_numa", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(PAGE_FAULTS, page_faults, "page_faults_total", "memacct_page_faults", \
	  MF_FLOW | MF_MEMCG_STAT, TR_ALL, NO_BPF, \
	  "Page faults (memory.stat pgfault)", \
	  "/proc/PID/stat minflt + majflt; at exit every thread's (signal->min_flt + " \
	  "each listed thread's, as getrusage); cgroup: " \
	  "memory.stat pgfault", \
	  COL(16, "FAULTS", "FAULTS", 8, "page faults, minor and major (a count)"), NO_TOP_PROC, \
	  TOP_COL(9, "FAULTS", 'F', 9, VIEW_PROCS)) \
	X(MAJOR_FAULTS, major_faults, "major_faults_total", "memacct_major_faults", \
	  MF_FLOW | MF_MEMCG_STAT, TR_ALL, NO_BPF, \
	  "Major page faults (memory.stat pgmajfault)", \
	  "/proc/PID/stat majflt, signal->maj_flt at exit; cgroup: memory.stat pgmajfault", \
	  COL(17, "MAJFLT", "MAJFLT", 8, "major page faults (a count)"), NO_TOP_PROC, NO_TOP_COL) \
	X(OOM_KILLS, oom_kills, "oom_kills_total", "memacct_oom_kills", \
	  MF_FLOW, TR_ALL, BPF(oom_kills), \
	  "OOM kills in the cgroup (memory.oom_control / memory.events, BPF mark_victim)", \
	  "BPF: oom:mark_victim; cgroup: also oom_kill of memory.oom_control / memory.events", \
	  NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(MEMCG_RECLAIMS, memcg_reclaims, "memcg_reclaims_total", NULL, \
	  MF_FLOW, TR_ALL, BPF(memcg_reclaims), \
	  "Direct reclaim runs because the cgroup hit its limit, since attach", \
	  "BPF: vmscan:mm_vmscan_memcg_reclaim_begin", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(USAGE, usage, "usage_bytes", "memacct_usage_bytes", \
	  MF_BYTES | MF_TOTALS | MF_MEMCG_STAT, TR_NONE, NO_BPF, \
	  "Memory charged to the cgroup (memory.usage_in_bytes / memory.current)", \
	  "memory.usage_in_bytes / memory.current", NO_COL, NO_TOP_PROC, \
	  TOP_COL(1, "USAGE", 'm', 10, VIEW_CGROUPS)) \
	X(RECLAIMABLE, reclaimable, "reclaimable_bytes", "memacct_reclaimable_bytes", \
	  MF_BYTES | MF_TOTALS | MF_MEMCG_STAT, TR_NONE, NO_BPF, \
	  "Clean page cache: active_file+inactive_file-dirty-writeback (memory.stat)", \
	  "memory.stat (memcg_reclaimable())", NO_COL, NO_TOP_PROC, \
	  TOP_COL(5, "RECLAIM", 'e', 10, VIEW_CGROUPS)) \
	X(ANON_PEAK, anon_peak, "anon_peak_bytes", NULL, \
	  MF_BYTES | MF_TOTALS | MF_SAMPLED, TR_NONE, NO_BPF, \
	  "Largest memory.stat anon sampled while attached", \
	  "memory.stat", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(FILE_PEAK, file_peak, "file_peak_bytes", NULL, \
	  MF_BYTES | MF_TOTALS | MF_SAMPLED, TR_NONE, NO_BPF, \
	  "Largest memory.stat file sampled while attached", \
	  "memory.stat", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(SHMEM_PEAK, shmem_peak, "shmem_peak_bytes", NULL, \
	  MF_BYTES | MF_TOTALS | MF_SAMPLED, TR_NONE, NO_BPF, \
	  "Largest memory.stat shmem sampled while attached", \
	  "memory.stat", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(RECLAIMABLE_PEAK, reclaimable_peak, "reclaimable_peak_bytes", NULL, \
	  MF_BYTES | MF_TOTALS | MF_SAMPLED, TR_NONE, NO_BPF, \
	  "Largest reclaimable_bytes sampled while attached", \
	  "memory.stat", NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(RSS_SUM, rss_sum, "rss_sum_bytes", "memacct_rss_bytes", \
	  MF_BYTES | MF_TOTALS, TR_NONE, NO_BPF, \
	  "Resident set size of the cgroup's processes (sum of RssAnon+RssFile+RssShmem per " \
	  "process)", \
	  "mm->rss_stat of each process (the daemon's process pass, /proc/PID/status, smaps)", \
	  NO_COL, NO_TOP_PROC, NO_TOP_COL) \
	X(WORKING_SET, working_set, "working_set_bytes", "memacct_working_set_bytes", \
	  MF_BYTES | MF_TOTALS | MF_MEMCG_STAT, TR_NONE, NO_BPF, \
	  "usage - inactive_file (memory.stat): what the kubelet evicts on, " \
	  "cAdvisor's container_memory_working_set_bytes", \
	  "memory.stat (memcg_working_set())", NO_COL, NO_TOP_PROC, NO_TOP_COL)

/* struct metric_def.total: how a sum of rows (attach --pid, explain) adds
 * a row's figure (metrics_sum_rows()); a cgroup's own totals come from its
 * files and the BPF cgroup records instead (session.c, collect.c) */
#define TR_NONE		0	/* the cgroup's only (memory.stat, usage) */
#define TR_LIVE		1	/* a stock: the live rows' (an exited row's is at exit) */
#define TR_ALL		2	/* flows and peaks: every row's, exited ones too */

enum metric_id {
#define METRIC_ID(id, ...) M_##id,
	METRIC_ROWS(METRIC_ID)
#undef METRIC_ID
	M_NR
};

/*
 * The figures of a process, a cgroup or a sum: bytes unless the row has no
 * MF_BYTES (counts). Stocks are now (live) or at exit (exited processes);
 * flows since attach.
 */
struct metrics {
#define METRIC_FIELD(id, field, ...) uint64_t field;
	METRIC_ROWS(METRIC_FIELD)
#undef METRIC_FIELD
	bool dma_estimate;		/* dma_pinned or its peak is an estimate */
	uint64_t numa_migrated_by_reason[MEMACCT_MR_NR];	/* numa_migrated, split */
	/* cow_copied + cow_file_copied split by the kind of the mapping
	 * copied (enum memacct_cow_kind; [0] unused; all 0 before v5.17) */
	uint64_t cow_by_kind[MEMACCT_COW_KIND_NR];
	/* figures not measured, MBIT(enum metric_id): null in JSON, "-" in
	 * tables, never a 0 that reads as measured */
	uint64_t unknown;
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
#define MF_FAULT	(1U << 6)	/* counted by the fault classifier: not
					 * measured without a fault hook (null) */

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
	unsigned int total;	/* TR_* */
};

extern const struct metric_def metric_table[M_NR];

/* a bit of struct metrics.unknown */
#define MBIT(id)	(1ULL << (id))
_Static_assert(M_NR <= 64, "struct metrics.unknown has a bit per row");

/*
 * metric_fault_mask() - MBIT()s of the fault figures the kernel side does
 * not measure: every row the classifier counts (MF_FAULT: CoW, file CoW,
 * zero fill, unclassified, fault_alloc, remote_numa_alloc) when @no_hook
 * (it runs without a fault hook: bpf_loader.h LOADER_FAULT_NONE, or a
 * daemon's pins with none); else fault_alloc when !@alloc_counted (the
 * programs count it only where they place allocations on NUMA nodes:
 * .rodata nr_node_ranges > 0, several nodes; remote_numa_alloc is then a
 * true 0); else 0. OR'd into struct metrics.unknown: null, never a 0.
 */
uint64_t metric_fault_mask(bool no_hook, bool alloc_counted);

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
