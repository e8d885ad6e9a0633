/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * procs_map.h - the BPF side's per-process records (the procs map:
 * struct memacct_proc_key -> struct memacct_proc, bpf/memacct.bpf.c) read
 * from userspace, by every reader: run/attach/top's session, the daemon's
 * collector, the OOM sample, explain and audit through the pins.
 */
#ifndef MEMACCT_PROCS_MAP_H
#define MEMACCT_PROCS_MAP_H

#include "memacct.h"

/* One record: 0 to go on, a negative errno to stop the walk with it. */
typedef int (*procs_map_fn)(const struct memacct_proc_key *key, const struct memacct_proc *p,
			    void *ctx);

/*
 * procs_map_each() - call @fn for every record of the procs map @fd,
 * records of an exit in progress (MEMACCT_PROC_EXITED) too, for @fn to
 * judge. One BPF_MAP_LOOKUP_BATCH per 1,024 records (v5.6, 057996380a42
 * "bpf: Add batch ops to all htab bpf map"), not two syscalls per record;
 * a lookup per key where the kernel refuses the first batch. Records added
 * or deleted meanwhile may or may not be seen.
 * Returns 0, @fn's error, -ENOMEM, or the negative errno of a failed read.
 */
int procs_map_each(int fd, procs_map_fn fn, void *ctx);

#endif
