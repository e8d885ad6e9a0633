/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * usage.h - the one usage text of each command: `memacct CMD --help`,
 * `memacct help [CMD]` and the man page docs/memacct.1 (`make man`) are all
 * printed from it, so they cannot drift. tests/unit_usage.c checks that every
 * option of every getopt table in user/ is in it and in docs/memacct.1.
 */
#ifndef MEMACCT_USAGE_H
#define MEMACCT_USAGE_H

#include <stdio.h>

#include "util.h"	/* MEMACCT_VERSION */

struct usage_opt {
	const char *names;	/* "-j, --json" or "--interval" */
	const char *arg;	/* "DUR", or NULL for a flag */
	const char *help;	/* plain text; '\n' separates lines of --help;
				 * USAGE_HELP_*: made from a table */
};

/* The help of an option that is made from a column table: run and
 * attach's --columns (report_columns_help()), top's --sort (top_sort_help()) */
#define USAGE_HELP_COLUMNS "\001columns"
#define USAGE_HELP_TOP_SORT "\001top-sort"

/* usage_opt_help() - the help text of @o: o->help, or the text it names. */
const char *usage_opt_help(const struct usage_opt *o);

struct cmd_usage {
	const char *name;	/* "run"; NULL: the global options */
	const char *purpose;	/* one line, lower case, no period: `memacct --help` */
	const char *synopsis;	/* after "memacct "; '\n' separates forms */
	const char *summary;	/* what it does; '\n' separates lines */
	const struct usage_opt *opts;	/* ends with { NULL } */
	const char *details;	/* man page only, or NULL */
};

/* usage_find() - the usage of command @name, NULL if there is none. */
const struct cmd_usage *usage_find(const char *name);

/* usage_all() - every command's usage, the global options last (name NULL);
 * *@n gets their number. Static storage. */
const struct cmd_usage *usage_all(int *n);

/* usage_print() - the --help text of @name (NULL: memacct itself) on @f. */
void usage_print(FILE *f, const char *name);

/* usage_man() - the whole man page memacct(1) in troff on @f. */
void usage_man(FILE *f);

#endif
