/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * unit_proc.c - unit tests of user/proc/proc.c on /proc files captured from a
 * 6.18 kernel (tests/data/) and on live processes the test creates itself.
 * Expected values are copied from the captured files; each is quoted.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "check_util.h"
#include "held_files.h"
#include "proc.h"
#include "shmem_orphans.h"
#include "smaps.h"

#define KB(x)	((uint64_t)(x) * 1024)

/* data/status_self: a python3 with 1 MiB MAP_SHARED and 2 MiB mlock()ed */
START_TEST(test_status_self)
{
	struct proc_status st;
	char *text = load_data("status_self");

	ck_assert_int_eq(parse_status(text, &st), 0);
	ck_assert_str_eq(st.name, "python3");
	ck_assert_int_eq(st.tgid, 7533);
	ck_assert_int_eq(st.ppid, 7531);
	ck_assert(st.has_mm);
	ck_assert_uint_eq(st.rss, KB(17052));		/* VmRSS */
	ck_assert_uint_eq(st.rss_anon, KB(9136));	/* RssAnon */
	ck_assert_uint_eq(st.rss_file, KB(6892));	/* RssFile */
	ck_assert_uint_eq(st.rss_shmem, KB(1024));	/* RssShmem */
	ck_assert_uint_eq(st.hwm, KB(19004));		/* VmHWM */
	ck_assert_uint_eq(st.locked, KB(2048));		/* VmLck */
	ck_assert_uint_eq(st.pinned, 0);		/* VmPin */
	ck_assert_uint_eq(st.swap, 0);			/* VmSwap */
	/* the kernel's own identity: RSS = anon + file + shmem */
	ck_assert_uint_eq(st.rss, st.rss_anon + st.rss_file + st.rss_shmem);
	free(text);
}
END_TEST

START_TEST(test_status_no_mm)
{
	struct proc_status st;
	char *text;

	text = load_data("status_kthread");
	ck_assert_int_eq(parse_status(text, &st), 0);
	ck_assert_str_eq(st.name, "kthreadd");
	ck_assert_int_eq(st.tgid, 2);
	ck_assert_int_eq(st.ppid, 0);
	ck_assert(!st.has_mm);
	ck_assert_uint_eq(st.rss, 0);
	ck_assert_uint_eq(st.hwm, 0);
	free(text);

	text = load_data("status_zombie");
	ck_assert_int_eq(parse_status(text, &st), 0);
	ck_assert_str_eq(st.name, "python3");
	ck_assert_int_eq(st.tgid, 7077);
	ck_assert_int_eq(st.ppid, 7036);
	ck_assert(!st.has_mm);
	ck_assert_uint_eq(st.rss, 0);
	free(text);
}
END_TEST

/* comm "x) (y\n\\z" set with prctl(PR_SET_NAME); status escapes \n and \\ */
START_TEST(test_status_hostile)
{
	struct proc_status st;
	char *text = load_data("status_hostile");

	ck_assert_int_eq(parse_status(text, &st), 0);
	ck_assert_str_eq(st.name, "x) (y\\n\\\\z");
	ck_assert_int_eq(st.tgid, 7078);
	ck_assert_int_eq(st.ppid, 7036);
	ck_assert(st.has_mm);
	ck_assert_uint_eq(st.rss, KB(10808));
	ck_assert_uint_eq(st.rss_anon, KB(7096));
	ck_assert_uint_eq(st.rss_file, KB(3712));
	free(text);
}
END_TEST

START_TEST(test_status_bad)
{
	struct proc_status st;
	char *text;

	/* cut inside "VmRSS:\t   17" */
	text = load_data("status_truncated");
	ck_assert_int_eq(parse_status(text, &st), -EINVAL);
	free(text);

	/* "VmRSS:\t   17x52 kB" */
	text = load_data("status_garbage");
	ck_assert_int_eq(parse_status(text, &st), -EINVAL);
	free(text);

	ck_assert_int_eq(parse_status("", &st), -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\n", &st), -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\n", &st), -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t-1\nPPid:\t0\n", &st), -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\nPPid:\t0\nVmRSS:\t12 MB\n", &st),
			 -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\nPPid:\t0\nVmRSS:\t12kB\n", &st),
			 -EINVAL);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\nPPid:\t0\nVmRSS:\t kB\n", &st),
			 -EINVAL);
	/* 2^54 kB = 2^64 bytes */
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\nPPid:\t0\n"
				      "VmRSS:\t18014398509481984 kB\n", &st), -ERANGE);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t1\nPPid:\t0\n"
				      "VmSwap:\t99999999999999999999999 kB\n", &st), -ERANGE);
	ck_assert_int_eq(parse_status("Name:\tfoo\nTgid:\t4294967296\nPPid:\t0\n", &st),
			 -ERANGE);
	ck_assert_int_eq(parse_status(NULL, &st), -EINVAL);
}
END_TEST

/* a 4.4-era status: no RssAnon/RssFile/RssShmem, no VmPin */
START_TEST(test_status_old_kernel)
{
	struct proc_status st;
	char *text = load_data("status_old");

	ck_assert_int_eq(parse_status(text, &st), 0);
	ck_assert(st.has_mm);
	ck_assert_uint_eq(st.rss, KB(17052));
	ck_assert_uint_eq(st.locked, KB(2048));
	ck_assert_uint_eq(st.rss_anon, 0);
	ck_assert_uint_eq(st.rss_file, 0);
	ck_assert_uint_eq(st.rss_shmem, 0);
	ck_assert_uint_eq(st.pinned, 0);
	free(text);
}
END_TEST

START_TEST(test_status_edges)
{
	struct proc_status st;
	char name[128];

	/* a comm may start with blanks; unknown keys and lines are skipped */
	ck_assert_int_eq(parse_status("Name:\t  sp ace\nFuture:\tthing\nno colon\n"
				      "Tgid:\t12\nPPid:\t3\nVmRSS:\t       8 kB\n"
				      "VmSwap:\t4 kB", &st), 0);
	ck_assert_str_eq(st.name, "  sp ace");
	ck_assert_int_eq(st.tgid, 12);
	ck_assert_int_eq(st.ppid, 3);
	ck_assert(st.has_mm);
	ck_assert_uint_eq(st.rss, 8192);
	ck_assert_uint_eq(st.swap, 4096);	/* last line without '\n' */

	/* "Name" is a key, "Names" is not */
	ck_assert_int_eq(parse_status("Names:\tbad\nName:\tgood\nTgid:\t1\nPPid:\t0\n", &st), 0);
	ck_assert_str_eq(st.name, "good");

	/* an escaped kthread name longer than the buffer is cut */
	xsnprintf(name, sizeof(name), "Name:\t%s\nTgid:\t1\nPPid:\t0\n",
		 "0123456789012345678901234567890123456789012345678901234567890123456789");
	ck_assert_int_eq(parse_status(name, &st), 0);
	ck_assert_uint_eq(strlen(st.name), sizeof(st.name) - 1);
	ck_assert_int_eq(strncmp(st.name, "0123456789", 10), 0);
}
END_TEST

START_TEST(test_stat_self)
{
	struct proc_stat st;
	char *text = load_data("stat_self");

	/* "7533 (python3) R 7531 7531 5233 0 -1 4194304 4452 6502 0 0 ... 40961" */
	ck_assert_int_eq(parse_stat(text, &st), 0);
	ck_assert_str_eq(st.comm, "python3");
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.ppid, 7531);
	ck_assert_uint_eq(st.minflt, 4452);	/* not cminflt 6502 */
	ck_assert_uint_eq(st.majflt, 0);
	ck_assert_uint_eq(st.starttime_ticks, 40961);
	free(text);
}
END_TEST

START_TEST(test_stat_hostile)
{
	struct proc_stat st;
	char *text = load_data("stat_hostile");

	/* "7078 (x) (y\n\\z) S 7036 7024 5233 0 -1 4194368 286 0 0 0 ... 39549" */
	ck_assert_int_eq(parse_stat(text, &st), 0);
	ck_assert_str_eq(st.comm, "x) (y\n\\z");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 7036);
	ck_assert_uint_eq(st.minflt, 286);
	ck_assert_uint_eq(st.majflt, 0);
	ck_assert_uint_eq(st.starttime_ticks, 39549);
	free(text);

	/* every field distinct, so a field off by one shows */
	ck_assert_int_eq(parse_stat("42 (a) (b c) S 400 500 600 700 800 900 1000 1100 "
				    "1200 1300 1400 1500 1600 1700 1800 1900 2000 2100 "
				    "2200 2300 2400\n", &st), 0);
	ck_assert_str_eq(st.comm, "a) (b c");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 400);
	ck_assert_uint_eq(st.minflt, 1000);
	ck_assert_uint_eq(st.majflt, 1200);
	ck_assert_uint_eq(st.starttime_ticks, 2200);

	/* empty comm; stat ending right after starttime */
	ck_assert_int_eq(parse_stat("1 () D 0 0 0 0 0 0 7 0 9 0 0 0 0 0 0 0 0 0 22", &st), 0);
	ck_assert_str_eq(st.comm, "");
	ck_assert_int_eq(st.state, 'D');
	ck_assert_uint_eq(st.minflt, 7);
	ck_assert_uint_eq(st.majflt, 9);
	ck_assert_uint_eq(st.starttime_ticks, 22);
}
END_TEST

START_TEST(test_stat_no_mm)
{
	struct proc_stat st;
	char *text;

	text = load_data("stat_kthread");
	ck_assert_int_eq(parse_stat(text, &st), 0);
	ck_assert_str_eq(st.comm, "kthreadd");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 0);
	ck_assert_uint_eq(st.starttime_ticks, 30);
	free(text);

	text = load_data("stat_zombie");
	ck_assert_int_eq(parse_stat(text, &st), 0);
	ck_assert_str_eq(st.comm, "python3");
	ck_assert_int_eq(st.state, 'Z');
	ck_assert_int_eq(st.ppid, 7036);
	ck_assert_uint_eq(st.minflt, 221);
	ck_assert_uint_eq(st.starttime_ticks, 39519);
	free(text);
}
END_TEST

START_TEST(test_stat_bad)
{
	struct proc_stat st;
	char *text;

	text = load_data("stat_truncated");	/* 15 fields */
	ck_assert_int_eq(parse_stat(text, &st), -EINVAL);
	free(text);
	text = load_data("stat_garbage");	/* minflt "44x2" */
	ck_assert_int_eq(parse_stat(text, &st), -EINVAL);
	free(text);

	ck_assert_int_eq(parse_stat("", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("12 (abc R 1 1 1", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("12 abc) R 1 1 1", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("12 )abc( R", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("(abc) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("1 (a) RR 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("1 (a)  1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", &st), -EINVAL);
	ck_assert_int_eq(parse_stat("1 (a) R -1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", &st),
			 -EINVAL);
	/* fields 4..21 are 1, starttime (22) overflows */
	ck_assert_int_eq(parse_stat("1 (a) R 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 "
				    "99999999999999999999999", &st), -ERANGE);
	ck_assert_int_eq(parse_stat(NULL, &st), -EINVAL);
}
END_TEST

START_TEST(test_start_matches)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t tick = 1000000000ULL / (uint64_t)hz;
	uint64_t t = 40961;

	ck_assert_int_gt(hz, 0);
	ck_assert(proc_start_matches(t * tick, t));
	ck_assert(proc_start_matches(t * tick + tick - 1, t));
	ck_assert(!proc_start_matches(t * tick + tick, t));
	ck_assert(!proc_start_matches(t * tick - 1, t));
	ck_assert(proc_start_matches(0, 0));
	ck_assert(!proc_start_matches(0, 1));
}
END_TEST

START_TEST(test_mem_total)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	ck_assert_uint_eq(mem_total_bytes(), kb * 1024);
}
END_TEST

/* the test process itself, read live */
START_TEST(test_read_live)
{
	struct proc_status st;
	struct proc_stat ps;

	ck_assert_int_eq(read_status(getpid(), &st), 0);
	ck_assert_int_eq(st.tgid, getpid());
	ck_assert_int_eq(st.ppid, getppid());
	ck_assert(st.has_mm);
	ck_assert_uint_gt(st.rss, 0);
	ck_assert_uint_ge(st.hwm, st.rss);

	ck_assert_int_eq(read_stat(getpid(), &ps), 0);
	ck_assert_int_eq(ps.ppid, getppid());
	ck_assert_int_eq(ps.state, 'R');
	ck_assert_uint_gt(ps.minflt, 0);

	ck_assert_int_eq(read_status(0, &st), -EINVAL);
	ck_assert_int_eq(read_status(-1, &st), -EINVAL);
}
END_TEST

/* a zombie has no mm; a reaped process is gone */
START_TEST(test_read_exited)
{
	struct proc_status st;
	struct proc_stat ps;
	siginfo_t si;
	pid_t pid;
	int err;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	/* wait for the exit but leave the zombie */
	ck_assert_int_eq(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);

	ck_assert_int_eq(read_status(pid, &st), 0);
	ck_assert_int_eq(st.tgid, pid);
	ck_assert(!st.has_mm);
	ck_assert_int_eq(read_stat(pid, &ps), 0);
	ck_assert_int_eq(ps.state, 'Z');

	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	err = read_status(pid, &st);
	ck_assert_msg(err == -ESRCH || err == -ENOENT, "status of a reaped pid: %d", err);
	err = read_stat(pid, &ps);
	ck_assert_msg(err == -ESRCH || err == -ENOENT, "stat of a reaped pid: %d", err);
}
END_TEST

/* maps lines as fs/proc/task_mmu.c writes them: a file, anon, a path with spaces */
START_TEST(test_maps_devino)
{
	uint64_t dev = 0, ino = 0;

	ck_assert_int_eq(parse_maps_devino("7f12a4000000-7f12a4200000 rw-s 00000000 00:1a 1073"
					   "                       /dev/shm/x (deleted)\n", &dev,
					   &ino), 0);
	ck_assert_int_eq(major(dev), 0);
	ck_assert_int_eq(minor(dev), 0x1a);
	ck_assert_int_eq(ino, 1073);
	ck_assert_int_eq(parse_maps_devino("55d0c6c00000-55d0c6c21000 r--p 00000000 fd:01 "
					   "18446744073709551615 /a b\n", &dev, &ino), 0);
	ck_assert_int_eq(major(dev), 0xfd);
	ck_assert(ino == UINT64_MAX);
	ck_assert_int_eq(parse_maps_devino("7ffd1c3a0000-7ffd1c3c1000 rw-p 00000000 00:00 0"
					   "                          [stack]\n", &dev, &ino),
			 -EINVAL);
	ck_assert_int_eq(parse_maps_devino("garbage\n", &dev, &ino), -EINVAL);
}
END_TEST

/* parse_maps_file(): the path handed over, " (deleted)" cut */
START_TEST(test_maps_file_path)
{
	uint64_t dev = 0, ino = 0;
	char *path = NULL;

	ck_assert_int_eq(parse_maps_file("7f12a4000000-7f12a4200000 rw-s 00000000 00:1a 1073"
					 "                       /dev/shm/x (deleted)\n", &dev, &ino,
					 &path), 0);
	ck_assert_str_eq(path, "/dev/shm/x");
	free(path);
	path = (char *)1;
	ck_assert_int_eq(parse_maps_file("garbage\n", &dev, &ino, &path), -EINVAL);
	ck_assert_ptr_eq(path, (char *)1);	/* untouched on an error */
}
END_TEST

/* held_files_walk() finds this process mapping one file and holding another
 * open, each by its path, and nothing of a file it does not want */
struct held_seen {
	uint64_t dev, ino;
	int mapped, open;
	char path[256];
};

static bool held_wants(uint64_t dev, uint64_t ino, void *ctx)
{
	const struct held_seen *s = ctx;

	return dev == s[0].dev && (ino == s[0].ino || ino == s[1].ino);
}

static int held_note(uint64_t dev, uint64_t ino, enum held_how how, pid_t pid, const char *path,
		     void *ctx)
{
	struct held_seen *s = ctx;

	ck_assert_uint_eq(dev, s[0].dev);
	if (pid != getpid())
		return 0;
	s = ino == s[0].ino ? &s[0] : &s[1];
	s->mapped += how == HELD_MAPPED;
	s->open += how == HELD_OPEN;
	snprintf(s->path, sizeof(s->path), "%s", path ? path : "");
	return 0;
}

START_TEST(test_held_files)
{
	char a[] = "/var/tmp/memacct-held-a.XXXXXX", b[] = "/var/tmp/memacct-held-b.XXXXXX";
	struct held_seen s[2] = { 0 };
	struct held_visitor v = { held_wants, held_note, s };
	int fa = mkstemp(a), fb = mkstemp(b);
	struct stat st;
	void *m;

	ck_assert(fa >= 0 && fb >= 0);
	ck_assert_int_eq(ftruncate(fa, 4096), 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fa, 0);
	ck_assert(m != MAP_FAILED);
	close(fa);			/* mapped only */
	ck_assert_int_eq(stat(a, &st), 0);
	s[0].dev = st.st_dev;
	s[0].ino = st.st_ino;
	ck_assert_int_eq(stat(b, &st), 0);
	s[1].ino = st.st_ino;
	ck_assert_int_eq(held_files_walk(&v), 0);
	ck_assert_int_eq(s[0].mapped, 1);
	ck_assert_int_eq(s[0].open, 0);
	ck_assert_str_eq(s[0].path, a);
	ck_assert_int_eq(s[1].mapped, 0);
	ck_assert_int_eq(s[1].open, 1);
	ck_assert_str_eq(s[1].path, b);
	munmap(m, 4096);
	close(fb);
	unlink(a);
	unlink(b);
}
END_TEST

/* mountinfo lines as fs/proc_namespace.c writes them, octal escapes and all */
START_TEST(test_mountinfo_tmpfs)
{
	char mnt[64];

	ck_assert_int_eq(parse_mountinfo_tmpfs("30 23 0:26 / /dev/shm rw,nosuid,nodev shared:4 "
					       "- tmpfs tmpfs rw\n", mnt, sizeof(mnt)), 0);
	ck_assert_str_eq(mnt, "/dev/shm");
	ck_assert_int_eq(parse_mountinfo_tmpfs("31 23 0:27 / /mnt/a\\040b\\134c rw - tmpfs x rw\n",
					       mnt, sizeof(mnt)), 0);
	ck_assert_str_eq(mnt, "/mnt/a b\\c");
	ck_assert_int_eq(parse_mountinfo_tmpfs("32 23 0:28 / /tmpfsx rw - tmpfsx x rw\n", mnt,
					       sizeof(mnt)), -ENOENT);
	ck_assert_int_eq(parse_mountinfo_tmpfs("24 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n",
					       mnt, sizeof(mnt)), -ENOENT);
	ck_assert_int_eq(parse_mountinfo_tmpfs("24 1 254:1 /\n", mnt, sizeof(mnt)), -EINVAL);
	/* a mount point longer than the buffer: refused, never cut to another path */
	ck_assert_int_eq(parse_mountinfo_tmpfs("33 23 0:29 / /aaaaaaaa rw - tmpfs x rw\n", mnt, 4),
			 -ENAMETOOLONG);
}
END_TEST

Suite *proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *tc;

	tc = tcase_create("status");
	tcase_add_test(tc, test_status_self);
	tcase_add_test(tc, test_status_no_mm);
	tcase_add_test(tc, test_status_hostile);
	tcase_add_test(tc, test_status_bad);
	tcase_add_test(tc, test_status_old_kernel);
	tcase_add_test(tc, test_status_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("stat");
	tcase_add_test(tc, test_stat_self);
	tcase_add_test(tc, test_stat_hostile);
	tcase_add_test(tc, test_stat_no_mm);
	tcase_add_test(tc, test_stat_bad);
	tcase_add_test(tc, test_start_matches);
	suite_add_tcase(s, tc);

	tc = tcase_create("smaps_rollup");
	suite_add_tcase(s, tc);

	tc = tcase_create("shmem_orphans");
	tcase_add_test(tc, test_maps_devino);
	tcase_add_test(tc, test_maps_file_path);
	tcase_add_test(tc, test_held_files);
	tcase_add_test(tc, test_mountinfo_tmpfs);
	suite_add_tcase(s, tc);

	tc = tcase_create("live");
	tcase_add_test(tc, test_mem_total);
	tcase_add_test(tc, test_read_live);
	tcase_add_test(tc, test_read_exited);
	suite_add_tcase(s, tc);
	return s;
}
