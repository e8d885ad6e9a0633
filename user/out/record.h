/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * record.h - `run --record FILE` and `attach --record FILE`: a timeline of
 * the session as JSON lines (docs/run.md "Recording"), and its reader for
 * `memacct report FILE`.
 *
 * Line 1, the header: {"format":"memacct.record/v1", "version", "command",
 * "argv", "start" (Unix time, s), "start_iso", "page_size", "mem_total_bytes",
 * "cgroup": {path, fs_path, id, version}, "limit_bytes" (null: none),
 * "interval_s" (null: no -i), "params" (null: none)}.
 * Every other line, a snapshot: {"t" (Unix time, s), "kind" ("interval": an -i
 * report run printed; "sample": one without -i, every RECORD_SAMPLE_NS;
 * "mark"; "exit": CMD ended, descendants left; "oom": a kill was seen;
 * "final"), "mark" (kind mark: the phase it opens,
 * null for "end"), and "report": the whole report as `-j` prints it
 * (memacct.report/v1), or "patch": the changes to the last snapshot's
 * report (record_diff()), and on hosts with several NUMA nodes
 * "numa_multi" and "numa_peaks"}. The final report, phases included, is the
 * last line's.
 *
 * The job comes first: each line goes out in one write() (O_APPEND); the
 * first write that fails (ENOSPC, EIO, ...) stops the recording, a part of
 * a line written is cut off again, and record_close() says so. Nothing of
 * the session waits for it.
 */
#ifndef MEMACCT_RECORD_H
#define MEMACCT_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "cgroup.h"
#include "report.h"

#define RECORD_FORMAT	"memacct.record/v1"
/* a line of a recording or of a daemon --json-log, at most (bytes): one
 * collection of 100,000 processes is ~100 MB; /dev/zero is no recording */
#define RECORD_LINE_MAX	(256UL << 20)
/* without -i, a "sample" snapshot this often (a timeline to draw; report
 * prints none, as run printed none) */
#define RECORD_SAMPLE_NS	1000000000ULL
/* run's and attach's --record FILE */
#define OPT_RECORD		0x500
#define RECORD_LONG_OPTION	{ "record", required_argument, NULL, OPT_RECORD }

struct recorder {
	int fd;			/* -1: not recording (none asked, or stopped) */
	const char *path;	/* borrowed */
	json_t *prev;		/* the last snapshot's report (owned) */
	uint64_t lines, bytes;	/* written */
	uint64_t t0_ns;		/* now_ns() at record_open() */
	int err;		/* the write error that stopped it (negative errno) */
	double stopped_s;	/* when, seconds after record_open() */
};

/* The header's facts, from the command that records. */
struct record_info {
	const char *command;		/* "run", "attach" */
	char *const *argv;		/* run's CMD (NULL-terminated), or NULL */
	const struct memcg *cg;
	uint64_t interval_ns;		/* -i; 0: none */
	double params;			/* --params; 0: none */
};

/*
 * record_open() - create (or truncate) @path and write its header. @w->fd
 * is -1 when @path is NULL. 0 or negative errno (the file cannot be
 * created or written: a usage error for the caller, said before CMD runs).
 */
int record_open(struct recorder *w, const char *path, const struct record_info *info);

/*
 * record_snapshot() - one line: @r (borrowed) as a report of @kind, @mark
 * the phase a "mark" opens (NULL: "end"). Nothing once stopped.
 */
void record_snapshot(struct recorder *w, const char *kind, const char *mark,
		     const struct report *r);

/*
 * record_close() - close @w; a recording stopped by a write error is said
 * on stderr (when, why, how many lines are in the file). Returns that
 * error (negative errno) or 0.
 */
int record_close(struct recorder *w);

/*
 * record_diff() - the patch that turns @a into @b (new reference; NULL: no
 * change): objects member by member ("~del": keys gone), arrays of the
 * same length element by element ({"~a": [[index, patch], ...]}), arrays
 * of another length rebuilt from the old elements, rows matched by "pid"
 * and "exited" ({"~r": [{"at": old index, "n": unchanged ones from it},
 * [old index, patch], [-1, value], ...]}), any other change the new
 * value ({"~set": value} where it could read as a patch).
 * record_apply() - @a (its reference taken) with patch @p applied: the new
 * value (new reference).
 */
json_t *record_diff(const json_t *a, const json_t *b);
json_t *record_apply(json_t *a, const json_t *p);

/* One snapshot read back. */
struct record_snap {
	const char *kind;		/* "interval", "sample", "mark", "exit", "oom", "final" */
	const char *mark;		/* kind mark: the phase it opens; NULL: end */
	double t;			/* Unix time, s */
	const json_t *report;		/* the whole report (memacct.report/v1) */
	const json_t *line;		/* the line (numa_multi, numa_peaks) */
};

/* What record_read() found. */
struct record_stats {
	uint64_t lines;			/* snapshots read */
	bool cut;			/* the last line is cut off (memacct killed
					 * while writing it) */
	uint64_t bad_line;		/* the line number that stopped the reading
					 * (not JSON, not a snapshot); 0: none */
	bool final;			/* a "final" snapshot was read */
};

typedef int (*record_cb)(void *ctx, const json_t *header, const struct record_snap *s);

/*
 * record_read() - the recording @f: the header, then @cb for every
 * snapshot in order, each report whole (patches applied). Returns 0 (the
 * file read to its end or to a line it cannot use: @st says which),
 * -EINVAL (the first line is not a header of RECORD_FORMAT), -E2BIG (a line
 * longer than RECORD_LINE_MAX), -ENOMEM, -EIO, or the first nonzero return
 * of @cb.
 */
int record_read(FILE *f, record_cb cb, void *ctx, struct record_stats *st);

/*
 * record_numa() - @r's NUMA samples from a snapshot line (numa_multi, each
 * process's numa_peak); nothing on a one-node host.
 */
void record_numa(struct report *r, const json_t *line);

#endif
