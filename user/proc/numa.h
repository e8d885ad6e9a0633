/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * numa.h - remote-NUMA stocks: where a process's or a cgroup's resident pages
 * are, per node, and which node is "home" (docs/numa.md).
 *
 * Sources:
 *   per process  /proc/PID/numa_maps (fs/proc/task_mmu.c show_numa_map():
 *                "N<node>=<pages>" per mapping, pages of kernelpagesize_kB,
 *                so hugetlb pages count 2 MiB / 1 GiB each and THP is in
 *                base pages)
 *   per cgroup   memory.numa_stat (v1: pages, "hierarchical_total=";
 *                v2: bytes, per-node LRU lines)
 *   topology     /sys/devices/system/node/has_memory and node*\/cpulist
 *   home node    sched_getaffinity(), /proc/PID/task/TID/stat field 39
 *                (processor: the CPU the thread last ran on), and for a
 *                cgroup cpuset.cpus.effective (v2) / cpuset.effective_cpus (v1)
 * Sizes are bytes. Parsers take the file's text (unit-tested on captured
 * files); errors are negative errno. Nothing here prints.
 */
#ifndef MEMACCT_NUMA_H
#define MEMACCT_NUMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup.h"
#include "smaps.h"

/* Node ids 0..63 (a bit each in a uint64_t): larger ids give -ERANGE. */
#define NUMA_MAX_NODES 64

/* Default verdict threshold: remote share and minimum remote bytes. */
#define NUMA_THRESHOLD_PCT_DEFAULT	10
#define NUMA_THRESHOLD_MIN_BYTES	(16ULL << 20)

enum numa_home_source {
	NUMA_HOME_UNKNOWN,
	NUMA_HOME_AFFINITY,	/* sched affinity allows CPUs of one node only */
	NUMA_HOME_LAST_CPU,	/* node of the CPUs most threads last ran on */
	NUMA_HOME_CPUSET,	/* cgroup: cpuset's effective CPUs on one node */
	NUMA_HOME_MOST_PAGES,	/* cgroup: the node holding most of its pages */
	NUMA_HOME_ONLY_NODE,	/* the host has one node with memory */
};

/*
 * numa_home_source_name() - "unknown", "affinity", "last_cpu", "cpuset",
 * "most_pages", "only_node"
 */
const char *numa_home_source_name(enum numa_home_source s);

/* One mapping of /proc/PID/numa_maps. */
struct numa_map {
	uint64_t start;
	uint64_t page_size;		/* kernelpagesize_kB, in bytes; 0 from smaps */
	uint64_t bytes;			/* resident bytes over every node */
	uint64_t node_bytes[NUMA_MAX_NODES];
	char *path;			/* file= decoded, "[heap]", "[stack]", or NULL */
	bool huge;			/* hugetlb mapping */
};

struct numa_maps {
	struct numa_map *maps;		/* only when parsed with keep_maps */
	size_t n, cap;
	uint64_t bytes;			/* sums over every mapping */
	uint64_t node_bytes[NUMA_MAX_NODES];
	uint64_t nodes;			/* bit per node seen with pages */
};

/*
 * parse_numa_maps() - sum the N<node>=<pages> of every line of a numa_maps
 * text into @nm (zeroed first; numa_maps_free()). With @keep_maps each
 * mapping is kept too. Policies with spaces ("weighted interleave:0-1",
 * "prefer (many):0-1") and unknown keys are skipped; file names are
 * decoded (\ooo). Returns the number of lines (mappings), -EINVAL on a line
 * without an address or a bad number, -ERANGE for a node >= NUMA_MAX_NODES,
 * -ENOMEM.
 */
int parse_numa_maps(const char *text, struct numa_maps *nm, bool keep_maps);
/* read_numa_maps() - the same on /proc/PID/numa_maps: -ENOENT/-ESRCH when
 * the process is gone, -EACCES/-EPERM without ptrace access. */
int read_numa_maps(pid_t pid, struct numa_maps *nm, bool keep_maps);
void numa_maps_free(struct numa_maps *nm);

/*
 * parse_cpulist() - a kernel list ("0-3,8,10-11\n", "" for none) into
 * @set[0..@max-1]. Returns how many entries were set, -EINVAL on a bad
 * list, -ERANGE for an entry >= @max.
 */
int parse_cpulist(const char *text, bool *set, int max);

/* Nodes and CPUs of the host. */
struct numa_topo {
	int nnodes;			/* nodes with memory */
	uint64_t mem_nodes;		/* bit per node with memory */
	int ncpus;			/* entries of cpu_node */
	int *cpu_node;			/* CPU -> node, -1 when no node lists it */
};

/*
 * numa_topo_read() - @t from /sys/devices/system/node (has_memory, then
 * node<N>/cpulist). A kernel without NUMA (no such directory) is one node 0
 * holding every CPU. numa_topo_read_at() reads another directory (tests).
 * Returns 0 or -errno; free with numa_topo_free().
 */
int numa_topo_read(struct numa_topo *t);
int numa_topo_read_at(const char *dir, struct numa_topo *t);
void numa_topo_free(struct numa_topo *t);
/* numa_cpu_node() - node of @cpu, -1 if unknown */
int numa_cpu_node(const struct numa_topo *t, int cpu);

/*
 * Where the pages of a process or cgroup are and which node is home.
 * remote = bytes - node_bytes[home] (all of bytes when home is unknown is
 * never claimed: remote stays 0 then).
 */
struct numa_usage {
	uint64_t bytes;
	uint64_t node_bytes[NUMA_MAX_NODES];
	int home;			/* -1: unknown */
	enum numa_home_source source;
	uint64_t remote;
};

/* numa_usage_finish() - remote from node_bytes, bytes and home. */
void numa_usage_finish(struct numa_usage *u);

/*
 * numa_home_choose() - the home node of a process, on given inputs:
 * @allowed[0..@nallowed-1] its affinity mask; @last_cpu[0..@nthreads-1] the
 * CPU each thread last ran on, the thread group leader first. When every
 * allowed CPU with a known node is on one node: that node (affinity). Else
 * the node most threads last ran on (last_cpu); a tie goes to the leader's
 * node, else the lowest node. Returns the node or -ENOENT.
 */
int numa_home_choose(const struct numa_topo *t, const bool *allowed, int nallowed,
		     const int *last_cpu, int nthreads, enum numa_home_source *src);

/*
 * parse_stat_processor() - field 39 (processor) of a /proc/PID/stat or
 * /proc/PID/task/TID/stat text. Returns the CPU or -EINVAL.
 */
int parse_stat_processor(const char *text);

/*
 * numa_proc_home() - numa_home_choose() for a live process: its leader's
 * sched_getaffinity() and each thread's last CPU. Node or negative errno
 * (-ESRCH when it is gone).
 */
int numa_proc_home(const struct numa_topo *t, pid_t pid, enum numa_home_source *src);

/*
 * numa_proc_usage() - @u for a live process: numa_maps sums and its home
 * node. With @nm not NULL the parsed numa_maps (mappings kept) is left
 * there for the caller (numa_maps_free()). 0 or negative errno as
 * read_numa_maps().
 */
int numa_proc_usage(const struct numa_topo *t, pid_t pid, struct numa_usage *u,
		    struct numa_maps *nm);

/*
 * numa_smaps_usage() - numa_proc_usage() on a host with one node with
 * memory (t->nnodes == 1), without reading numa_maps: the kernel walks every
 * page table again to write numa_maps, as long as smaps itself on a process
 * with many mappings. Every resident byte is on that node: per mapping of
 * @s (the process's parsed /proc/PID/smaps) Rss + Shared_Hugetlb +
 * Private_Hugetlb (smaps' Rss leaves hugetlb pages out); home is that node
 * (only_node), remote 0. @nm gets the mappings with resident bytes (paths
 * copied; numa_maps_free()). Returns 0, -EINVAL (not one node), -ENOMEM.
 */
int numa_smaps_usage(const struct numa_topo *t, const struct smaps *s,
		     struct numa_usage *u, struct numa_maps *nm);

/*
 * parse_numa_stat() - per-node resident bytes of a cgroup and its
 * descendants from a memory.numa_stat text into @node_bytes (zeroed first).
 * v1 (mm/memcontrol-v1.c memcg_numa_stat_show(), pages of @page_size):
 * "hierarchical_total=" (pages on the LRU lists), else "total=". v2
 * (mm/memcontrol.c memory_numa_stat_show(), bytes): anon + file (as
 * memory.stat's), else the LRU lines active_anon + inactive_anon +
 * active_file + inactive_file + unevictable. Returns a bitmask of the nodes
 * listed (0 when nothing usable), -EINVAL, -ERANGE.
 */
int64_t parse_numa_stat(const char *text, int version, uint64_t page_size,
			uint64_t node_bytes[NUMA_MAX_NODES]);

/*
 * numa_cgroup_home() - home node of a cgroup: every CPU of its effective
 * cpuset (@cpus_text, a cpulist, or NULL) on one node → that node (cpuset);
 * else the node with most bytes in @u (most_pages, ties to the lower node).
 * Sets u->home, u->source and finishes @u. Returns the node or -ENOENT.
 */
int numa_cgroup_home(const struct numa_topo *t, const char *cpus_text, struct numa_usage *u);

/*
 * memcg_numa_usage() - @u for a live cgroup: memory.numa_stat and, where a
 * cpuset is found (v2: cpuset.cpus.effective in the cgroup; v1: the cpuset
 * hierarchy's directory of the same path, cpuset.effective_cpus), its home.
 * 0 or negative errno (-ENOENT: no numa_stat, e.g. a kernel without NUMA).
 */
int memcg_numa_usage(const struct numa_topo *t, const struct memcg *cg, struct numa_usage *u);

/* Enough for a verdict: taken from a numa_usage. */
struct numa_brief {
	uint64_t bytes, remote;
	int home;			/* -1: none */
	enum numa_home_source source;
	uint64_t remote_nodes;		/* bit per non-home node holding pages */
};
void numa_brief_of(const struct numa_usage *u, struct numa_brief *b);

/* numa_over_threshold() - remote >= @pct % of bytes and >= @min_bytes. */
bool numa_over_threshold(const struct numa_brief *b, unsigned int pct, uint64_t min_bytes);

/* The verdict threshold in percent, explain --numa-threshold (default 10). */
extern unsigned int numa_threshold_pct;

#endif
