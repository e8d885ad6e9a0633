/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* explain_print.h - explain's report written: JSON and text (explain.h's model). */
#ifndef MEMACCT_EXPLAIN_PRINT_H
#define MEMACCT_EXPLAIN_PRINT_H

#include <stddef.h>
#include <stdio.h>
#include "explain.h"
#include "report.h"

/*
 * explain_print_json() - @e and @r as one memacct.report/v1 object on
 * @f: report_json()'s members, then the mappings (the largest @top by
 * RSS, 0: all) and numa streamed through jsonw.h. 0, or -ENOMEM / -EINVAL
 * after an error message when the object cannot be built or encoded (an
 * I/O error on stdout is main()'s to report).
 */
int explain_print_json(FILE *f, const struct explain *e, const struct report *r, size_t top);
/* explain_print_plain() - the text report: parts, views, tables by @by, verdict. */
void explain_print_plain(const struct explain *e, const struct report *r, enum by by,
			 size_t top);

#endif
