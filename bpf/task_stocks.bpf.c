// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * task_stocks.bpf.c - the daemon's process walk on kernels before 6.7
 * (iter/task; from 6.7 task_walk.bpf.c's open-coded iterator, its own
 * object): each process's stocks (task_stock.bpf.h), the same fields.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "task_stock.bpf.h"

/*
 * iter/task: stocks of every process in one pass (memacct daemon, where the
 * process walk of task_walk.bpf.c cannot run: kernels before 6.7). Emits one
 * struct memacct_task_stock per thread-group leader that has an mm; the
 * iterator visits every thread, kernel threads and zombies have no mm.
 */
SEC("iter/task")
int task_stocks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct memacct_task_stock r = {};
	struct mm_struct *mm;

	if (!task || task->pid != task->tgid)
		return 0;
	mm = task->mm;
	if (!mm)
		return 0;
	task_stock_fill(task, mm, &r);
	bpf_probe_read_kernel(r.comm, sizeof(r.comm), task->comm);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
