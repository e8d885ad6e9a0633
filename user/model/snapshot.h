/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * snapshot.h - the collector's reads of live processes, for every command:
 * a process is one struct proc_row (report.h) wherever it is shown (run,
 * attach, top, explain, audit, the daemon's top processes), each figure
 * set by the filler of its source (fill.h). Here: a row from /proc (the
 * live session's rows, explain, audit), and rows joined with a running
 * daemon's BPF records (explain and audit without a session of their own).
 * The daemon's rows come from the task walk (collect.c), into the same row
 * by metrics_from_task_stock(). All figures bytes, or counts.
 */
#ifndef MEMACCT_SNAPSHOT_H
#define MEMACCT_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "dma_ranges.h"
#include "memacct.h"
#include "report.h"

/*
 * proc_row_read() - live process @pid into @row from /proc: pid, ppid and
 * comm (/proc/PID/stat), its stocks (metrics_from_proc_status(): VmRSS,
 * RssAnon, RssFile, RssShmem, VmHWM, VmLck, VmPin), faults since it started
 * (/proc/PID/stat minflt + majflt; majflt), pinned and the pinned peaks at
 * least now (metrics_pinned_totals()). Other fields of @row (its flows,
 * start_boottime_ns) are left as they are: the caller zeroes @row or has
 * set them from a BPF record. @start_ns non-zero: the start_boottime_ns of
 * the process meant (a BPF key). *@start_ticks (may be NULL): its start
 * from /proc/PID/stat, in clock ticks (a process without a BPF key told
 * apart from a reused PID without reading the file again). 0; -ESRCH gone,
 * or @pid now another process; -EINVAL no address space (a zombie or a
 * kernel thread); another negative errno of a read.
 */
int proc_row_read(pid_t pid, uint64_t start_ns, struct proc_row *row, uint64_t *start_ticks);

/* Called for each row found in a daemon's records, after its row is filled. */
typedef void (*proc_rows_pins_fn)(size_t i, const struct memacct_proc *p,
				  const struct dma_ranges *r, void *ctx);

/*
 * proc_rows_join_pins() - the @n rows at @rows (@stride bytes apart: rows
 * inside a caller's structs), live processes read by proc_row_read(),
 * joined with a running daemon's records at @dir (pin_procs_of(): pid and
 * start time, so a reused PID never matches): for each row found, its
 * flows since the daemon attached (or since fork; metrics_from_bpf_flows()),
 * and its DMA pins net of their mlocked part (dma_pinned_net()), with
 * the estimate flag; pinned again. Page-fault counts are not in a record.
 * Then @fn (may be NULL) with the record and its known DMA ranges.
 * Returns the number of rows found, -ENOENT when nothing is pinned under
 * @dir, -EPROTO pins of another build, -ENOMEM, or another negative errno.
 */
int proc_rows_join_pins(const char *dir, struct proc_row *rows, size_t n, size_t stride,
			proc_rows_pins_fn fn, void *ctx);

#endif
