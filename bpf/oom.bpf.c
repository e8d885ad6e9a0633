// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * oom.bpf.c - OOM kills and memcg reclaim: each kill counted in its
 * process's flows and recorded whole at mark_victim (what the victim held,
 * the limit that was hit) into a ring and a pinned history; memcg reclaim
 * runs counted. The exit step of a kill known by pid only: oom.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"
#include "oom.bpf.h"

const volatile bool oom_by_pid;	/* mark_victim_pid is loaded (oom_victims used) */

/*
 * OOM kills: each one's record (include/memacct.h struct memacct_oom_event)
 * goes to the oom_events ring for run/attach/the daemon, and into slot
 * seq % MEMACCT_OOM_HISTORY of oom_history, which the daemon pins so that
 * `memacct oom` finds the last kills after the fact, across a restart of
 * the daemon, kills while it was down included. Written at mark_victim,
 * where the victim's mm is still intact (the kernel sent SIGKILL 0.4 ms
 * before; exit_mm() runs ~20 ms later). 256 KiB of ring: ~600 records, an
 * OOM storm of 100 kills a second read 10 times a second has room; beyond
 * it a record is counted (MEMACCT_DROP_OOM_RING_FULL), never silently lost.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} oom_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MEMACCT_OOM_HISTORY);
	__type(key, __u32);
	__type(value, struct memacct_oom_event);
} oom_history SEC(".maps");

__u64 oom_seq;		/* kills recorded since load: the last record's seq */

/* pages: a PMD huge page's charge, PTRS_PER_PTE = PAGE_SIZE / sizeof(pte_t):
 * 512 with 4K pages, 2048 with 16K (32 MiB), 8192 with 64K (512 MiB) */
#define OOM_LIMIT_NEAR_MIN	(page_size / 8)

/*
 * The memcg whose limit was hit: the nearest from @css (the victim's
 * memory css) up whose usage is within max(max / 32, a PMD's pages) of its
 * max (the charge that failed was at most a huge page; after the reclaim
 * that failed, usage sits just under max). The tracepoint does not pass
 * the oom_control that names it (mm/oom_kill.c). Walks
 * mem_cgroup->memory.parent (struct page_counter, the same field since
 * v4.x), 16 levels at most; probe reads: not hot.
 */
static __always_inline void oom_limit_walk(struct cgroup_subsys_state *css,
					   struct memacct_oom_event *ev)
{
	long css_off = bpf_core_field_offset(struct mem_cgroup, css);
	long mem_off = bpf_core_field_offset(struct mem_cgroup, memory);
	struct page_counter *pc;
	struct mem_cgroup *memcg;

	if (!css)
		return;
	memcg = (void *)css - css_off;
	pc = (void *)memcg + mem_off;
	for (int i = 0; i < 16 && pc; i++) {
		__u64 max = BPF_CORE_READ(pc, max);
		__u64 usage = BPF_CORE_READ(pc, usage.counter);
		__u64 near = max >> 5;
		struct page_counter *up = BPF_CORE_READ(pc, parent);

		if (near < OOM_LIMIT_NEAR_MIN)
			near = OOM_LIMIT_NEAR_MIN;
		/* the root's max is PAGE_COUNTER_MAX, never near */
		if (up && usage + near >= max) {
			memcg = (void *)pc - mem_off;
			ev->limit_memcg_id = BPF_CORE_READ(memcg, css.cgroup, kn, id);
			ev->limit_pages = max;
			ev->usage_pages = usage;
			ev->flags |= MEMACCT_OOM_LIMIT;
			return;
		}
		pc = up;
	}
}

/* The memory css of @task (task->cgroups->subsys[memory]), probe reads. */
static __always_inline struct cgroup_subsys_state *task_memcg_css(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset = BPF_CORE_READ(task, cgroups);

	if (cset)
		bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	return css;
}

/*
 * Fill the next history slot with what @victim (NULL: the tracepoint gave
 * only @tid) held at the kill, and send it. @memcg_of: the task whose
 * memcg is walked for the limit (the victim; pid only: current, the task
 * whose charge failed, in a memcg OOM inside the limited subtree).
 */
static __always_inline void oom_record(struct task_struct *victim, __u32 tid,
				       struct task_struct *memcg_of)
{
	struct cgroup_subsys_state *css = task_memcg_css(memcg_of);
	struct memacct_oom_event *ev;
	struct memacct_proc *p;
	struct mm_struct *mm;
	__u64 seq;
	__u32 slot;

	/* mark_victim runs under oom_lock (mm/oom_kill.c: out_of_memory()'s
	 * callers hold it, memcg OOMs too): kills are one at a time, a
	 * plain increment is enough (an atomic fetch-add is BPF_ATOMIC_FETCH,
	 * refused before 5.12: "BPF_STX uses reserved fields" on 5.10) */
	seq = ++oom_seq;
	slot = seq % MEMACCT_OOM_HISTORY;

	ev = bpf_map_lookup_elem(&oom_history, &slot);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->seq = seq;
	ev->ts_ns = bpf_ktime_get_boot_ns();
	ev->tid = tid;
	ev->key.tgid = tid;
	if (css)
		ev->memcg_id = BPF_CORE_READ(css, cgroup, kn, id);
	oom_limit_walk(css, ev);
	if (victim) {
		ev->flags |= MEMACCT_OOM_TASK;
		proc_key_of(victim, &ev->key);
		/* direct loads: a tp_btf argument (mm_rss_pages() needs the
		 * BTF pointer) */
		ev->ppid = victim->group_leader->real_parent->tgid;
		ev->oom_score_adj = victim->signal->oom_score_adj;
		bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), victim->group_leader->comm);
		mm = victim->mm;
		if (mm) {
			ev->flags |= MEMACCT_OOM_MM;
			mm_rss_pages(mm, &ev->rss_anon_pages, &ev->rss_file_pages,
				     &ev->rss_shmem_pages);
			ev->swap_ents_pages = mm_counter_pages_direct(mm, MM_SWAPENTS);
			ev->total_vm_pages = mm->total_vm;
			ev->locked_vm_pages = mm->locked_vm;
			ev->pinned_vm_pages = mm->pinned_vm.counter;
		}
		p = bpf_map_lookup_elem(&procs, &ev->key);
		if (p) {
			ev->flags |= MEMACCT_OOM_FLOWS;
			bpf_probe_read_kernel(&ev->f, sizeof(ev->f), &p->f);
			bpf_probe_read_kernel(&ev->pin, sizeof(ev->pin), &p->pin);
		}
	}
	if (bpf_ringbuf_output(&oom_events, ev, sizeof(*ev), 0))
		drop(MEMACCT_DROP_OOM_RING_FULL);
}

SEC("tp_btf/mark_victim")
int BPF_PROG(mark_victim, struct task_struct *task)
{
	struct memacct_flows *f = flows_get(task);
	__u64 cgid;

	if (f)
		__sync_fetch_and_add(&f->oom_kills, 1);
	/* run/attach: kills in their subtree only; the daemon: all */
	if (memcg_wanted(task, &cgid))
		oom_record(task, task->pid, task);
	return 0;
}

/*
 * Before the tracepoint passed the task (see core_fixes.bpf.h), it passed
 * only the victim's pid: note the pid, sched_process_exit counts the kill
 * when that task exits (oom_exit()). user/kernel/bpf_loader.c loads one of
 * the two programs.
 */
struct oom_victims_map oom_victims SEC(".maps");

SEC("tp/oom/mark_victim")
int mark_victim_pid(struct trace_event_raw_mark_victim *ctx)
{
	__u32 pid = BPF_CORE_READ(ctx, pid), one = 1;

	if (bpf_map_update_elem(&oom_victims, &pid, &one, BPF_ANY))
		drop(MEMACCT_DROP_OOM_VICTIM_FULL);
	/* pid only: no filter here (userspace keeps the kills of its
	 * subtree by this memcg) and the victim's figures from userspace's
	 * samples; the limit and memcg from the killing task's */
	oom_record(NULL, pid, current_task());
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(memcg_reclaim_begin)
{
	struct memacct_flows *f = flows_get(current_task());

	if (f)
		__sync_fetch_and_add(&f->memcg_reclaims, 1);
	return 0;
}
