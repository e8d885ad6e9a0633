/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * file_map.h: the body of file_private.c and file_shared.c, which differ
 * only in MAP_PRIVATE vs MAP_SHARED and in their truth (see each file).
 */
#ifndef MEMACCT_FILE_MAP_H
#define MEMACCT_FILE_MAP_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include "deadline.h"

#include "page.h"
#include "vm_status.h"
#define TMPFS_MAGIC_ 0x01021994

static char path[PATH_MAX];
static const char *prog;
static int shared;
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [MiB=32] [--read-first] [--hold S] [DIR]\n", prog);
	exit(2);
}

/* Create and open a temporary file in the first usable directory. */
static int make_temp(const char *dir_arg)
{
	const char *dirs[] = { dir_arg, getenv("TMPDIR"), "/var/tmp", "/tmp", "." };
	int fd;

	for (unsigned int i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/memacct-%s.XXXXXX", dirs[i], prog);
		fd = mkstemp(path);
		if (fd >= 0)
			return fd;
		if (dirs[i] == dir_arg)
			die(path);
	}
	path[0] = 0;
	die("mkstemp: no writable temporary directory");
	return -1;
}

/*
 * The whole workload: name is the program's name (messages, file name),
 * map_shared selects MAP_SHARED instead of MAP_PRIVATE.  Returns the exit
 * status (exits itself on errors).
 */
static int file_map_main(const char *name, int map_shared, int argc, char **argv)
{
	unsigned long mib = 32, npages, sum = 0;
	long long loader;
	const char *dir = NULL;
	int read_first = 0, have_mib = 0, fd, is_tmpfs;
	long hold = 0;
	volatile char *map;
	struct statfs sfs;
	char *chunk;

	prog = name;
	shared = map_shared;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--read-first")) {
			read_first = 1;
		} else if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
			hold = strtol(argv[++i], &end, 10);
			if (*end || hold <= 0)
				usage();
		} else if (!have_mib && argv[i][0] >= '0' && argv[i][0] <= '9') {
			errno = 0;
			mib = strtoul(argv[i], &end, 10);
			if (errno || *end || mib == 0)
				usage();
			have_mib = 1;
		} else if (!dir && argv[i][0] != '-') {
			dir = argv[i];
		} else {
			usage();
		}
	}
	npages = mib * (1024 * 1024 / PAGE);

	fd = make_temp(dir);
	atexit(cleanup);
	if (fstatfs(fd, &sfs))
		die("fstatfs");
	is_tmpfs = sfs.f_type == TMPFS_MAGIC_;

	chunk = malloc(1024 * 1024);
	if (!chunk)
		die("malloc");
	memset(chunk, 0xa5, 1024 * 1024);
	for (unsigned long i = 0; i < mib; i++) {
		size_t off = 0;

		while (off < 1024 * 1024) {
			ssize_t n = write(fd, chunk + off, 1024 * 1024 - off);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				die("write");
			}
			off += n;
		}
	}
	free(chunk);
	if (fsync(fd))
		die("fsync");

	loader = private_file_anon_bytes(prog);	/* the file pages copied so far */
	map = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	if (read_first) {
		for (unsigned long i = 0; i < npages; i++)
			sum += (unsigned char)map[i * PAGE];
		if (sum != npages * 0xa5) {
			fprintf(stderr, "%s: mapped contents do not match the file\n", prog);
			return 1;
		}
	}
	/* private: one copy per page; shared: dirties the page-cache page */
	for (unsigned long i = 0; i < npages; i++)
		map[i * PAGE] = 0x11;

	printf("truth file_bytes %lu\n", npages * PAGE);
	printf("truth fs_is_tmpfs %d\n", is_tmpfs);
	printf("truth file_cow_bytes %lld\n", (shared ? 0 : (long long)(npages * PAGE)) + loader);
	printf("truth cow_bytes 0\n");
	if (shared)
		printf("truth shared_dirty_bytes %lu\n", npages * PAGE);
	printf("truth pid %d\n", (int)getpid());
	if (hold)
		printf("ready %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	if (hold) {	/* alive with its copies until SIGTERM/SIGINT or S seconds */
		long long deadline = deadline_in(hold);
		struct sigaction sa = { .sa_handler = on_stop };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		while (!stop && !past_deadline(deadline))
			usleep(20000);
	}

	if (munmap((void *)map, npages * PAGE))
		die("munmap");
	close(fd);
	return 0;
}

#endif /* MEMACCT_FILE_MAP_H */
