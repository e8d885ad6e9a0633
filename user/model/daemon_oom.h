/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * daemon_oom.h - the daemon's OOM post-mortems (oom.h): each OOM kill's
 * record read from the pinned oom_events ring as soon as the daemon's loop
 * polls it (every 100 ms), explained with the processes of its collections
 * and of a walk made then, written as one memacct.oom/v1 line to the OOM
 * log (default /run/memacct/oom.jsonl, read back by `memacct oom`) and to
 * --json-log, and the time of the last kill per cgroup for
 * memacct_oom_last_kill_timestamp_seconds.
 */
#ifndef MEMACCT_DAEMON_OOM_H
#define MEMACCT_DAEMON_OOM_H

#include <stdint.h>
#include <stdio.h>
#include "collect.h"
#include "oom.h"
#include "pin.h"

#define OOM_LOG_DEFAULT		"/run/memacct/oom.jsonl"
#define OOM_LOG_MAX_BYTES	(4 << 20)	/* then renamed to FILE.1, one kept */
#define OOM_SCHEMA		"memacct.oom/v1"
#define DOOM_CGROUPS		1024	/* cgroups with a last-kill time kept */
#define DOOM_FULL_PER_S		10	/* full post-mortems a second, at most */

struct doom_last {
	char *cgroup;			/* malloc'd path below the hierarchy root */
	double time;			/* Unix time of its last kill */
	char cause[16];			/* that kill's post-mortem cause (oom.h); "" none */
};

struct daemon_oom {
	struct pinned *pin;
	long page_size;
	uint64_t unmeasured;		/* metric_fault_mask() of the pins' fault hook */
	uint64_t window_ns;		/* "grew": the last collections (2 intervals) */
	const char *log_path;		/* NULL: no OOM log */
	struct oom_hist hist;
	struct doom_last last[DOOM_CGROUPS];	/* seeded from the OOM log */
	size_t nlast;
	uint64_t last_dropped;		/* cgroups whose last-kill time was dropped: the
					 * oldest past DOOM_CGROUPS, or no memory */
	uint64_t recorded;		/* post-mortems made */
	uint64_t brief;			/* ... of which the kernel's figures only */
	uint64_t second_ns;		/* the storm guard's current second */
	unsigned int full_this_second;
	uint64_t log_errors;		/* lines that could not be written */
	/* each line also to the --json-log (daemon.c log_line()) */
	void (*json_log)(void *ctx, const char *line);
	void *json_log_ctx;
};

/*
 * doom_sample_collection() - a sample of @col's processes (stocks and BPF
 * flows) into the history, at the collection's time: those a kill may
 * come to, as oom_near() tells from the figures @col read (their memcg or
 * one above it at OOM_NEAR_PCT of its limit; a memcg whose figures were
 * not read counts as near), or every process when @host_near
 * (oom_host_near()). A host far from every limit keeps none (416 bytes a
 * process: every process each collection held 56 MiB at 10,000).
 * Samples older than @o->hist.keep_ns (the "grew" window) are freed.
 */
void doom_sample_collection(struct daemon_oom *o, const struct collection *col, bool host_near);

/*
 * doom_seed() - the last-kill times of the kills already in the OOM log
 * (a restarted daemon keeps memacct_oom_last_kill_timestamp_seconds).
 */
void doom_seed(struct daemon_oom *o);

/* doom_on_record() - ring_buffer callback of oom_events; @ctx the daemon_oom. */
int doom_on_record(void *ctx, void *data, size_t len);

void doom_free(struct daemon_oom *o);

/*
 * oom_log_read() - every post-mortem of the OOM log @path (its
 * memacct.oom/v1 lines; others skipped) appended to the JSON array @kills.
 * 0 or read_file()'s negative errno.
 */
int oom_log_read(const char *path, json_t *kills);

/*
 * oom_log_append() - @line (one JSON object) and a newline to the OOM log
 * @path, created 0600 with its directory; renamed to @path.1 first when
 * past OOM_LOG_MAX_BYTES. 0 or negative errno.
 */
int oom_log_append(const char *path, const char *line);

#endif
