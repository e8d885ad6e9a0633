// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * session.c - the collector: BPF records (flows, peaks, exit records) joined
 * with the kernel's own stocks. Sources, per metric:
 *   live process stocks   /proc/PID/status (VmRSS, RssAnon, RssFile,
 *                         RssShmem, VmHWM, VmLck, VmPin)
 *   exited process stocks the exit record (mm->rss_stat, signal->maxrss,
 *                         mm->locked_vm, mm->pinned_vm at sched_process_exit)
 *   faults                /proc/PID/stat minflt/majflt, or signal->min_flt
 *                         at exit, minus the value at session start
 *   flows                 BPF procs map (tracepoints, since attach)
 *   cgroup stocks         memory.stat, memory.usage_in_bytes/current, peaks
 *   remote NUMA           several nodes only: /proc/PID/numa_maps and the
 *                         home node (numa.h) sampled at the polls, once a
 *                         second; cgroup: memory.numa_stat
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_loader.h"
#include "dma_ranges.h"
#include "fill.h"
#include "metric_table.h"
#include "memacct.skel.h"
#include "hostpin.h"
#include "memlimits.h"
#include "oom.h"
#include "pin.h"
#include "proc.h"
#include "records.h"
#include "session.h"
#include "snapshot.h"
#include "smaps.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

struct fault_base {
	pid_t pid;
	uint64_t start_ticks;
	uint64_t minflt, majflt;
};

/* Remote-NUMA samples of one process (several nodes only). */
struct numa_sample {
	pid_t pid;
	uint64_t start_ticks;
	uint64_t remote;		/* last sample */
	bool has_peak;
	struct numa_brief peak;		/* the sample with the most remote bytes */
};

#define NUMA_SAMPLE_NS 1000000000ULL

struct dma_overlap {
	pid_t pid;
	uint64_t start_ns;
	uint64_t bytes;		/* DMA-pinned bytes in VM_LOCKED mappings */
	bool unknown;		/* pins without a known range too */
};

static uint64_t pages(const struct session *s, uint64_t n)
{
	return n * (uint64_t)s->page_size;
}

static struct dma_overlap *dma_ov_find(const struct session *s, pid_t pid, uint64_t start_ns)
{
	for (size_t i = 0; i < s->ndma_ov; i++)
		if (s->dma_ov[i].pid == pid && s->dma_ov[i].start_ns == start_ns)
			return &s->dma_ov[i];
	return NULL;
}

static void dma_ov_note(struct session *s, pid_t pid, uint64_t start_ns, uint64_t bytes,
			bool unknown)
{
	struct dma_overlap *o = dma_ov_find(s, pid, start_ns);

	if (!o) {
		o = array_grow(&s->dma_ov, s->ndma_ov, &s->cap_dma_ov, sizeof(*o));
		if (!o)
			return;	/* the exit record is then flagged an estimate */
		s->ndma_ov++;
		o->pid = pid;
		o->start_ns = start_ns;
	}
	o->bytes = bytes;
	o->unknown = unknown;
}

static int note_dma_overlap(const struct memacct_proc_key *key, const struct memacct_proc *p,
			    void *ctx)
{
	bool unknown;
	uint64_t ov;

	if ((p->flags & MEMACCT_PROC_EXITED) || !p->pin.dma_pinned_pages ||
	    !p->pin.locked_vm_pages)
		return 0;
	ov = dma_locked_overlap(key->tgid, p, &unknown);
	dma_ov_note(ctx, key->tgid, key->start_boottime_ns, ov, unknown);
	return 0;
}

/* Live processes with DMA pins and mlocked memory: their overlap now. */
static void sample_dma_overlap(struct session *s)
{
	if (!__atomic_load_n(&s->skel->bss->dma_attributed_pages, __ATOMIC_RELAXED))
		return;
	procs_map_each(bpf_map__fd(s->skel->maps.procs), note_dma_overlap, s);
}

/* The DMA figures of a live row net of its mlocked part. */
static void dma_net_of_mlock(struct session *s, const struct memacct_proc *p,
			     struct proc_row *row)
{
	bool unknown;
	uint64_t ov;

	if (!p->pin.dma_pinned_pages || !row->m.mlocked)
		return;
	ov = dma_locked_overlap(row->pid, p, &unknown);
	dma_ov_note(s, row->pid, row->start_boottime_ns, ov, unknown);
	if (unknown)
		row->m.dma_estimate = true;	/* may overlap mlocked memory */
	row->dma_locked = ov < row->m.dma_pinned ? ov : row->m.dma_pinned;
	metrics_dma_net(&row->m, ov);
}

/* The fault baseline of a process alive at start, or NULL. */
static const struct fault_base *base_of(const struct session *s, pid_t pid,
					uint64_t start_ns)
{
	for (size_t i = 0; i < s->nbase; i++)
		if (s->base[i].pid == pid &&
		    proc_start_matches(start_ns, s->base[i].start_ticks))
			return &s->base[i];
	return NULL;
}

/* @m's faults since the session started: less those of its baseline, if any. */
static void faults_since_start(const struct session *s, pid_t pid, uint64_t start_ns,
			       struct metrics *m)
{
	const struct fault_base *b = base_of(s, pid, start_ns);

	if (b) {
		m->page_faults -= b->minflt + b->majflt;
		m->major_faults -= b->majflt;
	}
}

static void row_from_exit(const struct session *s, const struct memacct_proc_key *key,
			  const struct memacct_proc *p, struct proc_row *row)
{
	memset(row, 0, sizeof(*row));
	row->pid = key->tgid;
	row->ppid = p->ppid;
	memcpy(row->comm, p->comm, MEMACCT_COMM_LEN);
	row->comm[MEMACCT_COMM_LEN] = '\0';
	row->exited = true;
	row->exit_code = p->exit_code;
	row->start_boottime_ns = key->start_boottime_ns;
	metrics_from_proc_record(&row->m, p, s->page_size);
	metrics_from_exit_record(&row->m, p, s->page_size);
	if (row->m.dma_pinned && row->m.mlocked) {
		/* its mappings are gone: the overlap last seen alive */
		const struct dma_overlap *o = dma_ov_find(s, key->tgid, key->start_boottime_ns);

		if (!o || o->unknown)
			row->m.dma_estimate = true;
		metrics_dma_net(&row->m, o ? o->bytes : 0);
	}
	metrics_pinned_totals(&row->m);
	faults_since_start(s, key->tgid, key->start_boottime_ns, &row->m);
}

static int cmp_rss_peak_desc(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	return x->m.rss_peak < y->m.rss_peak ? 1 : x->m.rss_peak > y->m.rss_peak ? -1 : 0;
}

static const struct proc_row *exited_row(const struct session *s, pid_t pid, uint64_t start_ns)
{
	for (size_t i = 0; i < s->nexited; i++)
		if (s->exited[i].pid == pid && s->exited[i].start_boottime_ns == start_ns)
			return &s->exited[i];
	return NULL;
}

/* The CoW slots of exited rows folded away, dropped with them. */
static void cow_exited_prune(struct session *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->ncowx; i++)
		if (exited_row(s, s->cowx[i].pid, s->cowx[i].start_ns))
			s->cowx[n++] = s->cowx[i];
	s->ncowx = n;
}

/*
 * Keep the SESSION_EXITED_ROWS exited rows of largest RSS peak; fold the
 * flows of the others into s->exited_folded (reliability audit D8: 20,000
 * short-lived processes were all kept and printed in every report).
 * Amortized: runs once per SESSION_EXITED_ROWS new exits.
 */
static void fold_exited(struct session *s)
{
	qsort(s->exited, s->nexited, sizeof(*s->exited), cmp_rss_peak_desc);
	for (size_t i = SESSION_EXITED_ROWS; i < s->nexited; i++) {
		metrics_add_flows(&s->exited_folded, &s->exited[i].m);
		s->exited_folded.page_faults += s->exited[i].m.page_faults;
		s->exited_folded.major_faults += s->exited[i].m.major_faults;
	}
	s->nexited_folded += s->nexited - SESSION_EXITED_ROWS;
	s->nexited = SESSION_EXITED_ROWS;
	cow_exited_prune(s);
}

static int add_exited(struct session *s, const struct memacct_proc_key *key,
		      const struct memacct_proc *p)
{
	struct proc_row *row;

	if (s->nexited >= 2 * SESSION_EXITED_ROWS)
		fold_exited(s);
	row = array_grow(&s->exited, s->nexited, &s->cap_exited, sizeof(*row));
	if (!row)
		return -ENOMEM;
	s->nexited++;
	row_from_exit(s, key, p, row);
	return 0;
}

/*
 * An exited process's CoW slots (the kernel keeps them past its exit for
 * this reader), kept with its row and deleted from the map; its mappings
 * read from its parent now if not yet (the process's own are gone).
 */
static int take_cow_exited(struct session *s, const struct memacct_proc_key *key, pid_t ppid)
{
	int fd = bpf_map__fd(s->skel->maps.cow_maps);
	struct memacct_cow_maps cm;
	struct cowm_exited *x;

	if (bpf_map_lookup_elem(fd, key, &cm))
		return 0;
	bpf_map_delete_elem(fd, key);
	if (!cowm_any(&cm))
		return 0;
	if (cowm_catalog_note(&s->cowm, key->tgid, ppid, &cm) == -ENOMEM)
		return -ENOMEM;
	x = array_grow(&s->cowx, s->ncowx, &s->cap_cowx, sizeof(*x));
	if (!x)
		return -ENOMEM;
	s->ncowx++;
	x->pid = key->tgid;
	x->ppid = ppid;
	x->start_ns = key->start_boottime_ns;
	x->cm = cm;
	return 0;
}

static int on_exit_event(void *ctx, void *data, size_t len)
{
	const struct memacct_exit_event *ev = data;
	int err;

	if (len < sizeof(*ev))
		return 0;
	err = add_exited(ctx, &ev->key, &ev->proc);
	return err ? err : take_cow_exited(ctx, &ev->key, ev->proc.ppid);
}

/*
 * Stocks of a live process from /proc (proc_row_read()), its faults since
 * the session started; false if it is gone or not @start_ns.
 */
static bool row_from_proc(const struct session *s, pid_t pid, uint64_t start_ns,
			  struct proc_row *row)
{
	uint64_t ticks;

	if (proc_row_read(pid, start_ns, row, &ticks))
		return false;
	if (!start_ns)	/* no BPF key: its start from /proc */
		start_ns = ticks * (1000000000ULL / sysconf(_SC_CLK_TCK));
	faults_since_start(s, pid, start_ns, &row->m);
	return true;
}

static void sample_peaks(struct session *s, const struct memcg_stat *st)
{
	s->anon_peak = max_u64(s->anon_peak, st->anon);
	s->file_peak = max_u64(s->file_peak, st->file);
	s->shmem_peak = max_u64(s->shmem_peak, st->shmem);
	s->reclaimable_peak = max_u64(s->reclaimable_peak, memcg_reclaimable(st));
	s->usage_peak = max_u64(s->usage_peak, st->has_peak ? st->peak : st->usage);
}

static struct numa_sample *numa_sample_find(struct session *s, pid_t pid, uint64_t start_ticks)
{
	for (size_t i = 0; i < s->nnuma; i++)
		if (s->numa[i].pid == pid && s->numa[i].start_ticks == start_ticks)
			return &s->numa[i];
	return NULL;
}

/* numa_maps and home node of @pid now, folded into its sample; NULL if gone. */
static struct numa_sample *numa_sample_take(struct session *s, pid_t pid)
{
	struct numa_sample *sm;
	struct numa_usage u;
	struct proc_stat ps;

	if (read_stat(pid, &ps) < 0 || ps.state == 'Z' ||
	    numa_proc_usage(&s->topo, pid, &u, NULL) < 0)
		return NULL;
	sm = numa_sample_find(s, pid, ps.starttime_ticks);
	if (!sm) {
		sm = array_grow(&s->numa, s->nnuma, &s->cap_numa, sizeof(*sm));
		if (!sm)
			return NULL;
		s->nnuma++;
		memset(sm, 0, sizeof(*sm));
		sm->pid = pid;
		sm->start_ticks = ps.starttime_ticks;
	}
	sm->remote = u.remote;
	if (!sm->has_peak || u.remote > sm->peak.remote) {
		numa_brief_of(&u, &sm->peak);
		sm->has_peak = true;
	}
	return sm;
}

static void sample_numa(struct session *s)
{
	struct numa_usage u;
	pid_t *pids = NULL;
	int n = memcg_pids(&s->cg, true, &pids);

	for (int i = 0; i < n; i++)
		numa_sample_take(s, pids[i]);
	free(pids);
	if (!memcg_numa_usage(&s->topo, &s->cg, &u))
		s->cg_remote_peak = max_u64(s->cg_remote_peak, u.remote);
}

/* A report row's remote figures: a live process sampled now, an exited one
 * from its last sample. */
static void row_numa(struct session *s, struct proc_row *row)
{
	struct numa_sample *sm = NULL;

	if (!row->exited) {
		sm = numa_sample_take(s, row->pid);
		if (sm && row->start_boottime_ns &&
		    !proc_start_matches(row->start_boottime_ns, sm->start_ticks))
			sm = NULL;
	} else {
		for (size_t i = 0; i < s->nnuma && !sm; i++)
			if (s->numa[i].pid == row->pid &&
			    proc_start_matches(row->start_boottime_ns, s->numa[i].start_ticks))
				sm = &s->numa[i];
	}
	if (!sm)
		return;
	row->m.remote_numa = sm->remote;
	row->m.remote_numa_peak = sm->has_peak ? sm->peak.remote : sm->remote;
	row->has_numa_peak = sm->has_peak;
	row->numa_peak = sm->peak;
}

/*
 * One sample of the subtree's processes for the OOM post-mortems (oom.h):
 * those with a BPF record (every process that ran since attach), stocks
 * from /proc/PID/status, flows and DMA pins from the record. At most
 * OOM_SAMPLE_MAX processes, once a second while oom_near(): ~13 ms for
 * 1,024 processes (2 cores, 6.18). The live records past them are counted
 * (a lookup each, no /proc read): the post-mortem's processes_unsampled.
 */
#define OOM_SAMPLE_MAX 1024
/* sample_oom()'s sample, filled record by record */
struct oom_sampling {
	const struct session *s;
	struct oom_proc *a;
	size_t n, unsampled;
};

static int oom_sample_proc(const struct memacct_proc_key *key, const struct memacct_proc *p,
			   void *ctx)
{
	struct oom_sampling *os = ctx;
	struct oom_proc *o = &os->a[os->n];
	struct proc_status st;

	if (p->flags & MEMACCT_PROC_EXITED)
		return 0;
	if (os->n == OOM_SAMPLE_MAX) {
		os->unsampled++;
		return 0;
	}
	if (read_status(key->tgid, &st) < 0 || !st.has_mm)
		return 0;
	o->pid = key->tgid;
	o->start_ns = key->start_boottime_ns;
	o->memcg_id = p->memcg_id;
	memcpy(o->comm, p->comm, MEMACCT_COMM_LEN);
	metrics_from_proc_record(&o->m, p, os->s->page_size);
	metrics_from_proc_status(&o->m, &st);
	metrics_pinned_sum(&o->m);
	os->n++;
	return 0;
}

static void sample_oom(struct session *s)
{
	struct oom_sampling os = { .s = s, .a = calloc(OOM_SAMPLE_MAX, sizeof(*os.a)) };
	uint64_t t = boot_now_ns();
	struct oom_proc *fit;

	if (!os.a)
		return;
	procs_map_each(bpf_map__fd(s->skel->maps.procs), oom_sample_proc, &os);
	fit = realloc(os.a, (os.n ? os.n : 1) * sizeof(*os.a));
	oom_hist_push(&s->oom_hist, t, fit ? fit : os.a, os.n, os.unsampled);
}

/* The fault figures this session's kernel side does not measure
 * (metric_fault_mask()): null in every report, never a 0. */
static uint64_t session_unmeasured(const struct session *s)
{
	return metric_fault_mask(loader_fault_hook == LOADER_FAULT_NONE,
				 s->skel->rodata->nr_node_ranges > 0);
}

/*
 * Whether the OOM forecast saw @k coming: the last warning about its
 * limited memcg (a host-wide kill: about the host) made before it (a warning made after the kill, from the
 * same samples, is no forecast).
 */
static void oom_forecast_of(const struct session *s, struct oom_kill *k)
{
	for (size_t i = s->nwarnings; i-- > 0;) {
		const struct oom_warning *w = &s->warnings[i];

		if (w->time > k->time || w->host_wide == k->has_limit ||
		    (k->has_limit && strcmp(w->cgroup, k->limit_cgroup)))
			continue;
		k->forecast = true;
		k->forecast_before_s = k->time - w->time;
		k->forecast_eta_s = w->e.eta_s;
		snprintf(k->forecast_class, sizeof(k->forecast_class), "%s",
			 fc_class_name(w->e.grows));
		return;
	}
}

/* An OOM kill's record: its post-mortem made now, while the memcg's page
 * cache and shmem are as they were (its victim's anon goes in ~20 ms). */
static int on_oom_event(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;
	const struct memacct_oom_event *ev = data;
	struct oom_kill *k;

	if (len < sizeof(*ev))
		return 0;
	if (s->nooms >= SESSION_OOM_KILLS) {
		s->ooms_unlisted++;
		return 0;
	}
	if (!s->ooms) {
		s->ooms = calloc(SESSION_OOM_KILLS, sizeof(*s->ooms));
		if (!s->ooms) {
			s->ooms_unlisted++;
			return 0;
		}
	}
	/* pid only (before 6.7): the kill of a process outside the subtree
	 * is another session's (the BPF side could not filter it) */
	if (!(ev->flags & MEMACCT_OOM_TASK)) {
		uint64_t *ids = NULL;
		int n = memcg_descendant_ids(&s->cg, &ids);
		bool mine = false;

		for (int i = 0; i < n && !mine; i++)
			mine = ids[i] == ev->memcg_id;
		free(ids);
		if (!mine)
			return 0;
	}
	k = &s->ooms[s->nooms];
	oom_from_event(k, ev, s->page_size, session_unmeasured(s));
	sample_oom(s);	/* the others as they are now, ~0.1 s after the kill */
	s->oom_sampled_ns = now_ns();
	oom_explain(k, &s->oom_hist, OOM_GREW_WINDOW_NS);
	oom_forecast_of(s, k);
	s->nooms++;
	return 0;
}

static int take_baseline(struct session *s)
{
	pid_t *pids = NULL;
	int n = memcg_pids(&s->cg, true, &pids);

	if (n < 0)
		return n;
	s->base = calloc(n ? n : 1, sizeof(*s->base));
	if (!s->base) {
		free(pids);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct proc_stat ps;

		if (read_stat(pids[i], &ps) < 0)
			continue;
		s->base[s->nbase++] = (struct fault_base){
			.pid = pids[i], .start_ticks = ps.starttime_ticks,
			.minflt = ps.minflt, .majflt = ps.majflt,
		};
	}
	free(pids);
	if (!memcg_read_stat(&s->cg, &s->cg_base))
		sample_peaks(s, &s->cg_base);
	return 0;
}

int session_oom_seen(const struct session *s, uint64_t cgid, uint64_t events)
{
	int fd = bpf_map__fd(s->skel->maps.memcg_oom_seen);

	if (bpf_map_update_elem(fd, &cgid, &events, BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * The OOM limit walk's counts (bpf/oom.bpf.c memcg_oom_seen) of @s's cgroup,
 * its ancestors and the cgroups below it (attach to a job whose children
 * exist: a child near its own limit was named for the job's limit), made
 * before the load: v2's memory.events.local; v1 has no such file (run seeds
 * its own new cgroup, session_oom_seen()).
 */
static void seed_oom_seen(struct session *s)
{
	char root[PATH_MAX], path[PATH_MAX], *slash;
	struct memcg m = s->cg;
	uint64_t n;
	int version;

	if (m.version != 2 || memcg_root(root, &version))
		return;
	loader_oom_seen_seed(s->skel, &s->cg);	/* the cgroup and those below */
	snprintf(path, sizeof(path), "%s", m.path);
	while (m.level > 1) {	/* its ancestors below the root */
		slash = strrchr(path, '/');
		if (!slash)
			break;
		*slash = '\0';
		if (memcg_of_path(root, version, path, &m))
			break;
		if (!memcg_read_local_ooms(&m, &n))
			session_oom_seen(s, m.id, n);
	}
}

int session_start(struct session *s, const struct memcg *cg)
{
	struct loader_opts o = { .filter_cgid = cg->id, .filter_level = cg->level,
				 .fallback_cgid = cg->id };
	int err;

	memset(s, 0, sizeof(*s));
	s->cg = *cg;
	s->page_size = sysconf(_SC_PAGESIZE);
	s->numa_multi = loader_numa_nodes() > 1;
	if (s->numa_multi && numa_topo_read(&s->topo)) {
		p_warn("reading the NUMA topology failed: remote-NUMA stocks not sampled");
		s->numa_multi = false;
	}
	/* the root cgroup holds every process: no filter */
	if (cg->level == 0)
		o.filter_cgid = 0;
	err = loader_start(&o, &s->skel);
	if (err)
		return err;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.exits), on_exit_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		p_err("creating the ring buffer: %s", strerror(-err));
		goto out_stop;
	}
	if (ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.oom_events), on_oom_event, s)) {
		err = -errno;
		p_err("adding the OOM ring buffer: %s", strerror(-err));
		goto out_rb;
	}
	s->t0_ns = now_ns();
	s->foll_known = !hostpin_foll_counters(&s->foll_acquired0, &s->foll_released0);
	s->foll_pinned_peak = s->foll_known && s->foll_acquired0 > s->foll_released0 ?
			      s->foll_acquired0 - s->foll_released0 : 0;
	err = take_baseline(s);
	if (err) {
		p_err("reading %s: %s", s->cg.path, strerror(-err));
		goto out_rb;
	}
	seed_oom_seen(s);
	return 0;

out_rb:
	ring_buffer__free(s->rb);
out_stop:
	loader_stop(s->skel);
	return err;
}

/* The host's FOLL_PIN bytes outstanding now, into their peak. */
static void sample_foll_pinned(struct session *s)
{
	uint64_t acq, rel;

	if (s->foll_known && !hostpin_foll_counters(&acq, &rel) && acq > rel)
		s->foll_pinned_peak = max_u64(s->foll_pinned_peak, acq - rel);
}

static bool id_in(const uint64_t *ids, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * The kernel's records of a subtree, as one read saw them whole
 * (records_read(), shared with the daemon's collect.c): the rows and the
 * totals of a report come from the same read.
 */
struct subtree {
	const uint64_t *ids;		/* its cgroups */
	int nids;
	/* its flows as the kernel keeps them: the records of its cgroups
	 * (processes' flows folded at their exit, in the kernel, and those
	 * the full procs map had no record for: bpf/records.bpf.h
	 * flows_get()) plus the records of its live processes. Not the sum
	 * of the report's rows: a process that exits between reads, or whose
	 * exit record the full ring could not take, is in these whatever
	 * happens */
	struct memacct_flows flows;
	struct memacct_pinned *cg_pins;	/* its cgroups' pinned sums (@nids room) */
	size_t ncg_pins;
	struct proc_rec {		/* its live processes' records */
		struct memacct_proc_key key;
		struct memacct_proc p;
	} *procs;
	size_t nprocs, cap;
	bool torn;			/* a move overlapped the read (records.h) */
	volatile struct memacct_bpf__bss *bss;	/* the counters' */
};

static int subtree_cgroup(void *ctx, uint64_t id, const struct memacct_cgroup *c)
{
	struct subtree *st = ctx;

	(void)id;	/* one of st->ids: records_read() looked these up */
	flows_add(&st->flows, &c->f);
	st->cg_pins[st->ncg_pins++] = c->pin;
	return 0;
}

static int subtree_proc(const struct memacct_proc_key *key, const struct memacct_proc *p,
			void *ctx)
{
	struct subtree *st = ctx;
	struct proc_rec *rec;

	if ((p->flags & MEMACCT_PROC_EXITED) || !id_in(st->ids, st->nids, p->memcg_id))
		return 0;	/* exiting (its row comes from the ring), or not in it */
	flows_add(&st->flows, &p->f);
	rec = array_grow(&st->procs, st->nprocs, &st->cap, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	st->nprocs++;
	rec->key = *key;
	rec->p = *p;
	return 0;
}

static void subtree_restart(void *ctx)
{
	struct subtree *st = ctx;

	memset(&st->flows, 0, sizeof(st->flows));
	st->ncg_pins = st->nprocs = 0;
}

/* records_read()'s counters: the session's own BPF .bss. */
static int skel_counters(void *ctx, struct pin_counters *c)
{
	volatile struct memacct_bpf__bss *bss = ((struct subtree *)ctx)->bss;

	memset(c, 0, sizeof(*c));
	c->flow_moves_end = __atomic_load_n(&bss->flow_moves_end, __ATOMIC_ACQUIRE);
	c->exit_folds_end = __atomic_load_n(&bss->exit_folds_end, __ATOMIC_ACQUIRE);
	c->flow_moves_begin = __atomic_load_n(&bss->flow_moves_begin, __ATOMIC_ACQUIRE);
	c->exit_folds_begin = __atomic_load_n(&bss->exit_folds_begin, __ATOMIC_ACQUIRE);
	return 0;
}

/* The subtree @ids's records into @st (subtree_free()); 0 or -ENOMEM. */
static int subtree_read(struct session *s, const uint64_t *ids, int nids, struct subtree *st)
{
	struct pin_counters counters;
	struct records_reader rd = {
		.cgroups_fd = bpf_map__fd(s->skel->maps.cgroups),
		.procs_fd = bpf_map__fd(s->skel->maps.procs),
		.counters = skel_counters, .cgroup = subtree_cgroup, .proc = subtree_proc,
		.restart = subtree_restart, .ctx = st,
	};
	int err;

	memset(st, 0, sizeof(*st));
	st->ids = ids;
	st->nids = nids;
	st->bss = s->skel->bss;
	st->cg_pins = calloc(nids ? nids : 1, sizeof(*st->cg_pins));
	if (!st->cg_pins)
		return -ENOMEM;
	err = records_read(&rd, ids, nids, &counters, &st->torn);
	return err == -ENOMEM ? err : 0;
}

static void subtree_free(struct subtree *st)
{
	free(st->cg_pins);
	free(st->procs);
	memset(st, 0, sizeof(*st));
}

/*
 * The cgroup's bytes copied by CoW so far and pinned now (pinned_vm and
 * DMA pins, its cgroups' records' sums) from one read of its subtree's
 * records: what names the growth within anon (oom_forecast.h fc_add()).
 * 0 and 0 when unreadable.
 */
static void forecast_flows(struct session *s, uint64_t *cow, uint64_t *pinned)
{
	struct subtree st;
	uint64_t *ids = NULL;
	int nids = memcg_descendant_ids(&s->cg, &ids);

	*cow = *pinned = 0;
	if (nids <= 0 || subtree_read(s, ids, nids, &st)) {
		free(ids);
		return;
	}
	*cow = st.flows.cow_copied_pages * (uint64_t)s->page_size;
	for (size_t i = 0; i < st.ncg_pins; i++)
		*pinned += (st.cg_pins[i].pinned_vm_pages + st.cg_pins[i].dma_pinned_pages) *
			   (uint64_t)s->page_size;
	subtree_free(&st);
	free(ids);
}

/* how often the limit a forecast is for is looked for again */
#define FC_TARGET_NS	10000000000ULL

/*
 * The limit the forecast is for, into s->fc_cg and *@limit: the smallest of
 * the cgroup's own and its ancestors' (memcg_smallest_limit(): `run` inside
 * a limited job or container has no limit of its own), else the host's
 * (s->fc_host: *@limit is read with its figures, host_stat()), looked for
 * again every FC_TARGET_NS or when it went; another one starts a new
 * window. A cgroup's limit is read each time. 0 or a negative errno.
 */
static int forecast_target(struct session *s, uint64_t *limit)
{
	struct memcg m;
	int err;

	if ((s->fc_host || (s->fc_cg.id && !memcg_limit_read(&s->fc_cg, LIMIT_MAX, limit))) &&
	    s->fc_sampled_ns - s->fc_cg_ns < FC_TARGET_NS)
		return 0;
	s->fc_cg_ns = s->fc_sampled_ns;
	err = memcg_smallest_limit(&s->cg, &m, limit);
	if (err && err != -ENOENT) {
		s->fc_cg.id = 0;
		s->fc_host = false;
		return err;
	}
	if (err)
		m.id = 0;
	if (m.id != s->fc_cg.id || !m.id != s->fc_host) {
		if (m.id)
			s->fc_cg = m;
		s->fc_cg.id = m.id;
		s->fc_host = !m.id;
		memset(&s->fc, 0, sizeof(s->fc));
		s->fc_warned = false;
	}
	return 0;
}

/* The host's figures as a limited cgroup's, against MemTotal in *@limit
 * (oom_forecast.h fc_host_stat()); 0 or a negative errno. */
static int host_stat(struct memcg_stat *st, uint64_t *limit)
{
	struct hm_fields f;
	struct hostmem m;
	char *text = NULL;
	int err = read_file("/proc/meminfo", &text, 1 << 16) < 0 ? -EIO : parse_meminfo(text, &f);

	free(text);
	if (err)
		return err;
	hostmem_from_fields(&m, &f, 0, true);
	*limit = f.v[HM_MEM_TOTAL] * 1024;
	return fc_host_stat(&m, *limit, st);
}

/*
 * The forecast of the limit that binds the cgroup, from @st (the cgroup's
 * memory.stat, read now; an ancestor's is read here): a warning
 * recorded when it falls below s->oom_warn_s, once until the growth stopped
 * or its time rose past twice the threshold.
 */
static void sample_forecast(struct session *s, const struct memcg_stat *st)
{
	const struct oom_sample *newest;
	struct fc_estimate e;
	uint64_t limit, cow, pinned;
	struct memcg_stat above;
	struct oom_warning *w;
	struct timespec rt;
	int err;

	if (s->oom_warn_s <= 0 || now_ns() - s->fc_sampled_ns < OOM_SAMPLE_NS)
		return;
	s->fc_sampled_ns = now_ns();
	if (forecast_target(s, &limit))
		return;		/* unreadable: nothing to reach */
	if (s->fc_host ? host_stat(&above, &limit) :
	    s->fc_cg.id != s->cg.id && memcg_read_stat(&s->fc_cg, &above))
		return;
	if (s->fc_host || s->fc_cg.id != s->cg.id)
		st = &above;
	forecast_flows(s, &cow, &pinned);
	fc_add(&s->fc, s->fc_sampled_ns, st, cow, pinned);
	err = fc_estimate(&s->fc, limit, &e);
	if (err == -EAGAIN)
		return;
	if (err || e.eta_s > 2 * s->oom_warn_s) {
		s->fc_warned = false;
		return;
	}
	if (e.eta_s >= s->oom_warn_s || s->fc_warned)
		return;
	s->fc_warned = true;
	if (s->nwarnings >= SESSION_OOM_WARNINGS) {
		s->warnings_unlisted++;
		return;
	}
	if (!s->warnings && !(s->warnings = calloc(SESSION_OOM_WARNINGS, sizeof(*s->warnings)))) {
		s->warnings_unlisted++;
		return;
	}
	w = &s->warnings[s->nwarnings++];
	clock_gettime(CLOCK_REALTIME, &rt);
	w->time = rt.tv_sec + rt.tv_nsec / 1e9;
	w->t_s = (double)(s->fc_sampled_ns - s->t0_ns) / 1e9;
	w->e = e;
	snprintf(w->cgroup, sizeof(w->cgroup), "%s", s->fc_host ? "/" : s->fc_cg.rel);
	w->host_wide = s->fc_host;
	/* the processes are sampled once a second only while oom_near() */
	newest = oom_sample_before(&s->oom_hist, UINT64_MAX);
	if (!newest || boot_now_ns() - newest->boot_ns > 2 * OOM_SAMPLE_NS)
		sample_oom(s);
	fc_top_process(&s->oom_hist, w);
}

/*
 * The mappings of the copies made since the last sample (cow_maps.h): the
 * cow_maps records (processes that copied, this session's filter), each
 * with its procs record's parent, into the catalog. A record whose process
 * has no procs record left has exited: its exit record is read first (it
 * takes the slots); what is left after that lost its exit record (the ring
 * was full) and is deleted. Once a second.
 */
static void sample_cow_maps(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.cow_maps), pfd = bpf_map__fd(s->skel->maps.procs);
	struct memacct_proc_key key, next, *prev = NULL;
	struct memacct_cow_maps cm;
	struct memacct_proc p;
	bool consumed = false;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(pfd, &key, &p)) {
			if (!consumed) {
				ring_buffer__consume(s->rb);
				consumed = true;
			}
			/* still there: no exit record came (it took them) */
			bpf_map_delete_elem(fd, &key);
			continue;
		}
		if (bpf_map_lookup_elem(fd, &key, &cm))
			continue;
		if (cowm_catalog_note(&s->cowm, key.tgid, p.ppid, &cm) == -ENOMEM)
			return;
	}
}

/* processes whose maps and fds sample_page_cache() reads at most: a job's,
 * not a host's (attach or top at the root: the end's one walk names them) */
#define PAGE_CACHE_WALK_PIDS	256

/*
 * The paths by which the subtree's processes hold the largest files of its
 * page cache (page_cache_remember()): a job that deletes its files or exits
 * before the end still has them named.
 */
static void sample_page_cache(struct session *s)
{
	struct page_cache_query q = { .by_peak = true };
	struct page_cache_files pc;
	pid_t *pids = NULL;
	int n;

	if (page_cache_read(bpf_map__fd(s->skel->maps.page_cache), s->page_size, &q, &pc))
		return;
	n = pc.n ? memcg_pids(&s->cg, true, &pids) : 0;
	if (n > 0 && n <= PAGE_CACHE_WALK_PIDS)
		page_cache_remember(&s->pc_paths, &pc, pids, (size_t)n);
	free(pids);
	page_cache_free(&pc);
}

int session_poll(struct session *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);
	struct memcg_stat st;

	if (now_ns() - s->sampled_ns >= 250000000ULL) {
		s->sampled_ns = now_ns();
		if (!memcg_read_stat(&s->cg, &st)) {
			sample_peaks(s, &st);
			sample_forecast(s, &st);
		}
		sample_foll_pinned(s);
	}
	if (now_ns() - s->dma_sampled_ns >= NUMA_SAMPLE_NS) {
		s->dma_sampled_ns = now_ns();
		sample_dma_overlap(s);
	}
	if (now_ns() - s->cowm_sampled_ns >= NUMA_SAMPLE_NS) {
		s->cowm_sampled_ns = now_ns();
		sample_cow_maps(s);
	}
	if (now_ns() - s->pc_sampled_ns >= NUMA_SAMPLE_NS) {
		s->pc_sampled_ns = now_ns();
		sample_page_cache(s);
	}
	if (s->numa_multi && now_ns() - s->numa_sampled_ns >= NUMA_SAMPLE_NS) {
		s->numa_sampled_ns = now_ns();
		sample_numa(s);
	}
	if (now_ns() - s->oom_sampled_ns >= OOM_SAMPLE_NS) {
		s->oom_sampled_ns = now_ns();
		if (oom_near(&s->cg))
			sample_oom(s);
	}

	return n < 0 && n != -EINTR ? n : 0;
}

static bool pid_in(const struct report *r, pid_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && !r->procs[i].exited)
			return true;
	return false;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exited - y->exited;
}

/*
 * The rows' part of the totals, by the metric table's rule of a sum of rows
 * (metrics_sum_rows()): the live processes' RSS, mlocked and pinned_vm
 * into r->totals; every row's faults (and those of exited processes folded
 * without a row) and the live ones' DMA-pinned bytes that are also
 * mlocked, for the caller, with their DMA estimate flag.
 */
static void rows_into_totals(struct report *r, uint64_t *faults, uint64_t *majflt,
			     uint64_t *dma_locked)
{
	struct metrics *t = &r->totals, rows;

	metrics_sum_rows(&rows, r->procs, r->nprocs);
	t->rss_sum = rows.rss_sum;
	t->mlocked = rows.mlocked;
	t->pinned_vm = rows.pinned_vm;
	*faults = rows.page_faults + r->exited_folded.page_faults;
	*majflt = rows.major_faults + r->exited_folded.major_faults;
	for (size_t i = 0; i < r->nprocs; i++)
		if (!r->procs[i].exited) {
			*dma_locked += r->procs[i].dma_locked;
			t->dma_estimate |= r->procs[i].m.dma_estimate;
		}
}

/*
 * Pinned peaks and DMA pins of the cgroups @ids, kept by BPF at every
 * pinned change, into @t; DMA-pinned bytes also mlocked (@dma_locked) are
 * taken out, counted once.
 */
static void cgroup_pins(struct session *s, struct metrics *t, const struct subtree *st,
			uint64_t dma_locked)
{
	for (size_t i = 0; i < st->ncg_pins; i++)
		metrics_add_cgroup_pins(t, &st->cg_pins[i], s->page_size);
	metrics_dma_net(t, dma_locked);
}

/*
 * Cgroup totals: stocks from the kernel's memcg files, flows from the
 * kernel's records (@st), never lower than last reported.
 */
static void cgroup_totals(struct session *s, struct report *r, const struct subtree *st)
{
	struct metrics *t = &r->totals;
	uint64_t dma_locked = 0, rows_faults, rows_majflt;
	struct memcg_stat ms;

	memset(t, 0, sizeof(*t));
	metrics_from_bpf_flows(t, &st->flows, s->page_size);
	if (st->torn)	/* a move overlapped the read: as last reported */
		metrics_hold_bpf_flows(t, &s->last_flows);
	metrics_clamp_flows(t, &s->last_flows);
	s->last_flows = *t;
	rows_into_totals(r, &rows_faults, &rows_majflt, &dma_locked);
	t->page_faults = rows_faults;	/* the cgroup gone: its processes' */
	t->major_faults = rows_majflt;
	cgroup_pins(s, t, st, dma_locked);
	metrics_pinned_totals(t);
	if (s->numa_multi) {
		struct numa_usage u;

		if (!memcg_numa_usage(&s->topo, &s->cg, &u)) {
			t->remote_numa = u.remote;
			s->cg_remote_peak = max_u64(s->cg_remote_peak, u.remote);
		}
		t->remote_numa_peak = s->cg_remote_peak;
	}
	if (!memcg_read_stat(&s->cg, &ms)) {	/* else gone: flows and the peaks seen */
		metrics_from_memcg_stat(t, &ms);
		s->usage_peak = max_u64(s->usage_peak, ms.has_peak ? ms.peak : ms.usage);
		sample_peaks(s, &ms);
		/* memcg event counters are flushed lazily (rstat, every
		 * ~2 s): a short run's memory.stat may not show its faults
		 * yet. The rows' own counters (/proc/PID/stat, signal->min_flt
		 * at exit) are a floor. OOM kills: at least BPF's count */
		metrics_from_memcg_events(t, &ms, &s->cg_base);
		t->page_faults = max_u64(t->page_faults, rows_faults);
		t->major_faults = max_u64(t->major_faults, rows_majflt);
	}
	/* peaks sampled while the cgroup lived: kept once it is gone (D15) */
	t->rss_peak = s->usage_peak;
	t->anon_peak = s->anon_peak;
	t->file_peak = s->file_peak;
	t->shmem_peak = s->shmem_peak;
	t->reclaimable_peak = s->reclaimable_peak;
}

static int push_row(const struct session *s, struct report *r, size_t *cap,
		    const struct proc_row *row)
{
	struct proc_row *to;

	if (s->exclude_pid > 0 && row->pid == s->exclude_pid)
		return 0;
	to = array_grow(&r->procs, r->nprocs, cap, sizeof(*to));
	if (!to)
		return -ENOMEM;
	r->nprocs++;
	*to = *row;
	return 0;
}

/*
 * Rows of the subtree's live processes that have a record (@st). A record
 * with MEMACCT_PROC_EXITED is an exit in progress: its row comes from the
 * ring (the kernel deletes the record right after; when the ring was full,
 * only that row is missing, its flows are in the totals: st->flows).
 */
static int scan_procs(struct session *s, struct report *r, size_t *cap, const struct subtree *st)
{
	for (size_t i = 0; i < st->nprocs; i++) {
		const struct memacct_proc_key *key = &st->procs[i].key;
		const struct memacct_proc *p = &st->procs[i].p;
		struct proc_row row;
		int err;

		memset(&row, 0, sizeof(row));
		metrics_from_proc_record(&row.m, p, s->page_size);
		if (!row_from_proc(s, key->tgid, key->start_boottime_ns, &row))
			continue;	/* exiting now: its record is on the way */
		row.start_boottime_ns = key->start_boottime_ns;
		dma_net_of_mlock(s, p, &row);
		metrics_pinned_totals(&row.m);
		err = push_row(s, r, cap, &row);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The host's pinned figures (per-CPU diffs folded first: run and attach run
 * as root) and what this session attributes: DMA pins of every process it
 * watched (BPF) plus pinned_vm of the report's live processes. The host's
 * pins since start (cumulative counters less their values at start) and
 * their sampled peak, whether or not a window saw them.
 */
static void session_host(struct session *s, struct report *r)
{
	const struct hostpin *h = &r->host;
	uint64_t vm = 0;

	if (hostpin_read(&r->host, true) < 0)
		return;
	r->has_host = true;
	r->dma_windows = s->skel->rodata->dma_windows_on;
	r->foll_since = s->foll_known && h->known;
	if (r->foll_since) {
		s->foll_pinned_peak = max_u64(s->foll_pinned_peak, h->foll_pinned);
		/* cumulative: lower only if the start's read was later per CPU */
		r->foll_acquired_since = h->foll_acquired > s->foll_acquired0 ?
					 h->foll_acquired - s->foll_acquired0 : 0;
		r->foll_released_since = h->foll_released > s->foll_released0 ?
					 h->foll_released - s->foll_released0 : 0;
		r->foll_pinned_peak = s->foll_pinned_peak;
	}
	r->dma_attribution = r->host.known &&
			     !__atomic_load_n(&s->skel->bss->dma_unreadable, __ATOMIC_RELAXED);
	for (size_t i = 0; i < r->nprocs; i++)
		if (!r->procs[i].exited)
			vm += r->procs[i].m.pinned_vm;
	r->dma_attributed = vm + pages(s, __atomic_load_n(&s->skel->bss->dma_attributed_pages,
							  __ATOMIC_RELAXED));
}

/*
 * The OOM kills so far into @r (a copy), their victims' rows marked and
 * given the stocks at the kill (at exit the OOM reaper may have taken its
 * anon already), the forecasts' warnings, and the cgroup's own limit.
 */
static int report_ooms(struct session *s, struct report *r)
{
	uint64_t lim;

	r->has_limit = !memcg_limit_read(&s->cg, LIMIT_MAX, &lim);
	r->limit_bytes = r->has_limit ? lim : 0;
	r->ooms_unlisted = s->ooms_unlisted;
	r->oom_warnings_unlisted = s->warnings_unlisted;
	if (s->nwarnings) {
		r->oom_warnings = json_array();
		for (size_t i = 0; i < s->nwarnings; i++)
			json_array_append_new(r->oom_warnings, oom_warning_json(&s->warnings[i]));
	}
	if (!s->nooms)
		return 0;
	r->ooms = malloc(s->nooms * sizeof(*r->ooms));
	if (!r->ooms)
		return -ENOMEM;
	memcpy(r->ooms, s->ooms, s->nooms * sizeof(*r->ooms));
	r->nooms = s->nooms;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc_row *row = &r->procs[i];

		for (size_t j = 0; j < r->nooms; j++) {
			const struct oom_kill *k = &r->ooms[j];
			struct metrics *m = &row->m;

			if (k->pid != row->pid || (k->victim.start_ns && row->start_boottime_ns &&
						   k->victim.start_ns != row->start_boottime_ns))
				continue;
			row->oom_killed = true;
			if (!(k->flags & MEMACCT_OOM_MM))
				break;
			m->anon = k->victim.m.anon;
			m->file = k->victim.m.file;
			m->shmem = k->victim.m.shmem;
			m->rss = k->victim.m.rss;
			m->rss_peak = m->rss_peak > m->rss ? m->rss_peak : m->rss;
			m->unknown &= ~(MBIT(M_RSS) | MBIT(M_ANON) | MBIT(M_FILE) | MBIT(M_SHMEM));
			break;
		}
	}
	return 0;
}

/*
 * Each row's copied mappings into r->cowm (cow_maps.h): a live process's
 * slots read now (its mappings noted first), an exited one's from its exit
 * record. Paths copied: the report owns them.
 */
static int session_cow_rows(struct session *s, struct report *r)
{
	int fd = bpf_map__fd(s->skel->maps.cow_maps);
	struct memacct_cow_maps cm;
	size_t cap = r->ncowm;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc_row *row = &r->procs[i];
		const struct memacct_cow_maps *from = NULL;
		struct memacct_proc_key key = { .tgid = (__u32)row->pid,
						.start_boottime_ns = row->start_boottime_ns };
		struct cow_mapping *out;
		size_t n;

		if (!row->exited) {
			if (row->start_boottime_ns && !bpf_map_lookup_elem(fd, &key, &cm)) {
				from = &cm;
				if (cowm_catalog_note(&s->cowm, row->pid, row->ppid, &cm) == -ENOMEM)
					return -ENOMEM;
			}
		} else {
			for (size_t j = 0; j < s->ncowx && !from; j++)
				if (s->cowx[j].pid == row->pid &&
				    s->cowx[j].start_ns == row->start_boottime_ns)
					from = &s->cowx[j].cm;
		}
		if (!from || !cowm_any(from))
			continue;
		if (r->ncowm + MEMACCT_COW_MAPS > cap) {
			size_t nc = 2 * (r->ncowm + MEMACCT_COW_MAPS);
			struct cow_mapping *nv = realloc(r->cowm, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			r->cowm = nv;
			cap = nc;
		}
		out = &r->cowm[r->ncowm];
		n = cowm_rows(&s->cowm, row->pid, row->ppid, from, s->page_size, out);
		for (size_t j = 0; j < n; j++)
			if (out[j].path && !(out[j].path = strdup(out[j].path))) {
				while (j--)
					free((char *)out[j].path);
				return -ENOMEM;
			}
		row->cowm_first = (uint32_t)r->ncowm;
		row->cowm_n = (uint32_t)n;
		r->ncowm += n;
	}
	return 0;
}

/*
 * The report's rows: the subtree's live processes with a record (@st),
 * those with none yet (no event since attach), and the exited ones kept;
 * sorted by PID, with their NUMA figures. 0 or -ENOMEM.
 */
static int session_rows(struct session *s, struct report *r, const struct subtree *st)
{
	pid_t *pids = NULL;
	size_t cap = 0;
	int npids, err;

	err = scan_procs(s, r, &cap, st);
	npids = err ? 0 : memcg_pids(&s->cg, true, &pids);
	for (int i = 0; i < npids && !err; i++) {
		struct proc_row row = { 0 };

		if (!pid_in(r, pids[i]) && row_from_proc(s, pids[i], 0, &row))
			err = push_row(s, r, &cap, &row);
	}
	free(pids);
	for (size_t i = 0; i < s->nexited && !err; i++)
		err = push_row(s, r, &cap, &s->exited[i]);
	if (err)
		return err;
	err = session_cow_rows(s, r);
	if (err)
		return err;
	r->has_cowm = true;
	if (r->nprocs)	/* qsort(NULL, 0) is undefined (UBSan, D18) */
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_rows);
	if (s->numa_multi)
		for (size_t i = 0; i < r->nprocs; i++)
			row_numa(s, &r->procs[i]);
	return 0;
}

/*
 * The BPF side's own counters into @r: events dropped, NVIDIA calls
 * decoded, flows lost, lockless VMA lookups, runs skipped; and the
 * classifier's figures null (never 0) without a fault hook.
 */
static void session_kernel_side(struct session *s, struct report *r)
{
	volatile struct memacct_bpf__bss *bss = s->skel->bss;
	uint64_t nf = session_unmeasured(s);
	struct memacct_flows lost;

	loader_dropped(s->skel, r->dropped);
	for (int i = 0; i < MEMACCT_NV_NR; i++)
		r->nv_calls[i] = __atomic_load_n(&bss->nv_calls[i], __ATOMIC_RELAXED);
	memcpy(&lost, (const void *)&bss->lost_flows, sizeof(lost));
	metrics_from_bpf_flows(&r->flows_lost, &lost, s->page_size);
	r->vma_lockless_lookups = __atomic_load_n(&bss->vma_lockless_lookups, __ATOMIC_RELAXED);
	r->bpf_runs_skipped = loader_runs_skipped(s->skel);
	r->dropped_events = report_dropped_total(r->dropped);
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].m.unknown |= nf;
	r->totals.unknown |= nf;
}

/*
 * The subtree's page cache by file (page_cache.h): the kernel side's
 * records (its filter keeps this subtree's memcgs only), unnamed. Left
 * unread (has_page_cache false) when the map cannot be read.
 */
static void session_page_cache(struct session *s, struct report *r)
{
	volatile struct memacct_bpf__bss *bss = s->skel->bss;
	int fd = bpf_map__fd(s->skel->maps.page_cache);
	struct page_cache_query q = { .by_peak = true };

	if (page_cache_read(fd, s->page_size, &q, &r->page_cache))
		return;
	r->has_page_cache = true;
	r->page_cache.untracked_removed = s->page_size *
		__atomic_load_n(&bss->page_cache_untracked_removes, __ATOMIC_RELAXED);
	r->page_cache.unrecorded_added = s->page_size *
		__atomic_load_n(&bss->page_cache_unrecorded_adds, __ATOMIC_RELAXED);
}

int session_report(struct session *s, struct report *r)
{
	struct subtree st = { 0 };
	uint64_t *ids = NULL;
	int nids, err;

	memset(r, 0, sizeof(*r));
	r->cg = s->cg;
	r->numa_multi = s->numa_multi;
	r->elapsed_s = (now_ns() - s->t0_ns) / 1e9;
	ring_buffer__consume(s->rb);
	dma_ranges_prune(bpf_map__fd(s->skel->maps.dma_ranges), bpf_map__fd(s->skel->maps.procs));

	nids = memcg_descendant_ids(&s->cg, &ids);
	if (nids < 0) {	/* cgroup removed: keep only the cgroup itself */
		ids = malloc(sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		ids[0] = s->cg.id;
		nids = 1;
	}
	err = subtree_read(s, ids, nids, &st);
	if (!err)
		err = session_rows(s, r, &st);
	if (err)
		goto out;
	r->nexited_folded = s->nexited_folded;
	r->exited_folded = s->exited_folded;
	err = report_ooms(s, r);
	if (err)
		goto out;
	cgroup_totals(s, r, &st);
	session_host(s, r);
	session_kernel_side(s, r);
	session_page_cache(s, r);
out:
	subtree_free(&st);
	free(ids);
	return err;
}

int session_cgroup_exited(const struct session *s, uint64_t id, struct metrics *m)
{
	struct memacct_cgroup c;

	memset(m, 0, sizeof(*m));
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.cgroups), &id, &c))
		return -ENOENT;
	metrics_from_bpf_flows(m, &c.f, s->page_size);
	return 0;
}

static void session_stop_with(struct session *s, void (*stop)(struct memacct_bpf *))
{
	ring_buffer__free(s->rb);
	stop(s->skel);
	free(s->exited);
	free(s->base);
	free(s->numa);
	free(s->dma_ov);
	free(s->ooms);
	free(s->warnings);
	free(s->cowx);
	cowm_catalog_free(&s->cowm);
	page_cache_paths_free(&s->pc_paths);
	oom_hist_free(&s->oom_hist);
	numa_topo_free(&s->topo);
	memset(s, 0, sizeof(*s));
}

void session_stop(struct session *s)
{
	session_stop_with(s, loader_stop);
}

void session_stop_detached(struct session *s)
{
	session_stop_with(s, loader_stop_detached);
}
