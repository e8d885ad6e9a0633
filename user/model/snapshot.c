// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* snapshot.c - live processes as struct proc_row from /proc and a daemon's records (snapshot.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fill.h"
#include "pin.h"
#include "proc.h"
#include "snapshot.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

int proc_row_read(pid_t pid, uint64_t start_ns, struct proc_row *row, uint64_t *start_ticks)
{
	struct proc_status st;
	struct proc_stat ps;
	int err;

	err = read_stat(pid, &ps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (start_ns && !proc_start_matches(start_ns, ps.starttime_ticks))
		return -ESRCH;	/* the PID was reused */
	err = read_status(pid, &st);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (ps.state == 'Z' || !st.has_mm)
		return -EINVAL;
	row->pid = pid;
	row->ppid = ps.ppid;
	snprintf(row->comm, sizeof(row->comm), "%s", ps.comm);
	metrics_from_proc_status(&row->m, &st);
	row->m.page_faults = ps.minflt + ps.majflt;
	row->m.major_faults = ps.majflt;
	metrics_pinned_totals(&row->m);
	if (start_ticks)
		*start_ticks = ps.starttime_ticks;
	return 0;
}

struct pins_join {
	struct proc_row *rows;
	size_t stride;
	uint64_t page_size;
	proc_rows_pins_fn fn;
	void *ctx;
};

static struct proc_row *row_at(struct proc_row *rows, size_t stride, size_t i)
{
	return (struct proc_row *)((char *)rows + i * stride);
}

static void join_one(size_t i, const struct memacct_proc *p, const struct dma_ranges *r,
		     void *ctx)
{
	struct pins_join *j = ctx;
	struct proc_row *row = row_at(j->rows, j->stride, i);
	bool est;

	metrics_from_bpf_flows(&row->m, &p->f, j->page_size);
	row->m.dma_pinned = dma_pinned_net(row->pid, p, row->m.mlocked, &est);
	row->m.dma_estimate = est;
	metrics_pinned_totals(&row->m);
	if (j->fn)
		j->fn(i, p, r, j->ctx);
}

int proc_rows_join_pins(const char *dir, struct proc_row *rows, size_t n, size_t stride,
			proc_rows_pins_fn fn, void *ctx)
{
	struct pins_join j = { rows, stride, (uint64_t)sysconf(_SC_PAGESIZE), fn, ctx };
	pid_t *pids = calloc(n ? n : 1, sizeof(*pids));
	int found;

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pids[i] = row_at(rows, stride, i)->pid;
	found = pin_procs_of(dir, pids, n, join_one, &j);
	free(pids);
	return found;
}
