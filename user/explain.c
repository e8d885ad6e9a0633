// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * explain.c - memacct explain PID | --cgroup NAME|PATH [-j] [--by mapping|file|kind]
 *             [--top N] [--watch DUR]
 * Why RSS is what it is: /proc/PID/smaps split into private anon, shared,
 * clean/dirty page cache, shmem, mlocked and swap, PSS and USS beside RSS,
 * per mapping and per file (with the file's page-cache residency from
 * cachestat(2), else mincore(2)), the cgroup's memory.stat, and a short
 * verdict. CoW copies come only from BPF (--watch); otherwise they are
 * reported as unknown (JSON null), never estimated. docs/explain.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "commands.h"
#include "jsonw.h"
#include "metric_table.h"
#include "numa.h"
#include "pin.h"
#include "proc.h"
#include "report.h"
#include "session.h"
#include "smaps.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* x86_64 and the generic table, Linux >= 6.5 */
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

enum by { BY_MAPPING, BY_FILE, BY_KIND };

/* Figures of one process, or of a cgroup (bytes). */
struct xsum {
	uint64_t rss, pss, uss, swap, reclaimable, shared, private_anon;
	uint64_t file_clean, file_dirty, shmem, shmem_pss, locked, lazyfree;
};

struct xproc {
	pid_t pid;
	struct proc_status st;
	struct smaps sm;
	struct xsum sum;
	bool has_flows;			/* flows is valid: watched, or a daemon's record */
	struct metrics flows;		/* flows (CoW, zero fill, faults, migrations...):
					 * bytes and counts; stocks unused */
	uint64_t dma;			/* dma_pinned: the watch, or a daemon's pins (bytes) */
	bool dma_est;			/* that figure is an estimate */
	bool has_ranges;		/* dma_ranges from a daemon's pins */
	bool ranges_all;		/* ... and they cover every DMA pin */
	struct memacct_dma_range dma_ranges[MEMACCT_DMA_RANGES];
	bool has_numa;			/* numa_maps read: nm and nu are valid */
	struct numa_maps nm;		/* mappings kept, joined with sm by start */
	struct numa_usage nu;
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

static const char *const part_keys[PART_NR] = {
	"private_anon_bytes", "shared_anon_bytes", "file_clean_bytes", "file_dirty_bytes",
	"shmem_bytes", "other_bytes",
};

static const char *const part_labels[PART_NR] = {
	"private anonymous", "anonymous shared since fork", "file-backed clean",
	"file-backed dirty", "shmem (tmpfs, /dev/shm, memfd)", "other (devices, vdso)",
};

struct explain {
	struct xproc *procs;
	size_t nprocs;
	struct xfile *files;
	size_t nfiles;
	bool cgroup_mode;
	bool has_stat;
	struct memcg_stat cst;
	struct xsum total;
	bool watched;
	bool daemon_cow;		/* CoW of some processes from a daemon's pins */
	bool daemon_dma;		/* DMA pins of the processes from a daemon's pins */
	uint64_t watch_ns;
	struct proc_row *watch_rows;	/* the BPF session's report (--watch) */
	size_t nwatch_rows;
	char verdict[16][320];
	int nverdict;
	bool has_topo;
	struct numa_topo topo;
	uint64_t numa_nodes;		/* nodes shown: with memory or with pages */
	uint64_t numa_node_bytes[NUMA_MAX_NODES];	/* processes summed */
	uint64_t numa_remote;		/* processes summed */
	bool has_cg_numa;		/* --cgroup: memory.numa_stat read */
	struct numa_usage cg_numa;
};

static void explain_usage(FILE *f)
{
	usage_print(f, "explain");	/* usage.c */
}

/* Add one mapping's figures (bytes, docs/explain.md) to @s. */
static void xsum_add(struct xsum *s, const struct smaps_map *m)
{
	s->rss += m->rss;
	s->pss += m->pss;
	s->uss += smaps_uss(m);
	s->swap += m->swap;
	s->reclaimable += smaps_reclaimable(m);
	s->shared += smaps_shared(m);
	s->private_anon += smaps_private_anon(m);
	s->file_clean += smaps_file_clean(m);
	s->file_dirty += smaps_file_dirty(m);
	if (m->kind == SMAPS_SHMEM) {
		s->shmem += m->rss;
		s->shmem_pss += m->pss;
	}
	s->locked += smaps_locked(m);
	s->lazyfree += m->lazyfree;
}

/* Add @m's parts (enum part) to @v: of its Rss, or scaled to its Pss (@by_pss). */
static void parts_add(uint64_t v[PART_NR], const struct smaps_map *m, bool by_pss)
{
	uint64_t p[PART_NR] = { 0 }, known = 0, scaled = 0;
	int big = 0;

	p[PART_PRIVATE_ANON] = smaps_private_anon(m);
	p[PART_FILE_CLEAN] = smaps_file_clean(m);
	p[PART_FILE_DIRTY] = smaps_file_dirty(m);
	if (m->kind == SMAPS_SHMEM)
		p[PART_SHMEM] = m->rss;
	else if (m->kind == SMAPS_DEVICE || m->kind == SMAPS_OTHER)
		p[PART_OTHER] = m->rss;
	for (int k = 0; k < PART_NR; k++)
		known += p[k];
	/* anon pages that are not private: shared with a parent or child since fork */
	p[PART_SHARED_ANON] = m->rss > known ? m->rss - known : 0;
	if (by_pss) {
		if (!m->rss)
			return;
		for (int k = 0; k < PART_NR; k++) {
			p[k] = (uint64_t)((long double)p[k] * m->pss / m->rss);
			scaled += p[k];
			if (p[k] > p[big])
				big = k;
		}
		p[big] += m->pss > scaled ? m->pss - scaled : 0;	/* rounding */
	}
	for (int k = 0; k < PART_NR; k++)
		v[k] += p[k];
}

/*
 * The parts of the total: of RSS for one process, of PSS (shared pages
 * counted once) for a cgroup; they sum to e->total.rss exactly.
 */
static void parts_sum(const struct explain *e, uint64_t v[PART_NR])
{
	memset(v, 0, sizeof(uint64_t) * PART_NR);
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++)
			parts_add(v, &e->procs[i].sm.maps[j], e->cgroup_mode);
}

static void sum_proc(struct xproc *p)
{
	memset(&p->sum, 0, sizeof(p->sum));
	for (size_t i = 0; i < p->sm.n; i++)
		xsum_add(&p->sum, &p->sm.maps[i]);
}

/* An fd on the mapped file: map_files works for deleted files and hostile names. */
static int open_mapped(pid_t pid, const struct smaps_map *m)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && m->path && !m->deleted && m->path[0] == '/')
		fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd;
}

/*
 * Mappings of files on a disk filesystem with device major 0 may be tmpfs
 * (shmem in the kernel's accounting): ask statfs once per device.
 */
static void refine_kinds(struct xproc *p)
{
	unsigned int tmpfs_dev[64], other_dev[64];
	size_t nt = 0, no = 0;

	for (size_t i = 0; i < p->sm.n; i++) {
		struct smaps_map *m = &p->sm.maps[i];
		unsigned int dev = m->dev_minor;
		bool known = false, tmpfs = false;
		struct statfs sfs;
		int fd;

		if (m->kind != SMAPS_FILE || m->dev_major)
			continue;
		for (size_t j = 0; j < nt && !known; j++)
			if (tmpfs_dev[j] == dev)
				known = tmpfs = true;
		for (size_t j = 0; j < no && !known; j++)
			if (other_dev[j] == dev)
				known = true;
		if (!known) {
			fd = open_mapped(p->pid, m);
			if (fd < 0)
				continue;
			tmpfs = !fstatfs(fd, &sfs) && sfs.f_type == TMPFS_MAGIC;
			close(fd);
			if (tmpfs && nt < 64)
				tmpfs_dev[nt++] = dev;
			else if (!tmpfs && no < 64)
				other_dev[no++] = dev;
		}
		if (tmpfs)
			m->kind = SMAPS_SHMEM;
	}
}

struct cachestat_range_ {
	uint64_t off, len;
};
struct cachestat_ {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Resident page-cache bytes of the whole file: cachestat(2), else mincore(2). */
static int file_cached(int fd, uint64_t size, uint64_t *bytes)
{
	static bool no_cachestat;
	struct cachestat_range_ range = { 0, 0 };	/* len 0: to the end */
	struct cachestat_ cs;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	uint64_t n = 0;
	size_t pages;
	void *addr;

	if (!no_cachestat) {
		if (!syscall(__NR_cachestat, fd, &range, &cs, 0)) {
			*bytes = cs.nr_cache * (uint64_t)page;
			return 0;
		}
		if (errno == ENOSYS)
			no_cachestat = true;
	}
	if (!size)
		return (*bytes = 0);
	addr = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	pages = (size + page - 1) / page;
	vec = malloc(pages);
	if (!vec || mincore(addr, size, vec)) {
		int err = vec ? -errno : -ENOMEM;

		free(vec);
		munmap(addr, size);
		return err;
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	munmap(addr, size);
	*bytes = n * (uint64_t)page;
	return 0;
}

struct mref {
	const struct smaps_map *m;
	pid_t pid;
};

static int cmp_file(const void *a, const void *b)
{
	const struct smaps_map *x = ((const struct mref *)a)->m, *y = ((const struct mref *)b)->m;

	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	return 0;
}

static int cmp_file_rss(const void *a, const void *b)
{
	const struct xfile *x = a, *y = b;

	return x->rss != y->rss ? (x->rss < y->rss ? 1 : -1) : 0;
}

/* Group the file and shmem mappings of every process by (dev, inode). */
static int collect_files(struct explain *e)
{
	struct mref *refs;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < e->nprocs; i++)
		cap += e->procs[i].sm.n;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++) {
			const struct smaps_map *m = &e->procs[i].sm.maps[j];

			if ((m->kind == SMAPS_FILE || m->kind == SMAPS_SHMEM) && m->inode && m->path)
				refs[n++] = (struct mref){ m, e->procs[i].pid };
		}
	qsort(refs, n, sizeof(*refs), cmp_file);
	e->files = calloc(n ? n : 1, sizeof(*e->files));
	if (!e->files) {
		free(refs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct xfile *f;

		if (!i || cmp_file(&refs[i - 1], &refs[i])) {
			f = &e->files[e->nfiles++];
			f->m = refs[i].m;
			f->pid = refs[i].pid;
		}
		f = &e->files[e->nfiles - 1];
		f->rss += refs[i].m->rss;
		f->reclaimable += smaps_reclaimable(refs[i].m);
		f->pss += refs[i].m->pss;
		if (refs[i].m->rss)
			f->reclaimable_once += (uint64_t)((long double)smaps_reclaimable(refs[i].m) *
							  refs[i].m->pss / refs[i].m->rss);
	}
	free(refs);
	for (size_t i = 0; i < e->nfiles; i++) {
		struct xfile *f = &e->files[i];
		struct stat st;
		int fd = open_mapped(f->pid, f->m);

		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
			f->size = st.st_size;
			f->has_size = true;
			f->has_cached = !file_cached(fd, f->size, &f->cached);
		}
		close(fd);
	}
	qsort(e->files, e->nfiles, sizeof(*e->files), cmp_file_rss);
	return 0;
}

/* ---- verdict ------------------------------------------------------- */


static int pct(uint64_t part, uint64_t whole)
{
	return whole ? (int)(part * 100.0 / whole + 0.5) : 0;
}

static void say(struct explain *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct explain *e, const char *fmt, ...)
{
	va_list ap;

	if (e->nverdict >= (int)(sizeof(e->verdict) / sizeof(e->verdict[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(e->verdict[e->nverdict++], sizeof(e->verdict[0]), fmt, ap);
	va_end(ap);
}

/* A path fit for one line of text: control bytes as \ooo. */
static void safe_path(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	for (; *src && o + 5 < len; src++) {
		unsigned char c = *src;

		if (c < 0x20 || c == 0x7f)
			o += snprintf(dst + o, len - o, "\\%03o", c);
		else
			dst[o++] = c;
	}
	dst[o] = '\0';
}

/* DMA-pinned bytes attributed (0 without --watch or a daemon's pins). */
static uint64_t dma_total(const struct explain *e)
{
	uint64_t n = 0;

	for (size_t i = 0; i < e->nprocs; i++)
		n += e->procs[i].dma;
	return n;
}

/*
 * Bytes of mapping @m of @x pinned for DMA where the pinned ranges are known
 * (XDP_UMEM_REG areas in a daemon's pins): the ranges' overlap with it, at
 * most its resident bytes (pinned pages are resident); 0 in mlocked
 * mappings, whose pages VmLck counts (the DMA figure is net of them).
 */
static uint64_t dma_in_map(const struct xproc *x, const struct smaps_map *m)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = 0;

	if (!x->has_ranges || m->vm_locked)
		return 0;	/* mlocked: in VmLck, not in the process's DMA figure */
	for (int i = 0; i < MEMACCT_DMA_RANGES; i++) {
		uint64_t a = x->dma_ranges[i].start, b = a + x->dma_ranges[i].pages * page;
		uint64_t lo = m->start > a ? m->start : a, hi = m->end < b ? m->end : b;

		if (x->dma_ranges[i].pages && lo < hi)
			n += hi - lo;
	}
	return n < m->rss ? n : m->rss;
}

/*
 * The verdict's naming of where DMA pins lie: the mapping holding most of
 * them (pid, range, path, perms, kind) and how many more, into @dst; *@shm
 * gets the pinned bytes that lie in shmem mappings (smaps kind shmem: tmpfs,
 * memfd, SysV, "/dev/zero (deleted)" shared anonymous), *@unranged those in
 * no known mapping (ioctl pins: CUDA; pins seen by --watch). Empty when no
 * range is known.
 */
static void dma_mappings(const struct explain *e, char *dst, size_t len, uint64_t *shm,
			 uint64_t *unranged)
{
	const struct smaps_map *best = NULL;
	const struct xproc *bx = NULL;
	uint64_t bn = 0;
	int more = 0;
	char b[16];

	*shm = *unranged = 0;
	dst[0] = '\0';
	for (size_t i = 0; i < e->nprocs; i++) {
		uint64_t in_maps = 0;

		for (size_t j = 0; j < e->procs[i].sm.n; j++) {
			const struct smaps_map *m = &e->procs[i].sm.maps[j];
			uint64_t n = dma_in_map(&e->procs[i], m);

			if (!n)
				continue;
			in_maps += n;
			if (m->kind == SMAPS_SHMEM)
				*shm += n;
			more += best != NULL;
			if (n > bn) {
				best = m;
				bx = &e->procs[i];
				bn = n;
			}
		}
		if (e->procs[i].dma > in_maps)
			*unranged += e->procs[i].dma - in_maps;
	}
	if (best)
		snprintf(dst, len, "; %s of it in pid %d's %s mapping %" PRIx64 "-%" PRIx64 " %s%s"
			 "%s%s", fmt_bytes(b, sizeof(b), bn), (int)bx->pid, best->perms, best->start,
			 best->end, best->path ? best->path : "[anon]",
			 best->deleted ? " (deleted)" : "", best->kind == SMAPS_SHMEM ?
			 " (shared memory)" : "", more ? " and more mappings" : "");
}

/* Does a process explained map a device (/dev/... other than zero, shm)? */
static bool maps_device(const struct explain *e)
{
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++)
			if (e->procs[i].sm.maps[j].kind == SMAPS_DEVICE)
				return true;
	return false;
}

static void build_verdict(struct explain *e)
{
	const struct xsum *t = &e->total;
	char b[4][16], path[160];
	uint64_t rss = t->rss;

	if (!rss) {
		say(e, "no resident memory");
		return;
	}
	if (t->reclaimable && pct(t->reclaimable, rss) >= 10) {
		const struct xfile *top = NULL;

		uint64_t top_once = 0;

		/* a file's clean pages counted once, as t->reclaimable counts them */
		for (size_t i = 0; i < e->nfiles; i++) {
			const struct xfile *f = &e->files[i];
			uint64_t once = e->cgroup_mode ? f->reclaimable_once : f->reclaimable;

			if (!top || once > top_once) {
				top = f;
				top_once = once;
			}
		}
		if (top && top_once * 2 >= t->reclaimable) {
			char size[48];

			safe_path(path, sizeof(path), top->m->path);
			if (top->has_size)
				snprintf(size, sizeof(size), "; the file is %s", fmt_bytes(b[3], 16,
					 top->size));
			else
				snprintf(size, sizeof(size), "; file size unknown");
			say(e, "%d%% of RSS (%s) is clean page cache, mostly of %s%s (%s of it%s): "
			    "reclaimable; %s really owns %s",
			    pct(t->reclaimable, rss), fmt_bytes(b[0], 16, t->reclaimable), path,
			    top->m->deleted ? " (deleted)" : "",
			    fmt_bytes(b[1], 16, top_once), size,
			    e->cgroup_mode ? "the cgroup" : "the process",
			    fmt_bytes(b[2], 16, rss > t->reclaimable ? rss - t->reclaimable : 0));
		} else {
			say(e, "%d%% of RSS (%s) is clean page cache: reclaimable; %s really owns %s",
			    pct(t->reclaimable, rss), fmt_bytes(b[0], 16, t->reclaimable),
			    e->cgroup_mode ? "the cgroup" : "the process",
			    fmt_bytes(b[1], 16, rss - t->reclaimable));
		}
	}
	if (t->private_anon && pct(t->private_anon, rss) >= 10)
		say(e, "%d%% of RSS (%s) is private anonymous memory (heap, stacks, copies): "
		    "only swap can reclaim it", pct(t->private_anon, rss),
		    fmt_bytes(b[0], 16, t->private_anon));
	if (!e->cgroup_mode && t->shared && pct(t->shared, rss) >= 10)
		say(e, "%s of RSS is shared with other processes: its proportional share (PSS) "
		    "is %s, its own pages (USS) %s", fmt_bytes(b[0], 16, t->shared),
		    fmt_bytes(b[1], 16, t->pss), fmt_bytes(b[2], 16, t->uss));
	if (e->cgroup_mode) {
		uint64_t sum_rss = 0;

		for (size_t i = 0; i < e->nprocs; i++)
			sum_rss += e->procs[i].sum.rss;
		say(e, "%zu processes hold %s counted once (the sum of their RSS says %s); "
		    "%s of it is shared between processes", e->nprocs,
		    fmt_bytes(b[0], 16, t->pss), fmt_bytes(b[1], 16, sum_rss),
		    fmt_bytes(b[2], 16, t->shared));
		/* fork families: children of one parent in the cgroup */
		for (size_t i = 0; i < e->nprocs; i++) {
			const struct xproc *par = &e->procs[i];
			pid_t lo = 0, hi = 0;
			uint64_t cow = 0, shared = 0;
			int nkids = 0;
			bool cow_known = true;

			for (size_t j = 0; j < e->nprocs; j++) {
				const struct xproc *c = &e->procs[j];

				if (c->st.ppid != par->pid)
					continue;
				if (!nkids || c->pid < lo)
					lo = c->pid;
				if (!nkids || c->pid > hi)
					hi = c->pid;
				nkids++;
				shared += c->sum.pss - c->sum.uss;
				cow_known &= c->has_flows;
				cow += c->flows.cow_copied;
			}
			if (!nkids || !par->sum.shared)
				continue;
			if (cow_known)
				snprintf(path, sizeof(path), "; %s has been CoW-copied by them %s",
					 fmt_bytes(b[1], 16, cow), e->watched ? "while watched" :
					 "since the memacct daemon attached");
			else
				snprintf(path, sizeof(path), "; how much they CoW-copied since fork "
					 "is unknown (not watched)");
			say(e, "%s %d..%d (%d) share pages with their parent %d (%s of "
			    "their PSS is shared)%s", nkids > 1 ? "workers" : "worker", lo, hi,
			    nkids, par->pid, fmt_bytes(b[0], 16, shared), path);
		}
	}
	{
		uint64_t shown = e->cgroup_mode ? t->shmem_pss : t->shmem, shm_dma, unr, maybe;
		char where[200], may[160] = "";

		dma_mappings(e, where, sizeof(where), &shm_dma, &unr);
		if (dma_total(e))
			say(e, "%s is pinned for DMA by a driver (CUDA host memory, pin_memory=True, "
			    "AF_XDP UMEM, ...): never reclaimable, not even by swap%s",
			    fmt_bytes(b[0], 16, dma_total(e)), where);
		/* the pinned part of shmem is not "reclaimable with swap" */
		shm_dma = shm_dma < shown ? shm_dma : shown;
		/* pins of unknown range may be any of it (cudaHostAlloc's
		 * "/dev/zero (deleted)" buffers): said, never called swappable */
		maybe = unr < shown - shm_dma ? unr : shown - shm_dma;
		if (maybe)
			snprintf(may, sizeof(may), ": up to %s of it may be the DMA pins above "
				 "(pinned through a driver's ioctl: which mapping is unknown), the "
				 "rest is", fmt_bytes(b[1], 16, maybe));
		if (shown - shm_dma)
			say(e, "%s is shared memory (tmpfs, /dev/shm, memfd, SysV, shared "
			    "anonymous)%s%s not reclaimable without swap%s%s",
			    fmt_bytes(b[0], 16, shown - shm_dma),
			    shm_dma ? " besides the DMA pins above" : "", maybe ? may : ":",
			    e->cgroup_mode ? ", counted once" : "",
			    !maybe && maps_device(e) ? "; a process here maps a device: what a driver pinned "
			    "for DMA of it (CUDA host memory, pin_memory=True) is never reclaimable, "
			    "not even by swap" : "");
	}
	if (t->locked)
		say(e, "%s is mlocked: never reclaimed", fmt_bytes(b[0], 16, t->locked));
	if (t->file_dirty && pct(t->file_dirty, rss) >= 1)
		say(e, "%s of mapped page cache is dirty: reclaimable only after writeback",
		    fmt_bytes(b[0], 16, t->file_dirty));
	if (t->swap)
		say(e, "%s more is swapped out (not in RSS)", fmt_bytes(b[0], 16, t->swap));
	if (e->watched) {
		uint64_t cow = 0;

		for (size_t i = 0; i < e->nprocs; i++)
			cow += e->procs[i].flows.cow_copied;
		say(e, "%s was copied on write (CoW) during the %.1f s watch",
		    fmt_bytes(b[0], 16, cow), e->watch_ns / 1e9);
	} else if (e->daemon_cow) {
		uint64_t cow = 0;

		for (size_t i = 0; i < e->nprocs; i++)
			cow += e->procs[i].flows.cow_copied;
		say(e, "%s was copied on write (CoW) since the memacct daemon attached (its "
		    "pinned maps; processes it has not seen fault: unknown)", fmt_bytes(b[0], 16, cow));
	} else if (!e->cgroup_mode) {
		say(e, "CoW copies since fork: unknown (no memacct daemon is attached; "
		    "--watch DUR measures them)");
	}
}

/* ---- JSON ---------------------------------------------------------- */

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

static void sum_json(json_t *o, const struct xsum *s)
{
	set_u64(o, "pss_bytes", s->pss);
	set_u64(o, "uss_bytes", s->uss);
	set_u64(o, "swap_bytes", s->swap);
	set_u64(o, "reclaimable_bytes", s->reclaimable);
	set_u64(o, "shared_bytes", s->shared);
	set_u64(o, "private_anon_bytes", s->private_anon);
	set_u64(o, "file_clean_bytes", s->file_clean);
	set_u64(o, "file_dirty_bytes", s->file_dirty);
	set_u64(o, "lazyfree_bytes", s->lazyfree);
}

static int cmp_mref_rss(const void *a, const void *b)
{
	const struct smaps_map *x = ((const struct mref *)a)->m, *y = ((const struct mref *)b)->m;

	if (x->rss != y->rss)
		return x->rss < y->rss ? 1 : -1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every mapping (or the @top largest), largest RSS first. */
static struct mref *sorted_mappings(const struct explain *e, size_t *n)
{
	size_t cap = 0;
	struct mref *refs;

	for (size_t i = 0; i < e->nprocs; i++)
		cap += e->procs[i].sm.n;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	*n = 0;
	if (!refs)
		return NULL;
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++)
			refs[(*n)++] = (struct mref){ &e->procs[i].sm.maps[j], e->procs[i].pid };
	qsort(refs, *n, sizeof(*refs), cmp_mref_rss);
	return refs;
}

/*
 * A mapping's "dma_pinned_bytes": exact where the process's pinned ranges
 * are all known (a daemon's pins), else null (unknown).
 */
static void dma_json(struct jw *w, const struct explain *e, pid_t pid, const struct smaps_map *m)
{
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].pid == pid && e->procs[i].ranges_all) {
			jw_u64(w, "dma_pinned_bytes", dma_in_map(&e->procs[i], m));
			return;
		}
	jw_null(w, "dma_pinned_bytes");
}

/* "0x..." of an address */
static void addr_json(struct jw *w, const char *key, unsigned long long a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", a);
	jw_str(w, key, buf);
}

/*
 * The mappings array, streamed: with 10,000 mappings, building and freeing
 * 200,000 jansson nodes took longer than reading smaps itself.
 */
static void write_mappings_json(struct jw *w, const struct explain *e, size_t top)
{
	struct mref *refs;
	size_t n, i;

	refs = sorted_mappings(e, &n);
	jw_open(w, "mappings", '[');
	for (i = 0; refs && i < n && (!top || i < top); i++) {
		const struct smaps_map *m = refs[i].m;

		jw_open(w, NULL, '{');
		jw_int(w, "pid", refs[i].pid);
		addr_json(w, "start", m->start);
		addr_json(w, "end", m->end);
		jw_str(w, "path", m->path);
		jw_bool(w, "deleted", m->deleted);
		jw_str(w, "kind", smaps_kind_name(m->kind));
		jw_str(w, "perms", m->perms);
		jw_bool(w, "private", smaps_private(m));
		jw_u64(w, "size_bytes", m->size);
		jw_u64(w, "rss_bytes", m->rss);
		jw_u64(w, "pss_bytes", m->pss);
		jw_u64(w, "private_clean_bytes", m->private_clean);
		jw_u64(w, "private_dirty_bytes", m->private_dirty);
		jw_u64(w, "shared_clean_bytes", m->shared_clean);
		jw_u64(w, "shared_dirty_bytes", m->shared_dirty);
		jw_u64(w, "reclaimable_bytes", smaps_reclaimable(m));
		jw_u64(w, "locked_bytes", smaps_locked(m));
		jw_u64(w, "swap_bytes", m->swap);
		jw_u64(w, "anonymous_bytes", m->anonymous);
		dma_json(w, e, refs[i].pid, m);
		jw_close(w);
	}
	jw_close(w);
	free(refs);
}

/* ---- NUMA ---------------------------------------------------------- */

/* One numa_maps mapping with resident pages, joined with its smaps record. */
struct nref {
	const struct numa_map *nmap;
	const struct smaps_map *sm;	/* same start in smaps, or NULL */
	const struct xproc *x;
};

/* Per-node sums over the processes; the nodes to show. */
static void numa_collect(struct explain *e)
{
	e->numa_nodes = e->topo.mem_nodes;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		if (!x->has_numa)
			continue;
		e->numa_nodes |= x->nm.nodes;
		for (int n = 0; n < NUMA_MAX_NODES; n++)
			e->numa_node_bytes[n] += x->nu.node_bytes[n];
		e->numa_remote += x->nu.remote;
	}
	if (e->has_cg_numa)
		for (int n = 0; n < NUMA_MAX_NODES; n++)
			if (e->cg_numa.node_bytes[n])
				e->numa_nodes |= 1ULL << n;
}

static int cmp_nref(const void *a, const void *b)
{
	const struct nref *x = a, *y = b;

	if (x->nmap->bytes != y->nmap->bytes)
		return x->nmap->bytes < y->nmap->bytes ? 1 : -1;
	if (x->x->pid != y->x->pid)
		return x->x->pid < y->x->pid ? -1 : 1;
	return x->nmap->start < y->nmap->start ? -1 : x->nmap->start > y->nmap->start;
}

/* numa_maps mappings with resident pages, largest first; NULL on ENOMEM. */
static struct nref *sorted_numa_mappings(const struct explain *e, size_t *n)
{
	struct nref *refs;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < e->nprocs; i++)
		cap += e->procs[i].has_numa ? e->procs[i].nm.n : 0;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	if (!refs)
		return NULL;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		size_t j = 0;

		if (!x->has_numa)
			continue;
		/* both files list mappings by address: merge on start */
		for (size_t k = 0; k < x->nm.n; k++) {
			const struct numa_map *m = &x->nm.maps[k];

			while (j < x->sm.n && x->sm.maps[j].start < m->start)
				j++;
			if (!m->bytes)
				continue;
			refs[(*n)++] = (struct nref){ m, j < x->sm.n && x->sm.maps[j].start ==
							m->start ? &x->sm.maps[j] : NULL, x };
		}
	}
	qsort(refs, *n, sizeof(*refs), cmp_nref);
	return refs;
}

static uint64_t nref_remote(const struct nref *r)
{
	int home = r->x->nu.home;

	return home >= 0 ? r->nmap->bytes - r->nmap->node_bytes[home] : 0;
}

/* {"0": n, "1": n} over the nodes shown (and any other with bytes). */
static json_t *node_bytes_json(const struct explain *e, const uint64_t *nb)
{
	json_t *o = json_object();
	char key[8];

	for (int n = 0; n < NUMA_MAX_NODES; n++)
		if ((e->numa_nodes >> n & 1) || nb[n]) {
			snprintf(key, sizeof(key), "%d", n);
			json_object_set_new(o, key, json_integer((json_int_t)nb[n]));
		}
	return o;
}

static json_t *usage_json(const struct explain *e, const struct numa_usage *u, json_t *o)
{
	json_object_set_new(o, "home_node", u->home >= 0 ? json_integer(u->home) : json_null());
	json_object_set_new(o, "home_node_source", json_string(numa_home_source_name(u->source)));
	json_object_set_new(o, "bytes_by_node", node_bytes_json(e, u->node_bytes));
	set_u64(o, "remote_numa_bytes", u->remote);
	return o;
}

/* The "numa" object but its "mappings" and closing brace (new reference). */
static json_t *numa_json(const struct explain *e)
{
	json_t *o = json_object(), *procs = json_array();

	json_object_set_new(o, "nodes", json_integer(e->topo.nnodes));
	json_object_set_new(o, "bytes_by_node", node_bytes_json(e, e->numa_node_bytes));
	set_u64(o, "remote_numa_bytes", e->numa_remote);
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		json_t *p = json_object();

		json_object_set_new(p, "pid", json_integer(x->pid));
		if (x->has_numa) {
			usage_json(e, &x->nu, p);
		} else {
			json_object_set_new(p, "home_node", json_null());
			json_object_set_new(p, "home_node_source", json_null());
			json_object_set_new(p, "bytes_by_node", json_null());
			json_object_set_new(p, "remote_numa_bytes", json_null());
		}
		json_array_append_new(procs, p);
	}
	json_object_set_new(o, "processes", procs);
	if (e->cgroup_mode)
		json_object_set_new(o, "cgroup", e->has_cg_numa ?
				    usage_json(e, &e->cg_numa, json_object()) : json_null());
	return o;
}

/* "numa": numa_json()'s members, then its mappings, streamed (they can be many). */
static void write_numa_json(struct jw *w, const struct explain *e, size_t top)
{
	json_t *o = numa_json(e), *v;
	const char *key;
	struct nref *refs;
	size_t n, i;

	jw_open(w, "numa", '{');
	json_object_foreach(o, key, v)
		jw_json(w, key, v);
	json_decref(o);
	refs = sorted_numa_mappings(e, &n);
	jw_open(w, "mappings", '[');
	for (i = 0; refs && i < n && (!top || i < top); i++) {
		const struct nref *r = &refs[i];
		json_t *nb = node_bytes_json(e, r->nmap->node_bytes);

		jw_open(w, NULL, '{');
		jw_int(w, "pid", r->x->pid);
		addr_json(w, "start", r->nmap->start);
		if (r->sm)
			addr_json(w, "end", r->sm->end);
		else
			jw_null(w, "end");
		jw_str(w, "path", r->sm ? r->sm->path : r->nmap->path);
		jw_json(w, "bytes_by_node", nb);
		jw_u64(w, "remote_bytes", nref_remote(r));
		jw_close(w);
		json_decref(nb);
	}
	jw_close(w);
	jw_close(w);
	free(refs);
}

/* Bytes per node per mapping, top N (nodes with bytes in the rows shown). */
static void print_numa_plain(const struct explain *e, size_t top)
{
	int cols[8], ncols = 0;
	uint64_t shown = 0;
	char b[16], path[256];
	struct nref *refs;
	size_t n, i;

	printf("\nNUMA: %d node%s", e->topo.nnodes, e->topo.nnodes == 1 ? "" : "s");
	for (int k = 0; k < NUMA_MAX_NODES; k++)
		if (e->numa_nodes >> k & 1)
			printf("%s node %d %s", shown++ ? "," : ":", k,
			       fmt_bytes(b, 16, e->numa_node_bytes[k]));
	printf("; on a remote node %s\n", fmt_bytes(b, 16, e->numa_remote));
	for (i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		if (!x->has_numa)
			continue;
		if (e->cgroup_mode && !x->nu.remote)
			continue;
		if (x->nu.home < 0) {
			printf("  pid %d: home node unknown, %s resident\n", x->pid,
			       fmt_bytes(b, 16, x->nu.bytes));
			continue;
		}
		printf("  pid %d: home node %d (%s), remote %s of %s\n", x->pid, x->nu.home,
		       numa_home_source_name(x->nu.source), fmt_bytes(path, 16, x->nu.remote),
		       fmt_bytes(b, 16, x->nu.bytes));
	}
	if (e->has_cg_numa && e->cg_numa.home >= 0)
		printf("  cgroup (memory.numa_stat): home node %d (%s), remote %s of %s\n",
		       e->cg_numa.home, numa_home_source_name(e->cg_numa.source),
		       fmt_bytes(path, 16, e->cg_numa.remote), fmt_bytes(b, 16, e->cg_numa.bytes));
	if (e->topo.nnodes < 2 && !(e->numa_nodes & ~1ULL))
		return;		/* one node: the table would repeat RSS */
	refs = sorted_numa_mappings(e, &n);
	if (!refs || !n) {
		free(refs);
		return;
	}
	for (int k = 0; k < NUMA_MAX_NODES && ncols < 8; k++) {
		bool used = false;

		for (i = 0; i < n && i < top && !used; i++)
			used = refs[i].nmap->node_bytes[k];
		if (used || (e->numa_nodes >> k & 1 && e->topo.nnodes <= 8))
			cols[ncols++] = k;
	}
	printf("%-28s %7s", "START-END", "PID");
	for (int c = 0; c < ncols; c++) {
		char h[8];

		snprintf(h, sizeof(h), "N%d", cols[c]);
		printf(" %9s", h);
	}
	printf(" %9s  %s\n", "REMOTE", "PATH");
	for (i = 0; i < n && i < top; i++) {
		const struct nref *r = &refs[i];
		const char *p = r->sm ? r->sm->path : r->nmap->path;
		char range[40];

		if (r->sm)
			snprintf(range, sizeof(range), "%llx-%llx", (unsigned long long)r->sm->start,
				 (unsigned long long)r->sm->end);
		else
			snprintf(range, sizeof(range), "%llx-?", (unsigned long long)r->nmap->start);
		printf("%-28s %7d", range, r->x->pid);
		for (int c = 0; c < ncols; c++)
			printf(" %9s", fmt_bytes(b, 16, r->nmap->node_bytes[cols[c]]));
		safe_path(path, sizeof(path), p ? p : "");
		printf(" %9s  %s\n", fmt_bytes(b, 16, nref_remote(r)), path);
	}
	free(refs);
}

/* Remote-NUMA verdicts: each process over the threshold, and the cgroup. */
static void numa_verdicts(struct explain *e)
{
	char who[96], comm[32], line[sizeof(e->verdict[0])];
	struct numa_brief b;
	int shown = 0;

	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		if (!x->has_numa)
			continue;
		numa_brief_of(&x->nu, &b);
		safe_path(comm, sizeof(comm), x->st.name);
		snprintf(who, sizeof(who), "PID %d (%s)", x->pid, comm);
		if (!numa_verdict(line, sizeof(line), who, x->pid, &b, numa_threshold_pct,
				  NUMA_THRESHOLD_MIN_BYTES, false))
			continue;
		if (shown++ < 4)
			say(e, "%s", line);
	}
	if (shown > 4)
		say(e, "%d more processes have over %u%% of their pages on a remote node "
		    "(see numa.processes)", shown - 4, numa_threshold_pct);
	if (e->has_cg_numa) {
		numa_brief_of(&e->cg_numa, &b);
		if (numa_over_threshold(&b, numa_threshold_pct, NUMA_THRESHOLD_MIN_BYTES)) {
			char sz[16], tot[16];

			say(e, "the cgroup's memory.numa_stat: %s of its %s are off its home "
			    "node %d (%s)", fmt_bytes(sz, 16, b.remote),
			    fmt_bytes(tot, 16, b.bytes), b.home, numa_home_source_name(b.source));
		}
	}
}

static void kind_sums(const struct explain *e, struct xsum k[SMAPS_KIND_NR])
{
	memset(k, 0, sizeof(struct xsum) * SMAPS_KIND_NR);
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++) {
			const struct smaps_map *m = &e->procs[i].sm.maps[j];

			xsum_add(&k[m->kind], m);
		}
}

static json_t *explain_json(const struct explain *e, const struct report *r, size_t top)
{
	json_t *o = report_json(r), *t = json_object_get(o, "totals");
	json_t *procs = json_object_get(o, "processes"), *arr, *p, *ms;
	struct xsum kinds[SMAPS_KIND_NR];
	int kind_pct[SMAPS_KIND_NR];
	size_t i;

	sum_json(t, &e->total);
	set_u64(t, "rss_bytes", e->total.rss);	/* cgroup: shared pages counted once */
	set_u64(t, "shmem_bytes", e->cgroup_mode ? e->total.shmem_pss : e->total.shmem);
	set_u64(t, "mlocked_bytes", e->total.locked);
	json_object_set_new(o, "cow_source", json_string(e->watched ? "watch" :
			    e->daemon_cow ? "daemon" : "none"));
	json_array_foreach(procs, i, p) {
		const struct xproc *x = NULL;
		json_int_t pid = json_integer_value(json_object_get(p, "pid"));

		for (size_t k = 0; k < e->nprocs; k++)
			if (e->procs[k].pid == pid)
				x = &e->procs[k];
		if (!x)
			continue;
		sum_json(p, &x->sum);
	}
	arr = json_array();
	for (i = 0; i < e->nfiles && (!top || i < top); i++) {
		const struct xfile *f = &e->files[i];
		json_t *j = json_object();

		json_object_set_new(j, "path", json_string_sanitized(f->m->path));
		json_object_set_new(j, "deleted", json_boolean(f->m->deleted));
		json_object_set_new(j, "kind", json_string(smaps_kind_name(f->m->kind)));
		set_u64(j, "rss_bytes", f->rss);
		set_u64(j, "pss_bytes", f->pss);
		set_u64(j, "reclaimable_bytes", f->reclaimable);
		json_object_set_new(j, "cached_bytes", f->has_cached ?
				    json_integer((json_int_t)f->cached) : json_null());
		json_object_set_new(j, "size_bytes", f->has_size ?
				    json_integer((json_int_t)f->size) : json_null());
		json_array_append_new(arr, j);
	}
	json_object_set_new(o, "files", arr);
	{
		uint64_t v[PART_NR];
		int pc[PART_NR];
		json_t *bd = json_object(), *pj = json_object();

		parts_sum(e, v);
		pct_partition(v, PART_NR, pc);
		json_object_set_new(bd, "basis", json_string(e->cgroup_mode ? "pss" : "rss"));
		set_u64(bd, "total_bytes", e->total.rss);
		for (int k = 0; k < PART_NR; k++) {
			char key[32];

			set_u64(bd, part_keys[k], v[k]);
			snprintf(key, sizeof(key), "%.*s", (int)(strlen(part_keys[k]) - 6),
				 part_keys[k]);
			json_object_set_new(pj, key, json_integer(pc[k]));
		}
		json_object_set_new(bd, "percent", pj);
		json_object_set_new(o, "breakdown", bd);
	}
	kind_sums(e, kinds);
	{
		uint64_t kr[SMAPS_KIND_NR];

		for (int k = 0; k < SMAPS_KIND_NR; k++)
			kr[k] = kinds[k].rss;
		pct_partition(kr, SMAPS_KIND_NR, kind_pct);
	}
	ms = json_object();
	for (int k = 0; k < SMAPS_KIND_NR; k++) {
		json_t *j = json_object();

		set_u64(j, "rss_bytes", kinds[k].rss);
		json_object_set_new(j, "rss_percent", json_integer(kind_pct[k]));
		set_u64(j, "pss_bytes", kinds[k].pss);
		set_u64(j, "uss_bytes", kinds[k].uss);
		set_u64(j, "reclaimable_bytes", kinds[k].reclaimable);
		set_u64(j, "locked_bytes", kinds[k].locked);
		set_u64(j, "swap_bytes", kinds[k].swap);
		json_object_set_new(ms, smaps_kind_name(k), j);
	}
	json_object_set_new(o, "kinds", ms);
	if (e->has_stat) {
		const struct memcg_stat *c = &e->cst;

		ms = json_object();
		set_u64(ms, "anon_bytes", c->anon);
		set_u64(ms, "file_bytes", c->file);
		set_u64(ms, "active_file_bytes", c->active_file);
		set_u64(ms, "inactive_file_bytes", c->inactive_file);
		set_u64(ms, "dirty_bytes", c->file_dirty);
		set_u64(ms, "writeback_bytes", c->file_writeback);
		set_u64(ms, "shmem_bytes", c->shmem);
		set_u64(ms, "unevictable_bytes", c->unevictable);
		set_u64(ms, "slab_reclaimable_bytes", c->slab_reclaimable);
		set_u64(ms, "usage_bytes", c->usage);
		json_object_set_new(o, "memory_stat", ms);
	} else {
		json_object_set_new(o, "memory_stat", json_null());
	}
	arr = json_array();
	for (int k = 0; k < e->nverdict; k++)
		json_array_append_new(arr, json_string_sanitized(e->verdict[k]));
	json_object_set_new(o, "verdict", arr);
	return o;
}

/* ---- plain --------------------------------------------------------- */

static void value_line(const char *what, uint64_t v)
{
	char b[16];

	printf("  %-36s %10s\n", what, fmt_bytes(b, 16, v));
}

static void print_plain(const struct explain *e, const struct report *r, enum by by,
			size_t top)
{
	const struct xsum *t = &e->total;
	char b[10][16], path[256];
	size_t n, i;

	if (e->cgroup_mode)
		printf("memacct explain: cgroup %s (v%d), %zu processes\n", r->cg.rel,
		       r->cg.version, e->nprocs);
	else
		printf("memacct explain: pid %d (%s), cgroup %s\n", e->procs[0].pid,
		       r->procs[0].comm, r->cg.rel[0] ? r->cg.rel : "?");
	printf("%s %s   PSS %s   USS %s   swap %s\n",
	       e->cgroup_mode ? "resident, shared counted once:" : "RSS",
	       fmt_bytes(b[0], 16, e->cgroup_mode ? t->pss : t->rss), fmt_bytes(b[1], 16, t->pss),
	       fmt_bytes(b[2], 16, t->uss), fmt_bytes(b[3], 16, t->swap));
	{
		uint64_t v[PART_NR];
		int pc[PART_NR];

		parts_sum(e, v);
		pct_partition(v, PART_NR, pc);
		printf("%s is made of (the parts add up to 100%%):\n",
		       e->cgroup_mode ? "PSS (shared pages counted once)" : "RSS");
		for (int k = 0; k < PART_NR; k++)
			printf("  %-36s %10s  %3d%%\n", part_labels[k], fmt_bytes(b[0], 16, v[k]),
			       pc[k]);
	}
	printf("Other views of the same pages (they overlap the parts):\n");
	if (e->watched) {
		uint64_t cow = 0;

		for (i = 0; i < e->nprocs; i++)
			cow += e->procs[i].flows.cow_copied;
		value_line("CoW-copied while watched (flow)", cow);
	} else if (e->daemon_cow) {
		uint64_t cow = 0;

		for (i = 0; i < e->nprocs; i++)
			cow += e->procs[i].flows.cow_copied;
		value_line("CoW-copied since the daemon attached", cow);
	} else {
		printf("  %-36s %10s\n", "CoW-copied since fork", "unknown");
	}
	value_line(e->cgroup_mode ? "shared between processes (once)" :
		   "shared with other processes", t->shared);
	value_line("mlocked", t->locked);
	value_line(e->cgroup_mode ? "reclaimable (memory.stat, once)" :
		   "reclaimable (clean unlocked + LazyFree)", t->reclaimable);
	if (e->watched)
		value_line("pinned for DMA while watched", dma_total(e));
	else if (e->daemon_dma)
		value_line("pinned for DMA (daemon's pins)", dma_total(e));
	else
		printf("  %-36s %10s\n", "pinned for DMA", "unknown");
	if (r->has_host) {
		char hl[320];

		report_host_line(r, hl, sizeof(hl));
		printf("%s\n", hl);
	}
	if (e->has_stat) {
		const struct memcg_stat *c = &e->cst;

		printf("cgroup memory.stat: anon %s, file %s (active %s, inactive %s), dirty %s, "
		       "writeback %s,\n  shmem %s, unevictable %s, slab reclaimable %s\n",
		       fmt_bytes(b[0], 16, c->anon), fmt_bytes(b[1], 16, c->file),
		       fmt_bytes(b[2], 16, c->active_file), fmt_bytes(b[3], 16, c->inactive_file),
		       fmt_bytes(b[4], 16, c->file_dirty), fmt_bytes(b[5], 16, c->file_writeback),
		       fmt_bytes(b[6], 16, c->shmem), fmt_bytes(b[7], 16, c->unevictable),
		       fmt_bytes(b[8], 16, c->slab_reclaimable));
	}
	if (e->cgroup_mode) {
		printf("\n%7s %-15s %9s %9s %9s %9s %9s\n", "PID", "COMM", "RSS", "PSS", "USS",
		       "SHARED", "RECLAIM");
		for (i = 0; i < e->nprocs; i++) {
			const struct xproc *x = &e->procs[i];

			safe_path(path, 16, x->st.name);
			printf("%7d %-15s %9s %9s %9s %9s %9s\n", x->pid, path,
			       fmt_bytes(b[0], 16, x->sum.rss), fmt_bytes(b[1], 16, x->sum.pss),
			       fmt_bytes(b[2], 16, x->sum.uss), fmt_bytes(b[3], 16, x->sum.shared),
			       fmt_bytes(b[4], 16, x->sum.reclaimable));
		}
	}
	if (!top)
		top = 10;
	if (by == BY_MAPPING) {
		struct mref *refs = sorted_mappings(e, &n);

		printf("\nLargest mappings by RSS:\n");
		if (e->cgroup_mode)
			printf("%7s ", "PID");
		printf("%-28s %-6s %4s %9s %9s %9s %9s %9s  %s\n",
		       "START-END", "KIND", "PERM", "RSS", "PSS", "DIRTY", "RECLAIM", "LOCKED",
		       "PATH");
		for (i = 0; refs && i < n && i < top; i++) {
			const struct smaps_map *m = refs[i].m;
			char range[40];

			snprintf(range, sizeof(range), "%llx-%llx", (unsigned long long)m->start,
				 (unsigned long long)m->end);
			safe_path(path, sizeof(path), m->path ? m->path : "");
			if (e->cgroup_mode)
				printf("%7d ", (int)refs[i].pid);
			printf("%-28s %-6s %4s %9s %9s %9s %9s %9s  %s%s\n", range,
			       smaps_kind_name(m->kind), m->perms, fmt_bytes(b[0], 16, m->rss),
			       fmt_bytes(b[1], 16, m->pss),
			       fmt_bytes(b[2], 16, m->shared_dirty + m->private_dirty),
			       fmt_bytes(b[3], 16, smaps_reclaimable(m)),
			       fmt_bytes(b[4], 16, smaps_locked(m)), path,
			       m->deleted ? " (deleted)" : "");
		}
		free(refs);
	} else if (by == BY_FILE) {
		printf("\nFiles by RSS (RSS summed over mappers; PSS counts each page once):\n"
		       "%9s %9s %9s %9s %9s  %s\n", "RSS", "PSS", "RECLAIM", "CACHED", "SIZE", "PATH");
		for (i = 0; i < e->nfiles && i < top; i++) {
			const struct xfile *f = &e->files[i];

			safe_path(path, sizeof(path), f->m->path);
			printf("%9s %9s %9s %9s %9s  %s%s\n", fmt_bytes(b[0], 16, f->rss),
			       fmt_bytes(b[4], 16, f->pss), fmt_bytes(b[1], 16, f->reclaimable),
			       f->has_cached ? fmt_bytes(b[2], 16, f->cached) : "?",
			       f->has_size ? fmt_bytes(b[3], 16, f->size) : "?", path,
			       f->m->deleted ? " (deleted)" : "");
		}
	} else {
		struct xsum k[SMAPS_KIND_NR];

		uint64_t kr[SMAPS_KIND_NR];
		int kp[SMAPS_KIND_NR];

		kind_sums(e, k);
		for (int j = 0; j < SMAPS_KIND_NR; j++)
			kr[j] = k[j].rss;
		pct_partition(kr, SMAPS_KIND_NR, kp);
		printf("\nBy kind (%%RSS: share of the RSS summed over %s, adds up to 100%%):\n"
		       "%-7s %9s %5s %9s %9s %9s %9s %9s\n",
		       e->cgroup_mode ? "the processes" : "the mappings", "KIND", "RSS", "%RSS",
		       "PSS", "USS", "RECLAIM", "LOCKED", "SWAP");
		for (int j = 0; j < SMAPS_KIND_NR; j++)
			printf("%-7s %9s %4d%% %9s %9s %9s %9s %9s\n", smaps_kind_name(j),
			       fmt_bytes(b[0], 16, k[j].rss), kp[j], fmt_bytes(b[1], 16, k[j].pss),
			       fmt_bytes(b[2], 16, k[j].uss), fmt_bytes(b[3], 16, k[j].reclaimable),
			       fmt_bytes(b[4], 16, k[j].locked), fmt_bytes(b[5], 16, k[j].swap));
	}
	if (e->has_topo)
		print_numa_plain(e, top);
	printf("\nVerdict:\n");
	for (int j = 0; j < e->nverdict; j++)
		printf("  - %s\n", e->verdict[j]);
	fflush(stdout);
}

/* ---- collection ---------------------------------------------------- */

/*
 * 0, or the exit code after printing why @pid cannot be explained: 2 for a
 * kernel thread or zombie (bad input, as attach --pid says), 4 when it
 * exited while being read.
 */
static int load_proc(struct xproc *x, pid_t pid, bool quiet_if_gone)
{
	int err;

	x->pid = pid;
	err = read_status(pid, &x->st);
	if (!err && !x->st.has_mm) {
		if (!quiet_if_gone)
			p_err("process %d has no address space (kernel thread or zombie): "
			      "nothing to explain", pid);
		return EXIT_USAGE;
	}
	if (!err)
		err = read_smaps(pid, &x->sm);
	if (!err)
		return 0;
	if (err == -ENOENT || err == -ESRCH) {
		if (!quiet_if_gone)
			p_err("process %d: %s", pid, kill(pid, 0) && errno == ESRCH ?
			      "no such process (or it exited while being read)" :
			      "exited or lost its memory while being read");
		return EXIT_RUNTIME;
	}
	if (err == -EACCES || err == -EPERM) {
		if (quiet_if_gone)	/* --cgroup: the others are still explained (D17) */
			p_warn("process %d skipped: reading /proc/%d/smaps: %s (needs root or "
			       "ptrace access to the process)", pid, pid, strerror(-err));
		else
			p_err("reading /proc/%d/smaps: %s (needs root or ptrace access to the "
			      "process)", pid, strerror(-err));
		return EXIT_ENV;
	}
	p_err("reading /proc/%d/smaps: %s", pid, strerror(-err));
	return EXIT_RUNTIME;
}

/* Per-process report rows from /proc/PID/status and the smaps sums. */
static int fill_report(struct explain *e, struct report *r)
{
	r->procs = calloc(e->nprocs ? e->nprocs : 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	r->nprocs = e->nprocs;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		struct proc_row *row = &r->procs[i];

		row->pid = x->pid;
		row->ppid = x->st.ppid;
		snprintf(row->comm, sizeof(row->comm), "%s", x->st.name);
		row->m.rss = x->sum.rss;
		row->m.anon = x->st.rss_anon;
		row->m.file = x->st.rss_file;
		row->m.shmem = x->sum.shmem;
		row->m.rss_peak = x->st.hwm;
		row->m.mlocked = x->st.locked;
		row->m.pinned_vm = x->st.pinned;
		row->m.dma_pinned = x->dma;
		row->m.dma_estimate = x->dma_est;
		row->m.pinned = x->st.locked + x->st.pinned + x->dma;
		metrics_add_flows(&row->m, &x->flows);
		row->m.page_faults = x->flows.page_faults;
		row->m.major_faults = x->flows.major_faults;
		row->m.remote_numa = x->has_numa ? x->nu.remote : 0;
		row->m.remote_numa_peak = row->m.remote_numa;
		/* what explain did not measure is null, not 0 (docs/explain.md) */
		if (!x->has_numa)
			row->m.unknown |= MBIT(M_REMOTE_NUMA) | MBIT(M_REMOTE_NUMA_PEAK);
		if (!x->has_flows)	/* neither watched alive nor in a daemon's pins */
			row->m.unknown |= metric_flow_mask(true) | metric_flow_mask(false) |
					  MBIT(M_DMA_PINNED) | MBIT(M_DMA_PINNED_PEAK);
		else if (!e->watched)	/* a daemon's record has no fault counts, and
					 * /proc/PID/stat's are since exec, not attach */
			row->m.unknown |= metric_flow_mask(false);
		r->totals.rss += row->m.rss;
		r->totals.rss_sum += row->m.rss;
		r->totals.anon += row->m.anon;
		r->totals.file += row->m.file;
		r->totals.mlocked += row->m.mlocked;
		r->totals.pinned_vm += row->m.pinned_vm;
		r->totals.pinned += row->m.pinned;
		r->totals.dma_pinned += row->m.dma_pinned;
		r->dma_attributed += row->m.pinned_vm + row->m.dma_pinned;
		metrics_add_flows(&r->totals, &row->m);
		r->totals.page_faults += row->m.page_faults;
		r->totals.major_faults += row->m.major_faults;
	}
	if (e->has_stat) {
		r->totals.usage = e->cst.usage;
		r->totals.working_set = memcg_working_set(&e->cst);
	}
	r->totals.reclaimable = e->total.reclaimable;
	/* a cgroup's remote bytes: its own, each page once (memory.numa_stat) */
	r->totals.remote_numa = e->cgroup_mode && e->has_cg_numa ? e->cg_numa.remote :
				e->numa_remote;
	r->totals.remote_numa_peak = r->totals.remote_numa;
	if (!e->has_topo || (e->cgroup_mode ? !e->has_cg_numa && !e->nprocs : !e->nprocs ||
			     !e->procs[0].has_numa))
		r->totals.unknown |= MBIT(M_REMOTE_NUMA) | MBIT(M_REMOTE_NUMA_PEAK);
	/* flows are summed over the processes whose flows are known */
	if (!e->watched)
		r->totals.unknown |= metric_flow_mask(false) |
				     (e->daemon_cow ? 0 : metric_flow_mask(true));
	if (!e->watched && !e->daemon_dma)	/* DMA pins unknown, never 0 */
		r->totals.unknown |= MBIT(M_DMA_PINNED) | MBIT(M_DMA_PINNED_PEAK);
	r->numa_multi = e->topo.nnodes > 1;
	/* the host's pins; attributed only as far as the watch saw */
	r->has_host = !hostpin_read(&r->host, geteuid() == 0);
	r->dma_attribution = (e->watched || e->daemon_dma) && r->host.known;
	return 0;
}

static void total_up(struct explain *e)
{
	struct xsum *t = &e->total;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xsum *s = &e->procs[i].sum;

		t->rss += s->rss;
		t->pss += s->pss;
		t->uss += s->uss;
		t->swap += s->swap;
		t->reclaimable += s->reclaimable;
		t->shared += s->shared;
		t->private_anon += s->private_anon;
		t->file_clean += s->file_clean;
		t->file_dirty += s->file_dirty;
		t->shmem += s->shmem;
		t->shmem_pss += s->shmem_pss;
		t->locked += s->locked;
		t->lazyfree += s->lazyfree;
	}
	if (!e->cgroup_mode)
		return;
	/*
	 * Shared pages counted once: the PSS of every sharer adds up to the
	 * page once when all sharers are in the cgroup. So the cgroup holds
	 * sum(USS) + sum(PSS - USS) = sum(PSS); "shared" is the second term.
	 */
	t->shared = t->pss - t->uss;
	t->rss = t->pss;
	if (e->has_stat) {
		const struct memcg_stat *c = &e->cst;
		uint64_t lru = c->active_file + c->inactive_file;
		uint64_t dirty = c->file_dirty + c->file_writeback;

		t->file_clean = lru > dirty ? lru - dirty : 0;
		t->file_dirty = dirty;
		t->reclaimable = t->file_clean + c->slab_reclaimable + t->lazyfree;
	}
}

static int watch_cow(struct explain *e, const struct memcg *cg, uint64_t dur_ns)
{
	struct session s;
	struct report r;
	uint64_t start, end;
	int err;

	if (loader_check_env())
		return EXIT_ENV;
	/* SIGINT/SIGTERM end the watch early: explained with what it counted */
	install_stop_handlers(0);
	err = session_start(&s, cg);
	if (err)
		return EXIT_ENV;
	/* stderr, also with -j: a caller can start the workload once attached */
	fprintf(stderr, "memacct explain: watching %s for %.1f s\n", cg->rel, dur_ns / 1e9);
	start = now_ns();
	end = ns_after(start, dur_ns);
	while (!stop_requested && now_ns() < end)
		session_poll(&s, (int)((end - now_ns()) / 1000000 > 100 ? 100 :
				       (end - now_ns()) / 1000000 + 1));
	err = session_report(&s, &r);
	session_stop(&s);
	if (err) {
		p_err("building the watch report: %s", strerror(-err));
		return EXIT_RUNTIME;
	}
	e->watched = true;
	e->watch_ns = now_ns() - start;	/* shorter than DUR when stopped */
	e->watch_rows = r.procs;	/* taken over: freed with e */
	e->nwatch_rows = r.nprocs;
	return 0;
}

static void daemon_one(size_t i, const struct memacct_proc *v, void *ctx)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), ranged = 0;
	struct explain *e = ctx;
	struct xproc *x = &e->procs[i];

	if (x->has_flows)
		return;
	x->has_flows = true;
	metrics_from_bpf_flows(&x->flows, &v->f, page);
	e->daemon_cow = true;
	x->dma = dma_pinned_net(x->pid, v, x->st.locked, &x->dma_est);
	memcpy(x->dma_ranges, v->dma_ranges, sizeof(x->dma_ranges));
	for (int k = 0; k < MEMACCT_DMA_RANGES; k++)
		ranged += v->dma_ranges[k].pages;
	x->has_ranges = ranged;
	x->ranges_all = ranged >= v->pin.dma_pinned_pages;
	e->daemon_dma = true;
}

/*
 * daemon_pins() - without --watch, from a running memacct daemon's pinned
 * procs map (@dir/maps/procs, pin_procs_of(): a reused PID never matches):
 * the CoW copies (since the daemon attached, or since fork for processes
 * started after it) and the DMA pins (net of mlocked memory, with their
 * known ranges) of each process explained. Sets has_flows/flows (every flow
 * but the page-fault counts)/dma of each process found, e->daemon_cow and
 * e->daemon_dma. Read-only; nothing when
 * no daemon has pinned there or the pins are of another build.
 */
static void daemon_pins(struct explain *e, const char *dir)
{
	pid_t *pids = calloc(e->nprocs ? e->nprocs : 1, sizeof(*pids));

	if (!pids)
		return;
	for (size_t i = 0; i < e->nprocs; i++)
		pids[i] = e->procs[i].pid;
	pin_procs_of(dir, pids, e->nprocs, daemon_one, e);
	free(pids);
}

/* the flows the watch measured for @x, if it saw it alive */
static void watch_result(const struct explain *e, struct xproc *x)
{
	for (size_t j = 0; j < e->nwatch_rows; j++)
		if (e->watch_rows[j].pid == x->pid && !e->watch_rows[j].exited) {
			x->has_flows = true;
			x->flows = e->watch_rows[j].m;
			x->dma = e->watch_rows[j].m.dma_pinned;
		}
}

int do_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 't' },
		{ "watch", required_argument, NULL, 'w' },
		{ "numa-threshold", required_argument, NULL, 'n' },
		{ "pin-path", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cgarg = NULL, *pidarg = NULL, *pin_dir = PIN_DEFAULT_DIR;
	struct explain e = { 0 };
	struct report r = { 0 };
	enum by by = BY_MAPPING;
	uint64_t top = 0, watch_ns = 0, pid64, pct;
	pid_t *pids = NULL;
	int c, err, npids, ret = EXIT_RUNTIME;

	while ((c = getopt_long(argc, argv, ":jc:p:b:t:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'c':
			cgarg = optarg;
			break;
		case 'p':	/* -p PID as bcc tools have it; same as the positional PID */
			pidarg = optarg;
			break;
		case 'P':
			pin_dir = optarg;
			break;
		case 'b':
			if (!strcmp(optarg, "mapping"))
				by = BY_MAPPING;
			else if (!strcmp(optarg, "file"))
				by = BY_FILE;
			else if (!strcmp(optarg, "kind"))
				by = BY_KIND;
			else {
				p_err("bad --by '%s' (mapping, file or kind)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			if (parse_u64(optarg, &top) || !top || top > INT_MAX) {
				p_err("bad --top '%s' (a positive number)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'w':
			if (parse_duration(optarg, &watch_ns) || !watch_ns) {
				p_err("bad --watch '%s' (examples: 500ms, 2s, 1m)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_u64(optarg, &pct) || pct > 100) {
				p_err("bad --numa-threshold '%s' (a percentage, 0 to 100)", optarg);
				return EXIT_USAGE;
			}
			numa_threshold_pct = (unsigned int)pct;
			break;
		case 'h':
			explain_usage(stdout);
			return EXIT_OK;
		default:
			return opt_error("explain", c, argv);
		}
	}
	if (!pidarg && optind < argc)
		pidarg = argv[optind++];
	if (!!cgarg == !!pidarg || optind < argc) {
		p_err("explain: give one PID or --cgroup NAME|PATH (memacct help explain)");
		return EXIT_USAGE;
	}
	r.command = "explain";
	r.final = true;
	e.has_topo = !numa_topo_read(&e.topo);
	if (cgarg) {
		e.cgroup_mode = true;
		err = memcg_resolve(cgarg, &r.cg, stderr);
		if (err) {
			p_err("cgroup '%s': %s", cgarg, err == -ENOTUNIQ ?
			      "ambiguous (candidates above)" : strerror(-err));
			/* no such cgroup: 2, as in attach and audit (README; D12) */
			ret = memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
			goto out_free;
		}
		if (watch_ns) {
			ret = watch_cow(&e, &r.cg, watch_ns);
			if (ret)
				goto out_free;
			ret = EXIT_RUNTIME;
		}
		/* listed after the watch: workers forked meanwhile are in it */
		npids = memcg_pids(&r.cg, true, &pids);
		if (npids < 0) {
			p_err("listing the processes of %s: %s", r.cg.path, strerror(-npids));
			pids = NULL;
			ret = EXIT_RUNTIME;
			goto out_free;
		}
	} else {
		if (parse_u64(pidarg, &pid64) || !pid64 || pid64 > INT_MAX) {
			p_err("bad PID '%s'", pidarg);
			ret = EXIT_USAGE;
			goto out_free;
		}
		pids = malloc(sizeof(*pids));
		if (!pids)
			goto out_free;
		pids[0] = (pid_t)pid64;
		npids = 1;
		if (kill(pids[0], 0) && errno == ESRCH) {
			p_err("process %d: no such process", pids[0]);
			ret = EXIT_USAGE;	/* bad input, as attach --pid (D12) */
			goto out_free;
		}
		err = memcg_of_pid(pids[0], &r.cg);
		if (err)
			p_info("memory cgroup of %d: %s", pids[0], strerror(-err));
		if (watch_ns) {
			if (err) {
				p_err("--watch: the memory cgroup of %d: %s", pids[0], strerror(-err));
				ret = EXIT_ENV;
				goto out_free;
			}
			ret = watch_cow(&e, &r.cg, watch_ns);
			if (ret)
				goto out_free;
			ret = EXIT_RUNTIME;
		}
	}
	e.procs = calloc(npids ? npids : 1, sizeof(*e.procs));
	if (!e.procs)
		goto out_free;
	for (int i = 0; i < npids; i++) {
		struct xproc *x = &e.procs[e.nprocs];
		int rc;

		memset(x, 0, sizeof(*x));
		rc = load_proc(x, pids[i], e.cgroup_mode);
		if ((rc == EXIT_RUNTIME || rc == EXIT_USAGE) && e.cgroup_mode) {
			p_info("process %d left while being read: skipped", pids[i]);
			smaps_free(&x->sm);
			continue;
		}
		if (rc == EXIT_ENV && e.cgroup_mode) {	/* unreadable: said, skipped */
			smaps_free(&x->sm);
			continue;
		}
		if (rc) {
			ret = rc;
			goto out_procs;
		}
		watch_result(&e, x);
		/* one node: from smaps (numa_maps would cost as much again) */
		if (e.has_topo) {
			err = e.topo.nnodes == 1 ?
			      numa_smaps_usage(&e.topo, &x->sm, &x->nu, &x->nm) :
			      numa_proc_usage(&e.topo, x->pid, &x->nu, &x->nm);
			x->has_numa = !err;
			if (err)
				p_info("reading /proc/%d/numa_maps: %s", x->pid, strerror(-err));
		}
		refine_kinds(x);
		sum_proc(x);
		e.nprocs++;
	}
	if (!e.nprocs && !e.cgroup_mode)
		goto out_procs;
	if (!watch_ns)
		daemon_pins(&e, pin_dir);
	e.has_stat = r.cg.path[0] && !memcg_read_stat(&r.cg, &e.cst);
	if (e.cgroup_mode && e.has_topo)
		e.has_cg_numa = !memcg_numa_usage(&e.topo, &r.cg, &e.cg_numa);
	if (e.has_topo)
		numa_collect(&e);
	total_up(&e);
	err = collect_files(&e);
	if (err || fill_report(&e, &r)) {
		p_err("building the report: %s", strerror(ENOMEM));
		goto out_procs;
	}
	build_verdict(&e);
	if (r.has_host) {
		char hv[sizeof(e.verdict[0])];

		if (report_host_verdict(&r.host, hv, sizeof(hv)))
			say(&e, "%s", hv);
		else
			say(&e, "DMA pins: unknown on this kernel (no nr_foll_pin_* in /proc/vmstat)");
	}
	if (e.has_topo)
		numa_verdicts(&e);
	if (json_output) {
		json_t *o = explain_json(&e, &r, top), *v;
		const char *key;
		struct jw w;

		if (!o) {
			p_err("building the JSON report: %s", strerror(ENOMEM));
			ret = EXIT_RUNTIME;
			goto out_procs;
		}
		/* report_json()'s members, then the mappings streamed */
		jw_init(&w, stdout);
		jw_open(&w, NULL, '{');
		json_object_foreach(o, key, v)
			jw_json(&w, key, v);
		json_decref(o);
		write_mappings_json(&w, &e, top);
		if (e.has_topo)
			write_numa_json(&w, &e, top);
		else
			jw_null(&w, "numa");
		jw_close(&w);
		/* -EIO (a full disk, a closed pipe): main() says it, exit 4 */
		if (jw_end(&w) == -EINVAL) {
			p_err("encoding the JSON report: a value jansson could not encode");
			ret = EXIT_RUNTIME;
			goto out_procs;
		}
	} else {
		print_plain(&e, &r, by, top);
	}
	ret = EXIT_OK;
out_procs:
	for (size_t i = 0; i < (size_t)npids && e.procs; i++) {
		smaps_free(&e.procs[i].sm);
		numa_maps_free(&e.procs[i].nm);
	}
	free(e.procs);
	free(e.files);
	report_free(&r);
out_free:
	free(e.watch_rows);
	free(pids);
	numa_topo_free(&e.topo);
	return ret;
}
