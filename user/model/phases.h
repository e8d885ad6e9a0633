/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * phases.h - `memacct run`'s phase marks (docs/run.md "Phases"): the mark
 * channel CMD inherits (MEMACCT_MARK_FD, include/memacct_mark.h has the
 * protocol and the client), a snapshot at each mark (session_report()'s
 * per-process figures and /proc/PID/smaps of the live processes), and per
 * phase the change of every figure and the mappings that appeared, grew,
 * shrank or vanished.
 */
#ifndef MEMACCT_PHASES_H
#define MEMACCT_PHASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "metric_table.h"
#include "report.h"
#include "smaps.h"

struct session;

/* Phases kept in full; marks past them are answered "error" at once. */
#define PHASES_MAX		1000
/* A mapping's change is listed when its size or RSS moved by this much. */
#define PHASE_MAP_MIN_BYTES	(1ULL << 20)

enum mark_kind { MARK_PHASE, MARK_END, MARK_BAD };

/*
 * mark_parse() - one message of the channel (@n bytes at @buf, not
 * NUL-terminated): "phase NAME\n" or "end\n" (the '\n' may be missing).
 * MARK_PHASE with NAME in @name (@len bytes), MARK_END, or MARK_BAD with
 * the reason in @why (@whylen bytes): empty or too long NAME (over
 * MEMACCT_MARK_NAME_MAX), invalid UTF-8, a control byte, another verb.
 */
enum mark_kind mark_parse(const char *buf, size_t n, char *name, size_t len, char *why,
			  size_t whylen);

/* One process's change within a phase. */
struct phase_proc {
	int pid;
	char comm[64];
	bool appeared, exited;		/* not at the phase's start / exited by its end */
	int64_t d[M_NR];		/* metric_table rows: end - start (bytes, counts) */
	/* bytes: the change of cow_copied + cow_file_copied by the kind of
	 * mapping copied (struct metrics.cow_by_kind; [0] of no kind:
	 * metrics_cow_unknown()); unknown with M_COW_COPIED */
	int64_t cow_by_kind[MEMACCT_COW_KIND_NR];
	uint64_t unknown;		/* MBIT()s unknown at either end: null */
};

enum map_change { MAP_APPEARED, MAP_GREW, MAP_SHRANK, MAP_VANISHED };

struct phase_map {
	int pid;
	enum map_change change;
	uint64_t start, end;		/* the range at the phase's end (vanished: start) */
	enum smaps_kind kind;
	char path[256];			/* "" for anonymous */
	uint64_t size, rss;		/* at the phase's end (vanished: 0) */
	uint64_t locked;		/* its mlocked bytes at the end (smaps Locked) */
	int64_t size_change, rss_change;
	/* appeared or grew: index in phases.done of the later phase where it
	 * vanished or its process exited; -1: still there at the last mark */
	int freed_in;
};

struct phase {
	char name[256];
	double start_s, end_s;		/* seconds since the session started */
	struct phase_proc *procs;	/* owned; processes whose figures moved */
	size_t nprocs;
	struct phase_proc totals;	/* the cgroup's (pid 0) */
	struct phase_map *maps;		/* owned */
	size_t nmaps;
};

/* smaps of one live process at a snapshot */
struct snap_maps {
	int pid;
	uint64_t start_ns;
	bool reused;			/* stocks as at the last snapshot: not
					 * read again, sm taken from it after the diff */
	struct smaps sm;
};

struct phase_snap {
	struct report r;		/* session_report() */
	struct snap_maps *maps;		/* owned */
	size_t nmaps;
};

struct phases {
	int fd;				/* memacct's end; -1: no channel */
	int child_fd;			/* CMD's end until phases_spawned() */
	struct session *s;
	bool open;			/* a phase is open: cur_name, start */
	char cur_name[256];
	struct phase_snap start;
	struct phase *done;		/* closed phases, owned */
	size_t ndone, cap;
	uint64_t refused;		/* marks past PHASES_MAX */
	uint64_t failed;		/* marks answered "error": refused, a bad
					 * line, a failed snapshot */
	uint64_t marks;			/* marks answered ok */
	/* the processes that sent a mark and run memacct's own binary
	 * (`memacct mark`: SCM_CREDENTIALS, /proc/PID/exe): memacct's, not
	 * the job's, left out of the phase rows (the totals, the cgroup's,
	 * keep them); owned */
	int *clients;
	size_t nclients, clients_cap;
	/* CMD's PYTHONPATH before phases_open() added the build tree's
	 * Python client to it (owned; restored by phases_spawned()) */
	char *pythonpath_was;
	bool pythonpath_set;
	uint64_t snap_ns_max, snap_ns_sum;	/* snapshot cost */
	double params;			/* --params: > 0 adds bytes per parameter */
	double expect_bpp;		/* --expect-bytes-per-param: the budget per
					 * parameter (> 0 with params) */
	/* called with each mark's snapshot (run --record): @name the phase
	 * it opens, NULL for "end"; NULL: none */
	void (*on_mark)(void *ctx, const char *name, const struct report *r);
	void *on_mark_ctx;
};

/* Mixed-precision Adam's bytes per parameter: fp16 params and grads (2 + 2),
 * fp32 master weights, m and v (4 + 4 + 4); --expect-bytes-per-param's
 * default with --params. */
#define PHASE_ADAM_MIXED_BPP	16.0
/* Mappings a budget names (phase_budget()). */
#define PHASE_BUDGET_MAPS	3

/*
 * One phase against the budget per parameter (--params N,
 * --expect-bytes-per-param E): the cgroup's anon + shmem (what only a free
 * returns: training state, pinned buffers; page cache is apart), in bytes
 * per parameter.
 */
struct phase_budget {
	double change;			/* this phase's change / N */
	double cumulative;		/* the change of the phases so far / N */
	double excess;			/* cumulative - E; <= 0: within */
	/* of cumulative: pinned (no page twice) = mlocked + pinned_vm + DMA */
	double pinned, mlocked, pinned_vm, dma_pinned;
	double unpinned;		/* cumulative - pinned */
	/* the excess (when > 0), pinned first: a budget of training state
	 * holds no pinned staging buffers */
	double excess_pinned, excess_unpinned;
	double file;			/* page cache of the phases so far: apart */
	/* mappings that appeared or grew in a phase so far and were not freed
	 * by this one's end: most locked first, then this phase's, then most
	 * resident */
	struct {
		int phase;		/* index in phases.done */
		int map;		/* index in its maps */
	} top[PHASE_BUDGET_MAPS];
	int ntop;
};

/*
 * phase_budget() - @b for phase @i (index in @p->done) of a run with
 * --params. 0; -EINVAL without params or past the phases; -ENODATA when
 * anon or shmem is unknown at an end of a phase so far.
 */
int phase_budget(const struct phases *p, size_t i, struct phase_budget *b);
/*
 * phases_open() - the channel: a SOCK_SEQPACKET socketpair, memacct's end
 * non-blocking and close-on-exec, CMD's end in MEMACCT_MARK_FD of our
 * environment (inherited by the vfork'd CMD). 0 or negative errno.
 */
int phases_open(struct phases *p, struct session *s);
/* phases_spawned() - after CMD started: our copy of its end closed, the
 * variable removed from our environment. */
void phases_spawned(struct phases *p);

/*
 * phases_serve() - answer every message waiting on the channel (never
 * blocks): a mark takes a snapshot, closes the open phase and answers
 * "ok\n"; a bad line is answered "error WHY\n". 0 or negative errno
 * (the channel is closed on an error of its own; CMD goes on).
 */
int phases_serve(struct phases *p);

/*
 * phases_finish() - close the open phase at @final (run's final report,
 * borrowed: only read), with no mappings (the processes are gone).
 */
int phases_finish(struct phases *p, const struct report *final);

/* phases_free() - the channel closed, everything freed. */
void phases_free(struct phases *p);

/*
 * parse_params() - --params: "1.5e9", "7000000000", "80B" (billion), "350M",
 * "7K", "1T"; decimal suffixes. 0 and a positive count in @out, or -EINVAL.
 */
int parse_params(const char *s, double *out);
/*
 * parse_bytes_per_param() - --expect-bytes-per-param: a positive number
 * ("16", "18.5") into @out, or -EINVAL.
 */
int parse_bytes_per_param(const char *s, double *out);

/*
 * phases_from_json() - @p (no channel) from a final report's JSON object
 * @o: "phases", "params", "phases_refused" and "marks_failed", as phases_json() wrote them,
 * for the printers; free with phases_free(). 0 or -ENOMEM. In
 * report_load.c.
 */
int phases_from_json(struct phases *p, const json_t *o);

#endif
