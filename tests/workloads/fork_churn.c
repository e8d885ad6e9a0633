/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * fork_churn: ground truth for processes at production shapes, where maps
 * fill and exits come faster than anyone reads them (issue #23).
 *
 * The parent maps K pages and writes each one; every child writes each of
 * the K pages again: K copy-on-write copies a child, plus the few
 * incidental ones of glibc's fork and exit paths (its stack, its data).
 *
 *   fork_churn churn N K [PAR=1]   N children, at most PAR alive at once,
 *                                  each copies K pages and _exit(0)s
 *   fork_churn hold N K SECONDS    N children copy K pages each, then stay
 *                                  alive SECONDS (or until SIGTERM) and
 *                                  exit; "ready N" once all have copied
 *   fork_churn cgroups DIR N K     for i < N: mkdir DIR/c<i>, a child moves
 *                                  itself there, copies K pages, exits
 *
 * Output (stdout): truth children N, truth per_child_written_pages K, and
 * for churn "rate EXITS_PER_S".
 *
 * The incidental copies depend on where the stack frames fall in their
 * pages, which the kernel randomizes at each exec (arch_align_stack()) and
 * the size of the environment moves: the workload execs itself once more
 * with address randomization off and an empty environment, so that every
 * launch of the same command line copies the same pages (a control run
 * then gives the truth to the page).
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
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>

static long page;
static volatile sig_atomic_t stop;

static void die(const char *what)
{
	fprintf(stderr, "fork_churn: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: fork_churn churn N K [PAR] | hold N K SECONDS | "
		"cgroups DIR N K\n");
	exit(2);
}

static long arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		usage();
	return v;
}

static void write_pages(char *buf, long k, char v)
{
	for (long i = 0; i < k; i++)
		buf[i * page] = v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* churn: fork N, PAR at a time; returns the children reaped */
static long churn(char *buf, long n, long k, long par)
{
	long live = 0, reaped = 0;
	double t0 = now_s();

	for (long c = 0; c < n; c++) {
		pid_t p;

		while (live >= par) {
			if (wait(NULL) < 0)
				die("wait");
			live--;
			reaped++;
		}
		p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			write_pages(buf, k, 2);
			_exit(0);
		}
		live++;
	}
	while (wait(NULL) > 0)
		reaped++;
	printf("rate %.0f\n", n / (now_s() - t0));
	return reaped;
}

/* hold: N children copy, then wait for the hold pipe's end (SECONDS) */
static long hold(char *buf, long n, long k, long seconds)
{
	int ready[2], holdp[2];
	long got = 0;
	char x;

	if (pipe(ready) || pipe(holdp))
		die("pipe");
	signal(SIGTERM, on_term);
	for (long c = 0; c < n; c++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			signal(SIGTERM, SIG_DFL);
			close(ready[0]);
			close(holdp[1]);
			write_pages(buf, k, 2);
			x = 1;
			if (write(ready[1], &x, 1) != 1)
				_exit(1);
			while (read(holdp[0], &x, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(ready[1]);
	close(holdp[0]);
	while (got < n && read(ready[0], &x, 1) == 1)
		got++;
	printf("ready %ld\n", got);
	fflush(stdout);
	for (long s = 0; s < seconds * 10 && !stop; s++)
		usleep(100000);
	close(holdp[1]);	/* every child reads EOF and exits */
	got = 0;
	while (wait(NULL) > 0)
		got++;
	return got;
}

/* cgroups: one cgroup a child; returns the children that copied */
static long cgroups(char *buf, const char *dir, long n, long k)
{
	long ok = 0;

	for (long i = 0; i < n; i++) {
		char path[512], procs[600];
		int st;
		pid_t p;

		snprintf(path, sizeof(path), "%s/c%ld", dir, i);
		if (mkdir(path, 0755) && errno != EEXIST)
			die(path);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
		p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			int fd = open(procs, O_WRONLY);

			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(3);
			close(fd);
			write_pages(buf, k, 2);
			_exit(0);
		}
		if (waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
	}
	return ok;
}

int main(int argc, char **argv)
{
	long n, k, done;
	char *buf;

	page = sysconf(_SC_PAGESIZE);
	if (argc < 4)
		usage();
	if (!getenv("FORK_CHURN_SETTLED")) {
		char *env[] = { "FORK_CHURN_SETTLED=1", NULL };
		int pers = personality(0xffffffff);

		if (pers != -1 && personality(pers | ADDR_NO_RANDOMIZE) != -1)
			execve("/proc/self/exe", argv, env);
		die("exec of itself, settled");
	}
	n = arg(argv[!strcmp(argv[1], "cgroups") ? 3 : 2]);
	k = arg(argv[!strcmp(argv[1], "cgroups") ? 4 : 3]);
	if (!strcmp(argv[1], "cgroups") && argc < 5)
		usage();
	buf = mmap(NULL, (k ? k : 1) * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	write_pages(buf, k, 1);
	printf("truth per_child_written_pages %ld\n", k);
	fflush(stdout);
	if (!strcmp(argv[1], "churn"))
		done = churn(buf, n, k, argc > 4 ? arg(argv[4]) : 1);
	else if (!strcmp(argv[1], "hold") && argc > 4)
		done = hold(buf, n, k, arg(argv[4]));
	else if (!strcmp(argv[1], "cgroups"))
		done = cgroups(buf, argv[2], n, k);
	else
		usage();
	printf("truth children %ld\n", done);
	return done == n ? 0 : 1;
}
