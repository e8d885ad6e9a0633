// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * empty_sys.bpf.c - bench only (make bench): programs that do nothing on the
 * syscalls:sys_exit_* tracepoints memacct's pinned-memory tracking uses
 * (bpf/pins.bpf.c PINNED_EXIT). With empty.bpf.c they make the floor: the
 * same tracepoints as memacct. Apart, they show what attaching any syscall
 * tracepoint costs: it puts every syscall of every task on the kernel's
 * slow syscall path (TIF_SYSCALL_TRACEPOINT), whichever syscall it names.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY_EXIT(name) \
SEC("tp/syscalls/sys_exit_" #name) int sys_exit_##name(void *ctx) { return 0; }

EMPTY_EXIT(mlock)
EMPTY_EXIT(mlock2)
EMPTY_EXIT(munlock)
EMPTY_EXIT(mlockall)
EMPTY_EXIT(munlockall)
EMPTY_EXIT(mmap)
EMPTY_EXIT(munmap)
EMPTY_EXIT(mremap)
EMPTY_EXIT(brk)
EMPTY_EXIT(io_uring_register)
