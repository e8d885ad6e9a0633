/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* util.c - errors, number parsing and human units shared by every command. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <jansson.h>

#include "util.h"

bool json_output;
bool bytes_output;
bool timestamps;
static FILE *report_file;
static bool report_reader_gone;

FILE *report_stream(void)
{
	return report_file ? report_file : stdout;
}

bool reports_closed(void)
{
	return report_reader_gone;
}

int report_written(FILE *f)
{
	int err;

	if (!fflush(f) && !ferror(f))
		return 0;
	err = errno ? errno : EIO;
	if (err != EPIPE)
		return -err;
	if (!report_reader_gone)
		fputs("memacct: the reader of the reports went away (closed pipe): "
		      "no more reports\n", stderr);
	report_reader_gone = true;
	return -EPIPE;
}

int set_report_file(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	if (report_file)
		fclose(report_file);
	report_file = f;
	return 0;
}

char *fmt_time_now(char *buf, size_t len, bool iso)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (iso) {
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 ts.tv_nsec / 1000000);
	} else {
		localtime_r(&ts.tv_sec, &tm);
		snprintf(buf, len, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	return buf;
}
bool verbose;

#define MAX_FRAC_DIGITS	9	/* further decimals are validated, then ignored */

/* Format into a malloc'd string without a trailing newline; NULL on ENOMEM. */
static char *vfmt_msg(const char *fmt, va_list ap)
{
	char *msg;
	size_t n;

	if (vasprintf(&msg, fmt, ap) < 0)
		return NULL;
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	return msg;
}

/*
 * "PREFIXmsg\n" on stderr with every control byte of @msg as \ooo: a
 * message stays one line whatever a cgroup name or argument holds (a
 * newline, an escape sequence). JSON mode needs none: jansson escapes.
 */
/*
 * "<N>" before each line when stderr is journald's stream: systemd sets
 * $JOURNAL_STREAM to stderr's "DEVICE:INODE" (systemd.exec(5)), and the
 * journal files a line that starts "<3>", "<4>" or "<6>" (sd-daemon(3)
 * SD_ERR, SD_WARNING, SD_INFO) at that priority, shown without it.
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* each line: stderr may be redirected meanwhile (-o, tests) */
	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* @prio: syslog priority, for the journal (3 error, 4 warning, 6 info) */
static void put_line(int prio, const char *prefix, const char *msg)
{
	if (stderr_is_journal())
		fprintf(stderr, "<%d>", prio);
	fputs(prefix, stderr);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\%03o", *p);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
}

long octal_unescape(char *dst, size_t len, const char *src, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = src[i];

		if (c == '\\' && i + 3 < n &&
		    src[i + 1] >= '0' && src[i + 1] <= '3' && src[i + 2] >= '0' &&
		    src[i + 2] <= '7' && src[i + 3] >= '0' && src[i + 3] <= '7') {
			c = (char)((src[i + 1] - '0') << 6 | (src[i + 2] - '0') << 3 |
				   (src[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return (long)o;
}

size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

json_t *json_string_sanitized(const char *s)
{
	size_t len = strlen(s), o = 0;
	char *buf = malloc(3 * len + 1);
	json_t *j;

	if (!buf)
		return json_string("");
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len((const unsigned char *)s + i);

		if (n) {
			memcpy(buf + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			i++;
		}
	}
	buf[o] = '\0';
	j = json_stringn(buf, o);
	free(buf);
	return j;
}

/* {"error": msg} on stderr; a hostile comm or path in @msg made valid UTF-8 */
static void print_err_json(const char *msg)
{
	json_t *obj = json_pack("{s:o}", "error", json_string_sanitized(msg));

	if (obj) {
		json_dumpf(obj, stderr, 0);
		fputc('\n', stderr);
		json_decref(obj);
	} else {
		fputs("{\"error\": \"out of memory\"}\n", stderr);
	}
	fflush(stderr);
}

/*
 * p_err() - "Error: msg" on stderr, or {"error": "msg"} on stderr with -j:
 * stdout carries only memacct.report/v1 and memacct.audit/v1 objects
 * (docs/memacct.report.v1.schema.json).
 */
void p_err(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = vfmt_msg(fmt, ap);
	va_end(ap);

	if (json_output)
		print_err_json(msg ? msg : "out of memory");
	else
		put_line(3, "Error: ", msg ? msg : "out of memory");
	free(msg);
}

/* A formatted line at journal priority @prio (put_line()) */
static void vput(int prio, const char *prefix, const char *fmt, va_list ap)
{
	char *msg = vfmt_msg(fmt, ap);

	put_line(prio, prefix, msg ? msg : "out of memory");
	free(msg);
}

/* p_warn() - "Warning: msg" on stderr, in JSON mode too */
void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(4, "Warning: ", fmt, ap);
	va_end(ap);
}

void p_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(5, "", fmt, ap);
	va_end(ap);
}

/* p_info() - "msg" on stderr, only with -v */
void p_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vput(6, "", fmt, ap);
	va_end(ap);
}

int opt_error(const char *cmd, int c, char *const argv[])
{
	char shortopt[3] = { '-', (char)optopt, '\0' };
	const char *last = optind > 0 ? argv[optind - 1] : "?";
	const char *opt = shortopt, *what = "unknown or ambiguous option";

	/*
	 * A value is missing only after the last argument, which holds the
	 * option; an unknown long option (optopt 0) is the argument consumed;
	 * "--flag=value" of a flag gives the flag's optopt.
	 */
	if (c == ':') {
		what = "option needs a value";
		opt = last;
	} else if (!optopt) {
		opt = last;
	} else if (!strncmp(last, "--", 2) && strchr(last, '=')) {
		what = "option takes no value";
		opt = last;
	}
	if (cmd)
		p_err("%s: %s: '%s' (memacct help %s lists the options)", cmd, what, opt, cmd);
	else
		p_err("%s: '%s' (memacct --help lists the options)", what, opt);
	return EXIT_USAGE;
}

/* parse_u64() - whole decimal string; 0, -EINVAL (empty, sign, blanks, trailing bytes), -ERANGE */
int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() would accept leading blanks and a sign ("-1" wraps) */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* parse_u64_n() - exactly @len decimal digits; 0, -EINVAL, -ERANGE */
int parse_u64_n(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s || !len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned int d;

		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		d = s[i] - '0';
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/*
 * parse_decimal() - "123" or "1.25" at *@p: integer part in @ip, up to
 * MAX_FRAC_DIGITS decimals as an integer in @frac with @scale = 10^decimals.
 * Advances *@p past the number. 0, -EINVAL (no digits), -ERANGE.
 */
static int parse_decimal(const char **p, uint64_t *ip, uint64_t *frac,
			 uint64_t *scale)
{
	const char *s = *p;
	unsigned int ndig = 0;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned int d = *s - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ip = v;
	*frac = 0;
	*scale = 1;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		for (; isdigit((unsigned char)*s); s++, ndig++) {
			if (ndig >= MAX_FRAC_DIGITS)
				continue;
			*frac = *frac * 10 + (*s - '0');
			*scale *= 10;
		}
	}
	*p = s;
	return 0;
}

/* (@ip + @frac / @scale) * @mult, truncated; -ERANGE if it exceeds u64. */
static int scale_decimal(uint64_t ip, uint64_t frac, uint64_t scale,
			 uint64_t mult, uint64_t *out)
{
	unsigned __int128 v;

	v = (unsigned __int128)ip * mult +
	    (unsigned __int128)frac * mult / scale;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/*
 * parse_size() - bytes from "N", "N[KMGT][i][B]" (case-insensitive, binary
 * units, a decimal fraction allowed with a unit: "1.5G") or "P%" of
 * @percent_of bytes (0 <= P <= 100, fraction allowed, result truncated).
 * 0, -EINVAL (bad token, % without a base or above 100), -ERANGE (> 2^64-1).
 */
int parse_size(const char *s, uint64_t percent_of, uint64_t *out)
{
	uint64_t ip, frac, scale, mult = 1;
	const char *p = s;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(&p, &ip, &frac, &scale);
	if (err)
		return err;

	if (p[0] == '%' && p[1] == '\0') {
		unsigned __int128 v;

		if (!percent_of)
			return -EINVAL;
		if (ip > 100 || (ip == 100 && frac))
			return -EINVAL;
		v = (unsigned __int128)percent_of * (ip * scale + frac);
		*out = (uint64_t)(v / ((unsigned __int128)100 * scale));
		return 0;
	}

	switch (tolower((unsigned char)*p)) {
	case 't':
		mult <<= 10;
		/* fallthrough */
	case 'g':
		mult <<= 10;
		/* fallthrough */
	case 'm':
		mult <<= 10;
		/* fallthrough */
	case 'k':
		mult <<= 10;
		p++;
		if (tolower((unsigned char)*p) == 'i')
			p++;
		break;
	}
	if (tolower((unsigned char)*p) == 'b')
		p++;
	if (*p != '\0')
		return -EINVAL;
	/* a fraction of a byte is meaningless: "1.5" and "1.5B" are refused */
	if (frac && mult == 1)
		return -EINVAL;
	return scale_decimal(ip, frac, scale, mult, out);
}

/*
 * parse_duration() - nanoseconds from "N[.F]" + ns/us/ms/s/m/h (any case),
 * a bare number being seconds; truncated to whole ns. 0, -EINVAL, -ERANGE.
 */
int parse_duration(const char *s, uint64_t *out_ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "",	1000000000ULL },
		{ "ns",	1ULL },
		{ "us",	1000ULL },
		{ "ms",	1000000ULL },
		{ "s",	1000000000ULL },
		{ "m",	60ULL * 1000000000ULL },
		{ "h",	3600ULL * 1000000000ULL },
	};
	uint64_t ip, frac, scale;
	const char *p = s;
	size_t i;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(&p, &ip, &frac, &scale);
	if (err)
		return err;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcasecmp(p, units[i].suffix))
			return scale_decimal(ip, frac, scale, units[i].ns, out_ns);
	}
	return -EINVAL;
}

char *text_wrap(char *text, size_t width)
{
	size_t line = 0, len;

	for (char *p = text; *p; p += len) {
		len = strcspn(p, " ");
		if (line && line + 1 + len > width)
			p[-1] = '\n', line = 0;
		line += (line ? 1 : 0) + len;
		if (p[len])
			len++;
	}
	return text;
}

void pct_partition(const uint64_t *parts, int n, int *out)
{
	long double sum = 0, rem[32];
	int given = 0;

	for (int i = 0; i < n; i++)
		sum += parts[i];
	for (int i = 0; i < n; i++) {
		long double exact = sum > 0 ? parts[i] * 100.0L / sum : 0;

		out[i] = (int)exact;
		rem[i] = exact - out[i];
		given += out[i];
	}
	/* the points left go to the largest remainders, earlier parts first on ties */
	while (sum > 0 && given < 100) {
		int best = 0;

		for (int i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		out[best]++;
		rem[best] = -1;
		given++;
	}
}

/*
 * fmt_bytes() - "N B" below 1 KiB, else three significant digits and a
 * binary unit ("9.99 KiB", "25.0 MiB", "812 KiB"); at most 8 characters
 * ("1023 KiB"), cut to @len like snprintf(). Returns @buf.
 */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;
	double v;

	if (bytes_output) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return buf;
	}
	if (bytes < 1024) {
		snprintf(buf, len, "%u B", (unsigned int)bytes);
		return buf;
	}
	/* three significant digits; a value that rounds up to 1024 moves up a unit */
	v = bytes / 1024.0;
	while (v >= 1023.5 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (v < 9.995)
		snprintf(buf, len, "%.2f %s", v, units[u]);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f %s", v, units[u]);
	else
		snprintf(buf, len, "%.0f %s", v, units[u]);
	return buf;
}

/*
 * read_file() reads at most @max bytes: a longer file is -EFBIG, never cut
 * there (a cut file parsed as whole lost its end without a word), so size
 * @max for the file. /proc files report st_size 0, hence the growing buffer.
 * -ESRCH when a /proc/PID file's process exits between open() and read().
 */
ssize_t read_line(char **buf, size_t *cap, FILE *f, size_t max)
{
	size_t len = 0;
	int c;

	while ((c = getc_unlocked(f)) != EOF) {
		if (len >= max)
			return -E2BIG;
		if (len + 2 > *cap || !*buf) {
			size_t want = *cap ? *cap * 2 : 4096;
			char *p;

			if (want > max + 2)
				want = max + 2;
			p = realloc(*buf, want);
			if (!p)
				return -ENOMEM;
			*buf = p;
			*cap = want;
		}
		(*buf)[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (!len)
		return -1;
	(*buf)[len] = '\0';
	return (ssize_t)len;
}

long read_file(const char *path, char **out, size_t max)
{
	return read_file_at(AT_FDCWD, path, out, max, 0);
}

long read_file_at(int dirfd, const char *path, char **out, size_t max, unsigned int flags)
{
	size_t cap, len = 0;
	char *buf, *tmp;
	ssize_t n;
	int fd, err;

	*out = NULL;
	if (!max)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	cap = max < 4096 ? max : 4096;
	buf = malloc(cap + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	while (len < max) {
		if (len == cap) {
			cap = cap > max / 2 ? max : cap * 2;
			tmp = realloc(buf, cap + 1);
			if (!tmp) {
				err = -ENOMEM;
				goto out_free_buf;
			}
			buf = tmp;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out_free_buf;
		}
		if (n == 0)
			break;
		len += n;
		if ((flags & READ_FILE_ONE_SHOW) && len < cap)
			break;	/* short: the whole text (no read for the EOF) */
	}
	if (len == max) {	/* more after @max bytes: the file is longer */
		char more;

		do
			n = read(fd, &more, 1);
		while (n < 0 && errno == EINTR);
		if (n != 0) {
			err = n > 0 ? -EFBIG : -errno;
			goto out_free_buf;
		}
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return (long)len;

out_free_buf:
	free(buf);
out_close:
	close(fd);
	return err;
}

/*
 * cgroupfs reports a refused value (EINVAL, EBUSY, ESRCH...) on write().
 * O_TRUNC as a shell's ">" does: ignored by kernfs, right for regular files.
 */
int write_line(int fd, const char *s)
{
	size_t len = strlen(s);
	char *line = malloc(len + 1);
	struct stat sb;
	off_t before = -1;
	ssize_t w;
	int err;

	if (!line)
		return -ENOMEM;
	memcpy(line, s, len);
	line[len] = '\n';
	if (!fstat(fd, &sb))
		before = sb.st_size;
	w = write(fd, line, len + 1);
	err = w < 0 ? -errno : -ENOSPC;	/* a short write: the disk is full */
	free(line);
	if (w == (ssize_t)len + 1)
		return 0;
	if (w > 0 && before >= 0 && ftruncate(fd, before))
		p_warn("removing a cut line: %s", strerror(errno));
	return err;
}

int write_file(const char *path, const char *s)
{
	size_t len = strlen(s), off = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len) {
		n = write(fd, s + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0) {
			err = -EIO;
			break;
		}
		off += n;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* now_ns() - CLOCK_MONOTONIC in nanoseconds (comparable with bpf_ktime_get_ns()) */
uint64_t ns_after(uint64_t t, uint64_t d)
{
	return t > UINT64_MAX - d ? UINT64_MAX : t + d;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int exit_code_of(int err)
{
	switch (err) {
	case -EINVAL:
	case -EBUSY:
	case -ERANGE:
		return EXIT_USAGE;
	case -EPERM:
	case -EACCES:
	case -ENOENT:
	case -EOPNOTSUPP:
		return EXIT_ENV;
	default:
		return EXIT_RUNTIME;
	}
}

void *array_grow(void *v, size_t n, size_t *cap, size_t size)
{
	void **pv = v;

	if (n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		void *nv = realloc(*pv, nc * size);

		if (!nv)
			return NULL;
		*pv = nv;
		*cap = nc;
	}
	return (char *)*pv + n * size;
}
