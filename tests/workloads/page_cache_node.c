/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * page_cache_node: ground truth for page cache on a chosen NUMA node (a
 * CPU-less one in tests/vmtest/), with raw syscalls (no libnuma).
 *
 * 1. Writes PAGES pages to PATH (a disk file system: tmpfs pages would be
 *    shmem), fsync()s and drops them with POSIX_FADV_DONTNEED: mincore()
 *    must then find none resident ("truth resident_before 0").
 * 2. Pins itself to CPU 0 and binds its memory policy to NODE with
 *    set_mempolicy(MPOL_BIND): every page it allocates from now on, page
 *    cache included, comes from NODE.
 * 3. read()s PATH: PAGES pages of clean page cache on NODE. move_pages()
 *    with no target reports the node of each ("truth pages_on_node N");
 *    mincore() counts them resident ("truth resident_after N").
 * 4. POSIX_FADV_DONTNEED on an empty file drains this CPU's LRU batch
 *    (mm/fadvise.c lru_add_drain()), so that the node's Active(file) +
 *    Inactive(file) hold the pages, not only its FilePages.
 * The pages stay cached after exit: the node's page cache is then up by
 * exactly PAGES pages (the node has no CPU: nothing else allocates there).
 *
 * Usage: page_cache_node NODE PATH PAGES
 * Output (stdout): truth KEY VALUE lines; exit 1 on an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "page.h"
#include "resident.h"
#define MPOL_BIND	2

static void die(const char *what)
{
	fprintf(stderr, "page_cache_node: %s: %s\n", what, strerror(errno));
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

/* pages of the file's mapping that move_pages() places on @node; touches
 * each page through the mapping (already cached: no new page) */
static long on_node(int fd, long n, int node)
{
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	volatile char *p = mmap(NULL, n * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	long r = 0;

	if (!pages || !status || p == MAP_FAILED)
		die("mmap");
	for (long i = 0; i < n; i++) {
		(void)p[i * PAGE];
		pages[i] = (char *)p + i * PAGE;
	}
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		die("move_pages");
	for (long i = 0; i < n; i++)
		r += status[i] == node;
	munmap((void *)p, n * PAGE);
	free(pages);
	free(status);
	return r;
}

int main(int argc, char **argv)
{
	char *buf;
	unsigned long mask[16] = { 0 };
	cpu_set_t cpus;
	long n, node, done;
	char *end, drain[4096];
	int fd, dfd;

	if (argc != 4) {
		fprintf(stderr, "usage: page_cache_node NODE PATH PAGES\n");
		return 2;
	}
	node = strtol(argv[1], &end, 10);
	if (*end || node < 0 || node >= 1024)
		return 2;
	n = strtol(argv[3], &end, 10);
	if (*end || n <= 0)
		return 2;
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(argv[2]);
	buf = malloc(64 * PAGE);	/* written before the bind: not on the node */
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, 64 * PAGE);
	for (done = 0; done < n; done += 64) {
		size_t len = (n - done < 64 ? n - done : 64) * PAGE;

		if (write(fd, buf, len) != (ssize_t)len)
			die("write");
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fsync");
	printf("truth resident_before %ld\n", resident(fd, n));
	/* created before the bind: its inode and directory entry allocate
	 * nothing on the node */
	snprintf(drain, sizeof(drain), "%s.drain", argv[2]);
	dfd = open(drain, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (dfd < 0)
		die(drain);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity");
	mask[node / 64] = 1UL << (node % 64);
	if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, 1024))
		die("set_mempolicy");
	if (lseek(fd, 0, SEEK_SET))
		die("lseek");
	for (done = 0; done < n; done += 64) {
		size_t len = (n - done < 64 ? n - done : 64) * PAGE;

		if (read(fd, buf, len) != (ssize_t)len)
			die("read");
	}
	if (posix_fadvise(dfd, 0, 0, POSIX_FADV_DONTNEED))
		die(drain);
	close(dfd);
	unlink(drain);
	printf("truth pages %ld\n", n);
	printf("truth resident_after %ld\n", resident(fd, n));
	printf("truth pages_on_node %ld\n", on_node(fd, n, node));
	close(fd);
	return 0;
}
