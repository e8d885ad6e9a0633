// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* records.c - the BPF side's records read from userspace (records.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "records.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define BATCH_N 1024

/* One record of a map walked by map_each(): 0 to go on, else stop with it. */
typedef int (*map_fn)(const void *key, const void *val, void *ctx);

/* The per-key walk, for kernels without batch lookups on the map. */
static int each_by_key(int fd, void *key, void *next, void *val, size_t key_sz, map_fn fn,
		       void *ctx)
{
	void *prev = NULL;
	int err;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_sz);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue;	/* deleted meanwhile: an exit */
		err = fn(key, val, ctx);
		if (err)
			return err;
	}
	return 0;
}

/*
 * @fn for every record of the hash map @fd (keys of @key_sz, values of
 * @val_sz bytes): BPF_MAP_LOOKUP_BATCH of BATCH_N records, or key by key
 * where the kernel refuses the first batch.
 */
static int map_each(int fd, size_t key_sz, size_t val_sz, map_fn fn, void *ctx)
{
	char *keys = malloc(BATCH_N * key_sz), *vals = malloc(BATCH_N * val_sz);
	__u64 in_batch = 0, out_batch = 0;
	bool first = true;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 count = BATCH_N;
		int e;

		e = bpf_map_lookup_batch(fd, first ? NULL : &in_batch, &out_batch, keys, vals,
					 &count, &opts) ? -errno : 0;
		if (e && e != -ENOENT) {
			/* refused at the first batch (EINVAL, ENOTSUPP): read
			 * key by key (in the buffers' first slots); a later
			 * failure ends the walk */
			err = first ? each_by_key(fd, keys, keys + key_sz, vals, key_sz, fn, ctx)
				    : e;
			break;
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(keys + i * key_sz, vals + i * val_sz, ctx);
		if (err || e)	/* -ENOENT: that was the last batch */
			break;
		in_batch = out_batch;
		first = false;
	}
out:
	free(keys);
	free(vals);
	return err;
}

struct procs_each {
	procs_map_fn fn;
	void *ctx;
};

static int proc_each(const void *key, const void *val, void *ctx)
{
	const struct procs_each *pe = ctx;

	return pe->fn(key, val, pe->ctx);
}

int procs_map_each(int fd, procs_map_fn fn, void *ctx)
{
	struct procs_each pe = { fn, ctx };

	return map_each(fd, sizeof(struct memacct_proc_key), sizeof(struct memacct_proc),
			proc_each, &pe);
}

struct page_cache_each {
	page_cache_map_fn fn;
	void *ctx;
};

static int page_cache_one(const void *key, const void *val, void *ctx)
{
	const struct page_cache_each *pe = ctx;

	return pe->fn(key, val, pe->ctx);
}

int page_cache_map_each(int fd, page_cache_map_fn fn, void *ctx)
{
	struct page_cache_each pe = { fn, ctx };

	return map_each(fd, sizeof(struct memacct_page_cache_key),
			sizeof(struct memacct_page_cache_file), page_cache_one, &pe);
}

static int cgroup_each(const void *key, const void *val, void *ctx)
{
	const struct records_reader *rd = ctx;
	uint64_t id;

	memcpy(&id, key, sizeof(id));
	return rd->cgroup(rd->ctx, id, val);
}

/* One read of both maps to @rd's callbacks. */
static int read_once(const struct records_reader *rd, const uint64_t *ids, size_t nids)
{
	struct memacct_cgroup c;
	int err = 0;

	if (!ids)
		err = map_each(rd->cgroups_fd, sizeof(uint64_t), sizeof(c), cgroup_each,
			       (void *)rd);
	for (size_t i = 0; ids && i < nids && !err; i++)
		if (!bpf_map_lookup_elem(rd->cgroups_fd, &ids[i], &c))
			err = rd->cgroup(rd->ctx, ids[i], &c);
	if (!err)
		err = procs_map_each(rd->procs_fd, rd->proc, rd->ctx);
	return err;
}

int records_read(const struct records_reader *rd, const uint64_t *ids, size_t nids,
		 struct pin_counters *counters, bool *torn)
{
	int err;

	*torn = false;
	for (int reads = 1;; reads++) {
		struct pin_counters after;

		if (reads > 1)
			rd->restart(rd->ctx);
		if (rd->counters(rd->ctx, counters) < 0)
			memset(counters, 0, sizeof(*counters));
		err = read_once(rd, ids, nids);
		if (err || rd->counters(rd->ctx, &after) < 0 ||
		    !pin_flows_read_again(counters, &after, reads, torn))
			break;
	}
	return err;
}

int cow_maps_prune(int cow_fd, int procs_fd)
{
	struct memacct_proc_key k, next, *prev = NULL, *gone = NULL;
	struct memacct_proc p;
	size_t n = 0, cap = 0;
	int deleted = 0;

	if (cow_fd < 0 || procs_fd < 0)
		return 0;
	/* collected first, deleted after: a delete during the walk would
	 * restart it at the first key */
	while (!bpf_map_get_next_key(cow_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(procs_fd, &k, &p))
			continue;
		if (n == cap) {
			struct memacct_proc_key *g = realloc(gone, (cap ? 2 * cap : 64) * sizeof(*g));

			if (!g) {
				free(gone);
				return -ENOMEM;
			}
			gone = g;
			cap = cap ? 2 * cap : 64;
		}
		gone[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		deleted += !bpf_map_delete_elem(cow_fd, &gone[i]);
	free(gone);
	return deleted;
}
