/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * explain.h - the model of `memacct explain` (explain.c: smaps, status,
 * numa_maps, cachestat, memory.stat, BPF flows; totals and verdicts) that
 * its printers (explain_print.c: JSON and text) only read. Internal to
 * those two files. All figures are bytes unless a name says count.
 */
#ifndef MEMACCT_EXPLAIN_H
#define MEMACCT_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "cgroup.h"
#include "cow_maps.h"
#include "memacct.h"
#include "numa.h"
#include "proc.h"
#include "report.h"
#include "page_cache.h"
#include "shmem_orphans.h"
#include "smaps.h"
#include "dma_ranges.h"

/* Figures of one process, or of a cgroup (bytes). */
enum by { BY_MAPPING, BY_FILE, BY_KIND };

struct xsum {
	uint64_t rss, pss, uss, swap, reclaimable, shared, private_anon;
	uint64_t file_clean, file_dirty, shmem, shmem_pss, locked, lazyfree;
};

struct xproc {
	/* the collector's row (snapshot.h proc_row_read()): pid, ppid, comm,
	 * stocks from /proc/PID/status; flows and DMA pins (dma_pinned, net of
	 * mlocked; dma_estimate) from the watch or a daemon's records */
	struct proc_row row;
	struct smaps sm;
	struct xsum sum;
	bool has_flows;			/* row's flows and DMA pins are valid: watched,
					 * or a daemon's record */
	bool has_ranges;		/* ranges from a daemon's pins */
	bool ranges_all;		/* ... and they cover every DMA pin */
	struct dma_ranges ranges;	/* the known pinned ranges (owned) */
	bool has_numa;			/* numa_maps read: nm and nu are valid */
	struct numa_maps nm;		/* mappings kept, joined with sm by start */
	struct numa_usage nu;
	/* its CoW copies by mapping (cow_maps.h), largest first: the watch's
	 * or a daemon's; owned, paths borrowed from struct explain */
	struct cow_mapping *cowm;
	size_t ncowm;
};

/* One file (dev, inode) over every mapping of it in the processes explained. */
struct xfile {
	const struct smaps_map *m;	/* first mapping: path, map_files entry */
	pid_t pid;
	uint64_t rss, reclaimable, cached, size;
	uint64_t pss;			/* Σ Pss: each page once over its mappers */
	uint64_t reclaimable_once;	/* Σ reclaimable × Pss/Rss: counted once */
	bool has_cached, has_size;
};

/*
 * The parts RSS (explain PID) or PSS (explain --cgroup: shared pages once) is
 * made of: disjoint, they add up to it exactly (docs/explain.md).
 */
enum part {
	PART_PRIVATE_ANON,	/* smaps_private_anon() */
	PART_SHARED_ANON,	/* anon pages still shared after fork (not yet copied) */
	PART_FILE_CLEAN,	/* smaps_file_clean() */
	PART_FILE_DIRTY,	/* smaps_file_dirty() */
	PART_SHMEM,		/* tmpfs, /dev/shm, memfd, SysV */
	PART_OTHER,		/* device mappings, [vdso], ... */
	PART_NR,
};

struct explain {
	struct xproc *procs;
	size_t nprocs;
	struct xfile *files;
	size_t nfiles;
	bool cgroup_mode;
	bool has_stat;
	struct memcg_stat cst;
	struct memcg_parts parts;	/* cst's charge split (usage 0: none, the v2 root) */
	struct xsum total;
	bool watched;
	bool daemon_cow;		/* CoW of some processes from a daemon's pins */
	bool daemon_dma;		/* DMA pins of the processes from a daemon's pins */
	uint64_t watch_ns;
	struct proc_row *watch_rows;	/* the BPF session's report (--watch) */
	size_t nwatch_rows;
	struct cow_mapping *watch_cowm;	/* ... its rows' copied mappings (owned, paths too) */
	size_t nwatch_cowm;
	struct cowm_catalog cowm_cat;	/* the mappings of a daemon's CoW slots */
	char verdict[24][320];
	int nverdict;
	int verdicts_unlisted;		/* found past the 24 listed: counted only */
	bool has_topo;
	struct numa_topo topo;
	uint64_t numa_nodes;		/* nodes shown: with memory or with pages */
	uint64_t numa_node_bytes[NUMA_MAX_NODES];	/* processes summed */
	uint64_t numa_remote;		/* processes summed */
	bool has_cg_numa;		/* --cgroup: memory.numa_stat read */
	struct numa_usage cg_numa;
	/* --cgroup with a daemon: the subtree's page cache by file from its
	 * pinned map (page_cache.h); has_page_cache false: not read */
	bool has_page_cache;
	struct page_cache_files page_cache;
	bool has_orphans;		/* --cgroup: orphans read (shmem_orphans_scan()) */
	struct shmem_orphans orphans;	/* tmpfs files nobody holds, charged to the cgroup */
};

struct mref {
	const struct smaps_map *m;
	pid_t pid;
};

/* xsum_add() - add mapping @m's smaps figures to @s. */
void xsum_add(struct xsum *s, const struct smaps_map *m);
/* parts_sum() - the parts of RSS (PID) or PSS (--cgroup) into @v: they add up to it. */
void parts_sum(const struct explain *e, uint64_t v[PART_NR]);
/* safe_path() - @src with control and non-UTF-8 bytes replaced, for a terminal. */
void safe_path(char *dst, size_t len, const char *src);
/* explain_cow_total() - CoW-copied bytes of the processes explained (a watch or a daemon's pins). */
uint64_t explain_cow_total(const struct explain *e);
/* dma_total() - DMA-pinned bytes of the processes explained (a watch or a daemon's pins). */
uint64_t dma_total(const struct explain *e);
/* dma_in_map() - bytes of @x's known pinned ranges inside mapping @m. */
uint64_t dma_in_map(const struct xproc *x, const struct smaps_map *m);
/* dma_range_map() - the mapping of @x that holds the start of range @r, or NULL. */
const struct smaps_map *dma_range_map(const struct xproc *x, const struct dma_range *r);

/* explain_sum_proc() - @p's sums (p->sum) from its smaps (p->sm). */
void explain_sum_proc(struct xproc *p);
/*
 * explain_total_up() - e->total from the processes' sums; with --cgroup,
 * shared pages counted once (the PSS sum) and the page cache from the
 * cgroup's memory.stat (e->cst).
 */
void explain_total_up(struct explain *e);
/*
 * explain_fill_report() - the report rows and totals of @e into @r (its
 * procs array allocated: report_free()), with what was not measured marked
 * unknown (struct metrics.unknown), and the host's pins (hostpin.h). 0 or
 * -ENOMEM.
 */
int explain_fill_report(struct explain *e, struct report *r);

/*
 * explain_watch() - the BPF side attached to @cg for @dur_ns (less when
 * SIGINT/SIGTERM come): the processes' flows (CoW copies, zero fills, DMA
 * pins) into e->watch_rows (owned by @e). 0, or a negative errno after
 * saying why: -EPERM/-ENOENT not root or no BTF, the session's errors.
 */
int explain_watch(struct explain *e, const struct memcg *cg, uint64_t dur_ns);
/*
 * explain_load() - e->procs from /proc/PID/status, smaps and numa_maps of
 * @pids (owned by @e), each with the watch's flows. With e->cgroup_mode a
 * process gone or unreadable is skipped (said); else its error: -EINVAL no
 * address space (a kernel thread or zombie), -ESRCH gone while being read,
 * -EACCES/-EPERM smaps not readable, -ENOMEM, another read error.
 */
int explain_load(struct explain *e, const pid_t *pids, int npids);
/*
 * explain_build() - the rest of the model from what explain_load() read:
 * a running daemon's pins at @pin_dir (without a watch), the cgroup's
 * memory.stat and numa_stat, totals, files, the report @r and the verdicts.
 * 0 or -ENOMEM.
 */
int explain_build(struct explain *e, struct report *r, const char *pin_dir);
/* explain_free() - what @e owns; @e zeroed. */
void explain_free(struct explain *e);


#endif
