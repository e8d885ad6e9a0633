/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * proc.c - parsers of /proc/PID/{status,stat,smaps_rollup} and /proc/meminfo.
 * The parsers never modify the text and never trust it: every number is
 * checked, every line bounded by its newline.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

#define PROC_FILE_MAX	(1 << 20)

/* One "Key:<blanks>value" line: [key, key_end) and [val, eol). */
struct kv_line {
	const char *key, *key_end;
	const char *val, *eol;
};

/*
 * next_kv() - split the line at *@pos and advance past it. Lines without a
 * ':' get an empty key. Returns false at the end of the text.
 */
static bool next_kv(const char **pos, struct kv_line *l)
{
	const char *s = *pos, *colon;

	if (!*s)
		return false;
	l->eol = strchrnul(s, '\n');
	*pos = *l->eol ? l->eol + 1 : l->eol;

	colon = memchr(s, ':', l->eol - s);
	l->key = s;
	l->key_end = colon ? colon : s;
	l->val = colon ? colon + 1 : l->eol;
	return true;
}

static bool key_is(const struct kv_line *l, const char *key)
{
	size_t n = strlen(key);

	return (size_t)(l->key_end - l->key) == n && !memcmp(l->key, key, n);
}

/* a decimal number filling [s, e) after leading blanks: 0, -EINVAL, -ERANGE */
static int parse_uint_range(const char *s, const char *e, uint64_t *out)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return parse_u64_n(s, e - s, out);
}

/* "<blanks>1636 kB" as the kernel's seq_put_decimal_ull_width() + " kB" -> bytes */
static int parse_kb(const struct kv_line *l, uint64_t *bytes)
{
	const char *e = l->eol;
	uint64_t kb;
	int err;

	if (e - l->val < 3 || memcmp(e - 3, " kB", 3))
		return -EINVAL;
	err = parse_uint_range(l->val, e - 3, &kb);
	if (err)
		return err;
	if (kb > UINT64_MAX / 1024)
		return -ERANGE;
	*bytes = kb * 1024;
	return 0;
}

static int parse_pid(const struct kv_line *l, pid_t *pid)
{
	uint64_t v;
	int err;

	err = parse_uint_range(l->val, l->eol, &v);
	if (err)
		return err;
	if (v > INT32_MAX)
		return -ERANGE;
	*pid = (pid_t)v;
	return 0;
}

/*
 * parse_status() - /proc/PID/status (fs/proc/array.c proc_pid_status(),
 * fs/proc/task_mmu.c task_mem()). Name, Tgid and PPid must be present;
 * Vm and Rss lines only for a live mm (has_mm from VmRSS). Sizes in bytes
 * from the kernel's kB. Keys an older kernel lacks (RssShmem < 4.5,
 * VmPin < 3.2) stay 0. Returns 0 or -EINVAL / -ERANGE on a malformed line.
 */
int parse_status(const char *text, struct proc_status *st)
{
	bool has_name = false, has_tgid = false, has_ppid = false;
	static const struct {
		const char *key;
		size_t off;
	} kb_keys[] = {
		{ "VmRSS",	offsetof(struct proc_status, rss) },
		{ "RssAnon",	offsetof(struct proc_status, rss_anon) },
		{ "RssFile",	offsetof(struct proc_status, rss_file) },
		{ "RssShmem",	offsetof(struct proc_status, rss_shmem) },
		{ "VmHWM",	offsetof(struct proc_status, hwm) },
		{ "VmLck",	offsetof(struct proc_status, locked) },
		{ "VmPin",	offsetof(struct proc_status, pinned) },
		{ "VmSwap",	offsetof(struct proc_status, swap) },
	};
	const char *pos = text;
	struct kv_line l;
	size_t i, n;
	int err = 0;

	if (!text)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	while (!err && next_kv(&pos, &l)) {
		if (key_is(&l, "Name")) {
			/* "Name:\t" then the comm as the kernel escaped it;
			 * a comm may itself start with blanks */
			const char *v = l.val;

			if (v < l.eol && *v == '\t')
				v++;
			n = l.eol - v;
			if (n >= sizeof(st->name))
				n = sizeof(st->name) - 1;
			memcpy(st->name, v, n);
			st->name[n] = '\0';
			has_name = true;
		} else if (key_is(&l, "Tgid")) {
			err = parse_pid(&l, &st->tgid);
			has_tgid = true;
		} else if (key_is(&l, "PPid")) {
			err = parse_pid(&l, &st->ppid);
			has_ppid = true;
		} else {
			for (i = 0; i < sizeof(kb_keys) / sizeof(kb_keys[0]); i++) {
				if (!key_is(&l, kb_keys[i].key))
					continue;
				err = parse_kb(&l, (uint64_t *)((char *)st + kb_keys[i].off));
				if (i == 0)
					st->has_mm = true;
				break;
			}
		}
	}
	if (err)
		return err;
	if (!has_name || !has_tgid || !has_ppid)
		return -EINVAL;
	return 0;
}

/* read_proc_file() - /proc/@pid/@name; an empty file means the task is gone. */
static long read_proc_file(pid_t pid, const char *name, char **buf)
{
	char path[64];
	long len;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	len = read_file(path, buf, PROC_FILE_MAX);
	if (len == 0) {
		free(*buf);
		*buf = NULL;
		return -ESRCH;
	}
	return len;
}

/* read_status() - parse_status() of /proc/@pid/status; -ENOENT/-ESRCH when gone */
int read_status(pid_t pid, struct proc_status *st)
{
	char *buf;
	long len;
	int err;

	len = read_proc_file(pid, "status", &buf);
	if (len < 0)
		return (int)len;
	err = parse_status(buf, st);
	free(buf);
	return err;
}

/*
 * parse_stat() - /proc/PID/stat (fs/proc/array.c do_task_stat()):
 * "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt
 * majflt ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24) ...".
 * The comm is not escaped there and may hold blanks, parentheses and
 * newlines, so it ends at the LAST ')'. minflt/majflt are counts, utime,
 * stime and starttime clock ticks, vsize bytes, rss pages.
 * Returns 0 or -EINVAL / -ERANGE.
 */
int parse_stat(const char *text, struct proc_stat *st)
{
	const char *open, *close, *p, *tok;
	uint64_t v;
	size_t n;
	int field, err;

	if (!text)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	if (!isdigit((unsigned char)text[0]))
		return -EINVAL;
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (!open || !close || close < open)
		return -EINVAL;
	n = close - open - 1;
	if (n >= sizeof(st->comm))
		n = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';

	/* ") S 1 ..." : field 3 onwards, separated by single spaces */
	p = close + 1;
	if (p[0] != ' ' || !p[1] || p[1] == ' ' || p[1] == '\n' ||
	    (p[2] != ' ' && p[2] != '\n'))
		return -EINVAL;
	st->state = p[1];
	p += 2;
	for (field = 4; field <= 24; field++) {
		if (*p != ' ') {
			if (field > 22)
				break;	/* vsize, rss: optional */
			return -EINVAL;
		}
		tok = ++p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		if (field != 4 && field != 10 && field != 12 && field != 14 && field != 15 &&
		    field < 22)
			continue;
		err = parse_uint_range(tok, p, &v);
		if (err)
			return err;
		switch (field) {
		case 4:
			if (v > INT32_MAX)
				return -ERANGE;
			st->ppid = (pid_t)v;
			break;
		case 10:
			st->minflt = v;
			break;
		case 12:
			st->majflt = v;
			break;
		case 14:
			st->utime_ticks = v;
			break;
		case 15:
			st->stime_ticks = v;
			break;
		case 22:
			st->starttime_ticks = v;
			break;
		case 23:
			st->vsize = v;
			break;
		case 24:
			st->rss_pages = v;
			break;
		}
	}
	return 0;
}

/* read_stat() - parse_stat() of /proc/@pid/stat; -ENOENT/-ESRCH when gone */
int read_stat(pid_t pid, struct proc_stat *st)
{
	char *buf;
	long len;
	int err;

	len = read_proc_file(pid, "stat", &buf);
	if (len < 0)
		return (int)len;
	err = parse_stat(buf, st);
	free(buf);
	return err;
}

/*
 * The kernel prints starttime as nsec_to_clock_t(start_boottime), an exact
 * division by NSEC_PER_SEC / USER_HZ, so the same division must agree.
 */
bool proc_start_matches(uint64_t start_boottime_ns, uint64_t starttime_ticks)
{
	static uint64_t ns_per_tick;

	if (!ns_per_tick) {
		long hz = sysconf(_SC_CLK_TCK);

		ns_per_tick = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100);
	}
	return start_boottime_ns / ns_per_tick == starttime_ticks;
}

/* MemTotal of /proc/meminfo (mm/show_mem.c meminfo_proc_show()), bytes. */
uint64_t mem_total_bytes(void)
{
	const char *pos;
	struct kv_line l;
	uint64_t bytes = 0;
	char *buf;

	if (read_file("/proc/meminfo", &buf, PROC_FILE_MAX) < 0)
		return 0;
	pos = buf;
	while (next_kv(&pos, &l)) {
		if (key_is(&l, "MemTotal")) {
			if (parse_kb(&l, &bytes))
				bytes = 0;
			break;
		}
	}
	free(buf);
	return bytes;
}
