/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * jsonw.h - a streaming JSON writer, for outputs too large to build as one
 * jansson tree first (explain's mappings: 10,000 of them made 200,000 nodes,
 * slower than reading smaps). It places keys, commas and nesting; strings
 * and embedded jansson values are encoded as jansson encodes them (compact,
 * ASCII), the way report_json() output is, so the two never differ: plain
 * printable ASCII written as it is, every other string through jansson.
 */
#ifndef MEMACCT_JSONW_H
#define MEMACCT_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#define JW_MAX_DEPTH	16

struct jw {
	FILE *f;
	int depth;
	bool first[JW_MAX_DEPTH];	/* nothing written yet at that level */
	bool in_object[JW_MAX_DEPTH];	/* members need a key */
	bool bad;			/* misuse or an encoding failure */
};

/*
 * Every call but jw_init() and jw_end() writes one value: under @key inside
 * an object, or with @key NULL inside an array and at the top. A key where
 * none belongs, a missing one, or nesting past JW_MAX_DEPTH marks the
 * writer bad (jw_end() fails) and writes nothing.
 */
void jw_init(struct jw *w, FILE *f);
void jw_open(struct jw *w, const char *key, char bracket);	/* '{' or '[' */
void jw_close(struct jw *w);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_int(struct jw *w, const char *key, long long v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);
/* jw_str() - @s sanitized (json_string_sanitized()); NULL writes null. */
void jw_str(struct jw *w, const char *key, const char *s);
/* jw_json() - the jansson value @v (borrowed), any type. */
void jw_json(struct jw *w, const char *key, const json_t *v);
/*
 * jw_end() - a newline after the top value, then fflush(). 0, -EINVAL (the
 * writer was misused, or a value is still open), or -EIO (the stream has an
 * error: a full disk, a closed pipe).
 */
int jw_end(struct jw *w);

#endif
