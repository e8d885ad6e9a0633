/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * fill.h - struct metrics filled from each source of the kernel's figures,
 * one filler per source, for every collector and command (run, attach, top,
 * the daemon, explain, the OOM post-mortems): the BPF side's per-process
 * records live and at exit, its OOM record, the task walk's stocks,
 * /proc/PID/status, memory.stat. Each sets the figures its source has, in
 * bytes and counts (pages times @page_size, the running kernel's page
 * size), and leaves the others as they are; none allocates or fails.
 */
#ifndef MEMACCT_FILL_H
#define MEMACCT_FILL_H

#include <stdint.h>
#include "cgroup.h"
#include "memacct.h"
#include "metric_table.h"
#include "proc.h"

/*
 * metrics_from_bpf_flows() - @m's flows from a BPF record's (include/memacct.h,
 * bpf/: pages and counts) in bytes and counts. Stocks of @m
 * untouched.
 */
void metrics_from_bpf_flows(struct metrics *m, const struct memacct_flows *f, uint64_t page_size);
/*
 * metrics_from_proc_record() - a process's record of the procs map
 * (bpf/): its flows (metrics_from_bpf_flows()), the peaks of
 * mm->locked_vm, mm->pinned_vm and their sum that BPF keeps at every change,
 * and its DMA pins (FOLL_PIN pages of the pinning calls it made) with their
 * peak and estimate flag, not yet net of mlocked ranges (metrics_dma_net()).
 */
void metrics_from_proc_record(struct metrics *m, const struct memacct_proc *p,
			      uint64_t page_size);
/*
 * metrics_from_exit_record() - the stocks of a process at its exit, from
 * its record as sched_process_exit left it: RSS, anon, file, shmem
 * (mm->rss_stat; unknown where the tracepoint fired after exit_mm(), before
 * 6.16), RSS PEAK (the exiting image's high-water mark, unknown where only
 * signal->maxrss of an exec'd process is left), mlocked and pinned_vm
 * (mm->locked_vm, mm->pinned_vm), faults (signal->min_flt + maj_flt).
 */
void metrics_from_exit_record(struct metrics *m, const struct memacct_proc *p,
			      uint64_t page_size);
/*
 * metrics_from_task_stock() - a live process's stocks from the task walk
 * (bpf/task_walk.bpf.c): RSS, anon, file, shmem (mm->rss_stat), RSS PEAK
 * (mm->hiwater_rss, at least the RSS), mlocked, pinned_vm, faults
 * (signal->min_flt + maj_flt; 0 where the walk left them out).
 */
void metrics_from_task_stock(struct metrics *m, const struct memacct_task_stock *t,
			     uint64_t page_size);
/*
 * metrics_from_proc_status() - a live process's stocks from /proc/PID/status
 * (fs/proc/task_mmu.c task_mem()): RSS (VmRSS), anon, file, shmem (RssAnon,
 * RssFile, RssShmem), RSS PEAK (VmHWM, at least VmRSS), mlocked (VmLck),
 * pinned_vm (VmPin). Faults are /proc/PID/stat's, for the caller.
 */
void metrics_from_proc_status(struct metrics *m, const struct proc_status *st);
/*
 * metrics_from_oom_event() - the OOM victim's figures at the kill
 * (tp_btf/mark_victim, include/memacct.h struct memacct_oom_event): its
 * stocks where the record has its mm (MEMACCT_OOM_MM), its flows and DMA
 * pins where it has its procs record (MEMACCT_OOM_FLOWS), and pinned.
 */
void metrics_from_oom_event(struct metrics *m, const struct memacct_oom_event *ev,
			    uint64_t page_size);
/*
 * metrics_from_memcg_stat() - a cgroup's stocks in @m from its memory.stat
 * (hierarchical: the cgroup and below): usage and rss (the charge,
 * memory.current / usage_in_bytes), anon, file, shmem, reclaimable (clean
 * page cache: active_file + inactive_file - dirty - writeback) and the
 * working set (usage - inactive_file).
 */
void metrics_from_memcg_stat(struct metrics *m, const struct memcg_stat *st);
/*
 * metrics_from_memcg_events() - a cgroup's faults (pgfault, pgmajfault) and
 * OOM kills from its memory.stat's event counters, less @base's (the
 * counters at a session's start; NULL: since the cgroup was made). OOM
 * kills stay at least @m's (the BPF side's count) and are left as they
 * are where memory.stat has no oom_kill.
 */
void metrics_from_memcg_events(struct metrics *m, const struct memcg_stat *st,
			       const struct memcg_stat *base);
/*
 * metrics_add_cgroup_pins() - a cgroups-map record's pinned sums
 * (bpf/pins.bpf.h pinned_set(), kept at every change of its processes' pins) added
 * to @m: the peaks of mlocked, pinned_vm and their sum, and the DMA pins of
 * the cgroup's live processes and of exited ones the kernel has not
 * unpinned yet, with their peak and estimate flag.
 */
void metrics_add_cgroup_pins(struct metrics *m, const struct memacct_pinned *pin,
			     uint64_t page_size);
/*
 * metrics_dma_net() - @m's DMA pins and their peak less @locked bytes of
 * them that lie in VM_LOCKED mappings (counted in mlocked already), never
 * below 0: pinned never counts a page twice.
 */
void metrics_dma_net(struct metrics *m, uint64_t locked);
/* metrics_pinned_sum() - pinned = mlocked + pinned_vm + dma_pinned (net). */
void metrics_pinned_sum(struct metrics *m);
/*
 * metrics_pinned_totals() - pinned (metrics_pinned_sum()) and the pinned
 * peaks at least now: mlocked, pinned_vm, DMA pins, and pinned_peak the
 * largest of BPF's peak of mlocked + pinned_vm, the DMA peak and pinned
 * now: a lower bound of the true peak, never a double count.
 */
void metrics_pinned_totals(struct metrics *m);

#endif
