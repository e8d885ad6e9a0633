// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * spawn N: N sleeping child processes; prints "ready N" then waits for stdin
 * EOF. When fork() fails first (pid_max, a pids.max limit), says so on stderr
 * and holds the ones it made: "ready M".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	char c;

	/* own process group: the kill(0, ...) below must not reach the caller
	 * (tests/bench.sh and make share the group otherwise) */
	setpgid(0, 0);
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("spawn: fork");
			break;
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
	}
	printf("ready %d\n", i);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	signal(SIGTERM, SIG_IGN);	/* the children only: exit quietly */
	kill(0, SIGTERM);
	return 0;
}
