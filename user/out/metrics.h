/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * metrics.h - writer of the Prometheus text format 0.0.4 and of OpenMetrics
 * 1.0 text, from the same calls: families (HELP/TYPE/UNIT) then samples.
 * Label values are escaped (\\, \", \n); invalid UTF-8 bytes become '?'.
 */
#ifndef MEMACCT_METRICS_H
#define MEMACCT_METRICS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mtype { MT_GAUGE, MT_COUNTER };

struct mbuf {
	char *s;
	size_t len, cap;
	bool om;		/* OpenMetrics (else Prometheus 0.0.4) */
	bool oom;		/* an allocation failed: the text is incomplete */
	enum mtype type;	/* of the current family */
	char family[128];
	bool skip;		/* the current family is filtered out */
};

/* A label: name and raw value (escaped by the writer). */
struct mlabel {
	const char *name;
	const char *value;
};

void mbuf_init(struct mbuf *b, bool openmetrics);
void mbuf_free(struct mbuf *b);
/*
 * metrics_family() - start a family. @name has no _total suffix
 * ("memacct_cow_copied_bytes"); @unit ("bytes", "seconds" or NULL) must be
 * the name's suffix (OpenMetrics rule).
 */
void metrics_family(struct mbuf *b, const char *name, enum mtype type,
		    const char *unit, const char *help);
/* metrics_sample() - one sample of the current family; NULL-valued labels
 * are left out. */
void metrics_sample(struct mbuf *b, const struct mlabel *l, int nl, double v);
void metrics_sample_u64(struct mbuf *b, const struct mlabel *l, int nl, uint64_t v);
/*
 * metrics_set_filter() - families written from now on: those whose name
 * (without _total) @allow matches whole, if given, and @deny does not, if
 * given (POSIX extended regexes, compiled by the caller and kept alive by
 * it); the others are left out with their samples. NULL, NULL: all.
 */
void metrics_set_filter(const regex_t *allow, const regex_t *deny);
/*
 * metrics_compile_filter() - compile @re for metrics_set_filter(), anchored
 * (^(...)$, as Prometheus' relabelling anchors); 0, or -EINVAL with the
 * error printed under @opt's name.
 */
int metrics_compile_filter(const char *opt, const char *re, regex_t *out);
/* metrics_end() - "# EOF" for OpenMetrics; returns the text (owned by @b). */
const char *metrics_end(struct mbuf *b);

/* metrics_escape_label() - escaped @v into @out (size @n); for tests. */
size_t metrics_escape_label(char *out, size_t n, const char *v);

#endif
