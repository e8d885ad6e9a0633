/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * hostpin.h - the host's pinned memory from the kernel's own counters:
 * FOLL_PIN page references outstanding now, nr_foll_pin_acquired -
 * nr_foll_pin_released of /proc/vmstat (mm/gup.c try_grab_folio() /
 * gup_put_folio(); since v5.7), per node from
 * /sys/devices/system/node/nodeN/vmstat, and MemTotal (/proc/meminfo,
 * nodeN/meminfo). Errors are negative errno.
 */
#ifndef MEMACCT_HOSTPIN_H
#define MEMACCT_HOSTPIN_H

#include <stdbool.h>
#include <stdint.h>

#define HOSTPIN_MAX_NODES 64
/* the rule of thumb: pin no more than 10-15% of a host's RAM */
#define HOSTPIN_RULE_LOW_PCT	10
#define HOSTPIN_RULE_HIGH_PCT	15

struct hostpin_node {
	int node;
	bool known;		/* the node's vmstat has the counters */
	uint64_t foll_pinned;	/* bytes */
	uint64_t mem_total;	/* bytes */
};

struct hostpin {
	bool known;		/* false: kernel without the counters (< 5.7, or
				 * built without them): "unknown", never 0 */
	bool refreshed;		/* per-CPU diffs folded first (stat_refresh) */
	uint64_t foll_pinned;	/* bytes, host-wide */
	uint64_t mem_total;	/* bytes */
	int nnodes;
	struct hostpin_node nodes[HOSTPIN_MAX_NODES];
};

/*
 * parse_foll_pin() - nr_foll_pin_acquired and nr_foll_pin_released of a
 * vmstat text (/proc/vmstat or nodeN/vmstat), in pages. Returns 0, or
 * -ENOENT when either is absent.
 */
int parse_foll_pin(const char *text, uint64_t *acquired, uint64_t *released);

/*
 * parse_mem_total() - "MemTotal: N kB" of /proc/meminfo or "Node N
 * MemTotal: N kB" of nodeN/meminfo, in bytes. Returns 0 or -ENOENT.
 */
int parse_mem_total(const char *text, uint64_t *bytes);

/*
 * hostpin_read() - the figures now. With @refresh (root), writes
 * /proc/sys/vm/stat_refresh first so the node counters hold the per-CPU
 * diffs (commit 52b6f46bc163, "mm: /proc/sys/vm/stat_refresh to force vmstat
 * update"; runs a work item on every CPU, so not per daemon scrape);
 * without it a figure can lag by up to the per-CPU thresholds (tens of
 * pages per CPU). Returns 0 (h->known false when the kernel lacks the
 * counters) or -errno when /proc/vmstat or /proc/meminfo is unreadable.
 */
int hostpin_read(struct hostpin *h, bool refresh);

struct mbuf;
/*
 * hostpin_metrics() - the memacct_host_* gauges of @h into @b:
 * foll_pinned_bytes (host and {node}), mem_total_bytes (host and {node}),
 * dma_pinned_unattributed_bytes (foll_pinned less @attributed bytes, when
 * @attributed_known) and foll_pin_counters (1/0). A figure the kernel does
 * not give has no sample (unknown, never 0).
 */
void hostpin_metrics(struct mbuf *b, const struct hostpin *h, bool attributed_known,
		     uint64_t attributed);

#endif
