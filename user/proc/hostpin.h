/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * hostpin.h - the host's pinned memory from the kernel's own counters:
 * FOLL_PIN page references outstanding now, nr_foll_pin_acquired -
 * nr_foll_pin_released of /proc/vmstat (mm/gup.c try_grab_folio() /
 * gup_put_folio(); since v5.7), per node from
 * /sys/devices/system/node/nodeN/vmstat, and MemTotal (/proc/meminfo,
 * nodeN/meminfo). Errors are negative errno.
 *
 * Also the host's memory budget (docs/metrics.md "Host memory budget"): the
 * /proc/meminfo fields of fs/proc/meminfo.c meminfo_proc_show() and the
 * per-node ones of drivers/base/node.c node_read_meminfo(), the figures
 * derived from them (reclaimable page cache, unowned kernel memory), which
 * nodes have no CPU, and whether the host's GPU shares its RAM (unified
 * memory).
 */
#ifndef MEMACCT_HOSTPIN_H
#define MEMACCT_HOSTPIN_H

#include <stdbool.h>
#include <stdint.h>

#define HOSTPIN_MAX_NODES 64
/* the rule of thumb: pin no more than 10-15% of a host's RAM */
#define HOSTPIN_RULE_LOW_PCT	10
#define HOSTPIN_RULE_HIGH_PCT	15

/*
 * The meminfo fields memacct reads, by name. A node file gives a field as
 * "Node N Name: V kB" (drivers/base/node.c), /proc/meminfo as "Name: V kB"
 * (fs/proc/meminfo.c); HugePages_* are page counts, the rest kB.
 */
enum hm_field {
	HM_MEM_TOTAL, HM_MEM_FREE, HM_MEM_AVAILABLE, HM_ACTIVE, HM_INACTIVE,
	HM_ACTIVE_FILE, HM_INACTIVE_FILE, HM_UNEVICTABLE, HM_MLOCKED, HM_DIRTY,
	HM_WRITEBACK, HM_FILE_PAGES, HM_CACHED, HM_BUFFERS, HM_SHMEM, HM_SWAP_CACHED, HM_SLAB,
	HM_SRECLAIMABLE, HM_KRECLAIMABLE, HM_KERNEL_STACK, HM_PAGE_TABLES,
	HM_SEC_PAGE_TABLES, HM_BOUNCE, HM_WRITEBACK_TMP, HM_VMALLOC_USED,
	HM_PERCPU, HM_ZSWAP, HM_UNACCEPTED, HM_HUGETLB, HM_HP_TOTAL, HM_HP_RSVD,
	HM_HP_SIZE, HM_SWAP_TOTAL, HM_SWAP_FREE, HM_ANON_PAGES, HM_NR
};

/* One meminfo text parsed: v[f] valid when have & (1 << f). v in kB, or pages
 * for HugePages_Total/Rsvd. */
struct hm_fields {
	uint64_t v[HM_NR];
	uint64_t have;
};

/*
 * The budget of the host or of one node, in bytes; each *_known false when
 * the kernel does not give the figure there (JSON null, no metric sample).
 */
struct hostmem {
	bool meminfo;		/* the meminfo file was read */
	uint64_t mem_free;	/* MemFree: NR_FREE_PAGES (mm/page_alloc.c) */
	bool avail_known;	/* MemAvailable: host only (si_mem_available()) */
	uint64_t mem_available;
	uint64_t page_cache;	/* Active(file) + Inactive(file): the file LRU
				 * (mm/vmscan.c), shmem and mlocked pages not in it */
	uint64_t reclaimable;	/* page_cache - Dirty - Writeback, >= 0 */
	uint64_t file_pages;	/* NR_FILE_PAGES: FilePages (node), Cached +
				 * Buffers + SwapCached (host); shmem in */
	uint64_t shmem;		/* Shmem: NR_SHMEM (mm/shmem.c) */
	bool anon_known;	/* AnonPages: host only here (nodeN/meminfo
				 * has it too, unused) */
	uint64_t anon;		/* NR_ANON_MAPPED (mm/rmap.c) */
	uint64_t dirty, writeback;	/* Dirty, Writeback: NR_FILE_DIRTY, NR_WRITEBACK */
	uint64_t unevictable;	/* Unevictable: NR_UNEVICTABLE LRU (mm/mlock.c) */
	uint64_t mlocked;	/* Mlocked: NR_MLOCK, a part of unevictable */
	bool hugetlb_known;
	uint64_t hugetlb;	/* Hugetlb (every size) or HugePages_Total x
				 * Hugepagesize (node: the default size) */
	bool rsvd_known;	/* host only */
	uint64_t hugetlb_reserved;	/* HugePages_Rsvd x Hugepagesize */
	bool pcp_known;		/* /proc/zoneinfo read */
	uint64_t pcp_free;	/* free pages on the per-CPU lists: zoneinfo
				 * pagesets "count:" (mm/page_alloc.c
				 * rmqueue_bulk() takes them out of MemFree) */
	bool unowned_known;	/* host only: Percpu, VmallocUsed and Zswap have
				 * no per-node figure */
	uint64_t unowned;	/* hostmem_unowned() less pcp_free */
};

struct hostpin_node {
	int node;
	bool known;		/* the node's vmstat has the counters */
	uint64_t foll_pinned;	/* bytes */
	uint64_t mem_total;	/* bytes */
	bool cpu_known;		/* nodeN/cpulist read */
	bool cpuless;		/* no CPU: memory only (GH200 HBM in NUMA mode,
				 * CXL); empty nodeN/cpulist */
	struct hostmem mem;
};

struct hostpin {
	bool known;		/* false: kernel without the counters (< 5.7, or
				 * built without them): "unknown", never 0 */
	bool refreshed;		/* per-CPU diffs folded first (stat_refresh) */
	uint64_t foll_pinned;	/* bytes, host-wide */
	/* nr_foll_pin_acquired and nr_foll_pin_released as bytes: cumulative
	 * since boot, so a pin made and released between two reads is in both */
	uint64_t foll_acquired, foll_released;
	uint64_t mem_total;	/* bytes */
	struct hostmem mem;	/* /proc/meminfo */
	bool uma;		/* the GPU allocates from this RAM (hostmem_uma()) */
	char uma_source[160];	/* what said so */
	int nnodes;
	struct hostpin_node nodes[HOSTPIN_MAX_NODES];
};

/*
 * parse_meminfo() - every enum hm_field found in @text (/proc/meminfo or
 * nodeN/meminfo; "Node N " prefixes skipped) into @f. Returns 0, or -ENOENT
 * without MemTotal.
 */
int parse_meminfo(const char *text, struct hm_fields *f);

/*
 * hostmem_from_fields() - the budget of @f into @m, in bytes (@hp_kb: the
 * host's Hugepagesize in kB for node files, which lack it; 0 unknown).
 * @host: /proc/meminfo (MemAvailable, HugePages_Rsvd and the unowned figure
 * exist there only).
 */
void hostmem_from_fields(struct hostmem *m, const struct hm_fields *f, uint64_t hp_kb,
			 bool host);

/*
 * hostmem_unowned() - unowned kernel memory in bytes: MemTotal - MemFree
 * minus every category /proc/meminfo accounts for, each page once: the LRU
 * lists (Active + Inactive + Unevictable: anon, file, shmem, SwapCached,
 * Buffers, Mlocked), Slab (SReclaimable + SUnreclaim), KReclaimable -
 * SReclaimable (NR_KERNEL_MISC_RECLAIMABLE), PageTables, SecPageTables,
 * Percpu (mm/percpu.c pcpu_nr_pages()), VmallocUsed (mm/vmalloc.c
 * vmalloc_nr_pages(); KernelStack is inside it with CONFIG_VMAP_STACK, so
 * KernelStack is subtracted only where it exceeds VmallocUsed), Hugetlb,
 * Bounce, WritebackTmp, Zswap (the compressed pool) and Unaccepted; the
 * caller subtracts the per-CPU free lists (parse_zoneinfo_pcp()). What is
 * left: driver pages from alloc_pages() (GPU, NIC rings), pipe and socket
 * buffers, pages in flight. Returns -ENOENT
 * when a field it needs is absent (then unknown, never 0); clamps at 0.
 */
int hostmem_unowned(const struct hm_fields *f, uint64_t *bytes);

/*
 * parse_zoneinfo_pcp() - free pages on the per-CPU page lists of each node
 * (@per_node[0..@max-1], zeroed first) from /proc/zoneinfo (mm/vmstat.c
 * zoneinfo_show_print(): "count:" of each "pagesets" cpu), in pages; their
 * sum in @total. Returns 0, or -ENOENT when no "Node N, zone" line is found.
 */
int parse_zoneinfo_pcp(const char *text, uint64_t *per_node, int max, uint64_t *total);

/*
 * hostmem_uma() - whether the host's GPU allocates from the host's RAM
 * (unified memory: DGX Spark GB10, Jetson/Tegra), below @root ("" for /):
 * @force ("1"/"on"/"yes" or "0"/"off"/"no", the MEMACCT_UMA environment
 * variable) decides first; else a /proc/driver/nvidia/gpus/X/information
 * "Model:" naming an integrated GPU (GB10, Tegra, Orin, Thor, Xavier); else
 * "nvidia,tegra" in /proc/device-tree/compatible. What decided goes to
 * @src. Returns true or false.
 */
bool hostmem_uma(const char *root, const char *force, char *src, size_t len);

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
 * hostpin_foll_counters() - nr_foll_pin_acquired and nr_foll_pin_released of
 * /proc/vmstat now (mm/gup.c; cumulative since boot), in bytes; no
 * stat_refresh (cheap enough to sample every 250 ms: a figure can lag by
 * the per-CPU thresholds). 0, -ENOENT on a kernel without them, or -errno
 * when /proc/vmstat is unreadable.
 */
int hostpin_foll_counters(uint64_t *acquired, uint64_t *released);

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

#endif
