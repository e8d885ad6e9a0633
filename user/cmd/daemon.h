/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * daemon.h - helpers of `memacct daemon` that are pure functions, exposed for
 * unit tests.
 */
#ifndef MEMACCT_DAEMON_H
#define MEMACCT_DAEMON_H

#include <stddef.h>

/*
 * daemon_filter_normalize() - a --cgroup-filter value as the path below the
 * memory hierarchy root @root that the daemon compares with: an absolute
 * cgroupfs path under @root, or a path below the root with or without its
 * leading '/', repeated and trailing slashes dropped ("rel-a", "/rel-a/",
 * "@root/rel-a" all give "/rel-a"; @root itself gives "/"). Writes @out
 * (size @n). 0, or -ENAMETOOLONG.
 */
int daemon_filter_normalize(const char *root, const char *in, char *out, size_t n);

#endif
