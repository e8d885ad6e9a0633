/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * faults.bpf.h - the fault path's types and state (faults.bpf.c), and what
 * other units need of it: a thread's pending flows folded into its
 * process's record (at exit, and before its process moves to another
 * cgroup), the VMA caches forgotten at exec, each CPU's slot (dma.bpf.c
 * learns the per-CPU offsets from it).
 */
#ifndef MEMACCT_FAULTS_BPF_H
#define MEMACCT_FAULTS_BPF_H

extern const volatile bool fault_old;	/* the *_old fault programs are loaded (fault_spill used) */

/* Per-thread state of the fault in progress (CoW classifier, DESIGN.md). */
enum {
	FAULT_NONE = 0,
	FAULT_ACTIVE,		/* fault entered, first user allocation not seen yet */
	FAULT_CLASSIFIED,	/* fault entered, its first allocation was classified */
};

/*
 * The running thread's flows not yet added to its process's record: counting
 * here is a plain increment (no procs lookup, no atomics per fault). They are
 * folded into the record (fold()) every FOLD_BATCH events, when the thread is
 * switched out (sched_switch) and when it exits. So a thread that is not
 * running has nothing pending; a running one at most FOLD_BATCH - 1 events.
 */
struct fault_pending {
	__u32 n;		/* events since the last fold */
	__u32 zero_fill;	/* pages, as the rest */
	__u32 cow;
	__u32 cow_file;
	__u32 fault_alloc;	/* pages */
	__u32 remote;		/* pages */
	__u32 unclassified;
	__u32 cowm_pages;	/* of cow + cow_file: copies in the mapping below */
	__u64 cowm_start;	/* its vm_start | enum memacct_cow_kind */
	__u64 cowm_end;		/* its vm_end */
	__u32 cowk[MEMACCT_COW_KIND_NR];	/* cow + cow_file by mapping kind */
	__u32 pad;
};

#define FOLD_BATCH	32

/*
 * The VMA the thread's last classification looked up (bpf_find_vma() costs
 * ~150 ns: an mmap_lock trylock and a maple tree walk). Valid while the mm's
 * VMA write sequence (mm_lock_seq, core_fixes.bpf.h) has not moved: every
 * change of a VMA's range, flags or file takes the mmap write lock, whose
 * release moves it. seq_ok is 0 when nothing is cached.
 */
struct vma_cache {
	__u64 mm;		/* the mm_struct's address */
	__u64 start, end;	/* [vm_start, vm_end) */
	__u64 flags;		/* vm_flags */
	__u32 seq;		/* mm_lock_seq when it was looked up */
	__u8 seq_ok;
	__u8 file;		/* vm_file != NULL */
	__u16 pad;
};

/*
 * fault_ctx.error_code of a fault entered through the perf event hook
 * (page_fault_perf): no error code known. No x86 error code (the only
 * architecture whose kernel raises exceptions:page_fault_user) has bit 63.
 */
#define FAULT_NO_ERRCODE	(1ULL << 63)

/* The fault in progress (DESIGN.md steps 1-3). */
struct fault_ctx {
	__u64 address;
	__u64 error_code;
	__u64 flt;		/* task->min_flt + task->maj_flt at fault entry */
	__u32 state;
	__u32 pad;
	/* perf hook: the page of a private file mapping's allocation, counted
	 * as file CoW once the fault has finished if it is then anon
	 * (cand_resolve()); 0: none */
	__u64 cand;
	__u64 cand_map;		/* its mapping: vm_start | MEMACCT_COW_KIND_FILE */
	__u64 cand_end;		/* and vm_end */
};

/*
 * Per CPU: the fault state and pending flows of the thread running there.
 * An array lookup (no locking, no recursion guard) instead of a task-storage lookup
 * on each of the 2-3 program runs per fault. Exact because the slot belongs
 * to no thread but the one running: sched_switch folds the leaving thread's
 * pending flows, moves a fault still in progress (the thread slept or was
 * preempted inside it) to the thread's task storage, and frees the slot, so
 * slot.task is 0 or current, and preemption is off while a program runs.
 * That last holds up to 6.x only. In 7.2's source a tracepoint calls its
 * programs under SRCU-fast (include/linux/tracepoint.h __DECLARE_TRACE)
 * and __bpf_trace_run() only disables migration, while x86 and arm64 offer
 * only preemptible models (kernel/Kconfig.preempt: PREEMPT_LAZY by
 * default): a run preempted half-way makes the kernel skip another task's
 * run of that program on that CPU (the per-CPU recursion guard). Those runs
 * are counted, never silent: userspace reports the skipped runs as
 * bpf_runs_skipped (bpf_prog_info.recursion_misses), 158 in sid's cow_busy
 * section, where 125 of 8,192 CoW copies went uncounted (docs/vmtest.md).
 */
struct cpu_slot {
	__u64 task;		/* task_struct address of its thread; 0: free */
	struct fault_ctx f;
	struct fault_pending pend;
	/* the VMA cache's first level: valid while its thread stays on the
	 * CPU (cleared when the slot is claimed), so a CoW copy in a run of
	 * them costs no task-storage lookup (~30 ns); the thread's own cache
	 * in task storage (struct fault_state) outlives its switches */
	struct vma_cache vma;
};

struct cpu_slots_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_slot);
};
extern struct cpu_slots_map cpu_slots SEC(".maps");

/* Per thread: a fault moved out of its CPU slot, and the VMA cache. */
struct fault_state {
	struct fault_ctx f;
	struct vma_cache vma;
};

struct fault_states_map {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fault_state);
};
extern struct fault_states_map fault_states SEC(".maps");

/* CoW copies by mapping, per process (struct memacct_cow_maps): made at a
 * process's first attributed copy, deleted by userspace once it has read
 * the process's exit record (include/memacct.h) */
struct cow_maps_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);	/* userspace sizes it as procs */
	__type(key, struct memacct_proc_key);
	__type(value, struct memacct_cow_maps);
};
extern struct cow_maps_map cow_maps SEC(".maps");
extern const struct memacct_cow_maps zero_cow_maps;
#define COWM_MIN_PAGES	16	/* a process's copies before its slots are made */
#define COW_MAPS_SHIFT	7	/* log2(MEMACCT_COW_MAPS) */
_Static_assert(1 << COW_MAPS_SHIFT == MEMACCT_COW_MAPS, "cowm_fold() hashes into the slots");

/*
 * Kernels without task storage or bpf_find_vma() (5.10 .. 5.16): a fault
 * moved out of its CPU slot goes here, keyed by thread id (the *_old
 * programs; deleted when taken back and at thread exit).
 */
struct fault_spill_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct fault_ctx);
};
extern struct fault_spill_map fault_spill SEC(".maps");

/*
 * Completed faults of @task: mm_account_fault() adds one to min_flt or maj_flt
 * when a fault finishes. Direct loads through the BTF pointer (the fault
 * programs need task storage, so bpf_get_current_task_btf(), v5.11): no
 * bpf_probe_read_kernel() calls on the hot path.
 */
static __always_inline __u64 task_flt(struct task_struct *task)
{
	return task->min_flt + task->maj_flt;
}

extern __u64 cand_stored;	/* candidates in task storage (faults.bpf.c) */

static __always_inline void cand_resolve(struct fault_ctx *f, struct fault_pending *pd)
{
	struct page *pg = (struct page *)f->cand;
	__u64 mapping = 0;

	if (!f->cand)
		return;
	f->cand = 0;
	bpf_probe_read_kernel(&mapping, sizeof(mapping), &pg->mapping);
	if (mapping & 1) {
		pd->cow_file++;
		pd->cowk[MEMACCT_COW_KIND_FILE]++;
		pd->n++;
		/* its mapping, where none other is pending (a batch is of
		 * one mapping: else unattributed) */
		if (f->cand_map && (!pd->cowm_pages || pd->cowm_start == f->cand_map)) {
			pd->cowm_start = f->cand_map;
			pd->cowm_end = f->cand_end;
			pd->cowm_pages++;
		}
	}
}

/* The candidate left in @task's storage by switch_out(), once its fault has
 * finished, into @pd. */
static __always_inline void cand_resolve_stored(struct task_struct *task,
						struct fault_pending *pd)
{
	struct fault_state *st;

	/* sched_process_exit is loaded without task storage too (v5.10) */
	if (!cand_stored ||
	    !bpf_core_enum_value_exists(enum bpf_map_type, BPF_MAP_TYPE_TASK_STORAGE))
		return;
	st = bpf_task_storage_get(&fault_states, task, 0, 0);
	if (st && st->f.cand && st->f.flt != task_flt(task)) {
		cand_resolve(&st->f, pd);
		__sync_fetch_and_add(&cand_stored, -1);
	}
}

/*
 * Whether this unit's copy of cowm_fold() (and of fold(), which inlines it)
 * claims a free slot by compare-and-swap and takes a full one's: the
 * faults unit's programs load on v5.17 on only, and define it 1. The
 * lifecycle unit's (sched_process_exit, cgroup_attach_task) load on 5.10
 * too, whose verifier refuses BPF_CMPXCHG (v5.12, commit 5ffa25502b5a)
 * anywhere in a program, dead code included ("BPF_STX uses reserved
 * fields"): there, at a thread's exit or a move, a free slot is claimed
 * by a plain store. What can go wrong then: another thread of the process
 * claiming the same slot for another mapping at the same moment (its batch
 * is then counted in this one's).
 */
#ifndef COWM_CAS
#define COWM_CAS 0
#endif

static __always_inline bool cowm_on(void)
{
	/* bpf_find_vma(): v5.17, commit 7c7e3d31e785 (core_fixes.bpf.h); a
	 * constant to the verifier, which then skips cowm_fold() before */
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma);
}

/*
 * The pending copies of one mapping (@pd->cowm_*) into @key's slots
 * (include/memacct.h): the slot of that vm_start among the
 * MEMACCT_COW_PROBES from the one it hashes to, else a free one there
 * (claimed by compare-and-swap: threads of the process fold on other CPUs;
 * COWM_CAS above), else the smallest of those when it holds fewer pages
 * than this batch (its pages become unattributed), else none
 * (MEMACCT_DROP_COW_MAPS). Only where the
 * fault programs run with task storage and bpf_find_vma() (v5.17;
 * BPF_CMPXCHG is v5.12): the *_old programs attribute nothing. A slot taken
 * while another thread adds to it may keep that thread's batch (a few
 * pages).
 */
static __always_inline void cowm_fold(const struct memacct_proc_key *key,
				      struct fault_pending *pd, struct memacct_proc *p)
{
	struct memacct_cow_maps *cm;
	struct memacct_cow_map *m = NULL;
	__u64 k = pd->cowm_start, s, was, h;
	__u32 j;

	cm = bpf_map_lookup_elem(&cow_maps, key);
	if (!cm) {
		long err;

		/* made once the process has copied COWM_MIN_PAGES (its
		 * record's flows and this batch): a child that copies a few
		 * pages and exits (a shell's, fork+exec's: its stack, libc's
		 * data) pays no 3 KiB allocation (4.5 us a fork+exit, make
		 * bench), and those few stay unattributed */
		if (!p)
			p = bpf_map_lookup_elem(&procs, key);
		if (!p || p->f.cow_copied_pages + p->f.cow_file_copied_pages + pd->cow +
			  pd->cow_file < COWM_MIN_PAGES)
			return;
		err = bpf_map_update_elem(&cow_maps, key, &zero_cow_maps, BPF_NOEXIST);

		cm = err && err != -EEXIST ? NULL : bpf_map_lookup_elem(&cow_maps, key);
		if (!cm) {
			drop(MEMACCT_DROP_COW_MAPS);
			return;
		}
	}
	/* Fibonacci hashing of the page number: its top bits */
	h = ((k >> 12) * 0x9E3779B97F4A7C15ULL) >> (64 - COW_MAPS_SHIFT);
	/* one path on through the loop: the verifier walks it in
	 * MEMACCT_COW_PROBES steps */
	for (j = 0; j < MEMACCT_COW_PROBES; j++) {
		m = &cm->m[(h + j) & (MEMACCT_COW_MAPS - 1)];
		s = m->start;
		if (!s) {
#if COWM_CAS
			s = __sync_val_compare_and_swap(&m->start, 0, k);
#else
			m->start = k;
#endif
			if (!s) {
				m->end = pd->cowm_end;
				break;
			}
		}
		if (s == k)
			break;
	}
	if (j < MEMACCT_COW_PROBES && m) {
		__sync_fetch_and_add(&m->pages, pd->cowm_pages);
		return;
	}
#if COWM_CAS
	/* all taken: the smallest of them, when it holds fewer pages than
	 * this batch (a run of copies in a large mapping takes it from one of
	 * a few pages; a large one keeps its place). Its size first, then the
	 * first slot of that size: each loop one path on for the verifier */
	was = ~0ULL;
	for (j = 0; j < MEMACCT_COW_PROBES; j++) {
		__u64 n = cm->m[(h + j) & (MEMACCT_COW_MAPS - 1)].pages;

		was = n < was ? n : was;
	}
	if (was >= pd->cowm_pages) {
		drop(MEMACCT_DROP_COW_MAPS);
		return;
	}
	for (j = 0; j < MEMACCT_COW_PROBES; j++) {
		m = &cm->m[(h + j) & (MEMACCT_COW_MAPS - 1)];
		if (m->pages == was)
			break;
	}
	s = m ? m->start : 0;
	if (m && j < MEMACCT_COW_PROBES && __sync_val_compare_and_swap(&m->start, s, k) == s) {
		m->end = pd->cowm_end;
		m->pages = pd->cowm_pages;
		__sync_fetch_and_add(&cm->evicted_pages, was);
		return;
	}
#else
	(void)was;
#endif
	drop(MEMACCT_DROP_COW_MAPS);
}

/*
 * The pending copies of one mapping out of @pd into their slot, alone
 * (cowm_note(): the next copy is in another mapping). A subprogram, as
 * fold() below, verified once per program that calls it.
 */
static __noinline __attribute__((unused)) int cowm_flush(struct task_struct *task,
							  struct fault_pending *pd)
{
	struct memacct_proc_key key;

	if (!pd->cowm_pages)
		return 0;
	proc_key_of(task, &key);
	cowm_fold(&key, pd, NULL);
	pd->cowm_pages = 0;
	return 0;
}

/*
 * Add the current thread's pending flows to its process's record. Called
 * only for the current thread (mm_page_alloc, sched_switch of prev ==
 * current, sched_process_exit) on its own CPU's slot, with preemption off:
 * no concurrent writer. @f is flows_get()'s: NULL (the filter does not want
 * the process) drops them.
 */
static __always_inline void fold_into(struct memacct_flows *f, struct fault_pending *pd)
{
	if (f) {
		if (pd->zero_fill)
			__sync_fetch_and_add(&f->zero_fill_pages, pd->zero_fill);
		if (pd->cow)
			__sync_fetch_and_add(&f->cow_copied_pages, pd->cow);
		if (pd->cow_file)
			__sync_fetch_and_add(&f->cow_file_copied_pages, pd->cow_file);
		if (pd->fault_alloc)
			__sync_fetch_and_add(&f->fault_alloc_pages, pd->fault_alloc);
		if (pd->remote)
			__sync_fetch_and_add(&f->remote_numa_alloc_pages, pd->remote);
		if (pd->unclassified)
			__sync_fetch_and_add(&f->fault_unclassified_pages, pd->unclassified);
#pragma unroll
		for (int i = 1; i < MEMACCT_COW_KIND_NR; i++)
			if (pd->cowk[i])
				__sync_fetch_and_add(&f->cow_kind_pages[i], pd->cowk[i]);
	}
	__builtin_memset(pd, 0, sizeof(*pd));
}

/*
 * A subprogram, not inlined: verified once per program that calls it. In a
 * header, each unit that calls it (faults, lifecycle) has its own copy; a
 * loaded program's instructions are the same. Unused in the units that
 * only read the fault state (unused: no warning there).
 */
static __noinline __attribute__((unused)) int fold(struct task_struct *task, struct fault_pending *pd)
{
	struct memacct_proc_key key;
	struct memacct_flows *f;
	struct memacct_proc *p;

	if (!pd->n)
		return 0;
	/* the key through the BTF pointer; flows_get() makes the record */
	key.tgid = task->tgid;
	key.pad = 0;
	key.start_boottime_ns = task->group_leader->start_boottime;
	p = bpf_map_lookup_elem(&procs, &key);
	f = p ? &p->f : flows_get(task);
	if (cowm_on() && f && pd->cowm_pages)
		cowm_fold(&key, pd, p);
	fold_into(f, pd);
	return 0;
}

/* fold() for a task pointer that is a number (probe reads) */
static __noinline __attribute__((unused)) int fold_old(struct task_struct *task, struct fault_pending *pd)
{
	if (pd->n)
		fold_into(flows_get(task), pd);
	return 0;
}

/* sched_process_exec's step: a new mm, so the VMA caches are forgotten (a
 * new mm at the old address could show the same sequence). */
static __always_inline void faults_exec(void)
{
	if (bpf_core_enum_value_exists(enum bpf_map_type, BPF_MAP_TYPE_TASK_STORAGE)) {
		struct fault_state *st;
		struct cpu_slot *sl;
		__u32 zero = 0;

		st = bpf_task_storage_get(&fault_states, bpf_get_current_task_btf(), 0, 0);
		if (st)
			st->vma.seq_ok = 0;
		sl = bpf_map_lookup_elem(&cpu_slots, &zero);
		if (sl)
			sl->vma.seq_ok = 0;
	}
}

/*
 * cgroup_attach_task's step, before @p's flows stay behind: a process that
 * moves itself (runc init, a shell's echo $$ > cgroup.procs) has up to
 * FOLD_BATCH - 1 flows pending in this CPU's slot, folded first so that
 * they stay with the cgroup they were made in (issue 39: one batch, up to
 * 19 CoW pages, went to the new cgroup). Another thread of the group
 * running on another CPU folds its own at its next switch: those go with
 * the move.
 */
static __always_inline void faults_fold_mover(struct memacct_proc *p, struct task_struct *task)
{
	__u32 zero = 0;
	struct cpu_slot *sl = bpf_map_lookup_elem(&cpu_slots, &zero);
	struct task_struct *cur = (void *)bpf_get_current_task();
	struct memacct_proc_key key;

	if (sl && sl->task == (__u64)cur && sl->pend.n &&
	    BPF_CORE_READ(cur, tgid) == task->tgid) {
		if (cowm_on() && sl->pend.cowm_pages) {
			proc_key_of(task, &key);
			cowm_fold(&key, &sl->pend, p);
		}
		fold_into(&p->f, &sl->pend);
	}
}

/* sched_process_exit's step, every thread (task is current here): its
 * pending flows folded, its CPU slot freed. */
static __always_inline void faults_exit(struct task_struct *task, __u32 tid)
{
	__u32 zero = 0, ctid = tid;
	struct cpu_slot *sl = bpf_map_lookup_elem(&cpu_slots, &zero);

	if (sl && sl->task == (__u64)task) {
		if (task_btf()) {
			/* the last fault's candidate: its page may be
			 * freed already where this fires after
			 * exit_mm() (before 6.16): then not counted */
			cand_resolve(&sl->f, &sl->pend);
			fold(task, &sl->pend);
		} else {
			fold_old(task, &sl->pend);
		}
		sl->f.state = FAULT_NONE;
		sl->f.cand = 0;
		sl->task = 0;
	}
	if (fault_old)
		bpf_map_delete_elem(&fault_spill, &ctid);
	/* a candidate whose fault slept (moved to task storage), with
	 * or without a CPU slot of this thread now */
	if (task_btf() && cand_stored) {
		struct fault_pending pd = {};

		cand_resolve_stored(task, &pd);
		fold(task, &pd);
	}
}

#endif /* MEMACCT_FAULTS_BPF_H */
