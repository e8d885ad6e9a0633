/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_mmap_churn: copy-on-write while the mmap lock is busy, with the truth
 * read from the kernel's page tables.
 *
 * The parent maps MiB of private anonymous memory (THP disabled on it),
 * writes every page and forks. The child reads the frame of every buffer
 * page from /proc/self/pagemap, then WRITERS threads write every page (each
 * a share of the buffer) while one more thread maps, mprotects and unmaps a
 * small region in a loop, as malloc arenas and Python do: each of those
 * takes the mmap lock for write, so a fault's bpf_find_vma() (a read
 * trylock) fails with -EBUSY while it runs. The child reads the frames again:
 * every page whose frame changed was copied, and that count is the truth.
 * The parent only waits (it writes nothing to the buffer after the fork).
 *
 * Usage: cow_mmap_churn [MiB=64] [writers=3]
 * Output (stdout, from the child):
 *   kernel child_copied_pages N       frames that changed (pagemap)
 *   kernel churn_ops N                mmap+mprotect+munmap rounds done
 *   truth child_cow_bytes B           N * page size
 *   truth buffer_bytes B
 *   truth child_pid PID
 *   truth parent_pid PID
 * Needs CAP_SYS_ADMIN to read frame numbers (pagemap shows 0 without it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "pagemap.h"

#include "page.h"

static void die(const char *what)
{
	fprintf(stderr, "cow_mmap_churn: %s: %s\n", what, strerror(errno));
	exit(1);
}

static char *buf;
static unsigned long npages, nwriters;
static atomic_int stop;
static unsigned long churn_ops;

/* Frame numbers of the buffer's pages; exits if one is not present. */
static void frames(uint64_t *pfn)
{
	pagemap_frames("cow_mmap_churn", buf, npages, pfn);
	for (unsigned long i = 0; i < npages; i++) {
		if (!pfn[i]) {
			fprintf(stderr, "cow_mmap_churn: page %lu not present or no frame number "
				"(root needed)\n", i);
			exit(1);
		}
	}
}

static void *writer(void *arg)
{
	unsigned long w = (unsigned long)arg;

	for (unsigned long i = w; i < npages; i += nwriters)
		buf[i * PAGE] = 2;
	return NULL;
}

/* Takes the mmap lock for write over and over: mmap, mprotect, munmap. */
static void *churn(void *arg)
{
	while (!atomic_load(&stop)) {
		char *p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap churn");
		if (mprotect(p, 8 * PAGE, PROT_READ))
			die("mprotect");
		if (munmap(p, 16 * PAGE))
			die("munmap");
		churn_ops++;
	}
	return NULL;
}

static int child(void)
{
	uint64_t *before = malloc(npages * sizeof(uint64_t));
	uint64_t *after = malloc(npages * sizeof(uint64_t));
	pthread_t w[64], c;
	unsigned long copied = 0;

	if (!before || !after)
		die("malloc");
	frames(before);
	if (pthread_create(&c, NULL, churn, NULL))
		die("pthread_create churn");
	for (unsigned long i = 0; i < nwriters; i++)
		if (pthread_create(&w[i], NULL, writer, (void *)i))
			die("pthread_create writer");
	for (unsigned long i = 0; i < nwriters; i++)
		pthread_join(w[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(c, NULL);
	frames(after);
	for (unsigned long i = 0; i < npages; i++)
		copied += before[i] != after[i];
	printf("kernel child_copied_pages %lu\n", copied);
	printf("kernel churn_ops %lu\n", churn_ops);
	printf("truth child_cow_bytes %lu\n", copied * PAGE);
	printf("truth buffer_bytes %lu\n", npages * PAGE);
	printf("truth child_pid %d\n", (int)getpid());
	printf("truth parent_pid %d\n", (int)getppid());
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64;
	int status;
	pid_t pid;

	nwriters = 3;
	if (argc > 3)
		goto usage;
	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || v == 0)
			goto usage;
		if (i == 1)
			mib = v;
		else if (v <= 64)
			nwriters = v;
		else
			goto usage;
	}
	npages = mib * (1024 * 1024 / PAGE);
	buf = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap buffer");
	if (madvise(buf, npages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	memset(buf, 0x5a, npages * PAGE);	/* present and exclusively owned */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		exit(child());
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "cow_mmap_churn: child failed (status 0x%x)\n", status);
		return 1;
	}
	return 0;

usage:
	fprintf(stderr, "usage: cow_mmap_churn [MiB=64] [writers=3]\n");
	return 2;
}
