/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * oom_leak: memory that grows at a known rate, for the OOM forecast
 * (memacct run --oom-warn, issue 44), in a cgroup with a memory limit:
 *
 *   oom_leak anon RATE MIB         anonymous memory (THP off), written page
 *                                  by page at RATE MiB/s up to MIB
 *   oom_leak mlock RATE MIB        the same, each step mlock()ed
 *   oom_leak cow RATE MIB          MIB of anonymous memory written at once,
 *                                  then a forked child writes to each page
 *                                  at RATE MiB/s: each write a CoW copy
 *   oom_leak saw RATE MIB          a sawtooth, not a leak (epochs of a data
 *                                  loader): anon written at RATE MiB/s up
 *                                  to MIB, freed, again, until killed
 *   oom_leak shm RATE MIB PATH     a tmpfs file (PATH, kept: the caller
 *                                  removes it) written at RATE MiB/s
 *   oom_leak cache RATE MIB PATH   page cache, which the kernel drops: PATH
 *                                  (on a disk) written at RATE MiB/s up to
 *                                  MIB and read back once; removed
 *
 * A leak larger than the limit ends in an OOM kill; one that fits exits 0.
 * Ground truth on stdout, flushed before anything grows: "truth pid P" (the
 * process that grows: cow's child), "truth rate_bytes_per_s B", "truth
 * start_unix_s T" (CLOCK_REALTIME).
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
#include <sys/prctl.h>
#include <sys/wait.h>

#define MIB (1024 * 1024UL)
#define STEP_NS 10000000L	/* a step every 10 ms */

static void usage(void)
{
	fprintf(stderr, "usage: oom_leak anon|mlock|cow|saw RATE_MIB_S MIB | shm|cache RATE_MIB_S "
		"MIB PATH\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v)
		usage();
	return v;
}

static void die(const char *what)
{
	fprintf(stderr, "oom_leak: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* until @t (CLOCK_MONOTONIC), then @t one step later */
static void step(struct timespec *t)
{
	t->tv_nsec += STEP_NS;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	unsigned long rate, mib, per_step, done = 0;
	const char *mode, *path = NULL;
	char *p = NULL, *buf;
	struct timespec t, now;
	long page = sysconf(_SC_PAGESIZE);
	int fd = -1;

	if (argc < 4)
		usage();
	mode = argv[1];
	rate = num(argv[2]);
	mib = num(argv[3]);
	if (!strcmp(mode, "shm") || !strcmp(mode, "cache")) {
		if (argc != 5)
			usage();
		path = argv[4];
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			die(path);
	} else if ((strcmp(mode, "anon") && strcmp(mode, "mlock") && strcmp(mode, "cow") &&
		    strcmp(mode, "saw")) || argc != 4) {
		usage();
	}
	/* bytes a step, whole pages */
	per_step = (rate * MIB / (1000000000L / STEP_NS) + page - 1) / page * page;
	buf = malloc(per_step);
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, per_step);
	if (!path) {
		p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		madvise(p, mib * MIB, MADV_NOHUGEPAGE);
	}
	if (!strcmp(mode, "cow")) {	/* the parent's pages, then the child copies */
		pid_t child;
		int status;

		memset(p, 0x5a, mib * MIB);
		child = fork();
		if (child < 0)
			die("fork");
		if (child > 0) {
			while (waitpid(child, &status, 0) < 0 && errno == EINTR)
				;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		}
		/* the parent OOM-killed instead (both hold the 160 MiB): the
		 * child, which then has room, ends with it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	printf("truth pid %d\n", (int)getpid());
	printf("truth rate_bytes_per_s %lu\n", per_step * (1000000000L / STEP_NS));
	printf("truth start_unix_s %.3f\n", now.tv_sec + now.tv_nsec / 1e9);
	if (fflush(stdout))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t);
	while (done < mib * MIB) {
		unsigned long n = mib * MIB - done < per_step ? mib * MIB - done : per_step;

		if (p) {
			for (unsigned long off = 0; off < n; off += page)
				p[done + off] = 1;
			if (!strcmp(mode, "mlock") && mlock(p + done, n))
				die("mlock");
		} else if (write(fd, buf, n) != (ssize_t)n) {
			die("write");
		}
		done += n;
		step(&t);
		if (done == mib * MIB && !strcmp(mode, "saw")) {	/* the epoch ends */
			if (madvise(p, mib * MIB, MADV_DONTNEED))
				die("madvise");
			done = 0;
		}
	}
	if (!strcmp(mode, "cache")) {	/* read back: the cache is used, not only made */
		if (lseek(fd, 0, SEEK_SET))
			die("lseek");
		while (read(fd, buf, per_step) > 0)
			;
		unlink(path);
	}
	return 0;
}
