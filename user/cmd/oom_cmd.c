// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * oom_cmd.c - `memacct oom`: the OOM kills the daemon recorded, after the
 * fact. Two sources, joined: the daemon's OOM log (daemon_oom.h, one
 * memacct.oom/v1 line per kill, the full post-mortem made at the kill) and
 * the kernel side's pinned oom_history (the last MEMACCT_OOM_HISTORY
 * records as oom:mark_victim wrote them, kills while no daemon ran
 * included: those get the kernel's figures only, "source": "kernel").
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "commands.h"
#include "daemon_oom.h"
#include "oom_print.h"
#include "pin.h"
#include "report_print.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* Post-mortems of the OOM log @path appended to @all, "source": "daemon". */
static int read_log(const char *path, json_t *all)
{
	size_t from = json_array_size(all);
	int err = oom_log_read(path, all);

	for (size_t i = from; i < json_array_size(all); i++)
		json_object_set_new(json_array_get(all, i), "source", json_string("daemon"));
	return err;
}

/* Whether @all has the post-mortem of the kill @k (same pid, within 1 s). */
static bool have_kill(json_t *all, const struct oom_kill *k)
{
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *o = json_array_get(all, i);

		if (json_integer_value(json_object_get(o, "pid")) == k->pid &&
		    fabs(json_number_value(json_object_get(o, "time")) - k->time) < 1.0)
			return true;
	}
	return false;
}

/* The pinned history's records that the log lacks, appended to @all. */
static int read_history(const char *pin_dir, json_t *all, long page_size)
{
	/* the pinned kernel side's hook: one look at its links for every
	 * record (which holds no fault_alloc: true) */
	uint64_t unmeasured = metric_fault_mask(!pin_dir_fault_hooked(pin_dir), true);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/maps/oom_history", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	for (__u32 i = 0; i < MEMACCT_OOM_HISTORY; i++) {
		struct memacct_oom_event ev;
		struct oom_kill *k;

		if (bpf_map_lookup_elem(fd, &i, &ev) || !ev.seq)
			continue;
		k = calloc(1, sizeof(*k));
		if (!k)
			break;
		oom_from_event(k, &ev, page_size, unmeasured);
		if (!have_kill(all, k)) {
			json_t *o;

			oom_explain_late(k);
			o = oom_json(k);
			json_object_set_new(o, "source", json_string("kernel"));
			json_array_append_new(all, o);
		}
		free(k);
	}
	close(fd);
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *)a, "time"));
	double y = json_number_value(json_object_get(*(json_t *const *)b, "time"));

	return x < y ? -1 : x > y;
}

/* oom's options (memacct help oom), parsed by parse_args(). */
struct oom_env {
	const char *pin_dir;		/* --pin-path: the daemon's pinned history */
	const char *log;		/* --oom-log: the daemon's post-mortems */
	uint64_t since_ns;		/* --since DUR; 0: all */
	bool last;			/* --last: the newest, in full */
};

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct oom_env *env)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "since", required_argument, NULL, 's' },
		{ "last", no_argument, NULL, 'l' },
		{ "pin-path", required_argument, NULL, 'p' },
		{ "oom-log", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 's':
			if (parse_duration(optarg, &env->since_ns) || !env->since_ns) {
				p_err("bad --since '%s' (examples: 10m, 2h, 1d)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			env->last = true;
			break;
		case 'p':
			env->pin_dir = optarg;
			break;
		case 'O':
			env->log = optarg;
			break;
		case 'h':
			usage_print(stdout, "oom");
			return -1;
		default:
			return opt_error("oom", c, argv);
		}
	}
	if (optind < argc) {
		p_err("oom: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

/* Where the list comes from: each source's path and how its read went. */
struct oom_sources {
	int err_log, err_hist;		/* 0 or negative errno */
};

/*
 * The kills of the log (and its rotated .1) and of the pinned history, each
 * once, oldest first, --since and --last applied, into *@list (owned), how
 * each source's read went into *@src. 0, or the exit code after saying why
 * not.
 */
static int oom_collect(const struct oom_env *env, json_t **list, struct oom_sources *src)
{
	json_t *all = json_array(), **v;
	char old[PATH_MAX + 8];
	int err_log, err_hist;
	struct timespec ts;
	double now;
	size_t n;

	snprintf(old, sizeof(old), "%s.1", env->log);
	read_log(old, all);	/* rotated away: none is no error */
	err_log = src->err_log = read_log(env->log, all);
	err_hist = src->err_hist = read_history(env->pin_dir, all, sysconf(_SC_PAGESIZE));
	if (err_log && err_hist) {
		p_err("no OOM log at %s (%s) and no pinned history at %s/maps/oom_history (%s): "
		      "is a memacct daemon running (memacct daemon --pin-path, --oom-log)?",
		      env->log, strerror(-err_log), env->pin_dir, strerror(-err_hist));
		json_decref(all);
		return EXIT_ENV;
	}
	n = json_array_size(all);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		json_decref(all);
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	qsort(v, n, sizeof(*v), cmp_time);
	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	*list = json_array();
	for (size_t i = 0; i < n; i++)
		if (!env->since_ns || json_number_value(json_object_get(v[i], "time")) >=
				      now - env->since_ns / 1e9)
			json_array_append(*list, v[i]);
	free(v);
	json_decref(all);
	if (env->last && json_array_size(*list) > 1) {
		json_t *newest = json_incref(json_array_get(*list, json_array_size(*list) - 1));

		json_array_clear(*list);
		json_array_append_new(*list, newest);
	}
	return 0;
}

/* A source of the list as JSON: its path, and null or why it was not read. */
static json_t *source_json(const char *kind, const char *path, int err)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "error", err ? json_string(strerror(-err)) : json_null());
	return o;
}

/* The kills as one JSON object (memacct.oom/v1); @list taken over. */
static int print_json(const struct oom_env *env, const struct oom_sources *src, json_t *list)
{
	json_t *out = json_object(), *sources = json_array();
	char hist[PATH_MAX];
	char *s;

	snprintf(hist, sizeof(hist), "%s/maps/oom_history", env->pin_dir);
	json_array_append_new(sources, source_json("oom_log", env->log, src->err_log));
	json_array_append_new(sources, source_json("kernel_history", hist, src->err_hist));
	json_object_set_new(out, "schema", json_string(OOM_SCHEMA));
	json_object_set_new(out, "command", json_string("oom"));
	json_object_set_new(out, "sources", sources);
	json_object_set_new(out, "oom_kills", list);
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	if (!s)
		return EXIT_RUNTIME;
	fprintf(report_stream(), "%s\n", s);
	free(s);
	return report_written(report_stream()) ? EXIT_RUNTIME : EXIT_OK;
}

/* A line per kill, or with --last the newest's whole post-mortem. */
static int print_plain(const struct oom_env *env, const struct oom_sources *src,
		       const json_t *list)
{
	FILE *f = report_stream();

	/* which daemon's list this is: another pin path or log is another's */
	fprintf(f, "OOM kills from %s (%s) and %s/maps/oom_history (%s)\n", env->log,
		src->err_log ? strerror(-src->err_log) : "the daemon's post-mortems",
		env->pin_dir, src->err_hist ? strerror(-src->err_hist) :
		"the kernel side's last records");
	if (!json_array_size(list))
		fprintf(f, "no OOM kills recorded%s\n", env->since_ns ? " in that time" : "");
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *k = json_array_get(list, i);

		if (env->last) {
			oom_print_json(f, k, true);
			continue;
		}
		fprintf(f, "%s  PID %-7d %-15s %-8s %s%s\n",
			json_string_value(json_object_get(k, "time_iso")) ?: "?",
			(int)json_integer_value(json_object_get(k, "pid")),
			json_string_value(json_object_get(k, "comm")) ?: "?",
			json_string_value(json_object_get(k, "cause")) ?: "-",
			json_string_value(json_object_get(k, "limit_cgroup")) ?:
			(json_is_true(json_object_get(k, "host_wide")) ? "(host-wide)" : "?"),
			!strcmp(json_string_value(json_object_get(k, "source")) ?: "", "kernel") ?
			"  [kernel record only]" : "");
	}
	return report_written(f) ? EXIT_RUNTIME : EXIT_OK;
}

int do_oom(int argc, char **argv)
{
	struct oom_env env = { .pin_dir = PIN_DEFAULT_DIR, .log = OOM_LOG_DEFAULT };
	struct oom_sources src;
	json_t *list;
	int ret;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	ret = oom_collect(&env, &list, &src);
	if (ret)
		return ret;
	if (json_output)
		return print_json(&env, &src, list);
	ret = print_plain(&env, &src, list);
	json_decref(list);
	return ret;
}
