/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * page.h - PAGE, the running kernel's page size (4 KiB on x86; 4, 16 or
 * 64 KiB on arm64): the workloads stride, size and print their truth by it,
 * never by a literal 4096 (issue #24).
 */
#ifndef MEMACCT_WORKLOAD_PAGE_H
#define MEMACCT_WORKLOAD_PAGE_H

#include <unistd.h>

#define PAGE ((unsigned long)sysconf(_SC_PAGESIZE))

#endif
