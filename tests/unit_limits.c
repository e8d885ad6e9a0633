// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_limits.c - limits of run/attach without root: limit files per cgroup
 * version, the state file's text form, and limits_apply() on fake v1 and v2
 * cgroup directories (memory.stat captured from real kernels).
 */
#define _GNU_SOURCE
#include "check_util.h"
#include "memlimits.h"
#include "proc.h"
#include "util.h"

START_TEST(test_limit_files)
{
	ck_assert_str_eq(limit_file(2, LIMIT_MAX), "memory.max");
	ck_assert_str_eq(limit_file(2, LIMIT_HIGH), "memory.high");
	ck_assert_str_eq(limit_file(2, LIMIT_SWAP_MAX), "memory.swap.max");
	ck_assert_str_eq(limit_file(1, LIMIT_MAX), "memory.limit_in_bytes");
	ck_assert_str_eq(limit_file(1, LIMIT_HIGH), "memory.soft_limit_in_bytes");
	ck_assert_str_eq(limit_file(1, LIMIT_SWAP_MAX), "memory.memsw.limit_in_bytes");
}
END_TEST

START_TEST(test_parse_limit_value)
{
	uint64_t v;
	bool unl;

	ck_assert_int_eq(parse_limit_value("max\n", &v, &unl), 0);
	ck_assert(unl);
	ck_assert_int_eq(parse_limit_value("9223372036854771712\n", &v, &unl), 0);
	ck_assert(unl);
	ck_assert_int_eq(parse_limit_value("67108864\n", &v, &unl), 0);
	ck_assert(!unl);
	ck_assert_uint_eq(v, 64ULL << 20);
	ck_assert_int_eq(parse_limit_value("", &v, &unl), -EINVAL);
	ck_assert_int_eq(parse_limit_value("12x\n", &v, &unl), -EINVAL);
	ck_assert_int_eq(parse_limit_value("-1\n", &v, &unl), -EINVAL);
}
END_TEST

START_TEST(test_state_roundtrip)
{
	struct limits_state st = { .owner = 4242, .owner_start = 777, .id = 9001,
				   .version = 2, .nfiles = 2 }, back;
	char buf[8192];

	snprintf(st.path, sizeof(st.path), "/sys/fs/cgroup/job 1");
	snprintf(st.saved[0].file, 64, "memory.max");
	snprintf(st.saved[0].value, 32, "max");
	snprintf(st.saved[1].file, 64, "memory.high");
	snprintf(st.saved[1].value, 32, "1073741824");
	ck_assert_int_eq(format_limits_state(&st, buf, sizeof(buf)), 0);
	ck_assert_int_eq(parse_limits_state(buf, &back), 0);
	ck_assert_int_eq(back.owner, 4242);
	ck_assert_uint_eq(back.owner_start, 777);
	ck_assert_uint_eq(back.id, 9001);
	ck_assert_int_eq(back.version, 2);
	ck_assert_str_eq(back.path, "/sys/fs/cgroup/job 1");
	ck_assert_int_eq(back.nfiles, 2);
	ck_assert_str_eq(back.saved[1].file, "memory.high");
	ck_assert_str_eq(back.saved[1].value, "1073741824");
	ck_assert_int_eq(format_limits_state(&st, buf, 20), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_state_rejects)
{
	struct limits_state st;

	ck_assert_int_eq(parse_limits_state("", &st), -EINVAL);
	ck_assert_int_eq(parse_limits_state("memacct-limits 1\nowner 1 2\n", &st), -EINVAL);
	/* a file outside the cgroup directory is never restored */
	ck_assert_int_eq(parse_limits_state("memacct-limits 1\nowner 1 2\ncgroup 5 2 /x\n"
					    "file ../../etc/passwd 1\n", &st), -EINVAL);
	ck_assert_int_eq(parse_limits_state("memacct-limits 1\nowner 1 2\ncgroup 5 3 /x\n",
					    &st), -EINVAL);
	ck_assert_int_eq(parse_limits_state("memacct-limits 1\nowner 1 2\ncgroup 5 1 /x\n"
					    "bogus\n", &st), -EINVAL);
}
END_TEST

/* a fake cgroup directory with the files limits_apply() reads and writes */
static char fake[PATH_MAX];

static void put(const char *file, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", fake, file);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void get(const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", fake, file);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void make_fake(int version, struct memcg *cg)
{
	char *stat = load_data(version == 2 ? "memory_stat_v2" : "memory_stat_v1");

	xsnprintf(fake, sizeof(fake), "/tmp/memacct-unit-limits-%d-v%d", getpid(), version);
	ck_assert(!mkdir(fake, 0755) || errno == EEXIST);
	put("memory.stat", stat);
	free(stat);
	if (version == 2) {
		put("memory.current", "104857600\n");	/* 100 MiB */
		put("memory.peak", "209715200\n");
		put("memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
		put("memory.max", "max\n");
		put("memory.high", "max\n");
		put("memory.swap.max", "max\n");
	} else {
		put("memory.usage_in_bytes", "104857600\n");
		put("memory.max_usage_in_bytes", "209715200\n");
		put("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
		put("memory.limit_in_bytes", "9223372036854771712\n");
		put("memory.soft_limit_in_bytes", "9223372036854771712\n");
		put("memory.memsw.limit_in_bytes", "9223372036854771712\n");
	}
	memset(cg, 0, sizeof(*cg));
	snprintf(cg->path, sizeof(cg->path), "%s", fake);
	snprintf(cg->rel, sizeof(cg->rel), "/fake");
	cg->version = version;
	cg->level = 1;
	cg->id = 12345;
}

static void remove_fake(void)
{
	ck_assert_int_eq(rm_tree(fake), 0);
}

START_TEST(test_apply_v2)
{
	struct limits_req req = { 0 };
	struct memcg cg;
	char v[64];

	make_fake(2, &cg);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "512M", &req), 0);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_HIGH, "256MiB", &req), 0);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_SWAP_MAX, "0", &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), 0);
	get("memory.max", v, sizeof(v));
	ck_assert_str_eq(v, "536870912");
	get("memory.high", v, sizeof(v));
	ck_assert_str_eq(v, "268435456");
	get("memory.swap.max", v, sizeof(v));
	ck_assert_str_eq(v, "0");

	/* below usage (100 MiB): refused, nothing written, unless --force */
	memset(&req, 0, sizeof(req));
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "64M", &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), -EINVAL);
	get("memory.max", v, sizeof(v));
	ck_assert_str_eq(v, "536870912");
	ck_assert_int_eq(limits_getopt(OPT_FORCE, NULL, &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), 0);
	get("memory.max", v, sizeof(v));
	ck_assert_str_eq(v, "67108864");
	remove_fake();
}
END_TEST

/* D13: the root cgroup is refused before a state file is written */
START_TEST(test_apply_root_refused)
{
	struct limits_req req = { 0 };
	struct memcg cg;
	char state[128], v[64];
	int rc, written;

	make_fake(1, &cg);
	cg.level = 0;
	snprintf(cg.rel, sizeof(cg.rel), "/");
	cg.id = 900000000ULL + (uint64_t)getpid();
	snprintf(state, sizeof(state), LIMITS_STATE_DIR "/limits-%llu.state",
		 (unsigned long long)cg.id);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "1G", &req), 0);
	rc = limits_apply(&cg, &req, true);
	written = access(state, F_OK) == 0;
	unlink(state);	/* before any assertion: nothing left on the host */
	get("memory.limit_in_bytes", v, sizeof(v));
	remove_fake();
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(!written, "%s written for the root cgroup", state);
	ck_assert_str_eq(v, "9223372036854771712");
}
END_TEST

START_TEST(test_apply_v1_memsw)
{
	struct limits_req req = { 0 };
	struct memcg cg;
	char v[64];

	make_fake(1, &cg);
	/* v1 swap: memsw = memory + swap */
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "1G", &req), 0);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_SWAP_MAX, "512M", &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), 0);
	get("memory.limit_in_bytes", v, sizeof(v));
	ck_assert_str_eq(v, "1073741824");
	get("memory.memsw.limit_in_bytes", v, sizeof(v));
	ck_assert_str_eq(v, "1610612736");
	/* swap alone, with no memory limit in place: a usage error */
	put("memory.limit_in_bytes", "9223372036854771712\n");
	memset(&req, 0, sizeof(req));
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_SWAP_MAX, "512M", &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), -EINVAL);
	/* D20: memory + swap past what the kernel takes: a usage error, nothing written */
	memset(&req, 0, sizeof(req));
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "1G", &req), 0);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_SWAP_MAX, "9223372036854775807", &req), 0);
	ck_assert_int_eq(limits_apply(&cg, &req, false), -EINVAL);
	get("memory.memsw.limit_in_bytes", v, sizeof(v));
	ck_assert_str_eq(v, "1610612736");
	remove_fake();
}
END_TEST

/* the limits of a fake tree /a/b/c below a root, "" for none (a file of
 * "max", v1 PAGE_COUNTER_MAX); memcg_smallest_limit() from c */
static int smallest_of(int version, const char *la, const char *lb, const char *lc,
		       struct memcg *out, uint64_t *bytes)
{
	const char *file = version == 2 ? "memory.max" : "memory.limit_in_bytes";
	const char *none = version == 2 ? "max\n" : "9223372036854771712\n";
	const char *lim[3] = { la, lb, lc };
	char root[PATH_MAX], dir[PATH_MAX];
	struct memcg c;
	int err;

	xsnprintf(root, sizeof(root), "/tmp/memacct-unit-smallest-%d", getpid());
	ck_assert(!mkdir(root, 0755) || errno == EEXIST);
	xsnprintf(fake, sizeof(fake), "%s", root);
	put(file, "1024\n");	/* the root's: never taken */
	for (int i = 0; i < 3; i++) {
		xsnprintf(dir, sizeof(dir), "%s/%c", fake, 'a' + i);
		ck_assert(!mkdir(dir, 0755) || errno == EEXIST);
		xsnprintf(fake, sizeof(fake), "%s", dir);
		put(file, *lim[i] ? lim[i] : none);
	}
	ck_assert_int_eq(memcg_of_path(root, version, fake, &c), 0);
	ck_assert_int_eq(c.level, 3);
	err = memcg_smallest_limit(&c, out, bytes);
	ck_assert_int_eq(rm_tree(root), 0);
	return err;
}

/* the limit that binds a cgroup: the smallest of its own and its ancestors' */
START_TEST(test_smallest_limit)
{
	struct memcg m;
	uint64_t v;

	for (int version = 1; version <= 2; version++) {
		ck_assert_int_eq(smallest_of(version, "1073741824", "268435456", "", &m, &v), 0);
		ck_assert_str_eq(m.rel, "/a/b");
		ck_assert_uint_eq(v, 268435456);
		ck_assert_int_eq(smallest_of(version, "67108864", "268435456", "536870912", &m,
					     &v), 0);
		ck_assert_str_eq(m.rel, "/a");
		ck_assert_uint_eq(v, 67108864);
		/* a tie: the nearest */
		ck_assert_int_eq(smallest_of(version, "", "268435456", "268435456", &m, &v), 0);
		ck_assert_str_eq(m.rel, "/a/b/c");
		ck_assert_int_eq(smallest_of(version, "", "", "", &m, &v), -ENOENT);
	}
}
END_TEST

START_TEST(test_getopt_errors)
{
	struct limits_req req = { 0 };

	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "4x", &req), -EINVAL);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "0", &req), -EINVAL);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_HIGH, "150%", &req), -EINVAL);
	ck_assert(!limits_any(&req));
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_HIGH, "10%", &req), 0);
	ck_assert(limits_any(&req));
	ck_assert_uint_eq(req.val[LIMIT_HIGH], mem_total_bytes() / 10);
	ck_assert_int_eq(limits_getopt(OPT_MEMORY_MAX, "4GiB", &req), 0);
	ck_assert_uint_eq(req.val[LIMIT_MAX], 4ULL << 30);
}
END_TEST

Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, test_limit_files);
	tcase_add_test(tc, test_parse_limit_value);
	tcase_add_test(tc, test_state_roundtrip);
	tcase_add_test(tc, test_state_rejects);
	tcase_add_test(tc, test_apply_v2);
	tcase_add_test(tc, test_apply_v1_memsw);
	tcase_add_test(tc, test_apply_root_refused);
	tcase_add_test(tc, test_getopt_errors);
	tcase_add_test(tc, test_smallest_limit);
	suite_add_tcase(s, tc);
	return s;
}
