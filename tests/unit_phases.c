// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_phases.c - unit tests of user/model/phases.c's parsers: the mark channel's
 * lines (mark_parse(): what memacct answers "error" to), --params and
 * --expect-bytes-per-param; and phase_budget()/phase_verdict() on phases
 * built by hand (the figures of an offload_demo.py run, rounded).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"
#include "memacct_mark.h"
#include "phases.h"
#include "phases_print.h"

static enum mark_kind parse(const char *s, size_t n, char *name)
{
	char why[128];

	return mark_parse(s, n, name, MEMACCT_MARK_NAME_MAX + 1, why, sizeof(why));
}

START_TEST(test_mark_parse_good)
{
	char name[MEMACCT_MARK_NAME_MAX + 1], line[300];

	ck_assert_int_eq(parse("phase first step\n", 17, name), MARK_PHASE);
	ck_assert_str_eq(name, "first step");
	ck_assert_int_eq(parse("phase x", 7, name), MARK_PHASE);	/* no '\n' */
	ck_assert_str_eq(name, "x");
	ck_assert_int_eq(parse("end\n", 4, name), MARK_END);
	ck_assert_int_eq(parse("end", 3, name), MARK_END);
	ck_assert_int_eq(parse("phase \xc3\xa9tape\n", 13, name), MARK_PHASE);	/* UTF-8 */
	ck_assert_str_eq(name, "\xc3\xa9tape");
	memset(line, 'n', sizeof(line));
	memcpy(line, "phase ", 6);
	ck_assert_int_eq(parse(line, 6 + MEMACCT_MARK_NAME_MAX, name), MARK_PHASE);
	ck_assert_uint_eq(strlen(name), MEMACCT_MARK_NAME_MAX);
}
END_TEST

START_TEST(test_mark_parse_bad)
{
	char name[MEMACCT_MARK_NAME_MAX + 1], line[300];

	ck_assert_int_eq(parse("", 0, name), MARK_BAD);
	ck_assert_int_eq(parse("\n", 1, name), MARK_BAD);
	ck_assert_int_eq(parse("phase\n", 6, name), MARK_BAD);
	ck_assert_int_eq(parse("phase \n", 7, name), MARK_BAD);
	ck_assert_int_eq(parse("Phase x\n", 8, name), MARK_BAD);
	ck_assert_int_eq(parse("end now\n", 8, name), MARK_BAD);
	ck_assert_int_eq(parse("phase a\tb\n", 10, name), MARK_BAD);
	ck_assert_int_eq(parse("phase a\nphase b\n", 16, name), MARK_BAD);
	ck_assert_int_eq(parse("phase a\0b\n", 10, name), MARK_BAD);
	ck_assert_int_eq(parse("phase \xff\n", 8, name), MARK_BAD);
	ck_assert_int_eq(parse("phase \xc3\n", 8, name), MARK_BAD);	/* cut sequence */
	ck_assert_int_eq(parse("phase \xed\xa0\x80\n", 10, name), MARK_BAD);	/* surrogate */
	memset(line, 'n', sizeof(line));
	memcpy(line, "phase ", 6);
	ck_assert_int_eq(parse(line, 7 + MEMACCT_MARK_NAME_MAX, name), MARK_BAD);
}
END_TEST

START_TEST(test_parse_params)
{
	double v;

	ck_assert_int_eq(parse_params("1.5e9", &v), 0);
	ck_assert_double_eq(v, 1.5e9);
	ck_assert_int_eq(parse_params("80B", &v), 0);
	ck_assert_double_eq(v, 80e9);
	ck_assert_int_eq(parse_params("7000000000", &v), 0);
	ck_assert_double_eq(v, 7e9);
	ck_assert_int_eq(parse_params("350M", &v), 0);
	ck_assert_double_eq(v, 350e6);
	ck_assert_int_eq(parse_params("1T", &v), 0);
	ck_assert_double_eq(v, 1e12);
	ck_assert_int_eq(parse_params("", &v), -EINVAL);
	ck_assert_int_eq(parse_params("0", &v), -EINVAL);
	ck_assert_int_eq(parse_params("-5", &v), -EINVAL);
	ck_assert_int_eq(parse_params("0.5", &v), -EINVAL);
	ck_assert_int_eq(parse_params("8X", &v), -EINVAL);
	ck_assert_int_eq(parse_params("8BB", &v), -EINVAL);
	ck_assert_int_eq(parse_params("inf", &v), -EINVAL);
	ck_assert_int_eq(parse_params("nan", &v), -EINVAL);
}
END_TEST

START_TEST(test_parse_bytes_per_param)
{
	double v = 0;

	ck_assert_int_eq(parse_bytes_per_param("16", &v), 0);
	ck_assert(v == 16);
	ck_assert_int_eq(parse_bytes_per_param("18.5", &v), 0);
	ck_assert(v == 18.5);
	ck_assert_int_eq(parse_bytes_per_param("0", &v), -EINVAL);
	ck_assert_int_eq(parse_bytes_per_param("-2", &v), -EINVAL);
	ck_assert_int_eq(parse_bytes_per_param("16B", &v), -EINVAL);
	ck_assert_int_eq(parse_bytes_per_param("", &v), -EINVAL);
	ck_assert_int_eq(parse_bytes_per_param("inf", &v), -EINVAL);
}
END_TEST

#define N_PARAMS 1000000.0

static void set_phase(struct phase *ph, const char *name, double anon_bpp, double mlocked_bpp)
{
	memset(ph, 0, sizeof(*ph));
	snprintf(ph->name, sizeof(ph->name), "%s", name);
	ph->totals.d[M_ANON] = (int64_t)(anon_bpp * N_PARAMS);
	ph->totals.d[M_MLOCKED] = (int64_t)(mlocked_bpp * N_PARAMS);
	ph->totals.d[M_PINNED] = ph->totals.d[M_MLOCKED];
	ph->totals.d[M_FILE] = 4096;
}

static struct phase_map *add_map(struct phase *ph, uint64_t start, int64_t rss, uint64_t locked,
				 int freed_in)
{
	struct phase_map *m;

	ph->maps = realloc(ph->maps, (ph->nmaps + 1) * sizeof(*m));
	ck_assert_ptr_nonnull(ph->maps);
	m = &ph->maps[ph->nmaps++];
	memset(m, 0, sizeof(*m));
	m->pid = 7;
	m->change = MAP_APPEARED;
	m->start = start;
	m->end = start + (uint64_t)rss;
	m->size = m->rss = (uint64_t)rss;
	m->rss_change = rss;
	m->locked = locked;
	m->freed_in = freed_in;
	return m;
}

/*
 * init 6 B/param (a 6 MB mapping); first step 16 (a 4 MB locked staging
 * buffer, a 12 MB heap growth, a 1 MB temporary freed in "second step");
 * second step 2 more: 24 in all, 8 above 16, 4 of them pinned.
 */
START_TEST(test_phase_budget)
{
	struct phase done[3];
	struct phases p = { .done = done, .ndone = 3, .params = N_PARAMS, .expect_bpp = 16 };
	struct phase_budget b;
	char v[512];

	set_phase(&done[0], "init", 6, 0);
	add_map(&done[0], 0x10000000, 6000000, 0, -1);
	set_phase(&done[1], "first step", 16, 4);
	add_map(&done[1], 0x20000000, 12000000, 0, -1);
	add_map(&done[1], 0x30000000, 4000000, 4000000, -1);
	add_map(&done[1], 0x40000000, 1000000, 0, 2);
	set_phase(&done[2], "second step", 2, 0);
	add_map(&done[2], 0x50000000, 2000000, 0, -1);

	ck_assert_int_eq(phase_budget(&p, 0, &b), 0);
	ck_assert(fabs(b.change - 6) < 1e-9 && fabs(b.cumulative - 6) < 1e-9);
	ck_assert(b.excess < 0 && b.excess_pinned == 0 && b.excess_unpinned == 0);
	phase_verdict(v, sizeof(v), &b, p.expect_bpp);
	ck_assert_str_eq(v, "within 16 B/param");

	ck_assert_int_eq(phase_budget(&p, 1, &b), 0);
	ck_assert(fabs(b.cumulative - 22) < 1e-9 && fabs(b.excess - 6) < 1e-9);
	ck_assert(fabs(b.pinned - 4) < 1e-9 && fabs(b.mlocked - 4) < 1e-9);
	ck_assert(fabs(b.unpinned - 18) < 1e-9);
	ck_assert(fabs(b.excess_pinned - 4) < 1e-9 && fabs(b.excess_unpinned - 2) < 1e-9);
	ck_assert(fabs(b.file - 2 * 4096 / N_PARAMS) < 1e-9);
	/* locked first, then this phase's, then earlier ones: the staging
	 * buffer, the heap, the 1 MB temporary (freed only in "second step"),
	 * before init's 6 MB */
	ck_assert_int_eq(b.ntop, 3);
	ck_assert_int_eq(done[b.top[0].phase].maps[b.top[0].map].start, 0x30000000);
	ck_assert_int_eq(done[b.top[1].phase].maps[b.top[1].map].start, 0x20000000);
	ck_assert_int_eq(done[b.top[2].phase].maps[b.top[2].map].start, 0x40000000);
	phase_verdict(v, sizeof(v), &b, p.expect_bpp);
	ck_assert_str_eq(v, "6.00 B/param above 16: 4.00 pinned (mlocked 4.00), 2.00 unpinned");
	phase_verdict(v, 12, &b, p.expect_bpp);		/* cut, terminated */
	ck_assert_str_eq(v, "6.00 B/para");

	ck_assert_int_eq(phase_budget(&p, 2, &b), 0);
	ck_assert(fabs(b.change - 2) < 1e-9 && fabs(b.excess - 8) < 1e-9);
	ck_assert(fabs(b.excess_pinned - 4) < 1e-9 && fabs(b.excess_unpinned - 4) < 1e-9);
	/* the 1 MB temporary was freed in "second step": no longer named */
	ck_assert_int_eq(done[b.top[0].phase].maps[b.top[0].map].start, 0x30000000);
	ck_assert_int_eq(done[b.top[1].phase].maps[b.top[1].map].start, 0x50000000);
	ck_assert_int_eq(done[b.top[2].phase].maps[b.top[2].map].start, 0x20000000);

	/* more pinned than the excess: all of the excess is pinned */
	p.expect_bpp = 20;
	ck_assert_int_eq(phase_budget(&p, 1, &b), 0);
	ck_assert(fabs(b.excess_pinned - 2) < 1e-9 && b.excess_unpinned == 0);
	phase_verdict(v, sizeof(v), &b, p.expect_bpp);
	ck_assert_str_eq(v, "2.00 B/param above 20: 2.00 pinned (mlocked 4.00), 0.00 unpinned");

	/* anon unknown: no budget; none without params or past the phases */
	done[0].totals.unknown = MBIT(M_ANON);
	ck_assert_int_eq(phase_budget(&p, 2, &b), -ENODATA);
	ck_assert_int_eq(phase_budget(&p, 3, &b), -EINVAL);
	p.params = 0;
	ck_assert_int_eq(phase_budget(&p, 0, &b), -EINVAL);
	for (int i = 0; i < 3; i++)
		free(done[i].maps);
}
END_TEST

/*
 * The text table lists the mappings whose RSS moved; those whose size alone
 * changed (a glibc arena's 64 MiB reserve: rss 0) are one line, counted
 * (issue 41: they filled the README job's epoch table).
 */
START_TEST(test_phase_maps_without_rss)
{
	struct phase ph;
	struct phases p = { .done = &ph, .ndone = 1 };
	struct phase_map *m;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	set_phase(&ph, "epoch", 6, 0);
	add_map(&ph, 0x10000000, 6 << 20, 0, -1);		/* 6 MiB written: listed */
	for (int i = 0; i < 3; i++) {			/* arenas: 64 MiB, rss 4 KiB */
		m = add_map(&ph, 0x20000000 + ((uint64_t)i << 26), 4096, 0, -1);
		m->size = 64 << 20;
		m->end = m->start + m->size;
	}
	m = add_map(&ph, 0x40000000, 0, 0, -1);		/* locked, nothing resident */
	m->size = m->locked = 2 << 20;
	m->end = m->start + m->size;
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	print_phases_plain(f, &p);
	fclose(f);
	ck_assert_msg(strstr(text, "10000000-10600000 6.00 MiB anon, rss +6.00 MiB"),
		      "the 6 MiB mapping not listed:\n%s", text);
	ck_assert_msg(!strstr(text, "20000000-24000000"), "an arena listed:\n%s", text);
	ck_assert_msg(strstr(text, "40000000-40200000"), "the locked mapping not listed:\n%s",
		      text);
	ck_assert_msg(strstr(text, "and 3 mappings whose size changed with under 1 MiB of RSS"),
		      "no count of the unlisted mappings:\n%s", text);
	free(text);
	free(ph.maps);
}
END_TEST

Suite *phases_suite(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_mark_parse_good);
	tcase_add_test(tc, test_mark_parse_bad);
	tcase_add_test(tc, test_parse_params);
	tcase_add_test(tc, test_parse_bytes_per_param);
	tcase_add_test(tc, test_phase_budget);
	tcase_add_test(tc, test_phase_maps_without_rss);
	suite_add_tcase(s, tc);
	return s;
}
