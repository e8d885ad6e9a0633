// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * pins.bpf.c - pinned memory: each process's locked_vm and pinned_vm (and
 * its cgroup's sums and peaks) after each syscall that moves them, or where
 * no syscall tracepoint is on, at each mmap_lock release and io_uring
 * registration; change events for audit --watch. What other units need
 * (pinned_set(), the events): pins.bpf.h. Pages pinned for DMA, which no
 * mm counter shows: dma.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"
#include "pins.bpf.h"

/*
 * Change events for memacct audit --watch: off unless userspace sets
 * pin_events_on before load (the verifier then drops the code, so the daemon
 * and run/attach pay nothing). pin_events_lost counts records the ring
 * buffer had no room for; userspace then re-reads /proc.
 */
const volatile bool pin_events_on;
__u64 pin_events_lost;
struct pin_events_map pin_events SEC(".maps");

/* Process records whose locked_vm or pinned_vm is not 0 (pinned_set()):
 * while none is, mmap_lock_released leaves a process at 0 at once. */
__s64 pinned_procs;

#define PINNED_EXIT(name)					\
SEC("tp/syscalls/sys_exit_" #name)				\
int sys_exit_##name(struct syscall_trace_exit *ctx)		\
{								\
	pinned_update(ctx);					\
	return 0;						\
}

PINNED_EXIT(mlock)
PINNED_EXIT(mlock2)
PINNED_EXIT(munlock)
PINNED_EXIT(mlockall)
PINNED_EXIT(munlockall)
PINNED_EXIT(mmap)
PINNED_EXIT(munmap)
PINNED_EXIT(mremap)
PINNED_EXIT(brk)		/* heap growth under mlockall(MCL_FUTURE) */

/*
 * The same without any syscall tracepoint (--dma-pins off, kernels whose
 * mmap_lock tracepoints are (mm, write), as 6.18's, with per-VMA locks, so
 * page faults seldom take the mmap lock; user/kernel/bpf_loader.c chooses). A syscall
 * tracepoint puts every syscall of every task on the slow path (~55 ns a
 * getppid() here, docs/overhead.md); these fire only where the counters can
 * move. mm->locked_vm only grows under the mmap lock held for writing
 * (mlock_fixup(), mmap_region(), brk, mremap, vfio's account_locked_vm(),
 * stack growth: lock_mm_and_find_vma() upgrades), and mmap_lock_released
 * fires before the lock goes: the value read is the one the operation left,
 * before any other change, so each peak is exact. Read releases count too:
 * munmap() and stack growth downgrade to a read lock before releasing.
 * pinned_vm of io_uring's registered buffers grows without the mmap lock
 * (io_account_mem()): io_uring:io_uring_register fires at the end of every
 * io_uring_register(). Only the current task's own mm is its process's
 * (khugepaged, /proc readers and remote GUP take other mms' locks).
 */
static __always_inline void pinned_sample(struct task_struct *task, struct mm_struct *mm)
{
	struct memacct_proc *p;
	__u64 locked = mm->locked_vm, pinned = mm->pinned_vm.counter;

	if (!locked && !pinned && !pinned_procs)
		return;		/* nothing pinned and nothing to take back */
	p = proc_get(task, locked || pinned);
	if (p)
		pinned_set(p, locked, pinned);
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(mmap_lock_released, struct mm_struct *mm)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/* an exiting task (PF_EXITING: acct_collect(), exit_mm()) takes its
	 * last sample in sched_process_exit; nothing grows in between */
	if (mm != task->mm || (task->flags & 0x00000004))
		return 0;
	pinned_sample(task, mm);
	return 0;
}

SEC("tp_btf/io_uring_register")
int BPF_PROG(io_uring_register_pinned)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;

	if (mm)
		pinned_sample(task, mm);
	return 0;
}
