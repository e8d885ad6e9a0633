// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * mark.c - memacct mark NAME | --end: a phase mark from a shell script run
 * by `memacct run` (docs/run.md "Phases"), with the client of
 * include/memacct_mark.h. Under no memacct run (no MEMACCT_MARK_FD) it does
 * nothing and exits 0, so a script marks the same with and without memacct.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "memacct_mark.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* mark's options (memacct help mark), parsed by parse_args(). */
struct mark_env {
	const char *name;		/* NAME: the phase that starts now */
	bool end;			/* --end: the last phase ends now */
};

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct mark_env *env)
{
	static const struct option opts[] = {
		{ "end", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+:eh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			env->end = true;
			break;
		case 'h':
			usage_print(stdout, "mark");
			return -1;
		default:
			return opt_error("mark", c, argv);
		}
	}
	if (env->end == (optind < argc) || argc - optind > 1) {
		p_err("mark: one NAME, or --end (memacct mark NAME | memacct mark --end)");
		return EXIT_USAGE;
	}
	if (!env->end && (!argv[optind][0] || strlen(argv[optind]) > MEMACCT_MARK_NAME_MAX ||
			  strchr(argv[optind], '\n'))) {
		p_err("mark: NAME must be 1 to %d bytes on one line", MEMACCT_MARK_NAME_MAX);
		return EXIT_USAGE;
	}
	if (!env->end)
		env->name = argv[optind];
	return 0;
}

int do_mark(int argc, char **argv)
{
	char line[MEMACCT_MARK_LINE_MAX + 8], reply[MEMACCT_MARK_LINE_MAX + 1];
	struct mark_env env = { 0 };
	int err;

	err = parse_args(argc, argv, &env);
	if (err)
		return err < 0 ? EXIT_OK : err;
	if (env.end)
		snprintf(line, sizeof(line), "end\n");
	else
		snprintf(line, sizeof(line), "phase %s\n", env.name);
	err = memacct_mark_line(line, reply, sizeof(reply));
	if (err == 1)
		return EXIT_OK;	/* not under memacct run: nothing to mark */
	if (err == -EPROTO) {
		p_err("mark: memacct answered: %s", reply);
		return EXIT_RUNTIME;
	}
	if (err) {
		p_err("mark: %s (%s=%s)", strerror(-err), MEMACCT_MARK_ENV,
		      getenv(MEMACCT_MARK_ENV));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
