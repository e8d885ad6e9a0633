/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * deadline.h: "hold for S seconds" in the explain_* workloads, on the
 * monotonic clock to the millisecond.  time(NULL) + S held anywhere
 * between S - 1 and S seconds: a 1 s hold could end a few milliseconds
 * after the workload was ready, before memacct's 250 ms memory.stat
 * sampler saw the ready state (CI: a page-cache peak caught mid-writeback).
 */
#ifndef MEMACCT_DEADLINE_H
#define MEMACCT_DEADLINE_H

#include <time.h>

/* CLOCK_MONOTONIC in ms */
static inline long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* the deadline @seconds from now, for past_deadline() */
static inline long long deadline_in(long seconds)
{
	return mono_ms() + seconds * 1000LL;
}

static inline int past_deadline(long long deadline)
{
	return mono_ms() >= deadline;
}

#endif /* MEMACCT_DEADLINE_H */
