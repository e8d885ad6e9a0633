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
 * Per memcg (its cgroup id), its memory_events_local[MEMCG_OOM] when last
 * seen: 0 from cgroup_mkdir (a new memcg has no event), else the count at
 * the last kill whose limit walk passed it; gone at cgroup_rmdir. The
 * kernel counts an OOM event in the memcg whose limit was hit, only there,
 * before it picks a victim (mm/memcontrol.c: mem_cgroup_oom() and
 * memory_max_write() call memcg_memory_event(memcg, MEMCG_OOM), then
 * mem_cgroup_out_of_memory()): at mark_victim the count of that memcg is
 * above what was seen. LRU: a memcg evicted, or older than the load, is
 * walked by its usage instead.
 */
struct memcg_oom_seen_map memcg_oom_seen SEC(".maps");

/*
 * @memcg's memory_events_local[MEMCG_OOM] into @n; false where the kernel
 * has none (memory.events.local came in v5.2, commit 1e577f970f66 "mm,
 * memcontrol: introduce memory.events.local"). An atomic_long_t array
 * indexed by the enum: offsets, not a CO-RE access with a variable index.
 */
static __always_inline bool memcg_oom_events(struct mem_cgroup *memcg, __u64 *n)
{
	long off;

	if (!bpf_core_field_exists(struct mem_cgroup, memory_events_local) ||
	    !bpf_core_enum_value_exists(enum memcg_memory_event, MEMCG_OOM))
		return false;
	off = bpf_core_field_offset(struct mem_cgroup, memory_events_local) +
	      bpf_core_enum_value(enum memcg_memory_event, MEMCG_OOM) * sizeof(long);
	return !bpf_probe_read_kernel(n, sizeof(*n), (void *)memcg + off);
}

/*
 * The memcg whose limit was hit, from @css (the victim's memory css) up,
 * 16 levels at most (mem_cgroup->memory.parent, struct page_counter, the
 * same field since v4.x); the tracepoint does not pass the oom_control that
 * names it (mm/oom_kill.c). By the kernel's count: the nearest memcg whose
 * local OOM events grew since memcg_oom_seen last saw them (userspace seeds
 * the memcgs older than the load, loader_oom_seen_seed(); cgroup_mkdir the
 * newer). A memcg the map does not know (evicted, or older than the load on
 * v1, which shows no local count) is judged by its usage instead: within
 * max(max / 32, a PMD's pages) of its max (the charge that
 * failed was at most a huge page; after the reclaim that failed, usage
 * sits just under max). Usage alone picked a child near its own limit for
 * its parent's, and missed a limit whose usage fell while the victim was
 * chosen: another victim's exit frees pages meanwhile (issue 39 finding
 * 6: 1 kill in 200 recorded as host-wide). Probe reads: not hot.
 */
static __always_inline void oom_limit_walk(struct cgroup_subsys_state *css,
					   struct memacct_oom_event *ev)
{
	long css_off = bpf_core_field_offset(struct mem_cgroup, css);
	long mem_off = bpf_core_field_offset(struct mem_cgroup, memory);
	struct page_counter *pc, *near_pc = NULL;
	struct mem_cgroup *memcg;
	__u64 near_max = 0, near_usage = 0;

	if (!css)
		return;
	memcg = (void *)css - css_off;
	pc = (void *)memcg + mem_off;
	for (int i = 0; i < 16 && pc; i++) {
		__u64 max = BPF_CORE_READ(pc, max);
		__u64 usage = BPF_CORE_READ(pc, usage.counter);
		__u64 near = max >> 5, id, n, *seen = NULL;
		struct page_counter *up = BPF_CORE_READ(pc, parent);
		bool counted;

		if (!up)	/* the root: its max is PAGE_COUNTER_MAX */
			break;
		memcg = (void *)pc - mem_off;
		id = BPF_CORE_READ(memcg, css.cgroup, kn, id);
		counted = memcg_oom_events(memcg, &n);
		if (counted)
			seen = bpf_map_lookup_elem(&memcg_oom_seen, &id);
		if (seen) {
			if (n > *seen) {
				*seen = n;
				ev->limit_memcg_id = id;
				ev->limit_pages = max;
				ev->usage_pages = usage;
				ev->flags |= MEMACCT_OOM_LIMIT | MEMACCT_OOM_LIMIT_EVENT;
				return;
			}
		} else {
			/* from now on, known by its count */
			if (counted)
				bpf_map_update_elem(&memcg_oom_seen, &id, &n, BPF_NOEXIST);
			if (near < OOM_LIMIT_NEAR_MIN)
				near = OOM_LIMIT_NEAR_MIN;
			if (!near_pc && usage + near >= max) {
				near_pc = pc;
				near_max = max;
				near_usage = usage;
			}
		}
		pc = up;
	}
	if (near_pc) {
		memcg = (void *)near_pc - mem_off;
		ev->limit_memcg_id = BPF_CORE_READ(memcg, css.cgroup, kn, id);
		ev->limit_pages = near_max;
		ev->usage_pages = near_usage;
		ev->flags |= MEMACCT_OOM_LIMIT;
	}
}

/*
 * A memory cgroup is made: its memcg has no OOM event yet (memcg_oom_seen).
 * Cgroups of other v1 hierarchies are told by their root, as at rmdir.
 */
SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct cgroup *mine = task_memcg(current_task());
	__u64 id, zero = 0;

	if (!mine || BPF_CORE_READ(cgrp, root) != BPF_CORE_READ(mine, root))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	bpf_map_update_elem(&memcg_oom_seen, &id, &zero, BPF_ANY);
	return 0;
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
