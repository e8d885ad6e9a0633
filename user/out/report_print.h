/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * report_print.h - the report model (report.h) printed: the process table
 * (libsmartcols), a compact JSON line, the host's memory budget, the OOM
 * post-mortems in words.
 */
#ifndef MEMACCT_REPORT_PRINT_H
#define MEMACCT_REPORT_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report.h"

/* print_host_budget() - the host's memory budget (hostpin.h struct hostmem)
 * and each node's, CPU-less nodes named, as lines into @f. */
void print_host_budget(FILE *f, const struct hostpin *h);

/* print_report_json() - one compact line of JSON on @f. */
void print_report_json(FILE *f, const struct report *r);

/*
 * print_report_plain() - the process table (libsmartcols: the columns and
 * --raw of report_table_getopt()) and the lines after it, in human units
 * (exact bytes with --bytes); 100 columns by default while figures fit.
 * With --csv only the table, as CSV in bytes (table_print_csv()), its
 * header line once per run of the program.
 */
void print_report_plain(FILE *f, const struct report *r);

/*
 * report_table_getopt() - run's and attach's --columns LIST / --raw / --csv
 * (OPT_TABLE_*, table.h) for print_report_plain(); --csv also sets
 * bytes_output. Prints the error, with the columns there are, and returns
 * -EINVAL on a bad list or --raw with --csv; else 0.
 */
int report_table_getopt(int opt, const char *arg);

/*
 * report_columns_help() - the --help text of run's and attach's --columns:
 * the default columns and every other one, named as --columns takes them,
 * from the same column table (so a column added is listed), lines broken
 * at 64 characters. Static storage, built on the first call.
 */
const char *report_columns_help(void);

/*
 * report_table_timed() - the reports come in a series (-i): --csv's default
 * columns end with ELAPSED_S (seconds since the start, each row of a report
 * the same), as they end with TIME under -T.
 */
void report_table_timed(bool timed);

/*
 * print_report() - JSON or plain by -j; @f stdout means report_stream() (-o
 * FILE). Returns report_written()'s 0 or negative errno; -EPIPE, writing
 * nothing, once the reader of the reports went away (reports_closed()).
 */
int print_report(FILE *f, const struct report *r);

/*
 * print_page_cache_files() - the page cache charged to a cgroup by file
 * (model/page_cache.h, issue 43): its sum now and the first five files in
 * @pc's order, each now and at its peak, a file nobody maps or holds open
 * said so (reclaimable, yet its active pages count in the kubelet's working
 * set); @since says from when ("since start"). Nothing when @pc is empty.
 */
void print_page_cache_files(FILE *f, const struct page_cache_files *pc, const char *since);

struct limits_req;

/*
 * limits_note() - after @r, on stderr: the --memory-max/--memory-high @req
 * set on @cg bit (OOM kills, memcg reclaims of the totals) and its victims.
 */
void limits_note(const struct memcg *cg, const struct limits_req *req, const struct report *r);

#endif
