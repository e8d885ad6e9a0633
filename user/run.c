// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * run.c - memacct run [-j] [--interval DUR] -- CMD [ARGS...]
 * Creates a memory cgroup of its own, attaches the BPF side, starts CMD in
 * the cgroup, waits for CMD and every descendant (memacct is their
 * subreaper), prints the report, removes the cgroup and exits with CMD's
 * status (128+N when CMD was killed by signal N; 127 when CMD cannot be
 * found, 126 when it cannot be executed, as the shell does).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "commands.h"
#include "memlimits.h"
#include "session.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static void run_usage(FILE *f)
{
	usage_print(f, "run");	/* usage.c */
}

/* Why the vfork child did not become CMD (it shares our memory until exec). */
struct exec_failure {
	int err;		/* negative errno; 0: CMD was exec'd */
	bool joining;		/* joining the cgroup failed, not execvp() */
};

/*
 * Child side of vfork(): join the cgroup and exec. vfork() rather than
 * fork(): a forked child would copy-on-write memacct's own pages after it
 * joined the cgroup, and they would be counted as CMD's. The child shares
 * our memory until exec, so it reports its error through @f.
 */
static void exec_child(const struct memcg *cg, char **argv, volatile struct exec_failure *f)
{
	int e = memcg_add_pid(cg, 0);

	f->joining = e != 0;
	if (!e) {
		execvp(argv[0], argv);
		e = -errno;
	}
	f->err = e;
	_exit(e == -ENOENT && !f->joining ? 127 : 126);
}

/* vfork + exec_child in a frame of its own: nothing of do_run's is clobbered. */
static __attribute__((noinline)) pid_t spawn_in_cgroup(const struct memcg *cg, char **argv,
							volatile struct exec_failure *f)
{
	pid_t pid = vfork();

	if (pid == 0)
		exec_child(cg, argv, f);
	return pid;
}

static void exec_failure_msg(char *msg, size_t len, const char *cmd,
			     const struct exec_failure *f, const char *cg_path)
{
	if (f->joining)
		snprintf(msg, len, "cannot run '%s': joining %s: %s", cmd, cg_path,
			 strerror(-f->err));
	else
		snprintf(msg, len, "cannot run '%s': %s", cmd, strerror(-f->err));
}

/* The report of a run whose CMD could not start: "exec_error" says why. */
static void print_failed_report(const struct report *r, const char *cmd,
				const struct exec_failure *f, const char *cg_path)
{
	char msg[PATH_MAX + 256];
	FILE *out = report_stream();	/* -o FILE or stdout */

	exec_failure_msg(msg, sizeof(msg), cmd, f, cg_path);
	if (json_output) {
		json_t *o = report_json(r), *e = json_object();

		json_object_set_new(e, "command", json_string_sanitized(cmd));
		json_object_set_new(e, "errno", json_integer(-f->err));
		json_object_set_new(e, "message", json_string_sanitized(msg));
		json_object_set_new(o, "exec_error", e);
		json_dumpf(o, out, JSON_COMPACT | JSON_ENSURE_ASCII);
		fputc('\n', out);
		fflush(out);
		json_decref(o);
		return;
	}
	print_report(out, r);
	fprintf(out, "CMD did not start: %s (exit status %d)\n", msg, r->exit_status);
	fflush(out);
}

/* Reap every child; true when none is left. Sets *status for @cmd_pid. */
static bool reap(pid_t cmd_pid, int *status)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == cmd_pid)
			*status = st;
	return p < 0 && errno == ECHILD;
}

int do_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "keep-cgroup", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		LIMITS_LONG_OPTIONS,
		{ 0 },
	};
	struct limits_req lim = { 0 };
	uint64_t interval_ns = 0, next_ns;
	struct session s;
	struct report r;
	struct memcg cg;
	char name[64];
	volatile struct exec_failure child = { 0 };
	int c, err, status = 0, ret = EXIT_RUNTIME;
	bool keep = false;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+ji:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'i':
			if (parse_duration(optarg, &interval_ns) || !interval_ns) {
				p_err("bad --interval '%s' (examples: 500ms, 2s, 1m)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'k':
			keep = true;
			break;
		case 'h':
			run_usage(stdout);
			return EXIT_OK;
		case OPT_MEMORY_MAX:
		case OPT_MEMORY_HIGH:
		case OPT_MEMORY_SWAP_MAX:
		case OPT_FORCE:
			if (limits_getopt(c, optarg, &lim))
				return EXIT_USAGE;
			break;
		default:
			run_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		p_err("run: no command given (memacct run -- CMD [ARGS...])");
		return EXIT_USAGE;
	}
	argv += optind;
	if (loader_check_env())
		return EXIT_ENV;
	limits_restore_stale();

	snprintf(name, sizeof(name), "memacct-run-%d", getpid());
	err = memcg_create(name, &cg);
	if (err) {
		p_err("creating memory cgroup %s: %s", name, strerror(-err));
		return err == -ENOENT ? EXIT_ENV : EXIT_RUNTIME;
	}
	/* our own cgroup, removed at the end: no state file to restore from */
	err = limits_apply(&cg, &lim, false);
	if (err) {
		ret = err;
		goto out_rmdir;
	}
	err = session_start(&s, &cg);
	if (err) {
		ret = EXIT_ENV;
		goto out_rmdir;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = spawn_in_cgroup(&cg, argv, &child);
	if (pid < 0) {
		p_err("vfork: %s", strerror(errno));
		goto out_session;
	}
	/* the child has exec'd or exited: SIGINT/SIGTERM/SIGHUP go to it */
	install_stop_handlers(pid);
	if (child.err && !json_output) {	/* with -j: "exec_error" in the report */
		struct exec_failure f = { child.err, child.joining };
		char msg[PATH_MAX + 256];

		exec_failure_msg(msg, sizeof(msg), argv[0], &f, cg.path);
		p_err("%s", msg);
	}

	next_ns = now_ns() + interval_ns;
	while (!reap(pid, &status)) {
		session_poll(&s, 100);
		if (interval_ns && now_ns() >= next_ns) {
			if (!session_report(&s, &r)) {
				r.command = "run";
				print_report(stdout, &r);
				report_free(&r);
			}
			next_ns += interval_ns;
		}
	}
	session_poll(&s, 0);
	/* CMD never started: the vfork child's row is memacct's own memory */
	if (child.err)
		s.exclude_pid = pid;
	err = session_report(&s, &r);
	if (err) {
		p_err("building the report: %s", strerror(-err));
		goto out_session;
	}
	r.command = "run";
	r.final = true;
	r.has_exit_status = true;
	r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
	if (child.err) {
		struct exec_failure f = { child.err, child.joining };

		print_failed_report(&r, argv[0], &f, cg.path);
	} else {
		print_report(stdout, &r);
	}
	limits_note(&cg, &lim, &r);
	ret = r.exit_status;
	report_free(&r);
out_session:
	session_stop(&s);
out_rmdir:
	if (!keep) {
		err = memcg_remove(&cg);
		if (err)
			p_warn("removing %s: %s", cg.path, strerror(-err));
	}
	return ret;
}
