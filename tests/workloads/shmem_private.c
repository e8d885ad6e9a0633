/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * shmem_private: ground truth for a MAP_PRIVATE mapping of a shmem file (a
 * memfd) that starts as holes, where a read fault allocates the page-cache
 * page itself (a shmem page, not a copy) and a write copies:
 *
 *  1. reads every page of the first half: holes filled in the page cache,
 *     mapped read-only. No copy.
 *  2. writes one byte in each page of the first quarter (read before): a
 *     write-protect fault copies the page-cache page (wp_page_copy()).
 *  3. writes one byte in each page of the third quarter (never read: holes):
 *     the fault copies (do_cow_fault()) after shmem fills the hole.
 *   file_cow_bytes = pages / 2 * page size + loader, cow_bytes = 0
 * where loader is the dynamic loader's relocation writes, about ten file-CoW
 * pages, read from /proc/self/smaps before the memfd is mapped (vm_status.h).
 * THP is off for the mapping (MADV_NOHUGEPAGE): base pages only.
 *
 * Usage: shmem_private [MiB=16]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth read_only_bytes B     (read, never written: no copy)
 *   truth file_cow_bytes B
 *   truth cow_bytes 0
 *   truth pid PID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "vm_status.h"

static void die(const char *what)
{
	fprintf(stderr, "shmem_private: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	long ps = sysconf(_SC_PAGESIZE);
	unsigned long mib = 16, n, q;
	volatile char *buf;
	unsigned long sum = 0;
	long long loader;
	char *end;
	int fd;

	if (argc > 2) {
		fprintf(stderr, "usage: shmem_private [MiB=16]\n");
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		mib = strtoul(argv[1], &end, 10);
		if (errno || *end || end == argv[1] || !mib) {
			fprintf(stderr, "usage: shmem_private [MiB=16]\n");
			return 2;
		}
	}
	n = mib * (1024 * 1024 / ps);
	q = n / 4;
	fd = memfd_create("shmem_private", MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create");
	if (ftruncate(fd, n * ps))
		die("ftruncate");
	loader = private_file_anon_bytes("shmem_private");
	buf = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (madvise((void *)buf, n * ps, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (unsigned long i = 0; i < 2 * q; i++)
		sum += buf[i * ps];
	for (unsigned long i = 0; i < q; i++)
		buf[i * ps] = 1;
	for (unsigned long i = 2 * q; i < 3 * q; i++)
		buf[i * ps] = 1;
	if (sum)
		fprintf(stderr, "shmem_private: holes read %lu, not 0\n", sum);
	printf("truth buffer_bytes %lu\n", n * ps);
	printf("truth read_only_bytes %lu\n", q * ps);
	printf("truth file_cow_bytes %lld\n", (long long)(2 * q * ps) + loader);
	printf("truth cow_bytes 0\n");
	printf("truth pid %d\n", (int)getpid());
	return fflush(stdout) ? 1 : 0;
}
