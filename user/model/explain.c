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
 * This file is the model (collection, totals, verdicts): it returns
 * negative errnos, never exit codes; explain_cmd.c is the command (options,
 * exit codes), explain_print.c prints the model and only reads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
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
#include "dma_ranges.h"
#include "explain.h"
#include "fill.h"
#include "metric_table.h"
#include "numa.h"
#include "pin.h"
#include "proc.h"
#include "report.h"
#include "session.h"
#include "signals.h"
#include "smaps.h"
#include "snapshot.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* x86_64 and the generic table, Linux >= 6.5 */
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* Add one mapping's figures (bytes, docs/explain.md) to @s. */
void xsum_add(struct xsum *s, const struct smaps_map *m)
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
void parts_sum(const struct explain *e, uint64_t v[PART_NR])
{
	memset(v, 0, sizeof(uint64_t) * PART_NR);
	for (size_t i = 0; i < e->nprocs; i++)
		for (size_t j = 0; j < e->procs[i].sm.n; j++)
			parts_add(v, &e->procs[i].sm.maps[j], e->cgroup_mode);
}

void explain_sum_proc(struct xproc *p)
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
			fd = open_mapped(p->row.pid, m);
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
				refs[n++] = (struct mref){ m, e->procs[i].row.pid };
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

	if (e->nverdict >= (int)(sizeof(e->verdict) / sizeof(e->verdict[0]))) {
		e->verdicts_unlisted++;	/* said as a count: never dropped unsaid */
		return;
	}
	va_start(ap, fmt);
	vsnprintf(e->verdict[e->nverdict++], sizeof(e->verdict[0]), fmt, ap);
	va_end(ap);
}

/* A path fit for one line of text: control bytes as \ooo. */
void safe_path(char *dst, size_t len, const char *src)
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
uint64_t dma_total(const struct explain *e)
{
	uint64_t n = 0;

	for (size_t i = 0; i < e->nprocs; i++)
		n += e->procs[i].row.m.dma_pinned;
	return n;
}

/*
 * Bytes of mapping @m of @x pinned for DMA where the pinned ranges are known
 * (XDP_UMEM_REG areas in a daemon's pins): the ranges' overlap with it, at
 * most its resident bytes (pinned pages are resident); 0 in mlocked
 * mappings, whose pages VmLck counts (the DMA figure is net of them).
 */
uint64_t dma_in_map(const struct xproc *x, const struct smaps_map *m)
{
	uint64_t n = 0;

	if (!x->has_ranges || m->vm_locked)
		return 0;	/* mlocked: in VmLck, not in the process's DMA figure */
	for (size_t i = 0; i < x->ranges.n; i++) {
		uint64_t a = x->ranges.v[i].start, b = x->ranges.v[i].end;
		uint64_t lo = m->start > a ? m->start : a, hi = m->end < b ? m->end : b;

		if (lo < hi)
			n += hi - lo;
	}
	return n < m->rss ? n : m->rss;
}

const struct smaps_map *dma_range_map(const struct xproc *x, const struct dma_range *r)
{
	for (size_t j = 0; j < x->sm.n; j++)
		if (x->sm.maps[j].start <= r->start && r->start < x->sm.maps[j].end)
			return &x->sm.maps[j];
	return NULL;
}

/* The verdict's lines naming each range the NVIDIA driver pinned (at most 6). */
static void nvidia_ranges_say(struct explain *e)
{
	uint64_t more_bytes = 0;
	int said = 0, more = 0;
	char b[16];

	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];

		for (size_t k = 0; k < x->ranges.n; k++) {
			const struct dma_range *r = &x->ranges.v[k];
			const struct smaps_map *m = dma_range_map(x, r);
			char path[160];

			if (r->src != DMA_SRC_NVIDIA)
				continue;
			if (said == 6) {
				more++;
				more_bytes += r->end - r->start;
				continue;
			}
			safe_path(path, sizeof(path), m && m->path ? m->path : "[anon]");
			if (m)
				say(e, "pid %d: %s at %" PRIx64 "-%" PRIx64 " pinned for DMA by %s, "
				    "in mapping %" PRIx64 "-%" PRIx64 " %s %s%s", (int)x->row.pid,
				    fmt_bytes(b, sizeof(b), r->end - r->start), r->start, r->end,
				    dma_source_text(r->src), m->start, m->end, m->perms, path,
				    m->deleted ? " (deleted)" : "");
			else
				say(e, "pid %d: %s at %" PRIx64 "-%" PRIx64 " pinned for DMA by %s, "
				    "in no mapping now (unmapped while pinned)", (int)x->row.pid,
				    fmt_bytes(b, sizeof(b), r->end - r->start), r->start, r->end,
				    dma_source_text(r->src));
			said++;
		}
	}
	if (more)
		say(e, "and %d more ranges pinned by the NVIDIA driver, %s (explain -j: "
		    "dma_pinned_ranges)", more, fmt_bytes(b, sizeof(b), more_bytes));
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
		if (e->procs[i].row.m.dma_pinned > in_maps)
			*unranged += e->procs[i].row.m.dma_pinned - in_maps;
	}
	if (best)
		snprintf(dst, len, "; %s of it in pid %d's %s mapping %" PRIx64 "-%" PRIx64 " %s%s"
			 "%s%s", fmt_bytes(b, sizeof(b), bn), bx->row.pid, best->perms,
			 best->start, best->end, best->path ? best->path : "[anon]",
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

/* Page cache: clean (reclaimable) pages, naming the file holding most of them. */
static void verdict_page_cache(struct explain *e)
{
	const struct xsum *t = &e->total;
	const struct xfile *top = NULL;
	/*
	 * --cgroup: memory.stat's clean page cache counts pages nobody maps
	 * (a job that read() its data), which the processes' RSS does not
	 * hold: the base is then the cgroup's charge, which holds both (read
	 * a moment apart from memory.stat: never below the page cache)
	 */
	bool charge = e->cgroup_mode && e->has_stat;
	uint64_t base = !charge ? t->rss : e->cst.usage > t->reclaimable ? e->cst.usage :
			t->reclaimable;
	uint64_t top_once = 0;
	const char *of = charge ? "the cgroup's charge" : "RSS";
	char b[4][16], path[160], size[48];

	if (!t->reclaimable || pct(t->reclaimable, base) < 10)
		return;
	/* a file's clean pages counted once, as t->reclaimable counts them */
	for (size_t i = 0; i < e->nfiles; i++) {
		const struct xfile *f = &e->files[i];
		uint64_t once = e->cgroup_mode ? f->reclaimable_once : f->reclaimable;

		if (!top || once > top_once) {
			top = f;
			top_once = once;
		}
	}
	if (!top || top_once * 2 < t->reclaimable) {
		say(e, "%d%% of %s (%s of %s) is clean page cache: reclaimable; %s really owns %s",
		    pct(t->reclaimable, base), of, fmt_bytes(b[0], 16, t->reclaimable),
		    fmt_bytes(b[2], 16, base), e->cgroup_mode ? "the cgroup" : "the process",
		    fmt_bytes(b[1], 16, base > t->reclaimable ? base - t->reclaimable : 0));
		return;
	}
	safe_path(path, sizeof(path), top->m->path);
	if (top->has_size)
		snprintf(size, sizeof(size), "; the file is %s", fmt_bytes(b[3], 16, top->size));
	else
		snprintf(size, sizeof(size), "; file size unknown");
	say(e, "%d%% of %s (%s) is clean page cache, mostly of %s%s (%s of it%s): "
	    "reclaimable; %s really owns %s",
	    pct(t->reclaimable, base), of, fmt_bytes(b[0], 16, t->reclaimable), path,
	    top->m->deleted ? " (deleted)" : "",
	    fmt_bytes(b[1], 16, top_once), size,
	    e->cgroup_mode ? "the cgroup" : "the process",
	    fmt_bytes(b[2], 16, base > t->reclaimable ? base - t->reclaimable : 0));
}

/* --cgroup: what the processes hold once, and each fork family's sharing. */
static void verdict_families(struct explain *e)
{
	const struct xsum *t = &e->total;
	uint64_t sum_rss = 0;
	char b[3][16], tail[160];

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

			if (c->row.ppid != par->row.pid)
				continue;
			if (!nkids || c->row.pid < lo)
				lo = c->row.pid;
			if (!nkids || c->row.pid > hi)
				hi = c->row.pid;
			nkids++;
			shared += c->sum.pss - c->sum.uss;
			cow_known &= c->has_flows;
			cow += c->row.m.cow_copied;
		}
		if (!nkids || !par->sum.shared)
			continue;
		if (cow_known)
			snprintf(tail, sizeof(tail), "; %s has been CoW-copied by them %s",
				 fmt_bytes(b[1], 16, cow), e->watched ? "while watched" :
				 "since the memacct daemon attached");
		else
			snprintf(tail, sizeof(tail), "; how much they CoW-copied since fork "
				 "is unknown (not watched)");
		say(e, "%s %d..%d (%d) share pages with their parent %d (%s of "
		    "their PSS is shared)%s", nkids > 1 ? "workers" : "worker", lo, hi,
		    nkids, par->row.pid, fmt_bytes(b[0], 16, shared), tail);
	}
}

/* DMA pins (never reclaimable), and shared memory besides them. */
static void verdict_pins_shmem(struct explain *e)
{
	const struct xsum *t = &e->total;
	uint64_t shown = e->cgroup_mode ? t->shmem_pss : t->shmem, shm_dma, unr, maybe;
	char where[200], may[160] = "", b[2][16];

	dma_mappings(e, where, sizeof(where), &shm_dma, &unr);
	if (dma_total(e)) {
		say(e, "%s is pinned for DMA by a driver (CUDA host memory, pin_memory=True, "
		    "AF_XDP UMEM, ...): never reclaimable, not even by swap%s",
		    fmt_bytes(b[0], 16, dma_total(e)), where);
		nvidia_ranges_say(e);
	}
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

uint64_t explain_cow_total(const struct explain *e)
{
	uint64_t cow = 0;

	for (size_t i = 0; i < e->nprocs; i++)
		cow += e->procs[i].row.m.cow_copied;
	return cow;
}

/* CoW copies: measured by a watch or a daemon's pins, else unknown. */
static void verdict_cow(struct explain *e)
{
	char b[16];

	if (e->watched)
		say(e, "%s was copied on write (CoW) during the %.1f s watch",
		    fmt_bytes(b, 16, explain_cow_total(e)), e->watch_ns / 1e9);
	else if (e->daemon_cow)
		say(e, "%s was copied on write (CoW) since the memacct daemon attached (its "
		    "pinned maps; processes it has not seen fault: unknown)",
		    fmt_bytes(b, 16, explain_cow_total(e)));
	else if (!e->cgroup_mode)
		say(e, "CoW copies since fork: unknown (no memacct daemon is attached; "
		    "--watch DUR measures them)");
}

/*
 * tmpfs files that no process maps or holds open with at least a MiB
 * charged to the cgroup (shmem_orphans.h): nobody's RSS shows them.
 */
static void verdict_orphans(struct explain *e)
{
	const struct shmem_orphans *o = &e->orphans;
	char b[2][16], path[128];

	if (!e->has_orphans || o->charged < (1u << 20))
		return;
	safe_path(path, sizeof(path), o->files[0].path);
	say(e, "%s of tmpfs files that no process maps or holds open is charged to this cgroup "
	    "(%" PRIu64 " file%s, the largest %s %s): the kubelet counts it as used, and only "
	    "deleting the file (or swap) frees it", fmt_bytes(b[0], 16, o->charged),
	    o->files_charged, o->files_charged == 1 ? "" : "s", path,
	    fmt_bytes(b[1], 16, o->files[0].charged));
}

/*
 * The file whose page cache is the largest part of the cgroup's charge (at
 * least a tenth and a MiB; page_cache.h, from a daemon): named, and whether
 * anyone still maps or holds it.
 */
static void verdict_page_cache_file(struct explain *e)
{
	const struct page_cache_file *f = e->page_cache.f;
	char b[16], label[128];
	uint64_t usage = e->parts.usage;

	if (!e->has_page_cache || !e->page_cache.n || !usage || f->bytes < (1u << 20) ||
	    pct(f->bytes, usage) < 10)
		return;
	page_cache_file_label(f, label, sizeof(label));
	say(e, "%d%% of the charge (%s) is page cache of %s%s: reclaimable, but the kubelet "
	    "counts its active part in the working set", pct(f->bytes, usage),
	    fmt_bytes(b, 16, f->bytes), label,
	    f->mapped ? ", mapped" : f->open ? ", held open" : " that nobody maps or holds open");
}

/* The verdict's sentences, from the biggest kind of memory to the flows. */
static void build_verdict(struct explain *e)
{
	const struct xsum *t = &e->total;
	uint64_t rss = t->rss;
	char b[3][16];

	if (!rss) {
		/* a cgroup's page cache outlives its readers: still charged */
		verdict_page_cache(e);
		verdict_page_cache_file(e);
		verdict_orphans(e);
		if (!e->nverdict)
			say(e, "no resident memory");
		return;
	}
	verdict_page_cache(e);
	verdict_page_cache_file(e);
	verdict_orphans(e);
	if (t->private_anon && pct(t->private_anon, rss) >= 10)
		say(e, "%d%% of RSS (%s) is private anonymous memory (heap, stacks, copies): "
		    "only swap can reclaim it", pct(t->private_anon, rss),
		    fmt_bytes(b[0], 16, t->private_anon));
	if (!e->cgroup_mode && t->shared && pct(t->shared, rss) >= 10)
		say(e, "%s of RSS is shared with other processes: its proportional share (PSS) "
		    "is %s, its own pages (USS) %s", fmt_bytes(b[0], 16, t->shared),
		    fmt_bytes(b[1], 16, t->pss), fmt_bytes(b[2], 16, t->uss));
	if (e->cgroup_mode)
		verdict_families(e);
	verdict_pins_shmem(e);
	if (t->locked)
		say(e, "%s is mlocked: never reclaimed", fmt_bytes(b[0], 16, t->locked));
	if (t->file_dirty && pct(t->file_dirty, rss) >= 1)
		say(e, "%s of mapped page cache is dirty: reclaimable only after writeback",
		    fmt_bytes(b[0], 16, t->file_dirty));
	if (t->swap)
		say(e, "%s more is swapped out (not in RSS)", fmt_bytes(b[0], 16, t->swap));
	verdict_cow(e);
}

/* ---- NUMA ---------------------------------------------------------- */

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
		safe_path(comm, sizeof(comm), x->row.comm);
		snprintf(who, sizeof(who), "PID %d (%s)", x->row.pid, comm);
		if (!numa_verdict(line, sizeof(line), who, x->row.pid, &b, numa_threshold_pct,
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

/* ---- collection ---------------------------------------------------- */

/*
 * 0, or a negative errno after saying why @pid cannot be explained:
 * -EINVAL no address space (a kernel thread or zombie), -ESRCH gone while
 * being read, -EACCES (or -EPERM) smaps not readable, another read error.
 * With @quiet_if_gone a process gone is not an error worth a line.
 */
static int load_proc(struct xproc *x, pid_t pid, bool quiet_if_gone)
{
	int err;

	err = proc_row_read(pid, 0, &x->row, NULL);
	if (err == -EINVAL) {
		if (!quiet_if_gone)
			p_err("process %d has no address space (kernel thread or zombie): "
			      "nothing to explain", pid);
		return -EINVAL;
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
		return -ESRCH;
	}
	if (err == -EACCES || err == -EPERM) {
		if (quiet_if_gone)	/* --cgroup: the others are still explained (D17) */
			p_warn("process %d skipped: reading /proc/%d/smaps: %s (needs root or "
			       "ptrace access to the process)", pid, pid, strerror(-err));
		else
			p_err("reading /proc/%d/smaps: %s (needs root or ptrace access to the "
			      "process)", pid, strerror(-err));
		return err;
	}
	p_err("reading /proc/%d/smaps: %s", pid, strerror(-err));
	return err;
}

/*
 * Per-process report rows: the collector's (/proc/PID/status, the watch's
 * or a daemon's flows and DMA pins), with RSS and shmem from the smaps sums
 * that explain breaks down, and remote NUMA from numa_maps.
 */
int explain_fill_report(struct explain *e, struct report *r)
{
	r->procs = calloc(e->nprocs ? e->nprocs : 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	r->nprocs = e->nprocs;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		struct proc_row *row = &r->procs[i];

		*row = x->row;
		row->m.rss = x->sum.rss;
		row->m.shmem = x->sum.shmem;
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
		/* counted on several nodes only (metric_fault_mask()) */
		if (e->topo.nnodes <= 1)
			row->m.unknown |= MBIT(M_FAULT_ALLOC);
		r->dma_attributed += row->m.pinned_vm + row->m.dma_pinned;
	}
	/* their copied mappings, paths copied: the report owns them */
	r->has_cowm = e->watched || e->daemon_cow;
	for (size_t i = 0; i < e->nprocs; i++) {
		const struct xproc *x = &e->procs[i];
		struct cow_mapping *nv;

		if (!x->ncowm)
			continue;
		nv = realloc(r->cowm, (r->ncowm + x->ncowm) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->cowm = nv;
		r->procs[i].cowm_first = (uint32_t)r->ncowm;
		for (size_t j = 0; j < x->ncowm; j++) {
			struct cow_mapping *m = &r->cowm[r->ncowm];

			*m = x->cowm[j];
			if (m->path && !(m->path = strdup(m->path)))
				return -ENOMEM;
			r->ncowm++;
			r->procs[i].cowm_n++;
		}
	}
	/* the processes' sums (their smaps, status and flows: what explain
	 * breaks down); with --cgroup the charge replaces rss below */
	metrics_sum_rows(&r->totals, r->procs, r->nprocs);
	r->totals_of_rows = true;
	if (e->has_stat) {
		r->totals.usage = e->cst.usage;
		r->totals.working_set = memcg_working_set(&e->cst);
	}
	/* a cgroup's rss_bytes is its charge, as in every report
	 * (docs/metrics.md); what its processes hold once is pss_bytes */
	if (e->cgroup_mode) {
		r->totals.rss = r->totals.usage;
		if (!e->has_stat)
			r->totals.unknown |= MBIT(M_RSS) | MBIT(M_USAGE) | MBIT(M_WORKING_SET);
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
	if (e->topo.nnodes <= 1)
		r->totals.unknown |= MBIT(M_FAULT_ALLOC);
	if (!e->watched && !e->daemon_dma)	/* DMA pins unknown, never 0 */
		r->totals.unknown |= MBIT(M_DMA_PINNED) | MBIT(M_DMA_PINNED_PEAK);
	r->numa_multi = e->topo.nnodes > 1;
	/* the host's pins; attributed only as far as the watch saw */
	r->has_host = !hostpin_read(&r->host, geteuid() == 0);
	r->dma_attribution = (e->watched || e->daemon_dma) && r->host.known;
	return 0;
}

void explain_total_up(struct explain *e)
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

		/* clean page cache, the one formula of reclaimable_bytes */
		t->file_clean = memcg_reclaimable(c);
		t->file_dirty = c->file_dirty + c->file_writeback;
		t->reclaimable = t->file_clean;
	}
}

int explain_watch(struct explain *e, const struct memcg *cg, uint64_t dur_ns)
{
	struct session s;
	struct report r;
	uint64_t start, end;
	int err;

	err = loader_check_env();
	if (err)
		return err;
	/* SIGINT/SIGTERM end the watch early: explained with what it counted */
	install_stop_handlers(0);
	err = session_start(&s, cg);
	if (err)
		return err;
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
		return err;
	}
	e->watched = true;
	e->watch_ns = now_ns() - start;	/* shorter than DUR when stopped */
	e->watch_rows = r.procs;	/* taken over: freed with e */
	e->nwatch_rows = r.nprocs;
	e->watch_cowm = r.cowm;
	e->nwatch_cowm = r.ncowm;
	r.procs = NULL;	/* taken: the rest of the report freed */
	r.nprocs = 0;
	r.cowm = NULL;
	r.ncowm = 0;
	report_free(&r);
	return 0;
}

/* A daemon's record of process @i found (its row filled): its known DMA ranges kept. */
static void daemon_one(size_t i, const struct memacct_proc *v, const struct dma_ranges *r,
		       void *ctx)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), ranged = r ? dma_ranges_bytes(r) / page : 0;
	struct explain *e = ctx;
	struct xproc *x = &e->procs[i];

	x->has_flows = true;
	e->daemon_cow = true;
	x->ranges.v = r && r->n ? malloc(r->n * sizeof(*r->v)) : NULL;
	if (x->ranges.v) {
		memcpy(x->ranges.v, r->v, r->n * sizeof(*r->v));
		x->ranges.n = r->n;
	} else if (!r || r->n) {
		ranged = 0;	/* unreadable, or no memory for them: unknown */
	}
	x->has_ranges = r && (!r->n || x->ranges.v);	/* known, maybe none */
	x->ranges_all = ranged >= v->pin.dma_pinned_pages;
	e->daemon_dma = true;
}

/* pin_cow_maps_of()'s callback: process @i's CoW slots (issue 42), joined
 * with its parent's mappings */
static void daemon_cow_maps(size_t i, const struct memacct_cow_maps *cm, void *ctx)
{
	struct explain *e = ctx;
	struct xproc *x = &e->procs[i];

	if (!x->has_flows || x->cowm || !cowm_any(cm) ||
	    cowm_catalog_note(&e->cowm_cat, x->row.pid, x->row.ppid, cm) < 0)
		return;
	x->cowm = calloc(MEMACCT_COW_MAPS, sizeof(*x->cowm));
	if (x->cowm)
		x->ncowm = cowm_rows(&e->cowm_cat, x->row.pid, x->row.ppid, cm,
				     (uint64_t)sysconf(_SC_PAGESIZE), x->cowm);
}

/*
 * daemon_pins() - without --watch, from a running memacct daemon's pinned
 * procs map (@dir/maps/procs, proc_rows_join_pins(): a reused PID never
 * matches): the flows (since the daemon attached, or since fork for
 * processes started after it: CoW copies, zero fills, ...; no page-fault
 * counts) and the DMA pins (net of mlocked memory, with their known
 * ranges) of each process explained, and its CoW slots by mapping (all of
 * them in one pass: pin_cow_maps_of()). Sets has_flows and the row's flows of
 * each process found, e->daemon_cow and e->daemon_dma. Read-only; nothing
 * when no daemon has pinned there or the pins are of another build.
 */
static void daemon_pins(struct explain *e, const char *dir)
{
	pid_t *pids;

	if (!e->nprocs)
		return;
	proc_rows_join_pins(dir, &e->procs[0].row, e->nprocs, sizeof(e->procs[0]), daemon_one, e);
	/* one pass over the pinned slots for every process explained */
	pids = calloc(e->nprocs, sizeof(*pids));
	if (!pids)
		return;
	for (size_t i = 0; i < e->nprocs; i++)
		pids[i] = e->procs[i].row.pid;
	pin_cow_maps_of(dir, pids, e->nprocs, daemon_cow_maps, e);
	free(pids);
}

/*
 * --cgroup: the page cache of @cg and every cgroup below it by file, from a
 * running daemon's pinned map (page_cache.h): what it saw added since it
 * started, less what it saw removed. Nothing without a daemon (one explain
 * sees no history).
 */
static void daemon_page_cache(struct explain *e, const struct memcg *cg, const char *dir)
{
	uint64_t *ids = NULL;
	int fd, n, err;

	fd = pin_map_get(dir, "page_cache");
	if (fd < 0)
		return;
	n = memcg_descendant_ids(cg, &ids);
	if (n > 0) {
		struct page_cache_query q = { .ids = ids, .nids = (size_t)n };

		err = page_cache_read(fd, sysconf(_SC_PAGESIZE), &q, &e->page_cache);
		if (!err)
			err = page_cache_resolve(&e->page_cache, PAGE_CACHE_SHOWN);
		e->has_page_cache = !err;
		if (err)
			p_info("the page cache by file: not read (%s)", strerror(-err));
	}
	free(ids);
	close(fd);
}

/* the flows the watch measured for @x, if it saw it alive */
static void watch_result(const struct explain *e, struct xproc *x)
{
	for (size_t j = 0; j < e->nwatch_rows; j++)
		if (e->watch_rows[j].pid == x->row.pid && !e->watch_rows[j].exited) {
			const struct metrics *w = &e->watch_rows[j].m;

			x->has_flows = true;
			metrics_add_flows(&x->row.m, w);
			x->row.m.page_faults = w->page_faults;	/* since attach */
			x->row.m.major_faults = w->major_faults;
			x->row.m.dma_pinned = w->dma_pinned;
			x->row.m.dma_estimate = w->dma_estimate;
			metrics_pinned_totals(&x->row.m);
			x->cowm = e->watch_rows[j].cowm_n ?
				  calloc(e->watch_rows[j].cowm_n, sizeof(*x->cowm)) : NULL;
			if (x->cowm) {
				x->ncowm = e->watch_rows[j].cowm_n;
				memcpy(x->cowm, &e->watch_cowm[e->watch_rows[j].cowm_first],
				       x->ncowm * sizeof(*x->cowm));
			}
		}
}

int explain_load(struct explain *e, const pid_t *pids, int npids)
{
	int err;

	e->procs = calloc(npids ? npids : 1, sizeof(*e->procs));
	if (!e->procs)
		return -ENOMEM;
	for (int i = 0; i < npids; i++) {
		struct xproc *x = &e->procs[e->nprocs];

		memset(x, 0, sizeof(*x));
		err = load_proc(x, pids[i], e->cgroup_mode);
		if (err) {
			smaps_free(&x->sm);
			if (!e->cgroup_mode)
				return err;
			/* --cgroup: gone or unreadable (said), the others explained */
			if (err == -ESRCH || err == -EINVAL)
				p_info("process %d left while being read: skipped", pids[i]);
			continue;
		}
		watch_result(e, x);
		/* one node: from smaps (numa_maps would cost as much again) */
		if (e->has_topo) {
			err = e->topo.nnodes == 1 ?
			      numa_smaps_usage(&e->topo, &x->sm, &x->nu, &x->nm) :
			      numa_proc_usage(&e->topo, x->row.pid, &x->nu, &x->nm);
			x->has_numa = !err;
			if (err)
				p_info("reading /proc/%d/numa_maps: %s", x->row.pid,
				       strerror(-err));
		}
		refine_kinds(x);
		explain_sum_proc(x);
		e->nprocs++;
	}
	return 0;
}

int explain_build(struct explain *e, struct report *r, const char *pin_dir)
{
	if (!e->watched)
		daemon_pins(e, pin_dir);
	e->has_stat = r->cg.path[0] && !memcg_read_stat(&r->cg, &e->cst);
	/* the v2 root has no memory.current: no charge to split */
	if (e->has_stat && (r->cg.version == 1 || r->cg.level)) {
		uint64_t kmem = 0;

		if (r->cg.version == 1 && memcg_read_kmem(&r->cg, &kmem))
			kmem = 0;	/* no kmem accounting: "other" holds it */
		memcg_charge_parts(&e->cst, r->cg.version, kmem,
				   r->cg.version == 1 && !r->cg.level, &e->parts);
	}
	if (e->cgroup_mode && e->has_topo)
		e->has_cg_numa = !memcg_numa_usage(&e->topo, &r->cg, &e->cg_numa);
	if (e->has_topo)
		numa_collect(e);
	explain_total_up(e);
	if (e->cgroup_mode && r->cg.path[0]) {
		int err;

		daemon_page_cache(e, &r->cg, pin_dir);
		err = shmem_orphans_scan(&r->cg, &e->orphans);
		e->has_orphans = !err;
		if (err)
			p_info("tmpfs files that no process holds: not read (%s)", strerror(-err));
	}
	if (collect_files(e) || explain_fill_report(e, r))
		return -ENOMEM;
	build_verdict(e);
	if (r->has_host) {
		char hv[sizeof(e->verdict[0])];

		if (report_host_verdict(&r->host, hv, sizeof(hv)))
			say(e, "%s", hv);
		else
			say(e, "DMA pins: unknown on this kernel (no nr_foll_pin_* in /proc/vmstat)");
		if (hostmem_uma_verdict(&r->host, hv, sizeof(hv)))
			say(e, "%s", hv);
	}
	if (e->has_topo)
		numa_verdicts(e);
	return 0;
}

void explain_free(struct explain *e)
{
	for (size_t i = 0; i < e->nprocs && e->procs; i++) {
		smaps_free(&e->procs[i].sm);
		numa_maps_free(&e->procs[i].nm);
		dma_ranges_free(&e->procs[i].ranges);
		free(e->procs[i].cowm);
	}
	free(e->procs);
	free(e->files);
	free(e->watch_rows);
	for (size_t i = 0; i < e->nwatch_cowm; i++)
		free((char *)e->watch_cowm[i].path);
	free(e->watch_cowm);
	cowm_catalog_free(&e->cowm_cat);
	numa_topo_free(&e->topo);
	shmem_orphans_free(&e->orphans);
	page_cache_free(&e->page_cache);
	memset(e, 0, sizeof(*e));
}
