/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * nvidia.bpf.h - CUDA pinned host memory by range: the NVIDIA driver's
 * pinning calls, their layouts and the range records' declarations. The
 * windows around the calls and the state are dma.bpf.c's (nv_enter(),
 * nv_exit()).
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
#ifndef MEMACCT_NVIDIA_BPF_H
#define MEMACCT_NVIDIA_BPF_H

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
extern __u64 nv_calls[MEMACCT_NV_NR];

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

/* the ranges pinned by the driver, by process and RM handles */
struct dma_ranges_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* sized by bpf_loader.c */
	__type(key, struct memacct_dma_range_key);
	__type(value, struct memacct_dma_range_val);
};
extern struct dma_ranges_map dma_ranges SEC(".maps");

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

#endif /* MEMACCT_NVIDIA_BPF_H */
