// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * memlimits.c - memory limits of a cgroup for run/attach, with a state file so
 * that attach always gives the cgroup back as it found it (memlimits.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memlimits.h"
#include "proc.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* v1 stores "unlimited" as PAGE_COUNTER_MAX pages: anything this large is */
#define V1_UNLIMITED_MIN (1ULL << 62)

static const char *const opt_names[LIMIT_NR] = {
	"--memory-max", "--memory-high", "--memory-swap-max",
};

bool limits_any(const struct limits_req *req)
{
	for (int k = 0; k < LIMIT_NR; k++)
		if (req->set[k])
			return true;
	return false;
}

int limits_getopt(int c, const char *arg, struct limits_req *req)
{
	int k, err;

	if (c == OPT_FORCE) {
		req->force = true;
		return 0;
	}
	k = c - OPT_MEMORY_MAX;
	if (k < 0 || k >= LIMIT_NR)
		return -EINVAL;
	err = parse_size(arg, mem_total_bytes(), &req->val[k]);
	if (err) {
		p_err("bad %s '%s': %s (examples: 4G, 4GiB, 512M, 10%%)", opt_names[k], arg,
		      err == -ERANGE ? "too large" : "not a size");
		return -EINVAL;
	}
	if (!req->val[k] && k != LIMIT_SWAP_MAX) {
		p_err("bad %s '%s': a memory limit of 0 would OOM-kill everything", opt_names[k],
		      arg);
		return -EINVAL;
	}
	req->set[k] = true;
	return 0;
}

static int read_limit_raw(const char *dir, const char *file, char *val, size_t len);

const char *limit_file(int version, enum limit_kind k)
{
	static const char *const v1[LIMIT_NR] = {
		"memory.limit_in_bytes", "memory.soft_limit_in_bytes",
		"memory.memsw.limit_in_bytes",
	};
	static const char *const v2[LIMIT_NR] = {
		"memory.max", "memory.high", "memory.swap.max",
	};

	if (k < 0 || k >= LIMIT_NR)
		return NULL;
	return version == 1 ? v1[k] : v2[k];
}

int parse_limit_value(const char *text, uint64_t *bytes, bool *unlimited)
{
	char tok[32];
	size_t n = strcspn(text, "\n");

	if (!n || n >= sizeof(tok))
		return -EINVAL;
	memcpy(tok, text, n);
	tok[n] = '\0';
	if (!strcmp(tok, "max")) {
		*bytes = UINT64_MAX;
		*unlimited = true;
		return 0;
	}
	if (parse_u64(tok, bytes))
		return -EINVAL;
	*unlimited = *bytes >= V1_UNLIMITED_MIN;
	return 0;
}

int memcg_limit_read(const struct memcg *cg, enum limit_kind k, uint64_t *bytes)
{
	bool unlimited;
	char *val;
	long n;
	int err;

	if (!limit_file(cg->version, k))
		return -EINVAL;
	n = memcg_read_file(cg, limit_file(cg->version, k), &val, 4096);
	if (n < 0)
		return (int)n;
	err = parse_limit_value(val, bytes, &unlimited);
	free(val);
	if (err)
		return err;
	return unlimited ? -ERANGE : 0;
}

int memcg_smallest_limit(const struct memcg *cg, struct memcg *out, uint64_t *bytes)
{
	struct memcg cur = *cg;
	int found = -ENOENT, err;

	cur.dir_open = false;	/* read by path: @cg's dirfd stays @cg's */
	for (;;) {
		uint64_t v;

		if (cur.level > 0 && !memcg_limit_read(&cur, LIMIT_MAX, &v) &&
		    (found || v < *bytes)) {
			*out = cur;
			*bytes = v;
			found = 0;
		}
		if (cur.level <= 0)
			return found;
		err = memcg_parent(&cur, &cur);
		if (err)	/* what was found below stays found */
			return found ? err : 0;
	}
}

/* @err of a read: 0 when it only says the figure is absent or unlimited */
static int bounds_err(int err)
{
	return err == -ENOENT || err == -ERANGE ? 0 : err;
}

int memcg_read_bounds(const struct memcg *cg, struct memcg_bounds *b)
{
	int err, first;

	memset(b, 0, sizeof(*b));
	err = memcg_limit_read(cg, LIMIT_MAX, &b->max);
	b->has_max = !err;
	first = bounds_err(err);
	if (cg->version == 2) {
		err = memcg_limit_read(cg, LIMIT_HIGH, &b->high);
		b->has_high = !err;
		first = first ? first : bounds_err(err);
	}
	err = memcg_read_pressure(cg, &b->psi_some_us, &b->psi_full_us);
	b->has_psi = !err;
	return first ? first : bounds_err(err);
}

int format_limits_state(const struct limits_state *st, char *buf, size_t len)
{
	size_t off;
	int n;

	n = snprintf(buf, len, "memacct-limits 1\nowner %d %" PRIu64 "\ncgroup %" PRIu64
		     " %d %s\n", (int)st->owner, st->owner_start, st->id, st->version, st->path);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	off = (size_t)n;
	for (int i = 0; i < st->nfiles; i++) {
		n = snprintf(buf + off, len - off, "file %s %s\n", st->saved[i].file,
			     st->saved[i].value);
		if (n < 0 || (size_t)n >= len - off)
			return -ENAMETOOLONG;
		off += (size_t)n;
	}
	return 0;
}

int parse_limits_state(const char *text, struct limits_state *st)
{
	const char *p = text;
	bool hdr = false, owner = false, cg = false;

	memset(st, 0, sizeof(*st));
	while (*p) {
		const char *e = strchrnul(p, '\n');
		char line[PATH_MAX + 128], a[64], b[64];
		size_t n = (size_t)(e - p);
		int pid, ver, off = 0;
		unsigned long long x, y;

		if (n >= sizeof(line))
			return -EINVAL;
		memcpy(line, p, n);
		line[n] = '\0';
		p = *e ? e + 1 : e;
		if (!n)
			continue;
		if (!strcmp(line, "memacct-limits 1")) {
			hdr = true;
		} else if (sscanf(line, "owner %d %llu", &pid, &x) == 2 && pid > 0) {
			st->owner = pid;
			st->owner_start = x;
			owner = true;
		} else if (sscanf(line, "cgroup %llu %d %n", &y, &ver, &off) == 2 && off > 0 &&
			   line[off] == '/' && (ver == 1 || ver == 2)) {
			st->id = y;
			st->version = ver;
			snprintf(st->path, sizeof(st->path), "%s", line + off);
			cg = true;
		} else if (sscanf(line, "file %63s %63s", a, b) == 2 &&
			   st->nfiles < LIMITS_STATE_MAX_FILES && !strchr(a, '/') &&
			   !strncmp(a, "memory.", 7) && strlen(b) < sizeof(st->saved[0].value)) {
			snprintf(st->saved[st->nfiles].file, sizeof(st->saved[0].file), "%s", a);
			/* length checked above (-O1 cannot see it through snprintf) */
			memcpy(st->saved[st->nfiles].value, b, strlen(b) + 1);
			st->nfiles++;
		} else {
			return -EINVAL;
		}
	}
	return hdr && owner && cg ? 0 : -EINVAL;
}

static void state_path(uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, LIMITS_STATE_DIR "/limits-%" PRIu64 ".state", id);
}

/* the owner of a state file still runs (same pid, same start time) */
static bool owner_alive(const struct limits_state *st)
{
	struct proc_stat ps;

	if (kill(st->owner, 0) && errno == ESRCH)
		return false;
	if (read_stat(st->owner, &ps))
		return false;
	return ps.starttime_ticks == st->owner_start;
}

static int read_limit_raw(const char *dir, const char *file, char *val, size_t len)
{
	char path[PATH_MAX + 64], *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	n = read_file(path, &buf, 4096);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(val, len, "%s", buf);
	free(buf);
	return 0;
}

/*
 * Write files in an order the kernel accepts: on v1 memory.limit_in_bytes
 * must stay <= memory.memsw.limit_in_bytes, so a write refused with EINVAL
 * is retried after the others.
 */
static int write_all(const char *dir, int n, const char (*files)[64], const char (*vals)[32],
		     const char **failed)
{
	bool done[LIMITS_STATE_MAX_FILES] = { 0 };
	int err = 0;

	for (int pass = 0; pass < 2; pass++) {
		err = 0;
		for (int i = 0; i < n; i++) {
			char path[PATH_MAX + 64];
			int e;

			if (done[i])
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			e = write_file(path, vals[i]);
			if (!e) {
				done[i] = true;
			} else {
				err = e;
				*failed = files[i];
			}
		}
		if (!err)
			break;
	}
	return err;
}

static int restore_state(const struct limits_state *st, const char *statefile)
{
	char files[LIMITS_STATE_MAX_FILES][64], vals[LIMITS_STATE_MAX_FILES][32];
	const char *failed = "";
	int err;

	for (int i = 0; i < st->nfiles; i++) {
		snprintf(files[i], sizeof(files[i]), "%s", st->saved[i].file);
		snprintf(vals[i], sizeof(vals[i]), "%s", st->saved[i].value);
	}
	if (access(st->path, F_OK)) {
		p_warn("limits: cgroup %s is gone; dropping %s", st->path, statefile);
		unlink(statefile);
		return 0;
	}
	err = write_all(st->path, st->nfiles, files, vals, &failed);
	if (err) {
		p_warn("limits: restoring %s/%s: %s (state kept in %s)", st->path, failed,
		       strerror(-err), statefile);
		return err;
	}
	for (int i = 0; i < st->nfiles; i++)
		fprintf(stderr, "memacct: restored %s/%s = %s\n", st->path, files[i], vals[i]);
	unlink(statefile);
	return 0;
}

static int load_state(const char *statefile, struct limits_state *st)
{
	char *buf;
	long n = read_file(statefile, &buf, 1 << 16);
	int err;

	if (n < 0)
		return (int)n;
	err = parse_limits_state(buf, st);
	free(buf);
	return err;
}

int limits_restore(const struct memcg *cg)
{
	struct limits_state st;
	char statefile[PATH_MAX];
	int err;

	state_path(cg->id, statefile, sizeof(statefile));
	err = load_state(statefile, &st);
	if (err)
		return err;
	if (st.owner != getpid())
		return -EPERM;
	return restore_state(&st, statefile);
}

int limits_restore_stale(void)
{
	DIR *d = opendir(LIMITS_STATE_DIR);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct limits_state st;
		char statefile[PATH_MAX];

		if (strncmp(de->d_name, "limits-", 7) || !strstr(de->d_name, ".state"))
			continue;
		snprintf(statefile, sizeof(statefile), LIMITS_STATE_DIR "/%s", de->d_name);
		if (load_state(statefile, &st)) {
			p_warn("limits: cannot parse %s; left alone", statefile);
			continue;
		}
		if (owner_alive(&st))
			continue;
		fprintf(stderr, "memacct: memacct %d that set limits on %s is gone; restoring\n",
			(int)st.owner, st.path);
		if (!restore_state(&st, statefile))
			n++;
	}
	closedir(d);
	return n;
}

static int save_state(const struct limits_state *st)
{
	char statefile[PATH_MAX], tmp[PATH_MAX + 8], buf[PATH_MAX + 1024];
	FILE *f;
	int err;

	err = format_limits_state(st, buf, sizeof(buf));
	if (err)
		return err;
	if (mkdir(LIMITS_STATE_DIR, 0700) && errno != EEXIST)
		return -errno;
	state_path(st->id, statefile, sizeof(statefile));
	snprintf(tmp, sizeof(tmp), "%s.tmp", statefile);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fputs(buf, f);
	if (fflush(f) || fsync(fileno(f))) {
		err = -errno;
		fclose(f);
		unlink(tmp);
		return err;
	}
	fclose(f);
	if (rename(tmp, statefile)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}

/*
 * Refuses, before anything is written: the root cgroup, a swap limit where
 * v1 has no swap accounting, and a limit below the usage now (unless
 * --force). 0 or negative errno, said with p_err().
 */
static int limits_check(const struct memcg *cg, const struct limits_req *req)
{
	char b1[16], b2[16];
	struct memcg_stat ms = { 0 };
	int err;

	/*
	 * The root cgroup has no limit files (v2) or refuses them (v1,
	 * EINVAL): refused before any state file is written, which could
	 * never be restored and was warned about on every start (D13).
	 */
	if (cg->level == 0 || !strcmp(cg->rel, "/")) {
		p_err("limits cannot be set on the root memory cgroup %s: give a cgroup below it",
		      cg->path);
		return -EINVAL;
	}
	if (req->set[LIMIT_SWAP_MAX] && cg->version == 1) {
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", cg->path);
		if (access(path, F_OK)) {
			p_err("--memory-swap-max: %s has no memory.memsw.limit_in_bytes "
			      "(kernel without swap accounting, swapaccount=0)", cg->path);
			return -EOPNOTSUPP;
		}
	}
	err = memcg_read_stat(cg, &ms);
	if (err) {
		p_err("reading the usage of %s: %s", cg->path, strerror(-err));
		return -EIO;
	}
	for (int k = 0; k < LIMIT_NR; k++) {
		if (!req->set[k] || k == LIMIT_SWAP_MAX || req->val[k] >= ms.usage || req->force)
			continue;
		fmt_bytes(b1, sizeof(b1), req->val[k]);
		fmt_bytes(b2, sizeof(b2), ms.usage);
		p_err("%s %s is below the current usage %s of %s: the kernel would at once %s. "
		      "Add --force to do it anyway", opt_names[k], b1, b2, cg->path,
		      k == LIMIT_MAX ? "reclaim (page cache, then swap) down to the limit and "
		      "OOM-kill processes of the cgroup if it cannot" :
		      "reclaim down to it and throttle every allocation of the cgroup");
		return -EINVAL;
	}
	return 0;
}

/*
 * --memory-swap-max @swap on v1, which limits memory + swap: into *@v the
 * memsw value, the memory limit (given, or the cgroup's) plus @swap.
 */
static int v1_memsw_value(const struct memcg *cg, const struct limits_req *req, uint64_t swap,
			  uint64_t *v)
{
	uint64_t mem;
	bool unl;
	char cur[32];

	if (req->set[LIMIT_MAX]) {
		mem = req->val[LIMIT_MAX];
	} else if (read_limit_raw(cg->path, "memory.limit_in_bytes", cur, sizeof(cur)) ||
		   parse_limit_value(cur, &mem, &unl) || unl) {
		p_err("--memory-swap-max on cgroup v1 limits memory+swap "
		      "(memory.memsw.limit_in_bytes): give --memory-max too, "
		      "%s has no memory limit", cg->path);
		return -EINVAL;
	}
	/* D20: the kernel caps limits at LLONG_MAX rounded to pages */
	if (swap > (uint64_t)INT64_MAX - mem) {
		p_err("--memory-swap-max: memory %" PRIu64 " + swap %" PRIu64
		      " bytes is too large for memory.memsw.limit_in_bytes", mem, swap);
		return -EINVAL;
	}
	*v = mem + swap;
	return 0;
}

/*
 * The values to write, in cgroup-file terms (@files, @vals), and into @st
 * the state to restore: the owner, the cgroup and each file's value now.
 * The number of files, or negative errno.
 */
static int limits_plan(const struct memcg *cg, const struct limits_req *req,
		       struct limits_state *st, char files[][64], char vals[][32])
{
	struct proc_stat ps;
	int n = 0, err;

	st->owner = getpid();
	st->owner_start = read_stat(st->owner, &ps) ? 0 : ps.starttime_ticks;
	st->id = cg->id;
	st->version = cg->version;
	snprintf(st->path, sizeof(st->path), "%s", cg->path);
	for (int k = 0; k < LIMIT_NR; k++) {
		uint64_t v = req->val[k];

		if (!req->set[k])
			continue;
		if (k == LIMIT_SWAP_MAX && cg->version == 1) {
			err = v1_memsw_value(cg, req, req->val[k], &v);
			if (err)
				return err;
		}
		snprintf(files[n], sizeof(files[n]), "%s", limit_file(cg->version, k));
		snprintf(vals[n], sizeof(vals[n]), "%" PRIu64, v);
		snprintf(st->saved[n].file, sizeof(st->saved[n].file), "%s", files[n]);
		err = read_limit_raw(cg->path, files[n], st->saved[n].value,
				     sizeof(st->saved[n].value));
		if (err) {
			p_err("reading %s/%s: %s%s", cg->path, files[n], strerror(-err),
			      err == -ENOENT && cg->level == 0 ?
			      " (the root cgroup has no limits)" : "");
			return err == -ENOENT ? -EOPNOTSUPP : -EIO;
		}
		n++;
	}
	st->nfiles = n;
	return n;
}

/* Writes the state file of @st, unless a live memacct manages the cgroup already. */
static int limits_claim(const struct memcg *cg, const struct limits_state *st)
{
	struct limits_state other;
	char statefile[PATH_MAX];
	int err;

	state_path(cg->id, statefile, sizeof(statefile));
	if (!load_state(statefile, &other) && owner_alive(&other)) {
		p_err("memacct %d already manages the limits of %s (%s)", (int)other.owner,
		      cg->path, statefile);
		return -EBUSY;
	}
	err = save_state(st);
	if (err) {
		p_err("writing the limits state file %s: %s", statefile, strerror(-err));
		return -EIO;
	}
	return 0;
}

int limits_apply(const struct memcg *cg, const struct limits_req *req, bool save)
{
	char files[LIMITS_STATE_MAX_FILES][64], vals[LIMITS_STATE_MAX_FILES][32];
	struct limits_state st = { 0 };
	const char *failed = "";
	int n, err;

	if (!limits_any(req))
		return 0;
	err = limits_check(cg, req);
	if (err)
		return err;
	n = limits_plan(cg, req, &st, files, vals);
	if (n < 0)
		return n;
	if (save) {
		err = limits_claim(cg, &st);
		if (err)
			return err;
	}
	err = write_all(cg->path, n, files, vals, &failed);
	if (err) {
		p_err("writing %s/%s: %s", cg->path, failed, strerror(-err));
		if (save)
			limits_restore(cg);
		return -EIO;
	}
	for (int i = 0; i < n; i++)
		p_info("limits: %s/%s = %s (was %s)", cg->path, files[i], vals[i],
		       st.saved[i].value);
	return 0;
}
