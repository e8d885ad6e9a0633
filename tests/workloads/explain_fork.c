/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * explain_fork: ground truth for `memacct explain` on fork + partial writes.
 *
 * The parent maps MiB of private anonymous memory (THP off, so every page
 * is 4 KiB), writes every page, then forks WORKERS workers; worker i writes
 * one byte in every page of the i-th eighth of the buffer (i < 8) and waits.
 * Every such write copies one page (CoW). For the buffer mapping then, with
 * E = buffer/8, W workers each writing one distinct eighth:
 *   worker: USS = E, PSS = E + sum over other written eighths E/W
 *           + sum over unwritten eighths E/(W+1)
 *   parent: USS = 0
 *   all processes together (shared pages counted once): buffer + W*E
 * The truth lines give the buffer's address and the per-page figures; the
 * test derives the rest. With --wait-signal the parent waits for SIGUSR1
 * before forking (so `memacct explain --watch` can be attached first).
 * Prints "ready PARENT_PID" once every worker has written, then waits for
 * SIGTERM/SIGINT or SECONDS; the workers die with it.
 *
 * Usage: explain_fork [MiB=128] [WORKERS=4] [--wait-signal] [--seconds S=60]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth buffer_start ADDR        (decimal)
 *   truth workers W
 *   truth cow_bytes_per_worker B   (= buffer / 8)
 *   truth worker I PID
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

static volatile sig_atomic_t stop, go;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else
		stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "explain_fork: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned long mib = 128, len, eighth;
	int workers = 4, wait_signal = 0, pos = 0, pfd[2];
	long seconds = 60;
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t pids[8];
	long long deadline;
	char *buf, c;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait-signal"))
			wait_signal = 1;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtol(argv[++i], NULL, 10);
		else if (pos == 0 && ++pos)
			mib = strtoul(argv[i], NULL, 10);
		else if (pos == 1 && ++pos)
			workers = atoi(argv[i]);
		else {
			fprintf(stderr, "usage: explain_fork [MiB] [WORKERS<=8] [--wait-signal]\n");
			return 2;
		}
	}
	if (!mib || workers < 1 || workers > 8)
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	len = mib << 20;
	eighth = len / 8;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	madvise(buf, len, MADV_NOHUGEPAGE);
	for (unsigned long off = 0; off < len; off += PAGE)
		buf[off] = 1;
	printf("truth buffer_bytes %lu\n", len);
	printf("truth buffer_start %lu\n", (unsigned long)buf);
	printf("truth workers %d\n", workers);
	printf("truth cow_bytes_per_worker %lu\n", eighth);
	printf("truth parent_pid %d\n", (int)getpid());
	fflush(stdout);
	deadline = deadline_in(seconds);
	if (wait_signal) {
		printf("waiting %d\n", (int)getpid());
		fflush(stdout);
		while (!go && !stop && !past_deadline(deadline))
			usleep(10000);
	}
	if (pipe(pfd))
		die("pipe");
	for (int i = 0; i < workers; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			close(pfd[0]);
			for (unsigned long off = i * eighth; off < (i + 1) * eighth; off += PAGE)
				buf[off] = 2;
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
			while (!stop && !past_deadline(deadline))
				usleep(20000);
			_exit(0);
		}
	}
	close(pfd[1]);
	for (int i = 0; i < workers; i++)
		if (read(pfd[0], &c, 1) != 1)
			die("worker");
	for (int i = 0; i < workers; i++)
		printf("truth worker %d %d\n", i, (int)pids[i]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop && !past_deadline(deadline))
		usleep(20000);
	for (int i = 0; i < workers; i++)
		kill(pids[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	return 0;
}
