/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * explain_memfd: ground truth for shmem counted once.
 *
 * Creates a memfd of MiB, maps it MAP_SHARED, writes every page, then forks
 * SHARERS-1 children that each read every page (so the pages are mapped in
 * SHARERS processes). Prints "ready PID" when all have touched the pages and
 * waits for SIGTERM/SIGINT or SECONDS; the children die with the parent.
 *
 * Usage: explain_memfd [MiB=64] [SHARERS=3] [--seconds S=60]
 * Output (stdout):
 *   truth shmem_bytes B
 *   truth sharers N
 *   truth child I PID
 *   truth parent_pid PID
 *   ready PID
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "deadline.h"

#include "page.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "explain_memfd: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, len;
	int sharers = 3, pos = 0, fd, pfd[2];
	long seconds = 60;
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t pids[16];
	long long deadline;
	volatile char sink = 0;
	char *map, c;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtol(argv[++i], NULL, 10);
		else if (pos == 0 && ++pos)
			mib = strtoul(argv[i], NULL, 10);
		else if (pos == 1 && ++pos)
			sharers = atoi(argv[i]);
		else
			return 2;
	}
	if (!mib || sharers < 1 || sharers > 16)
		return 2;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	len = mib << 20;
	fd = memfd_create("explain shared", 0);
	if (fd < 0)
		die("memfd_create");
	if (ftruncate(fd, len))
		die("ftruncate");
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	madvise(map, len, MADV_NOHUGEPAGE);
	for (unsigned long off = 0; off < len; off += PAGE)
		map[off] = 1;
	deadline = deadline_in(seconds);
	if (pipe(pfd))
		die("pipe");
	for (int i = 0; i < sharers - 1; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			for (unsigned long off = 0; off < len; off += PAGE)
				sink += map[off];
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
			while (!stop && !past_deadline(deadline))
				usleep(20000);
			_exit(0);
		}
	}
	close(pfd[1]);
	for (int i = 0; i < sharers - 1; i++)
		if (read(pfd[0], &c, 1) != 1)
			die("child");
	printf("truth shmem_bytes %lu\n", len);
	printf("truth sharers %d\n", sharers);
	for (int i = 0; i < sharers - 1; i++)
		printf("truth child %d %d\n", i, (int)pids[i]);
	printf("truth parent_pid %d\n", (int)getpid());
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop && !past_deadline(deadline))
		usleep(20000);
	for (int i = 0; i < sharers - 1; i++)
		kill(pids[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	(void)sink;
	return 0;
}
