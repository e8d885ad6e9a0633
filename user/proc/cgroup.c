/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cgroup.c - find the memory cgroup hierarchy, resolve cgroups given on the
 * command line, create/remove/populate memacct's own cgroups and read their
 * memory accounting. Library code: negative errno, no printing (except the
 * candidate list of an ambiguous name), no exit().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fts.h>
#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

#define MOUNTINFO_MAX		(4 << 20)
#define CGROUP_PROCS_MAX	(64 << 20)	/* "4194304\n" for every possible pid */
#define CGROUP_FILE_MAX		(1 << 20)
#define REMOVE_TIMEOUT_NS	2000000000ULL
#define REMOVE_RETRY_NS		20000000L

/* the hierarchy found by memcg_root(): mounts do not move during a run */
static struct {
	bool valid;
	int version;
	char mnt[PATH_MAX];	/* mount point */
	char mnt_root[PATH_MAX];	/* mountinfo field 4: the cgroup mounted there */
} memcg_mount;

/* @tok is one of the @sep-separated items of @list (exact match) */
static bool list_has(const char *list, const char *tok, char sep)
{
	size_t n = strlen(tok);
	const char *p = list, *e;

	for (;;) {
		e = strchrnul(p, sep);
		if ((size_t)(e - p) == n && !memcmp(p, tok, n))
			return true;
		if (!*e)
			return false;
		p = e + 1;
	}
}

/* mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo (fs/proc_namespace.c mangle()) */
static int unescape_octal(char *dst, size_t len, const char *src)
{
	long n = octal_unescape(dst, len, src, strlen(src));

	return n < 0 ? (int)n : 0;
}

/*
 * mountinfo_find() - the first mount in mountinfo @text (Documentation/
 * filesystems/proc.rst 3.5: "id parent maj:min root mountpoint opts
 * [optional...] - fstype source superopts") that is a v1 hierarchy with
 * @controller (@version 1) or a cgroup2 mount @v2_has_memory accepts.
 */
static int mountinfo_find(const char *text, int version, const char *controller,
			  bool (*v2_has_memory)(const char *mnt),
			  char *mnt, char *mnt_root)
{
	const char *pos = text, *eol;
	char *line, *save, *tok[32];
	int ntok, sep, err;

	while (*pos) {
		eol = strchrnul(pos, '\n');
		line = strndup(pos, eol - pos);
		pos = *eol ? eol + 1 : eol;
		if (!line)
			return -ENOMEM;

		ntok = 0;
		for (char *t = strtok_r(line, " ", &save); t && ntok < 32;
		     t = strtok_r(NULL, " ", &save))
			tok[ntok++] = t;
		for (sep = 6; sep < ntok && strcmp(tok[sep], "-"); sep++)
			;
		if (sep + 3 >= ntok)
			goto next;
		if (version == 1 && (strcmp(tok[sep + 1], "cgroup") ||
				     !list_has(tok[sep + 3], controller, ',')))
			goto next;
		if (version == 2 && strcmp(tok[sep + 1], "cgroup2"))
			goto next;

		err = unescape_octal(mnt, PATH_MAX, tok[4]);
		if (!err)
			err = unescape_octal(mnt_root, PATH_MAX, tok[3]);
		if (!err && version == 2 && !v2_has_memory(mnt))
			goto next;
		free(line);
		return err;
next:
		free(line);
	}
	return -ENOENT;
}

/* cgroup.controllers of a cgroup2 mount lists "memory" (space separated) */
static bool v2_has_memory_live(const char *mnt)
{
	char path[PATH_MAX], *buf;
	bool found;
	long len;

	if (snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt) >= (int)sizeof(path))
		return false;
	len = read_file(path, &buf, 4096);
	if (len < 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	found = list_has(buf, "memory", ' ');
	free(buf);
	return found;
}

/*
 * A v1 memory hierarchy and a cgroup2 mount with the memory controller
 * exclude each other (a controller is bound to one hierarchy), so v1 is
 * looked for first and the v2 callback only asked when there is none.
 */
static int mountinfo_memcg(const char *text, char *mnt, char *mnt_root, int *version,
			   bool (*v2_has_memory)(const char *mnt))
{
	int err;

	if (!text)
		return -EINVAL;
	if (!v2_has_memory)
		v2_has_memory = v2_has_memory_live;
	err = mountinfo_find(text, 1, "memory", NULL, mnt, mnt_root);
	if (!err) {
		*version = 1;
		return 0;
	}
	if (err != -ENOENT)
		return err;
	err = mountinfo_find(text, 2, NULL, v2_has_memory, mnt, mnt_root);
	if (!err)
		*version = 2;
	return err;
}

/*
 * parse_mountinfo_memcg() - @root (PATH_MAX) and @version from mountinfo
 * text; a NULL @v2_has_memory reads the candidate's cgroup.controllers.
 * 0, -ENOENT (no memory hierarchy), -EINVAL, -ENAMETOOLONG, -ENOMEM.
 */
int parse_mountinfo_memcg(const char *text, char *root, int *version,
			  bool (*v2_has_memory)(const char *mnt))
{
	char mnt_root[PATH_MAX];

	return mountinfo_memcg(text, root, mnt_root, version, v2_has_memory);
}

int parse_mountinfo_v1(const char *text, const char *controller, char *mnt)
{
	char mnt_root[PATH_MAX];

	return mountinfo_find(text, 1, controller, NULL, mnt, mnt_root);
}

int cgroup_v1_mount(const char *controller, char *mnt)
{
	char *buf;
	long len = read_file("/proc/self/mountinfo", &buf, MOUNTINFO_MAX);
	int err;

	if (len < 0)
		return (int)len;
	err = parse_mountinfo_v1(buf, controller, mnt);
	free(buf);
	return err;
}

static int memcg_mount_get(void)
{
	char *buf;
	long len;
	int err;

	if (memcg_mount.valid)
		return 0;
	len = read_file("/proc/self/mountinfo", &buf, MOUNTINFO_MAX);
	if (len < 0)
		return (int)len;
	err = mountinfo_memcg(buf, memcg_mount.mnt, memcg_mount.mnt_root,
			      &memcg_mount.version, NULL);
	free(buf);
	if (err)
		return err;
	memcg_mount.valid = true;
	return 0;
}

/*
 * memcg_root() - from /proc/self/mountinfo, read once and cached for the
 * process's lifetime. 0, -ENOENT, or read_file()'s error.
 */
int memcg_root(char *root, int *version)
{
	int err;

	err = memcg_mount_get();
	if (err)
		return err;
	strcpy(root, memcg_mount.mnt);
	*version = memcg_mount.version;
	return 0;
}

uint64_t memcg_root_id(void)
{
	struct stat st;

	if (memcg_mount_get() || stat(memcg_mount.mnt, &st))
		return 0;
	return st.st_ino;
}

/*
 * normalize_path() - collapse "//", drop a trailing '/', refuse "." and ".."
 * components (a cgroup argument must not climb out of the hierarchy).
 * "/" stays "/", a relative path stays relative. 0, -EINVAL, -ENAMETOOLONG.
 */
static int normalize_path(char *dst, size_t len, const char *src)
{
	const char *p = src, *e;
	size_t n = 0, c;

	if (!*src)
		return -EINVAL;
	if (*p == '/') {
		if (len < 2)
			return -ENAMETOOLONG;
		dst[n++] = '/';
	}
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		c = e - p;
		if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (n && dst[n - 1] != '/')
			dst[n++] = '/';
		if (n + c + 2 > len)
			return -ENAMETOOLONG;
		memcpy(dst + n, p, c);
		n += c;
		p = e;
	}
	if (!n)
		return -EINVAL;
	dst[n] = '\0';
	return 0;
}

/* @path is @dir or below it; the part below (starting with '/') in *@rest */
static bool path_below(const char *path, const char *dir, const char **rest)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/")) {
		*rest = path;
		return path[0] == '/';
	}
	if (strncmp(path, dir, n) || (path[n] != '/' && path[n] != '\0'))
		return false;
	*rest = path + n;
	return true;
}

/*
 * memcg_of_path() - @abs must name a directory at or below @root (both
 * absolute, "//" and trailing '/' allowed, "." and ".." refused) on the
 * same file system. id = st_ino (the kernfs id the BPF side reads),
 * level = components below @root. 0, -EINVAL (outside @root, bad
 * version), -ENOENT, -ENOTDIR (a file or a symlink), -EXDEV (another mount).
 */
int memcg_of_path(const char *root, int version, const char *abs, struct memcg *cg)
{
	char r[PATH_MAX], a[PATH_MAX];
	struct stat st_root, st;
	const char *rest;
	int err, level = 0;

	if (!root || !abs || root[0] != '/' || abs[0] != '/' ||
	    (version != 1 && version != 2))
		return -EINVAL;
	err = normalize_path(r, sizeof(r), root);
	if (!err)
		err = normalize_path(a, sizeof(a), abs);
	if (err)
		return err;
	if (!path_below(a, r, &rest))
		return -EINVAL;
	/* cgroupfs has no symlinks: one here leads out of the hierarchy */
	if (lstat(a, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (stat(r, &st_root))
		return -errno;
	/* another file system mounted inside the hierarchy is not a cgroup */
	if (st.st_dev != st_root.st_dev)
		return -EXDEV;

	memset(cg, 0, sizeof(*cg));
	strcpy(cg->path, a);
	if (!*rest || !strcmp(rest, "/")) {
		strcpy(cg->rel, "/");
	} else {
		strcpy(cg->rel, rest);
		for (; *rest; rest++)
			level += *rest == '/';
	}
	cg->id = st.st_ino;
	cg->version = version;
	cg->level = level;
	return 0;
}

/*
 * walk_cgroups() - call @fn for @top and every directory below it, parents
 * first, without following symlinks or leaving the file system. Cgroups
 * removed during the walk are skipped. Stops at @fn's first nonzero return.
 */
static int walk_cgroups(const char *top,
			int (*fn)(const FTSENT *ent, void *ctx), void *ctx)
{
	char *argv[] = { (char *)top, NULL };
	FTSENT *ent;
	FTS *fts;
	int err = 0;

	fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	if (!fts)
		return -errno;
	errno = 0;
	while (!err && (ent = fts_read(fts))) {
		switch (ent->fts_info) {
		case FTS_D:
			err = fn(ent, ctx);
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			if (ent->fts_errno != ENOENT)
				err = -ent->fts_errno;
			else if (ent->fts_level == 0)
				err = -ENOENT;
			break;
		default:
			break;
		}
		errno = 0;
	}
	if (!err && errno)
		err = -errno;
	fts_close(fts);
	return err;
}

struct memcg_walk_ctx {
	const char *root;
	int version;
	int (*fn)(const struct memcg *cg, void *ctx);
	void *ctx;
};

static int memcg_walk_fn(const FTSENT *ent, void *ctx)
{
	struct memcg_walk_ctx *w = ctx;
	struct memcg cg;

	if (memcg_of_path(w->root, w->version, ent->fts_path, &cg))
		return 0;	/* removed meanwhile */
	return w->fn(&cg, w->ctx);
}

int memcg_walk(int (*fn)(const struct memcg *cg, void *ctx), void *ctx)
{
	struct memcg_walk_ctx w = { .fn = fn, .ctx = ctx };
	char root[PATH_MAX];
	int err = memcg_root(root, &w.version);

	if (err)
		return err;
	w.root = root;
	return walk_cgroups(root, memcg_walk_fn, &w);
}

struct name_search {
	const char *root;
	const char *tail;	/* normalized relative argument */
	char **found;
	size_t n, cap;
};

/* a directory whose path below the root ends with "/" + tail */
static int name_search_fn(const FTSENT *ent, void *ctx)
{
	struct name_search *ns = ctx;
	size_t n = ent->fts_pathlen, t = strlen(ns->tail);
	char **slot;

	if (ent->fts_level == 0 || n < t + 1)
		return 0;
	if (ent->fts_path[n - t - 1] != '/' || strcmp(ent->fts_path + n - t, ns->tail))
		return 0;
	slot = array_grow(&ns->found, ns->n, &ns->cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = strdup(ent->fts_path);
	if (!*slot)
		return -ENOMEM;
	ns->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a name or a path tail anywhere below @root; see memcg_resolve() */
static int memcg_search(const char *root, int version, const char *tail,
			struct memcg *cg, FILE *ambiguous)
{
	struct name_search ns = { .root = root, .tail = tail };
	size_t i;
	int err;

	err = walk_cgroups(root, name_search_fn, &ns);
	if (err)
		goto out_free_found;
	if (ns.n == 0) {
		err = -ENOENT;
	} else if (ns.n == 1) {
		err = memcg_of_path(root, version, ns.found[0], cg);
	} else {
		qsort(ns.found, ns.n, sizeof(*ns.found), cmp_str);
		for (i = 0; ambiguous && i < ns.n; i++)
			fprintf(ambiguous, "%s\n", ns.found[i]);
		err = -ENOTUNIQ;
	}
out_free_found:
	for (i = 0; i < ns.n; i++)
		free(ns.found[i]);
	free(ns.found);
	return err;
}

/*
 * Order: an absolute path inside the hierarchy; then @arg below the root
 * ("/system.slice/x.service" as /proc/PID/cgroup shows it, or without the
 * leading '/'); then, for a relative @arg only, a directory anywhere below
 * the root whose path ends with @arg ("job_123", "pod-uid/container").
 */
int memcg_resolve_at(const char *root, int version, const char *arg,
		     struct memcg *cg, FILE *ambiguous)
{
	char r[PATH_MAX], a[PATH_MAX], path[PATH_MAX];
	const char *rest;
	int err;

	if (!root || !arg || !*arg)
		return -EINVAL;
	err = normalize_path(r, sizeof(r), root);
	if (!err)
		err = normalize_path(a, sizeof(a), arg);
	if (err)
		return err;
	if (a[0] == '/' && path_below(a, r, &rest))
		return memcg_of_path(r, version, a, cg);

	if (snprintf(path, sizeof(path), "%s%s%s", strcmp(r, "/") ? r : "",
		     a[0] == '/' ? "" : "/", a) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	err = memcg_of_path(r, version, path, cg);
	if (err != -ENOENT || a[0] == '/')
		return err;
	return memcg_search(r, version, a, cg, ambiguous);
}

/* memcg_resolve() - memcg_resolve_at() below memcg_root() */
int memcg_resolve(const char *arg, struct memcg *cg, FILE *ambiguous)
{
	int err;

	err = memcg_mount_get();
	if (err)
		return err;
	return memcg_resolve_at(memcg_mount.mnt, memcg_mount.version, arg, cg, ambiguous);
}

/*
 * /proc/PID/cgroup (kernel/cgroup/cgroup.c proc_cgroup_show()):
 * "hierarchy-id:controller-list:path"; v2 is "0::path". The path may
 * itself contain ':'.
 */
int parse_proc_cgroup(const char *text, int version, char *path, size_t len)
{
	const char *pos = text, *eol, *c1, *c2;
	char ctrl[256];
	size_t n;

	if (!text || (version != 1 && version != 2))
		return -EINVAL;
	while (*pos) {
		eol = strchrnul(pos, '\n');
		c1 = memchr(pos, ':', eol - pos);
		c2 = c1 ? memchr(c1 + 1, ':', eol - c1 - 1) : NULL;
		if (!c2 || c2 - c1 - 1 >= (long)sizeof(ctrl))
			goto next;
		memcpy(ctrl, c1 + 1, c2 - c1 - 1);
		ctrl[c2 - c1 - 1] = '\0';
		if (version == 1 ? !list_has(ctrl, "memory", ',') :
		    (c1 - pos != 1 || pos[0] != '0' || ctrl[0]))
			goto next;
		n = eol - c2 - 1;
		if (!n || c2[1] != '/')
			return -EINVAL;
		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(path, c2 + 1, n);
		path[n] = '\0';
		return 0;
next:
		pos = *eol ? eol + 1 : eol;
	}
	return -ENOENT;
}

/* "memory" in the space-separated list of @dir/@file (cgroup.controllers, ...) */
static int file_lists_memory(const char *dir, const char *file)
{
	char path[PATH_MAX + 32], *buf;
	bool found;
	long len;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	len = read_file(path, &buf, 4096);
	if (len < 0)
		return (int)len;
	buf[strcspn(buf, "\n")] = '\0';
	found = list_has(buf, "memory", ' ');
	free(buf);
	return found;
}

/*
 * memcg_has_memory(): v2 lists in a cgroup's cgroup.controllers what its
 * parent's cgroup.subtree_control enables for it (kernel/cgroup/cgroup.c
 * cgroup_controllers_show()).
 */
int memcg_has_memory(const struct memcg *cg)
{
	if (cg->version == 1 || cg->level == 0)
		return 1;
	return file_lists_memory(cg->path, "cgroup.controllers");
}

int memcg_charged_at(const char *root, struct memcg *cg)
{
	char parent[PATH_MAX];
	int has, err;

	while ((has = memcg_has_memory(cg)) == 0) {
		snprintf(parent, sizeof(parent), "%s", cg->path);
		*strrchr(parent, '/') = '\0';	/* level > 0: below root */
		err = memcg_of_path(root, cg->version, parent, cg);
		if (err)
			return err;
	}
	return has < 0 ? has : 0;
}

/*
 * memcg_member_of() - /proc/@pid/cgroup (@pid 0: self) mapped below
 * memcg_root(). -ENOENT/-ESRCH when the process is gone, -ENOENT when its
 * cgroup is not visible below the mount (another cgroup namespace).
 */
int memcg_member_of(pid_t pid, struct memcg *cg)
{
	char proc[64], rel[PATH_MAX], abs[PATH_MAX];
	const char *rest;
	char *buf;
	long len;
	int err;

	if (pid < 0)
		return -EINVAL;
	err = memcg_mount_get();
	if (err)
		return err;
	if (pid)
		snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self/cgroup");
	len = read_file(proc, &buf, CGROUP_FILE_MAX);
	if (len < 0)
		return (int)len;
	err = parse_proc_cgroup(buf, memcg_mount.version, rel, sizeof(rel));
	free(buf);
	if (err)
		return err;

	/* a mount of a subtree (containers) shows paths below its own root */
	if (strcmp(memcg_mount.mnt_root, "/") &&
	    path_below(rel, memcg_mount.mnt_root, &rest))
		memmove(rel, rest, strlen(rest) + 1);
	if (snprintf(abs, sizeof(abs), "%s%s", memcg_mount.mnt,
		     strcmp(rel, "/") ? rel : "") >= (int)sizeof(abs))
		return -ENAMETOOLONG;
	return memcg_of_path(memcg_mount.mnt, memcg_mount.version, abs, cg);
}

int memcg_of_pid(pid_t pid, struct memcg *cg)
{
	int err = memcg_member_of(pid, cg);

	/* v2: the process is charged where the memory controller is */
	return err ? err : memcg_charged_at(memcg_mount.mnt, cg);
}

/*
 * v2: a new cgroup gets the memory controller only if its parent's
 * cgroup.subtree_control has "memory"; else its tasks stay charged to the
 * nearest ancestor that has it and nothing would be accounted to it. Enable
 * it there as cgroup managers do (a note on stderr). The kernel refuses
 * with -EBUSY when that parent, not being the root, has processes of its
 * own ("no internal processes"), -ENOENT when the parent is missing.
 */
static int v2_delegate_memory(const char *parent)
{
	char path[PATH_MAX + 32];
	int has, err;

	has = file_lists_memory(parent, "cgroup.subtree_control");
	if (has)
		return has < 0 ? has : 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
	err = write_file(path, "+memory");
	if (err) {
		p_warn("cannot enable the memory controller below %s (+memory in "
		       "cgroup.subtree_control): %s%s", parent, strerror(-err),
		       err == -EBUSY ? " (it has processes of its own)" : "");
		return err;
	}
	p_warn("enabled the memory controller below %s (+memory in cgroup.subtree_control)",
	       parent);
	return 0;
}

/*
 * memcg_create_at() - mkdir @root/@name (0755; @name relative, no "..").
 * v2: first enables the memory controller in the parent when it is not
 * (v2_delegate_memory()). 0, -EEXIST, -EINVAL, -ENOENT (missing parent),
 * mkdir()'s or the parent's cgroup.subtree_control's -errno.
 */
static int create_at(const char *root, int version, const char *name, struct memcg *cg,
		     bool delegate)
{
	char n[PATH_MAX], path[PATH_MAX];
	int err;

	if (!root || !name || name[0] == '/')
		return -EINVAL;
	err = normalize_path(n, sizeof(n), name);
	if (err)
		return err;
	if (snprintf(path, sizeof(path), "%s/%s", root, n) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (version == 2 && delegate) {
		char parent[PATH_MAX];

		snprintf(parent, sizeof(parent), "%s", path);
		*strrchr(parent, '/') = '\0';
		err = v2_delegate_memory(parent);
		if (err)
			return err;
	}
	if (mkdir(path, 0755))
		return -errno;
	err = memcg_of_path(root, version, path, cg);
	if (err)
		rmdir(path);
	return err;
}

int memcg_create_at(const char *root, int version, const char *name, struct memcg *cg)
{
	return create_at(root, version, name, cg, true);
}

/* memcg_create() - memcg_create_at() below memcg_root() */
int memcg_create(const char *name, struct memcg *cg)
{
	int err;

	err = memcg_mount_get();
	if (err)
		return err;
	return memcg_create_at(memcg_mount.mnt, memcg_mount.version, name, cg);
}

/* the mount point of @cg's hierarchy (PATH_MAX): its path less its rel */
static void mount_of(const struct memcg *cg, char *root)
{
	size_t n = strlen(cg->path);

	if (strcmp(cg->rel, "/"))
		n -= strlen(cg->rel);
	memcpy(root, cg->path, n);
	root[n] = '\0';
}

int memcg_parent(const struct memcg *cg, struct memcg *parent)
{
	char root[PATH_MAX], path[PATH_MAX];

	if (cg->level == 0)
		return -ENOENT;
	mount_of(cg, root);
	strcpy(path, cg->path);
	*strrchr(path, '/') = '\0';
	return memcg_of_path(root, cg->version, path, parent);
}

/* v2 limit files: a value other than "max" binds the cgroup and all below */
static const char *const v2_limit_files[] = {
	"memory.max", "memory.high", "memory.swap.max", "memory.zswap.max",
};

int memcg_limited(const struct memcg *cg)
{
	char path[PATH_MAX + 32], *buf;
	bool limited;
	long len;

	if (cg->version != 2)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(v2_limit_files) / sizeof(v2_limit_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", cg->path, v2_limit_files[i]);
		len = read_file(path, &buf, 64);
		if (len == -ENOENT)	/* the root, no memory controller, older kernel */
			continue;
		if (len < 0)
			return (int)len;
		buf[strcspn(buf, "\n")] = '\0';
		limited = strcmp(buf, "max") != 0;
		free(buf);
		if (limited)
			return 1;
	}
	return 0;
}

/*
 * v1: any cgroup can have tasks and children, so @own itself. v2: a cgroup
 * with processes (the caller's) cannot enable the memory controller for
 * children (kernel/cgroup/cgroup.c cgroup_vet_subtree_control_enable(): no
 * internal processes, except at the root), so the nearest cgroup, @own or
 * an ancestor, that is the root or already has "memory" in its
 * cgroup.subtree_control (then it has no processes), as long as no cgroup
 * left behind on the way up carries a limit.
 */
int memcg_run_parent(const struct memcg *own, struct memcg *parent, struct memcg *blocker)
{
	struct memcg cur = *own;
	int err;

	if (own->version == 1) {
		*parent = *own;
		return 0;
	}
	while (cur.level > 0) {
		err = file_lists_memory(cur.path, "cgroup.subtree_control");
		if (err < 0)
			return err;
		if (err)
			break;
		err = memcg_limited(&cur);
		if (err < 0)
			return err;
		if (err) {
			if (blocker)
				*blocker = cur;
			return -EBUSY;
		}
		err = memcg_parent(&cur, &cur);
		if (err)
			return err;
	}
	*parent = cur;
	return 0;
}

int memcg_lock(const struct memcg *cg, bool wait)
{
	int fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		err = -errno;
		if (err == -EINTR && wait)
			continue;
		close(fd);
		return err;
	}
	return fd;
}

#define CREATE_TRIES 16

/*
 * A cleaner (run.c) takes the lock of an unlocked, empty cgroup and removes
 * it: one that did so between our mkdir and our flock leaves us a lock on a
 * removed directory, so the name is checked again under the lock.
 */
int memcg_create_locked(const struct memcg *parent, const char *prefix, const char *suffix,
			struct memcg *cg)
{
	char root[PATH_MAX], name[PATH_MAX];
	bool top = !strcmp(parent->rel, "/");
	struct stat st, now;
	int err = -EEXIST, fd;
	uint32_t r;

	mount_of(parent, root);
	for (int i = 0; i < CREATE_TRIES && err == -EEXIST; i++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)(now_ns() ^ ((uint64_t)getpid() << 20));
		if (snprintf(name, sizeof(name), "%s%s%s-%d-%08x%s", top ? "" : parent->rel + 1,
			     top ? "" : "/", prefix, (int)getpid(), r, suffix) >= (int)sizeof(name))
			return -ENAMETOOLONG;
		/* the root's subtree_control, as memcg_create(); any other
		 * parent has "memory" there already, or is made so by
		 * memcg_leaf_move() after the leaf is made */
		err = create_at(root, parent->version, name, cg, parent->level == 0);
		if (err)
			continue;
		fd = memcg_lock(cg, true);
		if (fd >= 0 && !fstat(fd, &st) && !lstat(cg->path, &now) && st.st_ino == now.st_ino)
			return fd;
		if (fd >= 0)
			close(fd);
		err = fd >= 0 || fd == -ENOENT ? -EEXIST : fd;	/* removed: another name */
	}
	return err;
}

/*
 * The kernel refuses "+memory" in a non-root cgroup's subtree_control while
 * the cgroup has processes, and migrating a process into it once it is on:
 * so first the leaf, then the move, then the controller.
 */
int memcg_leaf_move(const struct memcg *own, const char *prefix, struct memcg *leaf,
		    bool *enabled)
{
	char path[PATH_MAX + 32];
	pid_t *pids = NULL;
	int n, fd, err;

	*enabled = false;
	if (own->version != 2 || own->level == 0)
		return -EINVAL;
	n = memcg_pids(own, false, &pids);
	if (n < 0)
		return n;
	err = n == 1 && pids[0] == getpid() ? 0 : -EBUSY;
	free(pids);
	if (err)
		return err;
	fd = memcg_create_locked(own, prefix, "", leaf);
	if (fd < 0)
		return fd;
	err = memcg_add_pid(leaf, 0);
	if (!err) {
		err = file_lists_memory(own->path, "cgroup.subtree_control");
		if (err == 0) {
			snprintf(path, sizeof(path), "%s/cgroup.subtree_control", own->path);
			err = write_file(path, "+memory");
			*enabled = !err;
		} else if (err > 0) {
			err = 0;
		}
	}
	if (err) {
		memcg_add_pid(own, 0);
		memcg_remove(leaf);
		close(fd);
		return err;
	}
	return fd;
}

int memcg_leaf_return(const struct memcg *own, const struct memcg *leaf, bool enabled)
{
	char path[PATH_MAX + 32];
	int err = 0, e;

	if (enabled) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", own->path);
		err = write_file(path, "-memory");
	}
	e = memcg_add_pid(own, 0);
	if (!err)
		err = e;
	e = memcg_remove(leaf);
	return err ? err : e;
}

/*
 * rmdir of a cgroup fails with EBUSY until its last task has exited and
 * been released; wait up to REMOVE_TIMEOUT_NS for that. The root is
 * never removed (-EINVAL); an already removed cgroup gives -ENOENT.
 */
bool memcg_resolve_is_usage(int err)
{
	return err == -ENOENT || err == -ENOTUNIQ || err == -EINVAL || err == -ENAMETOOLONG ||
	       err == -ENOTDIR || err == -ELOOP;
}

int memcg_remove(const struct memcg *cg)
{
	struct timespec ts = { 0, REMOVE_RETRY_NS };
	uint64_t deadline = now_ns() + REMOVE_TIMEOUT_NS;

	if (cg->level == 0 || !strcmp(cg->rel, "/"))
		return -EINVAL;
	while (rmdir(cg->path)) {
		if (errno != EBUSY || now_ns() >= deadline)
			return -errno;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * memcg_add_pid() - write the tgid to cgroup.procs: the whole thread group
 * moves. 0, or the kernel's refusal from write() (-ESRCH, -EINVAL, -EACCES).
 */
int memcg_add_pid(const struct memcg *cg, pid_t pid)
{
	char path[PATH_MAX + 16], buf[16];

	if (pid < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
	snprintf(buf, sizeof(buf), "%d\n", (int)(pid ? pid : getpid()));
	return write_file(path, buf);
}

struct pid_list {
	pid_t *pids;
	size_t n, cap;
};

/* cgroup.procs of @dir: one tgid a line. -ENOENT if the cgroup is gone. */
static int read_procs(const char *dir, struct pid_list *pl)
{
	char path[PATH_MAX + 16], *buf, *p, *eol;
	pid_t *slot;
	uint64_t v;
	long len;
	int err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	len = read_file(path, &buf, CGROUP_PROCS_MAX);
	if (len < 0)
		return (int)len;
	for (p = buf; *p; p = *eol ? eol + 1 : eol) {
		eol = strchrnul(p, '\n');
		if (eol == p)
			continue;
		err = parse_u64_n(p, eol - p, &v);
		if (!err && (v == 0 || v > INT32_MAX))
			err = -EINVAL;
		if (err)
			break;
		slot = array_grow(&pl->pids, pl->n, &pl->cap, sizeof(*slot));
		if (!slot) {
			err = -ENOMEM;
			break;
		}
		*slot = (pid_t)v;
		pl->n++;
	}
	free(buf);
	return err;
}

static int pids_fn(const FTSENT *ent, void *ctx)
{
	int err = read_procs(ent->fts_path, ctx);

	/* a descendant removed since the walk saw it */
	if (err == -ENOENT && ent->fts_level > 0)
		return 0;
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * v1 cgroup.procs may repeat a tgid (one line per thread on old kernels)
 * and a process moving during the walk can be seen twice: sort and dedupe.
 */
int memcg_pids(const struct memcg *cg, bool recursive, pid_t **pids)
{
	struct pid_list pl = { 0 };
	size_t i, n = 0;
	int err;

	*pids = NULL;
	if (recursive)
		err = walk_cgroups(cg->path, pids_fn, &pl);
	else
		err = read_procs(cg->path, &pl);
	if (err) {
		free(pl.pids);
		return err;
	}
	if (!pl.pids) {
		pl.pids = malloc(sizeof(*pl.pids));
		if (!pl.pids)
			return -ENOMEM;
	}
	qsort(pl.pids, pl.n, sizeof(*pl.pids), cmp_pid);
	for (i = 0; i < pl.n; i++)
		if (!n || pl.pids[n - 1] != pl.pids[i])
			pl.pids[n++] = pl.pids[i];
	*pids = pl.pids;
	return (int)n;
}

struct id_list {
	uint64_t *ids;
	size_t n, cap;
};

static int ids_fn(const FTSENT *ent, void *ctx)
{
	struct id_list *il = ctx;
	uint64_t *slot = array_grow(&il->ids, il->n, &il->cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	*slot = ent->fts_statp->st_ino;
	il->n++;
	return 0;
}

/*
 * memcg_descendant_ids() - inode numbers of @cg (first) and of every
 * directory below it, parents before children. Count or -errno.
 */
int memcg_descendant_ids(const struct memcg *cg, uint64_t **ids)
{
	struct id_list il = { 0 };
	int err;

	*ids = NULL;
	err = walk_cgroups(cg->path, ids_fn, &il);
	if (err) {
		free(il.ids);
		return err;
	}
	*ids = il.ids;
	return (int)il.n;
}

struct subtree {
	const struct memcg *top;
	struct memcg *v;
	size_t n, cap;
};

static int subtree_fn(const FTSENT *ent, void *ctx)
{
	struct subtree *t = ctx;
	const char *rest = ent->fts_path + strlen(t->top->path);
	struct memcg *c = array_grow(&t->v, t->n, &t->cap, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (ent->fts_level == 0) {
		*c = *t->top;
	} else {
		if (strlen(ent->fts_path) >= sizeof(c->path) ||
		    strlen(t->top->rel) + strlen(rest) >= sizeof(c->rel))
			return 0;	/* cannot be named: left out */
		memset(c, 0, sizeof(*c));
		strcpy(c->path, ent->fts_path);
		/* below the root: "/a" + "/b"; the root's rel "/" is not doubled */
		snprintf(c->rel, sizeof(c->rel), "%s%s",
			 strcmp(t->top->rel, "/") ? t->top->rel : "", rest);
		c->id = ent->fts_statp->st_ino;
		c->version = t->top->version;
		c->level = t->top->level + ent->fts_level;
	}
	t->n++;
	return 0;
}

int memcg_subtree(const struct memcg *cg, struct memcg **out)
{
	struct subtree t = { .top = cg };
	int err;

	*out = NULL;
	err = walk_cgroups(cg->path, subtree_fn, &t);
	if (err) {
		free(t.v);
		return err;
	}
	*out = t.v;
	return (int)t.n;
}

struct stat_key {
	const char *key;
	size_t off;
};

#define SK(k, f) { k, offsetof(struct memcg_stat, f) }

/* v1 hierarchical counters (mm/memcontrol-v1.c memcg1_stat_format()) */
static const struct stat_key v1_keys[] = {
	SK("total_rss", anon),	/* first: must be present */
	SK("total_cache", file),
	SK("total_shmem", shmem),
	SK("total_mapped_file", file_mapped),
	SK("total_dirty", file_dirty),
	SK("total_writeback", file_writeback),
	SK("total_active_file", active_file),
	SK("total_inactive_file", inactive_file),
	SK("total_active_anon", active_anon),
	SK("total_inactive_anon", inactive_anon),
	SK("total_unevictable", unevictable),
	SK("total_pgfault", pgfault),
	SK("total_pgmajfault", pgmajfault),
};

/* v2 counters, hierarchical already (mm/memcontrol.c memory_stat_format()) */
static const struct stat_key v2_keys[] = {
	SK("anon", anon),	/* first: must be present */
	SK("file", file),
	SK("shmem", shmem),
	SK("file_mapped", file_mapped),
	SK("file_dirty", file_dirty),
	SK("file_writeback", file_writeback),
	SK("active_file", active_file),
	SK("inactive_file", inactive_file),
	SK("active_anon", active_anon),
	SK("inactive_anon", inactive_anon),
	SK("unevictable", unevictable),
	SK("slab_reclaimable", slab_reclaimable),
	SK("slab", slab),	/* >= 5.9 */
	SK("kernel", kernel),	/* >= 5.18: slab, stacks, page tables, ... */
	SK("slab_unreclaimable", slab_unreclaimable),
	SK("kernel_stack", kernel_stack),
	SK("pagetables", pagetables),
	SK("percpu", percpu),
	SK("vmalloc", vmalloc),
	SK("sock", sock),
	SK("pgfault", pgfault),
	SK("pgmajfault", pgmajfault),
};

#undef SK

/*
 * parse_memory_stat() clears all of @s, then fills the memory.stat fields
 * (bytes; pgfault/pgmajfault are counts). -EINVAL when a known key has no
 * number or the anon key (total_rss / anon) is missing.
 */
int parse_memory_stat(const char *text, int version, struct memcg_stat *s)
{
	const struct stat_key *keys = version == 1 ? v1_keys : v2_keys;
	size_t nkeys = version == 1 ? sizeof(v1_keys) / sizeof(v1_keys[0]) :
				      sizeof(v2_keys) / sizeof(v2_keys[0]);
	const char *pos = text, *eol, *sp;
	bool has_anon = false;
	size_t i;
	int err;

	if (!text || (version != 1 && version != 2))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	for (; *pos; pos = *eol ? eol + 1 : eol) {
		eol = strchrnul(pos, '\n');
		sp = memchr(pos, ' ', eol - pos);
		if (!sp)
			continue;
		for (i = 0; i < nkeys; i++) {
			if (strlen(keys[i].key) != (size_t)(sp - pos) ||
			    memcmp(keys[i].key, pos, sp - pos))
				continue;
			err = parse_u64_n(sp + 1, eol - sp - 1,
					  (uint64_t *)((char *)s + keys[i].off));
			if (err)
				return err;
			if (i == 0)
				has_anon = true;
			break;
		}
	}
	return has_anon ? 0 : -EINVAL;
}

int parse_memory_event(const char *text, const char *key, uint64_t *n)
{
	size_t klen = key ? strlen(key) : 0;
	const char *pos = text, *eol;

	if (!text || !klen)
		return -EINVAL;
	for (; *pos; pos = *eol ? eol + 1 : eol) {
		eol = strchrnul(pos, '\n');
		if ((size_t)(eol - pos) > klen + 1 && !memcmp(pos, key, klen) && pos[klen] == ' ')
			return parse_u64_n(pos + klen + 1, eol - pos - (klen + 1), n);
	}
	return -ENOENT;
}

/*
 * parse_oom_kill() - "oom_kill N" of v2 memory.events (>= 4.13) or v1
 * memory.oom_control (>= 4.13). Count. -ENOENT when the kernel has none.
 */
int parse_oom_kill(const char *text, uint64_t *oom_kill)
{
	return parse_memory_event(text, "oom_kill", oom_kill);
}

int memcg_dir_open(struct memcg *cg)
{
	int fd = open(cg->path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	cg->dirfd = fd;
	cg->dir_open = true;
	return 0;
}

void memcg_dir_close(struct memcg *cg)
{
	if (cg->dir_open)
		close(cg->dirfd);
	cg->dir_open = false;
}

long memcg_read_file(const struct memcg *cg, const char *name, char **buf, size_t max)
{
	char path[PATH_MAX + 64];

	if (cg->dir_open)
		return read_file_at(cg->dirfd, name, buf, max, READ_FILE_ONE_SHOW);
	if (snprintf(path, sizeof(path), "%s/%s", cg->path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return read_file_at(AT_FDCWD, path, buf, max, READ_FILE_ONE_SHOW);
}

static long read_cg_file(const struct memcg *cg, const char *name, char **buf)
{
	return memcg_read_file(cg, name, buf, CGROUP_FILE_MAX);
}

/* the number after "total=" on the line of @text that starts with @kind */
static int psi_total(const char *text, const char *kind, uint64_t *us)
{
	size_t kl = strlen(kind);
	const char *pos = text, *eol, *t;

	for (; *pos; pos = *eol ? eol + 1 : eol) {
		eol = strchrnul(pos, '\n');
		if ((size_t)(eol - pos) <= kl || memcmp(pos, kind, kl) || pos[kl] != ' ')
			continue;
		t = memmem(pos, eol - pos, " total=", 7);
		if (!t)
			return -EINVAL;
		t += 7;	/* the line ends at '\n' or '\0': strcspn() stays on it */
		return parse_u64_n(t, strcspn(t, " \n"), us) ? -EINVAL : 0;
	}
	return -EINVAL;
}

int parse_memory_pressure(const char *text, uint64_t *some_us, uint64_t *full_us)
{
	if (!text || psi_total(text, "some", some_us) || psi_total(text, "full", full_us))
		return -EINVAL;
	return 0;
}

int memcg_read_pressure(const struct memcg *cg, uint64_t *some_us, uint64_t *full_us)
{
	char *buf;
	long len;
	int err;

	if (cg->version != 2)
		return -ENOENT;
	len = read_cg_file(cg, "memory.pressure", &buf);
	if (len < 0)
		return (int)len;
	err = parse_memory_pressure(buf, some_us, full_us);
	free(buf);
	return err;
}

/* a file holding one number and a newline (memory.current and the like) */
static int read_cg_u64(const struct memcg *cg, const char *name, uint64_t *v)
{
	char *buf;
	long len;
	int err;

	len = read_cg_file(cg, name, &buf);
	if (len < 0)
		return (int)len;
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	err = parse_u64(buf, v);
	free(buf);
	return err;
}

static int read_cg_oom_kill(const struct memcg *cg, const char *name,
			    struct memcg_stat *s)
{
	char *buf;
	long len;
	int err;

	len = read_cg_file(cg, name, &buf);
	if (len == -ENOENT)
		return 0;
	if (len < 0)
		return (int)len;
	err = parse_oom_kill(buf, &s->oom_kill);
	free(buf);
	if (err == -ENOENT)
		return 0;
	if (!err)
		s->has_oom_kill = true;
	return err;
}

int memcg_read_local_ooms(const struct memcg *cg, uint64_t *n)
{
	char *buf;
	long len;
	int err;

	if (cg->version == 1 || cg->level == 0)
		return -ENOENT;
	len = read_cg_file(cg, "memory.events.local", &buf);
	if (len < 0)
		return (int)len;
	err = parse_memory_event(buf, "oom", n);
	free(buf);
	return err;
}

int memcg_read_usage(const struct memcg *cg, uint64_t *bytes)
{
	return read_cg_u64(cg, cg->version == 1 ? "memory.usage_in_bytes" : "memory.current",
			   bytes);
}

/*
 * memcg_read_stat(): the v2 root cgroup has no memory.current,
 * memory.peak or memory.events; usage stays 0 there.
 */
int memcg_read_stat(const struct memcg *cg, struct memcg_stat *s)
{
	bool v1 = cg->version == 1;
	char *buf;
	long len;
	int err;

	len = read_cg_file(cg, "memory.stat", &buf);
	if (len < 0)
		return (int)len;
	err = parse_memory_stat(buf, cg->version, s);
	free(buf);
	if (err)
		return err;

	err = memcg_read_usage(cg, &s->usage);
	if (err && !(err == -ENOENT && !v1 && cg->level == 0))
		return err;

	err = read_cg_u64(cg, v1 ? "memory.max_usage_in_bytes" : "memory.peak", &s->peak);
	if (!err)
		s->has_peak = true;
	else if (err != -ENOENT)
		return err;

	return read_cg_oom_kill(cg, v1 ? "memory.oom_control" : "memory.events", s);
}

uint64_t memcg_reclaimable(const struct memcg_stat *s)
{
	uint64_t file = s->active_file + s->inactive_file;
	uint64_t busy = s->file_dirty + s->file_writeback;

	return busy < file ? file - busy : 0;
}

uint64_t memcg_working_set(const struct memcg_stat *s)
{
	return s->usage > s->inactive_file ? s->usage - s->inactive_file : 0;
}

const char *memcg_part_name(enum memcg_part p)
{
	static const char *const names[MEMCG_PART_NR] = {
		[MEMCG_PART_ANON] = "anon",
		[MEMCG_PART_SHMEM] = "shmem",
		[MEMCG_PART_FILE_ACTIVE] = "page_cache_active",
		[MEMCG_PART_FILE_INACTIVE] = "page_cache_inactive",
		[MEMCG_PART_FILE_UNEVICTABLE] = "page_cache_unevictable",
		[MEMCG_PART_KERNEL] = "kernel",
		[MEMCG_PART_SOCK] = "sock",
		[MEMCG_PART_OTHER] = "other",
	};

	return p < MEMCG_PART_NR ? names[p] : "?";
}

void memcg_charge_parts(const struct memcg_stat *s, int version, uint64_t kmem_v1,
			bool root_v1, struct memcg_parts *out)
{
	uint64_t lru = s->active_file + s->inactive_file + s->shmem, sum = 0;
	uint64_t *p = out->part;

	memset(out, 0, sizeof(*out));
	out->usage = s->usage;
	p[MEMCG_PART_ANON] = s->anon;
	p[MEMCG_PART_SHMEM] = s->shmem;
	p[MEMCG_PART_FILE_ACTIVE] = s->active_file;
	p[MEMCG_PART_FILE_INACTIVE] = s->inactive_file;
	p[MEMCG_PART_FILE_UNEVICTABLE] = s->file > lru ? s->file - lru : 0;
	if (version == 2)
		p[MEMCG_PART_KERNEL] = s->kernel ? s->kernel :
				       (s->slab ? s->slab : s->slab_reclaimable +
					s->slab_unreclaimable) + s->kernel_stack +
				       s->pagetables + s->percpu + s->vmalloc;
	else if (!root_v1)
		p[MEMCG_PART_KERNEL] = kmem_v1;
	p[MEMCG_PART_SOCK] = version == 2 ? s->sock : 0;
	for (int i = 0; i < MEMCG_PART_OTHER; i++)
		sum += p[i];
	p[MEMCG_PART_OTHER] = s->usage > sum ? s->usage - sum : 0;
	out->largest = MEMCG_PART_ANON;
	for (int i = 1; i < MEMCG_PART_NR; i++)
		if (p[i] > p[out->largest])
			out->largest = i;
	out->working_set = memcg_working_set(s);
	out->working_set_reclaimable = s->active_file + s->slab_reclaimable;
	if (out->working_set_reclaimable > out->working_set)
		out->working_set_reclaimable = out->working_set;
}

int memcg_read_kmem(const struct memcg *cg, uint64_t *bytes)
{
	if (cg->version != 1)
		return -ENOENT;
	return read_cg_u64(cg, "memory.kmem.usage_in_bytes", bytes);
}
