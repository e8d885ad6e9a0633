/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* util.h - errors, number parsing and human units shared by every command. */
#ifndef MEMACCT_UTIL_H
#define MEMACCT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/* memacct's version: --version, the .deb, the image, memacct_build_info */
#define MEMACCT_VERSION "0.1.0"

/* Exit codes (docs/memacct.1.md): */
enum {
	EXIT_OK = 0,
	EXIT_VIOLATION = 1,	/* audit: a cap is exceeded */
	EXIT_PARTIAL = 1,	/* reclaim: the kernel reclaimed less than asked */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_ENV = 3,		/* environment: not root, no BTF, no memory cgroup */
	EXIT_RUNTIME = 4,	/* runtime failure */
};

/*
 * array_grow() - room for one more element of @size at the end of the
 * array *@v (a pointer to the array's pointer), which holds @n elements of
 * room for *@cap: doubled (from 64) when full. Returns the element at index
 * @n (the caller counts it), or NULL when out of memory (*@v unchanged).
 */
void *array_grow(void *v, size_t n, size_t *cap, size_t size);

extern bool json_output;	/* -j/--json given */
extern bool verbose;		/* -v given */
extern bool bytes_output;	/* --bytes: tables give exact bytes, no units */
extern bool timestamps;		/* -T: reports carry the wall-clock time */

/*
 * report_stream() - where reports go: the file of -o FILE, else stdout.
 * set_report_file() opens @path for it (created or truncated, 0644); 0 or
 * a negative errno. The stream is owned by util.c and flushed at exit.
 */
FILE *report_stream(void);
int set_report_file(const char *path);
/*
 * report_written() - after a report was written to @f (report_stream()),
 * with errno set to 0 before the writing began (a failed write's errno is
 * read): flushes @f and returns 0 when the report went out, -EPIPE when
 * its reader went away (a closed pipe or socket: SIGPIPE is ignored by run
 * and attach), another negative errno (-EIO when none was set) for other
 * failures, which main() turns into exit 4 at the end. After -EPIPE, said
 * once on stderr, reports_closed() is true for the rest of the session:
 * print_report() writes nothing more, run keeps waiting for CMD and exits
 * with its status, attach restores the limits it set and exits 0, and
 * main() does not count it as a failure.
 */
int report_written(FILE *f);
bool reports_closed(void);

/*
 * fmt_time_now() - the wall-clock time as "HH:MM:SS" (@iso false, local
 * time, as bcc tools' -T) or RFC 3339 UTC with milliseconds
 * ("2026-11-23T21:15:03.123Z", @iso true) into @buf. Returns @buf.
 */
char *fmt_time_now(char *buf, size_t len, bool iso);

/*
 * p_err() - print "Error: ..." on stderr, or {"error": "..."} on stderr in
 * JSON mode (stdout carries reports only). p_warn() always goes to stderr.
 * p_notice(): an event worth a line at the default verbosity (an OOM
 * kill's verdict), unprefixed, the journal's notice priority. p_info() only
 * with -v.
 */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * opt_error() - one p_err() line for what getopt_long() returned: @c '?'
 * (unknown or ambiguous option) or ':' (option without its value; the
 * option string starts with ':' and opterr is 0, set by main()), in command
 * @cmd (NULL: memacct's global options). Reads optopt/optind and @argv.
 * Returns EXIT_USAGE.
 */
int opt_error(const char *cmd, int c, char *const argv[]);

/*
 * parse_u64() - parse a whole decimal number. Returns 0, or -EINVAL when
 * @s is empty, has trailing bytes or a sign, -ERANGE on overflow.
 */
int parse_u64(const char *s, uint64_t *out);

/*
 * parse_u64_n() - the same for exactly the @len bytes at @s (a field inside a
 * kernel file, not NUL-terminated): digits only. 0, -EINVAL, -ERANGE.
 */
int parse_u64_n(const char *s, size_t len, uint64_t *out);

/*
 * parse_size() - "4096", "4K", "4KiB", "4k", "512M", "512MB", "4G", "4GiB",
 * "1T", or "10%" of @percent_of (bytes). Units are binary (K = 1024) as in
 * the kernel's memparse(). Returns 0 and bytes in @out, or -EINVAL (bad
 * token, percentage without a base, > 100%), -ERANGE (overflow).
 */
int parse_size(const char *s, uint64_t percent_of, uint64_t *out);

/*
 * parse_duration() - "500ms", "2s", "1.5s", "5m", "1h", a bare number is
 * seconds. Returns 0 and nanoseconds in @out_ns, or -EINVAL / -ERANGE.
 */
int parse_duration(const char *s, uint64_t *out_ns);

/*
 * fmt_bytes() - human units with binary prefixes ("0 B", "812 KiB",
 * "25.0 MiB", "1.20 GiB"); at most 10 characters. Returns @buf.
 */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes);

/*
 * text_wrap() - @text's spaces turned into line breaks, in place, so that
 * no line is over @width characters (a longer word keeps a line of its
 * own): help texts made from tables. Returns @text.
 */
char *text_wrap(char *text, size_t width);

/*
 * pct_partition() - whole percentages of the @n disjoint @parts of a total
 * (their sum) into @out: rounded by largest remainder, so they add up to
 * exactly 100 when the sum is not 0 (all 0 when it is). @n <= 32.
 */
void pct_partition(const uint64_t *parts, int n, int *out);

/*
 * read_file() - read a whole (kernel) file into a NUL-terminated malloc'd
 * buffer of up to @max bytes (caller frees). Returns the length, or
 * negative errno (-ENOENT when it vanished, as /proc/PID files do; -EFBIG
 * when it holds more than @max bytes: never cut short).
 */
long read_file(const char *path, char **out, size_t max);

/*
 * READ_FILE_ONE_SHOW: the file is a kernfs seq_file whose text is one
 * record (every memory.* file of a cgroup: kernfs_seq_start() hands out a
 * single record unless the file has its own seq_start, as cgroup.procs
 * has), so a read returns all of it that fits (fs/seq_file.c
 * seq_read_iter()) and a read shorter than asked is the end: no second
 * read for the EOF.
 */
#define READ_FILE_ONE_SHOW	1u

/*
 * read_file_at() - read_file() of @path relative to the directory @dirfd
 * (AT_FDCWD: as read_file()), with @flags (READ_FILE_ONE_SHOW).
 */
long read_file_at(int dirfd, const char *path, char **out, size_t max, unsigned int flags);

/*
 * read_line() - getline(3) with a bound: the next line of @f, its '\n'
 * kept, into *@buf (grown as needed, realloc'd; the caller frees), NUL
 * bytes and all. Returns its length in bytes, -1 at the end of the file,
 * -E2BIG for a line longer than @max bytes (the rest of it left unread:
 * a file that is no recording, /dev/zero, costs at most @max), -ENOMEM.
 */
ssize_t read_line(char **buf, size_t *cap, FILE *f, size_t max);

/* write_file() - write @s to an existing file (cgroupfs). 0 or -errno. */
int write_file(const char *path, const char *s);

/*
 * write_line() - @s and a newline to @fd in a single write(), whole or not
 * at all: a part written (a full disk) is cut off again (ftruncate to the
 * size before), so the file never ends in a cut line. 0, or negative errno
 * (-ENOSPC for a short write).
 */
int write_line(int fd, const char *s);

/* monotonic clock, ns */
uint64_t now_ns(void);
/*
 * ns_after() - @t + @d nanoseconds, saturated at UINT64_MAX ("never"):
 * durations are accepted up to 2^64 ns, and a wrapped deadline would be in
 * the past (a busy loop; reliability audit D5).
 */
uint64_t ns_after(uint64_t t, uint64_t d);
/* max_u64() - the larger of @a and @b */
static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* min_u64() - the smaller of @a and @b */
static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}


/*
 * octal_unescape() - @n bytes of @src with each \ooo (\000 to \377)
 * decoded, the way seq_file escapes names (mountinfo's mangle(),
 * seq_file_path() in numa_maps), into @dst of @len bytes, NUL-terminated.
 * The length written, or -ENAMETOOLONG (nothing usable in @dst).
 */
long octal_unescape(char *dst, size_t len, const char *src, size_t n);

/*
 * utf8_len() - bytes of the valid UTF-8 sequence at @s (1-4), 0 if invalid
 * (overlong forms, surrogates and code points past U+10FFFF included): the
 * one UTF-8 check of JSON strings and OpenMetrics label values.
 */
size_t utf8_len(const unsigned char *s);
/*
 * json_string_sanitized() - a JSON string from bytes that may be hostile
 * (a comm set by prctl): invalid UTF-8 becomes U+FFFD; control bytes are
 * escaped by the writer. Never NULL for non-NULL @s (new reference).
 */
json_t *json_string_sanitized(const char *s);

/*
 * exit_code_of() - the exit code of a library error, a negative errno the
 * library has already explained: EXIT_USAGE for -EINVAL, -EBUSY, -ERANGE
 * (the input was refused), EXIT_ENV for -EPERM, -EACCES, -ENOENT,
 * -EOPNOTSUPP (not root, no BTF, a file this kernel lacks), EXIT_RUNTIME
 * for any other. Library code returns errnos; only commands choose exit
 * codes.
 */
int exit_code_of(int err);

#endif
