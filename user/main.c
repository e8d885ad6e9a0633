// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* main.c - command table and global options. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define MEMACCT_VERSION "0.1.0"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "run", do_run, "run [-j] [--interval DUR] -- CMD [ARGS...]" },
	{ "attach", do_attach,
	  "attach --cgroup NAME|PATH | --pid PID [-j] [--interval DUR] [--duration DUR]" },
	{ "explain", do_explain, "explain PID | --cgroup NAME|PATH [-j] [--by mapping|file|kind] [--top N] [--watch DUR]" },
	{ "audit", do_audit,
	  "audit [--cgroup NAME|PATH ...] [--pinned-cap SIZE|PCT%] [--per-process-cap SIZE|PCT%]\n"
	  "                [--of-limit] [--watch DUR] [-j] [--enforce-rlimit] [--restore-rlimit]" },
	{ "daemon", do_daemon,
	  "daemon [--listen ADDR:PORT] [--interval DUR] [--pin-path DIR] [--json-log FILE] [--cgroup-filter PATH]... [--top-processes N] | --stop-kernel-side" },
	{ "detach", do_detach, "detach [--pin-path DIR]   (remove the daemon's pinned kernel side)" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: memacct [-j] [-v] COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  memacct %s\n", cmds[i].help);
	fprintf(f, "\nGlobal options: -j/--json JSON output, -v/--verbose libbpf log, "
		"-h/--help, -V/--version\n"
		"Exit codes: 0 ok, 1 audit violation, 2 usage, 3 environment (root, BTF),\n"
		"4 runtime; run exits with CMD's status. See memacct(1).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+jvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("memacct %s\n", MEMACCT_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0;	/* let the command's getopt_long start afresh */
		return cmds[i].fn(argc, argv);
	}
	p_err("unknown command '%s' (memacct --help lists them)", argv[optind]);
	return EXIT_USAGE;
}
