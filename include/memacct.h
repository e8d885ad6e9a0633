/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * memacct.h - the only ABI between the BPF programs (bpf/, one unit per
 * concern) and userspace (user/). Fixed-width types and fixed arrays only;
 * nothing here may clash with vmlinux.h. Every counter is in pages (the kernel's unit) unless
 * its name says otherwise; userspace converts to bytes with the page size.
 */
#ifndef MEMACCT_H
#define MEMACCT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* userspace; BPF gets them from vmlinux.h */
#endif

#define MEMACCT_COMM_LEN	16
#define MEMACCT_MAX_NODE_RANGES	64	/* pfn ranges of NUMA nodes (/proc/zoneinfo) */

/*
 * Migration reasons, mirroring the kernel's enum migrate_reason
 * (include/linux/migrate_mode.h). Stable across 5.10..6.18 for the first six;
 * anything the kernel adds later is folded into MEMACCT_MR_OTHER.
 */
enum memacct_migrate_reason {
	MEMACCT_MR_COMPACTION = 0,
	MEMACCT_MR_MEMORY_FAILURE,
	MEMACCT_MR_MEMORY_HOTPLUG,
	MEMACCT_MR_SYSCALL,		/* move_pages, migrate_pages, mbind */
	MEMACCT_MR_MEMPOLICY_MBIND,
	MEMACCT_MR_NUMA_MISPLACED,	/* automatic NUMA balancing */
	MEMACCT_MR_CONTIG_RANGE,
	MEMACCT_MR_OTHER,
	MEMACCT_MR_NR,
};

/* Events that could not be recorded; never silently lost, always reported. */
enum memacct_drop {
	MEMACCT_DROP_PROC_MAP_FULL = 0,	/* procs map full: a process's flows lost */
	MEMACCT_DROP_CGROUP_MAP_FULL,	/* cgroups map full: a cgroup's flows lost */
	MEMACCT_DROP_RINGBUF_FULL,	/* exit record kept in procs map instead */
	MEMACCT_DROP_TASK_STORAGE,	/* per-thread fault state not created */
	MEMACCT_DROP_VMA_BUSY,		/* no longer counted: such faults are in
					 * fault_unclassified_pages (kept for the
					 * report's dropped_events_by_cause key) */
	MEMACCT_DROP_DMA_WINDOW_FULL,	/* a DMA-pinning syscall not measured: 4,096
					 * threads inside such syscalls at once */
	MEMACCT_DROP_OOM_VICTIM_FULL,	/* kernels whose mark_victim passes a pid
					 * only: an OOM kill not counted, 1,024
					 * victims not yet exited */
	MEMACCT_DROP_PROC_ALLOC,	/* a procs record could not be allocated
					 * at that moment (-ENOMEM): as
					 * PROC_MAP_FULL, its flows in its cgroup */
	MEMACCT_DROP_DMA_RANGE_FULL,	/* a range pinned by the NVIDIA driver not
					 * recorded (dma_ranges map full): its pages
					 * counted, its mapping not known */
	MEMACCT_DROP_NV_RANGE_UNKNOWN,	/* an NVIDIA RM allocate/free call whose
					 * parameters memacct could not read (an
					 * unknown layout, or not resident): its
					 * pages counted, its range not known */
	MEMACCT_DROP_OOM_RING_FULL,	/* an OOM kill's record not sent (the
					 * oom_events ring full): the kill is
					 * counted, it is in oom_history */
	MEMACCT_DROP_DMA_RANGE_SLOTS,	/* a range pinned by a syscall that names
					 * it (XDP_UMEM_REG) not recorded: the
					 * process holds MEMACCT_DMA_RANGES
					 * already; its pages counted */
	MEMACCT_DROP_COW_MAPS,		/* CoW pages whose mapping could not be
					 * recorded (cow_maps map full, or every
					 * slot of the process larger): counted,
					 * in cow_by_mapping's unattributed part */
	MEMACCT_DROP_PAGE_CACHE_FILES,	/* page-cache pages whose file could not be
					 * recorded (page_cache map full):
					 * in memory.stat's file, not by file */
	MEMACCT_DROP_NR,
};

/* NVIDIA RM pinning calls seen (BPF global nv_calls[]; "NVIDIA" in bpf/). */
enum memacct_nv_call {
	MEMACCT_NV_PIN_OK = 0,		/* an OS-descriptor allocation that pinned */
	MEMACCT_NV_PIN_FAILED,		/* one that failed (ioctl or RM status) */
	MEMACCT_NV_FREE_KNOWN,		/* a free of a range memacct knew */
	MEMACCT_NV_NR,
};

/* Key of the procs map: a PID alone could be reused by a later process. */
struct memacct_proc_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_boottime_ns;	/* group leader's task->start_boottime */
};

/* What a mapping copied by CoW is (issue 42): struct memacct_flows
 * cow_kind_pages[], struct memacct_cow_map's start. */
enum memacct_cow_kind {
	MEMACCT_COW_KIND_ANON = 1,	/* private anonymous (mmap, malloc's arenas) */
	MEMACCT_COW_KIND_HEAP,		/* anonymous overlapping [mm->start_brk, mm->brk) */
	MEMACCT_COW_KIND_STACK,		/* VM_GROWSDOWN, or holds mm->start_stack */
	MEMACCT_COW_KIND_FILE,		/* a MAP_PRIVATE file mapping */
	MEMACCT_COW_KIND_NR,
};

/* Flows (counts since attach); shared by per-process and per-cgroup records. */
struct memacct_flows {
	__u64 cow_copied_pages;		/* anon CoW after fork (write to a present, write-protected page) */
	__u64 cow_file_copied_pages;	/* first write to a MAP_PRIVATE file page */
	__u64 zero_fill_pages;		/* anon pages allocated zeroed by a fault */
	__u64 fault_alloc_pages;	/* user pages allocated inside this task's faults */
	__u64 remote_numa_alloc_pages;	/* ... of which on a node other than the faulting CPU's */
	__u64 numa_migrated_pages[MEMACCT_MR_NR];	/* mm_migrate_pages, by reason */
	__u64 numa_task_moves;		/* sched_move_numa */
	__u64 numa_task_swaps;		/* sched_swap_numa */
	__u64 oom_kills;		/* oom:mark_victim */
	__u64 memcg_reclaims;		/* vmscan:mm_vmscan_memcg_reclaim_begin */
	__u64 fault_unclassified_pages;	/* write-fault copies/fills whose VMA could
					 * not be read (neither bpf_find_vma() nor
					 * the lockless walk): CoW or not, unknown */
	__u64 cow_kind_pages[MEMACCT_COW_KIND_NR];	/* cow_copied_pages +
					 * cow_file_copied_pages by the kind of the
					 * mapping copied (enum memacct_cow_kind; [0]
					 * unused). v5.17 on (bpf_find_vma()): their
					 * sum is the two; before, all 0 */
};

#define MEMACCT_DMA_ESTIMATE	(1U << 0)	/* a dma figure is an estimate:
						 * another pin window overlapped,
						 * or a release was matched by size */

/*
 * Pinned memory gauges: mm->locked_vm / mm->pinned_vm, and dma_pinned: pages
 * pinned by FOLL_PIN (pin_user_pages) inside the process's own syscalls
 * (setsockopt SOL_XDP, ioctl on character devices, io_uring_register) net of
 * what those syscalls added to pinned_vm: the FOLL_PIN counter delta across
 * the syscall (bpf/core_fixes.bpf.h foll_pin_now()). Released by the
 * process's syscalls or, after close()/exit, by the kworker that unpins.
 * Not net of mlock: userspace subtracts pages of the ranges below that lie
 * in VM_LOCKED mappings (counted in locked_vm already).
 */
struct memacct_pinned {
	__u64 locked_vm_pages;
	__u64 locked_vm_peak_pages;
	__u64 pinned_vm_pages;
	__u64 pinned_vm_peak_pages;
	__u64 pinned_peak_pages;	/* peak of locked_vm + pinned_vm */
	__u64 dma_pinned_pages;		/* FOLL_PIN pages not in pinned_vm */
	__u64 dma_pinned_peak_pages;
	__u32 dma_flags;		/* MEMACCT_DMA_* */
	__u32 pad;
};

/* A range pinned by a syscall whose arguments name it (XDP_UMEM_REG). */
#define MEMACCT_DMA_RANGES	4
struct memacct_dma_range {
	__u64 start;			/* user address */
	__u64 pages;			/* 0: slot free */
	__s32 fd;			/* the fd it was pinned through */
	__u32 pad;
};

/*
 * Key and value of the dma_ranges map: a range of user memory that an
 * NVIDIA driver call pinned for DMA (CUDA pinned host memory:
 * cudaHostAlloc, cudaHostRegister, pin_memory=True), known by the RM
 * handles that name it until NV_ESC_RM_FREE or exit. Source: the
 * NV_ESC_RM_ALLOC_MEMORY parameters (NVOS02_PARAMETERS, class
 * NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) of open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/nvos.h; bpf/nvidia.bpf.h.
 */
struct memacct_dma_range_key {
	struct memacct_proc_key proc;
	__u32 hroot;			/* RM client handle */
	__u32 hobject;			/* the memory object's handle */
};

struct memacct_dma_range_val {
	struct memacct_dma_range r;	/* page-aligned start, pages, fd */
	__u32 hparent;			/* the object it was allocated under */
	__u32 gen;			/* the process's dma_range_gen then */
};

#define MEMACCT_PROC_EXITED	(1U << 0)	/* exit record (ring buffer or left in map) */
#define MEMACCT_PROC_EXIT_MM	(1U << 1)	/* rss_* at exit were read from the mm */
#define MEMACCT_PROC_EXECED	(1U << 2)	/* exec'd since memacct saw it: exec_maxrss_pages */

/* Value of the procs map, and body of the exit record. */
struct memacct_proc {
	struct memacct_flows f;
	struct memacct_pinned pin;
	__u64 memcg_id;			/* memory cgroup charged: cgroup kernfs id = inode */
	__u32 ppid;
	__u32 flags;			/* MEMACCT_PROC_* */
	char comm[MEMACCT_COMM_LEN];
	/* Filled at exit (sched_process_exit, last thread) */
	__u64 exit_rss_file_pages;	/* mm->rss_stat[MM_FILEPAGES] */
	__u64 exit_rss_anon_pages;	/* mm->rss_stat[MM_ANONPAGES] */
	__u64 exit_rss_shmem_pages;	/* mm->rss_stat[MM_SHMEMPAGES] */
	__u64 exit_maxrss_pages;	/* the RSS high-water mark of the image that exits:
					 * max(mm->hiwater_rss, rss) where the mm is there
					 * (MEMACCT_PROC_EXIT_MM), else signal->maxrss, which
					 * also holds the images before an exec */
	__u64 exit_min_flt;		/* every thread's, as getrusage(RUSAGE_SELF) */
	__u64 exit_maj_flt;		/* the same for major faults */
	__s32 exit_code;		/* task->exit_code (wait status) */
	__u32 exec_maxrss_pages;	/* signal->maxrss at the last exec: the peak of the
					 * images before it (saturated at U32_MAX) */
	struct memacct_dma_range dma_ranges[MEMACCT_DMA_RANGES];
	__u64 dma_queued_pages;		/* of dma_pinned: fd closed, unpin pending */
	__u32 dma_mapped_ranges;	/* its entries in the dma_ranges map */
	__u32 dma_range_gen;		/* entries of another generation are stale
					 * (a parent freed, a pinning fd closed) */
};

/*
 * Release queue slot (BPF global dma_release_q[]): DMA pages of a closed fd
 * or an exited process, pinned until the kernel unpins them.
 */
struct memacct_dma_release {
	__u64 pages;			/* 0: slot free */
	__u64 memcg_id;
	struct memacct_proc_key key;
	__u32 pinned_vm;		/* 1: an exited process's pinned_vm (io_uring
					 * buffers unpinned by a kworker too): its
					 * release is absorbed, no DMA gauge moves */
	__u32 pad;
};

/* Value of the cgroups map, keyed by memory cgroup id (__u64). */
struct memacct_cgroup {
	struct memacct_flows f;
	struct memacct_pinned pin;	/* sums over the cgroup's processes */
};

/*
 * CoW copies by the mapping they hit (issue 42; bpf/faults.bpf.h
 * cowm_fold()): per process, up to MEMACCT_COW_MAPS VMAs, each the one a
 * copy's fault was in (bpf_find_vma() at the copy), by its vm_start, in the
 * slot it hashes to or one of the MEMACCT_COW_PROBES after it. A forked
 * worker's VMA is the parent's of the same range (inherited at fork). All
 * of those taken: a batch takes the first when that holds fewer pages
 * (those then count as unattributed, evicted_pages), else the batch is
 * unattributed (MEMACCT_DROP_COW_MAPS). Unattributed = the process's
 * cow_copied_pages + cow_file_copied_pages - the slots' pages. The record
 * outlives the process: the reader of its exit record deletes it
 * (run/attach: session.c, the daemon: daemon.c).
 */
#define MEMACCT_COW_MAPS	128	/* a power of 2 */
#define MEMACCT_COW_PROBES	8
#define MEMACCT_COW_KIND_MASK	0xfULL	/* start's low bits: enum memacct_cow_kind */


struct memacct_cow_map {
	__u64 start;			/* vm_start | enum memacct_cow_kind; 0: free */
	__u64 end;			/* vm_end at the first copy */
	__u64 pages;			/* pages copied (a huge page as its pages) */
};

/* Value of the cow_maps hash, keyed by struct memacct_proc_key. */
struct memacct_cow_maps {
	struct memacct_cow_map m[MEMACCT_COW_MAPS];
	__u64 evicted_pages;		/* pages of mappings whose slot was taken */
};

/*
 * Page cache by file and memory cgroup (issue 43; bpf/page_cache.bpf.c):
 * pages added to and removed from the page cache of a file
 * (filemap:mm_filemap_add_to_page_cache, mm_filemap_delete_from_page_cache),
 * each charged to the memcg the page is charged to (its memcg_data) when the
 * tracepoint fires. tmpfs/shmem is left out (its adds have no tracepoint:
 * user/proc/shmem_orphans.c reads those files), so is hugetlbfs. A page
 * cached before memacct started and removed since counts in removed_pages
 * when its file has a record here, else in the global
 * page_cache_untracked_removes: net = added - removed can fall below what
 * is cached, never above it.
 */
#define MEMACCT_FILE_NAME_LEN	48
/* the name of a block device's own page cache (filesystem metadata, raw
 * reads): its key's ino is the device's kernel dev_t */
#define MEMACCT_BDEV_NAME	"[block device]"

struct memacct_page_cache_key {
	__u64 memcg_id;			/* kernfs id of the memcg's cgroup */
	__u64 ino;			/* inode->i_ino */
	__u32 dev;			/* i_sb->s_dev, the kernel's dev_t (MAJOR << 20 | MINOR) */
	__u32 pad;
};

struct memacct_page_cache_file {
	__u64 added_pages;		/* base pages (a large folio as its pages) */
	__u64 removed_pages;
	__u64 first_add_ns;		/* bpf_ktime_get_boot_ns() of the record's first add */
	__u64 peak_pages;		/* the largest added - removed an add left (a racy
					 * max: adds on other CPUs at once may leave it a
					 * few pages low) */
	char name[MEMACCT_FILE_NAME_LEN];	/* a dentry's name, at the first add ("" if none) */
};

/* Ring buffer record sent when a process's last thread exits. */
struct memacct_exit_event {
	struct memacct_proc_key key;
	struct memacct_proc proc;
};

/*
 * OOM kill record (ring buffer oom_events, and slot seq % MEMACCT_OOM_HISTORY
 * of the array oom_history that the daemon pins): written by oom:mark_victim
 * while the victim's mm is intact (the kernel has sent SIGKILL, nothing is
 * freed yet). bpf/oom.bpf.c; docs/metrics.md "OOM kills".
 */
#define MEMACCT_OOM_HISTORY	64

#define MEMACCT_OOM_TASK	(1U << 0)	/* the victim's task was read (the
						 * tracepoint passes it: >= 6.7);
						 * else pid only, the rest 0 */
#define MEMACCT_OOM_MM		(1U << 1)	/* rss_*, swap, total_vm, locked_vm,
						 * pinned_vm read from its mm */
#define MEMACCT_OOM_FLOWS	(1U << 2)	/* its procs record: f, pin.dma_* */
#define MEMACCT_OOM_LIMIT	(1U << 3)	/* a memcg at its limit was found */
#define MEMACCT_OOM_LIMIT_EVENT	(1U << 4)	/* found by its memory.events.local
						 * oom count (else by its usage) */

struct memacct_oom_event {
	__u64 seq;			/* 1, 2, ...: kills since load */
	__u64 ts_ns;			/* bpf_ktime_get_boot_ns(): CLOCK_BOOTTIME */
	struct memacct_proc_key key;	/* the victim's process */
	__u32 tid;			/* the victim task (tracepoint's pid) */
	__u32 flags;			/* MEMACCT_OOM_* */
	__u64 memcg_id;			/* the victim's memcg (pid only: the
					 * killing task's, current) */
	/* the limit that was hit, from the victim's memcg up: the nearest
	 * whose local OOM events grew (MEMACCT_OOM_LIMIT_EVENT), else the
	 * nearest whose page_counter usage was within max(max / 32, 512
	 * pages) of its max (0 and !MEMACCT_OOM_LIMIT: none, a host-wide
	 * OOM; bpf/oom.bpf.c oom_limit_walk()) */
	__u64 limit_memcg_id;
	__u64 limit_pages;		/* mem_cgroup->memory.max */
	__u64 usage_pages;		/* mem_cgroup->memory.usage at the kill */
	__u64 rss_anon_pages;		/* mm->rss_stat[MM_ANONPAGES] */
	__u64 rss_file_pages;		/* mm->rss_stat[MM_FILEPAGES] */
	__u64 rss_shmem_pages;		/* mm->rss_stat[MM_SHMEMPAGES] */
	__u64 swap_ents_pages;		/* mm->rss_stat[MM_SWAPENTS] */
	__u64 total_vm_pages;		/* mm->total_vm */
	__u64 locked_vm_pages;		/* mm->locked_vm */
	__u64 pinned_vm_pages;		/* mm->pinned_vm */
	__s32 oom_score_adj;		/* signal->oom_score_adj */
	__u32 ppid;
	char comm[MEMACCT_COMM_LEN];	/* group leader's */
	struct memacct_flows f;		/* its record's flows since attach */
	struct memacct_pinned pin;	/* its record's pins (dma_pinned_*) */
};

/* Pfn range of one NUMA node, filled by userspace from /proc/zoneinfo. */
struct memacct_node_range {
	__u64 start_pfn;
	__u64 end_pfn;			/* exclusive */
	__u32 node;
	__u32 pad;
};

/*
 * Record written by the iter/task program (one read() of a bpf_iter fd gives
 * one per thread-group leader with an mm): the stocks of every process at
 * once, instead of opening /proc/PID/status per process.
 */
struct memacct_task_stock {
	__u32 tgid;
	__u32 ppid;
	__u64 start_boottime_ns;	/* same as memacct_proc_key */
	__u64 rss_anon_pages;		/* mm->rss_stat[MM_ANONPAGES] */
	__u64 rss_file_pages;		/* mm->rss_stat[MM_FILEPAGES] */
	__u64 rss_shmem_pages;		/* mm->rss_stat[MM_SHMEMPAGES] */
	__u64 locked_vm_pages;		/* mm->locked_vm */
	__u64 pinned_vm_pages;		/* mm->pinned_vm */
	__u64 hiwater_rss_pages;	/* mm->hiwater_rss */
	__u64 min_flt;			/* signal->min_flt + live threads' are not summed */
	__u64 maj_flt;
	__u64 memcg_id;			/* memory cgroup charged */
	char comm[MEMACCT_COMM_LEN];
};

/*
 * Input of the process walk (bpf/task_walk.bpf.c), BPF_PROG_TEST_RUN's
 * ctx_in: own_fields 1 fills every field of each record, 0 leaves those
 * only a process shown on its own needs (ppid, start_boottime_ns,
 * hiwater_rss_pages, min_flt, maj_flt) at 0.
 */
struct memacct_task_walk_args {
	__u32 own_fields;
	__u32 pad;
};

/*
 * Ring buffer record (map pin_events) sent after a syscall that changed a
 * process's mm->locked_vm or mm->pinned_vm (mlock, mlock2, munlock,
 * mlockall, munlockall, mmap, munmap, mremap, brk, io_uring_register), or
 * its DMA pins (setsockopt, ioctl, io_uring_register, a kworker's unpin).
 * Only when userspace sets the rodata flag pin_events_on before load:
 * memacct audit --watch; the daemon and run/attach leave it off.
 */
struct memacct_pin_event {
	struct memacct_proc_key key;
	__u64 memcg_id;			/* memory cgroup charged (as memacct_proc) */
	__u64 ts_ns;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 locked_vm_pages;		/* mm->locked_vm after the syscall */
	__u64 pinned_vm_pages;		/* mm->pinned_vm after the syscall */
	__s64 syscall_nr;		/* the syscall that returned (sys_exit id) */
	__s64 syscall_ret;		/* its return value */
	char comm[MEMACCT_COMM_LEN];	/* group leader's comm */
	__u64 dma_pinned_pages;		/* memacct_pinned.dma_pinned_pages after it
					 * (also sent when only this moved: the
					 * syscalls of the DMA windows, or
					 * MEMACCT_PIN_EV_KWORKER) */
};

/* memacct_pin_event.syscall_nr of a DMA release done later by a kworker */
#define MEMACCT_PIN_EV_KWORKER	(-2)

#endif /* MEMACCT_H */
