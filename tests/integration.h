/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * integration.h - helpers shared by the root integration tests
 * (tests/integration*.c, one binary; main() in integration.c). A new file
 * defines one of the weak suite functions below and is picked up by the
 * Makefile's wildcard.
 */
#ifndef MEMACCT_INTEGRATION_H
#define MEMACCT_INTEGRATION_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <unistd.h>

#define MiB (1024ULL * 1024)
#define PAGE ((unsigned long long)sysconf(_SC_PAGESIZE))	/* the running kernel's */
#define SLACK (16 * PAGE)

/* $MEMACCT (the binary), $WORKLOADS (built workloads), $TESTS (tests/) */
extern const char *memacct, *workloads, *testsdir;
/* the memory hierarchy's mount point and version (memcg_root()), set by
 * main(): tests make their cgroups there, on v1 and v2 hosts alike */
#define CGROOT_MAX 160
extern char cgroot[CGROOT_MAX];
extern int cgversion;

struct truth {
	char key[64];
	char arg[32];		/* optional middle token ("truth K PID V") */
	long long val;
};

struct result {
	int status;		/* exit status of the command line */
	char *out;		/* whole stdout */
	json_t *report;		/* last line that parsed as a JSON object, or NULL */
	struct truth t[4096];	/* "truth K [ARG] V" and "kernel K [ARG] V" lines */
	int nt;
};

/* run_cmd() - run a shell command line (printf format); stdout captured. */
struct result *run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void result_free(struct result *r);
/* truth() - last value printed for @key; fails the test when absent. */
long long truth(const struct result *r, const char *key);
/* jint() - integer member @key of @o; fails the test when absent. */
long long jint(json_t *o, const char *key);
/* proc_by_pid() - the report's process object of @pid; fails when absent. */
json_t *proc_by_pid(const struct result *r, long long pid);
/* assert_near() - |got - want| <= max(1% of want, 16 pages); prints both. */
void assert_near(const char *what, long long got, long long want);
/*
 * rss_counter_lag_bytes() - how far one mm RSS counter's central count
 * (get_mm_counter(): what the kernel's OOM line and update_hiwater_rss()
 * read) can lag its exact sum: percpu_counter_batch, max(32, 2 x CPUs)
 * pages (lib/percpu_counter.c), a CPU.
 */
long long rss_counter_lag_bytes(void);
/* numa_nodes() - the NUMA nodes of this machine (/sys/devices/system/node/nodeN). */
int numa_nodes(void);
/* kernel_at_least() - whether uname's release is MAJOR.MINOR or later. */
bool kernel_at_least(int major, int minor);
/* assert_exact() - got == want, for truths exact to the byte; prints both. */
void assert_exact(const char *what, long long got, long long want);
/*
 * assert_anon_truth() - a process that never forked nor freed anonymous
 * memory (zero_fill): its zero_fill_bytes and cow_file_copied_bytes equal
 * what its page tables hold, read by itself (vm_status.h
 * anon_bytes_of_self(): "truth process_zero_fill_bytes", less the exec's
 * argument pages, "kernel exec_arg_bytes"; "truth process_cow_file_bytes").
 */
void assert_anon_truth(const char *what, const struct result *r, json_t *proc);
/* memacct_run() - `memacct -j run -- $WORKLOADS/ARGS`, with a report. */
struct result *memacct_run(const char *workload_and_args);
/*
 * SKIP_TEST() - in a test's own body, when it finds that what it needs is
 * missing here: prints "SKIP test_NAME: REASON" (the test's name, for
 * tests/vmtest/check.py); the test then returns.
 */
#define SKIP_TEST(...) skip_test(__func__, __VA_ARGS__)

/*
 * run_cgroup_parent() - the directory where `memacct run` started by this
 * runner makes its cgroup (user/cmd/run.c: our own memory cgroup on v1; on v2
 * memcg_run_parent(), our cgroup having the runner in it). 0 or -1.
 * run_cgroup_find() - the cgroup there of the run whose PID is @run_pid
 * (memacct-run-PID-XXXXXXXX), while it exists. 0 or -1.
 */
int run_cgroup_parent(char *dir, size_t len);
int run_cgroup_find(pid_t run_pid, char *path, size_t len);

/*
 * tcase_swept() - tcase_create() with libcheck's timeout @timeout_s (s), whose
 * tests each run under the watchdog (tests/integration_watchdog.c: CK_NOFORK
 * enforces no timeout) and whose test case ends with tests/sweep.sh.
 * A test that fails an assertion ends there (longjmp: CK_NOFORK), past its
 * own cleanup, and its cgroup, workloads, daemon and pins used to fail later
 * tests; once the case's tests ran, the sweep removes what our tests (named
 * with our PID) and runners that died left.
 * sweep_leftovers() - the same sweep, for a checked teardown (no test runs
 * then): the tests of a case left nothing for the next one.
 * watchdog_disarm() - tcase_swept()'s checked teardown: the test that ended
 * had 3 times its case's timeout before its processes were printed and killed
 * (and a minute more before the run ended, exit 3).
 * watchdog_fired() - how many tests passed their deadline: each a failure.
 */
TCase *tcase_swept(const char *name, int timeout_s);
void sweep_leftovers(void);
void watchdog_disarm(void);
int watchdog_fired(void);

/*
 * The tag of test cases whose subject is memacct's own userspace (HTTP
 * parsing, signals, fd limits), the same on every kernel and cgroup layout:
 * the kernel matrix's guests leave them out (tests/vmtest/init.sh sets
 * CK_EXCLUDE_TAGS, check.py does not expect them), which saves minutes of
 * TCG in CI; the host runs them.
 */
#define HOST_ONLY_TAG "host-only"

/*
 * free_port() - a TCP port of 127.0.0.1 free now (the kernel's pick for a
 * bind to port 0), for a daemon a test starts: a port derived from the PID
 * fell in the ephemeral range, where a client's connection may hold it.
 */
int free_port(void);

/*
 * fault_hook_prog() - the program of the daemon's fault hook (pinned under
 * @pin_path) as memacct_bpf_runs_total names it: "page_fault_user" (the
 * tracepoint, x86) or "page_fault_perf" (the perf event, arm64, its links
 * links/page_fault_perf_cpuN pinned); NULL where the daemon holds the perf
 * event's links itself (no perf links before 5.15: user/kernel/pin.c
 * pin_perf_hook()), which leaves the hook out of its BPF stats.
 * fault_hook_pinned() - whether faults are classified while no daemon runs:
 * the hook's links are pinned (fault_hook_prog() not NULL).
 */
const char *fault_hook_prog(const char *pin_path);
bool fault_hook_pinned(const char *pin_path);

/* cg_set_memory_max() - @bytes to the memory limit of our cgroup @cg
 * (v1 memory.limit_in_bytes, v2 memory.max); fails the test when refused. */
void cg_set_memory_max(const char *cg, unsigned long long bytes);
/* cg_children_memory() - on v2, the memory controller for the children of
 * our cgroup @dir (+memory in its cgroup.subtree_control; it must hold no
 * process); nothing on v1, where every cgroup has it. false when refused. */
bool cg_children_memory(const char *dir);

void skip_test(const char *func, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The ground-truth fault checks (CoW after fork, zero fill, file CoW, none
 * for MAP_SHARED writes and reuse), one set for both fault hooks: run by
 * the integration suite with the kernel's choice (@hook NULL) and by the
 * faulthook suite with @hook ("perf") forced in MEMACCT_FAULT_HOOK.
 * fault_file_private(): @args of the workload, @what the file CoW's message.
 */
void fault_cow_fork_child(const char *hook);
void fault_cow_fork_parent_writes(const char *hook);
void fault_zero_fill(const char *hook);
void fault_zero_fill_thp(const char *hook);
void fault_cow_maps(const char *hook);
void fault_file_private(const char *hook, const char *args, const char *what);
void fault_file_shared(const char *hook);
void fault_reuse_tmpfs(const char *hook);

/* sleep_ms() - sleep @ms milliseconds. */
void sleep_ms(long ms);
/* spawn_sh() - `sh -c @cmd` in the background, killed if the runner dies; its pid. */
pid_t spawn_sh(const char *cmd);
/*
 * spawn_daemon() - spawn_sh(@cmd), a memacct daemon listening on
 * 127.0.0.1:@port; its pid once /healthz answers (its first collection is
 * published), -1 when it exited or did not answer within 30 s (then killed).
 */
pid_t spawn_daemon(const char *cmd, int port);

/* Suites of other files; main() runs those that are linked in. */
Suite *integration_suite(void);
Suite *explain_suite(void) __attribute__((weak));
Suite *audit_suite(void) __attribute__((weak));
Suite *daemon_suite(void) __attribute__((weak));
Suite *numa_suite(void) __attribute__((weak));
Suite *run_suite(void) __attribute__((weak));
Suite *schema_suite(void) __attribute__((weak));

/* JSON Lines file of every report run_cmd() saw (.output/integration-reports.jsonl) */
extern char json_log_path[4096];
Suite *record_suite(void) __attribute__((weak));
Suite *dma_suite(void) __attribute__((weak));
Suite *top_suite(void) __attribute__((weak));
Suite *matrix_suite(void) __attribute__((weak));
Suite *loss_suite(void) __attribute__((weak));
Suite *jobsafe_suite(void) __attribute__((weak));
Suite *host_suite(void) __attribute__((weak));
Suite *reclaim_suite(void) __attribute__((weak));
Suite *oom_suite(void) __attribute__((weak));
Suite *phases_suite(void) __attribute__((weak));
Suite *figures_suite(void) __attribute__((weak));
Suite *limits_suite(void) __attribute__((weak));
Suite *faulthook_suite(void) __attribute__((weak));

#endif
