// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * oom_print.c - an OOM post-mortem (oom.h) in words, from its JSON object:
 * `memacct oom`, and the kills after a run/attach report.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "oom.h"
#include "oom_print.h"
#include "table.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static uint64_t jbytes(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static const char *jbytes_s(char *b, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return "-";
	return fmt_bytes(b, 16, (uint64_t)json_integer_value(v));
}

/* a forecast's growing_class in words: "cow" is the CoW copies */
static const char *class_words(const char *cls)
{
	return !cls ? "?" : !strcmp(cls, "cow") ? "CoW copies" : cls;
}

void oom_print_json(FILE *f, const json_t *o, bool full)
{
	const json_t *v = json_object_get(o, "victim"), *st = json_object_get(o, "cgroup_stocks");
	const json_t *procs = json_object_get(o, "processes"), *grew = json_object_get(o, "grew");
	const char *verdict = json_string_value(json_object_get(o, "verdict"));
	char b[8][16];
	size_t i, n;

	char line[1024];

	print_wrapped(f, "", verdict ? verdict : "OOM kill");
	if (json_is_object(json_object_get(o, "forecast"))) {
		const json_t *fc = json_object_get(o, "forecast");

		snprintf(line, sizeof(line), "forecast: warned %.1f s before the kill, which it put "
			 "%.1f s ahead (%s growing)",
			 json_number_value(json_object_get(fc, "warned_s_before")),
			 json_number_value(json_object_get(fc, "eta_s")),
			 class_words(json_string_value(json_object_get(fc, "growing_class"))));
		print_wrapped(f, "  ", line);
	}
	snprintf(line, sizeof(line), "at %s, seq %" PRIu64 "; victim PID %d (%s)%s: anon %s, "
		 "file %s, shmem %s, swap %s, mlocked %s, pinned_vm %s, DMA %s, CoW-copied %s",
		 json_string_value(json_object_get(o, "time_iso")) ?: "?", jbytes(o, "seq"),
		 (int)jbytes(o, "pid"), json_string_value(json_object_get(o, "comm")) ?: "?",
		 json_is_true(json_object_get(v, "at_kill")) ? " at the kill" : "",
		 jbytes_s(b[0], v, "anon_bytes"), jbytes_s(b[1], v, "file_bytes"),
		 jbytes_s(b[2], v, "shmem_bytes"), jbytes_s(b[3], v, "swap_bytes"),
		 jbytes_s(b[4], v, "mlocked_bytes"), jbytes_s(b[5], v, "pinned_vm_bytes"),
		 jbytes_s(b[6], v, "dma_pinned_bytes"), jbytes_s(b[7], v, "cow_copied_bytes"));
	print_wrapped(f, "  ", line);
	if (json_is_object(st) && json_object_get(st, "usage_bytes")) {
		snprintf(line, sizeof(line), "cgroup %s: usage at the kill %s of its limit %s; "
			 "memory.stat %.2f s after it: anon %s, file %s, shmem %s, reclaimable %s, "
			 "unevictable %s, kernel %s",
			 json_string_value(json_object_get(o, "limit_cgroup")) ?: "?",
			 jbytes_s(b[0], o, "usage_bytes"), jbytes_s(b[1], o, "limit_bytes"),
			 json_real_value(json_object_get(st, "read_after_kill_s")),
			 jbytes_s(b[2], st, "anon_bytes"), jbytes_s(b[3], st, "file_bytes"),
			 jbytes_s(b[4], st, "shmem_bytes"), jbytes_s(b[5], st, "reclaimable_bytes"),
			 jbytes_s(b[6], st, "unevictable_bytes"), jbytes_s(b[7], st, "kernel_bytes"));
		print_wrapped(f, "  ", line);
	} else if (json_is_object(st)) {
		snprintf(line, sizeof(line), "host: MemTotal %s, available %s, page cache %s "
			 "(reclaimable %s), shmem %s, unevictable %s",
			 jbytes_s(b[0], st, "mem_total_bytes"),
			 jbytes_s(b[1], st, "mem_available_bytes"),
			 jbytes_s(b[2], st, "page_cache_bytes"),
			 jbytes_s(b[3], st, "reclaimable_bytes"), jbytes_s(b[4], st, "shmem_bytes"),
			 jbytes_s(b[5], st, "unevictable_bytes"));
		print_wrapped(f, "  ", line);
	}
	n = json_array_size(procs);
	if (n) {
		const json_t *age = json_object_get(o, "sample_age_s");

		double a = json_is_number(age) ? json_number_value(age) : 0.0;

		fprintf(f, "  processes (%zu, sampled %.2f s %s the kill; the victim at it):\n",
			(size_t)jbytes(o, "processes_total"), fabs(a), a < 0 ? "after" : "before");
		if (jbytes(o, "processes_unsampled"))
			fprintf(f, "  NOTE: %zu more processes of the session were not sampled "
				"(a sample holds 1,024): not in these figures\n",
				(size_t)jbytes(o, "processes_unsampled"));
		fprintf(f, "  %7s %-15s %8s %8s %8s %8s %8s\n", "PID", "COMM", "RSS", "ANON",
			"SHMEM", "PINNED", "COW");
	}
	for (i = 0; i < n && (full || i < 5); i++) {
		const json_t *p = json_array_get(procs, i);

		fprintf(f, "  %7d %-15.15s %8s %8s %8s %8s %8s\n", (int)jbytes(p, "pid"),
			json_string_value(json_object_get(p, "comm")) ?: "?",
			jbytes_s(b[0], p, "rss_bytes"), jbytes_s(b[1], p, "anon_bytes"),
			jbytes_s(b[2], p, "shmem_bytes"), jbytes_s(b[3], p, "pinned_bytes"),
			jbytes_s(b[4], p, "cow_copied_bytes"));
	}
	if (i < n)
		fprintf(f, "  ... %zu more (memacct oom --last, -j)\n", n - i);
	for (i = 0; i < json_array_size(grew); i++) {
		const json_t *g = json_array_get(grew, i);

		fprintf(f, "  grew: PID %d (%s) %s +%s in %.1f s\n", (int)jbytes(g, "pid"),
			json_string_value(json_object_get(g, "comm")) ?: "?",
			oom_key_word(json_string_value(json_object_get(g, "key")) ?: "?"),
			jbytes_s(b[0], g, "bytes"),
			json_number_value(json_object_get(g, "seconds")));
	}
}

void oom_warning_print(FILE *f, const char *prefix, const json_t *w)
{
	const json_t *pid = json_object_get(w, "top_pid");
	char lim[16], rate[16], crate[16], un[16], top[96] = "";
	double eta = json_number_value(json_object_get(w, "eta_s"));
	double g = json_number_value(json_object_get(w, "growth_bytes_per_s"));
	double cg = json_number_value(json_object_get(w, "growing_class_bytes_per_s"));
	const char *cls = json_string_value(json_object_get(w, "growing_class"));

	if (json_is_integer(pid)) {
		char b[16];

		snprintf(top, sizeof(top), "; most: pid %" PRId64 " %s (%s %s)",
			 (int64_t)json_integer_value(pid),
			 json_string_value(json_object_get(w, "top_comm")) ?: "?", class_words(cls),
			 jbytes_s(b, w, "top_bytes"));
	}
	fprintf(f, "%sOOM forecast at +%.0f s: %s%s reaches its %s %s in ~%.0f s: the memory "
		"the kernel cannot reclaim (%s) grows %s/s, %s most (%s/s)%s\n",
		prefix, json_number_value(json_object_get(w, "t_s")),
		json_is_true(json_object_get(w, "host_wide")) ? "the host" : "",
		json_is_true(json_object_get(w, "host_wide")) ? "" :
		json_string_value(json_object_get(w, "cgroup")) ?: "?",
		json_is_true(json_object_get(w, "host_wide")) ? "MemTotal" : "limit",
		jbytes_s(lim, w, "limit_bytes"), eta, jbytes_s(un, w, "unreclaimable_bytes"),
		fmt_bytes(rate, sizeof(rate), g > 0 ? (uint64_t)g : 0), class_words(cls),
		fmt_bytes(crate, sizeof(crate), cg > 0 ? (uint64_t)cg : 0), top);
}
