// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* pinwatch.c - pinned-memory change events for audit --watch (pinwatch.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "bpf_loader.h"
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
	{ SYS_setsockopt, "setsockopt" },
	{ SYS_ioctl, "ioctl" },
};

const char *pinwatch_syscall_name(long nr)
{
	if (nr == MEMACCT_PIN_EV_KWORKER)
		return "kworker unpin";
	if (nr < 0)
		return "exit";
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return "syscall";
}

/* What a pin event and an exit event both give: the process, its cgroup, its comm. */
static void event_fill(struct pinwatch_event *ev, const struct memacct_proc_key *key,
		       uint64_t memcg_id, const char *comm)
{
	ev->pid = key->tgid;
	ev->start_boottime_ns = key->start_boottime_ns;
	ev->memcg_id = memcg_id;
	memcpy(ev->comm, comm, sizeof(ev->comm));
	ev->comm[sizeof(ev->comm) - 1] = '\0';
}

static int on_pin_event(void *ctx, void *data, size_t len)
{
	const struct memacct_pin_event *e = data;
	struct pinwatch *w = ctx;
	struct pinwatch_event ev = { 0 };

	if (len < sizeof(*e))
		return 0;
	event_fill(&ev, &e->key, e->memcg_id, e->comm);
	ev.ts_ns = e->ts_ns;
	ev.locked_bytes = e->locked_vm_pages * w->page_size;
	ev.pinned_vm_bytes = e->pinned_vm_pages * w->page_size;
	ev.dma_bytes = e->dma_pinned_pages * w->page_size;
	ev.syscall_nr = e->syscall_nr;
	ev.syscall_ret = e->syscall_ret;
	return w->fn(w->ctx, &ev);
}

static int on_exit_event(void *ctx, void *data, size_t len)
{
	const struct memacct_exit_event *e = data;
	struct pinwatch *w = ctx;
	struct pinwatch_event ev = { 0 };

	if (len < sizeof(*e))
		return 0;
	event_fill(&ev, &e->key, e->proc.memcg_id, e->proc.comm);
	ev.exited = true;
	ev.syscall_nr = -1;
	return w->fn(w->ctx, &ev);
}

int pinwatch_open(const struct memcg *filter, pinwatch_fn fn, void *ctx,
		  struct pinwatch **out)
{
	struct loader_opts o = { .pin_events = true, .pin_ring_bytes = PIN_RING_BYTES,
				 .exit_ring_bytes = EXIT_RING_BYTES };
	struct pinwatch *w;
	int err;

	*out = NULL;
	/* quietly: the caller falls back to polling and says why */
	if (geteuid() != 0)
		return -EPERM;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return -ENOENT;
	loader_check_env();	/* mounts tracefs: the syscall exits need it */
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->ctx = ctx;
	w->page_size = sysconf(_SC_PAGESIZE);
	if (filter && filter->level > 0) {
		o.filter_cgid = filter->id;
		o.filter_level = filter->level;
	}
	/* audit --watch watches DMA pins by name: its windows are always on */
	loader_dma_pins = LOADER_DMA_ON;
	err = loader_start(&o, &w->skel);
	if (err)
		goto out_free;
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.pin_events), on_pin_event, w, NULL);
	if (!w->rb) {
		err = -errno;
		goto out_stop;
	}
	err = ring_buffer__add(w->rb, bpf_map__fd(w->skel->maps.exits), on_exit_event, w);
	if (err)
		goto out_rb;
	*out = w;
	return 0;

out_rb:
	ring_buffer__free(w->rb);
out_stop:
	loader_stop(w->skel);
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
	loader_stop(w->skel);
	free(w);
}
