/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * dma_pin: ground truth for DMA pins (FOLL_PIN pages no mm counter shows):
 * an AF_XDP socket whose UMEM registers XDP_MiB (pin_user_pages(FOLL_LONGTERM)
 * in net/xdp/xdp_umem.c, counted in neither VmLck nor VmPin), optionally an
 * io_uring with URING_MiB of registered buffers (FOLL_PIN and VmPin) and an
 * mlock of the UMEM buffer (VmLck too). Driven by lines on stdin:
 *   pin    register (io_uring first, then XDP_UMEM_REG, then mlock), print
 *          truth lines, then "pinned"
 *   close  close the AF_XDP socket (the kernel unpins ~100 ms later, from a
 *          kworker), print "closed"
 *   exit   exit 0 (also on EOF)
 *   many N CPU HIDE
 *          on CPU CPU, N new AF_XDP sockets, each registering its own
 *          XDP_MiB UMEM right after the other (two of these at once on two
 *          CPUs: overlapping pins), print "truth many_pages P" (N times the
 *          UMEM's pages), then "done". HIDE 1: each xdp_umem_reg is read
 *          by the kernel from a page this process has never touched (a
 *          fresh MAP_SHARED mapping of a memfd), which a tracepoint cannot
 *          read (no page fault there): memacct cannot learn the size and
 *          measures the pins as for any driver.
 *
 * Usage: dma_pin XDP_MiB URING_MiB MLOCK(0|1) [SHARED(0|1)]
 *   SHARED 1: the UMEM buffer is MAP_SHARED|MAP_ANONYMOUS, the mapping
 *   /proc/PID/maps names "/dev/zero (deleted)" rw-s (shmem), as CUDA's
 *   cudaHostAlloc buffers (pin_memory=True) are.
 * Output (stdout):
 *   ready PID
 *   truth foll_pin_delta_pages N   nr_foll_pin_acquired - released after the
 *                                  pins minus before (stat_refresh first;
 *                                  other processes' pins meanwhile included)
 *   truth locked_bytes B           VmLck after the pins
 *   truth pinned_vm_bytes B        VmPin after the pins
 *   pinned | closed
 * Exits 77 with "skip REASON" on stderr when the kernel has no AF_XDP
 * sockets or no FOLL_PIN counters.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_xdp.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include "page.h"

#include "vm_status.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define MIB (1024 * 1024UL)

static void die(const char *what)
{
	fprintf(stderr, "dma_pin: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: dma_pin XDP_MiB URING_MiB MLOCK(0|1) [SHARED(0|1)]\n");
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

/* The "many" command: @n sockets with their own @len UMEM each, on @cpu. */
static void pin_many(unsigned long n, int cpu, int hide, unsigned long len)
{
	struct xdp_umem_reg reg = { .len = len, .chunk_size = 4096 };
	int mfd = hide ? memfd_create("dma_pin_reg", 0) : -1;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	if (hide && mfd < 0)
		die("memfd_create");
	for (unsigned long i = 0; i < n; i++) {
		void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct xdp_umem_reg *arg = &reg;
		int s = socket(AF_XDP, SOCK_RAW, 0);

		if (buf == MAP_FAILED || s < 0)
			die("mmap or socket");
		memset(buf, 1, len);
		reg.addr = (unsigned long)buf;
		if (hide) {
			if (pwrite(mfd, &reg, sizeof(reg), 0) != sizeof(reg))
				die("pwrite");
			arg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mfd, 0);
			if (arg == MAP_FAILED)
				die("mmap memfd");
		}
		if (setsockopt(s, SOL_XDP, XDP_UMEM_REG, arg, sizeof(reg)))
			die("setsockopt(XDP_UMEM_REG)");
		if (hide)
			munmap(arg, 4096);
	}
	printf("truth many_pages %lu\n", n * (len / PAGE));
	printf("done\n");
}

int main(int argc, char **argv)
{
	unsigned long xdp_len, uring_len;
	long long before, after, lck, pin;
	int xsk = -1, ring = -1, do_mlock, shared = 0;
	char *xbuf, *ubuf = NULL, cmd[64];
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (argc != 4 && argc != 5)
		usage();
	if (argc == 5)
		shared = arg(argv[4]);
	xdp_len = arg(argv[1]) * MIB;
	uring_len = arg(argv[2]) * MIB;
	do_mlock = arg(argv[3]);
	if (foll_pinned_pages("dma_pin") < 0) {
		fprintf(stderr, "skip: no nr_foll_pin_* in /proc/vmstat (kernel < 5.7)\n");
		return 77;
	}
	xsk = socket(AF_XDP, SOCK_RAW, 0);
	if (xsk < 0) {
		fprintf(stderr, "skip: socket(AF_XDP): %s (no CONFIG_XDP_SOCKETS)\n",
			strerror(errno));
		return 77;
	}
	/* the UMEM charges user->locked_vm against RLIMIT_MEMLOCK (root may) */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) && errno != EPERM)
		die("setrlimit(RLIMIT_MEMLOCK)");
	xbuf = mmap(NULL, xdp_len, PROT_READ | PROT_WRITE,
		    (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (xbuf == MAP_FAILED)
		die("mmap");
	memset(xbuf, 1, xdp_len);
	if (uring_len) {
		ubuf = mmap(NULL, uring_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ubuf == MAP_FAILED)
			die("mmap");
		memset(ubuf, 1, uring_len);
		ring = io_uring_setup_charged("dma_pin");
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(cmd, sizeof(cmd), stdin)) {
		if (!strcmp(cmd, "pin\n")) {
			struct xdp_umem_reg reg = {
				.addr = (unsigned long)xbuf, .len = xdp_len,
				.chunk_size = 4096, .headroom = 0,
			};

			before = foll_pinned_pages("dma_pin");
			if (ring >= 0) {
				struct iovec iov = { ubuf, uring_len };

				if (syscall(__NR_io_uring_register, ring,
					    IORING_REGISTER_BUFFERS, &iov, 1) < 0)
					die("io_uring_register(IORING_REGISTER_BUFFERS)");
			}
			if (setsockopt(xsk, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
				die("setsockopt(XDP_UMEM_REG)");
			if (do_mlock && mlock(xbuf, xdp_len))
				die("mlock");
			after = foll_pinned_pages("dma_pin");
			read_vm_status("dma_pin", &lck, &pin);
			printf("truth foll_pin_delta_pages %lld\n", after - before);
			printf("truth locked_bytes %lld\n", lck);
			printf("truth pinned_vm_bytes %lld\n", pin);
			printf("pinned\n");
		} else if (!strcmp(cmd, "close\n")) {
			close(xsk);
			printf("closed\n");
		} else if (!strncmp(cmd, "many ", 5)) {
			unsigned long n;
			int cpu, hide;

			if (sscanf(cmd, "many %lu %d %d", &n, &cpu, &hide) != 3)
				usage();
			pin_many(n, cpu, hide, xdp_len);
		} else if (!strcmp(cmd, "exit\n")) {
			break;
		}
		fflush(stdout);
	}
	return 0;
}
