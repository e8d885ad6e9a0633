/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * task_stock.bpf.h - one process's stocks (struct memacct_task_stock), the
 * record both passes of the daemon write: iter/task (task_stocks.bpf.c, every
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
 * Faults of @task's whole thread group, as getrusage(RUSAGE_SELF) counts
 * them (kernel/sys.c): the signal_struct's sums of the threads already
 * released plus each thread still on the group's list. With one thread
 * that is @task itself (nr_threads counts the threads not yet released,
 * a zombie leader too): two direct loads. Else the list is walked, as plain
 * numbers and probe reads (container_of() cannot be applied to a BTF
 * pointer). The last thread to exit need not be the leader: a DataLoader
 * worker's main thread calls exit_group() and its queue-feeder thread may
 * exit last, while the leader, a zombie until it is reaped, still holds
 * its own counters (issue 39: sig + task gave 1 fault against 16,425).
 * __exit_signal() adds a thread's counters to the sums and unhashes it in
 * one write section of sig->stats_lock (v3.17, commit e78c3496790e ("time,
 * signal: Protect resource use statistics with seqlock")): read as a
 * seqcount, so that a thread released meanwhile is counted once. Threads
 * past TASK_GROUP_THREADS on the list are not counted: at the last exit
 * the list holds the zombie leader and the threads still inside do_exit()
 * (about one a CPU at most); live (iter/task, kernels before 6.7 only) a
 * process of more threads reads low. A bounded loop, for programs run once
 * a process (sched_process_exit: ~10 ms more verification); inside the
 * process walk's own loop it made the daemon's start 7 s longer, so
 * task_walk.bpf.c walks with bpf_loop() from a global function.
 */
#define TASK_GROUP_THREADS	64

/* The faults of the threads on the list at @head, added to @min, @maj. */
static __always_inline void thread_list_faults(__u64 head, __u64 *min, __u64 *maj)
{
	__u64 off = bpf_core_field_offset(struct task_struct, thread_node), pos = 0;

	bpf_probe_read_kernel(&pos, sizeof(pos), (void *)head);	/* ->next */
	/* the back edge a conditional jump after a plain load, not a call:
	 * v5.10's check_cfg() takes no other as a loop */
	for (int i = 0; i < TASK_GROUP_THREADS; i++) {
		struct task_struct *t;
		__u64 next = 0;

		if (!pos || pos == head)
			break;
		t = (void *)(pos - off);
		*min += BPF_CORE_READ(t, min_flt);
		*maj += BPF_CORE_READ(t, maj_flt);
		bpf_probe_read_kernel(&next, sizeof(next), (void *)pos);
		pos = next;
	}
}

/* The group's sums and each listed thread's faults into @min, @maj; the
 * stats_lock sequence before (@seq) and after (the return value). */
static __always_inline __u32 group_faults_read(__u64 sa, __u32 *seq, __u64 *min, __u64 *maj)
{
	struct signal_struct *s = (void *)sa;

	*seq = BPF_CORE_READ(s, stats_lock.seqcount.seqcount.sequence);
	*min = BPF_CORE_READ(s, min_flt);
	*maj = BPF_CORE_READ(s, maj_flt);
	thread_list_faults(sa + bpf_core_field_offset(struct signal_struct, thread_head), min, maj);
	return BPF_CORE_READ(s, stats_lock.seqcount.seqcount.sequence);
}

/* The walk of a group of several threads, its signal_struct at @sa. */
static __always_inline void group_faults_walk(__u64 sa, __u64 *min_flt, __u64 *maj_flt)
{
	__u64 min = 0, maj = 0;
	__u32 seq = 0, seq2;

	seq2 = group_faults_read(sa, &seq, &min, &maj);
	if ((seq & 1) || seq != seq2)	/* a thread released meanwhile: once more */
		group_faults_read(sa, &seq, &min, &maj);
	*min_flt = min;
	*maj_flt = maj;
}

static __always_inline void task_group_faults(struct task_struct *task, __u64 *min_flt,
					      __u64 *maj_flt)
{
	struct signal_struct *sig = task->signal;	/* a BTF pointer: direct loads */
	__u64 sa = 0;

	if (sig->nr_threads == 1) {
		*min_flt = sig->min_flt + task->min_flt;
		*maj_flt = sig->maj_flt + task->maj_flt;
		return;
	}
	bpf_probe_read_kernel(&sa, sizeof(sa), &task->signal);
	group_faults_walk(sa, min_flt, maj_flt);
}

/*
 * Fill the rest, what only a process shown on its own needs (ppid, start
 * time, peak RSS), but its faults (the caller's: task_group_faults() or
 * task_walk.bpf.c's): three more lines of the task and one of its parent.
 */
static __always_inline void task_stock_fill_own(struct task_struct *task, struct mm_struct *mm,
						struct memacct_task_stock *r)
{
	r->ppid = task->real_parent->tgid;
	r->start_boottime_ns = task->start_boottime;
	r->hiwater_rss_pages = mm->hiwater_rss;
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

/* Fill all of @r but comm (iter/task): task_stock_fill_sums(),
 * task_stock_fill_own() and the faults by task_group_faults(). */
static __always_inline void task_stock_fill(struct task_struct *task, struct mm_struct *mm,
					    struct memacct_task_stock *r)
{
	task_stock_fill_sums(task, mm, r);
	task_stock_fill_own(task, mm, r);
	task_group_faults(task, &r->min_flt, &r->maj_flt);
}

#endif
