// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* metric_table.c - the one table of memacct's metrics (metric_table.h). */
#include "metric_table.h"

#define F(field)	offsetof(struct metrics, field)
/* the __u64 index of a struct memacct_flows field, and its size in __u64 */
#define BPF(field)	(int)(offsetof(struct memacct_flows, field) / sizeof(__u64)), \
			(int)(sizeof(((struct memacct_flows *)0)->field) / sizeof(__u64))
#define NO_BPF		-1, 0

_Static_assert(sizeof(struct memacct_flows) % sizeof(__u64) == 0,
	       "struct memacct_flows is an array of __u64 (metric_table.c BPF())");

const struct metric_def metric_table[M_NR] = {
#define METRIC_DEF(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
		   top_col) \
	[M_##id] = { key, family, help, source, F(field), bpf, flags, total },
	METRIC_ROWS(METRIC_DEF)
#undef METRIC_DEF
};

uint64_t metric_flow_mask(bool bpf)
{
	uint64_t m = 0;

	for (int id = 0; id < M_NR; id++)
		if ((metric_table[id].flags & MF_FLOW) && metric_is_bpf_flow(id) == bpf)
			m |= MBIT(id);
	return m;
}

uint64_t metric_fault_mask(bool no_hook, bool alloc_counted)
{
	uint64_t m = alloc_counted ? 0 : MBIT(M_FAULT_ALLOC);

	for (int id = 0; no_hook && id < M_NR; id++)
		if (metric_table[id].flags & MF_FAULT)
			m |= MBIT(id);
	return m;
}
