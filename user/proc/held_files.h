/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * held_files.h - which files the processes of this host map or hold open:
 * every file mapping of every /proc/PID/maps (fs/proc/task_mmu.c: device,
 * inode and path of each VMA) and every open regular file of every
 * /proc/PID/fd (stat(2) through the link; readlink(2) for the path). A
 * process gone mid-walk, or one whose files are not ours to see, is
 * skipped. Used to tell an orphaned tmpfs file (shmem_orphans.h) and to
 * name and flag the files of the page cache (model/page_cache.h).
 */
#ifndef MEMACCT_HELD_FILES_H
#define MEMACCT_HELD_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum held_how {
	HELD_MAPPED = 1,	/* a VMA maps it */
	HELD_OPEN = 2,		/* a file descriptor holds it */
};

struct held_visitor {
	/* the files of interest, by st_dev (makedev()) and inode; NULL: all */
	bool (*wants)(uint64_t dev, uint64_t ino, void *ctx);
	/* called for each holder of a wanted file: @path as the kernel shows
	 * it (a mapping's " (deleted)" cut; NULL when not read); a negative
	 * errno stops the walk and is returned */
	int (*held)(uint64_t dev, uint64_t ino, enum held_how how, pid_t pid,
		    const char *path, void *ctx);
	void *ctx;
};

/*
 * held_files_walk() - one walk of /proc: @v->held() for every mapping and
 * every open regular file of every process that @v->wants(). Cost: every
 * process's maps read once and each of its fds stat'ed once (a path read
 * only for a wanted file). 0, or negative errno (opendir of /proc, -ENOMEM,
 * or what @v->held() returned).
 */
int held_files_walk(const struct held_visitor *v);

/*
 * held_files_walk_pids() - the same over the processes @pids (@n of them)
 * only: a job's files without the walk of a whole host.
 */
int held_files_walk_pids(const struct held_visitor *v, const pid_t *pids, size_t n);

#endif
