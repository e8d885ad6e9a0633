/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * check_util.h - helpers shared by the Check unit tests (tests/unit_*.c,
 * linked into one binary whose main() is in unit_util.c). Tests run with
 * cwd = tests/, so captured kernel files are at data/NAME.
 */
#ifndef MEMACCT_CHECK_UTIL_H
#define MEMACCT_CHECK_UTIL_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA_DIR	"data"
#define DATA_MAX	(1 << 20)

/* snprintf() that fails the test rather than truncate a path */
#define xsnprintf(buf, size, ...) \
	ck_assert_msg(snprintf(buf, size, __VA_ARGS__) < (int)(size), \
		      "%s:%d: buffer too small", __FILE__, __LINE__)

/*
 * Suites, one per tests/unit_NAME.c (NAME_suite()). Declared weak so that
 * the runner (unit_util.c main()) can say which one is missing instead of a
 * link error: a declared suite that no file defines, or a unit_NAME.c whose
 * suite is not in the runner's table, FAILS the run (nothing is skipped
 * silently).
 */
Suite *util_suite(void) __attribute__((weak));
Suite *proc_suite(void) __attribute__((weak));
Suite *cgroup_suite(void) __attribute__((weak));
Suite *report_suite(void) __attribute__((weak));
Suite *smaps_suite(void) __attribute__((weak));
Suite *limits_suite(void) __attribute__((weak));
Suite *metrics_suite(void) __attribute__((weak));
Suite *numa_suite(void) __attribute__((weak));
Suite *usage_suite(void) __attribute__((weak));
Suite *phases_suite(void) __attribute__((weak));
Suite *oom_forecast_suite(void) __attribute__((weak));
Suite *record_suite(void) __attribute__((weak));
Suite *bss_layout_suite(void) __attribute__((weak));

/*
 * TOOL_TIMEOUT_S - the timeout of a test case whose tests start another
 * program (python3 and jsonschema, promtool, bash, zsh). Check's default is
 * 4 s per test; on a loaded CI machine (guests beside, ASan) starting
 * python3 with jsonschema alone took longer (stop 49's CI: a timeout in
 * test_explain_json_fixture). A hang still fails, after this long.
 */
#define TOOL_TIMEOUT_S	120

/*
 * load_data() - the captured file DATA_DIR/@name as a NUL-terminated malloc'd
 * string (caller frees). A missing file fails the test, it never passes
 * silently with empty input.
 */
static inline char *load_data(const char *name)
{
	char path[256], *buf;
	size_t len = 0, n;
	FILE *f;

	xsnprintf(path, sizeof(path), DATA_DIR "/%s", name);
	f = fopen(path, "r");
	ck_assert_msg(f, "cannot open %s: %s (run the tests from tests/)",
		      path, strerror(errno));
	buf = malloc(DATA_MAX + 1);
	ck_assert_ptr_nonnull(buf);
	while ((n = fread(buf + len, 1, DATA_MAX - len, f)) > 0)
		len += n;
	ck_assert_msg(!ferror(f), "cannot read %s", path);
	ck_assert_msg(len < DATA_MAX, "%s too large", path);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* write_text() - create or replace @dir/@name with @text */
static inline void write_text(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f, "cannot create %s: %s", path, strerror(errno));
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* make_dir() - mkdir @dir/@name, which must not exist yet */
static inline void make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_msg(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
}

/* inode number of @dir/@name (the cgroup id on cgroupfs) */
static inline uint64_t inode_of(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	xsnprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "");
	ck_assert_msg(!lstat(path, &st), "stat %s: %s", path, strerror(errno));
	return st.st_ino;
}

static inline int rm_tree_one(const char *path, const struct stat *st, int type,
			      struct FTW *ftw)
{
	return remove(path);
}

/* rm_tree() - remove a temporary tree (symlinks not followed) */
static inline int rm_tree(const char *path)
{
	return nftw(path, rm_tree_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
