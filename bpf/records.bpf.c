// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * records.bpf.c - the state of records.bpf.h: the per-process and
 * per-cgroup records every concern counts into, the filter they are made
 * under, the drop counters, and the fences that let a reader tell a move of
 * flows overlapped its read. No program: the other units' programs make and
 * fill the records. See docs/metrics.md for every counter and
 * include/memacct.h for the records.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by userspace between open and load (user/kernel/bpf_loader.c). */
const volatile __u64 filter_cgid;
const volatile __u64 fallback_cgid;
const volatile __u32 filter_level;
const volatile __u64 page_size = 4096;

__u64 dropped[MEMACCT_DROP_NR];

struct procs_map procs SEC(".maps");
struct cgroups_map cgroups SEC(".maps");
struct exits_map exits SEC(".maps");

const struct memacct_proc zero_proc;
const struct memacct_cgroup zero_cgroup;

/*
 * Flows that found no record at all (the cgroups map full and the fallback
 * record gone, cgroup_or_up()): counted here by field, so that what is lost
 * is known in bytes (docs/metrics.md "Nothing lost"). Userspace makes the
 * fallback record at start, so this stays 0 unless someone deletes it.
 */
struct memacct_flows lost_flows;

/*
 * Moves of flows between records of the cgroups map (a process changing
 * cgroup, a cgroup removed), counted before and after each move so that a
 * reader of the maps can tell that none overlapped its reading: it reads
 * flow_moves_end, the maps, then flow_moves_begin, and reads again when the
 * two differ (user/model/collect.c read_flows()). Such a move overlapping a read
 * can count its flows twice (the two records read in either order), so a
 * reader that still overlapped one after its retries keeps what it had.
 * Folds of an exiting process into its cgroup are counted apart
 * (exit_folds_*): the record is flagged MEMACCT_PROC_EXITED, which a reader
 * skips, before the fold, and a reader reads the cgroups map before the
 * procs map, so an overlapping fold can only leave the process out, never
 * count it twice: read again, but published after the retries in any case
 * (the published counters are clamped).
 */
__u64 flow_moves_begin;
__u64 flow_moves_end;
__u64 exit_folds_begin;
__u64 exit_folds_end;

/* The daemon's pinned kernel side: how many links it pinned (written by
 * userspace, user/kernel/pin.c), so that a daemon restarted on the pins
 * tells a link removed meanwhile (its program detached) from none */
__u64 links_pinned;
