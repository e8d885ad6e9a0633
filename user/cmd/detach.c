// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * detach.c - `memacct detach` (and `daemon --stop-kernel-side`): unpin a
 * daemon's kernel side, never while a daemon holds its directory's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include "commands.h"
#include "pin.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

int detach_kernel_side(const char *dir)
{
	int fd, err;

	if (pin_check_dir(dir))	/* printed; D4: nothing removed off a bpffs */
		return EXIT_USAGE;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			p_info("nothing pinned at %s", dir);
			return EXIT_OK;
		}
		p_err("%s: %s", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		p_err("a memacct daemon runs on %s: stop it first", dir);
		close(fd);
		return EXIT_RUNTIME;
	}
	err = pin_remove(dir);
	close(fd);
	if (err == -ENOTSUP)	/* not a bpffs directory: printed */
		return EXIT_USAGE;
	if (err) {
		p_err("unpinning %s: %s", dir, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* detach's options (memacct help detach), parsed by parse_args(). */
struct detach_env {
	const char *pin_dir;		/* --pin-path: the kernel side to remove */
};

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct detach_env *env)
{
	static const struct option opts[] = {
		{ "pin-path", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage_print(stdout, "detach");
			return -1;
		}
		if (c != 'p')
			return opt_error("detach", c, argv);
		env->pin_dir = optarg;
	}
	if (optind < argc) {
		p_err("detach: unexpected argument '%s' (memacct detach [--pin-path DIR])",
		      argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

int do_detach(int argc, char **argv)
{
	struct detach_env env = { .pin_dir = PIN_DEFAULT_DIR };
	int ret;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (geteuid() != 0) {
		p_err("memacct detach needs root");
		return EXIT_ENV;
	}
	return detach_kernel_side(env.pin_dir);
}
