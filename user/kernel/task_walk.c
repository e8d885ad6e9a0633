// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * task_walk.c - load and run the process walk of bpf/task_walk.bpf.c and
 * read its array in place (mmap of a BPF_F_MMAPABLE array: no copy, neither
 * through a syscall per record, as the iter/task link's read() makes, nor
 * into a buffer of ours).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "task_walk.h"
#include "task_walk.skel.h"

struct task_walk {
	struct task_walk_bpf *skel;
	struct memacct_task_stock *v;	/* the array, mapped read-write */
	size_t map_len;
	uint32_t cap;
	bool no_direct;		/* the verifier refused rss_direct (before 6.17) */
};

static void walk_unload(struct task_walk *w)
{
	if (w->v)
		munmap(w->v, w->map_len);
	w->v = NULL;
	task_walk_bpf__destroy(w->skel);
	w->skel = NULL;
}

/* Open and load the walk for @cap processes; @direct: rss_direct (task_walk.bpf.c). */
static int walk_load_skel(struct task_walk *w, uint32_t cap, bool direct)
{
	int err;

	w->skel = task_walk_bpf__open();
	if (!w->skel)
		return -errno;
	/* RSS exact as /proc's: every CPU's delta (bpf/core_fixes.bpf.h) */
	w->skel->rodata->rss_cpus = libbpf_num_possible_cpus() > 0 ?
				    libbpf_num_possible_cpus() : 0;
	w->skel->rodata->rss_direct = direct;
	err = bpf_map__set_max_entries(w->skel->maps.stocks, cap);
	if (!err)
		err = bpf_map__set_max_entries(w->skel->maps.hints, cap);
	if (!err)
		err = task_walk_bpf__load(w->skel);
	if (err) {
		task_walk_bpf__destroy(w->skel);
		w->skel = NULL;
	}
	return err;
}

static int walk_load(struct task_walk *w, uint32_t cap)
{
	size_t ps = sysconf(_SC_PAGESIZE);
	void *v;
	int err;

	/* direct loads of the per-CPU RSS deltas where the verifier takes
	 * them (6.17+), remembered for the reloads as the walk grows */
	if (!w->no_direct && walk_load_skel(w, cap, true))
		w->no_direct = true;
	if (w->no_direct && (err = walk_load_skel(w, cap, false)))
		return err;
	/* the kernel rounds array values up to 8 bytes: this record is 104 */
	_Static_assert(sizeof(struct memacct_task_stock) % 8 == 0, "no padding between records");
	w->map_len = ((size_t)cap * sizeof(struct memacct_task_stock) + ps - 1) / ps * ps;
	v = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(w->skel->maps.stocks), 0);
	if (v == MAP_FAILED) {
		err = -errno;
		walk_unload(w);
		return err;
	}
	w->v = v;
	w->cap = cap;
	return 0;
}

static bool kernel_has_walk(void)
{
	static const char *const kfuncs[] = { "bpf_iter_task_new", "bpf_rcu_read_lock" };
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok = btf != NULL;

	for (size_t i = 0; ok && i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		ok = btf__find_by_name_kind(btf, kfuncs[i], BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return ok;
}

int task_walk_open(uint32_t procs, struct task_walk **out)
{
	struct task_walk *w;
	int err;

	*out = NULL;
	if (!kernel_has_walk())
		return -ENOTSUP;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = walk_load(w, procs ? procs : 1);
	if (err) {
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

long task_walk_read(struct task_walk *w, bool own_fields, struct memacct_task_stock **out)
{
	struct memacct_task_walk_args args = { .own_fields = own_fields };

	for (;;) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
		uint64_t want;
		int err;

		if (bpf_prog_test_run_opts(bpf_program__fd(w->skel->progs.task_walk), &opts))
			return -errno;
		if (opts.retval < w->cap) {	/* read in place, room for one more */
			*out = w->v;
			return opts.retval;
		}
		/* no room for one more: a quarter more than now (a
		 * reload is a verifier pass, a few ms, so not at every
		 * collection; the whole array is mapped here, and mapped
		 * pages count in the daemon's RSS: not twice as many) */
		want = (uint64_t)opts.retval + opts.retval / 4 + 1024;
		if (w->cap >= TASK_WALK_MAX_PROCS)
			return -E2BIG;
		if (want > TASK_WALK_MAX_PROCS)
			want = TASK_WALK_MAX_PROCS;
		walk_unload(w);
		err = walk_load(w, (uint32_t)want);
		if (err)
			return err;
	}
}

uint32_t task_walk_capacity(const struct task_walk *w)
{
	return w->cap;
}

void task_walk_close(struct task_walk *w)
{
	if (!w)
		return;
	walk_unload(w);
	free(w);
}
