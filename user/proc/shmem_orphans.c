// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * shmem_orphans.c - tmpfs files nobody maps or holds open, and the bytes of
 * them a cgroup is charged for (shmem_orphans.h).
 */
#define _GNU_SOURCE	/* O_NOATIME */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "held_files.h"
#include "shmem_orphans.h"
#include "smaps.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define PM_PRESENT	(1ULL << 63)		/* Documentation/admin-guide/mm/pagemap.rst */
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define WINDOW_PAGES	8192			/* pages mapped at a time: page tables bounded */

/* a sorted set of (dev, ino) or of inode numbers (dev 0) */
struct devino {
	uint64_t dev, ino;
};

struct dset {
	struct devino *v;
	size_t n, cap;
};

static int dset_add(struct dset *s, uint64_t dev, uint64_t ino)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct devino *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct devino){ dev, ino };
	return 0;
}

static int devino_cmp(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void dset_sort(struct dset *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), devino_cmp);
}

static bool dset_has(const struct dset *s, uint64_t dev, uint64_t ino)
{
	struct devino k = { dev, ino };

	return s->n && bsearch(&k, s->v, s->n, sizeof(*s->v), devino_cmp);
}

int parse_mountinfo_tmpfs(const char *line, char *mnt, size_t len)
{
	const char *p = line, *sep, *fs;
	size_t mlen;

	/* id parent maj:min root mount-point ... - fstype source options */
	for (int f = 0; f < 4; f++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	mlen = strcspn(p, " ");
	sep = strstr(p + mlen, " - ");
	if (!sep)
		return -EINVAL;
	fs = sep + 3;
	if (strncmp(fs, "tmpfs ", 6))
		return -ENOENT;
	return octal_unescape(mnt, len, p, mlen) < 0 ? -ENAMETOOLONG : 0;
}

/* the tmpfs mount points, one per device (bind mounts walked once), into @mnts */
static int tmpfs_mounts(char (**mnts)[PATH_MAX], size_t *n, struct dset *devs)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, mnt[PATH_MAX];
	size_t cap = 0;
	int err = 0;

	*mnts = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (read_line(&line, &cap, f, 4 * PATH_MAX + 1024) > 0) {
		struct stat st;
		void *m;

		if (parse_mountinfo_tmpfs(line, mnt, sizeof(mnt)) || stat(mnt, &st))
			continue;
		if (dset_has(devs, 0, st.st_dev))
			continue;
		m = realloc(*mnts, (*n + 1) * sizeof(**mnts));
		if (!m || dset_add(devs, 0, st.st_dev)) {
			err = -ENOMEM;
			break;
		}
		*mnts = m;
		snprintf((*mnts)[(*n)++], PATH_MAX, "%s", mnt);
		dset_sort(devs);
	}
	free(line);
	fclose(f);
	return err;
}

/* the (dev, ino) of every tmpfs file a process maps or holds open, into @held */
/* held_files_walk()'s visitor: the files of the tmpfs mounts (dev set),
 * into the held set */
struct held_ctx {
	const struct dset *tmpfs_devs;
	struct dset *held;
};

static bool on_tmpfs(uint64_t dev, uint64_t ino, void *ctx)
{
	(void)ino;
	return dset_has(((struct held_ctx *)ctx)->tmpfs_devs, 0, dev);
}

static int add_held(uint64_t dev, uint64_t ino, enum held_how how, pid_t pid,
		    const char *path, void *ctx)
{
	(void)how, (void)pid, (void)path;
	return dset_add(((struct held_ctx *)ctx)->held, dev, ino);
}

static int held_files(const struct dset *tmpfs_devs, struct dset *held)
{
	struct held_ctx c = { tmpfs_devs, held };
	struct held_visitor v = { on_tmpfs, add_held, &c };
	int err = held_files_walk(&v);

	dset_sort(held);
	return err;
}

/* the inode numbers of @cg's directory and of every cgroup below it */
static int subtree_inos(const struct memcg *cg, struct dset *inos)
{
	char *paths[] = { (char *)cg->path, NULL };
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	FTSENT *e;
	int err = 0;

	if (!fts)
		return -errno;
	while (!err && (e = fts_read(fts)))
		if (e->fts_info == FTS_D)
			err = dset_add(inos, 0, e->fts_statp->st_ino);
	fts_close(fts);
	dset_sort(inos);
	return err;
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/* each resident page of @map read once: mapped; -EINTR on SIGBUS (the file truncated meanwhile) */
static int touch_resident(const char *map, const unsigned char *vec, uint64_t n, long page)
{
	if (sigsetjmp(bus_jmp, 1))
		return -EINTR;
	for (uint64_t i = 0; i < n; i++)
		if (vec[i] & 1)
			(void)*(volatile const char *)(map + i * page);
	return 0;
}

struct page_readers {
	int pagemap, kpagecgroup;
	long page;
	const struct dset *cg_inos;
};

/*
 * The resident and charged bytes of @o (open as @fd): windows of the file
 * mapped shared and read-only, the resident pages read (a truncation
 * meanwhile: SIGBUS, the file's figures up to there), their frames and
 * memcgs read. -EACCES when pagemap hides frames (no CAP_SYS_ADMIN).
 */
static int file_pages(int fd, struct shmem_orphan *o, const struct page_readers *pr)
{
	uint64_t npages = (o->size + pr->page - 1) / pr->page;
	unsigned char vec[WINDOW_PAGES];
	uint64_t pm[WINDOW_PAGES];
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int err = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	for (uint64_t w = 0; w < npages && !err; w += WINDOW_PAGES) {
		uint64_t n = npages - w < WINDOW_PAGES ? npages - w : WINDOW_PAGES;
		size_t len = n * pr->page;
		char *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)(w * pr->page));

		if (map == MAP_FAILED) {
			err = -errno;
			break;
		}
		if (mincore(map, len, vec))
			err = -errno;
		else
			err = touch_resident(map, vec, n, pr->page);
		if (!err && pread(pr->pagemap, pm, n * 8, (off_t)((uintptr_t)map / pr->page * 8)) !=
		    (ssize_t)(n * 8))
			err = -EIO;
		for (uint64_t i = 0; i < n && !err; i++) {
			uint64_t pfn = pm[i] & PM_PFN_MASK, cg_ino = 0;

			if (!(vec[i] & 1) || !(pm[i] & PM_PRESENT))
				continue;
			if (!pfn) {
				err = -EACCES;	/* frames hidden: not CAP_SYS_ADMIN */
				break;
			}
			o->resident += pr->page;
			if (pread(pr->kpagecgroup, &cg_ino, 8, (off_t)(pfn * 8)) == 8 &&
			    dset_has(pr->cg_inos, 0, cg_ino))
				o->charged += pr->page;
		}
		munmap(map, len);
	}
	sigaction(SIGBUS, &old, NULL);
	return err == -EINTR ? 0 : err;
}

static int charged_desc(const void *a, const void *b)
{
	const struct shmem_orphan *x = a, *y = b;

	return x->charged != y->charged ? (x->charged < y->charged ? 1 : -1) :
					  strcmp(x->path, y->path);
}

/* @o kept among the largest SHMEM_ORPHANS_MAX of @out (its array holds twice that) */
static void keep(struct shmem_orphans *out, const struct shmem_orphan *o)
{
	if (out->nfiles == 2 * SHMEM_ORPHANS_MAX) {
		qsort(out->files, out->nfiles, sizeof(*out->files), charged_desc);
		out->nfiles = SHMEM_ORPHANS_MAX;
	}
	out->files[out->nfiles++] = *o;
}

/* the orphans of the tmpfs mounted at @mnt (its own device only) */
static int walk_mount(const char *mnt, const struct dset *held, const struct page_readers *pr,
		      struct shmem_orphans *out)
{
	char *paths[] = { (char *)mnt, NULL };
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	FTSENT *e;
	int err = 0;

	if (!fts)
		return -errno;
	while (!err && (e = fts_read(fts))) {
		const struct stat *st = e->fts_statp;
		struct shmem_orphan o = { 0 };
		int fd;

		if (e->fts_info != FTS_F)
			continue;
		if (++out->files_walked > SHMEM_ORPHANS_WALK_MAX) {
			out->truncated = true;
			break;
		}
		if (!st->st_blocks || !st->st_size || dset_has(held, st->st_dev, st->st_ino))
			continue;
		fd = open(e->fts_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOATIME);
		if (fd < 0 && errno == EPERM)	/* O_NOATIME: not the owner, no CAP_FOWNER */
			fd = open(e->fts_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			out->unreadable++;
			continue;
		}
		snprintf(o.path, sizeof(o.path), "%s", e->fts_path);
		o.dev = st->st_dev;
		o.ino = st->st_ino;
		o.size = (uint64_t)st->st_size;
		o.allocated = (uint64_t)st->st_blocks * 512;
		err = file_pages(fd, &o, pr);
		close(fd);
		if (err == -ENODEV || err == -EINVAL) {	/* not mappable after all */
			out->unreadable++;
			err = 0;
			continue;
		}
		if (err || !o.charged)
			continue;
		out->charged += o.charged;
		out->files_charged++;
		keep(out, &o);
	}
	fts_close(fts);
	return err;
}

int shmem_orphans_scan(const struct memcg *cg, struct shmem_orphans *out)
{
	struct dset devs = { 0 }, held = { 0 }, inos = { 0 };
	struct page_readers pr = { .page = sysconf(_SC_PAGESIZE), .cg_inos = &inos };
	char (*mnts)[PATH_MAX] = NULL;
	size_t nmnts = 0;
	int err;

	memset(out, 0, sizeof(*out));
	pr.kpagecgroup = open("/proc/kpagecgroup", O_RDONLY | O_CLOEXEC);
	if (pr.kpagecgroup < 0)
		return -errno;
	pr.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	out->files = malloc(2 * SHMEM_ORPHANS_MAX * sizeof(*out->files));
	err = pr.pagemap < 0 ? -errno : !out->files ? -ENOMEM : 0;
	if (!err)
		err = tmpfs_mounts(&mnts, &nmnts, &devs);
	if (!err)
		err = held_files(&devs, &held);
	if (!err)
		err = subtree_inos(cg, &inos);
	for (size_t i = 0; i < nmnts && !err && !out->truncated; i++)
		err = walk_mount(mnts[i], &held, &pr, out);
	if (!err && out->nfiles)
		qsort(out->files, out->nfiles, sizeof(*out->files), charged_desc);
	if (out->nfiles > SHMEM_ORPHANS_MAX)
		out->nfiles = SHMEM_ORPHANS_MAX;
	if (pr.pagemap >= 0)
		close(pr.pagemap);
	close(pr.kpagecgroup);
	free(mnts);
	free(devs.v);
	free(held.v);
	free(inos.v);
	if (err)
		shmem_orphans_free(out);
	return err;
}

void shmem_orphans_free(struct shmem_orphans *o)
{
	free(o->files);
	memset(o, 0, sizeof(*o));
}
