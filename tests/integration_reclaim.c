// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_reclaim.c - `memacct reclaim` against the kernel's own
 * memory.stat. On cgroup v2 (the vmtest guests): a workload in a cgroup of
 * ours reads a 256 MiB file into page cache and holds 32 MiB of anon; a
 * sibling cgroup holds 64 MiB of page cache of its own. `reclaim
 * --file-only` must free the file pages, leave anon and the sibling alone,
 * and report what memory.stat's deltas say. On cgroup v1 (this host): the
 * refusal and its status. Everywhere: bad SIZE and unknown cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include "integration.h"

/*
 * Tolerances. File: reclaim asked for the whole file LRU must free >= 90%
 * of the 256 MiB (pages being read ahead or just referenced can survive a
 * pass; what stays is reported, and has been a few pages). Anon and the
 * sibling: 1 MiB, the kernel's memory.stat flush threshold (rstat is
 * flushed once MEMCG_CHARGE_BATCH = 64 pages per CPU are pending: two
 * reads may differ by that little with nothing changing). Reported freed
 * bytes against our own reads of memory.stat around the command: the same
 * 1 MiB.
 */
#define FLUSH_SLACK (1 * MiB)

static char cg[2][256], file[2][256];
static pid_t kid[2];

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		if (kid[i] > 0) {
			kill(kid[i], SIGKILL);
			waitpid(kid[i], NULL, 0);
			kid[i] = 0;
		}
		if (cg[i][0]) {
			for (int n = 0; n < 100 && rmdir(cg[i]) && errno == EBUSY; n++)
				usleep(50000);
			cg[i][0] = '\0';
		}
		if (file[i][0]) {
			unlink(file[i]);
			file[i][0] = '\0';
		}
	}
}

/* memory.stat key @key of cgroup @dir, bytes; fails the test when absent */
static long long stat_of(const char *dir, const char *key)
{
	char path[512], k[64];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	while (fscanf(f, "%63s %lld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	ck_assert_msg(found >= 0, "%s has no %s", path, key);
	return found;
}

/*
 * a file of @mib MiB under /var/tmp written and dropped from the page cache
 * (fsync, POSIX_FADV_DONTNEED), so the reader charges it; false (and the
 * reason in @why) when /var/tmp keeps no page cache (tmpfs: shmem pages)
 */
static bool make_file(int i, int mib, char *why, size_t len)
{
	static char buf[1 << 20];
	struct statfs sf;
	int fd;

	if (statfs("/var/tmp", &sf) || sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC) {
		snprintf(why, len, "/var/tmp is tmpfs/ramfs here: its pages are shmem, not "
			 "reclaimable page cache");
		return false;
	}
	snprintf(file[i], sizeof(file[i]), "/var/tmp/memacct-reclaim-%d-%d", (int)getpid(), i);
	fd = open(file[i], O_CREAT | O_TRUNC | O_WRONLY, 0600);
	ck_assert_msg(fd >= 0, "%s: %s", file[i], strerror(errno));
	memset(buf, 'r', sizeof(buf));
	for (int n = 0; n < mib; n++)
		ck_assert_int_eq(write(fd, buf, sizeof(buf)), sizeof(buf));
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
	return true;
}

/*
 * cgroup memacct-reclaim-PID-@i with a child in it that reads file @i
 * whole and holds @anon_mib MiB of anon, then waits to be killed
 */
static void start_workload(int i, long anon_mib)
{
	char path[300], pid[32], c;
	int p[2];

	snprintf(cg[i], sizeof(cg[i]), "%s/memacct-reclaim-%d-%d", cgroot, (int)getpid(), i);
	ck_assert_msg(!mkdir(cg[i], 0755), "mkdir %s: %s", cg[i], strerror(errno));
	ck_assert_int_eq(pipe(p), 0);
	kid[i] = fork();
	ck_assert_int_ge(kid[i], 0);
	if (!kid[i]) {
		static char buf[1 << 16];
		char *anon;
		int fd;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg[i]);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			_exit(1);
		close(fd);
		anon = malloc(anon_mib * MiB + 1);
		if (anon_mib && !anon)
			_exit(1);
		memset(anon, 'a', anon_mib * MiB);
		fd = open(file[i], O_RDONLY);
		if (fd < 0)
			_exit(1);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		/* anon's first byte: the memset is used, not optimized away */
		if (write(p[1], anon_mib ? anon : "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ck_assert_msg(read(p[0], &c, 1) == 1, "workload in %s failed", cg[i]);
	close(p[0]);
}

/* whether cg[0] lacks memory.reclaim (Linux < 5.19): then the test skips */
static bool no_reclaim_file(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/memory.reclaim", cg[0]);
	if (!access(path, F_OK))
		return false;
	skip_test("test_reclaim", "no memory.reclaim here (Linux 5.19+)");
	return true;
}

/* the reclaim JSON report's member @key of object @obj ("freed_bytes") */
static long long rep(const struct result *r, const char *obj, const char *key)
{
	json_t *o = json_object_get(r->report, obj);

	ck_assert_msg(o, "report has no %s:\n%s", obj, r->out);
	return jint(o, key);
}

static void assert_within(const char *what, long long got, long long want, long long tol)
{
	ck_assert_msg(llabs(got - want) <= tol, "%s: %lld, want %lld +- %lld", what, got,
		      want, tol);
}

START_TEST(test_reclaim_file_only)
{
	long long f0, a0, s0, f1, a1, s1;
	char why[128];
	struct result *r;

	if (cgversion != 2) {
		SKIP_TEST("cgroup v1 here: no memory.reclaim (test_reclaim_v1_refused)");
		return;
	}
	if (!make_file(0, 256, why, sizeof(why)) || !make_file(1, 64, why, sizeof(why))) {
		SKIP_TEST("%s", why);
		return;
	}
	start_workload(0, 32);
	if (no_reclaim_file())
		return;
	start_workload(1, 0);
	f0 = stat_of(cg[0], "file");
	a0 = stat_of(cg[0], "anon");
	s0 = stat_of(cg[1], "file");
	ck_assert_msg(f0 >= (long long)(250 * MiB), "file before %lld: the read was not charged", f0);
	ck_assert_msg(a0 >= (long long)(32 * MiB), "anon before %lld", a0);
	ck_assert_msg(s0 >= (long long)(62 * MiB), "sibling's file before %lld", s0);

	r = run_cmd("%s -j reclaim --cgroup %s --file-only", memacct, cg[0]);
	f1 = stat_of(cg[0], "file");
	a1 = stat_of(cg[0], "anon");
	s1 = stat_of(cg[1], "file");
	printf("reclaim --file-only: file %lld -> %lld, anon %lld -> %lld, sibling file "
	       "%lld -> %lld, status %d\n", f0, f1, a0, a1, s0, s1, r->status);
	ck_assert_msg(r->report, "no JSON report (status %d): %s", r->status, r->out);
	ck_assert_msg(r->status == 0 || r->status == 1, "status %d", r->status);
	ck_assert_msg(f0 - f1 >= (long long)(256 * MiB * 9 / 10),
		      "file freed %lld of %lld", f0 - f1, f0);
	assert_within("anon after", a1, a0, FLUSH_SLACK);
	assert_within("sibling's file after", s1, s0, FLUSH_SLACK);
	assert_within("reported file freed", rep(r, "freed_bytes", "file"), f0 - f1,
		      FLUSH_SLACK);
	assert_within("reported anon freed", rep(r, "freed_bytes", "anon"), a0 - a1,
		      FLUSH_SLACK);
	assert_within("reported file after", rep(r, "after", "file"), f1, FLUSH_SLACK);
	ck_assert_int_eq(rep(r, "freed_bytes", "file"),
			 rep(r, "before", "file") - rep(r, "after", "file"));
	ck_assert(json_is_true(json_object_get(r->report, "file_only")));
	result_free(r);
}
END_TEST

/* --bytes 64M --file-only frees about 64 MiB of the 256 */
START_TEST(test_reclaim_bytes)
{
	long long f0, f1, a0, a1, freed;
	char why[128];
	struct result *r;

	if (cgversion != 2) {
		SKIP_TEST("cgroup v1 here: no memory.reclaim (test_reclaim_v1_refused)");
		return;
	}
	if (!make_file(0, 256, why, sizeof(why))) {
		SKIP_TEST("%s", why);
		return;
	}
	start_workload(0, 16);
	if (no_reclaim_file())
		return;
	f0 = stat_of(cg[0], "file");
	a0 = stat_of(cg[0], "anon");
	r = run_cmd("%s -j reclaim --cgroup %s --bytes 64M --file-only", memacct, cg[0]);
	f1 = stat_of(cg[0], "file");
	a1 = stat_of(cg[0], "anon");
	freed = f0 - f1;
	printf("reclaim --bytes 64M: file %lld -> %lld (freed %lld), status %d\n", f0, f1,
	       freed, r->status);
	ck_assert_int_eq(r->status, 0);
	ck_assert_int_eq(jint(r->report, "requested_bytes"),
			 64 * MiB);
	/*
	 * at least SIZE less the flush slack; at most 1.25 SIZE: the kernel
	 * reclaims in batches of up to a quarter of what is left (6.12's
	 * memory_reclaim()), older kernels overshoot by up to one batch
	 */
	ck_assert_msg(freed >= (long long)(64 * MiB - FLUSH_SLACK) &&
		      freed <= (long long)(64 * MiB * 5 / 4), "freed %lld for 64 MiB", freed);
	assert_within("anon after", a1, a0, FLUSH_SLACK);
	assert_within("reported file freed", rep(r, "freed_bytes", "file"), freed, FLUSH_SLACK);
	result_free(r);
}
END_TEST

/* SwapTotal of /proc/meminfo, bytes */
static long long swap_total(void)
{
	char line[256];
	long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SwapTotal: %lld", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * --dry-run (issue 43), v1 and v2: a workload that read a clean 64 MiB file
 * and holds 16 MiB of anon. The prediction's clean page cache is the file
 * (nothing else of the cgroup is page cache), its anon 0 without swap,
 * nothing is reclaimed; on v2 the reclaim that follows frees what was
 * predicted.
 */
START_TEST(test_reclaim_dry_run)
{
	const char *fkey = cgversion == 2 ? "file" : "total_cache";
	long long pf, pa, ps, f1, freed;
	char why[128];
	struct result *r;

	if (!make_file(0, 64, why, sizeof(why))) {
		SKIP_TEST("%s", why);
		return;
	}
	start_workload(0, 16);
	r = run_cmd("%s -j reclaim --cgroup %s --dry-run", memacct, cg[0]);
	ck_assert_msg(r->status == 0 && r->report, "status %d: %s", r->status, r->out);
	ck_assert(json_is_true(json_object_get(r->report, "dry_run")));
	pf = rep(r, "predicted", "file");
	pa = rep(r, "predicted", "anon");
	ps = rep(r, "predicted", "slab_reclaimable");
	f1 = stat_of(cg[0], fkey);
	printf("reclaim --dry-run: predicted file %lld, anon %lld, slab %lld, held %lld; file "
	       "before %lld, after %lld\n", pf, pa, ps, rep(r, "predicted", "held"),
	       rep(r, "before", "file"), f1);
	assert_within("predicted clean page cache", pf, 64 * MiB, FLUSH_SLACK);
	if (!swap_total())
		ck_assert_int_eq(pa, 0);
	ck_assert_int_eq(jint(r->report, "predicted_bytes"), pf + pa + ps);
	ck_assert_int_eq(rep(r, "freed_bytes", "file"), 0);
	assert_within("file after a dry run", f1, rep(r, "before", "file"), FLUSH_SLACK);
	result_free(r);
	r = run_cmd("%s reclaim --cgroup %s --dry-run --file-only", memacct, cg[0]);
	ck_assert_msg(r->status == 0 && strstr(r->out, "--dry-run, nothing reclaimed") &&
		      strstr(r->out, "clean page cache"), "status %d: %s", r->status, r->out);
	result_free(r);
	if (cgversion != 2 || no_reclaim_file())
		return;
	r = run_cmd("%s -j reclaim --cgroup %s --file-only", memacct, cg[0]);
	ck_assert_msg(r->report, "status %d: %s", r->status, r->out);
	freed = rep(r, "freed_bytes", "file");
	printf("reclaim --file-only after it: predicted file %lld, freed %lld\n",
	       rep(r, "predicted", "file"), freed);
	assert_within("freed against predicted", freed, rep(r, "predicted", "file"),
		      rep(r, "predicted", "file") / 10 + FLUSH_SLACK);
	result_free(r);
}
END_TEST

START_TEST(test_reclaim_v1_refused)
{
	struct result *r;

	if (cgversion != 1) {
		SKIP_TEST("cgroup v2 here: memory.reclaim exists (test_reclaim_file_only)");
		return;
	}
	snprintf(cg[0], sizeof(cg[0]), "%s/memacct-reclaim-%d-0", cgroot, (int)getpid());
	ck_assert_msg(!mkdir(cg[0], 0755), "mkdir %s: %s", cg[0], strerror(errno));
	r = run_cmd("%s reclaim --cgroup %s --file-only 2>&1", memacct, cg[0]);
	ck_assert_int_eq(r->status, 3);
	/* and what works on v1 instead (issue 41 item 8) */
	ck_assert_msg(strstr(r->out, "cgroup v1 has no memory.reclaim") &&
		      strstr(r->out, "force_empty") && strstr(r->out, "POSIX_FADV_DONTNEED") &&
		      strstr(r->out, "drop_caches"), "%s", r->out);
	result_free(r);
}
END_TEST

START_TEST(test_reclaim_usage_errors)
{
	struct result *r;

	r = run_cmd("%s reclaim --cgroup %s --bytes 12Q 2>&1", memacct, cgroot);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "bad --bytes '12Q'"), "%s", r->out);
	result_free(r);
	r = run_cmd("%s reclaim --cgroup %s --bytes 10%% 2>&1", memacct, cgroot);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
	r = run_cmd("%s reclaim --cgroup memacct-no-such-cgroup-%d --file-only 2>&1",
		    memacct, (int)getpid());
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "no memory cgroup"), "%s", r->out);
	result_free(r);
	r = run_cmd("%s reclaim --file-only 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	result_free(r);
}
END_TEST

Suite *reclaim_suite(void)
{
	Suite *s = suite_create("reclaim");
	TCase *tc = tcase_swept("reclaim", 120);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_reclaim_file_only);
	tcase_add_test(tc, test_reclaim_bytes);
	tcase_add_test(tc, test_reclaim_dry_run);
	tcase_add_test(tc, test_reclaim_v1_refused);
	tcase_add_test(tc, test_reclaim_usage_errors);
	suite_add_tcase(s, tc);
	return s;
}
