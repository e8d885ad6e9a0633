/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * records.h - the BPF side's records read from userspace, by every reader:
 * the per-process records (the procs map: struct memacct_proc_key ->
 * struct memacct_proc) and the per-cgroup ones (the cgroups map: memcg id
 * -> struct memacct_cgroup, the flows of exited processes and the pinned
 * sums), bpf/records.bpf.c. Read by run/attach/top's session and the
 * daemon's collector (records_read(), both maps seen whole), the OOM
 * sample, explain and audit through the pins (procs_map_each()).
 */
#ifndef MEMACCT_RECORDS_H
#define MEMACCT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "memacct.h"

/*
 * The BPF side's global counters (its .bss), read at once: from a daemon's
 * pinned .bss (pin.h pin_counters()) or a run's skeleton. Here, with the
 * records: their flow fences tell a reader of the records to read again.
 */
struct pin_counters {
	uint64_t dropped[MEMACCT_DROP_NR];	/* events lost, by enum memacct_drop */
	uint64_t vma_lockless;		/* VMAs read by the lockless walk (bpf/maple.bpf.h) */
	uint64_t dma_attributed_pages;	/* DMA pages attributed to processes, not yet unpinned */
	uint64_t nv_calls[MEMACCT_NV_NR];	/* NVIDIA RM pinning calls decoded */
	bool dma_readable;		/* the FOLL_PIN counters can be read (false once a read failed) */
	/* moves of flows between records, and exits' folds, begun and ended
	 * (bpf/records.bpf.h flows_move()): a reader of the cgroups and procs
	 * maps that reads the end count before and the begin count after saw
	 * none half done when the two are equal */
	uint64_t flow_moves_begin, flow_moves_end;
	uint64_t exit_folds_begin, exit_folds_end;
	uint64_t flows_lost_pages;	/* pages allocated by faults whose flows
					 * found no record (bss lost_flows, as
					 * report_flows_lost_bytes()) */
};

/* Reads of the flows a reader makes at most (pin_flows_read_again()). */
#define PIN_FLOWS_READS 4

/*
 * pin_flows_read_again() - whether a reader of the flows (the cgroups and
 * procs maps: records.c records_read(), for the daemon's collector and
 * run/attach/top's session) reads them again after its @reads-th read:
 * while the BPF side moved flows between records or folded an exit during
 * the read, PIN_FLOWS_READS reads in all. @before holds flow_moves_end and
 * exit_folds_end read before the read, @after flow_moves_begin and
 * exit_folds_begin read after it. *@torn: a move overlapped the read (it
 * may count the move twice).
 */
static inline bool pin_flows_read_again(const struct pin_counters *before,
					const struct pin_counters *after, int reads, bool *torn)
{
	*torn = after->flow_moves_begin != before->flow_moves_end;
	if (!*torn && after->exit_folds_begin == before->exit_folds_end)
		return false;
	return reads < PIN_FLOWS_READS;
}

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

/* One record of the page_cache map (bpf/page_cache.bpf.c): as procs_map_fn. */
typedef int (*page_cache_map_fn)(const struct memacct_page_cache_key *key,
				 const struct memacct_page_cache_file *f, void *ctx);

/*
 * page_cache_map_each() - call @fn for every record of the page_cache map
 * @fd, read as procs_map_each() reads its map (batches of 1,024). Returns
 * 0, @fn's error, -ENOMEM, or the negative errno of a failed read.
 */
int page_cache_map_each(int fd, page_cache_map_fn fn, void *ctx);

/*
 * What records_read() reads, and where each record goes: the two maps, the
 * BPF side's counters, and the caller's own callbacks, which keep what they
 * need of each record (a copy of every record would double a daemon's
 * memory on a host of 100,000 processes).
 */
struct records_reader {
	int cgroups_fd, procs_fd;
	/* the counters of flow moves and exit folds now (pin_counters()'s
	 * flow_moves_* and exit_folds_* at least); 0 or a negative errno */
	int (*counters)(void *ctx, struct pin_counters *c);
	/* a record of the cgroups map; 0, or a negative errno to stop */
	int (*cgroup)(void *ctx, uint64_t id, const struct memacct_cgroup *c);
	/* a record of the procs map, exits in progress (MEMACCT_PROC_EXITED)
	 * too, for the callback to judge */
	procs_map_fn proc;
	/* the read is done again: forget what the last one gave */
	void (*restart)(void *ctx);
	void *ctx;
};

/*
 * records_read() - the cgroups map's records (those of the @nids @ids, or
 * every one when @ids is NULL), then every record of the procs map, to
 * @rd's callbacks; read again (PIN_FLOWS_READS reads at most, @rd->restart
 * before each) while the BPF side moved flows between records (a process
 * changing cgroup, a cgroup removed) or folded an exiting process into its
 * cgroup meanwhile (pin_flows_read_again()), so that each move and exit is
 * seen whole or not at all: a process exiting between the two maps' reads
 * would be in neither, a move could be counted twice. Nothing is deleted or
 * changed in the maps. *@counters: those read before the last read (zeroed
 * if unreadable); *@torn: a move still overlapped the last read (it may
 * count the move twice: the caller holds what it published). 0, or a
 * callback's negative errno, or -ENOMEM; what was read before stays given.
 */
int records_read(const struct records_reader *rd, const uint64_t *ids, size_t nids,
		 struct pin_counters *counters, bool *torn);

/*
 * cow_maps_prune() - delete from the cow_maps map @cow_fd (CoW by mapping,
 * include/memacct.h) every record whose process has no record in the procs
 * map @procs_fd: exited, and its exit record read (its reader deletes it)
 * or lost to a full ring. A reader that wants the slots of exited
 * processes reads the exit ring first. Returns the records deleted, or
 * -ENOMEM.
 */
int cow_maps_prune(int cow_fd, int procs_fd);

#endif
