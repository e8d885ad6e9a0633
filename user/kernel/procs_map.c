// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* procs_map.c - the procs map read from userspace (procs_map.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "procs_map.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define BATCH_N 1024

/* The per-key walk, for kernels without batch lookups on the map. */
static int each_by_key(int fd, procs_map_fn fn, void *ctx)
{
	struct memacct_proc_key key, next, *prev = NULL;
	struct memacct_proc p;
	int err;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &p))
			continue;	/* deleted meanwhile: an exit */
		err = fn(&key, &p, ctx);
		if (err)
			return err;
	}
	return 0;
}

int procs_map_each(int fd, procs_map_fn fn, void *ctx)
{
	struct memacct_proc_key *keys = malloc(BATCH_N * sizeof(*keys));
	struct memacct_proc *vals = malloc(BATCH_N * sizeof(*vals));
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
			 * key by key; a later failure ends the walk */
			err = first ? each_by_key(fd, fn, ctx) : e;
			break;
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(&keys[i], &vals[i], ctx);
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
