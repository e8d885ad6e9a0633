/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * nv_ioctl: the NVIDIA driver's pinning calls with crafted parameters, on a
 * host without a GPU. In a private directory it makes character devices
 * named as the driver's (nvidiactl, nvidia0) and one named otherwise
 * (gpu0), all with /dev/null's numbers (1, 3), and issues on them the real
 * command numbers of open-gpu-kernel-modules (nv_escape.h,
 * nv-ioctl-numbers.h): NV_ESC_RM_ALLOC_MEMORY 0xc0384627 with an
 * NVOS02_PARAMETERS of class NV01_MEMORY_SYSTEM_OS_DESCRIPTOR (0x71) naming
 * a 1 MiB buffer, the same behind NV_ESC_IOCTL_XFER_CMD 0xc01046d3, another
 * class, layouts of another size, an unreadable parameter block, and
 * NV_ESC_RM_FREE 0xc0104629. /dev/null answers every ioctl with ENOTTY, so
 * no call pins anything: what memacct decoded is all it can report, and a
 * failed call must leave nothing behind.
 *
 * Usage: nv_ioctl [HOLD_S]   (HOLD_S: sleep that long before exiting)
 * Output (stdout), the truth memacct's figures are checked against:
 *   truth nv_pin_calls_failed N     OS-descriptor allocations on nvidia*
 *                                   devices, all failed (ENOTTY)
 *   truth nv_range_unknown N        calls of another layout, or parameters
 *                                   not readable
 *   truth nv_calls_elsewhere N      the same calls on a device not named nvidia*
 *   truth enotty N                  calls that returned ENOTTY (all)
 *   truth buffer_start 0x...        the buffer the crafted calls name
 * Exits 77 ("skip ...") when it cannot make device nodes (not root, nodev).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define NV_ALLOC_MEMORY	0xc0384627UL	/* _IOWR('F', 0x27, 56) */
#define NV_FREE		0xc0104629UL	/* _IOWR('F', 0x29, 16) */
#define NV_XFER		0xc01046d3UL	/* _IOWR('F', 200 + 11, 16) */
#define NV_ALLOC_48	0xc0304627UL	/* _IOWR('F', 0x27, 48): a layout memacct does not know */

struct nvos02_fd {			/* NVOS02_PARAMETERS + int fd (nv-ioctl.h) */
	uint32_t hroot, hparent, hnew, hclass, flags, pad;
	uint64_t pmemory, limit;
	uint32_t status, pad2;
	int32_t fd, pad3;
};

struct nvos00 {
	uint32_t hroot, hparent, hold, status;
};

struct xfer {
	uint32_t cmd, size;
	uint64_t ptr;
};

static int enotty, calls;

static void call(int fd, unsigned long cmd, void *arg)
{
	calls++;
	if (ioctl(fd, cmd, arg) < 0 && errno == ENOTTY)
		enotty++;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/memacct-nv-XXXXXX", path[64];
	const char *names[] = { "nvidiactl", "nvidia0", "gpu0" };
	int fds[3], hold = argc > 1 ? atoi(argv[1]) : 0;
	size_t len = 1 << 20;
	struct nvos02_fd a;
	struct nvos00 f;
	struct xfer x;
	void *buf, *gone;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) || (fds[i] = open(path, O_RDWR)) < 0) {
			fprintf(stderr, "skip: cannot make device nodes in %s: %s\n", dir,
				strerror(errno));
			for (int j = 0; j <= i; j++) {
				snprintf(path, sizeof(path), "%s/%s", dir, names[j]);
				unlink(path);
			}
			rmdir(dir);
			return 77;
		}
		unlink(path);	/* the open fds keep their dentry's name */
	}
	rmdir(dir);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || gone == MAP_FAILED)
		return 1;
	memset(buf, 1, len);

	memset(&a, 0, sizeof(a));
	a.hroot = 0xc1d00001;
	a.hparent = 0x5c000002;
	a.hnew = 0x5c000070;
	a.hclass = 0x71;	/* NV01_MEMORY_SYSTEM_OS_DESCRIPTOR */
	a.flags = 0x40001010;
	a.pmemory = (uintptr_t)buf;
	a.limit = len - 1;
	a.fd = fds[1];
	/* decoded: direct, and behind the XFER indirection, on both names */
	call(fds[0], NV_ALLOC_MEMORY, &a);
	call(fds[1], NV_ALLOC_MEMORY, &a);
	x = (struct xfer){ 0x27, sizeof(a), (uintptr_t)&a };
	call(fds[0], NV_XFER, &x);
	/* another class: not a pin of user memory, not counted */
	a.hclass = 0x40;
	call(fds[0], NV_ALLOC_MEMORY, &a);
	a.hclass = 0x71;
	/* layouts of another size, direct and behind XFER; an unreadable block */
	call(fds[0], NV_ALLOC_48, &a);
	x = (struct xfer){ 0x27, 48, (uintptr_t)&a };
	call(fds[0], NV_XFER, &x);
	call(fds[0], NV_ALLOC_MEMORY, gone);
	/* a free of the handles: no range is known (all failed) */
	f = (struct nvos00){ a.hroot, a.hparent, a.hnew, 0 };
	call(fds[0], NV_FREE, &f);
	/* the same allocation on a device of another name: not decoded */
	call(fds[2], NV_ALLOC_MEMORY, &a);

	printf("truth nv_pin_calls_failed 3\n");
	printf("truth nv_range_unknown 3\n");
	printf("truth nv_calls_elsewhere 1\n");
	printf("truth enotty %d\n", enotty);
	printf("truth calls %d\n", calls);
	printf("truth buffer_start %p\n", buf);
	fflush(stdout);
	if (hold > 0)
		sleep(hold);
	return 0;
}
