// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * empty.bpf.c - bench only (make bench): programs that do nothing, on the
 * tracepoints memacct's hot path uses, the same attach type (tp_btf). What
 * they cost per fault is the floor: what any always-on tracepoint program
 * costs here before it does any work (tests/bench.sh, docs/overhead.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/page_fault_user")
int BPF_PROG(page_fault_user) { return 0; }

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(page_fault_kernel) { return 0; }

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc) { return 0; }

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch) { return 0; }

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork) { return 0; }

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit) { return 0; }
