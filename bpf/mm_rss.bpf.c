// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * mm_rss.bpf.c - the state of core_fixes.bpf.h's RSS readers
 * (mm_rss_pages()): each CPU's per-CPU offset, learnt once. Linked into
 * both objects that read an mm's RSS, memacct (the OOM record, the
 * task_stocks iterator) and task_walk; a header holds no state, so each
 * object has one copy, not one per unit that includes it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "core_fixes.bpf.h"

const volatile __u32 rss_cpus;	/* possible CPUs (userspace); 0: count only */
const volatile bool rss_direct;	/* see core_fixes.bpf.h */
/*
 * A data section of their own, not .bss, which userspace copies at every
 * collection (user/kernel/pin.c bss_read()); 64 KiB there would also be in
 * every pinned .bss's layout check.
 */
__u64 rss_cpu_off[RSS_MAX_CPUS] SEC(".data.rss_cpu_off");
__u32 rss_cpu_off_n SEC(".data.rss_cpu_off");
struct rss_cpu_map_def rss_cpu_map SEC(".maps");
