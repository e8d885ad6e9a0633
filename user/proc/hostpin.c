// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* hostpin.c - the host's FOLL_PIN pages and memory budget, per NUMA node,
 * and whether its GPU shares its RAM (hostpin.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "hostpin.h"
#include "numa.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* The value after @key (a whole word at a line start, after a nodeN/meminfo
 * "Node N " prefix) in @text. */
static int key_u64(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, "Node ", 5)) {
			const char *q = p + 5;

			while (*q >= '0' && *q <= '9')
				q++;
			if (*q == ' ')
				p = q + 1;
		}
		if (!strncmp(p, key, n) && (p[n] == ' ' || p[n] == ':' || p[n] == '\t')) {
			char *end;

			p += n;
			while (*p == ' ' || *p == ':' || *p == '\t')
				p++;
			errno = 0;
			*v = strtoull(p, &end, 10);
			if (errno || end == p)
				return -EINVAL;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int parse_foll_pin(const char *text, uint64_t *acquired, uint64_t *released)
{
	if (key_u64(text, "nr_foll_pin_acquired", acquired) ||
	    key_u64(text, "nr_foll_pin_released", released))
		return -ENOENT;
	return 0;
}

int parse_mem_total(const char *text, uint64_t *bytes)
{
	uint64_t kb;

	if (key_u64(text, "MemTotal", &kb))
		return -ENOENT;
	*bytes = kb * 1024;
	return 0;
}

static const char *const hm_names[HM_NR] = {
	[HM_MEM_TOTAL] = "MemTotal", [HM_MEM_FREE] = "MemFree",
	[HM_MEM_AVAILABLE] = "MemAvailable", [HM_ACTIVE] = "Active",
	[HM_INACTIVE] = "Inactive", [HM_ACTIVE_FILE] = "Active(file)",
	[HM_INACTIVE_FILE] = "Inactive(file)", [HM_UNEVICTABLE] = "Unevictable",
	[HM_MLOCKED] = "Mlocked", [HM_DIRTY] = "Dirty", [HM_WRITEBACK] = "Writeback",
	[HM_FILE_PAGES] = "FilePages", [HM_CACHED] = "Cached", [HM_BUFFERS] = "Buffers",
	[HM_SHMEM] = "Shmem", [HM_SWAP_CACHED] = "SwapCached", [HM_SLAB] = "Slab",
	[HM_SRECLAIMABLE] = "SReclaimable", [HM_KRECLAIMABLE] = "KReclaimable",
	[HM_KERNEL_STACK] = "KernelStack", [HM_PAGE_TABLES] = "PageTables",
	[HM_SEC_PAGE_TABLES] = "SecPageTables", [HM_BOUNCE] = "Bounce",
	[HM_WRITEBACK_TMP] = "WritebackTmp", [HM_VMALLOC_USED] = "VmallocUsed",
	[HM_PERCPU] = "Percpu", [HM_ZSWAP] = "Zswap", [HM_UNACCEPTED] = "Unaccepted",
	[HM_HUGETLB] = "Hugetlb", [HM_HP_TOTAL] = "HugePages_Total",
	[HM_HP_RSVD] = "HugePages_Rsvd", [HM_HP_SIZE] = "Hugepagesize",
	[HM_SWAP_TOTAL] = "SwapTotal", [HM_SWAP_FREE] = "SwapFree",
	[HM_ANON_PAGES] = "AnonPages",
};

int parse_meminfo(const char *text, struct hm_fields *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < HM_NR; i++)
		if (!key_u64(text, hm_names[i], &f->v[i]))
			f->have |= 1ULL << i;
	return f->have & 1ULL << HM_MEM_TOTAL ? 0 : -ENOENT;
}

static bool has(const struct hm_fields *f, enum hm_field i)
{
	return f->have & 1ULL << i;
}

/* a - b, 0 when b is larger */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

int hostmem_unowned(const struct hm_fields *f, uint64_t *bytes)
{
	/* needed: without one of these the rest would count it as unowned */
	static const enum hm_field need[] = {
		HM_MEM_TOTAL, HM_MEM_FREE, HM_ACTIVE, HM_INACTIVE, HM_UNEVICTABLE,
		HM_SLAB, HM_KERNEL_STACK, HM_PAGE_TABLES, HM_PERCPU, HM_VMALLOC_USED,
	};
	/* subtracted where the kernel has them (each newer than the above) */
	static const enum hm_field opt[] = {
		HM_SEC_PAGE_TABLES, HM_BOUNCE, HM_WRITEBACK_TMP, HM_ZSWAP, HM_UNACCEPTED,
	};
	const uint64_t *v = f->v;
	uint64_t kb, hp;

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has(f, need[i]))
			return -ENOENT;
	kb = sub0(v[HM_MEM_TOTAL], v[HM_MEM_FREE]);
	kb = sub0(kb, v[HM_ACTIVE] + v[HM_INACTIVE] + v[HM_UNEVICTABLE]);
	kb = sub0(kb, v[HM_SLAB]);
	if (has(f, HM_KRECLAIMABLE) && has(f, HM_SRECLAIMABLE))
		kb = sub0(kb, sub0(v[HM_KRECLAIMABLE], v[HM_SRECLAIMABLE]));
	kb = sub0(kb, v[HM_PAGE_TABLES] + v[HM_PERCPU] + v[HM_VMALLOC_USED]);
	kb = sub0(kb, sub0(v[HM_KERNEL_STACK], v[HM_VMALLOC_USED]));
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (has(f, opt[i]))
			kb = sub0(kb, v[opt[i]]);
	if (has(f, HM_HUGETLB))
		hp = v[HM_HUGETLB];
	else if (has(f, HM_HP_TOTAL) && has(f, HM_HP_SIZE))
		hp = v[HM_HP_TOTAL] * v[HM_HP_SIZE];
	else
		hp = 0;	/* no hugetlb in this kernel */
	*bytes = sub0(kb, hp) * 1024;
	return 0;
}

int parse_zoneinfo_pcp(const char *text, uint64_t *per_node, int max, uint64_t *total)
{
	const char *p = text;
	long node = -1;
	bool any = false;

	memset(per_node, 0, sizeof(*per_node) * max);
	*total = 0;
	while (p && *p) {
		const char *q = p;
		char *end;

		while (*q == ' ' || *q == '\t')
			q++;
		if (!strncmp(q, "Node ", 5)) {
			errno = 0;
			node = strtol(q + 5, &end, 10);
			if (errno || end == q + 5 || *end != ',')
				node = -1;
			else
				any = true;
		} else if (!strncmp(q, "count:", 6) && node >= 0) {
			uint64_t v;

			errno = 0;
			v = strtoull(q + 6, &end, 10);
			if (!errno && end != q + 6) {
				*total += v;
				if (node < max)
					per_node[node] += v;
			}
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return any ? 0 : -ENOENT;
}

void hostmem_from_fields(struct hostmem *m, const struct hm_fields *f, uint64_t hp_kb,
			 bool host)
{
	const uint64_t *v = f->v;

	memset(m, 0, sizeof(*m));
	m->meminfo = true;
	m->mem_free = v[HM_MEM_FREE] * 1024;
	m->avail_known = host && has(f, HM_MEM_AVAILABLE);
	m->mem_available = v[HM_MEM_AVAILABLE] * 1024;
	m->page_cache = (v[HM_ACTIVE_FILE] + v[HM_INACTIVE_FILE]) * 1024;
	m->dirty = v[HM_DIRTY] * 1024;
	m->writeback = v[HM_WRITEBACK] * 1024;
	m->reclaimable = sub0(m->page_cache, m->dirty + m->writeback);
	m->file_pages = (host ? v[HM_CACHED] + v[HM_BUFFERS] + v[HM_SWAP_CACHED] :
			 v[HM_FILE_PAGES]) * 1024;
	m->shmem = v[HM_SHMEM] * 1024;
	m->anon_known = host && has(f, HM_ANON_PAGES);
	m->anon = v[HM_ANON_PAGES] * 1024;
	m->unevictable = v[HM_UNEVICTABLE] * 1024;
	m->mlocked = v[HM_MLOCKED] * 1024;
	if (has(f, HM_HP_SIZE))
		hp_kb = v[HM_HP_SIZE];
	if (host && has(f, HM_HUGETLB)) {
		m->hugetlb_known = true;
		m->hugetlb = v[HM_HUGETLB] * 1024;
	} else if (has(f, HM_HP_TOTAL) && hp_kb) {
		m->hugetlb_known = true;
		m->hugetlb = v[HM_HP_TOTAL] * hp_kb * 1024;
	}
	m->rsvd_known = host && has(f, HM_HP_RSVD) && hp_kb;
	m->hugetlb_reserved = v[HM_HP_RSVD] * hp_kb * 1024;
	m->unowned_known = host && !hostmem_unowned(f, &m->unowned);
}

/* @path into @buf, NUL-terminated: 0, or negative errno; -EFBIG when it
 * does not fit (never cut: the figures of its end would be missing) */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;
	char more;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	if (got + 1 == len)
		n = read(fd, &more, 1);
	close(fd);
	buf[got] = '\0';
	return n > 0 ? -EFBIG : 0;
}

/* models of NVIDIA GPUs that have no memory of their own */
static const char *const uma_models[] = { "GB10", "Tegra", "Orin", "Thor", "Xavier" };

static bool uma_gpu_info(const char *root, char *src, size_t len)
{
	static char buf[4096];
	char path[512];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus", root);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		const char *m, *e;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s/information", root,
			 de->d_name);
		if (read_text(path, buf, sizeof(buf)) || !(m = strstr(buf, "Model:")))
			continue;
		m += 6;
		while (*m == ' ' || *m == '\t')
			m++;
		e = strchr(m, '\n');
		for (size_t i = 0; i < sizeof(uma_models) / sizeof(uma_models[0]); i++) {
			const char *hit = strstr(m, uma_models[i]);

			if (hit && (!e || hit < e)) {
				int ml = e ? (int)(e - m) : (int)strlen(m);

				snprintf(src, len, "/proc/driver/nvidia/gpus/%.40s/information: "
					 "Model %.*s", de->d_name, ml > 60 ? 60 : ml, m);
				found = true;
				break;
			}
		}
	}
	closedir(d);
	return found;
}

bool hostmem_uma(const char *root, const char *force, char *src, size_t len)
{
	static char buf[4096];
	char path[512];
	int fd;
	ssize_t n;

	src[0] = '\0';
	if (force && *force) {
		if (!strcmp(force, "1") || !strcasecmp(force, "on") || !strcasecmp(force, "yes")) {
			snprintf(src, len, "MEMACCT_UMA=%s", force);
			return true;
		}
		if (!strcmp(force, "0") || !strcasecmp(force, "off") || !strcasecmp(force, "no")) {
			snprintf(src, len, "MEMACCT_UMA=%s", force);
			return false;
		}
	}
	if (uma_gpu_info(root, src, len))
		return true;
	/* compatible is NUL-separated strings: read it raw */
	snprintf(path, sizeof(path), "%s/proc/device-tree/compatible", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1) {
		buf[n] = '\0';
		if (!strncmp(buf + i, "nvidia,tegra", 12)) {
			snprintf(src, len, "/proc/device-tree/compatible: %.60s", buf + i);
			return true;
		}
	}
	return false;
}

/* acquired - released in bytes; a counter that went backwards reads 0. */
static uint64_t outstanding(uint64_t acq, uint64_t rel, long page)
{
	return acq > rel ? (acq - rel) * (uint64_t)page : 0;
}

/*
 * Node @id's figures from /sys/devices/system/node/@name: its FOLL_PIN
 * pages, meminfo (with its share @pcp of the per-CPU free lists, when
 * @pcp_known) and whether it has CPUs. @buf: scratch of @len bytes.
 */
static void hostpin_node_read(struct hostpin_node *n, const char *name, long id, char *buf,
			      size_t len, long page, uint64_t hp_kb, const uint64_t *pcp,
			      bool pcp_known)
{
	struct hm_fields f;
	uint64_t acq, rel;
	char path[300];

	snprintf(path, sizeof(path), "/sys/devices/system/node/%s/vmstat", name);
	if (!read_text(path, buf, len) && !parse_foll_pin(buf, &acq, &rel)) {
		n->known = true;
		n->foll_pinned = outstanding(acq, rel, page);
	}
	snprintf(path, sizeof(path), "/sys/devices/system/node/%s/meminfo", name);
	if (!read_text(path, buf, len) && !parse_meminfo(buf, &f)) {
		n->mem_total = f.v[HM_MEM_TOTAL] * 1024;
		hostmem_from_fields(&n->mem, &f, hp_kb, false);
		n->mem.pcp_known = pcp_known && id < HOSTPIN_MAX_NODES;
		n->mem.pcp_free = n->mem.pcp_known ? pcp[id] * page : 0;
	}
	snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist", name);
	if (!read_text(path, buf, len)) {
		static bool cpus[4096];
		int c;

		memset(cpus, 0, sizeof(cpus));
		c = parse_cpulist(buf, cpus, 4096);
		n->cpu_known = c >= 0 || c == -ERANGE;	/* -ERANGE: CPU 4096+ */
		n->cpuless = c == 0;
	}
}

/* h->nodes by node number: readdir order is not numeric. */
static void hostpin_sort_nodes(struct hostpin *h)
{
	for (int i = 1; i < h->nnodes; i++)
		for (int j = i; j > 0 && h->nodes[j - 1].node > h->nodes[j].node; j--) {
			struct hostpin_node t = h->nodes[j];

			h->nodes[j] = h->nodes[j - 1];
			h->nodes[j - 1] = t;
		}
}

int hostpin_foll_counters(uint64_t *acquired, uint64_t *released)
{
	char buf[64 << 10];	/* /proc/vmstat: ~6 KiB on 6.18 */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int err = read_text("/proc/vmstat", buf, sizeof(buf));

	if (err)
		return err;
	if (parse_foll_pin(buf, acquired, released))
		return -ENOENT;
	*acquired *= page;
	*released *= page;
	return 0;
}

int hostpin_read(struct hostpin *h, bool refresh)
{
	/* zoneinfo: ~100 bytes per CPU and zone; untouched pages cost nothing */
	static char buf[16 << 20];
	long page = sysconf(_SC_PAGESIZE);
	static uint64_t pcp[HOSTPIN_MAX_NODES];
	struct hm_fields f;
	uint64_t acq, rel, hp_kb, pcp_total;
	bool pcp_known = false;
	struct dirent *de;
	DIR *d;
	int err;

	memset(h, 0, sizeof(*h));
	if (refresh) {
		int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			h->refreshed = write(fd, "1\n", 2) == 2;
			close(fd);
		}
	}
	err = read_text("/proc/meminfo", buf, sizeof(buf));
	if (err)
		return err;
	if (parse_meminfo(buf, &f))
		return -EINVAL;
	h->mem_total = f.v[HM_MEM_TOTAL] * 1024;
	hostmem_from_fields(&h->mem, &f, 0, true);
	hp_kb = f.have & 1ULL << HM_HP_SIZE ? f.v[HM_HP_SIZE] : 0;
	if (!read_text("/proc/zoneinfo", buf, sizeof(buf)) &&
	    !parse_zoneinfo_pcp(buf, pcp, HOSTPIN_MAX_NODES, &pcp_total)) {
		pcp_known = true;
		h->mem.pcp_known = true;
		h->mem.pcp_free = pcp_total * page;
		/* free pages all the same: not unowned */
		h->mem.unowned = h->mem.unowned > h->mem.pcp_free ?
				 h->mem.unowned - h->mem.pcp_free : 0;
	}
	h->uma = hostmem_uma("", getenv("MEMACCT_UMA"), h->uma_source, sizeof(h->uma_source));
	err = read_text("/proc/vmstat", buf, sizeof(buf));
	if (err)
		return err;
	if (!parse_foll_pin(buf, &acq, &rel)) {
		h->known = true;
		h->foll_pinned = outstanding(acq, rel, page);
		h->foll_acquired = acq * (uint64_t)page;
		h->foll_released = rel * (uint64_t)page;
	}
	d = opendir("/sys/devices/system/node");
	if (!d)
		return 0;	/* no NUMA sysfs: host figures only */
	while ((de = readdir(d)) && h->nnodes < HOSTPIN_MAX_NODES) {
		struct hostpin_node *n = &h->nodes[h->nnodes];
		char *end;
		long id;

		if (strncmp(de->d_name, "node", 4))
			continue;
		errno = 0;
		id = strtol(de->d_name + 4, &end, 10);
		if (errno || end == de->d_name + 4 || *end || id < 0)
			continue;
		memset(n, 0, sizeof(*n));
		n->node = id;
		hostpin_node_read(n, de->d_name, id, buf, sizeof(buf), page, hp_kb, pcp, pcp_known);
		h->nnodes++;
	}
	closedir(d);
	hostpin_sort_nodes(h);
	return 0;
}
