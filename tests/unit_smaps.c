// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_smaps.c - unit tests of user/proc/smaps.c on captured /proc/PID/smaps
 * files (tests/data/smaps_*, captured on 6.18):
 *   smaps_self          cat's own smaps: libraries, [heap], [stack], [vdso]...
 *   smaps_hostile       explain_file_mmap "/var/tmp/a b\nc (deleted)" --unlink
 *                       --mlock: a name with a space, a newline, a literal
 *                       " (deleted)", unlinked and mlocked
 *   smaps_memfd         explain_memfd: a MAP_SHARED memfd
 *   smaps_old           smaps_self without the keys newer kernels added
 *                       (Pss_Dirty, KSM, LazyFree, *PmdMapped, THPeligible)
 *   smaps_unknown_keys  smaps_self with keys no kernel has (yet)
 *   smaps_truncated     smaps_self cut mid-record, as a process exiting
 *                       while being read leaves it
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "check_util.h"
#include "smaps.h"

static struct smaps load(const char *name, int want)
{
	struct smaps s;
	char *text = load_data(name);
	int n = parse_smaps(text, &s);

	free(text);
	if (want >= 0)
		ck_assert_int_eq(n, want);
	else
		ck_assert_int_gt(n, 0);
	return s;
}

static const struct smaps_map *find(const struct smaps *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->maps[i].path && !strcmp(s->maps[i].path, path))
			return &s->maps[i];
	ck_abort_msg("no mapping of '%s'", path);
	return NULL;
}

START_TEST(test_self)
{
	struct smaps s = load("smaps_self", 38);
	const struct smaps_map *m = &s.maps[0];

	ck_assert_uint_eq(m->start, 0x5616339a3000ULL);
	ck_assert_uint_eq(m->end, 0x5616339a5000ULL);
	ck_assert_str_eq(m->perms, "r--p");
	ck_assert_uint_eq(m->dev_major, 0xfe);
	ck_assert_uint_eq(m->dev_minor, 0);
	ck_assert_uint_eq(m->inode, 247134);
	ck_assert_str_eq(m->path, "/usr/bin/cat");
	ck_assert_int_eq(m->kind, SMAPS_FILE);
	ck_assert_uint_eq(m->size, 8192);
	ck_assert_uint_eq(m->rss, 8192);
	ck_assert_uint_eq(m->private_clean, 8192);
	ck_assert(m->has_vmflags && !m->vm_locked && smaps_private(m));
	ck_assert_int_eq(find(&s, "[heap]")->kind, SMAPS_HEAP);
	ck_assert_int_eq(find(&s, "[stack]")->kind, SMAPS_STACK);
	ck_assert_int_eq(find(&s, "[vdso]")->kind, SMAPS_OTHER);
	ck_assert_int_eq(find(&s, "[vsyscall]")->kind, SMAPS_OTHER);
	ck_assert_uint_eq(find(&s, "[vsyscall]")->start, 0xffffffffff600000ULL);
	for (size_t i = 0; i < s.n; i++) {
		m = &s.maps[i];
		/* the kernel's own identity: every resident page is in one of four */
		ck_assert_uint_eq(m->rss, m->shared_clean + m->shared_dirty +
				  m->private_clean + m->private_dirty);
		ck_assert_uint_le(m->pss, m->rss);
		ck_assert_uint_eq(m->size, m->end - m->start);
		ck_assert(m->has_vmflags);
		ck_assert_uint_le(smaps_reclaimable(m), m->rss);
		ck_assert_uint_eq(smaps_file_clean(m) + smaps_file_dirty(m),
				  m->kind == SMAPS_FILE ? m->rss - m->anonymous : 0);
		if (!m->path)
			ck_assert_int_eq(m->kind, SMAPS_ANON);
	}
	smaps_free(&s);
	ck_assert_ptr_null(s.maps);
}
END_TEST

START_TEST(test_hostile_names)
{
	struct smaps s = load("smaps_hostile", -1);
	const struct smaps_map *m = find(&s, "/var/tmp/a b\nc (deleted)");

	ck_assert(m->deleted);
	ck_assert(m->vm_locked);
	ck_assert_int_eq(m->kind, SMAPS_FILE);
	ck_assert(!smaps_private(m));
	ck_assert_uint_eq(m->rss, 4 << 20);
	ck_assert_uint_eq(smaps_locked(m), 4 << 20);
	/* mlocked page cache is clean but not reclaimable */
	ck_assert_uint_eq(smaps_file_clean(m), 4 << 20);
	ck_assert_uint_eq(smaps_reclaimable(m), 0);
	smaps_free(&s);
}
END_TEST

START_TEST(test_memfd)
{
	struct smaps s = load("smaps_memfd", -1);
	const struct smaps_map *m = find(&s, "/memfd:explain shared");

	ck_assert(m->deleted);
	ck_assert_int_eq(m->kind, SMAPS_SHMEM);
	ck_assert_uint_eq(m->rss, 4 << 20);
	ck_assert_uint_eq(smaps_reclaimable(m), 0);
	ck_assert_uint_eq(smaps_file_clean(m), 0);
	ck_assert_uint_eq(smaps_private_anon(m), 0);
	smaps_free(&s);
}
END_TEST

START_TEST(test_old_and_unknown_keys)
{
	struct smaps a = load("smaps_self", 38), b = load("smaps_old", 38);
	struct smaps c = load("smaps_unknown_keys", 38);

	for (size_t i = 0; i < a.n; i++) {
		ck_assert_uint_eq(a.maps[i].rss, b.maps[i].rss);
		ck_assert_uint_eq(a.maps[i].pss, b.maps[i].pss);
		ck_assert_uint_eq(b.maps[i].pss_dirty, 0);
		ck_assert_uint_eq(b.maps[i].ksm, 0);
		ck_assert(!memcmp(&a.maps[i].size, &c.maps[i].size,
				  sizeof(uint64_t) * 20));
		ck_assert_uint_eq(a.maps[i].start, c.maps[i].start);
	}
	smaps_free(&a);
	smaps_free(&b);
	smaps_free(&c);
}
END_TEST

START_TEST(test_truncated)
{
	struct smaps s = load("smaps_truncated", 3);

	ck_assert(s.maps[0].has_vmflags);
	ck_assert(s.maps[1].has_vmflags);
	ck_assert(!s.maps[2].has_vmflags);
	smaps_free(&s);
}
END_TEST

/* @text into an unlinked file at offset 0 */
static int text_fd(const char *text, size_t len)
{
	int fd = memfd_create("smaps", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/*
 * parse_smaps_fd() reads 128 KiB at a time: 4,000 records with paths of
 * every length from 1 to 97 put lines across each chunk's end, and the
 * records must equal parse_smaps()'s of the same text; the last line may
 * lack its newline; a line longer than a chunk is refused.
 */
START_TEST(test_fd_chunks)
{
	size_t cap = 4 << 20, len = 0;
	char *text = malloc(cap), *big;
	struct smaps a, b;
	int fd;

	ck_assert_ptr_nonnull(text);
	for (int i = 0; i < 4000; i++)
		len += snprintf(text + len, cap - len,
				"%x000-%x000 rw-p 0 08:01 %d /d/%.*s\n"
				"Rss: %d kB\nPrivate_Dirty: %d kB\nVmFlags: rd wr\n",
				i * 2 + 16, i * 2 + 17, i + 1, 1 + i % 97,
				"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				4 * (i % 3), 4 * (i % 3));
	ck_assert_uint_gt(len, 3 * (128 << 10));
	len--;	/* no newline after the last VmFlags */
	text[len] = '\0';
	ck_assert_int_eq(parse_smaps(text, &a), 4000);
	fd = text_fd(text, len);
	ck_assert_int_eq(parse_smaps_fd(fd, &b), 4000);
	close(fd);
	for (size_t i = 0; i < a.n; i++) {
		ck_assert_uint_eq(a.maps[i].start, b.maps[i].start);
		ck_assert_uint_eq(a.maps[i].inode, b.maps[i].inode);
		ck_assert_uint_eq(a.maps[i].rss, b.maps[i].rss);
		ck_assert_uint_eq(a.maps[i].private_dirty, b.maps[i].private_dirty);
		ck_assert_str_eq(a.maps[i].path, b.maps[i].path);
		ck_assert(b.maps[i].has_vmflags);
	}
	ck_assert_uint_eq(b.maps[3999].rss, 0);
	ck_assert_uint_eq(b.maps[3998].rss, 8192);
	smaps_free(&a);
	smaps_free(&b);

	/* a header whose path is longer than a chunk */
	big = malloc(200 << 10);
	ck_assert_ptr_nonnull(big);
	len = snprintf(big, 64, "1000-2000 rw-p 0 08:01 1 /");
	memset(big + len, 'x', (150 << 10));
	len += 150 << 10;
	big[len++] = '\n';
	fd = text_fd(big, len);
	ck_assert_int_eq(parse_smaps_fd(fd, &b), -EINVAL);
	ck_assert_ptr_null(b.maps);
	close(fd);
	free(big);
	free(text);
}
END_TEST

START_TEST(test_garbage)
{
	struct smaps s;

	ck_assert_int_eq(parse_smaps(NULL, &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("", &s), 0);
	ck_assert_int_eq(parse_smaps("Rss: 4 kB\n", &s), -EINVAL);	/* no header */
	ck_assert_int_eq(parse_smaps("hello world\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw-p 0 00:00 0\nRss: x kB\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw-p 0 00:00 0\nRss: 4 MB\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw\"p 0 00:00 0\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw-p 0 00:00 0\n"
				     "Rss: 99999999999999999999 kB\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw-p 0 00:00 0\n"
				     "Rss: 18014398509481984 kB\n", &s), -ERANGE);
	ck_assert_int_eq(parse_smaps("1000-2000rw-p 0 00:00 0\n", &s), -EINVAL);
	ck_assert_int_eq(parse_smaps("1000-2000 rw-p 0 00:00 12x /a\n", &s), -EINVAL);
	/* a minimal valid record; empty lines tolerated */
	ck_assert_int_eq(parse_smaps("\n1000-3000 rw-s 0 00:01 7   /dev/shm/x y\n"
				     "Rss:   8 kB\nShared_Dirty: 8 kB\nLocked: 8 kB\n"
				     "VmFlags: rd wr sh mr mw me ms lo\n", &s), 1);
	ck_assert_str_eq(s.maps[0].path, "/dev/shm/x y");
	ck_assert_int_eq(s.maps[0].kind, SMAPS_SHMEM);
	ck_assert(s.maps[0].vm_locked);
	ck_assert_uint_eq(smaps_shared(&s.maps[0]), 8192);
	smaps_free(&s);
}
END_TEST

/* derived figures on a synthetic private file mapping with CoW copies */
START_TEST(test_derived)
{
	struct smaps s;
	const struct smaps_map *m;

	ck_assert_int_eq(parse_smaps("400000-500000 rw-p 0 08:01 12 /data/x\n"
				     "Rss: 40 kB\nShared_Clean: 8 kB\nPrivate_Clean: 16 kB\n"
				     "Private_Dirty: 16 kB\nAnonymous: 12 kB\nLazyFree: 0 kB\n"
				     "VmFlags: rd wr mr mw me\n"
				     "600000-700000 rw-p 0 00:00 0 \n"
				     "Rss: 20 kB\nPrivate_Dirty: 20 kB\nAnonymous: 20 kB\n"
				     "LazyFree: 8 kB\nVmFlags: rd wr mr mw me ac\n"
				     "800000-900000 rw-s 0 00:05 3 /dev/fb0\n"
				     "Rss: 0 kB\nVmFlags: rd wr sh mr mw me io pf\n", &s), 3);
	m = &s.maps[0];
	ck_assert_int_eq(m->kind, SMAPS_FILE);
	ck_assert_uint_eq(smaps_uss(m), 32 << 10);
	ck_assert_uint_eq(smaps_private_anon(m), 12 << 10);	/* the CoW copies */
	ck_assert_uint_eq(smaps_file_clean(m), 24 << 10);
	ck_assert_uint_eq(smaps_file_dirty(m), 4 << 10);
	ck_assert_uint_eq(smaps_reclaimable(m), 24 << 10);
	m = &s.maps[1];
	ck_assert_ptr_null(m->path);
	ck_assert_int_eq(m->kind, SMAPS_ANON);
	ck_assert_uint_eq(smaps_private_anon(m), 20 << 10);
	ck_assert_uint_eq(smaps_reclaimable(m), 8 << 10);	/* LazyFree */
	ck_assert_int_eq(s.maps[2].kind, SMAPS_DEVICE);
	ck_assert(s.maps[2].vm_io);
	ck_assert_str_eq(smaps_kind_name(SMAPS_HEAP), "heap");
	smaps_free(&s);
}
END_TEST

Suite *smaps_suite(void)
{
	Suite *s = suite_create("smaps");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_self);
	tcase_add_test(tc, test_hostile_names);
	tcase_add_test(tc, test_memfd);
	tcase_add_test(tc, test_old_and_unknown_keys);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_fd_chunks);
	tcase_add_test(tc, test_derived);
	suite_add_tcase(s, tc);
	return s;
}
