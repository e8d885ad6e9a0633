/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pin.h - the daemon's kernel side, pinned under a bpffs directory so that a
 * restarted or upgraded daemon continues the same counters:
 *   DIR/maps/{procs,cgroups,exits,bss}  DIR/links/<program>
 * The links keep the programs attached while no daemon runs; the maps keep
 * the flows. A lock (flock on DIR) keeps a second daemon out.
 */
#ifndef MEMACCT_PIN_H
#define MEMACCT_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "memacct.h"
#include "records.h"

#define PIN_DEFAULT_DIR "/sys/fs/bpf/memacct"
#define PIN_MAX_PROGS 64

struct memacct_bpf;
struct bss_layout;
struct dma_ranges;
struct task_walk;

struct pin_prog {
	char name[32];	/* the program's link in DIR/links, and its label */
	int fd;		/* the program */
	/* 0: one link, DIR/links/NAME; N > 0: one per CPU, DIR/links/NAME_cpuI
	 * for I < N (the perf event fault hook, pin_perf_hook()) */
	int cpu_links;
	/* its link held by this daemon, not pinned: a tracepoint's perf
	 * event link before v5.15 (pin_links()); not in DIR/links */
	bool held;
};

struct pinned {
	char dir[256];
	int lock_fd;
	struct memacct_bpf *skel;	/* NULL when re-attached to pins */
	bool reattached;
	int procs_fd, cgroups_fd, exits_fd, bss_fd, dma_ranges_fd, iter_link_fd;
	int oom_events_fd, oom_history_fd;	/* OOM kill records: ring, last 64 */
	int cow_maps_fd;		/* CoW by mapping per process (-1: pins of a
					 * build before it, not reloaded) */
	int page_cache_fd;		/* page cache by (memcg, file): the same */
	uint32_t procs_max, cgroups_max, bss_size;
	uint32_t page_cache_max;	/* 0 without the map (pins of a build before it) */
	/* the pinned .bss's layout when another build's (bss_layout.h): the
	 * programs are loaded again and its values carried; else NULL */
	struct bss_layout *bss_old;
	struct pin_prog progs[PIN_MAX_PROGS];
	int nprogs;
	struct task_walk *walk;	/* the process walk; NULL: the iter/task link */
	struct memacct_task_stock *iter_stocks;	/* the last iter/task read's records */
	/* the fault hook of the pinned programs (loader_fault_hook_name()):
	 * from the loader, or on re-attach from the pinned links' names */
	char fault_hook[16];
	/* the programs count fault_alloc (they place allocations on NUMA
	 * nodes: their .rodata nr_node_ranges > 0, several nodes); read
	 * from the loaded programs on load and on re-attach alike; true
	 * when it cannot be read (nothing to say it was not counted) */
	bool fault_alloc_counted;
};

/*
 * pin_open() - lock @dir, then re-attach to what is pinned there (checking
 * that key and value sizes match this build), or load, attach and pin.
 * Returns 0, -EBUSY (another daemon holds the lock), -EPROTO (pins from an
 * incompatible build) or another negative errno; the error is printed.
 * A failed first load removes the directories it made (DIR, DIR/maps,
 * DIR/links).
 */
int pin_open(const char *dir, struct pinned *p);
/*
 * pin_check_dir() - whether @dir can hold pins: on a bpffs (DIR itself or its
 * parent; the standard /sys/fs/bpf is mounted when nobody did) and not
 * empty. 0, or -ENOTSUP with the reason printed (a usage error).
 */
int pin_check_dir(const char *dir);
/*
 * pin_links_gone() - how many of the @p->nprogs programs have a link no
 * longer pinned at DIR/links/NAME or DIR/links/NAME_cpuI (removed by hand,
 * or by a tool that is not memacct): a re-attached daemon holds no link fds, so those programs
 * are detached; a fresh one's would be at its restart. 0 when all are.
 */
int pin_links_gone(const struct pinned *p);
/* pin_close() - close fds, keep the pins (the kernel side keeps counting). */
void pin_close(struct pinned *p);
/*
 * pin_remove() - unpin memacct's pins under @dir (detach the kernel side):
 * DIR/maps/NAME and DIR/links/NAME that are BPF objects named as memacct
 * names them; anything else (another tool's pins) is kept with a warning,
 * and so is DIR then. -ENOTSUP (printed) when @dir is not on a bpffs,
 * else 0 or negative errno.
 */
int pin_remove(const char *dir);

/*
 * pin_dir_fault_hooked() - whether the kernel side pinned at @dir has a
 * fault hook (a link of page_fault_user or page_fault_perf under
 * @dir/links); true when the links cannot be listed (nothing to say the
 * figures were not measured).
 */
bool pin_dir_fault_hooked(const char *dir);

/*
 * pin_run_misses() - the runs of the pinned programs the kernel skipped
 * (prog_run_misses() of each). One bpf() call per program.
 */
uint64_t pin_run_misses(const struct pinned *p);

/*
 * pin_counters() - @c from one read of the pinned .bss map (zeroed when it
 * cannot be read). 0 or negative errno (-EPROTO: .bss of another build).
 */
int pin_counters(const struct pinned *p, struct pin_counters *c);

/*
 * pin_map_get() - a new fd of the map a daemon pinned at @dir/maps/@name
 * (the caller closes it); negative errno: -ENOENT without a daemon or in
 * pins of a build before that map.
 */
int pin_map_get(const char *dir, const char *name);

/*
 * pin_cow_maps_of() - read-only: the CoW slots (include/memacct.h) of the
 * live processes @pids (@n of them) from a daemon's pinned cow_maps map
 * (@dir/maps/cow_maps), in one pass over its keys: @fn(i, slots, @ctx) for
 * each @pids[i] whose record also has a live procs record (a reused PID's
 * old one has none). The slots are valid during the call. The number of
 * processes found, or negative errno (-ENOENT: no such pins, -ENOMEM).
 */
int pin_cow_maps_of(const char *dir, const pid_t *pids, size_t n,
		    void (*fn)(size_t i, const struct memacct_cow_maps *cm, void *ctx), void *ctx);

/*
 * pin_procs_of() - read-only lookup in a running daemon's pinned procs map
 * (@dir/maps/procs, keyed by tgid and start_boottime: a reused PID never
 * matches). For each of the @n processes @pids whose record is there, @fn
 * is called with its index and the record (the BPF side's per-process
 * flows since the daemon attached, and its pinned gauges: mm->locked_vm,
 * mm->pinned_vm, DMA pins, in pages) and its known pinned ranges (@dir/
 * maps/dma_ranges and the record's; valid during the call; NULL when they
 * could not be read). Returns the number of processes
 * found, -ENOENT when nothing is pinned under @dir, -EPROTO when the pins
 * are of another build (printed with p_info), or another negative errno.
 */
int pin_procs_of(const char *dir, const pid_t *pids, size_t n,
		 void (*fn)(size_t i, const struct memacct_proc *v, const struct dma_ranges *r,
			    void *ctx), void *ctx);
/*
 * pin_other_kernel_sides() - how many other memacct kernel sides are loaded
 * beside @p's: the kernel's programs (BPF_PROG_GET_NEXT_ID) named as ours
 * but not ours, from another daemon's pins elsewhere or a run, attach,
 * explain --watch or audit --watch session. The median over our programs
 * of their copies, so that one name another tool also uses counts for
 * nothing. 0 when none, negative errno when the walk failed.
 */
int pin_other_kernel_sides(const struct pinned *p);
/*
 * pin_read_stocks() - every process's stocks, one record each: the process
 * walk (task_walk.h, kernels 6.7+) or, without it or when it fails (then for
 * good, with a warning), one read of the iter/task link. *@out is @p's (the
 * walk's mapped array, or the iterator's buffer): valid until the next
 * pin_read_stocks() or pin_close(); the caller may reorder the records.
 * Returns the count or negative errno. PID 1, when the pass skipped it
 * (both do on 6.18 here), is added from /proc. Without @own_fields the walk
 * leaves ppid, start_boottime_ns, hiwater_rss_pages, min_flt and maj_flt at
 * 0 (task_walk_read()).
 */
long pin_read_stocks(struct pinned *p, bool own_fields, struct memacct_task_stock **out);

#endif
