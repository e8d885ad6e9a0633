// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * dma.bpf.c - DMA pins: FOLL_PIN pages no mm counter shows, attributed to
 * the process whose syscall pinned them; the NVIDIA driver's calls decoded
 * by range (nvidia.bpf.h). What other units need: dma.bpf.h.
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
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"
#include "pins.bpf.h"
#include "faults.bpf.h"
#include "dma.bpf.h"
#include "nvidia.bpf.h"

const volatile __u32 foll_pin_nodes = 1;	/* nr_node_ids */
const volatile __u32 foll_pin_cpus = 1;		/* possible CPUs */
/* core_fixes.bpf.h's: the FOLL_PIN readers' */
__u64 foll_pin_pgdat[FOLL_PIN_MAX_NODES];
__u64 foll_pin_cpu_off[FOLL_PIN_MAX_CPUS];
/* nvidia.bpf.h's */
__u64 nv_calls[MEMACCT_NV_NR];
struct dma_ranges_map dma_ranges SEC(".maps");

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
struct dma_pool_state {
	__s64 last;		/* pool counter (foll_pin_now() - x) at the last event */
	__s64 s;		/* sum of per-window shares, << DMA_POOL_SHIFT */
	__s64 x;		/* kworker releases taken out of the pool */
	__s64 bp_start;		/* pool counter when the busy period began */
	__s64 bp_given;		/* pages given to windows closed in it */
	__u64 open;		/* pooled windows open now */
	__u64 known_open;	/* of them, windows of a fixed size */
	__s64 res_pos, res_neg;	/* their pins (unpins: < 0) reserved */
	__s64 pend_pos;		/* of res_pos, not yet seen in the counter */
	__s64 pend_neg;		/* of res_neg, not yet seen (<= 0) */
};
static struct dma_pool_state dma_pool;

struct dma_pool_lock_map dma_pool_lock SEC(".maps");
/* windows that could not take the pool's lock and kept their raw delta */
__u64 dma_pool_lock_missed;



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
 * One function of 127 lines, on purpose: split into the window's delta
 * (its pool share or raw delta, with out-parameters for the pages and the
 * estimate flag) and the attribution, clang 14 made each program that
 * closes a window ~115 instructions longer (sys_exit_ioctl 1,615 -> 1,730),
 * the out-parameters kept on the stack across the inlined helpers.
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
