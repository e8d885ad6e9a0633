/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * report_html.h - `memacct report FILE --html OUT`: a recording drawn as one
 * self-contained HTML file (no network, no script: inline SVG drawn here):
 * the cgroup's memory over time stacked by class (pinned, owned anon,
 * CoW-copied, shmem, page cache not reclaimable, reclaimable page cache),
 * a line per process for its RSS (the largest ones), the memory limit,
 * phase bands with their names, OOM kills and exits as markers, and under
 * it the phases' tables and the final report as report.c and
 * phases_print.c print them (docs/run.md "Recording").
 */
#ifndef MEMACCT_REPORT_HTML_H
#define MEMACCT_REPORT_HTML_H

#include <stdio.h>
#include <jansson.h>
#include "report.h"

struct html_doc;

/* html_new() - an empty drawing; NULL when out of memory. */
struct html_doc *html_new(void);
/*
 * html_add() - one snapshot of a recording (@kind: record.h's kinds) into
 * @d: its time (elapsed_s), the cgroup's classes, each live process's RSS,
 * the exits and OOM kills since the one before; the "final" one also its
 * phases and its text (print_report_plain()). 0 or -ENOMEM.
 */
int html_add(struct html_doc *d, const struct report *r, const char *kind);
/*
 * html_write() - the page to @f; @header: the recording's first line (the
 * command, its start, the limit). 0, or -EIO when @f failed.
 */
int html_write(struct html_doc *d, FILE *f, const json_t *header);
void html_free(struct html_doc *d);

#endif
