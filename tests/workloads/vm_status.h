/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * vm_status.h: the kernel's own figures of a workload's memory for its ground
 * truth: pinned memory (mlock_spike.c, mlock_steps.c, dma_pin.c) and an
 * io_uring whose registered buffers every kernel charges to it; the file
 * pages it copied (reuse_tmpfs.c).
 */
#ifndef MEMACCT_VM_STATUS_H
#define MEMACCT_VM_STATUS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/*
 * VmLck (mm->locked_vm) and VmPin (mm->pinned_vm) of /proc/self/status, in
 * bytes; @prog names the workload in messages. Exits 1 when unreadable.
 */
static inline void read_vm_status(const char *prog, long long *lck, long long *pin)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	*lck = *pin = -1;
	if (!f) {
		fprintf(stderr, "%s: open /proc/self/status: %s\n", prog, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmLck:", 6))
			*lck = strtoll(line + 6, NULL, 10) * 1024;
		else if (!strncmp(line, "VmPin:", 6))
			*pin = strtoll(line + 6, NULL, 10) * 1024;
	}
	fclose(f);
	if (*lck < 0 || *pin < 0) {
		fprintf(stderr, "%s: no VmLck/VmPin in /proc/self/status\n", prog);
		exit(1);
	}
}

/*
 * The anonymous pages this process maps, in bytes, from the page tables
 * (fs/proc/task_mmu.c: "Anonymous:" of each mapping of /proc/self/smaps,
 * a walk of the page tables, not the RSS counters): into @file_private
 * those of private file-backed mappings (file pages it copied on write:
 * the dynamic loader's relocation writes and .data, about ten pages that
 * vary with the libraries and the machine), into @other the rest (heap,
 * stack, anonymous mappings, THPs included: in a process that never forked
 * and freed nothing, its zero fills). @prog names the workload in
 * messages. Exits 1 when unreadable.
 */
static inline void anon_bytes_of_self(const char *prog, long long *file_private,
				      long long *other)
{
	char line[512], perms[8];
	unsigned long ino;
	long long kb;
	int in_file = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	*file_private = *other = 0;
	if (!f) {
		fprintf(stderr, "%s: open /proc/self/smaps: %s\n", prog, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's header: start-end perms offset dev inode [path] */
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %lu", perms, &ino) == 2)
			in_file = ino != 0 && perms[3] == 'p';
		else if (sscanf(line, "Anonymous: %lld kB", &kb) == 1)
			*(in_file ? file_private : other) += kb * 1024;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read /proc/self/smaps: %s\n", prog, strerror(errno));
		exit(1);
	}
	fclose(f);
}

/*
 * The stack pages execve() filled with the new image's argument and
 * environment strings, in bytes: from the page of mm->arg_start (field 48 of
 * /proc/self/stat) to the end of the [stack] mapping. fs/exec.c
 * get_arg_page() allocates them through the exec'ing task's old mm, before
 * the new image exists; the pointers and auxv under them are written from
 * the new image (create_elf_tables()). @prog names the workload in
 * messages. Exits 1 when unreadable.
 */
static inline long long exec_arg_bytes(const char *prog)
{
	char buf[4096], *p;
	unsigned long long arg_start = 0, lo, hi, top = 0;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces: fields from 3 on follow it */
	for (int field = 2; p && field < 48; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &arg_start) != 1 || !arg_start) {
		fprintf(stderr, "%s: no arg_start in /proc/self/stat\n", prog);
		exit(1);
	}
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (strstr(buf, "[stack]") && sscanf(buf, "%llx-%llx", &lo, &hi) == 2)
			top = hi;
	if (f)
		fclose(f);
	if (!top || top <= arg_start) {
		fprintf(stderr, "%s: no [stack] above arg_start in /proc/self/maps\n", prog);
		exit(1);
	}
	return (long long)(top - (arg_start & ~(unsigned long long)(page - 1)));
}

/*
 * The peak charge of this process's memory cgroup, in bytes, as the kernel
 * keeps it: memory.peak (v2, 5.19+) or memory.max_usage_in_bytes (v1), of
 * the cgroup /proc/self/cgroup names under /sys/fs/cgroup (v2) or
 * /sys/fs/cgroup/memory (v1). -1 when neither can be read.
 */
static inline long long cgroup_peak_bytes(void)
{
	char line[4096], path[4200] = "";
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':'), *q = p ? strchr(p + 1, ':') : NULL;

		if (!q)
			continue;
		q[strcspn(q, "\n")] = '\0';
		if (!strncmp(p, ":memory:", 8))
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.max_usage_in_bytes",
				 q + 1);
		else if (!strncmp(line, "0::", 3) && !path[0])
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.peak", q + 1);
	}
	if (f)
		fclose(f);
	f = path[0] ? fopen(path, "r") : NULL;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The file pages this process copied on write and still maps, in bytes
 * (anon_bytes_of_self()). */
static inline long long private_file_anon_bytes(const char *prog)
{
	long long file_private, other;

	anon_bytes_of_self(prog, &file_private, &other);
	return file_private;
}

/*
 * io_uring_setup() of a ring whose IORING_REGISTER_BUFFERS the kernel
 * charges to pinned_vm (VmPin) on every kernel. A ring set up with
 * CAP_IPC_LOCK charged pinned_vm up to 7.1 and charges nothing since 7.2
 * (df0a52537c0f "io_uring/rsrc: add huge page accounting for registered
 * buffers": io_buffer_account_pin() returns early when !ctx->user, and
 * io_uring_create() leaves ctx->user NULL with CAP_IPC_LOCK); without the
 * capability every kernel charges user->locked_vm, checked against
 * RLIMIT_MEMLOCK, and pinned_vm. So when RLIMIT_MEMLOCK is unlimited (the
 * caller raised it), CAP_IPC_LOCK leaves the effective set first; otherwise
 * the capabilities stay (the limit would refuse the buffers) and on 7.2 and
 * later VmPin stays 0. The ring's fd; exits 1 on error.
 */
static inline int io_uring_setup_charged(const char *prog)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
	struct io_uring_params params;
	struct rlimit rl;
	int ring;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur == RLIM_INFINITY &&
	    !syscall(SYS_capget, &hdr, cap)) {
		cap[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
		if (syscall(SYS_capset, &hdr, cap)) {
			fprintf(stderr, "%s: capset (drop CAP_IPC_LOCK): %s\n", prog,
				strerror(errno));
			exit(1);
		}
	}
	memset(&params, 0, sizeof(params));
	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0) {
		fprintf(stderr, "%s: io_uring_setup: %s\n", prog, strerror(errno));
		exit(1);
	}
	return ring;
}

/*
 * Outstanding FOLL_PIN pages host-wide: nr_foll_pin_acquired -
 * nr_foll_pin_released of /proc/vmstat, the per-CPU diffs folded first
 * (/proc/sys/vm/stat_refresh, as root). -1 on a kernel without them;
 * exits 1 when /proc/vmstat cannot be read.
 */
static inline long long foll_pinned_pages(const char *prog)
{
	char line[128];
	long long acq = -1, rel = -1;
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");

	if (f && (fputs("1\n", f) < 0 || fclose(f)))
		fprintf(stderr, "%s: stat_refresh: %s\n", prog, strerror(errno));
	f = fopen("/proc/vmstat", "r");
	if (!f) {
		fprintf(stderr, "%s: open /proc/vmstat: %s\n", prog, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "nr_foll_pin_acquired ", 21))
			acq = strtoll(line + 21, NULL, 10);
		else if (!strncmp(line, "nr_foll_pin_released ", 21))
			rel = strtoll(line + 21, NULL, 10);
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

#endif /* MEMACCT_VM_STATUS_H */
