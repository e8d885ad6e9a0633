// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_matrix.c - the hostile-input matrix (reliability audit
 * 2026-11, issue 14): every command and option fed hostile values (sizes,
 * durations near 2^64 ns, PIDs of nothing, of a kernel thread, of a zombie,
 * cgroup names that cannot name one, unknown options, missing values), as
 * root and as nobody, from one table. Each invocation must end with its
 * documented status (README: 0 ok, 1 audit violation, 2 usage, 3
 * environment, 4 runtime), say why in one line on stderr ("Error: ..." or,
 * with -j, one {"error": ...} object, stdout then empty), not crash, and
 * leave no cgroup, pin, BPF link or limits state behind. Under
 * `make check SANITIZE=1` any sanitizer report fails the run as well.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "integration.h"

#define NOBODY 65534
#define MAXARGS 16

enum {
	M_OK = 1 << 0,		/* a hostile value that is valid: ends 0 by itself */
	M_STOP = 1 << 1,	/* runs until stopped: SIGINT after STOP_MS, then 0 */
	M_LINES = 1 << 2,	/* more stderr lines allowed (candidates, warnings) */
	M_DETACH = 1 << 3,	/* pins by design: `detach --pin-path @PIN@` after it */
	M_NOJSON = 1 << 4,	/* no -j run (its report would be the same) */
	M_HTTP = 1 << 5,	/* a daemon that serves */
};

#define STOP_MS 2500
#define HANG_MS 30000

struct mcase {
	const char *argv[MAXARGS];	/* after "memacct"; @NAME@ placeholders below */
	int rc;				/* status as root */
	int rc_nobody;			/* status as nobody */
	unsigned int flags;
};

#define DUR_MAX "18446744073s"		/* the largest whole second below 2^64 ns */
#define DUR_OVER "18446744074s"		/* over 2^64 ns */
#define NS_OVER "18446744073709551616ns"
#define PID_OVER "2147483648"		/* 2^31 */
#define SIZE_OVER "99999999999999999999T"

/*
 * @CG@ a cgroup of ours (memacct-test-mx-PID), @DUP@ a name twice below it,
 * @ZOMBIE@ a zombie of ours, @GONE@ a PID nobody has, @HUGE@ a 5,000-byte
 * name, @NONUTF8@ bytes FF FE, @NL@ a name with a newline, @PIN@ a bpffs
 * directory of ours, @LISTEN@ 127.0.0.1:PORT of ours.
 */
static const struct mcase cases[] = {
	/* global options, commands */
	{ { NULL }, 2, 2, 0 },
	{ { "--bogus", "run", "--", "true" }, 2, 2, 0 },
	{ { "-Z", "run", "--", "true" }, 2, 2, 0 },
	{ { "-o" }, 2, 2, 0 },
	{ { "-o", "", "run", "--", "true" }, 2, 2, 0 },
	{ { "-o", "/nonexistent-memacct-dir/r.json", "run", "--", "true" }, 2, 2, 0 },
	{ { "bogus-command" }, 2, 2, 0 },
	{ { "" }, 2, 2, 0 },
	{ { "help", "bogus" }, 2, 2, 0 },
	{ { "help", "run", "extra" }, 2, 2, 0 },
	{ { "help", "" }, 2, 2, 0 },
	{ { "help", "--bogus" }, 2, 2, 0 },
	{ { "--version" }, 0, 0, M_OK | M_NOJSON },
	/* run */
	{ { "run" }, 2, 2, 0 },
	{ { "run", "--" }, 2, 2, 0 },
	{ { "run", "--bogus", "--", "true" }, 2, 2, 0 },
	{ { "run", "--json=1", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i" }, 2, 2, 0 },
	{ { "run", "-i", "", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", "-1s", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", "0", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", "garbage", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", "1e99s", "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", DUR_OVER, "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", NS_OVER, "--", "true" }, 2, 2, 0 },
	{ { "run", "-i", DUR_MAX, "--", "true" }, 0, 3, M_OK },
	{ { "run", "--memory-max", "-1", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "0x", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "1e99", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", SIZE_OVER, "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "12Q", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "0", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "101%", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-high", "-1", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-high", SIZE_OVER, "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-swap-max", "12Q", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-swap-max", "1e99", "--", "true" }, 2, 2, 0 },
	{ { "run", "--memory-max", "16E", "--memory-swap-max", "16E", "--", "true" }, 2, 2, 0 },
	{ { "run", "--", "/nonexistent-memacct-cmd" }, 127, 3, M_OK | M_LINES },
	/* attach */
	{ { "attach" }, 2, 2, 0 },
	{ { "attach", "--bogus" }, 2, 2, 0 },
	{ { "attach", "--cgroup" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--pid", "1" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "memacct-test-no-such-cgroup" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@DUP@" }, 2, 2, M_LINES },
	{ { "attach", "--cgroup", "" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "." }, 2, 2, 0 },
	{ { "attach", "--cgroup", ".." }, 2, 2, 0 },
	{ { "attach", "--cgroup", "../.." }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@/../../.." }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@HUGE@" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@NONUTF8@" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@NL@" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "/etc/passwd" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "/tmp" }, 2, 2, 0 },
	{ { "attach", "--pid", "0" }, 2, 2, 0 },
	{ { "attach", "--pid", "-1" }, 2, 2, 0 },
	{ { "attach", "--pid", PID_OVER }, 2, 2, 0 },
	{ { "attach", "--pid", "2147483647" }, 2, 2, 0 },
	{ { "attach", "--pid", "" }, 2, 2, 0 },
	{ { "attach", "--pid", "12abc" }, 2, 2, 0 },
	{ { "attach", "--pid", "@GONE@" }, 2, 2, 0 },
	{ { "attach", "--pid", "2" }, 2, 2, 0 },
	{ { "attach", "-p", "@ZOMBIE@" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--interval", "-1s" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--interval", DUR_OVER }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--duration", "garbage" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--duration", "0" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "1s", "0" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "1s", "-1" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "1s", "99999999999999999999" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "1s", "1", "extra" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--duration", "1s", "1s", "1" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--memory-max", "-1" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--memory-high", "0x" }, 2, 2, 0 },
	{ { "attach", "--cgroup", "@CG@", "--memory-swap-max", SIZE_OVER }, 2, 2, 0 },
	{ { "attach", "--cgroup", "/", "--memory-max", "1G" }, 2, 3, 0 },
	/* durations near 2^64 ns that are valid: no spin, no report storm */
	{ { "attach", "--cgroup", "@CG@", "--interval", DUR_MAX, "--duration", "1s" }, 0, 3, M_OK },
	{ { "attach", "--cgroup", "@CG@", "--duration", DUR_MAX }, 0, 3, M_STOP },
	{ { "attach", "--cgroup", "@CG@", DUR_MAX, "1000000" }, 0, 3, M_STOP },
	/* explain */
	{ { "explain" }, 2, 2, 0 },
	{ { "explain", "--bogus", "1" }, 2, 2, 0 },
	{ { "explain", "-p" }, 2, 2, 0 },
	{ { "explain", "1", "2" }, 2, 2, 0 },
	{ { "explain", "1", "--cgroup", "@CG@" }, 2, 2, 0 },
	{ { "explain", "0" }, 2, 2, 0 },
	{ { "explain", "-1" }, 2, 2, 0 },
	{ { "explain", PID_OVER }, 2, 2, 0 },
	{ { "explain", "2147483647" }, 2, 2, 0 },
	{ { "explain", "" }, 2, 2, 0 },
	{ { "explain", "@GONE@" }, 2, 2, 0 },
	{ { "explain", "2" }, 2, 2, 0 },
	{ { "explain", "-p", "@ZOMBIE@" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "memacct-test-no-such-cgroup" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "@DUP@" }, 2, 2, M_LINES },
	{ { "explain", "--cgroup", ".." }, 2, 2, 0 },
	{ { "explain", "--cgroup", "" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "@HUGE@" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "@NONUTF8@" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "@NL@" }, 2, 2, 0 },
	{ { "explain", "--cgroup", "/etc/passwd" }, 2, 2, 0 },
	{ { "explain", "1", "--by", "bogus" }, 2, 2, 0 },
	{ { "explain", "1", "--top", "0" }, 2, 2, 0 },
	{ { "explain", "1", "--top", "-1" }, 2, 2, 0 },
	{ { "explain", "1", "--top", "99999999999999999999" }, 2, 2, 0 },
	{ { "explain", "1", "--numa-threshold", "101" }, 2, 2, 0 },
	{ { "explain", "1", "--numa-threshold", "-1" }, 2, 2, 0 },
	{ { "explain", "1", "--numa-threshold", "" }, 2, 2, 0 },
	{ { "explain", "1", "--watch", "-1s" }, 2, 2, 0 },
	{ { "explain", "1", "--watch", "garbage" }, 2, 2, 0 },
	{ { "explain", "1", "--watch", DUR_OVER }, 2, 2, 0 },
	{ { "explain", "--cgroup", "@CG@", "--watch", DUR_MAX }, 0, 3, M_STOP | M_LINES },
	{ { "explain", "--cgroup", "@CG@", "--pin-path", "/nonexistent-memacct-pins" }, 0, 0,
	  M_OK },
	/* audit */
	{ { "audit", "--bogus" }, 2, 2, 0 },
	{ { "audit", "--cgroup" }, 2, 2, 0 },
	{ { "audit", "extra" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "memacct-test-no-such-cgroup" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "@DUP@" }, 2, 2, M_LINES },
	{ { "audit", "--cgroup", ".." }, 2, 2, 0 },
	{ { "audit", "--cgroup", "" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "@HUGE@" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "@NONUTF8@" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "@NL@" }, 2, 2, 0 },
	{ { "audit", "--cgroup", "/etc/passwd" }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", "-1" }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", "0x" }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", "1e99" }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", SIZE_OVER }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", "" }, 2, 2, 0 },
	{ { "audit", "--pinned-cap", "12Q" }, 2, 2, 0 },
	{ { "audit", "--per-process-cap", "101%" }, 2, 2, 0 },
	{ { "audit", "--per-process-cap", "-1%" }, 2, 2, 0 },
	{ { "audit", "--watch", "-1s" }, 2, 2, 0 },
	{ { "audit", "--watch", "0" }, 2, 2, 0 },
	{ { "audit", "--watch", DUR_OVER }, 2, 2, 0 },
	{ { "audit", "--enforce-rlimit" }, 2, 2, 0 },
	/* nobody: no BPF events, /proc polled every DUR (said in a warning) */
	{ { "audit", "--cgroup", "@CG@", "--watch", DUR_MAX }, 0, 0, M_STOP | M_LINES },
	/* daemon */
	{ { "daemon", "--bogus" }, 2, 2, 0 },
	{ { "daemon", "extra" }, 2, 2, 0 },
	{ { "daemon", "--interval" }, 2, 2, 0 },
	{ { "daemon", "--bpf-stats=1" }, 2, 2, 0 },
	{ { "daemon", "--listen", "" }, 2, 2, 0 },
	{ { "daemon", "--listen", "localhost" }, 2, 2, 0 },
	{ { "daemon", "--listen", "127.0.0.1" }, 2, 2, 0 },
	{ { "daemon", "--listen", "127.0.0.1:65536" }, 2, 2, 0 },
	{ { "daemon", "--listen", "127.0.0.1:-1" }, 2, 2, 0 },
	{ { "daemon", "--listen", "256.0.0.1:9464" }, 2, 2, 0 },
	{ { "daemon", "--listen", "[::1]" }, 2, 2, 0 },
	{ { "daemon", "--metrics-deny", "(" }, 2, 2, 0 },
	{ { "daemon", "--metrics-allow", "a", "--metrics-allow", "b" }, 2, 2, 0 },
	{ { "daemon", "--listen", "[zz::1]:9464" }, 2, 2, 0 },
	{ { "daemon", "--listen", "::1:9464" }, 2, 2, 0 },
	{ { "daemon", "--listen", "127.0.0.1:99999999999999999999" }, 2, 2, 0 },
	{ { "daemon", "--interval", "-1s" }, 2, 2, 0 },
	{ { "daemon", "--interval", "99ms" }, 2, 2, 0 },
	{ { "daemon", "--interval", "garbage" }, 2, 2, 0 },
	{ { "daemon", "--interval", "1e99s" }, 2, 2, 0 },
	{ { "daemon", "--interval", DUR_OVER }, 2, 2, 0 },
	{ { "daemon", "--interval", NS_OVER }, 2, 2, 0 },
	{ { "daemon", "--top-processes", "-1" }, 2, 2, 0 },
	{ { "daemon", "--top-processes", "10001" }, 2, 2, 0 },
	{ { "daemon", "--top-processes", "" }, 2, 2, 0 },
	{ { "daemon", "--listen", "@LISTEN@", "--pin-path", "@PIN@", "--cgroup-filter", "@HUGE@" },
	  2, 3, 0 },
	{ { "daemon", "--listen", "@LISTEN@", "--pin-path", "/tmp" }, 2, 3, M_HTTP },
	{ { "daemon", "--listen", "@LISTEN@", "--pin-path", "" }, 2, 3, M_HTTP },
	{ { "daemon", "--listen", "@LISTEN@", "--pin-path", "@PIN@", "--json-log",
	    "/nonexistent-memacct-dir/log.json" }, 2, 3, 0 },
	{ { "daemon", "--listen", "@LISTEN@", "--pin-path", "@PIN@", "--interval", DUR_MAX,
	    "--cgroup-filter", "@NL@" }, 0, 3, M_STOP | M_LINES | M_DETACH | M_NOJSON | M_HTTP },
	{ { "daemon", "--stop-kernel-side", "--pin-path", "/tmp" }, 2, 3, 0 },
	/* detach */
	{ { "reclaim", "--bogus" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup" }, 2, 2, 0 },
	{ { "reclaim", "extra" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "memacct-test-no-such-cgroup" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "@DUP@" }, 2, 2, M_LINES },
	{ { "reclaim", "--cgroup", ".." }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "@HUGE@" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "/", "--bytes", SIZE_OVER }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "/", "--bytes", "0" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "/", "--bytes", "-1" }, 2, 2, 0 },
	{ { "reclaim", "--cgroup", "/", "--bytes", "10%" }, 2, 2, 0 },
	{ { "detach", "--bogus" }, 2, 2, 0 },
	{ { "detach", "--pin-path" }, 2, 2, 0 },
	{ { "detach", "extra" }, 2, 2, 0 },
	{ { "detach", "--pin-path", "/tmp" }, 2, 3, 0 },
	{ { "detach", "--pin-path", "" }, 2, 3, 0 },
	{ { "detach", "--pin-path", "@PIN@" }, 0, 3, M_OK | M_NOJSON },
	/* top (stdin and stdout are not a terminal here: refused before any BPF) */
	{ { "top", "--bogus" }, 2, 2, 0 },
	{ { "top", "extra" }, 2, 2, 0 },
	{ { "top", "-s" }, 2, 2, 0 },
	{ { "top", "--cgroups=1" }, 2, 2, 0 },
	{ { "top", "--sort", "bogus" }, 2, 2, 0 },
	{ { "top", "--sort", "" }, 2, 2, 0 },
	{ { "top", "-g", "--sort", "pid" }, 2, 2, 0 },
	{ { "top", "-i", "0" }, 2, 2, 0 },
	{ { "top", "-i", "-1s" }, 2, 2, 0 },
	{ { "top", "-i", DUR_OVER }, 2, 2, 0 },
	{ { "top", "-n", "0" }, 2, 2, 0 },
	{ { "top", "-n", "-1" }, 2, 2, 0 },
	{ { "top", "-n", "1e99" }, 2, 2, 0 },
	{ { "top", "--cgroup", "@HUGE@" }, 2, 2, 0 },
	{ { "top", "--cgroup", "@NL@", "-i", DUR_MAX }, 2, 2, 0 },
	{ { "top" }, 2, 2, 0 },
};

#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static char cg_name[64], cg_path[CGROOT_MAX + 64], pin[96], listen_at[32];
static char huge[5001], gone_pid[16], zombie_pid[16];
static pid_t zombie;

static const char *expand(const char *a)
{
	static char dup[CGROOT_MAX + 96], up[96];

	if (!strcmp(a, "@CG@"))
		return cg_name;
	if (!strcmp(a, "@CG@/../../..")) {
		snprintf(up, sizeof(up), "%s/../../..", cg_name);
		return up;
	}
	if (!strcmp(a, "@DUP@")) {
		snprintf(dup, sizeof(dup), "dup-%s", cg_name);
		return dup;
	}
	if (!strcmp(a, "@ZOMBIE@"))
		return zombie_pid;
	if (!strcmp(a, "@GONE@"))
		return gone_pid;
	if (!strcmp(a, "@HUGE@"))
		return huge;
	if (!strcmp(a, "@NONUTF8@"))
		return "\xff\xfe";
	if (!strcmp(a, "@NL@"))
		return "memacct-test\nmx";
	if (!strcmp(a, "@PIN@"))
		return pin;
	if (!strcmp(a, "@LISTEN@"))
		return listen_at;
	return a;
}

/* memacct [-j] ARGS... of case @c, placeholders expanded, NULL-terminated */
static void build_argv(const struct mcase *c, bool json, char *argv[MAXARGS + 2])
{
	int n = 0;

	argv[n++] = (char *)memacct;
	if (json)
		argv[n++] = "-j";
	for (int i = 0; c->argv[i]; i++)
		argv[n++] = (char *)expand(c->argv[i]);
	argv[n] = NULL;
}

/* What must be the same before and after a case: names and counts. */
struct snapshot {
	char *cgroups;		/* top-level names under the memory cgroup root */
	char *pins;		/* /sys/fs/bpf entries */
	char *state;		/* /run/memacct entries */
	int links;		/* BPF links in the system */
};

static char *dir_names(const char *path)
{
	size_t cap = 4096, len = 0;
	char *s = calloc(1, cap);
	struct dirent **ents;
	int n = scandir(path, &ents, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);

		if (len + l + 2 > cap)
			s = realloc(s, cap = 2 * (cap + l));
		memcpy(s + len, ents[i]->d_name, l);
		len += l;
		s[len++] = ' ';
		s[len] = '\0';
		free(ents[i]);
	}
	if (n > 0)
		free(ents);
	return s;
}

static void snap(struct snapshot *s)
{
	__u32 id = 0;

	s->cgroups = dir_names(cgroot);
	s->pins = dir_names("/sys/fs/bpf");
	s->state = dir_names("/run/memacct");
	s->links = 0;
	while (!bpf_link_get_next_id(id, &id))
		s->links++;
}

static void snap_free(struct snapshot *s)
{
	free(s->cgroups);
	free(s->pins);
	free(s->state);
}

static bool read_fd(int fd, char **out)
{
	off_t n = lseek(fd, 0, SEEK_END);

	*out = calloc(1, n + 1);
	return *out && pread(fd, *out, n, 0) == n;
}

/* One line per case for the log: the arguments, control bytes as \ooo, long ones cut. */
static void describe(char *buf, size_t n, bool json, bool as_nobody, char *const argv[])
{
	size_t o = snprintf(buf, n, "%s%s", as_nobody ? "[nobody] memacct" : "[root] memacct",
			    json ? " -j" : "");

	for (int i = 1 + json; argv[i] && o < n - 8; i++) {
		o += snprintf(buf + o, n - o, " '");
		for (const unsigned char *p = (const unsigned char *)argv[i]; *p && o < n - 8; p++) {
			if (p - (const unsigned char *)argv[i] >= 40) {
				o += snprintf(buf + o, n - o, "...(%zu bytes)", strlen(argv[i]));
				break;
			}
			o += snprintf(buf + o, n - o, *p < 0x20 || *p >= 0x7f ? "\\%03o" : "%c", *p);
		}
		o += snprintf(buf + o, n - o, "'");
	}
}

/*
 * Run one case; returns NULL when it held, else what failed (static). @what
 * names the invocation for the message.
 */
static const char *run_case(const struct mcase *c, bool json, bool as_nobody, const char *what)
{
	static char why[16384];
	char *argv[MAXARGS + 2], *out = NULL, *err = NULL;
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0), st = 0, want;
	int errlines = 0, otherlines = 0;
	bool stopped = false, alive_at_stop = false;
	struct snapshot before, after;
	long waited = 0;
	pid_t p;

	ck_assert(fo >= 0 && fe >= 0);
	build_argv(c, json, argv);
	snap(&before);
	p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		dup2(fo, 1);
		dup2(fe, 2);
		if (as_nobody && (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
				  setresuid(NOBODY, NOBODY, NOBODY)))
			_exit(126);
		execv(memacct, argv);
		_exit(125);
	}
	ck_assert(p > 0);
	for (;;) {
		pid_t w = waitpid(p, &st, WNOHANG);

		if (w == p)
			break;
		if ((c->flags & M_STOP) && !stopped && waited >= STOP_MS) {
			alive_at_stop = true;
			stopped = true;
			kill(p, SIGINT);
		}
		if (waited >= HANG_MS) {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
			snprintf(why, sizeof(why), "%s: still running after %d s (killed)", what,
				 HANG_MS / 1000);
			goto out;
		}
		sleep_ms(10);
		waited += 10;
	}
	if (c->flags & M_DETACH) {
		struct result *r = run_cmd("%s detach --pin-path %s 2>&1", memacct, pin);

		result_free(r);
	}
	snap(&after);
	/* links of a process that ended are freed by the kernel a little later */
	for (int i = 0; i < 300 && after.links != before.links; i++) {
		snap_free(&after);
		sleep_ms(10);
		snap(&after);
	}
	ck_assert(read_fd(fo, &out) && read_fd(fe, &err));
	want = as_nobody ? c->rc_nobody : c->rc;
	why[0] = '\0';
	if (WIFSIGNALED(st)) {
		snprintf(why, sizeof(why), "%s: killed by signal %d", what, WTERMSIG(st));
		goto out_snap;
	}
	if (WEXITSTATUS(st) != want) {
		snprintf(why, sizeof(why), "%s: status %d, documented %d", what, WEXITSTATUS(st),
			 want);
		goto out_snap;
	}
	if ((c->flags & M_STOP) && want == 0 && !alive_at_stop) {
		snprintf(why, sizeof(why), "%s: ended by itself before %d ms (a duration that "
			 "overflowed?)", what, STOP_MS);
		goto out_snap;
	}
	if (strstr(err, "Sanitizer") || strstr(err, "runtime error:")) {
		snprintf(why, sizeof(why), "%s: sanitizer report", what);
		goto out_snap;
	}
	/* one line saying why; with -j that line is a JSON object with "error" */
	for (char *l = err, *e; *l; l = e + 1) {
		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l) - 1;
		if (json ? (*l == '{' && strstr(l, "\"error\"") && strstr(l, "\"error\"") < e) :
			   !strncmp(l, "Error: ", 7))
			errlines++;
		else
			otherlines++;
	}
	if (want && want != 127 && errlines != 1)
		snprintf(why, sizeof(why), "%s: %d error lines on stderr, want 1", what, errlines);
	else if (!want && errlines)
		snprintf(why, sizeof(why), "%s: status 0 with an error line", what);
	else if (otherlines && !(c->flags & M_LINES) && !(want == 0 && !json))
		snprintf(why, sizeof(why), "%s: %d more lines on stderr than the error", what,
			 otherlines);
	else if (want != 0 && want != 1 && want != 127 && out[0])
		snprintf(why, sizeof(why), "%s: status %d and %zu bytes on stdout", what, want,
			 strlen(out));
	else if (strcmp(before.cgroups, after.cgroups))
		snprintf(why, sizeof(why), "%s: cgroups before [%s], after [%s]", what,
			 before.cgroups, after.cgroups);
	else if (strcmp(before.pins, after.pins))
		snprintf(why, sizeof(why), "%s: /sys/fs/bpf before [%s], after [%s]", what,
			 before.pins, after.pins);
	else if (strcmp(before.state, after.state))
		snprintf(why, sizeof(why), "%s: /run/memacct before [%s], after [%s]", what,
			 before.state, after.state);
	else if (before.links != after.links)
		snprintf(why, sizeof(why), "%s: %d BPF links before, %d after", what, before.links,
			 after.links);
out_snap:
	if (why[0] && err)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "\n    stderr: %.600s", err);
	snap_free(&after);
out:
	snap_free(&before);
	free(out);
	free(err);
	close(fo);
	close(fe);
	return why[0] ? why : NULL;
}

static void mkcg(const char *path)
{
	ck_assert_msg(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s", path,
		      strerror(errno));
}

static void setup(void)
{
	char p[CGROOT_MAX + 160];
	pid_t g;

	snprintf(cg_name, sizeof(cg_name), "memacct-test-mx-%d", (int)getpid());
	snprintf(cg_path, sizeof(cg_path), "%s/%s", cgroot, cg_name);
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/memacct-test-mx-%d", (int)getpid());
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d", free_port());
	memset(huge, 'a', sizeof(huge) - 1);
	/* @DUP@: the same name in two places */
	mkcg(cg_path);
	snprintf(p, sizeof(p), "%s/a", cg_path);
	mkcg(p);
	snprintf(p, sizeof(p), "%s/a/dup-%s", cg_path, cg_name);
	mkcg(p);
	snprintf(p, sizeof(p), "%s/b", cg_path);
	mkcg(p);
	snprintf(p, sizeof(p), "%s/b/dup-%s", cg_path, cg_name);
	mkcg(p);
	/* a zombie of ours until teardown reaps it */
	zombie = fork();
	if (zombie == 0)
		_exit(0);
	snprintf(zombie_pid, sizeof(zombie_pid), "%d", (int)zombie);
	/* a PID that was and is no more */
	g = fork();
	if (g == 0)
		_exit(0);
	waitpid(g, NULL, 0);
	snprintf(gone_pid, sizeof(gone_pid), "%d", (int)g);
	for (int i = 0; i < 100; i++) {
		char st[64], line[128];
		FILE *f;

		snprintf(st, sizeof(st), "/proc/%d/stat", (int)zombie);
		f = fopen(st, "r");
		if (f && fgets(line, sizeof(line), f) && strstr(line, ") Z ")) {
			fclose(f);
			break;
		}
		if (f)
			fclose(f);
		sleep_ms(10);
	}
}

static void teardown(void)
{
	char p[CGROOT_MAX + 160];
	struct result *r;

	if (zombie > 0)
		waitpid(zombie, NULL, 0);
	zombie = 0;
	snprintf(p, sizeof(p), "%s/a/dup-%s", cg_path, cg_name);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/b/dup-%s", cg_path, cg_name);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a", cg_path);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/b", cg_path);
	rmdir(p);
	rmdir(cg_path);
	r = run_cmd("%s detach --pin-path %s >/dev/null 2>&1", memacct, pin);
	result_free(r);
}

START_TEST(test_hostile_matrix)
{
	int failed = 0, runs = 0;
	char what[512];

	if (access("/usr/bin/setpriv", X_OK) && access("/bin/setpriv", X_OK))
		printf("  (no setpriv here: nobody's runs use setresuid() directly anyway)\n");
	for (int i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];

		for (int nobody = 0; nobody < 2; nobody++) {
			for (int json = 0; json < 2; json++) {
				char *argv[MAXARGS + 2];
				const char *why;
				int want = nobody ? c->rc_nobody : c->rc;

				if (json && ((c->flags & M_NOJSON) || want == 0 || want == 127))
					continue;
				build_argv(c, json, argv);
				describe(what, sizeof(what), json, nobody, argv);
				why = run_case(c, json, nobody, what);
				runs++;
				if (why) {
					printf("  FAIL %s\n", why);
					failed++;
				}
			}
		}
	}
	printf("  hostile-input matrix: %d cases, %d invocations, %d failed\n", NCASES, runs,
	       failed);
	ck_assert_msg(!failed, "%d of %d hostile invocations broke their contract (above)",
		      failed, runs);
}
END_TEST

Suite *matrix_suite(void)
{
	Suite *s = suite_create("matrix");
	TCase *tc = tcase_swept("matrix", 600);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_hostile_matrix);
	suite_add_tcase(s, tc);
	return s;
}
