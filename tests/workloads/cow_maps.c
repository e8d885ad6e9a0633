/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_maps: ground truth for CoW copies by mapping (issue 42).
 *
 * The parent holds three mappings and makes every page of each resident:
 *   heap  HEAP_MIB of malloc'd memory from the brk heap (mmap off in malloc:
 *         mallopt(M_MMAP_MAX, 0)), written whole;
 *   anon  ANON_MIB of private anonymous mmap, written whole;
 *   file  FILE_MIB of a MAP_PRIVATE mapping of a file it wrote, written whole
 *         through the mapping (each page then a private copy of the parent's).
 * It reads its own Rss of each from /proc/self/smaps (the kernel's figure,
 * the parent's resident bytes of the mapping), then forks WORKERS workers.
 * Each writes one byte in each of the first 25% of the heap buffer's pages,
 * the first 50% of the anon mapping's and all of the file mapping's: each
 * write copies the page (anon CoW; in the file mapping a copy of the
 * parent's private copy). Per worker, per mapping:
 *   heap_bytes = pages(HEAP_MIB) / 4 * PAGE, anon_bytes = pages(ANON_MIB) / 2
 *   * PAGE, file_bytes = FILE_MIB MiB
 * plus a few incidental pages in other mappings (stack, libc data) and, in
 * the heap, stdio's buffer when a worker prints.
 *
 * --slots N: each worker instead copies pages in N separate anonymous
 * mappings of the parent (N > 128: more than a process's slots), k + 1
 * pages of the k-th (the largest last): truth slots_pages_total, and
 * slot_start_K the k-th's address.
 * --hold: the workers wait for their stdin to end before exiting (an
 * external reader sees them alive), printing "holding PID" first.
 *
 * Usage: cow_maps [WORKERS=4] [HEAP_MIB=32] [ANON_MIB=64] [FILE_MIB=16]
 *                 [--slots N] [--hold]
 * Output (stdout), before the fork:
 *   truth map_heap_start|_end|_rss V             the VMA holding the heap
 *                                               buffer (addresses in decimal)
 *                                               and its Rss (bytes); map_anon_*,
 *                                               map_file_* the same
 *   truth copied_heap|copied_anon|copied_file BYTES      per worker
 *   truth workers W
 * and after the workers exited: truth worker_N PID (N from 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "page.h"

static void die(const char *what)
{
	fprintf(stderr, "cow_maps: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The VMA of /proc/self/smaps holding @addr: its range and Rss (bytes). */
static void vma_of(const void *addr, unsigned long *start, unsigned long *end,
		   unsigned long *rss)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;

	if (!f)
		die("/proc/self/smaps");
	*start = *end = *rss = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, kb;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {	/* a mapping's header */
			in = (uintptr_t)addr >= s && (uintptr_t)addr < e;
			if (in) {
				*start = s;
				*end = e;
			}
		} else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			*rss = kb * 1024;
			in = 0;
		}
	}
	fclose(f);
}

static void wait_stdin(void)
{
	char c;

	while (read(0, &c, 1) > 0 || errno == EINTR)
		errno = 0;
}

int main(int argc, char **argv)
{
	unsigned long mib[3] = { 32, 64, 16 }, pg = PAGE, npg[3], s, e, rss;
	const char *name[3] = { "heap", "anon", "file" };
	int workers = 4, npos = 0, hold = 0, nslots = 0, fd;
	char *buf[3], path[] = "/tmp/cow_maps.XXXXXX", **slot = NULL;
	pid_t *pids;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold")) {
			hold = 1;
		} else if (!strcmp(argv[i], "--slots") && i + 1 < argc) {
			nslots = atoi(argv[++i]);
		} else if (npos == 0) {
			workers = atoi(argv[i]);
			npos++;
		} else if (npos < 4) {
			mib[npos++ - 1] = strtoul(argv[i], NULL, 10);
		} else {
			fprintf(stderr, "usage: cow_maps [WORKERS] [HEAP_MIB] [ANON_MIB] "
				"[FILE_MIB] [--slots N] [--hold]\n");
			return 2;
		}
	}
	if (workers < 1 || workers > 64)
		workers = 4;
	for (int k = 0; k < 3; k++)
		npg[k] = mib[k] * (1024 * 1024 / pg);

	if (!mallopt(M_MMAP_MAX, 0))
		die("mallopt");
	buf[0] = malloc(npg[0] * pg);
	if (!buf[0])
		die("malloc");
	buf[1] = mmap(NULL, npg[1] * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf[1] == MAP_FAILED)
		die("mmap anon");
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	unlink(path);
	if (ftruncate(fd, npg[2] * pg))
		die("ftruncate");
	buf[2] = mmap(NULL, npg[2] * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (buf[2] == MAP_FAILED)
		die("mmap file");
	for (int k = 0; k < 3; k++)
		memset(buf[k], 0x5a, npg[k] * pg);
	if (nslots > 0) {
		/* separate VMAs: a guard page between each (not merged) */
		slot = calloc(nslots, sizeof(*slot));
		for (int i = 0; i < nslots; i++) {
			slot[i] = mmap(NULL, (i + 2) * pg, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (slot[i] == MAP_FAILED)
				die("mmap slot");
			memset(slot[i], 1, (i + 1) * pg);
			mprotect(slot[i] + (i + 1) * pg, pg, PROT_NONE);
		}
	}
	for (int k = 0; k < 3; k++) {
		vma_of(buf[k], &s, &e, &rss);
		printf("truth map_%s_start %lu\ntruth map_%s_end %lu\ntruth map_%s_rss %lu\n",
		       name[k], s, name[k], e, name[k], rss);
	}
	printf("truth copied_heap %lu\n", npg[0] / 4 * pg);
	printf("truth copied_anon %lu\n", npg[1] / 2 * pg);
	printf("truth copied_file %lu\n", npg[2] * pg);
	if (nslots > 0) {
		unsigned long tot = 0;

		for (int i = 0; i < nslots; i++)
			tot += (unsigned long)(i + 1) * pg;
		printf("truth slots_pages_total %lu\n", tot / pg);
		for (int i = 0; i < nslots; i++)
			printf("truth slot_start_%d %lu\n", i, (unsigned long)(uintptr_t)slot[i]);
	}
	printf("truth workers %d\n", workers);
	if (fflush(stdout))
		die("stdout");

	pids = calloc(workers, sizeof(*pids));
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			volatile char *p;

			if (nslots > 0) {
				for (int i = 0; i < nslots; i++)
					for (int j = 0; j <= i; j++)
						((volatile char *)slot[i])[j * pg] = 2;
			} else {
				for (unsigned long i = 0; i < npg[0] / 4; i++)
					(p = buf[0])[i * pg] = 2;
				for (unsigned long i = 0; i < npg[1] / 2; i++)
					(p = buf[1])[i * pg] = 2;
				for (unsigned long i = 0; i < npg[2]; i++)
					(p = buf[2])[i * pg] = 2;
			}
			if (hold) {
				char line[64];
				int n = snprintf(line, sizeof(line), "holding %d\n", (int)getpid());

				if (write(1, line, n) != n)
					_exit(1);
				wait_stdin();
			}
			_exit(0);
		}
		pids[w] = pid;
	}
	for (int w = 0; w < workers; w++) {
		int st;

		if (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			die("worker");
		printf("truth worker_%d %d\n", w, (int)pids[w]);
	}
	return 0;
}
