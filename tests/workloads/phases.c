/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * phases: ground truth for memacct run's phase marks (docs/run.md
 * "Phases"), marked with include/memacct_mark.h.
 *
 *   three (default)  phase "alloc": mmap 64 MiB private anonymous (no THP),
 *                    write every page; phase "cow": fork, the child writes
 *                    16 MiB of it (copy-on-write) and exits, the parent
 *                    waits; phase "lock": mmap 8 MiB and mlock it, munmap
 *                    the 64 MiB; then "end". After each answer it prints the
 *                    kernel's own RssAnon and VmLck (/proc/self/status).
 *   garbage          bad lines on the shared fd (an empty message too) and
 *                    through the helper, each must be answered "error ...";
 *                    then a good mark.
 *   storm N          N marks (phase "sN"), each must be answered.
 *   closefd          close MEMACCT_MARK_FD, then mark: an error at once.
 *   procs N M        N sleeping children (fork), then M marks, each timed.
 *   concurrent N M   N children mark M times each, all at once ("cK-I");
 *                    each must get its own answers (ok, M times).
 *   kinds FILE       one phase per kind of memory the phase tables show
 *                    besides anon and mlocked: "file" writes FILE (8 MiB,
 *                    on a disk: not tmpfs) and reads it through a shared
 *                    mapping; "shmem" writes a 4 MiB memfd mapping; "pin"
 *                    registers a 2 MiB io_uring buffer (VmPin, FOLL_PIN);
 *                    then "end". At each answer, before anything else, it
 *                    reads its own VmRSS, RssFile, RssShmem, VmPin,
 *                    getrusage() faults and the host's FOLL_PIN count
 *                    ("kernel KEY_at PHASE V").
 *
 * Usage: phases [MODE [ARGS]]
 * Output (stdout): "truth KEY [ARG] VALUE" and "kernel KEY [ARG] VALUE"
 * lines (tests/integration.h), a failed expectation exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "page.h"
#include "vm_status.h"
#include "../../include/memacct_mark.h"

#define MiB (1024UL * 1024)

static void die(const char *what, int err)
{
	fprintf(stderr, "phases: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* a /proc/self/status field in bytes; no allocation (read() to the stack) */
static long long status_kb(const char *key)
{
	char buf[4096], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		die("reading /proc/self/status", errno);
	buf[n] = '\0';
	p = strstr(buf, key);
	if (!p)
		die(key, ENOENT);
	return strtoll(p + strlen(key), NULL, 10) * 1024;
}

static void mark(const char *name)
{
	int err = name ? memacct_mark(name) : memacct_mark_end();

	if (err)
		die(name ? name : "end", err == 1 ? ENOTCONN : err);
	printf("kernel anon_at %s %lld\n", name ? name : "end", status_kb("RssAnon:"));
	printf("kernel locked_at %s %lld\n", name ? name : "end", status_kb("VmLck:"));
}

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", errno);
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static int three(void)
{
	char *big, *locked;
	pid_t child;
	int st;

	mark("alloc");
	big = map(64 * MiB);
	for (size_t i = 0; i < 64 * MiB; i += PAGE)
		big[i] = 1;
	printf("truth alloc_anon_bytes %lu\n", 64 * MiB);
	mark("cow");
	child = fork();
	if (child < 0)
		die("fork", errno);
	if (child == 0) {
		for (size_t i = 0; i < 16 * MiB; i += PAGE)
			big[i] = 2;
		_exit(0);
	}
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child", ECHILD);
	printf("truth child_pid %d\n", child);
	printf("truth cow_child_bytes %lu\n", 16 * MiB);
	mark("lock");
	locked = map(8 * MiB);
	if (mlock(locked, 8 * MiB))
		die("mlock", errno);
	munmap(big, 64 * MiB);
	printf("truth lock_mlocked_bytes %lu\n", 8 * MiB);
	printf("truth lock_anon_bytes %ld\n", -56L * (long)MiB);
	printf("truth locked_start %lu\n", (unsigned long)locked);
	printf("truth big_start %lu\n", (unsigned long)big);
	mark(NULL);
	printf("truth pid %d\n", getpid());
	return 0;
}

/*
 * A mark, then the process's own figures read first thing after the answer
 * (memacct took its snapshot before answering): what each phase changed
 * is the difference of two such readings, with nothing of the process's
 * own between memacct's snapshot and the reading but the read itself.
 */
static void mark_read(const char *name)
{
	const char *n = name ? name : "end";
	long long rss, file, shmem, pin, foll;
	struct rusage ru;
	int err = name ? memacct_mark(name) : memacct_mark_end();

	getrusage(RUSAGE_SELF, &ru);
	rss = status_kb("VmRSS:");
	file = status_kb("RssFile:");
	shmem = status_kb("RssShmem:");
	pin = status_kb("VmPin:");
	foll = foll_pinned_pages("phases");
	if (err)
		die(n, err == 1 ? ENOTCONN : err);
	printf("kernel faults_at %s %ld\n", n, ru.ru_minflt + ru.ru_majflt);
	printf("kernel rss_at %s %lld\n", n, rss);
	printf("kernel file_at %s %lld\n", n, file);
	printf("kernel shmem_at %s %lld\n", n, shmem);
	printf("kernel pinned_vm_at %s %lld\n", n, pin);
	printf("kernel foll_pinned_at %s %lld\n", n, foll < 0 ? -1 : foll * PAGE);
}

/*
 * What the first mark_read() would fault in for the first time, faulted in
 * before it: the stack a mark and a reading use, libc's socket and stdio
 * code, the stdio buffers. Else a page the first mark touches while
 * memacct takes its snapshot (the client runs on between send and recv)
 * counts in one of the two readings only (+1 page once, under load).
 */
static void warm_up(void)
{
	volatile char stack[64 << 10];
	struct rusage ru;
	int sv[2];
	char c = 0;

	memset((char *)stack, 0, sizeof(stack));
	getrusage(RUSAGE_SELF, &ru);
	status_kb("VmRSS:");
	foll_pinned_pages("phases");
	if (!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		if (send(sv[0], &c, 1, 0) == 1)
			(void)!recv(sv[1], &c, 1, 0);
		close(sv[0]);
		close(sv[1]);
	}
	printf("kernel warm_up %d\n", (int)stack[0]);
}

static int kinds(const char *path)
{
	size_t file_len = 8 * MiB, shmem_len = 4 * MiB, pin_len = 2 * MiB;
	struct iovec iov;
	volatile char sum = 0;
	char *p, *buf;
	int fd, ring;

	/* the buffer and the ring before the first mark: only the
	 * registration moves pinned_vm in "pin" */
	buf = map(pin_len);
	memset(buf, 1, pin_len);
	ring = io_uring_setup_charged("phases");
	warm_up();
	mark_read("file");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path, errno);
	for (size_t off = 0; off < file_len; off += pin_len)
		if (pwrite(fd, buf, pin_len, off) != (ssize_t)pin_len)
			die("pwrite", errno);
	p = mmap(NULL, file_len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap file", errno);
	for (size_t i = 0; i < file_len; i += PAGE)
		sum += p[i];
	close(fd);
	mark_read("shmem");
	fd = memfd_create("phases-shmem", 0);
	if (fd < 0 || ftruncate(fd, shmem_len))
		die("memfd", errno);
	p = mmap(NULL, shmem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap memfd", errno);
	memset(p, 2, shmem_len);
	close(fd);
	mark_read("pin");
	iov = (struct iovec){ .iov_base = buf, .iov_len = pin_len };
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
		die("io_uring_register", errno);
	mark_read(NULL);
	unlink(path);
	printf("truth pid %d\n", getpid());
	printf("truth file_bytes %zu\n", file_len);
	printf("truth shmem_bytes %zu\n", shmem_len);
	printf("truth pinned_vm_bytes %zu\n", pin_len);
	return 0;
}

/* a raw line on the shared fd, its answer read there (one process marks) */
static void raw(const char *line, size_t n, const char *want)
{
	int fd = memacct_mark_fd();
	char ans[300];
	ssize_t r;

	size_t got = 0;

	if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n)
		die("send", errno);
	/* a line: on the shared socket memacct answers a byte a message */
	do {
		r = recv(fd, ans + got, sizeof(ans) - 1 - got, 0);
		if (r <= 0)
			die("recv", r < 0 ? errno : EPIPE);
		got += r;
	} while (ans[got - 1] != '\n' && got < sizeof(ans) - 1);
	ans[got] = '\0';
	if (strncmp(ans, want, strlen(want))) {
		fprintf(stderr, "phases: answer '%s' to '%.*s', want '%s'\n", ans, (int)n, line,
			want);
		exit(1);
	}
}

static int garbage(void)
{
	char longline[400], reply[300];
	static const char bad_utf8[] = "phase \xff\xfe\n";
	int answered = 0;

	memset(longline, 'x', sizeof(longline));
	raw("hello\n", 6, "error ");
	raw("phase \n", 7, "error ");
	raw(bad_utf8, sizeof(bad_utf8) - 1, "error ");
	raw("phase a\tb\n", 10, "error ");
	raw("phase a\nphase b\n", 16, "error ");
	raw(longline, sizeof(longline), "error ");
	raw("\0\0\0", 3, "error ");
	/* a message of 0 bytes: answered, the channel kept (it ended it) */
	raw("", 0, "error ");
	answered = 8;
	if (memacct_mark_line("nonsense\n", reply, sizeof(reply)) != -EPROTO)
		die("helper garbage", EPROTO);
	answered++;
	raw("phase raw ok\n", 13, "ok");
	answered++;
	mark("after garbage");
	answered++;
	printf("truth garbage_answered %d\n", answered);
	return 0;
}

static int storm(int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		int err;

		snprintf(name, sizeof(name), "s%d", i);
		err = memacct_mark(name);
		if (err && err != -EPROTO)	/* past the phases memacct keeps */
			die(name, err);
	}
	printf("truth storm_marks %d\n", n);
	return 0;
}

static int closefd(void)
{
	struct timespec a, b;
	int err;

	close(memacct_mark_fd());
	clock_gettime(CLOCK_MONOTONIC, &a);
	err = memacct_mark("after close");
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("truth closefd_err %d\n", err);
	printf("truth closefd_us %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000 +
	       (b.tv_nsec - a.tv_nsec) / 1000);
	return err < 0 ? 0 : 1;
}

static int procs(int n, int m)
{
	pid_t *kids = calloc(n, sizeof(*kids));
	long long max = 0, sum = 0;
	char name[32];

	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	for (int i = 0; i < m; i++) {
		struct timespec a, b;
		long long us;

		snprintf(name, sizeof(name), "m%d", i);
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (memacct_mark(name))
			die(name, EPROTO);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us = (long long)(b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
		sum += us;
		max = us > max ? us : max;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("truth mark_us_avg %lld\n", sum / m);
	printf("truth mark_us_max %lld\n", max);
	return 0;
}

static int concurrent(int n, int m)
{
	int ok = 0, st;
	char name[32];

	for (int k = 0; k < n; k++) {
		if (fork() == 0) {
			for (int i = 0; i < m; i++) {
				snprintf(name, sizeof(name), "c%d-%d", k, i);
				if (memacct_mark(name))
					_exit(1);
			}
			_exit(0);
		}
	}
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && !WEXITSTATUS(st);
	printf("truth concurrent_ok %d\n", ok);
	return ok == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "three";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "three"))
		return three();
	if (!strcmp(mode, "garbage"))
		return garbage();
	if (!strcmp(mode, "storm"))
		return storm(argc > 2 ? atoi(argv[2]) : 10000);
	if (!strcmp(mode, "closefd"))
		return closefd();
	if (!strcmp(mode, "procs"))
		return procs(argc > 2 ? atoi(argv[2]) : 100, argc > 3 ? atoi(argv[3]) : 20);
	if (!strcmp(mode, "concurrent"))
		return concurrent(argc > 2 ? atoi(argv[2]) : 8, argc > 3 ? atoi(argv[3]) : 25);
	if (!strcmp(mode, "kinds") && argc > 2)
		return kinds(argv[2]);
	fprintf(stderr, "usage: phases [three|garbage|storm N|closefd|procs N M|concurrent N M|"
			"kinds FILE]\n");
	return 2;
}
