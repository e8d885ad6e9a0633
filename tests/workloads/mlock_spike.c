/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * mlock_spike: ground truth for `memacct audit --watch`: pinned memory held
 * for a moment only, then released while the process keeps running, so that
 * only an event-driven watch can see it.
 *
 * Maps and writes MiB first, prints "ready PID" and waits for SIGUSR1 (at most
 * 120 s: then it exits 1); then
 *   mlock     mlock(MiB), read VmLck, sleep SPIKE_MS, munlock, read VmLck
 *   io_uring  io_uring_register(IORING_REGISTER_BUFFERS) of MiB, read VmPin,
 *             sleep SPIKE_MS, IORING_UNREGISTER_BUFFERS, read VmPin
 * and holds HOLD seconds before exiting 0.
 *
 * Usage: mlock_spike {mlock|io_uring} MiB SPIKE_MS HOLD
 * Output (stdout):
 *   ready PID
 *   truth pin_call_ns T            CLOCK_MONOTONIC just before the mlock/register
 *   truth pin_return_ns T          ... and just after it returned
 *   truth spike_locked_bytes B     VmLck during the spike (mlock)
 *   truth spike_pinned_vm_bytes B  VmPin during the spike (io_uring)
 *   truth after_locked_bytes B     VmLck after munlock / after unregistering
 *   truth after_pinned_vm_bytes B  VmPin after
 *   done
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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

#include "vm_status.h"

#define MIB (1024 * 1024UL)

static void die(const char *what)
{
	fprintf(stderr, "mlock_spike: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: mlock_spike {mlock|io_uring} MiB SPIKE_MS HOLD\n");
	exit(2);
}

static unsigned long arg(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s)
		usage();
	return v;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long lck, pin, spike_lck, spike_pin, t0, t1;
	unsigned long len, spike_ms, hold;
	struct iovec iov;
	sigset_t set;
	int sig, ring = -1;
	bool uring;
	char *p;

	if (argc != 5)
		usage();
	if (strcmp(argv[1], "mlock") && strcmp(argv[1], "io_uring"))
		usage();
	uring = !strcmp(argv[1], "io_uring");
	len = arg(argv[2]) * MIB;
	spike_ms = arg(argv[3]);
	hold = arg(argv[4]);

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 1, len);
	if (uring) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		if (setrlimit(RLIMIT_MEMLOCK, &rl) && errno != EPERM)
			die("setrlimit(RLIMIT_MEMLOCK)");
		ring = io_uring_setup_charged("mlock_spike");
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* bounded: a test that failed before signalling leaves no process behind */
	sig = sigtimedwait(&set, NULL, &(struct timespec){ .tv_sec = 120 });
	if (sig != SIGUSR1)
		die("waiting 120 s for SIGUSR1");

	t0 = mono_ns();
	if (uring) {
		iov.iov_base = p;
		iov.iov_len = len;
		if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
			die("io_uring_register(IORING_REGISTER_BUFFERS)");
	} else if (mlock(p, len)) {
		die("mlock");
	}
	t1 = mono_ns();
	read_vm_status("mlock_spike", &spike_lck, &spike_pin);
	sleep_ms(spike_ms);
	if (uring) {
		if (syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
			die("io_uring_register(IORING_UNREGISTER_BUFFERS)");
	} else if (munlock(p, len)) {
		die("munlock");
	}
	read_vm_status("mlock_spike", &lck, &pin);
	printf("truth pin_call_ns %lld\n", t0);
	printf("truth pin_return_ns %lld\n", t1);
	printf("truth spike_%s %lld\n", uring ? "pinned_vm_bytes" : "locked_bytes",
	       uring ? spike_pin : spike_lck);
	printf("truth after_locked_bytes %lld\n", lck);
	printf("truth after_pinned_vm_bytes %lld\n", pin);
	printf("done\n");
	fflush(stdout);
	sleep(hold);
	return 0;
}
