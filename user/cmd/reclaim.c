// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * reclaim.c - `memacct reclaim --cgroup NAME [--bytes SIZE] [--file-only]
 * [--dry-run]`:
 * a targeted alternative to `echo 3 > /proc/sys/vm/drop_caches`. Asks the
 * kernel to reclaim one cgroup's memory through cgroup v2 memory.reclaim
 * (which acts on that cgroup and its descendants, nothing else) and reports
 * what was freed, by memory.stat class, from memory.stat before and after.
 * docs/reclaim.md has the details.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "cgroup.h"
#include "commands.h"
#include "hostpin.h"
#include "jsonw.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define RECLAIM_SCHEMA "memacct.reclaim/v1"

/* the memory.stat classes reported, under the kernel's own key names */
static const struct {
	const char *key;
	size_t off;
} classes[] = {
	{ "anon", offsetof(struct memcg_stat, anon) },
	{ "file", offsetof(struct memcg_stat, file) },
	{ "file_mapped", offsetof(struct memcg_stat, file_mapped) },
	{ "file_dirty", offsetof(struct memcg_stat, file_dirty) },
	{ "file_writeback", offsetof(struct memcg_stat, file_writeback) },
	{ "shmem", offsetof(struct memcg_stat, shmem) },
	{ "active_file", offsetof(struct memcg_stat, active_file) },
	{ "inactive_file", offsetof(struct memcg_stat, inactive_file) },
	{ "active_anon", offsetof(struct memcg_stat, active_anon) },
	{ "inactive_anon", offsetof(struct memcg_stat, inactive_anon) },
	{ "unevictable", offsetof(struct memcg_stat, unevictable) },
	{ "slab_reclaimable", offsetof(struct memcg_stat, slab_reclaimable) },
};
#define NCLASSES ((int)(sizeof(classes) / sizeof(classes[0])))

static uint64_t class_of(const struct memcg_stat *s, int i)
{
	return *(const uint64_t *)((const char *)s + classes[i].off);
}

/* how the request was written to memory.reclaim */
enum reclaim_method {
	RM_PLAIN,		/* "N": anon and file, as the kernel balances them */
	RM_SWAPPINESS0,		/* "N swappiness=0": file only (Linux 6.11+) */
	RM_NO_ANON_RECLAIM,	/* "N" on a kernel without swappiness=, anon unreclaimable */
};

static const char *const method_names[] = {
	[RM_PLAIN] = "plain",
	[RM_SWAPPINESS0] = "swappiness=0",
	[RM_NO_ANON_RECLAIM] = "no_swap",
};

/*
 * The host's swap from /proc/meminfo (parse_meminfo()): SwapTotal and
 * SwapFree in bytes. 0, or negative errno (-EINVAL: a line missing).
 */
static int host_swap(uint64_t *total, uint64_t *free_bytes)
{
	struct hm_fields f;
	char *text = NULL;
	long n = read_file("/proc/meminfo", &text, 1 << 16);

	if (n < 0)
		return (int)n;
	n = parse_meminfo(text, &f);
	free(text);
	if (n || !(f.have & 1ULL << HM_SWAP_TOTAL) || !(f.have & 1ULL << HM_SWAP_FREE))
		return -EINVAL;
	*total = f.v[HM_SWAP_TOTAL] * 1024;
	*free_bytes = f.v[HM_SWAP_FREE] * 1024;
	return 0;
}

/*
 * anon_reclaimable() - whether reclaim in @cg could take anon pages: a swap
 * device on the host (/proc/meminfo SwapTotal), the cgroup's own
 * memory.swap.max above 0 (mem_cgroup_get_nr_swap_pages() takes the
 * smallest of the cgroup and its ancestors: 0 here is enough), or demotion
 * to a slower NUMA node (/sys/kernel/mm/numa/demotion_enabled, since 5.15:
 * can_reclaim_anon_pages() in mm/vmscan.c). 1 yes, 0 no, negative errno
 * when unknown (then treat as yes).
 */
static int anon_reclaimable(const struct memcg *cg)
{
	char path[PATH_MAX + 32], *text = NULL;
	uint64_t swap_total, swap_free;
	long n;
	int err;

	n = read_file("/sys/kernel/mm/numa/demotion_enabled", &text, 64);
	if (n >= 0 && !strncmp(text, "true", 4)) {
		free(text);
		return 1;
	}
	free(text);
	err = host_swap(&swap_total, &swap_free);
	if (err)
		return err;
	if (!swap_total)
		return 0;
	snprintf(path, sizeof(path), "%s/memory.swap.max", cg->path);
	text = NULL;
	n = read_file(path, &text, 64);
	if (n < 0)
		return 1;	/* no swap accounting: the host's swap applies */
	n = !strcmp(text, "0\n") ? 0 : 1;
	free(text);
	return (int)n;
}

/*
 * memcg_reclaim() - write @bytes to @cg's memory.reclaim (cgroup v2, Linux
 * 5.19+, commit 94968384dde1 "memcg: introduce per-memcg reclaim
 * interface"); with @file_only, "N swappiness=0" (commit 68cd9050d871 "mm:
 * add swappiness= arg to memory.reclaim", Linux 6.11: cgroup reclaim with
 * swappiness 0 scans the file LRUs only, get_scan_count() SCAN_FILE). A
 * kernel without swappiness= answers EINVAL; then the plain form is used
 * only when anon cannot be reclaimed anyway (anon_reclaimable() 0), never
 * otherwise. Sets *@method. Returns 0 (all reclaimed), -EAGAIN (the kernel
 * reclaimed less than @bytes after its retries: partial), -ENOENT (no
 * memory.reclaim: v1 or a kernel before 5.19), -EOPNOTSUPP (file only
 * impossible here), or another negative errno.
 */
static int memcg_reclaim(const struct memcg *cg, uint64_t bytes, bool file_only,
			 enum reclaim_method *method)
{
	char path[PATH_MAX + 32], req[64];
	int err;

	snprintf(path, sizeof(path), "%s/memory.reclaim", cg->path);
	if (access(path, W_OK))
		return -errno;
	if (!file_only) {
		*method = RM_PLAIN;
		snprintf(req, sizeof(req), "%" PRIu64, bytes);
		return write_file(path, req);
	}
	*method = RM_SWAPPINESS0;
	snprintf(req, sizeof(req), "%" PRIu64 " swappiness=0", bytes);
	err = write_file(path, req);
	if (err != -EINVAL)
		return err;
	if (anon_reclaimable(cg) != 0)
		return -EOPNOTSUPP;
	*method = RM_NO_ANON_RECLAIM;
	snprintf(req, sizeof(req), "%" PRIu64, bytes);
	return write_file(path, req);
}

/*
 * What memory.reclaim could free of a cgroup, by class, from its
 * memory.stat before (docs/reclaim.md "--dry-run"), in bytes:
 * - file: the clean page cache, active_file + inactive_file less
 *   file_dirty and file_writeback. Reclaim frees clean file folios, mapped
 *   or not (mm/vmscan.c shrink_folio_list(): unmapped first); a cgroup's
 *   reclaim does not write dirty ones back (only kswapd pages out file
 *   folios), it wakes the flushers. mlocked pages are on the unevictable
 *   list, in neither LRU count.
 * - anon: anon + shmem (both swap-backed), only when reclaim may take anon
 *   (not --file-only, anon_reclaimable()) and at most the host's SwapFree.
 * - slab: slab_reclaimable, an upper bound: the shrinkers decide.
 * - held: what stays whatever is asked: dirty and writeback page cache,
 *   unevictable, anon and shmem beyond what may go to swap.
 * - total: file + anon + slab, at most @requested.
 */
struct reclaim_prediction {
	uint64_t file, anon, slab, held, total;
};

static void reclaim_predict(const struct memcg *cg, const struct memcg_stat *s, bool file_only,
			    uint64_t requested, struct reclaim_prediction *p)
{
	uint64_t lru = s->active_file + s->inactive_file, unclean = s->file_dirty +
		       s->file_writeback, swap = s->anon + s->shmem;
	uint64_t swap_total, swap_free;

	memset(p, 0, sizeof(*p));
	p->file = lru > unclean ? lru - unclean : 0;
	if (!file_only && anon_reclaimable(cg) != 0)
		p->anon = host_swap(&swap_total, &swap_free) || swap_free >= swap ? swap : swap_free;
	p->slab = s->slab_reclaimable;
	p->held = (lru - p->file) + s->unevictable + (swap - p->anon);
	p->total = p->file + p->anon + p->slab;
	if (p->total > requested)
		p->total = requested;
}

static const char *fmt_signed(char *buf, size_t len, int64_t v)
{
	char b[32];

	if (bytes_output)
		snprintf(buf, len, "%" PRId64, v);
	else
		snprintf(buf, len, "%s%s", v < 0 ? "-" : "",
			 fmt_bytes(b, sizeof(b), v < 0 ? -(uint64_t)v : (uint64_t)v));
	return buf;
}

static const char *fmt_size(char *buf, size_t len, uint64_t v)
{
	if (bytes_output)
		snprintf(buf, len, "%" PRIu64, v);
	else
		fmt_bytes(buf, len, v);
	return buf;
}

struct reclaim_result {
	const struct memcg *cg;
	uint64_t requested;
	bool file_only;
	enum reclaim_method method;
	bool complete;
	bool dry_run;			/* --dry-run: nothing written */
	struct reclaim_prediction predicted;
	struct memcg_stat before, after;
};

/* --dry-run: the prediction by class */
static void print_prediction_plain(const struct reclaim_result *r)
{
	const struct reclaim_prediction *p = &r->predicted;
	char a[32], b[32];

	printf("cgroup %s: --dry-run, nothing reclaimed: asking %s (%s) would free up to %s%s\n",
	       r->cg->path, fmt_size(a, sizeof(a), r->requested),
	       r->file_only ? "file only" : "any memory", fmt_size(b, sizeof(b), p->total),
	       r->cg->version == 1 ? " (cgroup v1 has no memory.reclaim: what a reclaim of the "
	       "whole host could take from it)" : "");
	printf("  %-24s %14s  active_file + inactive_file - dirty - writeback\n",
	       "clean page cache", fmt_size(a, sizeof(a), p->file));
	printf("  %-24s %14s  %s\n", "anon and shmem to swap", fmt_size(a, sizeof(a), p->anon),
	       r->file_only ? "--file-only" : p->anon ? "at most the host's SwapFree" :
	       "no swap, no demotion");
	printf("  %-24s %14s  at most: the shrinkers decide\n", "reclaimable slab",
	       fmt_size(a, sizeof(a), p->slab));
	printf("  %-24s %14s  dirty and writeback page cache, unevictable, anon and shmem "
	       "without swap\n", "not freeable now", fmt_size(a, sizeof(a), p->held));
}

static void print_reclaim_plain(const struct reclaim_result *r)
{
	char a[32], b[32], c[32], d[32];

	if (r->dry_run) {
		print_prediction_plain(r);
		return;
	}
	printf("cgroup %s: asked %s (%s, %s), %s\n", r->cg->path,
	       fmt_size(a, sizeof(a), r->requested),
	       r->file_only ? "file only" : "any memory", method_names[r->method],
	       r->complete ? "reclaimed" : "partial: the kernel reclaimed less");
	printf("%-18s %14s %14s %14s\n", "CLASS", "BEFORE", "AFTER", "FREED");
	printf("%-18s %14s %14s %14s\n", "memory.current",
	       fmt_size(a, sizeof(a), r->before.usage), fmt_size(b, sizeof(b), r->after.usage),
	       fmt_signed(c, sizeof(c), (int64_t)(r->before.usage - r->after.usage)));
	for (int i = 0; i < NCLASSES; i++) {
		uint64_t x = class_of(&r->before, i), y = class_of(&r->after, i);

		printf("%-18s %14s %14s %14s\n", classes[i].key, fmt_size(a, sizeof(a), x),
		       fmt_size(b, sizeof(b), y), fmt_signed(c, sizeof(c), (int64_t)(x - y)));
	}
	printf("predicted before (--dry-run): %s (clean page cache %s, anon and shmem to swap "
	       "%s, reclaimable slab %s)\n", fmt_size(a, sizeof(a), r->predicted.total),
	       fmt_size(b, sizeof(b), r->predicted.file), fmt_size(c, sizeof(c), r->predicted.anon),
	       fmt_size(d, sizeof(d), r->predicted.slab));
}

static int print_reclaim_json(const struct reclaim_result *r)
{
	const struct memcg_stat *s[2] = { &r->before, &r->after };
	const char *k[2] = { "before", "after" };
	struct jw w;

	jw_init(&w, stdout);
	jw_open(&w, NULL, '{');
	jw_str(&w, "schema", RECLAIM_SCHEMA);
	jw_str(&w, "command", "reclaim");
	jw_str(&w, "cgroup", r->cg->path);
	jw_u64(&w, "requested_bytes", r->requested);
	jw_bool(&w, "file_only", r->file_only);
	jw_str(&w, "method", method_names[r->method]);
	jw_bool(&w, "complete", r->complete);
	jw_bool(&w, "dry_run", r->dry_run);
	jw_u64(&w, "predicted_bytes", r->predicted.total);
	jw_open(&w, "predicted", '{');
	jw_u64(&w, "file", r->predicted.file);
	jw_u64(&w, "anon", r->predicted.anon);
	jw_u64(&w, "slab_reclaimable", r->predicted.slab);
	jw_u64(&w, "held", r->predicted.held);
	jw_close(&w);
	jw_int(&w, "memory_current_freed_bytes", (long long)(r->before.usage - r->after.usage));
	jw_open(&w, "freed_bytes", '{');
	for (int i = 0; i < NCLASSES; i++)
		jw_int(&w, classes[i].key,
		       (long long)(class_of(&r->before, i) - class_of(&r->after, i)));
	jw_close(&w);
	for (int j = 0; j < 2; j++) {
		jw_open(&w, k[j], '{');
		jw_u64(&w, "memory_current", s[j]->usage);
		for (int i = 0; i < NCLASSES; i++)
			jw_u64(&w, classes[i].key, class_of(s[j], i));
		jw_close(&w);
	}
	jw_close(&w);
	if (jw_end(&w) == -EINVAL) {
		p_err("encoding the JSON report");
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* reclaim's options (memacct help reclaim), parsed by parse_args(). */
struct reclaim_env {
	const char *cgroup;		/* --cgroup NAME|PATH */
	const char *size;		/* --bytes SIZE, or NULL: all there is */
	bool file_only;			/* --file-only: the page cache alone */
	bool dry_run;			/* --dry-run: predict, reclaim nothing */
};

/* The options into @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct reclaim_env *env)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "file-only", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			env->cgroup = optarg;
			break;
		case 'b':
			env->size = optarg;
			break;
		case 'f':
			env->file_only = true;
			break;
		case 'n':
			env->dry_run = true;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			usage_print(stdout, "reclaim");
			return -1;
		default:
			return opt_error("reclaim", c, argv);
		}
	}
	if (!env->cgroup || optind != argc) {
		p_err("reclaim: give --cgroup NAME|PATH (memacct reclaim --cgroup NAME "
		      "[--bytes SIZE] [--file-only] [--dry-run])");
		return EXIT_USAGE;
	}
	return 0;
}

/* The cgroup into @cg, checked reclaimable (root, v2, its memory controller);
 * 0, or the exit code after saying why not. */
static int reclaim_target(const struct reclaim_env *env, struct memcg *cg)
{
	int err = memcg_resolve(env->cgroup, cg, stderr);

	if (err == -ENOTUNIQ) {
		p_err("cgroup name '%s' is ambiguous: give one of the paths above", env->cgroup);
		return EXIT_USAGE;
	}
	if (err) {
		p_err("no memory cgroup '%s': %s", env->cgroup, strerror(-err));
		return memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
	}
	if (env->dry_run)	/* memory.stat only: any user, v1 too */
		return 0;
	/* after the arguments' checks: a bad one is 2 for anyone, as in explain */
	if (geteuid() != 0) {
		p_err("memacct reclaim needs root (it writes the cgroup's memory.reclaim)");
		return EXIT_ENV;
	}
	if (cg->version == 1) {
		p_err("cgroup v1 has no memory.reclaim: it cannot reclaim part of %s, nor its "
		      "page cache alone (memory.force_empty reclaims all of its memory, anon "
		      "to swap too; memacct never lowers a limit to force reclaim). What works "
		      "on v1: a file's clean page cache dropped with POSIX_FADV_DONTNEED "
		      "(`dd if=FILE iflag=nocache count=0`, the files `memacct explain --cgroup "
		      "--by file` names), or the host's with `sync; echo 1 > "
		      "/proc/sys/vm/drop_caches`", cg->path);
		return EXIT_ENV;
	}
	if (memcg_has_memory(cg) == 0) {
		p_err("cgroup %s has no memory controller (its parent's "
		      "cgroup.subtree_control lacks memory): nothing is charged to it, "
		      "nothing to reclaim", cg->path);
		return EXIT_ENV;
	}
	return 0;
}

/*
 * memory.reclaim written for r->requested bytes, memory.stat read before
 * and after. 0 with r->complete set (a partial reclaim, -EAGAIN, is no
 * error), the exit code after saying why nothing could be done, or
 * -EIO after a write error the report still shows (the kernel may have
 * reclaimed some first).
 */
static int reclaim_do(struct reclaim_result *r)
{
	const struct memcg *cg = r->cg;
	int err, ret;

	err = memcg_reclaim(cg, r->requested, r->file_only, &r->method);
	if (err == -ENOENT) {
		p_err("%s has no memory.reclaim (Linux 5.19+): nothing reclaimed", cg->path);
		return EXIT_ENV;
	}
	if (err == -EOPNOTSUPP) {
		p_err("this kernel's memory.reclaim has no swappiness= (Linux 6.11+) and anon "
		      "memory of %s can be swapped or demoted: --file-only cannot be honoured, "
		      "nothing reclaimed (memory.swap.max 0 on the cgroup makes it possible)",
		      cg->path);
		return EXIT_ENV;
	}
	if (err && err != -EAGAIN)
		p_err("writing %s/memory.reclaim: %s", cg->path, strerror(-err));
	r->complete = !err;
	ret = memcg_read_stat(cg, &r->after);
	if (ret) {
		p_err("reading %s/memory.stat after reclaim: %s", cg->path, strerror(-ret));
		return EXIT_RUNTIME;
	}
	return err && err != -EAGAIN ? -EIO : 0;
}

int do_reclaim(int argc, char **argv)
{
	struct reclaim_env env = { 0 };
	struct reclaim_result r = { 0 };
	struct memcg cg;
	int err = 0, ret;

	ret = parse_args(argc, argv, &env);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	r.file_only = env.file_only;
	/* no percentage: of what would be ambiguous */
	if (env.size && (parse_size(env.size, 0, &r.requested) || !r.requested)) {
		p_err("bad --bytes '%s' (a size above 0: 4096, 256M, 1G)", env.size);
		return EXIT_USAGE;
	}
	ret = reclaim_target(&env, &cg);
	if (ret)
		return ret;
	r.cg = &cg;
	err = memcg_read_stat(&cg, &r.before);
	if (err) {
		p_err("reading %s/memory.stat: %s", cg.path, strerror(-err));
		return EXIT_RUNTIME;
	}
	if (!env.size)	/* the file LRUs, or everything charged */
		r.requested = r.file_only ? r.before.active_file + r.before.inactive_file
					  : r.before.usage;
	r.dry_run = env.dry_run;
	reclaim_predict(&cg, &r.before, r.file_only, r.requested, &r.predicted);
	if (r.requested && !r.dry_run) {
		err = reclaim_do(&r);
		if (err > 0)
			return err;
	} else {	/* nothing to ask, or --dry-run: after = before */
		r.after = r.before;
		r.complete = !r.dry_run;
		r.method = r.file_only ? RM_SWAPPINESS0 : RM_PLAIN;
	}
	ret = json_output ? print_reclaim_json(&r) : (print_reclaim_plain(&r), EXIT_OK);
	if (ret != EXIT_OK)
		return ret;
	if (err)
		return EXIT_RUNTIME;
	return r.complete || r.dry_run ? EXIT_OK : EXIT_PARTIAL;
}
