/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * core_fixes.bpf.h - every kernel difference memacct meets, each as a
 * ___flavor struct plus bpf_core_field_exists()/bpf_core_type_exists(), with
 * the kernel commit that made it. Never #if LINUX_VERSION_CODE.
 */
#ifndef MEMACCT_CORE_FIXES_BPF_H
#define MEMACCT_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/*
 * gfp bits are read by userspace from the kernel's BTF (user/kernel/bpf_loader.c
 * gfp_bits_from_btf()) and handed over in rodata: since v6.10, commit
 * 772dd0342727 ("mm: enumerate all gfp flags") they are an anonymous enum,
 * which CO-RE relocations cannot name; before, #defines of the same values.
 */

/*
 * mm->rss_stat: an array of struct percpu_counter since v6.2, commit
 * f1a7941243c1 ("mm: convert mm's rss stats into percpu_counter"); before,
 * struct mm_rss_stat { atomic_long_t count[NR_MM_COUNTERS]; }.
 *
 * A percpu_counter is a central count plus a s32 delta per CPU that is
 * folded into the count only when it reaches percpu_counter_batch
 * (max(32, 2 x online CPUs)): the count alone is low by up to a batch per
 * CPU per counter, 20-25% of the RSS of a cgroup of 2,001 small processes
 * on the 2-CPU VM here, 40% in issue 23's report, more with more CPUs. /proc/PID/status and statm read the sum, get_mm_counter_sum() ->
 * percpu_counter_sum_positive(), since v6.16, commit 82241a83cd15 ("mm: fix
 * the inaccurate memory statistics issue for users"); so do these readers:
 * count + each CPU's delta, as __percpu_counter_sum() does (it walks the
 * online CPUs; a CPU that went offline had its delta folded and zeroed by
 * percpu_counter_cpu_dead(), so summing every possible CPU is the same).
 * Exact but for an update racing the read (the kernel takes fbc->lock).
 *
 * The deltas are at counters + __per_cpu_offset[cpu]. bpf_per_cpu_ptr()
 * cannot take rss_stat[].counters: vmlinux BTF from GCC has no
 * btf_type_tag("percpu") (none in the 6.18 BTF here), so the field is a
 * plain s32 *; nor can it take a per-CPU variable such as x86's
 * this_cpu_off here: a typed ksym needs its address from kallsyms, which
 * has no data symbols without CONFIG_KALLSYMS_ALL (Debian). The offsets
 * are learnt, once (per-CPU areas do not move), from the PERCPU_ARRAY
 * rss_cpu_map: bpf_map_lookup_percpu_elem() (v5.19, commit 07343110b293
 * ("bpf: add bpf_map_lookup_percpu_elem for percpu map")) gives its element
 * on CPU n, per_cpu_ptr(pptrs[0], n) = pptrs[0] + __per_cpu_offset[n].
 * With rss_cpus left 0 by userspace, the central count alone, as before.
 *
 * The 4 counters of an mm are one per-CPU allocation since v6.6, commit
 * 14ef95be6f55 ("kernel/fork: group allocation/free of per-cpu counters for
 * mm struct"): counters[m] = counters[0] + m (one 16-byte read per CPU gives
 * all of them); the ranges are checked, else one read per counter.
 */
struct mm_rss_stat___old {
	atomic_long_t count[4];
};

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
};

#define RSS_MAX_CPUS	8192	/* x86 NR_CPUS at most */

extern const volatile __u32 rss_cpus;	/* possible CPUs (userspace); 0: count only */
/*
 * Whether mm_rss_pages() reads the deltas with direct loads (PROBE_MEM, a
 * few ns each, and a CPU's misses overlap) rather than a helper call per
 * CPU: since v6.17, commit 2d5c91e1cc14 ("bpf: rdonly_untrusted_mem for btf
 * id walk pointer leafs"), a pointer to a scalar loaded from a BTF pointer
 * (rss_stat[].counters) may be dereferenced, at any offset; before, it is a
 * scalar and the verifier refuses the program. No CO-RE test tells a
 * verifier's abilities: userspace sets it, and loads again without it when
 * the load fails (user/kernel/task_walk.c). False: the branch is never verified.
 */
extern const volatile bool rss_direct;
/* __per_cpu_offset[], learnt once, and rss_cpus once learnt (bpf/mm_rss.bpf.c) */
extern __u64 rss_cpu_off[RSS_MAX_CPUS] SEC(".data.rss_cpu_off");
extern __u32 rss_cpu_off_n SEC(".data.rss_cpu_off");

struct rss_cpu_map_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};
extern struct rss_cpu_map_def rss_cpu_map SEC(".maps");

/*
 * Learn every CPU's per-CPU offset once; false where they cannot be read.
 * The map's and the elements' addresses go through bpf_probe_read_kernel()
 * to become plain numbers (the verifier forbids arithmetic on them).
 */
static __always_inline bool rss_cpu_offsets(void)
{
	__u64 map = (__u64)(void *)&rss_cpu_map, base = 0;
	struct bpf_array *arr;
	__u32 zero = 0;

	if (rss_cpu_off_n)
		return true;
	if (!rss_cpus ||
	    !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_map_lookup_percpu_elem))
		return false;
	bpf_probe_read_kernel(&map, sizeof(map), &map);
	arr = (void *)map;
	bpf_core_read(&base, sizeof(base), &arr->pptrs[0]);
	if (!base)
		return false;
	for (__u32 cpu = 0; cpu < RSS_MAX_CPUS; cpu++) {
		__u64 elem;
		void *e;

		if (cpu >= rss_cpus)
			break;
		e = bpf_map_lookup_percpu_elem(&rss_cpu_map, &zero, cpu);
		if (!e)
			return false;
		elem = (__u64)e;
		bpf_probe_read_kernel(&elem, sizeof(elem), &elem);
		rss_cpu_off[cpu] = elem - base;
	}
	rss_cpu_off_n = rss_cpus;
	return true;
}

/*
 * Σ of @n s32 deltas per CPU from the per-CPU address @pcpu into @sum[n]
 * (n <= 4: the 4 counters of an mm side by side, or one).
 */
static __always_inline void percpu_s32_sums(__u64 pcpu, int n, long sum[4])
{
	if (!pcpu || !rss_cpu_offsets())
		return;
	for (__u32 cpu = 0; cpu < RSS_MAX_CPUS; cpu++) {
		__s32 d[4] = {};

		if (cpu >= rss_cpus)
			break;
		if (n == 4) {
			bpf_probe_read_kernel(d, sizeof(d),
					      (void *)(pcpu + rss_cpu_off[cpu]));
			sum[0] += d[0];
			sum[1] += d[1];
			sum[2] += d[2];
			sum[3] += d[3];
		} else {
			bpf_probe_read_kernel(d, sizeof(d[0]),
					      (void *)(pcpu + rss_cpu_off[cpu]));
			sum[0] += d[0];
		}
	}
}

/*
 * For programs with a BTF pointer to the mm (all callers): a direct load on
 * >= 6.2. The old layout stays a bpf_probe_read_kernel(): a direct load through the
 * ___old flavor was refused by the 6.1 verifier ("access beyond struct (anon)",
 * mm_struct's fields sit in an anonymous struct there). Not
 * bpf_core_type_exists(struct percpu_counter): that type is older than the
 * change (seen failing on 5.10 and 6.1).
 * Returns pages, what /proc/PID/status shows (above): the count plus every
 * CPU's delta on >= 6.2, one read per CPU.
 */
static __always_inline __u64 mm_counter_pages_direct(struct mm_struct *mm, int member)
{
	struct mm_struct___old *old = (void *)mm;
	long v[4] = {};

	if (bpf_core_field_exists(old->rss_stat.count)) {
		v[0] = BPF_CORE_READ(old, rss_stat.count[member].counter);
	} else {
		v[0] = mm->rss_stat[member].count;
		percpu_s32_sums((__u64)mm->rss_stat[member].counters, 1, v);
	}
	return v[0] < 0 ? 0 : v[0];
}

/*
 * RSS of @mm in pages, anon, file and shmem, each as mm_counter_pages_direct()
 * reads it, with one read per CPU where the counters are side by side.
 */
static __always_inline void mm_rss_pages(struct mm_struct *mm, __u64 *anon, __u64 *file,
					 __u64 *shmem)
{
	long v[4] = {};
	__u64 c0, c;
	int m;

	if (bpf_core_field_exists(((struct mm_struct___old *)mm)->rss_stat.count)) {
		*anon = mm_counter_pages_direct(mm, MM_ANONPAGES);
		*file = mm_counter_pages_direct(mm, MM_FILEPAGES);
		*shmem = mm_counter_pages_direct(mm, MM_SHMEMPAGES);
		return;
	}
	c0 = (__u64)mm->rss_stat[0].counters;
	for (m = 1; m < 4; m++) {
		c = (__u64)mm->rss_stat[m].counters;
		if (c != c0 + m * sizeof(__s32))
			break;
	}
	if (m < 4) {
		*anon = mm_counter_pages_direct(mm, MM_ANONPAGES);
		*file = mm_counter_pages_direct(mm, MM_FILEPAGES);
		*shmem = mm_counter_pages_direct(mm, MM_SHMEMPAGES);
		return;
	}
	if (rss_direct) {
		const char *pcpu = (const char *)mm->rss_stat[0].counters;

		/* the offsets checked before the loop, not in its condition:
		 * there the loop's back-edge fell on a call's fall-through,
		 * which check_cfg() of 5.10 and 6.1 refuses ("back-edge from
		 * insn 645 to 646") even in this branch, dead on them */
		if (pcpu && rss_cpu_offsets()) {
			for (__u32 cpu = 0; cpu < RSS_MAX_CPUS; cpu++) {
				const __s32 *d;

				if (cpu >= rss_cpus)
					break;
				d = (const __s32 *)(pcpu + rss_cpu_off[cpu]);
				v[0] += d[0];
				v[1] += d[1];
				v[2] += d[2];
				v[3] += d[3];
			}
		}
	} else {
		percpu_s32_sums(c0, 4, v);
	}
	v[MM_ANONPAGES] += mm->rss_stat[MM_ANONPAGES].count;
	v[MM_FILEPAGES] += mm->rss_stat[MM_FILEPAGES].count;
	v[MM_SHMEMPAGES] += mm->rss_stat[MM_SHMEMPAGES].count;
	*anon = v[MM_ANONPAGES] < 0 ? 0 : v[MM_ANONPAGES];
	*file = v[MM_FILEPAGES] < 0 ? 0 : v[MM_FILEPAGES];
	*shmem = v[MM_SHMEMPAGES] < 0 ? 0 : v[MM_SHMEMPAGES];
}

/*
 * cgroup ancestry: cgroup->ancestors[] (struct cgroup *) since v6.0, commit
 * 7f203bc89eb6 ("cgroup: Replace cgroup->ancestor_ids[] with ->ancestors[]");
 * before, u64 cgroup->ancestor_ids[]. Both are indexed by level, [level] is
 * the cgroup itself.
 */
struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
};

static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	if (bpf_core_field_exists(struct cgroup___old, ancestor_ids)) {
		struct cgroup___old *old = (void *)cg;

		return BPF_CORE_READ(old, ancestor_ids[level]);
	}
	return BPF_CORE_READ(cg, ancestors[level], kn, id);
}

/*
 * vm_flags became a const member of a union in v6.3, commit bc292ab00f6c
 * ("mm: introduce vma->vm_flags wrapper functions"); the name and offset did
 * not change, so a plain CO-RE read works on every kernel.
 */
#define VM_SHARED_FLAG	0x00000008UL
#define VM_GROWSDOWN_FLAG	0x00000100UL

/*
 * struct page array base (page_to_pfn). VMEMMAP_START is 0xffffea0000000000
 * only without KASLR of the memory layout; with CONFIG_RANDOMIZE_MEMORY
 * (Debian, most distributions) it is the variable vmemmap_base, since v4.9,
 * commit 25dfe4785332 ("x86/mm/64: Enable KASLR for vmemmap memory region").
 * In order: the base userspace measured before attaching (vmemmap_measured,
 * user/kernel/bpf_loader.c measure_vmemmap(): page addresses from mm_page_alloc
 * against frame numbers from pagemap; it works where kallsyms has no data
 * symbols, as on kernels without CONFIG_KALLSYMS_ALL, and on arm64, whose
 * vmemmap depends on memstart_addr), on x86 the variable
 * vmemmap_base at the address userspace found in /proc/kallsyms when the
 * measurement failed (vmemmap_base_addr; a typeless __ksym here made libbpf
 * parse all of kallsyms at every load, ~45 ms of memacct run's start), the
 * constant userspace put in rodata (x86; 0 elsewhere: no node known).
 */
extern const volatile __u64 vmemmap_start;
extern __u64 vmemmap_measured;
extern __u64 vmemmap_base_addr;
extern __u64 vmemmap_base_cached;	/* the base found, once */

static __always_inline __u64 vmemmap_base_get(void)
{
	__u64 base = vmemmap_base_cached;

	if (base)
		return base;
	base = vmemmap_measured;
	if (!base && vmemmap_base_addr)
		bpf_probe_read_kernel(&base, sizeof(base), (const void *)vmemmap_base_addr);
	if (!base)
		base = vmemmap_start;
	vmemmap_base_cached = base;
	return base;
}

/*
 * mm->mm_lock_seq: moves when the mmap write lock is released (and, as a
 * seqcount, is odd while it is held), so an unchanged value means no VMA was
 * changed. Added with per-VMA locks in v6.4, commit 5e31275cc997 ("mm: add
 * per-VMA lock and helper functions to control it") as an int, bumped at
 * unlock; a seqcount_t since v6.14, commit eb449bd96954 ("mm: convert
 * mm_lock_seq to a proper seqcount") - hashes as recalled, not verified here.
 * Absent (no CONFIG_PER_VMA_LOCK, < 6.4): false, the caller looks the VMA up
 * every time.
 */
struct mm_struct___lockseq_int {
	int mm_lock_seq;
};

static __always_inline bool mm_vma_seq(struct mm_struct *mm, __u32 *seq)
{
	struct mm_struct___lockseq_int *old = (void *)mm;

	if (bpf_core_field_exists(mm->mm_lock_seq.sequence)) {
		*seq = BPF_CORE_READ(mm, mm_lock_seq.sequence);
		return !(*seq & 1);	/* odd: a writer is changing VMAs now */
	}
	if (bpf_core_field_exists(old->mm_lock_seq)) {
		*seq = BPF_CORE_READ(old, mm_lock_seq);
		return true;
	}
	return false;
}

/*
 * Before v6.1 each task had a small cache of the VMAs find_vma() returned,
 * task->vmacache.vmas[4], valid while its seqnum equals mm->vmacache_seqnum.
 * The fault handler's find_vma() runs before any allocation of the fault and
 * leaves the VMA of the faulting address in one of the four slots (a hit in
 * any slot, or the slot (addr >> PAGE_SHIFT) & 3 on a miss), so the slots are
 * searched as vmacache_find() does. Removed in v6.1, commit 7964cf8caa4d
 * ("mm: remove vmacache"); bpf_find_vma() came in v5.17. The *_old programs
 * (kernels without bpf_find_vma()) read the VMA here. Returns 0 with the
 * VMA's flags and whether it maps a file, -1 if it is not cached.
 */
struct vmacache___old {
	__u64 seqnum;
	struct vm_area_struct *vmas[4];
};

struct task_struct___vmacache {
	struct vmacache___old vmacache;
};

struct mm_struct___vmacache {
	__u64 vmacache_seqnum;
};

static __always_inline int vmacache_vma(struct task_struct *task, __u64 addr,
					__u64 *flags, bool *file)
{
	struct task_struct___vmacache *t = (void *)task;
	struct vm_area_struct *vmas[4] = {};
	struct mm_struct___vmacache *mm;

	if (!bpf_core_field_exists(t->vmacache))
		return -1;
	mm = (void *)BPF_CORE_READ(task, mm);
	if (!mm || BPF_CORE_READ(t, vmacache.seqnum) != BPF_CORE_READ(mm, vmacache_seqnum))
		return -1;
	bpf_core_read(&vmas, sizeof(vmas), &t->vmacache.vmas);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		struct vm_area_struct *vma = vmas[i];

		if (!vma || (void *)BPF_CORE_READ(vma, vm_mm) != (void *)mm ||
		    addr < BPF_CORE_READ(vma, vm_start) || addr >= BPF_CORE_READ(vma, vm_end))
			continue;
		*flags = BPF_CORE_READ(vma, vm_flags);
		*file = BPF_CORE_READ(vma, vm_file) != NULL;
		return 0;
	}
	return -1;
}

/*
 * Helpers and maps newer than the oldest kernel of the matrix (5.10); the
 * programs that need them are left out by user/kernel/bpf_loader.c:
 * - BPF_MAP_TYPE_TASK_STORAGE: v5.11, commit 4cf1bc1f1045 ("bpf: Implement
 *   task local storage"); without it fault_states becomes a 1-entry hash and
 *   the fault programs' *_old variants keep a fault that left its CPU slot in
 *   the fault_spill hash (keyed by thread id) instead.
 * - bpf_find_vma(): v5.17, commit 7c7e3d31e785 ("bpf: Introduce helper
 *   bpf_find_vma"); without it the *_old variants read the vmacache (above).
 * - bpf_get_current_task_btf(): v5.11, commit 3ca1032ab7ab ("bpf: Add
 *   bpf_get_current_task_btf helper"). Programs that only CO-RE-read the
 *   task use current_task(), which falls back to bpf_get_current_task().
 */
static __always_inline struct task_struct *current_task(void)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf))
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * Whether every task pointer the programs hold is a BTF pointer: from v5.11
 * current_task() gives one, and tracepoint arguments are ones. Then fields
 * are direct loads (a few ns each) instead of bpf_probe_read_kernel() calls
 * (a helper call each, ~20 ns here); before, task pointers from
 * bpf_get_current_task() are plain numbers and need the probe reads.
 */
static __always_inline bool task_btf(void)
{
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf);
}

/*
 * oom:mark_victim passed only "int pid" until v6.7, commit 72ba14deb40a
 * ("mm: oom: add more information to the mark_victim tracepoint" - hash as
 * recalled, not verified here), which made it (struct task_struct *, uid_t).
 * user/kernel/bpf_loader.c reads the first parameter of btf_trace_mark_victim and
 * loads tp_btf/mark_victim or the classic tp/oom/mark_victim fallback.
 */

/*
 * FOLL_PIN page references outstanding now, host-wide: the node counters
 * NR_FOLL_PIN_ACQUIRED - NR_FOLL_PIN_RELEASED (enum node_stat_item, since
 * v5.7, commit 1970dc6f5226 ("mm/gup: /proc/vmstat: pin_user_pages
 * (FOLL_PIN) reporting")) summed over the nodes, each node being
 * pgdat->vm_stat[] plus every CPU's not yet folded pgdat->per_cpu_nodestats
 * diff (v4.8, commit 75ef71840539 ("mm, vmstat: add infrastructure for
 * per-node vmstats")) - what /proc/vmstat shows after stat_refresh, without
 * its per-CPU lag. The globals vm_node_stat[] and node_data[] are neither in
 * kallsyms (no CONFIG_KALLSYMS_ALL on Debian) nor in BTF (pahole emits only
 * per-CPU variables), so:
 * - a node's pglist_data is reached through any memcg:
 *   mem_cgroup->nodeinfo[nid]->lruvec.pgdat (CONFIG_MEMCG; nodeinfo[] has an
 *   entry per possible node);
 * - a CPU's per-CPU offset (__per_cpu_offset[cpu], not in BTF either; nor
 *   is this_cpu_off readable as a ksym without kallsyms of data) is learnt
 *   by each CPU itself: a PERCPU_ARRAY lookup returns the element's
 *   __percpu base plus this CPU's offset (dma.bpf.c cpu_off_learn());
 *   userspace runs a syscall on every CPU it may use after attach
 *   (loader_learn_cpus()). A CPU never learnt (offline: its diffs were
 *   folded when it went down) counts 0.
 * Exact but for a fold in progress on another CPU (its diff and the node
 * counter move in two steps). Cost: nodes x (1 + CPUs) kernel reads.
 */
#define FOLL_PIN_MAX_NODES	64
#define FOLL_PIN_MAX_CPUS	1024

extern const volatile __u32 foll_pin_nodes;	/* nr_node_ids (userspace) */
extern const volatile __u32 foll_pin_cpus;	/* possible CPUs (userspace) */
extern __u64 foll_pin_pgdat[FOLL_PIN_MAX_NODES];	/* cached, never freed */
extern __u64 foll_pin_cpu_off[FOLL_PIN_MAX_CPUS];	/* 0: not learnt */

/* Can foll_pin_now() read the counters on this kernel? */
static __always_inline bool foll_pin_readable(void)
{
	return bpf_core_enum_value_exists(enum node_stat_item, NR_FOLL_PIN_ACQUIRED) &&
	       bpf_core_enum_value_exists(enum node_stat_item, NR_FOLL_PIN_RELEASED) &&
	       bpf_core_field_exists(struct pglist_data, per_cpu_nodestats) &&
	       bpf_core_field_exists(struct lruvec, pgdat);
}

/* pglist_data of node @nid through @task's memcg; 0 if unknown. */
static __always_inline __u64 foll_pin_node(struct task_struct *task, __u32 nid)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	struct mem_cgroup_per_node *pn = NULL;
	struct css_set *cset;
	struct mem_cgroup *memcg;
	__u64 pgdat;

	if (nid >= FOLL_PIN_MAX_NODES)
		return 0;
	pgdat = foll_pin_pgdat[nid];
	if (pgdat)
		return pgdat;
	cset = BPF_CORE_READ(task, cgroups);
	if (!cset)
		return 0;
	bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	if (!css)
		return 0;
	memcg = (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
	bpf_core_read(&pn, sizeof(pn), &memcg->nodeinfo[nid]);
	if (!pn)
		return 0;
	pgdat = (__u64)BPF_CORE_READ(pn, lruvec.pgdat);
	foll_pin_pgdat[nid] = pgdat;
	return pgdat;
}

/* Outstanding FOLL_PIN references (pages) in *@out; false if unreadable. */
static __always_inline bool foll_pin_now(struct task_struct *task, __s64 *out)
{
	int acq = bpf_core_enum_value(enum node_stat_item, NR_FOLL_PIN_ACQUIRED);
	int rel = bpf_core_enum_value(enum node_stat_item, NR_FOLL_PIN_RELEASED);
	__u32 diff_off = bpf_core_field_offset(struct per_cpu_nodestat, vm_node_stat_diff);
	__s64 sum = 0;

	if (!foll_pin_readable())
		return false;
	for (__u32 nid = 0; nid < FOLL_PIN_MAX_NODES; nid++) {
		struct pglist_data *pgdat;
		__u64 pcp = 0;
		long a = 0, r = 0;

		if (nid >= foll_pin_nodes)
			break;
		pgdat = (void *)foll_pin_node(task, nid);
		if (!pgdat)
			continue;	/* a possible node without memory */
		bpf_core_read(&a, sizeof(a), &pgdat->vm_stat[acq]);
		bpf_core_read(&r, sizeof(r), &pgdat->vm_stat[rel]);
		sum += a - r;
		bpf_core_read(&pcp, sizeof(pcp), &pgdat->per_cpu_nodestats);
		if (!pcp)
			continue;
		for (__u32 cpu = 0; cpu < FOLL_PIN_MAX_CPUS; cpu++) {
			__u64 off;
			__s8 da = 0, dr = 0;

			if (cpu >= foll_pin_cpus)
				break;
			off = foll_pin_cpu_off[cpu];
			if (!off)
				continue;
			if (rel == acq + 1) {	/* adjacent (all kernels so far): one read */
				__s8 d[2] = {};

				bpf_probe_read_kernel(d, 2, (void *)(pcp + off + diff_off + acq));
				da = d[0];
				dr = d[1];
			} else {
				bpf_probe_read_kernel(&da, 1, (void *)(pcp + off + diff_off + acq));
				bpf_probe_read_kernel(&dr, 1, (void *)(pcp + off + diff_off + rel));
			}
			sum += da - dr;
		}
	}
	*out = sum;
	return true;
}

/*
 * What depends on the architecture built for (clang -D__TARGET_ARCH_x86 or
 * __TARGET_ARCH_arm64, as libbpf-tools build; the Makefile's ARCH).
 *
 * FAULT_ERR_PROT, FAULT_ERR_WRITE: the error code bits of the
 * exceptions:page_fault_user/page_fault_kernel tracepoints, which only
 * arch/x86/mm/fault.c raises (the x86 error code,
 * arch/x86/include/asm/trap_pf.h X86_PF_PROT, X86_PF_WRITE). Elsewhere the
 * tracepoint programs are never loaded (user/bpf_loader.c loads them where
 * the kernel's BTF has the tracepoint) and the bits are 0: every fault comes
 * from the perf event hook, FAULT_NO_ERRCODE.
 *
 * USER_ADDR_MAX: the highest user address (TASK_SIZE_MAX); a kernel-mode
 * fault at or above it is not on a user page.
 */
#if defined(__TARGET_ARCH_x86)
#define FAULT_ERR_PROT	(1UL << 0)	/* X86_PF_PROT */
#define FAULT_ERR_WRITE	(1UL << 1)	/* X86_PF_WRITE */
/* x86_64 with 4-level paging */
#define USER_ADDR_MAX	0x00007ffffffff000UL
#elif defined(__TARGET_ARCH_arm64)
#define FAULT_ERR_PROT	0UL
#define FAULT_ERR_WRITE	0UL
/* TASK_SIZE_64 = 1 << vabits_actual, at most 52 bits (CONFIG_ARM64_VA_BITS_52,
 * Debian's 6.12+ arm64 kernels; commit 67e7fdfcc6e4, "arm64: mm: introduce
 * 52-bit userspace support"); a 48-bit kernel's limit is lower, and a fault
 * between the two cannot be a user page's anyway */
#define USER_ADDR_MAX	(1UL << 52)
#else
#error "memacct's BPF objects are built for x86 or arm64: make ARCH=x86|arm64"
#endif

#endif /* MEMACCT_CORE_FIXES_BPF_H */
