/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * records.bpf.h - the records every concern counts into (include/memacct.h):
 * one per process (procs, keyed by tgid and start time) and one per memory
 * cgroup (cgroups), the exit ring, and the functions that find or make
 * them. The state is bpf/records.bpf.c's; a unit that includes this header
 * after vmlinux.h, the libbpf headers, memacct.h and core_fixes.bpf.h shares
 * it.
 */
#ifndef MEMACCT_RECORDS_BPF_H
#define MEMACCT_RECORDS_BPF_H

#define EEXIST 17
#define E2BIG 7

/* Set by userspace between open and load (user/kernel/bpf_loader.c). */
extern const volatile __u64 filter_cgid;	/* 0: every process; else this memcg and below */
extern const volatile __u64 fallback_cgid;	/* cgroup_or_up(): the record made at load */
extern const volatile __u32 filter_level;	/* level of filter_cgid below the root */
extern const volatile __u64 page_size;		/* bytes */

/* Events that could not be recorded, by enum memacct_drop. */
extern __u64 dropped[MEMACCT_DROP_NR];

struct procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);	/* userspace sizes it (loader_sizes()) */
	__type(key, struct memacct_proc_key);
	__type(value, struct memacct_proc);
};
extern struct procs_map procs SEC(".maps");

struct cgroups_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct memacct_cgroup);
};
extern struct cgroups_map cgroups SEC(".maps");

/* the exit records, a per-process row for run/attach (sched_process_exit) */
struct exits_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
};
extern struct exits_map exits SEC(".maps");

extern const struct memacct_proc zero_proc;
extern const struct memacct_cgroup zero_cgroup;
/* flows that found no record at all (records.bpf.c) */
extern struct memacct_flows lost_flows;
/* moves of flows between records and exits' folds, begun and ended
 * (records.bpf.c) */
extern __u64 flow_moves_begin;
extern __u64 flow_moves_end;
extern __u64 exit_folds_begin;
extern __u64 exit_folds_end;

static __always_inline void drop(int why)
{
	__sync_fetch_and_add(&dropped[why], 1);
}

/* Atomic add, skipped when there is nothing to add. */
static __always_inline void add_nz(__u64 *dst, __u64 v)
{
	if (v)
		__sync_fetch_and_add(dst, v);
}

/* The memory cgroup a task is charged to (task->cgroups->subsys[memory]). */
static __always_inline struct cgroup *task_memcg(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;

	if (task_btf()) {
		cset = task->cgroups;
		css = cset ? cset->subsys[id] : NULL;
		return css ? css->cgroup : NULL;
	}
	cset = BPF_CORE_READ(task, cgroups);
	if (!cset)
		return NULL;
	bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	return css ? BPF_CORE_READ(css, cgroup) : NULL;
}

/* Fills the task's memcg id; false when the filter excludes the task. */
static __always_inline bool memcg_wanted(struct task_struct *task, __u64 *cgid)
{
	struct cgroup *cg = task_memcg(task);
	int level;

	if (!cg)
		return false;
	*cgid = task_btf() ? cg->kn->id : BPF_CORE_READ(cg, kn, id);
	if (!filter_cgid)
		return true;
	level = BPF_CORE_READ(cg, level);
	if (level < (int)filter_level || level > 4096)
		return false;
	return cgroup_ancestor_id(cg, filter_level) == filter_cgid;
}

static __always_inline void proc_key_of(struct task_struct *task,
					struct memacct_proc_key *key)
{
	key->pad = 0;
	if (task_btf()) {
		key->tgid = task->tgid;
		key->start_boottime_ns = task->group_leader->start_boottime;
		return;
	}
	key->tgid = BPF_CORE_READ(task, tgid);
	key->start_boottime_ns = BPF_CORE_READ(task, group_leader, start_boottime);
}

/*
 * Make the record of @task's process, charged to memcg @cgid, under @key
 * (a new process has none yet). NULL when the procs map is full (counted).
 */
static __always_inline struct memacct_proc *proc_new(struct task_struct *task,
						     struct memacct_proc_key *key, __u64 cgid)
{
	struct memacct_proc *p;
	struct task_struct *leader;
	long err;

	err = bpf_map_update_elem(&procs, key, &zero_proc, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		/* -E2BIG full; else (-ENOMEM) an element allocated on use
		 * (BPF_F_NO_PREALLOC) could not be had now: a later event
		 * tries again */
		drop(err == -E2BIG ? MEMACCT_DROP_PROC_MAP_FULL : MEMACCT_DROP_PROC_ALLOC);
		return NULL;
	}
	p = bpf_map_lookup_elem(&procs, key);
	if (!p)
		return NULL;
	p->memcg_id = cgid;
	if (task_btf()) {
		leader = task->group_leader;
		p->ppid = leader->real_parent->tgid;
	} else {
		leader = BPF_CORE_READ(task, group_leader);
		p->ppid = BPF_CORE_READ(leader, real_parent, tgid);
	}
	bpf_probe_read_kernel_str(p->comm, sizeof(p->comm), leader->comm);
	return p;
}

/*
 * Make the record of @task's process under @key (proc_get()'s second half,
 * and sched_process_fork's whole). NULL when the filter does not want it or
 * the map is full (counted).
 */
static __always_inline struct memacct_proc *proc_make(struct task_struct *task,
						      struct memacct_proc_key *key)
{
	__u64 cgid = 0;

	if (!memcg_wanted(task, &cgid))
		return NULL;
	return proc_new(task, key, cgid);
}

/*
 * The record of @task's process; with @create, made on first sight when the
 * filter wants the process. NULL when unwanted or the map is full (counted).
 * Flows go through flows_get(), which never loses them to a full map.
 */
static __always_inline struct memacct_proc *proc_get(struct task_struct *task,
						     bool create)
{
	struct memacct_proc_key key;
	struct memacct_proc *p;

	proc_key_of(task, &key);
	p = bpf_map_lookup_elem(&procs, &key);
	if (p || !create)
		return p;
	return proc_make(task, &key);
}

static __always_inline struct memacct_cgroup *cgroup_get(__u64 cgid)
{
	struct memacct_cgroup *c;
	long err;

	c = bpf_map_lookup_elem(&cgroups, &cgid);
	if (c)
		return c;
	err = bpf_map_update_elem(&cgroups, &cgid, &zero_cgroup, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		drop(MEMACCT_DROP_CGROUP_MAP_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&cgroups, &cgid);
}

/*
 * The record of memcg @cgid, made when missing; when the cgroups map is full (counted in
 * dropped[]), the record of the cgroup every flow of this object is under:
 * the filter cgroup of run/attach, else the memory hierarchy's root, made
 * at load (user/kernel/bpf_loader.h loader_opts.fallback_cgid). The flows then
 * count in that cgroup and above it, never in none. NULL only when that
 * record is gone too.
 */
static __always_inline struct memacct_cgroup *cgroup_or_up(__u64 cgid)
{
	struct memacct_cgroup *c = cgroup_get(cgid);
	__u64 up = fallback_cgid;

	if (c)
		return c;
	return bpf_map_lookup_elem(&cgroups, &up);
}

/*
 * Where @task's flows go: its process's record, made on first sight; when
 * the procs map is full (counted), its memory cgroup's record, where the
 * process's record would have been folded at exit (cgroup_or_up()), and
 * when even that fails, lost_flows. NULL only when the filter does not
 * want the task.
 */
static __always_inline struct memacct_flows *flows_get(struct task_struct *task)
{
	struct memacct_proc_key key;
	struct memacct_cgroup *c;
	struct memacct_proc *p;
	__u64 cgid = 0;

	proc_key_of(task, &key);
	p = bpf_map_lookup_elem(&procs, &key);
	if (p)
		return &p->f;
	if (!memcg_wanted(task, &cgid))
		return NULL;
	p = proc_new(task, &key, cgid);
	if (p)
		return &p->f;
	c = cgroup_or_up(cgid);
	return c ? &c->f : &lost_flows;
}

#define FLOW_WORDS	(sizeof(struct memacct_flows) / sizeof(__u64))
_Static_assert(sizeof(struct memacct_flows) == FLOW_WORDS * sizeof(__u64),
	       "flows_move() adds struct memacct_flows as an array of __u64");

/*
 * Add @f to @to and take it from @from (u64 arithmetic wraps: @from may hold
 * a negative offset, see cgroup_attach_task). Every field of struct
 * memacct_flows is a __u64. Nothing to move (a process moved before it did
 * anything, an empty cgroup removed) is no move: readers are not made to
 * read again for it.
 */
static __always_inline void flows_move(struct memacct_flows *to, struct memacct_flows *from,
				       const struct memacct_flows *f)
{
	__u64 *t = (__u64 *)to, *fr = (__u64 *)from;
	const __u64 *v = (const __u64 *)f;
	__u64 any = 0;

#pragma unroll
	for (int i = 0; i < FLOW_WORDS; i++)
		any |= v[i];
	if (!any)
		return;
	__sync_fetch_and_add(&flow_moves_begin, 1);
#pragma unroll
	for (int i = 0; i < FLOW_WORDS; i++) {
		__u64 x = v[i];

		__sync_fetch_and_add(&t[i], x);
		__sync_fetch_and_add(&fr[i], -x);
	}
	__sync_fetch_and_add(&flow_moves_end, 1);
}

#endif /* MEMACCT_RECORDS_BPF_H */
