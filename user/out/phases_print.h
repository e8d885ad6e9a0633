/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* phases_print.h - a run's phases (phases.h's model) written: JSON and text. */
#ifndef MEMACCT_PHASES_PRINT_H
#define MEMACCT_PHASES_PRINT_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "phases.h"
#include "report.h"

/*
 * phase_verdict() - @b in words into @buf (@len bytes, always
 * NUL-terminated): "within 16 B/param" or "6.55 B/param above 16: 4.00
 * pinned (mlocked 4.00), 2.55 unpinned".
 */
void phase_verdict(char *buf, size_t len, const struct phase_budget *b, double expect_bpp);

/* phases_json() - the "phases" array (new reference). */
json_t *phases_json(const struct phases *p);
/* print_phases_plain() - a table per phase, then its mappings; a line for
 * the refused marks. */
void print_phases_plain(FILE *f, const struct phases *p);
/*
 * phases_report_json() - the report's members of @p into @o: "params" and
 * "expect_bytes_per_param" (with --params), "phases", "phases_refused", "marks_failed".
 * What struct report's phases_json points at (report.c knows no phases).
 */
void phases_report_json(json_t *o, const struct phases *p);

/* report_set_phases() - @r shows @p (borrowed), written by phases_report_json(). */
static inline void report_set_phases(struct report *r, const struct phases *p)
{
	r->phases = p;
	r->phases_json = phases_report_json;
}

#endif
