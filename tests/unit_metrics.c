// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_metrics.c - the Prometheus 0.0.4 / OpenMetrics 1.0 writer
 * (user/out/metrics.c) against captured fixtures (data/metrics_fixture.prom,
 * data/metrics_fixture.om), its label escaping, promtool on what it writes,
 * the labels the daemon derives from cgroup paths (cgroup_path_labels()),
 * and the families of user/out/output_om.c (build and cgroup info, the daemon's
 * process_* self metrics from captured /proc/self/stat and /proc/stat).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "check_util.h"
#include "cgroup.h"
#include "cgroup_labels.h"
#include "daemon.h"
#include "daemon_oom.h"
#include "metric_table.h"
#include "metrics.h"
#include "output_om.h"
#include "proc.h"
#include "usage.h"

/* Hostile label values: quote, backslash, newline, braces, bad UTF-8. */
static const char *const hostile[] = {
	"/eco-q\"x\\y{a=\"b\"}",
	"/sp ace/line\nbreak",
	"/\xc3\xbcn\xc3\xaf",		/* valid UTF-8, kept */
	"/bad\xff\xc3(\xe2\x82",	/* invalid bytes become '?' */
};

/* The same calls for both formats: what the daemon does for each scrape. */
static char *write_fixture(bool om)
{
	struct mlabel l[3];
	struct mbuf b;
	char *out;

	mbuf_init(&b, om);
	metrics_family(&b, "memacct_rss_bytes", MT_GAUGE, "bytes", "Resident set size");
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		l[0] = (struct mlabel){ "cgroup", hostile[i] };
		l[1] = (struct mlabel){ "pod_uid", i == 0 ? "1234abcd-5678-90ab-cdef-1234567890ab" : NULL };
		metrics_sample_u64(&b, l, 2, 4096 * (i + 1));
	}
	metrics_family(&b, "memacct_cow_copied_bytes", MT_COUNTER, "bytes", "CoW copies");
	l[0] = (struct mlabel){ "cgroup", "/" };
	metrics_sample_u64(&b, l, 1, UINT64_MAX);
	metrics_family(&b, "memacct_page_faults", MT_COUNTER, NULL, "Page faults");
	metrics_sample_u64(&b, NULL, 0, 0);
	metrics_family(&b, "memacct_scrape_duration_seconds", MT_GAUGE, "seconds", "Wall time");
	metrics_sample(&b, NULL, 0, 0.0123456789);
	out = strdup(metrics_end(&b));
	ck_assert_msg(!b.oom, "writer ran out of memory");
	mbuf_free(&b);
	ck_assert_ptr_nonnull(out);
	return out;
}

START_TEST(test_writer_prom_fixture)
{
	char *want = load_data("metrics_fixture.prom"), *got = write_fixture(false);

	ck_assert_str_eq(got, want);
	free(got);
	free(want);
}
END_TEST

START_TEST(test_writer_om_fixture)
{
	char *want = load_data("metrics_fixture.om"), *got = write_fixture(true);

	ck_assert_str_eq(got, want);
	/* OpenMetrics framing: counters typed without _total, samples with it */
	ck_assert_ptr_nonnull(strstr(got, "# TYPE memacct_cow_copied_bytes counter\n"));
	ck_assert_ptr_nonnull(strstr(got, "# UNIT memacct_cow_copied_bytes bytes\n"));
	ck_assert_ptr_nonnull(strstr(got, "\nmemacct_cow_copied_bytes_total{cgroup=\"/\"} "));
	ck_assert_str_eq(got + strlen(got) - 6, "# EOF\n");
	free(got);
	free(want);
}
END_TEST

/* promtool check metrics on @text; its exit status */
static int promtool_on(const char *text)
{
	char path[] = "/tmp/memacct-unit-metrics-XXXXXX", cmd[128];
	int fd = mkstemp(path), st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	xsnprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	st = system(cmd);
	unlink(path);
	return st;
}

/* promtool parses the 0.0.4 text (make deps installs it: prometheus). */
START_TEST(test_writer_promtool)
{
	char *got = write_fixture(false);

	ck_assert_msg(system("command -v promtool >/dev/null") == 0,
		      "promtool missing: make deps installs Debian's prometheus package");
	ck_assert_msg(promtool_on(got) == 0, "promtool check metrics failed on the writer's output");
	free(got);
}
END_TEST

START_TEST(test_escape_label)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "a\"b", "a\\\"b" },
		{ "a\\b", "a\\\\b" },
		{ "a\nb", "a\\nb" },
		{ "tab\there", "tab\there" },			/* only \\, \" and \n are escaped */
		{ "\xc3\xbc", "\xc3\xbc" },			/* 2-byte UTF-8 */
		{ "\xe2\x82\xac", "\xe2\x82\xac" },		/* 3-byte */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },	/* 4-byte */
		{ "\xc0\xaf", "??" },				/* overlong */
		{ "\xe2\x82", "??" },				/* cut sequence */
		{ "\xff", "?" },
		{ "", "" },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = metrics_escape_label(out, sizeof(out), cases[i].in);

		ck_assert_msg(!strcmp(out, cases[i].out), "case %zu: got '%s' want '%s'",
			      i, out, cases[i].out);
		ck_assert_uint_eq(n, strlen(cases[i].out));
	}
	/* a value longer than any fixed buffer is written whole by the writer */
	{
		char *big = malloc(5001), *want;
		struct mlabel l = { "cgroup", big };
		struct mbuf b;
		const char *t;

		ck_assert_ptr_nonnull(big);
		memset(big, 'x', 5000);
		big[5000] = '\0';
		mbuf_init(&b, false);
		metrics_family(&b, "m", MT_GAUGE, NULL, "h");
		metrics_sample_u64(&b, &l, 1, 1);
		t = metrics_end(&b);
		want = malloc(5100);
		ck_assert_ptr_nonnull(want);
		snprintf(want, 5100, "m{cgroup=\"%s\"} 1\n", big);
		ck_assert_ptr_nonnull(strstr(t, want));
		mbuf_free(&b);
		free(want);
		free(big);
	}
}
END_TEST

START_TEST(test_path_labels)
{
	static const struct {
		const char *path, *pod, *ctr, *job, *qos;
	} cases[] = {
		/* systemd driver */
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234abcd_5678_90ab_cdef_1234567890ab.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "1234abcd-5678-90ab-cdef-1234567890ab",
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "burstable" },
		/* cgroupfs driver */
		{ "/kubepods/besteffort/pod1234abcd-5678-90ab-cdef-1234567890ab/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "1234abcd-5678-90ab-cdef-1234567890ab",
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "besteffort" },
		/* a pod without container */
		{ "/kubepods.slice/kubepods-pod1234abcd_5678_90ab_cdef_1234567890ab.slice",
		  "1234abcd-5678-90ab-cdef-1234567890ab", "", "", "guaranteed" },
		/* the QoS levels: kubepods.slice itself has none */
		{ "/kubepods.slice", "", "", "", "" },
		{ "/kubepods.slice/kubepods-besteffort.slice", "", "", "", "besteffort" },
		{ "/kubepods.slice/kubepods-burstable.slice", "", "", "", "burstable" },
		{ "/kubepods/burstable", "", "", "", "burstable" },
		{ "/kubepods/pod1234abcd-5678-90ab-cdef-1234567890ab/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "1234abcd-5678-90ab-cdef-1234567890ab", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "guaranteed" },
		/* a kubelet's --cgroup-root below the root */
		{ "/machine.slice/kubepods.slice/kubepods-pod1234abcd_5678_90ab_cdef_1234567890ab.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "1234abcd-5678-90ab-cdef-1234567890ab", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "guaranteed" },
		/* look-alikes of a class: none */
		{ "/kubepods-burstablex.slice", "", "", "", "" },
		{ "/notkubepods/burstable", "", "", "", "" },
		{ "/kubepods/burstablex", "", "", "", "" },
		/* docker, crio */
		{ "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "" },
		{ "/crio-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", "" },
		/* Slurm */
		{ "/slurm/uid_0/job_4242/step_0", "", "", "4242", "" },
		{ "/slurm/uid_0/job_4242", "", "", "4242", "" },
		/* look-alikes: nothing */
		{ "/", "", "", "", "" },
		{ "/pod-not-a-uid/job_x12", "", "", "", "" },
		{ "/podcast.slice/ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789", "", "", "", "" },
		{ "/job_", "", "", "", "" },
		{ "/job_123456789012345678901234567890", "", "", "", "" },	/* too long for the label */
		{ "/docker-0123456789abcdef.scope", "", "", "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cg_labels l;

		memset(&l, 0x55, sizeof(l));
		cgroup_path_labels(cases[i].path, NULL, &l);
		ck_assert_msg(!strcmp(l.pod_uid, cases[i].pod), "%zu pod_uid '%s'", i, l.pod_uid);
		ck_assert_msg(!strcmp(l.container_id, cases[i].ctr), "%zu container_id '%s'", i,
			      l.container_id);
		ck_assert_msg(!strcmp(l.job_id, cases[i].job), "%zu job_id '%s'", i, l.job_id);
		ck_assert_msg(!strcmp(l.qos, cases[i].qos), "%zu qos '%s'", i, l.qos);
	}
}
END_TEST

/* Self metrics from the captured /proc/self/stat and /proc/stat. */
START_TEST(test_self_metrics)
{
	char *stat = load_data("stat_self"), *pstat = load_data("proc_stat");
	struct om_self self = { .clk_tck = 100, .page_size = 4096, .open_fds = 7,
				.max_fds = 8192 };
	struct mbuf b;
	const char *t;

	ck_assert_int_eq(parse_stat(stat, &self.st), 0);
	ck_assert_uint_eq(self.st.utime_ticks, 6);
	ck_assert_uint_eq(self.st.stime_ticks, 1);
	ck_assert_uint_eq(self.st.vsize, 20480000);
	ck_assert_uint_eq(self.st.rss_pages, 4239);
	ck_assert_int_eq(om_parse_btime(pstat, &self.btime_s), 0);
	ck_assert_uint_eq(self.btime_s, 1795536112);
	ck_assert_int_eq(om_parse_btime("cpu 1 2 3\nbtime x\n", &self.btime_s), -EINVAL);
	ck_assert_int_eq(om_parse_btime("cpu 1 2 3\n", &self.btime_s), -EINVAL);
	self.btime_s = 1795536112;
	mbuf_init(&b, false);
	om_self_metrics(&b, &self);
	t = metrics_end(&b);
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_cpu_seconds_total 0.07\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_resident_memory_bytes 17362944\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_virtual_memory_bytes 20480000\n"));
	/* btime + starttime 40961 ticks / 100 */
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_start_time_seconds 1795536521.61\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_open_fds 7\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nprocess_max_fds 8192\n"));
	mbuf_free(&b);
	/* unknown fds and boot time: those families are left out, not 0 */
	self.open_fds = -1;
	self.max_fds = 0;
	self.btime_s = 0;
	mbuf_init(&b, true);
	om_self_metrics(&b, &self);
	t = metrics_end(&b);
	ck_assert_ptr_null(strstr(t, "process_open_fds"));
	ck_assert_ptr_null(strstr(t, "process_max_fds"));
	ck_assert_ptr_null(strstr(t, "process_start_time_seconds"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE process_cpu_seconds counter\n"));
	mbuf_free(&b);
	free(stat);
	free(pstat);
}
END_TEST

/* The daemon's own process read live: what /proc/self says. */
START_TEST(test_self_read)
{
	struct om_self s;
	struct proc_stat ps;

	ck_assert_int_eq(om_self_read(&s), 0);
	ck_assert_int_eq(read_stat(getpid(), &ps), 0);
	ck_assert_uint_gt(s.st.rss_pages, 0);
	ck_assert_uint_eq(s.st.starttime_ticks, ps.starttime_ticks);
	ck_assert_uint_gt(s.btime_s, 1000000000);
	/* this process's fds, as counted from outside the function: a
	 * directory stream of /proc/self/fd (its own fd left out) */
	{
		int before = open("/dev/null", O_RDONLY), n = 0;
		struct dirent *de;
		DIR *d;

		ck_assert_int_ge(before, 0);
		ck_assert_int_eq(om_self_read(&s), 0);
		d = opendir("/proc/self/fd");
		ck_assert_ptr_nonnull(d);
		while ((de = readdir(d)))
			n += de->d_name[0] != '.';
		closedir(d);
		ck_assert_int_eq(s.open_fds, n - 1);
		close(before);
	}
	ck_assert_uint_gt(s.max_fds, 0);
}
END_TEST

/*
 * The job of a cgroup path (memacct_job, issue 45): the built-in rules with
 * their precedence, the job's own cgroup against those below it, bounds,
 * look-alikes, and --job-from rules before them all.
 */
START_TEST(test_path_job)
{
	static const struct {
		const char *path, *job;
		bool root;
	} cases[] = {
		/* Slurm (v1 and v2 layouts), its steps below the job */
		{ "/slurm/uid_0/job_4242", "slurm/4242", true },
		{ "/slurm/uid_0/job_4242/step_0", "slurm/4242", false },
		{ "/system.slice/slurmstepd.scope/job_4242/step_batch/user/task_0", "slurm/4242",
		  false },
		{ "/system.slice/slurmstepd.scope", "systemd/slurmstepd.scope", true },
		/* Kubernetes: the pod, its containers below it (both drivers) */
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234abcd_5678_90ab_cdef_1234567890ab.slice",
		  "k8s/1234abcd-5678-90ab-cdef-1234567890ab", true },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234abcd_5678_90ab_cdef_1234567890ab.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "k8s/1234abcd-5678-90ab-cdef-1234567890ab", false },
		{ "/kubepods/besteffort/pod1234abcd-5678-90ab-cdef-1234567890ab/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "k8s/1234abcd-5678-90ab-cdef-1234567890ab", false },
		{ "/kubepods.slice/kubepods-burstable.slice", "", false },
		/* memacct run: unnamed, named, kept; named beats an outer job */
		{ "/memacct-run-1234-0badcafe", "run/1234-0badcafe", true },
		{ "/memacct-keep-1234-0badcafe", "run/1234-0badcafe", true },
		{ "/user.slice/memacct-run-77-00ff00ff.job-train-4711", "run/train-4711", true },
		{ "/slurm/uid_0/job_9/step_0/memacct-run-77-00ff00ff.job-train", "run/train", true },
		{ "/slurm/uid_0/job_9/step_0/memacct-run-77-00ff00ff", "slurm/9", false },
		{ "/memacct-run-77-00ff00ff.job-", "", false },		/* no name */
		{ "/memacct-run-77-00ff00ff.job-a b", "", false },	/* not a run's name */
		{ "/memacct-run-77-00ff00f", "", false },		/* 7 hex digits */
		/* systemd units, innermost; a docker scope is one */
		{ "/system.slice/postgresql.service", "systemd/postgresql.service", true },
		{ "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "systemd/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  true },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service",
		  "systemd/foo.service", true },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice",
		  "systemd/user@1000.service", false },
		{ "/system.slice", "", false },
		{ "/", "", false },
		{ "/.service", "", false },
		{ "/job_", "", false },
		{ "/job_123456789012345678901", "", false },	/* 21 digits */
	};
	struct job_rules r = { 0 };
	struct cg_labels l;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&l, 0x55, sizeof(l));
		cgroup_path_labels(cases[i].path, NULL, &l);
		ck_assert_msg(!strcmp(l.job, cases[i].job), "%zu job '%s', want '%s'", i, l.job,
			      cases[i].job);
		ck_assert_msg(l.job_root == cases[i].root, "%zu job_root %d", i, l.job_root);
	}
	/* --job-from: first rule that matches, its group, else the whole match */
	ck_assert_int_eq(job_rules_add(&r, "--job-from", "^/batch/([^/]+)"), 0);
	ck_assert_int_eq(job_rules_add(&r, "--job-from", "team-[a-z]+"), 0);
	ck_assert_int_eq(job_rules_add(&r, "--job-from", "(a)(b)"), -EINVAL);
	ck_assert_int_eq(job_rules_add(&r, "--job-from", "(["), -EINVAL);
	ck_assert_int_eq(r.n, 2);
	cgroup_path_labels("/batch/j-17", &r, &l);
	ck_assert_str_eq(l.job, "j-17");
	ck_assert(l.job_root);
	cgroup_path_labels("/batch/j-17/worker/0", &r, &l);
	ck_assert_str_eq(l.job, "j-17");
	ck_assert(!l.job_root);
	cgroup_path_labels("/x/team-ml.slice/job_5", &r, &l);	/* before Slurm's */
	ck_assert_str_eq(l.job, "team-ml");
	ck_assert(!l.job_root);
	cgroup_path_labels("/slurm/job_5", &r, &l);	/* no rule: the built-in ones */
	ck_assert_str_eq(l.job, "slurm/5");
	job_rules_free(&r);
	ck_assert_int_eq(r.n, 0);
	/* run --job's names */
	ck_assert(cgroup_job_name_ok("train-4711.v2@node:1+x_y"));
	ck_assert(!cgroup_job_name_ok(""));
	ck_assert(!cgroup_job_name_ok("a/b"));
	ck_assert(!cgroup_job_name_ok("a b"));
	ck_assert(!cgroup_job_name_ok("0123456789012345678901234567890123456789012345678901234567890123456789"));
}
END_TEST

START_TEST(test_info_families)
{
	struct mbuf b;
	const char *t;
	char want[256];

	mbuf_init(&b, false);
	om_build_info(&b);
	om_kernel_features(&b, "perf");
	om_cgroup_info_family(&b);
	om_cgroup_info(&b, "/");
	om_cgroup_info(&b, "/kubepods/besteffort/pod1234abcd-5678-90ab-cdef-1234567890ab");
	om_cgroup_info(&b, "/slurm/uid_0/job_42/step_0");
	t = metrics_end(&b);
	snprintf(want, sizeof(want), "memacct_build_info{version=\"%s\",libbpf=\"", MEMACCT_VERSION);
	ck_assert_ptr_nonnull(strstr(t, want));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE memacct_kernel_features gauge\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nmemacct_kernel_features{fault_hook=\"perf\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nmemacct_cgroup_info{cgroup=\"/\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nmemacct_cgroup_info{cgroup=\"/kubepods/besteffort/"
				     "pod1234abcd-5678-90ab-cdef-1234567890ab\",pod_uid=\""
				     "1234abcd-5678-90ab-cdef-1234567890ab\",qos=\"besteffort\","
				     "memacct_job=\"k8s/1234abcd-5678-90ab-cdef-1234567890ab\","
				     "job_root=\"true\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nmemacct_cgroup_info{cgroup=\"/slurm/uid_0/job_42/"
				     "step_0\",job_id=\"42\",memacct_job=\"slurm/42\"} 1\n"));
	mbuf_free(&b);
}
END_TEST

/*
 * --metrics-allow / --metrics-deny: a family left out goes with its samples,
 * the regex matches the whole name without _total (not a prefix), and a bad
 * regex is refused.
 */
START_TEST(test_family_filter)
{
	static const struct mlabel l[] = { { "cgroup", "/a" } };
	static const char *const fam[] = {
		"memacct_rss_bytes", "memacct_rss_bytes_max", "memacct_cow_copied_bytes",
		"memacct_process_rss_bytes",
	};
	regex_t allow, deny, bad;
	struct mbuf b;
	const char *t;

	ck_assert_int_eq(metrics_compile_filter("--metrics-allow", "memacct_(rss|cow_copied)_bytes",
						&allow), 0);
	ck_assert_int_eq(metrics_compile_filter("--metrics-deny", "memacct_process_.*", &deny), 0);
	ck_assert_int_eq(metrics_compile_filter("--metrics-deny", "(", &bad), -EINVAL);
	for (int pass = 0; pass < 2; pass++) {
		metrics_set_filter(pass ? NULL : &allow, pass ? &deny : NULL);
		mbuf_init(&b, false);
		for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
			metrics_family(&b, fam[i], i == 2 ? MT_COUNTER : MT_GAUGE, "bytes", "h");
			metrics_sample_u64(&b, l, 1, 4096 * (i + 1));
		}
		t = metrics_end(&b);
		if (!pass)	/* allowed: rss and cow_copied, not rss_bytes_max */
			ck_assert_str_eq(t, "# HELP memacct_rss_bytes h\n# TYPE memacct_rss_bytes gauge\n"
					 "memacct_rss_bytes{cgroup=\"/a\"} 4096\n"
					 "# HELP memacct_cow_copied_bytes_total h\n"
					 "# TYPE memacct_cow_copied_bytes_total counter\n"
					 "memacct_cow_copied_bytes_total{cgroup=\"/a\"} 12288\n");
		else	/* denied: the process family only */
			ck_assert_msg(strstr(t, "memacct_rss_bytes_max{") && !strstr(t, "process"),
				      "%s", t);
		mbuf_free(&b);
	}
	metrics_set_filter(NULL, NULL);
	regfree(&allow);
	regfree(&deny);
}
END_TEST

/*
 * The daemon's per-cgroup families from a synthetic collection: a family per
 * metric_table row that has one, typed by the table; no memory.stat figure
 * for a cgroup whose stat was not read; no remote-NUMA samples on one node;
 * unwanted cgroups left out; the by-reason split from its first page.
 */
START_TEST(test_cgroup_families)
{
	struct cgi cg[3];
	struct mbuf b;
	char want[160];
	const char *t;

	memset(cg, 0, sizeof(cg));
	cg[0] = (struct cgi){ .id = 1, .rel = "/", .wanted = true, .st_ok = true };
	cg[1] = (struct cgi){ .id = 2, .rel = "/a", .wanted = true, .st_ok = false };
	cg[2] = (struct cgi){ .id = 3, .rel = "/b", .wanted = false, .st_ok = true };
	for (int i = 0; i < 3; i++) {
		cg[i].m.cow_copied = 3 * 4096;
		cg[i].m.anon = 8192;
		cg[i].m.rss_sum = 12288;
		cg[i].m.remote_numa = 4096;
		cg[i].m.page_faults = 7;
	}
	cg[0].m.numa_migrated_by_reason[MEMACCT_MR_COMPACTION] = 4096;
	mbuf_init(&b, false);
	om_cgroup_families(&b, cg, 3, true);
	t = metrics_end(&b);
	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *d = &metric_table[id];

		if (!d->family)
			continue;
		xsnprintf(want, sizeof(want), "# TYPE %s%s %s\n", d->family,
			  d->flags & MF_FLOW ? "_total" : "", d->flags & MF_FLOW ? "counter" : "gauge");
		ck_assert_msg(strstr(t, want), "no '%s' in:\n%s", want, t);
	}
	ck_assert_msg(strstr(t, "\nmemacct_cow_copied_bytes_total{cgroup=\"/\"} 12288\n") &&
		      strstr(t, "\nmemacct_rss_bytes{cgroup=\"/\"} 12288\n") &&
		      strstr(t, "\nmemacct_anon_bytes{cgroup=\"/\"} 8192\n") &&
		      strstr(t, "\nmemacct_page_faults_total{cgroup=\"/\"} 7\n"), "%s", t);
	/* /a: BPF and iterator figures, none from its memory.stat */
	ck_assert_msg(strstr(t, "\nmemacct_cow_copied_bytes_total{cgroup=\"/a\"} 12288\n") &&
		      !strstr(t, "\nmemacct_anon_bytes{cgroup=\"/a\"}") &&
		      !strstr(t, "\nmemacct_page_faults_total{cgroup=\"/a\"}"), "%s", t);
	ck_assert_msg(!strstr(t, "cgroup=\"/b\"") && !strstr(t, "\nmemacct_remote_numa_bytes{"),
		      "%s", t);
	ck_assert_msg(strstr(t, "\nmemacct_numa_migrated_by_reason_bytes_total{cgroup=\"/\","
			      "reason=\"compaction\"} 4096\n") &&
		      !strstr(t, "reason=\"syscall\""), "%s", t);
	ck_assert_int_eq(promtool_on(t), 0);
	mbuf_free(&b);
	/* several nodes: remote samples */
	mbuf_init(&b, true);
	om_cgroup_families(&b, cg, 3, false);
	t = metrics_end(&b);
	ck_assert_msg(strstr(t, "\nmemacct_remote_numa_bytes{cgroup=\"/\"} 4096\n"), "%s", t);
	mbuf_free(&b);
}
END_TEST

/*
 * Processes summed per (own cgroup, comm): two "w" in a Slurm job's cgroup,
 * one "x", one elsewhere; each series with the cgroup's labels, its job's
 * among them.
 */
START_TEST(test_comm_families)
{
	struct cgi cg[2] = { { .id = 1, .rel = "/job_7", .wanted = true },
			     { .id = 2, .rel = "/off", .wanted = false } };
	struct memacct_task_stock st[4];
	struct comm_sum *v;
	struct mbuf b;
	const char *t;
	size_t n;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < 4; i++) {
		st[i].memcg_id = i == 3 ? 2 : 1;
		memcpy(st[i].comm, i == 2 ? "x" : "w", 2);
		st[i].rss_anon_pages = 1 + i;
		st[i].rss_file_pages = 10;
	}
	cgroup_path_labels(cg[0].rel, NULL, &cg[0].labels);
	v = comm_sums(st, 4, &n);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(n, 3);	/* (/job_7, w), (/job_7, x), (/off, w) */
	mbuf_init(&b, false);
	om_comm_families(&b, cg, 2, v, n, 4096);
	t = metrics_end(&b);
#define JOB7 "cgroup=\"/job_7\",job_id=\"7\",memacct_job=\"slurm/7\",job_root=\"true\""
	ck_assert_msg(strstr(t, "\nmemacct_comm_processes{" JOB7 ",comm=\"w\"} 2\n") &&
		      strstr(t, "\nmemacct_comm_processes{" JOB7 ",comm=\"x\"} 1\n") &&
		      strstr(t, "\nmemacct_comm_rss_bytes{" JOB7 ",comm=\"w\"} 94208\n") &&
		      strstr(t, "\nmemacct_comm_rss_bytes{" JOB7 ",comm=\"x\"} 53248\n") &&
		      !strstr(t, "/off"), "%s", t);
#undef JOB7
	ck_assert_int_eq(promtool_on(t), 0);
	mbuf_free(&b);
	free(v);
}
END_TEST

/*
 * comm_sums() over more (memcg, comm) pairs than its first table holds: the
 * table grows (rehashing what it summed), and every pair keeps its count
 * and RSS. 3,000 processes, 3 of each of 1,000 pairs.
 */
START_TEST(test_comm_sums_grow)
{
	enum { PAIRS = 1000, EACH = 3 };
	struct memacct_task_stock *st = calloc(PAIRS * EACH, sizeof(*st));
	struct comm_sum *v;
	size_t n;
	bool *seen = calloc(PAIRS, sizeof(*seen));

	ck_assert(st && seen);
	for (int i = 0; i < PAIRS * EACH; i++) {
		int p = i % PAIRS;

		st[i].memcg_id = 100 + p % 7;
		snprintf(st[i].comm, sizeof(st[i].comm), "w%d", p);
		st[i].rss_anon_pages = p;
		st[i].rss_file_pages = 1;
	}
	v = comm_sums(st, PAIRS * EACH, &n);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(n, PAIRS);
	for (size_t i = 0; i < n; i++) {
		int p = atoi(v[i].comm + 1);

		ck_assert_msg(p >= 0 && p < PAIRS && !seen[p], "pair %s twice or unknown", v[i].comm);
		seen[p] = true;
		ck_assert_uint_eq(v[i].memcg_id, 100 + p % 7);
		ck_assert_uint_eq(v[i].n, EACH);
		ck_assert_uint_eq(v[i].rss_pages, EACH * (uint64_t)(p + 1));
	}
	free(v);
	free(seen);
	free(st);
}
END_TEST

/*
 * The last-kill series at its limit: a restarted daemon seeded from an OOM
 * log of 1,030 kills (each cgroup and those above it: 1,032 with "/" and
 * /c1029 above /c1029/job_5) keeps 1,024; the 8 oldest are dropped and
 * counted, never dropped unsaid. Each series
 * has its cgroup's path labels and the last kill's cause, when named.
 */
START_TEST(test_oom_last_kill_series_full)
{
	char path[] = "/tmp/memacct-unit-oomlog-XXXXXX";
	struct daemon_oom *o = calloc(1, sizeof(*o));
	bool c0 = false, c1029 = false;
	const char *text;
	struct mbuf b;
	FILE *f;
	int fd;

	ck_assert_ptr_nonnull(o);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	for (int i = 0; i < 1029; i++)
		fprintf(f, "{\"schema\":\"%s\",\"oom_kills\":[{\"cgroup\":\"/c%d\","
			"\"time\":%d}]}\n", OOM_SCHEMA, i, i + 1);
	/* the last with its post-mortem's cause, in a Slurm job's cgroup */
	fprintf(f, "{\"schema\":\"%s\",\"oom_kills\":[{\"cgroup\":\"/c1029/job_5\","
		"\"time\":1030,\"cause\":\"cow\"}]}\n", OOM_SCHEMA);
	ck_assert_int_eq(fclose(f), 0);
	o->log_path = path;
	doom_seed(o);
	unlink(path);
	ck_assert_int_eq(o->nlast, DOOM_CGROUPS);
	ck_assert_int_eq(o->last_dropped, 8);
	for (size_t i = 0; i < o->nlast; i++) {
		c0 |= !strcmp(o->last[i].cgroup, "/c0");
		c1029 |= !strcmp(o->last[i].cgroup, "/c1029");
	}
	ck_assert(!c0 && c1029);
	mbuf_init(&b, false);
	doom_metrics(&b, o, NULL);
	text = metrics_end(&b);
	/* labelled as the cgroup's other series, and with the cause */
	ck_assert_msg(strstr(text, "\nmemacct_oom_last_kill_timestamp_seconds{cgroup=\"/c1029/job_5\","
			     "job_id=\"5\",memacct_job=\"slurm/5\",job_root=\"true\",cause=\"cow\"} 1030\n"),
		      "%.600s", text);
	ck_assert(strstr(text, "\nmemacct_oom_last_kill_timestamp_seconds{cgroup=\"/\",cause=\"cow\"} "
			 "1030\n"));
	ck_assert(strstr(text, "\nmemacct_oom_last_kill_timestamp_seconds{cgroup=\"/c1028\"} 1029\n"));
	ck_assert_msg(strstr(text, "\nmemacct_oom_last_kill_series_dropped_total 8\n"), "%.600s",
		      text);
	mbuf_free(&b);
	doom_free(o);
	free(o);
}
END_TEST

Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc;

	tc = tcase_create("writer");
	tcase_set_timeout(tc, TOOL_TIMEOUT_S);	/* runs promtool */
	tcase_add_test(tc, test_writer_prom_fixture);
	tcase_add_test(tc, test_writer_om_fixture);
	tcase_add_test(tc, test_writer_promtool);
	tcase_add_test(tc, test_escape_label);
	tcase_add_test(tc, test_family_filter);
	suite_add_tcase(s, tc);

	tc = tcase_create("labels");
	tcase_add_test(tc, test_path_labels);
	tcase_add_test(tc, test_path_job);
	tcase_add_test(tc, test_info_families);
	suite_add_tcase(s, tc);

	tc = tcase_create("daemon");
	tcase_add_test(tc, test_cgroup_families);
	tcase_add_test(tc, test_comm_families);
	tcase_add_test(tc, test_comm_sums_grow);
	suite_add_tcase(s, tc);

	tc = tcase_create("self");
	tcase_add_test(tc, test_self_metrics);
	tcase_add_test(tc, test_self_read);
	tcase_add_test(tc, test_oom_last_kill_series_full);
	suite_add_tcase(s, tc);
	return s;
}
