/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* oom_print.h - an OOM post-mortem in words (oom_print.c). */
#ifndef MEMACCT_OOM_PRINT_H
#define MEMACCT_OOM_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

/*
 * oom_print_json() - a post-mortem as lines for a person from its JSON
 * object (oom_json(), or one read back from the daemon's log), to @f:
 * the verdict, the victim and the limited memcg's stocks, the processes,
 * what grew. @full: every process (memacct oom --last), else the five
 * largest.
 */
void oom_print_json(FILE *f, const json_t *o, bool full);

/*
 * oom_warning_print() - one OOM forecast warning (an "oom_warnings" item,
 * oom_forecast.h oom_warning_json()) as a line, prefixed by @prefix, to @f:
 * the cgroup, the time to its limit, the growth and the class that grows,
 * the process whose class grew most.
 */
void oom_warning_print(FILE *f, const char *prefix, const json_t *w);

#endif
