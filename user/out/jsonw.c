// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* jsonw.c - a streaming JSON writer (jsonw.h). */
#include <errno.h>
#include <inttypes.h>
#include "jsonw.h"
#include "util.h"

void jw_init(struct jw *w, FILE *f)
{
	*w = (struct jw){ .f = f };
	w->first[0] = true;
}

/* the separator and key of the next value; false: misuse, nothing written */
static bool jw_member(struct jw *w, const char *key)
{
	bool obj = w->depth && w->in_object[w->depth];
	json_t *k;

	if (w->bad || !key != !obj || (!w->depth && !w->first[0])) {
		w->bad = true;
		return false;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (key) {
		k = json_string_sanitized(key);
		if (!k || json_dumpf(k, w->f, JSON_ENCODE_ANY | JSON_ENSURE_ASCII))
			w->bad = true;
		json_decref(k);
		fputc(':', w->f);
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

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	if (jw_member(w, key))
		fprintf(w->f, "%" PRIu64, v);
}

void jw_int(struct jw *w, const char *key, long long v)
{
	if (jw_member(w, key))
		fprintf(w->f, "%lld", v);
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
	json_t *j;

	if (!s) {
		jw_null(w, key);
		return;
	}
	j = json_string_sanitized(s);
	jw_json(w, key, j);
	json_decref(j);
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
