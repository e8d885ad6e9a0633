// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * nvioctl_log.c - LD_PRELOAD ground truth for tests/gpu/run.sh: every ioctl
 * a process makes on /dev/nvidia* as one line in $NVIOCTL_LOG.PID, with the
 * RM parameter blocks memacct decodes (NVOS02 of NV_ESC_RM_ALLOC_MEMORY,
 * NVOS00 of NV_ESC_RM_FREE, NVOS21 of NV_ESC_RM_ALLOC, NVOS32's function of
 * NV_ESC_RM_VID_HEAP_CONTROL, and the same behind NV_ESC_IOCTL_XFER_CMD),
 * read before and after the call, and each /dev/nvidia-uvm ioctl's number.
 * Layouts: open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/nvos.h, kernel-open/common/inc/nv-ioctl.h.
 * NOT RUN in CI (needs the NVIDIA driver). Built on the GPU host:
 *   cc -shared -fPIC -O2 -o nvioctl_log.so nvioctl_log.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

struct xfer { uint32_t cmd, size; uint64_t ptr; };
struct nvos02 { uint32_t hroot, hparent, hnew, hclass, flags, pad; uint64_t pmemory, limit;
		uint32_t status, pad2; };
struct nvos00 { uint32_t hroot, hparent, hold, status; };
struct nvos21 { uint32_t hroot, hparent, hnew, hclass; uint64_t palloc; uint32_t psize, status; };
struct nvos32 { uint32_t hroot, hparent, function, hvaspace; int16_t ivc, pad; uint32_t status;
		uint64_t total, free; };

static int logfd = -1;

static void logf_(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (logfd < 0) {
		const char *p = getenv("NVIOCTL_LOG");

		if (!p)
			return;
		snprintf(buf, sizeof(buf), "%s.%d", p, getpid());
		logfd = open(buf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (logfd < 0)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(logfd, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1);
}

static void rm(const char *when, unsigned nr, unsigned size, void *p)
{
	if (nr == 0x27 && size >= sizeof(struct nvos02)) {
		struct nvos02 *o = p;

		logf_("  %s ALLOC_MEMORY root %#x parent %#x new %#x class %#x flags %#x pmemory %#lx "
		      "limit %#lx status %#x\n", when, o->hroot, o->hparent, o->hnew, o->hclass,
		      o->flags, (unsigned long)o->pmemory, (unsigned long)o->limit, o->status);
	} else if (nr == 0x29 && size >= sizeof(struct nvos00)) {
		struct nvos00 *o = p;

		logf_("  %s FREE root %#x parent %#x old %#x status %#x\n", when, o->hroot,
		      o->hparent, o->hold, o->status);
	} else if (nr == 0x2b && size >= sizeof(struct nvos21)) {
		struct nvos21 *o = p;

		logf_("  %s ALLOC root %#x parent %#x new %#x class %#x psize %u status %#x\n", when,
		      o->hroot, o->hparent, o->hnew, o->hclass, o->psize, o->status);
		if (o->hclass == 0x71 || o->hclass == 0x3e || o->hclass == 0x40) {
			uint64_t *q = (uint64_t *)(uintptr_t)o->palloc;

			if (q && o->psize >= 64)
				logf_("  %s   allocparms %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx\n", when,
				      q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
		}
	} else if (nr == 0x4a && size >= sizeof(struct nvos32)) {
		struct nvos32 *o = p;

		logf_("  %s VID_HEAP root %#x parent %#x function %u status %#x\n", when, o->hroot,
		      o->hparent, o->function, o->status);
		if (o->function == 27) {
			uint64_t *q = p;

			logf_("  %s   words %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx\n",
			      when, q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12], q[13],
			      q[14], q[15]);
		}
	}
}

static void dump(const char *when, int fd, unsigned long cmd, void *arg, long ret)
{
	unsigned nr = cmd & 0xff, size = (cmd >> 16) & 0x3fff;

	if (!strcmp(when, "enter"))
		logf_("ioctl fd %d cmd %#lx nr %#x size %u arg %p\n", fd, cmd, nr, size, arg);
	else
		logf_("  ret %ld\n", ret);
	if (!arg)
		return;
	if (nr == 0xd3 && size == sizeof(struct xfer)) {
		struct xfer *x = arg;

		if (!strcmp(when, "enter"))
			logf_("  xfer cmd %#x size %u ptr %#lx\n", x->cmd, x->size, (unsigned long)x->ptr);
		rm(when, x->cmd, x->size, (void *)(uintptr_t)x->ptr);
	} else {
		rm(when, nr, size, arg);
	}
}

/* 1: an RM device (/dev/nvidiactl, /dev/nvidiaN), 2: /dev/nvidia-uvm, 0: other */
static int is_nvidia(int fd)
{
	char l[64], t[128];
	ssize_t n;

	snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
	n = readlink(l, t, sizeof(t) - 1);
	if (n <= 0)
		return 0;
	t[n] = 0;
	if (strncmp(t, "/dev/nvidia", 11))
		return 0;
	return strncmp(t, "/dev/nvidia-uvm", 15) ? 1 : 2;
}

int ioctl(int fd, unsigned long cmd, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;
	int nv, r;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	nv = is_nvidia(fd);
	if (nv == 1 && ((cmd >> 8) & 0xff) == 'F')
		dump("enter", fd, cmd, arg, 0);
	r = real(fd, cmd, arg);
	if (nv == 1 && ((cmd >> 8) & 0xff) == 'F')
		dump("exit", fd, cmd, arg, r);
	else if (nv == 2)	/* UVM: which calls run, for the windows' sharing */
		logf_("uvm fd %d cmd %lu ret %d\n", fd, cmd, r);
	return r;
}
