// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_oom_forecast.c - unit tests of user/model/oom_forecast.c on series of
 * memory.stat figures with known answers: a linear leak (its time to the
 * limit exact), outliers (the slope stays), shapes that must stay calm (a
 * sawtooth, page cache, a level that comes back after minutes), the class
 * named.
 */
#define _GNU_SOURCE
#include "check_util.h"
#include "hostpin.h"
#include "oom_forecast.h"

#define MIB (1ULL << 20)
#define SEC 1000000000ULL

/* one sample a second at t = @t s */
static void add(struct oom_forecast *f, unsigned int t, uint64_t anon, uint64_t shmem,
		uint64_t file)
{
	struct memcg_stat st = { .anon = anon, .shmem = shmem, .file = file };

	fc_add(f, 1000 * SEC + t * SEC, &st, 0, 0);
}

START_TEST(test_linear_leak)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;

	for (unsigned int t = 0; t < 19; t++)
		add(&f, t, 100 * MIB + t * 4 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), -EAGAIN);	/* 18 s */
	for (unsigned int t = 19; t < 30; t++)
		add(&f, t, 100 * MIB + t * 4 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), 0);
	ck_assert_uint_eq(e.unreclaimable, 216 * MIB);
	ck_assert_uint_eq(e.headroom, 296 * MIB);
	ck_assert_double_eq_tol(e.slope, 4.0 * MIB, 1);
	ck_assert_double_eq_tol(e.eta_s, 74.0, 1e-6);
	ck_assert_int_eq(e.grows, FC_ANON);
	/* past the limit: no headroom, due now */
	for (unsigned int t = 30; t < 200; t++)
		add(&f, t, 100 * MIB + t * 4 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), 0);
	ck_assert_uint_eq(e.headroom, 0);
	ck_assert_double_eq(e.eta_s, 0);
	/* killed: the level falls; the forecast ends by the second sample */
	add(&f, 200, 10 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), 0);	/* one dip */
	add(&f, 201, 10 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), -ENODATA);
	/* samples closer than 0.5 s are one */
	f = (struct oom_forecast){ 0 };
	add(&f, 0, MIB, 0, 0);
	fc_add(&f, 1000 * SEC + SEC / 4, &(struct memcg_stat){ .anon = 9 * MIB }, 0, 0);
	ck_assert_uint_eq(f.n, 1);
}
END_TEST

/* a leak of 2 MiB/s with a 64 MiB buffer freed and taken back every 7 s */
START_TEST(test_outliers)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;

	for (unsigned int t = 0; t < 60; t++)
		add(&f, t, 200 * MIB + t * 2 * MIB - (t % 7 == 3 ? 64 * MIB : 0), 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 1024 * MIB, &e), 0);
	ck_assert_double_eq_tol(e.slope, 2.0 * MIB, 0.1 * 2 * MIB);
	ck_assert_double_eq_tol(e.eta_s, (1024 - 318) / 2.0, 0.1 * (1024 - 318) / 2.0);
}
END_TEST

/* epochs of 10 s: 40 MiB/s for 8 s, then freed; calm from the start */
START_TEST(test_sawtooth_calm)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;

	for (unsigned int t = 0; t < 600; t++) {
		add(&f, t, 50 * MIB + (t % 10 < 8 ? (t % 10) * 40 * MIB : 0), 0, 0);
		ck_assert_msg(fc_estimate(&f, 400 * MIB, &e) < 0, "t=%u: forecast %.1f s",
			      t, e.eta_s);
	}
}
END_TEST

/* page cache grows to the limit: the kernel drops it, no forecast */
START_TEST(test_page_cache_calm)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;

	for (unsigned int t = 0; t < 120; t++) {
		add(&f, t, 30 * MIB, 0, t * 8 * MIB);
		ck_assert_int_lt(fc_estimate(&f, 512 * MIB, &e), 0);
	}
}
END_TEST

/*
 * 290 MiB reached in 30 s, freed for 90 s, then the same rise: calm until
 * the level now (the median of the last 3 samples) passes the first peak by
 * 1% of the limit (the minutes' peaks), then a forecast
 */
START_TEST(test_level_comes_back)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;
	unsigned int t;

	for (t = 0; t < 120; t++)
		add(&f, t, t < 30 ? t * 10 * MIB : 0, 0, 0);
	for (; t < 150; t++) {
		add(&f, t, (t - 120) * 10 * MIB, 0, 0);
		ck_assert_msg(fc_estimate(&f, 512 * MIB, &e) < 0, "t=%u", t);
	}
	add(&f, t++, 300 * MIB, 0, 0);	/* the peak passed, not yet the level */
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), -ENODATA);
	add(&f, t, 310 * MIB, 0, 0);
	ck_assert_int_eq(fc_estimate(&f, 512 * MIB, &e), 0);
	ck_assert_double_eq_tol(e.slope, 10.0 * MIB, 1);
}
END_TEST

START_TEST(test_class_named)
{
	struct oom_forecast f = { 0 };
	struct fc_estimate e;

	/* a /dev/shm file grows 3 MiB/s, anon 1 MiB/s */
	for (unsigned int t = 0; t < 30; t++)
		add(&f, t, 100 * MIB + t * MIB, 10 * MIB + t * 3 * MIB, 0);
	ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
	ck_assert_int_eq(e.grows, FC_SHMEM);
	ck_assert_double_eq_tol(e.slope, 4.0 * MIB, 1);
	ck_assert_double_eq_tol(e.grows_slope, 3.0 * MIB, 1);
	/* mlocked anon: unevictable grows with anon */
	f = (struct oom_forecast){ 0 };
	for (unsigned int t = 0; t < 30; t++) {
		struct memcg_stat st = { .anon = 100 * MIB + t * 2 * MIB,
					 .unevictable = t * 2 * MIB };

		fc_add(&f, t * SEC, &st, 0, 0);
	}
	ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
	ck_assert_int_eq(e.grows, FC_MLOCKED);
	/* workers' CoW copies: 3 of anon's 4 MiB/s (the copies counted since
	 * the load, far above anon); 1 of 4 is not named */
	for (unsigned int cow = 1; cow <= 3; cow += 2) {
		f = (struct oom_forecast){ 0 };
		for (unsigned int t = 0; t < 30; t++) {
			struct memcg_stat st = { .anon = 100 * MIB + t * 4 * MIB };

			fc_add(&f, t * SEC, &st, 900 * MIB + t * cow * MIB, 0);
		}
		ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
		ck_assert_int_eq(e.grows, cow == 3 ? FC_COW : FC_ANON);
		ck_assert_double_eq_tol(e.grows_slope, (cow == 3 ? 3.0 : 4.0) * MIB, 1);
	}
	ck_assert_str_eq(fc_class_name(FC_COW), "cow");
	/* copies within a growing tmpfs file are not anon's: shmem stays */
	f = (struct oom_forecast){ 0 };
	for (unsigned int t = 0; t < 30; t++) {
		struct memcg_stat st = { .anon = 100 * MIB, .shmem = t * 4 * MIB };

		fc_add(&f, t * SEC, &st, t * 4 * MIB, 0);
	}
	ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
	ck_assert_int_eq(e.grows, FC_SHMEM);
	/* pinned (pinned_vm, DMA) growing within anon beside mlocked pages:
	 * the larger of the two named */
	f = (struct oom_forecast){ 0 };
	for (unsigned int t = 0; t < 30; t++) {
		struct memcg_stat st = { .anon = 100 * MIB + t * 4 * MIB,
					 .unevictable = t * 2 * MIB };

		fc_add(&f, t * SEC, &st, 0, t * 3 * MIB);
	}
	ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
	ck_assert_int_eq(e.grows, FC_PINNED);
	ck_assert_double_eq_tol(e.grows_slope, 3.0 * MIB, 1);
	ck_assert_str_eq(fc_class_name(FC_PINNED), "pinned");
	/* v2 kernel memory: page tables and unreclaimable slab */
	f = (struct oom_forecast){ 0 };
	for (unsigned int t = 0; t < 30; t++) {
		struct memcg_stat st = { .anon = 100 * MIB, .pagetables = t * MIB,
					 .slab_unreclaimable = t * 2 * MIB,
					 .slab_reclaimable = t * 50 * MIB };

		fc_add(&f, t * SEC, &st, 0, 0);
	}
	ck_assert_int_eq(fc_estimate(&f, 2048 * MIB, &e), 0);
	ck_assert_int_eq(e.grows, FC_KERNEL);
	ck_assert_double_eq_tol(e.slope, 3.0 * MIB, 1);
	ck_assert_str_eq(fc_class_name(FC_KERNEL), "kernel");
}
END_TEST

/* the host's figures: MemTotal - MemAvailable split into anon, shmem and
 * the rest as kernel; a kernel without MemAvailable gives none */
START_TEST(test_host_stat)
{
	static const char meminfo[] =
		"MemTotal:       24000000 kB\nMemFree:         1000000 kB\n"
		"MemAvailable:   14000000 kB\nCached:          9000000 kB\n"
		"Unevictable:       20000 kB\nAnonPages:       7000000 kB\n"
		"AnonHugePages:   3000000 kB\nShmem:           1000000 kB\n";
	struct memcg_stat st;
	struct hm_fields f;
	struct hostmem m;
	uint64_t limit = 24000000ULL * 1024;

	ck_assert_int_eq(parse_meminfo(meminfo, &f), 0);
	hostmem_from_fields(&m, &f, 0, true);
	ck_assert_int_eq(fc_host_stat(&m, limit, &st), 0);
	ck_assert_uint_eq(st.anon, 7000000ULL * 1024);
	ck_assert_uint_eq(st.shmem, 1000000ULL * 1024);
	ck_assert_uint_eq(st.slab_unreclaimable, 2000000ULL * 1024);
	ck_assert_uint_eq(st.unevictable, 20000ULL * 1024);
	/* a host leaking through fc_estimate(): its headroom is MemAvailable */
	{
		struct oom_forecast fc = { 0 };
		struct fc_estimate e;

		for (unsigned int t = 0; t < 30; t++) {
			st.anon = (7000000ULL + t * 102400) * 1024;	/* 100 MiB/s */
			fc_add(&fc, t * SEC, &st, 0, 0);
		}
		ck_assert_int_eq(fc_estimate(&fc, limit, &e), 0);
		ck_assert_int_eq(e.grows, FC_ANON);
		ck_assert_double_eq_tol(e.slope, 100.0 * MIB, 1);
	}
	ck_assert_int_eq(parse_meminfo("MemTotal: 1000 kB\nAnonPages: 10 kB\nShmem: 0 kB\n"
				       "Unevictable: 0 kB\n", &f), 0);
	hostmem_from_fields(&m, &f, 0, true);
	ck_assert_int_eq(fc_host_stat(&m, 1000 * 1024, &st), -ENODATA);
}
END_TEST

Suite *oom_forecast_suite(void)
{
	Suite *s = suite_create("oom_forecast");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_linear_leak);
	tcase_add_test(tc, test_outliers);
	tcase_add_test(tc, test_sawtooth_calm);
	tcase_add_test(tc, test_page_cache_calm);
	tcase_add_test(tc, test_level_comes_back);
	tcase_add_test(tc, test_class_named);
	tcase_add_test(tc, test_host_stat);
	suite_add_tcase(s, tc);
	return s;
}
