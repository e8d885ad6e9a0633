// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * page_cache.c - page cache by file and memory cgroup (page_cache.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include "held_files.h"
#include "page_cache.h"
#include "records.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* the kernel's dev_t (include/linux/kdev_t.h: MAJOR << 20 | MINOR) as st_dev */
static uint64_t dev_of_kernel(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

static int by_file(const void *a, const void *b)
{
	const struct page_cache_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* by memcg, then the larger first of @first and then of @second, then by file */
static int by_memcg(const struct page_cache_file *x, const struct page_cache_file *y,
		    size_t first, size_t second)
{
	const size_t off[2] = { first, second };

	if (x->memcg_id != y->memcg_id)
		return x->memcg_id < y->memcg_id ? -1 : 1;
	for (int k = 0; k < 2; k++) {
		uint64_t u = *(const uint64_t *)((const char *)x + off[k]);
		uint64_t v = *(const uint64_t *)((const char *)y + off[k]);

		if (u != v)
			return u > v ? -1 : 1;
	}
	return by_file(x, y);
}

static int by_memcg_bytes(const void *a, const void *b)
{
	return by_memcg(a, b, offsetof(struct page_cache_file, bytes),
			offsetof(struct page_cache_file, peak));
}

static int by_memcg_peak(const void *a, const void *b)
{
	return by_memcg(a, b, offsetof(struct page_cache_file, peak),
			offsetof(struct page_cache_file, bytes));
}

static void set_bytes(struct page_cache_file *f)
{
	f->before = f->removed > f->added;
	f->bytes = f->before ? 0 : f->added - f->removed;
}

/* records of one file summed (@f sorted by file): the count kept */
static size_t sum_files(struct page_cache_file *f, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && !by_file(&f[k - 1], &f[i])) {
			f[k - 1].added += f[i].added;
			f[k - 1].removed += f[i].removed;
			f[k - 1].peak += f[i].peak;
			f[k - 1].memcg_id = 0;
			continue;
		}
		f[k++] = f[i];
	}
	return k;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @id among the sorted @ids */
static bool id_in(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return true;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* page_cache_map_each()'s state: the query, the files kept, the keys to delete */
struct read_ctx {
	const struct page_cache_query *q;
	const uint64_t *want;		/* q->ids sorted, or NULL */
	uint64_t page_size;
	struct page_cache_files *out;
	size_t cap;
	struct memacct_page_cache_key *gone;
	size_t ngone, capgone;
};

static int read_one(const struct memacct_page_cache_key *k, const struct memacct_page_cache_file *v,
		    void *ctx)
{
	struct read_ctx *c = ctx;
	struct page_cache_files *out = c->out;
	struct page_cache_file *f;

	out->records++;
	if (c->q->live && (!id_in(c->q->live, c->q->nlive, k->memcg_id) ||
			   v->removed_pages >= v->added_pages)) {
		struct memacct_page_cache_key *g = array_grow(&c->gone, c->ngone, &c->capgone,
							      sizeof(*g));

		if (!g)
			return -ENOMEM;
		*g = *k;
		c->ngone++;
		return 0;
	}
	if (c->want && !id_in(c->want, c->q->nids, k->memcg_id))
		return 0;
	f = array_grow(&out->f, out->n, &c->cap, sizeof(*f));
	if (!f)
		return -ENOMEM;
	out->n++;
	memset(f, 0, sizeof(*f));
	f->memcg_id = k->memcg_id;
	f->dev = dev_of_kernel(k->dev);
	f->ino = k->ino;
	f->added = v->added_pages * c->page_size;
	f->removed = v->removed_pages * c->page_size;
	f->peak = v->peak_pages * c->page_size;
	memcpy(f->name, v->name, sizeof(f->name));
	f->name[sizeof(f->name) - 1] = '\0';
	return 0;
}

int page_cache_read(int fd, uint64_t page_size, const struct page_cache_query *q,
		    struct page_cache_files *out)
{
	struct read_ctx c = { .q = q, .page_size = page_size, .out = out };
	uint64_t *want = NULL;
	size_t kept = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (q->ids) {
		want = malloc((q->nids ? q->nids : 1) * sizeof(*want));
		if (!want)
			return -ENOMEM;
		memcpy(want, q->ids, q->nids * sizeof(*want));
		qsort(want, q->nids, sizeof(*want), cmp_id);
		c.want = want;
	}
	err = page_cache_map_each(fd, read_one, &c);
	free(want);
	/* deleted after the walk: a delete during it would restart it */
	for (size_t i = 0; !err && i < c.ngone; i++)
		out->pruned += !bpf_map_delete_elem(fd, &c.gone[i]);
	free(c.gone);
	if (err) {
		page_cache_free(out);
		return err;
	}
	if (!q->per_memcg && out->n) {
		qsort(out->f, out->n, sizeof(*out->f), by_file);
		out->n = sum_files(out->f, out->n);
	}
	for (size_t i = 0; i < out->n; i++) {
		set_bytes(&out->f[i]);
		if (out->f[i].peak < out->f[i].bytes)	/* racing adds: never below now */
			out->f[i].peak = out->f[i].bytes;
		if (out->f[i].bytes || out->f[i].peak || out->f[i].before)
			out->f[kept++] = out->f[i];
		out->bytes += out->f[i].bytes;
	}
	out->n = out->count = kept;
	if (out->n)
		qsort(out->f, out->n, sizeof(*out->f), q->by_peak ? by_memcg_peak : by_memcg_bytes);
	return 0;
}

struct resolve_ctx {
	struct page_cache_file *f;	/* the files to resolve */
	size_t n;
	int err;
};

static struct page_cache_file *find(const struct resolve_ctx *c, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->f[i].dev == dev && c->f[i].ino == ino)
			return &c->f[i];
	return NULL;
}

static bool wants(uint64_t dev, uint64_t ino, void *ctx)
{
	return find(ctx, dev, ino);
}

static int held(uint64_t dev, uint64_t ino, enum held_how how, pid_t pid, const char *path,
		void *ctx)
{
	struct page_cache_file *f = find(ctx, dev, ino);

	(void)pid;
	if (!f)
		return 0;
	f->mapped |= how == HELD_MAPPED;
	f->open |= how == HELD_OPEN;
	if (!f->path && path && !(f->path = strdup(path)))
		return -ENOMEM;
	return 0;
}

int page_cache_resolve(struct page_cache_files *pc, size_t n)
{
	struct resolve_ctx c = { pc->f, n < pc->n ? n : pc->n, 0 };
	struct held_visitor v = { wants, held, &c };

	if (!c.n)
		return 0;
	for (size_t i = 0; i < c.n; i++)
		c.f[i].resolved = true;
	return held_files_walk(&v);
}

const char *page_cache_file_label(const struct page_cache_file *f, char *buf, size_t len)
{
	char tail[64];
	size_t n, room;

	if (len < 16) {
		snprintf(buf, len, "%s", f->name);
		return buf;
	}
	if (!strcmp(f->name, MEMACCT_BDEV_NAME)) {
		snprintf(buf, len, "block device %llu:%llu (metadata, raw reads)",
			 (unsigned long long)(f->ino >> 20), (unsigned long long)(f->ino & 0xfffff));
		return buf;
	}
	if (f->path) {	/* too long: its end, which names the file */
		n = strlen(f->path);
		if (n < len)
			snprintf(buf, len, "%s", f->path);
		else
			snprintf(buf, len, "...%s", f->path + n - (len - 4));
		return buf;
	}
	snprintf(tail, sizeof(tail), "%sdev %u:%u ino %llu%s", f->name[0] ? " (" : "",
		 major(f->dev), minor(f->dev), (unsigned long long)f->ino, f->name[0] ? ")" : "");
	n = strlen(f->name);
	room = len - 1 > strlen(tail) ? len - 1 - strlen(tail) : 0;
	if (n > room)	/* the name cut, never the device and inode */
		snprintf(buf, len, "%.*s...%s", room > 3 ? (int)(room - 3) : 0, f->name, tail);
	else
		snprintf(buf, len, "%s%s", f->name, tail);
	return buf;
}

json_t *page_cache_json(const struct page_cache_files *pc)
{
	json_t *o = json_object(), *a = json_array();
	char dev[24];

	for (size_t i = 0; i < pc->n && i < PAGE_CACHE_SHOWN; i++) {
		const struct page_cache_file *f = &pc->f[i];
		json_t *j = json_object();

		json_object_set_new(j, "path", f->path ? json_string_sanitized(f->path) : json_null());
		json_object_set_new(j, "path_held_before", json_boolean(f->held_before));
		json_object_set_new(j, "name", json_string_sanitized(f->name));
		snprintf(dev, sizeof(dev), "%u:%u", major(f->dev), minor(f->dev));
		json_object_set_new(j, "dev", json_string(dev));
		json_object_set_new(j, "inode", json_integer((json_int_t)f->ino));
		json_object_set_new(j, "bytes", json_integer((json_int_t)f->bytes));
		json_object_set_new(j, "added_bytes", json_integer((json_int_t)f->added));
		json_object_set_new(j, "removed_bytes", json_integer((json_int_t)f->removed));
		json_object_set_new(j, "peak_bytes", json_integer((json_int_t)f->peak));
		json_object_set_new(j, "cached_before_start", json_boolean(f->before));
		json_object_set_new(j, "mapped", f->resolved ? json_boolean(f->mapped) : json_null());
		json_object_set_new(j, "open", f->resolved ? json_boolean(f->open) : json_null());
		json_array_append_new(a, j);
	}
	json_object_set_new(o, "files", a);
	json_object_set_new(o, "bytes", json_integer((json_int_t)pc->bytes));
	json_object_set_new(o, "files_count", json_integer((json_int_t)pc->count));
	json_object_set_new(o, "untracked_removed_bytes",
			    json_integer((json_int_t)pc->untracked_removed));
	json_object_set_new(o, "unrecorded_added_bytes",
			    json_integer((json_int_t)pc->unrecorded_added));
	return o;
}

static struct page_cache_path *path_of_file(const struct page_cache_paths *pp, uint64_t dev,
					   uint64_t ino)
{
	for (size_t i = 0; i < pp->n; i++)
		if (pp->v[i].dev == dev && pp->v[i].ino == ino)
			return &pp->v[i];
	return NULL;
}

static bool remember_wants(uint64_t dev, uint64_t ino, void *ctx)
{
	return path_of_file(ctx, dev, ino);
}

/* the latest path wins: a file written as x.tmp and renamed to x is x */
static int remember_held(uint64_t dev, uint64_t ino, enum held_how how, pid_t pid,
			 const char *path, void *ctx)
{
	struct page_cache_path *p = path_of_file(ctx, dev, ino);
	char *dup;

	(void)how, (void)pid;
	if (!p || !path || (p->path && !strcmp(p->path, path)))
		return 0;
	dup = strdup(path);
	if (!dup)
		return -ENOMEM;
	free(p->path);
	p->path = dup;
	return 0;
}

int page_cache_remember(struct page_cache_paths *pp, const struct page_cache_files *pc,
			const pid_t *pids, size_t n)
{
	struct held_visitor v = { remember_wants, remember_held, pp };

	for (size_t i = 0; i < pc->n && i < PAGE_CACHE_SHOWN; i++) {
		struct page_cache_path *p = path_of_file(pp, pc->f[i].dev, pc->f[i].ino);

		if (!p) {
			p = array_grow(&pp->v, pp->n, &pp->cap, sizeof(*p));
			if (!p)
				return -ENOMEM;
			*p = (struct page_cache_path){ pc->f[i].dev, pc->f[i].ino, NULL };
			pp->n++;
		}
	}
	return pc->n ? held_files_walk_pids(&v, pids, n) : 0;
}

int page_cache_recall(struct page_cache_files *pc, const struct page_cache_paths *pp)
{
	for (size_t i = 0; i < pc->n; i++) {
		struct page_cache_file *f = &pc->f[i];
		const struct page_cache_path *p;

		if (f->path || !(p = path_of_file(pp, f->dev, f->ino)) || !p->path)
			continue;
		f->path = strdup(p->path);
		if (!f->path)
			return -ENOMEM;
		f->held_before = true;
	}
	return 0;
}

void page_cache_paths_free(struct page_cache_paths *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		free(pp->v[i].path);
	free(pp->v);
	memset(pp, 0, sizeof(*pp));
}

void page_cache_free(struct page_cache_files *pc)
{
	for (size_t i = 0; i < pc->n; i++)
		free(pc->f[i].path);
	free(pc->f);
	memset(pc, 0, sizeof(*pc));
}
