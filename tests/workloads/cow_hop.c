/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cow_hop: ground truth for zero fills and anonymous copy-on-write while the
 * process moves between CPUs (the perf event fault hook is one event per
 * CPU: a fault on any CPU must be seen, wherever the previous one was).
 *
 * The parent maps MiB of private anonymous memory (THP disabled on it, so
 * every fault is one base page) and writes every page, moving itself to the
 * next allowed CPU (sched_setaffinity) every `hop` pages: each page's first
 * write is a zero fill. It then forks; the child writes one byte in each of
 * the first 1/den of the pages, hopping the same way, and exits: each such
 * write copies the page in the child.
 *   zero_fill_bytes = MiB * 2^20 (the parent's buffer)
 *   child_cow_bytes = (pages / den) * page size
 * A plain fork(): the child's stack and libc's data add a few incidental CoW
 * pages on top (and the dynamic loader's relocations about ten file-CoW
 * pages, which are not anonymous CoW).
 *
 * Usage: cow_hop [MiB=32] [den=2] [hop=64]
 * Output (stdout):
 *   truth buffer_bytes B
 *   truth zero_fill_bytes B
 *   truth child_cow_bytes B
 *   truth allowed_cpus N       (CPUs it may run on at start)
 *   truth parent_cpus N        (distinct CPUs the parent wrote on)
 *   truth child_cpus N         (the same for the child)
 *   truth parent_pid PID
 *   truth child_pid PID
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

static void die(const char *what)
{
	fprintf(stderr, "cow_hop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static cpu_set_t allowed;
static int ncpus_allowed;

/* Move to the next allowed CPU after @cur; the CPU we run on afterwards. */
static int hop_from(int cur)
{
	cpu_set_t one;

	for (int i = 1; i <= CPU_SETSIZE; i++) {
		int c = (cur + i) % CPU_SETSIZE;

		if (!CPU_ISSET(c, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			die("sched_setaffinity");
		break;
	}
	return sched_getcpu();
}

/* Write one byte in each of @n pages of @buf, hopping every @hop pages:
 * the number of distinct CPUs written on (at most 64 told apart). */
static int write_hopping(volatile char *buf, unsigned long n, long ps, unsigned long hop,
			 char v)
{
	unsigned long long seen = 0;
	int cpu = sched_getcpu(), distinct = 0;

	for (unsigned long i = 0; i < n; i++) {
		if (i % hop == 0) {
			cpu = hop_from(cpu);
			if (cpu >= 0 && !(seen & (1ULL << (cpu & 63)))) {
				seen |= 1ULL << (cpu & 63);
				distinct++;
			}
		}
		buf[i * ps] = v;
	}
	return distinct;
}

int main(int argc, char **argv)
{
	unsigned long arg[3] = { 32, 2, 64 }, npages, ncow;
	long ps = sysconf(_SC_PAGESIZE);
	int pfd[2], parent_cpus, child_cpus = 0, status;
	char *buf;
	pid_t pid;

	if (argc > 4) {
		fprintf(stderr, "usage: cow_hop [MiB=32] [den=2] [hop=64]\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char *end;

		errno = 0;
		arg[i - 1] = strtoul(argv[i], &end, 10);
		if (errno || *end || end == argv[i] || !arg[i - 1]) {
			fprintf(stderr, "usage: cow_hop [MiB=32] [den=2] [hop=64]\n");
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	ncpus_allowed = CPU_COUNT(&allowed);
	npages = arg[0] * (1024 * 1024 / ps);
	ncow = npages / arg[1];

	buf = mmap(NULL, npages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (madvise(buf, npages * ps, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	parent_cpus = write_hopping(buf, npages, ps, arg[2], 1);
	if (pipe(pfd))
		die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int n = write_hopping(buf, ncow, ps, arg[2], 2);

		if (write(pfd[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &child_cpus, sizeof(child_cpus)) != sizeof(child_cpus))
		child_cpus = 0;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "cow_hop: child failed (status 0x%x)\n", status);
		return 1;
	}
	printf("truth buffer_bytes %lu\n", npages * ps);
	printf("truth zero_fill_bytes %lu\n", npages * ps);
	printf("truth child_cow_bytes %lu\n", ncow * ps);
	printf("truth allowed_cpus %d\n", ncpus_allowed);
	printf("truth parent_cpus %d\n", parent_cpus);
	printf("truth child_cpus %d\n", child_cpus);
	printf("truth parent_pid %d\n", (int)getpid());
	printf("truth child_pid %d\n", (int)pid);
	return fflush(stdout) ? 1 : 0;
}
