/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pagemap.h: the kernel's own page tables as ground truth for the workloads
 * (zero_fill.c, cow_mmap_churn.c): the frame number of each page of a
 * buffer, from /proc/self/pagemap (bit 63 present, bits 0-54 the frame
 * number, shown to CAP_SYS_ADMIN only; Documentation/admin-guide/mm/pagemap.rst).
 */
#ifndef MEMACCT_PAGEMAP_H
#define MEMACCT_PAGEMAP_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "page.h"

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/*
 * Frame number of each of the @npages 4 KiB pages at @buf into @pfn (0: not
 * present, or no CAP_SYS_ADMIN); @prog names the workload in messages.
 * Exits 1 when pagemap cannot be read.
 */
static void pagemap_frames(const char *prog, const volatile void *buf, unsigned long npages,
			   uint64_t *pfn)
{
	size_t len = npages * sizeof(*pfn), got = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "%s: open /proc/self/pagemap: %s\n", prog, strerror(errno));
		exit(1);
	}
	while (got < len) {
		ssize_t n = pread(fd, (char *)pfn + got, len - got,
				  (off_t)((uintptr_t)buf / PAGE * sizeof(*pfn) + got));

		if (n <= 0) {
			fprintf(stderr, "%s: read /proc/self/pagemap: %s\n", prog,
				n ? strerror(errno) : "short read");
			exit(1);
		}
		got += (size_t)n;
	}
	close(fd);
	for (unsigned long i = 0; i < npages; i++)
		pfn[i] = pfn[i] & PM_PRESENT ? pfn[i] & PM_PFN_MASK : 0;
}

#endif /* MEMACCT_PAGEMAP_H */
