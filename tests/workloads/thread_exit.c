/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * thread_exit: ground truth for the faults of a process whose last thread
 * to exit is not its leader, the shape of every PyTorch DataLoader worker
 * (its main thread exits, its queue-feeder thread last; issue 39).
 *
 * The leader writes LEADER_PAGES pages of fresh anonymous memory (a fault
 * each, on the leader's own counters), starts a helper thread and leaves
 * with the thread-only exit(2): it stays a zombie, its counters not yet in
 * the process's sums. The helper waits until the leader is a zombie (its
 * /proc/self/task/TID/stat says Z), writes HELPER_PAGES pages, reads
 * getrusage(RUSAGE_SELF) (every thread's faults, the leader's included)
 * and ends the process with exit_group(2). Nothing after that read maps a
 * page: the line is formatted in a buffer on the helper's stack and
 * written with write(2).
 *
 * Usage: thread_exit [LEADER_PAGES=4096 [HELPER_PAGES=256]]
 * Output (stdout):
 *   truth pid PID
 *   truth faults N           ru_minflt + ru_majflt just before exit_group()
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "page.h"

static unsigned long leader_pages = 4096, helper_pages = 256;
static pid_t leader;

static void die(const char *what)
{
	fprintf(stderr, "thread_exit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void touch(unsigned long pages)
{
	volatile char *buf = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		die("mmap");
	/* a fault per page: no huge page may cover several */
	if (madvise((void *)buf, pages * PAGE, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (unsigned long i = 0; i < pages; i++)
		buf[i * PAGE] = 1;
}

/* Whether thread @tid of this process is a zombie (or gone). */
static int zombie(pid_t tid)
{
	char path[64], buf[256], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static void *helper(void *arg)
{
	struct rusage ru;
	char line[64];
	int len;

	(void)arg;
	for (int i = 0; !zombie(leader); i++) {
		if (i == 10000) {
			fprintf(stderr, "thread_exit: the leader did not exit in 10 s\n");
			syscall(SYS_exit_group, 1);
		}
		usleep(1000);
	}
	touch(helper_pages);
	if (getrusage(RUSAGE_SELF, &ru))
		die("getrusage");
	len = snprintf(line, sizeof(line), "truth faults %ld\n", ru.ru_minflt + ru.ru_majflt);
	if (write(STDOUT_FILENO, line, len) != len)
		syscall(SYS_exit_group, 1);
	syscall(SYS_exit_group, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 3 || (argc > 1 && !(leader_pages = strtoul(argv[1], NULL, 10))) ||
	    (argc > 2 && !(helper_pages = strtoul(argv[2], NULL, 10)))) {
		fprintf(stderr, "usage: thread_exit [LEADER_PAGES=4096 [HELPER_PAGES=256]]\n");
		return 2;
	}
	leader = getpid();
	touch(leader_pages);
	printf("truth pid %d\n", (int)leader);
	if (fflush(stdout))
		die("stdout");
	errno = pthread_create(&t, NULL, helper, NULL);
	if (errno)
		die("pthread_create");
	syscall(SYS_exit, 0);	/* this thread only: a zombie leader */
	return 1;
}
