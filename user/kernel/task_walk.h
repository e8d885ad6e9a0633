/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * task_walk.h - the daemon's pass over processes (bpf/task_walk.bpf.c): one
 * BPF_PROG_TEST_RUN of a program that follows the kernel's process list and
 * writes every process's stocks into an array mapped here. Kernels 6.7 and
 * later; older ones read the iter/task link (pin.c).
 */
#ifndef MEMACCT_TASK_WALK_H
#define MEMACCT_TASK_WALK_H

#include <stdbool.h>
#include "memacct.h"

struct task_walk;

/*
 * task_walk_open() - load the walk with room for @procs processes (grown by
 * task_walk_read() when the machine has more). *@out is owned by the caller
 * (task_walk_close()). Returns 0, -ENOTSUP when the kernel has no open-coded
 * task iterator (bpf_iter_task_new, v6.7) or no bpf_rcu_read_lock (v6.2),
 * or another negative errno from loading (printed under -v).
 */
int task_walk_open(uint32_t procs, struct task_walk **out);

/*
 * task_walk_read() - run the walk once: *@out points to the walk's array,
 * one struct memacct_task_stock per process with an mm (kernel threads and
 * zombies have none), pages and counts as the kernel keeps them
 * (mm->rss_stat, locked_vm, pinned_vm, hiwater_rss, signal->min_flt and
 * maj_flt, the memory cgroup's kernfs id); without @own_fields, ppid,
 * start_boottime_ns, hiwater_rss_pages, min_flt and maj_flt are 0 (5 cache
 * lines less per process, for callers that show no process on its own).
 * The array is @w's, mapped read-write: valid until the next
 * task_walk_read() or task_walk_close(), which rewrite or unmap it; the
 * caller may reorder its records and fill the one after the last (there is
 * always room for one more). Returns the count or a negative errno; when
 * the array was too small it is reloaded with a quarter more room than
 * needed and the walk run again, up to TASK_WALK_MAX_PROCS (-E2BIG beyond).
 */
long task_walk_read(struct task_walk *w, bool own_fields, struct memacct_task_stock **out);

/* task_walk_capacity() - processes the array holds now. */
uint32_t task_walk_capacity(const struct task_walk *w);

void task_walk_close(struct task_walk *w);

/*
 * Every process a kernel can have: each has a PID, at most pid_max, which
 * is at most PID_MAX_LIMIT (include/linux/threads.h: 4 Mi on 64-bit), so
 * the walk's array grows to hold them all and -E2BIG cannot be reached (it
 * was 1 Mi, past which a collection had no process stocks at all). 104
 * bytes a process: 416 MiB mapped only on a host of that many.
 */
#define TASK_WALK_MAX_PROCS (4U << 20)
#endif
