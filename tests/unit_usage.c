// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_usage.c - user/usage.c against the getopt tables of user/ and the
 * committed man page: every long and short option a command accepts is in
 * its --help and in docs/memacct.1, and docs/memacct.1 is what `make man`
 * generates (no drift). The tables are read from the sources, so an option
 * added anywhere without documentation fails here.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include "check_util.h"
#include <stdbool.h>
#include "usage.h"

#define USER_DIR "../user"
#define MAN_PAGE "../docs/memacct.1"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	ck_assert_msg(f, "cannot open %s", path);
	do {
		if (len + 4096 >= cap)
			buf = realloc(buf, cap = cap * 2 + 8192);
		ck_assert_ptr_nonnull(buf);
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static char *capture_usage(const char *cmd, bool man)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	if (man)
		usage_man(f);
	else
		usage_print(f, cmd);
	fclose(f);
	return buf;
}

/* @names ("-j, --json") has the option @opt ("--json" or "-j") as a token. */
static bool names_have(const char *names, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = strstr(names, opt); p; p = strstr(p + 1, opt))
		if ((p == names || p[-1] == ' ') && (!p[n] || p[n] == ',' || p[n] == ' '))
			return true;
	return false;
}

static bool usage_has(const struct cmd_usage *u, const char *opt)
{
	for (const struct usage_opt *o = u->opts; o->names; o++)
		if (names_have(o->names, opt))
			return true;
	return false;
}

/* @opt as troff writes it in the man page: every '-' as "\-". */
static bool man_has(const char *man, const char *opt)
{
	char esc[128], *q = esc;

	for (const char *p = opt; *p && q < esc + sizeof(esc) - 3; p++) {
		if (*p == '-')
			*q++ = '\\';
		*q++ = *p;
	}
	*q = '\0';
	return strstr(man, esc) != NULL;
}

/* The option names of the LIMITS_LONG_OPTIONS macro (user/memlimits.h). */
static int limits_names(char names[][64], int max)
{
	char *src = slurp(USER_DIR "/memlimits.h"), *p = strstr(src, "#define LIMITS_LONG_OPTIONS");
	int n = 0;

	ck_assert_ptr_nonnull(p);
	for (p = strstr(p, "{ \""); p && n < max; p = strstr(p, "{ \"")) {
		sscanf(p + 3, "%63[^\"]", names[n++]);
		p += 3;
		if (!strstr(p, "\\\n") || strchr(p, '\n') < strstr(p, "\\\n"))
			break;	/* the macro's last line */
	}
	free(src);
	return n;
}

static int checked;

/* Check one getopt table found at @tab in @src (the command of the function it is in). */
static void check_table(const char *file, const char *src, const char *tab, const char *man)
{
	const char *fn = NULL, *end = strstr(tab, "{ 0 }");
	const char *cmd = NULL, *main_fn = strstr(src, "\nint main(");
	const struct cmd_usage *u;
	char name[64], limits[8][64], cmdbuf[32];
	char opt[80];
	int nl;

	/* the command: the last "int do_NAME(" before the table, else (a static
	 * parser of a command's options) the first after it; main.c: global */
	for (const char *p = strstr(src, "\nint do_"); p && p < tab; p = strstr(p + 1, "\nint do_"))
		fn = p + 8;
	if (!fn && strstr(tab, "\nint do_"))
		fn = strstr(tab, "\nint do_") + 8;
	if (main_fn && main_fn < tab) {
		cmd = NULL;	/* main.c: the global options */
	} else if (fn) {
		sscanf(fn, "%31[a-z_]", cmdbuf);
		cmd = cmdbuf;
	} else {
		ck_abort_msg("%s: getopt table outside a command", file);
	}
	u = cmd ? usage_find(cmd) : NULL;
	if (!cmd) {
		int n;
		const struct cmd_usage *all = usage_all(&n);

		u = &all[n - 1];
	}
	ck_assert_msg(u, "%s: command '%s' has no usage in user/usage.c", file, cmd);
	ck_assert_ptr_nonnull(end);
	for (const char *p = strstr(tab, "{ \""); p && p < end; p = strstr(p + 1, "{ \"")) {
		sscanf(p + 3, "%63[^\"]", name);
		snprintf(opt, sizeof(opt), "--%.63s", name);
		ck_assert_msg(usage_has(u, opt), "%s: %s %s is not in its --help (user/usage.c)",
			      file, cmd ? cmd : "memacct", opt);
		ck_assert_msg(man_has(man, opt), "%s: %s %s is not in docs/memacct.1", file,
			      cmd ? cmd : "memacct", opt);
		checked++;
	}
	if (strstr(tab, "LIMITS_LONG_OPTIONS") && strstr(tab, "LIMITS_LONG_OPTIONS") < end) {
		nl = limits_names(limits, 8);
		ck_assert_int_ge(nl, 4);
		for (int i = 0; i < nl; i++) {
			snprintf(opt, sizeof(opt), "--%.63s", limits[i]);
			ck_assert_msg(usage_has(u, opt), "%s: %s %s is not in its --help", file,
				      cmd, opt);
			ck_assert_msg(man_has(man, opt), "%s: %s not in docs/memacct.1", file, opt);
			checked++;
		}
	}
	/* short options of the getopt_long() call after the table */
	{
		const char *g = strstr(end, "getopt_long(argc, argv, \"");
		char shortopts[64] = "";

		ck_assert_msg(g, "%s: no getopt_long after the table", file);
		sscanf(g + strlen("getopt_long(argc, argv, \""), "%63[^\"]", shortopts);
		for (const char *c = shortopts; *c; c++) {
			char sopt[3] = { '-', *c, '\0' };

			if (!isalnum((unsigned char)*c))
				continue;
			ck_assert_msg(usage_has(u, sopt), "%s: %s %s is not in its --help", file,
				      cmd ? cmd : "memacct", sopt);
			ck_assert_msg(man_has(man, sopt), "%s: %s not in docs/memacct.1", file, sopt);
			checked++;
		}
	}
}

START_TEST(test_getopt_tables_documented)
{
	char *man = slurp(MAN_PAGE), path[PATH_MAX];
	DIR *d = opendir(USER_DIR);
	struct dirent *de;
	int tables = 0;

	ck_assert_ptr_nonnull(d);
	checked = 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char *src;

		if (n < 3 || strcmp(de->d_name + n - 2, ".c"))
			continue;
		xsnprintf(path, sizeof(path), USER_DIR "/%s", de->d_name);
		src = slurp(path);
		for (char *t = strstr(src, "struct option opts[] = {"); t;
		     t = strstr(t + 1, "struct option opts[] = {")) {
			check_table(path, src, t, man);
			tables++;
		}
		free(src);
	}
	closedir(d);
	/* run, attach, explain, audit, daemon, detach, main */
	ck_assert_int_ge(tables, 7);
	ck_assert_int_ge(checked, 50);
	free(man);
}
END_TEST

START_TEST(test_man_page_generated)
{
	char *man = slurp(MAN_PAGE), *gen = capture_usage(NULL, true);

	ck_assert_msg(!strcmp(man, gen), "docs/memacct.1 differs from user/usage.c: run `make man`");
	/* every command has its section */
	for (const char *c = "run\0attach\0explain\0audit\0daemon\0detach\0help\0"; *c;
	     c += strlen(c) + 1) {
		char sec[32];

		snprintf(sec, sizeof(sec), ".SS %s\n", c);
		ck_assert_msg(strstr(man, sec), "no section for %s", c);
	}
	ck_assert_ptr_nonnull(strstr(man, ".SH DROPPED EVENTS"));
	ck_assert_ptr_nonnull(strstr(man, "vma_busy"));
	free(man);
	free(gen);
}
END_TEST

/* No line of a --help text appears twice (attach once printed its limits paragraph twice). */
START_TEST(test_help_no_repeats)
{
	int n;
	const struct cmd_usage *all = usage_all(&n);

	for (int i = 0; i <= n; i++) {
		const char *cmd = i < n ? all[i].name : NULL;
		char *text = capture_usage(cmd, false), *save, *l;
		char *lines[256];
		int nl = 0;

		if (i < n && !cmd) {
			free(text);
			continue;
		}
		ck_assert_msg(strlen(text) > 40, "%s: help too short", cmd ? cmd : "memacct");
		for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			for (int k = 0; k < nl; k++)
				ck_assert_msg(strcmp(lines[k], l), "%s --help repeats \"%s\"",
					      cmd ? cmd : "memacct", l);
			if (nl < 256)
				lines[nl++] = l;
			ck_assert_msg(strlen(l) <= 100, "%s --help: line over 100 columns: %s",
				      cmd ? cmd : "memacct", l);
		}
		free(text);
	}
}
END_TEST

/* README's command list has every synopsis, word for word */
START_TEST(test_readme_synopses)
{
	char *readme = slurp("../README.md");
	int n;
	const struct cmd_usage *all = usage_all(&n);

	for (int i = 0; i < n; i++) {
		const char *p = all[i].synopsis;

		for (; all[i].name && p; p = strchr(p, '\n')) {
			char want[256];

			p += *p == '\n';
			snprintf(want, sizeof(want), "\n    memacct %.*s", (int)strcspn(p, "\n"), p);
			ck_assert_msg(strstr(readme, want), "README.md lacks \"%s\"", want + 1);
		}
	}
	free(readme);
}
END_TEST

/* the checker itself: an undocumented option is caught */
START_TEST(test_checker_catches)
{
	const struct cmd_usage *u = usage_find("attach");

	ck_assert_ptr_nonnull(u);
	ck_assert(usage_has(u, "--pid"));
	ck_assert(usage_has(u, "-p"));
	ck_assert(!usage_has(u, "--pi"));
	ck_assert(!usage_has(u, "--no-such-option"));
	ck_assert(man_has("x \\-\\-keep\\-cgroup y", "--keep-cgroup"));
	ck_assert(!man_has("x \\-\\-keep y", "--keep-cgroup"));
}
END_TEST

Suite *usage_suite(void)
{
	Suite *s = suite_create("usage");
	TCase *tc = tcase_create("usage");

	tcase_add_test(tc, test_getopt_tables_documented);
	tcase_add_test(tc, test_man_page_generated);
	tcase_add_test(tc, test_help_no_repeats);
	tcase_add_test(tc, test_checker_catches);
	tcase_add_test(tc, test_readme_synopses);
	suite_add_tcase(s, tc);
	return s;
}
