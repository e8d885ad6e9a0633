// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * audit.c - memacct audit [--cgroup NAME|PATH ...] [--pinned-cap SIZE|PCT%]
 *           [--per-process-cap SIZE|PCT%] [--of-limit] [--watch DUR] [-j]
 *           [--enforce-rlimit] [--restore-rlimit]
 * Pinned memory per cgroup and per process against caps: exit 0 when all
 * are within, 1 when a cap is exceeded, 2 on usage errors. --watch is
 * driven by the BPF pinned-memory change events (pinwatch.h). Evidence and
 * sources: docs/audit.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "dma_ranges.h"
#include "commands.h"
#include "fill.h"
#include "memlimits.h"
#include "pin.h"
#include "pinwatch.h"
#include "proc.h"
#include "report.h"
#include "report_print.h"
#include "signals.h"
#include "smaps.h"
#include "snapshot.h"
#include "table.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define MAX_CGROUPS	64	/* --cgroup arguments; the walk of all has no bound */
#define NEAR_LIMIT_PCT	80	/* pinned this close to memory.high/max: warned */
#define HOST_TOP	3	/* processes named by the host check */
#define MAX_EVIDENCE	16	/* locked mappings listed per process */
#define RLIMIT_LOG	LIMITS_STATE_DIR "/rlimit.log"

struct locked_map {
	char range[40];
	char name[128];
	uint64_t locked;
};

struct audit_proc {
	/* the collector's row (snapshot.h): pid, comm, mlocked (VmLck),
	 * pinned_vm (VmPin), pinned; dma_pinned (FOLL_PIN pins) and its
	 * estimate flag from --watch's BPF side or a daemon's records */
	struct proc_row row;
	uint64_t driver_est;	/* driver-pinned estimate from smaps (scan_smaps()) */
	bool dma_known;		/* dma_pinned measured: its cgroup's dma_known */
	struct rlimit rl;
	bool has_rl;
	struct locked_map maps[MAX_EVIDENCE];
	int nmaps;
	int nmaps_unlisted;	/* locked mappings past MAX_EVIDENCE: counted only */
	uint64_t unlisted_locked;	/* their smaps Locked, bytes */
	bool over;		/* over the per-process cap */
};

struct audit_cg {
	struct memcg cg;
	bool recursive;
	struct audit_proc *procs;
	size_t n;
	struct metrics tot;	/* the processes' rows summed (metrics_add_row()) */
	uint64_t driver_est;	/* the processes' driver_est summed */
	bool dma_known;		/* dma measured (--watch, or a daemon's pins) */
	uint64_t limit;		/* memory limit; 0 = none */
	uint64_t high;		/* memory.high (v2); 0 = none */
	uint64_t cap, proc_cap;	/* resolved caps; 0 = none */
	bool over;
};

struct audit_opts {
	const char *pinned_cap, *proc_cap;
	const char *host_cap;	/* --host PCT: the host's FOLL_PIN pages vs MemTotal */
	const char *pin_dir;	/* a daemon's pins: DMA figures without --watch */
	bool of_limit, enforce, restore;
	uint64_t watch_ns;
};

/* What made --watch re-judge a cgroup: a BPF change event or a /proc pass. */
struct trigger {
	bool bpf;
	pid_t pid;		/* 0: none */
	char comm[64];
	uint64_t locked, pinned_vm;	/* of that process, bytes */
	uint64_t dma;			/* its DMA pins (bpf), bytes */
	const char *syscall;	/* bpf: the syscall that changed them, or "exit" */
};

static void sum_procs(struct audit_cg *a);

static void audit_usage(FILE *f)
{
	usage_print(f, "audit");	/* usage.c */
}

/* a device file whose mappings may be pinned by its driver */
static bool pinning_device(const char *name)
{
	static const char *const pfx[] = {
		"/dev/nvidia", "/dev/dri/", "/dev/kfd", "/dev/infiniband/", "/dev/vfio/",
		"/dev/accel/", "/dev/hfi1", "/dev/habanalabs/",
	};

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/*
 * From /proc/PID/smaps (smaps.c): the mappings with Locked > 0 (evidence),
 * and the estimate of driver-pinned memory: Rss of device mappings, plus
 * Rss of shmem mappings (tmpfs, memfd, SysV, shared anonymous such as
 * CUDA's "/dev/zero (deleted)" host buffers) when the process maps such a
 * device.
 */
static void scan_smaps(struct audit_proc *p)
{
	uint64_t dev_rss = 0, shm_rss = 0;
	bool has_dev = false;
	struct smaps sm;

	if (read_smaps(p->row.pid, &sm) < 0)
		return;
	for (size_t i = 0; i < sm.n; i++) {
		const struct smaps_map *m = &sm.maps[i];

		if (m->path && pinning_device(m->path)) {
			has_dev = true;
			dev_rss += m->rss;
		} else if (m->kind == SMAPS_SHMEM) {
			shm_rss += m->rss;
		}
		if (m->locked && p->nmaps == MAX_EVIDENCE) {
			p->nmaps_unlisted++;
			p->unlisted_locked += m->locked;
		} else if (m->locked) {
			struct locked_map *l = &p->maps[p->nmaps++];

			snprintf(l->range, sizeof(l->range), "%" PRIx64 "-%" PRIx64, m->start,
				 m->end);
			snprintf(l->name, sizeof(l->name), "%s%s", m->path ? m->path : "[anon]",
				 m->deleted ? " (deleted)" : "");
			l->locked = m->locked;
		}
	}
	smaps_free(&sm);
	p->driver_est = dev_rss + (has_dev ? shm_rss : 0);
}

/* The processes of @a's cgroup: the collector's rows (proc_row_read()), RLIMIT_MEMLOCK, smaps. */
static int collect(struct audit_cg *a)
{
	pid_t *pids;
	int n = memcg_pids(&a->cg, a->recursive, &pids);

	if (n < 0)
		return n;
	a->procs = calloc(n ? n : 1, sizeof(*a->procs));
	if (!a->procs) {
		free(pids);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct audit_proc *p = &a->procs[a->n];

		if (proc_row_read(pids[i], 0, &p->row, NULL)) {
			memset(p, 0, sizeof(*p));
			continue;	/* gone, or no address space */
		}
		p->has_rl = !prlimit(p->row.pid, RLIMIT_MEMLOCK, NULL, &p->rl);
		scan_smaps(p);
		a->n++;
	}
	free(pids);
	sum_procs(a);
	return 0;
}

static uint64_t cg_limit(const struct memcg *cg, enum limit_kind k)
{
	char path[PATH_MAX + 64], *buf;
	const char *f = limit_file(cg->version, k);
	uint64_t v = 0;
	bool unl = true;

	if (!f)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", cg->path, f);
	if (read_file(path, &buf, 4096) < 0)
		return 0;
	if (parse_limit_value(buf, &v, &unl))
		unl = true;
	free(buf);
	return unl ? 0 : v;
}

/* a cap for @a: "PCT%" of MemTotal or (--of-limit) of the cgroup's limit */
static int resolve_cap(const struct audit_opts *o, const char *s, const struct audit_cg *a,
		       uint64_t *out)
{
	uint64_t base = o->of_limit && a->limit ? a->limit : mem_total_bytes();

	*out = 0;
	if (!s)
		return 0;
	return parse_size(s, base, out);
}

/* Pinned bytes: mlocked + pinned_vm + DMA pins (when known; metrics_pinned_sum()). */
static uint64_t proc_pinned(const struct audit_proc *p)
{
	return p->row.m.pinned;
}

static uint64_t cg_pinned(const struct audit_cg *a)
{
	return a->tot.pinned;
}

static void judge(const struct audit_opts *o, struct audit_cg *a)
{
	a->limit = cg_limit(&a->cg, LIMIT_MAX);
	a->high = a->cg.version == 2 ? cg_limit(&a->cg, LIMIT_HIGH) : 0;
	resolve_cap(o, o->pinned_cap, a, &a->cap);
	resolve_cap(o, o->proc_cap, a, &a->proc_cap);
	a->over = o->pinned_cap && cg_pinned(a) > a->cap;
	for (size_t i = 0; i < a->n; i++) {
		struct audit_proc *p = &a->procs[i];

		p->over = o->proc_cap && proc_pinned(p) > a->proc_cap;
		if (p->over)
			a->over = true;
	}
}

static void foll_pin(uint64_t *acq, uint64_t *rel)
{
	char *buf, *l;

	*acq = *rel = 0;
	if (read_file("/proc/vmstat", &buf, 1 << 20) < 0)
		return;
	if ((l = strstr(buf, "nr_foll_pin_acquired ")))
		sscanf(l + 21, "%" SCNu64, acq);
	if ((l = strstr(buf, "nr_foll_pin_released ")))
		sscanf(l + 21, "%" SCNu64, rel);
	free(buf);
}

static const char *rl_str(char *b, size_t len, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(b, len, "unlimited");
	else
		fmt_bytes(b, len, v);
	return b;
}

/*
 * The host's pinned figures (stat_refresh first: audit runs as root) as a
 * report's host part; attributed: the audited processes' pinned_vm and, with
 * --watch, their DMA pins. 0 or negative errno.
 */
static int audit_host(const struct audit_cg *as, int n, const struct audit_opts *o,
		      struct report *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	err = hostpin_read(&r->host, true);
	if (err)
		return err;
	r->has_host = true;
	r->dma_attribution = r->host.known;
	for (int i = 0; i < n; i++) {
		r->dma_attributed += as[i].tot.pinned_vm + as[i].tot.dma_pinned;
		if (!as[i].dma_known)
			r->dma_attribution = false;
	}
	return 0;
}

/* The processes that pin the most, at most HOST_TOP, largest first. */
static int top_pinners(const struct audit_cg *as, int n, const struct audit_proc **top)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < as[i].n; j++) {
			const struct audit_proc *p = &as[i].procs[j];
			int at = k < HOST_TOP ? k : HOST_TOP - 1;

			if (!proc_pinned(p) || (k == HOST_TOP && proc_pinned(p) <= proc_pinned(top[at])))
				continue;
			while (at > 0 && proc_pinned(top[at - 1]) < proc_pinned(p)) {
				top[at] = top[at - 1];
				at--;
			}
			top[at] = p;
			if (k < HOST_TOP)
				k++;
		}
	return k;
}

/*
 * --host PCT: the host's FOLL_PIN pages (every DMA pin, io_uring and RDMA
 * buffers included) against PCT of MemTotal. True when over; the figures
 * in *@h (may be NULL) and *@cap.
 */
static bool host_check(const struct audit_opts *o, struct hostpin *h, uint64_t *cap)
{
	*cap = 0;
	if (!o->host_cap || hostpin_read(h, true) || !h->known)
		return false;
	if (parse_size(o->host_cap, h->mem_total, cap))
		return false;
	return h->foll_pinned > *cap;
}

/* The limit @a's pinned bytes come near (>= NEAR_LIMIT_PCT), or NULL. */
static const char *near_limit(const struct audit_cg *a, uint64_t *limit)
{
	uint64_t pinned = cg_pinned(a);

	*limit = 0;
	if (a->high && pinned * 100 >= a->high * NEAR_LIMIT_PCT) {
		*limit = a->high;
		return "memory.high";
	}
	if (a->limit && pinned * 100 >= a->limit * NEAR_LIMIT_PCT) {
		*limit = a->limit;
		return a->cg.version == 2 ? "memory.max" : "memory.limit_in_bytes";
	}
	return NULL;
}

static void print_host_check(const struct audit_cg *as, int n, const struct audit_opts *o)
{
	const struct audit_proc *top[HOST_TOP];
	struct hostpin h = { 0 };
	uint64_t cap;
	bool over = host_check(o, &h, &cap);
	char b[3][16];
	int k;

	if (!o->host_cap)
		return;
	if (!h.known) {
		printf("host check (--host %s): DMA pins: unknown on this kernel (no "
		       "nr_foll_pin_* counters)\n", o->host_cap);
		return;
	}
	printf("host check (--host %s): FOLL_PIN pinned %s = %.1f%% of MemTotal %s, cap %s: %s\n",
	       o->host_cap, fmt_bytes(b[0], 16, h.foll_pinned),
	       h.mem_total ? 100.0 * h.foll_pinned / h.mem_total : 0.0,
	       fmt_bytes(b[1], 16, h.mem_total), fmt_bytes(b[2], 16, cap),
	       over ? "EXCEEDED" : "ok");
	k = top_pinners(as, n, top);
	for (int i = 0; i < k; i++) {
		const struct proc_row *r = &top[i]->row;
		char comm[64];

		report_comm(comm, sizeof(comm), r->comm);
		printf("  pins most: pid %d (%s) pinned %s (DMA %s)\n", (int)r->pid, comm,
		       fmt_bytes(b[0], 16, r->m.pinned),
		       top[i]->dma_known ? fmt_bytes(b[1], 16, r->m.dma_pinned) : "unknown");
	}
}


/* The processes of an audited cgroup: pinned ones, or all of one over its cap. */
enum { AP_PID, AP_COMM, AP_MLOCKED, AP_PINNED_VM, AP_DRIVER, AP_DMA, AP_RLIMIT, AP_NOTE, AP_NR };
static const struct table_col proc_cols[AP_NR] = {
	[AP_PID] = { "PID", "PID", 9, false, "process ID" },
	[AP_COMM] = { "COMM", "COMM", 16, true, "command name" },
	[AP_MLOCKED] = { "MLOCKED", "MLOCKED", 10, false, "mm->locked_vm (VmLck)" },
	[AP_PINNED_VM] = { "PINNED_VM", "PINNED VM", 10, false, "mm->pinned_vm (VmPin)" },
	[AP_DRIVER] = { "DRIVER_EST", "DRIVER(EST)", 11, false,
			"estimate: Rss of GPU/RDMA device mappings + their shmem buffers" },
	[AP_DMA] = { "DMA", "DMA", 10, false, "FOLL_PIN pages (~: an estimate; -: unknown)" },
	[AP_RLIMIT] = { "RLIMIT_MEMLOCK", "RLIMIT_MEMLOCK", 15, false, "soft/hard" },
	[AP_NOTE] = { "NOTE", "NOTE", 0, true, "over the per-process cap" },
};

/* The VM_LOCKED mappings of the processes of a cgroup over its cap (evidence). */
enum { LM_PID, LM_LOCKED, LM_RANGE, LM_NAME, LM_NR };
static const struct table_col locked_cols[LM_NR] = {
	[LM_PID] = { "PID", "PID", 9, false, "process ID" },
	[LM_LOCKED] = { "LOCKED", "LOCKED", 10, false, "mlocked bytes of the mapping" },
	[LM_RANGE] = { "START-END", "START-END", 28, true, "addresses" },
	[LM_NAME] = { "MAPPING", "MAPPING", 0, true, "file or [anon]" },
};

static void print_proc_table(const struct audit_cg *a)
{
	struct table_cells t;
	size_t rows = 0, nmaps = 0;
	char b[2][16];

	for (size_t j = 0; j < a->n; j++)
		nmaps += a->procs[j].nmaps;
	if (table_cells_init(&t, AP_NR, a->n, 48))
		p_warn("printing a table: %s", strerror(ENOMEM));
	for (size_t j = 0; j < a->n; j++) {
		const struct audit_proc *p = &a->procs[j];

		if (!proc_pinned(p) && !p->driver_est && !a->over)
			continue;
		snprintf(table_cell(&t, rows, AP_PID), t.cell, "%d", (int)p->row.pid);
		report_comm(table_cell(&t, rows, AP_COMM), t.cell, p->row.comm);
		table_cells_bytes(&t, rows, AP_MLOCKED, p->row.m.mlocked);
		table_cells_bytes(&t, rows, AP_PINNED_VM, p->row.m.pinned_vm);
		table_cells_bytes(&t, rows, AP_DRIVER, p->driver_est);
		if (!p->dma_known)
			snprintf(table_cell(&t, rows, AP_DMA), t.cell, "-");
		else
			snprintf(table_cell(&t, rows, AP_DMA), t.cell, "%s%s",
				 p->row.m.dma_estimate ? "~" : "",
				 fmt_bytes(b[0], 16, p->row.m.dma_pinned));
		snprintf(table_cell(&t, rows, AP_RLIMIT), t.cell, "%s/%s",
			 p->has_rl ? rl_str(b[0], 16, p->rl.rlim_cur) : "?",
			 p->has_rl ? rl_str(b[1], 16, p->rl.rlim_max) : "?");
		if (p->over)
			snprintf(table_cell(&t, rows, AP_NOTE), t.cell, "EXCEEDS per-process cap");
		rows++;
	}
	if (!rows)
		table_cells_free(&t);
	else if (table_cells_print(stdout, &t, proc_cols, rows, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
	if (!a->over || !nmaps)
		return;
	rows = 0;
	if (table_cells_init(&t, LM_NR, nmaps, 300))
		p_warn("printing a table: %s", strerror(ENOMEM));
	for (size_t j = 0; j < a->n; j++)
		for (int k = 0; k < a->procs[j].nmaps; k++, rows++) {
			const struct locked_map *m = &a->procs[j].maps[k];

			snprintf(table_cell(&t, rows, LM_PID), t.cell, "%d", a->procs[j].row.pid);
			table_cells_bytes(&t, rows, LM_LOCKED, m->locked);
			snprintf(table_cell(&t, rows, LM_RANGE), t.cell, "%s", m->range);
			snprintf(table_cell(&t, rows, LM_NAME), t.cell, "%s", m->name);
		}
	printf("  locked mappings (evidence of the crossing):\n");
	fflush(stdout);
	if (table_cells_print(stdout, &t, locked_cols, rows, false))
		p_warn("printing a table: %s", strerror(ENOMEM));
	for (size_t j = 0; j < a->n; j++) {
		const struct audit_proc *p = &a->procs[j];
		char ub[16];

		if (p->nmaps_unlisted)
			printf("  pid %d: %d more locked mapping%s (%s locked) not listed: the "
			       "first %d are\n", (int)p->row.pid, p->nmaps_unlisted,
			       p->nmaps_unlisted == 1 ? "" : "s",
			       fmt_bytes(ub, sizeof(ub), p->unlisted_locked), MAX_EVIDENCE);
	}
}

static void print_plain(struct audit_cg *as, int n, const struct audit_opts *o)
{
	uint64_t acq, rel;
	char b[6][16];

	for (int i = 0; i < n; i++) {
		struct audit_cg *a = &as[i];

		printf("cgroup %s (v%d)%s: pinned %s = mlocked %s + pinned_vm %s",
		       a->cg.path, a->cg.version, a->recursive ? " and below" : "",
		       fmt_bytes(b[0], 16, cg_pinned(a)), fmt_bytes(b[1], 16, a->tot.mlocked),
		       fmt_bytes(b[2], 16, a->tot.pinned_vm));
		if (a->dma_known)
			printf(" + DMA %s%s", fmt_bytes(b[5], 16, a->tot.dma_pinned),
			       o->watch_ns ? "" :
			       " (memacct daemon)");
		else
			printf(" + DMA unknown (no memacct daemon pinned under %s; --watch "
			       "measures it)", o->pin_dir);
		if (o->pinned_cap)
			printf(", cap %s: %s", fmt_bytes(b[3], 16, a->cap),
			       cg_pinned(a) > a->cap ? "EXCEEDED" : "ok");
		{
			uint64_t lim;
			const char *lf = near_limit(a, &lim);

			if (lf)
				printf("\n  WARNING: pinned %s is %.0f%% of %s %s: pinned pages "
				       "cannot be reclaimed nor swapped, so the cgroup stalls "
				       "(memory.high) or is OOM-killed (memory.max) before they go",
				       fmt_bytes(b[3], 16, cg_pinned(a)), 100.0 * cg_pinned(a) / lim,
				       lf, fmt_bytes(b[4], 16, lim));
		}
		printf("\n  driver-pinned (estimate: Rss of GPU/RDMA device mappings + their "
		       "shmem buffers) %s\n", fmt_bytes(b[4], 16, a->driver_est));
		print_proc_table(a);
	}
	foll_pin(&acq, &rel);
	printf("system FOLL_PIN (/proc/vmstat): acquired %" PRIu64 " released %" PRIu64
	       " in use %" PRIu64 " pages\n", acq, rel, acq - rel);
	{
		struct report r;
		char hl[320];

		char uv[512];

		if (!audit_host(as, n, o, &r)) {
			report_host_line(&r, hl, sizeof(hl));
			printf("%s\n", hl);
			print_host_budget(stdout, &r.host);
			if (report_host_verdict(&r.host, hl, sizeof(hl)))
				printf("Verdict: %s\n", hl);
			if (hostmem_uma_verdict(&r.host, uv, sizeof(uv)))
				printf("Verdict: %s\n", uv);
		}
	}
	print_host_check(as, n, o);
}

static json_t *json_u(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* "trigger": what woke a --watch pass (a BPF event or the /proc poll), and whose. */
static json_t *audit_trigger_json(const struct trigger *t)
{
	json_t *tj = json_object();

	json_object_set_new(tj, "source", json_string(t->bpf ? "bpf" : "proc"));
	if (t->pid) {
		json_object_set_new(tj, "pid", json_integer(t->pid));
		json_object_set_new(tj, "comm", json_string_sanitized(t->comm));
		json_object_set_new(tj, "mlocked_bytes", json_u(t->locked));
		json_object_set_new(tj, "pinned_vm_bytes", json_u(t->pinned_vm));
		json_object_set_new(tj, "dma_pinned_bytes", json_u(t->dma));
	}
	if (t->syscall)
		json_object_set_new(tj, "syscall", json_string(t->syscall));
	return tj;
}

/* "pinned_near_limit": the cgroup limit its pinned bytes come near, or null. */
static json_t *audit_near_limit_json(const struct audit_cg *a)
{
	uint64_t lim;
	const char *lf = near_limit(a, &lim);
	json_t *nl = json_null();

	if (lf) {
		nl = json_object();
		json_object_set_new(nl, "limit", json_string(lf));
		json_object_set_new(nl, "limit_bytes", json_u(lim));
		json_object_set_new(nl, "pinned_bytes", json_u(cg_pinned(a)));
	}
	return nl;
}

/* One process of a cgroup: its pinned figures, RLIMIT_MEMLOCK, locked mappings. */
static json_t *audit_proc_json(const struct audit_cg *a, const struct audit_proc *p)
{
	json_t *pj = json_object(), *ms = json_array();

	json_object_set_new(pj, "pid", json_integer(p->row.pid));
	json_object_set_new(pj, "comm", json_string_sanitized(p->row.comm));
	json_object_set_new(pj, "mlocked_bytes", json_u(p->row.m.mlocked));
	json_object_set_new(pj, "pinned_vm_bytes", json_u(p->row.m.pinned_vm));
	json_object_set_new(pj, "pinned_bytes", json_u(proc_pinned(p)));
	json_object_set_new(pj, "dma_pinned_bytes",
			    a->dma_known ? json_u(p->row.m.dma_pinned) : json_null());
	json_object_set_new(pj, "dma_pinned_estimate", json_boolean(p->row.m.dma_estimate));
	json_object_set_new(pj, "driver_pinned_estimate_bytes", json_u(p->driver_est));
	if (p->has_rl) {
		json_object_set_new(pj, "rlimit_memlock_cur",
			p->rl.rlim_cur == RLIM_INFINITY ? json_null() : json_u(p->rl.rlim_cur));
		json_object_set_new(pj, "rlimit_memlock_max",
			p->rl.rlim_max == RLIM_INFINITY ? json_null() : json_u(p->rl.rlim_max));
	}
	json_object_set_new(pj, "exceeded", json_boolean(p->over));
	for (int k = 0; k < p->nmaps; k++) {
		json_t *m = json_object();

		json_object_set_new(m, "range", json_string(p->maps[k].range));
		json_object_set_new(m, "name", json_string_sanitized(p->maps[k].name));
		json_object_set_new(m, "locked_bytes", json_u(p->maps[k].locked));
		json_array_append_new(ms, m);
	}
	json_object_set_new(pj, "locked_mappings", ms);
	json_object_set_new(pj, "locked_mappings_unlisted", json_u(p->nmaps_unlisted));
	json_object_set_new(pj, "locked_mappings_unlisted_bytes", json_u(p->unlisted_locked));
	return pj;
}

/* One audited cgroup: its pinned figures, limits and caps, its processes. */
static json_t *audit_cg_json(struct audit_cg *a, const struct audit_opts *o)
{
	json_t *c = json_object(), *ps = json_array();

	json_object_set_new(c, "path", json_string_sanitized(a->cg.path));
	json_object_set_new(c, "id", json_u(a->cg.id));
	json_object_set_new(c, "version", json_integer(a->cg.version));
	json_object_set_new(c, "recursive", json_boolean(a->recursive));
	json_object_set_new(c, "mlocked_bytes", json_u(a->tot.mlocked));
	json_object_set_new(c, "pinned_vm_bytes", json_u(a->tot.pinned_vm));
	json_object_set_new(c, "pinned_bytes", json_u(cg_pinned(a)));
	json_object_set_new(c, "dma_pinned_bytes",
			    a->dma_known ? json_u(a->tot.dma_pinned) : json_null());
	json_object_set_new(c, "dma_pinned_source", json_string(o->watch_ns ? "watch" :
			    a->dma_known ? "daemon" : "none"));
	json_object_set_new(c, "memory_high_bytes", json_u(a->high));
	json_object_set_new(c, "pinned_near_limit", audit_near_limit_json(a));
	json_object_set_new(c, "driver_pinned_estimate_bytes", json_u(a->driver_est));
	json_object_set_new(c, "memory_limit_bytes", json_u(a->limit));
	if (o->pinned_cap)
		json_object_set_new(c, "pinned_cap_bytes", json_u(a->cap));
	if (o->proc_cap)
		json_object_set_new(c, "per_process_cap_bytes", json_u(a->proc_cap));
	json_object_set_new(c, "exceeded", json_boolean(a->over));
	for (size_t j = 0; j < a->n; j++)
		json_array_append_new(ps, audit_proc_json(a, &a->procs[j]));
	json_object_set_new(c, "processes", ps);
	return c;
}

/* "host_check" (--host-cap): the host's FOLL_PIN pages against the cap, top pinners. */
static json_t *audit_host_check_json(struct audit_cg *as, int n, const struct audit_opts *o)
{
	const struct audit_proc *top[HOST_TOP];
	json_t *hc = json_object(), *tj = json_array();
	struct hostpin h = { 0 };
	uint64_t cap;
	bool hover = host_check(o, &h, &cap);
	int k = top_pinners(as, n, top);

	json_object_set_new(hc, "cap_bytes", h.known ? json_u(cap) : json_null());
	json_object_set_new(hc, "foll_pinned_bytes", h.known ? json_u(h.foll_pinned) : json_null());
	json_object_set_new(hc, "exceeded", json_boolean(hover));
	for (int i = 0; i < k; i++) {
		json_t *pj = json_object();

		json_object_set_new(pj, "pid", json_integer(top[i]->row.pid));
		json_object_set_new(pj, "comm", json_string_sanitized(top[i]->row.comm));
		json_object_set_new(pj, "pinned_bytes", json_u(proc_pinned(top[i])));
		json_object_set_new(pj, "dma_pinned_bytes", top[i]->dma_known ?
				    json_u(top[i]->row.m.dma_pinned) : json_null());
		json_array_append_new(tj, pj);
	}
	json_object_set_new(hc, "top", tj);
	return hc;
}

static void print_json(struct audit_cg *as, int n, const struct audit_opts *o, bool over,
		       const struct trigger *t)
{
	json_t *root = json_object(), *cgs = json_array(), *fp = json_object();
	uint64_t acq, rel;

	json_object_set_new(root, "schema", json_string("memacct.audit/v1"));
	json_object_set_new(root, "command", json_string("audit"));
	json_object_set_new(root, "verdict", json_string(over ? "exceeded" : "ok"));
	if (t)
		json_object_set_new(root, "trigger", audit_trigger_json(t));
	for (int i = 0; i < n; i++)
		json_array_append_new(cgs, audit_cg_json(&as[i], o));
	json_object_set_new(root, "cgroups", cgs);
	foll_pin(&acq, &rel);
	json_object_set_new(fp, "nr_foll_pin_acquired", json_u(acq));
	json_object_set_new(fp, "nr_foll_pin_released", json_u(rel));
	json_object_set_new(root, "foll_pin_pages", fp);
	{
		struct report r;

		if (!audit_host(as, n, o, &r))
			json_object_set_new(root, "host", report_host_json(&r));
	}
	if (o->host_cap)
		json_object_set_new(root, "host_check", audit_host_check_json(as, n, o));
	json_dumpf(root, stdout, JSON_COMPACT);
	putchar('\n');
	fflush(stdout);
	json_decref(root);
}

/* ---- --enforce-rlimit / --restore-rlimit -------------------------- */

static void enforce(struct audit_cg *as, int n)
{
	FILE *log;

	if (mkdir(LIMITS_STATE_DIR, 0700) && errno != EEXIST)
		return;
	log = fopen(RLIMIT_LOG, "ae");
	for (int i = 0; i < n; i++) {
		for (size_t j = 0; j < as[i].n; j++) {
			struct audit_proc *p = &as[i].procs[j];
			pid_t pid = p->row.pid;
			/* never below what it holds */
			uint64_t want = p->row.m.mlocked + p->row.m.pinned_vm;
			struct rlimit nl;
			struct proc_stat ps;
			char b1[16], b2[16], b3[16], comm[64];

			if (as[i].proc_cap && as[i].proc_cap > want)
				want = as[i].proc_cap;
			if (!p->has_rl || (p->rl.rlim_cur != RLIM_INFINITY && p->rl.rlim_cur <= want))
				continue;
			nl.rlim_cur = want;
			nl.rlim_max = p->rl.rlim_max;
			if (read_stat(pid, &ps) || prlimit(pid, RLIMIT_MEMLOCK, &nl, NULL)) {
				p_warn("enforce: prlimit(%d, RLIMIT_MEMLOCK): %s", (int)pid,
				       strerror(errno));
				continue;
			}
			report_comm(comm, sizeof(comm), p->row.comm);
			fprintf(stderr, "memacct: enforce: pid %d (%s) RLIMIT_MEMLOCK soft %s -> %s "
				"(holds %s); undo: memacct audit --restore-rlimit\n", (int)pid,
				comm, rl_str(b1, 16, p->rl.rlim_cur), fmt_bytes(b2, 16, want),
				fmt_bytes(b3, 16, p->row.m.mlocked + p->row.m.pinned_vm));
			if (log)
				fprintf(log, "%d %" PRIu64 " %llu %llu\n", (int)pid,
					ps.starttime_ticks, (unsigned long long)p->rl.rlim_cur,
					(unsigned long long)want);
		}
	}
	if (log)
		fclose(log);
}

static int restore_rlimits(void)
{
	char *buf, *line, *save;
	int ret = EXIT_OK;

	long len = read_file(RLIMIT_LOG, &buf, 16 << 20);

	if (len == -EFBIG) {	/* never a cut log: its last lowerings would stay */
		p_err("%s: larger than 16 MiB: %s", RLIMIT_LOG, strerror(EFBIG));
		return EXIT_RUNTIME;
	}
	if (len < 0) {
		fprintf(stderr, "memacct: nothing to restore (%s)\n", RLIMIT_LOG);
		return EXIT_OK;
	}
	/* oldest first: the first lowering of a process has its original value */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, old, set;
		struct proc_stat ps;
		struct rlimit rl;
		int pid;

		if (sscanf(line, "%d %llu %llu %llu", &pid, &start, &old, &set) != 4)
			continue;
		if (read_stat(pid, &ps) || ps.starttime_ticks != start)
			continue;	/* gone, or the pid was reused */
		if (prlimit(pid, RLIMIT_MEMLOCK, NULL, &rl) || rl.rlim_cur != set)
			continue;	/* restored already, or changed by someone else */
		rl.rlim_cur = old > rl.rlim_max ? rl.rlim_max : old;
		if (prlimit(pid, RLIMIT_MEMLOCK, &rl, NULL)) {
			p_warn("restore: prlimit(%d): %s", pid, strerror(errno));
			ret = EXIT_RUNTIME;
			continue;
		}
		fprintf(stderr, "memacct: restored pid %d RLIMIT_MEMLOCK soft %llu -> %llu\n",
			pid, set, (unsigned long long)rl.rlim_cur);
	}
	free(buf);
	if (ret == EXIT_OK)
		unlink(RLIMIT_LOG);
	return ret;
}

/* ---- cgroup selection ---------------------------------------------- */

struct cg_list {
	struct audit_cg *as;
	int n, cap;
};

static int add_if_procs(const struct memcg *cg, void *ctx)
{
	struct cg_list *l = ctx;
	pid_t *pids;
	int np = memcg_pids(cg, false, &pids);

	if (np >= 0)
		free(pids);	/* also the empty array of an empty cgroup (D18) */
	if (np <= 0)
		return 0;
	if (l->n == l->cap) {
		int cap = l->cap * 2;
		struct audit_cg *n = realloc(l->as, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + l->cap, 0, (cap - l->cap) * sizeof(*n));
		l->as = n;
		l->cap = cap;
	}
	memset(&l->as[l->n], 0, sizeof(l->as[0]));
	l->as[l->n++].cg = *cg;
	return 0;
}

/*
 * Every memory cgroup that has processes of its own, through cgroup.c's
 * walker, into *@as (grown as needed, *@cap its entries). Count or -errno.
 */
static int all_cgroups(struct audit_cg **as, int *cap)
{
	struct cg_list l = { .as = *as, .cap = *cap };
	int err = memcg_walk(add_if_procs, &l);

	*as = l.as;
	*cap = l.cap;
	return err ? err : l.n;
}

/*
 * DMA pins of one-shot audits from a memacct daemon's pinned procs map
 * (the same figures its /metrics gives), net of the mlocked part of their
 * ranges as run/attach/explain show them (proc_rows_join_pins()).
 */
static void daemon_dma(struct audit_cg *a, const char *dir)
{
	if (!a->procs)
		return;
	a->dma_known = proc_rows_join_pins(dir, &a->procs[0].row, a->n, sizeof(a->procs[0]),
					   NULL, NULL) >= 0;
	sum_procs(a);
}

static int audit_once(struct audit_cg *as, int n, const struct audit_opts *o, bool print)
{
	bool over = false;

	for (int i = 0; i < n; i++) {
		free(as[i].procs);
		as[i].procs = NULL;
		as[i].n = 0;
		memset(&as[i].tot, 0, sizeof(as[i].tot));
		as[i].driver_est = 0;
		if (collect(&as[i]))
			continue;	/* removed meanwhile */
		if (o->watch_ns)
			as[i].dma_known = true;	/* watch_dma_apply() fills it */
		else
			daemon_dma(&as[i], o->pin_dir);
		for (size_t j = 0; j < as[i].n; j++)
			as[i].procs[j].dma_known = as[i].dma_known;
		judge(o, &as[i]);
		over |= as[i].over;
	}
	{
		struct hostpin h;
		uint64_t cap;

		if (host_check(o, &h, &cap))
			over = true;
	}
	if (print) {
		if (json_output)
			print_json(as, n, o, over, NULL);
		else
			print_plain(as, n, o);
	}
	return over ? EXIT_VIOLATION : EXIT_OK;
}

/* ---- --watch ------------------------------------------------------- */

#define WATCH_GONE	256	/* recent exits remembered */
#define WATCH_UNKNOWN	1024	/* ids of cgroups not audited, remembered */
#define WATCH_DMA	256	/* processes with DMA pins followed */

struct watch {
	struct audit_cg *as;
	int n;
	const struct audit_opts *o;
	bool *was;		/* as[i] was over its caps */
	int ret;
	struct watch_id {
		uint64_t id;
		int idx;
	} *ids;			/* memory cgroup id -> index in as[] */
	size_t nids;
	uint64_t unknown[WATCH_UNKNOWN];
	size_t nunknown;
	struct {
		pid_t pid;
		uint64_t start;
	} gone[WATCH_GONE];	/* exited processes: late change events ignored */
	unsigned int ngone;
	struct {
		pid_t pid;
		uint64_t bytes;
	} dma[WATCH_DMA];	/* DMA pins by process, from BPF events only
				 * (/proc has no such figure): kept across
				 * the /proc passes */
	unsigned int ndma;
};

/* Remember @ev's DMA figure for the /proc passes (watch_resync()). */
static void watch_dma_note(struct watch *w, const struct pinwatch_event *ev)
{
	unsigned int i, freei = WATCH_DMA;

	for (i = 0; i < w->ndma; i++) {
		if (w->dma[i].pid == ev->pid) {
			w->dma[i].bytes = ev->exited ? 0 : ev->dma_bytes;
			return;
		}
		if (!w->dma[i].bytes && freei == WATCH_DMA)
			freei = i;
	}
	if (ev->exited || !ev->dma_bytes)
		return;
	if (freei == WATCH_DMA && w->ndma < WATCH_DMA)
		freei = w->ndma++;
	if (freei == WATCH_DMA) {
		p_warn("audit --watch: more than %d processes with DMA pins: pid %d not followed",
		       WATCH_DMA, (int)ev->pid);
		return;
	}
	w->dma[freei].pid = ev->pid;
	w->dma[freei].bytes = ev->dma_bytes;
}

/* After a /proc pass: the DMA pins BPF reported, back on their processes. */
static void watch_dma_apply(struct watch *w)
{
	for (int i = 0; i < w->n; i++) {
		struct audit_cg *a = &w->as[i];

		for (size_t k = 0; k < a->n; k++)
			for (unsigned int j = 0; j < w->ndma; j++)
				if (w->dma[j].pid == a->procs[k].row.pid) {
					a->procs[k].row.m.dma_pinned = w->dma[j].bytes;
					metrics_pinned_sum(&a->procs[k].row.m);
				}
		sum_procs(a);
		judge(w->o, a);
	}
}

/* The ids of every audited cgroup (and, for --cgroup, of its descendants). */
static void watch_map_ids(struct watch *w)
{
	w->nids = 0;
	for (int i = 0; i < w->n; i++) {
		uint64_t *ids = NULL, one = w->as[i].cg.id;
		int k = w->as[i].recursive ? memcg_descendant_ids(&w->as[i].cg, &ids) : 0;
		struct watch_id *nw;

		if (k <= 0) {
			free(ids);
			ids = &one;
			k = 1;
		}
		nw = realloc(w->ids, (w->nids + k) * sizeof(*nw));
		if (nw) {
			w->ids = nw;
			for (int j = 0; j < k; j++)
				w->ids[w->nids++] = (struct watch_id){ ids[j], i };
		}
		if (ids != &one)
			free(ids);
	}
}

/*
 * Index in as[] of the audited cgroup that holds memory cgroup @id, or -1.
 * An unknown id may be a cgroup made since the last walk: walk again once,
 * then remember it as not audited (ids are never reused: 64-bit kernfs ids).
 */
static int watch_cg_index(struct watch *w, uint64_t id)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < w->nids; i++)
			if (w->ids[i].id == id)
				return w->ids[i].idx;
		for (size_t i = 0; i < w->nunknown; i++)
			if (w->unknown[i] == id)
				return -1;
		if (pass == 0)
			watch_map_ids(w);
	}
	if (w->nunknown == WATCH_UNKNOWN)
		w->nunknown = 0;
	w->unknown[w->nunknown++] = id;
	return -1;
}

static int proc_find(const struct audit_cg *a, pid_t pid)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->procs[i].row.pid == pid)
			return (int)i;
	return -1;
}

/* @a's sums of its processes, by the metric table's rule of a sum of rows. */
static void sum_procs(struct audit_cg *a)
{
	memset(&a->tot, 0, sizeof(a->tot));
	a->driver_est = 0;
	for (size_t i = 0; i < a->n; i++) {
		metrics_add_row(&a->tot, &a->procs[i].row);
		a->driver_est += a->procs[i].driver_est;
	}
}

/* The process of @a that pins the most (named when a /proc pass crossed). */
static void top_proc(const struct audit_cg *a, struct trigger *t)
{
	const struct audit_proc *top = NULL;

	for (size_t i = 0; i < a->n; i++)
		if (!top || proc_pinned(&a->procs[i]) > proc_pinned(top))
			top = &a->procs[i];
	if (!top)
		return;
	t->pid = top->row.pid;
	snprintf(t->comm, sizeof(t->comm), "%s", top->row.comm);
	t->locked = top->row.m.mlocked;
	t->pinned_vm = top->row.m.pinned_vm;
	t->dma = top->row.m.dma_pinned;
}

/* Print a line (and with -j the cgroup's audit object) when as[i] crossed. */
static void watch_transition(struct watch *w, int i, const struct trigger *trig)
{
	struct audit_cg *a = &w->as[i];
	struct trigger t = *trig;
	char b1[16], b2[16], ts[16];
	FILE *out = json_output ? stderr : stdout;

	if (a->over == w->was[i])
		return;
	w->was[i] = a->over;
	if (a->over)
		w->ret = EXIT_VIOLATION;
	if (!t.bpf)
		top_proc(a, &t);
	/* with -j stdout carries only the JSON objects: the line goes to stderr */
	if (timestamps)
		fprintf(out, "%s ", fmt_time_now(ts, sizeof(ts), false));
	fprintf(out, "%s %s pinned %s", a->over ? "EXCEEDED" : "ok", a->cg.path,
	       fmt_bytes(b1, 16, cg_pinned(a)));
	if (w->o->pinned_cap)
		fprintf(out, " cap %s", fmt_bytes(b2, 16, a->cap));
	if (w->o->proc_cap)
		fprintf(out, " per-process cap %s", fmt_bytes(b2, 16, a->proc_cap));
	fprintf(out, ": %s", a->over ? "cap crossed" : "back within caps");
	if (t.pid)
		fprintf(out, "; pid %d (%s) mlocked %" PRIu64 " pinned_vm %" PRIu64 " dma %" PRIu64
			" bytes", (int)t.pid, t.comm, t.locked, t.pinned_vm, t.dma);
	if (t.bpf)
		fprintf(out, " after %s [bpf event]\n", t.syscall);
	else
		fprintf(out, " [/proc]\n");
	fflush(out);
	if (a->over && json_output) {
		/* evidence now: locked mappings of the processes that pin */
		for (size_t j = 0; j < a->n; j++) {
			struct audit_proc *p = &a->procs[j];

			if (!proc_pinned(p))
				continue;
			p->nmaps = p->nmaps_unlisted = 0;
			p->unlisted_locked = 0;
			scan_smaps(p);
			p->has_rl = !prlimit(p->row.pid, RLIMIT_MEMLOCK, NULL, &p->rl);
		}
		sum_procs(a);
		print_json(a, 1, w->o, true, &t);
	}
}

/* Re-read every audited cgroup from /proc and report crossings. */
static void watch_resync(struct watch *w)
{
	struct trigger t = { .bpf = false };

	watch_map_ids(w);	/* cgroups made or removed since */
	w->nunknown = 0;
	audit_once(w->as, w->n, w->o, false);
	watch_dma_apply(w);
	for (int i = 0; i < w->n; i++)
		watch_transition(w, i, &t);
}

static void watch_forget(struct watch *w, int i, int k, const struct trigger *t)
{
	struct audit_cg *a = &w->as[i];

	p_info("audit: pid %d (%s) %s: out of %s", (int)t->pid, t->comm, t->syscall,
	       a->cg.path);
	memmove(&a->procs[k], &a->procs[k + 1], (a->n - k - 1) * sizeof(a->procs[0]));
	a->n--;
	sum_procs(a);
	judge(w->o, a);
	watch_transition(w, i, t);
}

/* One BPF change event: update the process, re-judge its cgroup now. */
static int watch_on_event(void *ctx, const struct pinwatch_event *ev)
{
	struct watch *w = ctx;
	struct trigger t = { .bpf = true, .pid = ev->pid, .locked = ev->locked_bytes,
			     .pinned_vm = ev->pinned_vm_bytes, .dma = ev->dma_bytes,
			     .syscall = pinwatch_syscall_name(ev->syscall_nr) };
	struct audit_proc *p;
	struct audit_cg *a;
	int i, k;

	snprintf(t.comm, sizeof(t.comm), "%s", ev->comm);
	if (!ev->exited)
		p_info("audit: pid %d (%s) %s: mlocked %" PRIu64 " pinned_vm %" PRIu64
		       " bytes, memory cgroup %" PRIu64, (int)ev->pid, ev->comm, t.syscall,
		       ev->locked_bytes, ev->pinned_vm_bytes, ev->memcg_id);
	/* the two rings are read one after the other: a change may come
	 * after the exit of its process */
	for (unsigned int g = 0; g < WATCH_GONE && g < w->ngone; g++)
		if (w->gone[g].pid == ev->pid && w->gone[g].start == ev->start_boottime_ns)
			return 0;
	if (ev->exited) {
		unsigned int g = w->ngone++ % WATCH_GONE;

		watch_dma_note(w, ev);
		w->gone[g].pid = ev->pid;
		w->gone[g].start = ev->start_boottime_ns;
	}
	i = ev->exited ? -1 : watch_cg_index(w, ev->memcg_id);
	/* gone, or moved to another cgroup: out of the others' sums */
	for (int j = 0; j < w->n; j++)
		if (j != i && (k = proc_find(&w->as[j], ev->pid)) >= 0)
			watch_forget(w, j, k, &t);
	if (i < 0)
		return 0;
	a = &w->as[i];
	k = proc_find(a, ev->pid);
	if (k < 0) {
		struct audit_proc *np = realloc(a->procs, (a->n + 1) * sizeof(*np));

		if (!np)
			return 0;	/* the next /proc pass sees it */
		a->procs = np;
		k = (int)a->n++;
		memset(&a->procs[k], 0, sizeof(a->procs[k]));
		a->procs[k].row.pid = ev->pid;
		snprintf(a->procs[k].row.comm, sizeof(a->procs[k].row.comm), "%s", ev->comm);
		a->procs[k].has_rl = !prlimit(ev->pid, RLIMIT_MEMLOCK, NULL, &a->procs[k].rl);
	}
	p = &a->procs[k];
	p->row.m.mlocked = ev->locked_bytes;
	p->row.m.pinned_vm = ev->pinned_vm_bytes;
	p->row.m.dma_pinned = ev->dma_bytes;
	metrics_pinned_sum(&p->row.m);
	watch_dma_note(w, ev);
	sum_procs(a);
	judge(w->o, a);
	watch_transition(w, i, &t);
	return 0;
}

/*
 * The BPF filter: the deepest cgroup that holds every audited one (every
 * process when audit runs without --cgroup). false: no filter.
 */
static bool watch_filter(const struct audit_cg *as, int n, struct memcg *f)
{
	char lca[PATH_MAX];

	if (!n || !as[0].recursive)
		return false;
	snprintf(lca, sizeof(lca), "%s", as[0].cg.path);
	for (int i = 1; i < n; i++) {
		const char *p = as[i].cg.path;
		size_t l;

		while ((l = strlen(lca)) > 1 &&
		       !(!strncmp(p, lca, l) && (p[l] == '/' || p[l] == '\0')))
			*strrchr(lca, '/') = '\0';
	}
	return memcg_resolve(lca, f, NULL) == 0;
}

/*
 * Event-driven when the BPF side loads: every change of a process's
 * locked_vm/pinned_vm re-judges its cgroup at once, so a spike is caught
 * however short; /proc is re-read every --watch DUR as well (growth no hooked
 * syscall causes, processes moved in with memory already pinned). Without
 * BPF (not root, no BTF) it polls /proc every DUR.
 */
static int watch(struct audit_cg *as, int n, const struct audit_opts *o)
{
	struct watch w = { .as = as, .n = n, .o = o, .ret = EXIT_OK };
	struct pinwatch *pw = NULL;
	uint64_t lost = 0, next;
	struct memcg filter;
	char dur[32];
	int err;

	w.was = calloc(n ? n : 1, sizeof(bool));
	if (!w.was)
		return EXIT_RUNTIME;
	snprintf(dur, sizeof(dur), "%.3gs", o->watch_ns / 1e9);
	install_stop_handlers(0);
	err = pinwatch_open(watch_filter(as, n, &filter) ? &filter : NULL, watch_on_event, &w,
			    &pw);
	if (err)
		p_warn("audit --watch: BPF pinned-memory events unavailable (%s%s): polling "
		       "/proc every %s instead; a spike shorter than that can be missed",
		       strerror(-err), err == -EPERM ? ": needs root" : err == -ENOENT ?
		       ": kernel without BTF, or no tracefs" : "; -v shows libbpf's log", dur);
	watch_resync(&w);
	if (pw)
		fprintf(stderr, "memacct: audit --watch: BPF events on every locked_vm/pinned_vm "
			"change in %d cgroup(s); /proc re-read every %s\n", n, dur);
	next = ns_after(now_ns(), o->watch_ns);
	while (!stop_requested) {
		uint64_t now = now_ns();

		if (now >= next) {
			watch_resync(&w);
			next = ns_after(now, o->watch_ns);
			continue;
		}
		if (!pw) {
			usleep((next - now) / 1000 > 1000000 ? 1000000 : (next - now) / 1000);
			continue;
		}
		err = pinwatch_poll(pw, (next - now) / 1000000 >= 1000 ? 1000 :
				    (int)((next - now) / 1000000) + 1);
		if (err < 0 && err != -EINTR) {
			p_err("audit --watch: reading BPF events: %s", strerror(-err));
			w.ret = EXIT_RUNTIME;
			break;
		}
		if (pinwatch_lost(pw) != lost) {
			p_warn("audit --watch: %" PRIu64 " pinned-memory event(s) lost (ring buffer "
			       "full): re-reading /proc", pinwatch_lost(pw) - lost);
			lost = pinwatch_lost(pw);
			watch_resync(&w);
		}
	}
	pinwatch_close(pw);
	free(w.ids);
	free(w.was);
	return w.ret;
}

/* --cgroup @arg resolved into @as[*@n], audited with its subtree; 0 or the exit code. */
static int add_cgroup(const char *arg, struct audit_cg *as, int *n)
{
	int err;

	if (*n >= MAX_CGROUPS) {
		p_err("at most %d --cgroup", MAX_CGROUPS);
		return EXIT_USAGE;
	}
	err = memcg_resolve(arg, &as[*n].cg, stderr);
	if (err) {
		p_err("no memory cgroup '%s': %s", arg,
		      err == -ENOTUNIQ ? "ambiguous, give one of the paths above" :
		      strerror(-err));
		return memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
	}
	as[(*n)++].recursive = true;
	return 0;
}

/*
 * The options into @o, and each --cgroup resolved into @as (at most
 * MAX_CGROUPS; *@n of them); 0, -1 after the help, or the exit code after
 * an error. Left long: a flat case per option.
 */
static int parse_args(int argc, char **argv, struct audit_cg *as, int *n,
		      struct audit_opts *o)
{
	enum { O_PCAP = 0x300, O_PPCAP, O_OFLIM, O_WATCH, O_ENF, O_REST, O_HOST, O_PIN };
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pinned-cap", required_argument, NULL, O_PCAP },
		{ "per-process-cap", required_argument, NULL, O_PPCAP },
		{ "of-limit", no_argument, NULL, O_OFLIM },
		{ "watch", required_argument, NULL, O_WATCH },
		{ "enforce-rlimit", no_argument, NULL, O_ENF },
		{ "restore-rlimit", no_argument, NULL, O_REST },
		{ "host", required_argument, NULL, O_HOST },
		{ "pin-path", required_argument, NULL, O_PIN },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t tmp;
	int c, err;

	while ((c = getopt_long(argc, argv, ":c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			err = add_cgroup(optarg, as, n);
			if (err)
				return err;
			break;
		case O_PCAP:
		case O_PPCAP:
			if (parse_size(optarg, mem_total_bytes(), &tmp)) {
				p_err("bad %s '%s' (examples: 32M, 4GiB, 10%%)",
				      c == O_PCAP ? "--pinned-cap" : "--per-process-cap", optarg);
				return EXIT_USAGE;
			}
			if (c == O_PCAP)
				o->pinned_cap = optarg;
			else
				o->proc_cap = optarg;
			break;
		case O_OFLIM:
			o->of_limit = true;
			break;
		case O_HOST:
			if (!strchr(optarg, '%') || parse_size(optarg, mem_total_bytes(), &tmp)) {
				p_err("bad --host '%s': a percentage of MemTotal (examples: 10%%, "
				      "12.5%%)", optarg);
				return EXIT_USAGE;
			}
			o->host_cap = optarg;
			break;
		case O_PIN:
			o->pin_dir = optarg;
			break;
		case O_WATCH:
			if (parse_duration(optarg, &o->watch_ns) || !o->watch_ns) {
				p_err("bad --watch '%s' (examples: 500ms, 2s)", optarg);
				return EXIT_USAGE;
			}
			break;
		case O_ENF:
			o->enforce = true;
			break;
		case O_REST:
			o->restore = true;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			audit_usage(stdout);
			return -1;
		default:
			return opt_error("audit", c, argv);
		}
	}
	if (optind != argc) {
		p_err("audit: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->enforce && !*n && !o->restore) {
		p_err("--enforce-rlimit needs --cgroup: it only acts on audited cgroups");
		return EXIT_USAGE;
	}
	return 0;
}

int do_audit(int argc, char **argv)
{
	int cap = MAX_CGROUPS;
	struct audit_cg *as = calloc(cap, sizeof(*as));
	struct audit_opts o = { .pin_dir = PIN_DEFAULT_DIR };
	int n = 0, ret;

	if (!as)
		return EXIT_RUNTIME;
	ret = parse_args(argc, argv, as, &n, &o);
	if (ret) {
		ret = ret < 0 ? EXIT_OK : ret;
		goto out;
	}
	if (o.restore) {
		ret = restore_rlimits();
		goto out;
	}
	if (!n) {
		n = all_cgroups(&as, &cap);
		if (n < 0) {
			p_err("no memory cgroup hierarchy: %s", strerror(-n));
			ret = EXIT_ENV;
			goto out;
		}
	}
	if (o.watch_ns) {
		ret = watch(as, n, &o);
		goto out;
	}
	ret = audit_once(as, n, &o, true);
	if (o.enforce)
		enforce(as, n);
out:
	for (int i = 0; i < cap && as; i++)
		free(as[i].procs);
	free(as);
	return ret;
}
