/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * many_small: N small live processes, the shape whose RSS the kernel's
 * per-CPU counter deltas hold a large part of (issue 23 part 4).
 *
 * Forks N children; each writes one byte in each of PAGES pages of its own
 * (after fork, so they are the child's, faulted on the CPU it runs on) and
 * sleeps. With every child ready it prints "ready N" and waits for EOF on
 * stdin, then LINGER seconds more, then kills the children and reaps them. The N + 1 processes'
 * RSS is read from /proc by the test (Σ VmRSS): the ground truth.
 *
 * Usage: many_small [N=2000] [PAGES=8] [LINGER=0]
 * Output (stdout): "ready N" (N: the children made; fewer when fork() failed,
 * said on stderr).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "page.h"

static long arg(const char *s, long dflt, long max)
{
	char *end;
	long v;

	if (!s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		fprintf(stderr, "usage: many_small [N=2000] [PAGES=8] [LINGER=0]\n");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long n = arg(argc > 1 ? argv[1] : NULL, 2000, 100000);
	long pages = arg(argc > 2 ? argv[2] : NULL, 8, 1 << 20);
	long linger = arg(argc > 3 ? argv[3] : NULL, 0, 3600);
	int ready[2];
	pid_t *kids = calloc(n ? n : 1, sizeof(*kids));
	long made = 0;
	char c;

	if (!kids || pipe(ready)) {
		perror("many_small");
		return 1;
	}
	for (; made < n; made++) {
		pid_t p = fork();

		if (p < 0) {
			fprintf(stderr, "many_small: fork: %s (holding %ld)\n", strerror(errno),
				made);
			break;
		}
		if (p == 0) {
			char *m = pages ? mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (long i = 0; m && m != MAP_FAILED && i < pages; i++)
				m[i * PAGE] = 1;
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		kids[made] = p;
	}
	close(ready[1]);
	for (long i = 0; i < made; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	printf("ready %ld\n", made);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	sleep(linger);
	for (long i = 0; i < made; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < made; i++)
		waitpid(kids[i], NULL, 0);
	return 0;
}
