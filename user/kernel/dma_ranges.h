/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * dma_ranges.h - the user ranges a process has pinned for DMA where the
 * kernel's arguments name them: XDP_UMEM_REG areas (struct memacct_proc
 * dma_ranges[], setsockopt(SOL_XDP)) and NVIDIA RM OS-descriptor
 * allocations, CUDA pinned host memory (the dma_ranges map: "NVIDIA" in
 * bpf/dma.bpf.c, nvidia.bpf.h). Addresses and sizes in bytes.
 */
#ifndef MEMACCT_DMA_RANGES_H
#define MEMACCT_DMA_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "memacct.h"

enum dma_source {
	DMA_SRC_XDP,		/* setsockopt(SOL_XDP, XDP_UMEM_REG) */
	DMA_SRC_NVIDIA,		/* ioctl NV_ESC_RM_ALLOC_MEMORY, OS descriptor */
};

struct dma_range {
	uint64_t start, end;	/* [start, end), page-aligned user addresses */
	int fd;			/* the fd it was pinned through */
	enum dma_source src;
};

struct dma_ranges {
	struct dma_range *v;	/* sorted by start; owned, dma_ranges_free() */
	size_t n;
};

/*
 * dma_ranges_read() - @p's known pinned ranges: those in its record, and
 * those of process @key in the dma_ranges map @map_fd (-1: none). Returns
 * the count, or -ENOMEM (@out then empty).
 */
int dma_ranges_read(int map_fd, const struct memacct_proc_key *key,
		    const struct memacct_proc *p, struct dma_ranges *out);

/*
 * dma_ranges_prune() - delete from the dma_ranges map @map_fd up to 64
 * entries whose process has no record in the procs map @procs_fd (exited)
 * or whose generation is not its record's (a parent freed, a pinning fd
 * closed: bpf/nvidia.bpf.h dma_ranges_stale()). Each collection calls it,
 * so a stale entry lasts a few intervals. Returns the entries deleted.
 */
int dma_ranges_prune(int map_fd, int procs_fd);

/* dma_ranges_bytes() - the bytes the ranges of @r pin. */
uint64_t dma_ranges_bytes(const struct dma_ranges *r);

/* dma_ranges_free() - release @r's array; @r is empty after. */
void dma_ranges_free(struct dma_ranges *r);

/* dma_source_name() - "xdp" or "nvidia" (JSON); dma_source_text() - who
 * pinned it, for a sentence ("the NVIDIA driver"). */
const char *dma_source_name(enum dma_source s);
const char *dma_source_text(enum dma_source s);

/*
 * dma_locked_overlap() - bytes of @p's DMA-pinned ranges (the BPF record of
 * process @pid: XDP_UMEM_REG areas) that lie in VM_LOCKED mappings of @pid
 * (/proc/PID/smaps VmFlags "lo"): those pages are in VmLck already, so the
 * DMA figure is net of them. Pins whose range is unknown (ioctl) cannot be
 * told apart: *@unknown is set when the process has such pins. 0 when
 * smaps cannot be read.
 */
uint64_t dma_locked_overlap(pid_t pid, const struct memacct_proc *p, bool *unknown);

/*
 * dma_pinned_net() - the DMA pins (bytes) of @p, the BPF record of the live
 * process @pid (a daemon's pinned procs map), net of the part of its ranges
 * in mlocked memory (dma_locked_overlap(), read only when @mlocked, its
 * VmLck in bytes, is nonzero), as run/attach show them. *@estimate: the BPF
 * side flagged the figure (MEMACCT_DMA_ESTIMATE), or pins of unknown range
 * may overlap the mlocked memory.
 */
uint64_t dma_pinned_net(pid_t pid, const struct memacct_proc *p, uint64_t mlocked,
			bool *estimate);

#endif
