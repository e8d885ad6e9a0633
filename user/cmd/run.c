// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * run.c - memacct run [-j] [--interval DUR] -- CMD [ARGS...]
 * Creates a memory cgroup of its own below the caller's (run_parent(): CMD
 * stays within every limit and the accounting of the caller's cgroup),
 * attaches the BPF side, starts CMD in the cgroup, waits for CMD and every
 * descendant (memacct is their subreaper), prints the report, removes the
 * cgroup and exits with CMD's status (128+N when CMD was killed by signal
 * N; 127 when CMD cannot be found, 126 when it cannot be executed, as the
 * shell does). CMD and its descendants may mark phases (MEMACCT_MARK_FD,
 * phases.h): each mark is answered once its snapshot is taken, and the
 * final report gives every phase's changes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "cgroup_labels.h"
#include "commands.h"
#include "memlimits.h"
#include "oom_print.h"
#include "phases.h"
#include "phases_print.h"
#include "record.h"
#include "report_print.h"
#include "session.h"
#include "signals.h"
#include "table.h"
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
static void exec_child(const struct memcg *cg, char **argv, volatile struct exec_failure *f,
		       pid_t parent)
{
	int e;

	/* memacct killed (SIGKILL): CMD does not run on, limited, in our cgroup */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	e = memcg_add_pid(cg, 0);

	f->joining = e != 0;
	if (!e) {
		reset_child_signals();	/* CMD gets SIGPIPE as we got it */
		execvp(argv[0], argv);
		e = -errno;
	}
	f->err = e;
	_exit(e == -ENOENT && !f->joining ? 127 : 126);
}

/*
 * memacct out of the OOM killer's choice (oom_score_adj -1000, as root may
 * set it), once CMD has its own value: run shares the limits of the cgroup
 * it was started in with CMD, and once the kernel had killed CMD under a
 * 96 MiB limit it killed memacct too (76 ms later, the victim's memory not
 * yet given back: a TCG guest under load), which left its leaf cgroup and no
 * report. Set after the vfork child exec'd, so neither CMD nor what CMD
 * forks inherits it; memacct's own allocations are bounded (docs/run.md).
 */
static void oom_protect_self(void)
{
	int err = write_file("/proc/self/oom_score_adj", "-1000");

	if (err)
		p_info("oom_score_adj -1000: %s (memacct stays a candidate of the OOM "
			"killer)", strerror(-err));
}

/* vfork + exec_child in a frame of its own: nothing of do_run's is clobbered. */
static __attribute__((noinline)) pid_t spawn_in_cgroup(const struct memcg *cg, char **argv,
							volatile struct exec_failure *f)
{
	pid_t parent = getpid(), pid = vfork();

	if (pid == 0)
		exec_child(cg, argv, f, parent);
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

/*
 * A run whose CMD could not start: no report for a person (the cgroup's
 * figures would be memacct's own vfork child's; the error went to stderr
 * when it happened); with -j the one object scripts wait for, its
 * "exec_error" saying why (docs/metrics.md) and no process rows.
 */
static void print_failed_report(const struct report *r, const char *cmd,
				const struct exec_failure *f, const char *cg_path)
{
	char msg[PATH_MAX + 256];
	FILE *out = report_stream();	/* -o FILE or stdout */

	json_t *o, *e;

	if (!json_output || reports_closed())
		return;
	exec_failure_msg(msg, sizeof(msg), cmd, f, cg_path);
	o = report_json(r);
	e = json_object();
	json_object_set_new(e, "command", json_string_sanitized(cmd));
	json_object_set_new(e, "errno", json_integer(-f->err));
	json_object_set_new(e, "message", json_string_sanitized(msg));
	json_object_set_new(o, "exec_error", e);
	errno = 0;
	json_dumpf(o, out, JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', out);
	json_decref(o);
	report_written(out);
}

/*
 * Reap every child; true when none is left. Sets *status for @cmd_pid and
 * stops forwarding signals to it before it is reaped (its PID is free for
 * the kernel to give to another process from then on; reliability audit D2).
 */
static bool reap(pid_t cmd_pid, int *status, bool *cmd_done)
{
	bool none_left;
	int st, e;
	pid_t p;

	block_stop_signals(true);
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == cmd_pid) {
			*status = st;
			*cmd_done = true;
			set_forward_pid(0);
		}
	e = errno;
	none_left = p < 0 && e == ECHILD;
	block_stop_signals(false);
	return none_left;
}

#define STOP_GRACE_NS 2000000000ULL

/*
 * Asked to stop after CMD ended while descendants it left (daemons) live:
 * the signal goes to the processes in our cgroup (only CMD's descendants
 * are there), then we wait STOP_GRACE_NS at most for them. Processes still
 * there keep the cgroup; the warning names it. While we have not reaped
 * them, the PIDs read from cgroup.procs cannot be recycled: each is alive
 * or a zombie of ours or of another descendant.
 */
static void stop_descendants(const struct memcg *cg, int sig, int *status, pid_t cmd_pid,
			     bool *cmd_done)
{
	uint64_t end = now_ns() + STOP_GRACE_NS;
	pid_t *pids = NULL;
	int n = memcg_pids(cg, true, &pids);

	for (int i = 0; i < n; i++)
		if (pids[i] > 0 && pids[i] != getpid())
			kill(pids[i], sig);
	free(pids);
	while (!reap(cmd_pid, status, cmd_done) && now_ns() < end) {
		struct timespec ts = { 0, 50000000 };

		nanosleep(&ts, NULL);
	}
	n = memcg_pids(cg, true, &pids);
	free(pids);
	if (n > 0)
		p_warn("%d process%s left by CMD still in %s after %s", n, n == 1 ? "" : "es",
		       cg->path, strsignal(sig));
}

/*
 * memacct-run-PID-XXXXXXXX cgroups in @parent (where ours goes) whose run
 * is gone (SIGKILL, a crash): removed when empty, named in a
 * warning when processes are still inside (the limits still apply there).
 * A live run holds its cgroup's lock (memcg_lock()), whatever PID namespace
 * it runs in; PIDs are not looked up: the PID in a name is its owner's in
 * the owner's namespace. The names of older versions (memacct-run-PID, at
 * the hierarchy's root) and those --keep-cgroup gives (memacct-keep-PID-X)
 * are left alone.
 */
static void clean_stale_runs(const struct memcg *parent)
{
	char root[PATH_MAX], path[PATH_MAX + 320], hex[9];
	struct dirent *de;
	int version;
	DIR *dir;

	if (memcg_root(root, &version) || !(dir = opendir(parent->path)))
		return;
	while ((de = readdir(dir))) {
		struct memcg cg;
		pid_t *pids = NULL;
		const char *job;
		int pid, n, fd;
		char kind[5];

		/* memacct-run-PID-XXXXXXXX[.job-NAME], memacct-ctl-PID-XXXXXXXX */
		if (!cgroup_run_name(de->d_name, kind, &pid, hex, &job) ||
		    !(!strcmp(kind, "run") || (!strcmp(kind, "ctl") && !job)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent->path, de->d_name);
		if (memcg_of_path(root, version, path, &cg))
			continue;
		fd = memcg_lock(&cg, false);
		if (fd < 0)
			continue;	/* -EWOULDBLOCK: that run is alive */
		n = memcg_pids(&cg, true, &pids);
		free(pids);
		if (n == 0 && !memcg_remove(&cg))
			p_warn("removed %s, left by a memacct run that is gone (killed)",
			       cg.path);
		else if (n > 0)
			p_warn("%s, left by a memacct run that is gone, still holds %d "
			       "process%s under its limits: end them, then rmdir it", cg.path, n,
			       n == 1 ? "" : "es");
		close(fd);
	}
	closedir(dir);
}

/* memacct's own leaf when it had to leave the caller's cgroup (v2) */
struct run_leaf {
	struct memcg own, leaf;
	int lock;		/* the leaf's memcg_lock(); -1: no leaf */
	bool enabled;		/* +memory written to own's subtree_control */
};

/*
 * Where CMD's cgroup goes: below the caller's own, so the limits that bind
 * memacct's caller bind CMD and the caller's accounting includes CMD. On v2
 * a cgroup with processes cannot have a memory child: when memacct is alone
 * in its cgroup it moves into a leaf of its own there (memcg_leaf_move());
 * else the nearest ancestor that can, below every limit
 * (memcg_run_parent()). EXIT_OK with @parent filled, or EXIT_ENV after a
 * message when there is no such place: memacct never moves CMD out of a
 * limit.
 */
static int run_parent(struct memcg *parent, struct run_leaf *l)
{
	struct memcg blocker;
	int err;

	l->lock = -1;
	err = memcg_member_of(0, &l->own);
	if (err) {
		p_err("finding memacct's own memory cgroup in /proc/self/cgroup: %s%s",
		      strerror(-err), err == -ENOENT ? " (outside the visible hierarchy?)" : "");
		return EXIT_ENV;
	}
	if (l->own.version == 2 && l->own.level > 0) {
		err = memcg_leaf_move(&l->own, "memacct-ctl", &l->leaf, &l->enabled);
		if (err >= 0) {
			l->lock = err;
			*parent = l->own;
			return EXIT_OK;
		}
	}
	err = memcg_run_parent(&l->own, parent, &blocker);
	if (err == -EBUSY) {
		p_err("no place for CMD's cgroup within the memory limits of %s: on cgroup v2 "
		      "the other processes in %s keep the memory controller from its children "
		      "(no internal processes), and a cgroup above %s would leave CMD outside "
		      "its limits; start memacct alone in a cgroup of its own below them "
		      "(e.g. exec memacct), see memacct(1), run", blocker.path, l->own.path,
		      blocker.path);
		return EXIT_ENV;
	}
	if (err) {
		p_err("choosing where CMD's cgroup goes, from %s: %s", l->own.path, strerror(-err));
		return EXIT_ENV;
	}
	return EXIT_OK;
}

/* memacct back into the caller's cgroup, as it was before run_parent() */
static void run_leaf_return(struct run_leaf *l)
{
	int err;

	if (l->lock < 0)
		return;
	err = memcg_leaf_return(&l->own, &l->leaf, l->enabled);
	if (err)
		p_warn("restoring %s (memacct back from %s%s): %s", l->own.path, l->leaf.path,
		       l->enabled ? ", -memory in its cgroup.subtree_control" : "",
		       strerror(-err));
	close(l->lock);
	l->lock = -1;
}

/*
 * MEMACCT_PHASES: where run's time went, one line on stderr (make bench's
 * run_true workload): setup (options, cgroup), open/load/verify/attach
 * (bpf_loader.h struct loader_timing; verify is part of load), session (the
 * rest of session_start(): ring, baseline), cmd (from attached to CMD and
 * its descendants gone: the vfork, the cgroup join, exec), report (the
 * final report built and printed), cleanup (cgroup removed), detach
 * (session_stop_detached()), total (do_run()'s whole time).
 */
struct run_phases {
	uint64_t start, setup, session, cmd_done, reported, removed, stopped;
};

static void print_phases(const struct run_phases *ph)
{
	const struct loader_timing *t = &loader_timing;
	double ms = 1e6;

	fprintf(stderr, "memacct phases (ms): setup %.1f open %.1f load %.1f verify %.1f "
		"programs %u attach %.1f session %.1f cmd %.1f report %.1f cleanup %.1f "
		"detach %.1f total %.1f slowest: %s, %s, %s\n",
		(ph->setup - ph->start) / ms, t->open_ns / ms, t->load_ns / ms,
		t->verify_ns / ms, t->programs, t->attach_ns / ms,
		(ph->session - ph->setup - t->open_ns - t->load_ns - t->attach_ns) / ms,
		(ph->cmd_done - ph->session) / ms, (ph->reported - ph->cmd_done) / ms,
		(ph->removed - ph->reported) / ms, (ph->stopped - ph->removed) / ms,
		(ph->stopped - ph->start) / ms, t->slowest[0], t->slowest[1], t->slowest[2]);
}

/*
 * Wait up to @timeout_ms for an exit record or a phase mark, then take
 * both: the session's records and samples (session_poll()), every mark
 * waiting (phases_serve(): a snapshot each, answered at once).
 */
static void run_poll(struct session *s, struct phases *ph, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN },
		{ .fd = ph->fd, .events = POLLIN },
	};

	poll(p, ph->fd >= 0 ? 2 : 1, timeout_ms);
	session_poll(s, 0);
	phases_serve(ph);
}

/* run's mark snapshots into the recording (phases.h on_mark) */
static void record_mark(void *ctx, const char *name, const struct report *r)
{
	struct report c = *r;

	c.command = "run";
	record_snapshot(ctx, "mark", name, &c);
}

void session_say_warnings(const struct session *s, size_t *seen)
{
	for (; *seen < s->nwarnings; (*seen)++) {
		json_t *w = oom_warning_json(&s->warnings[*seen]);

		oom_warning_print(stderr, "memacct: warning: ", w);
		json_decref(w);
	}
}

/* One snapshot of @kind into the recording (nothing printed). */
static void record_now(struct recorder *rec, struct session *s, const char *kind)
{
	struct report r;

	if (rec->fd < 0 || session_report(s, &r))
		return;
	r.command = "run";
	record_snapshot(rec, kind, NULL, &r);
	report_free(&r);
}

#define OPT_PARAMS 0x100
#define OPT_EXPECT_BPP 0x101
#define OPT_JOB 0x102

/* run's options (memacct help run), parsed by parse_args(). */
struct run_env {
	uint64_t interval_ns;		/* -i: a report every DUR; 0: none */
	bool keep;			/* --keep-cgroup */
	const char *job;		/* --job NAME, or NULL */
	double params, expect_bpp;	/* --params N, --expect-bytes-per-param B */
	const char *record_path;	/* --record FILE, or NULL */
	struct limits_req lim;		/* --memory-max/-high/-swap-max, --force */
	double oom_warn_s;		/* --oom-warn: FC_WARN_S, 0: off */
	char **cmd;			/* CMD [ARGS...] */
};

int session_getopt(int c, const char *arg, struct limits_req *lim, const char **record_path,
		   uint64_t *interval_ns, double *oom_warn_s)
{
	uint64_t ns;

	switch (c) {
	case 'j':
		json_output = true;
		return 0;
	case 'i':
		if (parse_duration(arg, interval_ns) || !*interval_ns) {
			p_err("bad --interval '%s' (examples: 500ms, 2s, 1m)", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_RECORD:
		*record_path = arg;
		return 0;
	case OPT_OOM_WARN:
		if (parse_duration(arg, &ns) || ns > 86400000000000ULL) {
			p_err("bad --oom-warn '%s' (examples: 60s, 2m; 0: no warning)", arg);
			return EXIT_USAGE;
		}
		*oom_warn_s = (double)ns / 1e9;
		return 0;
	case OPT_DMA_PINS:
		return loader_dma_parse(arg) ? EXIT_USAGE : 0;
	case OPT_TABLE_COLUMNS:
	case OPT_TABLE_RAW:
	case OPT_TABLE_CSV:
		return report_table_getopt(c, arg) ? EXIT_USAGE : 0;
	case OPT_MEMORY_MAX:
	case OPT_MEMORY_HIGH:
	case OPT_MEMORY_SWAP_MAX:
	case OPT_FORCE:
		return limits_getopt(c, arg, lim) ? EXIT_USAGE : 0;
	default:
		return 1;
	}
}

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct run_env *env)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "keep-cgroup", no_argument, NULL, 'k' },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "params", required_argument, NULL, OPT_PARAMS },
		{ "expect-bytes-per-param", required_argument, NULL, OPT_EXPECT_BPP },
		RECORD_LONG_OPTION,
		OOM_WARN_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		LIMITS_LONG_OPTIONS,
		TABLE_LONG_OPTIONS,
		DMA_PINS_LONG_OPTION,
		{ 0 },
	};
	int c, err;

	while ((c = getopt_long(argc, argv, "+:ji:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			env->keep = true;
			break;
		case OPT_JOB:
			if (!cgroup_job_name_ok(optarg)) {
				p_err("bad --job '%s' (1 to 64 of A-Z a-z 0-9 . _ : @ + -)", optarg);
				return EXIT_USAGE;
			}
			env->job = optarg;
			break;
		case OPT_PARAMS:
			if (parse_params(optarg, &env->params)) {
				p_err("bad --params '%s' (examples: 1.5e9, 7000000000, 80B, 350M)",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_EXPECT_BPP:
			if (parse_bytes_per_param(optarg, &env->expect_bpp)) {
				p_err("bad --expect-bytes-per-param '%s' (a positive number: 16, 18.5)",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			run_usage(stdout);
			return -1;
		default:
			err = session_getopt(c, optarg, &env->lim, &env->record_path,
					     &env->interval_ns, &env->oom_warn_s);
			if (err)
				return err == 1 ? opt_error("run", c, argv) : err;
		}
	}
	if (env->expect_bpp > 0 && env->params <= 0) {
		p_err("run: --expect-bytes-per-param needs --params N");
		return EXIT_USAGE;
	}
	if (env->params > 0 && env->expect_bpp <= 0)
		env->expect_bpp = PHASE_ADAM_MIXED_BPP;
	if (optind >= argc) {
		p_err("run: no command given (memacct run -- CMD [ARGS...])");
		return EXIT_USAGE;
	}
	env->cmd = argv + optind;
	return 0;
}

/* What one run holds from CMD's start to the final report. */
struct run_state {
	struct session s;
	struct phases phs;
	struct recorder rec;
	struct memcg cg;
	pid_t pid;			/* CMD */
	int status;			/* CMD's wait status */
	bool cmd_done;			/* CMD reaped (descendants may be left) */
	volatile struct exec_failure child;	/* why CMD did not start */
};

/* Mark channel and recording around CMD's start; CMD started. 0 or -1. */
static int run_spawn(struct run_state *st, const struct run_env *env)
{
	int err;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* CMD marks phases without them when the channel cannot be made */
	err = phases_open(&st->phs, &st->s);
	if (err)
		p_warn("no phase marks (MEMACCT_MARK_FD): %s", strerror(-err));
	st->phs.params = env->params;
	st->phs.expect_bpp = env->expect_bpp;
	if (st->rec.fd >= 0) {
		st->phs.on_mark = record_mark;
		st->phs.on_mark_ctx = &st->rec;
	}
	st->pid = spawn_in_cgroup(&st->cg, env->cmd, &st->child);
	phases_spawned(&st->phs);
	if (st->pid < 0) {
		p_err("vfork: %s", strerror(errno));
		return -1;
	}
	/* the child has exec'd or exited: SIGINT/SIGTERM/SIGHUP go to it */
	set_forward_pid(st->pid);
	oom_protect_self();
	if (stop_requested)	/* arrived while spawning; not reaped yet */
		kill(st->pid, stop_requested);
	if (st->child.err && !json_output) {	/* with -j: "exec_error" in the report */
		struct exec_failure f = { st->child.err, st->child.joining };
		char msg[PATH_MAX + 256];

		exec_failure_msg(msg, sizeof(msg), env->cmd[0], &f, st->cg.path);
		p_err("%s", msg);
	}
	return 0;
}

/*
 * Until CMD and every descendant are gone: the marks served, a report every
 * -i printed and recorded (else a sample a second recorded), CMD's own exit
 * and each OOM kill recorded at their moment.
 */
static void run_wait(struct run_state *st, const struct run_env *env)
{
	uint64_t next_ns = ns_after(now_ns(), env->interval_ns);
	uint64_t sample_ns = ns_after(now_ns(), RECORD_SAMPLE_NS);
	bool exit_recorded = false;
	size_t ooms_seen = 0, warnings_seen = 0;
	struct report r;

	while (!reap(st->pid, &st->status, &st->cmd_done)) {
		if (st->cmd_done && !exit_recorded) {	/* CMD gone, descendants left */
			record_now(&st->rec, &st->s, "exit");
			exit_recorded = true;
		}
		if (stop_requested && st->cmd_done) {
			stop_descendants(&st->cg, stop_requested, &st->status, st->pid,
					 &st->cmd_done);
			break;
		}
		run_poll(&st->s, &st->phs, 100);
		if (st->s.nooms != ooms_seen) {	/* a kill: its moment in the timeline */
			ooms_seen = st->s.nooms;
			record_now(&st->rec, &st->s, "oom");
		}
		if (st->s.nwarnings != warnings_seen) {	/* an OOM forecast: said now */
			session_say_warnings(&st->s, &warnings_seen);
			record_now(&st->rec, &st->s, "oom_warning");
		}
		if (env->interval_ns && now_ns() >= next_ns) {
			if (!session_report(&st->s, &r)) {
				r.command = "run";
				print_report(stdout, &r);
				record_snapshot(&st->rec, "interval", NULL, &r);
				report_free(&r);
			}
			next_ns = ns_after(next_ns, env->interval_ns);
		} else if (!env->interval_ns && now_ns() >= sample_ns) {
			record_now(&st->rec, &st->s, "sample");
			sample_ns = ns_after(sample_ns, RECORD_SAMPLE_NS);
		}
	}
}

/*
 * The final report, with the phases and CMD's exit status, recorded and
 * printed (a failed start's: print_failed_report()). CMD's exit status, or
 * -1 when the report could not be built.
 */
static int run_report(struct run_state *st, const struct run_env *env)
{
	struct report r;
	int err, ret;

	session_poll(&st->s, 0);
	/* CMD never started: the vfork child's row is memacct's own memory */
	if (st->child.err)
		st->s.exclude_pid = st->pid;
	err = session_report(&st->s, &r);
	if (err) {
		p_err("building the report: %s", strerror(-err));
		return -1;
	}
	r.command = "run";
	r.final = true;
	err = page_cache_resolve(&r.page_cache, PAGE_CACHE_SHOWN);
	if (!err)
		err = page_cache_recall(&r.page_cache, &st->s.pc_paths);
	if (err)
		p_warn("naming the files of the page cache: %s", strerror(-err));
	err = phases_finish(&st->phs, &r);
	if (err)
		p_warn("closing the last phase: %s", strerror(-err));
	if (st->phs.ndone || st->phs.refused)
		report_set_phases(&r, &st->phs);
	r.has_exit_status = true;
	r.exit_status = WIFEXITED(st->status) ? WEXITSTATUS(st->status) :
			WIFSIGNALED(st->status) ? 128 + WTERMSIG(st->status) : 255;
	record_snapshot(&st->rec, "final", NULL, &r);
	if (st->child.err) {
		struct exec_failure f = { st->child.err, st->child.joining };

		print_failed_report(&r, env->cmd[0], &f, st->cg.path);
	} else {
		print_report(stdout, &r);
	}
	limits_note(&st->cg, &env->lim, &r);
	ret = r.exit_status;
	report_free(&r);
	return ret;
}

/* The cgroup removed (or kept, said), memacct's leaf given back. */
static void run_remove_cgroup(struct run_state *st, const struct run_env *env,
			      struct run_leaf *leaf)
{
	int err;

	if (!env->keep) {
		err = memcg_remove(&st->cg);
		if (err)
			p_warn("removing %s: %s", st->cg.path, strerror(-err));
		else
			run_leaf_return(leaf);
	} else if (leaf->lock >= 0) {	/* CMD's cgroup keeps its memory controller */
		p_warn("kept %s: so +memory stays in %s/cgroup.subtree_control and memacct's "
		       "leaf %s stays too (empty: rmdir both when done)", st->cg.path,
		       leaf->own.path, leaf->leaf.path);
	}
}

/* --record FILE (none: nothing) opened with the run's header; 0 or -errno (said). */
static int run_record_open(struct run_state *st, const struct run_env *env)
{
	struct record_info ri = { .command = "run", .argv = env->cmd, .cg = &st->cg,
				  .interval_ns = env->interval_ns, .params = env->params };
	int err = record_open(&st->rec, env->record_path, &ri);

	if (err)
		p_err("--record %s: %s", env->record_path, strerror(-err));
	return err;
}

/*
 * CMD started in the session (unless a stop signal came during the BPF
 * load), waited for and reported. true once the final report is out, with
 * the exit status in *@ret; false with *@ret the exit code, or left as it
 * was when CMD could not be started.
 */
static bool run_cmd_to_report(struct run_state *st, const struct run_env *env,
			      struct run_phases *ph, int *ret)
{
	if (stop_requested) {	/* during the BPF load: CMD never starts */
		*ret = 128 + stop_requested;
		return false;
	}
	if (run_spawn(st, env))
		return false;
	run_wait(st, env);
	ph->cmd_done = now_ns();
	*ret = run_report(st, env);
	if (*ret < 0) {
		*ret = EXIT_RUNTIME;
		return false;
	}
	ph->reported = now_ns();
	return true;
}

int do_run(int argc, char **argv)
{
	struct run_env env = { .oom_warn_s = FC_WARN_S };
	struct run_phases ph = { .start = now_ns() };
	struct run_state st = { .rec = { .fd = -1 }, .phs = { .fd = -1, .child_fd = -1 } };
	struct memcg parent;
	struct run_leaf leaf;
	int err, lock, ret;
	bool handoff = false;
	char job_suffix[80];

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	report_table_timed(env.interval_ns != 0);
	/* a closed report pipe ends the reports, never us and CMD with us */
	ignore_sigpipe();
	if (loader_check_env())
		return EXIT_ENV;
	/* from here on a stop signal ends us cleanly: no cgroup left behind */
	install_stop_handlers(0);
	limits_restore_stale();
	ret = run_parent(&parent, &leaf);
	if (ret)
		return ret;
	clean_stale_runs(&parent);

	/* a kept cgroup has a name the next run's sweep leaves alone
	 * (clean_stale_runs(); issue 41: the next run removed it) */
	snprintf(job_suffix, sizeof(job_suffix), "%s%s", env.job ? CG_JOB_SUFFIX : "",
		 env.job ? env.job : "");
	lock = memcg_create_locked(&parent, env.keep ? "memacct-keep" : "memacct-run", job_suffix,
				   &st.cg);
	if (lock < 0) {
		p_err("creating a memory cgroup below %s: %s", parent.path, strerror(-lock));
		run_leaf_return(&leaf);
		return lock == -ENOENT ? EXIT_ENV : EXIT_RUNTIME;
	}
	ret = EXIT_RUNTIME;
	/* our own cgroup, removed at the end: no state file to restore from */
	err = limits_apply(&st.cg, &env.lim, false);
	if (err) {
		ret = exit_code_of(err);
		goto out_rmdir;
	}
	ph.setup = now_ns();
	if (session_start(&st.s, &st.cg)) {
		ret = EXIT_ENV;
		goto out_rmdir;
	}
	st.s.oom_warn_s = env.oom_warn_s;
	/* made above, CMD not started: no OOM event yet (v1 has no count to read) */
	session_oom_seen(&st.s, st.cg.id, 0);
	ph.session = now_ns();
	if (run_record_open(&st, &env)) {
		ret = EXIT_USAGE;
		goto out_session;
	}
	/* the report is out: the BPF side goes last, its slow part in a helper */
	handoff = run_cmd_to_report(&st, &env, &ph, &ret);
out_session:
	record_close(&st.rec);
	phases_free(&st.phs);
	if (!handoff)
		session_stop(&st.s);
out_rmdir:
	run_remove_cgroup(&st, &env, &leaf);
	close(lock);
	if (handoff) {
		/* after run_leaf_return(): the helper starts in the caller's
		 * cgroup, not in memacct's leaf, which is gone */
		ph.removed = now_ns();
		session_stop_detached(&st.s);
		ph.stopped = now_ns();
		if (loader_phases())
			print_phases(&ph);
	}
	return ret;
}
