/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * unit_cgroup.c - unit tests of user/proc/cgroup.c: parsers on captured and
 * hand-written kernel files (tests/data/), and resolution, creation and
 * reading on a fake hierarchy of plain directories in /tmp (no root needed;
 * cgroupfs behaviour such as EBUSY on rmdir is left to the root tests).
 */
#define _GNU_SOURCE
#include <errno.h>
#include "check_util.h"
#include "cgroup.h"
#include "memlimits.h"
#include "daemon.h"
#include "daemon_oom.h"
#include "oom.h"
#include "proc.h"
#include "util.h"

/* the fake hierarchy, built once per TCase in the parent process */
static char top[PATH_MAX];	/* /tmp/memacct-ut-XXXXXX */
static char fake[PATH_MAX];	/* top/cg: the "mount point" */

static void fake_tree_setup(void)
{
	static const char *const dirs[] = {
		"a", "a/b", "a/b/job_1", "c", "c/job_1", "c/d", "x", "x/job_2",
		"v2root", "v2", "stat1",
	};
	char outside[PATH_MAX], link[PATH_MAX];
	size_t i;
	char *t;

	xsnprintf(top, sizeof(top), "/tmp/memacct-ut-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	make_dir(top, "cg");
	make_dir(top, "cgx");		/* shares the prefix "cg" */
	make_dir(top, "outside");
	make_dir(top, "outside/job_3");
	xsnprintf(fake, sizeof(fake), "%s/cg", top);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		make_dir(fake, dirs[i]);

	/* a symlink to a directory elsewhere must not be followed */
	xsnprintf(outside, sizeof(outside), "%s/outside", top);
	xsnprintf(link, sizeof(link), "%s/link", fake);
	ck_assert_int_eq(symlink(outside, link), 0);

	write_text(fake, "cgroup.procs", "1\n100\n");
	write_text(fake, "a/cgroup.procs", "200\n300\n200\n");	/* v1 may repeat */
	write_text(fake, "a/b/cgroup.procs", "400\n300\n");
	write_text(fake, "a/b/job_1/cgroup.procs", "");
	write_text(fake, "c/cgroup.procs", "500\n");
	write_text(fake, "c/job_1/cgroup.procs", "600\n");
	write_text(fake, "c/d/cgroup.procs", "7x\n");		/* garbage */
	/* x and x/job_2 have no cgroup.procs: as if removed during the walk */

	/* v1 cgroup "stat1": captured root files + usage */
	t = load_data("memory_stat_v1");
	write_text(fake, "stat1/memory.stat", t);
	free(t);
	t = load_data("memory_oom_control_v1");
	write_text(fake, "stat1/memory.oom_control", t);
	free(t);
	write_text(fake, "stat1/memory.usage_in_bytes", "830595072\n");
	write_text(fake, "stat1/memory.max_usage_in_bytes", "1073741824\n");

	/* v2 cgroup "v2": no memory.peak (kernel < 5.19) */
	t = load_data("memory_stat_v2");
	write_text(fake, "v2/memory.stat", t);
	write_text(fake, "v2root/memory.stat", t);
	free(t);
	t = load_data("memory_events_v2");
	write_text(fake, "v2/memory.events", t);
	free(t);
	write_text(fake, "v2/memory.current", "3670016000\n");
}

static void fake_tree_teardown(void)
{
	if (top[0])
		rm_tree(top);
}

/* a struct memcg for fake/@rel (no checks: for the fake tree only) */
static void fake_cg(struct memcg *cg, const char *rel, int version)
{
	ck_assert_int_eq(memcg_of_path(fake, version, rel[0] ? rel : fake, cg), 0);
}

static char path_buf[PATH_MAX];

static const char *fpath(const char *rel)
{
	xsnprintf(path_buf, sizeof(path_buf), "%s%s", fake, rel);
	return path_buf;
}

static int v2_calls;
static char v2_seen[PATH_MAX];

static bool v2_yes(const char *mnt)
{
	v2_calls++;
	xsnprintf(v2_seen, sizeof(v2_seen), "%s", mnt);
	return true;
}

static bool v2_no(const char *mnt)
{
	v2_calls++;
	return false;
}

START_TEST(test_mountinfo_v1)
{
	char root[PATH_MAX];
	char *text = load_data("mountinfo_v1");
	int version = 0;

	/* hybrid: v1 memory at /sys/fs/cgroup/memory, cgroup2 at .../unified */
	v2_calls = 0;
	ck_assert_int_eq(parse_mountinfo_memcg(text, root, &version, v2_yes), 0);
	ck_assert_str_eq(root, "/sys/fs/cgroup/memory");
	ck_assert_int_eq(version, 1);
	ck_assert_int_eq(v2_calls, 0);	/* v1 memory excludes v2 memory */
	free(text);
}
END_TEST

START_TEST(test_mountinfo_v2)
{
	char root[PATH_MAX];
	char *text = load_data("mountinfo_v2");
	int version = 0;

	v2_calls = 0;
	ck_assert_int_eq(parse_mountinfo_memcg(text, root, &version, v2_yes), 0);
	ck_assert_str_eq(root, "/sys/fs/cgroup");
	ck_assert_str_eq(v2_seen, "/sys/fs/cgroup");
	ck_assert_int_eq(version, 2);
	ck_assert_int_eq(v2_calls, 1);

	/* cgroup2 without the memory controller in cgroup.controllers */
	version = 0;
	ck_assert_int_eq(parse_mountinfo_memcg(text, root, &version, v2_no), -ENOENT);
	ck_assert_int_eq(version, 0);
	free(text);
}
END_TEST

START_TEST(test_mountinfo_hostile)
{
	char root[PATH_MAX];
	char *text = load_data("mountinfo_hostile");
	int version = 0;

	/* "name=memory" is a named hierarchy, not the controller; the mount
	 * point "/cg/my\040mem\134ory" is unescaped */
	v2_calls = 0;
	ck_assert_int_eq(parse_mountinfo_memcg(text, root, &version, v2_yes), 0);
	ck_assert_str_eq(root, "/cg/my mem\\ory");
	ck_assert_int_eq(version, 1);
	ck_assert_int_eq(v2_calls, 0);
	free(text);
	/* the cpuset hierarchy of numa.c: the same parser, unescaped too (its
	 * own sscanf() left \040 in the path) */
	text = load_data("mountinfo_hostile");
	ck_assert_int_eq(parse_mountinfo_v1(text, "cpuset", root), 0);
	ck_assert_str_eq(root, "/cg/my mem\\ory");
	ck_assert_int_eq(parse_mountinfo_v1(text, "blkio", root), -ENOENT);
	free(text);
	text = load_data("mountinfo_v1");
	ck_assert_int_eq(parse_mountinfo_v1(text, "cpuset", root), 0);
	ck_assert_str_eq(root, "/sys/fs/cgroup/cpuset");
	free(text);

	/* only the cgroup2 line with its escaped path left */
	ck_assert_int_eq(parse_mountinfo_memcg(
		"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
		"41 27 0:38 / /cg/uni\\011fied rw,relatime - cgroup2 cgroup2 rw\n",
		root, &version, v2_yes), 0);
	ck_assert_str_eq(root, "/cg/uni\tfied");
	ck_assert_int_eq(version, 2);

	ck_assert_int_eq(parse_mountinfo_memcg("", root, &version, v2_yes), -ENOENT);
	ck_assert_int_eq(parse_mountinfo_memcg(
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup\n",
		root, &version, v2_yes), -ENOENT);
	ck_assert_int_eq(parse_mountinfo_memcg(NULL, root, &version, v2_yes), -EINVAL);
}
END_TEST

START_TEST(test_proc_cgroup)
{
	char path[PATH_MAX];
	char *text;

	text = load_data("proc_cgroup_v1");
	ck_assert_int_eq(parse_proc_cgroup(text, 1, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/process_api/24b6eaf4388b7929d1e49b59d1c165a9");
	/* hybrid: the v2 line is there too */
	ck_assert_int_eq(parse_proc_cgroup(text, 2, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/");
	ck_assert_int_eq(parse_proc_cgroup(text, 1, path, 10), -ENAMETOOLONG);
	free(text);

	text = load_data("proc_cgroup_v2");
	ck_assert_int_eq(parse_proc_cgroup(text, 2, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/system.slice/postgresql@15-main.service");
	ck_assert_int_eq(parse_proc_cgroup(text, 1, path, sizeof(path)), -ENOENT);
	free(text);

	ck_assert_int_eq(parse_proc_cgroup("5:cpu,memory:/a:b c\n", 1, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/a:b c");
	ck_assert_int_eq(parse_proc_cgroup("5:name=memory:/x\n", 1, path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(parse_proc_cgroup("10::/x\n0::/y", 2, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/y");
	ck_assert_int_eq(parse_proc_cgroup("4:memory:\n", 1, path, sizeof(path)), -EINVAL);
	ck_assert_int_eq(parse_proc_cgroup("", 1, path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(parse_proc_cgroup("0::/", 3, path, sizeof(path)), -EINVAL);
}
END_TEST

START_TEST(test_memory_stat_v1)
{
	struct memcg_stat s;
	char *text = load_data("memory_stat_v1");

	/* hierarchical total_* keys, not the cgroup-local rss/cache */
	ck_assert_int_eq(parse_memory_stat(text, 1, &s), 0);
	ck_assert_uint_eq(s.anon, 9277440);		/* total_rss, not rss 4964352 */
	ck_assert_uint_eq(s.file, 338784256);		/* total_cache */
	ck_assert_uint_eq(s.shmem, 8998912);		/* total_shmem */
	ck_assert_uint_eq(s.file_mapped, 10887168);	/* total_mapped_file */
	ck_assert_uint_eq(s.file_dirty, 368640);	/* total_dirty */
	ck_assert_uint_eq(s.file_writeback, 0);
	ck_assert_uint_eq(s.active_file, 163749888);
	ck_assert_uint_eq(s.inactive_file, 166035456);
	ck_assert_uint_eq(s.active_anon, 1560576);
	ck_assert_uint_eq(s.inactive_anon, 4132864);
	ck_assert_uint_eq(s.unevictable, 12431360);
	ck_assert_uint_eq(s.slab_reclaimable, 0);	/* v1 has none */
	ck_assert_uint_eq(s.pgfault, 3956385);		/* total_pgfault */
	ck_assert_uint_eq(s.pgmajfault, 1049);
	ck_assert_uint_eq(s.usage, 0);
	ck_assert(!s.has_peak);
	ck_assert(!s.has_oom_kill);

	/* v1 text has no "anon" key */
	ck_assert_int_eq(parse_memory_stat(text, 2, &s), -EINVAL);
	free(text);
}
END_TEST

START_TEST(test_memory_stat_v2)
{
	struct memcg_stat s;
	char *text = load_data("memory_stat_v2");

	ck_assert_int_eq(parse_memory_stat(text, 2, &s), 0);
	ck_assert_uint_eq(s.anon, 1396736000);
	ck_assert_uint_eq(s.file, 2187886592);
	ck_assert_uint_eq(s.shmem, 26214400);
	ck_assert_uint_eq(s.file_mapped, 310378496);
	ck_assert_uint_eq(s.file_dirty, 1138688);
	ck_assert_uint_eq(s.file_writeback, 274432);
	ck_assert_uint_eq(s.active_file, 605634560);
	ck_assert_uint_eq(s.inactive_file, 1556037632);
	ck_assert_uint_eq(s.active_anon, 13795328);
	ck_assert_uint_eq(s.inactive_anon, 1409155072);
	ck_assert_uint_eq(s.unevictable, 8192000);
	ck_assert_uint_eq(s.slab_reclaimable, 63389696);	/* not "slab" */
	ck_assert_uint_eq(s.pgfault, 48611583);
	ck_assert_uint_eq(s.pgmajfault, 5367);
	/* the file's own consistency: file = LRU file pages + shmem */
	ck_assert_uint_eq(s.file, s.active_file + s.inactive_file + s.shmem);
	ck_assert_uint_eq(s.kernel, 95420416);
	ck_assert_uint_eq(s.slab_unreclaimable, 13279232);
	ck_assert_uint_eq(s.kernel_stack, 3145728);
	ck_assert_uint_eq(s.pagetables, 12886016);
	ck_assert_uint_eq(s.percpu, 1267200);
	ck_assert_uint_eq(s.vmalloc, 131072);
	ck_assert_uint_eq(s.sock, 4096);

	ck_assert_int_eq(parse_memory_stat(text, 1, &s), -EINVAL);
	free(text);

	ck_assert_int_eq(parse_memory_stat("anon 12x\n", 2, &s), -EINVAL);
	ck_assert_int_eq(parse_memory_stat("anon -1\n", 2, &s), -EINVAL);
	ck_assert_int_eq(parse_memory_stat("anon \n", 2, &s), -EINVAL);
	ck_assert_int_eq(parse_memory_stat("anon 1\nfile 99999999999999999999999\n", 2, &s),
			 -ERANGE);
	ck_assert_int_eq(parse_memory_stat("", 2, &s), -EINVAL);
	ck_assert_int_eq(parse_memory_stat("anon 1\n", 0, &s), -EINVAL);
	/* unknown keys are not parsed, last line may lack '\n' */
	ck_assert_int_eq(parse_memory_stat("weird -5 x\nanon 4096\npgfault 3", 2, &s), 0);
	ck_assert_uint_eq(s.anon, 4096);
	ck_assert_uint_eq(s.pgfault, 3);
}
END_TEST

/*
 * A cgroup's charge in parts that add up to it (memcg_charge_parts()), from
 * captured memory.stat files: v2 with memory.current as the kernel charges
 * it (anon + file + kernel + sock, here 3,680,047,104 bytes; 1 MiB more
 * for "other"), then "kernel" absent (before 5.18: the sum of its kinds),
 * and v1 with the memory.kmem.usage_in_bytes a non-root cgroup charges.
 */
START_TEST(test_charge_parts)
{
	struct memcg_parts pt;
	struct memcg_stat s;
	uint64_t sum = 0;
	char *text = load_data("memory_stat_v2");

	ck_assert_int_eq(parse_memory_stat(text, 2, &s), 0);
	free(text);
	s.usage = 3680047104ULL + (1 << 20);
	memcg_charge_parts(&s, 2, 0, false, &pt);
	ck_assert_uint_eq(pt.part[MEMCG_PART_ANON], 1396736000);
	ck_assert_uint_eq(pt.part[MEMCG_PART_SHMEM], 26214400);
	ck_assert_uint_eq(pt.part[MEMCG_PART_FILE_ACTIVE], 605634560);
	ck_assert_uint_eq(pt.part[MEMCG_PART_FILE_INACTIVE], 1556037632);
	ck_assert_uint_eq(pt.part[MEMCG_PART_FILE_UNEVICTABLE], 0);
	ck_assert_uint_eq(pt.part[MEMCG_PART_KERNEL], 95420416);
	ck_assert_uint_eq(pt.part[MEMCG_PART_SOCK], 4096);
	ck_assert_uint_eq(pt.part[MEMCG_PART_OTHER], 1 << 20);
	for (int i = 0; i < MEMCG_PART_NR; i++)
		sum += pt.part[i];
	ck_assert_uint_eq(sum, s.usage);
	ck_assert_str_eq(memcg_part_name(pt.largest), "page_cache_inactive");
	ck_assert_uint_eq(pt.working_set, s.usage - 1556037632);
	ck_assert_uint_eq(pt.working_set_reclaimable, 605634560 + 63389696);
	/* before 5.18: no "kernel" line, its kinds summed (slab: both kinds) */
	s.kernel = 0;
	memcg_charge_parts(&s, 2, 0, false, &pt);
	ck_assert_uint_eq(pt.part[MEMCG_PART_KERNEL],
			  76668928ULL + 3145728 + 12886016 + 1267200 + 131072);
	/* parts past the charge (read one after another): no "other" */
	s.usage = 1 << 20;
	memcg_charge_parts(&s, 2, 0, false, &pt);
	ck_assert_uint_eq(pt.part[MEMCG_PART_OTHER], 0);
	ck_assert_uint_eq(pt.working_set_reclaimable, pt.working_set);

	/* v1: total_rss + total_cache + kmem below the root, an mlocked file page */
	text = load_data("memory_stat_v1");
	ck_assert_int_eq(parse_memory_stat(text, 1, &s), 0);
	free(text);
	s.usage = 9277440ULL + 338784256 + (8 << 20);
	memcg_charge_parts(&s, 1, 8 << 20, false, &pt);
	ck_assert_uint_eq(pt.part[MEMCG_PART_KERNEL], 8 << 20);
	ck_assert_uint_eq(pt.part[MEMCG_PART_FILE_UNEVICTABLE],
			  338784256ULL - 8998912 - 163749888 - 166035456);
	ck_assert_uint_eq(pt.part[MEMCG_PART_SOCK], 0);
	ck_assert_uint_eq(pt.part[MEMCG_PART_OTHER], 0);
	/* the v1 root: its usage_in_bytes holds no kmem */
	memcg_charge_parts(&s, 1, 8 << 20, true, &pt);
	ck_assert_uint_eq(pt.part[MEMCG_PART_KERNEL], 0);
	ck_assert_uint_eq(pt.part[MEMCG_PART_OTHER], 8 << 20);
}
END_TEST

START_TEST(test_oom_kill)
{
	uint64_t n = 99;
	char *text;

	text = load_data("memory_events_v2");
	ck_assert_int_eq(parse_oom_kill(text, &n), 0);
	ck_assert_uint_eq(n, 3);		/* not "oom 4" nor "oom_group_kill 0" */
	free(text);

	text = load_data("memory_oom_control_v1");
	n = 99;
	ck_assert_int_eq(parse_oom_kill(text, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(text);

	/* before 4.13 oom_control had no oom_kill; oom_kill_disable is not it */
	ck_assert_int_eq(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\n", &n), -ENOENT);
	ck_assert_int_eq(parse_oom_kill("oom_kill x\n", &n), -EINVAL);
	ck_assert_int_eq(parse_oom_kill("oom_kill 7", &n), 0);
	ck_assert_uint_eq(n, 7);

	/* memory.events.local's "oom" (the limit walk's count): a whole key */
	text = load_data("memory_events_v2");
	ck_assert_int_eq(parse_memory_event(text, "oom", &n), 0);
	ck_assert_uint_eq(n, 4);
	free(text);
	ck_assert_int_eq(parse_memory_event("oom_kill 3\noom_group_kill 0\n", "oom", &n), -ENOENT);
	ck_assert_int_eq(parse_memory_event("oom 1\n", "", &n), -EINVAL);
}
END_TEST

/*
 * A host-wide kill read late (a restarted daemon's replay, `memacct oom`):
 * its verdict's base is the host's MemTotal, read again, never "0 B"
 * (issue 39 finding 6: "MemTotal 0 B" in 1 of 200 kills).
 */
START_TEST(test_oom_late_host_wide_mem_total)
{
	struct memacct_oom_event ev = { .key.tgid = 4242, .tid = 4242, .comm = "victim" };
	struct oom_kill *k = calloc(1, sizeof(*k));
	char want[64], total[16];

	ck_assert_ptr_nonnull(k);
	ck_assert_uint_gt(mem_total_bytes(), 0);
	oom_from_event(k, &ev, 4096, 0);
	oom_explain_late(k);
	ck_assert_uint_eq(k->mem_total, mem_total_bytes());
	snprintf(want, sizeof(want), "MemTotal %s)", fmt_bytes(total, sizeof(total), k->mem_total));
	ck_assert_msg(strstr(k->verdict, want), "%s", k->verdict);
	free(k);
}
END_TEST

/*
 * The daemon's OOM history keeps the processes a kill may come to, from
 * the figures its collection read (oom_near()'s rule): a memcg at 50% of
 * its limit and the memcgs below it, a memcg whose figures were not read,
 * one the walk did not hold; every process when the host is near. A
 * history of every process each collection held 56 MiB at 10,000.
 * Samples older than the window of "grew" are freed.
 */
START_TEST(test_daemon_oom_sample_near)
{
	enum { MiB = 1 << 20 };
	struct cgi cg[] = {
		{ .id = 1, .level = 0, .st_ok = true },			/* root */
		{ .id = 10, .parent_id = 1, .level = 1, .st_ok = true,	/* at 60% */
		  .st.usage = 60 * MiB, .bounds = { .max = 100 * MiB, .has_max = true } },
		{ .id = 11, .parent_id = 10, .level = 2, .st_ok = true },	/* below it */
		{ .id = 20, .parent_id = 1, .level = 1, .st_ok = true,	/* at 40% */
		  .st.usage = 40 * MiB, .bounds = { .max = 100 * MiB, .has_max = true } },
		{ .id = 21, .parent_id = 20, .level = 2, .st_ok = true,	/* 49% of its own */
		  .st.usage = 49 * MiB, .bounds = { .max = 100 * MiB, .has_max = true } },
		{ .id = 30, .parent_id = 1, .level = 1, .st_ok = false },	/* not read */
		{ .id = 40, .parent_id = 1, .level = 1, .st_ok = true,	/* unlimited */
		  .st.usage = 900 * MiB },
	};
	/* a process in each, and one in memcg 99, which the walk did not hold */
	static const uint64_t memcg_of[] = { 1, 10, 11, 20, 21, 30, 40, 99 };
	static const int want_near[] = { 10, 11, 30, 99 };
	enum { N = sizeof(memcg_of) / sizeof(memcg_of[0]) };
	struct memacct_task_stock st[N];
	struct collection col = { .cg = cg, .ncg = sizeof(cg) / sizeof(cg[0]), .st = st, .nst = N };
	struct daemon_oom o = { .page_size = 4096, .hist.keep_ns = 20000000000ULL };
	const struct oom_sample *s;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < N; i++) {
		st[i].tgid = 100 + i;
		st[i].memcg_id = memcg_of[i];
		st[i].rss_anon_pages = 1 + i;
	}
	doom_sample_collection(&o, &col, false);
	s = &o.hist.s[0];
	ck_assert_ptr_nonnull(s->p);
	ck_assert_uint_eq(s->n, sizeof(want_near) / sizeof(want_near[0]));
	for (size_t i = 0; i < s->n; i++) {
		ck_assert_uint_eq(s->p[i].memcg_id, want_near[i]);
		ck_assert_uint_eq(s->p[i].m.anon, (uint64_t)(s->p[i].pid - 100 + 1) * 4096);
	}
	/* the host near: every process */
	doom_sample_collection(&o, &col, true);
	ck_assert_uint_eq(o.hist.s[1].n, N);
	/* a sample past the window frees both (oom_hist_push()'s keep_ns) */
	oom_hist_push(&o.hist, o.hist.s[1].boot_ns + 30000000000ULL, calloc(1, sizeof(struct oom_proc)),
		      1, 0);
	ck_assert_ptr_null(o.hist.s[0].p);
	ck_assert_ptr_null(o.hist.s[1].p);
	ck_assert_uint_eq(o.hist.s[2].n, 1);
	doom_free(&o);
}
END_TEST

/*
 * What grew before a host-wide kill, found per process across two samples
 * pushed in different orders (oom_hist_push() sorts them by pid, and the
 * lookup is a binary search: a linear one was 10,000 × 10,000 steps for a
 * host-wide kill at 10,000 processes). Two processes share a pid (reused):
 * the one with the same start time is compared.
 */
START_TEST(test_oom_grew_across_samples)
{
	enum { MiB = 1 << 20 };
	static const struct { int pid; uint64_t start, before, after; } p[] = {
		{ 300, 3, 30 * MiB, 30 * MiB },		/* unchanged */
		{ 100, 1, 10 * MiB, 50 * MiB },		/* +40 MiB */
		{ 200, 2, 20 * MiB, 28 * MiB },		/* +8 MiB */
		{ 150, 5, 90 * MiB, 0 },		/* gone: pid 150 reused */
		{ 150, 6, 0, 6 * MiB },			/* new: 150 again, no "was" */
	};
	enum { N = sizeof(p) / sizeof(p[0]) };
	struct memacct_oom_event ev = { .key.tgid = 999, .tid = 999, .flags = MEMACCT_OOM_TASK,
					.comm = "victim" };
	struct oom_hist h = { 0 };
	struct oom_proc *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
	struct oom_kill *k = calloc(1, sizeof(*k));
	size_t na = 0, nb = 0;

	ck_assert(a && b && k);
	for (int i = 0; i < N; i++) {	/* a in this order, b reversed */
		if (p[i].before) {
			a[na] = (struct oom_proc){ .pid = p[i].pid, .start_ns = p[i].start };
			a[na++].m.anon = p[i].before;
		}
		if (p[N - 1 - i].after) {
			b[nb] = (struct oom_proc){ .pid = p[N - 1 - i].pid,
						   .start_ns = p[N - 1 - i].start };
			b[nb++].m.anon = p[N - 1 - i].after;
		}
	}
	oom_hist_push(&h, 1000000000ULL, a, na, 0);
	oom_hist_push(&h, 3000000000ULL, b, nb, 0);
	oom_from_event(k, &ev, 4096, 0);
	k->boot_ns = 3050000000ULL;
	oom_explain(k, &h, 5000000000ULL);
	ck_assert_uint_eq(k->nprocs_all, 5);	/* the 4 of the last sample, the victim */
	ck_assert_uint_eq(k->ngrew, 2);
	ck_assert_int_eq(k->grew[0].pid, 100);
	ck_assert_str_eq(k->grew[0].key, "anon_bytes");
	ck_assert_int_eq(k->grew[0].bytes, 40 * MiB);
	ck_assert_int_eq(k->grew[1].pid, 200);
	ck_assert_int_eq(k->grew[1].bytes, 8 * MiB);
	ck_assert_double_eq_tol(k->grew[0].seconds, 2.0, 1e-9);
	oom_hist_free(&h);
	free(k);
}
END_TEST

/*
 * The sample a kill's processes are taken from (oom.c sample_near()): the
 * one made when its record was read, up to OOM_SAMPLE_NS after it, or else
 * the nearer of the first after and the newest before. A record read 1.5 s
 * late (a loaded TCG guest) took the newest before, made 2 s earlier while
 * the job's processes were still being made: 2 processes of its 4.
 */
static size_t procs_at_kill(uint64_t before_ns, uint64_t after_ns, uint64_t kill_ns)
{
	struct memacct_oom_event ev = { .key.tgid = 999, .tid = 999, .flags = MEMACCT_OOM_TASK,
					.comm = "victim" };
	struct oom_hist h = { 0 };
	struct oom_proc *a = calloc(2, sizeof(*a)), *b = calloc(4, sizeof(*b));
	struct oom_kill *k = calloc(1, sizeof(*k));
	size_t n;

	ck_assert(a && b && k);
	for (int i = 0; i < 4; i++)
		b[i] = (struct oom_proc){ .pid = 100 + i, .start_ns = 1 };
	memcpy(a, b, 2 * sizeof(*a));
	oom_hist_push(&h, before_ns, a, 2, 0);
	oom_hist_push(&h, after_ns, b, 4, 0);
	oom_from_event(k, &ev, 4096, 0);
	k->boot_ns = kill_ns;
	oom_explain(k, &h, 5000000000ULL);
	n = k->nprocs_all;
	oom_hist_free(&h);
	free(k);
	return n - 1;	/* less the victim */
}

START_TEST(test_oom_sample_nearest_kill)
{
	enum { S = 1000000000 };

	/* read 0.1 s after: that one, though one before is nearer */
	ck_assert_uint_eq(procs_at_kill(2990000000ULL, 3100000000ULL, 3 * (uint64_t)S), 4);
	/* read 1.5 s late, the one before 2 s old: the one after */
	ck_assert_uint_eq(procs_at_kill(1 * (uint64_t)S, 4500000000ULL, 3 * (uint64_t)S), 4);
	/* read 1.5 s late, the one before 0.5 s old: the one before */
	ck_assert_uint_eq(procs_at_kill(2500000000ULL, 4500000000ULL, 3 * (uint64_t)S), 2);
}
END_TEST

/* PSI's cumulative totals, captured from a v2 root (tests/data/memory_pressure_v2) */
START_TEST(test_memory_pressure)
{
	uint64_t some = 0, full = 0;
	char *text = load_data("memory_pressure_v2");

	ck_assert_int_eq(parse_memory_pressure(text, &some, &full), 0);
	ck_assert_uint_eq(some, 1868790);
	ck_assert_uint_eq(full, 1276907);
	free(text);
	/* no trailing newline; totals past 2^32 */
	ck_assert_int_eq(parse_memory_pressure("some avg10=1.00 avg60=0.50 avg300=0.10 "
					       "total=5000000000\nfull avg10=0.00 avg60=0.00 "
					       "avg300=0.00 total=7", &some, &full), 0);
	ck_assert_uint_eq(some, 5000000000ULL);
	ck_assert_uint_eq(full, 7);
	/* either line missing, or its total: no figure (never a 0) */
	ck_assert_int_eq(parse_memory_pressure("some avg10=0.00 total=3\n", &some, &full),
			 -EINVAL);
	ck_assert_int_eq(parse_memory_pressure("some avg10=0.00\nfull total=3\n", &some, &full),
			 -EINVAL);
	ck_assert_int_eq(parse_memory_pressure("some total=x\nfull total=3\n", &some, &full),
			 -EINVAL);
	ck_assert_int_eq(parse_memory_pressure("something total=1\nfull total=3\n", &some,
					       &full), -EINVAL);
	ck_assert_int_eq(parse_memory_pressure("", &some, &full), -EINVAL);
}
END_TEST

START_TEST(test_of_path)
{
	struct memcg cg;
	char buf[PATH_MAX];

	ck_assert_int_eq(memcg_of_path(fake, 1, fake, &cg), 0);
	ck_assert_str_eq(cg.path, fake);
	ck_assert_str_eq(cg.rel, "/");
	ck_assert_int_eq(cg.level, 0);
	ck_assert_int_eq(cg.version, 1);
	ck_assert_uint_eq(cg.id, inode_of(fake, NULL));

	xsnprintf(buf, sizeof(buf), "%s//a/b/", fake);
	ck_assert_int_eq(memcg_of_path(fake, 2, buf, &cg), 0);
	ck_assert_str_eq(cg.path, fpath("/a/b"));
	ck_assert_str_eq(cg.rel, "/a/b");
	ck_assert_int_eq(cg.level, 2);
	ck_assert_int_eq(cg.version, 2);
	ck_assert_uint_eq(cg.id, inode_of(fake, "a/b"));

	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/a/b/job_1"), &cg), 0);
	ck_assert_int_eq(cg.level, 3);

	/* the root given with a trailing slash */
	xsnprintf(buf, sizeof(buf), "%s/", fake);
	ck_assert_int_eq(memcg_of_path(buf, 1, fpath("/c"), &cg), 0);
	ck_assert_str_eq(cg.rel, "/c");

	ck_assert_int_eq(memcg_of_path(fake, 1, "/tmp", &cg), -EINVAL);
	xsnprintf(buf, sizeof(buf), "%sx", fake);	/* sibling with the same prefix */
	ck_assert_int_eq(memcg_of_path(fake, 1, buf, &cg), -EINVAL);
	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/a/../c"), &cg), -EINVAL);
	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/nope"), &cg), -ENOENT);
	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/a/cgroup.procs"), &cg), -ENOTDIR);
	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/link"), &cg), -ENOTDIR);
	ck_assert_int_eq(memcg_of_path(fake, 3, fake, &cg), -EINVAL);
	ck_assert_int_eq(memcg_of_path(fake, 1, "a/b", &cg), -EINVAL);
}
END_TEST

START_TEST(test_resolve)
{
	char *list = NULL;
	size_t list_len = 0;
	struct memcg cg;
	char want[2 * PATH_MAX];
	FILE *amb;

	/* absolute, below-root with and without '/', the root itself */
	ck_assert_int_eq(memcg_resolve_at(fake, 1, fpath("/a/b"), &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/a/b");
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "a/b", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/a/b");
	ck_assert_str_eq(cg.path, fpath("/a/b"));
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "/a/b", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/a/b");
	ck_assert_uint_eq(cg.id, inode_of(fake, "a/b"));
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "/", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/");
	ck_assert_int_eq(memcg_resolve_at(fake, 1, fake, &cg, NULL), 0);
	ck_assert_int_eq(cg.level, 0);

	/* a unique name anywhere below */
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "job_2", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/x/job_2");
	ck_assert_int_eq(cg.level, 2);
	ck_assert_uint_eq(cg.id, inode_of(fake, "x/job_2"));
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "d", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/c/d");
	/* a unique path tail */
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "b/job_1", &cg, NULL), 0);
	ck_assert_str_eq(cg.rel, "/a/b/job_1");

	/* ambiguous: both candidates listed, sorted, one per line */
	amb = open_memstream(&list, &list_len);
	ck_assert_ptr_nonnull(amb);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "job_1", &cg, amb), -ENOTUNIQ);
	fclose(amb);
	xsnprintf(want, sizeof(want), "%s/a/b/job_1\n%s/c/job_1\n", fake, fake);
	ck_assert_str_eq(list, want);
	free(list);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "job_1", &cg, NULL), -ENOTUNIQ);

	/* nothing matches; a symlinked directory is not searched */
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "nope", &cg, NULL), -ENOENT);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "/nope", &cg, NULL), -ENOENT);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "/job_2", &cg, NULL), -ENOENT);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "job_3", &cg, NULL), -ENOENT);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "b/job_2", &cg, NULL), -ENOENT);
	/* no climbing out */
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "../cgx", &cg, NULL), -EINVAL);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "a/../../cgx", &cg, NULL), -EINVAL);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, "", &cg, NULL), -EINVAL);
	ck_assert_int_eq(memcg_resolve_at(fake, 1, NULL, &cg, NULL), -EINVAL);
}
END_TEST

START_TEST(test_create_remove)
{
	struct memcg cg, root;
	struct stat st;
	struct timespec t0, t1;

	ck_assert_int_eq(memcg_create_at(fake, 1, "memacct-run-42", &cg), 0);
	ck_assert_str_eq(cg.rel, "/memacct-run-42");
	ck_assert_int_eq(cg.level, 1);
	ck_assert_int_eq(stat(fpath("/memacct-run-42"), &st), 0);
	ck_assert_uint_eq(cg.id, st.st_ino);
	ck_assert_int_eq(memcg_create_at(fake, 1, "memacct-run-42", &cg), -EEXIST);

	ck_assert_int_eq(memcg_remove(&cg), 0);
	ck_assert_int_eq(access(fpath("/memacct-run-42"), F_OK), -1);
	ck_assert_int_eq(memcg_remove(&cg), -ENOENT);

	ck_assert_int_eq(memcg_create_at(fake, 1, "../escape", &cg), -EINVAL);
	ck_assert_int_eq(memcg_create_at(fake, 1, "/abs", &cg), -EINVAL);
	ck_assert_int_eq(memcg_create_at(fake, 1, "", &cg), -EINVAL);
	ck_assert_int_eq(memcg_create_at(fake, 1, "nope/child", &cg), -ENOENT);

	/* never the root; other errors than EBUSY are not retried */
	fake_cg(&root, "", 1);
	ck_assert_int_eq(memcg_remove(&root), -EINVAL);
	fake_cg(&cg, fpath("/a"), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(memcg_remove(&cg), -ENOTEMPTY);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 1);
}
END_TEST

START_TEST(test_add_pid)
{
	struct memcg cg;
	char want[32], *buf;

	ck_assert_int_eq(memcg_create_at(fake, 1, "add", &cg), 0);
	ck_assert_int_eq(memcg_add_pid(&cg, 0), -ENOENT);	/* never creates the file */
	write_text(cg.path, "cgroup.procs", "");
	ck_assert_int_eq(memcg_add_pid(&cg, 0), 0);
	ck_assert_int_gt(read_file(fpath("/add/cgroup.procs"), &buf, 64), 0);
	xsnprintf(want, sizeof(want), "%d\n", (int)getpid());
	ck_assert_str_eq(buf, want);
	free(buf);
	ck_assert_int_eq(memcg_add_pid(&cg, 4242), 0);
	ck_assert_int_gt(read_file(fpath("/add/cgroup.procs"), &buf, 64), 0);
	ck_assert_str_eq(buf, "4242\n");
	free(buf);
	ck_assert_int_eq(memcg_add_pid(&cg, -1), -EINVAL);
	ck_assert_int_eq(rm_tree(cg.path), 0);
}
END_TEST

START_TEST(test_pids)
{
	struct memcg cg;
	pid_t *pids;
	int n;

	fake_cg(&cg, fpath("/a"), 1);
	n = memcg_pids(&cg, false, &pids);
	ck_assert_int_eq(n, 2);		/* 200 300 200 */
	ck_assert_int_eq(pids[0], 200);
	ck_assert_int_eq(pids[1], 300);
	free(pids);

	n = memcg_pids(&cg, true, &pids);
	ck_assert_int_eq(n, 3);		/* + a/b: 400 300, a/b/job_1: empty */
	ck_assert_int_eq(pids[0], 200);
	ck_assert_int_eq(pids[1], 300);
	ck_assert_int_eq(pids[2], 400);
	free(pids);

	fake_cg(&cg, fpath("/a/b/job_1"), 1);
	n = memcg_pids(&cg, true, &pids);
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_nonnull(pids);
	free(pids);

	/* x lacks cgroup.procs itself: an error; below it, skipped */
	fake_cg(&cg, fpath("/x"), 1);
	ck_assert_int_eq(memcg_pids(&cg, false, &pids), -ENOENT);
	ck_assert_ptr_null(pids);
	ck_assert_int_eq(memcg_pids(&cg, true, &pids), -ENOENT);

	/* c/d holds "7x" */
	fake_cg(&cg, fpath("/c"), 1);
	n = memcg_pids(&cg, false, &pids);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(pids[0], 500);
	free(pids);
	ck_assert_int_eq(memcg_pids(&cg, true, &pids), -EINVAL);
	ck_assert_ptr_null(pids);

	fake_cg(&cg, fpath("/a/b"), 1);
	n = memcg_pids(&cg, true, &pids);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(pids[0], 300);
	ck_assert_int_eq(pids[1], 400);
	free(pids);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

START_TEST(test_descendant_ids)
{
	struct memcg cg;
	uint64_t *ids, want[3];
	int n, i;

	fake_cg(&cg, fpath("/a"), 1);
	n = memcg_descendant_ids(&cg, &ids);
	ck_assert_int_eq(n, 3);
	want[0] = inode_of(fake, "a");
	want[1] = inode_of(fake, "a/b");
	want[2] = inode_of(fake, "a/b/job_1");
	ck_assert_uint_eq(ids[0], want[0]);	/* the cgroup itself first */
	qsort(ids, n, sizeof(*ids), cmp_u64);
	qsort(want, 3, sizeof(*want), cmp_u64);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(ids[i], want[i]);
	free(ids);

	fake_cg(&cg, fpath("/c"), 1);
	n = memcg_descendant_ids(&cg, &ids);
	ck_assert_int_eq(n, 3);		/* c, c/job_1, c/d */
	free(ids);

	/* from the root: the symlink "link" is not followed into outside/ */
	fake_cg(&cg, "", 1);
	n = memcg_descendant_ids(&cg, &ids);
	ck_assert_int_ge(n, 12);	/* root + 11 directories (+ other tests') */
	ck_assert_uint_eq(ids[0], inode_of(fake, NULL));
	want[0] = inode_of(top, "outside");
	want[1] = inode_of(top, "outside/job_3");
	for (i = 0; i < n; i++)
		ck_assert(ids[i] != want[0] && ids[i] != want[1]);
	free(ids);
}
END_TEST

/*
 * The limits and pressure the daemon publishes (memcg_read_bounds()): a
 * figure only where the file gives one; unlimited, v1's memory.high (there
 * is none: soft_limit_in_bytes is another thing), PSI on v1 and a missing
 * file are absent, never 0.
 */
START_TEST(test_read_bounds)
{
	struct memcg cg;
	struct memcg_bounds b;
	char *t;

	fake_cg(&cg, fpath("/stat1"), 1);
	write_text(fake, "stat1/memory.limit_in_bytes", "9223372036854771712\n");
	write_text(fake, "stat1/memory.soft_limit_in_bytes", "67108864\n");
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(!b.has_max && !b.has_high && !b.has_psi);
	write_text(fake, "stat1/memory.limit_in_bytes", "67108864\n");
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(b.has_max && !b.has_high && !b.has_psi);
	ck_assert_uint_eq(b.max, 67108864);

	/* v2: no limit files yet (as on the root) */
	fake_cg(&cg, fpath("/v2"), 2);
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(!b.has_max && !b.has_high && !b.has_psi);
	write_text(fake, "v2/memory.max", "max\n");
	write_text(fake, "v2/memory.high", "100663296\n");
	t = load_data("memory_pressure_v2");
	write_text(fake, "v2/memory.pressure", t);
	free(t);
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(!b.has_max && b.has_high && b.has_psi);
	ck_assert_uint_eq(b.high, 100663296);
	ck_assert_uint_eq(b.psi_some_us, 1868790);
	ck_assert_uint_eq(b.psi_full_us, 1276907);
	write_text(fake, "v2/memory.max", "67108864\n");
	write_text(fake, "v2/memory.high", "max\n");
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(b.has_max && !b.has_high && b.has_psi);
	ck_assert_uint_eq(b.max, 67108864);
	/* garbage: said, and absent */
	write_text(fake, "v2/memory.pressure", "some total=\n");
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), -EINVAL);
	ck_assert(b.has_max && !b.has_psi);

	/* a cgroup removed: nothing, and no error to publish */
	fake_cg(&cg, fpath("/x"), 2);
	xsnprintf(cg.path, sizeof(cg.path), "%s", fpath("/gone"));
	ck_assert_int_eq(memcg_read_bounds(&cg, &b), 0);
	ck_assert(!b.has_max && !b.has_high && !b.has_psi);
}
END_TEST

START_TEST(test_read_stat)
{
	struct memcg cg;
	struct memcg_stat s;

	fake_cg(&cg, fpath("/stat1"), 1);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), 0);
	ck_assert_uint_eq(s.usage, 830595072);
	ck_assert(s.has_peak);
	ck_assert_uint_eq(s.peak, 1073741824);
	ck_assert(s.has_oom_kill);
	ck_assert_uint_eq(s.oom_kill, 0);
	ck_assert_uint_eq(s.anon, 9277440);
	ck_assert_uint_eq(s.file, 338784256);
	ck_assert_uint_eq(s.pgmajfault, 1049);

	fake_cg(&cg, fpath("/v2"), 2);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), 0);
	ck_assert_uint_eq(s.usage, 3670016000);
	ck_assert(!s.has_peak);
	ck_assert(s.has_oom_kill);
	ck_assert_uint_eq(s.oom_kill, 3);
	ck_assert_uint_eq(s.anon, 1396736000);
	ck_assert_uint_eq(s.slab_reclaimable, 63389696);

	/* memory.peak appears with 5.19 */
	write_text(fake, "v2/memory.peak", "4294967296\n");
	ck_assert_int_eq(memcg_read_stat(&cg, &s), 0);
	ck_assert(s.has_peak);
	ck_assert_uint_eq(s.peak, 4294967296ULL);

	write_text(fake, "v2/memory.current", "12 kB\n");
	ck_assert_int_eq(memcg_read_stat(&cg, &s), -EINVAL);
	write_text(fake, "v2/memory.current", "3670016000\n");

	/* v2 non-root without memory.current: an error; v1 text as v2: too */
	fake_cg(&cg, fpath("/v2root"), 2);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), -ENOENT);
	fake_cg(&cg, fpath("/stat1"), 2);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), -EINVAL);
	fake_cg(&cg, fpath("/x"), 1);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), -ENOENT);
}
END_TEST

/* the v2 root cgroup has only memory.stat */
START_TEST(test_read_stat_v2_root)
{
	struct memcg cg;
	struct memcg_stat s;

	ck_assert_int_eq(memcg_of_path(fpath("/v2root"), 2, fpath("/v2root"), &cg), 0);
	ck_assert_int_eq(cg.level, 0);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), 0);
	ck_assert_uint_eq(s.usage, 0);
	ck_assert(!s.has_peak);
	ck_assert(!s.has_oom_kill);
	ck_assert_uint_eq(s.anon, 1396736000);
}
END_TEST

/* the same figures through an open directory (the daemon's way); a
 * removed cgroup's directory does not open */
START_TEST(test_read_stat_dir_open)
{
	struct memcg cg, gone;
	struct memcg_stat s, d;

	ck_assert_int_eq(memcg_of_path(fpath("/v2root"), 2, fpath("/v2root"), &cg), 0);
	ck_assert_int_eq(memcg_read_stat(&cg, &s), 0);
	ck_assert_int_eq(memcg_dir_open(&cg), 0);
	ck_assert(cg.dir_open);
	memset(&d, 0xff, sizeof(d));
	ck_assert_int_eq(memcg_read_stat(&cg, &d), 0);
	memcg_dir_close(&cg);
	ck_assert(!cg.dir_open);
	ck_assert_uint_eq(d.anon, s.anon);
	ck_assert_uint_eq(d.anon, 1396736000);
	ck_assert_uint_eq(d.usage, s.usage);
	ck_assert_int_eq(d.has_peak, s.has_peak);

	gone = cg;
	xsnprintf(gone.path, sizeof(gone.path), "%s/no-such-cgroup", fake);
	ck_assert_int_eq(memcg_dir_open(&gone), -ENOENT);
	ck_assert(!gone.dir_open);
}
END_TEST

static char *slurp(const char *rel)
{
	char *buf;

	ck_assert_int_ge(read_file(fpath(rel), &buf, 4096), 0);
	return buf;
}

/* v2: tasks of a cgroup without the memory controller are charged above */
START_TEST(test_v2_charged_at)
{
	char root[PATH_MAX];
	struct memcg cg;

	make_dir(fake, "v2d");
	make_dir(fake, "v2d/job");
	make_dir(fake, "v2d/job/step");
	make_dir(fake, "v2d/nofile");
	xsnprintf(root, sizeof(root), "%s", fpath("/v2d"));
	write_text(fake, "v2d/job/cgroup.controllers", "cpu memory pids\n");
	write_text(fake, "v2d/job/step/cgroup.controllers", "cpu memoryx\n");

	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2d/job/step"), &cg), 0);
	ck_assert_int_eq(memcg_has_memory(&cg), 0);
	ck_assert_int_eq(memcg_charged_at(root, &cg), 0);
	ck_assert_str_eq(cg.path, fpath("/v2d/job"));
	ck_assert_str_eq(cg.rel, "/job");
	ck_assert_int_eq(cg.level, 1);
	ck_assert_int_eq(memcg_has_memory(&cg), 1);

	/* up to the root, which always has it (no cgroup.controllers needed) */
	write_text(fake, "v2d/job/cgroup.controllers", "\n");
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2d/job/step"), &cg), 0);
	ck_assert_int_eq(memcg_charged_at(root, &cg), 0);
	ck_assert_str_eq(cg.rel, "/");
	ck_assert_int_eq(cg.level, 0);

	/* unreadable cgroup.controllers: the error, not a guess */
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2d/nofile"), &cg), 0);
	ck_assert_int_eq(memcg_has_memory(&cg), -ENOENT);
	ck_assert_int_eq(memcg_charged_at(root, &cg), -ENOENT);

	/* v1: every cgroup of the memory hierarchy is a memory cgroup */
	ck_assert_int_eq(memcg_of_path(root, 1, fpath("/v2d/job/step"), &cg), 0);
	ck_assert_int_eq(memcg_has_memory(&cg), 1);
	ck_assert_int_eq(memcg_charged_at(root, &cg), 0);
	ck_assert_str_eq(cg.rel, "/job/step");
}
END_TEST

/* v2: run's cgroup gets the memory controller from its parent */
START_TEST(test_v2_create_delegates)
{
	char root[PATH_MAX], *t;
	struct memcg cg;

	make_dir(fake, "v2c");
	xsnprintf(root, sizeof(root), "%s", fpath("/v2c"));
	write_text(fake, "v2c/cgroup.subtree_control", "cpu io\n");
	ck_assert_int_eq(memcg_create_at(root, 2, "memacct-run-7", &cg), 0);
	t = slurp("/v2c/cgroup.subtree_control");
	ck_assert_str_eq(t, "+memory");
	free(t);
	ck_assert_int_eq(memcg_remove(&cg), 0);

	/* already enabled: left alone */
	write_text(fake, "v2c/cgroup.subtree_control", "cpu memory\n");
	ck_assert_int_eq(memcg_create_at(root, 2, "memacct-run-8", &cg), 0);
	t = slurp("/v2c/cgroup.subtree_control");
	ck_assert_str_eq(t, "cpu memory\n");
	free(t);
	ck_assert_int_eq(memcg_remove(&cg), 0);

	/* no parent: nothing created */
	ck_assert_int_eq(memcg_create_at(root, 2, "nope/child", &cg), -ENOENT);
	ck_assert_int_eq(access(fpath("/v2c/nope"), F_OK), -1);
}
END_TEST

/*
 * Where run puts CMD's cgroup: v1 the caller's own; v2 the nearest cgroup
 * that may have a memory child, never above a limit (issue 23: run moved
 * CMD out of the caller's limits).
 */
START_TEST(test_run_parent)
{
	char root[PATH_MAX];
	struct memcg own, parent, blocker;
	const char *dirs[] = { "v2p", "v2p/user", "v2p/user/sess", "v2p/user/lim",
			       "v2p/user/high", "v2p/nomem", "v2p/nomem/leaf", "v2p/job",
			       "v2p/job/step" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		make_dir(fake, dirs[i]);
	xsnprintf(root, sizeof(root), "%s", fpath("/v2p"));
	write_text(fake, "v2p/cgroup.subtree_control", "memory\n");
	write_text(fake, "v2p/user/cgroup.subtree_control", "cpu memory\n");
	write_text(fake, "v2p/user/memory.max", "max\n");
	write_text(fake, "v2p/user/sess/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/user/sess/memory.max", "max\n");
	write_text(fake, "v2p/user/sess/memory.high", "max\n");
	write_text(fake, "v2p/user/sess/memory.swap.max", "max\n");
	write_text(fake, "v2p/user/lim/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/user/lim/memory.max", "67108864\n");
	write_text(fake, "v2p/user/high/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/user/high/memory.max", "max\n");
	write_text(fake, "v2p/user/high/memory.high", "1048576\n");
	write_text(fake, "v2p/nomem/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/nomem/leaf/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/job/cgroup.subtree_control", "\n");
	write_text(fake, "v2p/job/memory.swap.max", "0\n");
	write_text(fake, "v2p/job/step/cgroup.subtree_control", "\n");

	/* a session scope without limits: its parent, which has "memory" */
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2p/user/sess"), &own), 0);
	ck_assert_int_eq(memcg_limited(&own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, NULL), 0);
	ck_assert_str_eq(parent.rel, "/user");
	/* a limit of its own (memory.max, memory.high): nowhere */
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2p/user/lim"), &own), 0);
	ck_assert_int_eq(memcg_limited(&own), 1);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, &blocker), -EBUSY);
	ck_assert_str_eq(blocker.rel, "/user/lim");
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2p/user/high"), &own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, &blocker), -EBUSY);
	ck_assert_str_eq(blocker.rel, "/user/high");
	/* a limit above (memory.swap.max of the job): still nowhere */
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2p/job/step"), &own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, &blocker), -EBUSY);
	ck_assert_str_eq(blocker.rel, "/job");
	/* no memory controller and no limit on the way: the root */
	ck_assert_int_eq(memcg_of_path(root, 2, fpath("/v2p/nomem/leaf"), &own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, NULL), 0);
	ck_assert_str_eq(parent.rel, "/");
	/* the root itself */
	ck_assert_int_eq(memcg_of_path(root, 2, root, &own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, NULL), 0);
	ck_assert_str_eq(parent.rel, "/");
	/* v1: the caller's own cgroup, limited or not */
	ck_assert_int_eq(memcg_of_path(root, 1, fpath("/v2p/job/step"), &own), 0);
	ck_assert_int_eq(memcg_run_parent(&own, &parent, NULL), 0);
	ck_assert_str_eq(parent.rel, "/job/step");
	ck_assert_int_eq(memcg_limited(&own), -EINVAL);
}
END_TEST

/* run's cgroup: a name no other run has, held by a lock while we live */
START_TEST(test_create_locked)
{
	struct memcg parent, a, b;
	char tail[64];
	int pid, la, lb, other;
	unsigned int x;

	make_dir(fake, "cl");
	fake_cg(&parent, "", 1);
	ck_assert_int_eq(memcg_of_path(fake, 1, fpath("/cl"), &parent), 0);
	la = memcg_create_locked(&parent, "memacct-run", "", &a);
	ck_assert_int_ge(la, 0);
	lb = memcg_create_locked(&parent, "memacct-run", ".job-j1", &b);
	ck_assert_int_ge(lb, 0);
	ck_assert_str_ne(a.path, b.path);
	/* memacct-run-PID-XXXXXXXX: the PID first, for tests/sweep.sh */
	ck_assert_int_eq(sscanf(a.rel, "/cl/memacct-run-%d-%8x%63s", &pid, &x, tail), 2);
	ck_assert_int_eq(pid, getpid());
	/* a named run's: the suffix after the random part */
	ck_assert_int_eq(sscanf(b.rel, "/cl/memacct-run-%d-%8x%63s", &pid, &x, tail), 3);
	ck_assert_str_eq(tail, ".job-j1");
	/* held: another opener cannot take it; free once closed */
	ck_assert_int_eq(memcg_lock(&a, false), -EWOULDBLOCK);
	close(la);
	other = memcg_lock(&a, false);
	ck_assert_int_ge(other, 0);
	close(other);
	close(lb);
	ck_assert_int_eq(memcg_remove(&a), 0);
	ck_assert_int_eq(memcg_remove(&b), 0);
}
END_TEST

/* the running host: only reads, and only what exists on every host */
START_TEST(test_live_self)
{
	char root[PATH_MAX], cgfile[PATH_MAX], *text;
	struct memcg cg;
	struct stat st;
	int version, err;

	err = memcg_root(root, &version);
	if (err == -ENOENT) {
		fprintf(stderr, "SKIP test_live_self: no memory cgroup hierarchy mounted\n");
		return;
	}
	ck_assert_int_eq(err, 0);
	ck_assert(version == 1 || version == 2);
	ck_assert_int_eq(root[0], '/');

	ck_assert_int_eq(memcg_of_pid(0, &cg), 0);
	ck_assert_int_eq(cg.version, version);
	ck_assert_int_eq(strncmp(cg.path, root, strlen(root)), 0);
	ck_assert_int_eq(stat(cg.path, &st), 0);
	ck_assert_uint_eq(cg.id, st.st_ino);
	ck_assert_int_gt(read_file("/proc/self/cgroup", &text, 1 << 16), 0);
	ck_assert_int_eq(parse_proc_cgroup(text, version, cgfile, sizeof(cgfile)), 0);
	free(text);
	ck_assert_str_eq(cg.rel, cgfile);	/* not in a cgroup namespace */

	ck_assert_int_eq(memcg_of_pid(getpid(), &cg), 0);
	ck_assert_uint_eq(cg.id, st.st_ino);
	xsnprintf(cgfile, sizeof(cgfile), "%s", cg.path);
	ck_assert_int_eq(memcg_resolve(cgfile, &cg, NULL), 0);
	ck_assert_uint_eq(cg.id, st.st_ino);
	ck_assert_int_eq(memcg_resolve("/", &cg, NULL), 0);
	ck_assert_str_eq(cg.path, root);
}
END_TEST

/* D11: --cgroup-filter spellings of one cgroup all match it */
START_TEST(test_filter_normalize)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "rel-a", "/rel-a" },
		{ "/rel-a", "/rel-a" },
		{ "/rel-a/", "/rel-a" },
		{ "rel-a//b/", "/rel-a/b" },
		{ "/sys/fs/cgroup/memory/rel-a", "/rel-a" },
		{ "/sys/fs/cgroup/memory/rel-a/", "/rel-a" },
		{ "/sys/fs/cgroup/memory", "/" },
		{ "/sys/fs/cgroup/memory/", "/" },
		{ "/", "/" },
		{ "", "/" },
		{ "/sys/fs/cgroup/memoryX", "/sys/fs/cgroup/memoryX" },
	};
	char out[64], big[200];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(daemon_filter_normalize("/sys/fs/cgroup/memory", cases[i].in, out,
							 sizeof(out)), 0);
		ck_assert_msg(!strcmp(out, cases[i].want), "'%s' -> '%s', want '%s'", cases[i].in,
			      out, cases[i].want);
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(daemon_filter_normalize("/sys/fs/cgroup/memory", big, out, sizeof(out)),
			 -ENAMETOOLONG);
}
END_TEST

Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_mountinfo_v1);
	tcase_add_test(tc, test_filter_normalize);
	tcase_add_test(tc, test_mountinfo_v2);
	tcase_add_test(tc, test_mountinfo_hostile);
	tcase_add_test(tc, test_proc_cgroup);
	tcase_add_test(tc, test_memory_stat_v1);
	tcase_add_test(tc, test_memory_stat_v2);
	tcase_add_test(tc, test_oom_kill);
	tcase_add_test(tc, test_oom_late_host_wide_mem_total);
	tcase_add_test(tc, test_daemon_oom_sample_near);
	tcase_add_test(tc, test_oom_grew_across_samples);
	tcase_add_test(tc, test_oom_sample_nearest_kill);
	tcase_add_test(tc, test_charge_parts);
	tcase_add_test(tc, test_memory_pressure);
	suite_add_tcase(s, tc);

	tc = tcase_create("fake_tree");
	tcase_add_unchecked_fixture(tc, fake_tree_setup, fake_tree_teardown);
	tcase_add_test(tc, test_of_path);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_create_remove);
	tcase_add_test(tc, test_add_pid);
	tcase_add_test(tc, test_pids);
	tcase_add_test(tc, test_descendant_ids);
	tcase_add_test(tc, test_read_stat);
	tcase_add_test(tc, test_read_bounds);
	tcase_add_test(tc, test_read_stat_v2_root);
	tcase_add_test(tc, test_read_stat_dir_open);
	tcase_add_test(tc, test_v2_charged_at);
	tcase_add_test(tc, test_v2_create_delegates);
	tcase_add_test(tc, test_run_parent);
	tcase_add_test(tc, test_create_locked);
	suite_add_tcase(s, tc);

	tc = tcase_create("live");
	tcase_add_test(tc, test_live_self);
	suite_add_tcase(s, tc);
	return s;
}
