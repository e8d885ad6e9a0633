/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * explain_file_mmap: ground truth for `memacct explain` on a file mapping.
 *
 * Writes PATH (MiB of non-zero bytes), fsyncs it (so its page cache is
 * clean), maps it read-only MAP_SHARED and reads every page, so the whole
 * file is resident, clean and reclaimable. --mlock mlocks the mapping (then
 * nothing of it is reclaimable). --unlink removes PATH once mapped (the
 * mapping then shows " (deleted)"). Prints "ready PID" and waits; on
 * SIGUSR1 it drops the pages (madvise(MADV_DONTNEED) and
 * posix_fadvise(POSIX_FADV_DONTNEED)), prints "dropped PID" and waits for
 * SIGTERM/SIGINT or SECONDS, removes PATH and exits 0. --mappers N: N-1
 * forked children read every page too, so N processes map the whole file
 * (explain --cgroup must count its pages once); they exit with the parent.
 *
 * Usage: explain_file_mmap PATH [MiB=256] [--mlock] [--unlink] [--seconds S=60]
 *                          [--mappers N=1]
 * Output (stdout):
 *   truth file_bytes B
 *   truth locked_bytes B       (B with --mlock, else 0)
 *   truth pid PID
 *   truth mapper PID           (each forked child, with --mappers)
 *   ready PID
 *   dropped PID               (after SIGUSR1)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "deadline.h"

#include "page.h"

static volatile sig_atomic_t stop, drop;
static const char *path;
static int unlinked;
static pid_t kids[64];
static int nkids;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		drop = 1;
	else
		stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "explain_file_mmap: %s: %s\n", what, strerror(errno));
	if (path && !unlinked)
		unlink(path);
	exit(1);
}

/* sleep until a signal sets *@flag or stop, or until @deadline */
static void wait_for(volatile sig_atomic_t *flag, long long deadline)
{
	while (!*flag && !stop && !past_deadline(deadline))
		usleep(20000);
}

int main(int argc, char **argv)
{
	unsigned long mib = 256, len;
	int do_mlock = 0, do_unlink = 0, fd;
	long seconds = 60;
	char *map, *buf;
	volatile char sink = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	long long deadline;
	int i, pos = 0, mappers = 1, ready_pipe[2];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mlock"))
			do_mlock = 1;
		else if (!strcmp(argv[i], "--unlink"))
			do_unlink = 1;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--mappers") && i + 1 < argc)
			mappers = (int)strtol(argv[++i], NULL, 10);
		else if (pos == 0 && ++pos)
			path = argv[i];
		else if (pos == 1 && ++pos)
			mib = strtoul(argv[i], NULL, 10);
		else {
			fprintf(stderr, "usage: explain_file_mmap PATH [MiB] [--mlock] [--unlink] "
				"[--seconds S]\n");
			return 2;
		}
	}
	if (!path || !mib || mappers < 1 || mappers > 64) {
		fprintf(stderr, "usage: explain_file_mmap PATH [MiB] [--mlock] [--unlink]\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	len = mib << 20;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open");
	buf = malloc(1 << 20);
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, 1 << 20);
	for (unsigned long m = 0; m < mib; m++)
		if (write(fd, buf, 1 << 20) != 1 << 20)
			die("write");
	free(buf);
	if (fsync(fd))
		die("fsync");
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	madvise(map, len, MADV_NOHUGEPAGE);
	for (unsigned long off = 0; off < len; off += PAGE)
		sink += map[off];
	if (do_mlock && mlock(map, len))
		die("mlock");
	if (do_unlink) {
		if (unlink(path))
			die("unlink");
		unlinked = 1;
	}
	deadline = deadline_in(seconds);
	fflush(stdout);
	if (pipe(ready_pipe))
		die("pipe");
	for (i = 1; i < mappers; i++) {
		pid_t k = fork();

		if (k < 0)
			die("fork");
		if (k == 0) {	/* a MAP_SHARED mapping is inherited without its page tables */
			for (unsigned long off = 0; off < len; off += PAGE)
				sink += map[off];
			printf("truth mapper %d\n", (int)getpid());
			fflush(stdout);
			if (write(ready_pipe[1], "r", 1) != 1)
				_exit(1);
			wait_for(&stop, deadline);
			_exit(0);
		}
		kids[nkids++] = k;
	}
	for (i = 1; i < mappers; i++) {	/* every child has read the file */
		char c;

		if (read(ready_pipe[0], &c, 1) != 1)
			die("read");
	}
	printf("truth file_bytes %lu\n", len);
	printf("truth locked_bytes %lu\n", do_mlock ? len : 0);
	printf("truth pid %d\n", (int)getpid());
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	wait_for(&drop, deadline);
	if (drop && !stop) {
		if (do_mlock)
			munlock(map, len);
		madvise(map, len, MADV_DONTNEED);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		printf("dropped %d\n", (int)getpid());
		fflush(stdout);
		wait_for(&stop, deadline);
	}
	for (i = 0; i < nkids; i++) {
		kill(kids[i], SIGTERM);
		waitpid(kids[i], NULL, 0);
	}
	munmap(map, len);
	close(fd);
	if (!unlinked)
		unlink(path);
	(void)sink;
	return 0;
}
