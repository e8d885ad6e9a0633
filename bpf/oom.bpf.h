/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom.bpf.h - what other units need of oom.bpf.c: the kills noted by pid
 * (kernels whose mark_victim passes no task), counted when the victim
 * exits (sched_process_exit, lifecycle.bpf.c); a removed memcg forgotten
 * (cgroup_rmdir).
 */
#ifndef MEMACCT_OOM_BPF_H
#define MEMACCT_OOM_BPF_H

extern const volatile bool oom_by_pid;	/* mark_victim_pid is loaded (oom_victims used) */

struct oom_victims_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
};
extern struct oom_victims_map oom_victims SEC(".maps");

/* memcg id -> its local OOM events last seen (oom.bpf.c oom_limit_walk()) */
struct memcg_oom_seen_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
};
extern struct memcg_oom_seen_map memcg_oom_seen SEC(".maps");

/* cgroup_rmdir's OOM step: the memcg of cgroup @id is gone */
static __always_inline void oom_rmdir(__u64 id)
{
	bpf_map_delete_elem(&memcg_oom_seen, &id);
}

/* sched_process_exit's OOM step: thread @tid of @task exits; a kill noted
 * by pid (mark_victim_pid) is counted now, in its process's flows. */
static __always_inline void oom_exit(struct task_struct *task, __u32 tid)
{
	if (oom_by_pid && bpf_map_delete_elem(&oom_victims, &tid) == 0) {
		struct memacct_flows *f = flows_get(task);	/* old kernels: see mark_victim_pid */

		if (f)
			__sync_fetch_and_add(&f->oom_kills, 1);
	}
}

#endif /* MEMACCT_OOM_BPF_H */
