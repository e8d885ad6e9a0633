// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_dma.c - DMA pins (FOLL_PIN pages no mm counter shows) against
 * the kernel's own figures: tests/workloads/dma_pin registers an AF_XDP UMEM
 * (and io_uring buffers, an mlock) in a cgroup of our own while
 * `memacct -j attach --interval` watches it; its truth is VmLck, VmPin and
 * the nr_foll_pin_acquired - released delta of /proc/vmstat around the pins.
 * Skipped, saying why, on kernels without AF_XDP sockets or the counters.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integration.h"

struct dma_watch {
	char cg[256], name[64], out[128];
	pid_t memacct, wl;
	FILE *to, *from;
	long long pid;
	struct result truths;	/* "truth K V" lines of the workload */
};

/* Complete lines of the attach output so far. */
static int out_lines(const struct dma_watch *w)
{
	FILE *f = fopen(w->out, "r");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The last complete report line (new reference), or NULL. */
static json_t *last_report(const struct dma_watch *w)
{
	static char line[1 << 20];
	json_t *j = NULL;
	FILE *f = fopen(w->out, "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '{' || !strchr(line, '\n'))
			continue;
		json_decref(j);
		j = json_loads(line, 0, NULL);
	}
	fclose(f);
	return j;
}

/* A report taken wholly after now: two more intervals. */
static json_t *fresh_report(const struct dma_watch *w)
{
	int n0 = out_lines(w);

	for (int i = 0; i < 200 && out_lines(w) < n0 + 2; i++)
		sleep_ms(50);
	ck_assert_msg(out_lines(w) >= n0 + 2, "memacct attach printed no report for 10 s");
	return last_report(w);
}

/*
 * The first report whose cgroup dma_pinned_bytes is 0 again (the kworker's
 * unpin after exit), within 40 reports; fails the test otherwise.
 */
static json_t *cgroup_dma_drained(const struct dma_watch *w)
{
	long long left = 0, host = 0;

	for (int i = 0; i < 40; i++) {
		json_t *rep = fresh_report(w);

		left = jint(json_object_get(rep, "totals"), "dma_pinned_bytes");
		host = jint(json_object_get(rep, "host"), "foll_pinned_bytes");
		if (left == 0)
			return rep;
		json_decref(rep);
	}
	ck_abort_msg("cgroup dma_pinned_bytes still %lld 12 s after exit (host FOLL_PIN %lld)",
		     left, host);
	return NULL;
}

static json_t *proc_of(json_t *rep, long long pid)
{
	json_t *procs = json_object_get(rep, "processes"), *p;
	size_t i;

	json_array_foreach(procs, i, p)
		if (jint(p, "pid") == pid && json_is_false(json_object_get(p, "exited")))
			return p;
	return NULL;
}

static long long host_pinned(json_t *rep)
{
	json_t *h = json_object_get(rep, "host");

	ck_assert_msg(h, "report without a host object");
	return jint(h, "foll_pinned_bytes");
}

/* Send a command; read the workload's lines up to @until into truths. */
static void wl_cmd(struct dma_watch *w, const char *cmd, const char *until)
{
	char line[256], k[64];
	long long v;

	fprintf(w->to, "%s\n", cmd);
	fflush(w->to);
	while (fgets(line, sizeof(line), w->from)) {
		if (!strncmp(line, until, strlen(until)))
			return;
		if (sscanf(line, "truth %63s %lld", k, &v) == 2 && w->truths.nt < 4096) {
			snprintf(w->truths.t[w->truths.nt].key, 64, "%s", k);
			w->truths.t[w->truths.nt++].val = v;
		}
	}
	ck_abort_msg("workload ended before '%s'", until);
}

static void dma_stop(struct dma_watch *w)
{
	char cmd[400];

	if (w->to)
		fclose(w->to);
	if (w->from)
		fclose(w->from);
	if (w->wl > 0) {
		kill(w->wl, SIGKILL);
		waitpid(w->wl, NULL, 0);
	}
	if (w->memacct > 0) {
		kill(w->memacct, SIGINT);
		waitpid(w->memacct, NULL, 0);
	}
	unlink(w->out);
	snprintf(cmd, sizeof(cmd), "rmdir %s 2>/dev/null", w->cg);
	if (system(cmd) < 0)
		perror("system");
	w->to = w->from = NULL;
	w->wl = w->memacct = 0;
}

/*
 * Our cgroup, memacct attached to it, and dma_pin @args started in it.
 * Returns false (test @test skipped, reason printed) when the workload
 * cannot pin. The macros name the calling test in its SKIP line (check.py
 * counts a skip by its test's name).
 */
static bool wl_start_(const char *test, struct dma_watch *w, const char *args);
#define wl_start(w, args) wl_start_(__func__, (w), (args))
#define dma_start(w, args) dma_start_(__func__, (w), (args))

/* --dma-pins of the attach dma_start() starts ("on" but in one test) */
static const char *dma_pins_mode = "on";

static bool dma_start_(const char *test, struct dma_watch *w, const char *args)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "memacct-dma-%d", getpid());
	snprintf(w->cg, sizeof(w->cg), "/sys/fs/cgroup/memory/%s", w->name);
	if (access("/sys/fs/cgroup/memory", F_OK) != 0)
		snprintf(w->cg, sizeof(w->cg), "/sys/fs/cgroup/%s", w->name);
	ck_assert_msg(mkdir(w->cg, 0755) == 0, "mkdir %s: %s", w->cg, strerror(errno));
	snprintf(w->out, sizeof(w->out), "/tmp/memacct-dma-%d.json", getpid());
	w->memacct = fork();
	if (w->memacct == 0) {
		int fd = open(w->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		execl(memacct, memacct, "-j", "attach", "--cgroup", w->name, "--interval",
		      "300ms", "--duration", "120s", "--dma-pins", dma_pins_mode, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600 && out_lines(w) < 1; i++)
		sleep_ms(100);
	ck_assert_msg(out_lines(w) >= 1, "memacct attach printed nothing in 60 s");
	return wl_start_(test, w, args);
}

/* dma_pin @args started in @w's cgroup; false (w stopped) when it cannot pin. */
static bool wl_start_(const char *test, struct dma_watch *w, const char *args)
{
	int in[2], out[2];
	char line[256];

	ck_assert(pipe(in) == 0 && pipe(out) == 0);
	w->wl = fork();
	if (w->wl == 0) {
		char procs[300], cmd[512];
		FILE *f;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", w->cg);
		f = fopen(procs, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			_exit(126);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(cmd, sizeof(cmd), "exec %s/dma_pin %s", workloads, args);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	w->to = fdopen(in[1], "w");
	w->from = fdopen(out[0], "r");
	if (!fgets(line, sizeof(line), w->from) || sscanf(line, "ready %lld", &w->pid) != 1) {
		int st = 0;

		waitpid(w->wl, &st, 0);
		w->wl = 0;
		dma_stop(w);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 77,
			      "dma_pin failed to start (status %d)", st);
		skip_test(test, "dma_pin cannot pin here (its reason is on stderr)");
		return false;
	}
	return true;
}

/*
 * AF_XDP UMEM of 64 MiB: dma_pinned 64 MiB (±1 page) for the process and its
 * cgroup with VmLck = VmPin = 0; back to 0 after close() (the kworker's
 * unpin) and after exit; the host figure moves by the same.
 */
/*
 * The NVIDIA driver's pinning calls, decoded on a host without a GPU:
 * tests/workloads/nv_ioctl issues the real command numbers with crafted
 * parameter blocks on devices named nvidiactl/nvidia0 (and one named gpu0)
 * with /dev/null's numbers. Every call fails (ENOTTY): memacct counts the
 * three OS-descriptor allocations it decoded (direct and behind
 * NV_ESC_IOCTL_XFER_CMD) as failed, the three it could not read as
 * nvidia_range_unknown, ignores the other class and the other device, and
 * leaves nothing: no DMA pin, no range.
 */
START_TEST(test_dma_nvidia_decoded)
{
	json_t *calls, *drops, *p;
	struct result *r;

	r = run_cmd("%s -j run --dma-pins on -- %s/nv_ioctl", memacct, workloads);
	if (r->status == 77 || strstr(r->out, "skip:")) {
		SKIP_TEST("cannot make device nodes here");
		result_free(r);
		return;
	}
	ck_assert_msg(r->status == 0 && r->report, "run nv_ioctl (rc %d): %s", r->status, r->out);
	ck_assert_int_eq(truth(r, "enotty"), truth(r, "calls"));
	calls = json_object_get(r->report, "nvidia_pin_calls");
	drops = json_object_get(r->report, "dropped_events_by_cause");
	{
		char *cs = json_dumps(calls, JSON_COMPACT);

		printf("  nv_ioctl: nvidia_pin_calls %s, nvidia_range_unknown %lld\n", cs,
		       jint(drops, "nvidia_range_unknown"));
		free(cs);
	}
	ck_assert_int_eq(jint(calls, "failed"), truth(r, "nv_pin_calls_failed"));
	ck_assert_int_eq(jint(calls, "pinned"), 0);
	ck_assert_int_eq(jint(calls, "freed"), 0);
	ck_assert_int_eq(jint(drops, "nvidia_range_unknown"), truth(r, "nv_range_unknown"));
	ck_assert_int_eq(jint(json_object_get(r->report, "totals"), "dma_pinned_bytes"), 0);
	p = json_array_get(json_object_get(r->report, "processes"), 0);
	ck_assert_msg(p && jint(p, "dma_pinned_peak_bytes") == 0, "no pin: %s", r->out);
	result_free(r);
}
END_TEST

START_TEST(test_dma_af_xdp_umem)
{
	struct dma_watch w;
	long long want = 64 * MiB, h0, h1, delta;
	json_t *rep, *p, *t;

	if (!dma_start(&w, "64 0 0"))
		return;
	rep = fresh_report(&w);
	h0 = host_pinned(rep);
	json_decref(rep);
	wl_cmd(&w, "pin", "pinned");
	delta = truth(&w.truths, "foll_pin_delta_pages") * (long long)PAGE;
	ck_assert_int_eq(truth(&w.truths, "locked_bytes"), 0);
	ck_assert_int_eq(truth(&w.truths, "pinned_vm_bytes"), 0);
	rep = fresh_report(&w);
	p = proc_of(rep, w.pid);
	ck_assert_msg(p, "dma_pin not in the report");
	t = json_object_get(rep, "totals");
	printf("  af_xdp: FOLL_PIN delta (truth) %lld, VmLck 0, VmPin 0\n", delta);
	ck_assert_msg(llabs(jint(p, "dma_pinned_bytes") - want) <= (long long)PAGE,
		      "process dma_pinned_bytes %lld, want %lld +-1 page",
		      jint(p, "dma_pinned_bytes"), want);
	ck_assert_msg(llabs(jint(t, "dma_pinned_bytes") - want) <= (long long)PAGE,
		      "cgroup dma_pinned_bytes %lld, want %lld +-1 page",
		      jint(t, "dma_pinned_bytes"), want);
	assert_near("af_xdp: process dma_pinned_bytes", jint(p, "dma_pinned_bytes"), want);
	assert_near("af_xdp: cgroup dma_pinned_bytes", jint(t, "dma_pinned_bytes"), want);
	ck_assert_int_eq(jint(p, "pinned_bytes"), jint(p, "dma_pinned_bytes"));
	ck_assert(json_is_false(json_object_get(p, "dma_pinned_estimate")));
	h1 = host_pinned(rep);
	assert_near("af_xdp: host foll_pinned moved", h1 - h0, delta);
	json_decref(rep);

	/* close(): the kernel unpins from a kworker ~100 ms later */
	wl_cmd(&w, "close", "closed");
	for (int i = 0; i < 40; i++) {
		rep = fresh_report(&w);
		p = proc_of(rep, w.pid);
		ck_assert_msg(p, "dma_pin not in the report after close");
		if (jint(p, "dma_pinned_bytes") == 0)
			break;
		json_decref(rep);
		rep = NULL;
	}
	ck_assert_msg(rep, "dma_pinned_bytes still not 0 12 s after close()");
	t = json_object_get(rep, "totals");
	ck_assert_int_eq(jint(t, "dma_pinned_bytes"), 0);
	ck_assert_int_eq(jint(p, "dma_pinned_peak_bytes"), want);
	assert_near("af_xdp: host foll_pinned after close", host_pinned(rep) - h0, 0);
	printf("  af_xdp: after close() process and cgroup dma_pinned 0\n");
	json_decref(rep);
	dma_stop(&w);
}
END_TEST

/*
 * --dma-pins off: no window sees the UMEM's pins, and they are not lost:
 * the host's FOLL_PIN pages include them and, attributed to nobody, the
 * report's dma_pinned_unattributed_bytes moves by the workload's truth;
 * the process's dma_pinned_bytes stays 0.
 */
START_TEST(test_dma_off_unattributed)
{
	struct dma_watch w;
	long long delta, u0, u1;
	json_t *rep, *p;
	bool started;

	dma_pins_mode = "off";
	started = dma_start(&w, "64 0 0");
	dma_pins_mode = "on";
	if (!started)
		return;
	rep = fresh_report(&w);
	u0 = jint(json_object_get(rep, "host"), "dma_pinned_unattributed_bytes");
	json_decref(rep);
	wl_cmd(&w, "pin", "pinned");
	delta = truth(&w.truths, "foll_pin_delta_pages") * (long long)PAGE;
	ck_assert_int_ge(delta, 64 * MiB);
	rep = fresh_report(&w);
	p = proc_of(rep, w.pid);
	ck_assert_msg(p, "dma_pin not in the report");
	ck_assert_int_eq(jint(p, "dma_pinned_bytes"), 0);
	ck_assert_int_eq(jint(json_object_get(rep, "totals"), "dma_pinned_bytes"), 0);
	u1 = jint(json_object_get(rep, "host"), "dma_pinned_unattributed_bytes");
	assert_near("dma-pins off: host unattributed moved", u1 - u0, delta);
	json_decref(rep);
	dma_stop(&w);
}
END_TEST

/*
 * The defaults (--dma-pins auto, no pinning device at start: the windows
 * off): a 64 MiB AF_XDP UMEM pinned for 3 s and closed before the report is
 * still reported, in the host's pins since start and their sampled peak,
 * with a NOTE naming --dma-pins on. On b27f6ef it read 0 everywhere (the
 * pin gone by the report). Truth: the workload's FOLL_PIN delta; the peak is
 * sampled without stat_refresh (per-CPU lag: 2% allowed).
 */
START_TEST(test_dma_auto_pin_reported)
{
	/* held 3 s: the peak is sampled (every 250 ms), which a loaded CI
	 * machine stretched past a 1 s pin (a peak of 64 KiB) */
	const char *wl = "sh -c '(echo pin; sleep 3; echo close; sleep 0.5) | %s/dma_pin 64 0 0'";
	char cmd[512];
	struct result *r;
	long long delta;
	json_t *h;

	snprintf(cmd, sizeof(cmd), wl, workloads);
	r = run_cmd("%s -j run -- %s", memacct, cmd);
	if (r->status == 77) {
		SKIP_TEST("dma_pin cannot pin here (its reason is on stderr)");
		result_free(r);
		return;
	}
	ck_assert_msg(r->status == 0 && r->report, "run: status %d, %s", r->status, r->out);
	h = json_object_get(r->report, "host");
	ck_assert_msg(json_is_false(json_object_get(h, "dma_pin_windows")),
		      "--dma-pins auto turned the windows on: a pinning device on this host?");
	delta = truth(r, "foll_pin_delta_pages") * (long long)PAGE;
	ck_assert_int_ge(delta, 64 * MiB);
	ck_assert_msg(jint(h, "foll_pin_acquired_bytes") >= (long long)(64 * MiB),
		      "foll_pin_acquired_bytes %lld, the UMEM %lld", jint(h, "foll_pin_acquired_bytes"),
		      64 * MiB);
	ck_assert_msg(jint(h, "foll_pinned_peak_bytes") >= (long long)(64 * MiB * 98 / 100),
		      "foll_pinned_peak_bytes %lld, the UMEM %lld", jint(h, "foll_pinned_peak_bytes"),
		      64 * MiB);
	printf("  %-40s acquired %12lld  peak %12lld  truth %12lld\n", "auto, pin gone by the report",
	       jint(h, "foll_pin_acquired_bytes"), jint(h, "foll_pinned_peak_bytes"), delta);
	result_free(r);
	r = run_cmd("%s run -- %s 2>&1", memacct, cmd);
	ck_assert_msg(strstr(r->out, "NOTE: the host pinned") &&
		      strstr(r->out, "--dma-pins on attributes them"), "no NOTE:\n%s", r->out);
	result_free(r);
}
END_TEST

/* The same, exit without close(): the cgroup's figure goes back to 0. */
START_TEST(test_dma_af_xdp_exit)
{
	struct dma_watch w;
	long long want = 64 * MiB, h0;
	json_t *rep = NULL, *t;
	int st;

	if (!dma_start(&w, "64 0 0"))
		return;
	rep = fresh_report(&w);
	h0 = host_pinned(rep);
	json_decref(rep);
	wl_cmd(&w, "pin", "pinned");
	rep = fresh_report(&w);
	t = json_object_get(rep, "totals");
	assert_near("af_xdp exit: cgroup dma_pinned before", jint(t, "dma_pinned_bytes"), want);
	json_decref(rep);
	fprintf(w.to, "exit\n");
	fflush(w.to);
	waitpid(w.wl, &st, 0);
	w.wl = 0;
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	rep = cgroup_dma_drained(&w);
	assert_near("af_xdp exit: host foll_pinned after exit", host_pinned(rep) - h0, 0);
	printf("  af_xdp exit: cgroup dma_pinned 0 after exit\n");
	json_decref(rep);
	dma_stop(&w);
}
END_TEST

/*
 * io_uring 16 MiB registered (FOLL_PIN and VmPin) + AF_XDP 64 MiB in one
 * process: pinned_vm 16, dma_pinned 64, pinned 80 MiB. With @mlock the UMEM
 * buffer is also mlocked: VmLck 64 MiB, and its pages are not counted again.
 */
#define dma_mixed(mlock) dma_mixed_(__func__, (mlock))
static void dma_mixed_(const char *test, bool mlock)
{
	struct dma_watch w;
	json_t *rep, *p, *t;

	if (!dma_start_(test, &w, mlock ? "64 16 1" : "64 16 0"))
		return;
	wl_cmd(&w, "pin", "pinned");
	ck_assert_int_eq(truth(&w.truths, "pinned_vm_bytes"), 16 * MiB);
	ck_assert_int_eq(truth(&w.truths, "locked_bytes"), mlock ? 64 * MiB : 0);
	rep = fresh_report(&w);
	p = proc_of(rep, w.pid);
	ck_assert_msg(p, "dma_pin not in the report");
	t = json_object_get(rep, "totals");
	printf("  mixed%s: FOLL_PIN delta (truth) %lld pages\n", mlock ? "+mlock" : "",
	       truth(&w.truths, "foll_pin_delta_pages"));
	assert_near("mixed: pinned_vm_bytes = VmPin", jint(p, "pinned_vm_bytes"),
		    truth(&w.truths, "pinned_vm_bytes"));
	assert_near("mixed: mlocked_bytes = VmLck", jint(p, "mlocked_bytes"),
		    truth(&w.truths, "locked_bytes"));
	ck_assert_msg(llabs(jint(p, "dma_pinned_bytes") - (mlock ? 0 : 64 * (long long)MiB)) <=
		      (long long)PAGE, "dma_pinned_bytes %lld", jint(p, "dma_pinned_bytes"));
	ck_assert_msg(llabs(jint(p, "pinned_bytes") - 80 * (long long)MiB) <= (long long)PAGE,
		      "pinned_bytes %lld, want 80 MiB (no page twice)", jint(p, "pinned_bytes"));
	ck_assert_msg(llabs(jint(t, "pinned_bytes") - 80 * (long long)MiB) <= (long long)PAGE,
		      "cgroup pinned_bytes %lld, want 80 MiB", jint(t, "pinned_bytes"));
	printf("  mixed%s: pinned_vm %lld, mlocked %lld, dma_pinned %lld, pinned %lld\n",
	       mlock ? "+mlock" : "", jint(p, "pinned_vm_bytes"), jint(p, "mlocked_bytes"),
	       jint(p, "dma_pinned_bytes"), jint(p, "pinned_bytes"));
	json_decref(rep);
	dma_stop(&w);
}

START_TEST(test_dma_io_uring_and_xdp)
{
	dma_mixed(false);
}
END_TEST

START_TEST(test_dma_xdp_mlocked)
{
	dma_mixed(true);
}
END_TEST

/*
 * audit --watch --pinned-cap over a cap made of DMA pins: exit 1 naming the
 * process; with the cap above them: exit 0.
 */
#define dma_audit(cap, want_status) dma_audit_(__func__, (cap), (want_status))
static void dma_audit_(const char *test, const char *cap, int want_status)
{
	char cg[256], cmd[3000], ready[64];
	struct result *r;
	const char *l;
	long long pid;

	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/memory/memacct-dma-audit-%d", getpid());
	if (access("/sys/fs/cgroup/memory", F_OK) != 0)
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/memacct-dma-audit-%d", getpid());
	ck_assert_msg(mkdir(cg, 0755) == 0, "mkdir %s: %s", cg, strerror(errno));
	snprintf(cmd, sizeof(cmd),
		 "A=/tmp/memacct-dma-audit-%d; : > $A.err; "
		 "%s audit --cgroup %s --pinned-cap %s --watch 1s > $A 2> $A.err & M=$!; "
		 "i=0; while ! grep -q 'BPF events' $A.err && [ $i -lt 600 ]; do sleep 0.1; "
		 "i=$((i+1)); done; "
		 "sh -c 'echo $$ > %s/cgroup.procs; (echo pin; sleep 2; echo exit) | "
		 "exec %s/dma_pin 64 0 0' > $A.wl; wl=$?; sleep 0.5; "
		 "kill -INT $M; wait $M; rc=$?; cat $A $A.wl; cat $A.err >&2; rm -f $A $A.err $A.wl; "
		 "[ $wl = 77 ] && exit 77; exit $rc",
		 getpid(), memacct, cg, cap, cg, workloads);
	r = run_cmd("%s", cmd);
	snprintf(cmd, sizeof(cmd), "rmdir %s 2>/dev/null", cg);
	if (system(cmd) < 0)
		perror("system");
	if (r->status == 77) {
		skip_test(test, "dma_pin cannot pin here (its reason is on stderr)");
		result_free(r);
		return;
	}
	l = strstr(r->out, "ready ");
	ck_assert_msg(l && sscanf(l, "ready %lld", &pid) == 1, "no workload: %s", r->out);
	ck_assert_msg(r->status == want_status, "audit --pinned-cap %s exited %d, want %d:\n%s",
		      cap, r->status, want_status, r->out);
	snprintf(ready, sizeof(ready), "pid %lld (dma_pin)", pid);
	if (want_status == 1)
		ck_assert_msg(strstr(r->out, "EXCEEDED") && strstr(r->out, ready),
			      "the violation must name %s:\n%s", ready, r->out);
	else
		ck_assert_msg(!strstr(r->out, "EXCEEDED"), "no violation expected:\n%s", r->out);
	printf("  audit --pinned-cap %s over 64 MiB of DMA pins: exit %d%s\n", cap, r->status,
	       want_status == 1 ? ", names the process" : "");
	result_free(r);
}

START_TEST(test_dma_audit_over_cap) { dma_audit("32M", 1); }
END_TEST

START_TEST(test_dma_audit_under_cap) { dma_audit("128M", 0); }
END_TEST

/* A sample "NAME VALUE" (no labels) of a metrics text; -1 when absent. */
static long long om_sample(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return strtoll(l + n + 1, NULL, 10);
	return -1;
}

/*
 * The daemon's memacct_host_* gauges: MemTotal as /proc/meminfo says, and
 * memacct_host_foll_pinned_bytes moving by the workload's FOLL_PIN delta
 * (the daemon does not fold the per-CPU diffs: the test does, with
 * stat_refresh, before each scrape; 64 pages of slack for what other
 * processes pin meanwhile).
 */
/*
 * `memacct daemon` on loopback @port, pinned under @pin, collecting every
 * 300 ms, with per-process series for every process (a busy host's larger
 * ones would push the workload out of the default top 20).
 */
static pid_t daemon_spawn(const char *pin, int port)
{
	char cmd[1024];
	pid_t d = fork();

	if (d == 0) {
		snprintf(cmd, sizeof(cmd), "exec %s daemon --listen 127.0.0.1:%d --interval 300ms "
			 "--top-processes 10000 --dma-pins on --pin-path %s > /dev/null 2>&1", memacct, port, pin);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return d;
}

START_TEST(test_dma_daemon_host_gauges)
{
	int port = free_port(), in[2], st;
	char cmd[1024], pin[128], line[256];
	long long before, after, delta, total;
	struct result *r;
	pid_t d, wl;
	FILE *to, *from;

	if (system("grep -q nr_foll_pin_acquired /proc/vmstat") != 0) {
		SKIP_TEST("no nr_foll_pin_* in /proc/vmstat");
		return;
	}
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/memacct-dma-test-%d", getpid());
	d = daemon_spawn(pin, port);
#define SCRAPE "echo 1 > /proc/sys/vm/stat_refresh; sleep 1; curl -sf http://127.0.0.1:%d/metrics"
	for (int i = 0; i < 100; i++) {
		r = run_cmd(SCRAPE, port);
		if (!r->status)
			break;
		result_free(r);
		r = NULL;
	}
	ck_assert_msg(r, "the daemon did not answer on port %d", port);
	total = om_sample(r->out, "memacct_host_mem_total_bytes");
	before = om_sample(r->out, "memacct_host_foll_pinned_bytes");
	ck_assert_int_eq(om_sample(r->out, "memacct_host_foll_pin_counters"), 1);
	result_free(r);
	r = run_cmd("awk '/^MemTotal:/ { print \"truth mem_total_kb\", $2 }' /proc/meminfo");
	ck_assert_int_eq(total, truth(r, "mem_total_kb") * 1024);
	result_free(r);

	ck_assert(pipe(in) == 0);
	{
		int out[2];

		ck_assert(pipe(out) == 0);
		wl = fork();
		if (wl == 0) {
			dup2(in[0], 0);
			dup2(out[1], 1);
			close(in[1]);
			close(out[0]);
			snprintf(cmd, sizeof(cmd), "%s/dma_pin", workloads);
			execl(cmd, cmd, "64", "0", "0", (char *)NULL);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		to = fdopen(in[1], "w");
		from = fdopen(out[0], "r");
	}
	if (!fgets(line, sizeof(line), from) || strncmp(line, "ready ", 6)) {
		fclose(to);
		fclose(from);
		waitpid(wl, &st, 0);
		kill(d, SIGINT);
		waitpid(d, NULL, 0);
		result_free(run_cmd("%s detach --pin-path %s", memacct, pin));
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 77, "dma_pin failed (%d)", st);
		SKIP_TEST("dma_pin cannot pin here");
		return;
	}
	fprintf(to, "pin\n");
	fflush(to);
	delta = -1;
	while (fgets(line, sizeof(line), from) && strncmp(line, "pinned", 6))
		sscanf(line, "truth foll_pin_delta_pages %lld", &delta);
	r = run_cmd(SCRAPE, port);
	after = om_sample(r->out, "memacct_host_foll_pinned_bytes");
	result_free(r);
	fprintf(to, "exit\n");
	fclose(to);
	fclose(from);
	waitpid(wl, &st, 0);
	kill(d, SIGINT);
	waitpid(d, NULL, 0);
	result_free(run_cmd("%s detach --pin-path %s", memacct, pin));
	ck_assert_int_ge(delta, 0);
	printf("  daemon: memacct_host_foll_pinned_bytes moved %lld, FOLL_PIN truth %lld; "
	       "MemTotal %lld\n", after - before, delta * (long long)PAGE, total);
	ck_assert_msg(llabs(after - before - delta * (long long)PAGE) <= 64 * (long long)PAGE,
		      "host gauge moved %lld, truth %lld", after - before, delta * (long long)PAGE);
#undef SCRAPE
}
END_TEST

/* The audit JSON's entry of process @pid in its first cgroup, or NULL. */
static json_t *audit_proc_of(json_t *rep, long long pid)
{
	json_t *cg = json_array_get(json_object_get(rep, "cgroups"), 0), *p;
	size_t i;

	json_array_foreach(json_object_get(cg, "processes"), i, p)
		if (jint(p, "pid") == pid)
			return p;
	return NULL;
}

/* The daemon a test started (pinned under live_pin): teardown stops it. */
static pid_t live_daemon;
static char live_pin[128];
static struct dma_watch *live_w;

/*
 * A memacct daemon pinned under live_pin, listening on loopback @port, up
 * (its links pinned) when this returns; @w: a cgroup of ours named after
 * @tag, limited to @limit bytes when nonzero.
 */
static void daemon_cg_start(struct dma_watch *w, const char *tag, int port, long long limit)
{
	char cmd[1024], lim[400];
	FILE *f;

	memset(w, 0, sizeof(*w));
	live_w = w;
	snprintf(w->cg, sizeof(w->cg), "/sys/fs/cgroup/memory/memacct-test-%s-%d", tag, getpid());
	if (access("/sys/fs/cgroup/memory", F_OK) != 0)
		snprintf(w->cg, sizeof(w->cg), "/sys/fs/cgroup/memacct-test-%s-%d", tag, getpid());
	ck_assert_msg(mkdir(w->cg, 0755) == 0, "mkdir %s: %s", w->cg, strerror(errno));
	if (limit) {
		snprintf(lim, sizeof(lim), "%s/%s", w->cg, strstr(w->cg, "/memory/") ?
			 "memory.limit_in_bytes" : "memory.max");
		f = fopen(lim, "w");
		ck_assert_msg(f && fprintf(f, "%lld\n", limit) > 0 && !fclose(f), "write %s", lim);
	}
	snprintf(live_pin, sizeof(live_pin), "/sys/fs/bpf/memacct-test-%s-%d", tag, getpid());
	live_daemon = daemon_spawn(live_pin, port);
	/*
	 * Ready when /metrics answers: 503 until its first collection, which
	 * follows the pinning. Not when DIR/links appears: the daemon makes
	 * that directory before loading, seconds before its programs attach
	 * (a workload started then was never seen, and explain found no pins).
	 */
	snprintf(cmd, sizeof(cmd), "curl -sf -o /dev/null http://127.0.0.1:%d/metrics", port);
	for (int i = 0; i < 600 && system(cmd) != 0; i++) {
		ck_assert_msg(waitpid(live_daemon, NULL, WNOHANG) == 0,
			      "the daemon on port %d exited before serving", port);
		sleep_ms(100);
	}
	ck_assert_msg(system(cmd) == 0, "the daemon on port %d did not serve in 60 s", port);
}

/* The daemon stopped and detached, the workload and the cgroup gone. */
static void daemon_cg_stop(void)
{
	if (live_w && live_w->to) {
		fprintf(live_w->to, "exit\n");
		fflush(live_w->to);
	}
	if (live_daemon > 0) {
		kill(live_daemon, SIGINT);
		waitpid(live_daemon, NULL, 0);
		result_free(run_cmd("%s detach --pin-path %s", memacct, live_pin));
	}
	live_daemon = 0;
	if (live_w)
		dma_stop(live_w);
	live_w = NULL;
}

/* after a failed assertion too */
static void teardown(void)
{
	daemon_cg_stop();
	sweep_leftovers();	/* dma_start()'s cgroup and workloads after a failure */
}

/*
 * The daemon's memacct_dma_pinned_bytes{cgroup} (and peak, and
 * memacct_pinned_bytes) for a 64 MiB AF_XDP UMEM in our cgroup; then
 * audit without --watch: DMA pins from a running daemon's pinned maps
 * (64 MiB AF_XDP UMEM), so --pinned-cap covers them; --host PCT over the
 * host's FOLL_PIN pages names the process; pinned near the cgroup's limit
 * warns; with no daemon the DMA figure is unknown (null), never 0.
 */
START_TEST(test_dma_audit_oneshot)
{
	struct dma_watch w;
	long long want = 64 * MiB;
	int port = free_port();
	const char *pin = live_pin;
	struct result *r;
	json_t *cg, *p, *hc;

	/* 80 MiB: the 64 MiB UMEM buffer (charged anon) fits, pinned is 80% */
	daemon_cg_start(&w, "dma-oneshot", port, 80 * MiB);
	if (!wl_start(&w, "64 0 0")) {
		daemon_cg_stop();
		return;
	}
	wl_cmd(&w, "pin", "pinned");

	/* the daemon's per-cgroup series (its next collection: 300 ms) */
	sleep_ms(1000);
	r = run_cmd("curl -s -w 'http_code %%{http_code}\\n' http://127.0.0.1:%d/metrics | awk '"
		    "/^http_code / || /^memacct_build_info/ || /^memacct_up/ { print } "
		    "/^memacct_dma_pinned_bytes\\{cgroup=\"\\/%s\"/ { print \"truth dma\", $NF } "
		    "/^memacct_dma_pinned_peak_bytes\\{cgroup=\"\\/%s\"/ { print \"truth peak\", $NF } "
		    "/^memacct_pinned_bytes\\{cgroup=\"\\/%s\"/ { print \"truth pinned\", $NF } "
		    "/^memacct_process_pinned_bytes\\{pid=\"%lld\"/ { print \"truth proc\", $NF }'",
		    port, strrchr(w.cg, '/') + 1, strrchr(w.cg, '/') + 1,
		    strrchr(w.cg, '/') + 1, w.pid);
	ck_assert_msg(r->nt == 4, "the daemon's series of our cgroup and process: '%s'", r->out);
	printf("  daemon: memacct_dma_pinned_bytes{cgroup} %lld, peak %lld, pinned %lld; "
	       "memacct_process_pinned_bytes{pid} %lld; truth (FOLL_PIN delta) %lld\n",
	       truth(r, "dma"), truth(r, "peak"), truth(r, "pinned"), truth(r, "proc"),
	       truth(&w.truths, "foll_pin_delta_pages") * PAGE);
	ck_assert_int_eq(truth(r, "proc"), want);
	ck_assert_int_eq(truth(r, "dma"), want);
	ck_assert_int_eq(truth(r, "peak"), want);
	ck_assert_int_eq(truth(r, "pinned"), want);
	result_free(r);

	r = run_cmd("%s -j audit --cgroup %s --pin-path %s --pinned-cap 32M --host 0.1%%",
		    memacct, w.cg, pin);
	ck_assert_msg(r->report, "no JSON: %s", r->out);
	cg = json_array_get(json_object_get(r->report, "cgroups"), 0);
	p = audit_proc_of(r->report, w.pid);
	ck_assert_msg(p, "dma_pin not in the audit: %s", r->out);
	hc = json_object_get(r->report, "host_check");
	printf("  audit (daemon's pins): process dma_pinned %lld (truth %lld), cgroup %lld, "
	       "exit %d; host check %lld > cap %lld: %s, top pid %lld; near %s\n",
	       jint(p, "dma_pinned_bytes"), truth(&w.truths, "foll_pin_delta_pages") * PAGE,
	       jint(cg, "dma_pinned_bytes"), r->status, jint(hc, "foll_pinned_bytes"),
	       jint(hc, "cap_bytes"), json_is_true(json_object_get(hc, "exceeded")) ?
	       "exceeded" : "ok", jint(json_array_get(json_object_get(hc, "top"), 0), "pid"),
	       json_string_value(json_object_get(json_object_get(cg, "pinned_near_limit"),
						  "limit")));
	ck_assert_int_eq(jint(p, "dma_pinned_bytes"), want);
	ck_assert_int_eq(jint(cg, "dma_pinned_bytes"), want);
	ck_assert_str_eq(json_string_value(json_object_get(cg, "dma_pinned_source")), "daemon");
	ck_assert_int_eq(r->status, 1);
	ck_assert(json_is_true(json_object_get(cg, "exceeded")));
	ck_assert(json_is_true(json_object_get(hc, "exceeded")));
	ck_assert_int_eq(jint(json_array_get(json_object_get(hc, "top"), 0), "pid"), w.pid);
	ck_assert_msg(json_is_object(json_object_get(cg, "pinned_near_limit")),
		      "64 MiB pinned under an 80 MiB limit: warned");
	result_free(r);

	/* under both caps: exit 0; the plain text names the limit it is near */
	r = run_cmd("%s audit --cgroup %s --pin-path %s --pinned-cap 128M --host 50%%",
		    memacct, w.cg, pin);
	ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->out);
	ck_assert_msg(strstr(r->out, "WARNING: pinned 64.0 MiB") && strstr(r->out, "host check"),
		      "near-limit warning and host check: %s", r->out);
	result_free(r);

	/* no daemon pinned there: DMA unknown, null, never 0 */
	r = run_cmd("%s -j audit --cgroup %s --pin-path /nonexistent-memacct --pinned-cap 32M",
		    memacct, w.cg);
	cg = json_array_get(json_object_get(r->report, "cgroups"), 0);
	p = audit_proc_of(r->report, w.pid);
	ck_assert_msg(p && json_is_null(json_object_get(p, "dma_pinned_bytes")), "null: %s", r->out);
	ck_assert_str_eq(json_string_value(json_object_get(cg, "dma_pinned_source")), "none");
	result_free(r);
	r = run_cmd("%s audit --cgroup %s --pin-path /nonexistent-memacct", memacct, w.cg);
	ck_assert_msg(strstr(r->out, "DMA unknown"), "says unknown: %s", r->out);
	result_free(r);
	daemon_cg_stop();
}
END_TEST

/*
 * The daemon's per-cgroup series with the UMEM buffer mlocked too: its pages
 * are in VmLck, so memacct_dma_pinned_bytes{cgroup} is 0 and
 * memacct_pinned_bytes 64 MiB, not 128 (no page counted twice).
 */
START_TEST(test_dma_daemon_mlocked)
{
	struct dma_watch w;
	int port = free_port();
	struct result *r;
	const char *name;

	daemon_cg_start(&w, "dma-mlock", port, 0);
	if (!wl_start(&w, "64 0 1")) {
		daemon_cg_stop();
		return;
	}
	wl_cmd(&w, "pin", "pinned");
	sleep_ms(1000);
	name = strrchr(w.cg, '/') + 1;
	r = run_cmd("curl -s -w 'http_code %%{http_code}\\n' http://127.0.0.1:%d/metrics | awk '"
		    "/^http_code / || /^memacct_build_info/ || /^memacct_up/ { print } "
		    "/^memacct_dma_pinned_bytes\\{cgroup=\"\\/%s\"/ { print \"truth dma\", $NF } "
		    "/^memacct_mlocked_bytes\\{cgroup=\"\\/%s\"/ { print \"truth mlocked\", $NF } "
		    "/^memacct_pinned_bytes\\{cgroup=\"\\/%s\"/ { print \"truth pinned\", $NF } "
		    "/^memacct_process_pinned_bytes\\{pid=\"%lld\"/ { print \"truth proc\", $NF }'",
		    port, name, name, name, w.pid);
	ck_assert_msg(r->nt == 4, "the daemon's series of our cgroup and process: '%s'", r->out);
	printf("  daemon, UMEM mlocked: memacct_dma_pinned_bytes{cgroup} %lld, mlocked %lld, "
	       "pinned %lld, process pinned %lld; truth: VmLck %lld, FOLL_PIN delta %lld\n",
	       truth(r, "dma"), truth(r, "mlocked"), truth(r, "pinned"), truth(r, "proc"),
	       truth(&w.truths, "locked_bytes"), truth(&w.truths, "foll_pin_delta_pages") * PAGE);
	ck_assert_int_eq(truth(r, "proc"), 64 * MiB);
	ck_assert_int_eq(truth(r, "mlocked"), truth(&w.truths, "locked_bytes"));
	ck_assert_int_eq(truth(r, "dma"), 0);
	ck_assert_int_eq(truth(r, "pinned"), 64 * MiB);
	result_free(r);
	daemon_cg_stop();
}
END_TEST

/* The explain JSON's mapping of @pid named @path, or NULL. */
static json_t *mapping_of(json_t *rep, long long pid, const char *path)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(rep, "mappings"), i, m)
		if (jint(m, "pid") == pid && json_is_string(json_object_get(m, "path")) &&
		    !strcmp(json_string_value(json_object_get(m, "path")), path))
			return m;
	return NULL;
}

/*
 * A 64 MiB UMEM in a MAP_SHARED|MAP_ANONYMOUS buffer: the "/dev/zero
 * (deleted)" rw-s shmem mapping CUDA's pin_memory=True buffers are. explain
 * with a daemon's pins: dma_pinned 64 MiB (the FOLL_PIN delta), the verdict
 * names that mapping and says pinned, never "not reclaimable without swap"
 * shared memory; the mapping's dma_pinned_bytes is 64 MiB. With no daemon:
 * DMA unknown (null), never 0.
 */
START_TEST(test_dma_explain_shared)
{
	struct dma_watch w;
	long long want = 64 * MiB;
	struct result *r;
	json_t *p, *m;
	char v[4096] = "";
	size_t i;
	json_t *line;

	daemon_cg_start(&w, "dma-explain", free_port(), 0);
	if (!wl_start(&w, "64 0 0 1")) {
		daemon_cg_stop();
		return;
	}
	wl_cmd(&w, "pin", "pinned");
	r = run_cmd("%s -j explain --pid %lld --pin-path %s", memacct, w.pid, live_pin);
	ck_assert_msg(r->report, "no JSON: %s", r->out);
	p = json_array_get(json_object_get(r->report, "processes"), 0);
	m = mapping_of(r->report, w.pid, "/dev/zero");
	ck_assert_msg(m, "no /dev/zero mapping: %s", r->out);
	json_array_foreach(json_object_get(r->report, "verdict"), i, line)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s | ", json_string_value(line));
	if (!json_is_integer(json_object_get(p, "dma_pinned_bytes")) ||
	    !json_is_integer(json_object_get(m, "dma_pinned_bytes"))) {
		char *ps = json_dumps(p, JSON_COMPACT), *ms = json_dumps(m, JSON_COMPACT);

		ck_abort_msg("DMA pins unknown (null) with the daemon's pins: process %s, "
			     "mapping %s; verdict %s", ps, ms, v);
	}
	printf("  explain (daemon's pins): dma_pinned %lld, mapping %s %s %s dma_pinned %lld, "
	       "rss %lld; truth (FOLL_PIN delta) %lld\n  verdict: %s\n",
	       jint(p, "dma_pinned_bytes"), json_string_value(json_object_get(m, "perms")),
	       json_string_value(json_object_get(m, "kind")),
	       json_is_true(json_object_get(m, "deleted")) ? "(deleted)" : "",
	       jint(m, "dma_pinned_bytes"), jint(m, "rss_bytes"),
	       truth(&w.truths, "foll_pin_delta_pages") * PAGE, v);
	ck_assert_int_eq(jint(p, "dma_pinned_bytes"), want);
	ck_assert_int_eq(jint(m, "dma_pinned_bytes"), want);
	ck_assert_str_eq(json_string_value(json_object_get(m, "perms")), "rw-s");
	ck_assert_str_eq(json_string_value(json_object_get(m, "kind")), "shmem");
	ck_assert(json_is_true(json_object_get(m, "deleted")));
	ck_assert_msg(strstr(v, "64.0 MiB is pinned for DMA") && strstr(v, "/dev/zero (deleted)") &&
		      strstr(v, "rw-s"), "the verdict names the pinned mapping: %s", v);
	ck_assert_msg(!strstr(v, "without swap"), "pinned shmem called swappable: %s", v);
	/* the range itself, with the mapping that holds it */
	{
		json_t *rs = json_object_get(p, "dma_pinned_ranges"), *g = json_array_get(rs, 0);
		json_t *gm = json_object_get(g, "mapping");

		ck_assert_msg(json_array_size(rs) == 1 && gm, "one range with its mapping: %s",
			      r->out);
		ck_assert_str_eq(json_string_value(json_object_get(g, "source")), "xdp");
		ck_assert_int_eq(jint(g, "bytes"), want);
		ck_assert_str_eq(json_string_value(json_object_get(g, "start")),
				 json_string_value(json_object_get(m, "start")));
		ck_assert_str_eq(json_string_value(json_object_get(gm, "path")), "/dev/zero");
	}
	result_free(r);

	/* no daemon pinned there: unknown, never 0 */
	r = run_cmd("%s -j explain --pid %lld --pin-path /nonexistent-memacct", memacct, w.pid);
	p = json_array_get(json_object_get(r->report, "processes"), 0);
	m = mapping_of(r->report, w.pid, "/dev/zero");
	ck_assert_msg(json_is_null(json_object_get(p, "dma_pinned_bytes")) && m &&
		      json_is_null(json_object_get(m, "dma_pinned_bytes")), "null: %s", r->out);
	result_free(r);
	r = run_cmd("%s explain --pid %lld --pin-path /nonexistent-memacct", memacct, w.pid);
	ck_assert_msg(strstr(r->out, "pinned for DMA") && strstr(r->out, "unknown"),
		      "says unknown: %s", r->out);
	result_free(r);
	daemon_cg_stop();
}
END_TEST

/* Host FOLL_PIN references (pages) now, per-CPU diffs folded. */
static long long host_foll_pin_pages(void)
{
	struct result *r = run_cmd("echo 1 > /proc/sys/vm/stat_refresh; awk "
				   "'/^nr_foll_pin_acquired / { a = $2 } "
				   "/^nr_foll_pin_released / { r = $2 } "
				   "END { print \"truth pinned\", a - r }' /proc/vmstat");
	long long v = truth(r, "pinned");

	result_free(r);
	return v;
}

/*
 * Two processes in one cgroup pin at the same time, one on each CPU, 100
 * AF_XDP UMEMs of 1 MiB each. @hide: memacct cannot read the UMEM's size
 * (tests/workloads/dma_pin.c "many"), so the pins are measured as for any
 * driver, from the host counter the overlapping windows share. Each
 * process's dma_pinned_bytes is exact (100 MiB) or flagged an estimate,
 * and the two add up to the host counter's change exactly (nothing counted
 * twice, nothing lost); the cgroup's figure is the sum; after both exit the
 * cgroup's figure is back to 0.
 */
/*
 * Open defect, seen only in the vmtest guest (6.12 under single-threaded
 * TCG, 2 vCPUs): the two estimates summed to 1 MiB over the host delta
 * (104,857,600 + 105,906,176 vs 209,715,200), once; exact on real hosts.
 */
#define TWO_PINNERS_TCG "under qemu TCG the sum of both figures can exceed the host FOLL_PIN " \
	"delta (a window that misses the pool's lock keeps its raw delta; open defect, " \
	"docs/vmtest.md)"

static void dma_two_pinners(bool hide)
{
	struct dma_watch a, b;
	long long want = 100 * MiB, h0, h1, pa, pb;
	bool ea, eb;
	json_t *rep = NULL, *p, *t;
	char cmd[64];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;

	if (!dma_start(&a, "1 0 0"))
		return;
	memset(&b, 0, sizeof(b));
	snprintf(b.cg, sizeof(b.cg), "%s", a.cg);
	ck_assert(wl_start(&b, "1 0 0"));
	json_decref(fresh_report(&a));
	h0 = host_foll_pin_pages();
	snprintf(cmd, sizeof(cmd), "many 100 0 %d", hide);
	fprintf(a.to, "%s\n", cmd);
	fflush(a.to);
	snprintf(cmd, sizeof(cmd), "many 100 %d %d", ncpu - 1, hide);
	wl_cmd(&b, cmd, "done");
	wl_cmd(&a, "", "done");
	h1 = host_foll_pin_pages();
	ck_assert_int_eq(truth(&a.truths, "many_pages") * (long long)PAGE, want);
	rep = fresh_report(&a);
	t = json_object_get(rep, "totals");
	p = proc_of(rep, a.pid);
	ck_assert_msg(p, "first dma_pin not in the report");
	pa = jint(p, "dma_pinned_bytes");
	ea = json_is_true(json_object_get(p, "dma_pinned_estimate"));
	p = proc_of(rep, b.pid);
	ck_assert_msg(p, "second dma_pin not in the report");
	pb = jint(p, "dma_pinned_bytes");
	eb = json_is_true(json_object_get(p, "dma_pinned_estimate"));
	printf("  two pinners%s: %lld + %lld bytes (%s, %s), want %lld each; sum %lld, "
	       "host FOLL_PIN delta %lld; cgroup %lld\n", hide ? " (sizes hidden)" : "",
	       pa, pb, ea ? "estimate" : "exact", eb ? "estimate" : "exact", want, pa + pb,
	       (h1 - h0) * (long long)PAGE, jint(t, "dma_pinned_bytes"));
	ck_assert_msg(ea || pa == want, "exact figure %lld, want %lld", pa, want);
	ck_assert_msg(eb || pb == want, "exact figure %lld, want %lld", pb, want);
	/* the host counter's change over the run: both pinners plus anything
	 * else the host pinned meanwhile (nothing, on a quiet test host) */
	ck_assert_msg(pa + pb == (h1 - h0) * (long long)PAGE,
		      "sum %lld, host FOLL_PIN delta %lld", pa + pb, (h1 - h0) * (long long)PAGE);
	ck_assert_int_eq(jint(t, "dma_pinned_bytes"), pa + pb);
	json_decref(rep);

	fprintf(a.to, "exit\n");
	fflush(a.to);
	fprintf(b.to, "exit\n");
	fflush(b.to);
	waitpid(b.wl, NULL, 0);
	b.wl = 0;
	rep = cgroup_dma_drained(&a);
	printf("  two pinners%s: cgroup dma_pinned 0 after both exited\n", hide ? " (sizes hidden)" : "");
	json_decref(rep);
	b.cg[0] = 0;	/* a's stop removes it */
	dma_stop(&b);
	dma_stop(&a);
}

START_TEST(test_dma_two_pinners)
{
	if (getenv("MEMACCT_VMTEST"))
		SKIP_TEST(TWO_PINNERS_TCG);
	else
		dma_two_pinners(false);
}
END_TEST

/*
 * A pinner of known sizes beside a process whose windows pin nothing (ioctl
 * on /dev/null, a character device, on the other CPU, as a CUDA process's
 * UVM calls are beside another's registrations): the fixed sizes are
 * reserved in the shared counter, so the pinner stays exact, not short of
 * the shares the empty windows would take.
 */
START_TEST(test_dma_pinner_beside_empty_windows)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	long long want = 100 * MiB, pa;
	struct dma_watch a;
	json_t *rep, *p;
	pid_t spin;

	if (getenv("MEMACCT_VMTEST")) {
		SKIP_TEST(TWO_PINNERS_TCG);
		return;
	}
	if (!dma_start(&a, "1 0 0"))
		return;
	json_decref(fresh_report(&a));
	spin = fork();
	if (spin == 0) {
		int fd = open("/dev/null", O_RDONLY);
		unsigned long long n = 0;
		cpu_set_t set;
		char buf[64];

		CPU_ZERO(&set);
		CPU_SET(ncpu - 1, &set);
		sched_setaffinity(0, sizeof(set), &set);
		for (;;)
			n += ioctl(fd, TCGETS, buf) < 0;	/* ENOTTY: an empty window */
	}
	wl_cmd(&a, "many 100 0 0", "done");
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	ck_assert_int_eq(truth(&a.truths, "many_pages") * (long long)PAGE, want);
	rep = fresh_report(&a);
	p = proc_of(rep, a.pid);
	ck_assert_msg(p, "dma_pin not in the report");
	pa = jint(p, "dma_pinned_bytes");
	printf("  pinner beside empty windows: %lld bytes (%s), want %lld\n", pa,
	       json_is_true(json_object_get(p, "dma_pinned_estimate")) ? "estimate" : "exact", want);
	ck_assert_int_eq(pa, want);
	ck_assert(json_is_false(json_object_get(p, "dma_pinned_estimate")));
	json_decref(rep);
	dma_stop(&a);
}
END_TEST

START_TEST(test_dma_two_pinners_hidden)
{
	if (getenv("MEMACCT_VMTEST"))
		SKIP_TEST(TWO_PINNERS_TCG);
	else
		dma_two_pinners(true);
}
END_TEST

Suite *dma_suite(void)
{
	Suite *s = suite_create("dma");
	TCase *tc = tcase_swept("root", 120);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_dma_af_xdp_umem);
	tcase_add_test(tc, test_dma_off_unattributed);
	tcase_add_test(tc, test_dma_auto_pin_reported);
	tcase_add_test(tc, test_dma_nvidia_decoded);
	tcase_add_test(tc, test_dma_af_xdp_exit);
	tcase_add_test(tc, test_dma_io_uring_and_xdp);
	tcase_add_test(tc, test_dma_xdp_mlocked);
	tcase_add_test(tc, test_dma_audit_over_cap);
	tcase_add_test(tc, test_dma_audit_under_cap);
	tcase_add_test(tc, test_dma_daemon_host_gauges);
	tcase_add_test(tc, test_dma_two_pinners);
	tcase_add_test(tc, test_dma_two_pinners_hidden);
	tcase_add_test(tc, test_dma_pinner_beside_empty_windows);
	tcase_add_test(tc, test_dma_audit_oneshot);
	tcase_add_test(tc, test_dma_explain_shared);
	tcase_add_test(tc, test_dma_daemon_mlocked);
	suite_add_tcase(s, tc);
	return s;
}
