// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * report_cmd.c - memacct report [-j] [--cgroup PATH] FILE: a recording of
 * run/attach (--record, record.h) printed again as run printed it: each -i
 * report, then the final one with its phases, by the printers of report.c
 * (report_load.c reads each snapshot back into the report model). Or the
 * daemon's --json-log, one cgroup's collections as reports (--cgroup).
 * --html OUT: the recording drawn as one page instead (report_html.h).
 * Exit status: 0; 1 the file ends early (no final report: a line cut off,
 * a line that is no snapshot; what it holds is printed); 2 bad usage, a
 * file that cannot be read or is neither a recording nor a daemon log, a
 * snapshot without a report; 4 out of memory, a read error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "commands.h"
#include "phases.h"
#include "phases_print.h"
#include "record.h"
#include "report.h"
#include "report_html.h"
#include "report_print.h"
#include "signals.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

struct replay {
	bool closed;		/* the reader of the reports went away */
	struct html_doc *html;	/* --html: every snapshot drawn, none printed */
	json_t *header;		/* the recording's (a reference) */
};

/* One snapshot: printed when run printed it (an -i report, the final one). */
static int replay_snap(void *ctx, const json_t *header, const struct record_snap *s)
{
	struct replay *rp = ctx;
	struct phases ph;
	struct report r;
	bool final = !strcmp(s->kind, "final");
	int err;

	if (!rp->header)
		rp->header = json_incref((json_t *)header);
	if (!rp->html && !final && strcmp(s->kind, "interval"))
		return 0;
	err = report_from_json(s->report, &r);
	if (err)
		return err;
	r.mem_total = (uint64_t)json_integer_value(json_object_get(header, "mem_total_bytes"));
	record_numa(&r, s->line);
	err = phases_from_json(&ph, s->report);
	if (!err && final && (ph.ndone || ph.refused))
		report_set_phases(&r, &ph);
	if (!err && rp->html)
		err = html_add(rp->html, &r, s->kind);
	else if (!err && print_report(stdout, &r) == -EPIPE) {
		rp->closed = true;
		err = -EPIPE;
	}
	phases_free(&ph);
	report_free(&r);
	return err;
}

/* "/a/b", "a/b" and "a/b/" name the same cgroup */
static bool same_cgroup(const char *a, const char *b)
{
	size_t la, lb;

	while (*a == '/')
		a++;
	while (*b == '/')
		b++;
	la = strlen(a);
	lb = strlen(b);
	while (la && a[la - 1] == '/')
		la--;
	while (lb && b[lb - 1] == '/')
		lb--;
	return la == lb && !strncmp(a, b, la);
}

/*
 * The report of cgroup @cg in one daemon --json-log line @o (report_json()
 * of the root with a "cgroups" array): the cgroup's figures as totals, its
 * sampled peaks unknown (the daemon publishes none); false when the line
 * has no such cgroup (or is an OOM post-mortem).
 */
static bool daemon_cgroup_report(const json_t *o, const char *cg, struct report *r)
{
	const json_t *a = json_object_get(o, "cgroups"), *c;
	const char *fs;
	size_t i;

	if (!json_is_array(a) || report_from_json(o, r))
		return false;
	json_array_foreach(a, i, c) {
		const char *path = json_string_value(json_object_get(c, "cgroup"));

		if (!path || !same_cgroup(path, cg))
			continue;
		free(r->procs);	/* the host's top processes, not the cgroup's */
		r->procs = NULL;
		r->nprocs = 0;
		fs = json_string_value(json_object_get(json_object_get(o, "cgroup"), "fs_path"));
		snprintf(r->cg.rel, sizeof(r->cg.rel), "%s", path);
		snprintf(r->cg.path, sizeof(r->cg.path), "%s%s%s", fs ? fs : "",
			 path[0] == '/' ? "" : "/", strcmp(path, "/") ? path : "");
		r->cg.id = (uint64_t)json_integer_value(json_object_get(c, "id"));
		report_metrics_from_json(&r->totals, c, MF_SAMPLED);
		return true;
	}
	report_free(r);
	return false;
}

/*
 * The daemon's log for one cgroup: every collection a report, the last one
 * final. Returns the exit status.
 */
static int replay_daemon_log(FILE *f, const char *file, const char *cg)
{
	json_t *prev = NULL;
	char *buf = NULL;
	size_t cap = 0, found = 0;
	uint64_t lineno = 0, bad = 0;
	ssize_t n;
	bool cut = false;

	for (;;) {
		json_t *o = NULL;
		struct report r;

		n = read_line(&buf, &cap, f, RECORD_LINE_MAX);
		if (n < -1) {
			p_err("%s: line %llu: %s (a line holds one collection, at most %lu MiB)",
			      file, (unsigned long long)lineno + 1, strerror((int)-n),
			      RECORD_LINE_MAX >> 20);
			json_decref(prev);
			free(buf);
			return n == -E2BIG ? EXIT_USAGE : EXIT_RUNTIME;
		}
		if (n > 0) {
			lineno++;
			o = json_loadb(buf, n, 0, NULL);
			if (!o) {
				if (buf[n - 1] != '\n')
					cut = true;
				else if (!bad)
					bad = lineno;
				continue;
			}
			if (!json_object_get(o, "cgroups")) {
				json_decref(o);	/* an OOM post-mortem line */
				continue;
			}
		}
		/* print the one before: the last one is the final report */
		if (prev && daemon_cgroup_report(prev, cg, &r)) {
			r.final = !o;
			r.replayed_from = file;
			found++;
			if (print_report(stdout, &r) == -EPIPE)
				n = 0;
			report_free(&r);
		}
		json_decref(prev);
		prev = o;
		if (n <= 0)
			break;
	}
	json_decref(prev);
	free(buf);
	if (bad)
		p_warn("%s: line %llu is not JSON: skipped", file, (unsigned long long)bad);
	if (cut)
		p_warn("%s: the last line is cut off (the daemon was stopped while writing "
		       "it): ignored", file);
	if (!found) {
		p_err("%s: no collection holds cgroup %s (paths below the hierarchy root, as "
		      "the log's \"cgroups\" name them)", file, cg);
		return EXIT_USAGE;
	}
	return cut || bad ? EXIT_PARTIAL : EXIT_OK;
}

/* Is line 1 of @f a daemon --json-log line? @f rewound after. */
static bool is_daemon_log(FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = read_line(&buf, &cap, f, RECORD_LINE_MAX);
	json_t *o = n > 0 ? json_loadb(buf, n, 0, NULL) : NULL;
	const char *schema = json_string_value(json_object_get(o, "schema"));
	const char *cmd = json_string_value(json_object_get(o, "command"));
	bool yes = schema && cmd && !strcmp(schema, REPORT_SCHEMA) && !strcmp(cmd, "daemon");

	json_decref(o);
	free(buf);
	rewind(f);
	return yes;
}

/* report's options (memacct help report), parsed by parse_args(). */
struct report_env {
	const char *file;		/* FILE: a recording or a daemon's --json-log */
	const char *cgroup;		/* --cgroup PATH: a daemon log's cgroup */
	const char *html;		/* --html OUT, or NULL */
};

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct report_env *env)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":jc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'c':
			env->cgroup = optarg;
			break;
		case 'H':
			env->html = optarg;
			break;
		case 'h':
			usage_print(stdout, "report");
			return -1;
		default:
			return opt_error("report", c, argv);
		}
	}
	if (argc - optind != 1) {
		p_err("report: one FILE (memacct report [-j] [--cgroup PATH] FILE)");
		return EXIT_USAGE;
	}
	env->file = argv[optind];
	return 0;
}

/*
 * A recording (@f) replayed: its reports printed as run or attach printed
 * them, the page written with --html. The exit status: 0, 1 when it ends
 * early (cut, no final report), 2 not a recording, 4 a read or write error.
 */
static int replay_recording(FILE *f, const struct report_env *env)
{
	struct replay rp = { 0 };
	struct record_stats st;
	int err, ret = EXIT_OK;

	if (env->html && !(rp.html = html_new())) {
		p_err("out of memory");
		return EXIT_RUNTIME;
	}
	err = record_read(f, replay_snap, &rp, &st);
	if (err == -EINVAL && !st.lines) {
		p_err("%s is not a memacct recording (run --record, attach --record: its first "
		      "line has \"format\": \"%s\") nor a daemon --json-log", env->file,
		      RECORD_FORMAT);
		ret = EXIT_USAGE;
	} else if (rp.closed) {
		ret = EXIT_OK;	/* the reader went away */
	} else if (err == -EINVAL) {	/* a snapshot's report_from_json() */
		p_err("%s: snapshot %llu holds no memacct.report/v1 report", env->file,
		      (unsigned long long)st.lines);
		ret = EXIT_USAGE;
	} else if (err == -E2BIG) {
		p_err("%s: line %llu is longer than %lu MiB: not a memacct recording", env->file,
		      (unsigned long long)st.bad_line, RECORD_LINE_MAX >> 20);
		ret = EXIT_USAGE;
	} else if (err) {
		p_err("reading %s: %s", env->file, strerror(-err));
		ret = EXIT_RUNTIME;
	} else {
		if (st.cut)
			p_warn("%s: the last line is cut off (memacct was killed while writing "
			       "it): ignored", env->file);
		if (st.bad_line)
			p_warn("%s: line %llu is no snapshot of a recording: it and the lines "
			       "after it are ignored", env->file, (unsigned long long)st.bad_line);
		if (!st.final) {
			p_warn("%s holds no final report: the recording ends early (memacct "
			       "killed, or its disk full); printed: the %llu snapshots before",
			       env->file, (unsigned long long)st.lines);
			ret = EXIT_PARTIAL;
		}
		if (rp.html) {
			FILE *o = fopen(env->html, "we");

			err = o ? html_write(rp.html, o, rp.header) : -errno;
			if (o && fclose(o) && !err)
				err = -errno;
			if (err) {
				p_err("writing %s: %s", env->html, strerror(-err));
				ret = EXIT_RUNTIME;
			}
		}
	}
	html_free(rp.html);
	json_decref(rp.header);
	return ret;
}

int do_report(int argc, char **argv)
{
	struct report_env env = { 0 };
	FILE *f;
	int ret;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	/* a closed report pipe ends the reports */
	ignore_sigpipe();
	f = fopen(env.file, "re");
	if (!f) {
		p_err("opening %s: %s", env.file, strerror(errno));
		return EXIT_USAGE;
	}
	{
		struct stat st;

		/* a directory opens (read-only) and fails at the first read */
		if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
			p_err("%s is a directory: report reads a recording (run --record) "
			      "or a daemon --json-log", env.file);
			fclose(f);
			return EXIT_USAGE;
		}
	}
	if (is_daemon_log(f)) {
		if (env.html) {
			p_err("--html draws a recording (run --record); %s is a daemon log",
			      env.file);
			ret = EXIT_USAGE;
		} else if (!env.cgroup) {
			p_err("%s is a daemon --json-log: give the cgroup with --cgroup PATH",
			      env.file);
			ret = EXIT_USAGE;
		} else {
			ret = replay_daemon_log(f, env.file, env.cgroup);
		}
	} else if (env.cgroup) {
		p_err("--cgroup reads a daemon --json-log; %s is not one", env.file);
		ret = EXIT_USAGE;
	} else {
		ret = replay_recording(f, &env);
	}
	fclose(f);
	return ret;
}
