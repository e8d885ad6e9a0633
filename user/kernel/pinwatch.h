/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pinwatch.h - the BPF side of `memacct audit --watch`: only the pinned-memory
 * programs (sys_exit of mlock, mlock2, munlock, mlockall, munlockall, mmap,
 * munmap, mremap, brk, io_uring_register) plus process exit, exec and cgroup moves,
 * with the pin_events ring buffer switched on. Each change of a process's
 * mm->locked_vm / mm->pinned_vm arrives as one event the moment the syscall
 * returns, so a spike shorter than any polling interval is seen.
 */
#ifndef MEMACCT_PINWATCH_H
#define MEMACCT_PINWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup.h"

struct pinwatch;

struct pinwatch_event {
	pid_t pid;
	uint64_t start_boottime_ns;	/* with pid: the process (pid reuse) */
	uint64_t memcg_id;		/* memory cgroup charged (directory inode) */
	uint64_t ts_ns;			/* CLOCK_MONOTONIC of the change (BPF) */
	bool exited;			/* the process's last thread exited */
	uint64_t locked_bytes;		/* mm->locked_vm (VmLck); 0 when exited */
	uint64_t pinned_vm_bytes;	/* mm->pinned_vm (VmPin); 0 when exited */
	uint64_t dma_bytes;		/* DMA pins (FOLL_PIN, not in VmPin; not
					 * net of mlock); 0 when exited */
	long syscall_nr;		/* syscall that changed them; -1 for exits,
					 * MEMACCT_PIN_EV_KWORKER for a later unpin */
	long syscall_ret;
	char comm[16];
};

/* Called for each event; a negative return stops pinwatch_poll() with it. */
typedef int (*pinwatch_fn)(void *ctx, const struct pinwatch_event *ev);

/*
 * pinwatch_open() - load and attach the pinned-memory programs, limited to
 * the memory cgroup @filter and its descendants (NULL or the root: every
 * process). Needs root and a kernel with BTF (loader_check_env()). Prints
 * nothing itself except libbpf's log under -v; returns 0 or negative errno
 * (-EPERM, -ENOENT without BTF, or libbpf's load/attach error).
 */
int pinwatch_open(const struct memcg *filter, pinwatch_fn fn, void *ctx,
		  struct pinwatch **out);

/*
 * pinwatch_poll() - wait up to @timeout_ms for events and call the callback
 * for each, in the order the kernel wrote them per ring. Returns the number
 * handled, -EINTR when a signal came, or another negative errno.
 */
int pinwatch_poll(struct pinwatch *w, int timeout_ms);

/* pinwatch_lost() - change events the ring buffer had no room for, so far. */
uint64_t pinwatch_lost(struct pinwatch *w);

/* pinwatch_syscall_name() - "mlock", "munlock", ... for an event's syscall_nr. */
const char *pinwatch_syscall_name(long nr);

void pinwatch_close(struct pinwatch *w);

#endif
