/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * shmem_orphans.h - tmpfs files that no process maps or holds open (a
 * /dev/shm file left by a job that exited), and how many of their bytes a
 * cgroup is charged for. Their pages stay charged to the memcg that first
 * wrote them (mm/shmem.c shmem_add_to_page_cache(), mem_cgroup_charge()),
 * count as used in memory.current and the kubelet's working set, and no
 * reclaim frees them without swap: nobody's RSS shows them.
 *
 * Sources: tmpfs mounts from /proc/self/mountinfo; the files' allocated
 * bytes from stat(2) st_blocks (shmem_getattr(): resident and swapped);
 * held files from every process's /proc/PID/maps (dev:inode of each file
 * mapping) and /proc/PID/fd (stat of each link); the resident pages of a
 * file from mincore(2) of a shared read-only mapping of it, each page's
 * frame from /proc/self/pagemap once read, and the frame's memcg from
 * /proc/kpagecgroup (fs/proc/page.c kpagecgroup_read(): the inode number
 * of the memcg's cgroup directory; CONFIG_MEMCG, root). Reading a resident
 * page maps it without allocating (shmem_fault() finds it in the page
 * cache); holes are never read. Errors are negative errno.
 */
#ifndef MEMACCT_SHMEM_ORPHANS_H
#define MEMACCT_SHMEM_ORPHANS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "cgroup.h"

/* files listed at most (the largest charged first); the rest summed */
#define SHMEM_ORPHANS_MAX	64
/* tmpfs entries walked at most over all mounts (a /run of many files) */
#define SHMEM_ORPHANS_WALK_MAX	200000

struct shmem_orphan {
	char path[PATH_MAX];
	uint64_t ino;
	uint64_t dev;		/* st_dev */
	uint64_t size;		/* st_size, bytes */
	uint64_t allocated;	/* st_blocks * 512: resident and swapped, bytes */
	uint64_t resident;	/* pages in memory (mincore), bytes */
	uint64_t charged;	/* of resident: charged to the cgroup's subtree, bytes */
};

struct shmem_orphans {
	struct shmem_orphan *files;	/* malloc'd, charged descending */
	size_t nfiles;			/* listed (<= SHMEM_ORPHANS_MAX) */
	uint64_t charged;		/* bytes over all orphans, listed or not */
	uint64_t files_charged;		/* orphans with a charged byte */
	uint64_t files_walked;		/* regular tmpfs files seen */
	uint64_t unreadable;		/* orphans whose pages could not be read */
	bool truncated;			/* SHMEM_ORPHANS_WALK_MAX reached */
};

/*
 * shmem_orphans_scan() - the tmpfs files of every tmpfs mount that no
 * process maps or holds open and that hold pages charged to @cg or a
 * cgroup below it, into *@out (shmem_orphans_free()). Cost: one walk of
 * /proc (maps and fds of every process), one of the tmpfs mounts, and per
 * orphan a mapping with one pagemap and one kpagecgroup read per resident
 * page. 0, or negative errno: -EACCES without root (kpagecgroup), -ENOENT
 * on a kernel without /proc/kpagecgroup (no CONFIG_MEMCG), -ENOMEM.
 */
int shmem_orphans_scan(const struct memcg *cg, struct shmem_orphans *out);
void shmem_orphans_free(struct shmem_orphans *o);

/*
 * parse_mountinfo_tmpfs() - the mount point of a /proc/self/mountinfo line
 * (fs/proc_namespace.c show_mountinfo(), octal escapes undone) into @mnt
 * when the line's filesystem type is tmpfs, 0; -ENOENT for another type,
 * -EINVAL for a line that is not mountinfo's, -ENAMETOOLONG for a mount
 * point longer than @len (never cut: a cut path is another directory).
 */
int parse_mountinfo_tmpfs(const char *line, char *mnt, size_t len);

#endif
