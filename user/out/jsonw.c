// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* jsonw.c - a streaming JSON writer (jsonw.h). */
#define _GNU_SOURCE	/* fputs_unlocked(), fwrite_unlocked() */
#include <errno.h>
#include "jsonw.h"
#include "util.h"

void jw_init(struct jw *w, FILE *f)
{
	*w = (struct jw){ .f = f };
	w->first[0] = true;
}

/*
 * Whether @s encodes as itself between quotes: printable ASCII without a
 * quote or a backslash, which jansson's JSON_ENSURE_ASCII leaves as it is.
 * Keys, kinds, permissions and most paths are; writing them directly saves
 * a jansson string and its sanitized copy per value (issue 46: 24 per
 * mapping of explain -j).
 */
static bool jw_plain(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
			return false;
	return true;
}

/* @s as a JSON string: directly when jw_plain(), else through jansson */
static void jw_string(struct jw *w, const char *s)
{
	json_t *j;

	if (jw_plain(s)) {
		fputc_unlocked('"', w->f);
		fputs_unlocked(s, w->f);
		fputc_unlocked('"', w->f);
		return;
	}
	j = json_string_sanitized(s);
	if (!j || json_dumpf(j, w->f, JSON_ENCODE_ANY | JSON_ENSURE_ASCII))
		w->bad = true;
	json_decref(j);
}

/* the separator and key of the next value; false: misuse, nothing written */
static bool jw_member(struct jw *w, const char *key)
{
	bool obj = w->depth && w->in_object[w->depth];

	if (w->bad || !key != !obj || (!w->depth && !w->first[0])) {
		w->bad = true;
		return false;
	}
	if (!w->first[w->depth])
		fputc_unlocked(',', w->f);
	w->first[w->depth] = false;
	if (key) {
		jw_string(w, key);
		fputc_unlocked(':', w->f);
	}
	return true;
}

void jw_open(struct jw *w, const char *key, char bracket)
{
	if (w->depth + 1 >= JW_MAX_DEPTH || (bracket != '{' && bracket != '[')) {
		w->bad = true;
		return;
	}
	if (!jw_member(w, key))
		return;
	fputc(bracket, w->f);
	w->depth++;
	w->first[w->depth] = true;
	w->in_object[w->depth] = bracket == '{';
}

void jw_close(struct jw *w)
{
	if (w->bad || !w->depth) {
		w->bad = true;
		return;
	}
	fputc(w->in_object[w->depth] ? '}' : ']', w->f);
	w->depth--;
}

/* @v in decimal, without printf's format parsing (20 digits at most) */
static void jw_digits(struct jw *w, uint64_t v)
{
	char buf[20], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	if (jw_member(w, key))
		jw_digits(w, v);
}

void jw_int(struct jw *w, const char *key, long long v)
{
	if (!jw_member(w, key))
		return;
	if (v < 0)
		fputc_unlocked('-', w->f);
	jw_digits(w, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	if (jw_member(w, key))
		fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	if (jw_member(w, key))
		fputs("null", w->f);
}

void jw_json(struct jw *w, const char *key, const json_t *v)
{
	if (!v) {
		w->bad = true;
		return;
	}
	if (jw_member(w, key) &&
	    json_dumpf(v, w->f, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII))
		w->bad = true;
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	if (!s)
		jw_null(w, key);
	else if (jw_member(w, key))
		jw_string(w, s);
}

int jw_end(struct jw *w)
{
	if (w->bad || w->depth || w->first[0])
		return -EINVAL;
	fputc('\n', w->f);
	if (fflush(w->f) || ferror(w->f))
		return -EIO;
	return 0;
}
