// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_daemon.c - `memacct daemon`: /metrics parsed by promtool,
 * counters continuing across kill -9 and restart (ground truth of cow_fork),
 * HTTP abuse (1,000 concurrent clients, malformed and slow requests), cgroup
 * churn. Every daemon binds 127.0.0.1 on a port derived from our pid and
 * pins under its own bpffs directory; nothing leaves the machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <jansson.h>
#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "integration.h"
#include "pin.h"
#include "proc.h"
#include "task_walk.h"
#include "util.h"

static int port;
static int http_timeout_s = 10;	/* receive timeout of one request */
static char pin_dir[128];
static char tmpfs_dir[64];	/* a small tmpfs of test_json_log_full_disk */
static char live_cg[256];	/* a test's cgroup, removed by teardown */
/* daemons started by the running test: teardown kills those still alive */
static pid_t daemons[8];
static char cg[256];	/* a test's own cgroup; removed by teardown() too */
/* a test's other cgroups (children of cg first), removed by teardown() */
static char extra_cg[4][512];
static char ws_file[64];	/* a test's page-cache file, removed by teardown() */
static pid_t held;		/* a test's workload held open, killed by teardown() */
static pid_t prom_pid;		/* a test's Prometheus, killed by teardown() */
static pid_t am_pid;		/* its Alertmanager, likewise */
static pid_t ksm_pid;		/* test_kube_names' kube-state-metrics stand-in */
static char prom_dir[64];	/* its config and TSDB, removed by teardown() */
/* test_deep_cgroup_seen's chain below cg: its leaf and the levels below cg */
static char deep_leaf[600];
static int deep_levels;
static bool long_chain;	/* test_cgroup_past_path_max's chain below cg */

static int connect_local(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One raw request of @n bytes (NULs allowed) on a new connection; the
 * whole response (malloc'd, NUL-terminated; *@len_out its length) or NULL.
 * Reading stops at the end of stream, at @cap_bytes or after the receive
 * timeout (http_timeout_s).
 */
static char *http_raw_n(const char *req, size_t n, size_t cap_bytes, size_t *len_out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int fd = connect_local();
	struct timeval tv = { http_timeout_s, 0 };
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, n) != (ssize_t)n) {
		close(fd);
		free(buf);
		return NULL;
	}
	while (len < cap_bytes && (r = read(fd, buf + len, cap - len - 1)) > 0) {
		len += r;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	*len_out = len;
	return buf;
}

/* One raw request; the whole response (malloc'd) or NULL. */
static char *http_raw(const char *req, size_t *len_out)
{
	size_t len;
	char *resp = http_raw_n(req, strlen(req), SIZE_MAX, &len);

	if (len_out)
		*len_out = resp ? len : 0;
	return resp;
}

/* GET @path; the body of a 200 response (malloc'd) or NULL. */
static char *http_get(const char *path, const char *accept)
{
	char req[4096], *resp, *body;	/* long PromQL queries too */

	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n%s%s%s\r\n", path,
		 accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	resp = http_raw(req, NULL);
	if (!resp || strncmp(resp, "HTTP/1.", 7) || strncmp(resp + 9, "200", 3)) {
		free(resp);
		return NULL;
	}
	body = strstr(resp, "\r\n\r\n");
	body = body ? strdup(body + 4) : NULL;
	free(resp);
	return body;
}

static void detach_all(void)
{
	struct result *r = run_cmd("%s detach --pin-path %s", memacct, pin_dir);

	result_free(r);
	/* a second kernel side a failed test may have left */
	r = run_cmd("%s detach --pin-path %s-second 2>/dev/null", memacct, pin_dir);
	result_free(r);
}

#define DAEMON_LOG "/tmp/memacct-daemon-test.log"

/* the last lines of DAEMON_LOG, for a daemon that did not start (@why) */
static void daemon_log_tail(const char *why)
{
	struct result *r = run_cmd("tail -n 5 " DAEMON_LOG);

	printf("  daemon on port %d: %s; " DAEMON_LOG " ends:\n%s", port, why, r->out);
	result_free(r);
}

/* Where DAEMON_LOG ends now: what daemons write from here on is read by
 * daemon_log_says(). */
static off_t daemon_log_mark(void)
{
	struct stat sb;

	return stat(DAEMON_LOG, &sb) ? 0 : sb.st_size;
}

/* Whether a line of DAEMON_LOG written since @from has every one of @a and @b
 * (@b NULL: @a alone). */
static bool daemon_log_says(off_t from, const char *a, const char *b)
{
	char line[1024];
	bool said = false;
	FILE *f = fopen(DAEMON_LOG, "r");

	ck_assert_ptr_nonnull(f);
	fseek(f, from, SEEK_SET);
	while (fgets(line, sizeof(line), f))
		said |= strstr(line, a) && (!b || strstr(line, b));
	fclose(f);
	return said;
}

static pid_t start_daemon(const char *extra)
{
	char cmd[1024];
	pid_t pid;

	snprintf(cmd, sizeof(cmd),
		 "exec %s daemon --listen 127.0.0.1:%d --interval 500ms --pin-path %s %s "
		 ">>" DAEMON_LOG " 2>&1", memacct, port, pin_dir, extra ? extra : "");
	pid = fork();
	if (pid == 0) {
		/* a test runner that dies takes its daemon along */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* ready when /healthz answers; bounded (60 s: the BPF load takes
	 * seconds under qemu TCG, more while other guests share the host) */
	for (int i = 0; i < 600; i++) {
		char *b = http_get("/healthz", NULL);

		if (b) {
			free(b);
			for (size_t j = 0; j < sizeof(daemons) / sizeof(daemons[0]); j++)
				if (daemons[j] <= 0) {
					daemons[j] = pid;
					break;
				}
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			daemon_log_tail("exited");
			return -1;
		}
		sleep_ms(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	daemon_log_tail("no 200 from /healthz in 60 s");
	return -1;
}

/*
 * @pid sent @sig and reaped: its wait status. A daemon not gone 60 s later
 * (its own stop deadline is 30 s) has each thread's kernel stack printed,
 * is killed, and fails the test.
 */
static int stop_daemon(pid_t pid, int sig)
{
	pid_t w = 0;
	int st = 0;

	kill(pid, sig);
	for (int i = 0; i < 600 && !(w = waitpid(pid, &st, WNOHANG)); i++)
		usleep(100000);
	if (!w) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "for t in /proc/%d/task/*; do echo \"$t:\"; "
			 "cat $t/stack; done", (int)pid);
		printf("daemon %d still running 60 s after signal %d; its threads:\n", (int)pid,
		       sig);
		fflush(stdout);
		ck_assert_int_ne(system(cmd), -1);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++)
		if (daemons[i] == pid)
			daemons[i] = 0;
	ck_assert_msg(w, "daemon %d did not stop on signal %d (killed)", (int)pid, sig);
	return st;
}

static void setup(void)
{
	http_timeout_s = 10;
	port = free_port();
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/memacct-test-%d", (int)getpid());
	detach_all();
}

/* test_cgroup_past_path_max's directory names: 250 'x' */
#define LONG_NAME_LEN 250

/*
 * Remove the chain of directories named LONG_NAME_LEN 'x' below the
 * directory @fd (closed), deepest first, through fds: its paths are longer
 * than PATH_MAX, so rmdir() by path cannot reach them.
 */
static void rmdir_chain_at(int fd, int len)
{
	char name[LONG_NAME_LEN + 1];
	int sub;

	memset(name, 'x', len);
	name[len] = '\0';
	sub = openat(fd, name, O_RDONLY | O_DIRECTORY);
	if (sub >= 0) {
		rmdir_chain_at(sub, len);
		unlinkat(fd, name, AT_REMOVEDIR);
	}
	close(fd);
}

static struct pinned walk_pin;	/* test_process_walk's kernel side, in this process */
static bool walk_pin_open;
static pid_t walk_kids[24];	/* and its children */

/* D19: a failed assertion skips the test's stop_daemon(); stop it here */
static void kube_teardown(void);

static void teardown(void)
{
	kube_teardown();
	if (walk_pin_open)
		pin_close(&walk_pin);
	walk_pin_open = false;
	for (size_t i = 0; i < sizeof(walk_kids) / sizeof(walk_kids[0]); i++) {
		if (walk_kids[i] > 0) {
			kill(walk_kids[i], SIGKILL);
			waitpid(walk_kids[i], NULL, 0);
		}
		walk_kids[i] = 0;
	}
	for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++)
		if (daemons[i] > 0)
			stop_daemon(daemons[i], SIGKILL);
	{
		static const char *const left[] = { "maps/other_tool_state", "links/other_tool_link",
						    "-second/maps/cgroups" };
		char p[300];

		for (size_t i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s%s%s", pin_dir, left[i][0] == '-' ? "" : "/",
				 left[i]);
			unlink(p);
		}
	}
	detach_all();
	if (tmpfs_dir[0]) {
		umount2(tmpfs_dir, MNT_DETACH);
		rmdir(tmpfs_dir);
		tmpfs_dir[0] = '\0';
	}
	{
		/* Prometheus, Alertmanager, a workload, KSM */
		pid_t *kids[] = { &prom_pid, &am_pid, &held, &ksm_pid };

		for (size_t i = 0; i < sizeof(kids) / sizeof(kids[0]); i++) {
			if (*kids[i] > 0) {
				kill(*kids[i], SIGKILL);
				waitpid(*kids[i], NULL, 0);
			}
			*kids[i] = 0;
		}
	}
	if (prom_dir[0]) {
		struct result *r = run_cmd("rm -rf %s", prom_dir);

		result_free(r);
		prom_dir[0] = '\0';
	}
	if (ws_file[0])
		unlink(ws_file);
	ws_file[0] = '\0';
	for (size_t i = 0; i < sizeof(extra_cg) / sizeof(extra_cg[0]); i++) {
		if (extra_cg[i][0])
			rmdir(extra_cg[i]);
		extra_cg[i][0] = '\0';
	}
	/* the deep chain, leaf first; its processes were killed above */
	for (; deep_levels > 0; deep_levels--) {
		rmdir(deep_leaf);
		*strrchr(deep_leaf, '/') = '\0';
	}
	deep_leaf[0] = '\0';
	if (long_chain && cg[0]) {
		int fd = open(cg, O_RDONLY | O_DIRECTORY);

		if (fd >= 0)
			rmdir_chain_at(fd, LONG_NAME_LEN);
		long_chain = false;
	}
	if (live_cg[0])
		rmdir(live_cg);
	live_cg[0] = '\0';
	if (cg[0])
		rmdir(cg);
	cg[0] = '\0';
}

/* Value of the sample whose line starts with @prefix ("name{labels}"), -1 if none. */
static long long sample(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, prefix, n) && l[n] == ' ')
			return strtoll(l + n + 1, NULL, 10);
	return -1;
}

/* memacct_last_collection_timestamp_seconds now (Unix seconds); -1 when not
 * published (another build, a --metrics-deny) or no answer. */
static double collection_started(void)
{
	char *m = http_get("/metrics", NULL);
	const char *k = "\nmemacct_last_collection_timestamp_seconds ", *l = m ? strstr(m, k) : NULL;
	double v = l ? strtod(l + strlen(k), NULL) : -1;

	free(m);
	return v;
}

/*
 * Wait until the daemon serves a collection that began after this call,
 * then @n - 2 more (stale entries go in two collections, the next shows
 * it), up to 60 s; fixed sleeps (1.2 s for two collections at 500 ms) ran
 * short where a collection takes seconds: a TCG guest beside the host's
 * own suites. A daemon that does not publish the time (5 s after its
 * start): the old sleep.
 */
static void collections_wait(int n)
{
	struct timespec ts;
	double now, t = -1;
	int i = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	for (; i < 50 && t < 0; i++) {	/* a daemon just started: its first */
		t = collection_started();
		if (t < 0)
			sleep_ms(100);
	}
	if (t < 0) {
		sleep_ms(600 * n);
		return;
	}
	for (i = 0; i < 600 && t < now; i++) {
		sleep_ms(100);
		t = collection_started();
	}
	ck_assert_msg(t >= now, "no collection began in 60 s (the last at %.3f, now %.3f)", t,
		      now);
	for (int k = 2; k < n; k++) {
		double prev = t;

		for (i = 0; i < 600 && t <= prev; i++) {
			sleep_ms(100);
			t = collection_started();
		}
		ck_assert_msg(t > prev, "no collection after the one at %.3f in 60 s", prev);
	}
}

static int promtool_check(const char *text)
{
	char path[] = "/tmp/memacct-metrics-XXXXXX";
	int fd = mkstemp(path), st;
	struct result *r;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	r = run_cmd("promtool check metrics < %s 2>&1", path);
	if (r->status)
		fprintf(stderr, "promtool: %s\n", r->out);
	st = r->status;
	result_free(r);
	unlink(path);
	return st;
}

START_TEST(test_metrics_parse)
{
	struct result *which = run_cmd("command -v promtool");
	char *prom, *om, *resp, want[96];
	const char *fp;
	pid_t d;

	if (which->status) {
		result_free(which);
		ck_abort_msg("promtool missing: make deps installs Debian's prometheus package");
	}
	result_free(which);
	d = start_daemon("--bpf-stats");
	ck_assert_msg(d > 0, "daemon did not start (see /tmp/memacct-daemon-test.log)");
	prom = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(prom);
	ck_assert_int_eq(promtool_check(prom), 0);
	ck_assert_ptr_nonnull(strstr(prom, "# TYPE memacct_cow_copied_bytes_total counter"));
	ck_assert_ptr_nonnull(strstr(prom, "memacct_rss_bytes{cgroup=\"/\"}"));
	fp = fault_hook_prog(pin_dir);
	if (fp) {
		snprintf(want, sizeof(want), "memacct_bpf_runs_total{program=\"%s\"}", fp);
		ck_assert_msg(strstr(prom, want), "no %s in /metrics", want);
	} else {
		printf("  no fault hook in memacct_bpf_runs_total: the daemon holds the perf "
		       "event's links (not pinned here)\n");
	}
	/* D20: an exit record that found the ring buffer full is read from the
	 * procs map, not lost: its own counter, not a reason of the drops */
	ck_assert_ptr_nonnull(strstr(prom, "\nmemacct_ringbuf_full_total "));
	ck_assert_ptr_null(strstr(prom, "reason=\"ringbuf_full\""));
	ck_assert_ptr_null(strstr(prom, "# EOF"));
	om = http_get("/metrics", "application/openmetrics-text; version=1.0.0");
	ck_assert_ptr_nonnull(om);
	ck_assert_ptr_nonnull(strstr(om, "# TYPE memacct_cow_copied_bytes counter"));
	ck_assert_ptr_nonnull(strstr(om, "\n# EOF\n"));
	ck_assert_str_eq(om + strlen(om) - 6, "# EOF\n");
	resp = http_raw("POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_msg(!strncmp(resp + 9, "405", 3), "POST answered %.20s", resp);
	free(resp);
	resp = http_raw("GET /nope HTTP/1.0\r\n\r\n", NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert(!strncmp(resp + 9, "404", 3));
	free(resp);
	free(prom);
	free(om);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/* Run cow_fork inside @dir; its truth (child + parent CoW bytes). */
static long long cow_fork_in(const char *dir, const char *args)
{
	struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/cow_fork %s'",
				   dir, workloads, args);
	long long v;

	ck_assert_int_eq(r->status, 0);
	v = truth(r, "child_cow_bytes") + truth(r, "parent_cow_bytes");
	result_free(r);
	return v;
}

START_TEST(test_kill9_restart_continues)
{
	char label[320], *m;
	long long want = 0, got = -1, gap, during = 0;
	bool pinned;
	pid_t d;


	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	pinned = fault_hook_pinned(pin_dir);
	want += cow_fork_in(cg, "32 2");
	/* kill -9 while a workload runs, then one more run with no daemon */
	{
		pid_t w = fork();

		if (w == 0) {
			struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/cow_fork 32 2'",
						   cg, workloads);
			long long v = truth(r, "child_cow_bytes") + truth(r, "parent_cow_bytes");
			FILE *f = fopen("/tmp/memacct-dtest-truth", "w");

			fprintf(f, "%lld\n", v);
			fclose(f);
			_exit(r->status);
		}
		sleep_ms(50);
		stop_daemon(d, SIGKILL);
		int st;

		waitpid(w, &st, 0);
		ck_assert_int_eq(WEXITSTATUS(st), 0);
		FILE *f = fopen("/tmp/memacct-dtest-truth", "r");
		long long v = 0;

		ck_assert(f && fscanf(f, "%lld", &v) == 1);
		fclose(f);
		during = v;
		if (pinned)
			want += v;
	}
	gap = cow_fork_in(cg, "16 1");	/* no daemon: only pinned links count */
	if (pinned)
		want += gap;
	else
		printf("  the fault hook's links are held by the daemon: the runs during and "
		       "after the kill -9 are not counted\n");
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "restarted daemon did not re-attach");
	want += cow_fork_in(cg, "16 2");
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label), "memacct_cow_copied_bytes_total{cgroup=\"/memacct-dtest-%d\"}",
		 (int)getpid());
	got = sample(m, label);
	free(m);
	if (pinned) {
		assert_near("cow_copied_bytes_total across kill -9 and restart", got, want);
	} else {
		/* what the killed run wrote before the kill counts; the rest not */
		long long tol = want / 100 > (long long)SLACK ? want / 100 : (long long)SLACK;

		ck_assert_msg(got >= want - tol && got <= want + during + tol,
			      "cow_copied_bytes_total across kill -9 and restart: memacct %lld, "
			      "truth %lld to %lld (tolerance %lld)", got, want, want + during, tol);
		printf("  %-40s memacct %12lld  truth %lld to %lld\n",
		       "CoW across kill -9 and restart", got, want, want + during);
	}
	stop_daemon(d, SIGTERM);
	rmdir(cg);
	cg[0] = '\0';
}
END_TEST

/*
 * Issue #24: the daemon on the perf event fault hook (forced here; the only
 * hook on arm64): memacct_kernel_features says which; its program is pinned
 * (progs/page_fault_perf) and its per-CPU links too where the kernel allows
 * (links/page_fault_perf_cpuN: they keep counting with no daemon after a
 * kill -9; before 5.15 the daemon holds them and that gap is not counted); a
 * restart on the pins attaches the hook again (or finds its links).
 * CoW bytes of the cgroup = cow_fork's truth of the phases counted.
 */
START_TEST(test_perf_hook_pinned)
{
	char label[320], path[256], *m;
	long long want = 0, gap;
	bool links_pinned;
	off_t from;
	pid_t d;

	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	ck_assert_int_eq(setenv("MEMACCT_FAULT_HOOK", "perf", 1), 0);
	from = daemon_log_mark();
	d = start_daemon(NULL);
	unsetenv("MEMACCT_FAULT_HOOK");
	ck_assert(d > 0);
	snprintf(path, sizeof(path), "%s/progs/page_fault_perf", pin_dir);
	ck_assert_msg(access(path, F_OK) == 0, "%s not pinned", path);
	/* the links, on every kernel with perf links (5.15+); before, the
	 * daemon holds them and says why */
	snprintf(path, sizeof(path), "%s/links/page_fault_perf_cpu0", pin_dir);
	links_pinned = access(path, F_OK) == 0;
	printf("  perf hook links %s\n", links_pinned ? "pinned: faults count with no daemon" :
	       "held by the daemon: faults with no daemon are not classified");
	ck_assert_msg(links_pinned || daemon_log_says(from, "no perf links before v5.15", NULL),
		      "%s not pinned, and the daemon did not say it is a kernel before 5.15 ("
		      DAEMON_LOG ")", path);
	snprintf(path, sizeof(path), "%s/links/page_fault_user", pin_dir);
	ck_assert_msg(access(path, F_OK) != 0, "%s pinned with the perf hook forced", path);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(sample(m, "memacct_kernel_features{fault_hook=\"perf\"}"), 1);
	free(m);
	want += cow_fork_in(cg, "32 2");
	stop_daemon(d, SIGKILL);
	gap = cow_fork_in(cg, "16 1");	/* no daemon: only pinned links count */
	if (links_pinned)
		want += gap;
	d = start_daemon(NULL);		/* re-attaches; no MEMACCT_FAULT_HOOK */
	ck_assert_msg(d > 0, "restarted daemon did not re-attach");
	want += cow_fork_in(cg, "16 2");
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(sample(m, "memacct_kernel_features{fault_hook=\"perf\"}"), 1);
	snprintf(label, sizeof(label), "memacct_cow_copied_bytes_total{cgroup=\"/memacct-dtest-%d\"}",
		 (int)getpid());
	assert_near("perf hook: cow_copied_bytes_total across kill -9 and restart",
		    sample(m, label), want);
	free(m);
	stop_daemon(d, SIGTERM);
	rmdir(cg);
	cg[0] = '\0';
}
END_TEST

static long rss_kib(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	free(line);
	fclose(f);
	return kib;
}

/* 64 MiB; ASan's shadow and quarantine (make check SANITIZE=1) need more */
static long rss_limit_kib(void)
{
	return getenv("MEMACCT_SANITIZE") ? 512 * 1024 : 64 * 1024;
}

/* The daemon's own pid: the child of our sh -c exec is the daemon itself. */
START_TEST(test_http_abuse)
{
	struct rlimit rl = { 4096, 4096 };
	enum { N = 1000 };
	static int fds[N];
	static char got200[N];
	char *m1, *m2, big[70000], prog[96];
	long long runs1, runs2;
	int ok = 0, slow[8], unsent = 0, eof = 0, rerr = 0, errno_seen = 0;
	char other[64] = "", why[400] = "";
	long rss;
	pid_t d;

	setrlimit(RLIMIT_NOFILE, &rl);
	d = start_daemon("--bpf-stats");
	ck_assert(d > 0);
	m1 = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m1);
	/* the fault hook's runs; mm_page_alloc's where the daemon lists no
	 * fault hook (fault_hook_prog()) */
	snprintf(prog, sizeof(prog), "memacct_bpf_runs_total{program=\"%s\"}",
		 fault_hook_prog(pin_dir) ? fault_hook_prog(pin_dir) : "mm_page_alloc");
	runs1 = sample(m1, prog);
	/* slow clients: connect, send half a request line, stay */
	for (int i = 0; i < 8; i++) {
		slow[i] = connect_local();
		if (slow[i] >= 0)
			ck_assert_int_eq(write(slow[i], "GET /met", 8), 8);
	}
	/* malformed requests */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
	free(http_raw(big, NULL));
	free(http_raw("\x01\x02garbage\r\n\r\n", NULL));
	free(http_raw("GET\r\n\r\n", NULL));
	free(http_raw("GET /metrics HTTP/9.9\r\n\r\n", NULL));
	/* 1,000 concurrent requests */
	for (int i = 0; i < N; i++) {
		static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";

		fds[i] = connect_local();
		if (fds[i] >= 0 && write(fds[i], req, sizeof(req) - 1) != sizeof(req) - 1) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	for (int i = 0; i < N; i++) {
		char buf[16384];
		ssize_t n;
		int first = 1;
		struct timeval tv = { 20, 0 };

		if (fds[i] < 0) {
			unsent++;
			continue;
		}
		setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while ((n = read(fds[i], buf, sizeof(buf))) > 0) {
			if (first && n >= 12 && !strncmp(buf + 9, "200", 3))
				got200[i] = 1;
			else if (first && !other[0])
				snprintf(other, sizeof(other), "%.*s", (int)strcspn(buf, "\r\n"),
					 n >= 40 ? buf : "(short)");
			first = 0;
		}
		if (first)
			n < 0 ? (void)(errno_seen = errno, rerr++) : (void)eof++;
		close(fds[i]);
		ok += got200[i];
	}
	rss = rss_kib(d);
	if (ok < N) {
		char *m = http_get("/metrics", NULL);

		snprintf(why, sizeof(why), "not sent %d, nothing then the end %d, nothing then "
			 "an error %d (%s), first other line \"%s\"; the daemon shut %lld idle, %lld "
			 "for room", unsent, eof, rerr, strerror(errno_seen), other,
			 m ? sample(m, "memacct_http_connections_shut_total{reason=\"idle\"}") : -1LL,
			 m ? sample(m, "memacct_http_connections_shut_total{reason=\"table_full\"}") :
			 -1LL);
		printf("  http storm: %d of %d answered 200: %s\n", ok, N, why);
		free(m);
	}
	ck_assert_msg(ok >= N * 99 / 100, "only %d of %d concurrent scrapes answered: %s", ok, N,
		      why);
	ck_assert_msg(rss > 0 && rss < rss_limit_kib(), "daemon RSS %ld KiB after the storm", rss);
	/* still answering, and the BPF side still counting */
	collections_wait(2);
	m2 = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m2);
	runs2 = sample(m2, prog);
	ck_assert_msg(runs2 > runs1, "%s: %lld then %lld", prog, runs1, runs2);
	for (int i = 0; i < 8; i++)
		if (slow[i] >= 0)
			close(slow[i]);
	free(m1);
	free(m2);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

START_TEST(test_cgroup_churn)
{
	char prefix[64], *m;
	double fill0, fill1;
	pid_t d;


	snprintf(prefix, sizeof(prefix), "memacct-churn-%d-", (int)getpid());
	d = start_daemon(NULL);
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	{
		char *p = strstr(m, "memacct_map_fill_ratio{map=\"cgroups\"} ");

		ck_assert_ptr_nonnull(p);
		fill0 = strtod(p + strlen("memacct_map_fill_ratio{map=\"cgroups\"} "), NULL);
	}
	free(m);
	for (int i = 0; i < 500; i++) {
		char path[256];
		pid_t c;

		snprintf(path, sizeof(path), "%s/%s%d", cgroot, prefix, i);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		/* a process exits in one cgroup of five: a cgroups map entry */
		if (i % 5 == 0) {
			c = fork();
			if (c == 0) {
				char procs[300], pid[16];
				int fd;

				snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
				snprintf(pid, sizeof(pid), "%d", (int)getpid());
				fd = open(procs, O_WRONLY);
				if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
					_exit(1);
				_exit(0);
			}
			waitpid(c, NULL, 0);
		}
		if (i % 50 == 0)
			free(http_get("/metrics", NULL));
		if (i >= 10) {	/* remove the cgroup made 10 steps ago */
			snprintf(path, sizeof(path), "%s/%s%d", cgroot, prefix, i - 10);
			ck_assert_int_eq(rmdir(path), 0);
		}
	}
	for (int i = 490; i < 500; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s%d", cgroot, prefix, i);
		rmdir(path);
	}
	/* two collections drop stale entries; a third shows it (asked again
	 * up to 20 s: a collection of a TCG guest beside busy builds can
	 * take seconds) */
	for (int tries = 0;; tries++) {
		sleep_ms(1000);
		m = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(m);
		if (!strstr(m, prefix) || tries == 19)
			break;
		free(m);
	}
	ck_assert_msg(!strstr(m, prefix), "stale series of a removed cgroup");
	{
		char *p = strstr(m, "memacct_map_fill_ratio{map=\"cgroups\"} ");

		ck_assert_ptr_nonnull(p);
		fill1 = strtod(p + strlen("memacct_map_fill_ratio{map=\"cgroups\"} "), NULL);
	}
	ck_assert_msg(fill1 <= fill0 + 10.0 / 8192, "cgroups map fill %g -> %g", fill0, fill1);
	ck_assert_msg(rss_kib(d) < rss_limit_kib(), "daemon RSS %ld KiB", rss_kib(d));
	free(m);
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * D1: 2,000 cgroups come and go (each with one exited process, so each has
 * a `cgroups` map entry) beside a live cgroup whose CoW is known; the live
 * cgroup's counter must still equal the workload's truth. Deleting stale
 * entries during the map walk restarted it and added live flows again.
 */
START_TEST(test_churn_keeps_truth)
{
	char *live = live_cg, label[320], prefix[64], *m;
	long long want, got;
	pid_t d;


	snprintf(live, sizeof(live_cg), "%s/memacct-dlive-%d", cgroot, (int)getpid());
	snprintf(prefix, sizeof(prefix), "memacct-dchurn-%d-", (int)getpid());
	rmdir(live);
	ck_assert_int_eq(mkdir(live, 0755), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	want = cow_fork_in(live, "8 2");
	for (int i = 0; i < 2000; i++) {
		char path[256];
		pid_t c;

		snprintf(path, sizeof(path), "%s/%s%d", cgroot, prefix, i);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		c = fork();
		if (c == 0) {
			char procs[300], pid[16];
			int fd;

			snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			fd = open(procs, O_WRONLY);
			if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
				_exit(1);
			_exit(0);
		}
		waitpid(c, NULL, 0);
		ck_assert_int_eq(rmdir(path), 0);
	}
	/* two collections drop the stale entries; a third is published */
	sleep_ms(2000);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label), "memacct_cow_copied_bytes_total{cgroup=\"/memacct-dlive-%d\"}",
		 (int)getpid());
	got = sample(m, label);
	free(m);
	assert_near("live cgroup cow_copied_bytes_total after 2,000 cgroups churned", got, want);
	stop_daemon(d, SIGTERM);
	rmdir(live);
}
END_TEST

/*
 * D3: 2,100 connections from this process trickle header lines (one every
 * 2 s, under MHD's 10 s idle timeout) and never finish their request;
 * scrapes meanwhile must be answered within 3 s.
 */
START_TEST(test_slowloris)
{
	struct rlimit rl;
	enum { N = 2100, ROUNDS = 6 };
	static int fds[N];
	int ok = 0, opened = 0;
	pid_t d;


	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = rl.rlim_max;	/* test_http_abuse may have lowered the hard limit */
	ck_assert_msg(rl.rlim_cur >= N + 100, "RLIMIT_NOFILE %ld too low", (long)rl.rlim_cur);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	for (int i = 0; i < N; i++) {
		static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n";

		fds[i] = connect_local();
		if (fds[i] >= 0) {
			opened++;
			send(fds[i], req, sizeof(req) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
	}
	http_timeout_s = 3;
	for (int r = 0; r < ROUNDS; r++) {
		struct timespec t0, t1;
		char *m;

		for (int i = 0; i < N; i++)
			if (fds[i] >= 0 && send(fds[i], "X-Slow: 1\r\n", 11,
						MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				close(fds[i]);	/* shut down by the daemon: come back */
				fds[i] = connect_local();
				if (fds[i] >= 0)
					send(fds[i], "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL | MSG_DONTWAIT);
			}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		m = http_get("/metrics", NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("  slowloris round %d: scrape %s in %.0f ms\n", r, m ? "answered" : "FAILED",
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		ok += m != NULL;
		free(m);
		sleep_ms(2000);
	}
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	ck_assert_msg(opened >= 2000, "only %d slow connections opened", opened);
	ck_assert_msg(ok == ROUNDS, "%d of %d scrapes answered beside %d slow clients", ok, ROUNDS,
		      opened);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

static int count_links(void)
{
	struct result *r = run_cmd("bpftool link list 2>/dev/null | grep -c '^[0-9]*:'");
	int n = atoi(r->out);

	result_free(r);
	return n;
}

/*
 * D7: a daemon that cannot listen (port taken, address not on the host)
 * says why, exits 4 and leaves no kernel side attached or pinned.
 */
START_TEST(test_listen_failure_leaves_nothing)
{
	char pin2[160];
	struct result *r;
	int before, after;
	pid_t d = start_daemon(NULL);


	ck_assert(d > 0);
	snprintf(pin2, sizeof(pin2), "%s-second", pin_dir);
	before = count_links();
	r = run_cmd("%s daemon --listen 127.0.0.1:%d --pin-path %s 2>&1", memacct, port, pin2);
	after = count_links();
	ck_assert_int_eq(r->status, 4);
	ck_assert_msg(strstr(r->out, strerror(EADDRINUSE)), "no cause: %s", r->out);
	result_free(r);
	ck_assert_msg(after == before, "links %d before, %d after the failed start", before, after);
	r = run_cmd("%s daemon --listen 192.0.2.1:%d --pin-path %s 2>&1", memacct, port, pin2);
	ck_assert_int_eq(r->status, 4);
	ck_assert_msg(strstr(r->out, strerror(EADDRNOTAVAIL)), "no cause: %s", r->out);
	result_free(r);
	ck_assert_msg(access(pin2, F_OK) != 0, "%s pinned by a daemon that could not listen", pin2);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * D4: detach removes memacct's pins only: another tool's pinned maps in
 * DIR/maps and DIR/links stay, and so do the files of a directory that is
 * not on a bpffs (rc 2).
 */
START_TEST(test_detach_spares_foreign_pins)
{
	char foreign_m[200], foreign_l[200], imposter[200], tmp[] = "/tmp/memacct-detach-XXXXXX";
	char file[64];
	struct result *r;
	int before, after, fd;
	pid_t d;


	before = count_links();
	d = start_daemon(NULL);
	ck_assert(d > 0);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	ck_assert_msg(count_links() > before, "the daemon's links are not pinned");
	snprintf(foreign_m, sizeof(foreign_m), "%s/maps/other_tool_state", pin_dir);
	snprintf(foreign_l, sizeof(foreign_l), "%s/links/other_tool_link", pin_dir);
	/* memacct's name, not its sizes */
	snprintf(imposter, sizeof(imposter), "%s-second/maps/cgroups", pin_dir);
	r = run_cmd("bpftool map create %s type hash key 4 value 8 entries 1 name other_tool && "
		    "bpftool map create %s type array key 4 value 4 entries 1 name other_link && "
		    "mkdir -p %s-second/maps && "
		    "bpftool map create %s type hash key 8 value 8 entries 1 name cgroups",
		    foreign_m, foreign_l, pin_dir, imposter);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	r = run_cmd("%s detach --pin-path %s 2>&1 && %s detach --pin-path %s-second 2>&1",
		    memacct, pin_dir, memacct, pin_dir);
	after = count_links();
	ck_assert_msg(r->status == 0, "detach rc %d: %s", r->status, r->out);
	result_free(r);
	ck_assert_msg(access(foreign_m, F_OK) == 0, "%s deleted", foreign_m);
	ck_assert_msg(access(foreign_l, F_OK) == 0, "%s deleted", foreign_l);
	ck_assert_msg(access(imposter, F_OK) == 0, "%s deleted", imposter);
	ck_assert_msg(after == before, "links %d before the daemon, %d after detach", before, after);
	unlink(foreign_m);
	unlink(foreign_l);
	unlink(imposter);
	/* not a bpffs: nothing removed, usage error */
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(file, sizeof(file), "%s/maps", tmp);
	ck_assert_int_eq(mkdir(file, 0700), 0);
	snprintf(file, sizeof(file), "%s/maps/procs", tmp);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	r = run_cmd("%s detach --pin-path %s 2>&1", memacct, tmp);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
	ck_assert_msg(access(file, F_OK) == 0, "%s deleted", file);
	unlink(file);
	snprintf(file, sizeof(file), "%s/maps", tmp);
	rmdir(file);
	rmdir(tmp);
	r = run_cmd("%s detach --pin-path %s extra 2>&1", memacct, pin_dir);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
}
END_TEST

/* D11: "--cgroup-filter NAME/" (no leading '/', a trailing one) selects /NAME. */
START_TEST(test_filter_spellings)
{
	char extra[200], label[200], *m;
	pid_t d;


	snprintf(live_cg, sizeof(live_cg), "%s/memacct-filt-%d", cgroot, (int)getpid());
	rmdir(live_cg);
	ck_assert_int_eq(mkdir(live_cg, 0755), 0);
	snprintf(extra, sizeof(extra), "--cgroup-filter memacct-filt-%d/", (int)getpid());
	d = start_daemon(extra);
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label), "memacct_usage_bytes{cgroup=\"/memacct-filt-%d\"}",
		 (int)getpid());
	ck_assert_msg(sample(m, label) >= 0, "no %s with %s", label, extra);
	free(m);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * The charge in parts (issue 43): a cgroup whose charge is a 64 MiB /dev/shm
 * file its writer closed before exiting. memacct_memory_part_bytes{part=
 * "shmem"} is the file's size, and the parts of one collection add up to its
 * memacct_usage_bytes (what they leave, "other", at most 1% or the charges
 * taken ahead per CPU; on v1 the kmem too, a few pages here).
 */
START_TEST(test_daemon_memory_parts)
{
	static const char *const parts[] = { "anon", "shmem", "page_cache_active",
		"page_cache_inactive", "page_cache_unevictable", "kernel", "sock", "other" };
	long long cpus = sysconf(_SC_NPROCESSORS_ONLN), pg = (long long)PAGE;
	long long usage, sum = 0, v, shmem = -1, slack;
	char shm[128], label[400], rel[64], *m;
	struct result *r;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-parts-%d", (int)getpid());
	snprintf(live_cg, sizeof(live_cg), "%s%s", cgroot, rel);
	snprintf(shm, sizeof(shm), "/dev/shm/memacct-parts.%d", (int)getpid());
	ck_assert_int_eq(mkdir(live_cg, 0755), 0);
	r = run_cmd("echo $$ > %s/cgroup.procs && dd if=/dev/zero of=%s bs=1M count=64 "
		    "status=none", live_cg, shm);
	ck_assert_msg(r->status == 0, "rc %d: %s", r->status, r->out);
	result_free(r);
	d = start_daemon("");
	ck_assert(d > 0);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	unlink(shm);
	snprintf(label, sizeof(label), "memacct_usage_bytes{cgroup=\"%s\"}", rel);
	usage = sample(m, label);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(label, sizeof(label), "memacct_memory_part_bytes{cgroup=\"%s\",part=\"%s\"}",
			 rel, parts[i]);
		v = sample(m, label);
		if (v > 0)
			sum += v;
		if (!strcmp(parts[i], "shmem"))
			shmem = v;
	}
	snprintf(label, sizeof(label), "memacct_working_set_reclaimable_bytes{cgroup=\"%s\"}", rel);
	v = sample(m, label);
	free(m);
	slack = (64 * cpus + 16) * pg > usage / 100 ? (64 * cpus + 16) * pg : usage / 100;
	printf("  %s: usage %lld, parts %lld (at most %lld over), shmem %lld, reclaimable of the "
	       "working set %lld\n", rel, usage, sum, slack, shmem, v);
	ck_assert_msg(usage > 0, "no memacct_usage_bytes of %s", rel);
	assert_near("memory_part_bytes{part=\"shmem\"}", shmem, 64 << 20);
	ck_assert_msg(sum >= usage && sum - usage <= slack, "parts %lld, usage %lld", sum, usage);
	ck_assert_msg(v >= 0, "no memacct_working_set_reclaimable_bytes of %s", rel);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * /healthz: 200 "ok" while collections are published and every program is
 * linked; one link pin removed from under the daemon (a re-attached
 * daemon's programs hang on nothing else) is a 503 naming it, from the next
 * collection (500 ms).
 */
static long long scrape_cg(const char *name, const char *rel);
static long long scrape_not_lower(const char *name, const char *rel, long long before,
				  const char *when);

/* The links pinned in the test daemon's DIR/links. */
static int pinned_links(void)
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/links", pin_dir);
	dir = opendir(path);
	ck_assert_msg(dir, "opendir %s: %s", path, strerror(errno));
	while ((de = readdir(dir)))
		n += de->d_name[0] != '.';
	closedir(dir);
	return n;
}

START_TEST(test_healthz_kernel_side)
{
	char path[512], *b, *resp = NULL;
	long long before;
	struct dirent *de;
	int links;
	off_t mark;
	DIR *dir;
	pid_t d;

	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "the daemon did not start (" DAEMON_LOG ")");
	links = pinned_links();
	b = http_get("/healthz", NULL);
	ck_assert_msg(b && !strcmp(b, "ok\n"), "/healthz: %s", b ? b : "(not 200)");
	free(b);
	snprintf(path, sizeof(path), "%s/links", pin_dir);
	dir = opendir(path);
	ck_assert_msg(dir, "opendir %s: %s", path, strerror(errno));
	while ((de = readdir(dir)) && de->d_name[0] == '.')
		;
	ck_assert_msg(de, "no link pinned in %s", path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", de->d_name);
	closedir(dir);
	ck_assert_msg(!unlink(path), "unlink %s: %s", path, strerror(errno));
	for (int i = 0; i < 50; i++) {
		resp = http_raw("GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n", NULL);
		if (resp && strstr(resp, "kernel side incomplete"))
			break;
		free(resp);
		resp = NULL;
		sleep_ms(100);
	}
	ck_assert_msg(resp && !strncmp(resp + 9, "503", 3) &&
		      strstr(resp, "kernel side incomplete: 1 of its"),
		      "/healthz 5 s after unpinning %s: %s", path, resp ? resp : "(no answer)");
	printf("  /healthz after unpinning %s: %s", strrchr(path, '/') + 1,
	       strstr(resp, "kernel side"));
	free(resp);
	/* a restart loads the programs again on the pinned maps: every link
	 * back, 200, the counters carried on (b27f6ef: 200 with one short) */
	before = scrape_cg("memacct_zero_fill_bytes_total", "/");
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	mark = daemon_log_mark();
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "the daemon did not restart (" DAEMON_LOG ")");
	ck_assert_msg(daemon_log_says(mark, "links pinned at load are gone", "loading the "
				      "programs again"), "the restart did not say it reloads");
	ck_assert_msg(access(path, F_OK) == 0, "%s not pinned again", path);
	ck_assert_int_eq(pinned_links(), links);
	for (int i = 0; i < 50; i++) {
		b = http_get("/healthz", NULL);
		if (b && !strcmp(b, "ok\n"))
			break;
		free(b);
		b = NULL;
		sleep_ms(100);
	}
	ck_assert_msg(b, "/healthz after the restart: not 200 ok");
	free(b);
	scrape_not_lower("memacct_zero_fill_bytes_total", "/", before, "across the reload");
	printf("  after a restart: %d links pinned again, /healthz ok\n", links);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * The pinned .bss of "another build": the daemon's own, its variables in
 * the reverse order (as a link-order change or a variable moved between BPF
 * units lays them out), the values moved with them, with markers added to
 * two counters: @nv_mark to nv_calls[0], @drop_mark to
 * dropped[MEMACCT_DROP_DMA_RANGE_FULL].
 * Pinned in the real one's place (whose old programs keep it alive).
 */
static void pin_reversed_bss(long long nv_mark, long long drop_mark)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo);
	char path[512];
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0, off = 0;
	struct btf *kb, *nb;
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	char *old, *val;
	int fd, nfd, base, nsec, n;

	snprintf(path, sizeof(path), "%s/maps/bss", pin_dir);
	fd = bpf_obj_get(path);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	memset(&info, 0, sizeof(info));
	ck_assert_int_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	ck_assert_msg(info.btf_id && info.btf_value_type_id, "the pinned .bss has no BTF");
	kb = btf__load_from_kernel_by_id(info.btf_id);
	ck_assert_ptr_nonnull(kb);
	old = calloc(1, info.value_size);
	val = calloc(1, info.value_size + 8 * 64);
	ck_assert(old && val);
	ck_assert_int_eq(bpf_map_lookup_elem(fd, &key, old), 0);
	close(fd);
	nb = btf__new_empty();
	base = btf__add_btf(nb, kb);	/* the id kb's type 1 has in nb */
	ck_assert_int_gt(base, 0);
	sec = btf__type_by_id(kb, info.btf_value_type_id);
	n = btf_vlen(sec);
	ck_assert_int_gt(n, 2);
	nsec = btf__add_datasec(nb, "old_layout.bss", 0);
	ck_assert_int_gt(nsec, 0);
	for (int i = n - 1; i >= 0; i--) {
		const struct btf_type *var;
		const char *name;

		sec = btf__type_by_id(kb, info.btf_value_type_id);	/* nb grew: kb's is stable */
		vs = btf_var_secinfos(sec) + i;
		var = btf__type_by_id(kb, vs->type);
		name = btf__name_by_offset(kb, var->name_off);
		off = (off + 7) & ~7u;
		memcpy(val + off, old + vs->offset, vs->size);
		if (!strcmp(name, "nv_calls"))
			*(__u64 *)(val + off) += nv_mark;
		if (!strcmp(name, "dropped"))	/* one that leaves /healthz ok */
			((__u64 *)(val + off))[MEMACCT_DROP_DMA_RANGE_FULL] += drop_mark;
		ck_assert_int_eq(btf__add_datasec_var_info(nb, vs->type + base - 1, off, vs->size),
				 0);
		off += vs->size;
	}
	/* the DATASEC's size, as the linker sets it */
	((struct btf_type *)btf__type_by_id(nb, nsec))->size = off;
	ck_assert_int_eq(btf__load_into_kernel(nb), 0);
	mo.btf_fd = btf__fd(nb);
	mo.btf_value_type_id = nsec;
	nfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "old_layout.bss", 4, off, 1, &mo);
	ck_assert_msg(nfd >= 0, "creating the old-layout .bss: %s", strerror(errno));
	ck_assert_int_eq(bpf_map_update_elem(nfd, &key, val, 0), 0);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_msg(!bpf_obj_pin(nfd, path), "pinning %s: %s", path, strerror(errno));
	printf("  pinned a .bss of another layout: %d variables reversed, %u bytes (was %u)\n",
	       n, off, info.value_size);
	close(nfd);
	btf__free(nb);
	btf__free(kb);
	free(old);
	free(val);
}

/* A sample of /metrics by its whole name and labels; -1 when absent. */
static long long scrape_sample(const char *name_labels)
{
	char *m = http_get("/metrics", NULL);
	long long v;

	ck_assert_ptr_nonnull(m);
	v = sample(m, name_labels);
	free(m);
	return v;
}

/*
 * Issue 40: a daemon started on the pins of another build whose .bss is
 * laid out differently (same size or not) misread every kernel counter
 * (the size alone was checked). Now it loads its own programs and carries
 * the old values across by name: the markers put into the old layout come
 * out of the new daemon's metrics, every link is pinned again, /healthz is
 * ok, and a restart after that re-attaches without a reload.
 */
START_TEST(test_bss_layout_upgrade)
{
	const char *nv = "memacct_nvidia_pin_calls_total{result=\"pinned\"}",
		   *drop = "memacct_events_dropped_total{reason=\"dma_range_map_full\"}";
	char label[320];
	long long nv0, drop0, want, v;
	int links;
	off_t mark;
	pid_t d;
	char *b = NULL;

	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	snprintf(label, sizeof(label), "memacct_cow_copied_bytes_total{cgroup=\"/memacct-dtest-%d\"}",
		 (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "the daemon did not start (" DAEMON_LOG ")");
	links = pinned_links();
	want = cow_fork_in(cg, "32 2");
	nv0 = scrape_sample(nv);
	drop0 = scrape_sample(drop);
	ck_assert_msg(nv0 >= 0 && drop0 >= 0, "%s or %s not published", nv, drop);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	pin_reversed_bss(5000, 1000);
	mark = daemon_log_mark();
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "the daemon did not start on the old layout (" DAEMON_LOG ")");
	ck_assert_msg(daemon_log_says(mark, "laid out by another build", "carrying the counters"),
		      "the start did not say it found another layout");
	ck_assert_msg(daemon_log_says(mark, "variables carried", NULL),
		      "the start did not count what it carried");
	v = scrape_sample(nv);
	ck_assert_msg(v == nv0 + 5000, "%s: %lld, the old layout held %lld", nv, v, nv0 + 5000);
	v = scrape_sample(drop);
	ck_assert_msg(v >= drop0 + 1000 && v < drop0 + 1100, "%s: %lld, the old layout held %lld",
		      drop, v, drop0 + 1000);
	ck_assert_int_eq(pinned_links(), links);
	for (int i = 0; i < 50 && !b; i++) {
		b = http_get("/healthz", NULL);
		if (b && strcmp(b, "ok\n")) {
			free(b);
			b = NULL;
		}
		if (!b)
			sleep_ms(100);
	}
	ck_assert_msg(b, "/healthz after the upgrade: not 200 ok");
	free(b);
	/* the records carried on, and the new programs count: the cgroup's
	 * CoW before and after the upgrade */
	want += cow_fork_in(cg, "16 2");
	collections_wait(2);
	assert_near("cow_copied_bytes_total across the upgrade", scrape_sample(label), want);
	/* the pins are now this build's: a restart re-attaches, no reload */
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	mark = daemon_log_mark();
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "the daemon did not restart (" DAEMON_LOG ")");
	ck_assert_msg(!daemon_log_says(mark, "laid out by another build", NULL),
		      "the second start found another layout again");
	ck_assert_int_eq(scrape_sample(nv), nv0 + 5000);
	printf("  upgrade: %s %lld -> %lld, %d links pinned again, /healthz ok\n", nv, nv0,
	       nv0 + 5000, links);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	rmdir(cg);
	cg[0] = '\0';
}
END_TEST

/*
 * systemd Type=notify on $NOTIFY_SOCKET, as sd_notify(3) sends: READY=1 once
 * serving, WATCHDOG=1 at half of $WATCHDOG_USEC (1 s here) while collections
 * are on time, STOPPING=1 at SIGTERM.
 */
START_TEST(test_sd_notify)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, 200000 };
	int fd, ready = 0, wd = 0, stopping = 0;
	char buf[256];
	uint64_t end;
	ssize_t n;
	pid_t d;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/memacct-notify-%d", (int)getpid());
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)), "bind %s: %s",
		      sa.sun_path, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	setenv("WATCHDOG_USEC", "1000000", 1);
	d = start_daemon(NULL);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	ck_assert(d > 0);
	for (end = now_ns() + 3000000000ULL; now_ns() < end;) {
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		ready += !strcmp(buf, "READY=1");
		wd += !strcmp(buf, "WATCHDOG=1");
	}
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		stopping += !strcmp(buf, "STOPPING=1");
	}
	close(fd);
	unlink(sa.sun_path);
	printf("  sd_notify: READY=1 x%d, WATCHDOG=1 x%d in 3 s (WATCHDOG_USEC 1 s), STOPPING=1 x%d\n",
	       ready, wd, stopping);
	ck_assert_int_eq(ready, 1);
	ck_assert_msg(wd >= 4 && wd <= 8, "%d watchdog pings in 3 s at 0.5 s", wd);
	ck_assert_int_eq(stopping, 1);
}
END_TEST

/*
 * The JSON log rotated by logrotate(8) itself under docs/deploy/memacct.logrotate
 * (its path and its postrotate's `systemctl reload` made the test's: kill
 * -HUP): the rotated file holds whole lines, the daemon goes on in the new
 * one after SIGHUP, every line of both parses.
 */
START_TEST(test_json_log_logrotate)
{
	char dir[64], log[96], extra[128];
	struct result *r;
	pid_t d;

	if (system("command -v logrotate > /dev/null") != 0) {
		SKIP_TEST("no logrotate(8) here");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/memacct-rot-%d", (int)getpid());
	snprintf(log, sizeof(log), "%s/memacct.jsonl", dir);
	ck_assert_msg(!mkdir(dir, 0700) || errno == EEXIST, "mkdir %s", dir);
	snprintf(extra, sizeof(extra), "--json-log %s", log);
	d = start_daemon(extra);
	ck_assert(d > 0);
	for (int i = 0; i < 50; i++) {
		r = run_cmd("echo \"truth lines $(cat %s 2>/dev/null | wc -l)\"", log);
		if (truth(r, "lines") >= 2) {
			result_free(r);
			break;
		}
		result_free(r);
		sleep_ms(100);
	}
	r = run_cmd("D=%s; sed -e \"s|/var/log/memacct/memacct.jsonl|$D/memacct.jsonl|\" "
		    "-e 's|systemctl reload memacct.service|kill -HUP %d|' "
		    "%s/../docs/deploy/memacct.logrotate > $D/conf && "
		    "logrotate -f -s $D/state $D/conf 2>&1 && echo 'truth rotated 1'",
		    dir, (int)d, testsdir);
	ck_assert_msg(r->nt && truth(r, "rotated") == 1, "logrotate: %s", r->out);
	result_free(r);
	collections_wait(3);	/* three collections after the reload */
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	r = run_cmd("D=%s; echo \"truth old $(wc -l < $D/memacct.jsonl.1)\"; "
		    "echo \"truth new $(wc -l < $D/memacct.jsonl)\"", dir);
	printf("  logrotate: %lld lines in the rotated log, %lld in the new one after SIGHUP\n",
	       truth(r, "old"), truth(r, "new"));
	ck_assert_int_ge(truth(r, "old"), 2);
	ck_assert_int_ge(truth(r, "new"), 2);
	result_free(r);
	/* every line of both parses (jansson: the vmtest guests have no Python) */
	for (int i = 0; i < 2; i++) {
		char path[128], *line = NULL;
		size_t cap = 0;
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "%s%s", log, i ? "" : ".1");
		f = fopen(path, "r");
		ck_assert_msg(f, "%s: %s", path, strerror(errno));
		while ((n = getline(&line, &cap, f)) > 0) {
			json_error_t err;
			json_t *j = json_loadb(line, n, 0, &err);

			ck_assert_msg(json_is_object(j), "%s: a line that does not parse (%s): %s",
				      path, err.text, line);
			json_decref(j);
		}
		free(line);
		fclose(f);
	}
	r = run_cmd("rm -rf %s", dir);
	result_free(r);
}
END_TEST

/*
 * #15: per (cgroup, comm) families instead of per-pid series by default:
 * three processes of one program in a cgroup are one memacct_comm_* series
 * each, with their count and their RSS summed: the sum of their per-pid
 * series, and VmRSS within the percpu counters' lag; no pid-labelled
 * sample without --top-processes.
 */
START_TEST(test_comm_families)
{
	char rel[64], comm[16], line[256], *m;
	long long n, rss, sum = 0, truth_kib = 0;
	struct result *r;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-comm-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	snprintf(comm, sizeof(comm), "mcw%d", (int)getpid() % 100000);
	snprintf(ws_file, sizeof(ws_file), "/tmp/%s", comm);	/* removed by teardown() */
	/* the sleep(1) of $PATH, not busybox's /bin/sleep link (a copy of
	 * busybox under another name is no applet: the vmtest guests) */
	r = run_cmd("cp \"$(command -v sleep)\" %s", ws_file);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	held = fork();
	if (held == 0) {
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && for i in 1 2 3; do "
			 "%s 60 & done; wait", cg, ws_file);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	d = start_daemon(NULL);
	ck_assert(d > 0);
	collections_wait(3);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strstr(m, "\nmemacct_process_rss_bytes{") &&
		      strstr(m, "# TYPE memacct_process_cow_copied_bytes gauge\n"),
		      "per-pid samples without --top-processes, or a per-pid counter");
	free(m);
	stop_daemon(d, SIGTERM);
	/* with the per-pid series: the comm series is their sum, in the same
	 * collection (the same iter/task figures) */
	d = start_daemon("--top-processes 10000");
	ck_assert(d > 0);
	collections_wait(3);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	/* by /proc/PID/comm, not pgrep -x (busybox's found none in the vmtest guests) */
	r = run_cmd("for d in /proc/[0-9]*; do [ \"$(cat $d/comm 2>/dev/null)\" = %s ] || "
		    "continue; echo \"truth pid ${d#/proc/}\"; awk '/^VmRSS:/ { "
		    "print \"truth kib\", $2 }' $d/status; done", comm);
	ck_assert_int_eq(r->nt, 6);
	for (int i = 0; i < r->nt; i += 2) {
		snprintf(line, sizeof(line), "memacct_process_rss_bytes{pid=\"%lld\",comm=\"%s\","
			 "cgroup=\"%s\"}", r->t[i].val, comm, rel);
		ck_assert_int_ge(sample(m, line), 0);
		sum += sample(m, line);
		truth_kib += r->t[i + 1].val;
	}
	snprintf(line, sizeof(line), "memacct_comm_processes{cgroup=\"%s\",comm=\"%s\"}", rel, comm);
	n = sample(m, line);
	snprintf(line, sizeof(line), "memacct_comm_rss_bytes{cgroup=\"%s\",comm=\"%s\"}", rel, comm);
	rss = sample(m, line);
	printf("  %s: memacct_comm_processes %lld (truth 3), memacct_comm_rss_bytes %lld = sum of "
	       "its processes' series %lld; VmRSS summed %lld\n", comm, n, rss, sum,
	       truth_kib * 1024);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(rss, sum);
	/* iter/task reads mm->rss_stat's percpu_counter without the per-CPU
	 * deltas (/proc sums them): each of 2 counters of 3 processes may lag
	 * by up to batch (max(32, 2 x CPUs)) pages per CPU */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		long long lag = 3LL * 2 * cpus * (cpus * 2 > 32 ? cpus * 2 : 32) * 4096;

		ck_assert_msg(llabs(rss - truth_kib * 1024) <= lag, "comm rss %lld vs VmRSS %lld "
			      "beyond the percpu lag %lld", rss, truth_kib * 1024, lag);
	}
	result_free(r);
	free(m);
	stop_daemon(d, SIGTERM);
	r = run_cmd("kill -9 $(cat %s/cgroup.procs) 2>/dev/null; true", cg);
	result_free(r);
	waitpid(held, NULL, 0);
	held = 0;
	for (int i = 0; i < 50 && rmdir(cg) && errno == EBUSY; i++)
		sleep_ms(100);
	cg[0] = '\0';
}
END_TEST

/* D16: PID 1 is one of the daemon's processes (the task iterator skipped it). */
START_TEST(test_pid1_present)
{
	char *m;
	pid_t d;

	d = start_daemon("--top-processes 10000");
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(m, "\nmemacct_process_rss_bytes{pid=\"1\","),
		      "no memacct_process_rss_bytes series of PID 1 among all processes");
	free(m);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST


/*
 * #13: the per-(cgroup, comm) sums are over every process with fewer
 * --top-processes than processes. explain_fork (64 MiB touched, 2 workers):
 * its parent is the largest process of this machine, so --top-processes 1
 * picks it from near the end of the records; the sums used to be taken
 * after that pick, which left it in the records twice (4 for these 3).
 */
START_TEST(test_comm_sums_every_process)
{
	char rel[64], cmd[700], line[256], *m;
	long long n;
	FILE *wl;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-sums-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	snprintf(cmd, sizeof(cmd), "echo $$ > '%s/cgroup.procs' && exec %s/explain_fork 64 2 "
		 "--seconds 60", cg, workloads);
	wl = popen(cmd, "r");
	ck_assert_ptr_nonnull(wl);
	while (fgets(line, sizeof(line), wl) && strncmp(line, "ready ", 6))
		;
	ck_assert_msg(!strncmp(line, "ready ", 6), "explain_fork never got ready");
	d = start_daemon("--top-processes 1");
	ck_assert(d > 0);
	collections_wait(3);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(line, sizeof(line), "memacct_comm_processes{cgroup=\"%s\",comm=\"explain_fork\"}",
		 rel);
	n = sample(m, line);
	free(m);
	stop_daemon(d, SIGTERM);
	{
		struct result *r = run_cmd("kill -9 $(cat %s/cgroup.procs) 2>/dev/null; true", cg);

		result_free(r);
	}
	pclose(wl);
	ck_assert_msg(n == 3, "--top-processes 1: memacct_comm_processes %lld for explain_fork's 3 "
		      "processes", n);
}
END_TEST

static void *pause_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* a child of @pages touched anon pages and @threads more threads, paused */
static pid_t walk_child(int pages, int threads)
{
	int p[2];
	pid_t c;
	char x;

	ck_assert_int_eq(pipe(p), 0);
	c = fork();
	if (c == 0) {
		char *m = malloc((size_t)pages * 4096);
		pthread_t t;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; m && i < pages; i++)
			m[(size_t)i * 4096] = 1;
		for (int i = 0; i < threads; i++)
			pthread_create(&t, NULL, pause_thread, NULL);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &x, 1), 1);
	close(p[0]);
	return c;
}

/* Rss of /proc/@pid/smaps_rollup (a walk of the page tables), kB; -1 if unread */
static long long rollup_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Rss: %lld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static const struct memacct_task_stock *stock_of(const struct memacct_task_stock *v, long n,
						 pid_t pid, int *copies)
{
	const struct memacct_task_stock *r = NULL;

	*copies = 0;
	for (long i = 0; i < n; i++)
		if (v[i].tgid == (__u32)pid) {
			r = &v[i];
			(*copies)++;
		}
	return r;
}

/*
 * #13: the daemon's process walk (open-coded task iterator, 6.7+) gives the
 * records the task iterator gives, one per process (a process of 4 threads
 * once), and where the kernel has no such iterator the daemon uses the task
 * iterator. Children of known anon RSS, paused, so both passes read the same
 * kernel fields; RSS also against /proc/PID/status.
 */
START_TEST(test_process_walk)
{
	enum { KIDS = sizeof(walk_kids) / sizeof(walk_kids[0]) };
	struct memacct_task_stock *walk = NULL, *iter = NULL;
	pid_t *kids = walk_kids;
	long nw = 0, ni;
	struct btf *btf = btf__load_vmlinux_btf();
	bool has_kfunc = btf && btf__find_by_name_kind(btf, "bpf_iter_task_new", BTF_KIND_FUNC) > 0;
	struct task_walk *small;

	btf__free(btf);
	for (int i = 0; i < KIDS; i++)
		kids[i] = walk_child(16 * (i + 1), i == 0 ? 3 : 0);
	ck_assert_int_eq(pin_open(pin_dir, &walk_pin), 0);
	walk_pin_open = true;
	printf("  kernel %s bpf_iter_task_new: process walk %s\n", has_kfunc ? "has" : "lacks",
	       walk_pin.walk ? "loaded" : "not loaded");
	ck_assert_msg(has_kfunc == (walk_pin.walk != NULL),
		      "the process walk must load exactly where the kernel has bpf_iter_task_new");
	if (walk_pin.walk) {	/* a copy: the lean read below rewrites the array */
		struct memacct_task_stock *v;

		nw = pin_read_stocks(&walk_pin, true, &v);
		ck_assert_msg(nw > KIDS, "process walk: %ld records", nw);
		ck_assert_ptr_nonnull(walk_pin.walk);	/* it did not fail over */
		walk = malloc(nw * sizeof(*walk));
		ck_assert_ptr_nonnull(walk);
		memcpy(walk, v, nw * sizeof(*walk));
	}
	{	/* the task iterator, as on a kernel without the walk */
		struct task_walk *w = walk_pin.walk;

		walk_pin.walk = NULL;
		ni = pin_read_stocks(&walk_pin, true, &iter);
		walk_pin.walk = w;
	}
	ck_assert_msg(ni > KIDS, "task iterator: %ld records", ni);
	for (int i = 0; i < KIDS; i++) {
		const struct memacct_task_stock *a, *b;
		struct proc_status st;
		long long rollup;
		int ca, cb;
		char comm[32];

		b = stock_of(iter, ni, kids[i], &cb);
		ck_assert_msg(b && cb == 1, "pid %d: %d iterator records", (int)kids[i], cb);
		ck_assert_int_eq(read_status(kids[i], &st), 0);
		/* RSS exact (issue 23): the rss_stat counters with every
		 * CPU's delta, what smaps_rollup's page-table walk finds on
		 * every kernel (/proc/PID/status sums the deltas only since
		 * 6.16: before, it is the central count, up to a batch per
		 * CPU low); the children are paused, nothing moves */
		rollup = rollup_rss_kib(kids[i]);
		ck_assert_msg(rollup > 0 &&
			      (b->rss_anon_pages + b->rss_file_pages + b->rss_shmem_pages) *
			      (unsigned long long)sysconf(_SC_PAGESIZE) == (unsigned long long)rollup * 1024,
			      "pid %d: rss pages %llu + %llu + %llu, smaps_rollup Rss %lld kB",
			      (int)kids[i], (unsigned long long)b->rss_anon_pages,
			      (unsigned long long)b->rss_file_pages,
			      (unsigned long long)b->rss_shmem_pages, rollup);
		ck_assert_msg((long)b->rss_anon_pages >= 16L * (i + 1),
			      "pid %d touched %d pages: rss_anon_pages %llu", (int)kids[i],
			      16 * (i + 1), (unsigned long long)b->rss_anon_pages);
		ck_assert_int_eq(b->ppid, getpid());
		{	/* faults: every thread's, as /proc/PID/stat (paused:
			 * nothing moves); b27f6ef gave the leader's alone */
			struct proc_stat ps;

			ck_assert_int_eq(read_stat(kids[i], &ps), 0);
			ck_assert_msg(b->min_flt == ps.minflt && b->maj_flt == ps.majflt,
				      "pid %d (%d threads): faults %llu + %llu, /proc/PID/stat "
				      "%llu + %llu", (int)kids[i], i == 0 ? 4 : 1,
				      (unsigned long long)b->min_flt, (unsigned long long)b->maj_flt,
				      (unsigned long long)ps.minflt, (unsigned long long)ps.majflt);
		}
		snprintf(comm, sizeof(comm), "%.15s", b->comm);
		ck_assert_msg(!strcmp(comm, st.name), "pid %d: comm %s, /proc %s", (int)kids[i],
			      comm, st.name);
		if (!walk)
			continue;
		a = stock_of(walk, nw, kids[i], &ca);
		ck_assert_msg(a && ca == 1, "pid %d (%d threads): %d walk records", (int)kids[i],
			      i == 0 ? 4 : 1, ca);
		ck_assert_msg(!memcmp(a, b, sizeof(*a)),
			      "pid %d: walk and iterator records differ (rss_anon %llu/%llu, "
			      "memcg %llu/%llu, start %llu/%llu)", (int)kids[i],
			      (unsigned long long)a->rss_anon_pages,
			      (unsigned long long)b->rss_anon_pages,
			      (unsigned long long)a->memcg_id, (unsigned long long)b->memcg_id,
			      (unsigned long long)a->start_boottime_ns,
			      (unsigned long long)b->start_boottime_ns);
	}
	if (walk) {	/* without own fields: the same sums, the rest 0 */
		struct memacct_task_stock *lean = NULL;
		long nl = pin_read_stocks(&walk_pin, false, &lean);

		ck_assert_msg(nl > KIDS, "lean process walk: %ld records", nl);
		for (int i = 0; i < KIDS; i++) {
			const struct memacct_task_stock *a, *l;
			int ca, cl;

			a = stock_of(walk, nw, kids[i], &ca);
			l = stock_of(lean, nl, kids[i], &cl);
			ck_assert_msg(l && cl == 1, "pid %d: %d lean records", (int)kids[i], cl);
			ck_assert(l->rss_anon_pages == a->rss_anon_pages &&
				  l->rss_file_pages == a->rss_file_pages &&
				  l->rss_shmem_pages == a->rss_shmem_pages &&
				  l->locked_vm_pages == a->locked_vm_pages &&
				  l->pinned_vm_pages == a->pinned_vm_pages &&
				  l->memcg_id == a->memcg_id &&
				  !memcmp(l->comm, a->comm, sizeof(l->comm)));
			ck_assert(!l->ppid && !l->start_boottime_ns && !l->hiwater_rss_pages &&
				  !l->min_flt && !l->maj_flt);
		}
	}
	if (walk) {	/* room grows: 16 processes' array, more processes */
		struct memacct_task_stock *g = NULL;
		long ng;

		ck_assert_int_eq(task_walk_open(16, &small), 0);
		ng = task_walk_read(small, true, &g);
		ck_assert_msg(ng > KIDS && task_walk_capacity(small) >= (uint32_t)ng,
			      "walk of room 16: %ld records, room %u", ng, task_walk_capacity(small));
		printf("  walk: %ld processes, iterator %ld; room 16 grew to %u\n", nw, ni,
		       task_walk_capacity(small));
		task_walk_close(small);
	}
	free(walk);
	pin_close(&walk_pin);
	walk_pin_open = false;
	for (int i = 0; i < KIDS; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
		kids[i] = 0;
	}
	detach_all();
}
END_TEST

/*
 * D14: --json-log on a full filesystem (a 64 KiB tmpfs): the file holds
 * whole JSON lines only, and memacct_json_log_errors_total counts the
 * lines dropped.
 */
START_TEST(test_json_log_full_disk)
{
	char log[128], extra[200], line[1 << 17], *m;
	int whole = 0;
	long long errs;
	FILE *f;
	pid_t d;

	snprintf(tmpfs_dir, sizeof(tmpfs_dir), "/tmp/memacct-full-%d", (int)getpid());
	mkdir(tmpfs_dir, 0700);
	ck_assert_int_eq(mount("tmpfs", tmpfs_dir, "tmpfs", 0, "size=64k"), 0);
	snprintf(log, sizeof(log), "%s/log.json", tmpfs_dir);
	snprintf(extra, sizeof(extra), "--interval 100ms --json-log %s", log);
	d = start_daemon(extra);
	ck_assert(d > 0);
	/* until a write failed, up to 30 s: a fixed 3 s beside three busy
	 * guests gave 9 lines, under 64 KiB, and 0 errors */
	for (int tries = 0; tries < 60; tries++) {
		sleep_ms(500);
		m = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(m);
		errs = sample(m, "memacct_json_log_errors_total");
		free(m);
		if (errs > 0)
			break;
	}
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	f = fopen(log, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);

		ck_assert_msg(j && line[strlen(line) - 1] == '\n', "cut JSON line in %s after %d "
			      "whole ones: %.80s...", log, whole, line);
		json_decref(j);
		whole++;
	}
	fclose(f);
	printf("  %-40s %d whole lines, %lld dropped\n", "JSON log on a 64 KiB tmpfs", whole, errs);
	ck_assert_msg(errs > 0, "memacct_json_log_errors_total %lld on a full disk", errs);
}
END_TEST

/*
 * issue 28: `memacct report --cgroup PATH LOG` replays the daemon's
 * --json-log for one cgroup (a cgroup of the test's with a process holding
 * 32 MiB of anon): a report per collection that holds the cgroup, each
 * report's totals the figures the log published for it (the ground truth
 * here is what the daemon wrote), the last one final; its anon at least
 * the 32 MiB the process wrote.
 */
START_TEST(test_json_log_report)
{
	char rel[64], log[96], extra[160], line[1 << 17];
	json_t *entries[256];
	int n = 0, k = 0;
	struct result *r;
	char *save, *l;
	FILE *f;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-replay-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	snprintf(log, sizeof(log), "/tmp/memacct-replay-%d.jsonl", (int)getpid());
	unlink(log);
	held = fork();
	if (held == 0) {
		char cmd[600];

		/* a workload, not python3: the vmtest guests have none */
		snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s/numa_local 32 "
			 "--seconds 60 > /dev/null", cg, workloads);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	snprintf(extra, sizeof(extra), "--interval 200ms --json-log %s", log);
	d = start_daemon(extra);
	ck_assert(d > 0);
	sleep_ms(2500);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	/* the log's own entries for the cgroup, in order */
	f = fopen(log, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) && n < 256) {
		json_t *j = json_loads(line, 0, NULL), *c;
		size_t i;

		json_array_foreach(json_object_get(j, "cgroups"), i, c)
			if (!strcmp(json_string_value(json_object_get(c, "cgroup")), rel))
				entries[n++] = json_incref(c);
		json_decref(j);
	}
	fclose(f);
	ck_assert_int_ge(n, 3);
	r = run_cmd("%s -j report --cgroup %s %s", memacct, rel, log);
	ck_assert_int_eq(r->status, 0);
	for (l = strtok_r(r->out, "\n", &save); l; l = strtok_r(NULL, "\n", &save), k++) {
		json_t *j = json_loads(l, 0, NULL), *t = json_object_get(j, "totals"), *v;
		const char *key;

		ck_assert_int_lt(k, n);
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "cgroup"),
								   "path")), rel);
		json_object_foreach(entries[k], key, v) {
			if (!json_is_integer(v) || !strcmp(key, "id"))
				continue;
			ck_assert_msg(json_equal(json_object_get(t, key), v), "collection %d: %s "
				      "%lld in the log, %s in the report", k, key,
				      (long long)json_integer_value(v),
				      json_dumps(json_object_get(t, key), JSON_ENCODE_ANY));
		}
		ck_assert(json_is_boolean(json_object_get(j, "final")));
		ck_assert_int_eq(json_is_true(json_object_get(j, "final")), k == n - 1);
		if (k == n - 1)
			ck_assert_int_ge(jint(t, "anon_bytes"), 32LL << 20);
		json_decref(j);
	}
	ck_assert_int_eq(k, n);
	printf("  report --cgroup %s: %d collections, each the log's figures\n", rel, n);
	result_free(r);
	r = run_cmd("%s report --cgroup /memacct-none-%d %s 2>&1; echo \"truth status $?\"",
		    memacct, (int)getpid(), log);
	ck_assert_int_eq(truth(r, "status"), 2);
	result_free(r);
	for (int i = 0; i < n; i++)
		json_decref(entries[i]);
	unlink(log);
	kill(held, SIGKILL);
	waitpid(held, NULL, 0);
	held = 0;
	for (int i = 0; i < 50 && rmdir(cg) && errno == EBUSY; i++)
		sleep_ms(100);
	cg[0] = '\0';
}
END_TEST

START_TEST(test_two_daemons_refused)
{
	struct result *r;
	pid_t d;

	d = start_daemon(NULL);

	ck_assert(d > 0);
	r = run_cmd("%s daemon --listen 127.0.0.1:%d --pin-path %s 2>&1", memacct, free_port(), pin_dir);
	ck_assert_int_ne(r->status, 0);
	ck_assert_ptr_nonnull(strstr(r->out, "another memacct daemon"));
	result_free(r);
	stop_daemon(d, SIGTERM);
	r = run_cmd("%s daemon --stop-kernel-side --pin-path %s", memacct, pin_dir);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	ck_assert_int_ne(access(pin_dir, F_OK), 0);
}
END_TEST

/* Counter of family @name for cgroup path @rel in a fresh scrape; -1 if none. */
static long long scrape_cg(const char *name, const char *rel)
{
	char label[400], *m = http_get("/metrics", NULL);
	long long v;

	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label), "%s{cgroup=\"%s\"}", name, rel);
	v = sample(m, label);
	free(m);
	return v;
}

/* The cgroup's CoW pages of one mapping kind (issue 42); 0: no series yet. */
static long long scrape_kind(const char *rel, const char *kind)
{
	char label[400], *m = http_get("/metrics", NULL);
	long long v;

	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label),
		 "memacct_cow_copied_by_mapping_kind_bytes_total{cgroup=\"%s\",mapping_kind=\"%s\"}",
		 rel, kind);
	v = sample(m, label);
	free(m);
	return v < 0 ? 0 : v;
}

/* A published counter read again: never lower than @before. */
static long long scrape_not_lower(const char *name, const char *rel, long long before,
				  const char *when)
{
	long long v = scrape_cg(name, rel);

	ck_assert_msg(v >= before, "%s{cgroup=\"%s\"} went down %s: %lld -> %lld", name, rel,
		      when, before, v);
	return v;
}

/*
 * On v2, the memory controller for @dir's children (its
 * cgroup.subtree_control), as systemd enables it down a slice: without it
 * the kernel charges them to @dir, and so does memacct. Nothing on v1.
 */
static void cg_enable_memory(const char *dir)
{
	struct result *r;

	if (cgversion != 2)
		return;
	r = run_cmd("echo +memory > %s/cgroup.subtree_control", dir);
	ck_assert_msg(r->status == 0, "+memory in %s/cgroup.subtree_control: %s", dir, r->out);
	result_free(r);
}

/* cg_enable_memory() undone, once @dir has no child: v2 lets no process in before */
static void cg_disable_memory(const char *dir)
{
	struct result *r;

	if (cgversion != 2)
		return;
	r = run_cmd("echo -memory > %s/cgroup.subtree_control", dir);
	ck_assert_msg(r->status == 0, "-memory in %s/cgroup.subtree_control: %s", dir, r->out);
	result_free(r);
}

/*
 * The test's cgroup @rel (/memacct-test-@tag-PID, in cg) with two children
 * child1 and child2 (@c1, @c2: absolute paths), all removed by teardown().
 */
static void make_family(const char *tag, char rel[64], char c1[512], char c2[512])
{
	snprintf(rel, 64, "/memacct-test-%s-%d", tag, (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	snprintf(c1, 512, "%s/child1", cg);
	snprintf(c2, 512, "%s/child2", cg);
	snprintf(extra_cg[0], sizeof(extra_cg[0]), "%s", c1);
	snprintf(extra_cg[1], sizeof(extra_cg[1]), "%s", c2);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_enable_memory(cg);
	ck_assert_int_eq(mkdir(c1, 0755), 0);
	ck_assert_int_eq(mkdir(c2, 0755), 0);
}

/*
 * Issue #15: a parent cgroup's counters keep what its removed children did,
 * as the kernel's hierarchical memory.stat does (CoW 64 MiB in child1, rmdir
 * child1 at once, CoW 32 MiB in child2: the parent shows 96 MiB), across a
 * daemon restart, and across a child removed while no daemon runs. Before:
 * the parent stayed at 64 MiB (max of what it had and its live children).
 */
START_TEST(test_parent_keeps_removed_children)
{
	char rel[64], c2rel[96], c1[512], c2[512];
	long long w1, w2, p, v, k = 0;
	pid_t d;

	make_family("par", rel, c1, c2);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	w1 = cow_fork_in(c1, "64 1");
	ck_assert_int_eq(rmdir(c1), 0);	/* at once: before any collection saw it */
	w2 = cow_fork_in(c2, "32 1");
	collections_wait(2);
	p = scrape_cg("memacct_cow_copied_bytes_total", rel);
	assert_near("parent cow_copied_bytes_total after child1 removed, child2 copied", p, w1 + w2);
	/* by kind (issue 42): cow_fork's buffer is an anonymous mmap; the rest
	 * (their stacks) is the kernel's too, and the kinds add up to it */
	if (kernel_at_least(5, 17)) {
		k = scrape_kind(rel, "anon");
		assert_near("parent's CoW of kind anon", k, w1 + w2);
		ck_assert_int_eq(k + scrape_kind(rel, "heap") + scrape_kind(rel, "stack") +
				 scrape_kind(rel, "unknown"), p);
	}
	snprintf(c2rel, sizeof(c2rel), "%s/child2", rel);
	v = scrape_cg("memacct_cow_copied_bytes_total", c2rel);
	assert_near("child2 cow_copied_bytes_total", v, w2);
	/* restart */
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	p = scrape_not_lower("memacct_cow_copied_bytes_total", rel, p, "across a restart");
	assert_near("parent cow_copied_bytes_total after a restart", p, w1 + w2);
	if (kernel_at_least(5, 17))
		ck_assert_msg(scrape_kind(rel, "anon") >= k, "CoW of kind anon went down across "
			      "a restart: %lld -> %lld", k, scrape_kind(rel, "anon"));
	/* child2 removed while no daemon runs */
	stop_daemon(d, SIGKILL);
	ck_assert_int_eq(rmdir(c2), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	p = scrape_not_lower("memacct_cow_copied_bytes_total", rel, p,
			     "across child2 removed while no daemon ran");
	assert_near("parent cow_copied_bytes_total after child2 removed during a restart", p,
		    w1 + w2);
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * Issue #15: a live process that copied pages in cgroup A, then moves to B:
 * A keeps its copies (it did them there), B counts none of them, during the
 * move, across a restart and after the process exits in B. Before: A went
 * down by them (held by the clamp, but lost at a restart) and B gained them.
 */
/*
 * Two sibling cgroups below the root, /memacct-test-@{tag}a-PID and
 * ...b-PID (their paths relative to the root into @a_rel, @b_rel, 64
 * bytes), made in extra_cg[0] and [1] (teardown() removes them).
 */
static void two_cgroups(const char *tag, char *a_rel, char *b_rel)
{
	snprintf(a_rel, 64, "/memacct-test-%sa-%d", tag, (int)getpid());
	snprintf(b_rel, 64, "/memacct-test-%sb-%d", tag, (int)getpid());
	snprintf(extra_cg[0], sizeof(extra_cg[0]), "%s%s", cgroot, a_rel);
	snprintf(extra_cg[1], sizeof(extra_cg[1]), "%s%s", cgroot, b_rel);
	ck_assert_int_eq(mkdir(extra_cg[0], 0755), 0);
	ck_assert_int_eq(mkdir(extra_cg[1], 0755), 0);
}

START_TEST(test_moved_process_keeps_flows)
{
	char a_rel[64], b_rel[64], line[256], procs[600];
	long long truth_bytes = -1, pid = -1, a, b;
	int in[2], out[2];
	pid_t d, w;
	FILE *f;

	two_cgroups("mv", a_rel, b_rel);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	/* close-on-exec: a daemon started later must not hold the stdin of
	 * cow_fork open (its EOF ends the workload) */
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	w = fork();
	if (w == 0) {
		char cmd[600];

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s/cow_fork 32 1 "
			 "--parent-writes --hold", extra_cg[0], workloads);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	held = w;
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "truth parent_cow_bytes %lld", &truth_bytes);
		if (sscanf(line, "truth parent_pid %lld", &pid) == 1)
			break;
	}
	ck_assert_msg(truth_bytes > 0 && pid > 0, "cow_fork --hold printed no truth");
	collections_wait(2);
	a = scrape_cg("memacct_cow_copied_bytes_total", a_rel);
	assert_near("A cow_copied_bytes_total, process live in A", a, truth_bytes);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", extra_cg[1]);
	{
		FILE *pf = fopen(procs, "w");

		ck_assert_ptr_nonnull(pf);
		fprintf(pf, "%lld\n", pid);
		ck_assert_int_eq(fclose(pf), 0);
	}
	collections_wait(2);
	a = scrape_not_lower("memacct_cow_copied_bytes_total", a_rel, a, "after the move");
	assert_near("A cow_copied_bytes_total, process moved to B", a, truth_bytes);
	b = scrape_cg("memacct_cow_copied_bytes_total", b_rel);
	assert_near("B cow_copied_bytes_total, process moved in", b, 0);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	a = scrape_not_lower("memacct_cow_copied_bytes_total", a_rel, a, "across a restart");
	assert_near("A cow_copied_bytes_total after a restart", a, truth_bytes);
	b = scrape_not_lower("memacct_cow_copied_bytes_total", b_rel, b, "across a restart");
	assert_near("B cow_copied_bytes_total after a restart", b, 0);
	close(in[1]);	/* the process exits, in B */
	fclose(f);
	waitpid(w, NULL, 0);
	held = 0;
	collections_wait(2);
	a = scrape_not_lower("memacct_cow_copied_bytes_total", a_rel, a, "after the exit");
	assert_near("A cow_copied_bytes_total after the exit in B", a, truth_bytes);
	b = scrape_not_lower("memacct_cow_copied_bytes_total", b_rel, b, "after the exit");
	assert_near("B cow_copied_bytes_total after the exit in B", b, 0);
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * A process that moves itself (runc init, a shell's echo $$ > cgroup.procs)
 * right after its copies: they stay with the cgroup they were made in, the
 * later ones go to the new one, to the page, for BEFORE below, at and above
 * one fold batch (32 events). On b27f6ef a batch pending in the CPU slot
 * went with the move: 16 -> B got 19 pages, 100 -> 11, 1,000 -> 11. Truth:
 * the workload's counts; A may add the parent's and the child's few stack
 * copies around fork (up to 16 pages), B nothing.
 */
START_TEST(test_self_move_keeps_flows)
{
	static const long befores[] = { 16, 100, 1000 };
	const long after = 50;
	char a_rel[64], b_rel[64];
	long long a = 0, b = 0;
	pid_t d;

	two_cgroups("sm", a_rel, b_rel);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	/* no series yet for a cgroup nothing has happened in: 0 */
	a = scrape_cg("memacct_cow_copied_bytes_total", a_rel);
	b = scrape_cg("memacct_cow_copied_bytes_total", b_rel);
	a = a < 0 ? 0 : a;
	b = b < 0 ? 0 : b;
	for (size_t i = 0; i < sizeof(befores) / sizeof(befores[0]); i++) {
		struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/cow_move "
					   "%s %ld %ld'", extra_cg[0], workloads, extra_cg[1],
					   befores[i], after);
		long long want_a = truth(r, "before_bytes"), want_b = truth(r, "after_bytes");
		long long a1, b1;
		char what[64];

		ck_assert_msg(r->status == 0, "cow_move: %s", r->out);
		collections_wait(2);
		a1 = scrape_not_lower("memacct_cow_copied_bytes_total", a_rel, a, "after a run");
		b1 = scrape_not_lower("memacct_cow_copied_bytes_total", b_rel, b, "after a run");
		snprintf(what, sizeof(what), "%ld copies, move, %ld", befores[i], after);
		ck_assert_msg(a1 - a >= want_a && a1 - a <= want_a + 16 * (long long)PAGE,
			      "%s: A got %lld, truth %lld (+ stack copies)", what, a1 - a, want_a);
		ck_assert_msg(b1 - b == want_b, "%s: B got %lld, truth %lld", what, b1 - b,
			      want_b);
		printf("  %-40s A %9lld (truth %9lld)  B %9lld (truth %9lld)\n", what, a1 - a,
		       want_a, b1 - b, want_b);
		a = a1;
		b = b1;
		result_free(r);
	}
	stop_daemon(d, SIGTERM);
}
END_TEST

/* Value of "KEY N" in a memory.stat-like file; -1 if absent. */
static long long stat_key(const char *path, const char *key)
{
	char line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ')
			v = strtoll(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* stat_key() of the file @dir/@name */
static long long stat_key_in(const char *dir, const char *name, const char *key)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat_key(path, key);
}

/* the test cgroup's (cg) charge and inactive page cache, as the kernel
 * has them now (v1: usage_in_bytes, total_inactive_file; v2: memory.current,
 * inactive_file) */
static void working_set_read(long long *usage, long long *inactive)
{
	char path[700];
	bool v1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", cg);
	v1 = access(path, F_OK) == 0;
	if (!v1)
		snprintf(path, sizeof(path), "%s/memory.current", cg);
	f = fopen(path, "r");
	ck_assert(f && fscanf(f, "%lld", usage) == 1);
	fclose(f);
	*inactive = stat_key_in(cg, "memory.stat", v1 ? "total_inactive_file" : "inactive_file");
}

/* the bytes of file @path in the page cache now: mincore(2) of a mapping of it */
static long long file_cached_bytes(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long long n = 0;
	unsigned char *vec;
	size_t pages;
	struct stat st;
	void *p;

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fd, &st), 0);
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert(p != MAP_FAILED);
	pages = (st.st_size + PAGE - 1) / PAGE;
	vec = malloc(pages);
	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(p, st.st_size, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	munmap(p, st.st_size);
	close(fd);
	return n * PAGE;
}

/*
 * Issue #15: memacct_build_info, the daemon's process_* self metrics against
 * its /proc/PID/stat and /proc/PID/fd, memacct_working_set_bytes against
 * memory.stat (usage - inactive_file), memacct_cgroup_info with the pod_uid
 * of a pod-like path, and no NUMA samples on a one-node host.
 */
START_TEST(test_standard_families)
{
	char rel[96], path[600], line[320], pod_job[96], *m, *p;
	long long v, usage, inactive, ws, btime = -1;
	struct result *r;
	int nodes = 0;
	pid_t d;

	/* the runner's PID first: tests/sweep.sh takes the first all-digits
	 * field as the owner (the pod UID's 5678 would be a dead one) */
	snprintf(rel, sizeof(rel), "/memacct-test-%d-pod1234abcd-5678-90ab-cdef-%012d",
		 (int)getpid(), (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	/* its job: the pod, this cgroup its own (issue 45) */
	snprintf(pod_job, sizeof(pod_job), ",memacct_job=\"k8s/1234abcd-5678-90ab-cdef-%012d\","
		 "job_root=\"true\"", (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	/* 32 MiB of page cache charged to the cgroup, written once: on the
	 * inactive list, so the working set is well below the usage */
	/* on a disk file system: a tmpfs file's pages are shmem (the vmtest
	 * guests' /tmp; their /var/tmp is on ext2) */
	snprintf(ws_file, sizeof(ws_file), "/var/tmp/memacct-ws-%d", (int)getpid());
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && dd if=/dev/zero of=%s bs=1M count=32 "
		    "2>/dev/null && sync'", cg, ws_file);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	collections_wait(2);
	/* working set: memory.stat read just after the scrape. The cgroup's
	 * charge still moves by a few dozen pages after dd left (its kernel
	 * objects freed, the LRU drained), and the scrape's collection is up
	 * to an interval older than the read: a few scrapes, until one agrees
	 * with the read that follows it (under ASan and beside the guests,
	 * 21 pages apart once) */
	for (int tries = 0;; tries++) {
		m = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(m);
		snprintf(line, sizeof(line), "memacct_working_set_bytes{cgroup=\"%s\",pod_uid=\"1234abcd-"
			 "5678-90ab-cdef-%012d\"%s}", rel, (int)getpid(), pod_job);
		ws = sample(m, line);
		working_set_read(&usage, &inactive);
		if (tries == 4 || llabs(ws - (usage > inactive ? usage - inactive : 0)) <=
				  (long long)SLACK)
			break;
		free(m);
		sleep_ms(1000);
	}
	snprintf(line, sizeof(line), "memacct_build_info{version=\"");
	ck_assert_msg(strstr(m, line), "no memacct_build_info");
	snprintf(line, sizeof(line), "memacct_cgroup_info{cgroup=\"%s\",pod_uid=\"1234abcd-5678-"
		 "90ab-cdef-%012d\"%s}", rel, (int)getpid(), pod_job);
	ck_assert_int_eq(sample(m, line), 1);
	ck_assert_msg(inactive > 8 << 20, "inactive_file %lld: the test shows nothing", inactive);
	assert_near("working_set_bytes vs memory.stat usage - inactive_file", ws,
		    usage > inactive ? usage - inactive : 0);
	/* issue 43: dd's 32 MiB by file, written in the cgroup and kept cached
	 * (nobody holds the file now): the daemon's series of it and explain
	 * --cgroup's entry from the daemon's pinned map, within 4 pages */
	{
		long long cached;
		struct stat st;
		json_t *f;

		ck_assert_int_eq(stat(ws_file, &st), 0);
		snprintf(line, sizeof(line), "memacct_page_cache_file_bytes{cgroup=\"%s\",pod_uid="
			 "\"1234abcd-5678-90ab-cdef-%012d\"%s,file=\"memacct-ws-%d\",dev=\"%u:%u\","
			 "inode=\"%llu\"}", rel, (int)getpid(), pod_job, (int)getpid(), major(st.st_dev),
			 minor(st.st_dev), (unsigned long long)st.st_ino);
		v = sample(m, line);
		cached = file_cached_bytes(ws_file);
		printf("  page cache of %s: daemon %lld, mincore %lld, written 33554432\n", ws_file,
		       v, cached);
		ck_assert_msg(llabs(v - cached) <= 4 * (long long)PAGE, "%s: %lld, mincore %lld",
			      line, v, cached);
		r = run_cmd("%s -j explain --pin-path %s --cgroup '%s'", memacct, pin_dir, cg);
		ck_assert_int_eq(r->status, 0);
		f = json_array_get(json_object_get(json_object_get(r->report, "page_cache_by_file"),
						   "files"), 0);
		ck_assert_msg(f, "explain --cgroup: no page_cache_by_file entry");
		ck_assert_int_eq(jint(f, "inode"), (long long)st.st_ino);
		ck_assert(llabs(jint(f, "bytes") - cached) <= 4 * (long long)PAGE);
		ck_assert(json_is_false(json_object_get(f, "mapped")));
		result_free(r);
	}
	/* the daemon's own process */
	{
		struct proc_stat ps;
		char *text = NULL;
		long tck = sysconf(_SC_CLK_TCK), fds = 0;
		DIR *dir;
		struct dirent *de;

		ck_assert_int_eq(read_stat(d, &ps), 0);	/* sh exec'd memacct: same pid */
		ck_assert(read_file("/proc/stat", &text, 1 << 20) > 0);
		p = strstr(text, "\nbtime ");
		ck_assert_ptr_nonnull(p);
		btime = strtoll(p + 7, NULL, 10);
		free(text);
		p = strstr(m, "\nprocess_start_time_seconds ");
		ck_assert_ptr_nonnull(p);
		p += strlen("\nprocess_start_time_seconds ");
		ck_assert_msg(fabs(strtod(p, NULL) - (btime + (double)ps.starttime_ticks / tck))
			      < 0.02, "process_start_time_seconds %.2f vs /proc: %.2f",
			      strtod(p, NULL), btime + (double)ps.starttime_ticks / tck);
		v = sample(m, "process_resident_memory_bytes");
		ck_assert_msg(v > 0 && llabs(v - (long long)ps.rss_pages * 4096) <
			      (long long)ps.rss_pages * 4096 / 4,
			      "process_resident_memory_bytes %lld vs /proc rss %llu pages", v,
			      (unsigned long long)ps.rss_pages);
		p = strstr(m, "\nprocess_cpu_seconds_total ");
		ck_assert_ptr_nonnull(p);
		p += strlen("\nprocess_cpu_seconds_total ");
		/* read before the scrape was answered: not above /proc's now,
		 * and the daemon has run for a while */
		ck_assert_msg(strtod(p, NULL) > 0 &&
			      strtod(p, NULL) <= (ps.utime_ticks + ps.stime_ticks) / (double)tck,
			      "process_cpu_seconds_total %s vs /proc %.2f", p,
			      (ps.utime_ticks + ps.stime_ticks) / (double)tck);
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)d);
		dir = opendir(path);
		ck_assert_ptr_nonnull(dir);
		while ((de = readdir(dir)))
			fds += de->d_name[0] != '.';
		closedir(dir);
		v = sample(m, "process_open_fds");
		ck_assert_msg(v > 0 && llabs(v - fds) <= 4, "process_open_fds %lld vs /proc %ld", v,
			      fds);
	}
	/* NUMA families: samples only where there are several nodes */
	{
		nodes = numa_nodes();
		if (nodes <= 1)
			ck_assert_msg(!strstr(m, "\nmemacct_remote_numa_alloc_bytes_total{") &&
				      !strstr(m, "\nmemacct_remote_numa_bytes{"),
				      "always-zero remote-NUMA samples on a one-node host");
		else
			ck_assert(strstr(m, "\nmemacct_remote_numa_alloc_bytes_total{") &&
				  strstr(m, "\nmemacct_remote_numa_bytes{"));
		/* migrations are counted on one node too (compaction) */
		ck_assert(strstr(m, "\nmemacct_numa_migrated_bytes_total{"));
	}
	free(m);
	stop_daemon(d, SIGTERM);
}
END_TEST

/* The first number of the file @dir/@name; -1 when absent or not a number ("max"). */
static long long file_num(const char *dir, const char *name)
{
	char path[700];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f && fscanf(f, "%lld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* total= of the "@kind ..." line of @dir/memory.pressure, µs; -1 when absent */
static long long psi_file_total(const char *dir, const char *kind)
{
	char path[700], line[256], *t;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.pressure", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, kind, strlen(kind)) && (t = strstr(line, " total=")))
			v = strtoll(t + 7, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The value of @name{cgroup="@rel"} in the text @m; NAN when there is no such sample. */
static double sample_cg(const char *m, const char *name, const char *rel)
{
	char want[600];
	const char *p;

	snprintf(want, sizeof(want), "\n%s{cgroup=\"%s\"} ", name, rel);
	p = strstr(m, want);
	return p ? strtod(p + strlen(want), NULL) : NAN;
}

/*
 * Issue 44: memacct_oom_eta_seconds of a cgroup of ours (256 MiB limit)
 * where anon leaks at 4.3 MiB/s: a sample with class="anon" once the
 * window spans 20 s, its time to the limit what memory.stat and the
 * workload's rate give at that scrape (within 15% and 2 s); none for the
 * unlimited root; gone once the leak is killed and its memory freed.
 */
START_TEST(test_daemon_oom_forecast)
{
	char rel[96], want[200], jlog[64], *m = NULL, *p = NULL;
	long long anon = 0, rate;
	double eta, truth_eta;
	struct result *r;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-test-forecast-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_set_memory_max(cg, 256 * MiB);
	/* limited siblings, calm: several forecasts kept from one collection
	 * to the next, and no sample for any */
	for (int i = 0; i < 3; i++) {
		snprintf(extra_cg[i], sizeof(extra_cg[i]), "%s%s-calm%d", cgroot, rel, i);
		ck_assert_int_eq(mkdir(extra_cg[i], 0755), 0);
		cg_set_memory_max(extra_cg[i], 64 * MiB);
	}
	snprintf(ws_file, sizeof(ws_file), "/tmp/memacct-test-forecast-%d.out", (int)getpid());
	snprintf(jlog, sizeof(jlog), "/tmp/memacct-test-forecast-%d.jsonl", (int)getpid());
	snprintf(want, sizeof(want), "--json-log %s", jlog);
	d = start_daemon(want);
	ck_assert(d > 0);
	held = fork();
	if (held == 0) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s/oom_leak anon 4 "
			 "512 > %s 2>&1", cg, workloads, ws_file);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	snprintf(want, sizeof(want), "\nmemacct_oom_eta_seconds{cgroup=\"%s\",class=\"", rel);
	for (int i = 0; i < 50 && !p; i++) {	/* from 20 s on; killed at ~60 s */
		sleep(1);
		free(m);
		m = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(m);
		anon = stat_key_in(cg, "memory.stat", cgversion == 1 ? "total_rss" : "anon");
		p = strstr(m, want);
	}
	ck_assert_msg(p, "no memacct_oom_eta_seconds for %s in 50 s", rel);
	p += strlen(want);
	ck_assert_msg(!strncmp(p, "anon\"} ", 6), "class %.10s, not anon", p);
	eta = strtod(p + 6, NULL);
	r = run_cmd("cat %s", ws_file);
	rate = truth(r, "rate_bytes_per_s");
	result_free(r);
	truth_eta = (double)(256 * MiB - anon) / rate;
	printf("  memacct_oom_eta_seconds %.1f; memory.stat anon %lld of 256 MiB at %lld B/s: "
	       "%.1f s\n", eta, anon, rate, truth_eta);
	ck_assert_msg(fabs(eta - truth_eta) <= truth_eta * 0.15 + 2,
		      "forecast %.1f s, memory.stat and the rate give %.1f s", eta, truth_eta);
	/* the JSON log's last collection: the same forecast, null for the
	 * calm siblings */
	r = run_cmd("tail -n 1 %s", jlog);
	{
		json_t *line = json_loads(r->out, 0, NULL), *c, *fc;
		size_t i, calm = 0;
		bool seen = false;

		ck_assert_msg(line, "the JSON log's last line is not JSON: %s", r->out);
		json_array_foreach(json_object_get(line, "cgroups"), i, c) {
			const char *cgp = json_string_value(json_object_get(c, "cgroup"));

			fc = json_object_get(c, "oom_forecast");
			ck_assert_msg(fc, "no oom_forecast key for %s", cgp);
			if (cgp && !strcmp(cgp, rel)) {
				seen = true;
				ck_assert_msg(json_is_object(fc), "no forecast in the JSON log");
				ck_assert_str_eq(json_string_value(json_object_get(fc,
							"growing_class")), "anon");
				ck_assert_msg(fabs(json_number_value(json_object_get(fc, "eta_s")) -
						   truth_eta) <= truth_eta * 0.15 + 4,
					      "JSON log eta_s %g", json_number_value(
						      json_object_get(fc, "eta_s")));
			} else if (cgp && !strncmp(cgp, rel, strlen(rel))) {
				calm++;
				ck_assert_msg(json_is_null(fc), "a forecast for calm %s", cgp);
			}
		}
		ck_assert_msg(seen && calm == 3, "JSON log: %s seen %d, %zu calm siblings", rel,
			      seen, calm);
		json_decref(line);
	}
	result_free(r);
	unlink(jlog);
	ck_assert_msg(!strstr(m, "\nmemacct_oom_eta_seconds{cgroup=\"/\""),
		      "a forecast for the unlimited root");
	snprintf(want, sizeof(want), "\nmemacct_oom_eta_seconds{cgroup=\"%s-calm", rel);
	ck_assert_msg(!strstr(m, want), "a forecast for a calm cgroup");
	snprintf(want, sizeof(want), "\nmemacct_oom_eta_seconds{cgroup=\"%s\",class=\"", rel);
	ck_assert_msg(kill(d, 0) == 0, "the daemon is gone");
	free(m);
	kill(held, SIGKILL);
	waitpid(held, NULL, 0);
	held = 0;
	collections_wait(3);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strstr(m, want), "a forecast once the leak was killed");
	free(m);
}
END_TEST

/*
 * Issue #25 part 3: the families an SRE alerts on against the kernel's own
 * files, read here: a cgroup of ours with a 64 MiB limit (v2: memory.high
 * 96 MiB too, above the limit so that it never throttles the workloads), a
 * child of it without a limit of its own, a zero_fill workload of known
 * truth, then an OOM kill in it. Absent where the kernel gives no figure:
 * the unlimited child's and the root's limit, memory.high and PSI on v1.
 */
START_TEST(test_limit_families)
{
	const char *peak_f = cgversion == 1 ? "memory.max_usage_in_bytes" : "memory.peak";
	const char *limit_f = cgversion == 1 ? "memory.limit_in_bytes" : "memory.max";
	char rel[96], crel[128], *m;
	long long zf, some0 = -1, full0 = -1, want;
	struct result *r;
	double v;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-test-limits-%d", (int)getpid());
	snprintf(crel, sizeof(crel), "%s/unlimited", rel);
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_set_memory_max(cg, 64 * MiB);
	snprintf(extra_cg[0], sizeof(extra_cg[0]), "%s%s", cgroot, crel);
	ck_assert_int_eq(mkdir(extra_cg[0], 0755), 0);
	if (cgversion == 2) {
		r = run_cmd("echo %llu > %s/memory.high", 96 * MiB, cg);
		ck_assert_int_eq(r->status, 0);
		result_free(r);
	}
	d = start_daemon(NULL);
	ck_assert(d > 0);

	/* zero fills: the workload's truth (pagemap), the counter of its cgroup */
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/zero_fill 32'", cg, workloads);
	ck_assert_int_eq(r->status, 0);
	zf = truth(r, "zero_fill_bytes");
	result_free(r);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	v = sample_cg(m, "memacct_zero_fill_bytes_total", rel);
	ck_assert_msg(!isnan(v), "no memacct_zero_fill_bytes_total for %s", rel);
	assert_near("memacct_zero_fill_bytes_total vs zero_fill's pagemap truth", (long long)v, zf);
	ck_assert(sample_cg(m, "memacct_zero_fill_bytes_total", "/") >= v);
	free(m);

	/* an OOM kill in it: 128 MiB written under the 64 MiB limit, no swap */
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/oom 128' 2>/dev/null", cg,
		    workloads);
	ck_assert_msg(r->status != 0, "oom 128 was not killed: %d", r->status);
	result_free(r);
	ck_assert_int_ge(stat_key_in(cg, cgversion == 1 ? "memory.oom_control" : "memory.events",
				     "oom_kill"), 1);
	if (cgversion == 2) {
		some0 = psi_file_total(cg, "some");
		full0 = psi_file_total(cg, "full");
	}
	collections_wait(2);	/* two collections since the reads above */
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);

	want = file_num(cg, limit_f);
	ck_assert_int_eq(want, 64 * MiB);
	v = sample_cg(m, "memacct_memory_limit_bytes", rel);
	printf("  limit: memacct %.0f, %s %lld\n", v, limit_f, want);
	ck_assert_msg(v == want, "memacct_memory_limit_bytes %.0f vs %s %lld", v, limit_f, want);
	ck_assert_msg(isnan(sample_cg(m, "memacct_memory_limit_bytes", crel)),
		      "a limit sample for %s, which has none", crel);
	ck_assert_msg(isnan(sample_cg(m, "memacct_memory_limit_bytes", "/")),
		      "a limit sample for the unlimited root");

	want = file_num(cg, peak_f);	/* nothing runs there now: stable */
	v = sample_cg(m, "memacct_memory_peak_bytes", rel);
	printf("  peak: memacct %.0f, %s %lld\n", v, peak_f, want);
	if (want < 0) {
		ck_assert_msg(isnan(v), "a peak sample without %s", peak_f);
	} else {
		ck_assert_msg(v == want, "memacct_memory_peak_bytes %.0f vs %s %lld", v, peak_f,
			      want);
		ck_assert_msg(want > (long long)(48 * MiB) && want <= (long long)(64 * MiB), "%s %lld: the OOM workload "
			      "did not reach the limit", peak_f, want);
	}

	want = stat_key_in(cg, cgversion == 1 ? "memory.oom_control" : "memory.events",
			   "oom_kill");
	v = sample_cg(m, "memacct_oom_kills_total", rel);
	printf("  oom kills: memacct %.0f, oom_kill %lld\n", v, want);
	ck_assert_msg(v == want, "memacct_oom_kills_total %.0f vs oom_kill %lld", v, want);

	if (cgversion == 1) {
		ck_assert_msg(isnan(sample_cg(m, "memacct_memory_high_bytes", rel)) &&
			      isnan(sample_cg(m, "memacct_memory_pressure_waiting_seconds_total", rel)) &&
			      isnan(sample_cg(m, "memacct_memory_pressure_stalled_seconds_total", rel)),
			      "memory.high or PSI samples on cgroup v1, which has neither");
	} else {
		want = file_num(cg, "memory.high");
		v = sample_cg(m, "memacct_memory_high_bytes", rel);
		ck_assert_int_eq(want, 96 * MiB);
		ck_assert_msg(v == want, "memacct_memory_high_bytes %.0f vs memory.high %lld", v,
			      want);
		ck_assert_msg(isnan(sample_cg(m, "memacct_memory_high_bytes", crel)),
			      "a memory.high sample for %s (max)", crel);
		for (int k = 0; k < 2; k++) {
			const char *kind = k ? "full" : "some";
			const char *fam = k ? "memacct_memory_pressure_stalled_seconds_total" :
					      "memacct_memory_pressure_waiting_seconds_total";
			long long before = k ? full0 : some0, after = psi_file_total(cg, kind);

			v = sample_cg(m, fam, rel);
			printf("  PSI %s: memacct %.6f s, memory.pressure total= %lld..%lld us\n",
			       kind, v, before, after);
			if (before < 0) {	/* PSI off on this kernel */
				ck_assert_msg(isnan(v), "%s without memory.pressure", fam);
				continue;
			}
			ck_assert_msg(v * 1e6 >= before - 1 && v * 1e6 <= after + 1,
				      "%s %.6f s outside memory.pressure's %lld..%lld us", fam, v,
				      before, after);
		}
	}
	free(m);
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * GET @path_and_query from the Prometheus of test_prometheus_no_reset (port
 * @pport): the JSON body, or NULL.
 */
/* http_get() of loopback port @p instead of the daemon's */
static char *http_get_at(int p, const char *path)
{
	int daemon_port = port;
	char *body;

	port = p;
	body = http_get(path, NULL);
	port = daemon_port;
	return body;
}

/*
 * @argv (argv[0] looked up in PATH) started with its stderr to @log and
 * its stdout to /dev/null, killed when this runner dies: its pid.
 */
static pid_t spawn_logged(const char *log, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!freopen(log, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	ck_assert(pid > 0);
	return pid;
}

static json_t *prom_get(int pport, const char *path_and_query)
{
	char *body = http_get_at(pport, path_and_query);
	json_error_t e;
	json_t *j;

	if (!body)
		return NULL;
	j = json_loads(body, 0, &e);
	free(body);
	return j;
}

/* An instant PromQL query (@q URL-encoded): the value of its one sample, or
 * -1 when the result is empty; fails on an error. */
static double prom_value(int pport, const char *q)
{
	char url[1024];
	json_t *j, *res;
	double v = -1;

	snprintf(url, sizeof(url), "/api/v1/query?query=%s", q);
	j = prom_get(pport, url);
	ck_assert_msg(j && !strcmp(json_string_value(json_object_get(j, "status")) ?: "",
				   "success"), "Prometheus query %s failed", q);
	res = json_object_get(json_object_get(j, "data"), "result");
	ck_assert_msg(json_array_size(res) <= 1, "%s: %zu samples", q, json_array_size(res));
	if (json_array_size(res))
		v = strtod(json_string_value(json_array_get(json_object_get(
				   json_array_get(res, 0), "value"), 1)) ?: "-1", NULL);
	json_decref(j);
	return v;
}

/*
 * Debian's prometheus on loopback port @pport, its config and TSDB in
 * prom_dir (teardown() removes them and kills prom_pid), scraping the
 * daemon on `port` every second, and evaluating rules every second; @top
 * (top-level YAML: rule_files) and @jobs (more scrape_configs items) are
 * added when not NULL. Returns once it has scraped the daemon.
 */
static void start_prometheus(int pport, const char *top, const char *jobs)
{
	struct result *r = run_cmd("command -v prometheus");
	char path[128];
	FILE *f;

	if (r->status) {
		result_free(r);
		ck_abort_msg("prometheus missing: make deps installs Debian's prometheus package");
	}
	result_free(r);
	snprintf(prom_dir, sizeof(prom_dir), "/tmp/memacct-prom-%d", (int)getpid());
	ck_assert_int_eq(mkdir(prom_dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/prometheus.yml", prom_dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		"  evaluation_interval: 1s\n%s"
		"scrape_configs:\n  - job_name: memacct\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%d']\n%s", top ? top : "", port, jobs ? jobs : "");
	ck_assert_int_eq(fclose(f), 0);
	{
		char cfg[160], tsdb[160], listen[64];
		char *argv[] = { "prometheus", cfg, tsdb, listen, "--log.level=warn", NULL };

		snprintf(cfg, sizeof(cfg), "--config.file=%s", path);
		snprintf(tsdb, sizeof(tsdb), "--storage.tsdb.path=%s/data", prom_dir);
		snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
		prom_pid = spawn_logged("/tmp/memacct-prometheus-test.log", argv);
	}
	for (int i = 0;; i++) {	/* ready, and scraped the daemon once */
		ck_assert_msg(i < 120, "Prometheus did not scrape the daemon in 30 s "
			      "(see /tmp/memacct-prometheus-test.log)");
		json_t *j = prom_get(pport, "/api/v1/query?query=up");
		json_t *res = json_object_get(json_object_get(j, "data"), "result");
		const char *up = json_string_value(json_array_get(json_object_get(
						json_array_get(res, 0), "value"), 1));
		bool scraped = up && !strcmp(up, "1");

		json_decref(j);
		if (scraped)
			break;
		sleep_ms(250);
	}
}

/* @in percent-encoded for a URL query value into @out (@n bytes) */
static void url_encode(char *out, size_t n, const char *in)
{
	size_t o = 0;

	for (; *in && o + 4 < n; in++) {
		unsigned char c = (unsigned char)*in;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '.' || c == '-')
			out[o++] = (char)c;
		else
			o += snprintf(out + o, n - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/* @expr with every "$@var" replaced by @val, into @out (@n bytes) */
static void dash_subst(char *out, size_t n, const char *expr, const char *var, const char *val)
{
	size_t o = 0, vl = strlen(var);

	while (*expr && o + 1 < n) {
		if (*expr == '$' && !strncmp(expr + 1, var, vl)) {
			o += snprintf(out + o, n - o, "%s", val);
			expr += vl + 1;
		} else {
			out[o++] = *expr++;
		}
	}
	out[o < n ? o : n - 1] = '\0';
}

/*
 * The result of instant query @expr on the Prometheus at @pport (new
 * reference, an array); fails the test when the query fails.
 */
static json_t *prom_result(int pport, const char *what, const char *expr)
{
	char enc[3072], url[3200];
	json_t *reply, *res;

	url_encode(enc, sizeof(enc), expr);
	snprintf(url, sizeof(url), "/api/v1/query?query=%s", enc);
	reply = prom_get(pport, url);
	ck_assert_msg(reply && !strcmp(json_string_value(json_object_get(reply, "status")) ?: "",
				       "success"), "%s: query %s failed", what, expr);
	res = json_incref(json_object_get(json_object_get(reply, "data"), "result"));
	json_decref(reply);
	return res;
}

/* how many distinct values of label @name the series of @res have; @only: each must be it */
static int distinct_label(json_t *res, const char *name, const char *only, const char *what)
{
	const char *seen[8];
	int n = 0;
	size_t i;
	json_t *s;

	json_array_foreach(res, i, s) {
		const char *v = json_string_value(json_object_get(json_object_get(s, "metric"), name));
		int k;

		ck_assert_msg(!only || (v && !strcmp(v, only)), "%s: a series of %s=%s, not %s", what,
			      name, v ?: "(none)", only);
		for (k = 0; k < n && strcmp(seen[k], v ?: ""); k++)
			;
		if (k == n && n < 8)
			seen[n++] = v ?: "";
	}
	return n;
}

/*
 * Issue #15, #25: every query of docs/deploy/grafana-dashboard.json
 * evaluated by a real Prometheus scraping two daemons (two ports, two
 * kernel sides: two instances, as two nodes would be; the first with
 * --bpf-stats, so that every target can have data), with a cgroup of ours
 * that has a memory limit (and memory.high on v2). $instance = ".*",
 * $cgroup = ".*": each query succeeds and returns series of both instances,
 * but where a panel's description says why it may be empty (remote NUMA on
 * one node; memory.high and PSI on cgroup v1). $instance = the first one:
 * only its series. The variables' own queries (label_values) as Grafana
 * asks them. Before: "Anon / file / shmem" and "Collection CPU / wall"
 * returned one family of their two or three (`or` drops series with the
 * same labels), "Page faults (major dashed)" queried no major faults.
 */
START_TEST(test_dashboard_queries)
{
	char path[PATH_MAX], expr[2048], e1[1024], rel[96], inst[2][32], jobs[256];
	char pin1[sizeof(pin_dir)], pc_file[64];
	int pport = free_port(), queries = 0, empty = 0, nodes = 0, port1;
	json_t *dash, *panel, *target, *res, *var;
	json_error_t err;
	size_t i, j;
	pid_t d, d2;

	nodes = numa_nodes();
	snprintf(path, sizeof(path), "%s/../docs/deploy/grafana-dashboard.json", testsdir);
	dash = json_load_file(path, 0, &err);
	ck_assert_msg(dash, "%s: %s", path, err.text);
	/* a systemd unit's name: a job of its own (memacct_job, the $job variable) */
	snprintf(rel, sizeof(rel), "/memacct-test-dash-%d-job.service", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_set_memory_max(cg, 256 * MiB);
	if (cgversion == 2) {
		struct result *r = run_cmd("echo %llu > %s/memory.high", 192 * MiB, cg);

		ck_assert_int_eq(r->status, 0);
		result_free(r);
	}
	d = start_daemon("--bpf-stats");
	ck_assert(d > 0);
	/* the second node: its own port and kernel side (detach_all() removes it) */
	port1 = port;
	snprintf(pin1, sizeof(pin1), "%s", pin_dir);
	port = free_port();
	snprintf(pin_dir, sizeof(pin_dir), "%.100s-second", pin1);
	d2 = start_daemon(NULL);
	snprintf(inst[1], sizeof(inst[1]), "127.0.0.1:%d", port);
	snprintf(pin_dir, sizeof(pin_dir), "%s", pin1);
	snprintf(jobs, sizeof(jobs), "  - job_name: memacct-second\n    static_configs:\n"
		 "      - targets: ['%s']\n", inst[1]);
	port = port1;
	ck_assert(d2 > 0);
	snprintf(inst[0], sizeof(inst[0]), "127.0.0.1:%d", port);
	/* page cache of a file on a disk file system charged to our cgroup
	 * once both daemons run: "Page cache by file" then has series of
	 * both (a guest's other files are on tmpfs, or were cached before) */
	snprintf(pc_file, sizeof(pc_file), "/var/tmp/memacct-dash-%d", (int)getpid());
	{
		struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && dd if=/dev/zero "
					   "of=%s bs=1M count=4 2>/dev/null'", cg, pc_file);

		ck_assert_int_eq(r->status, 0);
		result_free(r);
	}
	start_prometheus(pport, NULL, jobs);
	sleep_ms(4000);	/* rate() needs two samples in its window */

	/* the variables, as Grafana asks them: label_values(SELECTOR, LABEL) */
	json_array_foreach(json_object_get(json_object_get(dash, "templating"), "list"), i, var) {
		const char *q = json_string_value(json_object_get(var, "query"));
		const char *name = json_string_value(json_object_get(var, "name"));
		char sel[512], label[64], *comma;

		if (!q || strncmp(q, "label_values(", 13))
			continue;
		snprintf(sel, sizeof(sel), "%s", q + 13);
		comma = strrchr(sel, ',');
		ck_assert_ptr_nonnull(comma);
		*comma = '\0';
		snprintf(label, sizeof(label), "%s", comma + 1 + strspn(comma + 1, " "));
		label[strcspn(label, ")")] = '\0';
		dash_subst(e1, sizeof(e1), sel, "instance", inst[0]);
		snprintf(expr, sizeof(expr), "count by (%s) (%s)", label, e1);
		res = prom_result(pport, name, expr);
		printf("  variable %-8s %3zu values  %s\n", name, json_array_size(res), q);
		if (!strcmp(name, "instance")) {
			ck_assert_int_eq(distinct_label(res, "instance", NULL, name), 2);
		} else if (!strcmp(name, "job")) {
			bool ours = false;
			json_t *s;
			char want[128];

			snprintf(want, sizeof(want), "systemd%s", rel);
			json_array_foreach(res, j, s)
				ours |= !strcmp(json_string_value(json_object_get(json_object_get(s,
						"metric"), "memacct_job")) ?: "", want);
			ck_assert_msg(ours, "$job of %s lacks %s", inst[0], want);
		} else {
			bool ours = false;
			json_t *s;

			json_array_foreach(res, j, s)
				ours |= !strcmp(json_string_value(json_object_get(json_object_get(s,
						"metric"), "cgroup")) ?: "", rel);
			ck_assert_msg(ours, "$cgroup of %s lacks %s", inst[0], rel);
		}
		json_decref(res);
	}

	json_array_foreach(json_object_get(dash, "panels"), i, panel) {
		const char *title = json_string_value(json_object_get(panel, "title"));
		const char *desc = json_string_value(json_object_get(panel, "description"));

		ck_assert_msg(desc && *desc, "panel '%s' has no description", title);
		json_array_foreach(json_object_get(panel, "targets"), j, target) {
			const char *e = json_string_value(json_object_get(target, "expr"));
			bool may_be_empty;
			int ninst;
			size_t n;

			ck_assert_ptr_nonnull(e);
			/* Grafana's "All": .* */
			dash_subst(expr, sizeof(expr), e, "job", ".*");
			dash_subst(e1, sizeof(e1), expr, "cgroup", ".*");
			dash_subst(expr, sizeof(expr), e1, "instance", ".*");
			res = prom_result(pport, title, expr);
			n = json_array_size(res);
			ninst = distinct_label(res, "instance", NULL, title);
			printf("  %-52.52s %-3s %3zu series %d inst.  %s\n", title,
			       json_string_value(json_object_get(target, "refId")), n, ninst, expr);
			queries++;
			/* empty by design, as the panel's description says */
			may_be_empty = (nodes <= 1 && strstr(expr, "remote_numa")) ||
				       (cgversion == 1 && (strstr(expr, "memory_high") ||
							   strstr(expr, "memory_pressure")));
			if (!n && may_be_empty) {
				empty++;
				ck_assert_msg(strstr(desc, "mpty"), "panel '%s' can be empty and does "
					      "not say why", title);
			} else {
				ck_assert_msg(n > 0, "panel '%s': %s returns no series", title, expr);
				/* bpf_stats: maybe seen by the daemon that turned them on only */
				ck_assert_msg(ninst == 2 || strstr(expr, "memacct_bpf_"),
					      "panel '%s': %s: series of %d instances, not 2", title,
					      expr, ninst);
			}
			json_decref(res);
			/* one node chosen: its series only */
			dash_subst(expr, sizeof(expr), e1, "instance", inst[0]);
			res = prom_result(pport, title, expr);
			distinct_label(res, "instance", inst[0], title);
			ck_assert_msg(json_array_size(res) > 0 || may_be_empty ||
				      strstr(expr, "memacct_bpf_"), "panel '%s': %s: nothing for %s",
				      title, expr, inst[0]);
			json_decref(res);
		}
	}
	printf("  dashboard: %d queries evaluated by Prometheus over 2 instances, %d empty by "
	       "design (%d NUMA node%s, cgroup v%d)\n", queries, empty, nodes, nodes == 1 ? "" : "s",
	       cgversion);
	ck_assert_int_ge(queries, 25);
	json_decref(dash);
	unlink(pc_file);
	stop_daemon(d2, SIGTERM);
	stop_daemon(d, SIGTERM);
}
END_TEST

/* the one value of instant query @q (URL-encoded here), and its labels in *@labels (new ref) */
static double prom_one(int pport, const char *q, json_t **labels)
{
	char enc[2048], url[2200];
	json_t *j, *res;
	double v = -1;

	url_encode(enc, sizeof(enc), q);
	snprintf(url, sizeof(url), "/api/v1/query?query=%s", enc);
	j = prom_get(pport, url);
	ck_assert_msg(j && !strcmp(json_string_value(json_object_get(j, "status")) ?: "",
				   "success"), "Prometheus query %s failed", q);
	res = json_object_get(json_object_get(j, "data"), "result");
	ck_assert_msg(json_array_size(res) <= 1, "%s: %zu series", q, json_array_size(res));
	*labels = NULL;
	if (json_array_size(res)) {
		v = strtod(json_string_value(json_array_get(json_object_get(
				   json_array_get(res, 0), "value"), 1)) ?: "-1", NULL);
		*labels = json_incref(json_object_get(json_array_get(res, 0), "metric"));
	}
	json_decref(j);
	return v;
}

/*
 * #15: Kubernetes names without the CRI socket: docs/deploy/memacct-
 * kubernetes.rules.yml evaluated by a real Prometheus that scrapes the daemon
 * and kube-state-metrics series (tests/data/kube_state_metrics.prom, served
 * over HTTP). A container cgroup laid out as the kubelet's systemd driver
 * does (kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope) gets
 * namespace, pod and container; the documented join gives its usage bytes
 * those names, equal to the daemon's own series.
 */
START_TEST(test_kube_names)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char top[128], pod[256], ctr[256], rel[256], ksm_dir[96];
	char topyml[PATH_MAX + 64], jobs[256], q[1400];
	int pport = free_port(), kport = free_port();
	json_t *l;
	struct result *r;
	double usage, named;
	pid_t d;

	ck_assert_int_lt(snprintf(top, sizeof(top), "%s/memacct-kube-%d", cgroot, (int)getpid()),
			 (int)sizeof(top));
	ck_assert_int_lt(snprintf(pod, sizeof(pod), "%s/kubepods-burstable-pod1234abcd_5678_90ab_"
				  "cdef_00000000beef.slice", top), (int)sizeof(pod));
	ck_assert_int_lt(snprintf(ctr, sizeof(ctr), "%s/cri-containerd-%s.scope", pod, id),
			 (int)sizeof(ctr));
	memcpy(rel, ctr + strlen(cgroot), strlen(ctr + strlen(cgroot)) + 1);
	/* teardown() removes extra_cg[] in order: children first */
	ck_assert_int_eq(mkdir(top, 0755), 0);
	memcpy(extra_cg[2], top, strlen(top) + 1);
	cg_enable_memory(top);	/* v2: else no memory.stat below, no usage series */
	ck_assert_int_eq(mkdir(pod, 0755), 0);
	memcpy(extra_cg[1], pod, strlen(pod) + 1);
	cg_enable_memory(pod);
	ck_assert_int_eq(mkdir(ctr, 0755), 0);
	memcpy(extra_cg[0], ctr, strlen(ctr) + 1);
	held = fork();
	if (held == 0) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec sleep 60", ctr);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* kube-state-metrics: the recorded series on /metrics */
	snprintf(ksm_dir, sizeof(ksm_dir), "/tmp/memacct-ksm-%d", (int)getpid());
	r = run_cmd("mkdir -p %s && cp %s/data/kube_state_metrics.prom %s/metrics", ksm_dir,
		    testsdir, ksm_dir);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
	ksm_pid = fork();
	if (ksm_pid == 0) {
		char p[32];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(p, sizeof(p), "%d", kport);
		if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		/* busybox's httpd where there is no Python (the vmtest guests) */
		if (!access("/usr/bin/python3", X_OK))
			execl("/usr/bin/python3", "python3", "-m", "http.server", "--bind",
			      "127.0.0.1", "--directory", ksm_dir, p, (char *)NULL);
		snprintf(p, sizeof(p), "127.0.0.1:%d", kport);
		execlp("busybox", "busybox", "httpd", "-f", "-p", p, "-h", ksm_dir, (char *)NULL);
		_exit(127);
	}
	d = start_daemon(NULL);
	ck_assert(d > 0);
	snprintf(topyml, sizeof(topyml), "rule_files:\n  - %s/../docs/deploy/memacct-kubernetes."
		 "rules.yml\n", testsdir);
	snprintf(jobs, sizeof(jobs), "  - job_name: kube-state-metrics\n    static_configs:\n"
		 "      - targets: ['127.0.0.1:%d']\n", kport);
	start_prometheus(pport, topyml, jobs);
	for (int i = 0; i < 240; i++) {	/* KSM scraped and the rules evaluated (60 s: TCG) */
		snprintf(q, sizeof(q), "memacct:cgroup_container:info{cgroup=\"%s\"}", rel);
		if (prom_one(pport, q, &l) == 1)
			break;
		sleep_ms(250);
	}
	if (!l) {
		json_t *up = prom_get(pport, "/api/v1/query?query=up");
		char *txt = up ? json_dumps(up, JSON_COMPACT) : NULL;

		ck_abort_msg("no memacct:cgroup_container:info of %s in 60 s; up: %s (see "
			     "/tmp/memacct-prometheus-test.log)", rel, txt ? txt : "?");
	}
	printf("  %s: namespace %s pod %s container %s\n", rel,
	       json_string_value(json_object_get(l, "namespace")),
	       json_string_value(json_object_get(l, "pod")),
	       json_string_value(json_object_get(l, "container")));
	ck_assert_str_eq(json_string_value(json_object_get(l, "namespace")) ?: "", "ml");
	ck_assert_str_eq(json_string_value(json_object_get(l, "pod")) ?: "", "trainer-0");
	ck_assert_str_eq(json_string_value(json_object_get(l, "container")) ?: "", "pytorch");
	json_decref(l);
	/* the pod's own cgroup: names, no container */
	snprintf(q, sizeof(q), "memacct:cgroup_pod:info{cgroup=\"%s\"}", pod + strlen(cgroot));
	ck_assert(prom_one(pport, q, &l) == 1 && l);
	ck_assert_str_eq(json_string_value(json_object_get(l, "pod")) ?: "", "trainer-0");
	json_decref(l);
	/* the rules' documented join: usage bytes under their names */
	snprintf(q, sizeof(q), "memacct_usage_bytes{cgroup=\"%s\"} * on (instance, cgroup) "
		 "group_left (namespace, pod, container) memacct:cgroup_container:info", rel);
	named = prom_one(pport, q, &l);
	ck_assert_ptr_nonnull(l);
	ck_assert_str_eq(json_string_value(json_object_get(l, "container")) ?: "", "pytorch");
	json_decref(l);
	snprintf(q, sizeof(q), "memacct_usage_bytes{cgroup=\"%s\"}", rel);
	usage = prom_one(pport, q, &l);
	json_decref(l);
	printf("  memacct_usage_bytes of container pytorch (ml/trainer-0): %.0f, unnamed %.0f\n",
	       named, usage);
	ck_assert(usage > 0 && named == usage);
	stop_daemon(d, SIGTERM);
	r = run_cmd("kill -9 $(cat %s/cgroup.procs) 2>/dev/null; rm -rf %s; true", ctr, ksm_dir);
	result_free(r);
	waitpid(held, NULL, 0);
	held = 0;
}
END_TEST

/*
 * Debian's Alertmanager on loopback port @amport (config and storage in
 * prom_dir: start_prometheus() first), no cluster, delivering every alert
 * group at once (1 s) to the webhook http://127.0.0.1:@hookport/.
 */
static void start_alertmanager(int amport, int hookport)
{
	char path[160], store[160], cfg[200], listen[64];
	char *argv[] = { "/usr/bin/prometheus-alertmanager", cfg, store, listen,
			 "--cluster.listen-address=", "--log.level=info", NULL };
	FILE *f;

	ck_assert_msg(!access("/usr/bin/prometheus-alertmanager", X_OK),
		      "prometheus-alertmanager missing: make deps installs Debian's package");
	snprintf(path, sizeof(path), "%s/alertmanager.yml", prom_dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "route:\n  receiver: hook\n  group_by: [memacct_job]\n  group_wait: 1s\n"
		"  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n  - name: hook\n"
		"    webhook_configs:\n      - url: http://127.0.0.1:%d/\n"
		"        send_resolved: false\n", hookport);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cfg, sizeof(cfg), "--config.file=%s", path);
	snprintf(store, sizeof(store), "--storage.path=%s/am", prom_dir);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", amport);
	am_pid = spawn_logged("/tmp/memacct-alertmanager-test.log", argv);
	/* ready before an alert fires: Prometheus drops a notification it
	 * cannot deliver and sends the alert again a minute later (its
	 * --rules.alert.resend-delay), past the test's wait in a TCG guest */
	for (int i = 0;; i++) {
		char *b = http_get_at(amport, "/-/ready");
		bool ready = b != NULL;

		free(b);
		if (ready)
			break;
		if (i == 240) {
			struct result *r = run_cmd("tail -n 20 /tmp/memacct-alertmanager-test.log");

			printf("  /tmp/memacct-alertmanager-test.log ends:\n%s", r->out);
			result_free(r);
			ck_abort_msg("Alertmanager not ready in 60 s");
		}
		sleep_ms(250);
	}
}

/* a listening socket on a free loopback port (*@p): the test's webhook */
static int hook_listen(int *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*p = ntohs(a.sin_port);
	return fd;
}

/* The JSON body of the next POST to the webhook @fd within @ms (200 sent
 * back), or NULL. */
static json_t *hook_next(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	char buf[65536], *body;
	size_t n = 0;
	long clen = -1;
	json_t *j;
	int c;

	if (poll(&pfd, 1, ms) != 1)
		return NULL;
	c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return NULL;
	for (;;) {	/* the headers, then Content-Length bytes of body */
		struct pollfd cp = { .fd = c, .events = POLLIN };
		ssize_t r;

		if (n + 1 >= sizeof(buf) || poll(&cp, 1, 5000) != 1)
			break;
		r = read(c, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += r;
		buf[n] = '\0';
		body = strstr(buf, "\r\n\r\n");
		if (body && clen < 0) {
			const char *h = strcasestr(buf, "\r\nContent-Length:");

			clen = h ? strtol(h + 17, NULL, 10) : 0;
		}
		if (body && (long)(n - (body + 4 - buf)) >= clen)
			break;
	}
	/* lost: Alertmanager retries, the next call reads it again */
	(void)!write(c, ok, sizeof(ok) - 1);
	close(c);
	body = strstr(buf, "\r\n\r\n");
	j = body ? json_loads(body + 4, 0, NULL) : NULL;
	return j;
}

/* The labels of the first alert named @name of job @job in webhook payload @j, or NULL. */
static json_t *hook_alert(json_t *j, const char *name, const char *job)
{
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(j, "alerts"), i, a) {
		json_t *l = json_object_get(a, "labels");

		if (!strcmp(json_string_value(json_object_get(l, "alertname")) ?: "", name) &&
		    !strcmp(json_string_value(json_object_get(l, "memacct_job")) ?: "", job))
			return l;
	}
	return NULL;
}

/* `sh -c @sh` started, its stdout read until a line starting with @ready
 * (NULL: not read): its pid, *@out the pipe's end */
static pid_t spawn_ready(const char *sh, const char *ready, FILE **out)
{
	char line[256];
	int fd[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	*out = fdopen(fd[0], "r");
	ck_assert_ptr_nonnull(*out);
	while (ready && fgets(line, sizeof(line), *out))
		if (!strncmp(line, ready, strlen(ready)))
			return pid;
	ck_assert_msg(!ready, "%s: no '%s' line", sh, ready);
	return pid;
}

/* `memacct run --job @job ARGS -- @cmd` (spawn_ready()): the run's pid */
static pid_t job_run(const char *job, const char *args, const char *cmd, const char *ready,
		     FILE **out)
{
	char sh[3 * PATH_MAX];

	snprintf(sh, sizeof(sh), "exec %s run --job %s %s -- %s", memacct, job, args, cmd);
	return spawn_ready(sh, ready, out);
}

/*
 * memacct_job:usage_bytes:sum of job @mjob once the rules see its @ncg job
 * cgroups and three evaluations in a row agree within 0.1% (up to 60 s):
 * the last value, -1 if none.
 */
static double job_total_settled(int pport, const char *mjob, int ncg)
{
	char q[256], qn[256];
	double total = -1;
	json_t *l;

	snprintf(q, sizeof(q), "memacct_job:usage_bytes:sum{memacct_job=\"%s\"}", mjob);
	snprintf(qn, sizeof(qn), "count(memacct_usage_bytes{memacct_job=\"%s\",job_root=\"true\"})",
		 mjob);
	for (int i = 0, same = 0; i < 120 && same < 3; i++) {
		double v = prom_one(pport, q, &l), n;

		json_decref(l);
		n = prom_one(pport, qn, &l);
		json_decref(l);
		same = n == ncg && v > 0 && fabs(v - total) <= v / 1000 ? same + 1 : 0;
		total = v;
		sleep_ms(500);
	}
	return total;
}

/* the charge of the cgroup directory @dir: memory.current / usage_in_bytes */
static long long cg_usage(const char *dir)
{
	char f[PATH_MAX + 32];
	long long v = -1;
	FILE *fp;

	snprintf(f, sizeof(f), "%s/%s", dir, cgversion == 1 ? "memory.usage_in_bytes" :
		 "memory.current");
	fp = fopen(f, "r");
	ck_assert_msg(fp, "%s: %s", f, strerror(errno));
	ck_assert_int_eq(fscanf(fp, "%lld", &v), 1);
	fclose(fp);
	return v;
}

/*
 * Issue #45: one job in several cgroups, counted once by docs/deploy/
 * memacct-jobs.rules.yml in a real Prometheus that scrapes the daemon. Two
 * `memacct run --job` of one name (the part of the job each node runs; the
 * nodes themselves are not here) each run explain_fork 64 MiB with 4
 * workers: a heap written, forked and shared copy-on-write, so that Σ RSS
 * counts it 5 times. The job's total from the rules equals Σ of the two run
 * cgroups' charge read from their own files within 1%; Σ RSS is printed
 * beside it and is at least twice as large. A third run of the job,
 * OOM-killed under --memory-max, fires MemacctJobOomKill for the job, which
 * Alertmanager (Debian's, on loopback) delivers to the test's webhook with
 * the post-mortem's cause (anon) among its labels.
 */
START_TEST(test_job_rules)
{
	char job[64], mjob[80], cg1[PATH_MAX], cg2[PATH_MAX], top[PATH_MAX + 64];
	char q[512], cmd[PATH_MAX + 64];
	long long u1, u2, want;
	double total, rss, t2;
	int pport = free_port(), amport = free_port(), hport, hook;
	bool delivered = false;
	char cause[16] = "";
	pid_t d, r1, r2, r3;
	FILE *o1, *o2, *o3;
	json_t *l = NULL;

	snprintf(job, sizeof(job), "jr-%d", (int)getpid());
	snprintf(mjob, sizeof(mjob), "run/%s", job);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	hook = hook_listen(&hport);
	snprintf(top, sizeof(top), "rule_files:\n  - %s/../docs/deploy/memacct-jobs.rules.yml\n"
		 "alerting:\n  alertmanagers:\n    - static_configs:\n"
		 "        - targets: ['127.0.0.1:%d']\n", testsdir, amport);
	start_prometheus(pport, top, NULL);
	start_alertmanager(amport, hport);
	snprintf(cmd, sizeof(cmd), "%s/explain_fork 64 4 --seconds 60", workloads);
	r1 = job_run(job, "", cmd, "ready", &o1);
	r2 = job_run(job, "", cmd, "ready", &o2);
	ck_assert_int_eq(run_cgroup_find(r1, cg1, sizeof(cg1)), 0);
	ck_assert_int_eq(run_cgroup_find(r2, cg2, sizeof(cg2)), 0);
	ck_assert_ptr_nonnull(strstr(cg1, ".job-"));
	/* the rules see both runs, then their figures settle: 3 scrapes alike */
	total = job_total_settled(pport, mjob, 2);
	u1 = cg_usage(cg1);
	u2 = cg_usage(cg2);
	want = u1 + u2;
	snprintf(q, sizeof(q), "memacct_job:rss_bytes:sum{memacct_job=\"%s\"}", mjob);
	rss = prom_one(pport, q, &l);
	json_decref(l);
	printf("  job %s: rules %.0f bytes, Σ charge of its 2 cgroups %lld (%lld + %lld), "
	       "Σ RSS %.0f\n", mjob, total, want, u1, u2, rss);
	ck_assert_msg(fabs(total - want) <= want / 100.0, "job total %.0f, Σ charge %lld", total,
		      want);
	ck_assert_msg(rss >= 2 * total, "Σ RSS %.0f not above twice the charge %.0f", rss, total);
	/* the worst node of its anon class: the one node there is */
	snprintf(q, sizeof(q), "memacct_job:class_bytes:worst_node{memacct_job=\"%s\","
		 "class=\"anon\"}", mjob);
	ck_assert(prom_one(pport, q, &l) > 0 && l);
	json_decref(l);
	/* an OOM kill in a third cgroup of the job: its counter scraped at 0
	 * first (increase() needs two samples), the cgroup kept after it */
	snprintf(cmd, sizeof(cmd), "sh -c 'sleep 3; exec %s/oom 128' 2>/dev/null", workloads);
	r3 = job_run(job, "--keep-cgroup --memory-max 32M", cmd, NULL, &o3);
	snprintf(q, sizeof(q), "ALERTS{alertname=\"MemacctJobOomKill\",alertstate=\"firing\","
		 "memacct_job=\"%s\"}", mjob);
	t2 = -1;
	for (int i = 0; i < 120 && t2 < 0; i++) {
		t2 = prom_one(pport, q, &l);
		json_decref(l);
		sleep_ms(500);
	}
	waitpid(r3, NULL, 0);
	fclose(o3);
	printf("  OOM kill in a third cgroup of %s: MemacctJobOomKill %s\n", mjob,
	       t2 > 0 ? "firing" : "not firing");
	ck_assert_msg(t2 > 0, "MemacctJobOomKill did not fire for %s in 60 s", mjob);
	/* Prometheus to Alertmanager to the webhook: the alert, then with
	 * the post-mortem's cause once the daemon's series has it */
	for (int i = 0; i < 150 && !cause[0]; i++) {	/* a resend a minute later included */
		json_t *j = hook_next(hook, 1000), *al = hook_alert(j, "MemacctJobOomKill", mjob);

		if (al) {
			delivered = true;
			snprintf(cause, sizeof(cause), "%s",
				 json_string_value(json_object_get(al, "cause")) ?: "");
		}
		json_decref(j);
	}
	close(hook);
	printf("  the webhook got MemacctJobOomKill{memacct_job=\"%s\"}: %s, cause \"%s\"\n", mjob,
	       delivered ? "yes" : "no", cause);
	if (!delivered) {	/* what Alertmanager said, for the guests' logs */
		struct result *r = run_cmd("tail -n 20 /tmp/memacct-alertmanager-test.log");

		printf("  /tmp/memacct-alertmanager-test.log ends:\n%s", r->out);
		result_free(r);
	}
	ck_assert_msg(delivered, "no MemacctJobOomKill for %s at the webhook in 150 s (see "
		      "/tmp/memacct-alertmanager-test.log)", mjob);
	ck_assert_str_eq(cause, "anon");
	kill(r1, SIGTERM);
	kill(r2, SIGTERM);
	waitpid(r1, NULL, 0);
	waitpid(r2, NULL, 0);
	fclose(o1);
	fclose(o2);
	{	/* the kept cgroup: beside the runs' */
		char dir[PATH_MAX], pat[PATH_MAX + 64];
		glob_t g;

		ck_assert_int_eq(run_cgroup_parent(dir, sizeof(dir)), 0);
		snprintf(pat, sizeof(pat), "%s/memacct-keep-%d-*", dir, (int)r3);
		if (!glob(pat, GLOB_ONLYDIR, NULL, &g)) {
			ck_assert_msg(rmdir(g.gl_pathv[0]) == 0, "rmdir %s: %s", g.gl_pathv[0],
				      strerror(errno));
			globfree(&g);
		}
	}
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * Issue #45, two nodes on one host: two daemons, each with its own kernel
 * side and port and a --cgroup-filter of its own subtree (a node each, as
 * Prometheus sees them: two instances), and one Slurm job with a cgroup in
 * each, laid out as slurmd does (job_ID). explain_fork in each (64 and 96
 * MiB, 4 workers: a forked CoW heap). docs/deploy/memacct-jobs.rules.yml in
 * a real Prometheus: the job's total over the two instances = Σ of the two
 * cgroups' charge read from their files, within 1%, Σ RSS beside it; the
 * worst node of its anon is the 96 MiB one; one daemon restarted while the
 * job runs leaves no reset in the job's counters, whose sum over the nodes
 * is the workers' copies (each writes an eighth of its heap) within 1%. Three qemu guests as
 * nodes: make vmtest-cluster (tests/vmtest/cluster.py).
 */
START_TEST(test_job_two_nodes)
{
	char node[2][400], jobcg[2][440], inst[2][32], pin[2][sizeof(pin_dir)];
	char mjob[64], q[512], sh[3 * PATH_MAX], top[PATH_MAX + 64], scrape[256];
	int ports[2], pport = free_port(), mib[2] = { 64, 96 };
	double total, rss, v, cow;
	long long u[2], want;
	pid_t d[2], w[2];
	FILE *o[2];
	json_t *l = NULL;

	snprintf(mjob, sizeof(mjob), "slurm/%d", (int)getpid());
	for (int i = 0; i < 2; i++) {
		snprintf(node[i], sizeof(node[i]), "%.300s/memacct-test-%d-node%d", cgroot,
			 (int)getpid(), i);
		snprintf(jobcg[i], sizeof(jobcg[i]), "%.380s/job_%d", node[i], (int)getpid());
		ck_assert_int_eq(mkdir(node[i], 0755), 0);
		snprintf(extra_cg[2 + i], sizeof(extra_cg[2 + i]), "%.400s", node[i]);
		cg_enable_memory(node[i]);	/* v2: memory.stat in the job's cgroup */
		ck_assert_int_eq(mkdir(jobcg[i], 0755), 0);
		snprintf(extra_cg[i], sizeof(extra_cg[i]), "%.440s", jobcg[i]);
	}
	/* the nodes' daemons: their own port, kernel side and subtree */
	snprintf(pin[0], sizeof(pin[0]), "%.100s", pin_dir);
	snprintf(pin[1], sizeof(pin[1]), "%.100s-second", pin_dir);
	ports[0] = port;
	ports[1] = free_port();
	for (int i = 0; i < 2; i++) {
		char filter[PATH_MAX + 32];

		port = ports[i];
		snprintf(pin_dir, sizeof(pin_dir), "%s", pin[i]);
		snprintf(filter, sizeof(filter), "--cgroup-filter %s", node[i] + strlen(cgroot));
		d[i] = start_daemon(filter);
		ck_assert(d[i] > 0);
		snprintf(inst[i], sizeof(inst[i]), "127.0.0.1:%d", port);
	}
	port = ports[0];
	snprintf(pin_dir, sizeof(pin_dir), "%s", pin[0]);
	snprintf(top, sizeof(top), "rule_files:\n  - %s/../docs/deploy/memacct-jobs.rules.yml\n",
		 testsdir);
	snprintf(scrape, sizeof(scrape), "  - job_name: memacct-second\n    static_configs:\n"
		 "      - targets: ['%s']\n", inst[1]);
	start_prometheus(pport, top, scrape);
	for (int i = 0; i < 2; i++) {
		snprintf(sh, sizeof(sh), "echo $$ > %s/cgroup.procs && exec %s/explain_fork %d 4 "
			 "--seconds 120", jobcg[i], workloads, mib[i]);
		w[i] = spawn_ready(sh, "ready", &o[i]);
	}
	/* both nodes' job cgroups in the rules, the figures settled: 3 alike */
	total = job_total_settled(pport, mjob, 2);
	u[0] = cg_usage(jobcg[0]);
	u[1] = cg_usage(jobcg[1]);
	snprintf(q, sizeof(q), "memacct_job:rss_bytes:sum{memacct_job=\"%s\"}", mjob);
	rss = prom_one(pport, q, &l);
	json_decref(l);
	printf("  job %s on 2 nodes: rules %.0f bytes, Σ charge %lld (%lld + %lld), Σ RSS %.0f\n",
	       mjob, total, u[0] + u[1], u[0], u[1], rss);
	ck_assert_msg(fabs(total - (u[0] + u[1])) <= (u[0] + u[1]) / 100.0,
		      "job total %.0f, Σ charge %lld", total, u[0] + u[1]);
	ck_assert_msg(rss >= 2 * total, "Σ RSS %.0f not above twice the charge %.0f", rss, total);
	snprintf(q, sizeof(q), "memacct_job:class_bytes:worst_node{memacct_job=\"%s\","
		 "class=\"anon\"}", mjob);
	v = prom_one(pport, q, &l);
	ck_assert_ptr_nonnull(l);
	printf("  worst node of its anon: %s, %.0f bytes\n",
	       json_string_value(json_object_get(l, "instance")) ?: "?", v);
	ck_assert_str_eq(json_string_value(json_object_get(l, "instance")) ?: "", inst[1]);
	json_decref(l);
	/* node 0's daemon restarted while the job runs: no reset in the rules */
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d[0], SIGTERM)), 0);
	sleep_ms(2000);
	{
		char filter[PATH_MAX + 32];

		snprintf(filter, sizeof(filter), "--cgroup-filter %s", node[0] + strlen(cgroot));
		d[0] = start_daemon(filter);
		ck_assert(d[0] > 0);
	}
	sleep_ms(4000);	/* scraped again */
	snprintf(q, sizeof(q), "sum(resets(memacct_cow_copied_bytes_total{memacct_job=\"%s\"}[1m]))",
		 mjob);
	v = prom_one(pport, q, &l);
	json_decref(l);
	snprintf(q, sizeof(q), "sum(memacct_cow_copied_bytes_total{memacct_job=\"%s\","
		 "job_root=\"true\"})", mjob);
	cow = prom_one(pport, q, &l);
	json_decref(l);
	/* each worker copies an eighth of its node's heap: 4 * (64 + 96) / 8 MiB */
	want = 4LL * (mib[0] + mib[1]) / 8 << 20;
	printf("  after node 0's daemon restarted: %.0f resets of the job's CoW counters; "
	       "copied %.0f bytes over its nodes, the workers' writes %lld\n", v, cow, want);
	ck_assert_msg(v == 0, "%.0f resets of %s's CoW counters after a restart", v, mjob);
	ck_assert_msg(cow >= want && cow - want <= want / 100, "job CoW %.0f, written %lld", cow,
		      want);
	for (int i = 0; i < 2; i++) {
		kill(w[i], SIGTERM);
		waitpid(w[i], NULL, 0);
		fclose(o[i]);
	}
	stop_daemon(d[0], SIGTERM);
	stop_daemon(d[1], SIGTERM);
}
END_TEST

/*
 * Issue #15: a real Prometheus (Debian's prometheus, on loopback) scrapes the
 * daemon every second while child cgroups copy pages and are removed and
 * while the daemon restarts: no counter of the daemon sees a reset, and the
 * parent's counter ends at the workloads' own count of copied pages. Before
 * (main's daemon): the parent ended at 16 MiB of 64 (only its live
 * descendants), and fell at the restart.
 */
START_TEST(test_prometheus_no_reset)
{
	char rel[64], c1[512], c2[512], q[512];
	long long want = 0;
	int pport = free_port();
	double v;
	pid_t d;

	make_family("prom", rel, c1, c2);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	start_prometheus(pport, NULL, NULL);
	/* child1 scraped before it is removed: a daemon that dropped its flows
	 * held the parent by the clamp only until its restart (a reset) */
	want += cow_fork_in(c1, "32 1");
	sleep_ms(2500);
	ck_assert_int_eq(rmdir(c1), 0);
	sleep_ms(2500);
	want += cow_fork_in(c2, "16 1");
	sleep_ms(2500);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	ck_assert_int_eq(rmdir(c2), 0);
	cg_disable_memory(cg);	/* v2: processes only where no controller is delegated */
	want += cow_fork_in(cg, "16 1");
	sleep_ms(3500);
	/* every memacct counter family, over the whole test (process_* are the
	 * daemon process's own: they restart with it, as they should). One
	 * query per family: resets() drops the name, and series of two
	 * families with the same labels would collide in one query. */
	{
		json_t *j = prom_get(pport, "/api/v1/label/__name__/values");
		json_t *names = json_object_get(j, "data"), *n;
		size_t i, families = 0;

		ck_assert_msg(json_array_size(names) > 0, "Prometheus lists no metric names");
		json_array_foreach(names, i, n) {
			const char *name = json_string_value(n);
			size_t len = name ? strlen(name) : 0;

			if (len < 14 || strncmp(name, "memacct_", 8) ||
			    strcmp(name + len - 6, "_total"))
				continue;
			families++;
			snprintf(q, sizeof(q), "sum(resets(%s%%5B10m%%5D))", name);
			v = prom_value(pport, q);
			if (v != 0) {
				json_t *rj;
				char *txt;

				snprintf(q, sizeof(q), "/api/v1/query?query=resets(%s%%5B10m%%5D)"
					 "%%20%%3E%%200", name);
				rj = prom_get(pport, q);
				txt = rj ? json_dumps(rj, JSON_COMPACT) : NULL;
				ck_abort_msg("Prometheus saw %g resets of %s: %s", v, name,
					     txt ? txt : "?");
			}
		}
		json_decref(j);
		printf("  Prometheus: %zu memacct counter families, 0 resets\n", families);
		ck_assert_msg(families >= 6, "only %zu memacct counter families scraped", families);
	}
	snprintf(q, sizeof(q), "memacct_cow_copied_bytes_total%%7Bcgroup%%3D%%22%s%%22%%7D", rel);
	v = prom_value(pport, q);
	assert_near("parent cow_copied_bytes_total in Prometheus after children removed and a "
		    "restart", (long long)v, want);
	/* never higher on the way: the largest sample is the last */
	snprintf(q, sizeof(q), "max_over_time(memacct_cow_copied_bytes_total%%7Bcgroup%%3D%%22%s"
		 "%%22%%7D%%5B10m%%5D)", rel);
	assert_near("largest parent cow_copied_bytes_total sample", (long long)prom_value(pport, q),
		    want);
	stop_daemon(d, SIGTERM);
}
END_TEST

/* Every memacct_*_total series of @rel and of / in @before is at least as
 * high in @after; the number of series compared. */
static int counters_not_lower(const char *before, const char *after, const char *rel,
			      int round)
{
	char parent[96];
	int checked = 0;

	snprintf(parent, sizeof(parent), "cgroup=\"%s\"", rel);
	for (const char *l = before; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char key[512];
		const char *sp = strchr(l, ' '), *brace = strchr(l, '{');
		long long was, now;

		if (strncmp(l, "memacct_", 8) || !sp || !brace || brace > sp ||
		    strncmp(brace - 6, "_total", 6) || (size_t)(sp - l) >= sizeof(key))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(sp - l), l);
		if (!strstr(key, parent) && !strstr(key, "cgroup=\"/\""))
			continue;
		was = strtoll(sp + 1, NULL, 10);
		now = sample(after, key);
		ck_assert_msg(now >= was, "restart %d: %s went down: %lld -> %lld", round, key,
			      was, now);
		checked++;
	}
	return checked;
}

/*
 * Issue 39 finding 4: a daemon stopped (SIGTERM, or SIGKILL every other
 * round) while other jobs churn cgroups below a shared parent, restarted, 6
 * times (fewer under ASan and TCG): every
 * memacct_*_total series of the parent and of the root is at least what it
 * published before each stop. The churn, as the integration suite's own runs
 * make it: job cgroups made and removed below child2, one OOM-killed at its
 * limit, one whose leader exits before its thread, one whose child copies
 * pages, a `memacct run` with a limit of its own whose workload is
 * OOM-killed (its cgroup made and removed below the job's); child1, where a
 * child copied pages while the daemon ran, removed with its flows.
 */
START_TEST(test_restart_churn_never_lower)
{
	static const char *const jobs[] = { "oom 64", "thread_exit 4096 256", "cow_fork 16 2",
					    "run" };
	char rel[64], c1[512], c2[512], job[600], *before, *after;
	/* 6 rounds (10 in stop 50 and on 2026-11-30: none lower; MEMACCT_RESTART_ROUNDS
	 * sets them); 2 under ASan (the plain run's already ran), 1 in the
	 * TCG guest (v2; its daemon suite is the guests' longest part) */
	int checked = 0, rounds = getenv("MEMACCT_VMTEST") ? 1 : getenv("MEMACCT_SANITIZE") ? 2 : 6;
	pid_t d;

	if (getenv("MEMACCT_RESTART_ROUNDS"))
		rounds = atoi(getenv("MEMACCT_RESTART_ROUNDS"));

	make_family("churn", rel, c1, c2);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	cow_fork_in(c2, "16 1");
	for (int round = 1; round <= rounds; round++) {
		if (access(c1, F_OK))
			ck_assert_int_eq(mkdir(c1, 0755), 0);
		cow_fork_in(c1, "16 1");
		collections_wait(3);		/* three collections: published */
		before = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(before);
		/* odd rounds kill -9 it (a crash, the OOM killer: finding 4's
		 * reproduction), even ones stop it cleanly */
		if (round % 2) {
			int st = stop_daemon(d, SIGKILL);

			ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		} else {
			ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
		}

		/* the churn, while no daemon runs (its programs stay attached) */
		ck_assert_int_eq(rmdir(c1), 0);
		cg_enable_memory(c2);
		for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
			const char *limit = cgversion == 2 ? "memory.max" : "memory.limit_in_bytes";
			struct result *r;

			snprintf(job, sizeof(job), "%s/job%zu", c2, i);
			ck_assert_int_eq(mkdir(job, 0755), 0);
			if (!strcmp(jobs[i], "run"))
				r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s run "
					    "--memory-max 32M -- %s/oom 64' > /dev/null 2>&1; "
					    "echo \"exit $?\"", job, memacct, workloads);
			else
				r = run_cmd("echo 32M > %s/%s && sh -c 'echo $$ > %s/cgroup.procs "
					    "&& exec %s/%s' > /dev/null 2>&1; echo \"exit $?\"",
					    job, limit, job, workloads, jobs[i]);
			if (round == 1)
				printf("  churn, no daemon: %s in %s: %s", jobs[i],
				       job + strlen(cgroot), r->out);
			result_free(r);
			for (int t = 0; t < 50 && rmdir(job); t++)	/* the OOM victim's exit */
				sleep_ms(100);
			ck_assert_msg(access(job, F_OK), "%s stays", job);
		}
		cg_disable_memory(c2);

		d = start_daemon(NULL);
		ck_assert(d > 0);
		collections_wait(3);
		after = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(after);
		checked += counters_not_lower(before, after, rel, round);
		free(before);
		free(after);
	}
	printf("  %d counter series of %s and / over %d restarts: none lower after one\n",
	       checked, rel, rounds);
	ck_assert_int_ge(checked, 10 * rounds);
	stop_daemon(d, SIGTERM);
}
END_TEST

/*
 * D7: a daemon on another --pin-path while a kernel side is attached runs,
 * but says so (docs/daemon.md "Several kernel sides"); alone it says nothing.
 */
START_TEST(test_second_kernel_side_warned)
{
	struct result *r;
	pid_t d;

	/* alone: no warning (SIGINT after 6 s: rc 0) */
	r = run_cmd("timeout --preserve-status -s INT 6 %s daemon --listen 127.0.0.1:%d --interval 500ms "
		    "--pin-path %s-second 2>&1", memacct, free_port(), pin_dir);
	ck_assert_msg(r->status == 0, "rc %d: %s", r->status, r->out);
	ck_assert_msg(!strstr(r->out, "other memacct kernel side"), "a daemon alone warned: %s", r->out);
	ck_assert_msg(strstr(r->out, "serving on port"), "never served: %s", r->out);
	result_free(r);
	detach_all();
	d = start_daemon(NULL);
	ck_assert(d > 0);
	r = run_cmd("timeout --preserve-status -s INT 6 %s daemon --listen 127.0.0.1:%d --interval 500ms "
		    "--pin-path %s-second 2>&1", memacct, free_port(), pin_dir);
	printf("  second daemon said: %.300s\n", r->out);
	ck_assert_msg(r->status == 0, "rc %d: %s", r->status, r->out);
	ck_assert_msg(strstr(r->out, "Warning: 1 other memacct kernel side is loaded"),
		      "no warning of the first kernel side: %s", r->out);
	result_free(r);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * D20: HTTP/1.1 without Host is a bad request (RFC 9112 3.2: 400, was 200);
 * an absolute-form target (RFC 9112 3.2.2) is served (was 404); HTTP/1.0
 * needs no Host.
 */
/*
 * gzip when the scraper accepts it (Prometheus sends Accept-Encoding:
 * gzip): Content-Encoding gzip, a body gzip -t passes that inflates to the
 * exposition; not for "gzip;q=0" nor without the header; Vary always.
 */
START_TEST(test_metrics_gzip)
{
	struct result *r;
	pid_t d;

	d = start_daemon(NULL);
	ck_assert(d > 0);
	r = run_cmd("F=/tmp/memacct-gz-%d; U=http://127.0.0.1:%d/metrics; "
		    "curl -sf -H 'Accept-Encoding: deflate, GZip;q=0.5' -D $F.h -o $F.gz $U && "
		    "curl -sf -D $F.hp -o $F.txt $U && "
		    "curl -sf -H 'Accept-Encoding: gzip;q=0' -D $F.h0 -o /dev/null $U || exit 1; "
		    "grep -ci '^content-encoding: gzip' $F.h | sed 's/^/truth gz_header /'; "
		    "grep -ci '^vary: accept-encoding' $F.h $F.hp | awk -F: '{ n += $NF } "
		    "END { print \"truth vary\", n }'; "
		    "grep -ci '^content-encoding' $F.hp $F.h0 | awk -F: '{ n += $NF } "
		    "END { print \"truth plain_encoded\", n }'; "
		    "gzip -t $F.gz && echo 'truth gz_valid 1'; "
		    "echo \"truth gz_bytes $(stat -c %%s $F.gz)\"; "
		    "echo \"truth text_bytes $(stat -c %%s $F.txt)\"; "
		    "echo \"truth families $(gzip -dc $F.gz | grep -c '^# TYPE memacct_')\"; "
		    "echo \"truth plain_families $(grep -c '^# TYPE memacct_' $F.txt)\"; "
		    "rm -f $F.h $F.hp $F.h0 $F.gz $F.txt", (int)getpid(), port);
	ck_assert_msg(r->status == 0, "curl failed: %s", r->out);
	ck_assert_int_eq(truth(r, "gz_header"), 1);
	ck_assert_int_eq(truth(r, "vary"), 2);
	ck_assert_int_eq(truth(r, "plain_encoded"), 0);
	ck_assert_int_eq(truth(r, "gz_valid"), 1);
	ck_assert_int_gt(truth(r, "families"), 20);
	ck_assert_int_eq(truth(r, "families"), truth(r, "plain_families"));
	ck_assert_int_lt(truth(r, "gz_bytes") * 3, truth(r, "text_bytes"));
	printf("  /metrics gzip: %lld bytes for %lld of text, %lld families in both\n",
	       truth(r, "gz_bytes"), truth(r, "text_bytes"), truth(r, "families"));
	result_free(r);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * --listen [::1]:PORT: served over IPv6 loopback (curl -g), not over IPv4,
 * and said at start; the daemon exits 0 on SIGINT.
 */
START_TEST(test_listen_ipv6)
{
	struct result *r;

	if (system("grep -qi '^0\\{31\\}1 ' /proc/net/if_inet6 2>/dev/null") != 0) {
		SKIP_TEST("no IPv6 loopback (::1) on this host");
		return;
	}
	r = run_cmd("P=%d; L=/tmp/memacct-v6-%d; "
		    "%s daemon --listen \"[::1]:$P\" --interval 500ms --pin-path %s > $L.log 2>&1 & "
		    "D=$!; for i in $(seq 100); do "
		    "curl -gsf -o $L.m \"http://[::1]:$P/metrics\" && break; sleep 0.1; done; "
		    "echo \"truth build_info $(grep -c '^memacct_build_info' $L.m)\"; "
		    "curl -sf -o /dev/null --max-time 2 http://127.0.0.1:$P/metrics; "
		    "echo \"truth v4_rc $?\"; kill -INT $D; wait $D; echo \"truth exit $?\"; "
		    "echo \"truth said $(grep -c \"serving on port $P (::1)\" $L.log)\"; "
		    "cat $L.log; rm -f $L.m $L.log", free_port(), (int)getpid(), memacct, pin_dir);
	ck_assert_int_eq(truth(r, "build_info"), 1);
	ck_assert_msg(truth(r, "v4_rc") != 0, "served on 127.0.0.1 too: %s", r->out);
	ck_assert_int_eq(truth(r, "exit"), 0);
	ck_assert_msg(truth(r, "said") == 1, "start line: %s", r->out);
	printf("  --listen [::1]:PORT: /metrics over IPv6, curl over IPv4 refused (rc %lld)\n",
	       truth(r, "v4_rc"));
	result_free(r);
}
END_TEST

/*
 * --metrics-deny 'memacct_process_.*': no per-process family, the cgroup
 * ones still there; --metrics-allow 'memacct_(rss|cow_copied)_bytes': those
 * two families only, with their samples.
 */
START_TEST(test_metrics_allow_deny)
{
	int types = 0;
	char *m, *p;
	pid_t d;

	d = start_daemon("--metrics-deny 'memacct_process_.*'");
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strstr(m, "memacct_process_") && strstr(m, "\nmemacct_rss_bytes{") &&
		      strstr(m, "\nprocess_resident_memory_bytes "), "denied: %.300s", m);
	free(m);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	d = start_daemon("--metrics-allow 'memacct_(rss|cow_copied)_bytes'");
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	for (p = m; (p = strstr(p, "# TYPE ")); p++)
		types++;
	ck_assert_msg(types == 2 && strstr(m, "# TYPE memacct_rss_bytes gauge\n") &&
		      strstr(m, "# TYPE memacct_cow_copied_bytes_total counter\n") &&
		      strstr(m, "\nmemacct_rss_bytes{cgroup=\"/\""), "allowed: %s", m);
	printf("  --metrics-allow: %d families served; --metrics-deny: no memacct_process_*\n",
	       types);
	free(m);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

START_TEST(test_http_host_and_absolute_form)
{
	char req[256], *resp;
	pid_t d;

	d = start_daemon(NULL);
	ck_assert(d > 0);
	resp = http_raw("GET /metrics HTTP/1.1\r\n\r\n", NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_msg(!strncmp(resp, "HTTP/1.1 400", 12), "no Host: %.40s", resp);
	free(resp);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%d/metrics HTTP/1.1\r\n"
		 "Host: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", port, port);
	resp = http_raw(req, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_msg(!strncmp(resp, "HTTP/1.1 200", 12) && strstr(resp, "\nmemacct_usage_bytes{"),
		      "absolute-form: %.80s", resp);
	free(resp);
	resp = http_raw("GET HTTP://LOCALHOST/healthz HTTP/1.1\r\nHost: localhost\r\n"
			"Connection: close\r\n\r\n", NULL);
	ck_assert_msg(resp && !strncmp(resp, "HTTP/1.1 200", 12), "absolute-form healthz: %.40s",
		      resp);
	free(resp);
	resp = http_raw("GET /healthz HTTP/1.0\r\n\r\n", NULL);
	ck_assert_msg(resp && !strncmp(resp + 9, "200", 3), "HTTP/1.0 without Host: %.40s", resp);
	free(resp);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/* Σ VmRSS (/proc/PID/status) of the processes in cgroup directory @dir, bytes; 0: none read */
static long long vmrss_sum(const char *dir)
{
	char path[600];
	long long sum = 0;
	long pid, kib;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if ((kib = rss_kib((pid_t)pid)) > 0)
			sum += kib * 1024LL;
	fclose(f);
	return sum;
}

/*
 * Issue #23 part 4: memacct_rss_bytes of a cgroup of 2,001 small processes
 * (many_small: 2,000 children of 8 touched pages each, paused) is their
 * Σ VmRSS within 0.5%. Most of such a process's RSS sits in the rss_stat
 * counters' per-CPU deltas (under a batch each): the central counts alone,
 * what the process walk read before, were 20% low here (2 CPUs), 40% in
 * the issue's report, worse with more CPUs.
 */

/*
 * many_small @n children of @pages touched pages each, started in cgroup
 * directory @dir and held (the test's `held`, killed by teardown()) until
 * *@in_w is closed; returns once every child is ready.
 */
static void hold_many_small(const char *dir, int n, int pages, int *in_w)
{
	int in[2], out[2];
	char line[64], want[32];
	ssize_t len;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	held = fork();
	ck_assert_int_ge(held, 0);
	if (held == 0) {
		char path[PATH_MAX], prog[600], ns[16], ps[16];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			_exit(126);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(prog, sizeof(prog), "%s/many_small", workloads);
		snprintf(ns, sizeof(ns), "%d", n);
		snprintf(ps, sizeof(ps), "%d", pages);
		execl(prog, prog, ns, ps, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	len = read(out[0], line, sizeof(line) - 1);
	close(out[0]);
	ck_assert_int_gt(len, 0);
	line[len] = '\0';
	snprintf(want, sizeof(want), "ready %d\n", n);
	ck_assert_msg(!strcmp(line, want), "many_small: %s", line);
	*in_w = in[1];
}

/* Let the held many_small go: it kills and reaps its children. */
static void release_many_small(int in_w)
{
	close(in_w);
	waitpid(held, NULL, 0);
	held = 0;
}

/*
 * Issue #23 part 4: memacct_rss_bytes of a cgroup of 2,001 small processes
 * (many_small: 2,000 children of 8 touched pages each, paused) is their
 * Σ VmRSS within 0.5%. Most of such a process's RSS sits in the rss_stat
 * counters' per-CPU deltas (under a batch each): the central counts alone,
 * what the process walk read before, were 20% low here (2 CPUs), 40% in
 * the issue's report, worse with more CPUs.
 */
START_TEST(test_rss_small_processes_exact)
{
	char rel[64];
	long long got, want;
	long rss0, rss1;
	double err;
	int in_w;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-rss-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	hold_many_small(cg, 2000, 8, &in_w);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	collections_wait(3);
	got = scrape_cg("memacct_rss_bytes", rel);
	want = vmrss_sum(cg);	/* paused: the same pages as at the scrape */
	/* the daemon's own RSS over 10 more collections of the same 2,001
	 * processes: what a collection keeps must not grow with them (its
	 * OOM history kept all of every collection: +6.5 MiB here, 56 MiB
	 * at 10,000). Not under ASan: its quarantine holds what is freed. */
	rss0 = rss_kib(d);
	collections_wait(12);
	rss1 = rss_kib(d);
	stop_daemon(d, SIGTERM);
	release_many_small(in_w);
	err = want ? 100.0 * (double)(got - want) / (double)want : 0;
	printf("  test_rss_small_processes_exact: memacct_rss_bytes %lld, sum of VmRSS %lld "
	       "(%+.2f%%); the daemon's RSS %ld KiB, 10 collections later %ld KiB\n", got, want,
	       err, rss0, rss1);
	ck_assert_msg(want > 0 && fabs(err) <= 0.5,
		      "memacct_rss_bytes{cgroup=\"%s\"} %lld, sum of VmRSS of its 2,001 processes "
		      "%lld: %+.2f%% (at most 0.5%%)", rel, got, want, err);
	ck_assert_msg(rss0 > 0 && rss1 > 0, "the daemon's VmRSS not read");
	ck_assert_msg(getenv("MEMACCT_SANITIZE") || rss1 - rss0 < 1024,
		      "the daemon's RSS grew by %ld KiB in 10 collections of the same 2,001 "
		      "processes (%ld to %ld KiB)", rss1 - rss0, rss0, rss1);
}
END_TEST

/*
 * Issue #23 part 7: a cgroup 70 levels deep is seen like any other (the
 * walk stopped at 64: its 50 MiB of anon and 40 MiB of CoW read 0 and 0).
 * A chain /memacct-deep-PID/d/d/.../d of our own, level 70 at the end: a
 * held process of 50 MiB anon and cow_fork 40 MiB in the leaf; the leaf's
 * memacct_anon_bytes against its memory.stat, memacct_rss_bytes against
 * Σ VmRSS, memacct_cow_copied_bytes_total against cow_fork's truth, the
 * chain's top (hierarchical) seeing the CoW too, and nothing unwalked.
 */
START_TEST(test_deep_cgroup_seen)
{
	enum { DEPTH = 70 };
	char rel[64], leaf_rel[64 + 2 * DEPTH], path[sizeof(deep_leaf)], stat_path[700], *m;
	long long cow, v, want;
	int in_w;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-deep-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	snprintf(leaf_rel, sizeof(leaf_rel), "%s", rel);
	while (deep_levels < DEPTH - 1) {	/* teardown() removes what was made */
		snprintf(path, sizeof(path), "%s%s", cgroot, leaf_rel);
		cg_enable_memory(path);
		strcat(leaf_rel, "/d");
		snprintf(path, sizeof(path), "%s%s", cgroot, leaf_rel);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		strcpy(deep_leaf, path);
		deep_levels++;
	}
	d = start_daemon(NULL);
	ck_assert(d > 0);
	cow = cow_fork_in(deep_leaf, "40 1");
	hold_many_small(deep_leaf, 1, 50 * 256, &in_w);
	collections_wait(3);
	v = scrape_cg("memacct_cow_copied_bytes_total", leaf_rel);
	assert_near("level-70 cgroup's memacct_cow_copied_bytes_total", v, cow);
	v = scrape_cg("memacct_cow_copied_bytes_total", rel);
	assert_near("level-1 top of the chain's memacct_cow_copied_bytes_total", v, cow);
	v = scrape_cg("memacct_rss_bytes", leaf_rel);
	want = vmrss_sum(deep_leaf);
	ck_assert_msg(want >= 50LL * (long long)MiB, "sum of VmRSS in the leaf %lld", want);
	assert_near("level-70 cgroup's memacct_rss_bytes (sum of VmRSS)", v, want);
	snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", deep_leaf);
	want = stat_key(stat_path, cgversion == 1 ? "total_rss" : "anon");
	v = scrape_cg("memacct_anon_bytes", leaf_rel);
	ck_assert_msg(want >= 50LL * (long long)MiB, "memory.stat anon of the leaf %lld", want);
	assert_near("level-70 cgroup's memacct_anon_bytes (memory.stat)", v, want);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	v = sample(m, "memacct_cgroups_unwalked");
	free(m);
	ck_assert_msg(v == 0, "memacct_cgroups_unwalked %lld", v);
	stop_daemon(d, SIGTERM);
	release_many_small(in_w);
}
END_TEST

/*
 * Issue #23 part 7: what the walk cannot reach is said, not silently left
 * out. A chain of 20 directories of 250-character names below our cgroup
 * goes past PATH_MAX (made and removed through fds: mkdirat(), unlinkat()),
 * which the daemon cannot open by path: memacct_cgroups_unwalked is 1 (the
 * first directory past the limit; its subtree is not read), the log says
 * so, and the chain's top is published as any cgroup.
 */
START_TEST(test_cgroup_past_path_max)
{
	char rel[64], name[LONG_NAME_LEN + 1], *m;
	long long v;
	off_t from;
	int fd;
	pid_t d;

	snprintf(rel, sizeof(rel), "/memacct-long-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s%s", cgroot, rel);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	long_chain = true;
	memset(name, 'x', LONG_NAME_LEN);
	name[LONG_NAME_LEN] = '\0';
	fd = open(cg, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 20; i++) {	/* 20 x 251 > PATH_MAX */
		int sub;

		ck_assert_int_eq(mkdirat(fd, name, 0755), 0);
		sub = openat(fd, name, O_RDONLY | O_DIRECTORY);
		ck_assert_int_ge(sub, 0);
		close(fd);
		fd = sub;
	}
	close(fd);
	from = daemon_log_mark();
	d = start_daemon(NULL);
	ck_assert(d > 0);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	v = sample(m, "memacct_cgroups_unwalked");
	free(m);
	ck_assert_msg(v == 1, "memacct_cgroups_unwalked %lld, a chain past PATH_MAX below %s", v,
		      rel);
	v = scrape_cg("memacct_usage_bytes", rel);
	ck_assert_msg(v >= 0, "the chain's top %s has no memacct_usage_bytes", rel);
	stop_daemon(d, SIGTERM);
	ck_assert_msg(daemon_log_says(from, "not walked", "memacct_cgroups_unwalked"),
		      "no warning in " DAEMON_LOG " about the cgroup not walked");
}
END_TEST


struct hup_storm {
	pid_t pid;
	int max, sent;
	useconds_t gap_us;
	volatile bool stop;
};

/* SIGHUP to the daemon every @gap_us until told to stop or @max are sent */
static void *hup_storm_fn(void *arg)
{
	struct hup_storm *h = arg;

	while (!h->stop && h->sent < h->max && !kill(h->pid, SIGHUP)) {
		h->sent++;
		usleep(h->gap_us);
	}
	return NULL;
}

/*
 * Issue 23: /healthz read the clock before taking the lock under which a
 * collection is published, so a probe racing a publication computed
 * now - published < 0 and answered "stalled: the last collection was
 * published 18446744073.7 s ago" (once in 23,507 probes under a SIGHUP
 * storm, which made collections back to back). A storm of SIGHUPs and
 * collections every 100 ms, /healthz probed up to 60,000 times (20 s at
 * most): never an absurd age, never "stalled" (the code before failed it
 * in 2 runs of 4, at probes 240 and 2,408).
 */
START_TEST(test_healthz_age_under_hup_storm)
{
	struct hup_storm h = { .max = 1000000, .gap_us = 200 };
	long ok = 0, other = 0, unanswered = 0, probes = 0;
	uint64_t t0;
	pthread_t th;
	pid_t d;

	d = start_daemon("--interval 100ms");
	ck_assert(d > 0);
	h.pid = d;
	ck_assert_int_eq(pthread_create(&th, NULL, hup_storm_fn, &h), 0);
	t0 = now_ns();
	for (; probes < 60000 && now_ns() - t0 < 20000000000ULL; probes++) {
		static const char req[] = "GET /healthz HTTP/1.0\r\n\r\n";
		size_t len;
		char *resp = http_raw_n(req, sizeof(req) - 1, 4096, &len);
		const char *st = resp ? strstr(resp, "stalled: the last collection was published ")
				      : NULL;

		if (st) {
			h.stop = true;
			pthread_join(th, NULL);
			ck_abort_msg("probe %ld under %d SIGHUPs: %s", probes, h.sent, st);
		}
		if (!resp)
			unanswered++;	/* a connection the loaded host dropped */
		else if (!strncmp(resp + 9, "200", 3))
			ok++;
		else if (other++ == 0)
			printf("  first answer not 200: %.200s\n", resp);
		free(resp);
	}
	h.stop = true;
	pthread_join(th, NULL);
	printf("  /healthz under a SIGHUP storm: %ld probes in %.1f s, %ld ok, %ld other, "
	       "%ld unanswered, %d SIGHUPs\n", probes, (now_ns() - t0) / 1e9, ok, other,
	       unanswered, h.sent);
	/* the bug is an absurd age (above); a connection refused or answered
	 * 503 by libmicrohttpd on a loaded host (1 in 60,000 under ASan) is
	 * not it, but more than 1 in 1,000 would be */
	ck_assert_msg(other + unanswered <= probes / 1000,
		      "%ld of %ld probes not answered 200 (%ld unanswered)", other + unanswered,
		      probes, unanswered);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * Issue 23: each SIGHUP forced a full collection (0.54 s at 9,200
 * cgroups), so a storm of them kept the daemon collecting back to back.
 * SIGHUP reopens the JSON log, as documented, and leaves the schedule be:
 * 500 SIGHUPs in a second to a daemon collecting every 10 s make no
 * collection (one line in its JSON log, the first collection's), and the
 * log, renamed away before the storm, is opened again.
 */
START_TEST(test_hup_storm_coalesced)
{
	struct hup_storm h = { .max = 500, .gap_us = 2000 };
	char log[48], old[64], extra[96];
	long lines = -1;
	pid_t d;

	snprintf(log, sizeof(log), "/tmp/memacct-hup-%d.jsonl", (int)getpid());
	snprintf(old, sizeof(old), "%s.1", log);
	snprintf(ws_file, sizeof(ws_file), "%s", log);	/* removed by teardown() */
	unlink(log);
	unlink(old);
	snprintf(extra, sizeof(extra), "--interval 10s --json-log %s", log);
	d = start_daemon(extra);
	ck_assert(d > 0);
	for (int i = 0; i < 50 && count_lines(log) < 1; i++)
		sleep_ms(100);
	ck_assert_int_eq(count_lines(log), 1);
	ck_assert_int_eq(rename(log, old), 0);
	h.pid = d;
	hup_storm_fn(&h);
	sleep_ms(1000);
	lines = count_lines(log);
	printf("  %d SIGHUPs in a second: %ld collections (JSON log lines) after the first\n",
	       h.sent, lines);
	unlink(old);
	ck_assert_int_eq(h.sent, 500);
	ck_assert_msg(lines == 0, "%d SIGHUPs made %ld collections (the log %s)", h.sent, lines,
		      lines < 0 ? "was not reopened" : "reopened");
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/*
 * Issue 23: under `ulimit -n 16` the daemon failed to load its programs
 * (EMFILE), exited 3 and left DIR, DIR/maps and DIR/links behind, empty. A
 * first load holds about 150 descriptors (programs, maps, links), so 16
 * cannot do: it says so at once and creates nothing (a root with
 * CAP_SYS_RESOURCE raises the limit and runs: then it is stopped).
 * pin_open() itself, out of descriptors in the middle of the load, removes
 * the directories it made.
 */
START_TEST(test_low_fd_limit)
{
	struct result *r;
	int st = 0;
	pid_t c;

	r = run_cmd("sh -c 'ulimit -n 16 && exec timeout -s TERM 10 %s daemon --listen "
		    "127.0.0.1:%d --pin-path %s' 2>&1", memacct, port, pin_dir);
	printf("  ulimit -n 16: rc %d: %s", r->status, r->out);
	if (r->status == 124) {
		detach_all();	/* it raised the limit, ran and was stopped */
	} else {
		ck_assert_msg(r->status == 3, "rc %d: %s", r->status, r->out);
		ck_assert_msg(strstr(r->out, "open files"), "no cause: %s", r->out);
	}
	result_free(r);
	ck_assert_msg(access(pin_dir, F_OK) != 0, "%s left behind", pin_dir);
	/* pin_open() out of descriptors after it made DIR, DIR/maps, DIR/links */
	c = fork();
	if (c == 0) {
		struct rlimit rl;
		struct pinned p;
		int n = 0;
		DIR *fdd = opendir("/proc/self/fd");

		while (fdd && readdir(fdd))
			n++;
		if (fdd)
			closedir(fdd);
		/* ".", ".." and the listing's own fd less; room for the lock and 3 more */
		rl.rlim_cur = rl.rlim_max = n - 3 + 4;
		setrlimit(RLIMIT_NOFILE, &rl);
		_exit(pin_open(pin_dir, &p) ? 0 : 1);
	}
	ck_assert_int_gt(c, 0);
	waitpid(c, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pin_open() loaded with few fds");
	ck_assert_msg(access(pin_dir, F_OK) != 0, "%s left behind by a failed pin_open()",
		      pin_dir);
}
END_TEST

/*
 * Issue 23: `GET /healthz\0` answered 200: libmicrohttpd hands the URL over
 * as a C string, cut at the NUL. A NUL or an escaped control byte in the
 * path is not /healthz: 400 or 404, never 200; the exact paths still 200.
 */
START_TEST(test_url_exact)
{
	static const struct { const char *req; size_t n; } bad[] = {
#define R(s) { s, sizeof(s) - 1 }
		R("GET /healthz\0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
		R("GET /healthz\0junk HTTP/1.0\r\n\r\n"),
		R("GET /metrics\0/x HTTP/1.0\r\n\r\n"),
		R("GET /\0 HTTP/1.0\r\n\r\n"),
		R("GET /healthz%00 HTTP/1.0\r\n\r\n"),
		R("GET /healthz%00junk HTTP/1.0\r\n\r\n"),
		R("GET /metrics%0a HTTP/1.0\r\n\r\n"),
		R("GET /healthz\x01 HTTP/1.0\r\n\r\n"),
#undef R
	};
	static const char *const good[] = {
		"GET /healthz HTTP/1.0\r\n\r\n", "GET /metrics HTTP/1.0\r\n\r\n",
		"GET /metrics?x=1 HTTP/1.0\r\n\r\n", "GET /%68ealthz HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	};
	size_t len;
	char *resp;
	pid_t d;

	d = start_daemon(NULL);
	ck_assert(d > 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		resp = http_raw_n(bad[i].req, bad[i].n, 1 << 20, &len);
		ck_assert_msg(resp && len > 12 && !strncmp(resp, "HTTP/1.", 7) &&
			      (!strncmp(resp + 9, "400", 3) || !strncmp(resp + 9, "404", 3)),
			      "request %zu (%.*s): %.40s", i, (int)strcspn(bad[i].req, "\r"),
			      bad[i].req, resp ? resp : "(none)");
		free(resp);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		resp = http_raw_n(good[i], strlen(good[i]), 1 << 20, &len);
		ck_assert_msg(resp && !strncmp(resp + 9, "200", 3), "%.*s: %.40s",
			      (int)strcspn(good[i], "\r"), good[i], resp ? resp : "(none)");
		free(resp);
	}
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/* occurrences of @needle in @s (@len bytes) */
static long count_of(const char *s, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	long n = 0;

	for (const char *p = s; (p = memmem(p, len - (p - s), needle, nl)); p += nl)
		n++;
	return n;
}

/*
 * Issue 23: 200 pipelined GETs of /metrics (7.2 KB sent in one write) were
 * all answered, 35 MB at 9,200 cgroups. A connection serves at most 8
 * requests, the 8th with "Connection: close": at most 8 texts come back,
 * and a request at a time (Prometheus' way) still gets answered, 8 times.
 */
START_TEST(test_pipelined_bounded)
{
	static const char one[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	size_t n = 200 * (sizeof(one) - 1), len, text;
	char *req = malloc(n), *resp, *body;
	long answers;
	pid_t d;

	ck_assert_ptr_nonnull(req);
	for (int i = 0; i < 200; i++)
		memcpy(req + i * (sizeof(one) - 1), one, sizeof(one) - 1);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	body = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(body);
	text = strlen(body);
	free(body);
	http_timeout_s = 3;
	resp = http_raw_n(req, n, 256 << 20, &len);
	ck_assert_ptr_nonnull(resp);
	answers = count_of(resp, len, "HTTP/1.1 200 OK\r\n");
	printf("  200 pipelined GETs (%zu bytes): %ld answers, %zu bytes (text %zu bytes)\n", n,
	       answers, len, text);
	free(resp);
	free(req);
	ck_assert_msg(answers >= 1 && answers <= 8, "%ld answers to 200 pipelined GETs", answers);
	/* twice the text: other tests' cgroups may come meanwhile */
	ck_assert_msg(len <= 8 * (2 * text + 4096), "%zu bytes for 200 pipelined GETs", len);
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
}
END_TEST

/* The daemon's post-mortems of @log (memacct oom -j), as an array (new reference). */
static json_t *oom_list(const char *log)
{
	struct result *r = run_cmd("%s oom -j --pin-path %s --oom-log %s", memacct, pin_dir, log);
	json_t *a;

	ck_assert_msg(r->status == 0 && r->report, "memacct oom -j: %d %s", r->status, r->out);
	/* where the list comes from: this daemon's log, read */
	{
		json_t *src = json_array_get(json_object_get(r->report, "sources"), 0);

		ck_assert_str_eq(json_string_value(json_object_get(src, "kind")) ?: "", "oom_log");
		ck_assert_str_eq(json_string_value(json_object_get(src, "path")) ?: "", log);
		ck_assert_msg(json_is_null(json_object_get(src, "error")) ||
			      access(log, F_OK) != 0, "%s exists but was not read", log);
	}
	a = json_incref(json_object_get(r->report, "oom_kills"));
	result_free(r);
	return a;
}

/* lines of @path, 0 when it is absent */
static int file_lines(const char *path)
{
	struct result *r = run_cmd("cat %s 2>/dev/null | wc -l", path);
	int n = atoi(r->out);

	result_free(r);
	return n;
}

/*
 * Issue 41 item 7: the daemon as docs/deploy runs it, a read-only root
 * (memacct.service ProtectSystem=strict, the DaemonSet's
 * readOnlyRootFilesystem) with /run/memacct writable (RuntimeDirectory=, a
 * hostPath volume), its default --oom-log: a memcg OOM kill is in
 * /run/memacct/oom.jsonl, and `memacct oom` on the node lists it from
 * there (source "daemon"), with no log error. In a mount namespace of its
 * own: the host's / and /run stay as they are.
 */
START_TEST(test_daemon_readonly_root)
{
	struct result *r;
	const char *dcg = cg;	/* teardown() removes it */

	snprintf(cg, sizeof(cg), "%s/memacct-rotest-%d", cgroot, (int)getpid());
	ck_assert_int_eq(mkdir(dcg, 0755), 0);
	cg_set_memory_max(dcg, 64 * MiB);
	r = run_cmd("unshare -m sh -c '"
		    "mount --make-rprivate / && mount -t tmpfs -o size=1m tmpfs /run && "
		    "mkdir /run/memacct && mount -t tmpfs -o size=4m tmpfs /run/memacct && "
		    "mount -o remount,ro /run && mount -o remount,bind,ro / || exit 7; "
		    "if touch /memacct-rw-probe 2>/dev/null || touch /run/x 2>/dev/null; then "
		    "echo \"root or /run writable\"; exit 9; fi; "
		    "%s daemon --listen 127.0.0.1:%d --interval 500ms --pin-path %s "
		    "> /run/memacct/daemon.log 2>&1 & d=$!; "
		    "i=0; until grep -q \"serving on port\" /run/memacct/daemon.log; do "
		    "i=$((i+1)); [ $i -gt 600 ] && { cat /run/memacct/daemon.log; exit 8; }; "
		    "sleep 0.1; done; "
		    "sh -c \"echo \\$\\$ > %s/cgroup.procs && exec %s/oom 128\" 2>/dev/null; "
		    "i=0; until [ -s /run/memacct/oom.jsonl ]; do i=$((i+1)); "
		    "[ $i -gt 100 ] && break; sleep 0.1; done; "
		    "%s -j oom --pin-path %s; kill -TERM $d; wait $d; echo \"daemon exit $?\"; "
		    "grep -i -e warn -e error /run/memacct/daemon.log'",
		    memacct, free_port(), pin_dir, dcg, workloads, memacct, pin_dir);
	printf("  read-only root: %.600s\n", r->out);
	if (r->status == 7) {	/* a skip on the CI host fails: not in tests/skips-allowed */
		SKIP_TEST("no read-only root in a mount namespace here: %.300s", r->out);
		result_free(r);
		return;
	}
	ck_assert_msg(r->status == 0 || r->status == 1, "rc %d: %s", r->status, r->out);
	{
		json_t *o = NULL, *k, *src;
		long long pid = truth(r, "pid");
		bool found = false;
		size_t i;

		for (char *l = r->out; l && *l && !o; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
			if (!strncmp(l, "{\"schema\":\"memacct.oom/v1\",\"command\":\"oom\"", 40))
				o = json_loadb(l, strcspn(l, "\n"), 0, NULL);
		ck_assert_msg(o, "no memacct oom -j output: %s", r->out);
		src = json_array_get(json_object_get(o, "sources"), 0);
		ck_assert_str_eq(json_string_value(json_object_get(src, "path")),
				 "/run/memacct/oom.jsonl");
		ck_assert_msg(json_is_null(json_object_get(src, "error")), "the OOM log: %s",
			      json_string_value(json_object_get(src, "error")));
		json_array_foreach(json_object_get(o, "oom_kills"), i, k)
			if (jint(k, "pid") == pid && !strcmp(json_string_value(
				json_object_get(k, "source")) ?: "", "daemon"))
				found = true;
		ck_assert_msg(found, "PID %lld's kill not in /run/memacct/oom.jsonl: %s", pid,
			      r->out);
		json_decref(o);
	}
	ck_assert_msg(strstr(r->out, "daemon exit 0"), "%s", r->out);
	ck_assert_msg(!strstr(r->out, "writing /run/memacct/oom.jsonl"), "%s", r->out);
	result_free(r);
}
END_TEST

/*
 * OOM kills in a cgroup of ours (--memory-max as the kubelet sets
 * memory.max): the daemon's post-mortem in its OOM log, in --json-log and
 * via memacct oom -j; a kill while it is down is there from the pinned
 * history at once (the kernel's record), and explained in full when it
 * comes back (the pinned ring kept it).
 */
START_TEST(test_daemon_oom_postmortem)
{
	char log[96], jlog[96], rel[320], want[400], args[256], *m;
	long long pid1, pid2;
	json_t *a, *k;
	pid_t d;

	snprintf(log, sizeof(log), "/tmp/memacct-test-oom-%d.jsonl", (int)getpid());
	snprintf(jlog, sizeof(jlog), "/tmp/memacct-test-oom-%d.json", (int)getpid());
	unlink(log);
	unlink(jlog);
	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	snprintf(rel, sizeof(rel), "/memacct-dtest-%d", (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_set_memory_max(cg, 64 * MiB);
	snprintf(args, sizeof(args), "--oom-log %s --json-log %s", log, jlog);
	d = start_daemon(args);
	ck_assert(d > 0);
	{
		struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec "
					   "%s/oom_cause mlock 32 128' 2>/dev/null", cg, workloads);

		pid1 = truth(r, "pid");
		result_free(r);
	}
	for (int i = 0; i < 50 && file_lines(log) < 1; i++)
		sleep_ms(100);
	a = oom_list(log);
	ck_assert_int_eq(json_array_size(a), 1);
	k = json_array_get(a, 0);
	printf("  daemon: %s\n", json_string_value(json_object_get(k, "verdict")));
	ck_assert_int_eq(jint(k, "pid"), pid1);
	ck_assert_str_eq(json_string_value(json_object_get(k, "source")), "daemon");
	ck_assert_str_eq(json_string_value(json_object_get(k, "cause")), "pinned");
	ck_assert_str_eq(json_string_value(json_object_get(k, "limit_cgroup")), rel);
	ck_assert_int_eq(jint(k, "limit_bytes"), 64 * MiB);
	if (json_is_true(json_object_get(json_object_get(k, "victim"), "at_kill")))
		ck_assert_int_eq(jint(json_object_get(k, "victim"), "mlocked_bytes"), 32 * MiB);
	json_decref(a);
	/* the same line in --json-log, valid there (test_schema validates the file) */
	{
		struct result *r = run_cmd("grep -c '\"schema\":\"memacct.oom/v1\".*\"pid\":%lld,' %s",
					   pid1, jlog);

		ck_assert_msg(atoi(r->out) == 1, "--json-log: %s", r->out);
		result_free(r);
	}
	/* the gauge of the last kill, for the cgroup and the root: at the
	 * next collection (waited for, up to 10 s: a collection under the
	 * load of CI's guests took longer than the 1.2 s slept before) */
	snprintf(want, sizeof(want), "memacct_oom_last_kill_timestamp_seconds{cgroup=\"%s\","
		 "cause=\"pinned\"} ", rel);
	for (int i = 0; i < 100; i++) {
		m = http_get("/metrics", NULL);
		ck_assert_ptr_nonnull(m);
		if (strstr(m, want))
			break;
		free(m);
		m = NULL;
		sleep_ms(100);
	}
	ck_assert_msg(m, "no '%s' in 10 s", want);
	free(m);

	/* down: a kill now is in the pinned history at once, the kernel's record */
	stop_daemon(d, SIGTERM);
	{
		struct result *r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/oom 128' "
					   "2>/dev/null", cg, workloads);

		pid2 = truth(r, "pid");
		result_free(r);
	}
	a = oom_list(log);
	ck_assert_int_eq(json_array_size(a), 2);
	k = json_array_get(a, 1);
	ck_assert_int_eq(jint(k, "pid"), pid2);
	ck_assert_str_eq(json_string_value(json_object_get(k, "source")), "kernel");
	ck_assert_str_eq(json_string_value(json_object_get(k, "limit_cgroup")), rel);
	json_decref(a);
	/* back: the pinned ring kept the record; explained in full now */
	d = start_daemon(args);
	ck_assert(d > 0);
	for (int i = 0; i < 50 && file_lines(log) < 2; i++)
		sleep_ms(100);
	a = oom_list(log);
	ck_assert_int_eq(json_array_size(a), 2);
	k = json_array_get(a, 1);
	ck_assert_int_eq(jint(k, "pid"), pid2);
	ck_assert_str_eq(json_string_value(json_object_get(k, "source")), "daemon");
	ck_assert_str_eq(json_string_value(json_object_get(k, "cause")), "anon");
	json_decref(a);
	{
		struct result *r = run_cmd("%s oom --last --pin-path %s --oom-log %s", memacct,
					   pin_dir, log);

		snprintf(want, sizeof(want), "OOM: oom (PID %lld) was killed in %s", pid2, rel);
		ck_assert_msg(r->status == 0 && strstr(r->out, want), "%s", r->out);
		result_free(r);
	}
	stop_daemon(d, SIGTERM);
	unlink(log);
	unlink(jlog);
}
END_TEST

/*
 * A job's limit hit, the victim in its child near a limit of its own, both
 * made before the daemon loads (issue 39 finding 6; integration_oom.c
 * test_oom_limit_parent_existing for attach): P (96 MiB) holds C (64 MiB, a
 * process holding 62 MiB) and D (a process growing to 128 MiB). Truth: P's
 * limit was hit (its memory.events.local "oom"), C's never ("max" 0). The
 * daemon reads each memcg's count at its load; by usage it named C.
 */
START_TEST(test_daemon_oom_limit_parent_existing)
{
	char log[96], args[128], rel[320], *c = extra_cg[0], *dd = extra_cg[1];
	struct result *r;
	json_t *a;
	pid_t d;

	if (cgversion != 2) {
		SKIP_TEST("memory cgroups on v1 here: no memory.events.local to read a memcg's "
			  "OOM count from");
		return;
	}
	snprintf(log, sizeof(log), "/tmp/memacct-test-oomp-%d.jsonl", (int)getpid());
	unlink(log);
	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	snprintf(rel, sizeof(rel), "/memacct-dtest-%d", (int)getpid());
	snprintf(c, sizeof(extra_cg[0]), "%s/c", cg);
	snprintf(dd, sizeof(extra_cg[1]), "%s/d", cg);
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	cg_set_memory_max(cg, 96 * MiB);
	ck_assert_msg(cg_children_memory(cg), "%s: +memory refused", cg);
	ck_assert_int_eq(mkdir(c, 0755), 0);
	ck_assert_int_eq(mkdir(dd, 0755), 0);
	cg_set_memory_max(c, 64 * MiB);
	snprintf(args, sizeof(args), "--oom-log %s", log);
	d = start_daemon(args);
	ck_assert(d > 0);
	r = run_cmd("{ sh -c 'echo $$ > %s/cgroup.procs && exec %s/oom 62 60' > %s.hold "
		    "2>/dev/null & h=$!; i=0; until grep -q touched %s.hold; do i=$((i+1)); "
		    "[ $i -gt 600 ] && break; sleep 0.1; done; "
		    "sh -c 'echo $$ > %s/cgroup.procs && exec %s/oom 128' >/dev/null 2>&1; "
		    "kill $h 2>/dev/null; wait $h; }; rm -f %s.hold; "
		    "echo kernel c_hit $(sed -n 's/^max //p' %s/memory.events); "
		    "echo kernel p_local_oom $(sed -n 's/^oom //p' %s/memory.events.local)",
		    c, workloads, log, log, dd, workloads, log, c, cg);
	printf("  C's limit hit %lld times, P's OOM events %lld\n", truth(r, "c_hit"),
	       truth(r, "p_local_oom"));
	ck_assert_int_eq(truth(r, "c_hit"), 0);
	ck_assert_int_gt(truth(r, "p_local_oom"), 0);
	result_free(r);
	for (int i = 0; i < 100 && file_lines(log) < 1; i++)
		sleep_ms(100);
	a = oom_list(log);
	ck_assert_msg(json_array_size(a) >= 1, "no kill in the daemon's OOM log");
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *k = json_array_get(a, i);

		printf("  daemon: kill %zu: pid %lld, limit %s found by %s\n", i, jint(k, "pid"),
		       json_string_value(json_object_get(k, "limit_cgroup")),
		       json_string_value(json_object_get(k, "limit_found_by")));
		ck_assert_str_eq(json_string_value(json_object_get(k, "limit_cgroup")) ?: "", rel);
		ck_assert_int_eq(jint(k, "limit_bytes"), 96 * MiB);
	}
	json_decref(a);
	stop_daemon(d, SIGTERM);
	unlink(log);
}
END_TEST

/*
 * Issue #25 part 2: a Kubernetes node's memory cgroups as the kubelet's
 * systemd driver builds them on pure cgroup v2 (kubepods.slice, its QoS
 * slices, pod slices with memory.max as the kubelet sets it, cri-containerd
 * scopes), workloads of known truth in the containers' scopes, the daemon's
 * /metrics against that truth and the kernel's own files.
 */
#define KUBE_NCG 10
struct kube_cg {
	char rel[400];		/* below cgroot */
	char pod[40];		/* the pod_uid label it must have, or "" */
	char ctr[72];		/* its container_id label, or "" */
	const char *qos;	/* its qos label, or NULL */
};
static struct kube_cg kube[KUBE_NCG];	/* parents first; teardown removes children first */
static int kube_n;
static pid_t kube_pids[2];	/* its workloads held open, killed by teardown() */
static char kube_file[96];	/* its page-cache file, removed by teardown() */

/* the absolute path of kube[@i] into @buf (KUBE_PATH_MAX) */
#define KUBE_PATH_MAX (CGROOT_MAX + 400)
static char *kube_path(int i, char *buf)
{
	ck_assert(i >= 0 && i < KUBE_NCG);
	ck_assert_int_lt(snprintf(buf, KUBE_PATH_MAX, "%s%s", cgroot, kube[i].rel), KUBE_PATH_MAX);
	return buf;
}

enum { K_PODS, K_BURST, K_BEST, K_BPOD, K_C1, K_C2, K_EPOD, K_C3, K_GPOD, K_C4 };

static void kube_teardown(void)
{
	for (size_t i = 0; i < sizeof(kube_pids) / sizeof(kube_pids[0]); i++) {
		if (kube_pids[i] > 0) {
			kill(kube_pids[i], SIGKILL);
			waitpid(kube_pids[i], NULL, 0);
		}
		kube_pids[i] = 0;
	}
	for (; kube_n > 0; kube_n--) {
		char path[KUBE_PATH_MAX];

		rmdir(kube_path(kube_n - 1, path));	/* ENOENT for those the test removed */
	}
	if (kube_file[0])
		unlink(kube_file);
	kube_file[0] = '\0';
}

/*
 * kube[@i]: the directory @name in kube[@parent] (the root when -1), with the
 * labels it must get; "+memory" in the parent's cgroup.subtree_control, as
 * the kubelet enables the controllers down its tree; @max: its memory.max
 * (0: none, as the kubelet leaves a BestEffort pod).
 */
static void kube_mk(int i, int parent, const char *name, const char *pod, const char *ctr,
		    const char *qos, unsigned long long max)
{
	char path[KUBE_PATH_MAX];
	struct result *r;

	ck_assert_int_eq(i, kube_n);
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", parent < 0 ? "" : kube[parent].rel,
				  name), (int)sizeof(kube[i].rel));
	memcpy(kube[i].rel, path, strlen(path) + 1);
	snprintf(kube[i].pod, sizeof(kube[i].pod), "%s", pod);
	snprintf(kube[i].ctr, sizeof(kube[i].ctr), "%s", ctr);
	kube[i].qos = qos;
	if (parent >= 0) {
		r = run_cmd("echo +memory > %s%s/cgroup.subtree_control", cgroot, kube[parent].rel);
		ck_assert_int_eq(r->status, 0);
		result_free(r);
	}
	kube_path(i, path);
	ck_assert_msg(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	kube_n++;
	if (max)
		cg_set_memory_max(path, max);
}

/* "{cgroup=...,pod_uid=...,container_id=...,qos=...,memacct_job=...,job_root=...}": the labels
 * of kube[@i], in the daemon's order */
static void kube_labels(int i, char *buf, size_t n)
{
	const struct kube_cg *c = &kube[i];
	size_t k = snprintf(buf, n, "{cgroup=\"%s\"", c->rel);

	if (c->pod[0])
		k += snprintf(buf + k, n - k, ",pod_uid=\"%s\"", c->pod);
	if (c->ctr[0])
		k += snprintf(buf + k, n - k, ",container_id=\"%s\"", c->ctr);
	if (c->qos)
		k += snprintf(buf + k, n - k, ",qos=\"%s\"", c->qos);
	if (c->pod[0])	/* the pod is the job, its own cgroup the job's (issue 45) */
		k += snprintf(buf + k, n - k, ",memacct_job=\"k8s/%s\"%s", c->pod,
			      c->ctr[0] ? "" : ",job_root=\"true\"");
	snprintf(buf + k, n - k, "}");
}

/* The value of @family's sample of kube[@i] (exactly its labels) in @m; NAN when none. */
static double kube_val(const char *m, const char *family, int i)
{
	char want[1200];
	const char *p;
	int k = snprintf(want, sizeof(want), "\n%s", family);

	kube_labels(i, want + k, sizeof(want) - k);
	strcat(want, " ");
	p = strstr(m, want);
	return p ? strtod(p + strlen(want), NULL) : NAN;
}

/* kube_val() that must exist */
static long long kube_must(const char *m, const char *family, int i)
{
	double v = kube_val(m, family, i);
	char l[900];

	kube_labels(i, l, sizeof(l));
	ck_assert_msg(!isnan(v), "no %s%s", family, l);
	return (long long)v;
}

/*
 * Start `$WORKLOADS/@cmd` in kube[@i] as kube_pids[@slot], held: its stdout
 * read up to its "ready" line. The value of its "truth @key".
 */
static long long kube_hold(int slot, int i, const char *cmd, const char *key)
{
	char line[256], want[80];
	long long v = -1;
	int out[2];
	FILE *f;
	pid_t w;

	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	w = fork();
	if (w == 0) {
		char c[1200];

		dup2(out[1], 1);
		snprintf(c, sizeof(c), "echo $$ > %s%s/cgroup.procs && exec %s/%s", cgroot,
			 kube[i].rel, workloads, cmd);
		execl("/bin/sh", "sh", "-c", c, (char *)NULL);
		_exit(127);
	}
	kube_pids[slot] = w;
	close(out[1]);
	f = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "truth %s %%lld", key);
	while (fgets(line, sizeof(line), f) && strncmp(line, "ready", 5))
		sscanf(line, want, &v);
	fclose(f);
	ck_assert_msg(v > 0, "%s printed no truth %s", cmd, key);
	return v;
}

/* assert_near()'s tolerance: 1% or 16 pages */
static long long kube_tol(long long want)
{
	return llabs(want) / 100 > (long long)SLACK ? llabs(want) / 100 : (long long)SLACK;
}

/* kube[@i]'s memory.stat reclaimable (active_file + inactive_file - file_dirty - file_writeback) */
static long long kube_stat_reclaimable(int i)
{
	char dir[KUBE_PATH_MAX];

	kube_path(i, dir);
	return stat_key_in(dir, "memory.stat", "active_file") +
	       stat_key_in(dir, "memory.stat", "inactive_file") -
	       stat_key_in(dir, "memory.stat", "file_dirty") -
	       stat_key_in(dir, "memory.stat", "file_writeback");
}

/* remove kube[@i], the last one made or removed below it */
static void kube_rm(int i)
{
	char path[KUBE_PATH_MAX];

	kube_path(i, path);
	ck_assert_msg(!rmdir(path), "rmdir %s: %s", path, strerror(errno));
}

/* a series of kube[@i] that must be gone from @m (its cgroup removed) */
static void kube_gone(const char *m, int i)
{
	char want[900];

	want[0] = '\n';
	strcpy(want + 1, "memacct_cgroup_info");
	kube_labels(i, want + strlen(want), sizeof(want) - strlen(want));
	ck_assert_msg(!strstr(m, want), "%s still published after its rmdir", want + 1);
}

START_TEST(test_kube_node)
{
	static const char *const uid[] = { "5f1c2b7e-0d3a-4e8b-9c21-7a6f0e4d1b01",
					   "9a0b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c02",
					   "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e03" };
	static const char tail[] = "4f2a9d1be7c35a6d8e0f1b2c3d4e5f60718293a4b5c6";	/* 44 */
	const char *cow = "memacct_cow_copied_bytes_total";
	char name[KUBE_PATH_MAX], slice_uid[3][40], id[4][72], *m;
	long long t1, t3, t4, locked, file_bytes, c1, c2, bpod, burst, best, pods, g, v, want;
	pid_t d;

	if (cgversion != 2) {
		SKIP_TEST("memory cgroups on v1 here: a kubelet's systemd-driver tree of a pure-v2 "
			  "node is built in the vmtest guest, never on this host's own hierarchy");
		return;
	}
	snprintf(name, sizeof(name), "%s/kubepods.slice", cgroot);
	if (!access(name, F_OK)) {
		SKIP_TEST("%s exists: a real kubelet's tree, which this test leaves alone", name);
		return;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(slice_uid[i], sizeof(slice_uid[i]), "%s", uid[i]);
		for (char *p = slice_uid[i]; *p; p++)
			if (*p == '-')
				*p = '_';
	}
	for (int i = 0; i < 4; i++) {
		snprintf(id[i], sizeof(id[i]), "%06x%014x%s", 0xc0ffe0 + i, 0x51ab0 + i, tail);
		ck_assert_uint_eq(strlen(id[i]), 64);
	}
	/* node allocatable on kubepods.slice; a Burstable pod of two containers
	 * with limits (the pod's memory.max their sum), a BestEffort pod (no
	 * limit anywhere), a Guaranteed pod right below kubepods.slice */
	kube_mk(K_PODS, -1, "kubepods.slice", "", "", NULL, 1536 * MiB);
	kube_mk(K_BURST, K_PODS, "kubepods-burstable.slice", "", "", "burstable", 0);
	kube_mk(K_BEST, K_PODS, "kubepods-besteffort.slice", "", "", "besteffort", 0);
	snprintf(name, sizeof(name), "kubepods-burstable-pod%s.slice", slice_uid[0]);
	kube_mk(K_BPOD, K_BURST, name, uid[0], "", "burstable", 512 * MiB);
	snprintf(name, sizeof(name), "cri-containerd-%s.scope", id[0]);
	kube_mk(K_C1, K_BPOD, name, uid[0], id[0], "burstable", 256 * MiB);
	snprintf(name, sizeof(name), "cri-containerd-%s.scope", id[1]);
	kube_mk(K_C2, K_BPOD, name, uid[0], id[1], "burstable", 256 * MiB);
	snprintf(name, sizeof(name), "kubepods-besteffort-pod%s.slice", slice_uid[1]);
	kube_mk(K_EPOD, K_BEST, name, uid[1], "", "besteffort", 0);
	snprintf(name, sizeof(name), "cri-containerd-%s.scope", id[2]);
	kube_mk(K_C3, K_EPOD, name, uid[1], id[2], "besteffort", 0);
	snprintf(name, sizeof(name), "kubepods-pod%s.slice", slice_uid[2]);
	kube_mk(K_GPOD, K_PODS, name, uid[2], "", "guaranteed", 128 * MiB);
	snprintf(name, sizeof(name), "cri-containerd-%s.scope", id[3]);
	kube_mk(K_C4, K_GPOD, name, uid[2], id[3], "guaranteed", 128 * MiB);

	d = start_daemon(NULL);
	ck_assert(d > 0);
	/* container 2 of the Burstable pod: 16 MiB mlocked, held */
	locked = kube_hold(0, K_C2, "mlock_steps mlock 16 600", "exit_locked_bytes");
	/* the BestEffort container: CoW, then a 32 MiB file of its own read, held */
	kube_path(K_C3, name);
	t3 = cow_fork_in(name, "8 1");
	snprintf(kube_file, sizeof(kube_file), "/var/tmp/memacct-kube-%d", (int)getpid());
	snprintf(name, sizeof(name), "explain_file_mmap %s 32 --seconds 600", kube_file);
	file_bytes = kube_hold(1, K_C3, name, "file_bytes");
	/* CoW in container 1 of the Burstable pod and in the Guaranteed one */
	kube_path(K_C1, name);
	t1 = cow_fork_in(name, "32 2");
	kube_path(K_C4, name);
	t4 = cow_fork_in(name, "16 1");
	collections_wait(2);	/* two collections */
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);

	/* memacct_cgroup_info: exactly the labels the path gives each level */
	for (int i = 0; i < KUBE_NCG; i++) {
		char want_l[1000];

		strcpy(want_l, "\nmemacct_cgroup_info");
		kube_labels(i, want_l + strlen(want_l), sizeof(want_l) - strlen(want_l));
		strcat(want_l, " 1\n");
		if (!strstr(m, want_l)) {
			char got[900];
			const char *p;

			snprintf(got, sizeof(got), "\nmemacct_cgroup_info{cgroup=\"%s\"", kube[i].rel);
			p = strstr(m, got);
			ck_abort_msg("no %s(published: %.*s)", want_l + 1,
				     p ? (int)strcspn(p + 1, "\n") : 4, p ? p + 1 : "none");
		}
		printf("  kube info %s", want_l + 1);
	}
	/* CoW: each container against its workload's truth; each pod, QoS
	 * slice and kubepods.slice the sum of what is below it */
	c1 = kube_must(m, cow, K_C1);
	assert_near("kube container 1 (burstable) cow_copied_bytes_total vs cow_fork", c1, t1);
	c2 = kube_must(m, cow, K_C2);
	assert_near("kube container 2 (burstable, mlock only) cow_copied_bytes_total", c2, 0);
	bpod = kube_must(m, cow, K_BPOD);
	printf("  kube burstable pod cow %lld = container 1 %lld + container 2 %lld\n", bpod,
	       c1, c2);
	ck_assert_int_eq(bpod, c1 + c2);
	burst = kube_must(m, cow, K_BURST);
	ck_assert_int_eq(burst, bpod);
	v = kube_must(m, cow, K_C3);
	assert_near("kube besteffort container cow_copied_bytes_total vs cow_fork", v, t3);
	best = kube_must(m, cow, K_EPOD);
	ck_assert_int_eq(best, v);
	ck_assert_int_eq(kube_must(m, cow, K_BEST), best);
	v = kube_must(m, cow, K_C4);
	assert_near("kube guaranteed container cow_copied_bytes_total vs cow_fork", v, t4);
	g = kube_must(m, cow, K_GPOD);
	ck_assert_int_eq(g, v);
	pods = kube_must(m, cow, K_PODS);
	printf("  kube kubepods.slice cow %lld = burstable %lld + besteffort %lld + guaranteed "
	       "pod %lld\n", pods, burst, best, g);
	ck_assert_int_eq(pods, burst + best + g);

	/* pinned: container 2's mlock (VmLck), its pod's and QoS slice's sum */
	v = kube_must(m, "memacct_mlocked_bytes", K_C2);
	printf("  kube container 2 mlocked: memacct %lld, VmLck %lld\n", v, locked);
	ck_assert_int_eq(v, locked);
	ck_assert_int_eq(kube_must(m, "memacct_pinned_bytes", K_C2), locked);
	want = kube_must(m, "memacct_pinned_bytes", K_C1) + locked;
	v = kube_must(m, "memacct_pinned_bytes", K_BPOD);
	printf("  kube burstable pod pinned %lld = its containers' %lld\n", v, want);
	ck_assert_int_eq(v, want);
	ck_assert_int_eq(kube_must(m, "memacct_pinned_bytes", K_BURST), want);

	/* reclaimable: the BestEffort container's file, against its memory.stat
	 * read now, and its pod's */
	want = kube_stat_reclaimable(K_C3);
	v = kube_must(m, "memacct_reclaimable_bytes", K_C3);
	printf("  kube besteffort container reclaimable: memacct %lld, memory.stat %lld, file "
	       "%lld\n", v, want, file_bytes);
	ck_assert_msg(llabs(v - want) <= kube_tol(want), "reclaimable %lld vs memory.stat %lld", v,
		      want);
	ck_assert_msg(v >= file_bytes - kube_tol(file_bytes), "reclaimable %lld below the file's %lld",
		      v, file_bytes);
	want = kube_stat_reclaimable(K_EPOD);
	v = kube_must(m, "memacct_reclaimable_bytes", K_EPOD);
	printf("  kube besteffort pod reclaimable: memacct %lld, memory.stat %lld\n", v, want);
	ck_assert_msg(llabs(v - want) <= kube_tol(want), "pod reclaimable %lld vs memory.stat %lld",
		      v, want);

	/* the limits the kubelet set: memory.max, none on the BestEffort pod */
	for (int i = K_PODS; i <= K_C4; i++) {
		char dir[KUBE_PATH_MAX];
		double lim = kube_val(m, "memacct_memory_limit_bytes", i);

		want = file_num(kube_path(i, dir), "memory.max");	/* -1: "max" */
		ck_assert_msg(want < 0 ? isnan(lim) : lim == want, "%s: memacct_memory_limit_bytes"
			      " %.0f, memory.max %lld", kube[i].rel, lim, want);
	}
	free(m);

	/* container 1 removed (its workload ended): its pod keeps its flows */
	kube_rm(K_C1);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	kube_gone(m, K_C1);
	v = kube_must(m, cow, K_BPOD);
	printf("  kube burstable pod cow after container 1 removed: %lld (before %lld)\n", v, bpod);
	ck_assert_int_eq(v, bpod);
	ck_assert_int_eq(kube_must(m, cow, K_BURST), burst);
	free(m);

	/* the BestEffort pod removed (the kubelet stops its container, then
	 * removes both): the QoS slice keeps its flows; the Guaranteed pod
	 * too: kubepods.slice keeps them */
	kill(kube_pids[1], SIGTERM);
	waitpid(kube_pids[1], NULL, 0);
	kube_pids[1] = 0;
	kube_rm(K_C3);
	kube_rm(K_EPOD);
	kube_rm(K_C4);
	kube_rm(K_GPOD);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	kube_gone(m, K_C3);
	kube_gone(m, K_EPOD);
	kube_gone(m, K_C4);
	kube_gone(m, K_GPOD);
	v = kube_must(m, cow, K_BEST);
	printf("  kube besteffort slice cow after its pod removed: %lld (before %lld)\n", v, best);
	ck_assert_int_eq(v, best);
	v = kube_must(m, cow, K_PODS);
	printf("  kube kubepods.slice cow after two pods removed: %lld (before %lld)\n", v, pods);
	ck_assert_int_eq(v, pods);
	free(m);

	/* a daemon restart: no counter starts again */
	ck_assert_int_eq(WEXITSTATUS(stop_daemon(d, SIGTERM)), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
	collections_wait(2);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(kube_must(m, cow, K_BPOD), bpod);
	ck_assert_int_eq(kube_must(m, cow, K_BEST), best);
	ck_assert_int_eq(kube_must(m, cow, K_PODS), pods);
	ck_assert_int_eq(kube_must(m, "memacct_mlocked_bytes", K_C2), locked);
	printf("  kube after a restart: burstable pod %lld, besteffort slice %lld, kubepods.slice "
	       "%lld, container 2 mlocked %lld\n", bpod, best, pods, locked);
	free(m);
	stop_daemon(d, SIGTERM);
	/* teardown: the held workload, the tree that is left, the file */
}
END_TEST

Suite *daemon_suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_swept("daemon", 180);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_metrics_parse);
	tcase_add_test(tc, test_kill9_restart_continues);
	tcase_add_test(tc, test_http_abuse);
	tcase_add_test(tc, test_cgroup_churn);
	tcase_add_test(tc, test_two_daemons_refused);
	suite_add_tcase(s, tc);
	tc = tcase_swept("forecast", 150);	/* as the oom suite's: a minute, paced by the clock */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_daemon_oom_forecast);
	suite_add_tcase(s, tc);
		tc = tcase_swept("faulthook", 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_perf_hook_pinned);
	suite_add_tcase(s, tc);
		tc = tcase_swept("upgrade", 180);	/* three starts, two loads: a minute under TCG */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bss_layout_upgrade);
	suite_add_tcase(s, tc);
		tc = tcase_swept("churn", 180);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_churn_keeps_truth);
	suite_add_tcase(s, tc);
		tc = tcase_swept("counters", 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_parent_keeps_removed_children);
	tcase_add_test(tc, test_moved_process_keeps_flows);
	tcase_add_test(tc, test_self_move_keeps_flows);
	tcase_add_test(tc, test_standard_families);
	tcase_add_test(tc, test_limit_families);
	tcase_add_test(tc, test_prometheus_no_reset);
	tcase_add_test(tc, test_job_rules);
	tcase_add_test(tc, test_job_two_nodes);
	tcase_add_test(tc, test_dashboard_queries);
	tcase_add_test(tc, test_kube_names);
	suite_add_tcase(s, tc);
		/* 6 restarts here, ~9 s each; 1 in the TCG guest, ~2 min */
	tc = tcase_swept("restarts", 600);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_restart_churn_never_lower);
	suite_add_tcase(s, tc);
		tc = tcase_swept("kube", 240);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_kube_node);
	suite_add_tcase(s, tc);
	tc = tcase_swept("http-limits", 120);
	tcase_set_tags(tc, HOST_ONLY_TAG);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_slowloris);
	tcase_add_test(tc, test_listen_failure_leaves_nothing);
	tcase_add_test(tc, test_second_kernel_side_warned);
	tcase_add_test(tc, test_http_host_and_absolute_form);
	tcase_add_test(tc, test_metrics_gzip);
	tcase_add_test(tc, test_listen_ipv6);
	tcase_add_test(tc, test_metrics_allow_deny);
	suite_add_tcase(s, tc);
	tc = tcase_swept("hardening", 120);
	tcase_set_tags(tc, HOST_ONLY_TAG);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_healthz_age_under_hup_storm);
	tcase_add_test(tc, test_hup_storm_coalesced);
	tcase_add_test(tc, test_low_fd_limit);
	tcase_add_test(tc, test_url_exact);
	tcase_add_test(tc, test_pipelined_bounded);
	suite_add_tcase(s, tc);
		tc = tcase_swept("pins", 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_detach_spares_foreign_pins);
	tcase_add_test(tc, test_filter_spellings);
	tcase_add_test(tc, test_pid1_present);
	tcase_add_test(tc, test_process_walk);
	tcase_add_test(tc, test_comm_sums_every_process);
	tcase_add_test(tc, test_comm_families);
	tcase_add_test(tc, test_healthz_kernel_side);
	tcase_add_test(tc, test_sd_notify);
	tcase_add_test(tc, test_json_log_logrotate);
	tcase_add_test(tc, test_json_log_full_disk);
	tcase_add_test(tc, test_json_log_report);
	tcase_add_test(tc, test_daemon_oom_postmortem);
	tcase_add_test(tc, test_daemon_oom_limit_parent_existing);
	tcase_add_test(tc, test_daemon_memory_parts);
	tcase_add_test(tc, test_daemon_readonly_root);
	suite_add_tcase(s, tc);
		tc = tcase_swept("rss", 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rss_small_processes_exact);
	tcase_add_test(tc, test_deep_cgroup_seen);
	tcase_add_test(tc, test_cgroup_past_path_max);
	suite_add_tcase(s, tc);
	return s;
}
