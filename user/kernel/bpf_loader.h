/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* bpf_loader.h - the BPF skeleton's lifecycle: probe, configure, load, attach. */
#ifndef MEMACCT_BPF_LOADER_H
#define MEMACCT_BPF_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include "memacct.h"

struct memacct_bpf;

/*
 * --dma-pins auto|on|off (run, attach, daemon; docs/metrics.md "DMA pins"):
 * the DMA-pin windows, programs on sys_enter/exit of ioctl, setsockopt and
 * io_uring_register, sys_enter_close and workqueue_execute_start/end, that
 * attribute FOLL_PIN pages no mm counter shows. Off, they are not loaded:
 * no sys_enter tracepoint (every syscall of the host tests one bit less),
 * ~170 ms less verification at start, and such pins are reported in the
 * host's dma_pinned_unattributed_bytes. Auto: on when the host has a
 * device whose driver pins (loader_dma_devices()), else off.
 */
enum loader_dma { LOADER_DMA_AUTO, LOADER_DMA_ON, LOADER_DMA_OFF };
extern enum loader_dma loader_dma_pins;	/* set by the command's options */

/* getopt_long code of --dma-pins (past memlimits.h's and table.h's) */
#define OPT_DMA_PINS 0x400
#define DMA_PINS_LONG_OPTION { "dma-pins", required_argument, NULL, OPT_DMA_PINS }

/*
 * loader_dma_parse() - "auto", "on" or "off" into loader_dma_pins. 0, or
 * -EINVAL after printing the error (exit 2).
 */
int loader_dma_parse(const char *arg);

/*
 * loader_dma_devices() - does this host have something whose driver pins
 * user pages for DMA with pin_user_pages() (FOLL_PIN)? An NVIDIA device
 * (/dev/nvidia*), an RDMA uverbs device (/dev/infiniband/uverbs*), a vfio
 * group or device (/dev/vfio/ other than the container node, and
 * /dev/vfio/devices/), or an AF_XDP socket in our network namespace (the
 * "XDP" line of /proc/net/protocols counts them). Writes what was found
 * to @why (may be NULL). io_uring's registered buffers need no window:
 * they are in pinned_vm, kept by sys_exit_io_uring_register either way.
 */
bool loader_dma_devices(char *why, size_t len);

/* loader_dma_windows() - loader_dma_pins resolved (auto: loader_dma_devices()). */
bool loader_dma_windows(void);

struct loader_opts {
	uint64_t filter_cgid;	/* 0: every process */
	uint32_t filter_level;	/* level of filter_cgid below the memcg root */
	/*
	 * audit --watch (user/kernel/pinwatch.c): only the programs that keep each
	 * process's locked_vm/pinned_vm (syscall exits) and exec, exit and
	 * cgroup moves, nothing on the page-fault path; the pin_events ring on
	 * (pin_ring_bytes) and the exits ring sized exit_ring_bytes.
	 */
	bool pin_events;
	uint32_t pin_ring_bytes, exit_ring_bytes;
	/*
	 * The memcg whose record takes the flows of a cgroup that the full
	 * cgroups map has no room for (bpf/records.bpf.h cgroup_or_up()):
	 * filter_cgid, or, without a filter, the memcg root's id. Made at
	 * load; 0 makes none (such flows are then counted lost).
	 */
	uint64_t fallback_cgid;
	/* the task_stocks iterator (iter/task) too: the daemon's pinned side
	 * reads it (user/kernel/pin.c); run, attach and explain do not load it */
	bool task_iter;
	/*
	 * Called after the object is opened and its programs chosen, before
	 * it is loaded (NULL: none): the daemon gives its pinned maps
	 * (bpf_map__reuse_fd()) to programs loaded again. 0 or -errno, which
	 * fails the start.
	 */
	int (*before_load)(struct memacct_bpf *skel, void *ctx);
	/*
	 * Called after the object is loaded, before any program is attached
	 * (NULL: none): a daemon whose pinned .bss had another layout writes
	 * its values into the new one (user/kernel/pin.c). Nothing counts
	 * yet. 0 or -errno, which fails the start. Same @ctx.
	 */
	int (*after_load)(struct memacct_bpf *skel, void *ctx);
	void *before_load_ctx;
};

/*
 * Sizes of the procs and cgroups maps for this host (entries). procs holds
 * every live process: min(kernel.pid_max, kernel.threads-max), no more
 * tasks can exist; its records are allocated on use where the kernel's hash
 * maps take allocation in any context (bpf_mem_alloc, v6.1), so the size
 * costs 16 bytes a bucket until used (before, preallocated and capped at
 * 65,536). cgroups holds every memory cgroup: 65,536, the kernel's own
 * bound on memory cgroup ids (MEM_CGROUP_ID_MAX 65,535, v1 and v2; the
 * records of removed cgroups go at rmdir), preallocated (17 MiB): an
 * allocation on use failed once in 505 new cgroups under make soak, and a
 * cgroup without a record loses its own figures. MEMACCT_PROCS_MAX and
 * MEMACCT_CGROUPS_MAX in the environment set them by hand. A map that still
 * fills loses no flow: bpf/records.bpf.h flows_get() and cgroup_or_up().
 */
struct loader_sizes {
	uint32_t procs, cgroups;
	bool no_prealloc;
};

/* loader_sizes() - the sizes above for this host and kernel (@btf: the
 * kernel's, NULL if unreadable); reads /proc/sys/kernel/{pid_max,
 * threads-max}. */
struct btf;
void loader_sizes(const struct btf *btf, struct loader_sizes *sz);

/*
 * loader_check_env() - root and a kernel with BTF; libbpf's messages
 * routed to -v from here on. Returns 0, or -EPERM / -ENOENT after printing
 * what is missing (exit code EXIT_ENV).
 */
int loader_check_env(void);

/*
 * loader_start() - open the skeleton, set rodata (filter, gfp bits read from
 * the kernel's BTF, NUMA node pfn ranges from /proc/zoneinfo), disable
 * programs whose tracepoint this kernel lacks, load and attach. *@skel is
 * owned by the caller (loader_stop()). Returns 0 or negative errno (printed;
 * -ENOENT with pin_events when no syscall tracepoint exists), with libbpf's
 * log shown under -v.
 */
int loader_start(const struct loader_opts *o, struct memacct_bpf **skel);
void loader_stop(struct memacct_bpf *skel);

struct memcg;
/*
 * loader_oom_seen_seed() - the OOM limit walk's starting counts
 * (bpf/oom.bpf.c memcg_oom_seen) for the memory cgroups of @cg's subtree
 * (NULL or the root: every one of the host) that exist now: each one's OOM
 * events so far, v2's memory.events.local "oom" (mm/memcontrol.c
 * memory_events_local[MEMCG_OOM], what the walk reads). A memcg older than
 * the load was judged by its usage until its first OOM (a child near its
 * own limit named for its parent's: issue 39 finding 6); those made later
 * are seeded by the cgroup_mkdir program. An entry already there is kept.
 * One file read per cgroup. v1 has no local count: nothing is seeded.
 * Returns how many were seeded, or negative errno (@cg gone, or no memory
 * cgroup hierarchy).
 */
int loader_oom_seen_seed(struct memacct_bpf *skel, const struct memcg *cg);

/*
 * loader_stop_detached() - loader_stop() without waiting for the kernel's
 * release of the perf events behind classic tracepoints (tp/syscalls/...):
 * closing the last reference to each waits for RCU grace periods under the
 * kernel's event_mutex (30-80 ms each here, one after another). A helper
 * process (clone(CLONE_VM), no copy of our memory, every signal blocked,
 * named memacct-release) inherits a reference to every fd; every link,
 * program and map is closed here as loader_stop() does, at once (not the
 * last references), and the helper closes every fd but the perf events (the
 * perf-event links' last references: they wait there).
 * The helper waits for EOF on a pipe whose only write end is ours
 * (O_CLOEXEC), so it ends when this process ends, however it ends (exit,
 * SIGKILL), and the kernel then releases the events in the helper, which
 * nobody waits for (its parent is gone: init or a subreaper reaps it). A
 * helper killed itself leaves nothing either: the kernel closes its fds.
 * Falls back to loader_stop() when there is no perf event or the helper
 * cannot start. Call it last: the helper lives as long as we do.
 */
void loader_stop_detached(struct memacct_bpf *skel);

/*
 * struct loader_timing - where loader_start() spent its time (ns), filled
 * when the environment has MEMACCT_PHASES (memacct run prints it; make
 * bench's run_true workload reads it): open (skeleton open, BTF, rodata,
 * program choice), load (maps, relocations, every BPF_PROG_LOAD), of which
 * verify (the kernel's "verification time" of each program, log level
 * BPF_LOG_STATS, summed), attach (links, vmemmap probe, per-CPU learning).
 */
struct loader_timing {
	uint64_t open_ns, load_ns, verify_ns, attach_ns;
	unsigned int programs;		/* loaded */
	char slowest[3][64];		/* "name 12.3" (ms), slowest first */
};
extern struct loader_timing loader_timing;
/* loader_phases() - MEMACCT_PHASES is set in the environment. */
bool loader_phases(void);

/*
 * loader_measure_vmemmap() - the kernel address of the struct page array,
 * page_to_pfn()'s base (vmemmap_base, randomized with CONFIG_RANDOMIZE_MEMORY
 * and unreadable where kallsyms has no data symbols). Faults in 4 anonymous
 * pages of the calling thread while the vmemmap_probe program
 * (tp_btf/mm_page_alloc) records each one's struct page address; the frame
 * number comes from /proc/self/pagemap; base = address - pfn *
 * sizeof(struct page) (bytes, from BTF), and every page must agree. @skel is
 * loaded; the probe is attached only during the call. Returns 0 with *@base
 * set, or negative errno: -ENOENT (probe not loaded), -ENODATA (pagemap hides
 * frame numbers: not CAP_SYS_ADMIN), -ESRCH (no allocation seen), -ERANGE
 * (pages disagree).
 */
int loader_measure_vmemmap(struct memacct_bpf *skel, uint64_t *base);

/* loader_numa_nodes() - number of NUMA nodes with memory (/proc/zoneinfo). */
int loader_numa_nodes(void);


/*
 * The fault-entry hook the CoW / zero-fill classifier runs on (docs/metrics.md
 * "Fault hooks"): the x86 tracepoint exceptions:page_fault_user (with its
 * error code), else the PERF_COUNT_SW_PAGE_FAULTS software event on every CPU
 * (every architecture; no error code), chosen by what the running kernel
 * offers. MEMACCT_FAULT_HOOK=perf|tracepoint (tests, diagnostics) forces one;
 * a forced hook the kernel cannot give is an error, never a quiet fallback.
 */
enum loader_fault_hook {
	LOADER_FAULT_NONE,		/* no classifier on this kernel */
	LOADER_FAULT_TRACEPOINT,
	LOADER_FAULT_PERF,
};
/* the hook of the last loader_start() */
extern enum loader_fault_hook loader_fault_hook;
/* "none", "tracepoint", "perf" */
const char *loader_fault_hook_name(enum loader_fault_hook h);
/*
 * loader_fault_hook_want() - MEMACCT_FAULT_HOOK's value @s (NULL or "" or
 * "auto": 0, *@forced false; "tracepoint" / "perf" / "none": 0, *@forced
 * true and *@h set); -EINVAL for anything else.
 */
int loader_fault_hook_want(const char *s, enum loader_fault_hook *h, bool *forced);
/*
 * loader_perf_attach() - the perf event hook: program @prog_fd on a
 * PERF_COUNT_SW_PAGE_FAULTS event of every online CPU (loader_start() calls
 * it; the daemon too, re-attaching to a pinned program). 0 or negative
 * errno, printed (a refusal names perf_event_paranoid, seccomp, lockdown).
 * loader_perf_links() - its BPF link fds, one per CPU (-1: attached by
 * ioctl, no link: kernels before v5.15): their number.
 * loader_perf_detach() - closes them (loader_stop() does too).
 */
int loader_perf_attach(int prog_fd);
int loader_perf_links(const int **link_fds);
void loader_perf_detach(void);

/* loader_dropped() - the BPF side's drop counters (pages of nothing: counts). */
void loader_dropped(struct memacct_bpf *skel, uint64_t out[MEMACCT_DROP_NR]);

/*
 * loader_runs_skipped() - the runs of @skel's loaded programs the kernel
 * skipped since they were loaded (prog_run_misses() of each).
 */
uint64_t loader_runs_skipped(struct memacct_bpf *skel);

/*
 * prog_run_misses() - the runs of the BPF program @fd that the kernel
 * skipped since it was loaded: bpf_prog_info.recursion_misses (the program
 * was already running on that CPU: kernel/trace/bpf_trace.c
 * __bpf_trace_run(), bpf_prog_inc_misses_counter()). Most are harmless: an
 * allocation made inside the program itself or by an interrupt while it
 * ran (a kernel page, never a user page of a fault), 8-44 per run of 200
 * short-lived children on 6.18. Since 7.x, whose tracepoint programs run
 * preemptible, a run preempted half-way also makes another task's run a
 * miss, and that one may be a fault or a user allocation. 0 when it
 * cannot be read or the kernel has no such field (before 5.12).
 */
uint64_t prog_run_misses(int fd);

/*
 * parse_zoneinfo() - pfn ranges of every populated zone from the text of
 * /proc/zoneinfo ("Node N, zone X" / "spanned" / "start_pfn:"), at most @max.
 * Returns the number of ranges and the number of distinct nodes in @nodes,
 * or -EINVAL.
 */
int parse_zoneinfo(const char *text, struct memacct_node_range *r, int max, int *nodes);
#endif
