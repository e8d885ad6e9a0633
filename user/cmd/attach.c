// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * attach.c - memacct attach --cgroup NAME|PATH | --pid PID [-j]
 *            [--interval DUR] [--duration DUR]
 * Accounts an existing cgroup subtree (or one process and its descendants)
 * from now on: one report per interval, a summary at the end (Ctrl-C,
 * SIGTERM or --duration). A reader of the reports that goes away (closed
 * pipe: `| head`) ends attach too, with exit status 0 once the limits it
 * set are restored.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "commands.h"
#include "memlimits.h"
#include "proc.h"
#include "record.h"
#include "report_print.h"
#include "session.h"
#include "signals.h"
#include "table.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define DEFAULT_INTERVAL_NS (5ULL * 1000000000ULL)

static void attach_usage(FILE *f)
{
	usage_print(f, "attach");	/* usage.c */
}

/* Keep only @pid and its descendants (by the ppid links of the rows). */
static void keep_tree(struct report *r, int pid)
{
	size_t n = 0;
	bool changed = true;
	char *in = calloc(r->nprocs ? r->nprocs : 1, 1);

	if (!in)
		return;
	for (size_t i = 0; i < r->nprocs; i++)
		in[i] = r->procs[i].pid == pid;
	while (changed) {
		changed = false;
		for (size_t i = 0; i < r->nprocs; i++) {
			if (in[i])
				continue;
			for (size_t j = 0; j < r->nprocs; j++) {
				if (in[j] &&
				    r->procs[i].ppid == r->procs[j].pid) {
					in[i] = changed = true;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < r->nprocs; i++)
		if (in[i])
			r->procs[n++] = r->procs[i];
	r->nprocs = n;
	free(in);
}

/* With --pid the totals are the sums of the process tree's rows. */
static void tree_totals(struct report *r)
{
	metrics_sum_rows(&r->totals, r->procs, r->nprocs);
	r->totals_of_rows = true;
}

/* attach's options (memacct help attach), parsed by parse_args(). */
struct attach_env {
	const char *cgroup;		/* --cgroup NAME|PATH, or NULL */
	uint64_t pid;			/* --pid PID, or 0 */
	uint64_t interval_ns;		/* -i or INTERVAL */
	uint64_t duration_ns;		/* --duration, or INTERVAL x COUNT; 0: until stopped */
	const char *record_path;	/* --record FILE, or NULL */
	struct limits_req lim;
	double oom_warn_s;		/* --oom-warn: FC_WARN_S, 0: off */
};

/*
 * The positional INTERVAL [COUNT], as vmstat and bcc tools: COUNT reports
 * in all. 0, or the exit code after saying what is wrong.
 */
static int parse_interval_count(int argc, char **argv, struct attach_env *env)
{
	if (optind < argc) {
		if (parse_duration(argv[optind], &env->interval_ns) || !env->interval_ns) {
			p_err("bad INTERVAL '%s' (examples: 500ms, 2s, 1m)", argv[optind]);
			return EXIT_USAGE;
		}
		optind++;
	}
	if (optind < argc) {
		uint64_t count;

		if (parse_u64(argv[optind], &count) || !count || count > 1000000 ||
		    env->duration_ns) {
			p_err("bad COUNT '%s' (a positive number; not with --duration)",
			      argv[optind]);
			return EXIT_USAGE;
		}
		/* the last report is the summary; saturated like ns_after() (D5) */
		env->duration_ns = count > UINT64_MAX / env->interval_ns ? UINT64_MAX :
				   env->interval_ns * count;
		optind++;
	}
	return 0;
}

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct attach_env *env)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		RECORD_LONG_OPTION,
		OOM_WARN_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		LIMITS_LONG_OPTIONS,
		TABLE_LONG_OPTIONS,
		DMA_PINS_LONG_OPTION,
		{ 0 },
	};
	int c, err;

	while ((c = getopt_long(argc, argv, ":c:p:ji:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			env->cgroup = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, &env->pid) || !env->pid || env->pid > 4194304) {
				p_err("bad --pid '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'd':
			if (parse_duration(optarg, &env->duration_ns) || !env->duration_ns) {
				p_err("bad --duration '%s' (examples: 30s, 5m, 1h)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			attach_usage(stdout);
			return -1;
		default:
			err = session_getopt(c, optarg, &env->lim, &env->record_path,
					     &env->interval_ns, &env->oom_warn_s);
			if (err)
				return err == 1 ? opt_error("attach", c, argv) : err;
		}
	}
	err = parse_interval_count(argc, argv, env);
	if (err)
		return err;
	if (!env->cgroup == !env->pid || optind != argc) {
		p_err("attach: give exactly one of --cgroup NAME|PATH or --pid PID");
		return EXIT_USAGE;
	}
	return 0;
}

/* The memory cgroup @env names into @cg; 0, or the exit code after saying why not. */
static int attach_target(const struct attach_env *env, struct memcg *cg)
{
	int err;

	if (env->cgroup) {
		err = memcg_resolve(env->cgroup, cg, stderr);
		if (err == -ENOTUNIQ) {
			p_err("cgroup name '%s' is ambiguous: give one of the paths above",
			      env->cgroup);
			return EXIT_USAGE;
		}
	} else {
		struct proc_status ps;

		/*
		 * A kernel thread or a zombie has no memory of its own and sits
		 * in the root cgroup: attaching there would account the whole
		 * host under its name (reliability audit D9); explain refuses too.
		 */
		err = read_status((pid_t)env->pid, &ps);
		if (!err && !ps.has_mm) {
			p_err("process %llu has no address space (kernel thread or zombie): "
			      "nothing to attach to", (unsigned long long)env->pid);
			return EXIT_USAGE;
		}
		if (!err)
			err = memcg_of_pid((pid_t)env->pid, cg);
		if (err == -ENOENT)
			err = -ESRCH;
	}
	if (err) {
		if (env->cgroup)
			p_err("no memory cgroup '%s': %s", env->cgroup, strerror(-err));
		else
			p_err("no process %llu: %s", (unsigned long long)env->pid, strerror(-err));
		/* D12: "..", "", a file or a 5,000-byte name is a usage error */
		return err == -ESRCH || memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
	}
	if (env->cgroup && memcg_has_memory(cg) == 0) {
		p_err("cgroup %s has no memory controller (cgroup v2: its parent's "
		      "cgroup.subtree_control lacks memory): its tasks are charged to an "
		      "ancestor, nothing would be accounted to it", cg->path);
		return EXIT_ENV;
	}
	return 0;
}

/* A report of the session (@final: the summary), cut to --pid's tree; 0 or -errno. */
static int attach_report(struct session *s, const struct attach_env *env, bool final,
			 struct report *r)
{
	int err = session_report(s, r);

	if (err)
		return err;
	r->command = "attach";
	r->final = final;
	if (final && ((err = page_cache_resolve(&r->page_cache, PAGE_CACHE_SHOWN)) ||
		      (err = page_cache_recall(&r->page_cache, &s->pc_paths))))
		p_warn("naming the files of the page cache: %s", strerror(-err));
	if (env->pid) {
		keep_tree(r, (int)env->pid);
		tree_totals(r);
	}
	return 0;
}

/*
 * A report every INTERVAL, printed and recorded, until --duration, a stop
 * signal, the cgroup's removal or a reader gone (EPIPE).
 */
static void attach_loop(struct session *s, const struct attach_env *env,
			const struct memcg *cg, struct recorder *rec)
{
	uint64_t start = now_ns(), next = ns_after(start, env->interval_ns);
	uint64_t end = env->duration_ns ? ns_after(start, env->duration_ns) : UINT64_MAX;
	size_t warnings_seen = 0;
	bool gone = false;
	struct report r;
	int err;

	while (!stop_requested && !gone) {
		uint64_t now = now_ns();

		if (now >= end)
			break;
		if (now < next) {
			uint64_t wait = next - now;

			if (end - now < wait)
				wait = end - now;
			session_poll(s, wait > 200000000ULL ? 200 : (int)(wait / 1000000) + 1);
			if (s->nwarnings != warnings_seen) {	/* an OOM forecast: said now */
				session_say_warnings(s, &warnings_seen);
				if (rec->fd >= 0 && !attach_report(s, env, false, &r)) {
					record_snapshot(rec, "oom_warning", NULL, &r);
					report_free(&r);
				}
			}
			continue;
		}
		next = ns_after(next, env->interval_ns);
		gone = access(cg->path, F_OK) != 0;
		if (attach_report(s, env, false, &r))
			continue;
		err = print_report(stdout, &r);
		record_snapshot(rec, "interval", NULL, &r);
		report_free(&r);
		if (err == -EPIPE)
			break;	/* the reader went away: restore, exit 0 */
	}
	if (gone)
		p_warn("cgroup %s was removed; final summary follows", cg->path);
}

int do_attach(int argc, char **argv)
{
	struct attach_env env = { .interval_ns = DEFAULT_INTERVAL_NS, .oom_warn_s = FC_WARN_S };
	struct recorder rec = { .fd = -1 };
	struct session s;
	struct report r;
	struct memcg cg;
	int err, ret;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	report_table_timed(true);	/* attach reports every INTERVAL */
	ret = attach_target(&env, &cg);
	if (ret)
		return ret;
	if (loader_check_env())
		return EXIT_ENV;
	/* a closed report pipe ends the reports and attach, limits restored */
	ignore_sigpipe();
	limits_restore_stale();
	/* handlers first: a SIGINT between writing the limits and the loop restores */
	install_stop_handlers(0);
	err = limits_apply(&cg, &env.lim, true);
	if (err)
		return exit_code_of(err);
	ret = EXIT_ENV;
	if (session_start(&s, &cg))
		goto out_limits;
	s.oom_warn_s = env.oom_warn_s;
	{
		struct record_info ri = { .command = "attach", .cg = &cg,
					  .interval_ns = env.interval_ns };

		err = record_open(&rec, env.record_path, &ri);
		if (err) {
			p_err("--record %s: %s", env.record_path, strerror(-err));
			session_stop(&s);
			ret = EXIT_USAGE;
			goto out_limits;
		}
	}
	attach_loop(&s, &env, &cg, &rec);
	session_poll(&s, 0);
	ret = EXIT_OK;
	err = attach_report(&s, &env, true, &r);
	if (err) {
		p_err("building the report: %s", strerror(-err));
		ret = EXIT_RUNTIME;
	} else {
		record_snapshot(&rec, "final", NULL, &r);
		print_report(stdout, &r);
		limits_note(&cg, &env.lim, &r);
		report_free(&r);
	}
	record_close(&rec);
	session_stop(&s);
out_limits:
	if (limits_any(&env.lim) && limits_restore(&cg) && ret == EXIT_OK)
		ret = EXIT_RUNTIME;
	return ret;
}
