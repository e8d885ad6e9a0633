/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pins.bpf.h - what other units need of pins.bpf.c: a process's locked_vm
 * and pinned_vm set with its cgroup's sums and peaks (pinned_set(), also
 * at exit), and the change events of audit --watch (the DMA windows send
 * them too).
 */
#ifndef MEMACCT_PINS_BPF_H
#define MEMACCT_PINS_BPF_H

extern const volatile bool pin_events_on;	/* audit --watch: events on */
extern __u64 pin_events_lost;			/* events the ring had no room for */

struct pin_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* one page; audit --watch sets its own size */
};
extern struct pin_events_map pin_events SEC(".maps");

/* process records with locked_vm or pinned_vm not 0 (pins.bpf.c) */
extern __s64 pinned_procs;

static __always_inline void peak(__u64 *peak, __u64 v)
{
	if (v > *peak)
		*peak = v;
}

/*
 * Record a process's locked_vm/pinned_vm (pages) and move its cgroup's sums
 * by the difference, keeping peaks of both. True when either value changed.
 */
static __always_inline bool pinned_set(struct memacct_proc *p, __u64 locked, __u64 pinned)
{
	__s64 dl = locked - p->pin.locked_vm_pages;
	__s64 dp = pinned - p->pin.pinned_vm_pages;
	bool was = p->pin.locked_vm_pages || p->pin.pinned_vm_pages;
	struct memacct_cgroup *c;

	if (was != (locked || pinned))
		__sync_fetch_and_add(&pinned_procs, was ? -1 : 1);
	p->pin.locked_vm_pages = locked;
	p->pin.pinned_vm_pages = pinned;
	peak(&p->pin.locked_vm_peak_pages, locked);
	peak(&p->pin.pinned_vm_peak_pages, pinned);
	peak(&p->pin.pinned_peak_pages, locked + pinned);
	if (!dl && !dp)
		return false;
	c = cgroup_get(p->memcg_id);
	if (!c)
		return true;
	/* fetch-and-add whose result is unused: BPF_XADD, which 5.10 has;
	 * returning atomics (BPF_FETCH) came in v5.12, commit 5ca419f2864a
	 * ("bpf: Add BPF_FETCH field / create atomic_fetch_add instruction").
	 * The peaks below may miss a concurrent update by one step. */
	__sync_fetch_and_add(&c->pin.locked_vm_pages, dl);
	__sync_fetch_and_add(&c->pin.pinned_vm_pages, dp);
	locked = c->pin.locked_vm_pages;
	pinned = c->pin.pinned_vm_pages;
	peak(&c->pin.locked_vm_peak_pages, locked);
	peak(&c->pin.pinned_vm_peak_pages, pinned);
	peak(&c->pin.pinned_peak_pages, locked + pinned);
	return true;
}

/* A pinned-memory change event for audit --watch (struct memacct_pin_event). */
static __always_inline void pin_event_key(const struct memacct_proc_key *key,
					  struct memacct_proc *p, long syscall_nr, long ret)
{
	struct memacct_pin_event *ev;

	ev = bpf_ringbuf_reserve(&pin_events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&pin_events_lost, 1);
		return;
	}
	ev->key = *key;
	ev->memcg_id = p->memcg_id;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->locked_vm_pages = p->pin.locked_vm_pages;
	ev->pinned_vm_pages = p->pin.pinned_vm_pages;
	ev->syscall_nr = syscall_nr;
	ev->syscall_ret = ret;
	__builtin_memcpy(ev->comm, p->comm, sizeof(ev->comm));
	ev->dma_pinned_pages = p->pin.dma_pinned_pages;
	bpf_ringbuf_submit(ev, 0);
}

static __always_inline void pin_event(struct task_struct *task, struct memacct_proc *p,
				      long syscall_nr, long ret)
{
	struct memacct_proc_key key;

	proc_key_of(task, &key);
	pin_event_key(&key, p, syscall_nr, ret);
}

/*
 * After a syscall that may move mm->locked_vm or mm->pinned_vm. The record of
 * a syscalls:sys_exit_* tracepoint is struct syscall_trace_exit (an int nr,
 * as in its tracefs format), not trace_event_raw_sys_exit (a long id, whose
 * upper half would be padding).
 */
static __always_inline void pinned_update(struct syscall_trace_exit *ctx)
{
	struct task_struct *task = current_task();
	struct memacct_proc *p;
	struct mm_struct *mm;
	__u64 locked, pinned;

	if (task_btf()) {
		mm = task->mm;
		if (!mm)
			return;
		locked = mm->locked_vm;
		pinned = mm->pinned_vm.counter;
	} else {
		mm = BPF_CORE_READ(task, mm);
		if (!mm)
			return;
		locked = BPF_CORE_READ(mm, locked_vm);
		pinned = BPF_CORE_READ(mm, pinned_vm.counter);
	}
	p = proc_get(task, true);
	if (p && pinned_set(p, locked, pinned) && pin_events_on)
		pin_event(task, p, ctx->nr, ctx->ret);
}

/* sched_process_exit's step, once @p's flows are folded into @c (NULL:
 * none): the record keeps its at-exit values, but no longer counts as one
 * with pins for mmap_lock_released, and its pinned memory, gone with its
 * mm, leaves the cgroup's sums. */
static __always_inline void pins_exit(struct memacct_proc *p, struct memacct_cgroup *c)
{
	if (p->pin.locked_vm_pages || p->pin.pinned_vm_pages)
		__sync_fetch_and_add(&pinned_procs, -1);
	if (c) {
		add_nz(&c->pin.locked_vm_pages, -(__s64)p->pin.locked_vm_pages);
		add_nz(&c->pin.pinned_vm_pages, -(__s64)p->pin.pinned_vm_pages);
	}
}

#endif /* MEMACCT_PINS_BPF_H */
