// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_phases.c - unit tests of user/phases.c's parsers: the mark channel's
 * lines (mark_parse(): what memacct answers "error" to) and --params.
 */
#define _GNU_SOURCE
#include "check_util.h"
#include "memacct_mark.h"
#include "phases.h"

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

Suite *phases_suite(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_mark_parse_good);
	tcase_add_test(tc, test_mark_parse_bad);
	tcase_add_test(tc, test_parse_params);
	suite_add_tcase(s, tc);
	return s;
}
