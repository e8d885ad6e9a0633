// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_daemon.c - `memacct daemon`: /metrics parsed by promtool,
 * counters continuing across kill -9 and restart (ground truth of cow_fork),
 * HTTP abuse (1,000 concurrent clients, malformed and slow requests), cgroup
 * churn. Every daemon binds 127.0.0.1 on a port derived from our pid and
 * pins under its own bpffs directory; nothing leaves the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "integration.h"

static int port;
static char pin_dir[128];
static char cg[256];	/* a test's own cgroup; removed by teardown() too */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

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

/* One raw request; the whole response (malloc'd) or NULL. */
static char *http_raw(const char *req, size_t *len_out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int fd = connect_local();
	struct timeval tv = { 10, 0 };
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
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
	if (len_out)
		*len_out = len;
	return buf;
}

/* GET @path; the body of a 200 response (malloc'd) or NULL. */
static char *http_get(const char *path, const char *accept)
{
	char req[512], *resp, *body;

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
}

#define DAEMON_LOG "/tmp/memacct-daemon-test.log"

static pid_t start_daemon(const char *extra)
{
	char cmd[1024];
	pid_t pid;

	snprintf(cmd, sizeof(cmd),
		 "exec %s daemon --listen 127.0.0.1:%d --interval 500ms --pin-path %s %s "
		 ">>" DAEMON_LOG " 2>&1", memacct, port, pin_dir, extra ? extra : "");
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* ready when /healthz answers; bounded */
	for (int i = 0; i < 100; i++) {
		char *b = http_get("/healthz", NULL);

		if (b) {
			free(b);
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		sleep_ms(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int stop_daemon(pid_t pid, int sig)
{
	int st = 0;

	kill(pid, sig);
	waitpid(pid, &st, 0);
	return st;
}

/*
 * skip_no_http() - whether this memacct cannot serve HTTP at all (the static
 * binary of the vmtest guests links tests/vmtest/mhd_stub.c, which says so):
 * then @test (its __func__) is skipped with the reason printed. Found out once, by starting
 * a daemon; any other failure to start is left to the test to fail on.
 */
static bool skip_no_http(const char *test)
{
	static int state;	/* 0 unknown, 1 serves, -1 cannot */

	if (!state) {
		struct stat st;
		off_t from = stat(DAEMON_LOG, &st) ? 0 : st.st_size;
		pid_t d = start_daemon(NULL);
		char line[512];
		FILE *f;

		state = 1;
		if (d > 0) {
			stop_daemon(d, SIGTERM);
		} else if ((f = fopen(DAEMON_LOG, "r"))) {
			/* what it said, for the test that will fail on it */
			fseek(f, from, SEEK_SET);
			while (fgets(line, sizeof(line), f)) {
				if (strstr(line, "built without HTTP"))
					state = -1;
				printf("  daemon: %s", line);
			}
			fclose(f);
		}
		detach_all();
	}
	if (state < 0)
		skip_test(test, "this memacct was built without HTTP (its daemon cannot serve; "
			  DAEMON_LOG ")");
	return state < 0;
}


static void setup(void)
{
	port = 20000 + getpid() % 20000;
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/memacct-test-%d", (int)getpid());
	detach_all();
}

static void teardown(void)
{
	detach_all();
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
	char *prom, *om, *resp;
	pid_t d;

	if (skip_no_http(__func__)) {
		result_free(which);
		return;
	}

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
	ck_assert_ptr_nonnull(strstr(prom, "memacct_bpf_runs_total{program=\"page_fault_user\"}"));
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
	long long want = 0, got = -1;
	pid_t d;

	if (skip_no_http(__func__))
		return;

	snprintf(cg, sizeof(cg), "%s/memacct-dtest-%d", cgroot, (int)getpid());
	ck_assert_int_eq(mkdir(cg, 0755), 0);
	d = start_daemon(NULL);
	ck_assert(d > 0);
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
		want += v;
	}
	want += cow_fork_in(cg, "16 1");
	d = start_daemon(NULL);
	ck_assert_msg(d > 0, "restarted daemon did not re-attach");
	want += cow_fork_in(cg, "16 2");
	sleep_ms(1200);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(label, sizeof(label), "memacct_cow_copied_bytes_total{cgroup=\"/memacct-dtest-%d\"}",
		 (int)getpid());
	got = sample(m, label);
	free(m);
	assert_near("cow_copied_bytes_total across kill -9 and restart", got, want);
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

/* The daemon's own pid: the child of our sh -c exec is the daemon itself. */
START_TEST(test_http_abuse)
{
	struct rlimit rl = { 4096, 4096 };
	enum { N = 1000 };
	static int fds[N];
	static char got200[N];
	char *m1, *m2, big[70000];
	long long runs1, runs2;
	int ok = 0, slow[8];
	long rss;
	pid_t d;

	if (skip_no_http(__func__))
		return;

	setrlimit(RLIMIT_NOFILE, &rl);
	d = start_daemon("--bpf-stats");
	ck_assert(d > 0);
	m1 = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m1);
	runs1 = sample(m1, "memacct_bpf_runs_total{program=\"page_fault_user\"}");
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

		if (fds[i] < 0)
			continue;
		setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while ((n = read(fds[i], buf, sizeof(buf))) > 0) {
			if (first && n >= 12 && !strncmp(buf + 9, "200", 3))
				got200[i] = 1;
			first = 0;
		}
		close(fds[i]);
		ok += got200[i];
	}
	rss = rss_kib(d);
	ck_assert_msg(ok >= N * 99 / 100, "only %d of %d concurrent scrapes answered", ok, N);
	ck_assert_msg(rss > 0 && rss < 64 * 1024, "daemon RSS %ld KiB after the storm", rss);
	/* still answering, and the BPF side still counting */
	sleep_ms(1200);
	m2 = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m2);
	runs2 = sample(m2, "memacct_bpf_runs_total{program=\"page_fault_user\"}");
	ck_assert_msg(runs2 > runs1, "page_fault_user runs %lld then %lld", runs1, runs2);
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
	long long cg_fill0 = -1;
	double fill0, fill1;
	pid_t d;

	if (skip_no_http(__func__))
		return;

	snprintf(prefix, sizeof(prefix), "memacct-churn-%d-", (int)getpid());
	d = start_daemon(NULL);
	ck_assert(d > 0);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	{
		char *p = strstr(m, "memacct_map_fill_ratio{map=\"cgroups\"} ");

		ck_assert_ptr_nonnull(p);
		fill0 = strtod(p + strlen("memacct_map_fill_ratio{map=\"cgroups\"} "), NULL);
		cg_fill0 = 0;
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
	/* two collections drop stale entries; a third shows it */
	sleep_ms(2000);
	m = http_get("/metrics", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strstr(m, prefix), "stale series of a removed cgroup");
	{
		char *p = strstr(m, "memacct_map_fill_ratio{map=\"cgroups\"} ");

		ck_assert_ptr_nonnull(p);
		fill1 = strtod(p + strlen("memacct_map_fill_ratio{map=\"cgroups\"} "), NULL);
	}
	ck_assert_msg(fill1 <= fill0 + 10.0 / 8192, "cgroups map fill %g -> %g", fill0, fill1);
	ck_assert_int_ge(cg_fill0, 0);
	ck_assert_msg(rss_kib(d) < 64 * 1024, "daemon RSS %ld KiB", rss_kib(d));
	free(m);
	stop_daemon(d, SIGTERM);
}
END_TEST

START_TEST(test_two_daemons_refused)
{
	struct result *r;
	pid_t d;

	if (skip_no_http(__func__))
		return;
	d = start_daemon(NULL);

	ck_assert(d > 0);
	r = run_cmd("%s daemon --listen 127.0.0.1:%d --pin-path %s 2>&1", memacct, port + 1, pin_dir);
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

Suite *daemon_suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_metrics_parse);
	tcase_add_test(tc, test_kill9_restart_continues);
	tcase_add_test(tc, test_http_abuse);
	tcase_add_test(tc, test_cgroup_churn);
	tcase_add_test(tc, test_two_daemons_refused);
	suite_add_tcase(s, tc);
	return s;
}
