/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * table.h - tables for a person or a script through util-linux's
 * libsmartcols (as lsblk and findmnt print theirs): column choice
 * (--columns), --raw, and widths that grow with their figures; CSV
 * (--csv), which libsmartcols 2.38 does not write.
 */
#ifndef MEMACCT_TABLE_H
#define MEMACCT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TABLE_MAX_COLS	32

/* One column a table can show. */
struct table_col {
	const char *name;	/* for --columns and the --raw header: "RSS_PEAK" */
	const char *header;	/* the default header: "RSS PEAK" */
	int width;		/* least width in the default layout */
	bool left;		/* left-aligned (names); figures are right-aligned */
	const char *help;	/* what the column holds, for the error listing them */
};

/* --columns and --raw of one command's table (set by table_getopt()) */
struct table_opts {
	int sel[TABLE_MAX_COLS];	/* indexes into the command's columns */
	int nsel;			/* 0: the command's default columns */
	bool raw;
	bool csv;
};

enum {
	OPT_TABLE_COLUMNS = 0x300,
	OPT_TABLE_RAW,
	OPT_TABLE_CSV,
};

#define TABLE_LONG_OPTIONS \
	{ "columns", required_argument, NULL, OPT_TABLE_COLUMNS }, \
	{ "raw", no_argument, NULL, OPT_TABLE_RAW }, \
	{ "csv", no_argument, NULL, OPT_TABLE_CSV }

/*
 * table_getopt() - handle OPT_TABLE_COLUMNS (@arg: comma-separated names of
 * @cols, case-insensitive; '-' may stand for '_'), OPT_TABLE_RAW or
 * OPT_TABLE_CSV into @o. Prints the error, naming every column, and returns
 * -EINVAL on an unknown or repeated name or an empty list, or on --raw with
 * --csv; 0 on success.
 */
int table_getopt(int opt, const char *arg, const struct table_col *cols, int ncols,
		 struct table_opts *o);

/*
 * table_print() - print @nrows rows of @ncols cells each (@cells, row after
 * row, one cell per column of @cols; NULL prints as empty), the columns @sel
 * of @cols (@nsel of them) in that order, to @f: the
 * default layout (a header line, columns at least their width apart by one
 * space, never shrunk to the terminal), or with @raw one space between
 * unpadded fields and blanks inside a field as \x20, headers by name.
 * Returns 0, or a negative errno (-ENOMEM) with nothing printed.
 */
int table_print(FILE *f, const struct table_col *cols, int ncols, const int *sel, int nsel,
		bool raw, const char *const *cells, int nrows);

/*
 * table_print_csv() - the same cells as CSV (RFC 4180) on @f: with @header
 * first a line of the columns' names, then a line per row, fields separated
 * by commas and lines ended by CRLF; a field holding a comma, a double
 * quote, CR or LF, or a blank at either end is quoted, its quotes doubled.
 * NULL cells are empty fields. Returns 0, or -EIO when @f has an error.
 */
int table_print_csv(FILE *f, const struct table_col *cols, int ncols, const int *sel, int nsel,
		    const char *const *cells, int nrows, bool header);

/*
 * A grid of cells that own their text, for tables built row by row (explain,
 * audit): table_cells_init() allocates @nrows x @ncols cells of @cell bytes
 * (0, or -ENOMEM); table_cell() is the buffer of one (written by the caller,
 * shown by the table; a cell never asked for prints empty);
 * table_cells_bytes() writes a figure in bytes (human units, or exact with
 * --bytes); table_cells_print() prints every column of @cols in order
 * (table_print()) and frees the grid: 0 or negative errno.
 */
struct table_cells {
	const char **cells;
	char *store;
	int ncols;
	size_t cell;
};

int table_cells_init(struct table_cells *t, int ncols, size_t nrows, size_t cell);
char *table_cell(struct table_cells *t, size_t row, int col);
void table_cells_bytes(struct table_cells *t, size_t row, int col, uint64_t v);
int table_cells_print(FILE *f, struct table_cells *t, const struct table_col *cols, size_t nrows,
		      bool raw);
/* table_cells_free() - free the grid without printing it. */
void table_cells_free(struct table_cells *t);

/* print_wrapped() - "@prefix@text" to @f in lines of at most 100 columns,
 * broken at spaces, the next lines indented by 2. */
void print_wrapped(FILE *f, const char *prefix, const char *text);

#endif /* MEMACCT_TABLE_H */
