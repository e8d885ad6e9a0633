// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * memacct.bpf.c - tracepoint programs that account, per process and per
 * memory cgroup, CoW copies, zero fills, pinned memory, NUMA placement and
 * migrations, OOM kills and process lifecycle. See docs/metrics.md for the
 * definition of every counter and include/memacct.h for the records.
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
#include "task_stock.bpf.h"

/* Set by userspace between open and load (user/kernel/bpf_loader.c). */
const volatile __u32 foll_pin_nodes = 1;	/* nr_node_ids */
const volatile __u32 foll_pin_cpus = 1;		/* possible CPUs */

/* core_fixes.bpf.h's state of this object: the FOLL_PIN readers */
__u64 foll_pin_pgdat[FOLL_PIN_MAX_NODES];
__u64 foll_pin_cpu_off[FOLL_PIN_MAX_CPUS];


/* ---- DMA pins: FOLL_PIN pages no mm counter shows ----------------------
 *
 * A window is the span of one syscall that may pin (setsockopt(SOL_XDP),
 * ioctl on a character device other than a tty, io_uring_register): the
 * host's outstanding FOLL_PIN references (foll_pin_now()) are read at
 * sys_enter and at sys_exit; the difference, less what the syscall added to
 * mm->pinned_vm (io_uring buffers, counted there already), is the process's.
 * Exact when no other window was open meanwhile; overlapping windows share
 * the counter (the pool below) so that nothing is counted twice or lost,
 * and are flagged estimates (pins by paths with no window, e.g. O_DIRECT
 * I/O on another CPU, cannot be seen).
 * Pins left when an fd is closed or the process exits go to a release queue;
 * the kworker that unpins later (AF_XDP: ~100 ms after close(), from
 * xdp_umem_release_deferred) is measured the same way around each work item
 * while the queue is not empty, and its release is given back to the owner.
 * Cost: the syscall tracepoints are already on (pinned memory above), so
 * every task takes the slow syscall path already; added: a program on
 * sys_enter/exit of setsockopt and ioctl (a few loads and a return unless
 * the window applies), on close (one load unless a DMA pin is live), and on
 * each work item (one load unless a release is pending).
 */

/* Outstanding DMA pages attributed and not yet released, all processes. */
__u64 dma_attributed_pages;
/* Of which left by closed fds or exited processes, awaiting the unpin. */
__u64 dma_releasing_pages;
/* 1 once foll_pin_now() failed (the counters cannot be read). */
__u32 dma_unreadable;
/* Windows open now and opened ever: overlap means an estimate. */
__u64 dma_windows_open;
__u64 dma_window_gen;

struct dma_window {
	__s64 foll_pin;		/* foll_pin_now() at entry */
	__u64 pinned_vm;	/* mm->pinned_vm at entry */
	__u64 gen;		/* dma_window_gen after this window's open */
	__u64 range_start, range_pages;	/* XDP_UMEM_REG's area */
	__s32 fd;
	__u32 estimate;		/* another window was open at entry */
	__s64 nr;		/* syscall number (pin events) */
	__s64 pool_s;		/* dma_pool.s at entry (pooled windows) */
	__u32 pooled;		/* entered the pool (its lock was taken) */
	__u32 nv_op;		/* NV_OP_*: an NVIDIA RM call (below) */
	__s64 known;		/* pages the kernel fixes on success: + pinned
				 * (XDP_UMEM_REG, RM OS descriptor), - unpinned
				 * (RM_FREE of a known range); 0: unknown */
	__u64 nv_params;	/* user address of the RM parameters */
	__u32 nv_hroot, nv_hobject, nv_hparent, nv_pad;
};

/*
 * The pool: windows of processes' syscalls share the host counter so that
 * overlapping windows count every page once. Between two pool events (a
 * window opens or closes, a kworker gives back a release) the counter's
 * change is divided equally among the windows open then: s is the running
 * sum of those per-window shares (pages << DMA_POOL_SHIFT) and a window
 * gets s at its close minus s at its open. A busy period (from the first
 * window open to none open) is closed exactly: its last window gets the
 * counter's change over the period minus what the others got, so the sum
 * over the windows equals the host counter's change while any was open.
 * A window whose size the kernel fixes (XDP_UMEM_REG: exactly npgs pages
 * pinned on success, net/xdp/xdp_umem.c xdp_umem_pin_pages()) takes that
 * size; the difference stays with the period's last window. Kworker
 * releases are taken out of the pool's counter (x) so they are not shared
 * again. The pool's state changes under a lock: a hash map element added
 * with BPF_NOEXIST (one CPU wins: the bucket lock), since bpf_spin_lock is
 * refused in tracepoint programs (kernel/bpf/verifier.c
 * check_map_prog_compatibility()) and 5.10 has no BPF cmpxchg. A window
 * that cannot take the lock (its holder preempted) leaves the pool anyway
 * (open is counted atomically) and keeps its own raw delta, flagged as an
 * estimate, or its fixed size; either is taken out of the pool's counter
 * (x), as a kworker's release is.
 * Windows of a fixed size reserve it when they open (res_*, pend_*): a
 * change of the counter goes to those reservations first and only the rest
 * is shared among the windows of unknown size, so that a window that pins
 * nothing (a UVM ioctl of another CUDA process) does not take a share of a
 * registration's pages, which the last window would then be short of
 * (test_dma_pinner_beside_empty_windows: 92-96 MiB of 100). A change the
 * other way first gives back what reservations took: a read during a fold
 * on another CPU is off by its per-CPU diff, one way then back, and a
 * one-way buffer turned that noise into a drift (110 MiB of 100; capped at
 * what the reservations took, 105.3): the give-back may exceed it by that
 * slack (FOLD_SLACK; exact then). A failed call gives its reservation
 * back; a busy period's end clears them.
 */
#define DMA_POOL_SHIFT	16
#define DMA_POOL_TRIES	64
struct dma_pool_state {
	__s64 last;		/* pool counter (foll_pin_now() - x) at the last event */
	__s64 s;		/* sum of per-window shares, << DMA_POOL_SHIFT */
	__s64 x;		/* kworker releases taken out of the pool */
	__s64 bp_start;		/* pool counter when the busy period began */
	__s64 bp_given;		/* pages given to windows closed in it */
	__u64 open;		/* pooled windows open now */
	__u64 lock_missed;	/* windows that kept their raw delta */
	__u64 known_open;	/* of them, windows of a fixed size */
	__s64 res_pos, res_neg;	/* their pins (unpins: < 0) reserved */
	__s64 pend_pos;		/* of res_pos, not yet seen in the counter */
	__s64 pend_neg;		/* of res_neg, not yet seen (<= 0) */
};
static struct dma_pool_state dma_pool;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dma_pool_lock SEC(".maps");

static __always_inline bool pool_lock(void)
{
	__u32 k = 0, v = 0;

	for (int i = 0; i < DMA_POOL_TRIES; i++)
		if (!bpf_map_update_elem(&dma_pool_lock, &k, &v, BPF_NOEXIST))
			return true;
	__sync_fetch_and_add(&dma_pool.lock_missed, 1);
	return false;
}

static __always_inline void pool_unlock(void)
{
	__u32 k = 0;

	bpf_map_delete_elem(&dma_pool_lock, &k);
}

/*
 * A read of the counter during a fold on another CPU is off by at most
 * that CPU's diff (an __s8 per item, per CPU: foll_pin_now()); a change
 * within this slack the other way is noise the reservations take back.
 */
#define FOLD_SLACK	((__s64)128 * foll_pin_cpus)

/*
 * Share the pool counter's change since the last event (lock held): the
 * fixed-size windows' reservations first, the rest among the others.
 */
static __always_inline void pool_tick(__s64 now)
{
	__s64 d = now - dma_pool.last, t;
	__u64 n = dma_pool.open - dma_pool.known_open, q;

	dma_pool.last = now;
	if (d > 0) {
		/* unpins seen (and a fold's slack): give back */
		t = dma_pool.pend_neg - dma_pool.res_neg + (dma_pool.res_neg ? FOLD_SLACK : 0);
		t = d < t ? d : t;
		dma_pool.pend_neg -= t;
		d -= t;
		t = d < dma_pool.pend_pos ? d : dma_pool.pend_pos;
		dma_pool.pend_pos -= t;
		d -= t;
	} else if (d < 0) {
		/* pins seen (and a fold's slack): give back */
		t = dma_pool.res_pos - dma_pool.pend_pos + (dma_pool.res_pos ? FOLD_SLACK : 0);
		t = -d < t ? -d : t;
		dma_pool.pend_pos += t;
		d += t;
		t = -d < -dma_pool.pend_neg ? -d : -dma_pool.pend_neg;
		dma_pool.pend_neg += t;
		d += t;
	}
	if (!n || n > dma_pool.open || !d)
		return;
	/* unsigned division only (signed needs BPF v4, Linux 6.6) */
	q = ((__u64)(d < 0 ? -d : d) << DMA_POOL_SHIFT) / n;
	dma_pool.s += d < 0 ? -(__s64)q : (__s64)q;
}

/* Round a share in pool units to pages, to nearest. */
static __always_inline __s64 pool_pages(__s64 v)
{
	__u64 a = ((__u64)(v < 0 ? -v : v) + (1ULL << (DMA_POOL_SHIFT - 1))) >> DMA_POOL_SHIFT;

	return v < 0 ? -(__s64)a : (__s64)a;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);	/* thread id */
	__type(value, struct dma_window);
} dma_windows SEC(".maps");

/* DMA pages per (process, fd), moved to the release queue at close(). */
struct dma_fd_key {
	struct memacct_proc_key proc;
	__s32 fd;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct dma_fd_key);
	__type(value, __u64);
} dma_fds SEC(".maps");
__u64 dma_fds_live;

/*
 * Release queue: pages whose fd was closed or whose process exited, still
 * pinned until the kernel unpins them. Its slots change under the pool's
 * lock (dma_pool_lock below; 5.10 has no BPF cmpxchg): two processes
 * exiting at once on two CPUs took one slot with plain stores, and the
 * overwritten owner's pages stayed on its cgroup's gauge for good; two
 * kworkers releasing at once lost one's update of a slot. A caller that
 * misses the lock (its holder preempted) goes on unlocked, as before.
 */
#define DMA_RELEASE_SLOTS	16
struct memacct_dma_release dma_release_q[DMA_RELEASE_SLOTS];

static __always_inline void dma_flag(struct memacct_proc *p, struct memacct_cgroup *c)
{
	if (p)
		p->pin.dma_flags |= MEMACCT_DMA_ESTIMATE;
	if (c)
		c->pin.dma_flags |= MEMACCT_DMA_ESTIMATE;
}

/* Move @p's (may be NULL: exited) and memcg @cgid's DMA gauges by @d pages. */
static __always_inline void dma_move(struct memacct_proc *p, __u64 cgid, __s64 d, bool est)
{
	struct memacct_cgroup *c = cgroup_get(cgid);

	if (p) {
		p->pin.dma_pinned_pages += d;
		peak(&p->pin.dma_pinned_peak_pages, p->pin.dma_pinned_pages);
	}
	__sync_fetch_and_add(&dma_attributed_pages, d);
	if (c) {
		__sync_fetch_and_add(&c->pin.dma_pinned_pages, d);
		peak(&c->pin.dma_pinned_peak_pages, c->pin.dma_pinned_pages);
	}
	if (est)
		dma_flag(p, c);
}

static __always_inline void dma_queue(struct memacct_proc_key *key, __u64 cgid, __u64 pages,
				      __u32 pinned_vm)
{
	bool locked;

	if (!pages)
		return;
	locked = pool_lock();
	for (int i = 0; i < DMA_RELEASE_SLOTS; i++) {
		struct memacct_dma_release *r = &dma_release_q[i];

		if (r->pages)
			continue;
		r->key = *key;
		r->memcg_id = cgid;
		r->pinned_vm = pinned_vm;
		r->pages = pages;
		__sync_fetch_and_add(&dma_releasing_pages, pages);
		break;
	}
	/* queue full: the owner keeps the pages (dma_releasing stays exact) */
	if (locked)
		pool_unlock();
}

/*
 * This CPU's per-CPU offset, once (core_fixes.bpf.h foll_pin_now()): the
 * PERCPU_ARRAY cpu_slots' element 0 is at pptrs[0] + offset. The map's and
 * the element's addresses go through bpf_probe_read_kernel() to become
 * plain numbers (the verifier forbids arithmetic on map pointers).
 */
static __always_inline void cpu_off_learn(void)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 map = (__u64)(void *)&cpu_slots, mine, base = 0;
	struct bpf_array *arr;
	void *slot;

	if (cpu >= FOLL_PIN_MAX_CPUS || foll_pin_cpu_off[cpu])
		return;
	slot = bpf_map_lookup_elem(&cpu_slots, &zero);
	if (!slot)
		return;
	mine = (__u64)slot;
	bpf_probe_read_kernel(&mine, sizeof(mine), &mine);
	bpf_probe_read_kernel(&map, sizeof(map), &map);
	arr = (void *)map;
	bpf_core_read(&base, sizeof(base), &arr->pptrs[0]);
	if (base && mine > base)
		foll_pin_cpu_off[cpu] = mine - base;
}

/*
 * Open a window for the current thread; returns it (NULL: not opened) for
 * the caller to add what it knows before the syscall runs.
 */
static __always_inline struct dma_window *dma_open(long nr, __s32 fd, __u64 range_start,
						   __u64 range_pages, __s64 known)
{
	struct task_struct *task = current_task();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dma_window w = {}, *wp;
	struct mm_struct *mm;

	cpu_off_learn();
	if (!foll_pin_now(task, &w.foll_pin)) {
		dma_unreadable = 1;
		return NULL;
	}
	mm = BPF_CORE_READ(task, mm);
	if (mm)
		w.pinned_vm = BPF_CORE_READ(mm, pinned_vm.counter);
	__sync_fetch_and_add(&dma_windows_open, 1);
	__sync_fetch_and_add(&dma_window_gen, 1);
	w.gen = dma_window_gen;
	w.estimate = dma_windows_open > 1;
	w.fd = fd;
	w.nr = nr;
	w.range_start = range_start;
	w.range_pages = range_pages;
	w.known = known;
	if (bpf_map_update_elem(&dma_windows, &tid, &w, BPF_ANY)) {
		__sync_fetch_and_add(&dma_windows_open, -1);
		drop(MEMACCT_DROP_DMA_WINDOW_FULL);
		return NULL;
	}
	wp = bpf_map_lookup_elem(&dma_windows, &tid);
	if (!wp || nr == MEMACCT_PIN_EV_KWORKER || !pool_lock())
		return wp;
	/* read again under the lock: the pool's events are ordered */
	if (foll_pin_now(task, &wp->foll_pin)) {
		__s64 c = wp->foll_pin - dma_pool.x;

		pool_tick(c);
		if (!dma_pool.open) {
			dma_pool.bp_start = c;
			dma_pool.bp_given = 0;
		}
		__sync_fetch_and_add(&dma_pool.open, 1);	/* atomic: see dma_close() */
		wp->pool_s = dma_pool.s;
		wp->pooled = 1;
		if (known) {
			__sync_fetch_and_add(&dma_pool.known_open, 1);
			if (known > 0) {
				dma_pool.res_pos += known;
				dma_pool.pend_pos += known;
			} else {
				dma_pool.res_neg += known;
				dma_pool.pend_neg += known;
			}
		}
	}
	pool_unlock();
	return wp;
}

/*
 * Leave the pool (lock held by the caller): @now the host counter, @known
 * the pages the kernel fixed for this window (0: none). Returns the
 * window's share of the pool counter.
 */
static __always_inline __s64 pool_leave(struct dma_window *w, __s64 now, __s64 known)
{
	__s64 c = now - dma_pool.x, share;

	pool_tick(c);
	if (dma_pool.open)
		__sync_fetch_and_add(&dma_pool.open, -1);
	if (w->known) {
		if (dma_pool.known_open)
			__sync_fetch_and_add(&dma_pool.known_open, -1);
		/* done: what it reserved came (or, failed, never comes) */
		if (w->known > 0) {
			dma_pool.res_pos -= w->known;
			if (!known)
				dma_pool.pend_pos -= w->known < dma_pool.pend_pos ? w->known :
										 dma_pool.pend_pos;
			if (dma_pool.pend_pos > dma_pool.res_pos)
				dma_pool.pend_pos = dma_pool.res_pos;
		} else {
			dma_pool.res_neg -= w->known;
			if (!known)
				dma_pool.pend_neg -= w->known > dma_pool.pend_neg ? w->known :
										 dma_pool.pend_neg;
			if (dma_pool.pend_neg < dma_pool.res_neg)
				dma_pool.pend_neg = dma_pool.res_neg;
		}
	}
	if (!dma_pool.open) {
		dma_pool.res_pos = dma_pool.res_neg = 0;
		dma_pool.pend_pos = dma_pool.pend_neg = 0;
		dma_pool.known_open = 0;
		/* the busy period's last window: what the others left */
		share = c - dma_pool.bp_start - dma_pool.bp_given;
	} else if (known) {
		share = known;	/* the rest of its share stays in the pool */
	} else {
		share = pool_pages(dma_pool.s - w->pool_s);
	}
	dma_pool.bp_given += share;
	return share;
}

/*
 * Release @pages unpinned outside any owner's syscall against the queue;
 * returns the pages taken from it.
 */
static __always_inline __u64 dma_release_queued(__u64 pages)
{
	__u64 asked = pages;
	bool exact = false;
	int i;

	for (i = 0; i < DMA_RELEASE_SLOTS; i++)
		if (dma_release_q[i].pages == pages) {
			exact = true;
			break;
		}
	for (int j = 0; j < DMA_RELEASE_SLOTS && pages; j++) {
		struct memacct_dma_release *r = &dma_release_q[exact ? i & (DMA_RELEASE_SLOTS - 1) : j];
		__u64 take = r->pages < pages ? r->pages : pages;
		struct memacct_proc *p;

		if (!take || (r->pinned_vm && !exact))
			continue;	/* a pinned_vm entry goes only by its size */
		p = bpf_map_lookup_elem(&procs, &r->key);
		r->pages -= take;
		pages -= take;
		__sync_fetch_and_add(&dma_releasing_pages, -(__s64)take);
		if (r->pinned_vm)
			break;	/* absorbed: no DMA gauge moves */
		if (p)
			p->dma_queued_pages -= take < p->dma_queued_pages ? take : p->dma_queued_pages;
		dma_move(p, r->memcg_id, -(__s64)take, !exact);
		if (p && pin_events_on)
			pin_event_key(&r->key, p, MEMACCT_PIN_EV_KWORKER, 0);
		if (exact)
			break;
	}
	return asked - pages;
}

/* ---- NVIDIA: CUDA pinned host memory by range ------------------------
 *
 * cudaHostAlloc (pin_memory=True), cudaHostRegister and CUDA's own staging
 * buffers pin user memory through one driver call: ioctl(/dev/nvidiactl or
 * /dev/nvidiaN, NV_ESC_RM_ALLOC_MEMORY) with class
 * NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, whose parameters name the range
 * (pMemory, limit) and whose success pins exactly its pages
 * (open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/escape.c
 * RmIoctl -> RmAllocOsDescriptor -> RmCreateOsDescriptor ->
 * os_lock_user_pages -> pin_user_pages, one FOLL_PIN reference per page;
 * seen on the H100 host, driver 580.159.04: CUDA init 5 x 2 MiB,
 * pin_memory 1 GiB, cudaHostRegister 65,537 pages, docs/metrics.md). The
 * object lives until NV_ESC_RM_FREE of its handle (or of its parent, or
 * the client's fd closed). A window around such a call takes the range's
 * size as the kernel-fixed size (exact when other pinners overlap) and,
 * on success (ioctl 0 and the RM status read back 0), records the range
 * under its handles in dma_ranges; a FREE of a known handle gives exactly
 * its pages back. Parameters travel directly (_IOC_SIZE = the struct's
 * size) or, when large, behind NV_ESC_IOCTL_XFER_CMD (nv_ioctl_xfer_t
 * {cmd, size, ptr}: kernel-open/common/inc/nv-ioctl.h), followed here.
 * A layout of another size is never guessed: MEMACCT_DROP_NV_RANGE_UNKNOWN
 * (the pins are still counted by the window, the range is not known).
 * RM pins user memory in RmCreateOsDescriptor() alone (escape.c), reached
 * from those two escapes and NV_ESC_RM_VID_HEAP_CONTROL (function
 * NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR, layout not decoded: a plain window);
 * it unpins at NV_ESC_RM_FREE and when the client's fd is released. Every
 * other escape on these files (NV_ESC_RM_CONTROL: 426 calls in one CUDA
 * init, RM_ALLOC, RM_MAP_MEMORY, ...) gets no window: none pins, and the
 * window's reads would cost on every call. A pin by any other path still
 * shows in the host's FOLL_PIN pages not attributed
 * (memacct_host_dma_pinned_unattributed_bytes).
 * Layouts (nvos.h; NvP64/NvU64 8-aligned, the same on arm64):
 *   NVOS02_PARAMETERS + int fd, 56 bytes: hRoot@0 hObjectParent@4
 *     hObjectNew@8 hClass@12 flags@16 pMemory@24 limit@32 status@40
 *   NVOS00_PARAMETERS, 16 bytes: hRoot@0 hObjectParent@4 hObjectOld@8
 *     status@12
 */
#define NV_IOCTL_MAGIC		'F'	/* kernel-open/common/inc/nv-ioctl-numbers.h */
#define NV_ESC_RM_ALLOC_MEMORY	0x27	/* src/nvidia/arch/nvalloc/unix/include/nv_escape.h */
#define NV_ESC_RM_FREE		0x29
#define NV_ESC_RM_VID_HEAP_CONTROL 0x4a
#define NV_ESC_IOCTL_XFER_CMD	(200 + 11)
#define NV_ALLOC_MEMORY_SIZE	56
#define NV_FREE_SIZE		16
#define NV_XFER_SIZE		16
#define NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x71	/* src/common/sdk/nvidia/inc/class/cl0071.h */

enum { NV_OP_NONE, NV_OP_ALLOC, NV_OP_FREE };

/* RM pinning calls decoded (ok: ioctl 0 and RM status NV_OK), frees of a
 * known range: MEMACCT_NV_* indexes, read by userspace from .bss */
__u64 nv_calls[MEMACCT_NV_NR];

struct nv_xfer {
	__u32 cmd;		/* the escape's _IOC_NR */
	__u32 size;
	__u64 ptr;
};

struct nvos02 {
	__u32 hroot, hparent, hnew, hclass, flags, pad;
	__u64 pmemory, limit;
	__u32 status;
};

struct nvos00 {
	__u32 hroot, hparent, hold, status;
};

/* bpf_helpers.h's offsetof() is no constant expression: the builtin */
_Static_assert(__builtin_offsetof(struct nvos02, pmemory) == 24 &&
	       __builtin_offsetof(struct nvos02, limit) == 32 &&
	       __builtin_offsetof(struct nvos02, status) == 40, "NVOS02_PARAMETERS layout (nvos.h)");
_Static_assert(__builtin_offsetof(struct nvos00, status) == 12, "NVOS00_PARAMETERS layout (nvos.h)");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* sized by bpf_loader.c */
	__type(key, struct memacct_dma_range_key);
	__type(value, struct memacct_dma_range_val);
} dma_ranges SEC(".maps");

/*
 * A process's ranges go stale together: a free of a parent (device,
 * client) or the close of an fd that pinned takes some of them with it,
 * which a tracepoint program cannot find without walking the map
 * (bpf_for_each_map_elem: 5.13, and its callback's BPF_PSEUDO_FUNC makes a
 * program unloadable on 5.10: "number of funcs in func_info doesn't match
 * number of subprogs"). The process's range generation moves on instead:
 * userspace shows only ranges of the current generation and deletes the
 * others and those of exited processes (dma_ranges_prune()), so a range is
 * never shown that may be gone, at the cost of not showing some that live.
 */
static __always_inline void dma_ranges_stale(struct memacct_proc *p)
{
	if (p->dma_mapped_ranges)
		p->dma_range_gen++;
}

/* Whether @f is an NVIDIA device file (/dev/nvidiactl, /dev/nvidiaN). */
static __always_inline bool nvidia_file(struct file *f)
{
	const unsigned char *name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	char b[8] = {};

	bpf_probe_read_kernel(b, 6, name);
	return b[0] == 'n' && b[1] == 'v' && b[2] == 'i' && b[3] == 'd' && b[4] == 'i' &&
	       b[5] == 'a';
}

/*
 * An ioctl on an NVIDIA device: a window that knows the range an
 * OS-descriptor allocation pins, or the range a FREE gives back.
 */
static __always_inline void nv_enter(long nr, __s32 fd, __u32 cmd, __u64 arg)
{
	__u32 esc = cmd & 0xff, size = (cmd >> 16) & 0x3fff;
	struct memacct_dma_range_key k = {};
	struct memacct_dma_range_val *v;
	struct dma_window *w;

	if (esc == NV_ESC_IOCTL_XFER_CMD && size == NV_XFER_SIZE) {
		struct nv_xfer x;

		if (bpf_probe_read_user(&x, sizeof(x), (void *)arg)) {
			drop(MEMACCT_DROP_NV_RANGE_UNKNOWN);
			goto plain;
		}
		esc = x.cmd;
		size = x.size;
		arg = x.ptr;
	}
	if (esc == NV_ESC_RM_ALLOC_MEMORY) {
		struct nvos02 o;
		__u64 off, pages;

		if (size != NV_ALLOC_MEMORY_SIZE ||
		    bpf_probe_read_user(&o, sizeof(o), (void *)arg)) {
			drop(MEMACCT_DROP_NV_RANGE_UNKNOWN);
			goto plain;
		}
		if (o.hclass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR)
			return;	/* the driver's own pages: nothing pinned */
		off = o.pmemory & (page_size - 1);
		pages = (off + o.limit + page_size) / page_size;
		w = dma_open(nr, fd, o.pmemory - off, pages, pages);
		if (!w)
			return;
		w->nv_op = NV_OP_ALLOC;
		w->nv_params = arg;
		w->nv_hroot = o.hroot;
		w->nv_hobject = o.hnew;
		w->nv_hparent = o.hparent;
		return;
	}
	if (esc == NV_ESC_RM_FREE) {
		struct nvos00 o;

		if (size != NV_FREE_SIZE || bpf_probe_read_user(&o, sizeof(o), (void *)arg)) {
			drop(MEMACCT_DROP_NV_RANGE_UNKNOWN);
			goto plain;
		}
		proc_key_of(current_task(), &k.proc);
		k.hroot = o.hroot;
		k.hobject = o.hold;
		v = bpf_map_lookup_elem(&dma_ranges, &k);
		w = dma_open(nr, fd, 0, 0, v ? -(__s64)v->r.pages : 0);
		if (!w)
			return;
		w->nv_op = NV_OP_FREE;
		w->nv_params = arg;
		w->nv_hroot = o.hroot;
		w->nv_hobject = o.hold;
		return;
	}
	if (esc != NV_ESC_RM_VID_HEAP_CONTROL)
		return;	/* no other escape pins (above) */
plain:
	dma_open(nr, fd, 0, 0, 0);
}

/* The RM status of @w's call, read back at exit: 0 is NV_OK. */
static __always_inline bool nv_ok(const struct dma_window *w)
{
	__u32 st = 1;

	bpf_probe_read_user(&st, sizeof(st), (void *)(w->nv_params +
			    (w->nv_op == NV_OP_ALLOC ? offsetof(struct nvos02, status) :
						       offsetof(struct nvos00, status))));
	return st == 0;
}

/* After a successful RM call: the range recorded, or forgotten. */
static __always_inline void nv_exit(struct dma_window *w, struct memacct_proc *p,
				    const struct memacct_proc_key *key, __s64 d)
{
	struct memacct_dma_range_key k = { .proc = *key, .hroot = w->nv_hroot,
					   .hobject = w->nv_hobject };

	if (w->nv_op == NV_OP_ALLOC) {
		struct memacct_dma_range_val v = {
			.r = { .start = w->range_start, .pages = w->range_pages, .fd = w->fd },
			.hparent = w->nv_hparent,
		};

		v.gen = p->dma_range_gen;
		if (bpf_map_update_elem(&dma_ranges, &k, &v, BPF_NOEXIST))
			drop(MEMACCT_DROP_DMA_RANGE_FULL);
		else
			p->dma_mapped_ranges++;
	} else if (w->known) {
		if (!bpf_map_delete_elem(&dma_ranges, &k) && p->dma_mapped_ranges)
			p->dma_mapped_ranges--;
	} else if (d < 0) {
		/* a parent (device, client) freed: its memory objects with it */
		dma_ranges_stale(p);
	}
}

/*
 * Close the current thread's window (@ok: the syscall succeeded). Net
 * pins go to the process, its fd and, with a known range, its range list;
 * net unpins come off the process (and its fd where it has one).
 */
static __always_inline void dma_close(bool ok)
{
	struct task_struct *task = current_task();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dma_fd_key fk = {};
	struct memacct_proc *p;
	struct dma_window *w;
	struct mm_struct *mm;
	__s64 now, d;
	__u64 *fdp;
	bool est;

	w = bpf_map_lookup_elem(&dma_windows, &tid);
	if (!w)
		return;
	__sync_fetch_and_add(&dma_windows_open, -1);
	if (w->nv_op && ok)
		ok = nv_ok(w);	/* the ioctl returns 0 with an RM error */
	if (w->nv_op == NV_OP_ALLOC)
		__sync_fetch_and_add(&nv_calls[ok ? MEMACCT_NV_PIN_OK : MEMACCT_NV_PIN_FAILED], 1);
	else if (w->nv_op == NV_OP_FREE && w->known && ok)
		__sync_fetch_and_add(&nv_calls[MEMACCT_NV_FREE_KNOWN], 1);
	est = w->estimate || dma_window_gen != w->gen;
	if (w->pooled && pool_lock()) {
		__s64 known = ok ? w->known : 0;
		bool got = foll_pin_now(task, &now);

		if (!got)	/* leave anyway: the pool's count stays right */
			now = dma_pool.last + dma_pool.x;
		d = pool_leave(w, now, known);
		pool_unlock();
		if (!got)
			goto out;
		if (known)	/* the kernel fixed it: exact even when shared */
			est = d != known;
	} else {
		/*
		 * Pool lock missed (its holder preempted: a vCPU descheduled),
		 * at open or now. A pooled window leaves all the same: one
		 * left open ended no busy period again, and every later
		 * window was an estimate. It keeps its raw delta (an
		 * estimate) or the size the kernel fixed (exact), counted as
		 * given in its busy period so that the period's last window
		 * does not get those pages a second time (the TCG guest's 1
		 * MiB over the host delta in test_dma_two_pinners). Taken out
		 * of the pool's counter instead (x), as before, its pages,
		 * already in the counter's rise, came back as a fall shared
		 * among the windows open then: 5.6 MiB too many for a pinner
		 * of 100 MiB beside windows that pinned nothing
		 * (test_dma_pinner_beside_empty_windows). A window that never
		 * got in (lock missed at open) is taken out of the counter.
		 */
		if (w->pooled) {
			__sync_fetch_and_add(&dma_pool.open, -1);
			if (w->known)
				__sync_fetch_and_add(&dma_pool.known_open, -1);
			est = true;
		}
		if (!foll_pin_now(task, &now))
			goto out;
		d = now - w->foll_pin;
		if (w->known && ok) {
			d = w->known;
			est = false;
		}
		if (d && w->pooled)
			__sync_fetch_and_add(&dma_pool.bp_given, d);
		else if (d)
			__sync_fetch_and_add(&dma_pool.x, d);
	}
	mm = BPF_CORE_READ(task, mm);
	if (mm)
		d -= (__s64)BPF_CORE_READ(mm, pinned_vm.counter) - (__s64)w->pinned_vm;
	if (!d && !(w->nv_op && ok))
		goto out;
	p = proc_get(task, true);
	if (!p)
		goto out;
	proc_key_of(task, &fk.proc);
	if (w->nv_op && ok)
		nv_exit(w, p, &fk.proc, d);
	if (!d)
		goto out;
	fk.fd = w->fd;
	fdp = bpf_map_lookup_elem(&dma_fds, &fk);
	if (d > 0) {
		dma_move(p, p->memcg_id, d, est);
		if (fdp) {
			__sync_fetch_and_add(fdp, d);
		} else {
			__u64 v = d;

			if (!bpf_map_update_elem(&dma_fds, &fk, &v, BPF_NOEXIST))
				__sync_fetch_and_add(&dma_fds_live, 1);
		}
		if (w->range_pages && ok && !w->nv_op) {
			bool kept = false;

			for (int i = 0; i < MEMACCT_DMA_RANGES; i++) {
				if (p->dma_ranges[i].pages)
					continue;
				p->dma_ranges[i].start = w->range_start;
				p->dma_ranges[i].pages = w->range_pages;
				p->dma_ranges[i].fd = w->fd;
				kept = true;
				break;
			}
			if (!kept)	/* every slot taken: said, not dropped silently */
				drop(MEMACCT_DROP_DMA_RANGE_SLOTS);
		}
		if (pin_events_on)
			pin_event_key(&fk.proc, p, w->nr, 0);
	} else {
		__u64 rel = -d;

		if (rel > p->pin.dma_pinned_pages) {
			rel = p->pin.dma_pinned_pages;	/* not its pins */
			est = true;
		}
		dma_move(p, p->memcg_id, -(__s64)rel, est);
		if (fdp)
			*fdp = *fdp > rel ? *fdp - rel : 0;
		if (pin_events_on)
			pin_event_key(&fk.proc, p, w->nr, 0);
	}
out:
	bpf_map_delete_elem(&dma_windows, &tid);
}

#define SOL_XDP_LEVEL	283	/* include/linux/socket.h SOL_XDP */
#define XDP_UMEM_REG_OPT	4	/* include/uapi/linux/if_xdp.h */

SEC("tp/syscalls/sys_enter_setsockopt")
int sys_enter_setsockopt(struct syscall_trace_enter *ctx)
{
	struct xdp_umem_reg reg = {};
	__u64 start = 0, pages = 0;

	if (ctx->args[1] != SOL_XDP_LEVEL)
		return 0;
	if (ctx->args[2] == XDP_UMEM_REG_OPT &&
	    !bpf_probe_read_user(&reg, 16, (void *)ctx->args[3]) &&
	    !(reg.addr & (page_size - 1))) {
		start = reg.addr;
		pages = reg.len / page_size;
	}
	dma_open(ctx->nr, ctx->args[0], start, pages, pages);
	return 0;
}

SEC("tp/syscalls/sys_exit_setsockopt")
int sys_exit_setsockopt(struct syscall_trace_exit *ctx)
{
	dma_close(ctx->ret == 0);
	return 0;
}

/* The file behind @fd of the current task, or NULL. */
static __always_inline struct file *fd_file(struct task_struct *task, unsigned int fd)
{
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *f = NULL;

	if (fd >= BPF_CORE_READ(task, files, fdt, max_fds))
		return NULL;
	bpf_core_read(&f, sizeof(f), &fds[fd]);
	return f;
}

#define S_IFMT_BITS	00170000
#define S_IFCHR_BITS	0020000

/* ioctl: character devices only (GPU, RDMA, vfio, ...), not terminals. */
SEC("tp/syscalls/sys_enter_ioctl")
int sys_enter_ioctl(struct syscall_trace_enter *ctx)
{
	struct file *f = fd_file(current_task(), ctx->args[0]);
	unsigned int major;
	umode_t mode;

	if (!f)
		return 0;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT_BITS) != S_IFCHR_BITS)
		return 0;
	major = BPF_CORE_READ(f, f_inode, i_rdev) >> 20;	/* MAJOR() */
	if (major == 4 || major == 5 || (major >= 136 && major <= 143))
		return 0;	/* tty, console, ptmx, pts */
	if (((ctx->args[1] >> 8) & 0xff) == NV_IOCTL_MAGIC && nvidia_file(f))
		nv_enter(ctx->nr, ctx->args[0], ctx->args[1], ctx->args[2]);
	else
		dma_open(ctx->nr, ctx->args[0], 0, 0, 0);
	return 0;
}

SEC("tp/syscalls/sys_exit_ioctl")
int sys_exit_ioctl(struct syscall_trace_exit *ctx)
{
	dma_close(ctx->ret >= 0);
	return 0;
}

SEC("tp/syscalls/sys_enter_io_uring_register")
int sys_enter_io_uring_register(struct syscall_trace_enter *ctx)
{
	dma_open(ctx->nr, ctx->args[0], 0, 0, 0);
	return 0;
}

/*
 * DMA windows on (--dma-pins on, or auto with a device that pins): false
 * leaves the windows' programs unloaded (user/kernel/bpf_loader.c) and this one
 * keeps only pinned_vm, the verifier dropping the window code.
 */
const volatile bool dma_windows_on = true;

SEC("tp/syscalls/sys_exit_io_uring_register")
int sys_exit_io_uring_register(struct syscall_trace_exit *ctx)
{
	pinned_update(ctx);
	if (dma_windows_on)
		dma_close(ctx->ret >= 0);
	return 0;
}

/* close(): the fd's DMA pins wait in the release queue for their unpin. */
SEC("tp/syscalls/sys_enter_close")
int sys_enter_close(struct syscall_trace_enter *ctx)
{
	struct task_struct *task;
	struct memacct_proc *p;
	struct dma_fd_key fk = {};
	__u64 *fdp;

	cpu_off_learn();	/* userspace closes on every CPU after attach */
	if (!dma_fds_live)
		return 0;
	task = current_task();
	proc_key_of(task, &fk.proc);
	fk.fd = ctx->args[0];
	fdp = bpf_map_lookup_elem(&dma_fds, &fk);
	if (!fdp)
		return 0;
	p = bpf_map_lookup_elem(&procs, &fk.proc);
	if (p) {
		dma_queue(&fk.proc, p->memcg_id, *fdp, 0);
		p->dma_queued_pages += *fdp;
		for (int i = 0; i < MEMACCT_DMA_RANGES; i++)
			if (p->dma_ranges[i].fd == fk.fd)
				p->dma_ranges[i].pages = 0;
		dma_ranges_stale(p);
	}
	bpf_map_delete_elem(&dma_fds, &fk);
	__sync_fetch_and_add(&dma_fds_live, -1);
	return 0;
}

/* Work items while a release is pending: deferred unpins (AF_XDP UMEM). */
SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(workqueue_execute_start, struct work_struct *work)
{
	if (dma_releasing_pages)
		dma_open(MEMACCT_PIN_EV_KWORKER, -1, 0, 0, 0);
	return 0;
}

SEC("tp_btf/workqueue_execute_end")
int BPF_PROG(workqueue_execute_end, struct work_struct *work)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dma_window *w = bpf_map_lookup_elem(&dma_windows, &tid);
	__s64 now, d;

	if (!w)
		return 0;
	__sync_fetch_and_add(&dma_windows_open, -1);
	if (foll_pin_now(current_task(), &now)) {
		bool locked = pool_lock();	/* the queue's slots and the pool */

		d = now - w->foll_pin;
		if (d < 0)
			d = dma_release_queued(-d);
		/* what it gave back leaves the pool's counter: not shared again */
		if (d > 0 && locked)
			dma_pool.x -= d;
		else if (d > 0)
			__sync_fetch_and_add(&dma_pool.x, -d);
		if (locked)
			pool_unlock();
	}
	bpf_map_delete_elem(&dma_windows, &tid);
	return 0;
}

/* ---- lifecycle ------------------------------------------------------- */

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
	/* a new mm: forget the VMA caches (a new mm at the old address could
	 * show the same sequence) */
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
	/* a process that moves itself (runc init, a shell's echo $$ >
	 * cgroup.procs) has up to FOLD_BATCH - 1 flows pending in this CPU's
	 * slot: folded first, so that they stay with the cgroup they were
	 * made in (issue 39: one batch, up to 19 CoW pages, went to the new
	 * cgroup). Another thread of the group running on another CPU now
	 * folds its own at its next switch: those go with the move. */
	{
		__u32 zero = 0;
		struct cpu_slot *sl = bpf_map_lookup_elem(&cpu_slots, &zero);
		struct task_struct *cur = (void *)bpf_get_current_task();

		if (sl && sl->task == (__u64)cur && sl->pend.n &&
		    BPF_CORE_READ(cur, tgid) == task->tgid)
			fold_into(&p->f, &sl->pend);
	}
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
	/* every thread folds its pending flows (task is current here) and
	 * frees its CPU slot */
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
	/* the record keeps its at-exit values, but no longer counts as one
	 * with pins for mmap_lock_released */
	if (p->pin.locked_vm_pages || p->pin.pinned_vm_pages)
		__sync_fetch_and_add(&pinned_procs, -1);
	if (c) {
		/* its pinned memory goes with its mm: take it out of the
		 * cgroup's sums (the record keeps the at-exit values) */
		add_nz(&c->pin.locked_vm_pages, -(__s64)p->pin.locked_vm_pages);
		add_nz(&c->pin.pinned_vm_pages, -(__s64)p->pin.pinned_vm_pages);
	}
	__sync_fetch_and_add(&exit_folds_end, 1);
	/* its DMA pins outlive it until the kernel unpins them (fds closed
	 * by exit_files(), then a kworker): the cgroup keeps them until then */
	if (p->pin.dma_pinned_pages > p->dma_queued_pages)
		dma_queue(&key, p->memcg_id, p->pin.dma_pinned_pages - p->dma_queued_pages, 0);
	/* io_uring buffers (pinned_vm, FOLL_PIN too) are unpinned by a
	 * kworker after exit as well: queued so that release is not taken for
	 * a DMA one (only when DMA pins are pending, else nothing listens) */
	if (p->pin.pinned_vm_pages && dma_releasing_pages)
		dma_queue(&key, p->memcg_id, p->pin.pinned_vm_pages, 1);

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

/*
 * iter/task: stocks of every process in one pass (memacct daemon, where the
 * process walk of task_walk.bpf.c cannot run: kernels before 6.7). Emits one
 * struct memacct_task_stock per thread-group leader that has an mm; the
 * iterator visits every thread, kernel threads and zombies have no mm.
 */
SEC("iter/task")
int task_stocks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct memacct_task_stock r = {};
	struct mm_struct *mm;

	if (!task || task->pid != task->tgid)
		return 0;
	mm = task->mm;
	if (!mm)
		return 0;
	task_stock_fill(task, mm, &r);
	bpf_probe_read_kernel(r.comm, sizeof(r.comm), task->comm);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
