// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * lifecycle.bpf.c - a process's life in the records: made at fork, renamed
 * and its pre-exec peak kept at exec, its flows left behind when it moves
 * to another memory cgroup, a removed cgroup's flows given to its parent,
 * and at exit its last figures taken and its flows folded into its cgroup.
 * The exit is a sequence of each concern's exit step (oom_exit(),
 * faults_exit(), pins_exit(), dma_exit()), in their headers.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"
#include "oom.bpf.h"
#include "pins.bpf.h"
#include "faults.bpf.h"
#include "dma.bpf.h"
#include "task_stock.bpf.h"

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	struct memacct_proc_key key;

	if (child->pid != child->tgid)	/* direct loads: a tp_btf argument */
		return 0;	/* a thread, not a process */
	/* not yet running, so nothing made its record: no lookup first */
	proc_key_of(child, &key);
	proc_make(child, &key);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *task)
{
	struct memacct_proc *p = proc_get(task, true);

	if (p) {
		unsigned long maxrss = task->signal->maxrss;	/* direct load: tp_btf */

		bpf_probe_read_kernel_str(p->comm, sizeof(p->comm), task->comm);
		/* begin_new_exec() -> exec_mmap() folded the old image's
		 * hiwater into signal->maxrss before this tracepoint: what
		 * maxrss holds now belongs to the images before the exec */
		p->exec_maxrss_pages = maxrss > 0xffffffffUL ? 0xffffffffU : maxrss;
		p->flags |= MEMACCT_PROC_EXECED;
	}
	faults_exec();
	return 0;
}

/*
 * A task moved between memory cgroups: its process's flows from now on are
 * counted in the new one (memcg_id follows), and what it did so far stays
 * with the old one, as the kernel's own memory.stat events do: added to the
 * old cgroup's record and taken from the new one's (a negative offset that
 * the process's flows make up), so that neither cgroup's total goes down
 * nor counts what was done in the other (issue #15).
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_attach_task, struct cgroup *dst, const char *path,
	     struct task_struct *task)
{
	struct memacct_proc *p = proc_get(task, true);
	struct memacct_cgroup *old_cg, *new_cg;
	struct memacct_flows f;
	struct cgroup *cg;
	__u64 id;

	if (!p || !(cg = task_memcg(task)))
		return 0;
	id = BPF_CORE_READ(cg, kn, id);
	if (id == p->memcg_id)
		return 0;	/* another hierarchy (cgroup v1), or no change */
	faults_fold_mover(p, task);
	f = p->f;
	/* with the cgroups map full (counted), the record above both */
	old_cg = cgroup_or_up(p->memcg_id);
	new_cg = old_cg ? cgroup_or_up(id) : NULL;
	if (new_cg && new_cg != old_cg)
		flows_move(&old_cg->f, &new_cg->f, &f);
	p->memcg_id = id;
	return 0;
}

/*
 * A memory cgroup is removed: the flows of its exited processes go to its
 * parent's record, so that the parent's counters keep what its removed
 * descendants did (the kernel's hierarchical memory.stat and memory.events
 * keep them too). It has no live process left (rmdir fails otherwise); its
 * record, now zero, is dropped by userspace. Cgroups of other v1
 * hierarchies (their ids are numbered apart) are told by their root.
 */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	struct cgroup *mine = task_memcg(current_task());
	struct memacct_cgroup *c, *parent;
	struct memacct_flows f;
	int level = BPF_CORE_READ(cgrp, level);
	__u64 id, parent_id;

	if (!mine || level <= 0 || level > 4096 ||
	    BPF_CORE_READ(cgrp, root) != BPF_CORE_READ(mine, root))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	oom_rmdir(id);
	parent_id = cgroup_ancestor_id(cgrp, level - 1);
	c = bpf_map_lookup_elem(&cgroups, &id);
	if (!c || !parent_id)
		return 0;
	/* with the cgroups map full (counted), the record above it: its
	 * flows are never lost with it (a counter never goes down) */
	parent = cgroup_or_up(parent_id);
	if (!parent || parent == c)
		return 0;
	f = c->f;
	flows_move(&parent->f, &c->f, &f);
	/* now zero: its record goes, unless DMA pins of its exited processes
	 * are still held (dma_move() releases them there), so that records of
	 * removed cgroups never pile up, with or without a daemon */
	if (!c->pin.dma_pinned_pages && !c->pin.locked_vm_pages && !c->pin.pinned_vm_pages)
		bpf_map_delete_elem(&cgroups, &id);
	return 0;
}

/*
 * The last thread of a process exits: send the final record. The tracepoint
 * runs before exit_mm() since v6.16 (it gained its group_dead argument then),
 * so the mm's counters are still readable; on older kernels mm is NULL here
 * and only signal->maxrss (set before exit_mm) is available.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *task)
{
	struct signal_struct *sig = task->signal;	/* direct loads: a tp_btf argument */
	struct memacct_exit_event *ev;
	struct memacct_proc_key key;
	struct memacct_cgroup *c;
	struct memacct_proc *p;
	struct mm_struct *mm;
	__u64 hiwater, rss;
	__u32 tid = task->pid;

	oom_exit(task, tid);
	faults_exit(task, tid);
	if (sig->live.counter != 0)
		return 0;	/* other threads still run */
	p = proc_get(task, true);
	if (!p)
		return 0;	/* its flows went to its cgroup's record (flows_get()) */
	/* direct loads, as task_stocks (iter/task) does on every kernel */
	mm = task->mm;
	p->exit_maxrss_pages = sig->maxrss;	/* no mm: the best the kernel kept */
	if (mm) {
		p->exit_rss_file_pages = mm_counter_pages_direct(mm, MM_FILEPAGES);
		p->exit_rss_anon_pages = mm_counter_pages_direct(mm, MM_ANONPAGES);
		p->exit_rss_shmem_pages = mm_counter_pages_direct(mm, MM_SHMEMPAGES);
		rss = p->exit_rss_file_pages + p->exit_rss_anon_pages +
		      p->exit_rss_shmem_pages;
		/* this image's peak alone (VmHWM's definition): signal->maxrss
		 * also holds the images before an exec (a shell's, memacct's
		 * own pre-exec child's) */
		hiwater = mm->hiwater_rss;
		p->exit_maxrss_pages = hiwater > rss ? hiwater : rss;
		/* last word on pinned memory: peaks see growth no syscall
		 * hook saw (stack growth under MCL_FUTURE, ...) */
		pinned_set(p, mm->locked_vm, mm->pinned_vm.counter);
		p->flags |= MEMACCT_PROC_EXIT_MM;
	}
	task_group_faults(task, &p->exit_min_flt, &p->exit_maj_flt);
	p->exit_code = task->exit_code;
	proc_key_of(task, &key);

	/* from here a reader skips the record (exit_folds_*, above) */
	__sync_fetch_and_add(&exit_folds_begin, 1);
	p->flags |= MEMACCT_PROC_EXITED;

	/* fold into the cgroup so its counters outlive the process, here in
	 * the kernel whatever userspace does (reads the ring or not) */
	c = cgroup_or_up(p->memcg_id);
	{
		__u64 *to = c ? (__u64 *)&c->f : (__u64 *)&lost_flows;
		const __u64 *from = (const __u64 *)&p->f;

		/* every flow (an array of __u64: flows_move()); most are 0
		 * for most processes: a test is cheaper than a locked add */
#pragma unroll
		for (int i = 0; i < FLOW_WORDS; i++)
			add_nz(&to[i], from[i]);
	}
	pins_exit(p, c);
	__sync_fetch_and_add(&exit_folds_end, 1);
	dma_exit(&key, p);

	/* the exit record: a per-process row for run/attach. With the ring
	 * full (nobody reads it: the daemon down) only that row is lost, not
	 * a page of the flows (folded above); the record leaves the map in
	 * every case, so exits can never fill it (issue #23) */
	ev = bpf_ringbuf_reserve(&exits, sizeof(*ev), 0);
	if (ev) {
		ev->key = key;
		bpf_probe_read_kernel(&ev->proc, sizeof(ev->proc), p);
		bpf_ringbuf_submit(ev, 0);
	} else {
		drop(MEMACCT_DROP_RINGBUF_FULL);
	}
	bpf_map_delete_elem(&procs, &key);
	return 0;
}
