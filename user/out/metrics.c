// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* metrics.c - Prometheus 0.0.4 / OpenMetrics 1.0 text writer (metrics.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static const regex_t *filter_allow, *filter_deny;

void metrics_set_filter(const regex_t *allow, const regex_t *deny)
{
	filter_allow = allow;
	filter_deny = deny;
}

int metrics_compile_filter(const char *opt, const char *re, regex_t *out)
{
	size_t n = strlen(re) + 5;
	char *anchored = malloc(n), msg[128];
	int err;

	if (!anchored)
		return -ENOMEM;
	snprintf(anchored, n, "^(%s)$", re);
	err = regcomp(out, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (err) {
		regerror(err, out, msg, sizeof(msg));
		p_err("%s: bad regular expression '%s': %s", opt, re, msg);
		return -EINVAL;
	}
	return 0;
}

void mbuf_init(struct mbuf *b, bool openmetrics)
{
	memset(b, 0, sizeof(*b));
	b->om = openmetrics;
}

void mbuf_free(struct mbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static bool reserve(struct mbuf *b, size_t more)
{
	size_t cap;
	char *n;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	n = realloc(b->s, cap);
	if (!n) {
		b->oom = true;
		return false;
	}
	b->s = n;
	b->cap = cap;
	return true;
}

static void put(struct mbuf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(struct mbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putf(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct mbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

size_t metrics_escape_label(char *out, size_t n, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t o = 0;

	if (!n)
		return 0;
	while (*p && o + 5 < n) {
		size_t l = utf8_len(p);

		if (*p == '\\' || *p == '"') {
			out[o++] = '\\';
			out[o++] = *p++;
		} else if (*p == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
			p++;
		} else if (l == 0) {
			out[o++] = '?';
			p++;
		} else {
			memcpy(out + o, p, l);
			o += l;
			p += l;
		}
	}
	out[o] = '\0';
	return o;
}

void metrics_family(struct mbuf *b, const char *name, enum mtype type,
		    const char *unit, const char *help)
{
	const char *t = type == MT_COUNTER ? "counter" : "gauge";
	const char *suffix = type == MT_COUNTER && !b->om ? "_total" : "";

	b->skip = (filter_allow && regexec(filter_allow, name, 0, NULL, 0)) ||
		  (filter_deny && !regexec(filter_deny, name, 0, NULL, 0));
	if (b->skip)
		return;
	snprintf(b->family, sizeof(b->family), "%s", name);
	b->type = type;
	putf(b, "# HELP %s%s %s\n", name, suffix, help);
	putf(b, "# TYPE %s%s %s\n", name, suffix, t);
	if (b->om && unit)
		putf(b, "# UNIT %s %s\n", name, unit);
}

/*
 * Label values are escaped whole, never cut: two cgroups whose paths differ
 * past a fixed size would give duplicate series (reliability audit D10).
 */
static void sample_head(struct mbuf *b, const struct mlabel *l, int nl)
{
	bool first = true;

	puts_(b, b->family);
	if (b->type == MT_COUNTER)
		puts_(b, "_total");
	for (int i = 0; i < nl; i++) {
		size_t n;
		char *esc;

		if (!l[i].value)
			continue;
		n = 2 * strlen(l[i].value) + 8;	/* each byte escapes to 2 at most */
		esc = malloc(n);
		if (!esc) {
			b->oom = true;
			return;
		}
		metrics_escape_label(esc, n, l[i].value);
		putf(b, "%s%s=\"", first ? "{" : ",", l[i].name);
		puts_(b, esc);
		puts_(b, "\"");
		free(esc);
		first = false;
	}
	if (!first)
		puts_(b, "}");
}

void metrics_sample(struct mbuf *b, const struct mlabel *l, int nl, double v)
{
	if (b->skip)
		return;
	sample_head(b, l, nl);
	putf(b, " %.15g\n", v);	/* 15 digits: epoch seconds keep their fraction */
}

void metrics_sample_u64(struct mbuf *b, const struct mlabel *l, int nl, uint64_t v)
{
	if (b->skip)
		return;
	sample_head(b, l, nl);
	putf(b, " %" PRIu64 "\n", v);
}

const char *metrics_end(struct mbuf *b)
{
	if (b->om)
		puts_(b, "# EOF\n");
	if (!b->s)
		reserve(b, 1);
	return b->s ? b->s : "";
}
