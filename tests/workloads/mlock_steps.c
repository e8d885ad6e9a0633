/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * mlock_steps: ground truth for locked_vm (VmLck) and pinned_vm (VmPin).
 *
 * Each mode locks or pins memory in one or more steps; after every step it
 * reads VmLck and VmPin from /proc/self/status.  The peaks are the largest
 * readings, and the memory is held until exit, so the values at exit equal
 * the last readings.  Modes (SIZE = MiB, default 64):
 *
 *   mlock           mmap SIZE, mlock it (populates)       VmLck = SIZE
 *   mlock2_onfault  mmap SIZE, mlock2(MLOCK_ONFAULT), then touch half of it:
 *                   locked_vm counts the whole range at once, VmLck = SIZE,
 *                   resident locked memory = SIZE/2 (touched_bytes)
 *   map_locked      mmap(MAP_LOCKED | MAP_POPULATE) SIZE      VmLck = SIZE
 *   maps            mmap SIZE, mlock it, then every other 64 KiB of it
 *                   read-only: SIZE / 64 KiB locked mappings side by side
 *                   (16 a MiB), VmLck = SIZE; truth locked_mappings N
 *   mlockall        mmap SIZE, mlockall(MCL_CURRENT | MCL_FUTURE): every
 *                   mapping of the process is locked, VmLck = its whole VmSize
 *                   (SIZE plus libc, stack, ...)
 *   io_uring        mmap SIZE and write it, io_uring_setup, then
 *                   IORING_REGISTER_BUFFERS of it: pinned,  VmPin = SIZE
 *                   (RLIMIT_MEMLOCK is raised to infinity first and
 *                   CAP_IPC_LOCK dropped, so that 7.2 charges VmPin too:
 *                   vm_status.h; without CAP_SYS_RESOURCE, to the hard limit)
 *   steps           mmap 64 MiB; mlock the first 16 MiB (VmLck 16 MiB), the
 *                   next 48 (64 MiB), munlock the first 32 (32 MiB); SIZE is
 *                   ignored: peak 64 MiB, exit 32 MiB
 *   io_uring_steps  io_uring as above, then IORING_UNREGISTER_BUFFERS:
 *                   peak VmPin SIZE, exit 0 (a peak no exit value shows)
 *   steps2          mlock SIZE, munlock all of it (VmLck 0), then a child
 *                   mlocks SIZE/4 and exits: the cgroup's locked memory was
 *                   SIZE then SIZE/4, its peak SIZE (a munlock to 0 that
 *                   memacct missed would make it 5/4 SIZE)
 *
 * The readings of the deterministic modes (all but mlockall) are checked
 * against the expected values; a mismatch is an error (exit 1).
 *
 * Usage: mlock_steps MODE [MiB=64] [hold_seconds=0]
 *   hold_seconds: after the last step, print "ready PID" and sleep that long
 *   (still holding everything) so another tool can look at the process.
 * Output (stdout), per step:
 *   step N NAME
 *   kernel VmLck_bytes B
 *   kernel VmPin_bytes B
 * then:
 *   truth peak_locked_bytes B
 *   truth peak_pinned_vm_bytes B
 *   truth exit_locked_bytes B
 *   truth exit_pinned_vm_bytes B
 *   truth touched_bytes B          (mlock2_onfault only)
 *   truth pid PID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "vm_status.h"

#include "page.h"
#define MIB (1024 * 1024UL)

static long long peak_lck, peak_pin, last_lck, last_pin;
static int nstep;

static void die(const char *what)
{
	fprintf(stderr, "mlock_steps: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: mlock_steps {mlock|mlock2_onfault|map_locked|maps|mlockall|"
		"io_uring|io_uring_steps|steps|steps2} [MiB=64] [hold_seconds=0]\n");
	exit(2);
}

/* Read and print the kernel's counters after a step; check them if exp_* >= 0. */
static void step(const char *name, long long exp_lck, long long exp_pin)
{
	long long lck, pin;

	read_vm_status("mlock_steps", &lck, &pin);
	printf("step %d %s\n", ++nstep, name);
	printf("kernel VmLck_bytes %lld\n", lck);
	printf("kernel VmPin_bytes %lld\n", pin);
	fflush(stdout);
	if (lck > peak_lck)
		peak_lck = lck;
	if (pin > peak_pin)
		peak_pin = pin;
	last_lck = lck;
	last_pin = pin;
	if ((exp_lck >= 0 && lck != exp_lck) || (exp_pin >= 0 && pin != exp_pin)) {
		fprintf(stderr, "mlock_steps: after %s: VmLck %lld VmPin %lld, expected %lld %lld\n",
			name, lck, pin, exp_lck, exp_pin);
		exit(1);
	}
}

static char *map_anon(unsigned long len, int flags)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void touch(char *p, unsigned long len)
{
	for (unsigned long off = 0; off < len; off += PAGE)
		((volatile char *)p)[off] = 1;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, len, hold = 0, touched = 0;
	const char *mode;
	long long size;
	char *p, *end;

	if (argc < 2 || argc > 4)
		usage();
	mode = argv[1];
	if (argc > 2) {
		errno = 0;
		mib = strtoul(argv[2], &end, 10);
		if (errno || *end || mib == 0)
			usage();
	}
	if (argc > 3) {
		errno = 0;
		hold = strtoul(argv[3], &end, 10);
		if (errno || *end)
			usage();
	}
	len = mib * MIB;
	size = (long long)len;

	if (!strcmp(mode, "mlock")) {
		p = map_anon(len, 0);
		if (mlock(p, len))
			die("mlock");
		step("mlock", size, 0);
	} else if (!strcmp(mode, "mlock2_onfault")) {
		p = map_anon(len, 0);
		if (mlock2(p, len, MLOCK_ONFAULT))
			die("mlock2(MLOCK_ONFAULT)");
		step("mlock2_onfault", size, 0);
		touched = (len / 2) & ~(PAGE - 1);
		touch(p, touched);
		step("touch_half", size, 0);
	} else if (!strcmp(mode, "map_locked")) {
		p = map_anon(len, MAP_LOCKED | MAP_POPULATE);
		step("map_locked", size, 0);
	} else if (!strcmp(mode, "maps")) {
		unsigned long n = len / (64 * 1024);

		/* mlock SIZE, then every other 64 KiB read-only: n mappings that
		 * cannot merge, each locked */
		p = map_anon(len, 0);
		if (mlock(p, len))
			die("mlock");
		for (unsigned long i = 1; i < n; i += 2)
			if (mprotect(p + i * 64 * 1024, 64 * 1024, PROT_READ))
				die("mprotect");
		step("maps", size, 0);
		printf("truth locked_mappings %lu\n", n);
	} else if (!strcmp(mode, "mlockall")) {
		p = map_anon(len, 0);
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			die("mlockall");
		step("mlockall", -1, 0);
	} else if (!strcmp(mode, "io_uring") || !strcmp(mode, "io_uring_steps")) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		struct iovec iov;
		int ring;

		/* Without CAP_SYS_RESOURCE, settle for the hard limit: with
		 * CAP_IPC_LOCK io_uring does not check it anyway (and then
		 * charges VmPin only up to 7.1: io_uring_setup_charged()). */
		if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
			if (errno != EPERM || getrlimit(RLIMIT_MEMLOCK, &rl))
				die("setrlimit(RLIMIT_MEMLOCK, infinity)");
			rl.rlim_cur = rl.rlim_max;
			if (setrlimit(RLIMIT_MEMLOCK, &rl))
				die("setrlimit(RLIMIT_MEMLOCK, hard limit)");
		}
		p = map_anon(len, 0);
		touch(p, len);
		ring = io_uring_setup_charged("mlock_steps");
		step("io_uring_setup", 0, -1);
		iov.iov_base = p;
		iov.iov_len = len;
		if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
			die("io_uring_register(IORING_REGISTER_BUFFERS)");
		step("register_buffers", 0, size);
		/* io_uring: the ring stays open (and the buffer pinned) until exit */
		if (!strcmp(mode, "io_uring_steps")) {
			if (syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS,
				    NULL, 0) < 0)
				die("io_uring_register(IORING_UNREGISTER_BUFFERS)");
			step("unregister_buffers", 0, 0);
		}
	} else if (!strcmp(mode, "steps")) {
		len = 64 * MIB;
		p = map_anon(len, 0);
		if (mlock(p, 16 * MIB))
			die("mlock 16 MiB");
		step("mlock_16M", 16 * MIB, 0);
		if (mlock(p + 16 * MIB, 48 * MIB))
			die("mlock 48 MiB");
		step("mlock_48M_more", 64 * MIB, 0);
		if (munlock(p, 32 * MIB))
			die("munlock 32 MiB");
		step("munlock_32M", 32 * MIB, 0);
	} else if (!strcmp(mode, "steps2")) {
		pid_t child;
		int st;

		p = map_anon(len, 0);
		if (mlock(p, len))
			die("mlock");
		step("mlock", size, 0);
		if (munlock(p, len))
			die("munlock");
		step("munlock_all", 0, 0);
		fflush(stdout);
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			char *q = map_anon(len / 4, 0);

			if (mlock(q, len / 4))
				_exit(1);
			_exit(0);
		}
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
			die("child mlock");
		printf("truth cgroup_peak_locked_bytes %lld\n", size);
	} else {
		usage();
	}
	(void)p;

	printf("truth peak_locked_bytes %lld\n", peak_lck);
	printf("truth peak_pinned_vm_bytes %lld\n", peak_pin);
	printf("truth exit_locked_bytes %lld\n", last_lck);
	printf("truth exit_pinned_vm_bytes %lld\n", last_pin);
	if (touched)
		printf("truth touched_bytes %lu\n", touched);
	printf("truth pid %d\n", (int)getpid());
	if (hold) {
		struct timespec ts = { (time_t)hold, 0 };

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	if (fflush(stdout))
		die("stdout");
	return 0;	/* everything is still locked / pinned at exit */
}
