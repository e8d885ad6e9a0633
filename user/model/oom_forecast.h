/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom_forecast.h - an OOM kill seen coming (issue 44): from a limited
 * cgroup's memory.stat sampled once a second, the bytes the kernel cannot
 * reclaim (anon, shmem, unreclaimable kernel memory), how fast they grow
 * (a robust slope over the last 30 s), and the time until they reach the
 * limit, naming the class that grows most. Page cache never counts: the
 * kernel drops it before it kills. docs/metrics.md "OOM forecast".
 */
#ifndef MEMACCT_OOM_FORECAST_H
#define MEMACCT_OOM_FORECAST_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "cgroup.h"

enum fc_class {
	FC_ANON,	/* memory.stat anon (v1 rss): no swap assumed */
	FC_SHMEM,	/* shmem: tmpfs, /dev/shm, shared anonymous */
	FC_KERNEL,	/* v2: slab_unreclaimable, kernel_stack, pagetables,
			 * percpu, vmalloc, sock (v1: not split, 0) */
	FC_MLOCKED,	/* unevictable: mlocked pages, already in anon or
			 * shmem; named when it grows with them */
	FC_COW,		/* anon pages copied by CoW faults (memacct's
			 * cow_copied_bytes, a flow: the bytes copied), within
			 * anon; named when the copies make half its growth */
	FC_PINNED,	/* pinned_vm and DMA-pinned pages (memacct's
			 * pinned_vm_bytes + dma_pinned_bytes), within anon or
			 * shmem; named as mlocked */
	FC_CLASSES,
};

#define FC_SAMPLES	60		/* one a second: the window */
#define FC_MIN_SPAN_NS	20000000000ULL	/* no forecast from less than 20 s */
#define FC_PEAK_MINUTES	10		/* the peaks remembered, one a minute */
#define FC_WARN_S	60		/* run/attach --oom-warn default */

struct fc_sample {
	uint64_t t_ns;			/* CLOCK_MONOTONIC */
	uint64_t bytes[FC_CLASSES];
};

/* Zeroed is empty. */
struct oom_forecast {
	struct fc_sample s[FC_SAMPLES];	/* a ring, s[next] the oldest when full */
	unsigned int n, next;
	/* the highest unreclaimable total of each of the last minutes that
	 * left the window: a shape that returns to a peak it reached before
	 * (epochs of a data loader) is not growing */
	uint64_t minute_peak[FC_PEAK_MINUTES];
	uint64_t minute_start_ns;
	unsigned int minute;
};

struct fc_estimate {
	uint64_t limit;			/* bytes */
	uint64_t unreclaimable;		/* anon + shmem + kernel now, bytes: the
					 * fitted line's level at the last sample */
	uint64_t headroom;		/* limit - unreclaimable, 0 past it */
	double slope;			/* bytes/s of the unreclaimable total */
	double eta_s;			/* headroom / slope, seconds */
	enum fc_class grows;		/* the class that grows most */
	double grows_slope;		/* its bytes/s */
};

/*
 * fc_add() - one sample of @st (a limited cgroup's memory.stat) taken at
 * @t_ns into @f, with the cgroup's bytes copied by CoW so far (@cow_bytes,
 * memacct's BPF flows) and pinned now (@pinned_bytes: pinned_vm + DMA
 * pins, memacct's records), which name the growth within anon. Samples
 * closer than 0.5 s to the last are ignored.
 */
void fc_add(struct oom_forecast *f, uint64_t t_ns, const struct memcg_stat *st,
	    uint64_t cow_bytes, uint64_t pinned_bytes);

struct hostmem;
/*
 * fc_host_stat() - the host's memory (@m: /proc/meminfo, hostpin.h) as
 * fc_add() takes a limited cgroup's, against its MemTotal @mem_total
 * (bytes): anon AnonPages, shmem Shmem, unevictable Unevictable, and as
 * kernel all that MemAvailable leaves out besides them (MemTotal -
 * MemAvailable - AnonPages - Shmem: slab that cannot be reclaimed, page
 * tables, stacks, driver memory, the watermark reserves), so that the
 * forecast's total is MemTotal - MemAvailable and its headroom
 * MemAvailable. Swap is not counted as room. 0, or -ENODATA without
 * MemAvailable or AnonPages.
 */
int fc_host_stat(const struct hostmem *m, uint64_t mem_total, struct memcg_stat *st);

/*
 * fc_estimate() - the time until the unreclaimable bytes reach @limit
 * (bytes) at their present growth, into @e. The slope is the Theil-Sen
 * median of the pairwise slopes of the newer half of the window (a freed
 * buffer or a sawtooth moves it little). Growth counts only when the
 * newer half's peak and the level now (the median of the last 3 samples:
 * a kill or a free ends the forecast, one dip does not) pass every peak of
 * the older half and of the last FC_PEAK_MINUTES minutes by more than 1%
 * of the limit (or 1 MiB): a level
 * that only comes back (epochs) is calm. A first rise cannot be told from a
 * leak: a shape whose period is longer than half the window (30 s) is calm
 * from its second period on.
 * Returns 0 (e filled); -EAGAIN while the window spans less than
 * FC_MIN_SPAN_NS; -ENODATA when not growing.
 */
int fc_estimate(const struct oom_forecast *f, uint64_t limit, struct fc_estimate *e);

/* fc_class_name() - "anon", "shmem", "kernel", "mlocked", "cow", "pinned" */
const char *fc_class_name(enum fc_class c);

/* A forecast that crossed the warning threshold (run, attach). */
struct oom_warning {
	double t_s;			/* seconds since the session began */
	double time;			/* Unix time, s (as an OOM kill's) */
	struct fc_estimate e;
	char cgroup[PATH_MAX];		/* the limited cgroup, relative; "/" host */
	bool host_wide;			/* the host's MemTotal (no limit binds) */
	int top_pid;			/* the process whose class grew most, 0 none */
	char top_comm[17];
	uint64_t top_bytes;		/* its bytes of that class now */
};

struct oom_hist;
/*
 * fc_top_process() - into @w's top_*: the process of @h's newest sample
 * whose bytes of @w->e.grows grew most since @h's oldest sample (the
 * largest when it is the only one); none (top_pid 0) for kernel memory,
 * without samples, or when no process grew (a tmpfs file written, never
 * mapped): oom.h oom_top_grower(). Sizes from /proc/PID/status
 * (RssAnon, RssShmem, VmLck).
 */
void fc_top_process(const struct oom_hist *h, struct oom_warning *w);

/* oom_warning_json() - @w as an "oom_warnings" item (new reference). */
json_t *oom_warning_json(const struct oom_warning *w);

#endif
