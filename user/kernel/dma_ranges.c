// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* dma_ranges.c - a process's known DMA-pinned ranges (dma_ranges.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "dma_ranges.h"
#include "smaps.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static int add(struct dma_ranges *r, size_t *cap, uint64_t start, uint64_t pages, int fd,
	       enum dma_source src)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (r->n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct dma_range *v = realloc(r->v, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		*cap = c;
	}
	r->v[r->n++] = (struct dma_range){ start, start + pages * page, fd, src };
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct dma_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int dma_ranges_read(int map_fd, const struct memacct_proc_key *key,
		    const struct memacct_proc *p, struct dma_ranges *out)
{
	struct memacct_dma_range_key k, next;
	struct memacct_dma_range_val v;
	size_t cap = 0;
	void *prev = NULL;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < MEMACCT_DMA_RANGES; i++)
		if (p->dma_ranges[i].pages &&
		    add(out, &cap, p->dma_ranges[i].start, p->dma_ranges[i].pages,
			p->dma_ranges[i].fd, DMA_SRC_XDP))
			goto nomem;
	/* a walk of the whole map: it holds the host's CUDA pinned blocks
	 * (tens to thousands), read once per process explained */
	while (map_fd >= 0 && !bpf_map_get_next_key(map_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.proc.tgid != key->tgid || k.proc.start_boottime_ns != key->start_boottime_ns ||
		    bpf_map_lookup_elem(map_fd, &k, &v) || !v.r.pages || v.gen != p->dma_range_gen)
			continue;	/* another process's, or stale */
		if (add(out, &cap, v.r.start, v.r.pages, v.r.fd, DMA_SRC_NVIDIA))
			goto nomem;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_start);
	return (int)out->n;
nomem:
	dma_ranges_free(out);
	return -ENOMEM;
}

int dma_ranges_prune(int map_fd, int procs_fd)
{
	struct memacct_dma_range_key k, next, gone[64];
	struct memacct_dma_range_val v;
	struct memacct_proc p;
	void *prev = NULL;
	int n = 0, deleted = 0;

	if (map_fd < 0 || procs_fd < 0)
		return 0;
	/* collected first, deleted after: a delete during the walk would
	 * restart it at the first key */
	while (n < 64 && !bpf_map_get_next_key(map_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(map_fd, &k, &v))
			continue;
		if (bpf_map_lookup_elem(procs_fd, &k.proc, &p) ||
		    (p.flags & MEMACCT_PROC_EXITED) || v.gen != p.dma_range_gen)
			gone[n++] = k;
	}
	for (int i = 0; i < n; i++)
		deleted += !bpf_map_delete_elem(map_fd, &gone[i]);
	return deleted;
}

uint64_t dma_ranges_bytes(const struct dma_ranges *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].end - r->v[i].start;
	return n;
}

void dma_ranges_free(struct dma_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

const char *dma_source_name(enum dma_source s)
{
	return s == DMA_SRC_NVIDIA ? "nvidia" : "xdp";
}

const char *dma_source_text(enum dma_source s)
{
	return s == DMA_SRC_NVIDIA ? "the NVIDIA driver (CUDA pinned host memory)" :
				     "AF_XDP (XDP_UMEM_REG)";
}

uint64_t dma_locked_overlap(pid_t pid, const struct memacct_proc *p, bool *unknown)
{
	uint64_t ranged = 0, overlap = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct smaps sm;

	*unknown = false;
	for (int i = 0; i < MEMACCT_DMA_RANGES; i++)
		ranged += p->dma_ranges[i].pages * page;
	if (ranged < p->pin.dma_pinned_pages * page)
		*unknown = true;
	if (!ranged || read_smaps(pid, &sm) < 0)
		return 0;
	for (int i = 0; i < MEMACCT_DMA_RANGES; i++) {
		uint64_t a = p->dma_ranges[i].start;
		uint64_t b = a + p->dma_ranges[i].pages * page;

		if (!p->dma_ranges[i].pages)
			continue;
		for (size_t j = 0; j < sm.n; j++) {
			const struct smaps_map *m = &sm.maps[j];
			uint64_t lo = m->start > a ? m->start : a;
			uint64_t hi = m->end < b ? m->end : b;

			if (m->vm_locked && lo < hi)
				overlap += hi - lo;
		}
	}
	smaps_free(&sm);
	return overlap;
}

uint64_t dma_pinned_net(pid_t pid, const struct memacct_proc *p, uint64_t mlocked,
			bool *estimate)
{
	uint64_t dma = p->pin.dma_pinned_pages * (uint64_t)sysconf(_SC_PAGESIZE), ov = 0;
	bool unknown = false;

	*estimate = p->pin.dma_flags & MEMACCT_DMA_ESTIMATE;
	if (dma && mlocked)
		ov = dma_locked_overlap(pid, p, &unknown);
	if (unknown)
		*estimate = true;	/* may overlap mlocked memory */
	return dma - (ov < dma ? ov : dma);
}
