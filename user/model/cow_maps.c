// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* cow_maps.c - CoW copies by mapping joined with the parent's mapping (cow_maps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cow_maps.h"
#include "smaps.h"
#include "util.h"

static uint64_t slot_start(const struct memacct_cow_map *m)
{
	return m->start & ~MEMACCT_COW_KIND_MASK;
}

bool cowm_any(const struct memacct_cow_maps *cm)
{
	for (int i = 0; i < MEMACCT_COW_MAPS; i++)
		if (cm->m[i].start && cm->m[i].pages)
			return true;
	return false;
}

/*
 * The catalog's mapping of @pid holding @addr (a miss too), read for a
 * child's copies (@as_parent) or for @pid's own, or NULL.
 */
static const struct cowm_vma *vma_find(const struct cowm_catalog *c, pid_t pid,
				       bool as_parent, uint64_t addr)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].pid == pid && c->v[i].as_parent == as_parent &&
		    addr >= c->v[i].start && addr < c->v[i].end)
			return &c->v[i];
	return NULL;
}

/* The same, a mapping read (not a miss) */
static const struct cowm_vma *vma_held(const struct cowm_catalog *c, pid_t pid,
				       bool as_parent, uint64_t addr)
{
	const struct cowm_vma *v = vma_find(c, pid, as_parent, addr);

	return v && !v->miss ? v : NULL;
}

/* Whether a slot of @cm is in no mapping of parent @pid known to @c. */
static bool unknown_of(const struct cowm_catalog *c, pid_t pid,
		       const struct memacct_cow_maps *cm)
{
	for (int i = 0; i < MEMACCT_COW_MAPS; i++)
		if (cm->m[i].start && !vma_find(c, pid, true, slot_start(&cm->m[i])))
			return true;
	return false;
}

/*
 * @pid's mappings holding a slot of @cm not known yet, from its smaps, as a
 * parent's (@as_parent: read at a child's copies, after the fork, never
 * before: a parent's own copies while it still fills the mapping would
 * give it a part of its resident bytes) or as its own.
 */
static int note_from(struct cowm_catalog *c, pid_t pid, bool as_parent,
		     const struct memacct_cow_maps *cm)
{
	struct smaps s;
	int added = 0, n = read_smaps(pid, &s);

	if (n < 0)
		return n == -ENOMEM ? n : 0;
	for (size_t j = 0; j < s.n; j++) {
		const struct smaps_map *sm = &s.maps[j];
		struct cowm_vma *v;
		bool want = false;

		for (int i = 0; i < MEMACCT_COW_MAPS && !want; i++) {
			uint64_t a = slot_start(&cm->m[i]);

			want = cm->m[i].start && a >= sm->start && a < sm->end;
		}
		if (!want || vma_find(c, pid, as_parent, sm->start))
			continue;
		v = array_grow(&c->v, c->n, &c->cap, sizeof(*c->v));
		if (!v) {
			smaps_free(&s);
			return -ENOMEM;
		}
		*v = (struct cowm_vma){ .pid = pid, .as_parent = as_parent,
					.start = sm->start, .end = sm->end, .rss = sm->rss,
					.shmem = sm->kind == SMAPS_SHMEM };
		if (sm->path && !(v->path = strdup(sm->path))) {
			smaps_free(&s);
			return -ENOMEM;
		}
		c->n++;
		added++;
	}
	smaps_free(&s);
	/* what it does not hold, remembered so that it is not read again */
	for (int i = 0; i < MEMACCT_COW_MAPS; i++) {
		uint64_t a = slot_start(&cm->m[i]);
		struct cowm_vma *v;

		if (!cm->m[i].start || vma_find(c, pid, as_parent, a))
			continue;
		v = array_grow(&c->v, c->n, &c->cap, sizeof(*c->v));
		if (!v)
			return -ENOMEM;
		*v = (struct cowm_vma){ .pid = pid, .as_parent = as_parent, .start = a,
					.end = a + 1, .miss = true };
		c->n++;
	}
	return added;
}

int cowm_catalog_note(struct cowm_catalog *c, pid_t pid, pid_t ppid,
		      const struct memacct_cow_maps *cm)
{
	int a = 0, b = 0;

	if (ppid > 1 && unknown_of(c, ppid, cm))
		a = note_from(c, ppid, true, cm);
	if (a < 0)
		return a;
	/* what the parent does not hold (it exited, or never had it) */
	for (int i = 0; i < MEMACCT_COW_MAPS; i++) {
		uint64_t s = slot_start(&cm->m[i]);

		if (cm->m[i].start && !(ppid > 1 && vma_held(c, ppid, true, s)) &&
		    !vma_find(c, pid, false, s)) {
			b = note_from(c, pid, false, cm);
			break;
		}
	}
	return b < 0 ? b : a + b;
}

void cowm_catalog_free(struct cowm_catalog *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int cmp_bytes_desc(const void *a, const void *b)
{
	const struct cow_mapping *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 :
	       x->start < y->start ? -1 : x->start > y->start;
}

size_t cowm_rows(const struct cowm_catalog *c, pid_t pid, pid_t ppid,
		 const struct memacct_cow_maps *cm, uint64_t page_size,
		 struct cow_mapping *out)
{
	size_t n = 0;

	for (int i = 0; i < MEMACCT_COW_MAPS; i++) {
		const struct memacct_cow_map *m = &cm->m[i];
		const struct cowm_vma *par, *own;
		struct cow_mapping *o;

		if (!m->start || !m->pages)
			continue;
		o = &out[n++];
		*o = (struct cow_mapping){ .start = slot_start(m), .end = m->end,
					   .bytes = m->pages * page_size,
					   .kind = (enum memacct_cow_kind)(m->start &
									   MEMACCT_COW_KIND_MASK) };
		par = ppid > 1 ? vma_held(c, ppid, true, o->start) : NULL;
		own = par ? par : vma_held(c, pid, false, o->start);
		if (own) {
			o->path = own->path;
			o->shmem = own->shmem;
		}
		if (par) {
			o->has_parent = true;
			o->parent_rss = par->rss;
		}
	}
	qsort(out, n, sizeof(*out), cmp_bytes_desc);
	return n;
}

const char *cowm_kind_name(const struct cow_mapping *m)
{
	switch (m->kind) {
	case MEMACCT_COW_KIND_HEAP:
		return "heap";
	case MEMACCT_COW_KIND_STACK:
		return "stack";
	case MEMACCT_COW_KIND_FILE:
		return m->shmem ? "shmem" : "file";
	default:
		return "anon";
	}
}
