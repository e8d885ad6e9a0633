/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * page_cache_files: ground truth for the page cache by file (issue 43).
 *
 * For each NAME:MIB[:cached] in order, the file DIR/NAME of MIB MiB (a disk
 * file system: tmpfs pages are shmem, not in the figure):
 * - made when missing or of another size (written, then fsync()ed);
 * - without ":cached", dropped from the page cache (POSIX_FADV_DONTNEED,
 *   which drains the per-CPU LRU batches and retries) and mincore() must
 *   find none of it resident; with ":cached" the file must be cached
 *   already, by someone else (another cgroup's pages stay charged there);
 * - read() whole, 1 MiB at a time.
 * mincore() before and after the read gives the pages this process brought
 * into the page cache: "truth NAME_bytes B" is what memacct must find
 * charged to this cgroup for the file (a file made here and kept cached:
 * all of it), "truth NAME_ino N" its inode.
 *
 * Usage: page_cache_files DIR NAME:MIB[:cached]...
 *        page_cache_files --resident PATH...
 * Output (stdout): truth KEY VALUE lines; exit 1 on an error. --resident
 * reads only: "truth NAME_resident_bytes B" of each file now (NAME: its
 * last component), what is left when the kernel reclaimed some since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "page.h"
#include "resident.h"

#define CHUNK	(1UL << 20)

static void die(const char *what)
{
	fprintf(stderr, "page_cache_files: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* resident pages of the file's first @n pages; dies on an error */
static long resident(int fd, long n)
{
	long r = resident_pages(fd, n);

	if (r < 0)
		die("mincore");
	return r;
}

/* @path made @bytes long: true when written now */
static int make_file(const char *path, unsigned long bytes, char *buf)
{
	struct stat st;
	int fd;

	if (!stat(path, &st) && (unsigned long)st.st_size == bytes)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	for (unsigned long done = 0; done < bytes; done += CHUNK)
		if (write(fd, buf, CHUNK) != (ssize_t)CHUNK)
			die("write");
	if (fsync(fd))
		die("fsync");
	close(fd);
	return 1;
}

/* --resident: each file's resident bytes now */
static int print_resident(int n, char **paths)
{
	for (int i = 0; i < n; i++) {
		const char *name = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		struct stat st;

		if (fd < 0 || fstat(fd, &st))
			die(paths[i]);
		printf("truth %s_resident_bytes %ld\n", name,
		       resident(fd, (st.st_size + PAGE - 1) / PAGE) * (long)PAGE);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *buf;

	if (argc > 1 && !strcmp(argv[1], "--resident"))
		return print_resident(argc - 2, argv + 2);
	buf = malloc(CHUNK);

	if (argc < 3) {
		fprintf(stderr, "usage: page_cache_files DIR NAME:MIB[:cached]...\n");
		return 2;
	}
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, CHUNK);
	for (int i = 2; i < argc; i++) {
		char name[256], path[4096], *mode;
		long mib = 0, pages, before, after;
		int made, fd, cached;
		struct stat st;

		if (sscanf(argv[i], "%255[^:]:%ld", name, &mib) != 2 || mib <= 0) {
			fprintf(stderr, "page_cache_files: bad spec %s\n", argv[i]);
			return 2;
		}
		mode = strchr(strchr(argv[i], ':') + 1, ':');
		cached = mode && !strcmp(mode, ":cached");
		snprintf(path, sizeof(path), "%s/%s", argv[1], name);
		made = make_file(path, mib * CHUNK, buf);
		pages = mib * CHUNK / PAGE;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			die(path);
		if (!cached && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			die("posix_fadvise");
		before = resident(fd, pages);
		if (!cached && before) {
			fprintf(stderr, "page_cache_files: %s: %ld pages still cached\n", name, before);
			return 1;
		}
		if (cached && !made && before != pages) {
			fprintf(stderr, "page_cache_files: %s: %ld of %ld pages cached, all "
				"expected\n", name, before, pages);
			return 1;
		}
		for (ssize_t n; (n = read(fd, buf, CHUNK)) > 0;)
			;
		after = resident(fd, pages);
		printf("truth %s_bytes %ld\n", name,
		       (cached && made ? after : after - before) * (long)PAGE);
		printf("truth %s_ino %llu\n", name, (unsigned long long)st.st_ino);
		close(fd);
	}
	fflush(stdout);
	return 0;
}
