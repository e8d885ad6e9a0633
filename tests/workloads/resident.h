/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * resident.h - how many of a file's first pages are in the page cache:
 * mincore(2) of a shared read-only mapping that is never touched (it adds
 * no page). The page_cache_* workloads' truth.
 */
#ifndef MEMACCT_WORKLOAD_RESIDENT_H
#define MEMACCT_WORKLOAD_RESIDENT_H

#include <stdlib.h>
#include <sys/mman.h>

#include "page.h"

/* resident pages of the first @n pages of @fd; -1 (errno set) on an error */
static inline long resident_pages(int fd, long n)
{
	unsigned char *vec = calloc(n, 1);
	void *p = mmap(NULL, n * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	long r = 0;

	if (!vec || p == MAP_FAILED || mincore(p, n * PAGE, vec)) {
		r = -1;
	} else {
		for (long i = 0; i < n; i++)
			r += vec[i] & 1;
	}
	if (p != MAP_FAILED)
		munmap(p, n * PAGE);
	free(vec);
	return r;
}

#endif
