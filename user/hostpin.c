// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* hostpin.c - the host's FOLL_PIN pages and MemTotal (hostpin.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hostpin.h"
#include "metrics.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* The value after @key (a whole word at a line start) in @text. */
static int key_u64(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
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
	const char *p = strstr(text, "MemTotal:");
	uint64_t kb;

	if (!p || key_u64(p, "MemTotal", &kb))
		return -ENOENT;
	*bytes = kb * 1024;
	return 0;
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return 0;
}

/* acquired - released in bytes; a counter that went backwards reads 0. */
static uint64_t outstanding(uint64_t acq, uint64_t rel, long page)
{
	return acq > rel ? (acq - rel) * (uint64_t)page : 0;
}

int hostpin_read(struct hostpin *h, bool refresh)
{
	static char buf[1 << 16];
	long page = sysconf(_SC_PAGESIZE);
	uint64_t acq, rel;
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
	if (parse_mem_total(buf, &h->mem_total))
		return -EINVAL;
	err = read_text("/proc/vmstat", buf, sizeof(buf));
	if (err)
		return err;
	if (!parse_foll_pin(buf, &acq, &rel)) {
		h->known = true;
		h->foll_pinned = outstanding(acq, rel, page);
	}
	d = opendir("/sys/devices/system/node");
	if (!d)
		return 0;	/* no NUMA sysfs: host figures only */
	while ((de = readdir(d)) && h->nnodes < HOSTPIN_MAX_NODES) {
		struct hostpin_node *n = &h->nodes[h->nnodes];
		char path[300], *end;
		long id;

		if (strncmp(de->d_name, "node", 4))
			continue;
		errno = 0;
		id = strtol(de->d_name + 4, &end, 10);
		if (errno || end == de->d_name + 4 || *end || id < 0)
			continue;
		memset(n, 0, sizeof(*n));
		n->node = id;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/vmstat", de->d_name);
		if (!read_text(path, buf, sizeof(buf)) && !parse_foll_pin(buf, &acq, &rel)) {
			n->known = true;
			n->foll_pinned = outstanding(acq, rel, page);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/meminfo", de->d_name);
		if (!read_text(path, buf, sizeof(buf)))
			parse_mem_total(buf, &n->mem_total);
		h->nnodes++;
	}
	closedir(d);
	/* readdir order is not numeric */
	for (int i = 1; i < h->nnodes; i++)
		for (int j = i; j > 0 && h->nodes[j - 1].node > h->nodes[j].node; j--) {
			struct hostpin_node t = h->nodes[j];

			h->nodes[j] = h->nodes[j - 1];
			h->nodes[j - 1] = t;
		}
	return 0;
}

void hostpin_metrics(struct mbuf *b, const struct hostpin *h, bool attributed_known,
		     uint64_t attributed)
{
	struct mlabel l[1];
	char node[16];

	metrics_family(b, "memacct_host_foll_pin_counters", MT_GAUGE, NULL,
		       "1 when the kernel counts FOLL_PIN pages (nr_foll_pin_* in /proc/vmstat)");
	metrics_sample_u64(b, NULL, 0, h->known);
	metrics_family(b, "memacct_host_mem_total_bytes", MT_GAUGE, "bytes",
		       "MemTotal of the host and of each NUMA node");
	metrics_sample_u64(b, NULL, 0, h->mem_total);
	for (int i = 0; i < h->nnodes; i++) {
		snprintf(node, sizeof(node), "%d", h->nodes[i].node);
		l[0] = (struct mlabel){ "node", node };
		metrics_sample_u64(b, l, 1, h->nodes[i].mem_total);
	}
	if (!h->known)
		return;	/* unknown on this kernel: no samples, never 0 */
	metrics_family(b, "memacct_host_foll_pinned_bytes", MT_GAUGE, "bytes",
		       "Pages pinned by pin_user_pages (FOLL_PIN) now: nr_foll_pin_acquired - "
		       "nr_foll_pin_released, host and per NUMA node");
	metrics_sample_u64(b, NULL, 0, h->foll_pinned);
	for (int i = 0; i < h->nnodes; i++) {
		if (!h->nodes[i].known)
			continue;
		snprintf(node, sizeof(node), "%d", h->nodes[i].node);
		l[0] = (struct mlabel){ "node", node };
		metrics_sample_u64(b, l, 1, h->nodes[i].foll_pinned);
	}
	if (!attributed_known)
		return;
	metrics_family(b, "memacct_host_dma_pinned_unattributed_bytes", MT_GAUGE, "bytes",
		       "FOLL_PIN bytes not attributed to a live process (dma_pinned or pinned_vm): "
		       "exited owners, the kernel, paths memacct does not see");
	metrics_sample_u64(b, NULL, 0, h->foll_pinned > attributed ? h->foll_pinned - attributed : 0);
}
