/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_maps.h - CoW copies by the mapping they hit (issue 42): the kernel's
 * per-process slots (struct memacct_cow_maps, bpf/faults.bpf.c cowm_fold())
 * joined with the mapping they are in. A forked worker's mapping is its
 * parent's of the same range (inherited at fork): its path and the parent's
 * resident bytes of it come from the parent's /proc/PID/smaps, read when
 * memacct first sees a copy in it (the catalog below); where the parent does
 * not hold it, from the process's own smaps, without a parent figure.
 * docs/metrics.md "CoW by mapping".
 */
#ifndef MEMACCT_COW_MAPS_H
#define MEMACCT_COW_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "memacct.h"

/* One copied mapping of one process. */
struct cow_mapping {
	uint64_t start, end;		/* the VMA [vm_start, vm_end) at its first copy */
	uint64_t bytes;			/* copied (pages × page size) */
	enum memacct_cow_kind kind;	/* from the kernel (brk, stack, file) */
	bool shmem;			/* a private mapping of a tmpfs/shm/memfd file */
	const char *path;		/* the file; NULL: anonymous or not known.
					 * Borrowed: the catalog's or the JSON's */
	bool has_parent;		/* parent_rss known */
	uint64_t parent_rss;		/* bytes: the parent's resident bytes of the
					 * mapping when memacct first saw a copy in it */
};

/* The mappings memacct has read, by (process, role, vm_start). */
struct cowm_vma {
	pid_t pid;			/* whose smaps it came from */
	bool as_parent;			/* read for a child's copies (after its
					 * fork), not for @pid's own */
	uint64_t start, end, rss;	/* bytes */
	char *path;			/* owned; NULL: anonymous */
	bool shmem;
	bool miss;			/* [start, start + 1) was in none of pid's
					 * mappings when read: not read again */
};

struct cowm_catalog {
	struct cowm_vma *v;
	size_t n, cap;
};

/*
 * cowm_catalog_note() - make sure every slot of @cm (a process @pid whose
 * parent is @ppid) has its mapping in @c: the parent's smaps read once for
 * the starts not known yet, else @pid's own. A process gone meanwhile leaves
 * its slots unknown (retried at the next call). Returns the mappings added,
 * or -ENOMEM.
 */
int cowm_catalog_note(struct cowm_catalog *c, pid_t pid, pid_t ppid,
		      const struct memacct_cow_maps *cm);
void cowm_catalog_free(struct cowm_catalog *c);

/*
 * cowm_rows() - @cm's slots as struct cow_mapping into @out (room for
 * MEMACCT_COW_MAPS), largest first, bytes from pages of @page_size; paths
 * and parent figures from @c (borrowed). Returns how many.
 */
size_t cowm_rows(const struct cowm_catalog *c, pid_t pid, pid_t ppid,
		 const struct memacct_cow_maps *cm, uint64_t page_size,
		 struct cow_mapping *out);

/* cowm_kind_name() - "heap", "anon", "stack", "file", "shmem" (the JSON's and the
 * daemon's mapping_kind) */
const char *cowm_kind_name(const struct cow_mapping *m);

/* cowm_any() - whether @cm holds any copy */
bool cowm_any(const struct memacct_cow_maps *cm);

#endif
