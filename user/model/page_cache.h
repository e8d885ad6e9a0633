/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * page_cache.h - page cache by file and memory cgroup (issue 43): what the
 * kernel side counted (bpf/page_cache.bpf.c, include/memacct.h struct
 * memacct_page_cache_file: pages added to and removed from each file's
 * page cache while charged to a memcg), read from its map, summed per file
 * or per (memcg, file), named, and flagged when a process maps the file or
 * holds it open (proc/held_files.h). Pages cached before memacct started
 * are not counted (their removals are; a file whose removals outnumber its
 * adds is flagged, its bytes 0). tmpfs files are not here: their adds have
 * no tracepoint (proc/shmem_orphans.h reads them).
 */
#ifndef MEMACCT_PAGE_CACHE_H
#define MEMACCT_PAGE_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "memacct.h"

/* files named per report (run, attach, explain); the rest are summed */
#define PAGE_CACHE_SHOWN	10

struct page_cache_file {
	uint64_t memcg_id;	/* kernfs id of the memcg; 0 when summed over several */
	uint64_t dev;		/* st_dev form: makedev(major, minor) */
	uint64_t ino;
	uint64_t bytes;		/* added - removed, 0 when removed is larger */
	uint64_t added;		/* bytes added to the page cache while charged here */
	uint64_t removed;	/* bytes removed of those (and of older pages) */
	uint64_t peak;		/* the most bytes it held at once here (kernel side:
				 * peak_pages; summed over memcgs: their sum) */
	bool before;		/* removed > added: pages cached before memacct left */
	char name[MEMACCT_FILE_NAME_LEN];	/* a dentry's name at the first add */
	char *path;		/* page_cache_resolve(): a holder's path (owned), or NULL */
	bool mapped, open;	/* page_cache_resolve(): some process maps it, holds it open */
	bool resolved;		/* page_cache_resolve() looked for its holders */
	bool held_before;	/* path: what a process of the job held it by
				 * earlier (page_cache_recall()) */
};

struct page_cache_files {
	struct page_cache_file *f;	/* owned; bytes descending */
	size_t n;
	size_t count;			/* files (f[] may list fewer: a report read
					 * back holds its PAGE_CACHE_SHOWN) */
	uint64_t bytes;			/* sum of f[].bytes */
	uint64_t untracked_removed;	/* bytes removed whose file had no record
					 * (kernel side: page_cache_untracked_removes) */
	uint64_t unrecorded_added;	/* bytes added whose record could not be made
					 * (the page_cache map full) */
	uint64_t pruned;		/* records deleted by the read (the query's live) */
	uint64_t records;		/* records in the map at the read, before those */
};

/* What page_cache_read() keeps, and what it deletes. */
struct page_cache_query {
	bool per_memcg;		/* one entry per (memcg, file); else summed per file */
	bool by_peak;		/* largest peak first (a report of what the memory
				 * was made of: a file deleted before the end is
				 * 0 bytes now); else largest now first */
	const uint64_t *ids;	/* only these memcgs' records (any order); NULL: all */
	size_t nids;
	/* the daemon's pruning: the records of memcgs not in @live (sorted
	 * ascending: the cgroups the walk found; a removed cgroup's pages went
	 * to its parent) and of files with no page left (removed >= added) are
	 * deleted from the map; NULL: none. A count racing a delete is lost
	 * with it: one page at most per event in flight */
	const uint64_t *live;
	size_t nlive;
};

/*
 * page_cache_read() - the records of the map @fd (bpf/page_cache.bpf.c
 * page_cache) into *@out (page_cache_free()), in bytes (@page_size bytes a
 * page), as @q says: summed per file over the memcgs kept (run, attach: the
 * map holds their subtree only) or per (memcg, file), sorted by memcg (per
 * memcg) then bytes (or peak) descending. Files with no byte left and no
 * peak are left out unless cached_before_start. One pass (page_cache_map_each(): batches of 1,024
 * records). 0 or negative errno (-ENOMEM; -EBADF for a bad @fd).
 */
int page_cache_read(int fd, uint64_t page_size, const struct page_cache_query *q,
		    struct page_cache_files *out);

/*
 * page_cache_resolve() - the first @n files of @pc: path and holders from
 * one walk of every process's maps and fds (held_files_walk()). A file no
 * process holds keeps path NULL (its name and dev:ino name it). 0 or
 * negative errno (-ENOMEM; a /proc that cannot be read).
 */
int page_cache_resolve(struct page_cache_files *pc, size_t n);

/*
 * page_cache_file_label() - how a person reads the file into @buf (@len
 * bytes, the result): a holder's path (its end when too long), else the
 * kernel's name with "(dev 254:0 ino 404912)" (the name cut, never those),
 * else the device and inode alone; a block device's own cache as such.
 */
const char *page_cache_file_label(const struct page_cache_file *f, char *buf, size_t len);

/*
 * page_cache_json() - "page_cache_by_file" of a report or an explain
 * (docs/memacct.report.v1.schema.json): the PAGE_CACHE_SHOWN largest files
 * and the sums; a new reference. Read back by page_cache_from_json()
 * (report.h).
 */
json_t *page_cache_json(const struct page_cache_files *pc);

/* Paths seen while a job ran (run, attach): a file its processes held by a
 * path, remembered for the end, when they are gone (page_cache_recall()). */
struct page_cache_paths {
	struct page_cache_path {
		uint64_t dev, ino;
		char *path;		/* owned, the latest; NULL: not found yet */
	} *v;
	size_t n, cap;
};

/*
 * page_cache_remember() - for the first PAGE_CACHE_SHOWN files of @pc, the
 * path by which one of @pids (@n: the job's processes) holds each now, into
 * @pp (the latest path kept: a file written as x.tmp, renamed and mapped
 * as x is x). One walk of those processes' maps and fds. 0 or negative
 * errno (-ENOMEM).
 */
int page_cache_remember(struct page_cache_paths *pp, const struct page_cache_files *pc,
			const pid_t *pids, size_t n);

/*
 * page_cache_recall() - files of @pc that page_cache_resolve() found no
 * holder of get the path @pp remembered (held_before set). 0 or -ENOMEM.
 */
int page_cache_recall(struct page_cache_files *pc, const struct page_cache_paths *pp);
void page_cache_paths_free(struct page_cache_paths *pp);

void page_cache_free(struct page_cache_files *pc);

#endif
