// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration.c - root tests: real workloads of known ground truth
 * (tests/workloads/) run under `memacct run -j` and `memacct attach -j`;
 * memacct's figures are compared with the truth each workload prints
 * ("truth KEY VALUE") and with the kernel's own accounting it read
 * ("kernel KEY VALUE"). Tolerance: 1% or 16 pages, whichever is larger.
 * Needs root and a kernel with BTF; otherwise every test is skipped with
 * the reason printed.
 */
#define _GNU_SOURCE	/* memmem() */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "integration.h"

const char *memacct, *workloads, *testsdir;
char cgroot[CGROOT_MAX];
int cgversion;

void result_free(struct result *r)
{
	free(r->out);
	json_decref(r->report);
	free(r);
}

char json_log_path[4096];

/* Every report a test saw, for the schema suite (integration_schema.c). */
static void json_log_line(const char *line, json_t *j)
{
	FILE *f;

	if (!json_log_path[0] || !json_object_get(j, "schema"))
		return;
	f = fopen(json_log_path, "a");
	if (f) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
}

/* Run a shell command line; stdout captured, stderr passed through. */
struct result *run_cmd(const char *fmt, ...)
{
	struct result *r = calloc(1, sizeof(*r));
	char cmd[4096], *line, *save;
	size_t cap = 1 << 16, len = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r->out = malloc(cap);
	p = popen(cmd, "r");
	ck_assert_msg(p, "popen %s", cmd);
	for (;;) {
		size_t n;

		if (len + 4096 >= cap)
			r->out = realloc(r->out, cap *= 2);
		n = fread(r->out + len, 1, cap - len - 1, p);
		if (!n)
			break;
		len += n;
	}
	r->out[len] = '\0';
	st = pclose(p);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	{
		char *copy = strdup(r->out);

		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char k[64], a[32];
			long long v;

			if (line[0] == '{') {
				json_t *j = json_loads(line, 0, NULL);

				if (j) {
					json_log_line(line, j);
					json_decref(r->report);
					r->report = j;
				}
			} else if ((!strncmp(line, "truth ", 6) || !strncmp(line, "kernel ", 7)) &&
				   r->nt < 4096) {
				const char *rest = strchr(line, ' ') + 1;

				if (sscanf(rest, "%63s %31s %lld", k, a, &v) == 3) {
					snprintf(r->t[r->nt].key, 64, "%s", k);
					snprintf(r->t[r->nt].arg, 32, "%s", a);
					r->t[r->nt++].val = v;
				} else if (sscanf(rest, "%63s %lld", k, &v) == 2) {
					snprintf(r->t[r->nt].key, 64, "%s", k);
					r->t[r->nt].arg[0] = '\0';
					r->t[r->nt++].val = v;
				}
			}
		}
		free(copy);
	}
	return r;
}

long long truth(const struct result *r, const char *key)
{
	for (int i = r->nt - 1; i >= 0; i--)
		if (!strcmp(r->t[i].key, key))
			return r->t[i].val;
	ck_abort_msg("workload printed no '%s'", key);
	return -1;
}

long long jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	ck_assert_msg(json_is_integer(v), "JSON key '%s' missing or not an integer", key);
	return json_integer_value(v);
}

bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/*
 * Whether sched_process_exit fires before exit_mm() (6.16+, kernel commit
 * "exit: move and extend sched_process_exit() tracepoint"), so that memacct
 * reads an exited process's RSS at exit; before, it is null.
 */
static bool exit_rss_known(void)
{
	return kernel_at_least(6, 16);
}

json_t *proc_by_pid(const struct result *r, long long pid)
{
	json_t *procs = json_object_get(r->report, "processes"), *p;
	size_t i;

	json_array_foreach(procs, i, p)
		if (jint(p, "pid") == pid)
			return p;
	ck_abort_msg("pid %lld not in the report", pid);
	return NULL;
}

void assert_near(const char *what, long long got, long long want)
{
	long long tol = want / 100 > (long long)SLACK ? want / 100 : (long long)SLACK;

	ck_assert_msg(llabs(got - want) <= tol, "%s: memacct %lld, truth %lld (tolerance %lld)",
		      what, got, want, tol);
	printf("  %-40s memacct %12lld  truth %12lld\n", what, got, want);
}

long long rss_counter_lag_bytes(void)
{
	long long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus * (2 * cpus > 32 ? 2 * cpus : 32) * (long long)PAGE;
}

void assert_exact(const char *what, long long got, long long want)
{
	ck_assert_msg(got == want, "%s: memacct %lld, truth %lld (exact: %+lld pages)", what, got,
		      want, (got - want) / (long long)PAGE);
	printf("  %-40s memacct %12lld  truth %12lld  (exact)\n", what, got, want);
}

/*
 * The exec's argument pages, the one range where the zero fills are not
 * exact: fs/exec.c get_arg_page() allocates them in execve(), through
 * get_user_pages on the new mm while the old image runs, with no fault
 * entered: counted in about one run of five, by a classification state
 * left over from the old image (docs/metrics.md "Known blind spots"). One
 * page with a small environment.
 */
int numa_nodes(void)
{
	glob_t g;
	int n = 0;

	if (!glob("/sys/devices/system/node/node[0-9]*", 0, NULL, &g))
		n = (int)g.gl_pathc;
	globfree(&g);
	return n;
}

/*
 * fault_alloc_bytes of the zero_fill process: null on one NUMA node (the
 * programs count it only where they place allocations on nodes); with
 * several, every page its faults allocated: its anonymous pages (less up
 * to the exec's argument pages, which no fault allocates) and up to its
 * page tables (VmPTE, which its faults allocated too) and 16 page-cache
 * pages more (a file page a fault read in: none when the binary and libc
 * are cached, as they are after the exec).
 */
static void assert_fault_alloc(const char *what, const struct result *r, json_t *proc)
{
	json_t *v = json_object_get(proc, "fault_alloc_bytes");
	long long anon = truth(r, "process_zero_fill_bytes") + truth(r, "process_cow_file_bytes");
	long long lo = anon - truth(r, "exec_arg_bytes");
	long long hi = anon + truth(r, "vm_pte_bytes") + 16 * (long long)PAGE;

	if (numa_nodes() <= 1) {
		ck_assert_msg(json_is_null(v), "%s: fault_alloc_bytes on one NUMA node is not "
			      "measured, yet reads %lld", what, jint(proc, "fault_alloc_bytes"));
		printf("  %-40s null on one NUMA node\n", "fault_alloc_bytes");
		return;
	}
	ck_assert_msg(json_is_integer(v) && json_integer_value(v) >= lo &&
		      json_integer_value(v) <= hi,
		      "%s: fault_alloc_bytes %lld, truth %lld to %lld (anon pages, page tables)",
		      what, jint(proc, "fault_alloc_bytes"), lo, hi);
	printf("  %-40s memacct %12lld  truth %lld to %lld\n", "fault_alloc_bytes",
	       jint(proc, "fault_alloc_bytes"), lo, hi);
}

void assert_anon_truth(const char *what, const struct result *r, json_t *proc)
{
	long long all = truth(r, "process_zero_fill_bytes"), arg = truth(r, "exec_arg_bytes");
	long long got = jint(proc, "zero_fill_bytes");
	char w[160];

	snprintf(w, sizeof(w), "%s: process zero fill", what);
	ck_assert_msg(got >= all - arg && got <= all,
		      "%s: memacct %lld, truth %lld less up to the exec's %lld argument bytes "
		      "(%+lld pages)", w, got, all, arg, (got - all) / (long long)PAGE);
	printf("  %-40s memacct %12lld  truth %12lld  (exact but the exec's %lld)\n", w, got,
	       all, arg);
	snprintf(w, sizeof(w), "%s: process file cow", what);
	assert_exact(w, jint(proc, "cow_file_copied_bytes"), truth(r, "process_cow_file_bytes"));
	assert_fault_alloc(what, r, proc);
}

const char *fault_hook_prog(const char *pin_path)
{
	/* the pinned link, and the program's label in memacct_bpf_runs_total */
	static const char *const hooks[][2] = {
		{ "page_fault_user", "page_fault_user" },
		{ "page_fault_user_old", "page_fault_user_old" },
		{ "page_fault_perf_cpu0", "page_fault_perf" },
	};
	char path[512];

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		snprintf(path, sizeof(path), "%s/links/%s", pin_path, hooks[i][0]);
		if (access(path, F_OK) == 0)
			return hooks[i][1];
	}
	return NULL;
}

bool fault_hook_pinned(const char *pin_path)
{
	return fault_hook_prog(pin_path) != NULL;
}

int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
		      !getsockname(fd, (struct sockaddr *)&sa, &len),
		      "a free port of 127.0.0.1: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/*
 * tests/sweep.sh over our cgroup root and bpffs, its lines to our log: what
 * runners that died left, and with @mine what our own finished tests left
 * (named with our PID: CK_NOFORK).
 */
static void sweep(bool mine)
{
	char cmd[PATH_MAX * 3 + 64];

	snprintf(cmd, sizeof(cmd), "sh %s/sweep.sh %s %s %d", testsdir, memacct, cgroot,
		 mine ? (int)getpid() : 0);
	fflush(stdout);
	if (system(cmd) != 0)
		printf("sweep: %s failed\n", cmd);
}

void sweep_leftovers(void)
{
	sweep(true);
}

int run_cgroup_parent(char *dir, size_t len)
{
	struct memcg own, parent;

	if (memcg_member_of(0, &own) || memcg_run_parent(&own, &parent, NULL))
		return -1;
	return snprintf(dir, len, "%s", parent.path) < (int)len ? 0 : -1;
}

int run_cgroup_find(pid_t run_pid, char *path, size_t len)
{
	char dir[PATH_MAX], pat[PATH_MAX + 64];
	glob_t g;
	int err;

	if (run_cgroup_parent(dir, sizeof(dir)))
		return -1;
	snprintf(pat, sizeof(pat), "%s/memacct-run-%d-*", dir, (int)run_pid);
	if (glob(pat, GLOB_ONLYDIR, NULL, &g))
		return -1;
	err = g.gl_pathc == 1 && snprintf(path, len, "%s", g.gl_pathv[0]) < (int)len ? 0 : -1;
	globfree(&g);
	return err;
}

void cg_set_memory_max(const char *cg, unsigned long long bytes)
{
	char f[600];
	FILE *fp;

	snprintf(f, sizeof(f), "%s/%s", cg, cgversion == 1 ? "memory.limit_in_bytes" :
		 "memory.max");
	fp = fopen(f, "w");
	ck_assert_msg(fp, "%s: %s", f, strerror(errno));
	fprintf(fp, "%llu\n", bytes);
	ck_assert_msg(fclose(fp) == 0, "writing %s: %s", f, strerror(errno));
}

bool cg_children_memory(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;

	if (cgversion != 2)
		return true;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	f = fopen(path, "w");
	if (!f)
		return false;
	return (fputs("+memory", f) >= 0) & (fclose(f) == 0);
}

/* the tests that skipped themselves, for main()'s allow-list check */
static char skipped[64][64];
static int nskipped;

void skip_test(const char *func, const char *fmt, ...)
{
	size_t n = strlen(func);
	va_list ap;

	/* START_TEST(test_x) defines test_x_fn() */
	if (n > 3 && !strcmp(func + n - 3, "_fn"))
		n -= 3;
	if (nskipped < 64)
		snprintf(skipped[nskipped++], sizeof(skipped[0]), "%.*s", (int)n, func);
	printf("SKIP %.*s: ", (int)n, func);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

pid_t spawn_sh(const char *cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

pid_t spawn_daemon(const char *cmd, int port)
{
	pid_t pid = spawn_sh(cmd);

	for (int i = 0; i < 300; i++) {
		struct result *r = run_cmd("curl -sf -m 2 http://127.0.0.1:%d/healthz", port);
		bool up = r->status == 0;

		result_free(r);
		if (up)
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		sleep_ms(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

struct result *memacct_run(const char *workload_and_args)
{
	struct result *r = run_cmd("%s -j run -- %s/%s", memacct, workloads, workload_and_args);

	ck_assert_msg(r->report, "no JSON report; output was:\n%s", r->out);
	return r;
}

/* ---- schema -------------------------------------------------------- */

static const char *const metric_keys[] = {
	"rss_bytes", "anon_bytes", "file_bytes", "shmem_bytes", "rss_peak_bytes",
	"mlocked_bytes", "mlocked_peak_bytes", "pinned_vm_bytes", "pinned_vm_peak_bytes",
	"pinned_bytes", "pinned_peak_bytes", "cow_copied_bytes", "cow_file_copied_bytes",
	"zero_fill_bytes", "remote_numa_alloc_bytes", "numa_migrated_bytes",
	"page_faults_total", "major_faults_total", "oom_kills_total",
};

START_TEST(test_schema_and_exit_status)
{
	struct result *r = run_cmd("%s -j run -- sh -c 'exit 7'", memacct);
	json_t *cg, *procs, *p;
	size_t i;

	ck_assert_int_eq(r->status, 7);
	ck_assert_ptr_nonnull(r->report);
	ck_assert_str_eq(json_string_value(json_object_get(r->report, "schema")),
			 "memacct.report/v1");
	ck_assert_str_eq(json_string_value(json_object_get(r->report, "command")), "run");
	ck_assert_int_eq(jint(r->report, "exit_status"), 7);
	ck_assert(json_is_number(json_object_get(r->report, "elapsed_s")));
	jint(r->report, "dropped_events");
	cg = json_object_get(r->report, "cgroup");
	ck_assert(json_is_string(json_object_get(cg, "path")));
	ck_assert(jint(cg, "id") > 0);
	ck_assert(jint(cg, "version") == 1 || jint(cg, "version") == 2);
	for (size_t k = 0; k < sizeof(metric_keys) / sizeof(metric_keys[0]); k++)
		jint(json_object_get(r->report, "totals"), metric_keys[k]);
	procs = json_object_get(r->report, "processes");
	ck_assert_int_ge(json_array_size(procs), 1);
	json_array_foreach(procs, i, p) {
		jint(p, "pid");
		jint(p, "ppid");
		ck_assert(json_is_string(json_object_get(p, "comm")));
		ck_assert(json_is_boolean(json_object_get(p, "exited")));
		for (size_t k = 0; k < sizeof(metric_keys) / sizeof(metric_keys[0]); k++) {
			json_t *v = json_object_get(p, metric_keys[k]);

			/* an exited process's RSS at exit: null (unknown) where
			 * sched_process_exit fires after exit_mm(), before 6.16;
			 * so is the RSS PEAK of one that exec'd and never grew
			 * past its image before the exec (docs/metrics.md) */
			bool rss = !strcmp(metric_keys[k], "rss_bytes") ||
				   !strcmp(metric_keys[k], "anon_bytes") ||
				   !strcmp(metric_keys[k], "file_bytes") ||
				   !strcmp(metric_keys[k], "shmem_bytes") ||
				   !strcmp(metric_keys[k], "rss_peak_bytes");

			if (rss && json_is_true(json_object_get(p, "exited")) && !exit_rss_known())
				ck_assert_msg(json_is_null(v) || json_is_integer(v), "%s", metric_keys[k]);
			else
				jint(p, metric_keys[k]);
		}
	}
	/* the cgroup is removed afterwards */
	{
		char path[512];

		snprintf(path, sizeof(path), "%s",
			 json_string_value(json_object_get(cg, "fs_path")));
		ck_assert_msg(access(path, F_OK) != 0, "cgroup %s left behind", path);
	}
	result_free(r);
	r = run_cmd("%s run -- /nonexistent/command 2>/dev/null", memacct);
	ck_assert_int_eq(r->status, 127);
	result_free(r);
	r = run_cmd("%s run --interval bogus -- true 2>/dev/null", memacct);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
}
END_TEST

/* ---- CoW classifier ------------------------------------------------ */

/*
 * The ground-truth fault checks, one set for both fault hooks: this suite
 * runs them with the kernel's choice (@hook NULL), the faulthook suite with
 * the perf event hook forced by its fixture (@hook "perf", which must be
 * what MEMACCT_FAULT_HOOK says). @hook prefixes the messages.
 */
static void fault_hook_check(const char *hook)
{
	const char *env = getenv("MEMACCT_FAULT_HOOK");

	if (hook)
		ck_assert_msg(env && !strcmp(env, hook), "%s hook checks without "
			      "MEMACCT_FAULT_HOOK=%s (it is %s)", hook, hook, env ? env : "unset");
}

static struct result *fault_run(const char *hook, const char *workload_and_args)
{
	fault_hook_check(hook);
	return memacct_run(workload_and_args);
}

/* @what, prefixed "HOOK hook: " when @hook is forced; valid until the next call */
static const char *fault_label(const char *hook, const char *what)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s%s%s", hook ? hook : "", hook ? " hook: " : "", what);
	return buf;
}

/*
 * cow_fork's truths: exact to the page where its fork is raw (x86-64: no
 * user-memory write beside the buffer's between clone() and wait4(),
 * raw_fork.h), else a plain fork()'s few incidental copies (stack, libc
 * data) within assert_near(). @above: pages the parent may copy on top,
 * after it reaped the child: its stack, .bss and stdio pages are
 * write-protected since the fork and reused, or copied when the kernel
 * finds an extra reference on one (wp_can_reuse_anon_folio(); 1 page in
 * the v2 guest, perf hook, 2026-11-29).
 */
static void cow_assert(const struct result *r, const char *what, long long got, long long want,
		       int above)
{
	if (!truth(r, "exact")) {
		assert_near(what, got, want);
	} else if (!above) {
		assert_exact(what, got, want);
	} else {
		ck_assert_msg(got >= want && got <= want + above * (long long)PAGE,
			      "%s: memacct %lld, truth %lld (+ up to %d pages)", what, got, want,
			      above);
		printf("  %-40s memacct %12lld  truth %12lld  (+ up to %d pages)\n", what, got,
		       want, above);
	}
}

void fault_cow_fork_child(const char *hook)
{
	struct result *r = fault_run(hook, "cow_fork 100 4");
	json_t *child = proc_by_pid(r, truth(r, "child_pid"));
	json_t *parent = proc_by_pid(r, truth(r, "parent_pid"));
	json_t *t = json_object_get(r->report, "totals");

	ck_assert_int_eq(r->status, 0);
	cow_assert(r, fault_label(hook, "fork: child cow_copied_bytes"),
		   jint(child, "cow_copied_bytes"), truth(r, "child_cow_bytes"), 0);
	cow_assert(r, fault_label(hook, "fork: parent cow_copied_bytes"),
		   jint(parent, "cow_copied_bytes"), truth(r, "parent_cow_bytes"), 8);
	cow_assert(r, fault_label(hook, "fork: cgroup cow_copied_bytes"),
		   jint(t, "cow_copied_bytes"), truth(r, "child_cow_bytes"), 8);
	ck_assert_int_eq(jint(t, "fault_unclassified_bytes"), 0);
	ck_assert(json_is_true(json_object_get(child, "exited")));
	result_free(r);
}

void fault_cow_fork_parent_writes(const char *hook)
{
	struct result *r = fault_run(hook, "cow_fork 64 2 --parent-writes");

	cow_assert(r, fault_label(hook, "fork: parent writes, parent cow"),
		   jint(proc_by_pid(r, truth(r, "parent_pid")), "cow_copied_bytes"),
		   truth(r, "parent_cow_bytes"), 8);
	cow_assert(r, fault_label(hook, "fork: parent writes, child cow"),
		   jint(proc_by_pid(r, truth(r, "child_pid")), "cow_copied_bytes"),
		   truth(r, "child_cow_bytes"), 0);
	result_free(r);
}

/*
 * The truth comes from pagemap, on kernels that map the zero page on a read
 * fault (zero fills at the write) and on those that allocate a zeroed page
 * there (pvm_no_zero_page=1, s390: zero fills at the read) alike.
 */
void fault_zero_fill(const char *hook)
{
	struct result *r = fault_run(hook, "zero_fill 64");
	json_t *t = json_object_get(r->report, "totals");

	printf("  zero_fill: this kernel %s (pagemap: %lld pages left the zero page at the "
	       "write, %lld had their own frame after the read)\n",
	       truth(r, "own_frame_pages") ? "allocates on read faults" : "maps the zero page",
	       truth(r, "zero_page_pages"), truth(r, "own_frame_pages"));
	ck_assert_int_eq(truth(r, "zero_page_pages") + truth(r, "own_frame_pages"),
			 truth(r, "buffer_bytes") / 4096);

	assert_near(fault_label(hook, "read-then-write anon: cow"), jint(t, "cow_copied_bytes"),
		    truth(r, "cow_bytes"));
	/* the buffer's pages, and the cgroup's (memacct's child before its
	 * exec adds a few) */
	ck_assert_msg(jint(t, "zero_fill_bytes") >= truth(r, "zero_fill_bytes"),
		      "read-then-write anon: cgroup zero fill %lld < the buffer's %lld",
		      jint(t, "zero_fill_bytes"), truth(r, "zero_fill_bytes"));
	/* the process's, every page exact (issue 47: a 1% tolerance here
	 * let ~240 missing pages pass) */
	assert_anon_truth(fault_label(hook, "read-then-write anon"), r,
			  proc_by_pid(r, truth(r, "pid")));
	/* the cgroup's RSS PEAK is the kernel's own peak charge, which the
	 * workload read just before it exited: at least that, and at most
	 * what its exit (stdout's pipe) charged after, 16 pages */
	if (truth(r, "cgroup_peak_bytes") >= 0) {
		long long got = jint(t, "rss_peak_bytes"), want = truth(r, "cgroup_peak_bytes");

		ck_assert_msg(got >= want && got <= want + (long long)SLACK,
			      "cgroup rss_peak_bytes %lld, the cgroup's peak before the exit %lld",
			      got, want);
		printf("  %-40s memacct %12lld  kernel %12lld\n", "cgroup rss_peak_bytes", got,
		       want);
	}
	result_free(r);
}

/* Whether transparent huge pages may be given to a MADV_HUGEPAGE region. */
static bool thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return buf[0] && !strstr(buf, "[never]");
}

/*
 * Writes of 64 MiB of MADV_HUGEPAGE memory (numpy's arrays): each
 * transparent huge page is a zero fill of its bytes, on a first touch and
 * after a read that mapped the huge zero page. Truth: the buffer's Rss
 * (smaps), every page of it a zero fill, and the process's own, exact
 * (assert_anon_truth(): the loader's and libc's 12 pages here). On b27f6ef:
 * 49,152 bytes (the THP allocations, order 9 without __GFP_ZERO, were not
 * classified). @what names the run; @huge_needed: where THP is enabled the
 * kernel must have given huge pages, else the run tests nothing new.
 */
static void fault_zero_fill_thp_mode(const char *hook, const char *workload, const char *what,
				     bool huge_needed)
{
	struct result *r = fault_run(hook, workload);
	json_t *p = proc_by_pid(r, truth(r, "pid"));
	long long want = truth(r, "zero_fill_bytes"), got = jint(p, "zero_fill_bytes");
	long long huge = truth(r, "anon_huge_bytes");

	ck_assert_int_eq(r->status, 0);
	if (!thp_enabled())
		printf("  zero_fill --thp: THP disabled on this kernel: small pages only\n");
	else if (huge_needed)
		ck_assert_msg(huge >= want / 2, "THP enabled but AnonHugePages %lld of %lld", huge,
			      want);
	ck_assert_msg(got >= want,
		      "%s: zero_fill_bytes %lld, the buffer's %lld (AnonHugePages %lld)",
		      fault_label(hook, what), got, want, huge);
	printf("  %-40s memacct %12lld  buffer %12lld  (AnonHugePages %lld)\n",
	       fault_label(hook, what), got, want, huge);
	assert_anon_truth(fault_label(hook, what), r, p);
	ck_assert_int_eq(jint(p, "cow_copied_bytes"), 0);
	result_free(r);
}

void fault_zero_fill_thp(const char *hook)
{
	fault_zero_fill_thp_mode(hook, "zero_fill --thp 64", "THP first touch: zero fill", true);
	/* before v6.13 the write splits the huge zero page: small pages */
	fault_zero_fill_thp_mode(hook, "zero_fill --thp --read-first 64",
				 "THP read, write: zero fill", false);
}

/*
 * CoW by mapping (issue 42): cow_maps' parent holds a brk heap, an anon
 * mmap and a private file mapping it wrote, each resident; 4 workers copy
 * 25%, 50% and all of them. Per worker, the entry of each mapping: its
 * kind, its bytes within 5% below the truth (exact on this host; the
 * heap, copied first, loses the pages before the process's 16th when a
 * switch folds them: COWM_MIN_PAGES; TCG guests lost up to 3% more, not
 * explained yet) and 16 pages above (the heap: libc's own, 2 pages; the
 * 6.12 guest's anon entry once had 3 more pages than the worker wrote:
 * suspected, not verified, a fault whose PTE NUMA balancing changed under
 * it, which frees its new page and copies again, both counted), the
 * parent's resident bytes of it (its smaps Rss before the fork, + 16 pages
 * printed since, - 16 pages under migration when read), read at a child's
 * first copy (one made for the parent's own copies while it still filled
 * the mapping gave TCG guests 9-75%: cow_maps.h); unattributed: what it
 * copied before its first 16 pages (COWM_MIN_PAGES: its stack, libc's
 * data). Before
 * v5.17 (no bpf_find_vma(): the *_old programs) nothing is attributed, and
 * all of it is unattributed.
 */
void fault_cow_maps(const char *hook)
{
	static const char *const kinds[] = { "heap", "anon", "file" };
	struct result *r = fault_run(hook, "cow_maps 4 32 64 16");
	bool attributed = kernel_at_least(5, 17);
	char key[64];

	ck_assert_int_eq(r->status, 0);
	for (int w = 0; w < truth(r, "workers"); w++) {
		json_t *p, *maps, *e = NULL;
		long long all;

		snprintf(key, sizeof(key), "worker_%d", w);
		p = proc_by_pid(r, truth(r, key));
		ck_assert_msg(p, "worker %d has no row", w);
		maps = json_object_get(p, "cow_by_mapping");
		ck_assert(json_is_array(maps));
		all = jint(p, "cow_copied_bytes") + jint(p, "cow_file_copied_bytes");
		if (!attributed) {
			ck_assert_int_eq(json_array_size(maps), 0);
			assert_exact("before 5.17: unattributed",
				     jint(p, "cow_by_mapping_unattributed_bytes"), all);
			continue;
		}
		/* the copies before the process has 16 (COWM_MIN_PAGES): its
		 * stack's, libc's after fork */
		ck_assert_msg(jint(p, "cow_by_mapping_unattributed_bytes") < 16 * (long long)PAGE ||
			      jint(p, "cow_by_mapping_unattributed_bytes") <= all / 20,
			      "worker %d: %lld bytes unattributed", w,
			      jint(p, "cow_by_mapping_unattributed_bytes"));
		for (int k = 0; k < 3; k++) {
			long long start, end, rss, want, got, par;
			const char *kind;
			size_t i;

			snprintf(key, sizeof(key), "map_%s_start", kinds[k]);
			start = truth(r, key);
			snprintf(key, sizeof(key), "map_%s_end", kinds[k]);
			end = truth(r, key);
			snprintf(key, sizeof(key), "map_%s_rss", kinds[k]);
			rss = truth(r, key);
			snprintf(key, sizeof(key), "copied_%s", kinds[k]);
			want = truth(r, key);
			json_array_foreach(maps, i, e)
				if (jint(e, "start") >= start && jint(e, "start") < end)
					break;
			ck_assert_msg(i < json_array_size(maps), "worker %d: no entry of its %s "
				      "mapping [%llx, %llx)", w, kinds[k], start, end);
			kind = json_string_value(json_object_get(e, "kind"));
			ck_assert_msg(kind && !strcmp(kind, kinds[k]), "worker %d: %s mapping "
				      "of kind %s", w, kinds[k], kind ? kind : "(none)");
			got = jint(e, "bytes");
			snprintf(key, sizeof(key), "cow_by_mapping: %s bytes", kinds[k]);
			/* the heap, copied first: less the pages before the
			 * process's 16th when a switch folded them before it
			 * (COWM_MIN_PAGES); + 16 pages (above) */
			ck_assert_msg(got >= want / 100 * 95 && got <= want + 16 * (long long)PAGE,
				      "worker %d: %s %lld, truth %lld (- 5%%, + 16 pages)", w,
				      kinds[k], got, want);
			par = jint(e, "parent_resident_bytes");
			ck_assert_msg(par >= rss - 16 * (long long)PAGE &&
				      par <= rss + 16 * (long long)PAGE,
				      "worker %d: parent's %s resident %lld, its smaps Rss %lld", w,
				      kinds[k], par, rss);
			ck_assert(fabs(json_real_value(json_object_get(e, "share_of_parent")) -
				       (double)got / par) < 1e-9);
			if (!w)
				printf("  %-40s memacct %12lld  truth %12lld  parent %lld of %lld\n",
				       fault_label(hook, key), got, want, par, rss);
		}
	}
	if (attributed) {	/* by kind, every copy: the three + a few pages each */
		json_t *p = proc_by_pid(r, truth(r, "worker_0"));
		json_t *by = json_object_get(p, "cow_copied_bytes_by_mapping_kind");
		long long sum = 0;

		for (int k = 0; k < 3; k++) {
			long long got = jint(by, kinds[k]), want;

			snprintf(key, sizeof(key), "copied_%s", kinds[k]);
			want = truth(r, key);
			ck_assert_msg(got >= want / 100 * 95 && got <= want + 16 * (long long)PAGE,
				      "worker 0: CoW of kind %s %lld, truth %lld (- 5%%, + 16 pages)",
				      kinds[k], got, want);
		}
		ck_assert_int_eq(jint(by, "unknown"), 0);
		sum = jint(by, "heap") + jint(by, "anon") + jint(by, "stack") + jint(by, "file");
		assert_exact(fault_label(hook, "by kind: the sum"), sum,
			     jint(p, "cow_copied_bytes") + jint(p, "cow_file_copied_bytes"));
	}
	if (attributed) {	/* the verdict: the anon mmap, the worst case × 4 */
		json_t *v = json_array_get(json_object_get(r->report, "verdict_details"), 0);
		json_t *m = json_object_get(v, "mapping");
		long long par = jint(m, "parent_resident_bytes"), rss = truth(r, "map_anon_rss");

		ck_assert_msg(m, "no mapping in the CoW verdict");
		ck_assert_str_eq(json_string_value(json_object_get(m, "kind")), "anon");
		ck_assert_msg(par >= rss && par <= rss + 64 * (long long)PAGE,
			      "verdict: the parent's anon %lld resident, its smaps Rss %lld", par, rss);
		assert_exact(fault_label(hook, "verdict: worst case"), jint(m, "worst_case_bytes"),
			     par * truth(r, "workers"));
	}
	result_free(r);
}

/*
 * CoW while other threads hold the mmap lock for write (mmap/mprotect/munmap
 * in a loop): bpf_find_vma() fails with -EBUSY for many of the copies, and
 * the lockless maple tree walk must classify them. Truth: the frames of the
 * buffer that changed in the child (pagemap). The walk needs the maple tree
 * (v6.1, d4af56c5c7c6); before it the copies that cannot be classified must
 * still show up, as fault_unclassified_bytes, not vanish.
 */
START_TEST(test_cow_mmap_lock_busy)
{
	struct result *r = memacct_run("cow_mmap_churn 64 3");
	json_t *c = proc_by_pid(r, truth(r, "child_pid"));
	json_t *drops = json_object_get(r->report, "dropped_events_by_cause");
	long long cow = jint(c, "cow_copied_bytes"), unc = jint(c, "fault_unclassified_bytes");

	printf("  mmap lock busy: %lld churn rounds, %lld VMAs read by the lockless walk\n",
	       truth(r, "churn_ops"), jint(r->report, "vma_lockless_lookups"));
	if (kernel_at_least(6, 1)) {
		assert_near("mmap lock busy: child cow", cow, truth(r, "child_cow_bytes"));
		ck_assert_int_eq(unc, 0);
	} else {
		assert_near("mmap lock busy: child cow + unclassified (< 6.1)", cow + unc,
			    truth(r, "child_cow_bytes"));
	}
	ck_assert_int_eq(jint(drops, "vma_busy"), 0);
	ck_assert_int_eq(jint(r->report, "dropped_events"), 0);
	result_free(r);
}
END_TEST

/* A file mapping's workload, run in tests/ (its file is made there). */
static struct result *fault_file_run(const char *hook, const char *workload, const char *args)
{
	struct result *r;

	fault_hook_check(hook);
	r = run_cmd("cd %s && %s -j run -- %s/%s %s", testsdir, memacct, workloads, workload,
		    args);
	ck_assert_msg(r->report, "no JSON report: %s", r->out);
	return r;
}

void fault_file_private(const char *hook, const char *args, const char *what)
{
	struct result *r = fault_file_run(hook, "file_private", args);
	json_t *t = json_object_get(r->report, "totals");

	/*
	 * Once (stop 54's CI rehearsal, guests beside make check) the copies
	 * read one page over the truth (read+write: 33,607,680 of 33,603,584),
	 * not seen again alone, under CPU load or under compaction (40 runs).
	 * Not explained: a rerun must be exact, and both figures are printed.
	 */
	if (jint(t, "cow_file_copied_bytes") != truth(r, "file_cow_bytes")) {
		json_t *p = proc_by_pid(r, truth(r, "pid"));
#define J(o, k) ((long long)json_integer_value(json_object_get(o, k)))

		printf("  %s: memacct %lld, truth %lld: once more (the process: file cow %lld, "
		       "cow %lld, zero fill %lld, unclassified %lld, faults %lld; BPF runs "
		       "skipped %lld, lockless VMA reads %lld)\n", fault_label(hook, what),
		       jint(t, "cow_file_copied_bytes"), truth(r, "file_cow_bytes"),
		       J(p, "cow_file_copied_bytes"), J(p, "cow_copied_bytes"),
		       J(p, "zero_fill_bytes"), J(p, "fault_unclassified_bytes"),
		       J(p, "page_faults_total"), J(r->report, "bpf_runs_skipped"),
		       J(r->report, "vma_lockless_lookups"));
#undef J
		result_free(r);
		r = fault_file_run(hook, "file_private", args);
		t = json_object_get(r->report, "totals");
	}
	assert_exact(fault_label(hook, what), jint(t, "cow_file_copied_bytes"),
		    truth(r, "file_cow_bytes"));
	assert_exact(fault_label(hook, "MAP_PRIVATE file: anon cow"), jint(t, "cow_copied_bytes"),
		    0);
	result_free(r);
}

void fault_file_shared(const char *hook)
{
	struct result *r = fault_file_run(hook, "file_shared", "32");
	json_t *t = json_object_get(r->report, "totals");

	assert_exact(fault_label(hook, "MAP_SHARED write: file cow"),
		    jint(t, "cow_file_copied_bytes"), truth(r, "file_cow_bytes"));
	assert_exact(fault_label(hook, "MAP_SHARED write: cow"), jint(t, "cow_copied_bytes"),
		    truth(r, "cow_bytes"));
	result_free(r);
}

void fault_reuse_tmpfs(const char *hook)
{
	struct result *r = fault_run(hook, "reuse_tmpfs");
	json_t *t = json_object_get(r->report, "totals");
	long long got, want;

	/* the buffer's copies (pagemap: the kernel reuses nearly every page,
	 * but copies one with an extra reference, wp_can_reuse_anon_folio()),
	 * and up to 8 pages outside it (stack, .bss, stdio) written after the
	 * fork, which the kernel may copy the same way (one seen in the v2
	 * guest, perf hook) */
	got = jint(t, "cow_copied_bytes");
	want = truth(r, "cow_bytes");
	ck_assert_msg(got >= want && got <= want + 8 * (long long)PAGE,
		      "%s: memacct %lld, the buffer's copies %lld (+ up to 8 pages)",
		      fault_label(hook, "reuse + tmpfs write/read: cow"), got, want);
	printf("  %-40s memacct %12lld  truth %12lld  (+ up to 8 pages)\n",
	       fault_label(hook, "reuse + tmpfs write/read: cow"), got, want);
	/* The loader's relocation writes: the file pages smaps says were copied
	 * (a plain fork's child may copy libc's .data too: cow_assert()) */
	cow_assert(r, fault_label(hook, "reuse + tmpfs write/read: file cow"),
		   jint(t, "cow_file_copied_bytes"), truth(r, "file_cow_bytes"), 0);
	result_free(r);
}

START_TEST(test_cow_fork_child) { fault_cow_fork_child(NULL); }
END_TEST

START_TEST(test_cow_fork_parent_writes) { fault_cow_fork_parent_writes(NULL); }
END_TEST

START_TEST(test_zero_fill) { fault_zero_fill(NULL); }
END_TEST

START_TEST(test_cow_maps) { fault_cow_maps(NULL); }
END_TEST

START_TEST(test_zero_fill_thp) { fault_zero_fill_thp(NULL); }
END_TEST

START_TEST(test_file_private_write)
{
	fault_file_private(NULL, "32", "MAP_PRIVATE write: file cow");
}
END_TEST

START_TEST(test_file_private_read_first)
{
	fault_file_private(NULL, "32 --read-first", "MAP_PRIVATE read+write: file cow");
}
END_TEST

START_TEST(test_file_shared) { fault_file_shared(NULL); }
END_TEST

START_TEST(test_reuse_tmpfs) { fault_reuse_tmpfs(NULL); }
END_TEST

/* ---- page cache by file (issue 43) -------------------------------- */

/* page_cache_by_file's entry of the file with inode @ino, or NULL */
static json_t *page_cache_file(const struct result *r, long long ino)
{
	json_t *files = json_object_get(json_object_get(r->report, "page_cache_by_file"), "files");
	json_t *f;
	size_t i;

	json_array_foreach(files, i, f)
		if (jint(f, "inode") == ino)
			return f;
	return NULL;
}

/*
 * the file @name (in @dir) of page_cache_files' run @r: its bytes within 4
 * pages of what the workload's mincore() says it brought in, named by the
 * kernel, held by nobody (the run is over). Pages the kernel reclaimed
 * between that mincore() and the report (CI's guests beside this can make
 * memory scarce: 32 pages once) are gone from both the page cache and
 * memacct's figure: the file's resident bytes read again after the run
 * bound it from below.
 */
static void page_cache_cell(const struct result *r, const char *dir, const char *name)
{
	long long want, got, ino, now, low;
	struct result *res;
	char key[64];
	json_t *f;

	res = run_cmd("%s/page_cache_files --resident %s/%s", workloads, dir, name);
	ck_assert_int_eq(res->status, 0);
	snprintf(key, sizeof(key), "%s_resident_bytes", name);
	now = truth(res, key);
	result_free(res);
	snprintf(key, sizeof(key), "%s_ino", name);
	ino = truth(r, key);
	snprintf(key, sizeof(key), "%s_bytes", name);
	want = truth(r, key);
	f = page_cache_file(r, ino);
	got = f ? jint(f, "bytes") : 0;
	printf("  %s (inode %lld): memacct %lld (added %lld, removed %lld), mincore %lld "
	       "(after the run: %lld resident)\n", name, ino, got,
	       f ? jint(f, "added_bytes") : 0, f ? jint(f, "removed_bytes") : 0, want, now);
	low = (want < now ? want : now) - 4 * (long long)PAGE;
	if (got > want + 4 * (long long)PAGE || got < low) {
		char *pc = json_dumps(json_object_get(r->report, "page_cache_by_file"), JSON_COMPACT);
		char *sk = json_dumps(json_object_get(r->report, "bpf_runs_skipped"), JSON_COMPACT);

		printf("  page_cache_by_file: %s\n  bpf_runs_skipped: %s\n  dropped_events: %lld\n",
		       pc, sk, jint(r->report, "dropped_events"));
		free(pc);
		free(sk);
	}
	ck_assert_msg(got <= want + 4 * (long long)PAGE,
		      "%s: page_cache_by_file %lld bytes, mincore %lld", name, got, want);
	ck_assert_msg(got >= low,
		      "%s: page_cache_by_file %lld bytes, mincore %lld (%lld resident after the run)",
		      name, got, want, now);
	if (!want)
		return;
	ck_assert_str_eq(json_string_value(json_object_get(f, "name")), name);
	ck_assert(json_is_false(json_object_get(f, "mapped")));
	ck_assert(json_is_false(json_object_get(f, "open")));
}

/*
 * Issue 43's ground truth: three files read by two cgroups (two runs, one
 * after the other), 64/32/16 MiB on a disk file system. The first run reads
 * a and b, dropped first: both charged to it. The second reads b, cached by
 * the first and still charged there (the first run's cgroup is gone; its
 * pages went to the parent), and c, dropped first: c only. Each file's
 * bytes within 4 pages of mincore()'s count, per file and per cgroup.
 */
START_TEST(test_page_cache_by_file)
{
	char dir[128], args[256], path[160];
	struct result *r;
	struct statfs fs;

	snprintf(dir, sizeof(dir), "/var/tmp/memacct-pc-%d", (int)getpid());
	ck_assert(!mkdir(dir, 0700) || errno == EEXIST);
	ck_assert(!statfs(dir, &fs));
	ck_assert_msg(fs.f_type != TMPFS_MAGIC, "/var/tmp is tmpfs: no page cache to test");
	snprintf(args, sizeof(args), "page_cache_files %s pca:64 pcb:32", dir);
	r = memacct_run(args);
	ck_assert_int_eq(r->status, 0);
	page_cache_cell(r, dir, "pca");
	page_cache_cell(r, dir, "pcb");
	ck_assert_int_ge(jint(json_object_get(r->report, "page_cache_by_file"), "bytes"),
			 truth(r, "pca_bytes") + truth(r, "pcb_bytes"));
	result_free(r);
	snprintf(args, sizeof(args), "page_cache_files %s pcb:32:cached pcc:16", dir);
	r = memacct_run(args);
	ck_assert_int_eq(r->status, 0);
	page_cache_cell(r, dir, "pcb");
	page_cache_cell(r, dir, "pcc");
	ck_assert_int_eq(truth(r, "pcb_bytes"), 0);
	result_free(r);
	for (const char *const *n = (const char *const[]){ "pca", "pcb", "pcc", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	rmdir(dir);
}
END_TEST

/* ---- pinned -------------------------------------------------------- */

static void pinned_mode(const char *mode)
{
	struct result *r;
	json_t *p;
	char args[64];

	snprintf(args, sizeof(args), "mlock_steps %s 64", mode);
	r = memacct_run(args);
	ck_assert_int_eq(r->status, 0);
	p = proc_by_pid(r, truth(r, "pid"));
	printf(" %s:\n", mode);
	assert_exact("mlocked_bytes at exit = VmLck", jint(p, "mlocked_bytes"),
		    truth(r, "exit_locked_bytes"));
	assert_exact("pinned_vm_bytes at exit = VmPin", jint(p, "pinned_vm_bytes"),
		    truth(r, "exit_pinned_vm_bytes"));
	assert_exact("mlocked_peak_bytes = max VmLck", jint(p, "mlocked_peak_bytes"),
		    truth(r, "peak_locked_bytes"));
	assert_exact("pinned_vm_peak_bytes = max VmPin", jint(p, "pinned_vm_peak_bytes"),
		    truth(r, "peak_pinned_vm_bytes"));
	assert_exact("cgroup mlocked_peak_bytes",
		    jint(json_object_get(r->report, "totals"), "mlocked_peak_bytes"),
		    truth(r, "peak_locked_bytes"));
	result_free(r);
}

START_TEST(test_pinned_mlock) { pinned_mode("mlock"); }
END_TEST
START_TEST(test_pinned_mlock2_onfault) { pinned_mode("mlock2_onfault"); }
END_TEST
START_TEST(test_pinned_map_locked) { pinned_mode("map_locked"); }
END_TEST
START_TEST(test_pinned_mlockall) { pinned_mode("mlockall"); }
END_TEST
START_TEST(test_pinned_io_uring) { pinned_mode("io_uring"); }
END_TEST
START_TEST(test_pinned_steps) { pinned_mode("steps"); }
END_TEST
/* peaks that no exit value shows: pinned_vm back to 0 before exit, and a
 * cgroup whose locked memory went to 0 in one process before another's */
START_TEST(test_pinned_io_uring_steps) { pinned_mode("io_uring_steps"); }
END_TEST
START_TEST(test_pinned_steps2) { pinned_mode("steps2"); }
END_TEST

/* ---- lifecycle ----------------------------------------------------- */

START_TEST(test_short_lived_children)
{
	struct result *r = memacct_run("short_lived 200");
	long long parent = truth(r, "pid"), n = 0;
	json_t *procs = json_object_get(r->report, "processes"), *p;
	size_t i;

	json_array_foreach(procs, i, p)
		if (jint(p, "ppid") == parent && json_is_true(json_object_get(p, "exited")))
			n++;
	printf("  short-lived children reported: %lld of %lld\n", n, truth(r, "children"));
	ck_assert_int_eq(n, truth(r, "children"));
	ck_assert_int_eq(jint(r->report, "dropped_events"), 0);
	result_free(r);
}
END_TEST

/*
 * A process outside the cgroup is never counted in it. The outside CoW
 * workload runs while memacct's command is known to run (it made F.ready)
 * and that command waits for it to finish (F.fifo): never vacuous, however
 * slow the load (it used to start after a fixed 1 s sleep). The command
 * forks nothing (builtins), so its cgroup's CoW is exactly 0.
 */
START_TEST(test_outside_not_counted)
{
	struct result *r;
	char f[64];
	int status = -1;
	pid_t bg;
	json_t *procs, *q;
	size_t i;

	snprintf(f, sizeof(f), "/tmp/memacct-outside-%d", getpid());
	setenv("F", f, 1);
	setenv("W", workloads, 1);
	ck_assert_int_eq(system("rm -f $F.ready $F.fifo && mkfifo $F.fifo"), 0);
	bg = fork();
	if (bg == 0) {
		execl("/bin/sh", "sh", "-c",
		      "i=0; until [ -e $F.ready ]; do i=$((i+1)); [ $i -gt 600 ] && exit 9; "
		      "sleep 0.1; done; "
		      "for i in 1 2 3; do $W/cow_fork 32 1 > $F.out || exit 1; done; "
		      "grep -q '^truth child_cow_bytes 33554432$' $F.out || exit 2; "
		      "echo done > $F.fifo", NULL);
		_exit(1);
	}
	r = run_cmd("%s -j run -- sh -c ': > %s.ready; read x < %s.fifo'", memacct, f, f);
	waitpid(bg, &status, 0);
	system("rm -f $F.ready $F.fifo $F.out");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the outside CoW workload did not run while memacct ran (status 0x%x)",
		      status);
	ck_assert_ptr_nonnull(r->report);
	ck_assert_int_eq(r->status, 0);
	procs = json_object_get(r->report, "processes");
	json_array_foreach(procs, i, q)
		ck_assert_str_eq(json_string_value(json_object_get(q, "comm")), "sh");
	assert_exact("outside CoW counted in cgroup",
		     jint(json_object_get(r->report, "totals"), "cow_copied_bytes"), 0);
	result_free(r);
}
END_TEST

/* ---- attach -------------------------------------------------------- */

static char test_cg[256];

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	ck_assert_msg(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text),
		      "writing %s to %s: %s", text, path, strerror(errno));
	close(fd);
}

static void make_test_cgroup(const char *sub)
{
	char path[512];

	snprintf(test_cg, sizeof(test_cg), "%s/memacct-test-%d", cgroot, getpid());
	ck_assert_msg(!mkdir(test_cg, 0755), "mkdir %s: %s", test_cg, strerror(errno));
	/* v2: its children get the memory controller too, as a job
	 * scheduler's cgroups have it (our own cgroup: we may write there) */
	if (cgversion == 2) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", test_cg);
		write_file(path, "+memory");
	}
	if (sub) {
		snprintf(path, sizeof(path), "%s/%s", test_cg, sub);
		mkdir(path, 0755);
	}
}

static void remove_test_cgroup(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "find %s -depth -type d -exec rmdir {} + 2>/dev/null",
		 test_cg);
	if (system(cmd) < 0)
		perror("system");
}

START_TEST(test_attach_cgroup_by_name)
{
	char cmd[4096], name[512], f[64];
	struct result *r;
	json_t *t;

	make_test_cgroup("job_4711");
	/*
	 * a process joins the cgroup; then memacct attaches to it by name; once
	 * memacct's first interval report shows it attached (however long
	 * loading took: a sleep here was a race on a slow machine) the process
	 * forks a child that copies 16 MiB; SIGINT after one more interval.
	 * Waits bounded (60 s): a workload that never starts fails the test.
	 */
	snprintf(name, sizeof(name), "%s/job_4711", test_cg);
	snprintf(f, sizeof(f), "/tmp/memacct-attach-%d", getpid());
	snprintf(cmd, sizeof(cmd),
		 "rm -f %s.w %s.m; "
		 "sh -c 'echo $$ > %s/cgroup.procs && echo joined && i=0 && "
		 "until grep -q \"^{\" %s.m 2>/dev/null; do i=$((i+1)); [ $i -gt 600 ] && exit 9; "
		 "sleep 0.1; done; exec %s/cow_fork 64 4' > %s.w & w=$!; "
		 "i=0; until grep -q joined %s.w; do i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.1; done; "
		 "%s -j attach --cgroup job_4711 --interval 1s > %s.m & m=$!; "
		 "wait $w; sleep 1.2; kill -INT $m; wait $m; s=$?; cat %s.m %s.w; rm -f %s.m %s.w; exit $s",
		 f, f, name, f, workloads, f, f, memacct, f, f, f, f, f);
	r = run_cmd("%s", cmd);
	remove_test_cgroup();
	ck_assert_int_eq(r->status, 0);
	ck_assert_ptr_nonnull(r->report);
	ck_assert_str_eq(json_string_value(json_object_get(r->report, "command")), "attach");
	ck_assert(json_is_true(json_object_get(r->report, "final")));
	t = json_object_get(r->report, "totals");
	assert_near("attach: child cow_copied_bytes",
		    jint(proc_by_pid(r, truth(r, "child_pid")), "cow_copied_bytes"),
		    truth(r, "child_cow_bytes"));
	assert_near("attach: cgroup cow_copied_bytes", jint(t, "cow_copied_bytes"),
		    truth(r, "child_cow_bytes"));
	/* the diagnosis names the copies, counted since attach */
	{
		json_t *d = json_array_get(json_object_get(r->report, "verdict_details"), 0);

		ck_assert_msg(d && !strcmp(json_string_value(json_object_get(d, "kind")),
					   "cow_blowup"), "no CoW verdict in: %s", r->out);
		ck_assert(json_is_true(json_object_get(d, "since_attach")));
		ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(d, "text")),
					     "since attach"));
		assert_near("attach: verdict CoW bytes", jint(d, "bytes"),
			    truth(r, "child_cow_bytes"));
	}
	result_free(r);
}
END_TEST

START_TEST(test_attach_bad_input)
{
	struct result *r;
	char a[300], b[300];

	make_test_cgroup("a");
	snprintf(a, sizeof(a), "%s/a/dupname", test_cg);
	snprintf(b, sizeof(b), "%s/b", test_cg);
	mkdir(a, 0755);
	mkdir(b, 0755);
	snprintf(b, sizeof(b), "%s/b/dupname", test_cg);
	mkdir(b, 0755);
	r = run_cmd("%s attach --cgroup dupname --duration 1s 2>&1", memacct);
	remove_test_cgroup();
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "a/dupname") && strstr(r->out, "b/dupname"),
		      "ambiguous name must list the candidates: %s", r->out);
	result_free(r);
	r = run_cmd("%s attach --cgroup no-such-cgroup-memacct --duration 1s 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "no-such-cgroup-memacct"), "message names it: %s", r->out);
	result_free(r);
	r = run_cmd("%s attach --pid 999999999 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
}
END_TEST

/* ---- the DataLoader demo ------------------------------------------- */

/* The value of "kernel|truth @key @pid V"; -1 if the workload printed none. */
static long long truth_of(const struct result *r, const char *key, long long pid)
{
	for (int i = r->nt - 1; i >= 0; i--)
		if (!strcmp(r->t[i].key, key) && atoll(r->t[i].arg) == pid)
			return r->t[i].val;
	return -1;
}

/* An address range of a worker's copies: its truth and memacct's bytes. */
struct copied_range {
	long long start, end, truth, memacct;
	bool heap;
};

static int cmp_range_start(const void *a, const void *b)
{
	const struct copied_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Issue 42 on the README's job: worker @pid's cow_by_mapping against its
 * copies counted from page frames (dataloader_demo.py --cow-truth: its
 * pages of each private writable mapping of the parent whose frame differs
 * from the parent's just before its fork, read before it exits). Its
 * mappings and the parent's are not always the same VMAs (an arena mapped
 * next to one merges with it), so both are grouped into runs of
 * overlapping ranges, compared per run of at least 1 MiB of truth: no more
 * than 2% or 16 pages below, no more than 5% or 64 pages above. Above, not
 * below: memacct counts every copy made, the frames only those still mapped
 * at exit, and Python's allocator unmaps an emptied arena of copies (CI, once:
 * 18 pages over in a 1.6 MiB run). Left out, said: runs holding the brk heap,
 * where the worker's own malloc frees and grows memory again (a copy then
 * freed is not in the frames at exit; a page freed and touched again is a
 * zero fill on a new frame), which pagemap cannot tell from copies. At least
 * 95% of the worker's copies are attributed to mappings.
 */
static void demo_cow_by_mapping(const struct result *r, json_t *w, long long pid)
{
	struct copied_range v[600], run;
	json_t *maps = json_object_get(w, "cow_by_mapping"), *e;
	long long sum = 0, over, all = jint(w, "cow_copied_bytes") +
				      jint(w, "cow_file_copied_bytes");
	char key[64], endkey[64];
	int n = 0, checked = 0, heap_runs = 0;
	size_t i;

	snprintf(key, sizeof(key), "cow_map_%lld", pid);
	snprintf(endkey, sizeof(endkey), "cow_map_end_%lld", pid);
	for (int k = 0; k < r->nt && n < 300; k++)
		if (!strcmp(r->t[k].key, key))
			v[n++] = (struct copied_range){ .start = atoll(r->t[k].arg),
							 .end = truth_of(r, endkey,
									 atoll(r->t[k].arg)),
							 .truth = r->t[k].val };
	ck_assert_msg(n > 0, "worker %lld: no --cow-truth lines (pagemap frames need root)", pid);
	json_array_foreach(maps, i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));

		sum += jint(e, "bytes");
		if (n < (int)(sizeof(v) / sizeof(v[0])))
			v[n++] = (struct copied_range){ .start = jint(e, "start"), .end = jint(e, "end"),
							 .memacct = jint(e, "bytes"),
							 .heap = kind && !strcmp(kind, "heap") };
	}
	ck_assert_msg(sum >= all / 100 * 95, "worker %lld: %lld of its %lld CoW bytes attributed",
		      pid, sum, all);
	qsort(v, n, sizeof(v[0]), cmp_range_start);
	for (int k = 0; k < n;) {
		run = v[k];
		for (k++; k < n && v[k].start < run.end; k++) {
			run.end = v[k].end > run.end ? v[k].end : run.end;
			run.truth += v[k].truth;
			run.memacct += v[k].memacct;
			run.heap |= v[k].heap;
		}
		if (run.truth < 1 << 20)
			continue;
		if (run.heap) {
			heap_runs++;
			printf("  worker %lld [heap] %llx-%llx: memacct %lld, frames %lld (not "
			       "compared: the worker's malloc frees and regrows it)\n", pid,
			       run.start, run.end, run.memacct, run.truth);
			continue;
		}
		over = run.memacct - run.truth;
		ck_assert_msg(-over <= run.truth / 50 || -over <= 16 * (long long)PAGE,
			      "worker %lld, mappings %llx-%llx: memacct %lld, copies by frames %lld",
			      pid, run.start, run.end, run.memacct, run.truth);
		ck_assert_msg(over <= run.truth / 20 || over <= 64 * (long long)PAGE,
			      "worker %lld, mappings %llx-%llx: memacct %lld, copies by frames %lld",
			      pid, run.start, run.end, run.memacct, run.truth);
		if (over > 16 * (long long)PAGE)
			printf("  worker %lld %llx-%llx: memacct %lld, frames %lld (%lld pages "
			       "more than the frames hold at exit)\n", pid, run.start, run.end,
			       run.memacct, run.truth, over / PAGE);
		checked++;
	}
	printf("  worker %lld: %lld of %lld CoW bytes in cow_by_mapping; %d runs of mappings "
	       ">= 1 MiB within bounds of the frames' copies, %d left out\n", pid, sum,
	       all, checked, heap_runs);
	ck_assert_int_gt(checked, 0);
}

/* Whether [@s, @e) overlaps one of the @n ranges [a[i][0], a[i][1]). */
static bool overlaps(long long (*a)[2], int n, long long s, long long e)
{
	for (int i = 0; i < n; i++)
		if (s < a[i][1] && a[i][0] < e)
			return true;
	return false;
}

/*
 * The numpy variant of the README's job (issue 42; dataloader_demo.py
 * --storage numpy: the 3 M samples in two arrays of 24 MB, not in Python
 * objects). Reading an array writes nothing into it: the workers copy
 * (almost) none of its pages, and memacct shows that where the copies are.
 * Per worker: the frames' copies of the pages holding the arrays under 1%
 * of them; memacct's bytes in the mappings holding the arrays within 16
 * pages of the frames' copies of those same mappings (an array's mmap can
 * merge with a neighbouring arena); what the workers do copy (the
 * interpreter's heap and arenas, 3-5 MiB each here, against 370 MiB with
 * the list) attributed to mappings at 95%; no CoW verdict.
 */
START_TEST(test_dataloader_demo_numpy)
{
	long long arr[2][2] = { { -1, -1 }, { -1, -1 } }, array_bytes, nworkers = 0;
	struct result *r;
	json_t *v;
	size_t i;

	if (getenv("MEMACCT_SANITIZE")) {
		SKIP_TEST("under the sanitizers the demo runs once, in test_record_html_dataloader");
		return;
	}
	if (system("/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null") != 0) {
		SKIP_TEST("/usr/bin/python3 cannot import torch and numpy "
			  "(apt-get install python3-torch python3-numpy)");
		return;
	}
	r = run_cmd("%s -j run -- /usr/bin/python3 %s/workloads/dataloader_demo.py --storage numpy "
		    "--cow-truth", memacct, testsdir);
	ck_assert_msg(r->report, "no report: %s", r->out);
	ck_assert_int_eq(r->status, 0);
	for (int k = 0; k < r->nt; k++) {
		int a = !strcmp(r->t[k].key, "array_labels") ? 0 :
			!strcmp(r->t[k].key, "array_weights") ? 1 : -1;

		if (a >= 0)
			arr[a][0] = atoll(r->t[k].arg), arr[a][1] = r->t[k].val;
	}
	ck_assert_msg(arr[0][0] > 0 && arr[1][0] > 0, "no array_labels or array_weights truth");
	array_bytes = arr[0][1] - arr[0][0] + arr[1][1] - arr[1][0];
	for (int k = 0; k < r->nt; k++) {
		long long pid, mine = 0, frames = 0, sum = 0, all, copied;
		char key[64], endkey[64];
		json_t *w, *e;

		if (strcmp(r->t[k].key, "worker_pid"))
			continue;
		nworkers++;
		pid = r->t[k].val;
		w = proc_by_pid(r, pid);
		ck_assert_msg(w, "worker %lld has no row", pid);
		copied = truth_of(r, "array_copied_bytes", pid);
		ck_assert_msg(copied >= 0 && copied <= array_bytes / 100, "worker %lld copied %lld "
			      "bytes of the arrays' %lld (frames)", pid, copied, array_bytes);
		json_array_foreach(json_object_get(w, "cow_by_mapping"), i, e) {
			sum += jint(e, "bytes");
			if (overlaps(arr, 2, jint(e, "start"), jint(e, "end")))
				mine += jint(e, "bytes");
		}
		snprintf(key, sizeof(key), "cow_map_%lld", pid);
		snprintf(endkey, sizeof(endkey), "cow_map_end_%lld", pid);
		for (int j = 0; j < r->nt; j++)
			if (!strcmp(r->t[j].key, key) &&
			    overlaps(arr, 2, atoll(r->t[j].arg),
				     truth_of(r, endkey, atoll(r->t[j].arg))))
				frames += r->t[j].val;
		ck_assert_msg(llabs(mine - frames) <= 16 * (long long)PAGE, "worker %lld: memacct "
			      "%lld in the arrays' mappings, frames %lld", pid, mine, frames);
		all = jint(w, "cow_copied_bytes") + jint(w, "cow_file_copied_bytes");
		ck_assert_msg(sum >= all / 100 * 95, "worker %lld: %lld of its %lld CoW bytes "
			      "attributed", pid, sum, all);
		printf("  numpy worker %lld: CoW %lld; in the arrays' mappings memacct %lld, frames "
		       "%lld; of the arrays' own pages (%lld bytes) %lld\n", pid, all, mine, frames,
		       array_bytes, copied);
	}
	ck_assert_int_ge(nworkers, 1);
	json_array_foreach(json_object_get(r->report, "verdict_details"), i, v)
		ck_assert_msg(strcmp(json_string_value(json_object_get(v, "kind")), "cow_blowup"),
			      "a CoW verdict for the numpy variant: %s",
			      json_string_value(json_object_get(v, "text")));
	result_free(r);
}
END_TEST

/*
 * One cell of the main job's table against what the process read of itself:
 * |memacct - truth| <= @tol, printed either way.
 */
static void cell(const char *who, long long pid, const char *key, long long got,
		 long long want, long long tol)
{
	ck_assert_msg(want >= 0, "%s %lld: the workload printed no truth for %s", who, pid, key);
	ck_assert_msg(llabs(got - want) <= tol, "%s %lld %s: memacct %lld, truth %lld (tolerance %lld)",
		      who, pid, key, got, want, tol);
	printf("  %s %lld %-22s memacct %12lld  truth %12lld  (tolerance %lld)\n", who, pid, key,
	       got, want, tol);
}

/*
 * The README's main job, cell by cell (issue 39): each worker's row against
 * what the worker read of itself after its share of the epoch (getrusage,
 * /proc/self/status, smaps_rollup), the workers' faults together against the
 * parent's getrusage(RUSAGE_CHILDREN) (their faults at exit, as it reaped
 * them), the parent's against what it read just before main() returned.
 * Tolerances, each a written-down reason:
 * - a worker's faults: at least its own count at the report, at most 256
 *   more (its idle wait and shutdown after the report: 20-30 measured);
 *   the workers' sum: the kernel's own sum to 4 faults a worker;
 * - a worker's RSS, anon, file, shmem at exit (known from 6.16, before it
 *   null) and RSS PEAK: 1 MiB (its shutdown maps a few pages);
 * - mlocked, pinned_vm: exact (VmLck, VmPin);
 * - CoW: what it copied is at most its Private_Dirty and at least 95% of it
 *   with its zero fills and private file copies (Private_Dirty also holds
 *   inherited pages the parent freed since: 99.7% measured); by mapping:
 *   demo_cow_by_mapping().
 * Without a truth, named: the parent's RSS, anon, file at exit (Python's
 * finalization frees the list after main() returns: 117,000 faults and
 * ~400 MiB measured, which it cannot read of itself), so its faults are
 * checked from below only.
 */
/*
 * The demo's memmap'd file in page_cache_by_file (issue 43): when the demo
 * wrote it, all of its page cache was this run's, at once (it is written
 * whole, then read by the workers): its peak is the file's size within 16
 * pages, it is named by the path the job mapped it by (its writer held a
 * temporary name first), and the demo removed it: 0 bytes at the end.
 */
static void demo_page_cache(const struct result *r)
{
	long long want = truth(r, "memmap_bytes"), ino = truth(r, "memmap_inode");
	json_t *f = page_cache_file(r, ino);
	const char *path;

	if (!truth(r, "memmap_created"))
		return;		/* cached by whoever wrote it: not this run's */
	ck_assert_msg(f, "no page_cache_by_file entry for the memmap (inode %lld)", ino);
	cell("memmap", ino, "page_cache_by_file peak_bytes", jint(f, "peak_bytes"), want,
	     16 * (long long)PAGE);
	ck_assert_int_eq(jint(f, "bytes"), 0);
	path = json_string_value(json_object_get(f, "path"));
	ck_assert_msg(path && strstr(path, "memacct-demo-") &&
		      !strcmp(path + strlen(path) - 4, ".bin"), "memmap path %s", path);
}

START_TEST(test_dataloader_demo)
{
	struct result *r;
	long long list_bytes, nworkers = 0, sum_faults = 0, mib = 1 << 20, parent;
	json_t *t, *p;

	if (getenv("MEMACCT_SANITIZE")) {	/* make check SANITIZE=1: 2.5 min of CI */
		SKIP_TEST("under the sanitizers the demo runs once, in "
			  "test_record_html_dataloader (run --record, then report --html)");
		return;
	}
	if (system("/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null") != 0) {
		SKIP_TEST("/usr/bin/python3 cannot import torch and numpy "
			  "(apt-get install python3-torch python3-numpy)");
		return;
	}
	r = run_cmd("%s -j run -- /usr/bin/python3 %s/workloads/dataloader_demo.py --cow-truth",
		    memacct, testsdir);
	ck_assert_msg(r->report, "no report: %s", r->out);
	ck_assert_int_eq(r->status, 0);
	list_bytes = truth(r, "list_bytes");
	for (int i = 0; i < r->nt; i++) {
		static const char *const stocks[][2] = {
			{ "rss_bytes", "worker_rss_bytes" }, { "anon_bytes", "worker_anon_bytes" },
			{ "file_bytes", "worker_file_bytes" }, { "shmem_bytes", "worker_shmem_bytes" },
		};
		long long pid, cow, dirty, copies, faults;
		json_t *w;

		if (strcmp(r->t[i].key, "worker_pid"))
			continue;
		nworkers++;
		pid = r->t[i].val;
		w = proc_by_pid(r, pid);
		ck_assert(json_is_true(json_object_get(w, "exited")));
		faults = truth_of(r, "worker_faults", pid);
		ck_assert_msg(jint(w, "page_faults_total") >= faults,
			      "worker %lld: page_faults_total %lld < its own count %lld before exit",
			      pid, jint(w, "page_faults_total"), faults);
		cell("worker", pid, "page_faults_total", jint(w, "page_faults_total"), faults, 256);
		sum_faults += jint(w, "page_faults_total");
		for (size_t k = 0; k < sizeof(stocks) / sizeof(stocks[0]); k++) {
			json_t *v = json_object_get(w, stocks[k][0]);

			if (json_is_null(v) && !exit_rss_known())
				continue;	/* no mm at exit before 6.16 */
			cell("worker", pid, stocks[k][0], jint(w, stocks[k][0]),
			     truth_of(r, stocks[k][1], pid), mib);
		}
		ck_assert_msg(jint(w, "rss_peak_bytes") >= truth_of(r, "worker_hwm_bytes", pid),
			      "worker %lld: RSS PEAK below its VmHWM", pid);
		cell("worker", pid, "rss_peak_bytes", jint(w, "rss_peak_bytes"),
		     truth_of(r, "worker_hwm_bytes", pid), mib);
		cell("worker", pid, "mlocked_bytes", jint(w, "mlocked_bytes"),
		     truth_of(r, "worker_locked_bytes", pid), 0);
		cell("worker", pid, "pinned_vm_bytes", jint(w, "pinned_vm_bytes"),
		     truth_of(r, "worker_pinned_vm_bytes", pid), 0);
		cow = jint(w, "cow_copied_bytes");
		dirty = truth_of(r, "worker_private_dirty_bytes", pid);
		copies = cow + jint(w, "zero_fill_bytes") + jint(w, "cow_file_copied_bytes");
		printf("  worker %lld: cow_copied %lld, own Private_Dirty %lld, list %lld\n", pid, cow,
		       dirty, list_bytes);
		/* of the order of the list's objects: at least a tenth of a
		 * worker's share, never more than the list plus its dirty pages */
		ck_assert_msg(cow >= list_bytes / 40, "worker CoW %lld too small", cow);
		ck_assert_msg(cow <= dirty + (long long)SLACK,
			      "worker CoW %lld > its Private_Dirty %lld", cow, dirty);
		ck_assert_msg(copies >= dirty / 100 * 95,
			      "worker %lld: CoW + zero fills + file CoW %lld < 95%% of its "
			      "Private_Dirty %lld", pid, copies, dirty);
		demo_cow_by_mapping(r, w, pid);
	}
	ck_assert_int_ge(nworkers, 1);
	cell("workers", nworkers, "page_faults_total (sum)", sum_faults,
	     truth(r, "children_faults"), 4 * nworkers);
	parent = truth(r, "parent_pid");
	p = proc_by_pid(r, parent);
	ck_assert_msg(jint(p, "page_faults_total") >= truth(r, "parent_faults"),
		      "parent: page_faults_total %lld < its own count %lld before exit",
		      jint(p, "page_faults_total"), truth(r, "parent_faults"));
	ck_assert_msg(jint(p, "rss_peak_bytes") >= truth(r, "parent_hwm_bytes"),
		      "parent: RSS PEAK %lld below its VmHWM %lld", jint(p, "rss_peak_bytes"),
		      truth(r, "parent_hwm_bytes"));
	cell("parent", parent, "pinned_vm_bytes", jint(p, "pinned_vm_bytes"),
	     truth(r, "parent_pinned_vm_bytes"), 0);
	t = json_object_get(r->report, "totals");
	ck_assert(jint(t, "file_bytes") > 0);
	demo_page_cache(r);
	result_free(r);
}
END_TEST

Suite *integration_suite(void)
{
	Suite *s = suite_create("integration");
	TCase *tc = tcase_swept("root", 300);

	tcase_add_test(tc, test_schema_and_exit_status);
	tcase_add_test(tc, test_cow_fork_child);
	tcase_add_test(tc, test_cow_fork_parent_writes);
	tcase_add_test(tc, test_cow_maps);
	tcase_add_test(tc, test_zero_fill);
	tcase_add_test(tc, test_zero_fill_thp);
	tcase_add_test(tc, test_cow_mmap_lock_busy);
	tcase_add_test(tc, test_file_private_write);
	tcase_add_test(tc, test_file_private_read_first);
	tcase_add_test(tc, test_file_shared);
	tcase_add_test(tc, test_reuse_tmpfs);
	tcase_add_test(tc, test_pinned_mlock);
	tcase_add_test(tc, test_pinned_mlock2_onfault);
	tcase_add_test(tc, test_pinned_map_locked);
	tcase_add_test(tc, test_pinned_mlockall);
	tcase_add_test(tc, test_pinned_io_uring);
	tcase_add_test(tc, test_pinned_io_uring_steps);
	tcase_add_test(tc, test_pinned_steps2);
	tcase_add_test(tc, test_pinned_steps);
	tcase_add_test(tc, test_short_lived_children);
	tcase_add_test(tc, test_page_cache_by_file);
	tcase_add_test(tc, test_outside_not_counted);
	tcase_add_test(tc, test_attach_cgroup_by_name);
	tcase_add_test(tc, test_attach_bad_input);
	tcase_add_test(tc, test_dataloader_demo);
	tcase_add_test(tc, test_dataloader_demo_numpy);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The suites, in the order they run: schema last, as it validates what the
 * others printed. A file's suite is here when the file is linked (weak).
 */
static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
	{ "integration", integration_suite }, { "explain", explain_suite },
	{ "audit", audit_suite }, { "daemon", daemon_suite }, { "numa", numa_suite },
	{ "run", run_suite }, { "dma", dma_suite }, { "top", top_suite },
	{ "matrix", matrix_suite }, { "loss", loss_suite }, { "jobsafe", jobsafe_suite },
	{ "host", host_suite }, { "reclaim", reclaim_suite }, { "oom", oom_suite },
	{ "phases", phases_suite }, { "figures", figures_suite }, { "record", record_suite },
	{ "limits", limits_suite }, { "faulthook", faulthook_suite },
	{ "schema", schema_suite },
};

/*
 * Whether suite @name runs: MEMACCT_SUITES is a comma-separated list of
 * suite names to run, or of names with a leading '-' to leave out (the
 * kernel matrix splits the suite over two guests so); unset: every one.
 */
static bool suite_wanted(const char *name)
{
	const char *list = getenv("MEMACCT_SUITES"), *p;
	bool includes = false, in = false;
	size_t n = strlen(name);

	if (!list || !*list)
		return true;
	for (p = list; *p; p += strcspn(p, ","), p += *p == ',') {
		bool minus = *p == '-';
		const char *w = p + minus;
		size_t len = strcspn(w, ",");

		includes = includes || !minus;
		if (len == n && !strncmp(w, name, n)) {
			if (minus)
				return false;
			in = true;
		}
	}
	return in || !includes;
}

/*
 * Whether each test that skipped itself is allowed to here: the names in
 * the files of $MEMACCT_SKIPS_ALLOWED (':'-separated; one name per line,
 * '#' comments; make sets tests/skips-allowed, the skips the CI host
 * expects, and with SANITIZE tests/skips-allowed-sanitize), unset or
 * empty: no check. A skip not listed is a failure (issue 47: a skip must
 * not hide a test that stopped running). Returns the number of skips not
 * allowed, or 1 when a file cannot be read.
 */
static int skips_not_allowed(void)
{
	const char *list = getenv("MEMACCT_SKIPS_ALLOWED");
	char line[256], path[PATH_MAX], allowed[128][64];
	int nallowed = 0, bad = 0;
	FILE *f;

	printf("%d test%s skipped themselves\n", nskipped, nskipped == 1 ? "" : "s");
	if (!list || !*list)
		return 0;
	for (const char *p = list; *p; p += strcspn(p, ":"), p += *p == ':') {
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(p, ":"), p);
		f = fopen(path, "r");
		if (!f) {
			fprintf(stderr, "MEMACCT_SKIPS_ALLOWED: %s: %s\n", path, strerror(errno));
			return 1;
		}
		while (nallowed < 128 && fgets(line, sizeof(line), f))
			if (sscanf(line, " %63[a-z0-9_]", allowed[nallowed]) == 1 &&
			    !strncmp(allowed[nallowed], "test_", 5))
				nallowed++;
		fclose(f);
	}
	for (int i = 0; i < nskipped; i++) {
		bool ok = false;

		for (int j = 0; j < nallowed && !ok; j++)
			ok = !strcmp(skipped[i], allowed[j]);
		if (!ok) {
			fprintf(stderr, "FAIL: %s skipped itself and is not in %s (the skips "
					"expected here; make ... INTEG_SKIPS= runs without "
					"this check)\n", skipped[i], list);
			bad++;
		}
	}
	return bad;
}

/* tests/integration*.c's tests, at least (215 on 2026-11-29): raise it with them */
#define MIN_TESTS 215

int main(void)
{
	SRunner *sr;
	int failed, ran;

	memacct = getenv("MEMACCT");
	workloads = getenv("WORKLOADS");
	testsdir = getenv("TESTS");
	if (!memacct || !workloads || !testsdir) {
		fprintf(stderr, "run through `make integration` (MEMACCT, WORKLOADS, TESTS)\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "integration tests cannot run: they need root to load BPF "
				"programs and create memory cgroups\n");
		return 2;	/* no test run is no pass (issue 47) */
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fprintf(stderr, "integration tests cannot run: kernel without BTF "
				"(/sys/kernel/btf/vmlinux)\n");
		return 2;	/* no test run is no pass (issue 47) */
	}
	/* the binary's directory (.output/) collects the reports for the schema suite */
	snprintf(json_log_path, sizeof(json_log_path), "%s", memacct);
	if (strrchr(json_log_path, '/'))
		strcpy(strrchr(json_log_path, '/') + 1, "integration-reports.jsonl");
	else
		snprintf(json_log_path, sizeof(json_log_path), "integration-reports.jsonl");
	unlink(json_log_path);
	{
		char root[PATH_MAX];

		if (memcg_root(root, &cgversion)) {
			fprintf(stderr, "integration tests cannot run: no memory cgroup "
					"hierarchy mounted (/proc/self/mountinfo)\n");
			return 2;	/* no test run is no pass (issue 47) */
		}
		if (strlen(root) >= sizeof(cgroot)) {
			fprintf(stderr, "memory cgroup root %s: path too long for the tests\n", root);
			return 2;
		}
		strcpy(cgroot, root);
	}
	/* our lines and memacct's (stderr) in the order they happen; each
	 * test's result too with CK_VERBOSITY=verbose (tests/vmtest/) */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("memory cgroup hierarchy: %s (v%d)\n", cgroot, cgversion);
	sweep(false);	/* what an earlier run that died left */
	sr = NULL;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (!suites[i].make || !suite_wanted(suites[i].name))
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "MEMACCT_SUITES='%s' selects no suite\n", getenv("MEMACCT_SUITES"));
		return 2;
	}
	/*
	 * A failure message may carry a whole report or a command's output;
	 * libcheck's default 4 KiB limit ends the whole run at the first such
	 * failure ("Message string too long"), hiding which test failed.
	 */
	check_set_max_msg_size(1 << 20);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	ran = srunner_ntests_run(sr);
	srunner_free(sr);
	failed += skips_not_allowed() + watchdog_fired();
	/* the whole suite: no test lost by a registration or a build change */
	if (!getenv("MEMACCT_SUITES") && !getenv("CK_RUN_SUITE") && !getenv("CK_RUN_CASE") &&
	    ran < MIN_TESTS) {
		fprintf(stderr, "FAIL: %d tests ran, fewer than the %d of the whole suite "
				"(MIN_TESTS)\n", ran, MIN_TESTS);
		failed++;
	}
	return failed ? 1 : 0;
}
