/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * file_private: ground truth for copy-on-write of a private file mapping.
 *
 * Creates a temporary file of MiB (non-zero contents, fsync'ed, so its pages
 * sit in the page cache), maps it MAP_PRIVATE with PROT_READ|PROT_WRITE,
 * optionally reads every page first (--read-first: the page-cache pages get
 * mapped read-only, so each later write is a write-protect fault), then
 * writes one byte per page.  Every write copies a page-cache page into a
 * private anonymous page of this process:
 *   file_cow_bytes = MiB * 2^20, cow_bytes (anonymous CoW) = 0
 * (The dynamic loader's relocation writes add about ten file-CoW pages of
 * their own, in libc's and the program's data segments.)
 *
 * The file goes in DIR if given, else $TMPDIR, else /var/tmp, else /tmp, else
 * the current directory (the first that is writable); a disk-backed
 * filesystem is preferable to tmpfs, fs_is_tmpfs says which one it was.  The
 * file is removed before exit.
 *
 * Usage: file_private [MiB=32] [--read-first] [DIR]
 * Output (stdout):
 *   truth file_bytes B
 *   truth fs_is_tmpfs 0|1
 *   truth file_cow_bytes B
 *   truth cow_bytes 0
 *   truth pid PID
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/vfs.h>

#define PAGE 4096UL
#define TMPFS_MAGIC_ 0x01021994

static char path[PATH_MAX];

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void die(const char *what)
{
	fprintf(stderr, "file_private: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: file_private [MiB=32] [--read-first] [DIR]\n");
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
		snprintf(path, sizeof(path), "%s/memacct-file_private.XXXXXX", dirs[i]);
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

int main(int argc, char **argv)
{
	unsigned long mib = 32, npages, sum = 0;
	const char *dir = NULL;
	int read_first = 0, have_mib = 0, fd, is_tmpfs;
	volatile char *map;
	struct statfs sfs;
	char *chunk;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--read-first")) {
			read_first = 1;
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

	map = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	if (read_first) {
		for (unsigned long i = 0; i < npages; i++)
			sum += (unsigned char)map[i * PAGE];
		if (sum != npages * 0xa5) {
			fprintf(stderr, "file_private: mapped contents do not match the file\n");
			return 1;
		}
	}
	for (unsigned long i = 0; i < npages; i++)	/* one private copy per page */
		map[i * PAGE] = 0x11;

	printf("truth file_bytes %lu\n", npages * PAGE);
	printf("truth fs_is_tmpfs %d\n", is_tmpfs);
	printf("truth file_cow_bytes %lu\n", npages * PAGE);
	printf("truth cow_bytes 0\n");
	printf("truth pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");

	if (munmap((void *)map, npages * PAGE))
		die("munmap");
	close(fd);
	return 0;
}
