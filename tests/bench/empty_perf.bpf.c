// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * empty_perf.bpf.c - bench only (make bench): empty.bpf.c with the perf
 * event fault hook in place of the fault tracepoints: an empty program on
 * the PERF_COUNT_SW_PAGE_FAULTS software event (empty_attach opens one per
 * CPU, sample_period 1, as user/kernel/bpf_loader.c does). The floor of memacct
 * with MEMACCT_FAULT_HOOK=perf (paired.py arm floor_perf).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("perf_event")
int page_fault_perf(struct bpf_perf_event_data *ctx) { return 0; }

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc) { return 0; }

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch) { return 0; }

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork) { return 0; }

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit) { return 0; }
