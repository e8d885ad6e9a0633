// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_usage.c - user/cmd/usage.c against the getopt tables of user/ and the
 * committed man page: every long and short option a command accepts is in
 * its --help and in docs/memacct.1, and docs/memacct.1 is what `make man`
 * generates (no drift). The tables are read from the sources, so an option
 * added anywhere without documentation fails here. The shell completion in
 * docs/completion/ is what `make completion` generates from the same text,
 * and bash completes every option of every command from it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include "check_util.h"
#include <stdbool.h>
#include <glob.h>
#include <string.h>
#include "bpf_loader.h"
#include "commands.h"
#include "completion.h"
#include "usage.h"

#define USER_DIR "../user"
#define CMD_DIR USER_DIR "/cmd"	/* the commands: every getopt table is there */
#define MAN_PAGE "../docs/memacct.1"
#define BASH_COMPLETION "../docs/completion/memacct.bash"
#define ZSH_COMPLETION "../docs/completion/_memacct"

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

/* The option names of the LIMITS_LONG_OPTIONS macro (user/proc/memlimits.h). */
static int limits_names(char names[][64], int max)
{
	char *src = slurp(USER_DIR "/proc/memlimits.h"), *p = strstr(src, "#define LIMITS_LONG_OPTIONS");
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
	ck_assert_msg(u, "%s: command '%s' has no usage in user/cmd/usage.c", file, cmd);
	ck_assert_ptr_nonnull(end);
	for (const char *p = strstr(tab, "{ \""); p && p < end; p = strstr(p + 1, "{ \"")) {
		sscanf(p + 3, "%63[^\"]", name);
		snprintf(opt, sizeof(opt), "--%.63s", name);
		ck_assert_msg(usage_has(u, opt), "%s: %s %s is not in its --help (user/cmd/usage.c)",
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
	DIR *d = opendir(CMD_DIR);
	struct dirent *de;
	int tables = 0;

	ck_assert_ptr_nonnull(d);
	checked = 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char *src;

		if (n < 3 || strcmp(de->d_name + n - 2, ".c"))
			continue;
		xsnprintf(path, sizeof(path), CMD_DIR "/%s", de->d_name);
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

	ck_assert_msg(!strcmp(man, gen), "docs/memacct.1 differs from user/cmd/usage.c: run `make man`");
	/* every command has its section */
	for (const char *c = "run\0attach\0top\0explain\0audit\0daemon\0detach\0help\0"; *c;
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
/*
 * top --sort's help is made from top's column table: every column of both
 * views by the name --sort takes, RSS of a cgroup as usage, in lines of at
 * most 64 characters; and --help prints it.
 */
START_TEST(test_top_sort_help)
{
	static const char *const names[] = { "pid", "rss", "anon", "file", "shmem", "pinned",
					     "cow", "zero", "faults", "comm", "procs",
					     "usage (rss)", "reclaim", "cgroup" };
	const char *help = top_sort_help();
	char *text;
	size_t len;
	FILE *f;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(strstr(help, names[i]), "top --sort's help lacks %s:\n%s", names[i],
			      help);
	ck_assert_msg(strstr(help, "; in the cgroups view"), "%s", help);
	for (const char *l = help; *l; l += strcspn(l, "\n") + !!l[strcspn(l, "\n")])
		ck_assert_msg(strcspn(l, "\n") <= 64, "a line over 64 characters: %s", l);
	f = open_memstream(&text, &len);
	usage_print(f, "top");
	fclose(f);
	ck_assert_msg(strstr(text, "Sort by COL (default rss): pid, rss"), "%s", text);
	free(text);
}
END_TEST

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

static char *capture_completion(bool zsh)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	if (zsh)
		completion_zsh(f);
	else
		completion_bash(f);
	fclose(f);
	return buf;
}

START_TEST(test_completion_generated)
{
	for (int zsh = 0; zsh < 2; zsh++) {
		const char *path = zsh ? ZSH_COMPLETION : BASH_COMPLETION;
		char *file = slurp(path), *gen = capture_completion(zsh);

		ck_assert_msg(!strcmp(file, gen), "%s differs from user/cmd/usage.c: run `make completion`",
			      path);
		free(file);
		free(gen);
	}
}
END_TEST

/* Each option name of @u's options, and its command, to @fn. */
static int for_each_opt(const struct cmd_usage *u, void (*fn)(const char *cmd, const char *opt,
							       void *ctx), void *ctx)
{
	int n = 0;

	for (const struct usage_opt *o = u->opts; o->names; o++) {
		for (const char *p = o->names; *p; ) {
			size_t len = strcspn(p, ",");
			char opt[64];

			snprintf(opt, sizeof(opt), "%.*s", (int)len, p);
			fn(u->name, opt, ctx);
			n++;
			p += len;
			p += *p == ',' ? 1 + (p[1] == ' ') : 0;
		}
	}
	return n;
}

/* one completion query per line: "memacct [CMD] OPT" completing OPT */
static void bash_query(const char *cmd, const char *opt, void *ctx)
{
	fprintf(ctx, "q memacct %s %s\n", cmd ? cmd : "", opt);
}

/*
 * bash, for real: with docs/completion/memacct.bash sourced, completing
 * every option name of every command (and of memacct itself) as typed in
 * full offers that option; a command's first letters offer the command.
 */
START_TEST(test_completion_bash_every_option)
{
	char script[] = "/tmp/memacct-unit-completion-XXXXXX", line[4096];
	int n, fd = mkstemp(script), queries = 0, answered = 0;
	const struct cmd_usage *all = usage_all(&n);
	FILE *f = fdopen(fd, "w"), *p;
	char cmdline[PATH_MAX + 64];

	ck_assert_ptr_nonnull(f);
	fputs("source " BASH_COMPLETION " || exit 1\n"
	      "q() { COMP_WORDS=($*); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _memacct;\n"
	      "      printf '%s| %s |\\n' \"$*\" \"${COMPREPLY[*]}\"; }\n", f);
	for (int i = 0; i < n; i++) {
		queries += for_each_opt(&all[i], bash_query, f);
		if (all[i].name) {
			fprintf(f, "q memacct %.2s\n", all[i].name);
			queries++;
		}
	}
	fclose(f);
	xsnprintf(cmdline, sizeof(cmdline), "bash --norc --noprofile %s", script);
	p = popen(cmdline, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *bar = strchr(line, '|'), *word = bar, want[80];

		ck_assert_ptr_nonnull(bar);
		*bar = '\0';
		word = strrchr(line, ' ') + 1;
		if (strlen(word) == 2 && word[0] != '-') {	/* a command's first letters */
			for (int i = 0; i < n; i++)
				if (all[i].name && !strncmp(all[i].name, word, 2))
					snprintf(want, sizeof(want), " %s ", all[i].name);
		} else {
			snprintf(want, sizeof(want), " %.60s ", word);
		}
		ck_assert_msg(strstr(bar + 1, want), "bash: completing \"%s\" does not offer%s: %s",
			      line, want, bar + 1);
		answered++;
	}
	ck_assert_int_eq(pclose(p), 0);
	unlink(script);
	ck_assert_int_eq(answered, queries);
	ck_assert_int_ge(answered, 70);
}
END_TEST

struct zsh_check {
	const char *text;
};

/* the option in the completion function of its command (globals: _memacct) */
static void zsh_has(const char *cmd, const char *opt, void *ctx)
{
	const struct zsh_check *z = ctx;
	char head[64], quoted[80], repeated[80], braced[80];
	const char *fn, *end;

	snprintf(head, sizeof(head), "\n_memacct%s%s() {\n", cmd ? "_" : "", cmd ? cmd : "");
	fn = strstr(z->text, head);
	ck_assert_msg(fn, "zsh: no function %s", head + 1);
	end = strstr(fn + 1, "\n}\n");
	/* --force'[  or  '*'--cgroup'[ (repeatable)  or  {-j,--json} */
	snprintf(quoted, sizeof(quoted), "\t%s'[", opt);
	snprintf(repeated, sizeof(repeated), "'*'%s'[", opt);
	snprintf(braced, sizeof(braced), "%s%c", opt, opt[1] == '-' ? '}' : ',');
	ck_assert_msg((strstr(fn, quoted) && strstr(fn, quoted) < end) ||
		      (strstr(fn, repeated) && strstr(fn, repeated) < end) ||
		      (strstr(fn, braced) && strstr(fn, braced) < end),
		      "zsh: %s %s is not completed", cmd ? cmd : "memacct", opt);
}

/* zsh: every option in its command's _arguments, and the file parses */
START_TEST(test_completion_zsh_every_option)
{
	struct zsh_check z = { slurp(ZSH_COMPLETION) };
	int n, total = 0;
	const struct cmd_usage *all = usage_all(&n);
	struct stat st;

	for (int i = 0; i < n; i++)
		total += for_each_opt(&all[i], zsh_has, &z);
	ck_assert_int_ge(total, 70);
	if (stat("/usr/bin/zsh", &st) == 0)
		ck_assert_msg(system("zsh -n " ZSH_COMPLETION) == 0, "zsh -n " ZSH_COMPLETION);
	else
		printf("SKIP zsh -n %s: zsh not installed (make deps)\n", ZSH_COMPLETION);
	free((char *)z.text);
}
END_TEST

/* --dma-pins takes exactly auto, on and off (run, attach, daemon). */
START_TEST(test_dma_pins_values)
{
	static const char *bad[] = { "", "ON", "yes", "1", "auto ", "of" };

	ck_assert_int_eq(loader_dma_parse("on"), 0);
	ck_assert_int_eq(loader_dma_pins, LOADER_DMA_ON);
	ck_assert_int_eq(loader_dma_parse("off"), 0);
	ck_assert_int_eq(loader_dma_pins, LOADER_DMA_OFF);
	ck_assert(!loader_dma_windows());
	ck_assert_int_eq(loader_dma_parse("auto"), 0);
	ck_assert_int_eq(loader_dma_pins, LOADER_DMA_AUTO);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(loader_dma_parse(bad[i]), -EINVAL);
		ck_assert_int_eq(loader_dma_pins, LOADER_DMA_AUTO);	/* unchanged */
	}
	loader_dma_pins = LOADER_DMA_ON;
	ck_assert(loader_dma_windows());
	loader_dma_pins = LOADER_DMA_AUTO;
}
END_TEST

/* MEMACCT_FAULT_HOOK takes auto (or nothing), tracepoint, perf and none only. */
START_TEST(test_fault_hook_values)
{
	static const char *bad[] = { "kprobe", "Perf", "perf ", "tp", "None", "off" };
	enum loader_fault_hook h = LOADER_FAULT_NONE;
	bool forced = true;

	ck_assert_int_eq(loader_fault_hook_want(NULL, &h, &forced), 0);
	ck_assert(!forced);
	ck_assert_int_eq(loader_fault_hook_want("", &h, &forced), 0);
	ck_assert(!forced);
	ck_assert_int_eq(loader_fault_hook_want("auto", &h, &forced), 0);
	ck_assert(!forced);
	ck_assert_int_eq(h, LOADER_FAULT_NONE);	/* auto leaves the choice to the kernel */
	ck_assert_int_eq(loader_fault_hook_want("perf", &h, &forced), 0);
	ck_assert(forced);
	ck_assert_int_eq(h, LOADER_FAULT_PERF);
	ck_assert_int_eq(loader_fault_hook_want("tracepoint", &h, &forced), 0);
	ck_assert(forced);
	ck_assert_int_eq(h, LOADER_FAULT_TRACEPOINT);
	ck_assert_int_eq(loader_fault_hook_want("none", &h, &forced), 0);
	ck_assert(forced);
	ck_assert_int_eq(h, LOADER_FAULT_NONE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(loader_fault_hook_want(bad[i], &h, &forced), -EINVAL);
	ck_assert_str_eq(loader_fault_hook_name(LOADER_FAULT_PERF), "perf");
	ck_assert_str_eq(loader_fault_hook_name(LOADER_FAULT_TRACEPOINT), "tracepoint");
	ck_assert_str_eq(loader_fault_hook_name(LOADER_FAULT_NONE), "none");
}
END_TEST

/* Does @pattern match anything (other than @except)? */
static bool globbed(const char *pattern, const char *except)
{
	glob_t g;
	bool any = false;

	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			any |= !except || strcmp(g.gl_pathv[i], except);
	globfree(&g);
	return any;
}

/* auto's device probe against this host, looked at independently (glob(3)
 * and /proc/net/protocols' XDP line read here). */
START_TEST(test_dma_pins_auto_probe)
{
	char why[300] = "", line[512];
	bool want = globbed("/dev/nvidia*", NULL) ||
		    globbed("/dev/infiniband/uverbs*", NULL) ||
		    globbed("/dev/vfio/*", "/dev/vfio/vfio");
	FILE *f = fopen("/proc/net/protocols", "r");
	bool got;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long size, n;

		if (sscanf(line, "XDP %lu %lu", &size, &n) == 2 && n > 0)
			want = true;
	}
	if (f)
		fclose(f);
	got = loader_dma_devices(why, sizeof(why));
	printf("  --dma-pins auto here: %s%s%s\n", got ? "on (" : "off", why, got ? ")" : "");
	ck_assert_int_eq(got, want);
	ck_assert(!got || why[0]);
}
END_TEST

Suite *usage_suite(void)
{
	Suite *s = suite_create("usage");
	TCase *tc = tcase_create("usage");

	tcase_set_timeout(tc, TOOL_TIMEOUT_S);	/* runs bash and zsh */
	tcase_add_test(tc, test_getopt_tables_documented);
	tcase_add_test(tc, test_man_page_generated);
	tcase_add_test(tc, test_help_no_repeats);
	tcase_add_test(tc, test_top_sort_help);
	tcase_add_test(tc, test_checker_catches);
	tcase_add_test(tc, test_readme_synopses);
	tcase_add_test(tc, test_completion_generated);
	tcase_add_test(tc, test_completion_bash_every_option);
	tcase_add_test(tc, test_completion_zsh_every_option);
	tcase_add_test(tc, test_dma_pins_values);
	tcase_add_test(tc, test_dma_pins_auto_probe);
	tcase_add_test(tc, test_fault_hook_values);
	suite_add_tcase(s, tc);
	return s;
}
