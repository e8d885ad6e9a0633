/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * zero_fill: ground truth that the pages of untouched private anonymous
 * memory are zero fills, not copies-on-write, whatever the kernel's policy on
 * the shared zero page.
 *
 * Maps MiB of private anonymous memory (THP disabled on it, so each fault is
 * one 4 KiB page), READS every page, then WRITES every page. Where the kernel
 * maps the shared zero page on a read fault (most kernels), each read maps
 * that one frame and each write allocates a zeroed page; where it does not
 * (mm_forbids_zeropage() on s390, hosts booted with pvm_no_zero_page=1,
 * ...), each read allocates a zeroed page and the write faults no more.
 * Which one happened is read from /proc/self/pagemap after the read and
 * after the write (frame numbers need CAP_SYS_ADMIN):
 *   zero_page_pages   pages mapping one frame shared by several buffer pages
 *                     after the read, each on its own new frame after the write
 *   own_frame_pages   pages on a frame of their own already after the read,
 *                     the same frame after the write
 * Each of them is one zero fill and no copy:
 *   cow_bytes = 0, zero_fill_bytes = (zero_page_pages + own_frame_pages) * PAGE
 * and any page that fits neither fails the workload.
 * zero_fill_bytes counts the buffer only; the loader, libc and stack add
 * zero-filled pages of their own (~80), and the process's truth counts
 * them all from its page tables (process_truth()):
 *   truth process_zero_fill_bytes B      "Anonymous:" outside file mappings
 *   truth process_cow_file_bytes B       "Anonymous:" in private file mappings
 *   kernel cgroup_peak_bytes B           its memory cgroup's memory.peak or
 *                                        max_usage_in_bytes (-1: unread)
 *
 * With --thp the buffer is madvise(MADV_HUGEPAGE)'d and aligned to the THP
 * size (hpage_pmd_size: 2 MiB on x86; what
 * numpy does for every large array) and only written, a fault per huge page
 * where the kernel gives one (do_huge_pmd_anonymous_page(), zeroed by
 * folio_zero_user(), no __GFP_ZERO), a small page where it does not. Every
 * resident page of the buffer is a zero fill. With --read-first it is read
 * before: the huge zero page is mapped, and the write replaces it with a THP
 * (do_huge_zero_wp_pmd(), v6.13) or splits it and zero-fills small pages.
 * The truth is the buffer's Rss and AnonHugePages from its own
 * /proc/self/smaps entry:
 *   kernel anon_huge_bytes B             AnonHugePages of the buffer
 *   truth zero_fill_bytes B              Rss of the buffer
 *   truth cow_bytes 0
 *
 * Usage: zero_fill [MiB=64] | zero_fill --thp [--read-first] [MiB=64]
 * Output (stdout):
 *   kernel RssAnon_after_read_bytes B    RssAnon from /proc/self/status
 *   kernel RssAnon_after_write_bytes B
 *   kernel zero_page_pages N             from pagemap, as above
 *   kernel own_frame_pages N
 *   truth buffer_bytes B
 *   truth cow_bytes 0
 *   truth zero_fill_bytes B
 *   truth pid PID
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "pagemap.h"
#include "vm_status.h"

#include "page.h"

static void die(const char *what)
{
	fprintf(stderr, "zero_fill: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "Key:   N kB" from /proc/self/status, in bytes. */
static long long status_bytes(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("open /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	if (v < 0) {
		fprintf(stderr, "zero_fill: no %s in /proc/self/status\n", key);
		exit(1);
	}
	return v;
}

/* "Key:   N kB" of the smaps entry of the mapping that starts at @start, in bytes. */
static long long smaps_bytes(const void *start, const char *key)
{
	char line[512], head[32];
	size_t klen = strlen(key);
	long long v = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		die("open /proc/self/smaps");
	snprintf(head, sizeof(head), "%lx-", (unsigned long)start);
	while (v < 0 && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, head, strlen(head));	/* a mapping's first line */
		else if (in && !strncmp(line, key, klen) && line[klen] == ':')
			v = strtoll(line + klen + 1, NULL, 10) * 1024;
	}
	fclose(f);
	if (v < 0) {
		fprintf(stderr, "zero_fill: no %s for the buffer in /proc/self/smaps\n", key);
		exit(1);
	}
	return v;
}

/* The PMD size a THP has here: 2 MiB on x86, 32 MiB on arm64 16K pages. */
static unsigned long pmd_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : 2UL << 20;
}

/*
 * The whole process's truth, besides the buffer's: every anonymous page
 * it maps (it never forks and frees no anonymous memory), which are its
 * zero fills (the loader's, libc's, the stack's, the pagemap arrays') and
 * its file CoW copies. Called after stdout's first line: the stdio buffer
 * is then allocated, and nothing touches new memory after the count.
 */
static void process_truth(void)
{
	long long arg = exec_arg_bytes("zero_fill"), peak = cgroup_peak_bytes();
	long long pte = status_bytes("VmPTE"), file_private, other;

	/* last: the reads above touch stack pages of their own (8 KiB) */
	anon_bytes_of_self("zero_fill", &file_private, &other);
	printf("truth process_zero_fill_bytes %lld\n", other);
	printf("truth process_cow_file_bytes %lld\n", file_private);
	printf("kernel exec_arg_bytes %lld\n", arg);
	printf("kernel cgroup_peak_bytes %lld\n", peak);
	printf("kernel vm_pte_bytes %lld\n", pte);
}

/* --thp: first-touch writes of MADV_HUGEPAGE memory (see the header). */
static int thp(unsigned long mib, bool read_first)
{
	unsigned long sum = 0;
	unsigned long huge = pmd_size(), len = mib << 20;
	long long rss, anon_huge;
	volatile char *buf;
	char *map;

	/* 2 MiB-aligned inside a larger mapping, whose rest is unmapped */
	map = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mmap");
	buf = (char *)(((unsigned long)map + huge - 1) & ~(huge - 1));
	if (buf != map && munmap(map, (char *)buf - map))
		die("munmap");
	if (munmap((char *)buf + len, map + huge - (char *)buf))
		die("munmap");
	if (madvise((void *)buf, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	if (read_first)
		for (unsigned long i = 0; i < len; i += PAGE)
			sum += buf[i];
	if (sum)
		die("fresh anonymous memory is not zero");
	for (unsigned long i = 0; i < len; i += PAGE)
		buf[i] = 1;
	rss = smaps_bytes((const void *)buf, "Rss");
	anon_huge = smaps_bytes((const void *)buf, "AnonHugePages");
	printf("kernel anon_huge_bytes %lld\n", anon_huge);
	process_truth();
	printf("truth buffer_bytes %lu\n", len);
	printf("truth cow_bytes 0\n");
	printf("truth zero_fill_bytes %lld\n", rss);
	printf("truth pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	if (rss != (long long)len) {
		fprintf(stderr, "zero_fill: Rss %lld of the %lu-byte buffer after writing it all\n",
			rss, len);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, npages, sum = 0, zero_page = 0, own = 0, shared = 0;
	long long rss_read, rss_write;
	uint64_t *after_read, *after_write, zero_pfn = 0;
	volatile char *buf;
	char *end;

	bool huge = argc > 1 && !strcmp(argv[1], "--thp"), read_first = false;

	if (huge) {
		argc--;
		argv++;
		read_first = argc > 1 && !strcmp(argv[1], "--read-first");
		if (read_first) {
			argc--;
			argv++;
		}
	}
	if (argc > 2) {
		fprintf(stderr, "usage: zero_fill [--thp [--read-first]] [MiB=64]\n");
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		mib = strtoul(argv[1], &end, 10);
		if (errno || *end || mib == 0) {
			fprintf(stderr, "usage: zero_fill [--thp [--read-first]] [MiB=64]\n");
			return 2;
		}
	}
	if (huge)
		return thp(mib, read_first);
	npages = mib * (1024 * 1024 / PAGE);
	after_read = calloc(npages, sizeof(uint64_t));
	after_write = calloc(npages, sizeof(uint64_t));
	if (!after_read || !after_write)
		die("calloc");

	buf = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (madvise((void *)buf, npages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");

	/* maps the zero page, or allocates a zeroed page (no zero page) */
	for (unsigned long i = 0; i < npages; i++)
		sum += buf[i * PAGE];
	if (sum != 0) {
		fprintf(stderr, "zero_fill: fresh anonymous memory is not zero\n");
		return 1;
	}
	rss_read = status_bytes("RssAnon");
	pagemap_frames("zero_fill", buf, npages, after_read);

	for (unsigned long i = 0; i < npages; i++)	/* zero page -> new zeroed page */
		buf[i * PAGE] = 1;
	rss_write = status_bytes("RssAnon");
	pagemap_frames("zero_fill", buf, npages, after_write);

	/* the zero page: a frame that two buffer pages share after the read
	 * (private anon pages never share one otherwise: no KSM here) */
	for (unsigned long i = 1; i < npages && !zero_pfn; i++)
		if (after_read[i] && after_read[i] == after_read[i - 1])
			zero_pfn = after_read[i];
	for (unsigned long i = 0; i < npages; i++) {
		if (!after_read[i] || !after_write[i]) {
			fprintf(stderr, "zero_fill: page %lu has no frame number in pagemap "
				"(not present, or not root)\n", i);
			return 1;
		}
		if (after_read[i] == zero_pfn && after_write[i] != zero_pfn)
			zero_page++;
		else if (after_read[i] != zero_pfn && after_write[i] == after_read[i])
			own++;
		else
			shared++;
	}
	if (shared) {
		fprintf(stderr, "zero_fill: %lu pages neither kept their frame nor left the "
			"zero page\n", shared);
		return 1;
	}

	printf("kernel RssAnon_after_read_bytes %lld\n", rss_read);
	printf("kernel RssAnon_after_write_bytes %lld\n", rss_write);
	printf("kernel zero_page_pages %lu\n", zero_page);
	printf("kernel own_frame_pages %lu\n", own);
	process_truth();
	printf("truth buffer_bytes %lu\n", npages * PAGE);
	printf("truth cow_bytes 0\n");
	printf("truth zero_fill_bytes %lu\n", (zero_page + own) * PAGE);
	printf("truth pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	if (rss_write < (long long)(npages * PAGE)) {
		fprintf(stderr, "zero_fill: RssAnon %lld after the writes, expected at least %lu\n",
			rss_write, npages * PAGE);
		return 1;
	}
	return 0;
}
