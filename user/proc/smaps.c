// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * smaps.c - parser of /proc/PID/smaps. One pass over the text, no sscanf in
 * the key lines (10,000 mappings are ~250,000 lines). Never trusts the text:
 * every number is checked, every line bounded by its newline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "smaps.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static const char *const kind_names[SMAPS_KIND_NR] = {
	[SMAPS_ANON] = "anon", [SMAPS_FILE] = "file", [SMAPS_SHMEM] = "shmem",
	[SMAPS_HEAP] = "heap", [SMAPS_STACK] = "stack", [SMAPS_DEVICE] = "device",
	[SMAPS_OTHER] = "other",
};

const char *smaps_kind_name(enum smaps_kind k)
{
	return k < SMAPS_KIND_NR ? kind_names[k] : "other";
}

void smaps_free(struct smaps *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->maps[i].path);
	free(s->maps);
	memset(s, 0, sizeof(*s));
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* hex number at *@p up to a byte not a hex digit; advances *@p */
static int parse_hex(const char **p, const char *e, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (s >= e || hexval(*s) < 0)
		return -EINVAL;
	for (; s < e && (d = hexval(*s)) >= 0; s++) {
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | (uint64_t)d;
	}
	*p = s;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *e, uint64_t *out)
{
	const char *s = *p;

	while (s < e && *s >= '0' && *s <= '9')
		s++;
	if (s == *p)
		return -EINVAL;
	if (parse_u64_n(*p, s - *p, out))
		return -ERANGE;
	*p = s;
	return 0;
}

static bool expect(const char **p, const char *e, char c)
{
	if (*p >= e || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static enum smaps_kind classify(const struct smaps_map *m)
{
	const char *p = m->path;

	if (!p)
		/* MAP_SHARED|MAP_ANONYMOUS shows "/dev/zero (deleted)"; be safe */
		return smaps_private(m) ? SMAPS_ANON : SMAPS_SHMEM;
	if (p[0] == '[') {
		if (!strcmp(p, "[heap]"))
			return SMAPS_HEAP;
		if (starts(p, "[stack"))
			return SMAPS_STACK;
		if (starts(p, "[anon_shmem:"))
			return SMAPS_SHMEM;
		if (starts(p, "[anon:"))
			return SMAPS_ANON;
		return SMAPS_OTHER;
	}
	if (starts(p, "/memfd:") || starts(p, "/dev/shm/") || starts(p, "/SYSV") ||
	    !strcmp(p, "/dev/zero"))
		return SMAPS_SHMEM;
	if (m->vm_io || starts(p, "/dev/"))
		return SMAPS_DEVICE;
	if (!m->inode)
		return SMAPS_OTHER;	/* anon_inode:..., aio, ... */
	return SMAPS_FILE;
}

/*
 * The path as show_map_vma() prints it: seq_file_path(..., "\n") writes a
 * newline as "\012"; d_path() appends " (deleted)" to an unlinked file.
 * A name with a literal "\012" in it cannot be told apart (documented).
 */
static int set_path(struct smaps_map *m, const char *s, const char *e)
{
	static const char del[] = " (deleted)";
	size_t dl = sizeof(del) - 1, o = 0;
	char *d;

	if (s == e)
		return 0;
	if (*s != '[' && (size_t)(e - s) > dl && !memcmp(e - dl, del, dl)) {
		m->deleted = true;
		e -= dl;
	}
	d = malloc(e - s + 1);
	if (!d)
		return -ENOMEM;
	while (s < e) {
		if (e - s >= 4 && !memcmp(s, "\\012", 4)) {
			d[o++] = '\n';
			s += 4;
		} else {
			d[o++] = *s++;
		}
	}
	d[o] = '\0';
	m->path = d;
	return 0;
}

/*
 * "start-end perms offset major:minor inode" of a maps or smaps header line
 * into @m; *@p: where the path starts (after the padding)
 */
static int parse_header_fields(const char **p, const char *e, struct smaps_map *m)
{
	const char *s = *p;
	uint64_t v;
	int i;

	if (parse_hex(&s, e, &m->start) || !expect(&s, e, '-') ||
	    parse_hex(&s, e, &m->end) || !expect(&s, e, ' ') || e - s < 5)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!strchr("rwxsp-", *s))
			return -EINVAL;
		m->perms[i] = *s++;
	}
	m->perms[4] = '\0';
	if (!expect(&s, e, ' ') || parse_hex(&s, e, &m->offset) || !expect(&s, e, ' ') ||
	    parse_hex(&s, e, &v) || v > 0xfff || !expect(&s, e, ':'))
		return -EINVAL;
	m->dev_major = (unsigned int)v;
	if (parse_hex(&s, e, &v) || v > 0xfffff || !expect(&s, e, ' ') ||
	    parse_dec(&s, e, &m->inode))
		return -EINVAL;
	m->dev_minor = (unsigned int)v;
	if (s < e && *s != ' ')
		return -EINVAL;
	while (s < e && *s == ' ')
		s++;
	*p = s;
	return 0;
}

/* "start-end perms offset major:minor inode<pad>path" */
static int parse_header(const char *s, const char *e, struct smaps_map *m)
{
	int err = parse_header_fields(&s, e, m);

	return err ? err : set_path(m, s, e);
}

int parse_maps_file(const char *line, uint64_t *dev, uint64_t *ino, char **path)
{
	struct smaps_map m = { 0 };
	const char *e = line + strcspn(line, "\n");
	int err = path ? parse_header(line, e, &m) : parse_header_fields(&line, e, &m);

	if (err || !m.inode) {
		free(m.path);
		return err ? err : -EINVAL;
	}
	*dev = makedev(m.dev_major, m.dev_minor);
	*ino = m.inode;
	if (path)
		*path = m.path;
	else
		free(m.path);
	return 0;
}

int parse_maps_devino(const char *line, uint64_t *dev, uint64_t *ino)
{
	return parse_maps_file(line, dev, ino, NULL);
}

static const struct {
	const char *key;
	size_t len, off;
} kb_keys[] = {
#define K(name, field) { name, sizeof(name) - 1, offsetof(struct smaps_map, field) }
	K("Size", size), K("Rss", rss), K("Pss", pss), K("Pss_Dirty", pss_dirty),
	K("Shared_Clean", shared_clean), K("Shared_Dirty", shared_dirty),
	K("Private_Clean", private_clean), K("Private_Dirty", private_dirty),
	K("Referenced", referenced), K("Anonymous", anonymous), K("KSM", ksm),
	K("LazyFree", lazyfree), K("AnonHugePages", anon_huge),
	K("ShmemPmdMapped", shmem_pmd), K("FilePmdMapped", file_pmd),
	K("Shared_Hugetlb", shared_hugetlb), K("Private_Hugetlb", private_hugetlb),
	K("Swap", swap), K("SwapPss", swap_pss), K("Locked", locked),
#undef K
};

/* "<blanks>N kB" -> bytes */
static int parse_kb_val(const char *s, const char *e, uint64_t *bytes)
{
	uint64_t kb;

	while (s < e && *s == ' ')
		s++;
	if (e - s < 4 || memcmp(e - 3, " kB", 3))
		return -EINVAL;
	if (parse_u64_n(s, e - 3 - s, &kb))
		return -EINVAL;
	if (kb > UINT64_MAX / 1024)
		return -ERANGE;
	*bytes = kb * 1024;
	return 0;
}

static void parse_vmflags(const char *s, const char *e, struct smaps_map *m)
{
	for (; s + 1 < e; s++) {
		if (s[0] == ' ' || (s + 2 < e && s[2] != ' '))
			continue;
		if (s[0] == 'l' && s[1] == 'o')
			m->vm_locked = true;
		if ((s[0] == 'i' && s[1] == 'o') || (s[0] == 'p' && s[1] == 'f'))
			m->vm_io = true;
		s += 2;
	}
	m->has_vmflags = true;
}

static int parse_key(const char *s, const char *e, struct smaps_map *m)
{
	const char *colon = memchr(s, ':', e - s);
	size_t klen;

	if (!colon)
		return -EINVAL;
	klen = colon - s;
	if (klen == 7 && !memcmp(s, "VmFlags", 7)) {
		parse_vmflags(colon + 1, e, m);
		return 0;
	}
	for (size_t i = 0; i < sizeof(kb_keys) / sizeof(kb_keys[0]); i++)
		if (kb_keys[i].len == klen && !memcmp(s, kb_keys[i].key, klen))
			return parse_kb_val(colon + 1, e,
					    (uint64_t *)((char *)m + kb_keys[i].off));
	return 0;	/* unknown key, THPeligible, ProtectionKey, ... */
}

/* One line [@pos, @eol) into @s: a header begins the next mapping (*@m),
 * a "Key: value" line fills *@m. 0, -EINVAL, -ENOMEM. */
static int parse_line(const char *pos, const char *eol, struct smaps *s,
		      struct smaps_map **m)
{
	if (eol == pos)
		return 0;
	if (hexval(*pos) >= 0) {
		*m = array_grow(&s->maps, s->n, &s->cap, sizeof(**m));
		if (!*m)
			return -ENOMEM;
		s->n++;
		memset(*m, 0, sizeof(**m));
		return parse_header(pos, eol, *m);
	}
	if (!*m)
		return -EINVAL;
	return parse_key(pos, eol, *m);
}

/* Every whole line of [@pos, @end) (the last one too when @last); returns
 * the bytes used or a negative errno. */
static long parse_lines(const char *pos, const char *end, bool last, struct smaps *s,
			struct smaps_map **m)
{
	const char *p = pos, *eol;
	int err;

	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol) {
			if (!last)
				break;
			eol = end;
		}
		err = parse_line(p, eol, s, m);
		if (err)
			return err;
	}
	return p < end ? p - pos : end - pos;
}

static int parse_done(struct smaps *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->maps[i].kind = classify(&s->maps[i]);
	return (int)s->n;
}

int parse_smaps(const char *text, struct smaps *s)
{
	struct smaps_map *m = NULL;
	long err;

	memset(s, 0, sizeof(*s));
	if (!text)
		return -EINVAL;
	err = parse_lines(text, text + strlen(text), true, s, &m);
	if (err < 0) {
		smaps_free(s);
		return (int)err;
	}
	return parse_done(s);
}

/*
 * The file parsed as it is read, SMAPS_CHUNK at a time: the text of a
 * process of 10,000 mappings (7 MiB) is never held whole (reading it whole
 * cost a fault per page of the buffer and its copies: half of explain's
 * time there). A line longer than the chunk (a path is at most PATH_MAX)
 * is -EINVAL.
 */
#define SMAPS_CHUNK	(128 << 10)

int parse_smaps_fd(int fd, struct smaps *s)
{
	struct smaps_map *m = NULL;
	size_t len = 0;
	char *buf = malloc(SMAPS_CHUNK);
	long used = 0;
	ssize_t n;

	memset(s, 0, sizeof(*s));
	if (!buf)
		return -ENOMEM;
	for (;;) {
		n = read(fd, buf + len, SMAPS_CHUNK - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			used = -errno;
			break;
		}
		len += n;
		used = parse_lines(buf, buf + len, !n, s, &m);
		if (used < 0 || !n)
			break;
		if (!used && len == SMAPS_CHUNK) {
			used = -EINVAL;
			break;
		}
		len -= used;
		memmove(buf, buf + used, len);
	}
	free(buf);
	if (used < 0) {
		smaps_free(s);
		return (int)used;
	}
	return parse_done(s);
}

int read_smaps(pid_t pid, struct smaps *s)
{
	char path[64];
	int fd, err;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = parse_smaps_fd(fd, s);
	close(fd);
	if (err < 0)
		return err;
	/* a live process always has mappings; an empty file means its mm is gone */
	if (!s->n || !s->maps[s->n - 1].has_vmflags) {
		smaps_free(s);
		return -ESRCH;
	}
	return 0;
}

/* pages of the mapping that are page cache (not anon CoW copies, not shmem) */
static uint64_t file_pages(const struct smaps_map *m)
{
	if (m->kind != SMAPS_FILE)
		return 0;
	return m->rss > m->anonymous ? m->rss - m->anonymous : 0;
}

uint64_t smaps_file_clean(const struct smaps_map *m)
{
	uint64_t clean = m->shared_clean + m->private_clean, fp = file_pages(m);

	return clean < fp ? clean : fp;
}

uint64_t smaps_file_dirty(const struct smaps_map *m)
{
	return file_pages(m) - smaps_file_clean(m);
}

uint64_t smaps_private_anon(const struct smaps_map *m)
{
	uint64_t priv = m->private_clean + m->private_dirty;

	switch (m->kind) {
	case SMAPS_ANON:
	case SMAPS_HEAP:
	case SMAPS_STACK:
		return priv;
	case SMAPS_FILE:	/* CoW copies of a private file mapping */
		return m->anonymous < priv ? m->anonymous : priv;
	default:
		return 0;
	}
}

uint64_t smaps_reclaimable(const struct smaps_map *m)
{
	return (m->vm_locked ? 0 : smaps_file_clean(m)) + m->lazyfree;
}
