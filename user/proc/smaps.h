/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * smaps.h - parser of /proc/PID/smaps (fs/proc/task_mmu.c show_smap()): one
 * record per mapping, every size in bytes, plus the figures `memacct
 * explain` derives from them (USS, reclaimable, file clean/dirty, ...).
 * parse_smaps() takes the file's text, so it is unit-tested on captured
 * files; read_smaps() reads the live file. Errors are negative errno.
 */
#ifndef MEMACCT_SMAPS_H
#define MEMACCT_SMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum smaps_kind {
	SMAPS_ANON,	/* private or [anon:NAME] anonymous memory */
	SMAPS_FILE,	/* a file on a disk filesystem */
	SMAPS_SHMEM,	/* tmpfs, /dev/shm, memfd, SysV shm, shared anonymous */
	SMAPS_HEAP,	/* [heap] */
	SMAPS_STACK,	/* [stack] */
	SMAPS_DEVICE,	/* /dev/... other than /dev/zero and /dev/shm */
	SMAPS_OTHER,	/* [vdso], [vvar], [vsyscall], ... */
	SMAPS_KIND_NR,
};

struct smaps_map {
	uint64_t start, end, offset, inode;
	unsigned int dev_major, dev_minor;
	char perms[5];
	char *path;		/* NULL when anonymous; "\012" decoded, " (deleted)" cut */
	bool deleted;		/* the kernel appended " (deleted)" */
	bool vm_locked;		/* VmFlags "lo": mlocked VMA */
	bool vm_io;		/* VmFlags "io" or "pf": device memory */
	bool has_vmflags;	/* the record was complete */
	enum smaps_kind kind;
	uint64_t size, rss, pss, pss_dirty, shared_clean, shared_dirty;
	uint64_t private_clean, private_dirty, referenced, anonymous, ksm;
	uint64_t lazyfree, anon_huge, shmem_pmd, file_pmd;
	uint64_t shared_hugetlb, private_hugetlb, swap, swap_pss, locked;
};

struct smaps {
	struct smaps_map *maps;
	size_t n, cap;
};

/*
 * parse_smaps() - every mapping of a smaps text into @s (zeroed first; free
 * with smaps_free()). Unknown keys are skipped and keys an older kernel lacks
 * stay 0. A record cut short (the process exited mid-read) is kept with
 * has_vmflags false. Returns the number of mappings or -EINVAL (a line that
 * is neither a header nor "Key: value"), -ENOMEM.
 */
int parse_smaps(const char *text, struct smaps *s);
/*
 * parse_smaps_fd() - the same on an open smaps file, read and parsed 128 KiB
 * at a time (a 10,000-mapping text is 7 MiB). Also -errno of read(), and
 * -EINVAL for a line longer than 128 KiB. The fd stays open.
 */
int parse_smaps_fd(int fd, struct smaps *s);
void smaps_free(struct smaps *s);

/*
 * read_smaps() - parse_smaps() of /proc/PID/smaps. -ENOENT/-ESRCH when the
 * process does not exist or exited while being read (its mm is gone: the
 * file reads short or empty), -EACCES/-EPERM without ptrace access.
 */
int read_smaps(pid_t pid, struct smaps *s);

/* smaps_kind_name() - "anon", "file", "shmem", "heap", "stack", "device", "other" */
const char *smaps_kind_name(enum smaps_kind k);

/* Derived figures of one mapping (bytes). */
static inline bool smaps_private(const struct smaps_map *m)
{
	return m->perms[3] != 's';
}
/* USS part: pages mapped by this process only */
static inline uint64_t smaps_uss(const struct smaps_map *m)
{
	return m->private_clean + m->private_dirty + m->private_hugetlb;
}
/* pages mapped by other processes too */
static inline uint64_t smaps_shared(const struct smaps_map *m)
{
	return m->shared_clean + m->shared_dirty + m->shared_hugetlb;
}
/* mlocked: all resident pages of a VM_LOCKED mapping */
static inline uint64_t smaps_locked(const struct smaps_map *m)
{
	return m->vm_locked ? m->rss : m->locked;
}
uint64_t smaps_file_clean(const struct smaps_map *m);	/* clean page-cache pages */
uint64_t smaps_file_dirty(const struct smaps_map *m);	/* dirty page-cache pages */
uint64_t smaps_private_anon(const struct smaps_map *m);	/* anon pages of this process only */
/* clean unlocked page-cache pages + LazyFree (MADV_FREE'd anon) */
uint64_t smaps_reclaimable(const struct smaps_map *m);

/*
 * parse_maps_devino() - the device (makedev(major, minor)) and inode of a
 * /proc/PID/maps line (fs/proc/task_mmu.c show_vma_header_prefix(), the
 * header line of smaps too), 0 when the line maps a file (inode not 0),
 * -EINVAL otherwise.
 */
int parse_maps_devino(const char *line, uint64_t *dev, uint64_t *ino);
/*
 * parse_maps_file() - the same, and the mapping's path (malloc'd, the
 * caller frees it; NULL when the line has none) into *@path when @path is
 * not NULL. -ENOMEM too.
 */
int parse_maps_file(const char *line, uint64_t *dev, uint64_t *ino, char **path);

#endif
