// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * task_walk.bpf.c - the daemon's pass over processes, not threads: one run of
 * the open-coded task iterator over every thread-group leader
 * (bpf_iter_task_new(BPF_TASK_ITER_ALL_PROCS): v6.7, commit c68a78ffe2cb
 * "bpf: Introduce task open coded iterator kfuncs") writes the stocks of each
 * process with an mm into the mmap'able array stocks. Userspace runs it with
 * BPF_PROG_TEST_RUN and reads the array in place (user/kernel/task_walk.c).
 *
 * iter/task (task_stocks.bpf.c), what older kernels use, looks up
 * every thread's pid in turn and takes a reference on each task; this walk
 * follows the process list under RCU. Its own object: it keeps no state that
 * must outlive the daemon (the hints map is only a guess), so the daemon
 * loads it at every start instead of pinning it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "task_stock.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* set by userspace: processes it holds */
	__type(key, __u32);
	__type(value, struct memacct_task_stock);
} stocks SEC(".maps");

/*
 * The task each step of the previous walk met (kernel addresses, so not in
 * the mapped array): walk_hint_touch() loads ahead from them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* set by userspace: as stocks */
	__type(key, __u32);
	__type(value, __u64);
} hints SEC(".maps");

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
/* v6.2, commit 9bb00b2895cb ("bpf: Add kfunc bpf_rcu_read_lock/unlock()"):
 * the walk's pointers are RCU-protected, and a syscall program sleeps */
extern void bpf_rcu_read_lock(void) __weak __ksym;
extern void bpf_rcu_read_unlock(void) __weak __ksym;
/* v6.2, commit a35b9af4ec2c ("bpf: Add a kfunc for generic type cast") */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __weak __ksym;

/* a load whose value is kept from the optimiser and otherwise unused */
#define touch(v) ({ __u64 __v = (__u64)(v); barrier_var(__v); })

/* how many steps ahead walk_hint_touch() loads: 8, 16 and 24 measured alike */
#define AHEAD 8

/*
 * All ones, but unknown to the verifier (a .data global): a step number
 * masked with it is no constant map key, so the verifier does not track
 * the step count precisely and the loop's states converge as with n.
 */
volatile __u32 step_mask = ~0U;

/*
 * The process list is a chain of dependent loads: followed step by step it
 * costs a cache miss per process, each waiting for the one before (three
 * quarters of the daemon's CPU at 100,000 processes here; the rest of the
 * walk is mostly misses on the same process's lines). The list hardly
 * changes between two collections, so the task the previous walk met AHEAD
 * steps further is most likely the one this walk will meet there: its list
 * link is loaded now, that miss overlapping this step's instead of
 * following it. The value is not used: a stale hint (that task exited, its
 * memory reused) only costs a useless load, PROBE_MEM through an untrusted
 * pointer (bpf_rdonly_cast()), fault-safe. Loading more of its lines (mm,
 * comm, cgroups, the mm's counters) measured no better: each such load
 * holds the CPU's reorder window as a miss does.
 */
static __always_inline void walk_hint_touch(__u32 step)
{
	__u64 *h = bpf_map_lookup_elem(&hints, &step);
	struct task_struct *t;

	if (!h || !*h)
		return;
	t = bpf_rdonly_cast((void *)*h, bpf_core_type_id_kernel(struct task_struct));
	touch(t->tasks.next);
}

/* Remember @task as step @step's, for the next walk. */
static __always_inline void walk_hint_save(__u32 step, struct task_struct *task)
{
	__u64 *h = bpf_map_lookup_elem(&hints, &step);

	if (h)
		*h = (__u64)task;
}

/* bpf_loop() costs no verification by its bound: every thread of a process
 * of up to 65,536 (task_stock.bpf.h's bounded loop stops at 64) */
#define WALK_GROUP_THREADS	65536

/* A walk of a thread group's list: where it stands. */
struct thread_walk {
	__u64 pos, head, off;	/* the list node now, its head, thread_node's offset */
	__u64 min, maj;
};

/* One thread of the list (bpf_loop()): its faults added; 1 (stop) at the head. */
static long thread_step(__u64 i, void *ctx)
{
	struct thread_walk *w = ctx;
	struct task_struct *t;

	if (!w->pos || w->pos == w->head)
		return 1;
	t = (void *)(w->pos - w->off);
	w->min += BPF_CORE_READ(t, min_flt);
	w->maj += BPF_CORE_READ(t, maj_flt);
	return bpf_probe_read_kernel(&w->pos, sizeof(w->pos), (void *)w->pos) ? 1 : 0;
}

/*
 * The faults of a process of several threads (task_stock.bpf.h
 * task_group_faults(): the same sums and seqcount), its signal_struct at
 * @sa, into @r. A global function, its list walked by bpf_loop() (v5.17;
 * this walk needs v6.7): each verified once on their own. Inlined in the
 * loop below, the bounded walk was verified once a step: the daemon's start
 * took 7 s longer. Always 0.
 */
__noinline int walk_group_faults(__u64 sa, struct memacct_task_stock *r)
{
	struct signal_struct *s = (void *)sa;
	struct thread_walk w = { .off = bpf_core_field_offset(struct task_struct, thread_node),
				 .head = sa + bpf_core_field_offset(struct signal_struct,
								    thread_head) };
	__u32 seq, seq2;

	if (!r)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		seq = BPF_CORE_READ(s, stats_lock.seqcount.seqcount.sequence);
		w.min = BPF_CORE_READ(s, min_flt);
		w.maj = BPF_CORE_READ(s, maj_flt);
		w.pos = 0;
		bpf_probe_read_kernel(&w.pos, sizeof(w.pos), (void *)w.head);
		bpf_loop(WALK_GROUP_THREADS, thread_step, &w, 0);
		seq2 = BPF_CORE_READ(s, stats_lock.seqcount.seqcount.sequence);
		if (!(seq & 1) && seq == seq2)
			break;	/* no thread released during the walk */
	}
	r->min_flt = w.min;
	r->maj_flt = w.maj;
	return 0;
}

/*
 * One process's record: @ta, a thread-group leader with an mm, as a number
 * (a global function takes no BTF pointer before v6.8's __arg_trusted),
 * cast back (bpf_rdonly_cast(): untrusted, its loads PROBE_MEM as the
 * trusted ones, fault-safe). A global function, verified once on its own:
 * inlined in the walk's loop, its every path was verified again at each
 * step of the loop until its states converged (113,504 instructions, 3-4 s
 * on 6.18 here, at each start and each reload of the walk: issue 46).
 * Without @own, ppid, start time, peak RSS and faults are left 0: they
 * cost 5 more cache lines per process, and a daemon without
 * --top-processes publishes none of them. Always 0.
 */
__noinline int walk_fill(__u64 ta, struct memacct_task_stock *r, int own)
{
	struct task_struct *task = bpf_rdonly_cast((void *)ta,
						   bpf_core_type_id_kernel(struct task_struct));
	struct mm_struct *mm;

	if (!r || !task)
		return 0;
	mm = task->mm;
	if (!mm)
		return 0;
	if (own) {
		struct signal_struct *sig = task->signal;

		task_stock_fill_sums(task, mm, r);
		task_stock_fill_own(task, mm, r);
		r->min_flt = sig->min_flt + task->min_flt;
		r->maj_flt = sig->maj_flt + task->maj_flt;
		if (sig->nr_threads != 1) {
			__u64 sa = 0;	/* a number: a cast BTF pointer stays one */

			bpf_probe_read_kernel(&sa, sizeof(sa), &task->signal);
			walk_group_faults(sa, r);
		}
	} else {	/* the array keeps earlier runs' records */
		task_stock_fill_sums(task, mm, r);
		task_stock_clear_own(r);
	}
	/* comm as two direct 8-byte loads, not bpf_probe_read_kernel()
	 * (7% of a collection at 10,000 processes): the verifier lets
	 * a load span an array of scalars (btf_struct_walk()) */
	_Static_assert(sizeof(r->comm) == 16, "comm is two words");
	((__u64 *)r->comm)[0] = ((const __u64 *)task->comm)[0];
	((__u64 *)r->comm)[1] = ((const __u64 *)task->comm)[1];
	return 0;
}

/*
 * Returns the number of processes with an mm (kernel threads and zombies
 * have none); those past max_entries are counted and not written, so a
 * return above max_entries tells userspace that the array was too small.
 */
SEC("syscall")
int task_walk(struct memacct_task_walk_args *ctx)
{
	int own = ctx->own_fields;
	struct bpf_iter_task it;
	struct task_struct *task;
	__u32 n = 0, step = 0;

	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_PROCS);
	while ((task = bpf_iter_task_next(&it))) {
		struct memacct_task_stock *r;
		__u64 ta = (__u64)task;
		__u32 i = n;

		walk_hint_touch((step + AHEAD) & step_mask);
		walk_hint_save(step++ & step_mask, task);
		if (!task->mm)
			continue;
		n++;
		r = bpf_map_lookup_elem(&stocks, &i);
		if (!r)
			continue;
		/* the pointer as a number (the verifier keeps a spilled
		 * pointer's type: only a copy by the kernel drops it) */
		bpf_probe_read_kernel(&ta, sizeof(ta), &ta);
		walk_fill(ta, r, own);
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	return n;
}
