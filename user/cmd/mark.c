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

int do_mark(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "end", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char line[MEMACCT_MARK_LINE_MAX + 8], reply[MEMACCT_MARK_LINE_MAX + 1];
	bool end = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "+:eh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			end = true;
			break;
		case 'h':
			usage_print(stdout, "mark");
			return EXIT_OK;
		default:
			return opt_error("mark", c, argv);
		}
	}
	if (end == (optind < argc) || argc - optind > 1) {
		p_err("mark: one NAME, or --end (memacct mark NAME | memacct mark --end)");
		return EXIT_USAGE;
	}
	if (!end && (!argv[optind][0] || strlen(argv[optind]) > MEMACCT_MARK_NAME_MAX ||
		     strchr(argv[optind], '\n'))) {
		p_err("mark: NAME must be 1 to %d bytes on one line", MEMACCT_MARK_NAME_MAX);
		return EXIT_USAGE;
	}
	if (end)
		snprintf(line, sizeof(line), "end\n");
	else
		snprintf(line, sizeof(line), "phase %s\n", argv[optind]);
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
