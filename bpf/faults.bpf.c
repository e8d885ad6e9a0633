// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * faults.bpf.c - page faults and the CoW classifier (DESIGN.md): a fault's
 * entry (exceptions:page_fault_user/kernel or the perf event hook), its
 * first user allocation classified (zero fill, CoW copy of an anon or a
 * file page, or unknown) and placed on a NUMA node, the flows kept per CPU
 * and folded into the process's record at a batch, a switch or the exit.
 * The *_old programs do the same on 5.10 .. 5.16. The state and what other
 * units need (the fold, the exit and exec steps): faults.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"
#include "maple.bpf.h"
#define COWM_CAS 1	/* faults.bpf.h: these programs load on v5.17 on only */
#include "faults.bpf.h"

/* Set by userspace between open and load (user/kernel/bpf_loader.c). */
const volatile __u32 gfp_user;		/* __GFP_HIGHMEM | __GFP_MOVABLE */
const volatile __u32 gfp_highuser_movable;	/* GFP_HIGHUSER_MOVABLE */
const volatile __u32 gfp_zero;		/* __GFP_ZERO */
const volatile __u32 gfp_comp;		/* __GFP_COMP */
/* what every large user folio's gfp holds: GFP_HIGHUSER_MOVABLE less the
 * reclaim bits, plus __GFP_COMP (GFP_TRANSHUGE_LIGHT, include/linux/gfp_types.h) */
const volatile __u32 gfp_large;
const volatile __u32 nr_node_ranges;	/* > 0 only with several NUMA nodes */
const volatile __u64 vmemmap_start;	/* struct page array base (page_to_pfn) */
const volatile struct memacct_node_range node_ranges[MEMACCT_MAX_NODE_RANGES];
const volatile bool fault_old;	/* the *_old fault programs are loaded (fault_spill used) */

struct cpu_slots_map cpu_slots SEC(".maps");
struct fault_states_map fault_states SEC(".maps");
struct fault_spill_map fault_spill SEC(".maps");
/* maple.bpf.h's: one node copied per CPU */
struct maple_bufs_def maple_bufs SEC(".maps");
/* faults.bpf.h cowm_fold()'s: CoW copies by mapping, per process */
struct cow_maps_map cow_maps SEC(".maps");
const struct memacct_cow_maps zero_cow_maps;
/* core_fixes.bpf.h vmemmap_base_get()'s: the base found, once */
__u64 vmemmap_base_cached;

/*
 * The perf hook cannot tell a write from a read (no error code): the first
 * allocation in a fault of a private file mapping is the copy of a write
 * (do_cow_fault(), wp_page_copy()) or, in a read fault on a hole of a
 * shmem/tmpfs file, the page-cache page itself. Told apart once the fault
 * has finished: the copy is then mapped as an anon page (page->mapping has
 * PAGE_MAPPING_ANON, bit 0), the page-cache page is not. Resolved at the
 * thread's next fault, allocation, switch or exit; cand_stored counts
 * candidates moved to task storage (a hint: switch_out looks there only
 * while it is not 0).
 */
__u64 cand_stored;

/* The same for a task pointer that is a plain number (the *_old programs). */
static __always_inline __u64 task_flt_old(struct task_struct *task)
{
	return BPF_CORE_READ(task, min_flt) + BPF_CORE_READ(task, maj_flt);
}

/* The current task: a BTF pointer, or for the *_old programs
 * current_task() (a number for probe reads before v5.11). */
static __always_inline struct task_struct *cur_task(bool old)
{
	return old ? current_task() : bpf_get_current_task_btf();
}

/* The CPU slot, claimed for the current thread (see struct cpu_slot). */
static __always_inline struct cpu_slot *slot_claim(__u64 task)
{
	__u32 zero = 0;
	struct cpu_slot *sl = bpf_map_lookup_elem(&cpu_slots, &zero);

	if (!sl || sl->task == task)
		return sl;
	/* free, or left by a thread switched out before sched_switch was
	 * attached (only while attaching): its pending flows are lost */
	__builtin_memset(&sl->pend, 0, sizeof(sl->pend));
	sl->f.state = FAULT_NONE;
	sl->f.cand = 0;
	sl->vma.seq_ok = 0;
	sl->task = task;
	return sl;
}




static __always_inline int fault_enter(unsigned long address, unsigned long error_code,
				       bool old)
{
	struct task_struct *task;
	struct cpu_slot *sl;

	/*
	 * Every fault, read faults too (DESIGN.md step 1): where the kernel
	 * does not map the shared zero page (mm_forbids_zeropage() on s390,
	 * hosts booted with pvm_no_zero_page=1), a read fault on untouched
	 * anon memory allocates the zeroed page, and the later write faults
	 * no more. A read fault that allocates nothing costs these stores.
	 */
	task = cur_task(old);
	sl = slot_claim((__u64)task);
	if (!sl)
		return 0;
	if (!old && sl->f.cand)
		cand_resolve(&sl->f, &sl->pend);	/* the thread's last fault */
	sl->f.address = address;
	sl->f.error_code = error_code;
	sl->f.flt = old ? task_flt_old(task) : task_flt(task);
	sl->f.state = FAULT_ACTIVE;
	return 0;
}




static __always_inline void fold_any(struct task_struct *task, struct fault_pending *pd,
				     bool old)
{
	if (old)
		fold_old(task, pd);
	else
		fold(task, pd);
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return fault_enter(address, error_code, false);
}

/* Kernel-mode faults on user addresses (copy_to_user into a CoW page). */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(page_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (address >= USER_ADDR_MAX)
		return 0;
	return fault_enter(address, error_code, false);
}

/*
 * The portable fault entry (every architecture; the only one where
 * exceptions:page_fault_user does not exist, e.g. arm64): the
 * PERF_COUNT_SW_PAGE_FAULTS software event, which the arch fault handler
 * raises at entry (perf_sw_event() in arch/<arch>/mm/fault.c, user and
 * kernel mode faults on user addresses alike), attached by user/kernel/bpf_loader.c
 * on every CPU with sample_period 1. ctx->addr is the fault address; there
 * is no error code, so the fault is marked FAULT_NO_ERRCODE and classify()
 * works from the allocation and the VMA alone (docs/metrics.md "Fault
 * hooks"). The loader loads it beside the tracepoint programs and attaches
 * one of the two.
 */
SEC("perf_event")
int page_fault_perf(struct bpf_perf_event_data *ctx)
{
	return fault_enter(ctx->addr, FAULT_NO_ERRCODE, false);
}

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *vi = data;

	vi->flags = BPF_CORE_READ(vma, vm_flags);
	vi->file = BPF_CORE_READ(vma, vm_file) != NULL;
	vi->start = BPF_CORE_READ(vma, vm_start);
	vi->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* Events whose VMA bpf_find_vma() could not give (-EBUSY) and the lockless
 * maple tree walk (maple.bpf.h) did: read by userspace for the reports. */
__u64 vma_lockless_lookups;

/* @vc holds @address's VMA of @mm at sequence @seq: its flags to @vi */
static __always_inline bool vma_hit(const struct vma_cache *vc, struct mm_struct *mm,
				    __u32 seq, __u64 address, struct vma_info *vi)
{
	if (!vc->seq_ok || vc->mm != (__u64)mm || vc->seq != seq ||
	    address < vc->start || address >= vc->end)
		return false;
	vi->flags = vc->flags;
	vi->file = vc->file;
	vi->start = vc->start;
	vi->end = vc->end;
	return true;
}

/*
 * The VMA of f->address, from the CPU slot's cache or the thread's when
 * still valid, else by bpf_find_vma() (mmap_lock read-trylock), else, when
 * that lock is busy, by the lockless walk. -1 only when both fail.
 */
static __always_inline int vma_of(struct task_struct *task, struct cpu_slot *sl,
				  struct vma_info *vi)
{
	struct fault_ctx *f = &sl->f;
	struct fault_state *st;
	struct vma_cache *vc;
	struct mm_struct *mm = task->mm;
	__u32 seq = 0, seq2 = 0;
	bool seq_ok = mm && mm_vma_seq(mm, &seq);

	if (seq_ok && vma_hit(&sl->vma, mm, seq, f->address, vi))
		return 0;
	st = bpf_task_storage_get(&fault_states, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st && seq_ok && vma_hit(&st->vma, mm, seq, f->address, vi)) {
		sl->vma = st->vma;
		return 0;
	}
	if (bpf_find_vma(task, f->address, vma_cb, vi, 0)) {
		__u64 mm_addr = 0;

		/* the global function takes the mm as a number: a probe read
		 * gives one (a cast of the BTF pointer would stay a pointer) */
		if (!mm || bpf_probe_read_kernel(&mm_addr, sizeof(mm_addr), &task->mm) ||
		    vma_lockless(mm_addr, f->address, vi))
			return -1;
		__sync_fetch_and_add(&vma_lockless_lookups, 1);
		/* cached only when no writer ran during the walk */
		seq_ok = seq_ok && mm_vma_seq(mm, &seq2) && seq2 == seq;
	}
	/* seq was read before the lookup: a change in between moves it, and
	 * the entry is not used again */
	vc = &sl->vma;
	vc->seq_ok = seq_ok;
	vc->mm = (__u64)mm;
	vc->seq = seq;
	vc->start = vi->start;
	vc->end = vi->end;
	vc->flags = vi->flags;
	vc->file = vi->file;
	if (st)
		st->vma = *vc;
	return 0;
}

enum alloc_kind { ALLOC_OTHER, ALLOC_ZERO, ALLOC_COW_ANON, ALLOC_COW_FILE, ALLOC_UNCLASSIFIED,
		  ALLOC_COW_FILE_CAND /* perf hook: cand_resolve() decides */ };

/*
 * DESIGN.md step 4: what the first user allocation of a fault was for, an
 * order-0 page or a large folio (@order > 0). The VMA is looked up in one
 * place only: vma_of() inlined once is most of this function's verifier
 * cost in each program that calls it.
 *
 * The perf event hook (FAULT_NO_ERRCODE) knows neither write nor present:
 * the first GFP_HIGHUSER_MOVABLE order-0 allocation without __GFP_ZERO
 * inside a fault of a private mapping is, in an anon VMA, the CoW break of
 * a present page (wp_page_copy()); in a file VMA the copy of a write
 * (do_cow_fault(), wp_page_copy()) or, in a read fault, a page-cache page
 * (shmem filling a hole), told apart once the fault has finished
 * (cand_resolve()). A read fault that maps the zero page or a cached page
 * allocates no such page. What this cannot tell (docs/metrics.md "Fault
 * hooks"): an anon swap-in of a page not in the swap cache counts as a
 * copy; the *_old programs (no task storage) count file candidates at once.
 *
 * A large folio in a private anon VMA is a zero fill, read or write fault:
 * a transparent huge page mapped by do_huge_pmd_anonymous_page() (a write,
 * or a read without the huge zero page), do_huge_zero_wp_pmd() (a write to
 * the huge zero page, v6.13) or an mTHP by alloc_anon_folio() (v6.8), each
 * zeroed by folio_zero_user(), not by __GFP_ZERO (issue 39: 53,248 bytes for
 * 64 MiB of MADV_HUGEPAGE memory). A THP is never copied whole: a write to
 * a shared one splits its PMD and copies 4 KiB pages (wp_huge_pmd()). In a
 * file or shared VMA it is page cache (readahead's large folios), shmem or
 * a hugetlb surplus page: not a flow. Not told (docs/metrics.md "Known
 * blind spots"): an mTHP swap-in from zram (alloc_swap_folio(), v6.12)
 * counts as a zero fill.
 */
static __always_inline int classify(struct task_struct *task, struct cpu_slot *sl,
				    __u32 gfp, unsigned int order, bool old, struct vma_info *vi)
{
	struct fault_ctx *f = &sl->f;
	bool perf = f->error_code & FAULT_NO_ERRCODE;

	if (gfp & gfp_zero)
		return ALLOC_ZERO;
	/* an order-0 page of a read fault: a page cache fill or a swap-in */
	if (!order && !perf && !(f->error_code & FAULT_ERR_WRITE))
		return ALLOC_OTHER;
	/* a copy or fill whose VMA is unknown: counted as such
	 * (fault_unclassified_pages), never dropped */
	if (old ? vmacache_vma(task, f->address, &vi->flags, &vi->file) : vma_of(task, sl, vi))
		return ALLOC_UNCLASSIFIED;
	if (vi->flags & VM_SHARED_FLAG)
		return ALLOC_OTHER;	/* write-notify or page cache fill */
	if (order)
		return vi->file ? ALLOC_OTHER : ALLOC_ZERO;
	if (perf) {
		if (vi->file)	/* the copy, or a shmem page of a read */
			return old ? ALLOC_COW_FILE : ALLOC_COW_FILE_CAND;
		return ALLOC_COW_ANON;
	}
	if (f->error_code & FAULT_ERR_PROT)	/* present, write-protected */
		return vi->file ? ALLOC_COW_FILE : ALLOC_COW_ANON;
	/* not present: a private file page is copied from the page cache;
	 * an anon one without __GFP_ZERO is a swap-in */
	return vi->file ? ALLOC_COW_FILE : ALLOC_OTHER;
}

/* What a copied mapping is (enum memacct_cow_kind), from its VMA and the
 * mm's brk and stack (task->mm: the fault's own) */
static __always_inline __u64 cow_kind(struct task_struct *task, const struct vma_info *vi,
				      int kind)
{
	struct mm_struct *mm;

	if (kind == ALLOC_COW_FILE || kind == ALLOC_COW_FILE_CAND)
		return MEMACCT_COW_KIND_FILE;
	if (vi->flags & VM_GROWSDOWN_FLAG)
		return MEMACCT_COW_KIND_STACK;
	mm = task->mm;
	if (!mm)
		return MEMACCT_COW_KIND_ANON;
	if (vi->start < mm->brk && vi->end > mm->start_brk)
		return MEMACCT_COW_KIND_HEAP;
	if (vi->start <= mm->start_stack && mm->start_stack < vi->end)
		return MEMACCT_COW_KIND_STACK;
	return MEMACCT_COW_KIND_ANON;
}

/*
 * A copy of @pages in @vi's mapping, pending in the CPU slot with the flows:
 * a run of copies in one mapping costs a compare and an add; a copy in
 * another mapping first puts the pending ones in their slot (cowm_flush()),
 * so a batch is always of one mapping.
 */
static __always_inline void cowm_note(struct task_struct *task, struct cpu_slot *sl,
				      const struct vma_info *vi, int kind, __u32 pages)
{
	struct fault_pending *pd = &sl->pend;
	__u64 ck;

	if (pd->cowm_pages && (pd->cowm_start & ~MEMACCT_COW_KIND_MASK) == vi->start) {
		pd->cowm_pages += pages;
	} else {
		cowm_flush(task, pd);
		pd->cowm_start = vi->start | cow_kind(task, vi, kind);
		pd->cowm_end = vi->end;
		pd->cowm_pages = pages;
	}
	/* the flows by kind (a candidate's once resolved: cand_resolve()) */
	ck = pd->cowm_start & MEMACCT_COW_KIND_MASK;
	if (ck < MEMACCT_COW_KIND_NR)
		pd->cowk[ck] += pages;
}

/* The allocated page's address (tracepoint argument 0) as a number; 0: the
 * allocation failed (mm_page_alloc fires then too: a failed THP
 * allocation, whose fault falls back to a small page, classified then). */
static __always_inline __u64 alloc_page_addr(unsigned long long *ctx)
{
	__u64 page_addr = 0;

	bpf_probe_read_kernel(&page_addr, sizeof(page_addr), &ctx[0]);
	return page_addr;
}

/* @page_addr: the struct page's address as a number (the verifier forbids
 * arithmetic on the trusted pointer itself) */
static __always_inline int page_node(__u64 page_addr)
{
	__u64 base = vmemmap_base_get(), pfn;

	if (!base)	/* not measured, and no constant (arm64) */
		return -1;
	pfn = (page_addr - base) / bpf_core_type_size(struct page);

	for (int i = 0; i < MEMACCT_MAX_NODE_RANGES; i++) {
		if (i >= nr_node_ranges)
			break;
		if (pfn >= node_ranges[i].start_pfn && pfn < node_ranges[i].end_pfn)
			return node_ranges[i].node;
	}
	return -1;
}

/* The fault moved out of the CPU slot by sched_switch, taken back (or NULL). */
static __always_inline struct cpu_slot *slot_take_back(struct task_struct *task, bool old)
{
	struct fault_state *st;
	struct fault_ctx *sp;
	struct cpu_slot *sl;
	__u32 tid;

	if (old) {
		tid = (__u32)bpf_get_current_pid_tgid();
		sp = bpf_map_lookup_elem(&fault_spill, &tid);
		if (!sp)
			return NULL;
		sl = sp->state != FAULT_NONE ? slot_claim((__u64)task) : NULL;
		if (sl)
			sl->f = *sp;
		bpf_map_delete_elem(&fault_spill, &tid);
		return sl;
	}
	st = bpf_task_storage_get(&fault_states, task, 0, 0);
	if (!st || st->f.state == FAULT_NONE)
		return NULL;
	sl = slot_claim((__u64)task);
	if (sl) {
		if (sl->f.cand)	/* the thread's fault before this one */
			cand_resolve(&sl->f, &sl->pend);
		sl->f = st->f;
	}
	if (st->f.cand) {	/* moved to the slot, or lost with it */
		st->f.cand = 0;
		__sync_fetch_and_add(&cand_stored, -1);
	}
	st->f.state = FAULT_NONE;
	return sl;
}

static __always_inline int page_alloc(unsigned long long *ctx, unsigned int order,
				      __u32 gfp, bool old)
{
	struct vma_info vi = {};
	struct task_struct *task;
	struct cpu_slot *sl;
	struct fault_ctx *f;
	int kind = ALLOC_OTHER, node;
	bool remote = false;
	__u32 zero = 0, pages = 1U << (order & 31);

	/* kernel allocations (most calls) leave before any helper call */
	if ((gfp & gfp_user) != gfp_user)
		return 0;
	task = cur_task(old);
	sl = bpf_map_lookup_elem(&cpu_slots, &zero);
	if (!sl)
		return 0;
	if (sl->task != (__u64)task) {
		/* the thread left the CPU inside its fault: take the fault
		 * back (sched_switch put it in task storage or the hash) */
		sl = slot_take_back(task, old);
		if (!sl)
			return 0;
	}
	f = &sl->f;
	if (f->state == FAULT_NONE)
		return 0;
	if (f->flt != (old ? task_flt_old(task) : task_flt(task))) {
		f->state = FAULT_NONE;	/* that fault has finished */
		if (!old && f->cand)
			cand_resolve(f, &sl->pend);
		return 0;
	}
	if (f->state == FAULT_ACTIVE &&
	    (order ? (gfp & gfp_large) == gfp_large && alloc_page_addr(ctx) :
		     (gfp & ~(gfp_zero | gfp_comp)) == gfp_highuser_movable)) {
		f->state = FAULT_CLASSIFIED;
		kind = classify(task, sl, gfp, order, old, &vi);
		/* a file-CoW candidate adds its page once resolved
		 * (cand_resolve()): its mapping is made the pending one */
		if (!old && (kind == ALLOC_COW_ANON || kind == ALLOC_COW_FILE ||
			     kind == ALLOC_COW_FILE_CAND))
			cowm_note(task, sl, &vi, kind, kind == ALLOC_COW_FILE_CAND ? 0 : pages);
	}
	if (kind == ALLOC_COW_FILE_CAND) {
		__u64 page_addr = 0;

		bpf_probe_read_kernel(&page_addr, sizeof(page_addr), &ctx[0]);
		f->cand = page_addr;
		f->cand_map = vi.start | MEMACCT_COW_KIND_FILE;
		f->cand_end = vi.end;
	}
	if (nr_node_ranges) {
		__u64 page_addr = 0;

		bpf_probe_read_kernel(&page_addr, sizeof(page_addr), &ctx[0]);
		node = page_node(page_addr);
		remote = node >= 0 && node != bpf_get_numa_node_id();
	} else if (kind == ALLOC_OTHER) {
		return 0;
	}
	/* in pages: a huge page counts as its bytes */
	switch (kind) {
	case ALLOC_ZERO:
		sl->pend.zero_fill += pages;
		break;
	case ALLOC_COW_ANON:
		sl->pend.cow += pages;
		break;
	case ALLOC_COW_FILE:
		sl->pend.cow_file += pages;
		break;
	case ALLOC_UNCLASSIFIED:
		sl->pend.unclassified += pages;
		break;
	}
	if (nr_node_ranges) {
		sl->pend.fault_alloc += pages;
		if (remote)
			sl->pend.remote += pages;
	}
	if (++sl->pend.n >= FOLD_BATCH)
		fold_any(task, &sl->pend, old);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc, struct page *page, unsigned int order, gfp_t gfp_flags,
	     int migratetype)
{
	return page_alloc(ctx, order, gfp_flags, false);
}

/*
 * The thread leaves the CPU (prev is current here): fold what it counted, so
 * that readers of the procs map see exact flows for every thread that is not
 * running; a fault it is still inside (it sleeps in reclaim or I/O, or was
 * preempted) moves to its task storage; the slot is freed. A thread that did
 * not fault since it last ran costs one array lookup.
 */
static __always_inline int switch_out(struct task_struct *task, bool old)
{
	struct fault_state *st;
	struct cpu_slot *sl;
	__u32 zero = 0, tid;
	bool in_fault;

	sl = bpf_map_lookup_elem(&cpu_slots, &zero);
	if (!sl || sl->task != (__u64)task)
		return 0;
	in_fault = sl->f.flt == (old ? task_flt_old(task) : task_flt(task));
	if (!old) {
		if (sl->f.cand && !in_fault)
			cand_resolve(&sl->f, &sl->pend);
		cand_resolve_stored(task, &sl->pend);
	}
	if (sl->pend.n)
		fold_any(task, &sl->pend, old);
	/* still inside the fault (no fault finished since it entered), with
	 * an allocation left to classify or, with NUMA nodes, to place, or a
	 * file-CoW candidate to resolve once it has finished */
	if (sl->f.state != FAULT_NONE && in_fault &&
	    (sl->f.state == FAULT_ACTIVE || nr_node_ranges || sl->f.cand)) {
		if (old) {
			tid = (__u32)bpf_get_current_pid_tgid();
			if (bpf_map_update_elem(&fault_spill, &tid, &sl->f, BPF_ANY))
				drop(MEMACCT_DROP_TASK_STORAGE);
		} else {
			st = bpf_task_storage_get(&fault_states, task, 0,
						  BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (st) {
				st->f = sl->f;
				if (sl->f.cand)
					__sync_fetch_and_add(&cand_stored, 1);
			} else {
				drop(MEMACCT_DROP_TASK_STORAGE);
			}
		}
	}
	sl->f.state = FAULT_NONE;
	sl->f.cand = 0;
	sl->task = 0;
	return 0;
}

/* prev is current: the argument costs one load, the helper a call */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev)
{
	return switch_out(prev, false);
}

/*
 * Measuring the struct page array base (user/kernel/bpf_loader.c measure_vmemmap()):
 * attached only while userspace faults in pages of its own, before the other
 * programs attach. vmemmap_page is the last order-0 page allocated by thread
 * vmemmap_tid (the faulting page: its page table page, if any, comes first).
 */
__u32 vmemmap_tid;
__u64 vmemmap_page;
__u32 vmemmap_struct_size;	/* sizeof(struct page), bytes */
__u64 vmemmap_measured;		/* the base it gave; 0: not measured */
__u64 vmemmap_base_addr;	/* &vmemmap_base from kallsyms when not measured */

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(vmemmap_probe, struct page *page, unsigned int order)
{
	if (vmemmap_tid && (__u32)bpf_get_current_pid_tgid() == vmemmap_tid && !order) {
		vmemmap_struct_size = bpf_core_type_size(struct page);
		vmemmap_page = (__u64)page;
	}
	return 0;
}

/*
 * The same programs for kernels without task storage or bpf_find_vma()
 * (5.10 .. 5.16; user/kernel/bpf_loader.c loads one set): the current task through
 * probe reads (no bpf_get_current_task_btf() before v5.11), a fault moved out
 * of its CPU slot in the fault_spill hash, the VMA from the task's vmacache
 * (core_fixes.bpf.h) instead of bpf_find_vma().
 */
SEC("tp_btf/page_fault_user")
int BPF_PROG(page_fault_user_old, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return fault_enter(address, error_code, true);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(page_fault_kernel_old, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (address >= USER_ADDR_MAX)
		return 0;
	return fault_enter(address, error_code, true);
}

SEC("perf_event")
int page_fault_perf_old(struct bpf_perf_event_data *ctx)
{
	return fault_enter(ctx->addr, FAULT_NO_ERRCODE, true);
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc_old, struct page *page, unsigned int order, gfp_t gfp_flags,
	     int migratetype)
{
	return page_alloc(ctx, order, gfp_flags, true);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_old, bool preempt, struct task_struct *prev)
{
	return switch_out(prev, true);
}
