// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * daemon_oom.c - the daemon's OOM post-mortems (daemon_oom.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "daemon_oom.h"
#include "fill.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static void proc_from_stock(struct oom_proc *o, const struct memacct_task_stock *t, long ps)
{
	memset(o, 0, sizeof(*o));
	o->pid = t->tgid;
	o->start_ns = t->start_boottime_ns;
	o->memcg_id = t->memcg_id;
	memcpy(o->comm, t->comm, MEMACCT_COMM_LEN);
	metrics_from_task_stock(&o->m, t, ps);
}

static void proc_flows(struct oom_proc *o, const struct memacct_flows *f, uint64_t dma, long ps)
{
	metrics_from_bpf_flows(&o->m, f, ps);
	o->m.dma_pinned = dma * ps;
}

static int cmp_pf_tgid(const void *a, const void *b)
{
	const struct proc_flow *x = *(const struct proc_flow *const *)a;
	const struct proc_flow *y = *(const struct proc_flow *const *)b;

	return x->key.tgid < y->key.tgid ? -1 : x->key.tgid > y->key.tgid;
}

/* A memcg of a collection's walk, and whether a kill may come to it. */
struct memcg_near {
	uint64_t id, parent_id;
	int level;
	bool own;	/* its own limit nearly reached */
	bool near;	/* its own or one above it: oom_near() */
};

static int cmp_near_id(const void *a, const void *b)
{
	const struct memcg_near *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* @c's own limit (memory.max / limit_in_bytes) nearly reached, as
 * oom_near() reads it; its figures not read (a filtered-out cgroup): yes */
static bool cgi_near(const struct cgi *c)
{
	if (!c->st_ok)
		return true;
	return c->bounds.has_max && oom_usage_near(c->st.usage, c->bounds.max);
}

static struct memcg_near *near_find(struct memcg_near *nm, size_t n, uint64_t id)
{
	struct memcg_near want = { .id = id };

	return bsearch(&want, nm, n, sizeof(*nm), cmp_near_id);
}

/*
 * Each memcg of @col's walk with oom_near()'s answer for it (its limit or
 * one above it nearly reached), sorted by id (col->ncg of them, malloc'd),
 * or NULL when out of memory.
 */
static struct memcg_near *near_memcgs(const struct collection *col)
{
	size_t n = col->ncg;
	struct memcg_near *nm = malloc((n ? n : 1) * sizeof(*nm));

	if (!nm)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct cgi *c = &col->cg[i];

		nm[i] = (struct memcg_near){ .id = c->id, .parent_id = c->parent_id,
					     .level = c->level, .own = cgi_near(c) };
	}
	qsort(nm, n, sizeof(*nm), cmp_near_id);
	/* up to the root by parent id; a parent the walk does not hold ends
	 * the chain */
	for (size_t i = 0; i < n; i++) {
		const struct memcg_near *up = &nm[i];

		for (int depth = 0; up && !up->own && up->level > 0 && depth < 64; depth++)
			up = near_find(nm, n, up->parent_id);
		nm[i].near = up && up->own;
	}
	return nm;
}

void doom_sample_collection(struct daemon_oom *o, const struct collection *col, bool host_near)
{
	const struct proc_flow **idx = NULL;
	struct memcg_near *near = NULL;
	struct oom_proc *a;
	long n = col->nst > 0 ? col->nst : 0, k = 0;

	/* the host nearly out of memory: every process may be in its kill */
	if (!host_near)
		near = near_memcgs(col);
	a = calloc(n ? n : 1, sizeof(*a));
	if (!a) {
		free(near);
		return;
	}
	if (col->npf > 0) {
		idx = malloc(col->npf * sizeof(*idx));
		for (long i = 0; idx && i < col->npf; i++)
			idx[i] = &col->pf[i];
		if (idx)
			qsort(idx, col->npf, sizeof(*idx), cmp_pf_tgid);
	}
	for (long i = 0; i < n; i++) {
		struct proc_flow want = { .key.tgid = col->st[i].tgid }, *w = &want;
		const struct proc_flow **hit;
		const struct memcg_near *m;

		/* far from every limit: no kill of its memcg's can need it (a
		 * memcg the walk did not hold is taken) */
		m = near ? near_find(near, col->ncg, col->st[i].memcg_id) : NULL;
		if (m && !m->near)
			continue;
		proc_from_stock(&a[k], &col->st[i], o->page_size);
		hit = idx ? bsearch(&w, idx, col->npf, sizeof(*idx), cmp_pf_tgid) : NULL;
		if (hit)
			proc_flows(&a[k], &(*hit)->f, (*hit)->dma, o->page_size);
		metrics_pinned_sum(&a[k].m);
		k++;
	}
	free(idx);
	free(near);
	if (k < n) {	/* what it needs, not every process */
		struct oom_proc *fit = realloc(a, (k ? k : 1) * sizeof(*a));

		if (fit)
			a = fit;
	}
	oom_hist_push(&o->hist, boot_now_ns(), a, k, 0);
}

/* Every process now (the walk of a collection, with its own fields, and
 * each one's procs record): the survivors as at the kill, ~0.1 s after. */
static void sample_now(struct daemon_oom *o)
{
	struct memacct_task_stock *st;
	long n = pin_read_stocks(o->pin, true, &st);
	struct oom_proc *a;

	if (n < 0)
		return;
	a = calloc(n ? n : 1, sizeof(*a));
	if (!a)
		return;
	for (long i = 0; i < n; i++) {
		struct memacct_proc_key key = { .tgid = st[i].tgid,
						.start_boottime_ns = st[i].start_boottime_ns };
		struct memacct_proc p;

		proc_from_stock(&a[i], &st[i], o->page_size);
		if (!bpf_map_lookup_elem(o->pin->procs_fd, &key, &p))
			proc_flows(&a[i], &p.f, p.pin.dma_pinned_pages, o->page_size);
		metrics_pinned_sum(&a[i].m);
	}
	oom_hist_push(&o->hist, boot_now_ns(), a, n, 0);
}

int oom_log_append(const char *path, const char *line)
{
	struct stat sb;
	char dir[PATH_MAX], old[PATH_MAX + 8];
	size_t len = strlen(line);
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	if (strrchr(dir, '/') && strrchr(dir, '/') != dir) {
		*strrchr(dir, '/') = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
	}
	if (!stat(path, &sb) && sb.st_size > OOM_LOG_MAX_BYTES) {
		snprintf(old, sizeof(old), "%s.1", path);
		if (rename(path, old))
			return -errno;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* one write: a line is whole or absent, never cut by another writer */
	{
		char *buf = malloc(len + 1);

		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		memcpy(buf, line, len);
		buf[len] = '\n';
		if (write(fd, buf, len + 1) != (ssize_t)(len + 1))
			err = errno ? -errno : -EIO;
		free(buf);
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* the last kill's time and cause (NULL: none named) for @cgroup and each cgroup above it */
static void note_last(struct daemon_oom *o, const char *cgroup, double t, const char *cause)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", cgroup);
	for (;;) {
		size_t i;

		for (i = 0; i < o->nlast; i++)
			if (!strcmp(o->last[i].cgroup, path))
				break;
		if (i == o->nlast) {
			if (o->nlast == DOOM_CGROUPS) {	/* the oldest goes */
				size_t old = 0;

				for (size_t j = 1; j < o->nlast; j++)
					if (o->last[j].time < o->last[old].time)
						old = j;
				free(o->last[old].cgroup);
				o->last[old] = o->last[--o->nlast];
				o->last_dropped++;
			}
			/* a new entry: not the time of the one last moved from here */
			o->last[o->nlast] = (struct doom_last){ .cgroup = strdup(path) };
			if (!o->last[o->nlast].cgroup) {
				o->last_dropped++;
				return;
			}
			i = o->nlast++;
		}
		if (t > o->last[i].time) {
			o->last[i].time = t;
			snprintf(o->last[i].cause, sizeof(o->last[i].cause), "%s", cause ?: "");
		}
		if (!strcmp(path, "/"))
			return;
		*strrchr(path, '/') = '\0';
		if (!path[0])
			strcpy(path, "/");
	}
}

int oom_log_read(const char *path, json_t *kills)
{
	char *text = NULL, *line, *save = NULL;
	long n = read_file(path, &text, 64 << 20);

	if (n < 0)
		return (int)n;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, NULL), *ks = json_object_get(o, "oom_kills");

		if (json_is_object(o) &&
		    !strcmp(json_string_value(json_object_get(o, "schema")) ?: "", OOM_SCHEMA))
			for (size_t i = 0; i < json_array_size(ks); i++)
				json_array_append(kills, json_array_get(ks, i));
		json_decref(o);
	}
	free(text);
	return 0;
}

void doom_seed(struct daemon_oom *o)
{
	json_t *kills = json_array();

	if (o->log_path && !oom_log_read(o->log_path, kills)) {
		for (size_t i = 0; i < json_array_size(kills); i++) {
			json_t *k = json_array_get(kills, i);
			const char *cg = json_string_value(json_object_get(k, "cgroup"));

			if (cg && cg[0] == '/')
				note_last(o, cg, json_number_value(json_object_get(k, "time")),
					  json_string_value(json_object_get(k, "cause")));
		}
	}
	json_decref(kills);
}

int doom_on_record(void *ctx, void *data, size_t len)
{
	struct daemon_oom *o = ctx;
	const struct memacct_oom_event *ev = data;
	struct oom_kill *k;
	json_t *line, *arr;
	char *s;
	int err;

	if (len < sizeof(*ev))
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return 0;
	oom_from_event(k, ev, o->page_size, o->unmeasured);
	/* a storm (a fork bomb under a limit): past DOOM_FULL_PER_S a second,
	 * the kernel's figures only, no walk of every process each */
	if (now_ns() - o->second_ns >= 1000000000ULL) {
		o->second_ns = now_ns();
		o->full_this_second = 0;
	}
	if (o->full_this_second++ < DOOM_FULL_PER_S) {
		sample_now(o);
		oom_explain(k, &o->hist, o->window_ns);
	} else {
		oom_explain_late(k);
		o->brief++;
	}
	o->recorded++;
	if (k->cgroup[0])
		note_last(o, k->cgroup, k->time, k->cause);
	line = json_object();
	arr = json_array();
	json_object_set_new(line, "schema", json_string(OOM_SCHEMA));
	json_object_set_new(line, "command", json_string("daemon"));
	json_array_append_new(arr, oom_json(k));
	json_object_set_new(line, "oom_kills", arr);
	s = json_dumps(line, JSON_COMPACT);
	json_decref(line);
	/* the journal gets every post-mortem's verdict (docs/daemon.md), -v or not */
	p_notice("%s", k->verdict);
	free(k);
	if (!s)
		return 0;
	if (o->log_path) {
		err = oom_log_append(o->log_path, s);
		if (err) {
			o->log_errors++;
			p_warn("writing %s: %s (post-mortem in the JSON log and on stderr only)",
			       o->log_path, strerror(-err));
		}
	}
	if (o->json_log)
		o->json_log(o->json_log_ctx, s);
	free(s);
	return 0;
}

void doom_free(struct daemon_oom *o)
{
	for (size_t i = 0; i < o->nlast; i++)
		free(o->last[i].cgroup);
	oom_hist_free(&o->hist);
	o->nlast = 0;
}
