/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * dma.bpf.h - what other units need of dma.bpf.c: the release queue, where
 * an exiting process's DMA pins wait for the kernel's unpin
 * (sched_process_exit), and the pool's lock it changes under.
 */
#ifndef MEMACCT_DMA_BPF_H
#define MEMACCT_DMA_BPF_H

#define DMA_POOL_TRIES	64
#define DMA_RELEASE_SLOTS	16

/* Of the DMA pages attributed, those left by closed fds or exited
 * processes, awaiting the unpin (dma.bpf.c). */
extern __u64 dma_releasing_pages;
extern struct memacct_dma_release dma_release_q[DMA_RELEASE_SLOTS];

/* The pool's lock: an element added with BPF_NOEXIST (dma.bpf.c). */
struct dma_pool_lock_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};
extern struct dma_pool_lock_map dma_pool_lock SEC(".maps");
extern __u64 dma_pool_lock_missed;

static __always_inline bool pool_lock(void)
{
	__u32 k = 0, v = 0;

	for (int i = 0; i < DMA_POOL_TRIES; i++)
		if (!bpf_map_update_elem(&dma_pool_lock, &k, &v, BPF_NOEXIST))
			return true;
	__sync_fetch_and_add(&dma_pool_lock_missed, 1);
	return false;
}

static __always_inline void pool_unlock(void)
{
	__u32 k = 0;

	bpf_map_delete_elem(&dma_pool_lock, &k);
}

/* @pages of process @key (memcg @cgid; @pinned_vm: io_uring buffers) to
 * the release queue, under the pool's lock: the next kworker unpin measured
 * gives them back. */
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
 * sched_process_exit's step for process @key (@p): its DMA pins outlive it
 * until the kernel unpins them (fds closed by exit_files(), then a
 * kworker), the cgroup keeps them until then; its io_uring buffers
 * (pinned_vm, FOLL_PIN too) are unpinned by a kworker after exit as well,
 * queued so that release is not taken for a DMA one (only when DMA pins
 * are pending, else nothing listens).
 */
static __always_inline void dma_exit(struct memacct_proc_key *key, struct memacct_proc *p)
{
	if (p->pin.dma_pinned_pages > p->dma_queued_pages)
		dma_queue(key, p->memcg_id, p->pin.dma_pinned_pages - p->dma_queued_pages, 0);
	if (p->pin.pinned_vm_pages && dma_releasing_pages)
		dma_queue(key, p->memcg_id, p->pin.pinned_vm_pages, 1);
}

#endif /* MEMACCT_DMA_BPF_H */
