/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * unit_util.c - unit tests of user/util.c, and main() of the unit test
 * binary (all tests/unit_*.c are linked together; no root, no BPF).
 *
 * Without the Makefile (which first needs the BPF skeleton), from the repo top:
 *   W="-Wall -Wextra -Werror -Wno-unused-parameter -Wmissing-prototypes -Wshadow -Wundef"
 *   mkdir -p /tmp/ut && for f in util proc cgroup; do
 *     cc -O2 -g $W -Iinclude -Iuser -c user/$f.c -o /tmp/ut/$f.o; done
 *   cc -O2 -g $W -Wno-missing-prototypes -Iinclude -Iuser -Itests tests/unit_*.c \
 *     /tmp/ut/util.o /tmp/ut/proc.o /tmp/ut/cgroup.o \
 *     $(pkg-config --libs check jansson) -o /tmp/ut/test_unit
 *   cd tests && /tmp/ut/test_unit
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

#include <sys/wait.h>

#include "check_util.h"
#include "signals.h"
#include "util.h"

#define KiB	1024ULL
#define MiB	(1024 * KiB)
#define GiB	(1024 * MiB)
#define TiB	(1024 * GiB)

START_TEST(test_parse_u64)
{
	static const struct {
		const char *s;
		int err;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "007", 0, 7 },
		{ "4096", 0, 4096 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1\n", -EINVAL, 0 },
		{ "12a", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		ck_assert_msg(parse_u64(cases[i].s, &v) == cases[i].err,
			      "parse_u64(\"%s\") = %d, want %d", cases[i].s,
			      parse_u64(cases[i].s, &v), cases[i].err);
		if (cases[i].err)
			ck_assert_uint_eq(v, 12345);	/* untouched on error */
		else
			ck_assert_uint_eq(v, cases[i].v);
	}
	ck_assert_int_eq(parse_u64(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_parse_u64_n)
{
	uint64_t v = 0;

	ck_assert_int_eq(parse_u64_n("123456", 3, &v), 0);
	ck_assert_uint_eq(v, 123);
	ck_assert_int_eq(parse_u64_n("42 kB", 2, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(parse_u64_n("42 kB", 3, &v), -EINVAL);
	ck_assert_int_eq(parse_u64_n("42", 0, &v), -EINVAL);
	ck_assert_int_eq(parse_u64_n("-4", 2, &v), -EINVAL);
	ck_assert_int_eq(parse_u64_n("18446744073709551616", 20, &v), -ERANGE);
	ck_assert_int_eq(parse_u64_n("18446744073709551615", 20, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(test_parse_size)
{
	const uint64_t base = 8 * GiB;
	static const struct {
		const char *s;
		int err;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "4096B", 0, 4096 },
		{ "4096b", 0, 4096 },
		{ "4K", 0, 4 * KiB },
		{ "4k", 0, 4 * KiB },
		{ "4KB", 0, 4 * KiB },
		{ "4KiB", 0, 4 * KiB },
		{ "4kib", 0, 4 * KiB },
		{ "4Ki", 0, 4 * KiB },
		{ "512M", 0, 512 * MiB },
		{ "512MB", 0, 512 * MiB },
		{ "512MiB", 0, 512 * MiB },
		{ "4G", 0, 4 * GiB },
		{ "4GiB", 0, 4 * GiB },
		{ "4g", 0, 4 * GiB },
		{ "1T", 0, TiB },
		{ "1.5G", 0, 1610612736ULL },
		{ "0.5K", 0, 512 },
		{ "16777215T", 0, 0xffffff0000000000ULL },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "16777216T", -ERANGE, 0 },
		{ "17179869184G", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999G", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 },
		{ "4X", -EINVAL, 0 },
		{ "4GX", -EINVAL, 0 },
		{ "4GiBB", -EINVAL, 0 },
		{ "4iB", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1G", -EINVAL, 0 },
		{ " 4G", -EINVAL, 0 },
		{ "4 G", -EINVAL, 0 },
		{ "4G ", -EINVAL, 0 },
		{ "G", -EINVAL, 0 },
		{ ".5G", -EINVAL, 0 },
		{ "1.G", -EINVAL, 0 },
		{ "1.5", -EINVAL, 0 },	/* fraction of a byte */
		{ "1.5B", -EINVAL, 0 },
		/* percentages of base = 8 GiB = 8589934592 */
		{ "10%", 0, 858993459ULL },	/* 858993459.2, truncated */
		{ "50%", 0, 4 * GiB },
		{ "100%", 0, 8 * GiB },
		{ "12.5%", 0, GiB },
		{ "0%", 0, 0 },
		{ "101%", -EINVAL, 0 },
		{ "100.5%", -EINVAL, 0 },
		{ "%", -EINVAL, 0 },
		{ "-5%", -EINVAL, 0 },
		{ "10%%", -EINVAL, 0 },
		{ "10 %", -EINVAL, 0 },
	};
	uint64_t v;
	size_t i;
	int err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		err = parse_size(cases[i].s, base, &v);
		ck_assert_msg(err == cases[i].err, "parse_size(\"%s\") = %d, want %d",
			      cases[i].s, err, cases[i].err);
		if (!err)
			ck_assert_msg(v == cases[i].v, "parse_size(\"%s\") = %llu, want %llu",
				      cases[i].s, (unsigned long long)v,
				      (unsigned long long)cases[i].v);
	}
	/* a percentage needs a base */
	ck_assert_int_eq(parse_size("10%", 0, &v), -EINVAL);
	/* the largest base cannot overflow */
	ck_assert_int_eq(parse_size("100%", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(parse_size(NULL, base, &v), -EINVAL);
}
END_TEST

/* D5: the largest accepted duration after any clock value is "never", not the past */
START_TEST(test_ns_after_saturates)
{
	uint64_t big;

	ck_assert_int_eq(parse_duration("18446744073s", &big), 0);
	ck_assert_uint_eq(ns_after(now_ns(), big), UINT64_MAX);
	ck_assert_uint_eq(ns_after(UINT64_MAX - 5, 10), UINT64_MAX);
	ck_assert_uint_eq(ns_after(UINT64_MAX - 10, 10), UINT64_MAX);
	ck_assert_uint_eq(ns_after(1000, 500), 1500);
	ck_assert_uint_eq(ns_after(0, UINT64_MAX), UINT64_MAX);
}
END_TEST

START_TEST(test_parse_duration)
{
	static const struct {
		const char *s;
		int err;
		uint64_t ns;
	} cases[] = {
		{ "500ms", 0, 500000000ULL },
		{ "2s", 0, 2000000000ULL },
		{ "1.5s", 0, 1500000000ULL },
		{ "5m", 0, 300000000000ULL },
		{ "1h", 0, 3600000000000ULL },
		{ "1.25h", 0, 4500000000000ULL },
		{ "10", 0, 10000000000ULL },
		{ "0.25", 0, 250000000ULL },
		{ "0", 0, 0 },
		{ "100us", 0, 100000ULL },
		{ "7ns", 0, 7 },
		{ "1.5ns", 0, 1 },
		{ "2MS", 0, 2000000ULL },
		{ "0.000000001", 0, 1 },
		{ "1.0000000009", 0, 1000000000ULL },	/* decimals past 9 ignored */
		{ "18446744073s", 0, 18446744073000000000ULL },
		{ "18446744074s", -ERANGE, 0 },
		{ "99999999999999999999999ns", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "s", -EINVAL, 0 },
		{ "1x", -EINVAL, 0 },
		{ "1sec", -EINVAL, 0 },
		{ "1 s", -EINVAL, 0 },
		{ "-1s", -EINVAL, 0 },
		{ "1.s", -EINVAL, 0 },
		{ ".5s", -EINVAL, 0 },
		{ "1.5.5s", -EINVAL, 0 },
	};
	uint64_t ns;
	size_t i;
	int err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ns = 12345;
		err = parse_duration(cases[i].s, &ns);
		ck_assert_msg(err == cases[i].err, "parse_duration(\"%s\") = %d, want %d",
			      cases[i].s, err, cases[i].err);
		if (!err)
			ck_assert_msg(ns == cases[i].ns, "parse_duration(\"%s\") = %llu, want %llu",
				      cases[i].s, (unsigned long long)ns,
				      (unsigned long long)cases[i].ns);
	}
}
END_TEST

/* percentages of a partition add up to exactly 100 (explain's breakdown) */
START_TEST(test_pct_partition)
{
	/* explain's sample: 62/24/18 naive rounding gave 104% on overlapping parts;
	 * thirds: naive 33+33+33 = 99 */
	static const uint64_t thirds[] = { 1, 1, 1 }, skew[] = { 995, 3, 1, 1, 0 };
	static const uint64_t halves[] = { 5, 5, 0 }, zero[] = { 0, 0 };
	int out[8], sum;

	pct_partition(thirds, 3, out);
	ck_assert_int_eq(out[0] + out[1] + out[2], 100);
	ck_assert_int_eq(out[0], 34);
	pct_partition(skew, 5, out);
	for (int i = sum = 0; i < 5; i++)
		sum += out[i];
	ck_assert_int_eq(sum, 100);
	ck_assert_int_eq(out[0], 100);	/* 99.5 takes the point left; 0.3 does not */
	ck_assert_int_eq(out[1], 0);
	ck_assert_int_eq(out[4], 0);
	pct_partition(halves, 3, out);
	ck_assert_int_eq(out[0], 50);
	ck_assert_int_eq(out[1], 50);
	ck_assert_int_eq(out[2], 0);
	pct_partition(zero, 2, out);
	ck_assert_int_eq(out[0] + out[1], 0);
	/* random partitions, huge and tiny */
	srand(42);
	for (int k = 0; k < 1000; k++) {
		uint64_t p[7];
		int n = 1 + rand() % 7;

		for (int i = 0; i < n; i++)
			p[i] = (uint64_t)rand() << (rand() % 30);
		p[0] += 1;
		pct_partition(p, n, out);
		for (int i = sum = 0; i < n; i++) {
			ck_assert_int_ge(out[i], 0);
			sum += out[i];
		}
		ck_assert_int_eq(sum, 100);
	}
}
END_TEST

START_TEST(test_fmt_bytes)
{
	static const struct {
		uint64_t bytes;
		const char *s;
	} cases[] = {
		{ 0, "0 B" },
		{ 1, "1 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.00 KiB" },
		{ 1536, "1.50 KiB" },
		{ 10234, "9.99 KiB" },
		{ 10239, "10.0 KiB" },		/* 9.999 KiB rounds up a digit */
		{ 102399, "100 KiB" },		/* 99.999 KiB */
		{ 812 * KiB, "812 KiB" },
		{ 1047552, "1023 KiB" },
		{ 1048575, "1.00 MiB" },	/* 1023.999 KiB rounds into MiB */
		{ 25 * MiB, "25.0 MiB" },
		{ 1288490189ULL, "1.20 GiB" },
		{ 3 * TiB, "3.00 TiB" },
		{ 1ULL << 60, "1.00 EiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};
	char buf[32];
	uint64_t b;
	size_t i;
	int shift;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(fmt_bytes(buf, sizeof(buf), cases[i].bytes), cases[i].s);

	/* at most 10 characters around every unit boundary */
	for (shift = 0; shift < 64; shift++) {
		for (b = (1ULL << shift) - 3; b != (1ULL << shift) + 3; b++) {
			fmt_bytes(buf, sizeof(buf), b);
			ck_assert_msg(strlen(buf) <= 10, "fmt_bytes(%llu) = \"%s\"",
				      (unsigned long long)b, buf);
		}
	}
	/* a short buffer is cut, NUL-terminated */
	ck_assert_str_eq(fmt_bytes(buf, 5, 25 * MiB), "25.0");
}
END_TEST

START_TEST(test_read_file)
{
	char dir[] = "/tmp/memacct-ut-XXXXXX", path[PATH_MAX], *big, *buf;
	const size_t big_len = 100000;
	long len;
	size_t i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_text(dir, "small", "hello\nworld\n");
	xsnprintf(path, sizeof(path), "%s/small", dir);

	len = read_file(path, &buf, 4096);
	ck_assert_int_eq(len, 12);
	ck_assert_str_eq(buf, "hello\nworld\n");
	free(buf);

	/* longer than max: refused, never cut (its end was lost silently);
	 * exactly max: read */
	buf = (char *)1;
	ck_assert_int_eq(read_file(path, &buf, 5), -EFBIG);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(read_file(path, &buf, 11), -EFBIG);
	len = read_file(path, &buf, 12);
	ck_assert_int_eq(len, 12);
	ck_assert_str_eq(buf, "hello\nworld\n");
	free(buf);
	/* a kernel file (st_size 0, made at read) past max */
	ck_assert_int_eq(read_file("/proc/self/status", &buf, 64), -EFBIG);

	ck_assert_int_eq(read_file(path, &buf, 0), -EINVAL);

	/* larger than the first buffer: grows */
	big = malloc(big_len + 1);
	ck_assert_ptr_nonnull(big);
	for (i = 0; i < big_len; i++)
		big[i] = 'a' + i % 26;
	big[big_len] = '\0';
	write_text(dir, "big", big);
	xsnprintf(path, sizeof(path), "%s/big", dir);
	len = read_file(path, &buf, 1 << 20);
	ck_assert_int_eq(len, big_len);
	ck_assert_int_eq(memcmp(buf, big, big_len + 1), 0);
	free(buf);
	ck_assert_int_eq(read_file(path, &buf, 65537), -EFBIG);
	ck_assert_int_eq(read_file(path, &buf, big_len - 1), -EFBIG);
	len = read_file(path, &buf, big_len);
	ck_assert_int_eq(len, big_len);
	ck_assert_int_eq(memcmp(buf, big, big_len + 1), 0);
	free(buf);
	/* one show: full reads go on to the end, relative to a directory */
	{
		int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

		ck_assert_int_ge(dfd, 0);
		len = read_file_at(dfd, "big", &buf, 1 << 20, READ_FILE_ONE_SHOW);
		ck_assert_int_eq(len, big_len);
		ck_assert_int_eq(memcmp(buf, big, big_len + 1), 0);
		free(buf);
		ck_assert_int_eq(read_file_at(dfd, "big", &buf, big_len - 1, READ_FILE_ONE_SHOW),
				 -EFBIG);
		ck_assert_int_eq(read_file_at(dfd, "none", &buf, 64, 0), -ENOENT);
		close(dfd);
	}
	free(big);

	write_text(dir, "empty", "");
	xsnprintf(path, sizeof(path), "%s/empty", dir);
	len = read_file(path, &buf, 4096);
	ck_assert_int_eq(len, 0);
	ck_assert_str_eq(buf, "");
	free(buf);

	xsnprintf(path, sizeof(path), "%s/missing", dir);
	buf = (char *)1;
	ck_assert_int_eq(read_file(path, &buf, 4096), -ENOENT);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(read_file(dir, &buf, 4096), -EISDIR);

	/* a /proc file has st_size 0 but content */
	len = read_file("/proc/self/status", &buf, 1 << 20);
	ck_assert_int_gt(len, 100);
	ck_assert_int_eq(strncmp(buf, "Name:\t", 6), 0);
	ck_assert_uint_eq(strlen(buf), (size_t)len);
	free(buf);

	ck_assert_int_eq(rm_tree(dir), 0);
}
END_TEST

START_TEST(test_write_file)
{
	char dir[] = "/tmp/memacct-ut-XXXXXX", path[PATH_MAX], *buf;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_text(dir, "f", "");
	xsnprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_int_eq(write_file(path, "1234\n"), 0);
	ck_assert_int_eq(read_file(path, &buf, 64), 5);
	ck_assert_str_eq(buf, "1234\n");
	free(buf);
	ck_assert_int_eq(write_file(path, "56"), 0);	/* replaces, not overwrites */
	ck_assert_int_eq(read_file(path, &buf, 64), 2);
	ck_assert_str_eq(buf, "56");
	free(buf);

	/* never creates a file */
	xsnprintf(path, sizeof(path), "%s/missing", dir);
	ck_assert_int_eq(write_file(path, "1"), -ENOENT);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(write_file(dir, "1"), -EISDIR);
	/* the kernel's refusal on write() comes back as -errno */
	ck_assert_int_eq(write_file("/dev/full", "1"), -ENOSPC);

	ck_assert_int_eq(rm_tree(dir), 0);
}
END_TEST

/* capture what @fd (1 or 2) receives while running the body */
struct capture {
	int fd, saved;
	FILE *tmp;
};

static void capture_start(struct capture *c, int fd)
{
	fflush(stdout);
	fflush(stderr);
	c->fd = fd;
	c->tmp = tmpfile();
	ck_assert_ptr_nonnull(c->tmp);
	c->saved = dup(fd);
	ck_assert_int_ge(c->saved, 0);
	ck_assert_int_ge(dup2(fileno(c->tmp), fd), 0);
}

/* returns the captured bytes, malloc'd */
static char *capture_end(struct capture *c)
{
	char *buf;
	long len;

	fflush(stdout);
	fflush(stderr);
	ck_assert_int_ge(dup2(c->saved, c->fd), 0);
	close(c->saved);
	len = ftell(c->tmp);
	ck_assert_int_ge(len, 0);
	buf = calloc(1, len + 1);
	ck_assert_ptr_nonnull(buf);
	rewind(c->tmp);
	ck_assert_int_eq(fread(buf, 1, len, c->tmp), len);
	fclose(c->tmp);
	return buf;
}

START_TEST(test_p_err_json)
{
	/* a hostile comm: quote, backslash, newline, ESC, DEL */
	const char *comm = "a\"b\\c\n\x1b[2J\x7f";
	struct capture c;
	json_error_t jerr;
	json_t *obj;
	char *out, *p;

	json_output = true;
	capture_start(&c, STDERR_FILENO);
	p_err("cannot attach to %s: %s", comm, strerror(EPERM));
	out = capture_end(&c);
	json_output = false;

	/* one line; no raw control byte before its newline */
	p = strchr(out, '\n');
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, "\n");
	for (p = out; *p != '\n'; p++)
		ck_assert_msg((unsigned char)*p >= 0x20, "raw byte 0x%02x in %s", *p, out);

	obj = json_loads(out, 0, &jerr);
	ck_assert_msg(obj, "not JSON (%s): %s", jerr.text, out);
	ck_assert_str_eq(json_string_value(json_object_get(obj, "error")),
			 "cannot attach to a\"b\\c\n\x1b[2J\x7f: Operation not permitted");
	ck_assert_int_eq(json_object_size(obj), 1);
	json_decref(obj);
	free(out);

	/* invalid UTF-8 still gives valid JSON: U+FFFD, as report JSON has it */
	json_output = true;
	capture_start(&c, STDERR_FILENO);
	p_err("bad %s", "x\xff\xfe");
	out = capture_end(&c);
	json_output = false;
	obj = json_loads(out, 0, &jerr);
	ck_assert_msg(obj, "not JSON (%s): %s", jerr.text, out);
	ck_assert_str_eq(json_string_value(json_object_get(obj, "error")),
			 "bad x\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(obj);
	free(out);
}
END_TEST

/* the one UTF-8 check (JSON strings, OpenMetrics label values) */
/* The one \ooo decoder (mountinfo, numa_maps paths). */
START_TEST(test_octal_unescape)
{
	char out[16];

	ck_assert_int_eq(octal_unescape(out, sizeof(out), "a\\040b\\134", 10), 4);
	ck_assert_str_eq(out, "a b\\");
	/* cut short, out of range, or not octal: kept as they are */
	ck_assert_int_eq(octal_unescape(out, sizeof(out), "x\\04", 4), 4);
	ck_assert_str_eq(out, "x\\04");
	ck_assert_int_eq(octal_unescape(out, sizeof(out), "\\400\\089", 8), 8);
	ck_assert_str_eq(out, "\\400\\089");
	/* only @n bytes are read */
	ck_assert_int_eq(octal_unescape(out, sizeof(out), "ab\\011", 3), 3);
	ck_assert_str_eq(out, "ab\\");
	ck_assert_int_eq(octal_unescape(out, 4, "abcd", 4), -ENAMETOOLONG);
	ck_assert_int_eq(octal_unescape(out, 5, "abcd", 4), 4);
}
END_TEST

START_TEST(test_utf8_len)
{
	static const struct { const char *s; size_t len; } cases[] = {
		{ "a", 1 }, { "\xc3\xa9", 2 }, { "\xe2\x82\xac", 3 }, { "\xf0\x9f\x98\x80", 4 },
		{ "\xf4\x8f\xbf\xbf", 4 },	/* U+10FFFF */
		{ "\xc0\xaf", 0 }, { "\xe0\x80\xaf", 0 },	/* overlong '/' */
		{ "\xed\xa0\x80", 0 },		/* surrogate U+D800 */
		{ "\xf4\x90\x80\x80", 0 },	/* U+110000 */
		{ "\xc3", 0 }, { "\xe2\x82", 0 },	/* truncated */
		{ "\xff", 0 }, { "\x80", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(utf8_len((const unsigned char *)cases[i].s) == cases[i].len,
			      "case %zu: %zu, want %zu", i,
			      utf8_len((const unsigned char *)cases[i].s), cases[i].len);
}
END_TEST

START_TEST(test_p_err_plain)
{
	struct capture c, c_out;
	char *out, *out_json;

	json_output = false;
	verbose = false;
	capture_start(&c, STDERR_FILENO);
	p_err("no memory cgroup at %s", "/sys/fs/cgroup");
	p_warn("map %d%% full", 90);
	p_info("hidden without -v");
	verbose = true;
	p_info("shown with -v\n");
	verbose = false;
	out = capture_end(&c);
	ck_assert_str_eq(out, "Error: no memory cgroup at /sys/fs/cgroup\n"
			      "Warning: map 90% full\n"
			      "shown with -v\n");
	free(out);

	/* JSON mode: the error object on stderr, nothing on stdout (schema) */
	json_output = true;
	capture_start(&c, STDERR_FILENO);
	capture_start(&c_out, STDOUT_FILENO);
	p_err("no BTF");
	out_json = capture_end(&c_out);
	out = capture_end(&c);
	json_output = false;
	ck_assert_str_eq(out_json, "");
	ck_assert_str_eq(out, "{\"error\": \"no BTF\"}\n");
	free(out);
	free(out_json);
}
END_TEST

/*
 * stderr as journald's stream ($JOURNAL_STREAM = its device:inode): each
 * line starts with its syslog priority, as sd-daemon(3) prefixes; another
 * stream (the same variable, stderr elsewhere) gets none.
 */
START_TEST(test_p_err_journal)
{
	struct capture c;
	struct stat st;
	char js[64], *out;

	json_output = false;
	verbose = true;
	capture_start(&c, STDERR_FILENO);
	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	p_err("no BTF");
	p_warn("map full");
	p_info("attached");
	out = capture_end(&c);
	ck_assert_str_eq(out, "<3>Error: no BTF\n<4>Warning: map full\n<6>attached\n");
	free(out);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	capture_start(&c, STDERR_FILENO);
	p_err("no BTF");
	out = capture_end(&c);
	ck_assert_str_eq(out, "Error: no BTF\n");
	free(out);
	unsetenv("JOURNAL_STREAM");
	verbose = false;
}
END_TEST

/* library errnos to exit codes: the README's table (2 input, 3 environment, 4 runtime) */
START_TEST(test_exit_code_of)
{
	ck_assert_int_eq(exit_code_of(-EINVAL), EXIT_USAGE);
	ck_assert_int_eq(exit_code_of(-EBUSY), EXIT_USAGE);
	ck_assert_int_eq(exit_code_of(-EPERM), EXIT_ENV);
	ck_assert_int_eq(exit_code_of(-ENOENT), EXIT_ENV);
	ck_assert_int_eq(exit_code_of(-EOPNOTSUPP), EXIT_ENV);
	ck_assert_int_eq(exit_code_of(-EIO), EXIT_RUNTIME);
	ck_assert_int_eq(exit_code_of(-ESRCH), EXIT_RUNTIME);
	ck_assert_int_eq(exit_code_of(-ENOMEM), EXIT_RUNTIME);
}
END_TEST

/* read_line(): lines whole with their NUL bytes, the bound, the end */
START_TEST(test_read_line)
{
	static const char text[] = "ab\n\0x\nlong line here\nend";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	char *buf = NULL;
	size_t cap = 0;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(read_line(&buf, &cap, f, 64), 3);
	ck_assert_str_eq(buf, "ab\n");
	ck_assert_int_eq(read_line(&buf, &cap, f, 64), 3);	/* "\0x\n" */
	ck_assert(buf[0] == '\0' && buf[1] == 'x');
	ck_assert_int_eq(read_line(&buf, &cap, f, 8), -E2BIG);
	/* the rest of the long line, then the last one without '\n' */
	fclose(f);
	f = fmemopen((void *)text, sizeof(text) - 1, "r");
	for (int i = 0; i < 3; i++)
		ck_assert_int_gt(read_line(&buf, &cap, f, 64), 0);
	ck_assert_int_eq(read_line(&buf, &cap, f, 64), 3);
	ck_assert_str_eq(buf, "end");
	ck_assert_int_eq(read_line(&buf, &cap, f, 64), -1);
	fclose(f);
	free(buf);
}
END_TEST

START_TEST(test_now_ns)
{
	uint64_t a, b;
	struct timespec ts = { 0, 2000000 };

	a = now_ns();
	nanosleep(&ts, NULL);
	b = now_ns();
	ck_assert_uint_gt(a, 0);
	ck_assert_uint_ge(b - a, 2000000);
	ck_assert_uint_lt(b - a, 2000000000ULL);
}
END_TEST

/* a stop past its deadline ends the process with EXIT_RUNTIME at the deadline */
START_TEST(test_stop_deadline)
{
	uint64_t t0 = now_ns(), took;
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (!pid) {
		arm_stop_deadline(1);
		sleep(10);	/* a shutdown that hangs */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	took = now_ns() - t0;
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), EXIT_RUNTIME);
	ck_assert_uint_ge(took, 900000000ULL);
	ck_assert_uint_lt(took, 9000000000ULL);
}
END_TEST

Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_u64);
	tcase_add_test(tc, test_octal_unescape);
	tcase_add_test(tc, test_parse_u64_n);
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_parse_duration);
	tcase_add_test(tc, test_ns_after_saturates);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_test(tc, test_fmt_bytes);
	tcase_add_test(tc, test_pct_partition);
	tcase_add_test(tc, test_p_err_json);
	tcase_add_test(tc, test_utf8_len);
	tcase_add_test(tc, test_p_err_plain);
	tcase_add_test(tc, test_p_err_journal);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_write_file);
	tcase_add_test(tc, test_now_ns);
	tcase_add_test(tc, test_stop_deadline);
	tcase_add_test(tc, test_exit_code_of);
	tcase_add_test(tc, test_read_line);
	suite_add_tcase(s, tc);
	return s;
}

/* Every suite the runner runs; the NAME of tests/unit_NAME.c. */
static const struct {
	const char *name;
	Suite *(*fn)(void);
} suites[] = {
	{ "util", util_suite },
	{ "proc", proc_suite },
	{ "cgroup", cgroup_suite },
	{ "report", report_suite },
	{ "smaps", smaps_suite },
	{ "limits", limits_suite },
	{ "metrics", metrics_suite },
	{ "numa", numa_suite },
	{ "usage", usage_suite },
	{ "phases", phases_suite },
	{ "oom_forecast", oom_forecast_suite },
	{ "record", record_suite },
	{ "bss_layout", bss_layout_suite },
};

/*
 * Missing suites: a table entry no file defines (a weak symbol left NULL),
 * or a unit_NAME.c here (cwd = tests/) with no table entry. Each is said;
 * returns their count.
 */
static int missing_suites(void)
{
	const size_t n = sizeof(suites) / sizeof(suites[0]);
	struct dirent *de;
	int missing = 0;
	DIR *d;

	for (size_t i = 0; i < n; i++)
		if (!suites[i].fn) {
			fprintf(stderr, "unit: %s_suite() is declared but defined nowhere "
				"(tests/unit_%s.c missing?)\n", suites[i].name, suites[i].name);
			missing++;
		}
	d = opendir(".");
	if (!d) {
		fprintf(stderr, "unit: cannot list tests/: %s\n", strerror(errno));
		return missing + 1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), i;

		if (l < 8 || strncmp(de->d_name, "unit_", 5) || strcmp(de->d_name + l - 2, ".c"))
			continue;
		for (i = 0; i < n; i++)
			if (strlen(suites[i].name) == l - 7 &&
			    !strncmp(de->d_name + 5, suites[i].name, l - 7))
				break;
		if (i == n) {
			fprintf(stderr, "unit: tests/%s has no suite in the runner's table "
				"(tests/unit_util.c)\n", de->d_name);
			missing++;
		}
	}
	closedir(d);
	return missing;
}

int main(void)
{
	SRunner *sr = NULL;
	int failed, missing = missing_suites();

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (!suites[i].fn)
			continue;
		if (!sr)
			sr = srunner_create(suites[i].fn());
		else
			srunner_add_suite(sr, suites[i].fn());
	}
	if (!sr)
		return 1;
	check_set_max_msg_size(1 << 20);	/* see tests/integration.c */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (missing)
		fprintf(stderr, "unit: FAILED: %d suite(s) missing\n", missing);
	return failed || missing ? 1 : 0;
}
