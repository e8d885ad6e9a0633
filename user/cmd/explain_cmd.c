// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * explain_cmd.c - memacct explain PID | --cgroup NAME|PATH [-j] [--by
 * mapping|file|kind] [--top N] [--watch DUR] [--numa-threshold PCT]
 * [--pin-path DIR]: the command. Options into struct explain_env (as
 * libbpf-tools' tools hold theirs), the processes to explain, the model
 * (explain.c) and its printers (explain_print.c); the exit codes are
 * chosen here only (README "Exit codes", docs/explain.md).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "explain.h"
#include "explain_print.h"
#include "numa.h"
#include "pin.h"
#include "report.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

struct explain_env {
	const char *cgroup;		/* --cgroup NAME|PATH, or NULL */
	const char *pid;		/* PID or -p PID, or NULL */
	const char *pin_dir;		/* --pin-path: a daemon's pins */
	enum by by;
	uint64_t top;			/* --top N, 0: all */
	uint64_t watch_ns;		/* --watch DUR, 0: no watch */
};

/* The options into @env; 0, or the exit code after saying what is wrong. */
static int parse_args(int argc, char **argv, struct explain_env *env)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 't' },
		{ "watch", required_argument, NULL, 'w' },
		{ "numa-threshold", required_argument, NULL, 'n' },
		{ "pin-path", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t pct;
	int c;

	while ((c = getopt_long(argc, argv, ":jc:p:b:t:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'c':
			env->cgroup = optarg;
			break;
		case 'p':	/* -p PID as bcc tools have it; same as the positional PID */
			env->pid = optarg;
			break;
		case 'P':
			env->pin_dir = optarg;
			break;
		case 'b':
			if (!strcmp(optarg, "mapping"))
				env->by = BY_MAPPING;
			else if (!strcmp(optarg, "file"))
				env->by = BY_FILE;
			else if (!strcmp(optarg, "kind"))
				env->by = BY_KIND;
			else {
				p_err("bad --by '%s' (mapping, file or kind)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			if (parse_u64(optarg, &env->top) || !env->top || env->top > INT_MAX) {
				p_err("bad --top '%s' (a positive number)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'w':
			if (parse_duration(optarg, &env->watch_ns) || !env->watch_ns) {
				p_err("bad --watch '%s' (examples: 500ms, 2s, 1m)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_u64(optarg, &pct) || pct > 100) {
				p_err("bad --numa-threshold '%s' (a percentage, 0 to 100)", optarg);
				return EXIT_USAGE;
			}
			numa_threshold_pct = (unsigned int)pct;
			break;
		case 'h':
			usage_print(stdout, "explain");
			return -1;	/* EXIT_OK, after the help */
		default:
			return opt_error("explain", c, argv);
		}
	}
	if (!env->pid && optind < argc)
		env->pid = argv[optind++];
	if (!!env->cgroup == !!env->pid || optind < argc) {
		p_err("explain: give one PID or --cgroup NAME|PATH (memacct help explain)");
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * The cgroup and processes @env names: r->cg, *pids (owned), *npids, and
 * the watch (before listing a cgroup's processes: workers forked meanwhile
 * are in it). 0, or the exit code after saying why not.
 */
static int target(const struct explain_env *env, struct explain *e, struct report *r,
		  pid_t **pids, int *npids)
{
	uint64_t pid64;
	int err;

	if (env->cgroup) {
		e->cgroup_mode = true;
		err = memcg_resolve(env->cgroup, &r->cg, stderr);
		if (err) {
			p_err("cgroup '%s': %s", env->cgroup, err == -ENOTUNIQ ?
			      "ambiguous (candidates above)" : strerror(-err));
			/* no such cgroup: 2, as in attach and audit (README; D12) */
			return memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
		}
		if (env->watch_ns && (err = explain_watch(e, &r->cg, env->watch_ns)))
			return exit_code_of(err);
		*npids = memcg_pids(&r->cg, true, pids);
		if (*npids < 0) {
			p_err("listing the processes of %s: %s", r->cg.path, strerror(-*npids));
			*pids = NULL;
			return EXIT_RUNTIME;
		}
		return 0;
	}
	if (parse_u64(env->pid, &pid64) || !pid64 || pid64 > INT_MAX) {
		p_err("bad PID '%s'", env->pid);
		return EXIT_USAGE;
	}
	*pids = malloc(sizeof(**pids));
	if (!*pids)
		return EXIT_RUNTIME;
	(*pids)[0] = (pid_t)pid64;
	*npids = 1;
	if (kill((*pids)[0], 0) && errno == ESRCH) {
		p_err("process %d: no such process", (*pids)[0]);
		return EXIT_USAGE;	/* bad input, as attach --pid (D12) */
	}
	err = memcg_of_pid((*pids)[0], &r->cg);
	if (err)
		p_info("memory cgroup of %d: %s", (*pids)[0], strerror(-err));
	if (!env->watch_ns)
		return 0;
	if (err) {
		p_err("--watch: the memory cgroup of %d: %s", (*pids)[0], strerror(-err));
		return EXIT_ENV;
	}
	err = explain_watch(e, &r->cg, env->watch_ns);
	return err ? exit_code_of(err) : 0;
}

int do_explain(int argc, char **argv)
{
	struct explain_env env = { .pin_dir = PIN_DEFAULT_DIR, .by = BY_MAPPING };
	struct explain e = { 0 };
	struct report r = { 0 };
	pid_t *pids = NULL;
	int npids = 0, ret, err;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	r.command = "explain";
	r.final = true;
	e.has_topo = !numa_topo_read(&e.topo);
	ret = target(&env, &e, &r, &pids, &npids);
	if (ret)
		goto out;
	err = explain_load(&e, pids, npids);
	if (err) {
		ret = exit_code_of(err);
		goto out;
	}
	if (!e.nprocs && !e.cgroup_mode) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	err = explain_build(&e, &r, env.pin_dir);
	if (err) {
		p_err("building the report: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	ret = EXIT_OK;
	if (!json_output)
		explain_print_plain(&e, &r, env.by, env.top);
	else if (explain_print_json(stdout, &e, &r, env.top))
		ret = EXIT_RUNTIME;
out:
	report_free(&r);
	explain_free(&e);
	free(pids);
	return ret;
}
