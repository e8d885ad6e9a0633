/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * maple.bpf.h - the VMA of a user address without mmap_lock: a speculative
 * walk of mm->mm_mt (the maple tree of VMAs), for the faults whose
 * bpf_find_vma() fails with -EBUSY (kernel/bpf/task_iter.c: the mmap_lock
 * read-trylock fails while a writer holds or waits for it, e.g. another
 * thread's mmap/mprotect/munmap; or the per-CPU unlock irq_work is busy).
 *
 * The same lookup the kernel makes without the lock in
 * kernel/events/uprobes.c find_active_uprobe_speculative() and
 * kernel/futex/core.c: under RCU (tp_btf programs run inside
 * rcu_read_lock(), kernel/trace/bpf_trace.c __bpf_trace_run()), maple nodes
 * are RCU-freed (mm trees have MT_FLAGS_USE_RCU) and VMAs come from a
 * SLAB_TYPESAFE_BY_RCU cache, so a stale pointer still points at a VMA; the
 * result is validated by vm_mm == mm and vm_start <= addr < vm_end.
 *
 * Why a validated result is the faulting VMA even while a writer changes
 * other VMAs (mm_lock_seq odd or moving): the caller is inside the fault of
 * @addr (page_alloc() checked the fault count), and a fault holds either
 * mmap_lock for read (then no writer runs at all) or, since v6.4 (commit
 * 5e31275cc997, per-VMA locks), the read lock of that very VMA, which any
 * change of its range, flags or file must first take for write
 * (vma_start_write()). So the VMA covering @addr cannot change or leave the
 * tree while the walk runs, and the tree already held it when the fault
 * started, before this program ran.
 *
 * The maple tree replaced the VMA rbtree in v6.1, commit d4af56c5c7c6 ("mm:
 * start tracking VMAs with maple tree"); before, mm->mm_mt does not exist and
 * the walk reports failure. The node encoding is macros in
 * include/linux/maple_tree.h and lib/maple_tree.c (not in BTF), unchanged
 * since v6.1: a node pointer ("enode") is a 256-byte aligned node with its
 * type in bits 3-6 (mt_mk_node()), the root one also tagged 0b10 in bits 0-1
 * (mt_mk_root()); a dead node's parent points to itself. Pivots are inclusive range ends; the pivot at a node's data end is
 * the node's maximum, so the first pivot >= addr is found before the unused
 * (zero) pivots, as mtree_lookup_walk() relies on since v6.8.
 */
#ifndef MEMACCT_MAPLE_BPF_H
#define MEMACCT_MAPLE_BPF_H

#include <bpf/bpf_core_read.h>

#define MAPLE_NODE_MASK		255UL
#define MAPLE_NODE_TYPE_SHIFT	3
#define MAPLE_NODE_TYPE_MASK	0x0F
#define MAPLE_NODE_WORDS	32	/* 256-byte node */
/* Tree height bound: 65,530 VMAs (vm.max_map_count) need at most 7 levels
 * of half-full nodes; the kernel's own MAPLE_HEIGHT_MAX is 31. */
#define MAPLE_WALK_LEVELS	10

struct maple_buf {
	__u64 w[MAPLE_NODE_WORDS];
};

struct maple_bufs_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maple_buf);
};
extern struct maple_bufs_def maple_bufs SEC(".maps");	/* the faults unit's */

/* What the classifier needs of a VMA. */
struct vma_info {
	__u64 flags;
	__u64 start, end;
	bool file;
};

#define MAPLE_RETRY	(-2)
#define MAPLE_WALK_TRIES	4

/*
 * The slot of a node whose range holds @addr: the first of its @npiv pivots
 * >= @addr, else @npiv (the node's last slot). A global function, as the two
 * below: verified once on its own, not again for every level, node type and
 * try of the walk (inlined, the three nested loops were 87,975 instructions
 * and 110-170 ms of mm_page_alloc's verification on 6.18: issue 46).
 */
__noinline int maple_pivot_slot(const struct maple_buf *b, __u64 addr, __u32 npiv)
{
	__u32 off;

	if (!b)
		return 0;
	for (off = 0; off < 15; off++)
		if (off >= npiv || b->w[1 + off] >= addr)
			break;
	return off;
}

/*
 * One walk of the VMA tree of the mm at @mm_addr to the VMA containing
 * @addr; fills @vi from it. 0: found and validated; MAPLE_RETRY: a dead
 * node was met or the result did not validate (the tree changed under the
 * walk: the kernel's own readers restart from the root then, mas_reset());
 * -1: no VMA to find.
 */
__noinline int maple_walk(__u64 mm_addr, __u64 addr, struct vma_info *vi)
{
	int leaf = bpf_core_enum_value(enum maple_type, maple_leaf_64);
	int range = bpf_core_enum_value(enum maple_type, maple_range_64);
	int arange = bpf_core_enum_value(enum maple_type, maple_arange_64);
	struct mm_struct *mm = (struct mm_struct *)mm_addr;
	struct vm_area_struct *vma;
	__u64 enode = 0, node;
	__u32 type, npiv, slot0, off, zero = 0;
	struct maple_buf *b;

	b = bpf_map_lookup_elem(&maple_bufs, &zero);
	if (!b || !vi)
		return -1;
	if (bpf_probe_read_kernel(&enode, sizeof(enode), &mm->mm_mt.ma_root))
		return -1;
	/* the root pointer is a node when tagged 0b10 (MAPLE_ROOT_NODE, as
	 * xa_is_node()); else the tree is empty or one entry at index 0 */
	if ((enode & 3) != 2 || enode <= 4096)
		return -1;
	for (int level = 0; level < MAPLE_WALK_LEVELS; level++) {
		/* child pointers: node | type << 3 | MAPLE_ENODE_NULL (0x04) */
		if (enode <= 4096)
			return MAPLE_RETRY;
		node = enode & ~MAPLE_NODE_MASK;
		type = (enode >> MAPLE_NODE_TYPE_SHIFT) & MAPLE_NODE_TYPE_MASK;
		if (type == arange) {
			npiv = 9;	/* struct maple_arange_64 */
			slot0 = 10;
		} else if (type == range || type == leaf) {
			npiv = 15;	/* struct maple_range_64 */
			slot0 = 16;
		} else {
			return MAPLE_RETRY;
		}
		if (bpf_probe_read_kernel(b->w, sizeof(b->w), (void *)node))
			return MAPLE_RETRY;
		if ((b->w[0] & ~MAPLE_NODE_MASK) == node)
			return MAPLE_RETRY;	/* dead: replaced under us */
		off = maple_pivot_slot(b, addr, npiv);
		enode = b->w[(slot0 + off) & (MAPLE_NODE_WORDS - 1)];
		if (type != leaf)
			continue;
		vma = (struct vm_area_struct *)enode;
		if (!vma)
			return MAPLE_RETRY;	/* a gap: the fault's VMA is there */
		if ((__u64)BPF_CORE_READ(vma, vm_mm) != mm_addr)
			return MAPLE_RETRY;
		vi->start = BPF_CORE_READ(vma, vm_start);
		vi->end = BPF_CORE_READ(vma, vm_end);
		if (addr < vi->start || addr >= vi->end)
			return MAPLE_RETRY;
		vi->flags = BPF_CORE_READ(vma, vm_flags);
		vi->file = BPF_CORE_READ(vma, vm_file) != NULL;
		return 0;
	}
	return MAPLE_RETRY;
}

/*
 * The VMA containing @addr, from the maple tree of the mm at @mm_addr (a
 * struct mm_struct address) without mmap_lock; fills @vi. Returns 0 when
 * found and validated, -1 otherwise (no maple tree on this kernel, or
 * MAPLE_WALK_TRIES walks met a tree changing under them).
 *
 * A global function: the verifier checks it once, on its own, instead of
 * once for every state of every caller that reaches it (as a static
 * subprogram it cost ~2 s of verification at every load).
 */
__noinline int vma_lockless(__u64 mm_addr, __u64 addr, struct vma_info *vi)
{
	struct mm_struct *mm = (struct mm_struct *)mm_addr;

	if (!vi || !bpf_core_field_exists(mm->mm_mt))
		return -1;
	for (int i = 0; i < MAPLE_WALK_TRIES; i++) {
		int err = maple_walk(mm_addr, addr, vi);

		if (err != MAPLE_RETRY)
			return err;
	}
	return -1;
}

#endif /* MEMACCT_MAPLE_BPF_H */
