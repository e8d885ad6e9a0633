/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_move: ground truth that copies made before a move to another memory
 * cgroup stay with the cgroup they were made in (runc init, systemd scopes
 * and Slurm move a child right after fork; issue 39).
 *
 * Run from inside a cgroup FROM. The parent writes BEFORE + AFTER pages of
 * private anonymous memory and forks; the child writes BEFORE of them (a
 * CoW copy each, in FROM), moves itself to the cgroup directory TO
 * (writes "0" to TO/cgroup.procs), writes the AFTER others (copies in TO)
 * and exits; the parent waits for it.
 *
 * Usage: cow_move TO_DIR BEFORE AFTER
 * Output (stdout):
 *   truth before_bytes B     copies made in FROM (the child's)
 *   truth after_bytes B      copies made in TO
 *   truth child_pid PID
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "page.h"

static void die(const char *what)
{
	fprintf(stderr, "cow_move: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	long before, after;
	volatile char *buf;
	char path[4096];
	int st, fd;
	pid_t c;

	if (argc != 4 || (before = atol(argv[2])) <= 0 || (after = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: cow_move TO_DIR BEFORE AFTER\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", argv[1]);
	buf = mmap(NULL, (before + after) * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	/* a copy per page: no huge page may cover several */
	if (madvise((void *)buf, (before + after) * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (long i = 0; i < before + after; i++)
		buf[i * PAGE] = 1;
	printf("truth before_bytes %lu\n", before * PAGE);
	printf("truth after_bytes %lu\n", after * PAGE);
	if (fflush(stdout))
		die("stdout");
	c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		for (long i = 0; i < before; i++)
			buf[i * PAGE] = 2;
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(3);
		close(fd);
		for (long i = before; i < before + after; i++)
			buf[i * PAGE] = 2;
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c)
		die("waitpid");
	printf("truth child_pid %d\n", (int)c);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "cow_move: the child failed (status %#x): could it move to %s?\n",
			st, argv[1]);
		return 1;
	}
	return 0;
}
