// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * daemon.c - `memacct daemon`: the BPF side loaded once and pinned (pin.c),
 * per-cgroup and top-N per-process metrics served over HTTP (/metrics in
 * Prometheus 0.0.4 or OpenMetrics text, /healthz) with libmicrohttpd, and a
 * JSON line per interval for log shippers. docs/daemon.md describes every
 * series. Sources:
 *   flows (cow, remote NUMA, migrations, OOM)  cgroups map (exited processes,
 *       folded by BPF at exit) + procs map (live processes)
 *   process stocks                              one iter/task pass
 *   cgroup stocks, faults                       memory.stat (hierarchical)
 * Every per-cgroup value is hierarchical (the cgroup and its descendants),
 * like memory.stat's total_* keys.
 */
#include <dirent.h>
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
#include "session.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define MAX_FILTERS	32
#define MAX_CGROUPS	100000
#define MAX_DEPTH	64

struct dopts {
	struct sockaddr_storage listen;	/* AF_INET or AF_INET6 */
	uint64_t interval_ns;
	const char *pin_path;
	const char *json_log;
	const char *filters[MAX_FILTERS];
	int nfilters;
	int top_n;
	bool bpf_stats;		/* --bpf-stats: kernel bpf_stats on while running */
	bool has_allow, has_deny;	/* --metrics-allow/--metrics-deny given */
};

/* their regexes: static, reachable until exit (no regfree() on every path) */
static regex_t metrics_allow, metrics_deny;

/* A memory cgroup seen in this collection. */
struct cgi {
	uint64_t id;
	uint64_t parent_id;
	int level;
	char *rel;		/* path below the hierarchy root ("/" for the root) */
	bool wanted;		/* passes --cgroup-filter */
	/* local (this cgroup only), then hierarchical after aggregate() */
	struct memacct_flows f;	/* BPF flows: pages and counts */
	uint64_t rss, mlocked, pinned_vm;
	uint64_t dma, dma_peak;	/* DMA pins (pages): the BPF cgroups map */
	struct memcg_stat st;
	bool st_ok;
	uint64_t remote_numa;	/* bytes off the home node (memory.numa_stat) */
	struct metrics m;	/* what is published: bytes, counters clamped */
};

/* Counters last published, per cgroup id: published values never go down. */
struct prev {
	uint64_t id;
	struct metrics m;
};

struct proc_flow {
	struct memacct_proc_key key;
	struct memacct_flows f;
	uint64_t dma;		/* DMA pins (pages), net of mlocked ranges */
	uint64_t dma_peak;
	bool dma_est;		/* MEMACCT_DMA_ESTIMATE, or maybe mlocked */
};

static volatile sig_atomic_t d_stop, d_hup;

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
	struct prev *prev;
	size_t nprev;
	uint64_t *unknown;	/* cgroups map keys missing from the last walk */
	size_t nunknown;
	double last_wall_s, last_cpu_s;
	uint64_t last_ok_ns;	/* CLOCK_MONOTONIC of the last published collection */
	uint64_t stall_ns;	/* none for that long: stalled (/healthz, watchdog) */
	bool numa_multi;	/* several nodes: memory.numa_stat read per cgroup */
	bool one_node;		/* one NUMA node: the remote-NUMA families have no samples */
	struct numa_topo topo;
	bool stats_sysctl;	/* kernel.bpf_stats_enabled = 1 (set by someone) */
};

/* ---------------------------------------------------------------- labels */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

void cgroup_path_labels(const char *path, struct cg_labels *l)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"containerd-", "libpod-" };
	const char *p, *comp, *end;

	memset(l, 0, sizeof(*l));
	/* Kubernetes: kubepods[-burstable]-pod<uid>.slice or /pod<uid>/ */
	for (p = strstr(path, "pod"); p; p = strstr(p + 1, "pod")) {
		const char *u = p + 3;
		size_t n = 0;
		bool ok = true;

		while (u[n] && u[n] != '/' && u[n] != '.' && n < 37)
			n++;
		if (n != 36)
			continue;
		for (size_t i = 0; i < 36 && ok; i++)
			ok = u[i] == '-' || u[i] == '_' || is_hex(u + i, 1);
		if (!ok)
			continue;
		for (size_t i = 0; i < 36; i++)
			l->pod_uid[i] = u[i] == '_' ? '-' : u[i];
		l->pod_uid[36] = '\0';
		break;
	}
	/* each component: container id, Slurm job */
	for (comp = path; *comp; comp = *end ? end + 1 : end) {
		size_t n;

		while (*comp == '/')
			comp++;
		end = strchr(comp, '/');
		if (!end)
			end = comp + strlen(comp);
		n = end - comp;
		if (n > 4 && !strncmp(comp, "job_", 4) && n - 4 < sizeof(l->job_id) &&
		    strspn(comp + 4, "0123456789") == n - 4) {
			memcpy(l->job_id, comp + 4, n - 4);
			l->job_id[n - 4] = '\0';
		}
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t pl = strlen(prefixes[i]);

			if (n >= pl + 64 && !strncmp(comp, prefixes[i], pl)) {
				comp += pl;
				n -= pl;
				break;
			}
		}
		if (n >= 64 && is_hex(comp, 64) &&
		    (n == 64 || !strncmp(comp + 64, ".scope", n - 64 < 7 ? n - 64 : 7))) {
			memcpy(l->container_id, comp, 64);
			l->container_id[64] = '\0';
		}
		if (!*end)
			break;
	}
}

/* ---------------------------------------------------------------- options */

static void daemon_help(FILE *f)
{
	usage_print(f, "daemon");	/* usage.c */
}

/* ---------------------------------------------------------------- signals */

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		d_hup = 1;
	else
		d_stop = sig;
}

static void install_daemon_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---------------------------------------------------------------- collection */

static int cmp_cgi(const void *a, const void *b)
{
	const struct cgi *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct cgi *cgi_find(struct cgi *v, size_t n, uint64_t id)
{
	struct cgi k = { .id = id };

	return bsearch(&k, v, n, sizeof(*v), cmp_cgi);
}

static bool filter_wants(const struct dopts *o, const char *rel)
{
	if (!o->nfilters)
		return true;
	for (int i = 0; i < o->nfilters; i++) {
		size_t n = strlen(o->filters[i]);

		if (!strcmp(o->filters[i], "/") ||
		    (!strncmp(rel, o->filters[i], n) && (rel[n] == '\0' || rel[n] == '/')))
			return true;
	}
	return false;
}

struct walk {
	struct cgi *v;
	size_t n, cap;
	const struct dopts *o;
};

static int walk_add(struct walk *w, const char *abs, const char *rel, uint64_t parent,
		    int level)
{
	struct stat st;
	struct cgi *c;

	if (stat(abs, &st))
		return -errno;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct cgi *nv;

		if (cap > MAX_CGROUPS)
			return -E2BIG;
		nv = realloc(w->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		w->v = nv;
		w->cap = cap;
	}
	c = &w->v[w->n];
	memset(c, 0, sizeof(*c));
	c->id = st.st_ino;
	c->parent_id = parent;
	c->level = level;
	c->rel = strdup(rel);
	if (!c->rel)
		return -ENOMEM;
	c->wanted = filter_wants(w->o, rel);
	w->n++;
	return 0;
}

static void walk_dir(struct walk *w, const char *abs, const char *rel, uint64_t id, int level)
{
	struct dirent *de;
	DIR *d;

	if (level >= MAX_DEPTH)
		return;
	d = opendir(abs);
	if (!d)
		return;	/* removed meanwhile */
	while ((de = readdir(d))) {
		char a[PATH_MAX], r[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(a, sizeof(a), "%s/%s", abs, de->d_name) >= (int)sizeof(a) ||
		    snprintf(r, sizeof(r), "%s/%s", level ? rel : "", de->d_name) >= (int)sizeof(r))
			continue;
		if (walk_add(w, a, r, id, level + 1))
			continue;
		walk_dir(w, a, r, w->v[w->n - 1].id, level + 1);
	}
	closedir(d);
}

#define FLOW_WORDS	(sizeof(struct memacct_flows) / sizeof(__u64))

/* @to += @f, every flow (struct memacct_flows is an array of __u64) */
static void flows_add(struct memacct_flows *to, const struct memacct_flows *f)
{
	__u64 *t = (__u64 *)to;
	const __u64 *v = (const __u64 *)f;

	for (size_t i = 0; i < FLOW_WORDS; i++)
		t[i] += v[i];
}

static int cmp_level_desc(const void *a, const void *b)
{
	const struct cgi *const *x = a, *const *y = b;

	return (*y)->level - (*x)->level;
}

/* Local values to hierarchical: each cgroup's totals added to its parent. */
static void aggregate(struct cgi *v, size_t n)
{
	struct cgi **order = malloc(n * sizeof(*order));

	if (!order)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = &v[i];
	qsort(order, n, sizeof(*order), cmp_level_desc);
	for (size_t i = 0; i < n; i++) {
		struct cgi *c = order[i], *p;

		if (!c->level || !(p = cgi_find(v, n, c->parent_id)))
			continue;
		flows_add(&p->f, &c->f);
		p->rss += c->rss;
		p->mlocked += c->mlocked;
		p->pinned_vm += c->pinned_vm;
		p->dma += c->dma;
		/* a parent's peak: a lower bound (its children's peaks were
		 * not reached at one instant) */
		if (c->dma_peak > p->dma_peak)
			p->dma_peak = c->dma_peak;
		if (p->dma > p->dma_peak)
			p->dma_peak = p->dma;
	}
	free(order);
}

/* a and b start with a struct memacct_proc_key (proc_flow, top_key) */
static int cmp_key(const void *a, const void *b)
{
	const struct memacct_proc_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->start_boottime_ns < y->start_boottime_ns ? -1 :
	       x->start_boottime_ns > y->start_boottime_ns;
}

struct top_key {
	struct memacct_proc_key key;
	size_t i;		/* index of the top process in collection.st */
};

static int push_flow(struct proc_flow **pf, size_t *cnt, size_t *cap,
		     const struct memacct_proc_key *key, const struct memacct_flows *f,
		     const struct memacct_pinned *pin, uint64_t dma_locked, bool est)
{
	if (*cnt == *cap) {
		struct proc_flow *n = realloc(*pf, 2 * *cap * sizeof(**pf));

		if (!n)
			return -ENOMEM;
		*pf = n;
		*cap *= 2;
	}
	(*pf)[*cnt].key = *key;
	(*pf)[*cnt].dma = pin->dma_pinned_pages - dma_locked;
	(*pf)[*cnt].dma_peak = pin->dma_pinned_peak_pages -
			       (dma_locked < pin->dma_pinned_peak_pages ? dma_locked :
				pin->dma_pinned_peak_pages);
	(*pf)[*cnt].dma_est = est || (pin->dma_flags & MEMACCT_DMA_ESTIMATE);
	(*pf)[(*cnt)++].f = *f;
	return 0;
}

/* Keys of exited records, deleted after the walk (see read_cgroups_map()). */
struct dead_keys {
	struct memacct_proc_key *k;
	size_t n, cap;
};

static void take_proc(struct dead_keys *dead, struct cgi *v, size_t n, struct proc_flow **pf,
		      size_t *cnt, size_t *cap, const struct memacct_proc_key *key,
		      const struct memacct_proc *p)
{
	uint64_t ov = 0;
	bool unknown = false;
	struct cgi *c;

	if (p->flags & MEMACCT_PROC_EXITED) {
		/* folded into the cgroups map at exit already */
		if (dead->n == dead->cap) {
			size_t nc = dead->cap ? 2 * dead->cap : 64;
			struct memacct_proc_key *nk = realloc(dead->k, nc * sizeof(*nk));

			if (!nk)
				return;	/* kept: a later collection deletes it */
			dead->k = nk;
			dead->cap = nc;
		}
		dead->k[dead->n++] = *key;
		return;
	}
	/* DMA pins in mlocked memory are in VmLck already: net of them, as
	 * run/attach show them (session.c), never counted twice */
	if (p->pin.dma_pinned_pages && p->pin.locked_vm_pages) {
		ov = dma_locked_overlap(key->tgid, p, &unknown) / (uint64_t)sysconf(_SC_PAGESIZE);
		if (ov > p->pin.dma_pinned_pages)
			ov = p->pin.dma_pinned_pages;
	}
	if ((c = cgi_find(v, n, p->memcg_id))) {
		flows_add(&c->f, &p->f);
		c->dma -= ov < c->dma ? ov : c->dma;
		c->dma_peak -= ov < c->dma_peak ? ov : c->dma_peak;
	}
	push_flow(pf, cnt, cap, key, &p->f, &p->pin, ov, unknown);
}

#define BATCH_N 1024

/*
 * Live processes' flows (exited records left in the map are deleted). One
 * BPF_MAP_LOOKUP_BATCH per 1,024 entries, not two syscalls per process;
 * per-key walk where the kernel lacks batch ops.
 */
static long read_procs(struct dstate *d, struct cgi *v, size_t n, struct proc_flow **out)
{
	struct memacct_proc_key key, next, *prev = NULL, *keys;
	size_t cap = 256, cnt = 0;
	struct proc_flow *pf = malloc(cap * sizeof(*pf));
	struct memacct_proc p, *vals;
	__u64 in_batch = 0, out_batch = 0;
	bool first = true, batched = false;
	struct dead_keys dead = { 0 };

	keys = malloc(BATCH_N * sizeof(*keys));
	vals = malloc(BATCH_N * sizeof(*vals));
	if (!pf || !keys || !vals)
		goto out_nomem;
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 count = BATCH_N;
		int err = bpf_map_lookup_batch(d->pin.procs_fd, first ? NULL : &in_batch,
					       &out_batch, keys, vals, &count, &opts);
		int e = errno;

		if (err && e != ENOENT)
			break;
		batched = true;
		for (__u32 i = 0; i < count; i++)
			take_proc(&dead, v, n, &pf, &cnt, &cap, &keys[i], &vals[i]);
		if (err)	/* ENOENT: that was the last batch */
			break;
		in_batch = out_batch;
		first = false;
	}
	if (!batched) {
		while (bpf_map_get_next_key(d->pin.procs_fd, prev, &next) == 0) {
			key = next;
			prev = &key;
			if (!bpf_map_lookup_elem(d->pin.procs_fd, &key, &p))
				take_proc(&dead, v, n, &pf, &cnt, &cap, &key, &p);
		}
	}
	for (size_t i = 0; i < dead.n; i++)
		bpf_map_delete_elem(d->pin.procs_fd, &dead.k[i]);
	free(dead.k);
	free(keys);
	free(vals);
	*out = pf;	/* unsorted: only the top processes' flows are looked up */
	return cnt;

out_nomem:
	free(keys);
	free(vals);
	free(pf);
	return -ENOMEM;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Exited flows per cgroup. An entry whose cgroup was missing from two walks
 * in a row belongs to a removed cgroup (the entry existed before the second
 * walk, so its cgroup would have been seen): it is deleted so that cgroup
 * churn cannot fill the map.
 */
/*
 * Add the flows of every `cgroups` map entry to its cgroup in @v; count the
 * entries. Entries of cgroups unknown for two collections in a row are
 * deleted, but only after the walk: deleting the key a
 * bpf_map_get_next_key() walk stands on makes the kernel restart it from the
 * first key (kernel/bpf/hashtab.c htab_map_get_next_key(), "key was not
 * found"), so live entries were added again (reliability audit D1).
 */
static long read_cgroups_map(struct dstate *d, struct cgi *v, size_t n)
{
	uint64_t key, next, *prev = NULL, *unknown = NULL, *stale = NULL;
	size_t nunknown = 0, cap = 0, nstale = 0, scap = 0;
	struct memacct_cgroup c;
	struct cgi *ci;
	long cnt = 0;

	while (bpf_map_get_next_key(d->pin.cgroups_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(d->pin.cgroups_fd, &key, &c))
			continue;
		cnt++;
		if ((ci = cgi_find(v, n, key))) {
			flows_add(&ci->f, &c.f);
			ci->dma = c.pin.dma_pinned_pages;
			ci->dma_peak = c.pin.dma_pinned_peak_pages;
			continue;
		}
		if (d->unknown && bsearch(&key, d->unknown, d->nunknown, sizeof(key), cmp_u64)) {
			if (nstale == scap) {
				uint64_t *ns = realloc(stale, (scap ? 2 * scap : 64) * sizeof(*ns));

				if (!ns)
					continue;	/* kept: deleted by a later collection */
				stale = ns;
				scap = scap ? 2 * scap : 64;
			}
			stale[nstale++] = key;
			continue;
		}
		if (nunknown == cap) {
			uint64_t *nu = realloc(unknown, (cap ? 2 * cap : 64) * sizeof(*nu));

			if (!nu)
				continue;
			unknown = nu;
			cap = cap ? 2 * cap : 64;
		}
		unknown[nunknown++] = key;
	}
	for (size_t i = 0; i < nstale; i++)
		if (!bpf_map_delete_elem(d->pin.cgroups_fd, &stale[i]))
			cnt--;
	free(stale);
	if (unknown)
		qsort(unknown, nunknown, sizeof(*unknown), cmp_u64);
	free(d->unknown);
	d->unknown = unknown;
	d->nunknown = nunknown;
	return cnt;
}

static int cmp_prev(const void *a, const void *b)
{
	const struct prev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t mono(uint64_t now, uint64_t before)
{
	return now > before ? now : before;
}

static uint64_t rss_of(const struct memacct_task_stock *t)
{
	return t->rss_anon_pages + t->rss_file_pages + t->rss_shmem_pages;
}

static int cmp_rss_desc(const void *a, const void *b)
{
	uint64_t rx = rss_of(a), ry = rss_of(b);

	return rx < ry ? 1 : rx > ry ? -1 : 0;
}

/* min-heap of indices into @v by RSS: the root is the smallest kept */
static void heap_down(const struct memacct_task_stock *v, long *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		long t;

		if (l < n && rss_of(&v[h[l]]) < rss_of(&v[h[m]]))
			m = l;
		if (l + 1 < n && rss_of(&v[h[l + 1]]) < rss_of(&v[h[m]]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * Put the @k largest records by RSS first, largest first, in O(n log k)
 * rather than sorting all of them; the records after the first @k are no
 * longer meaningful (their sums were taken already). Returns the count kept.
 */
static size_t top_first(struct memacct_task_stock *v, size_t n, size_t k)
{
	struct memacct_task_stock *tmp;
	long *h;

	if (k > n)
		k = n;
	if (!k)
		return 0;
	h = malloc(k * sizeof(*h));
	tmp = malloc(k * sizeof(*tmp));
	if (!h || !tmp) {
		free(h);
		free(tmp);
		qsort(v, n, sizeof(*v), cmp_rss_desc);
		return k;
	}
	for (size_t i = 0; i < k; i++)
		h[i] = i;
	for (size_t i = k / 2; i-- > 0;)
		heap_down(v, h, k, i);
	for (size_t i = k; i < n; i++)
		if (rss_of(&v[i]) > rss_of(&v[h[0]])) {
			h[0] = i;
			heap_down(v, h, k, 0);
		}
	for (size_t i = 0; i < k; i++)
		tmp[i] = v[h[i]];
	qsort(tmp, k, sizeof(*tmp), cmp_rss_desc);
	memcpy(v, tmp, k * sizeof(*tmp));
	free(tmp);
	free(h);
	return k;
}

struct collection {
	struct cgi *cg;
	size_t ncg;
	struct memacct_task_stock *st;	/* the first ntop: top by RSS, largest first */
	long nst;
	size_t ntop;
	struct proc_flow *pf;		/* unsorted */
	long npf;
	const struct memacct_flows **topf;	/* flows of st[i], i < ntop, or NULL */
	uint64_t dropped[MEMACCT_DROP_NR];
	uint64_t vma_lockless;	/* bss vma_lockless_lookups */
	long procs_used, cgroups_used;
};

static void collection_free(struct collection *c)
{
	for (size_t i = 0; i < c->ncg; i++)
		free(c->cg[i].rel);
	free(c->cg);
	free(c->st);
	free(c->pf);
	free(c->topf);
	memset(c, 0, sizeof(*c));
}

static int on_exit_record(void *ctx, void *data, size_t len)
{
	/* drained only: flows are in the cgroups map already */
	return 0;
}

static uint64_t pg(const struct dstate *d, uint64_t pages)
{
	return pages * (uint64_t)d->page_size;
}

/* The flows of a cgroup's records (reset before a read is done again). */
static void flows_zero(struct cgi *c)
{
	memset(&c->f, 0, sizeof(c->f));
}

/*
 * Flows of every cgroup: the cgroups map first, then live processes. Read
 * again, up to 3 times, while the BPF side moved flows into or between
 * records meanwhile (a process's exit, a process changing cgroup, a cgroup
 * removed: pin_flow_moves()), so that a move is seen whole or not at all: a
 * process exiting between the two reads would be in neither (a counter
 * lower for one collection, held by the clamp, but not across a restart).
 */
static void read_flows(struct dstate *d, struct collection *col)
{
	uint64_t *unknown0 = NULL, begin, end;
	size_t nunknown0 = d->nunknown;

	if (d->unknown && (unknown0 = malloc(nunknown0 * sizeof(*unknown0))))
		memcpy(unknown0, d->unknown, nunknown0 * sizeof(*unknown0));
	for (int try = 0;; try++) {
		if (pin_flow_moves(&d->pin, &begin, &end))
			begin = end = 0;
		col->cgroups_used = read_cgroups_map(d, col->cg, col->ncg);
		col->npf = read_procs(d, col->cg, col->ncg, &col->pf);
		if (col->npf < 0)
			col->npf = 0;
		if (pin_flow_moves(&d->pin, &begin, &(uint64_t){ 0 }) || begin == end ||
		    try == 3 || (d->unknown && !unknown0))
			break;
		/* again, as if the first read had not been: same unknown keys */
		for (size_t i = 0; i < col->ncg; i++)
			flows_zero(&col->cg[i]);
		free(col->pf);
		col->pf = NULL;
		free(d->unknown);
		d->unknown = unknown0 ? malloc(nunknown0 * sizeof(*unknown0)) : NULL;
		if (d->unknown)
			memcpy(d->unknown, unknown0, nunknown0 * sizeof(*unknown0));
		d->nunknown = d->unknown ? nunknown0 : 0;
	}
	free(unknown0);
}

/*
 * A flow summed over records: a cgroup a process moved into holds a
 * negative offset (u64 arithmetic wrapping below 0) that the process's own
 * flows make up; a read that still overlapped a move after the retries of
 * read_flows() can see the offset without them. That reads as 0 here, and
 * the clamp keeps what was published.
 */
static uint64_t nonneg(uint64_t v)
{
	return (int64_t)v < 0 ? 0 : v;
}

static void flows_nonneg(struct memacct_flows *f)
{
	__u64 *w = (__u64 *)f;

	for (size_t i = 0; i < FLOW_WORDS; i++)
		w[i] = nonneg(w[i]);
}

/*
 * What a cgroup publishes (docs/metrics.md; the daemon's families are the
 * rows of metric_table.h with a family): hierarchical BPF flows, the sums
 * of the task iterator, memory.stat. rss_bytes is the charge, as in every
 * other report; the processes' RSS summed is rss_sum_bytes
 * (memacct_rss_bytes).
 */
static void metrics_of_cgi(const struct dstate *d, const struct cgi *c, struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	metrics_from_bpf_flows(m, &c->f, d->page_size);
	m->rss_sum = pg(d, c->rss);
	m->mlocked = pg(d, c->mlocked);
	m->pinned_vm = pg(d, c->pinned_vm);
	m->dma_pinned = pg(d, c->dma);
	m->dma_pinned_peak = pg(d, c->dma_peak);
	m->pinned = m->mlocked + m->pinned_vm + m->dma_pinned;
	m->remote_numa = c->remote_numa;
	m->remote_numa_peak = c->remote_numa;
	if (!c->st_ok)
		return;
	session_memcg_stocks(&c->st, m);
	m->rss_peak = c->st.has_peak ? c->st.peak : 0;
	m->page_faults = c->st.pgfault;
	m->major_faults = c->st.pgmajfault;
	m->oom_kills = mono(m->oom_kills, c->st.oom_kill);
}

static int collect(struct dstate *d, struct collection *col)
{
	struct walk w = { .o = &d->o };
	struct prev *np;
	size_t nnp = 0;

	memset(col, 0, sizeof(*col));
	if (d->rb)
		ring_buffer__consume(d->rb);
	if (walk_add(&w, d->root, "/", 0, 0)) {
		free(w.v);
		return -ENOENT;
	}
	walk_dir(&w, d->root, "/", w.v[0].id, 0);
	qsort(w.v, w.n, sizeof(*w.v), cmp_cgi);
	col->cg = w.v;
	col->ncg = w.n;
	read_flows(d, col);
	col->nst = pin_read_stocks(&d->pin, &col->st);
	if (col->nst < 0) {
		p_warn("reading the task iterator: %s", strerror(-col->nst));
		col->nst = 0;
	}
	for (long i = 0; i < col->nst; i++) {
		const struct memacct_task_stock *t = &col->st[i];
		struct cgi *c = cgi_find(col->cg, col->ncg, t->memcg_id);

		if (!c)
			continue;
		c->rss += t->rss_anon_pages + t->rss_file_pages + t->rss_shmem_pages;
		c->mlocked += t->locked_vm_pages;
		c->pinned_vm += t->pinned_vm_pages;
	}
	aggregate(col->cg, col->ncg);
	np = calloc(col->ncg ? col->ncg : 1, sizeof(*np));
	for (size_t i = 0; i < col->ncg; i++) {
		struct cgi *c = &col->cg[i];
		struct memcg m = { .id = c->id, .version = d->version, .level = c->level };
		struct prev k = { .id = c->id }, *old;

		if (!c->wanted)
			continue;
		snprintf(m.path, sizeof(m.path), "%s%s", d->root, c->level ? c->rel : "");
		snprintf(m.rel, sizeof(m.rel), "%s", c->rel);
		c->st_ok = memcg_read_stat(&m, &c->st) == 0;
		if (d->numa_multi) {	/* one node: every page is on its home node */
			struct numa_usage u;

			if (!memcg_numa_usage(&d->topo, &m, &u))
				c->remote_numa = u.remote;
		}
		flows_nonneg(&c->f);
		metrics_of_cgi(d, c, &c->m);
		old = d->prev ? bsearch(&k, d->prev, d->nprev, sizeof(k), cmp_prev) : NULL;
		if (old)	/* published counters never go down */
			metrics_clamp_flows(&c->m, &old->m);
		if (np)
			np[nnp++] = (struct prev){ .id = c->id, .m = c->m };
	}
	if (np) {	/* cgroups that vanished are forgotten here */
		free(d->prev);
		d->prev = np;
		d->nprev = nnp;
	}
	col->ntop = top_first(col->st, col->nst, d->o.top_n);
	col->topf = calloc(col->ntop ? col->ntop : 1, sizeof(*col->topf));
	if (col->topf && col->ntop) {	/* one pass over the flows */
		struct top_key *keys = malloc(col->ntop * sizeof(*keys));

		for (size_t i = 0; keys && i < col->ntop; i++)
			keys[i] = (struct top_key){ { .tgid = col->st[i].tgid,
				.start_boottime_ns = col->st[i].start_boottime_ns }, i };
		if (keys) {
			qsort(keys, col->ntop, sizeof(*keys), cmp_key);
			for (long j = 0; j < col->npf; j++) {
				struct top_key *k = bsearch(&col->pf[j].key, keys, col->ntop,
							    sizeof(*keys), cmp_key);

				if (k)
					col->topf[k->i] = &col->pf[j].f;
			}
		}
		free(keys);
	}
	pin_dropped(&d->pin, col->dropped, &col->vma_lockless);
	col->procs_used = col->npf;
	return 0;
}

/* Flows of a top process (t is one of the first col->ntop records). */
/* The proc_flow whose flows @f are (col->topf points into col->pf). */
static const struct proc_flow *pflow_of(const struct memacct_flows *f)
{
	return (const struct proc_flow *)((const char *)f - offsetof(struct proc_flow, f));
}

static const struct memacct_flows *flow_of(const struct collection *col,
					   const struct memacct_task_stock *t)
{
	size_t i = t - col->st;

	return col->topf && i < col->ntop ? col->topf[i] : NULL;
}

/* ---------------------------------------------------------------- formatting */

static int cg_labels_of(const struct cgi *c, struct cg_labels *cl, struct mlabel *l)
{
	cgroup_path_labels(c->rel, cl);
	l[0] = (struct mlabel){ "cgroup", c->rel };
	l[1] = (struct mlabel){ "pod_uid", cl->pod_uid[0] ? cl->pod_uid : NULL };
	l[2] = (struct mlabel){ "container_id", cl->container_id[0] ? cl->container_id : NULL };
	l[3] = (struct mlabel){ "job_id", cl->job_id[0] ? cl->job_id : NULL };
	return 4;
}

/* Kernel bpf_stats on: ours (--bpf-stats) or the sysctl, read once per collection. */
static bool stats_on(struct dstate *d)
{
	return d->stats_fd >= 0 || d->stats_sysctl;
}

/* memacct_host_* (hostpin.h): FOLL_PIN pages now, without stat_refresh (a
 * work item on every CPU per scrape): may lag by the per-CPU diffs. */
static void daemon_host_metrics(const struct dstate *d, const struct collection *col,
				struct mbuf *b)
{
	uint64_t dma = 0, vm = 0;
	struct hostpin h;
	bool readable;

	if (hostpin_read(&h, false))
		return;
	pin_dma(&d->pin, &dma, &readable);
	for (long i = 0; i < col->nst; i++)
		vm += col->st[i].pinned_vm_pages;
	hostpin_metrics(b, &h, readable, (dma + vm) * d->page_size);
}

static void format_self(struct dstate *d, const struct collection *col, struct mbuf *b)
{
	struct om_self self;
	struct mlabel l[1];

	struct bpf_prog_info info[d->pin.nprogs > 0 ? d->pin.nprogs : 1];
	bool ok[d->pin.nprogs > 0 ? d->pin.nprogs : 1];

	/* one bpf_obj_get_info_by_fd() per program feeds both families;
	 * only while kernel bpf_stats are on (--bpf-stats or the sysctl
	 * kernel.bpf_stats_enabled): otherwise the kernel counts nothing */
	for (int i = 0; i < d->pin.nprogs && stats_on(d); i++) {
		__u32 len = sizeof(info[i]);

		memset(&info[i], 0, sizeof(info[i]));
		ok[i] = !bpf_obj_get_info_by_fd(d->pin.progs[i].fd, &info[i], &len);
	}
	if (stats_on(d)) {
		metrics_family(b, "memacct_bpf_run_time_seconds", MT_COUNTER, "seconds",
			       "Time spent in each BPF program (kernel bpf_stats)");
		for (int i = 0; i < d->pin.nprogs; i++) {
			if (!ok[i])
				continue;
			l[0] = (struct mlabel){ "program", d->pin.progs[i].name };
			metrics_sample(b, l, 1, info[i].run_time_ns / 1e9);
		}
		metrics_family(b, "memacct_bpf_runs", MT_COUNTER, NULL,
			       "Runs of each BPF program (kernel bpf_stats)");
		for (int i = 0; i < d->pin.nprogs; i++) {
			if (!ok[i])
				continue;
			l[0] = (struct mlabel){ "program", d->pin.progs[i].name };
			metrics_sample_u64(b, l, 1, info[i].run_cnt);
		}
	}
	metrics_family(b, "memacct_events_dropped", MT_COUNTER, NULL,
		       "Events the BPF side could not record, by reason");
	for (int i = 0; i < MEMACCT_DROP_NR; i++) {
		if (i == MEMACCT_DROP_RINGBUF_FULL)	/* not a loss (D20): below */
			continue;
		l[0] = (struct mlabel){ "reason", drop_names[i] };
		metrics_sample_u64(b, l, 1, col->dropped[i]);
	}
	metrics_family(b, "memacct_ringbuf_full", MT_COUNTER, NULL,
		       "Exit records that found the ring buffer full and were read from the "
		       "procs map instead (nothing lost)");
	metrics_sample_u64(b, NULL, 0, col->dropped[MEMACCT_DROP_RINGBUF_FULL]);
	metrics_family(b, "memacct_map_fill_ratio", MT_GAUGE, "ratio",
		       "Entries in use over max_entries of the BPF hash maps");
	l[0] = (struct mlabel){ "map", "procs" };
	metrics_sample(b, l, 1, d->pin.procs_max ? (double)col->procs_used / d->pin.procs_max : 0);
	l[0] = (struct mlabel){ "map", "cgroups" };
	metrics_sample(b, l, 1, d->pin.cgroups_max ?
		       (double)col->cgroups_used / d->pin.cgroups_max : 0);
	metrics_family(b, "memacct_scrape_duration_seconds", MT_GAUGE, "seconds",
		       "Wall time of the previous collection (cgroups, maps, iterator, formatting)");
	metrics_sample(b, NULL, 0, d->last_wall_s);
	metrics_family(b, "memacct_scrape_cpu_seconds", MT_GAUGE, "seconds",
		       "CPU time of the previous collection");
	metrics_sample(b, NULL, 0, d->last_cpu_s);
	metrics_family(b, "memacct_json_log_errors", MT_COUNTER, NULL,
		       "JSON log lines (--json-log) that could not be written (full disk, I/O error)");
	metrics_sample_u64(b, NULL, 0, d->log_errors);
	metrics_family(b, "memacct_processes", MT_GAUGE, NULL,
		       "Processes with an mm seen by the task iterator");
	metrics_sample_u64(b, NULL, 0, col->nst);
	daemon_host_metrics(d, col, b);
	om_build_info(b);
	if (!om_self_read(&self))
		om_self_metrics(b, &self);
}

static void format(struct dstate *d, const struct collection *col, struct mbuf *b)
{
	size_t ntop = col->ntop;
	struct cg_labels cl;
	struct mlabel l[4];

	om_cgroup_info_family(b);
	for (size_t i = 0; i < col->ncg; i++)
		if (col->cg[i].wanted)
			om_cgroup_info(b, col->cg[i].rel);
	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *md = &metric_table[id];

		if (!md->family)
			continue;
		metrics_family(b, md->family, md->flags & MF_FLOW ? MT_COUNTER : MT_GAUGE,
			       md->flags & MF_BYTES ? "bytes" : NULL, md->help);
		/* on one node no page is remote: no samples (migrations stay:
		 * compaction migrates pages within a node) */
		if ((md->flags & MF_REMOTE) && d->one_node)
			continue;
		for (size_t i = 0; i < col->ncg; i++) {
			const struct cgi *c = &col->cg[i];

			if (!c->wanted || (!c->st_ok && (md->flags & MF_MEMCG_STAT)))
				continue;
			metrics_sample_u64(b, l, cg_labels_of(c, &cl, l), metric_get(&c->m, id));
		}
	}
	/* the same pages as memacct_numa_migrated_bytes, split by reason */
	metrics_family(b, "memacct_numa_migrated_by_reason_bytes", MT_COUNTER, "bytes",
		       "Pages migrated between NUMA nodes since attach, by migrate_reason "
		       "(a split of memacct_numa_migrated_bytes: do not add the two)");
	for (size_t i = 0; i < col->ncg; i++) {
		const struct cgi *c = &col->cg[i];
		struct mlabel rl[5];
		int nl;

		if (!c->wanted)
			continue;
		nl = cg_labels_of(c, &cl, rl);
		for (int r = 0; r < MEMACCT_MR_NR; r++) {
			if (!c->m.numa_migrated_by_reason[r])
				continue;	/* bounded cardinality: a series from its first page */
			rl[nl] = (struct mlabel){ "reason", migrate_reason_names[r] };
			metrics_sample_u64(b, rl, nl + 1, c->m.numa_migrated_by_reason[r]);
		}
	}
	/* top N processes by RSS */
	static const struct { const char *name, *help; enum mtype type; } pm[] = {
		{ "memacct_process_rss_bytes", "RSS of the top processes by RSS", MT_GAUGE },
		{ "memacct_process_anon_bytes", "RssAnon of the top processes", MT_GAUGE },
		{ "memacct_process_file_bytes", "RssFile of the top processes", MT_GAUGE },
		{ "memacct_process_shmem_bytes", "RssShmem of the top processes", MT_GAUGE },
		{ "memacct_process_pinned_bytes", "VmLck+VmPin+DMA pins of the top processes", MT_GAUGE },
		{ "memacct_process_cow_copied_bytes", "CoW copies of the top processes since attach", MT_COUNTER },
	};
	for (size_t m = 0; m < sizeof(pm) / sizeof(pm[0]); m++) {
		metrics_family(b, pm[m].name, pm[m].type, "bytes", pm[m].help);
		for (size_t i = 0; i < ntop; i++) {
			const struct memacct_task_stock *t = &col->st[i];
			const struct memacct_flows *f;
			struct cgi *c = cgi_find(col->cg, col->ncg, t->memcg_id);
			char pid[16], comm[MEMACCT_COMM_LEN + 1];
			uint64_t v = 0;

			snprintf(pid, sizeof(pid), "%u", t->tgid);
			memcpy(comm, t->comm, MEMACCT_COMM_LEN);
			comm[MEMACCT_COMM_LEN] = '\0';
			l[0] = (struct mlabel){ "pid", pid };
			l[1] = (struct mlabel){ "comm", comm };
			l[2] = (struct mlabel){ "cgroup", c ? c->rel : "" };
			switch (m) {
			case 0: v = t->rss_anon_pages + t->rss_file_pages + t->rss_shmem_pages; break;
			case 1: v = t->rss_anon_pages; break;
			case 2: v = t->rss_file_pages; break;
			case 3: v = t->rss_shmem_pages; break;
			case 4: v = t->locked_vm_pages + t->pinned_vm_pages +
				    ((f = flow_of(col, t)) ? pflow_of(f)->dma : 0); break;
			case 5: v = (f = flow_of(col, t)) ? f->cow_copied_pages : 0; break;
			}
			metrics_sample_u64(b, l, 3, pg(d, v));
		}
	}
	format_self(d, col, b);
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
	size_t len = strlen(s);
	char *line = malloc(len + 1);
	int fd = fileno(d->log);
	struct stat sb;
	off_t before = -1;
	ssize_t w = -1;
	int err = ENOMEM;

	if (line) {
		memcpy(line, s, len);
		line[len] = '\n';
		if (!fstat(fd, &sb))
			before = sb.st_size;
		w = write(fd, line, len + 1);
		err = w < 0 ? errno : ENOSPC;	/* a short write: the disk is full */
		free(line);
	}
	if (w == (ssize_t)len + 1) {
		if (d->log_failing)
			p_info("writing %s again", d->o.json_log);
		d->log_failing = false;
		return;
	}
	if (w > 0 && before >= 0 && ftruncate(fd, before))
		p_warn("%s: removing the cut line: %s", d->o.json_log, strerror(errno));
	d->log_errors++;
	if (!d->log_failing)
		p_warn("writing %s: %s (line dropped; memacct_json_log_errors_total counts them)",
		       d->o.json_log, strerror(err));
	d->log_failing = true;
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
	for (size_t i = 0; i < col->ncg; i++)
		if (col->cg[i].level == 0)
			r.totals = col->cg[i].m;
	r.procs = calloc(ntop ? ntop : 1, sizeof(*r.procs));
	for (size_t i = 0; r.procs && i < ntop; i++) {
		const struct memacct_task_stock *t = &col->st[i];
		const struct memacct_flows *f = flow_of(col, t);
		struct proc_row *p = &r.procs[r.nprocs++];

		p->pid = t->tgid;
		p->ppid = t->ppid;
		memcpy(p->comm, t->comm, MEMACCT_COMM_LEN);
		p->start_boottime_ns = t->start_boottime_ns;
		p->m.anon = pg(d, t->rss_anon_pages);
		p->m.file = pg(d, t->rss_file_pages);
		p->m.shmem = pg(d, t->rss_shmem_pages);
		p->m.rss = p->m.anon + p->m.file + p->m.shmem;
		p->m.rss_peak = pg(d, t->hiwater_rss_pages) > p->m.rss ?
				pg(d, t->hiwater_rss_pages) : p->m.rss;
		p->m.mlocked = pg(d, t->locked_vm_pages);
		p->m.pinned_vm = pg(d, t->pinned_vm_pages);
		if (f) {
			p->m.dma_pinned = pg(d, pflow_of(f)->dma);
			p->m.dma_pinned_peak = pg(d, pflow_of(f)->dma_peak);
			p->m.dma_estimate = pflow_of(f)->dma_est;
		}
		p->m.pinned = p->m.mlocked + p->m.pinned_vm + p->m.dma_pinned;
		p->m.page_faults = t->min_flt + t->maj_flt;
		p->m.major_faults = t->maj_flt;
		if (f)	/* every flow (zero_fill and migrations were left at 0) */
			metrics_from_bpf_flows(&p->m, f, d->page_size);
	}
	memcpy(r.dropped, col->dropped, sizeof(r.dropped));
	r.vma_lockless_lookups = col->vma_lockless;
	r.dropped_events = report_dropped_total(col->dropped);
	o = report_json(&r);
	arr = json_array();
	for (size_t i = 0; o && arr && i < col->ncg; i++) {
		const struct cgi *c = &col->cg[i];
		struct cg_labels cl;
		json_t *co;

		if (!c->wanted)
			continue;
		co = json_object();
		json_object_set_new(co, "cgroup", json_string_sanitized(c->rel));
		json_object_set_new(co, "id", json_integer((json_int_t)c->id));
		cgroup_path_labels(c->rel, &cl);
		if (cl.pod_uid[0])
			json_object_set_new(co, "pod_uid", json_string(cl.pod_uid));
		if (cl.container_id[0])
			json_object_set_new(co, "container_id", json_string(cl.container_id));
		if (cl.job_id[0])
			json_object_set_new(co, "job_id", json_string(cl.job_id));
		report_metrics_json(co, &c->m, MF_SAMPLED);
		json_array_append_new(arr, co);
	}
	if (o) {
		json_object_set_new(o, "cgroups", arr);
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

static int collect_and_publish(struct dstate *d)
{
	uint64_t t0 = now_ns();
	double c0 = thread_cpu_s();
	struct collection col;
	struct mbuf prom, om;
	int err;

	err = collect(d, &col);
	if (err)
		return err;
	if (d->stats_fd < 0) {
		char *t = NULL;

		d->stats_sysctl = read_file("/proc/sys/kernel/bpf_stats_enabled", &t, 64) > 0 &&
				  t[0] == '1';
		free(t);
	}
	mbuf_init(&prom, false);
	mbuf_init(&om, true);
	format(d, &col, &prom);
	format(d, &col, &om);
	/* out of memory: the previous collection stays served */
	http_publish(metrics_end(&prom), metrics_end(&om), pin_links_gone(&d->pin),
		     d->pin.nprogs);
	mbuf_free(&prom);
	mbuf_free(&om);
	write_json_log(d, &col);
	collection_free(&col);
	d->last_ok_ns = now_ns();
	d->last_wall_s = (now_ns() - t0) / 1e9;
	d->last_cpu_s = thread_cpu_s() - c0;
	return 0;
}

static int parse_daemon_args(int argc, char **argv, struct dopts *o, bool *stop_ks)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "pin-path", required_argument, NULL, 'p' },
		{ "json-log", required_argument, NULL, 'J' },
		{ "cgroup-filter", required_argument, NULL, 'f' },
		{ "top-processes", required_argument, NULL, 'n' },
		{ "stop-kernel-side", no_argument, NULL, 'S' },
		{ "bpf-stats", no_argument, NULL, 'B' },
		{ "metrics-allow", required_argument, NULL, 'A' },
		{ "metrics-deny", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	http_parse_listen("127.0.0.1:9464", &o->listen);
	o->interval_ns = 10000000000ULL;
	o->pin_path = PIN_DEFAULT_DIR;
	o->top_n = 20;
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
		case 'f':
			if (o->nfilters >= MAX_FILTERS) {
				p_err("--cgroup-filter: at most %d", MAX_FILTERS);
				return -EINVAL;
			}
			o->filters[o->nfilters++] = optarg;
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

int do_daemon(int argc, char **argv)
{
	struct rlimit rl = { 8192, 8192 };
	struct MHD_Daemon *http = NULL;
	struct dstate d;
	bool stop_ks = false;
	uint64_t wd_usec = 0, wd_next = 0;
	int err, ret = EXIT_RUNTIME;

	memset(&d, 0, sizeof(d));
	d.stats_fd = -1;
	err = parse_daemon_args(argc, argv, &d.o, &stop_ks);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
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
	setrlimit(RLIMIT_NOFILE, &rl);	/* many HTTP clients; best effort */
	install_daemon_signals();
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
	err = pin_open(d.o.pin_path, &d.pin);
	if (err) {
		/* not a bpffs: bad --pin-path, as detach says */
		ret = err == -ENOTSUP ? EXIT_USAGE :
		      err == -EBUSY || err == -EPROTO ? EXIT_RUNTIME : EXIT_ENV;
		goto out_log;
	}
	p_info("%s kernel side at %s", d.pin.reattached ? "re-attached to the" : "pinned the",
	       d.o.pin_path);
	/*
	 * D7: a second kernel side is allowed (run and attach sessions load one
	 * for their lifetime; a move between pin paths needs two for a while),
	 * but never silently: docs/daemon.md "Several kernel sides".
	 */
	err = pin_other_kernel_sides(&d.pin);
	if (err > 0)
		p_warn("%d other memacct kernel side%s loaded beside this one (another daemon's pins "
		       "elsewhere, or a run/attach/--watch session): every event now runs memacct's "
		       "programs %d times, each side counting apart; `memacct detach --pin-path DIR` "
		       "removes a daemon's", err, err > 1 ? "s are" : " is", err + 1);
	if (d.o.bpf_stats) {
		d.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (d.stats_fd < 0)
			p_warn("bpf_stats unavailable (%s): memacct_bpf_* series left out",
			       strerror(errno));
	}
	d.rb = ring_buffer__new(d.pin.exits_fd, on_exit_record, &d, NULL);
	if (!d.rb)
		p_warn("exit ring buffer: %s", strerror(errno));
	if (collect_and_publish(&d)) {
		p_err("first collection failed: cgroup root %s unreadable", d.root);
		goto out_pin;
	}
	{
		char a[INET6_ADDRSTRLEN + 8];

		/* D20: pids, comms and cgroup names go to whoever can connect */
		if (!http_listen_loopback(&d.o.listen))
			p_warn("listening on %s, not loopback: process ids, names and cgroup paths "
			       "are served to every host that can reach it",
			       http_listen_str(&d.o.listen, a, sizeof(a)));
		/* "serving on port P (ADDR)": scripts wait for it */
		fprintf(stderr, "memacct daemon: serving on port %u (%s), kernel side %s %s\n",
			http_listen_port(&d.o.listen), http_listen_addr(&d.o.listen, a, sizeof(a)),
			d.pin.reattached ? "re-attached at" : "pinned at", d.o.pin_path);
	}
	/* systemd Type=notify: ready once serving; WatchdogSec= pinged at half
	 * its period while collections are on time (a hung or failing one stops
	 * the pings, and systemd restarts the daemon) */
	sd_notify(0, "READY=1");
	if (sd_watchdog_enabled(0, &wd_usec) <= 0)
		wd_usec = 0;
	while (!d_stop) {
		uint64_t next = ns_after(now_ns(), d.o.interval_ns);

		while (!d_stop && !d_hup && now_ns() < next) {
			uint64_t left = next - now_ns(), now;
			struct timespec ts = { 0, left < 100000000ULL ? (long)left : 100000000L };

			nanosleep(&ts, NULL);
			http_reap_slow();
			now = now_ns();
			if (wd_usec && now >= wd_next) {
				if (now - d.last_ok_ns <= d.stall_ns)
					sd_notify(0, "WATCHDOG=1");
				wd_next = ns_after(now, wd_usec * 500);	/* half of it, in ns */
			}
		}
		if (d_hup) {
			d_hup = 0;
			p_info("SIGHUP: reopening %s", d.o.json_log ? d.o.json_log : "(no log)");
			open_log(&d);
		}
		if (!d_stop)
			collect_and_publish(&d);
	}
	ret = EXIT_OK;
	sd_notify(0, "STOPPING=1");
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
	free(d.prev);
	free(d.unknown);
	numa_topo_free(&d.topo);
	return ret;
}
