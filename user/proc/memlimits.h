/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * memlimits.h - memory limits of a cgroup for run/attach (--memory-max,
 * --memory-high, --memory-swap-max, --force): which file holds each limit
 * on cgroup v1 and v2, a state file written before anything is changed
 * (STATE_DIR/limits-<cgroup id>.state) so that the previous values are
 * restored at the end, on SIGINT/SIGTERM, or by the next memacct start when
 * the owner died (SIGKILL, crash). See docs/audit.md.
 */
#ifndef MEMACCT_LIMITS_H
#define MEMACCT_LIMITS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup.h"

#define LIMITS_STATE_DIR	"/run/memacct"

enum limit_kind { LIMIT_MAX, LIMIT_HIGH, LIMIT_SWAP_MAX, LIMIT_NR };

/* getopt_long codes of the options, past any character option */
enum {
	OPT_MEMORY_MAX = 0x200,
	OPT_MEMORY_HIGH,
	OPT_MEMORY_SWAP_MAX,
	OPT_FORCE,
};

#define LIMITS_LONG_OPTIONS \
	{ "memory-max", required_argument, NULL, OPT_MEMORY_MAX }, \
	{ "memory-high", required_argument, NULL, OPT_MEMORY_HIGH }, \
	{ "memory-swap-max", required_argument, NULL, OPT_MEMORY_SWAP_MAX }, \
	{ "force", no_argument, NULL, OPT_FORCE }

struct limits_req {
	bool set[LIMIT_NR];
	uint64_t val[LIMIT_NR];	/* bytes */
	bool force;
};

/* limits_any() - true when at least one limit was asked for. */
bool limits_any(const struct limits_req *req);

/*
 * limits_getopt() - handle one of the OPT_* codes for @req; prints the
 * error (naming the bad token) and returns -EINVAL, or 0.
 */
int limits_getopt(int c, const char *arg, struct limits_req *req);

/*
 * limit_file() - the file of @k for cgroup @version: v2 memory.max,
 * memory.high, memory.swap.max; v1 memory.limit_in_bytes,
 * memory.soft_limit_in_bytes, memory.memsw.limit_in_bytes (memory + swap).
 */
const char *limit_file(int version, enum limit_kind k);

/*
 * parse_limit_value() - a limit file's content: "max" (v2) or a number
 * (v1 unlimited is PAGE_COUNTER_MAX pages, >= 2^62). @unlimited set for
 * both spellings. 0, -EINVAL.
 */
int parse_limit_value(const char *text, uint64_t *bytes, bool *unlimited);

/*
 * memcg_limit_read() - @cg's own limit of kind @k (limit_file()) in *@bytes.
 * 0; -ERANGE when unlimited ("max", or v1's PAGE_COUNTER_MAX); -ENOENT when
 * the kernel has no such file; read_file()'s errors.
 */
int memcg_limit_read(const struct memcg *cg, enum limit_kind k, uint64_t *bytes);

/*
 * memcg_smallest_limit() - the cgroup of @cg and its ancestors below the
 * root whose own memory limit (memcg_limit_read() LIMIT_MAX: v2
 * memory.max, v1 memory.limit_in_bytes) is the smallest, the nearest on a
 * tie, into @out (not opened) and its limit in *@bytes: the limit the OOM
 * killer would act for when @cg's processes grow (v1's memory.stat
 * hierarchical_memory_limit is that minimum; v2 has no such file). A
 * larger limit above that more cgroups share can bind first: not told.
 * 0; -ENOENT when none is limited; memcg_parent()'s errors when none was
 * found below the cgroup it could not read.
 */
int memcg_smallest_limit(const struct memcg *cg, struct memcg *out, uint64_t *bytes);

/*
 * A cgroup's own limits and memory pressure now, for the daemon's series
 * (docs/daemon.md "Limits, peak and pressure"). A has_ flag false: the
 * figure is absent (unlimited, no such file on this kernel or hierarchy,
 * the cgroup removed meanwhile), never 0.
 */
struct memcg_bounds {
	uint64_t max;		/* bytes: v2 memory.max, v1 memory.limit_in_bytes */
	uint64_t high;		/* bytes: v2 memory.high (v1 has none) */
	uint64_t psi_some_us;	/* v2 memory.pressure "some" total=: microseconds
				 * in which some task of the cgroup stalled on memory */
	uint64_t psi_full_us;	/* "full" total=: all non-idle tasks stalled */
	bool has_max, has_high, has_psi;
};

/*
 * memcg_read_bounds() - @b from @cg's files: memcg_limit_read() of
 * LIMIT_MAX, of LIMIT_HIGH on v2 (v1's LIMIT_HIGH file is the soft limit,
 * another thing), memcg_read_pressure(). 0, or the first error that is
 * neither absence (-ENOENT) nor "unlimited" (-ERANGE); the figures it
 * concerns are left absent either way.
 */
int memcg_read_bounds(const struct memcg *cg, struct memcg_bounds *b);

/* The state file: who changed which files of which cgroup, and the old values. */
#define LIMITS_STATE_MAX_FILES 4
struct limits_state {
	pid_t owner;
	uint64_t owner_start;		/* /proc/PID/stat starttime (ticks) */
	uint64_t id;			/* cgroup id (inode) */
	int version;
	char path[PATH_MAX];		/* absolute cgroupfs directory */
	int nfiles;
	struct {
		char file[64];		/* e.g. memory.limit_in_bytes */
		char value[32];		/* as read, e.g. "max", "9223372036854771712" */
	} saved[LIMITS_STATE_MAX_FILES];
};

/* format_limits_state() / parse_limits_state(): the text form (tested). */
int format_limits_state(const struct limits_state *st, char *buf, size_t len);
int parse_limits_state(const char *text, struct limits_state *st);

/*
 * limits_apply() - check @req against the cgroup's usage (refusing a limit
 * below it without --force), save the old values to the state file when
 * @save_state, then write the limits. Prints what it does and any error;
 * returns 0 or a negative errno: -EINVAL a limit refused (the root cgroup,
 * below the usage without --force, a v1 swap limit without a memory
 * limit), -EBUSY another live memacct manages them, -EOPNOTSUPP no such
 * limit file here, -EIO reading or writing a cgroup or state file failed
 * (exit_code_of(), commands.h, gives the exit code).
 */
int limits_apply(const struct memcg *cg, const struct limits_req *req, bool save_state);

/*
 * limits_restore() - write back the values of @cg's state file (written by
 * this process) and remove it. Prints what it restores. 0 or -errno.
 */
int limits_restore(const struct memcg *cg);

/*
 * limits_restore_stale() - restore and remove every state file whose owner
 * is no longer running (killed with SIGKILL, crashed). Returns how many.
 */
int limits_restore_stale(void);


#endif
