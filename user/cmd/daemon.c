// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * daemon.c - `memacct daemon`: the BPF side loaded once and pinned (pin.c),
 * per-cgroup and top-N per-process metrics served over HTTP (/metrics in
 * Prometheus 0.0.4 or OpenMetrics text, /healthz) with libmicrohttpd, and a
 * JSON line per interval for log shippers. docs/daemon.md describes every
 * series. This file has the options, the loop, the daemon's own families and
 * the JSON log; one collection is collect.c's (flows from the BPF maps,
 * stocks from one pass over processes (pin_read_stocks()) and memory.stat,
 * hierarchical, clamped), the per-cgroup families output_om.c's (from
 * metric_table.h), HTTP http.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <systemd/sd-daemon.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "cgroup_labels.h"
#include "collect.h"
#include "daemon_oom.h"
#include "commands.h"
#include "daemon.h"
#include "hostpin.h"
#include "http.h"
#include "metric_table.h"
#include "metrics.h"
#include "numa.h"
#include "output_om.h"
#include "pin.h"
#include "report.h"
#include "signals.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define MAX_FILTERS	32

struct dopts {
	struct sockaddr_storage listen;	/* AF_INET or AF_INET6 */
	uint64_t interval_ns;
	const char *pin_path;
	const char *json_log;
	const char *oom_log;	/* NULL: none ("--oom-log none") */
	const char *filters[MAX_FILTERS];
	int nfilters;
	int top_n;
	bool bpf_stats;		/* --bpf-stats: kernel bpf_stats on while running */
	bool has_allow, has_deny;	/* --metrics-allow/--metrics-deny given */
	bool check_args;	/* --check-args: parse, say so, exit */
};

/* The daemon's own inputs of one collection (self_sample_read()). */
struct self_sample {
	bool host_ok, self_ok;
	struct hostpin host;		/* the host's FOLL_PIN pages (hostpin.h) */
	struct om_self self;		/* its own /proc entries (output_om.h) */
	bool host_has_eta;		/* the host's OOM forecast (host_forecast()) */
	double host_eta_s;
	enum fc_class host_grows;
	struct bpf_prog_info *info;	/* per program, with bpf_stats on; else NULL */
	bool *info_ok;
};

/* their regexes: static, reachable until exit (no regfree() on every path) */
static regex_t metrics_allow, metrics_deny;
static struct job_rules job_rules;	/* --job-from */

struct dstate {
	struct dopts o;
	struct pinned pin;
	struct ring_buffer *rb;
	char root[PATH_MAX];
	int version;
	long page_size;
	uint64_t t0_ns;
	int stats_fd;
	FILE *log;
	uint64_t log_errors;	/* JSON log lines that could not be written */
	bool log_failing;	/* the last line failed: said once */
	struct collector cs;	/* collect.h: reads the above, keeps its state */
	struct daemon_oom oom;	/* OOM post-mortems (daemon_oom.h) */
	double last_wall_s, last_cpu_s;
	double collection_start_s;	/* Unix time the collection being formatted began */
	uint64_t last_ok_ns;	/* CLOCK_MONOTONIC of the last published collection */
	uint64_t stall_ns;	/* none for that long: stalled (/healthz, watchdog) */
	bool numa_multi;	/* several nodes: memory.numa_stat read per cgroup */
	bool one_node;		/* one NUMA node: the remote-NUMA families have no samples */
	struct numa_topo topo;
	bool stats_sysctl;	/* kernel.bpf_stats_enabled = 1 (set by someone) */
	/* degraded figures (health_degraded()): the counters last seen and
	 * when each last rose (CLOCK_MONOTONIC ns, 0 never) */
	uint64_t deg_seen[3], deg_rose_ns[3];
	uint64_t http_said, http_said_ns;	/* say_http_shut(): table_full said, when */
	struct oom_forecast host_fc;	/* the host's, against MemTotal */
};

/* /healthz says "degraded" for this long after a cause last rose. */
#define DEGRADED_NS	(600ULL * 1000000000ULL)

/*
 * Why the figures of this collection are degraded, into @buf ("" if they
 * are not): a full procs map (processes without their own series' flows),
 * a full cgroups map (flows in the memory root's series instead of their
 * cgroup's) or flows that found no record (in no series), each while it
 * rose in the last DEGRADED_NS. The counters are cumulative since the
 * kernel side was loaded; what rose before this daemon started counts as
 * risen at its start.
 */
static void health_degraded(struct dstate *d, const struct pin_counters *c, char *buf,
			    size_t len)
{
	static const char *const what[3] = {
		"procs map full (proc_map_full): processes without a record, their flows in "
		"their cgroup's",
		"cgroups map full (cgroup_map_full): flows counted in the memory root instead of "
		"their cgroup",
		"flows found no record (memacct_flows_lost_bytes_total)",
	};
	uint64_t v[3] = { c->dropped[MEMACCT_DROP_PROC_MAP_FULL],
			  c->dropped[MEMACCT_DROP_CGROUP_MAP_FULL], c->flows_lost_pages };
	uint64_t now = now_ns();
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < 3; i++) {
		if (v[i] > d->deg_seen[i])
			d->deg_rose_ns[i] = now;
		d->deg_seen[i] = v[i];
		if (d->deg_rose_ns[i] && now - d->deg_rose_ns[i] < DEGRADED_NS && n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? "; " : "", what[i]);
	}
}

/* ---------------------------------------------------------------- options */

static void daemon_help(FILE *f)
{
	usage_print(f, "daemon");	/* usage.c */
}

static int on_exit_record(void *ctx, void *data, size_t len)
{
	const struct memacct_exit_event *ev = data;
	const struct dstate *d = ctx;

	/* flows are in the cgroups map already; the process's CoW slots,
	 * kept past its exit for a reader of this record, are not read here */
	if (len >= sizeof(*ev) && d->pin.cow_maps_fd >= 0)
		bpf_map_delete_elem(d->pin.cow_maps_fd, &ev->key);
	return 0;
}

/* ---------------------------------------------------------------- formatting */

/* Kernel bpf_stats on: ours (--bpf-stats) or the sysctl, read once per collection. */
static bool stats_on(struct dstate *d)
{
	return d->stats_fd >= 0 || d->stats_sysctl;
}

/* memacct_host_* (hostpin.h): FOLL_PIN pages now, without stat_refresh (a
 * work item on every CPU per scrape): may lag by the per-CPU diffs. */
static void daemon_host_metrics(const struct dstate *d, const struct collection *col,
				const struct self_sample *s, struct mbuf *b)
{
	if (!s->host_ok)
		return;
	hostpin_metrics(b, &s->host, col->counters.dma_readable,
			(col->counters.dma_attributed_pages + col->pinned_vm_pages) * d->page_size);
	hostmem_metrics(b, &s->host);
	metrics_family(b, "memacct_host_oom_eta_seconds", MT_GAUGE, "seconds",
		       "Time until the host's memory that cannot be reclaimed (MemTotal - "
		       "MemAvailable) reaches MemTotal at its growth of the last collections; "
		       "class: the one that grows most (anon, shmem, kernel) or within it (mlocked, "
		       "pinned, cow). No sample while it does not grow");
	if (s->host_has_eta)
		metrics_sample(b, (const struct mlabel[]){ { "class", fc_class_name(s->host_grows) } },
			       1, s->host_eta_s);
}

/* the root cgroup's published figures in @col, NULL when it has none */
static const struct metrics *root_metrics(const struct collection *col)
{
	for (size_t i = 0; i < col->ncg; i++)
		if (col->cg[i].level == 0)
			return &col->cg[i].m;
	return NULL;
}

/*
 * The host's OOM forecast (oom_forecast.h fc_host_stat()): /proc/meminfo as
 * self_sample_read() read it, the CoW copies and pins of the root cgroup of
 * @col, one sample per collection into d->host_fc; into @s.
 */
static void host_forecast(struct dstate *d, const struct collection *col, struct self_sample *s)
{
	struct memcg_stat st;
	struct fc_estimate e;
	const struct metrics *root;

	if (!s->host_ok || fc_host_stat(&s->host.mem, s->host.mem_total, &st))
		return;
	root = root_metrics(col);
	fc_add(&d->host_fc, now_ns(), &st, root ? root->cow_copied : 0,
	       root ? root->pinned_vm + root->dma_pinned : 0);
	if (!fc_estimate(&d->host_fc, s->host.mem_total, &e)) {
		s->host_has_eta = true;
		s->host_eta_s = e.eta_s;
		s->host_grows = e.grows;
	}
}

/*
 * What the daemon's own families read (the host's FOLL_PIN counters, its
 * own /proc entries, the programs' bpf_stats), once per collection: both
 * texts (Prometheus and OpenMetrics) are formatted from it.
 */
static void self_sample_read(struct dstate *d, struct self_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->host_ok = !hostpin_read(&s->host, false);
	s->self_ok = !om_self_read(&s->self);
	/* one bpf_obj_get_info_by_fd() per program feeds both families; only
	 * while kernel bpf_stats are on (--bpf-stats or the sysctl
	 * kernel.bpf_stats_enabled): otherwise the kernel counts nothing */
	if (!stats_on(d) || d->pin.nprogs <= 0)
		return;
	s->info = calloc(d->pin.nprogs, sizeof(*s->info));
	s->info_ok = calloc(d->pin.nprogs, sizeof(*s->info_ok));
	for (int i = 0; s->info && s->info_ok && i < d->pin.nprogs; i++) {
		__u32 len = sizeof(s->info[i]);

		s->info_ok[i] = !bpf_obj_get_info_by_fd(d->pin.progs[i].fd, &s->info[i], &len);
	}
}

static void self_sample_free(struct self_sample *s)
{
	free(s->info);
	free(s->info_ok);
}

/*
 * HTTP connections shut for room in the connection table since the last
 * time this said so (a scraper among them sees its connection reset), on
 * stderr once a minute at most; each is in
 * memacct_http_connections_shut_total{reason="table_full"}. Those shut after
 * 5 s without a request are not said: a keep-alive scraper's connection
 * between scrapes is one.
 */
static void say_http_shut(struct dstate *d)
{
	uint64_t idle, full, now;

	http_shut_counts(&idle, &full);
	if (full == d->http_said)
		return;
	now = now_ns();
	if (d->http_said_ns && now - d->http_said_ns < 60ULL * 1000000000ULL)
		return;
	p_warn("HTTP: %" PRIu64 " connection(s) shut for room in the connection table (1,500 "
	       "of its 2,000 open: the longest waiting for a request) "
	       "(memacct_http_connections_shut_total{reason=\"table_full\"})",
	       full - d->http_said);
	d->http_said = full;
	d->http_said_ns = now;
}

/* memacct_bpf_*: run time and runs of each program, while bpf_stats is on */
static void format_bpf_stats(struct dstate *d, const struct self_sample *s, struct mbuf *b)
{
	struct mlabel l[1];

	if (stats_on(d)) {
		metrics_family(b, "memacct_bpf_run_time_seconds", MT_COUNTER, "seconds",
			       "Time spent in each BPF program (kernel bpf_stats)");
		for (int i = 0; s->info && s->info_ok && i < d->pin.nprogs; i++) {
			if (!s->info_ok[i])
				continue;
			l[0] = (struct mlabel){ "program", d->pin.progs[i].name };
			metrics_sample(b, l, 1, s->info[i].run_time_ns / 1e9);
		}
		metrics_family(b, "memacct_bpf_runs", MT_COUNTER, NULL,
			       "Runs of each BPF program (kernel bpf_stats)");
		for (int i = 0; s->info && s->info_ok && i < d->pin.nprogs; i++) {
			if (!s->info_ok[i])
				continue;
			l[0] = (struct mlabel){ "program", d->pin.progs[i].name };
			metrics_sample_u64(b, l, 1, s->info[i].run_cnt);
		}
	}
}

/* The kernel side's own counters: losses, NVIDIA pin calls, map fill. */
static void format_kernel_counters(struct dstate *d, const struct collection *col,
				   struct mbuf *b)
{
	struct mlabel l[1];

	metrics_family(b, "memacct_events_dropped", MT_COUNTER, NULL,
		       "Events the BPF side could not record, by reason");
	for (int i = 0; i < MEMACCT_DROP_NR; i++) {
		if (i == MEMACCT_DROP_RINGBUF_FULL)	/* not a loss (D20): below */
			continue;
		l[0] = (struct mlabel){ "reason", drop_names[i] };
		metrics_sample_u64(b, l, 1, col->counters.dropped[i]);
	}
	metrics_family(b, "memacct_nvidia_pin_calls", MT_COUNTER, NULL,
		       "NVIDIA driver calls that pin user memory (NV_ESC_RM_ALLOC_MEMORY, OS "
		       "descriptor: CUDA pinned host memory) by result, and frees of a range "
		       "memacct knew");
	for (int i = 0; i < MEMACCT_NV_NR; i++) {
		l[0] = (struct mlabel){ "result", nv_call_names[i] };
		metrics_sample_u64(b, l, 1, col->counters.nv_calls[i]);
	}
	metrics_family(b, "memacct_ringbuf_full", MT_COUNTER, NULL,
		       "Exit records that found the ring buffer full (the daemon down or "
		       "stalled): not needed here, every exit's flows are folded into its "
		       "cgroup in the kernel (nothing lost)");
	metrics_sample_u64(b, NULL, 0, col->counters.dropped[MEMACCT_DROP_RINGBUF_FULL]);
	metrics_family(b, "memacct_flows_lost_bytes", MT_COUNTER, "bytes",
		       "Bytes of pages allocated by faults whose flows found no record at all "
		       "(not even the cgroups map's fallback record): in no series");
	metrics_sample_u64(b, NULL, 0, col->counters.flows_lost_pages * d->page_size);
	metrics_family(b, "memacct_bpf_runs_skipped", MT_COUNTER, NULL,
		       "Runs of the kernel side's programs the kernel skipped, the program "
		       "already running on that CPU (bpf_prog_info.recursion_misses): mostly "
		       "allocations made inside a program; since Linux 7.x also runs of "
		       "another task behind a preempted one, faults not counted");
	metrics_sample_u64(b, NULL, 0, col->bpf_runs_skipped);
	metrics_family(b, "memacct_map_fill_ratio", MT_GAUGE, "ratio",
		       "Entries in use over max_entries of the BPF hash maps");
	l[0] = (struct mlabel){ "map", "procs" };
	metrics_sample(b, l, 1, d->pin.procs_max ? (double)col->procs_used / d->pin.procs_max : 0);
	l[0] = (struct mlabel){ "map", "cgroups" };
	metrics_sample(b, l, 1, d->pin.cgroups_max ?
		       (double)col->cgroups_used / d->pin.cgroups_max : 0);
	if (d->pin.page_cache_max) {	/* records after the collection's pruning */
		l[0] = (struct mlabel){ "map", "page_cache" };
		metrics_sample(b, l, 1, (double)(col->page_cache.records -
						 col->page_cache.pruned) / d->pin.page_cache_max);
	}
}

/* The collection's own cost and what it could not do: time, log errors,
 * processes seen, HTTP connections shut, cgroups not walked. */
static void format_collection_self(struct dstate *d, const struct collection *col,
				   struct mbuf *b)
{
	struct mlabel l[1];

	metrics_family(b, "memacct_scrape_duration_seconds", MT_GAUGE, "seconds",
		       "Wall time of the previous collection (cgroups, maps, iterator, formatting)");
	metrics_sample(b, NULL, 0, d->last_wall_s);
	metrics_family(b, "memacct_scrape_cpu_seconds", MT_GAUGE, "seconds",
		       "CPU time of the previous collection");
	metrics_sample(b, NULL, 0, d->last_cpu_s);
	metrics_family(b, "memacct_last_collection_timestamp_seconds", MT_GAUGE, "seconds",
		       "Unix time the collection served began: its figures are the kernel's "
		       "at that time or later");
	metrics_sample(b, NULL, 0, d->collection_start_s);
	metrics_family(b, "memacct_json_log_errors", MT_COUNTER, NULL,
		       "JSON log lines (--json-log) that could not be written (full disk, I/O error)");
	metrics_sample_u64(b, NULL, 0, d->log_errors);
	metrics_family(b, "memacct_processes", MT_GAUGE, NULL,
		       "Processes with an mm seen by the collection's process pass");
	metrics_sample_u64(b, NULL, 0, col->nst);
	{
		uint64_t idle, full;

		http_shut_counts(&idle, &full);
		metrics_family(b, "memacct_http_connections_shut", MT_COUNTER, NULL,
			       "HTTP connections the daemon shut while they waited for a "
			       "request: idle (5 s without one: slow clients, keep-alive "
			       "connections between scrapes), table_full (1,500 of the 2,000 "
			       "connections open: the longest waiting)");
		l[0] = (struct mlabel){ "reason", "idle" };
		metrics_sample_u64(b, l, 1, idle);
		l[0] = (struct mlabel){ "reason", "table_full" };
		metrics_sample_u64(b, l, 1, full);
	}
	metrics_family(b, "memacct_cgroups_unwalked", MT_GAUGE, NULL,
		       "Cgroup directories the collection could not walk (a path longer than "
		       "PATH_MAX, too many cgroups): missing from every figure with their subtrees");
	metrics_sample_u64(b, NULL, 0, col->cgroups_unwalked);
}

static void format_self(struct dstate *d, const struct collection *col,
			const struct self_sample *s, struct mbuf *b)
{
	format_bpf_stats(d, s, b);
	format_kernel_counters(d, col, b);
	format_collection_self(d, col, b);
	daemon_host_metrics(d, col, s, b);
	om_build_info(b);
	om_kernel_features(b, d->pin.fault_hook);
	if (s->self_ok)
		om_self_metrics(b, &s->self);
}

static void format(struct dstate *d, const struct collection *col,
		   const struct self_sample *s, struct mbuf *b)
{
	size_t ntop = col->ntop;
	struct mlabel l[3];

	om_cgroup_families(b, col->cg, col->ncg, d->one_node);
	om_comm_families(b, col->cg, col->ncg, col->comms, col->ncomms, d->page_size);
	/* top N processes by RSS (--top-processes; 0 by default: a pid label
	 * makes a new series for every process, 370 in 17 min on a busy host):
	 * a gauge of each TOP_PROC() row of METRIC_ROWS (metric_table.h) */
	static const struct { const char *name, *help; enum metric_id id; } pm[] = {
#define TOP_PROC(help)		TOP_PROC_, help
#define NO_TOP_PROC		NO_TOP_PROC_, NULL
#define PM_ROW(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
	       top_col) \
		PM_ROW_(id, key, top_proc)
#define PM_ROW_(id, key, has, help)	PM_ROW_##has(id, key, help)
#define PM_ROW_TOP_PROC_(id, key, help)	{ "memacct_process_" key, help, M_##id },
#define PM_ROW_NO_TOP_PROC_(id, key, help)
		METRIC_ROWS(PM_ROW)
	};
	const struct proc_row *top = col->top;	/* filled once by collect() */

	for (size_t m = 0; top && m < sizeof(pm) / sizeof(pm[0]); m++) {
		bool bytes = metric_table[pm[m].id].flags & MF_BYTES;

		metrics_family(b, pm[m].name, MT_GAUGE, bytes ? "bytes" : NULL, pm[m].help);
		for (size_t i = 0; i < ntop; i++) {
			struct cgi *c = cgi_find(col->cg, col->ncg, col->st[i].memcg_id);
			char pid[16];

			if (top[i].m.unknown & MBIT(pm[m].id))
				continue;	/* not measured: no sample */
			snprintf(pid, sizeof(pid), "%d", top[i].pid);
			l[0] = (struct mlabel){ "pid", pid };
			l[1] = (struct mlabel){ "comm", top[i].comm };
			l[2] = (struct mlabel){ "cgroup", c ? c->rel : "" };
			metrics_sample_u64(b, l, 3, metric_get(&top[i].m, pm[m].id));
		}
	}
	format_self(d, col, s, b);
	doom_metrics(b, &d->oom, &job_rules);
}

/* ---------------------------------------------------------------- JSON log */

/*
 * One JSON line in a single write(); a failure (ENOSPC, EIO, ...) is said
 * once until a line is written again, counted (memacct_json_log_errors),
 * and a partly written line is cut off again (ftruncate to the size before
 * it), so the file never holds a cut JSON line (reliability audit D14).
 */
static void log_line(struct dstate *d, const char *s)
{
	int err = write_line(fileno(d->log), s);

	if (!err) {
		if (d->log_failing)
			p_info("writing %s again", d->o.json_log);
		d->log_failing = false;
		return;
	}
	d->log_errors++;
	if (!d->log_failing)
		p_warn("writing %s: %s (line dropped; memacct_json_log_errors_total counts them)",
		       d->o.json_log, strerror(-err));
	d->log_failing = true;
}

/* daemon_oom's post-mortem lines to the --json-log too */
static void json_log_line(void *ctx, const char *line)
{
	struct dstate *d = ctx;

	if (d->log)
		log_line(d, line);
}

static void write_json_log(struct dstate *d, const struct collection *col)
{
	struct report r = { .command = "daemon" };
	size_t ntop = col->ntop;
	json_t *o, *arr;
	char *s;

	if (!d->log)
		return;
	memcg_of_path(d->root, d->version, d->root, &r.cg);
	r.elapsed_s = (now_ns() - d->t0_ns) / 1e9;
	r.numa_multi = false;
	if (root_metrics(col))
		r.totals = *root_metrics(col);
	r.procs = col->top ? malloc((ntop ? ntop : 1) * sizeof(*r.procs)) : NULL;
	if (r.procs) {	/* the collector's rows (report_free() frees the copy) */
		memcpy(r.procs, col->top, ntop * sizeof(*r.procs));
		r.nprocs = ntop;
	}
	memcpy(r.dropped, col->counters.dropped, sizeof(r.dropped));
	r.vma_lockless_lookups = col->counters.vma_lockless;
	r.bpf_runs_skipped = col->bpf_runs_skipped;
	r.dropped_events = report_dropped_total(col->counters.dropped);
	o = report_json(&r);
	arr = json_array();
	for (size_t i = 0; o && arr && i < col->ncg; i++) {
		const struct cgi *c = &col->cg[i];
		const struct cg_labels *cl = &c->labels;
		json_t *co;

		if (!c->wanted)
			continue;
		co = json_object();
		json_object_set_new(co, "cgroup", json_string_sanitized(c->rel));
		json_object_set_new(co, "id", json_integer((json_int_t)c->id));
		if (cl->pod_uid[0])
			json_object_set_new(co, "pod_uid", json_string(cl->pod_uid));
		if (cl->container_id[0])
			json_object_set_new(co, "container_id", json_string(cl->container_id));
		if (cl->job_id[0])
			json_object_set_new(co, "job_id", json_string(cl->job_id));
		if (cl->qos[0])
			json_object_set_new(co, "qos", json_string(cl->qos));
		if (cl->job[0]) {
			json_object_set_new(co, "job", json_string_sanitized(cl->job));
			json_object_set_new(co, "job_root", json_boolean(cl->job_root));
		}
		report_metrics_json(co, &c->m, MF_SAMPLED);
		json_object_set_new(co, "oom_forecast", c->has_eta ?
				    json_pack("{s:f, s:s}", "eta_s", c->oom_eta_s, "growing_class",
					      fc_class_name(c->oom_grows)) : json_null());
		json_array_append_new(arr, co);
	}
	if (o) {
		json_object_set_new(o, "cgroups", arr);
		json_object_set_new(o, "cgroups_unwalked",
				    json_integer((json_int_t)col->cgroups_unwalked));
		s = json_dumps(o, JSON_COMPACT);
		if (s) {
			log_line(d, s);
			free(s);
		}
		json_decref(o);
	} else {
		json_decref(arr);
	}
	report_free(&r);
}

static int open_log(struct dstate *d)
{
	FILE *f;

	if (!d->o.json_log)
		return 0;
	f = fopen(d->o.json_log, "ae");
	if (!f) {
		int err = -errno;

		p_err("opening %s: %s", d->o.json_log, strerror(-err));
		return err;
	}
	if (d->log)
		fclose(d->log);
	d->log = f;
	return 0;
}

/* ---------------------------------------------------------------- main loop */

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* below this many descriptors a first load fails half way (~150 at start) */
#define DAEMON_MIN_FDS	256
/* seconds from a stop signal to the exit, at most (arm_stop_deadline()) */
#define DAEMON_STOP_S	30

/*
 * RLIMIT_NOFILE raised to 8192 for many HTTP clients, best effort (without
 * CAP_SYS_RESOURCE up to the hard limit only). 0, or -EMFILE after saying
 * why when fewer than DAEMON_MIN_FDS are allowed: a first load holds about
 * 150 descriptors (programs, maps, links), and under `ulimit -n 16` the load
 * failed with EMFILE half way (issue 23).
 */
static int raise_nofile(void)
{
	struct rlimit rl = { 8192, 8192 };

	if (setrlimit(RLIMIT_NOFILE, &rl) && !getrlimit(RLIMIT_NOFILE, &rl) &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= DAEMON_MIN_FDS)
		return 0;
	p_err("%llu open files allowed (RLIMIT_NOFILE): the daemon needs %d, about 150 for "
	      "its BPF programs, maps and links and the rest for HTTP clients; raise it "
	      "(ulimit -n, systemd LimitNOFILE=) or give the daemon CAP_SYS_RESOURCE",
	      (unsigned long long)rl.rlim_cur, DAEMON_MIN_FDS);
	return -EMFILE;
}

/*
 * One tick of the main loop: sleep until @next or 100 ms from now, whichever
 * comes first. A signal other than a stop does not cut it short, so SIGHUPs
 * are taken once a tick at most, however many came: a storm of them reopens
 * the JSON log at most 10 times a second and forces no collection (each
 * SIGHUP did before: 499 collections for 500 SIGHUPs in a second, issue 23).
 */
static void tick_wait(uint64_t next)
{
	uint64_t until = ns_after(now_ns(), 100000000ULL);
	struct timespec ts;

	if (next < until)
		until = next;
	ts.tv_sec = until / 1000000000ULL;
	ts.tv_nsec = until % 1000000000ULL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
	       !stop_requested)
		;
}

static int collect_and_publish(struct dstate *d)
{
	uint64_t t0 = now_ns();
	double c0 = thread_cpu_s();
	struct collection col;
	struct timespec rt;
	struct self_sample self;
	struct mbuf prom, om;
	char degraded[256];
	int err;

	clock_gettime(CLOCK_REALTIME, &rt);
	err = collect(&d->cs, &col);
	if (err)
		return err;
	d->collection_start_s = rt.tv_sec + rt.tv_nsec / 1e9;
	doom_sample_collection(&d->oom, &col, oom_host_near());
	if (d->stats_fd < 0) {
		char *t = NULL;

		d->stats_sysctl = read_file("/proc/sys/kernel/bpf_stats_enabled", &t, 64) > 0 &&
				  t[0] == '1';
		free(t);
	}
	mbuf_init(&prom, false);
	mbuf_init(&om, true);
	self_sample_read(d, &self);
	host_forecast(d, &col, &self);
	format(d, &col, &self, &prom);
	format(d, &col, &self, &om);
	self_sample_free(&self);
	/* out of memory: the previous collection stays served */
	health_degraded(d, &col.counters, degraded, sizeof(degraded));
	http_publish(metrics_end(&prom), metrics_end(&om), pin_links_gone(&d->pin),
		     d->pin.nprogs, degraded);
	mbuf_free(&prom);
	mbuf_free(&om);
	write_json_log(d, &col);
	collection_free(&col);
	d->last_ok_ns = now_ns();
	d->last_wall_s = (now_ns() - t0) / 1e9;
	d->last_cpu_s = thread_cpu_s() - c0;
	return 0;
}

/* Left long: a flat case per option; split, it would hide what each option sets. */
static int parse_daemon_args(int argc, char **argv, struct dopts *o, bool *stop_ks)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "pin-path", required_argument, NULL, 'p' },
		{ "json-log", required_argument, NULL, 'J' },
		{ "oom-log", required_argument, NULL, 'O' },
		{ "cgroup-filter", required_argument, NULL, 'f' },
		{ "job-from", required_argument, NULL, 'j' },
		{ "top-processes", required_argument, NULL, 'n' },
		{ "stop-kernel-side", no_argument, NULL, 'S' },
		{ "bpf-stats", no_argument, NULL, 'B' },
		{ "metrics-allow", required_argument, NULL, 'A' },
		{ "metrics-deny", required_argument, NULL, 'D' },
		DMA_PINS_LONG_OPTION,
		{ "check-args", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	http_parse_listen("127.0.0.1:9464", &o->listen);
	o->interval_ns = 10000000000ULL;
	o->pin_path = PIN_DEFAULT_DIR;
	o->oom_log = OOM_LOG_DEFAULT;
	o->top_n = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (http_parse_listen(optarg, &o->listen)) {
				p_err("--listen: expected ADDR:PORT (127.0.0.1:9464, [::1]:9464), "
				      "got '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'i':
			if (parse_duration(optarg, &o->interval_ns) ||
			    o->interval_ns < 100000000ULL) {
				p_err("--interval: expected a duration >= 100ms, got '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			o->pin_path = optarg;
			break;
		case 'J':
			o->json_log = optarg;
			break;
		case 'O':
			o->oom_log = strcmp(optarg, "none") ? optarg : NULL;
			break;
		case 'f':
			if (o->nfilters >= MAX_FILTERS) {
				p_err("--cgroup-filter: at most %d", MAX_FILTERS);
				return -EINVAL;
			}
			o->filters[o->nfilters++] = optarg;
			break;
		case 'j':
			if (job_rules.n >= MAX_FILTERS) {
				p_err("--job-from: at most %d", MAX_FILTERS);
				return -EINVAL;
			}
			if (job_rules_add(&job_rules, "--job-from", optarg))
				return -EINVAL;
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v > 10000) {
				p_err("--top-processes: expected 0..10000, got '%s'", optarg);
				return -EINVAL;
			}
			o->top_n = v;
			break;
		case 'S':
			*stop_ks = true;
			break;
		case 'B':
			o->bpf_stats = true;
			break;
		case 'C':
			o->check_args = true;
			break;
		case OPT_DMA_PINS:
			if (loader_dma_parse(optarg))
				return -EINVAL;
			break;
		case 'A':
		case 'D':
			if ((c == 'A' && o->has_allow) || (c == 'D' && o->has_deny)) {
				p_err("--metrics-%s given twice (one regex: a|b)",
				      c == 'A' ? "allow" : "deny");
				return -EINVAL;
			}
			if (metrics_compile_filter(c == 'A' ? "--metrics-allow" : "--metrics-deny",
						   optarg, c == 'A' ? &metrics_allow : &metrics_deny))
				return -EINVAL;
			if (c == 'A')
				o->has_allow = true;
			else
				o->has_deny = true;
			break;
		case 'h':
			daemon_help(stdout);
			return 1;
		default:
			opt_error("daemon", c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		p_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int daemon_filter_normalize(const char *root, const char *in, char *out, size_t n)
{
	size_t rl = strlen(root), o = 0;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl > 1 && !strncmp(in, root, rl) && (in[rl] == '/' || !in[rl]))
		in += rl;
	if (n < 2)
		return -ENAMETOOLONG;
	for (const char *p = in; *p; ) {
		size_t l;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		if (!l)
			break;
		if (o + 1 + l + 1 > n)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, p, l);
		o += l;
		p += l;
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

/*
 * --cgroup-filter: each value normalized (daemon_filter_normalize()); one
 * that names no cgroup now is said at start (reliability audit D11: "rel-a"
 * or "/rel-a/" silently matched nothing). 0 or EXIT_USAGE.
 */
static int normalize_filters(struct dstate *d)
{
	static char store[MAX_FILTERS][PATH_MAX];
	int rootfd = open(d->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (int i = 0; i < d->o.nfilters; i++) {
		char *f = store[i];

		if (daemon_filter_normalize(d->root, d->o.filters[i], f, PATH_MAX)) {
			p_err("--cgroup-filter '%s': path too long", d->o.filters[i]);
			if (rootfd >= 0)
				close(rootfd);
			return EXIT_USAGE;
		}
		if (rootfd >= 0 && strcmp(f, "/") && faccessat(rootfd, f + 1, F_OK, 0))
			p_warn("--cgroup-filter %s: no such cgroup below %s now; its series appear "
			       "once it exists", f, d->root);
		d->o.filters[i] = f;
	}
	if (rootfd >= 0)
		close(rootfd);
	return 0;
}

/*
 * Loads the kernel side at --pin-path, or re-attaches to the one pinned
 * there, and turns on bpf_stats when asked. 0, or the exit code when the
 * kernel side cannot be had (nothing then to close).
 */
static int daemon_pin(struct dstate *d)
{
	int err = pin_open(d->o.pin_path, &d->pin);

	if (err)	/* not a bpffs: bad --pin-path, as detach says */
		return err == -ENOTSUP ? EXIT_USAGE :
		       err == -EBUSY || err == -EPROTO ? EXIT_RUNTIME : EXIT_ENV;
	p_info("%s kernel side at %s", d->pin.reattached ? "re-attached to the" : "pinned the",
	       d->o.pin_path);
	/*
	 * D7: a second kernel side is allowed (run and attach sessions load one
	 * for their lifetime; a move between pin paths needs two for a while),
	 * but never silently: docs/daemon.md "Several kernel sides".
	 */
	err = pin_other_kernel_sides(&d->pin);
	if (err > 0)
		p_warn("%d other memacct kernel side%s loaded beside this one (another daemon's pins "
		       "elsewhere, or a run/attach/--watch session): every event now runs memacct's "
		       "programs %d times, each side counting apart; `memacct detach --pin-path DIR` "
		       "removes another daemon's kernel side (a session's goes when it ends)", err,
		       err > 1 ? "s are" : " is", err + 1);
	if (d->o.bpf_stats) {
		d->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (d->stats_fd < 0)
			p_warn("bpf_stats unavailable (%s): memacct_bpf_* series left out",
			       strerror(errno));
	}
	return 0;
}

/* The OOM post-mortems, the ring buffers of exits and OOM kills, and the
 * collector, all over the pinned kernel side. */
static void daemon_readers(struct dstate *d)
{
	/* the pins' fault hook is known now and stays: the figures it does
	 * not measure, for the post-mortems and every collection alike */
	uint64_t unmeasured = metric_fault_mask(!strcmp(d->pin.fault_hook, "none"),
						d->pin.fault_alloc_counted);

	d->oom = (struct daemon_oom){
		.pin = &d->pin, .page_size = d->page_size, .log_path = d->o.oom_log,
		.unmeasured = unmeasured,
		/* "grew": from the collection before the last one */
		.window_ns = d->o.interval_ns < UINT64_MAX / 3 ?
			     2 * d->o.interval_ns + 1000000000ULL : UINT64_MAX,
		.json_log = json_log_line, .json_log_ctx = d,
	};
	/* samples older than the window of "grew" are never read; the
	 * sample made when a kill is read (up to OOM_SAMPLE_NS after it, in
	 * sample_near()) must not drop one the kill's window still holds */
	d->oom.hist.keep_ns = d->oom.window_ns < UINT64_MAX - OOM_SAMPLE_NS ?
			      d->oom.window_ns + OOM_SAMPLE_NS : UINT64_MAX;
	doom_seed(&d->oom);
	d->rb = ring_buffer__new(d->pin.exits_fd, on_exit_record, d, NULL);
	if (!d->rb)
		p_warn("exit ring buffer: %s", strerror(errno));
	/* OOM kills: records left while no daemon ran are explained now */
	if (d->rb && ring_buffer__add(d->rb, d->pin.oom_events_fd, doom_on_record, &d->oom))
		p_warn("OOM ring buffer: %s (no post-mortems; memacct oom reads the pinned "
		       "history)", strerror(errno));
	d->cs = (struct collector){
		.pin = &d->pin, .rb = d->rb, .root = d->root, .version = d->version,
		.page_size = d->page_size, .filters = d->o.filters, .nfilters = d->o.nfilters,
		.jobs = &job_rules, .top_n = d->o.top_n, .numa_multi = d->numa_multi, .topo = &d->topo,
		.unmeasured = unmeasured,
	};
	{	/* a test knob (docs/daemon.md "Map sizes"): the walk's limit, reached */
		const char *env = getenv("MEMACCT_WALK_CGROUPS_MAX");
		uint64_t v;

		if (env && !parse_u64(env, &v) && v > 0 && v < COLLECT_MAX_CGROUPS)
			d->cs.max_cgroups = v;
	}
}

/* The line scripts wait for, after the warning a non-loopback address earns. */
static void say_serving(const struct dstate *d)
{
	char a[INET6_ADDRSTRLEN + 8];

	/* D20: pids, comms and cgroup names go to whoever can connect */
	if (!http_listen_loopback(&d->o.listen))
		p_warn("listening on %s, not loopback: process ids, names and cgroup paths "
		       "are served to every host that can reach it",
		       http_listen_str(&d->o.listen, a, sizeof(a)));
	/* "serving on port P (ADDR)": scripts wait for it */
	fprintf(stderr, "memacct daemon: serving on port %u (%s), kernel side %s %s\n",
		http_listen_port(&d->o.listen), http_listen_addr(&d->o.listen, a, sizeof(a)),
		d->pin.reattached ? "re-attached at" : "pinned at", d->o.pin_path);
}

/*
 * The main loop, until SIGTERM or SIGINT: a collection every interval, and
 * between them SIGHUP's log reopening, slow HTTP clients reaped, the exit
 * ring drained and systemd's watchdog pinged.
 */
static void daemon_serve(struct dstate *d)
{
	uint64_t wd_usec = 0, wd_next = 0;

	/* systemd Type=notify: ready once serving; WatchdogSec= pinged at half
	 * its period while collections are on time (a hung or failing one stops
	 * the pings, and systemd restarts the daemon) */
	sd_notify(0, "READY=1");
	if (sd_watchdog_enabled(0, &wd_usec) <= 0)
		wd_usec = 0;
	while (!stop_requested) {
		uint64_t next = ns_after(now_ns(), d->o.interval_ns);

		while (!stop_requested && now_ns() < next) {
			uint64_t now;

			tick_wait(next);
			if (hup_requested) {
				hup_requested = 0;
				p_info("SIGHUP: reopening %s",
				       d->o.json_log ? d->o.json_log : "(no log)");
				open_log(d);
			}
			http_reap_slow();
			say_http_shut(d);
			/* exit records are not used here (the kernel folds
			 * every exit into its cgroup): drained so that the ring
			 * is full only while the daemon is down */
			if (d->rb)
				ring_buffer__consume(d->rb);
			now = now_ns();
			if (wd_usec && now >= wd_next) {
				if (now - d->last_ok_ns <= d->stall_ns)
					sd_notify(0, "WATCHDOG=1");
				wd_next = ns_after(now, wd_usec * 500);	/* half of it, in ns */
			}
		}
		if (!stop_requested)
			collect_and_publish(d);
	}
	sd_notify(0, "STOPPING=1");
}

int do_daemon(int argc, char **argv)
{
	struct MHD_Daemon *http = NULL;
	struct dstate d;
	bool stop_ks = false;
	int err, ret = EXIT_RUNTIME;

	memset(&d, 0, sizeof(d));
	d.stats_fd = -1;
	err = parse_daemon_args(argc, argv, &d.o, &stop_ks);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	if (d.o.check_args) {	/* a manifest's command line, checked anywhere */
		printf("memacct daemon: arguments ok\n");
		return EXIT_OK;
	}
	metrics_set_filter(d.o.has_allow ? &metrics_allow : NULL,
			   d.o.has_deny ? &metrics_deny : NULL);
	if (loader_check_env())
		return EXIT_ENV;
	if (stop_ks)
		return detach_kernel_side(d.o.pin_path);
	if (memcg_root(d.root, &d.version)) {
		p_err("no memory cgroup hierarchy mounted");
		return EXIT_ENV;
	}
	if (normalize_filters(&d))
		return EXIT_USAGE;
	d.page_size = sysconf(_SC_PAGESIZE);
	d.one_node = loader_numa_nodes() <= 1;
	d.numa_multi = !d.one_node && !numa_topo_read(&d.topo);
	d.t0_ns = now_ns();
	if (raise_nofile())
		return EXIT_ENV;
	install_daemon_handlers();
	if (open_log(&d))	/* a --json-log that cannot be opened: bad input, as -o */
		return EXIT_USAGE;
	/*
	 * Listen before loading: a daemon that cannot serve leaves no kernel
	 * side attached (reliability audit D7). /metrics answers 503 until the
	 * first collection.
	 */
	/* stalled after 3 intervals and 5 s without a collection */
	d.stall_ns = d.o.interval_ns < (UINT64_MAX - 5000000000ULL) / 3 ?
		     3 * d.o.interval_ns + 5000000000ULL : UINT64_MAX;
	http = http_start(&d.o.listen, d.stall_ns, &err);
	if (!http) {
		char a[INET6_ADDRSTRLEN + 8];

		p_err("cannot listen on %s: %s", http_listen_str(&d.o.listen, a, sizeof(a)),
		      err ? strerror(-err) : "libmicrohttpd failed to start");
		goto out_log;
	}
	err = daemon_pin(&d);
	if (err) {
		ret = err;
		goto out_log;
	}
	daemon_readers(&d);
	if (collect_and_publish(&d)) {
		p_err("first collection failed: cgroup root %s unreadable", d.root);
		goto out_pin;
	}
	say_serving(&d);
	daemon_serve(&d);
	/* systemd's stop timeout is 90 s: a stop that hangs is ours to end */
	arm_stop_deadline(DAEMON_STOP_S);
	ret = EXIT_OK;
out_pin:
	http_stop(http);
	http = NULL;
	ring_buffer__free(d.rb);
	if (d.stats_fd >= 0)
		close(d.stats_fd);
	pin_close(&d.pin);
out_log:
	http_stop(http);
	if (d.log)
		fclose(d.log);
	collector_free(&d.cs);
	doom_free(&d.oom);
	numa_topo_free(&d.topo);
	return ret;
}
