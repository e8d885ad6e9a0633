// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * page_cache.bpf.c - page cache by file and memory cgroup (issue 43): the
 * pages added to and removed from each file's page cache, keyed by the
 * memcg each page is charged to (struct memacct_page_cache_key). Filled
 * from filemap:mm_filemap_add_to_page_cache (mm/filemap.c
 * __filemap_add_folio(), after mem_cgroup_charge()) and
 * mm_filemap_delete_from_page_cache (__filemap_remove_folio() and
 * delete_from_page_cache_batch(), before the page leaves the mapping and
 * its memcg). Where they pass a struct folio (the page cache's folio
 * conversion; the loader reads the tracepoint's prototype) the programs are
 * tp_btf and walk the folio, its mapping, inode and superblock by direct
 * (BTF) loads; where they pass a struct page, the *_old raw tracepoints
 * read them through bpf_probe_read_kernel(). tmpfs/shmem is left out:
 * shmem_add_to_page_cache() has no tracepoint while its removals have one
 * (user/proc/shmem_orphans.c reads those files instead); hugetlbfs too (not
 * in memory.stat's file).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memacct.h"
#include "core_fixes.bpf.h"
#include "records.bpf.h"

#define TMPFS_MAGIC	0x01021994
#define HUGETLBFS_MAGIC	0x958458f6
#define BDEVFS_MAGIC	0x62646576	/* a block device's own page cache: metadata */

/* the files' records, 16,384 (docs/metrics.md "Capacities"); the daemon
 * prunes them (user/model/page_cache.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct memacct_page_cache_key);
	__type(value, struct memacct_page_cache_file);
} page_cache SEC(".maps");

/* pages removed whose file has no record (cached before memacct started,
 * or its record pruned or never made): in no file's removed_pages */
__u64 page_cache_untracked_removes;
/* pages added whose record could not be made (MEMACCT_DROP_PAGE_CACHE_FILES) */
__u64 page_cache_unrecorded_adds;
/* what a page-cache folio's memcg_data points to on this kernel, learned at
 * the first that checks out (page_memcg_of()): 0 not yet, else MEMCG_IS_* */
__u64 page_cache_memcg_mode;	/* a u64: .bss stays a multiple of 8 (bss_read()) */
#define MEMCG_IS_MEMCG	1
#define MEMCG_IS_OBJCG	2

/* the memcg pointer of 5.10 (page->mem_cgroup): it became memcg_data in
 * v5.11, commit bcfe06bf2622 ("mm: memcontrol: Use helpers to read page's
 * memcg data") */
struct page___510 {
	struct mem_cgroup *mem_cgroup;
} __attribute__((preserve_access_index));

/* the order of a large folio before v6.6 (folio_pages_of()): struct folio's
 * _folio_order (v6.1..v6.5) and, before, the first tail page's
 * compound_order */
struct folio___61 {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

struct page___60 {
	unsigned char compound_order;
} __attribute__((preserve_access_index));

/* a dentry's place on its inode's alias list: d_u.d_alias from v3.18 to at
 * least v6.18;
 * Debian's 7.2 has no d_u.d_alias (the matrix's sid guest), read as a member
 * of its own there when it is one, else no name */
struct dentry___7 {
	struct hlist_node d_alias;
} __attribute__((preserve_access_index));

/* Whether @memcg is one: its cgroup's memory css is its own css. */
static __always_inline bool is_memcg(struct mem_cgroup *memcg)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	struct cgroup *cg = BPF_CORE_READ(memcg, css.cgroup);

	if (!cg)
		return false;
	bpf_core_read(&css, sizeof(css), &cg->subsys[id]);
	return css == (void *)memcg + bpf_core_field_offset(struct mem_cgroup, css);
}

/*
 * The memcg @page is charged to; NULL when it is not charged or not known.
 * memcg_data points to the memcg, or to an obj_cgroup (MEMCG_DATA_KMEM;
 * and on kernels that charge LRU folios through an objcg, so that a removed
 * memcg's pages go to its parent without a walk: Debian's 7.2, whose
 * memcg_data did not read as a memcg) whose memcg is then the one. Which of
 * the two is checked, never assumed, until one reading checks out; the
 * kernel's way is then known (page_cache_memcg_mode) and not checked again.
 */
static __always_inline struct mem_cgroup *page_memcg_of(struct page *page, bool btf)
{
	struct folio *folio = (void *)page;
	struct mem_cgroup *memcg;
	unsigned long data, kmem = 0;
	__u64 mode = page_cache_memcg_mode;

	if (!bpf_core_field_exists(struct page, memcg_data))
		return bpf_core_field_exists(struct page___510, mem_cgroup) ?
		       BPF_CORE_READ((struct page___510 *)page, mem_cgroup) : NULL;
	if (btf)
		data = bpf_core_field_exists(struct folio, memcg_data) ? folio->memcg_data : 0;
	else
		data = BPF_CORE_READ(page, memcg_data);
	if (bpf_core_enum_value_exists(enum page_memcg_data_flags, MEMCG_DATA_KMEM))
		kmem = data & bpf_core_enum_value(enum page_memcg_data_flags, MEMCG_DATA_KMEM);
	data &= ~7UL;
	if (!data)
		return NULL;
	if (!kmem && mode == MEMCG_IS_MEMCG)
		return (struct mem_cgroup *)data;
	if (!kmem && !mode && is_memcg((struct mem_cgroup *)data)) {
		page_cache_memcg_mode = MEMCG_IS_MEMCG;
		return (struct mem_cgroup *)data;
	}
	if (!bpf_core_field_exists(struct obj_cgroup, memcg))
		return NULL;
	memcg = BPF_CORE_READ((struct obj_cgroup *)data, memcg);
	if (!memcg || kmem || mode == MEMCG_IS_OBJCG)
		return memcg;
	if (!is_memcg(memcg))
		return NULL;
	page_cache_memcg_mode = MEMCG_IS_OBJCG;
	return memcg;
}

/*
 * Base pages in the folio that starts at @page: 1, or 2^order of a large
 * folio (PG_head set). The order is folio->_flags_1's low byte since v6.6
 * (commit ebc1baf5c9b4, "mm: free up a word in the first tail page"),
 * folio->_folio_order in v6.1..v6.5, the first tail page's compound_order
 * before. The flags word leads struct page on every kernel (memdesc_flags_t,
 * a struct of one unsigned long, since v6.18).
 */
static __always_inline __u64 folio_pages_of(struct page *page, bool btf)
{
	unsigned long flags = 0, f1 = 0;
	void *tail = (void *)page + bpf_core_type_size(struct page);
	unsigned char order = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), page);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(struct folio___61, _folio_order)) {
		order = btf ? ((struct folio___61 *)page)->_folio_order :
			      BPF_CORE_READ((struct folio___61 *)page, _folio_order);
	} else if (bpf_core_field_exists(struct folio, _flags_1)) {
		f1 = btf ? ((struct folio *)page)->_flags_1 :
			   BPF_CORE_READ((struct folio *)page, _flags_1);
		order = f1 & 0xff;
	} else if (bpf_core_field_exists(struct page___60, compound_order)) {
		order = BPF_CORE_READ((struct page___60 *)tail, compound_order);
	}
	return 1ULL << (order & 31);
}

/* A dentry's name of @inode (its first alias) into @name; "" when none.
 * Every layout guarded: a kernel whose dentry moved leaves the name out,
 * it never fails the load. */
static __always_inline void inode_name(struct inode *inode, char *name, int len)
{
	struct hlist_node *first;
	const unsigned char *s;
	struct dentry *d;
	__u32 off;

	if (bpf_core_field_exists(struct dentry, d_u.d_alias))
		off = bpf_core_field_offset(struct dentry, d_u.d_alias);
	else if (bpf_core_field_exists(struct dentry___7, d_alias))
		off = bpf_core_field_offset(struct dentry___7, d_alias);
	else
		return;
	first = BPF_CORE_READ(inode, i_dentry.first);
	if (!first)
		return;
	d = (void *)first - off;
	s = BPF_CORE_READ(d, d_name.name);
	if (s)
		bpf_probe_read_kernel_str(name, len, s);
}

/* The file's pages now, kept when the most yet (after an add). */
static __always_inline void note_peak(struct memacct_page_cache_file *v)
{
	__u64 added = v->added_pages, removed = v->removed_pages;

	if (added > removed && added - removed > v->peak_pages)
		v->peak_pages = added - removed;
}

/* An add (@add) or a removal of the page-cache folio at @page; @btf: a
 * folio the program may walk by direct loads (tp_btf). */
static __always_inline int page_cache_event(struct page *page, bool add, bool btf)
{
	struct folio *folio = (void *)page;
	struct memacct_page_cache_key key = {};
	struct memacct_page_cache_file *v, nv;
	struct address_space *mapping;
	struct mem_cgroup *memcg;
	struct super_block *sb;
	struct inode *inode;
	struct cgroup *cg;
	unsigned long magic;
	__u64 pages;
	int level, err;

	if (btf) {	/* a fault in a load reads 0: NULL */
		mapping = folio->mapping;
		inode = mapping->host;
		if (!inode)
			return 0;
		sb = inode->i_sb;
		magic = sb->s_magic;
		key.ino = inode->i_ino;
		key.dev = sb->s_dev;
	} else {
		mapping = BPF_CORE_READ(page, mapping);
		inode = mapping ? BPF_CORE_READ(mapping, host) : NULL;
		if (!inode)
			return 0;
		sb = BPF_CORE_READ(inode, i_sb);
		magic = BPF_CORE_READ(sb, s_magic);
		key.ino = BPF_CORE_READ(inode, i_ino);
		key.dev = BPF_CORE_READ(sb, s_dev);
	}
	if (magic == TMPFS_MAGIC || magic == HUGETLBFS_MAGIC)
		return 0;
	memcg = page_memcg_of(page, btf);
	cg = memcg ? BPF_CORE_READ(memcg, css.cgroup) : NULL;
	if (!cg)
		return 0;
	if (filter_cgid) {
		level = BPF_CORE_READ(cg, level);
		if (level < (int)filter_level || level > 4096 ||
		    cgroup_ancestor_id(cg, filter_level) != filter_cgid)
			return 0;
	}
	key.memcg_id = BPF_CORE_READ(cg, kn, id);
	pages = folio_pages_of(page, btf);
	v = bpf_map_lookup_elem(&page_cache, &key);
	if (v) {
		__sync_fetch_and_add(add ? &v->added_pages : &v->removed_pages, pages);
		if (add)
			note_peak(v);
		return 0;
	}
	if (!add) {
		__sync_fetch_and_add(&page_cache_untracked_removes, pages);
		return 0;
	}
	__builtin_memset(&nv, 0, sizeof(nv));
	nv.added_pages = pages;
	nv.peak_pages = pages;
	nv.first_add_ns = bpf_ktime_get_boot_ns();
	if (magic == BDEVFS_MAGIC)	/* i_ino is the device's dev_t */
		__builtin_memcpy(nv.name, MEMACCT_BDEV_NAME, sizeof(MEMACCT_BDEV_NAME));
	else
		inode_name(inode, nv.name, sizeof(nv.name));
	err = bpf_map_update_elem(&page_cache, &key, &nv, BPF_NOEXIST);
	if (err == -EEXIST && (v = bpf_map_lookup_elem(&page_cache, &key))) {
		__sync_fetch_and_add(&v->added_pages, pages);
		note_peak(v);
	} else if (err) {
		drop(MEMACCT_DROP_PAGE_CACHE_FILES);
		__sync_fetch_and_add(&page_cache_unrecorded_adds, pages);
	}
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(pcache_add, struct folio *folio)
{
	return page_cache_event((struct page *)folio, true, true);
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(pcache_del, struct folio *folio)
{
	return page_cache_event((struct page *)folio, false, true);
}

/* where the tracepoints pass a struct page (5.10 of the matrix): read
 * through helpers. Names within the kernel's 15 characters: the pins are
 * found by them */
SEC("raw_tp/mm_filemap_add_to_page_cache")
int pcache_add_old(struct bpf_raw_tracepoint_args *ctx)
{
	return page_cache_event((struct page *)ctx->args[0], true, false);
}

SEC("raw_tp/mm_filemap_delete_from_page_cache")
int pcache_del_old(struct bpf_raw_tracepoint_args *ctx)
{
	return page_cache_event((struct page *)ctx->args[0], false, false);
}
