/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * task_stock.bpf.h - one process's stocks (struct memacct_task_stock), the
 * record both passes of the daemon write: iter/task (memacct.bpf.c, every
 * kernel) and the process walk (task_walk.bpf.c, 6.7 and later).
 */
#ifndef MEMACCT_TASK_STOCK_BPF_H
#define MEMACCT_TASK_STOCK_BPF_H

#include "core_fixes.bpf.h"

/*
 * Fill what every process's record is summed for (tgid, RSS, locked_vm,
 * pinned_vm, memory cgroup) from @task, a thread-group leader with an mm;
 * not comm (the caller's: see task_walk). Direct loads through the BTF
 * pointers (PROBE_MEM, a few ns each), not bpf_probe_read_kernel() (a
 * helper call each): this runs for every process of the machine at every
 * collection. On 6.18 (x86) these are 5 cache lines of the task (tasks,
 * which the iterator follows, mm, tgid, comm, cgroups), 3 of the mm and
 * one per CPU of the mm's per-CPU RSS deltas (mm_rss_pages(): RSS as
 * /proc/PID/status shows it, not the central counts alone).
 */
static __always_inline void task_stock_fill_sums(struct task_struct *task, struct mm_struct *mm,
						 struct memacct_task_stock *r)
{
	struct css_set *cset;

	r->tgid = task->tgid;
	mm_rss_pages(mm, &r->rss_anon_pages, &r->rss_file_pages, &r->rss_shmem_pages);
	r->locked_vm_pages = mm->locked_vm;
	r->pinned_vm_pages = mm->pinned_vm.counter;
	r->memcg_id = 0;
	cset = task->cgroups;
	if (cset) {
		int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
		struct cgroup_subsys_state *css = cset->subsys[id];

		if (css && css->cgroup)
			r->memcg_id = css->cgroup->kn->id;
	}
}

/*
 * Fill the rest, what only a process shown on its own needs (ppid, start
 * time, peak RSS, faults): three more lines of the task, one of its
 * signal_struct and one of its parent.
 */
static __always_inline void task_stock_fill_own(struct task_struct *task, struct mm_struct *mm,
						struct memacct_task_stock *r)
{
	struct signal_struct *sig = task->signal;

	r->ppid = task->real_parent->tgid;
	r->start_boottime_ns = task->start_boottime;
	r->hiwater_rss_pages = mm->hiwater_rss;
	r->min_flt = sig->min_flt + task->min_flt;
	r->maj_flt = sig->maj_flt + task->maj_flt;
}

/* Zero what task_stock_fill_own() fills (a lean walk reuses the array). */
static __always_inline void task_stock_clear_own(struct memacct_task_stock *r)
{
	r->ppid = 0;
	r->start_boottime_ns = 0;
	r->hiwater_rss_pages = 0;
	r->min_flt = 0;
	r->maj_flt = 0;
}

/* Fill all of @r but comm: task_stock_fill_sums() and task_stock_fill_own(). */
static __always_inline void task_stock_fill(struct task_struct *task, struct mm_struct *mm,
					    struct memacct_task_stock *r)
{
	task_stock_fill_sums(task, mm, r);
	task_stock_fill_own(task, mm, r);
}

#endif
