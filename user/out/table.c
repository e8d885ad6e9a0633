// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* table.c - tables through libsmartcols: --columns, --raw; CSV (table.h). */
#include <ctype.h>
#include <errno.h>
#include <libsmartcols/libsmartcols.h>
#include <string.h>
#include "table.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* @len bytes of @s name @name: case-insensitive, '-' standing for '_' */
static bool col_name_is(const char *s, size_t len, const char *name)
{
	size_t i;

	for (i = 0; i < len && name[i]; i++) {
		char c = s[i] == '-' ? '_' : s[i];

		if (toupper((unsigned char)c) != toupper((unsigned char)name[i]))
			return false;
	}
	return i == len && !name[i];
}

static void print_col_list(FILE *f, const struct table_col *cols, int ncols)
{
	fprintf(f, "Columns:\n");
	for (int i = 0; i < ncols; i++)
		fprintf(f, "  %-12s %s\n", cols[i].name, cols[i].help);
}

int table_getopt(int opt, const char *arg, const struct table_col *cols, int ncols,
		 struct table_opts *o)
{
	const char *p = arg;

	if (opt == OPT_TABLE_RAW || opt == OPT_TABLE_CSV) {
		if (opt == OPT_TABLE_RAW)
			o->raw = true;
		else
			o->csv = true;
		if (o->raw && o->csv) {
			p_err("--raw and --csv: give one table format");
			return -EINVAL;
		}
		return 0;
	}
	o->nsel = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		int c;

		for (c = 0; c < ncols; c++)
			if (col_name_is(p, len, cols[c].name))
				break;
		for (int i = 0; c < ncols && i < o->nsel; i++)
			if (o->sel[i] == c) {
				p_err("bad --columns '%s': %s given twice", arg, cols[c].name);
				return -EINVAL;
			}
		if (c == ncols || o->nsel == TABLE_MAX_COLS) {
			p_err("bad --columns '%s': no column '%.*s' (a comma-separated list)",
			      arg, (int)len, p);
			print_col_list(stderr, cols, ncols);
			return -EINVAL;
		}
		o->sel[o->nsel++] = c;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int table_print(FILE *f, const struct table_col *cols, int ncols, const int *sel, int nsel,
		bool raw, const char *const *cells, int nrows)
{
	struct libscols_table *tb = scols_new_table();
	int err = -ENOMEM;

	if (!tb)
		return -ENOMEM;
	/* the same layout on a terminal as in a pipe: never cut to its width */
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_NEVER);
	scols_table_enable_raw(tb, raw);
	for (int i = 0; i < nsel; i++) {
		const struct table_col *c = &cols[sel[i]];
		char head[64];

		/*
		 * A width hint is no least width to libsmartcols 2.38 off a
		 * terminal: the header, padded to it, is (the layout of the
		 * printf tables this replaced, which scripts split on blanks).
		 */
		snprintf(head, sizeof(head), c->left ? "%-*s" : "%*s", raw ? 0 : c->width,
			 raw ? c->name : c->header);
		if (!scols_table_new_column(tb, head, 0, c->left ? 0 : SCOLS_FL_RIGHT))
			goto out_unref;
	}
	for (int r = 0; r < nrows; r++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			goto out_unref;
		for (int i = 0; i < nsel; i++) {
			const char *v = cells[(size_t)r * ncols + sel[i]];

			if (v && scols_line_set_data(ln, i, v))
				goto out_unref;
		}
	}
	scols_table_set_stream(tb, f);
	err = scols_print_table(tb) ? -EIO : 0;
out_unref:
	scols_unref_table(tb);
	return err;
}

/* One CSV field (table_print_csv()). */
static void csv_field(FILE *f, const char *v)
{
	size_t n = strlen(v);

	if (!strpbrk(v, ",\"\r\n") && !(n && (isblank((unsigned char)v[0]) ||
						isblank((unsigned char)v[n - 1])))) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

int table_print_csv(FILE *f, const struct table_col *cols, int ncols, const int *sel, int nsel,
		    const char *const *cells, int nrows, bool header)
{
	for (int i = 0; header && i < nsel; i++) {
		csv_field(f, cols[sel[i]].name);
		fputs(i + 1 < nsel ? "," : "\r\n", f);
	}
	for (int r = 0; r < nrows; r++)
		for (int i = 0; i < nsel; i++) {
			const char *v = cells[(size_t)r * ncols + sel[i]];

			csv_field(f, v ? v : "");
			fputs(i + 1 < nsel ? "," : "\r\n", f);
		}
	return ferror(f) ? -EIO : 0;
}

/* where the cells of a grid that could not be allocated are written */
static char cell_sink[256];

int table_cells_init(struct table_cells *t, int ncols, size_t nrows, size_t cell)
{
	t->ncols = ncols;
	t->cell = cell;
	t->cells = calloc(nrows * ncols + 1, sizeof(*t->cells));
	t->store = calloc(nrows * ncols + 1, cell);
	if (t->cells && t->store)
		return 0;
	free(t->cells);
	free(t->store);
	t->cells = NULL;
	t->store = NULL;
	t->cell = sizeof(cell_sink);	/* callers write t->cell bytes at most */
	return -ENOMEM;
}

char *table_cell(struct table_cells *t, size_t row, int col)
{
	char *b;

	if (!t->store)
		return cell_sink;
	b = t->store + (row * t->ncols + col) * t->cell;
	t->cells[row * t->ncols + col] = b;
	return b;
}

void table_cells_bytes(struct table_cells *t, size_t row, int col, uint64_t v)
{
	fmt_bytes(table_cell(t, row, col), t->cell, v);
}

int table_cells_print(FILE *f, struct table_cells *t, const struct table_col *cols, size_t nrows,
		      bool raw)
{
	int sel[TABLE_MAX_COLS], err = -ENOMEM;

	for (int i = 0; i < t->ncols && i < TABLE_MAX_COLS; i++)
		sel[i] = i;
	if (t->store)
		err = table_print(f, cols, t->ncols, sel, t->ncols, raw, t->cells, (int)nrows);
	table_cells_free(t);
	return err;
}

void table_cells_free(struct table_cells *t)
{
	free(t->cells);
	free(t->store);
	t->cells = NULL;
	t->store = NULL;
}

void print_wrapped(FILE *f, const char *prefix, const char *text)
{
	size_t col = strlen(prefix), len;
	bool first = true;	/* no word on this line yet */

	fputs(prefix, f);
	while (*text) {
		len = strcspn(text, " ");
		if (!first && col + 1 + len > 100) {
			fputs("\n  ", f);
			col = 2;
			first = true;
		}
		if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, len, f);
		col += len;
		first = false;
		text += len;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}
