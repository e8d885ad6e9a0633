// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* pinwatch.c - pinned-memory change events for audit --watch (pinwatch.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "memacct.h"
#include "memacct.skel.h"
#include "pinwatch.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define PIN_RING_BYTES	(256 << 10)	/* ~2900 events of 80 bytes + 8 of header */
#define EXIT_RING_BYTES	(256 << 10)

struct pinwatch {
	struct memacct_bpf *skel;
	struct ring_buffer *rb;
	pinwatch_fn fn;
	void *ctx;
	uint64_t page_size;
};

static const struct {
	long nr;
	const char *name;
} syscalls[] = {
	{ SYS_mlock, "mlock" },
	{ SYS_mlock2, "mlock2" },
	{ SYS_munlock, "munlock" },
	{ SYS_mlockall, "mlockall" },
	{ SYS_munlockall, "munlockall" },
	{ SYS_mmap, "mmap" },
	{ SYS_munmap, "munmap" },
	{ SYS_mremap, "mremap" },
	{ SYS_brk, "brk" },
	{ SYS_io_uring_register, "io_uring_register" },
};

const char *pinwatch_syscall_name(long nr)
{
	if (nr < 0)
		return "exit";
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return "syscall";
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static bool tracefs_event_exists(const char *cat_name)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };
	char path[256];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", roots[i], cat_name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Only what the watch needs: the syscall exits that move locked_vm and
 * pinned_vm, process exit (the record leaves the procs map, the process's
 * pinned memory goes with its mm), exec (the comm events carry) and cgroup
 * moves (memcg_id follows).
 * The fault, allocation and NUMA programs stay unloaded: nothing on the
 * page-fault path. Returns how many syscall programs will load.
 */
static int choose_programs(struct memacct_bpf *skel, const struct btf *btf)
{
	struct bpf_program *prog;
	int nsys = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		const char *sec = bpf_program__section_name(prog);
		bool want = !strncmp(name, "sys_exit_", 9) ||
			    !strcmp(name, "sched_process_exit") ||
			    !strcmp(name, "sched_process_exec") ||
			    !strcmp(name, "cgroup_attach_task");
		char buf[128];

		if (want && !strncmp(sec, "tp_btf/", 7)) {
			snprintf(buf, sizeof(buf), "btf_trace_%s", sec + 7);
			want = btf && btf__find_by_name_kind(btf, buf, BTF_KIND_TYPEDEF) > 0;
		} else if (want && !strncmp(sec, "tp/", 3)) {
			want = tracefs_event_exists(sec + 3);
			nsys += want;
		}
		bpf_program__set_autoload(prog, want);
	}
	/* the page-fault state is used by none of them (and needs 5.11+) */
	bpf_map__set_autocreate(skel->maps.fault_states, false);
	return nsys;
}

static int on_pin_event(void *ctx, void *data, size_t len)
{
	const struct memacct_pin_event *e = data;
	struct pinwatch *w = ctx;
	struct pinwatch_event ev = { 0 };

	if (len < sizeof(*e))
		return 0;
	ev.pid = e->key.tgid;
	ev.start_boottime_ns = e->key.start_boottime_ns;
	ev.memcg_id = e->memcg_id;
	ev.ts_ns = e->ts_ns;
	ev.locked_bytes = e->locked_vm_pages * w->page_size;
	ev.pinned_vm_bytes = e->pinned_vm_pages * w->page_size;
	ev.syscall_nr = e->syscall_nr;
	ev.syscall_ret = e->syscall_ret;
	memcpy(ev.comm, e->comm, sizeof(ev.comm));
	ev.comm[sizeof(ev.comm) - 1] = '\0';
	return w->fn(w->ctx, &ev);
}

static int on_exit_event(void *ctx, void *data, size_t len)
{
	const struct memacct_exit_event *e = data;
	struct pinwatch *w = ctx;
	struct pinwatch_event ev = { 0 };

	if (len < sizeof(*e))
		return 0;
	ev.pid = e->key.tgid;
	ev.start_boottime_ns = e->key.start_boottime_ns;
	ev.memcg_id = e->proc.memcg_id;
	ev.exited = true;
	ev.syscall_nr = -1;
	memcpy(ev.comm, e->proc.comm, sizeof(ev.comm));
	ev.comm[sizeof(ev.comm) - 1] = '\0';
	return w->fn(w->ctx, &ev);
}

int pinwatch_open(const struct memcg *filter, pinwatch_fn fn, void *ctx,
		  struct pinwatch **out)
{
	struct pinwatch *w;
	struct btf *btf;
	int err;

	*out = NULL;
	if (geteuid() != 0)
		return -EPERM;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return -ENOENT;
	/* the syscall exits are classic tracepoints, found through tracefs */
	if (!tracefs_event_exists("syscalls"))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->ctx = ctx;
	w->page_size = sysconf(_SC_PAGESIZE);
	libbpf_set_print(libbpf_print);
	w->skel = memacct_bpf__open();
	if (!w->skel) {
		err = -errno;
		goto out_free;
	}
	if (filter && filter->level > 0) {
		w->skel->rodata->filter_cgid = filter->id;
		w->skel->rodata->filter_level = filter->level;
	}
	w->skel->rodata->pin_events_on = true;
	bpf_map__set_max_entries(w->skel->maps.pin_events, PIN_RING_BYTES);
	bpf_map__set_max_entries(w->skel->maps.exits, EXIT_RING_BYTES);
	btf = btf__load_vmlinux_btf();
	err = choose_programs(w->skel, btf);
	btf__free(btf);
	if (err == 0) {
		err = -ENOENT;	/* no syscalls tracepoints (tracefs missing?) */
		goto out_destroy;
	}
	err = memacct_bpf__load(w->skel);
	if (err)
		goto out_destroy;
	err = memacct_bpf__attach(w->skel);
	if (err)
		goto out_destroy;
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.pin_events), on_pin_event, w, NULL);
	if (!w->rb) {
		err = -errno;
		goto out_destroy;
	}
	err = ring_buffer__add(w->rb, bpf_map__fd(w->skel->maps.exits), on_exit_event, w);
	if (err)
		goto out_rb;
	*out = w;
	return 0;

out_rb:
	ring_buffer__free(w->rb);
out_destroy:
	memacct_bpf__destroy(w->skel);
out_free:
	free(w);
	return err < 0 ? err : -EINVAL;
}

int pinwatch_poll(struct pinwatch *w, int timeout_ms)
{
	int n = ring_buffer__poll(w->rb, timeout_ms);

	return n == -EINTR || (n < 0 && errno == EINTR) ? -EINTR : n;
}

uint64_t pinwatch_lost(struct pinwatch *w)
{
	return __atomic_load_n(&w->skel->bss->pin_events_lost, __ATOMIC_RELAXED);
}

void pinwatch_close(struct pinwatch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	memacct_bpf__destroy(w->skel);
	free(w);
}
