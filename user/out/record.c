// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* record.c - a session's timeline as JSON lines, written and read back (record.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "memlimits.h"
#include "proc.h"
#include "record.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line, whole or not at all (write_line(), util.h); the first failure stops @w. */
static void put_line(struct recorder *w, json_t *o)
{
	char *s;
	int err;

	if (w->fd < 0)
		return;
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	err = s ? write_line(w->fd, s) : -ENOMEM;
	if (!err) {
		w->lines++;
		w->bytes += strlen(s) + 1;
	} else {
		w->err = err;
		w->stopped_s = (now_ns() - w->t0_ns) / 1e9;
		close(w->fd);
		w->fd = -1;
	}
	free(s);
}

int record_open(struct recorder *w, const char *path, const struct record_info *info)
{
	json_t *h, *argv, *cg;
	char iso[40];
	double t = unix_now();
	time_t sec = (time_t)t;
	struct tm tm;
	uint64_t lim;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (!path)
		return 0;
	w->path = path;
	w->t0_ns = now_ns();
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return -errno;
	h = json_object();
	argv = json_array();
	cg = json_object();
	json_object_set_new(h, "format", json_string(RECORD_FORMAT));
	json_object_set_new(h, "version", json_string(MEMACCT_VERSION));
	json_object_set_new(h, "command", json_string(info->command));
	for (char *const *a = info->argv; a && *a; a++)
		json_array_append_new(argv, json_string_sanitized(*a));
	json_object_set_new(h, "argv", argv);
	json_object_set_new(h, "start", json_real(t));
	gmtime_r(&sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(h, "start_iso", json_string(iso));
	json_object_set_new(h, "page_size", json_integer(sysconf(_SC_PAGESIZE)));
	json_object_set_new(h, "mem_total_bytes", json_integer((json_int_t)mem_total_bytes()));
	json_object_set_new(cg, "path", json_string_sanitized(info->cg->rel));
	json_object_set_new(cg, "fs_path", json_string_sanitized(info->cg->path));
	json_object_set_new(cg, "id", json_integer((json_int_t)info->cg->id));
	json_object_set_new(cg, "version", json_integer(info->cg->version));
	json_object_set_new(h, "cgroup", cg);
	json_object_set_new(h, "limit_bytes", memcg_limit_read(info->cg, LIMIT_MAX, &lim) ?
			    json_null() : json_integer((json_int_t)lim));
	json_object_set_new(h, "interval_s", info->interval_ns ?
			    json_real(info->interval_ns / 1e9) : json_null());
	json_object_set_new(h, "params", info->params > 0 ? json_real(info->params) : json_null());
	put_line(w, h);
	json_decref(h);
	if (w->fd < 0) {
		int err = w->err;

		unlink(path);
		return err;
	}
	return 0;
}

/* each process's sampled NUMA peak (several nodes only) */
static json_t *numa_peaks_json(const struct report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_row *p = &r->procs[i];
		json_t *o;

		if (!p->has_numa_peak)
			continue;
		o = json_object();
		json_object_set_new(o, "i", json_integer((json_int_t)i));
		json_object_set_new(o, "bytes", json_integer((json_int_t)p->numa_peak.bytes));
		json_object_set_new(o, "remote", json_integer((json_int_t)p->numa_peak.remote));
		json_object_set_new(o, "home", json_integer(p->numa_peak.home));
		json_object_set_new(o, "source", json_integer(p->numa_peak.source));
		json_object_set_new(o, "remote_nodes",
				    json_integer((json_int_t)p->numa_peak.remote_nodes));
		json_array_append_new(a, o);
	}
	return a;
}

void record_numa(struct report *r, const json_t *line)
{
	const json_t *a = json_object_get(line, "numa_peaks"), *o;
	size_t i;

	r->numa_multi = json_is_true(json_object_get(line, "numa_multi"));
	json_array_foreach(a, i, o) {
		size_t k = (size_t)json_integer_value(json_object_get(o, "i"));
		struct numa_brief *b;

		if (k >= r->nprocs)
			continue;
		b = &r->procs[k].numa_peak;
		r->procs[k].has_numa_peak = true;
		b->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
		b->remote = (uint64_t)json_integer_value(json_object_get(o, "remote"));
		b->home = (int)json_integer_value(json_object_get(o, "home"));
		b->source = (enum numa_home_source)json_integer_value(json_object_get(o, "source"));
		b->remote_nodes = (uint64_t)json_integer_value(json_object_get(o, "remote_nodes"));
	}
}

void record_snapshot(struct recorder *w, const char *kind, const char *mark,
		     const struct report *r)
{
	json_t *line, *o, *patch;

	if (w->fd < 0)
		return;
	o = report_json(r);
	line = json_object();
	json_object_set_new(line, "t", json_real(unix_now()));
	json_object_set_new(line, "kind", json_string(kind));
	if (!strcmp(kind, "mark"))
		json_object_set_new(line, "mark", mark ? json_string_sanitized(mark) : json_null());
	if (r->numa_multi) {
		json_object_set_new(line, "numa_multi", json_true());
		json_object_set_new(line, "numa_peaks", numa_peaks_json(r));
	}
	if (w->prev) {
		patch = record_diff(w->prev, o);
		json_object_set_new(line, "patch", patch ? patch : json_object());
		json_decref(w->prev);
	} else {
		json_object_set(line, "report", o);
	}
	w->prev = o;
	put_line(w, line);
	json_decref(line);
}

int record_close(struct recorder *w)
{
	char b[16];

	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	json_decref(w->prev);
	w->prev = NULL;
	if (w->err)
		p_warn("the recording %s stopped %.1f s in: %s; it holds the first %llu lines "
		       "(%s), the job went on", w->path, w->stopped_s, strerror(-w->err),
		       (unsigned long long)w->lines, fmt_bytes(b, sizeof(b), w->bytes));
	return w->err;
}

/* ------------------------------------------------------------ patches */

#define KEY_DEL	"~del"
#define KEY_SET	"~set"
#define KEY_ARR	"~a"
#define KEY_REB	"~r"

/*
 * The element of @old that @e continues: report rows are objects keyed by
 * "pid" and "exited" (a process row, a phase's process), matched whatever
 * their place, looked for from *@hint on (rows are sorted: the next match
 * is mostly the next element); anything else by its index @i. -1: none.
 */
static long match_elem(const json_t *old, const json_t *e, size_t i, size_t *hint)
{
	const json_t *pid = json_object_get(e, "pid");
	size_t n = json_array_size(old);

	if (!json_is_integer(pid))
		return i < n ? (long)i : -1;
	for (size_t j = 0; j < n; j++) {
		size_t k = (*hint + j) % n;
		const json_t *o = json_array_get(old, k);

		if (json_equal(json_object_get(o, "pid"), (json_t *)pid) &&
		    json_equal(json_object_get(o, "exited"), json_object_get(e, "exited"))) {
			*hint = k + 1;
			return (long)k;
		}
	}
	return -1;
}

/*
 * An array of another length (a process came or went): {"~r": [...]}, the
 * new array element by element from the old one: {"at": k, "n": n} for n
 * old elements from k on, unchanged; [k, patch] for old element k patched;
 * [-1, value] for a new one.
 */
static json_t *rebuild_patch(const json_t *a, const json_t *b)
{
	json_t *ops = json_array(), *p = json_object(), *e, *run = NULL;
	size_t i, hint = 0;

	json_array_foreach((json_t *)b, i, e) {
		long k = match_elem(a, e, i, &hint);
		json_t *d = k >= 0 ? record_diff(json_array_get(a, k), e) : NULL;

		if (k >= 0 && !d) {
			json_int_t at = json_integer_value(json_object_get(run, "at"));
			json_int_t n = json_integer_value(json_object_get(run, "n"));

			if (run && at + n == k) {
				json_object_set_new(run, "n", json_integer(n + 1));
			} else {
				run = json_pack("{sIsI}", "at", (json_int_t)k, "n", (json_int_t)1);
				json_array_append_new(ops, run);
			}
			continue;
		}
		run = NULL;
		json_array_append_new(ops, k < 0 ? json_pack("[iO]", -1, e) :
					   json_pack("[Io]", (json_int_t)k, d));
	}
	json_object_set_new(p, KEY_REB, ops);
	return p;
}

static json_t *set_patch(const json_t *a, const json_t *b)
{
	json_t *p;

	/* an object in place of an array would read as an array patch */
	if (!json_is_object(b) || !json_is_array(a))
		return json_deep_copy(b);
	p = json_object();
	json_object_set_new(p, KEY_SET, json_deep_copy(b));
	return p;
}

json_t *record_diff(const json_t *a, const json_t *b)
{
	json_t *p, *v, *d;
	const char *k;
	size_t i;

	/* containers are walked once: no change is an empty patch (a
	 * json_equal() first at every level compared each row ~3 times) */
	if (json_is_object(a) && json_is_object(b)) {
		json_t *del = NULL;

		p = json_object();
		json_object_foreach((json_t *)b, k, v) {
			const json_t *av = json_object_get(a, k);

			if (!av)
				json_object_set_new(p, k, json_deep_copy(v));
			else if ((d = record_diff(av, v)))
				json_object_set_new(p, k, d);
		}
		json_object_foreach((json_t *)a, k, v) {
			if (json_object_get(b, k))
				continue;
			if (!del)
				del = json_array();
			json_array_append_new(del, json_string(k));
		}
		if (del)
			json_object_set_new(p, KEY_DEL, del);
		if (!json_object_size(p)) {
			json_decref(p);
			return NULL;
		}
		return p;
	}
	if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
		json_t *changes = json_array();

		json_array_foreach((json_t *)b, i, v) {
			d = record_diff(json_array_get(a, i), v);
			if (d)
				json_array_append_new(changes, json_pack("[Io]", (json_int_t)i, d));
		}
		if (!json_array_size(changes)) {
			json_decref(changes);
			return NULL;
		}
		p = json_object();
		json_object_set_new(p, KEY_ARR, changes);
		return p;
	}
	if (json_is_array(a) && json_is_array(b))
		return rebuild_patch(a, b);
	if (json_equal((json_t *)a, (json_t *)b))
		return NULL;
	return set_patch(a, b);
}

json_t *record_apply(json_t *a, const json_t *p)
{
	const json_t *set = json_object_get(p, KEY_SET), *v;
	const char *k;
	size_t i;

	if (set || !json_is_object(p) ||
	    !(json_is_object(a) || (json_is_array(a) && (json_object_get(p, KEY_ARR) ||
							  json_object_get(p, KEY_REB))))) {
		json_decref(a);
		return json_deep_copy(set ? set : p);
	}
	if (json_is_array(a) && json_object_get(p, KEY_REB)) {
		json_t *n = json_array();

		json_array_foreach(json_object_get(p, KEY_REB), i, v) {
			json_int_t at = json_integer_value(json_is_object(v) ?
							   json_object_get(v, "at") :
							   json_array_get(v, 0));
			json_int_t cnt = json_integer_value(json_object_get(v, "n"));
			json_t *e = at >= 0 ? json_array_get(a, (size_t)at) : NULL;

			if (json_is_object(v))	/* a run of unchanged elements */
				for (json_int_t j = 0; j < cnt && json_array_get(a, at + j); j++)
					json_array_append_new(n, json_deep_copy(
								 json_array_get(a, at + j)));
			else if (at < 0)
				json_array_append_new(n, json_deep_copy(json_array_get(v, 1)));
			else if (e)
				json_array_append_new(n, record_apply(json_deep_copy(e),
								      json_array_get(v, 1)));
		}
		json_decref(a);
		return n;
	}
	if (json_is_array(a)) {
		json_array_foreach(json_object_get(p, KEY_ARR), i, v) {
			size_t at = (size_t)json_integer_value(json_array_get(v, 0));
			json_t *e = json_array_get(a, at);

			if (!e)
				continue;
			json_array_set_new(a, at, record_apply(json_incref(e),
							       json_array_get(v, 1)));
		}
		return a;
	}
	json_object_foreach((json_t *)p, k, v) {
		json_t *e = json_object_get(a, k);

		if (!strcmp(k, KEY_DEL))
			continue;
		if (e)
			json_object_set_new(a, k, record_apply(json_incref(e), v));
		else
			json_object_set_new(a, k, json_deep_copy(v));
	}
	json_array_foreach(json_object_get(p, KEY_DEL), i, v)
		json_object_del(a, json_string_value(v));
	return a;
}

/* ------------------------------------------------------------ reading */

int record_read(FILE *f, record_cb cb, void *ctx, struct record_stats *st)
{
	json_t *header = NULL, *cur = NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t lineno = 0;
	int err = 0;

	memset(st, 0, sizeof(*st));
	while ((n = read_line(&buf, &cap, f, RECORD_LINE_MAX)) > 0) {
		bool last = buf[n - 1] != '\n';
		json_t *o = json_loadb(buf, n, 0, NULL);
		const json_t *rep, *patch;
		struct record_snap s;

		lineno++;
		if (!header) {
			const char *fmt = json_string_value(json_object_get(o, "format"));

			if (!fmt || strcmp(fmt, RECORD_FORMAT)) {
				json_decref(o);
				err = -EINVAL;
				break;
			}
			header = o;
			continue;
		}
		rep = json_object_get(o, "report");
		patch = json_object_get(o, "patch");
		if (!json_is_object(o) || !json_is_string(json_object_get(o, "kind")) ||
		    (!json_is_object(rep) && !(cur && json_is_object(patch)))) {
			json_decref(o);
			if (last || (!o && fgetc(f) == EOF))
				st->cut = true;
			else
				st->bad_line = lineno;
			break;
		}
		if (rep) {
			json_decref(cur);
			cur = json_deep_copy(rep);
		} else {
			cur = record_apply(cur, patch);
		}
		if (!cur) {
			json_decref(o);
			err = -ENOMEM;
			break;
		}
		s = (struct record_snap){
			.kind = json_string_value(json_object_get(o, "kind")),
			.mark = json_string_value(json_object_get(o, "mark")),
			.t = json_number_value(json_object_get(o, "t")),
			.report = cur, .line = o,
		};
		st->lines++;
		st->final |= !strcmp(s.kind, "final");
		err = cb(ctx, header, &s);
		json_decref(o);
		if (err)
			break;
	}
	if (!err && n < -1) {
		err = (int)n;	/* -E2BIG, -ENOMEM */
		st->bad_line = lineno + 1;
	}
	if (!err && ferror(f))
		err = -EIO;
	if (!err && !header)
		err = -EINVAL;	/* empty */
	free(buf);
	json_decref(cur);
	json_decref(header);
	return err;
}
