// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * numa.bpf.c - NUMA migrations and balancing, per process and cgroup: pages
 * migrated by reason (migrate:mm_migrate_pages) and the scheduler's NUMA
 * task moves and swaps. Where each allocation lands (remote-NUMA bytes) is
 * the fault path's (faults.bpf.c page_node()). No state of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"

SEC("tp/migrate/mm_migrate_pages")
int mm_migrate_pages(struct trace_event_raw_mm_migrate_pages *ctx)
{
	struct memacct_flows *f;
	__u64 pages = BPF_CORE_READ(ctx, succeeded);
	int reason = BPF_CORE_READ(ctx, reason);

	if (!pages)
		return 0;
	f = flows_get(current_task());
	if (!f)
		return 0;
	if (reason < 0 || reason >= MEMACCT_MR_OTHER)
		reason = MEMACCT_MR_OTHER;
	__sync_fetch_and_add(&f->numa_migrated_pages[reason & 7], pages);
	return 0;
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(sched_move_numa, struct task_struct *task, int src_cpu, int dst_cpu)
{
	struct memacct_flows *f = flows_get(task);

	if (f)
		__sync_fetch_and_add(&f->numa_task_moves, 1);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(sched_swap_numa, struct task_struct *src, int src_cpu,
	     struct task_struct *dst, int dst_cpu)
{
	struct memacct_flows *f;

	if (!src)
		return 0;
	f = flows_get(src);
	if (f)
		__sync_fetch_and_add(&f->numa_task_swaps, 1);
	if (!dst)
		return 0;
	f = flows_get(dst);
	if (f)
		__sync_fetch_and_add(&f->numa_task_swaps, 1);
	return 0;
}
