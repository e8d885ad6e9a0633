/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * output_om.h - families of `memacct daemon`'s /metrics that describe the
 * daemon and the cgroups rather than count memory: memacct_build_info,
 * memacct_cgroup_info (the identity labels of a cgroup, once) and the
 * daemon's own process metrics under Prometheus' standard names
 * (process_cpu_seconds_total, process_resident_memory_bytes, ...), written
 * through metrics.h in either text format.
 */
#ifndef MEMACCT_OUTPUT_OM_H
#define MEMACCT_OUTPUT_OM_H

#include <stdint.h>
#include "collect.h"
#include "daemon_oom.h"
#include "hostpin.h"
#include "metrics.h"
#include "proc.h"

/* The daemon's own process, as read by om_self_read(). */
struct om_self {
	struct proc_stat st;	/* /proc/self/stat */
	long clk_tck;		/* sysconf(_SC_CLK_TCK) */
	long page_size;
	uint64_t btime_s;	/* /proc/stat btime: boot, seconds since the epoch */
	long open_fds;		/* open fds (/proc/self/fd), -1 unknown */
	uint64_t max_fds;	/* RLIMIT_NOFILE soft limit, 0 unknown */
};

/*
 * om_self_read() - fill @s from /proc/self/stat, /proc/stat (btime, read at
 * the first call only), /proc/self/fd (its st_size from v6.2, else its
 * entries) and getrlimit(). 0 or negative errno (/proc/self/stat unreadable).
 */
int om_self_read(struct om_self *s);
/*
 * om_self_metrics() - process_cpu_seconds_total (utime + stime),
 * process_resident_memory_bytes (rss pages), process_virtual_memory_bytes,
 * process_start_time_seconds (btime + starttime), process_open_fds and
 * process_max_fds (left out when unknown), the names client_golang gives
 * them (prometheus/procfs); from @s.
 */
void om_self_metrics(struct mbuf *b, const struct om_self *s);
/* om_build_info() - memacct_build_info{version,libbpf} 1. */
void om_build_info(struct mbuf *b);
/*
 * om_cgroup_info_family() then om_cgroup_info() per cgroup:
 * memacct_cgroup_info{cgroup,pod_uid,container_id,qos,job_id,memacct_job,
 * job_root} 1, the labels that cgroup_path_labels() finds in @rel by the
 * built-in rules (absent ones left out), so that
 * a query joins them on `cgroup` instead of every series carrying them.
 */
/* memacct_kernel_features{fault_hook="tracepoint|perf|none"} 1 */
void om_kernel_features(struct mbuf *b, const char *fault_hook);
void om_cgroup_info_family(struct mbuf *b);
void om_cgroup_info(struct mbuf *b, const char *rel);
/*
 * om_parse_btime() - the "btime N" line of /proc/stat text: seconds since
 * the epoch at boot. 0 or -EINVAL.
 */
int om_parse_btime(const char *text, uint64_t *btime_s);

/*
 * om_cgroup_families() - the per-cgroup families of every wanted cgroup of
 * @cg (@ncg of them, collect.h): memacct_cgroup_info, one family per row of
 * metric_table.h that has one (a counter for MF_FLOW rows; rows from
 * memory.stat left out of a cgroup whose stat was not read; MF_REMOTE rows
 * without samples on a @one_node host), then
 * memacct_numa_migrated_by_reason_bytes (a series from its first page), then
 * memacct_memory_limit_bytes, memacct_memory_high_bytes,
 * memacct_memory_peak_bytes (bytes) and
 * memacct_memory_pressure_{waiting,stalled}_seconds_total (PSI's µs as
 * seconds) from cgi.bounds and cgi.st, a sample only where the kernel gave
 * the figure. Values are cgi.m: bytes and counts, clamped by collect();
 * labels from cgi.labels.
 */
void om_cgroup_families(struct mbuf *b, const struct cgi *cg, size_t ncg, bool one_node);
/*
 * om_comm_families() - memacct_comm_rss_bytes (bytes: rss_pages times
 * @page_size) and memacct_comm_processes of the @n sums @v (collect.h
 * comm_sums(): every process of the collection's pass per its own cgroup
 * and comm), for the wanted cgroups of @cg, labelled with the cgroup's
 * labels (its job's among them) and comm; series as stable as the
 * workload's program names, whatever the process churn. @v NULL: the
 * families without samples.
 */
void om_comm_families(struct mbuf *b, struct cgi *cg, size_t ncg,
		      const struct comm_sum *v, size_t n, long page_size);

/*
 * hostpin_metrics() - the memacct_host_* gauges of @h into @b:
 * foll_pinned_bytes (host and {node}), mem_total_bytes (host and {node}),
 * dma_pinned_unattributed_bytes (foll_pinned less @attributed bytes, when
 * @attributed_known) and foll_pin_counters (1/0). A figure the kernel does
 * not give has no sample (unknown, never 0).
 */
void hostpin_metrics(struct mbuf *b, const struct hostpin *h, bool attributed_known,
		     uint64_t attributed);

/*
 * hostmem_metrics() - the budget gauges of @h into @b (memacct_host_
 * mem_free_bytes, mem_available_bytes, page_cache_bytes,
 * reclaimable_page_cache_bytes, unevictable_bytes, mlocked_bytes,
 * hugetlb_bytes, hugetlb_reserved_bytes, pcp_free_bytes, unowned_kernel_bytes, host and
 * {node} where the kernel gives it; node_cpuless {node}; unified_memory).
 */
void hostmem_metrics(struct mbuf *b, const struct hostpin *h);

/*
 * doom_metrics() - memacct_oom_last_kill_timestamp_seconds{cgroup, its path
 * labels (@jobs' job rules, NULL: the built-in ones), cause} (the victim's
 * cgroup and each above it), memacct_oom_last_kill_series_dropped_total
 * (the cgroups whose series was dropped), memacct_oom_postmortems_total,
 * of them memacct_oom_postmortems_brief_total, memacct_oom_log_errors_total.
 */
void doom_metrics(struct mbuf *b, const struct daemon_oom *o, const struct job_rules *jobs);

#endif
