/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * exec_shrink: ground truth for the RSS peak of a process that exec'd.
 *
 * The first image touches PRE MiB of private anonymous memory (one write
 * per page, THP off so the count is exact), then exec()s itself with
 * "--post"; the new image touches POST MiB and exits. The kernel keeps the
 * first image's peak in signal->maxrss; the exiting image's own peak
 * (VmHWM, which it prints just before exiting) is about POST MiB plus the
 * binary and libc.
 *
 * Usage: exec_shrink [PRE_MIB=64] [POST_MIB=8]
 * Output (stdout, from the second image):
 *   truth pid PID
 *   truth pre_bytes PRE*2^20
 *   truth post_bytes POST*2^20
 *   truth vmhwm_bytes B          (/proc/self/status VmHWM before exit)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

static void die(const char *what)
{
	fprintf(stderr, "exec_shrink: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void touch(unsigned long mib)
{
	size_t len = mib << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
}

static unsigned long long vmhwm_bytes(void)
{
	unsigned long long kib = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024;
}

int main(int argc, char **argv)
{
	unsigned long pre = 64, post = 8;
	char a[32], b[32], self[4096];
	ssize_t n;

	if (argc > 1 && strcmp(argv[1], "--post") == 0) {
		if (argc != 4)
			return 2;
		pre = strtoul(argv[2], NULL, 10);
		post = strtoul(argv[3], NULL, 10);
		touch(post);
		printf("truth pid %d\n", (int)getpid());
		printf("truth pre_bytes %lu\n", pre << 20);
		printf("truth post_bytes %lu\n", post << 20);
		/*
		 * Nothing after the VmHWM read may map a page: each first
		 * run of libc code faults in a file page and, by fault-around,
		 * up to 15 beside it (16 and 32 pages over VmHWM before this).
		 * So the code the read and the exit run is run (or read) first:
		 * fflush()'s write path, vmhwm_bytes() once, _exit()'s page;
		 * and _exit() skips atexit and stdio teardown.
		 */
		if (fflush(stdout))
			return 1;
		(void)vmhwm_bytes();
		(void)*(const volatile char *)(void *)_exit;
		printf("truth vmhwm_bytes %llu\n", vmhwm_bytes());
		_exit(fflush(stdout) ? 1 : 0);
	}
	if (argc > 1)
		pre = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		post = strtoul(argv[2], NULL, 10);
	if (!pre || !post || post >= pre) {
		fprintf(stderr, "usage: exec_shrink [PRE_MIB=64] [POST_MIB=8], POST < PRE\n");
		return 2;
	}
	touch(pre);
	snprintf(a, sizeof(a), "%lu", pre);
	snprintf(b, sizeof(b), "%lu", post);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);	/* its comm stays */
	if (n < 0)
		die("readlink /proc/self/exe");
	self[n] = '\0';
	execl(self, argv[0], "--post", a, b, (char *)NULL);
	die(self);
}
