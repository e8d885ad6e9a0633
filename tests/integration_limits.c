// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_limits.c - no silent limits (issue #26 item 5): each capacity
 * driven to its limit, and what it dropped found in the text, the JSON and,
 * for the daemon, a metric (docs/metrics.md "Capacities and what is reported
 * at each" lists every capacity and the test of each). The ground truth is
 * the kernel's own (the cgroup directories there are, the mappings
 * /proc/PID/smaps says are locked) or the workload's (the processes it made,
 * the UMEMs it registered, the connections it holds). Every cgroup, pin
 * directory and file is named with our PID.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
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

static char cg[256], pin[128], log_path[128], json_path[128], out_path[128];
static int port;
static pid_t daemon_pid, work_pid;

static void setup(void)
{
	int me = (int)getpid();

	snprintf(cg, sizeof(cg), "%s/memacct-limits-%d", cgroot, me);
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/memacct-limits-%d", me);
	snprintf(log_path, sizeof(log_path), "/tmp/memacct-limits-%d.log", me);
	snprintf(json_path, sizeof(json_path), "/tmp/memacct-limits-%d.json", me);
	snprintf(out_path, sizeof(out_path), "/tmp/memacct-limits-%d.out", me);
	ck_assert_msg(!mkdir(cg, 0755) || errno == EEXIST, "mkdir %s: %s", cg, strerror(errno));
}

static void teardown(void)
{
	struct result *r;

	if (work_pid > 0) {
		kill(work_pid, SIGKILL);
		waitpid(work_pid, NULL, 0);
		work_pid = 0;
	}
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGINT);
		waitpid(daemon_pid, NULL, 0);
		daemon_pid = 0;
	}
	r = run_cmd("%s detach --pin-path %s >/dev/null 2>&1; rmdir %s 2>/dev/null; "
		    "rm -f %s %s %s", memacct, pin, cg, log_path, json_path, out_path);
	result_free(r);
}

/* The daemon, @env before it ("VAR=N") and @opt after ("" or options),
 * every second, logging JSON lines; ready once /healthz answers (its first
 * collection is published). */
static pid_t daemon_start(const char *env, const char *opt)
{
	char cmd[1024];

	port = free_port();
	snprintf(cmd, sizeof(cmd), "exec env %s %s daemon --listen 127.0.0.1:%d --pin-path %s "
		 "--interval 1s --json-log %s %s >>%s 2>&1", env, memacct, port, pin, json_path,
		 opt, log_path);
	return spawn_daemon(cmd, port);
}

/* The value of the sample of @family with no labels in @text, or -1. */
static long long sample(const char *text, const char *family)
{
	size_t n = strlen(family);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, family, n) && l[n] == ' ')
			return atoll(l + n + 1);
	return -1;
}

/* The value of the sample of @family whose labels contain @label, or -1. */
static long long sample_l(const char *text, const char *family, const char *label)
{
	size_t n = strlen(family);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *eol = strchr(l, '\n'), *c = strstr(l, label);

		if (!strncmp(l, family, n) && l[n] == '{' && c && (!eol || c < eol))
			return atoll(strchr(c, ' ') + 1);
	}
	return -1;
}

/* Samples of @family in @text whose cgroup label is not the root's. */
static int samples_below_root(const char *text, const char *family)
{
	size_t n = strlen(family);
	int k = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *eol = strchr(l, '\n'), *c;

		if (strncmp(l, family, n) || l[n] != '{')
			continue;
		c = strstr(l, "cgroup=\"");
		k += c && (!eol || c < eol) && strncmp(c, "cgroup=\"/\"", 10);
	}
	return k;
}

/* Directories directly below the memory hierarchy's root now. */
static long top_level_cgroups(void)
{
	DIR *d = opendir(cgroot);
	struct dirent *de;
	long n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += de->d_type == DT_DIR && de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The last line of @path that parses as a JSON object, or NULL. */
static json_t *last_json_line(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	json_t *last = NULL;

	while (f && getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);

		if (o && json_is_object(o)) {
			json_decref(last);
			last = o;
		} else {
			json_decref(o);
		}
	}
	free(line);
	if (f)
		fclose(f);
	return last;
}

static bool file_has(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool seen = false;

	while (f && !seen && fgets(line, sizeof(line), f))
		seen = strstr(line, a) && strstr(line, b);
	if (f)
		fclose(f);
	return seen;
}

/*
 * The daemon's cgroup walk at its limit (COLLECT_MAX_CGROUPS, 100,000: more
 * cgroup directories than a test can make, so the test knob
 * MEMACCT_WALK_CGROUPS_MAX=1 lowers it to the root alone). Breadth first, the
 * root is walked and every directory below it is found and refused, with its
 * subtree: memacct_cgroups_unwalked, the JSON log's cgroups_unwalked and the
 * count of directories in the root agree exactly, no cgroup but the root has
 * a series or a JSON entry, and stderr says so. The JSON log had no such
 * key, and the walk stopped at 65,536 (its array doubled past
 * COLLECT_MAX_CGROUPS) while stderr named 100,000.
 */
START_TEST(test_walk_full)
{
	long before = -1, after = -2;
	long long metric = -1, logged = -1;
	json_t *o = NULL, *cgs;
	struct result *r = NULL;

	daemon_pid = daemon_start("MEMACCT_WALK_CGROUPS_MAX=1", "");
	ck_assert_msg(daemon_pid > 0, "the daemon did not start (%s)", log_path);
	/* other runners make and remove cgroups at the root: a collection
	 * between two equal counts is taken as the count's */
	for (int i = 0; i < 10 && before != after; i++) {
		before = top_level_cgroups();
		sleep_ms(2500);		/* a collection began and ended */
		if (r)
			result_free(r);
		r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
		json_decref(o);
		o = last_json_line(json_path);
		after = top_level_cgroups();
	}
	ck_assert_msg(before == after, "the root's directories kept changing: %ld, %ld", before,
		      after);
	ck_assert_int_eq(r->status, 0);
	ck_assert_ptr_nonnull(o);
	metric = sample(r->out, "memacct_cgroups_unwalked");
	logged = jint(o, "cgroups_unwalked");
	printf("  walk of 1: %ld directories below %s; memacct_cgroups_unwalked %lld, JSON log "
	       "cgroups_unwalked %lld\n", before, cgroot, metric, logged);
	ck_assert_int_ge(before, 1);	/* ours at least */
	ck_assert_int_eq(metric, before);
	ck_assert_int_eq(logged, before);
	ck_assert_int_ge(sample_l(r->out, "memacct_usage_bytes", "cgroup=\"/\""), 0);
	ck_assert_int_eq(samples_below_root(r->out, "memacct_usage_bytes"), 0);
	cgs = json_object_get(o, "cgroups");
	ck_assert_int_eq(json_array_size(cgs), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cgs, 0), "cgroup")), "/");
	ck_assert_msg(file_has(log_path, "not walked", "more than 1 cgroups"),
		      "no warning naming the walk's bound in %s", log_path);
	/* the JSON log's lines, with the new key, are what the schema says */
	if (!access("/usr/bin/python3", X_OK)) {
		struct result *v = run_cmd("/usr/bin/python3 %s/validate_json.py "
					   "%s/../docs/memacct.report.v1.schema.json %s 2>&1",
					   testsdir, testsdir, json_path);

		ck_assert_msg(v->status == 0, "--json-log %s: %s", json_path, v->out);
		result_free(v);
	}
	json_decref(o);
	result_free(r);
}
END_TEST

/*
 * audit's evidence at its limit (MAX_EVIDENCE, 16 locked mappings listed per
 * process): `mlock_steps maps 4` holds 64 locked mappings of 64 KiB side by
 * side (and /proc/PID/smaps agrees). The first 16 are listed;
 * locked_mappings_unlisted is 48, locked_mappings_unlisted_bytes 3 MiB, and
 * the text says "48 more locked mappings (3.00 MiB locked)". They were
 * left out without a word.
 */
/* A TCP connection to the daemon, or -1. */
static int connect_daemon(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * What the walk left out keeps its flows: a cgroup past the walk's limit
 * (MEMACCT_WALK_CGROUPS_MAX=1) is in no series, but the kernel side keeps
 * counting it. Its `cgroups` map entry (the exited processes' flows) was
 * deleted after two collections as a removed cgroup's would be, and those
 * flows were gone without a word; now nothing is deleted after a walk that
 * left cgroups out. cow_fork's copies in our cgroup, then 4 collections at
 * the limit, then a daemon without it (the same kernel side): the cgroup's
 * memacct_cow_copied_bytes_total is the workload's truth.
 */
START_TEST(test_walk_full_keeps_flows)
{
	char label[300];
	long long want, got;
	struct result *r;

	daemon_pid = daemon_start("MEMACCT_WALK_CGROUPS_MAX=1", "");
	ck_assert_msg(daemon_pid > 0, "the daemon did not start (%s)", log_path);
	r = run_cmd("sh -c 'echo $$ > %s/cgroup.procs && exec %s/cow_fork 8 2'", cg, workloads);
	ck_assert_int_eq(r->status, 0);
	want = truth(r, "child_cow_bytes") + truth(r, "parent_cow_bytes");
	result_free(r);
	sleep_ms(4500);		/* 4 collections with our cgroup out of the walk */
	kill(daemon_pid, SIGINT);
	waitpid(daemon_pid, NULL, 0);
	daemon_pid = daemon_start("", "");	/* the kernel side it left pinned */
	ck_assert_msg(daemon_pid > 0, "the daemon did not start again (%s)", log_path);
	sleep_ms(1500);
	r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
	snprintf(label, sizeof(label), "cgroup=\"%s\"", cg + strlen(cgroot));
	got = sample_l(r->out, "memacct_cow_copied_bytes_total", label);
	result_free(r);
	printf("  cow_fork in a cgroup out of the walk for 4 collections, then walked: "
	       "memacct_cow_copied_bytes_total %lld, truth %lld\n", got, want);
	assert_near("cow_copied_bytes_total of a cgroup the walk left out", got, want);
}
END_TEST

/*
 * The daemon's HTTP connection table at its limit (http.c: 2,000 connections
 * taken, and from 1,500 open the longest waiting for a request are shut, each
 * after 0.5 s at least, so that a scraper always gets in): 1,600 connections
 * that send half a request and wait. Exactly 101 are shut for room (1,499
 * stay), counted in memacct_http_connections_shut_total{reason="table_full"}
 * and said on stderr; none yet as idle (5 s); a scrape is answered meanwhile.
 * Those shut used to be counted nowhere. On the host only (HOST_ONLY_TAG):
 * the table is memacct's and libmicrohttpd's, the same on every kernel,
 * and its 0.5 s and 5 s limits against a scrape 2.5 s after the connects
 * do not hold under TCG beside CI's other steps (96 of 101 shut by then in
 * the v2 guest, 100 twice before).
 */
START_TEST(test_http_table_full)
{
	enum { N = 1600, KEPT = 1499 };
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n";
	static int fds[N];
	long long full, idle;
	struct result *r;
	struct rlimit rl;
	struct timespec t0, t1;
	long long waited_ms;
	int opened = 0;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	ck_assert_msg(rl.rlim_cur >= N + 100, "RLIMIT_NOFILE %ld too low", (long)rl.rlim_cur);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	daemon_pid = daemon_start("", "");
	ck_assert_msg(daemon_pid > 0, "the daemon did not start (%s)", log_path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++) {
		fds[i] = connect_daemon();
		if (fds[i] >= 0 &&
		    send(fds[i], req, sizeof(req) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
			opened++;
	}
	sleep_ms(2500);		/* shut for room after 0.5 s; a collection since */
	r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited_ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	ck_assert_int_eq(r->status, 0);
	full = sample_l(r->out, "memacct_http_connections_shut_total",
			"reason=\"table_full\"");
	idle = sample_l(r->out, "memacct_http_connections_shut_total", "reason=\"idle\"");
	printf("  %d connections waiting for a request: table_full %lld, idle %lld\n", opened,
	       full, idle);
	result_free(r);
	ck_assert_int_eq(opened, N);
	ck_assert_int_eq(full, N - KEPT);
	/* none idle yet: the first connection waited under the 5 s idle limit
	 * by the scrape (2.6 s here); when the connects alone took longer
	 * (335 shut as idle once under TCG, rightly): no claim then */
	if (waited_ms < 4500)
		ck_assert_msg(idle == 0, "idle %lld after %lld ms", idle, waited_ms);
	ck_assert_msg(file_has(log_path, "shut for room in the connection table",
			       "memacct_http_connections_shut_total"),
		      "no warning about connections shut in %s", log_path);
}
END_TEST

START_TEST(test_audit_evidence_full)
{
	char cmd[1024], line[256], want[128];
	long long n = 0, rest_kb = 0, kb, maps = 0;
	struct result *r;
	json_t *p = NULL, *c, *q;
	size_t i, j;
	FILE *f;
	int pid = 0;

	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s/mlock_steps maps 4 60 "
		 ">%s 2>&1", cg, workloads, out_path);
	work_pid = spawn_sh(cmd);
	for (int t = 0; t < 200 && !pid; t++) {
		f = fopen(out_path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "truth locked_mappings %lld", &maps) != 1 &&
			    sscanf(line, "ready %d", &pid) == 1)
				break;
		if (f)
			fclose(f);
		if (!pid)
			sleep_ms(50);
	}
	ck_assert_msg(pid > 0, "mlock_steps did not get ready (%s)", out_path);
	/* the truth: smaps' mappings with Locked > 0, in order */
	snprintf(cmd, sizeof(cmd), "/proc/%d/smaps", pid);
	f = fopen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Locked: %lld kB", &kb) == 1 && kb > 0 && ++n > 16)
			rest_kb += kb;
	fclose(f);
	printf("  mlock_steps maps 4: %lld locked mappings; smaps: %lld, %lld KiB past the 16th\n",
	       maps, n, rest_kb);
	ck_assert_int_eq(maps, 64);
	ck_assert_int_eq(n, maps);
	ck_assert_int_eq(rest_kb, (maps - 16) * 64);

	r = run_cmd("%s -j audit --cgroup %s --pinned-cap 1M", memacct, cg);
	ck_assert_int_eq(r->status, 1);
	ck_assert_ptr_nonnull(r->report);
	json_array_foreach(json_object_get(r->report, "cgroups"), i, c)
		json_array_foreach(json_object_get(c, "processes"), j, q)
			if (jint(q, "pid") == pid)
				p = q;
	ck_assert_ptr_nonnull(p);
	printf("  audit -j: %zu listed, locked_mappings_unlisted %lld (%lld bytes)\n",
	       json_array_size(json_object_get(p, "locked_mappings")),
	       jint(p, "locked_mappings_unlisted"), jint(p, "locked_mappings_unlisted_bytes"));
	ck_assert_int_eq(json_array_size(json_object_get(p, "locked_mappings")), 16);
	ck_assert_int_eq(jint(p, "locked_mappings_unlisted"), n - 16);
	ck_assert_int_eq(jint(p, "locked_mappings_unlisted_bytes"), rest_kb * 1024);
	result_free(r);

	r = run_cmd("%s audit --cgroup %s --pinned-cap 1M", memacct, cg);
	ck_assert_int_eq(r->status, 1);
	snprintf(want, sizeof(want), "pid %d: %lld more locked mapping%s (", pid, n - 16,
		 n - 16 == 1 ? "" : "s");
	ck_assert_msg(strstr(r->out, want), "no '%s' in:\n%s", want, r->out);
	printf("  %.*s\n", (int)strcspn(strstr(r->out, want), "\n"), strstr(r->out, want));
	result_free(r);
}
END_TEST

/*
 * The argument lists of fixed size: audit takes 64 --cgroup, the daemon 32
 * --cgroup-filter. One more is a usage error (exit 2) naming the bound,
 * never an argument dropped; exactly as many is taken.
 */
START_TEST(test_argument_limits)
{
	char args[65 * 300], *o;
	struct result *r;

	o = args;
	for (int i = 0; i < 65; i++)
		o += sprintf(o, " --cgroup %s", cg);
	r = run_cmd("%s audit%s 2>&1", memacct, args);
	printf("  audit with 65 --cgroup: exit %d, %s", r->status, r->out);
	ck_assert_int_eq(r->status, 2);
	ck_assert_ptr_nonnull(strstr(r->out, "at most 64 --cgroup"));
	result_free(r);
	o = args;
	for (int i = 0; i < 64; i++)
		o += sprintf(o, " --cgroup %s", cg);
	r = run_cmd("%s audit%s >/dev/null 2>&1", memacct, args);
	ck_assert_msg(r->status == 0, "audit with 64 --cgroup: exit %d", r->status);
	result_free(r);

	o = args;
	for (int i = 0; i < 33; i++)
		o += sprintf(o, " --cgroup-filter /f%d", i);
	r = run_cmd("%s daemon --listen 127.0.0.1:1 --pin-path %s%s 2>&1", memacct, pin, args);
	printf("  daemon with 33 --cgroup-filter: exit %d, %s", r->status, r->out);
	ck_assert_int_eq(r->status, 2);
	ck_assert_ptr_nonnull(strstr(r->out, "--cgroup-filter: at most 32"));
	result_free(r);
}
END_TEST

/* `dma_pin 1 0 0` told "many N 0 0": N AF_XDP sockets of 1 MiB UMEM each,
 * kept open until it exits; under `memacct run` when @run is set. */
static struct result *umems(bool run, const char *json, int n)
{
	return run_cmd("%s%s%s sh -c \"printf 'many %d 0 0\\n' | %s/dma_pin 1 0 0\" 2>&1",
		       run ? memacct : "", run ? json : "", run ? " run --dma-pins on --" : "",
		       n, workloads);
}

/*
 * A process's DMA ranges at their limit (MEMACCT_DMA_RANGES, 4 ranges pinned
 * by a syscall that names them, AF_XDP XDP_UMEM_REG): 6 UMEMs of 1 MiB in
 * one process. All 6 MiB are counted; the 2 ranges past the 4 slots are
 * dma_range_slots_full in the JSON, the WARNING line and, from a daemon's
 * kernel side, memacct_events_dropped_total{reason="dma_range_slots_full"}.
 * 4 UMEMs: none. Those 2 ranges were left unnamed without a word.
 */
/*
 * CoW by mapping past a process's 128 slots (issue 42): a worker copies
 * k + 1 pages in each of 200 mappings of its parent (cow_maps --slots 200:
 * 20,100 pages). At most 128 entries, none over its mapping's truth, the
 * batches that found no slot counted (cow_map_full, a NOTE: not lost) and
 * the rest of the copies unattributed, not lost: the entries and the
 * unattributed bytes add up to the worker's CoW. The larger mappings,
 * copied last, take the slots of smaller ones: at least half of the bytes
 * stay attributed, where the first 128 mappings alone would hold 41%
 * (57-60% in 5 runs here, 2026-11-30).
 */
START_TEST(test_cow_maps_slots_full)
{
	struct result *r = run_cmd("%s -j run -- %s/cow_maps 1 --slots 200 2>&1", memacct,
				   workloads);
	json_t *p, *maps, *e;
	long long all, sum = 0, drops;
	size_t i;
	char key[64];

	ck_assert_int_eq(r->status, 0);
	if (!kernel_at_least(5, 17)) {
		SKIP_TEST("no bpf_find_vma() before 5.17: nothing attributed (test_cow_maps)");
		result_free(r);
		return;
	}
	p = proc_by_pid(r, truth(r, "worker_0"));
	ck_assert_ptr_nonnull(p);
	maps = json_object_get(p, "cow_by_mapping");
	all = jint(p, "cow_copied_bytes") + jint(p, "cow_file_copied_bytes");
	ck_assert_msg(all >= truth(r, "slots_pages_total") * (long long)PAGE,
		      "worker CoW %lld < truth %lld pages", all, truth(r, "slots_pages_total"));
	ck_assert_int_le(json_array_size(maps), 128);
	json_array_foreach(maps, i, e) {
		long long start = jint(e, "start"), bytes = jint(e, "bytes");

		sum += bytes;
		for (int k = 0; k < 200; k++) {
			snprintf(key, sizeof(key), "slot_start_%d", k);
			if (truth(r, key) == start)
				ck_assert_msg(bytes <= (k + 1) * (long long)PAGE,
					      "mapping %d: %lld bytes, truth %lld", k, bytes,
					      (k + 1) * (long long)PAGE);
		}
	}
	ck_assert_int_eq(sum + jint(p, "cow_by_mapping_unattributed_bytes"), all);
	drops = jint(json_object_get(r->report, "dropped_events_by_cause"), "cow_map_full");
	printf("  200 mappings: %zu entries, %lld of %lld bytes attributed, cow_map_full %lld\n",
	       json_array_size(maps), sum, all, drops);
	ck_assert_int_gt(drops, 0);
	/* not lost: the copies are counted, their mapping is not */
	ck_assert_int_eq(jint(r->report, "dropped_events"), 0);
	ck_assert_msg(sum * 2 >= all, "only %lld of %lld bytes attributed", sum, all);
	result_free(r);

	r = run_cmd("%s run -- %s/cow_maps 1 --slots 200 2>&1", memacct, workloads);
	ck_assert_msg(strstr(r->out, "batches of CoW copies in more mappings than memacct keeps") &&
		      !strstr(r->out, "could not be recorded"), "no NOTE line, or a WARNING:\n%.2000s",
		      r->out);
	result_free(r);
}
END_TEST

START_TEST(test_dma_range_slots_full)
{
	struct result *r = umems(true, " -j", 4);
	long long before, after;
	json_t *p = NULL, *q;
	size_t i;

	if (strstr(r->out, "skip ")) {
		SKIP_TEST("dma_pin cannot pin here: %.500s", r->out);
		result_free(r);
		return;
	}
	ck_assert_ptr_nonnull(r->report);
	ck_assert_int_eq(jint(json_object_get(r->report, "dropped_events_by_cause"),
			      "dma_range_slots_full"), 0);
	result_free(r);

	r = umems(true, " -j", 6);
	ck_assert_ptr_nonnull(r->report);
	json_array_foreach(json_object_get(r->report, "processes"), i, q)
		if (!strcmp(json_string_value(json_object_get(q, "comm")), "dma_pin"))
			p = q;
	ck_assert_ptr_nonnull(p);
	printf("  6 UMEMs: dma_pinned_peak %lld (truth %lld pages), dma_range_slots_full %lld\n",
	       jint(p, "dma_pinned_peak_bytes"), truth(r, "many_pages"),
	       jint(json_object_get(r->report, "dropped_events_by_cause"),
		    "dma_range_slots_full"));
	ck_assert_int_eq(jint(p, "dma_pinned_peak_bytes"),
			 truth(r, "many_pages") * (long long)PAGE);
	ck_assert_int_eq(jint(json_object_get(r->report, "dropped_events_by_cause"),
			      "dma_range_slots_full"), 2);
	result_free(r);

	r = umems(true, "", 6);
	ck_assert_msg(strstr(r->out, "WARNING: 2 events could not be recorded: "
				     "dma_range_slots_full 2"), "no WARNING line:\n%.2000s", r->out);
	result_free(r);

	daemon_pid = daemon_start("", "--dma-pins on");
	ck_assert_msg(daemon_pid > 0, "the daemon did not start (%s)", log_path);
	sleep_ms(1500);
	r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
	before = sample_l(r->out, "memacct_events_dropped_total",
			  "reason=\"dma_range_slots_full\"");
	result_free(r);
	result_free(umems(false, "", 6));
	sleep_ms(2500);
	r = run_cmd("curl -sf -m 10 http://127.0.0.1:%d/metrics", port);
	after = sample_l(r->out, "memacct_events_dropped_total",
			 "reason=\"dma_range_slots_full\"");
	result_free(r);
	printf("  daemon: memacct_events_dropped_total{reason=\"dma_range_slots_full\"} %lld -> "
	       "%lld\n", before, after);
	ck_assert_int_eq(before, 0);
	ck_assert_int_eq(after, 2);
}
END_TEST

/* The run's command line of test_oom_sample_full: N small processes held
 * until a while after the victim is gone, and an OOM kill under
 * --memory-max 160M once they are all up. many_small's stdin is a FIFO
 * whose only writer is the victim (the shell's fd 3, inherited by exec),
 * so it reads EOF when the victim dies, then holds them 5 s more (20 s in
 * the TCG guests) for run's sample made when it reads the kill. The victim
 * starts 2 s (guests: 5 s) after they are all up: run's samples of once a
 * second (while the memcg is near its limit, as it is with the 1,100) then
 * include one made with them all; CI's guest once took one made while they
 * were being made (1,061 of them), its kill record read late. */
static struct result *run_many_then_oom(const char *json, const char *run_opts, int n)
{
	int linger = getenv("MEMACCT_VMTEST") ? 20 : 5;
	int settle = getenv("MEMACCT_VMTEST") ? 5 : 2;

	return run_cmd("%s %s run %s --memory-max 160M -- sh -c 'rm -f %s.fifo; mkfifo %s.fifo; "
		       "%s/many_small %d 1 %d < %s.fifo > %s & exec 3> %s.fifo; rm %s.fifo; "
		       "while ! grep -q ready %s 2>/dev/null; do sleep 0.2; done; "
		       "cat %s; sleep %d; exec %s/oom 512' 2>/dev/null", memacct, json, run_opts,
		       out_path, out_path, workloads, n, linger, out_path, out_path, out_path,
		       out_path, out_path, out_path, settle, workloads);
}

/* processes_unsampled of the first OOM kill in the recording @path (-1:
 * none), and in @ctx what its line says of the sample around it */
static long long rec_unsampled(const char *path, char *ctx, size_t size)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	long long v = -1;

	snprintf(ctx, size, "no OOM kill recorded");
	while (f && v < 0 && getline(&line, &cap, f) > 0) {
		const char *p = strstr(line, "\"processes_unsampled\":");
		const char *from = strstr(line, "\"processes_total\":");

		if (!p)
			continue;
		v = atoll(p + strlen("\"processes_unsampled\":"));
		snprintf(ctx, size, "%.300s", from ? from : p);
	}
	free(line);
	if (f)
		fclose(f);
	return v;
}

/*
 * run's OOM post-mortem at its sample's limit (session.c OOM_SAMPLE_MAX,
 * 1,024 processes read from /proc once a second while a kill may come):
 * 1,100 small processes (many_small), then a process that grows past
 * --memory-max 160M and is killed. The sample holds 1,024; the 1,100
 * children, many_small and the victim are the session's 1,102 live
 * processes: processes_total (the 1,024, the victim as at the
 * kill added when it was not among them) plus processes_unsampled make them
 * (1,103 when the dying victim fell among those past the sample: counted
 * there too), and the text says so. They were left out without a word:
 * processes_total read 1,024 or 1,025 of 1,102.
 */
START_TEST(test_oom_sample_full)
{
	enum { N = 1100, LIVE = N + 2 };
	char rec[200], ctx[320];
	struct result *r = run_many_then_oom("-j", "", N);
	json_t *k;
	long long total, unsampled;

	ck_assert_msg(strstr(r->out, "ready 1100"), "many_small did not make its 1,100:\n%.2000s",
		      r->out);
	ck_assert_ptr_nonnull(r->report);
	k = json_array_get(json_object_get(r->report, "oom_kills"), 0);
	ck_assert_msg(k, "no OOM kill in the report");
	ck_assert_int_eq(jint(json_object_get(k, "victim"), "pid"), truth(r, "pid"));
	total = jint(k, "processes_total");
	unsampled = jint(k, "processes_unsampled");
	printf("  %d processes, then an OOM kill: processes_total %lld, processes_unsampled "
	       "%lld, sample_age_s %.2f\n", N, total, unsampled,
	       json_real_value(json_object_get(k, "sample_age_s")));
	/* the victim in the sample (its mm not yet gone), or added as at the kill */
	ck_assert_msg(total == 1024 || total == 1024 + 1, "processes_total %lld", total);
	ck_assert_msg(total + unsampled == LIVE || total + unsampled == LIVE + 1,
		      "processes_total %lld + processes_unsampled %lld: not the %d live", total,
		      unsampled, LIVE);
	result_free(r);

	/* the text says so: the recording's OOM snapshot tells how many */
	snprintf(rec, sizeof(rec), "--record %s.rec", out_path);
	r = run_many_then_oom("", rec, N);
	unsampled = rec_unsampled(rec + strlen("--record "), ctx, sizeof(ctx));
	printf("  the same as text: processes_unsampled %lld (recorded)\n", unsampled);
	ck_assert_msg(unsampled >= LIVE - 1024 - 1, "processes_unsampled %lld recorded: %s",
		      unsampled, ctx);
	ck_assert_msg(strstr(r->out, "more processes of the session were not sampled"),
		      "no NOTE about the %lld processes not sampled:\n%.2000s", unsampled, r->out);
	unlink(rec + strlen("--record "));
	result_free(r);
}
END_TEST

Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_swept("limits", 300);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_argument_limits);
	tcase_add_test(tc, test_walk_full);
	tcase_add_test(tc, test_walk_full_keeps_flows);
	tcase_add_test(tc, test_audit_evidence_full);
	tcase_add_test(tc, test_oom_sample_full);
	tcase_add_test(tc, test_dma_range_slots_full);
	tcase_add_test(tc, test_cow_maps_slots_full);
	suite_add_tcase(s, tc);
	tc = tcase_swept("http-table", 120);
	tcase_set_tags(tc, HOST_ONLY_TAG);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_http_table_full);
	suite_add_tcase(s, tc);
	return s;
}
