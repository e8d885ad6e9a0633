// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* main.c - command table and global options. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "signals.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static int do_help(int argc, char **argv);

/* usage.c has each command's synopsis and options */
static const struct cmd cmds[] = {
	{ "run", do_run },
	{ "attach", do_attach },
	{ "top", do_top },
	{ "explain", do_explain },
	{ "audit", do_audit },
	{ "daemon", do_daemon },
	{ "detach", do_detach },
	{ "reclaim", do_reclaim },
	{ "oom", do_oom },
	{ "mark", do_mark },
	{ "report", do_report },
	{ "help", do_help },
};

static void usage(FILE *f)
{
	usage_print(f, NULL);
}

/* memacct help [COMMAND]: the list of commands, or COMMAND's --help. */
static int do_help(int argc, char **argv)
{
	if (argc > 2) {
		p_err("help: unexpected argument '%s' (memacct help [COMMAND])", argv[2]);
		return EXIT_USAGE;
	}
	if (argc == 2 && !usage_find(argv[1])) {
		p_err("help: unknown command '%s' (memacct help lists them)", argv[1]);
		return EXIT_USAGE;
	}
	usage_print(stdout, argc == 2 ? argv[1] : NULL);
	return EXIT_OK;
}

/*
 * A report that could not be written (a full disk, -o on a full file
 * system) fails the command with EXIT_RUNTIME instead of exit 0 with a
 * truncated or empty report; @ret is the command's status. A reader that
 * went away (EPIPE: run and attach ignore SIGPIPE) is no failure: run
 * exits with CMD's status, attach with 0 (report_written()).
 */
static int output_written(int ret)
{
	FILE *f[] = { report_stream(), stdout };

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i] == report_stream() && reports_closed())
			continue;
		if (!fflush(f[i]) && !ferror(f[i]))
			continue;
		p_err("writing the %s: %s", f[i] == stdout ? "standard output" : "-o file",
		      ferror(f[i]) && !errno ? "I/O error" : strerror(errno));
		return ret == EXIT_OK || ret == EXIT_VIOLATION ? EXIT_RUNTIME : ret;
	}
	return ret;
}

/*
 * fds 0, 1 and 2 that were closed (`>&-`) are opened on /dev/null before
 * anything else opens a file: else the first BPF object, perf event or
 * socket would become fd 1 or 2, and reports or warnings would be written
 * into it (run's report went to a perf event fd and run exited 4; the
 * daemon's warnings went to its listening socket). CMD inherits them so.
 */
static void open_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free fd: @fd itself, as those below it are open */
		nfd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "timestamp", no_argument, NULL, 'T' },
		{ "bytes", no_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	const char *out = NULL;
	int c, err;

	open_std_fds();
	signals_save_inherited();
	opterr = 0;	/* getopt errors: one opt_error() line each */
	while ((c = getopt_long(argc, argv, "+:jvhVTo:", opts, NULL)) != -1) {
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
		case 'T':
			timestamps = true;
			break;
		case 'B':
			bytes_output = true;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return opt_error(NULL, c, argv);
		}
	}
	if (optind >= argc) {
		p_err("no command given (memacct --help lists them)");
		return EXIT_USAGE;
	}
	if (out) {
		err = set_report_file(out);
		if (err) {
			p_err("-o %s: %s", out, strerror(-err));
			return EXIT_USAGE;
		}
		/* no CMD shares our stdout but run's: the others print there directly */
		if (strcmp(argv[optind], "run")) {
			fflush(stdout);
			if (dup2(fileno(report_stream()), STDOUT_FILENO) < 0) {
				p_err("-o %s: %s", out, strerror(errno));
				return EXIT_RUNTIME;
			}
		}
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0;	/* let the command's getopt_long start afresh */
		return output_written(cmds[i].fn(argc, argv));
	}
	p_err("unknown command '%s' (memacct --help lists them)", argv[optind]);
	return EXIT_USAGE;
}
