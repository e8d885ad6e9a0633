// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* bpf_loader.c - probe the kernel, configure, load and attach the skeleton. */
#define _GNU_SOURCE	/* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "memacct.skel.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

struct loader_timing loader_timing;

bool loader_phases(void)
{
	const char *e = getenv("MEMACCT_PHASES");

	return e && *e && strcmp(e, "0");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Per-program verifier statistics (MEMACCT_PHASES): log level BPF_LOG_STATS. */
#define STATS_LOG_BYTES 4096
static char (*stats_logs)[STATS_LOG_BYTES];

static void verify_stats_request(struct memacct_bpf *skel)
{
	struct bpf_program *prog;
	int n = 0, i = 0;

	bpf_object__for_each_program(prog, skel->obj)
		n++;
	stats_logs = calloc(n ? n : 1, STATS_LOG_BYTES);
	if (!stats_logs)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		bpf_program__set_log_buf(prog, stats_logs[i++], STATS_LOG_BYTES);
		bpf_program__set_log_level(prog, 4);	/* BPF_LOG_STATS */
	}
}

/* Sum "verification time N usec" over the loaded programs; the 3 slowest;
 * with MEMACCT_PHASES=2 each program's line on stderr. */
static void verify_stats_collect(struct memacct_bpf *skel)
{
	const char *e = getenv("MEMACCT_PHASES");
	bool every = e && !strcmp(e, "2");
	struct bpf_program *prog;
	uint64_t top[3] = { 0 };
	int i = 0;

	if (!stats_logs)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		const char *t = strstr(stats_logs[i++], "verification time ");
		unsigned long long us;

		if (!bpf_program__autoload(prog) || !t ||
		    sscanf(t, "verification time %llu usec", &us) != 1)
			continue;
		if (every)	/* the kernel's stats line: instructions, states */
			fprintf(stderr, "memacct verify: %-30s %8.1f ms %s", bpf_program__name(prog),
				us / 1000.0, strstr(t, "processed ") ? strstr(t, "processed ") : "\n");
		loader_timing.verify_ns += us * 1000;
		loader_timing.programs++;
		for (int k = 0; k < 3; k++) {
			if (us * 1000 <= top[k])
				continue;
			for (int j = 2; j > k; j--) {
				top[j] = top[j - 1];
				memcpy(loader_timing.slowest[j], loader_timing.slowest[j - 1],
				       sizeof(loader_timing.slowest[j]));
			}
			top[k] = us * 1000;
			snprintf(loader_timing.slowest[k], sizeof(loader_timing.slowest[k]),
				 "%.30s %.1f", bpf_program__name(prog), us / 1000.0);
			break;
		}
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_log_buf(prog, NULL, 0);
	free(stats_logs);
	stats_logs = NULL;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose)
		return 0;	/* failures are reported by p_err(); -v shows the log */
	return vfprintf(stderr, fmt, ap);
}

int loader_check_env(void)
{
	/* libbpf's own messages only with -v, for every load (a daemon
	 * re-attached to pins loads the process walk only, whose first try
	 * is refused before 6.17: its verifier log went to stderr) */
	libbpf_set_print(libbpf_print);
	if (geteuid() != 0) {
		p_err("memacct needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN) to load its BPF programs");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		p_err("kernel without BTF: /sys/kernel/btf/vmlinux is missing (CONFIG_DEBUG_INFO_BTF=y is needed)");
		return -ENOENT;
	}
	/* classic tracepoints (syscall exits) are found through tracefs */
	if (access("/sys/kernel/tracing/events", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events", F_OK) != 0 &&
	    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		p_warn("tracefs is not mounted and mounting it failed (%s): pinned-memory "
		       "and migration accounting will be missing", strerror(errno));
	return 0;
}

int parse_zoneinfo(const char *text, struct memacct_node_range *r, int max, int *nodes)
{
	unsigned long long spanned = 0, start;
	unsigned int node = 0, seen = 0;
	int n = 0, nn = 0;
	const char *line;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		while (*line == ' ')
			line++;
		if (sscanf(line, "Node %u, zone", &node) == 1) {
			spanned = 0;
			continue;
		}
		if (sscanf(line, "spanned %llu", &spanned) == 1)
			continue;
		if (sscanf(line, "start_pfn: %llu", &start) == 1 && spanned) {
			if (n >= max)
				return -E2BIG;
			r[n].start_pfn = start;
			r[n].end_pfn = start + spanned;
			r[n].node = node;
			r[n].pad = 0;
			n++;
			if (node >= 32 || !(seen & (1U << node)))
				nn++;
			if (node < 32)
				seen |= 1U << node;
		}
	}
	*nodes = nn;
	return n;
}

static int read_node_ranges(struct memacct_node_range *r, int max, int *nodes)
{
	char *text;
	/* ~100 bytes a CPU and zone: 1 MiB is reached by 8 nodes of 512 CPUs */
	long len = read_file("/proc/zoneinfo", &text, 16 << 20);
	int n;

	if (len < 0)
		return len;
	n = parse_zoneinfo(text, r, max, nodes);
	free(text);
	return n;
}

int loader_numa_nodes(void)
{
	struct memacct_node_range r[MEMACCT_MAX_NODE_RANGES];
	int nodes = 1;

	if (read_node_ranges(r, MEMACCT_MAX_NODE_RANGES, &nodes) < 0)
		return 1;
	return nodes;
}

/* Value of an enumerator anywhere in the kernel's BTF; -ENOENT if absent. */
static long btf_enum_value(const struct btf *btf, const char *name)
{
	int i, j, n = btf__type_cnt(btf);

	for (i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (j = 0; j < btf_vlen(t); j++)
			if (!strcmp(btf__name_by_offset(btf, e[j].name_off), name))
				return e[j].val;
	}
	return -ENOENT;
}

/* A gfp bit from BTF (>= v6.10 enum), else the value of older kernels' #define. */
static unsigned int gfp_bit(const struct btf *btf, const char *name, int fallback)
{
	long v = btf ? btf_enum_value(btf, name) : -ENOENT;

	return 1U << (v >= 0 ? v : fallback);
}

/* tp_btf targets exist as "btf_trace_<name>" typedefs in vmlinux BTF. */
static bool tp_btf_exists(const struct btf *btf, const char *name)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "btf_trace_%s", name);
	return btf && btf__find_by_name_kind(btf, buf, BTF_KIND_TYPEDEF) > 0;
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
 * nr_node_ids: highest possible node + 1, from
 * /sys/devices/system/node/possible ("0" or "0-3"); 1 if unreadable.
 */
static unsigned int possible_nodes(void)
{
	char buf[256], *p, *end;
	unsigned long last = 0, v;
	int fd = open("/sys/devices/system/node/possible", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	for (p = buf; *p && *p != '\n';) {
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p)
			return 1;
		if (v > last)
			last = v;
		p = end;
		if (*p == '-' || *p == ',')
			p++;
	}
	return last + 1 < 64 ? last + 1 : 64;	/* FOLL_PIN_MAX_NODES */
}

/*
 * Run close(-1) once on every CPU this process may use: the BPF side
 * (cpu_off_learn() on sys_enter_close) learns each CPU's per-CPU offset to
 * read the FOLL_PIN counters' per-CPU diffs. The affinity is restored.
 */
static void learn_cpus(void)
{
	cpu_set_t old, one;

	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			close(-1);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

enum loader_dma loader_dma_pins = LOADER_DMA_AUTO;

int loader_dma_parse(const char *arg)
{
	if (!strcmp(arg, "auto"))
		loader_dma_pins = LOADER_DMA_AUTO;
	else if (!strcmp(arg, "on"))
		loader_dma_pins = LOADER_DMA_ON;
	else if (!strcmp(arg, "off"))
		loader_dma_pins = LOADER_DMA_OFF;
	else {
		p_err("bad --dma-pins '%s' (auto, on or off)", arg);
		return -EINVAL;
	}
	return 0;
}

/* The first entry of @dir whose name starts with @prefix (and is not
 * @except), as "dir/name" in @why; false if none or unreadable. */
static bool dir_has(const char *dir, const char *prefix, const char *except, char *why,
		    size_t len)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)) ||
		    (except && !strcmp(de->d_name, except)))
			continue;
		found = true;
		if (why)
			snprintf(why, len, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	return found;
}

/* AF_XDP sockets of this network namespace: the "XDP" line's sockets column. */
static bool xdp_sockets(void)
{
	char *text, *l;
	unsigned long size, n = 0;
	long len = read_file("/proc/net/protocols", &text, 1 << 16);

	if (len < 0)
		return false;
	for (l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, "XDP ", 4) && sscanf(l + 4, "%lu %lu", &size, &n) == 2)
			break;
	free(text);
	return n > 0;
}

bool loader_dma_devices(char *why, size_t len)
{
	if (dir_has("/dev", "nvidia", NULL, why, len) ||
	    dir_has("/dev/infiniband", "uverbs", NULL, why, len) ||
	    dir_has("/dev/vfio", "", "vfio", why, len))
		return true;
	if (xdp_sockets()) {
		if (why)
			snprintf(why, len, "AF_XDP sockets (/proc/net/protocols)");
		return true;
	}
	return false;
}

bool loader_dma_windows(void)
{
	char why[300];

	if (loader_dma_pins != LOADER_DMA_AUTO)
		return loader_dma_pins == LOADER_DMA_ON;
	if (loader_dma_devices(why, sizeof(why))) {
		p_info("--dma-pins auto: on (%s)", why);
		return true;
	}
	p_info("--dma-pins auto: off (no NVIDIA, RDMA uverbs or vfio device, no AF_XDP socket)");
	return false;
}

/* Arguments of tp_btf/@name (btf_trace_<name>: a pointer to a function
 * taking void *ctx, then them); -1 if absent. */
static int tp_btf_nargs(const struct btf *btf, const char *name)
{
	const struct btf_type *t;
	char buf[128];
	int id;

	snprintf(buf, sizeof(buf), "btf_trace_%s", name);
	id = btf ? btf__find_by_name_kind(btf, buf, BTF_KIND_TYPEDEF) : -1;
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : -1;
}

/*
 * locked_vm/pinned_vm kept without syscall tracepoints (bpf/pins.bpf.c
 * mmap_lock_released): where the DMA windows are off and the kernel's
 * mmap_lock tracepoints are (mm, write), as on this 6.18 kernel. Older
 * kernels pass (mm, memcg_path, write) and format the cgroup's path on
 * every event, and before per-VMA locks (v6.4) every page fault takes the
 * mmap lock: there the sys_exit_* programs of the mlock family stay (the
 * exact version that dropped memcg_path is not checked here: the BTF
 * decides).
 */
static bool tp_btf_first_arg_is_ptr(const struct btf *btf, const char *name);
static void choose_pinned_hooks(struct memacct_bpf *skel, const struct btf *btf, bool windows)
{
	struct bpf_program *sys[] = {
		skel->progs.sys_exit_mlock, skel->progs.sys_exit_mlock2,
		skel->progs.sys_exit_munlock, skel->progs.sys_exit_mlockall,
		skel->progs.sys_exit_munlockall, skel->progs.sys_exit_mmap,
		skel->progs.sys_exit_munmap, skel->progs.sys_exit_mremap,
		skel->progs.sys_exit_brk, skel->progs.sys_exit_io_uring_register,
	};
	bool lockev = !windows && tp_btf_nargs(btf, "mmap_lock_released") == 2 &&
		      tp_btf_first_arg_is_ptr(btf, "mmap_lock_released");

	if (!lockev) {
		bpf_program__set_autoload(skel->progs.mmap_lock_released, false);
		bpf_program__set_autoload(skel->progs.io_uring_register_pinned, false);
		return;
	}
	p_info("locked_vm/pinned_vm from mmap_lock_released and io_uring_register: no syscall tracepoint");
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		bpf_program__set_autoload(sys[i], false);
}

/* --dma-pins off: the DMA windows' programs left out (bpf_loader.h). */
static void dma_windows_off(struct memacct_bpf *skel)
{
	struct bpf_program *dma[] = {
		skel->progs.sys_enter_setsockopt, skel->progs.sys_exit_setsockopt,
		skel->progs.sys_enter_ioctl, skel->progs.sys_exit_ioctl,
		skel->progs.sys_enter_io_uring_register, skel->progs.sys_enter_close,
		skel->progs.workqueue_execute_start, skel->progs.workqueue_execute_end,
	};

	for (size_t i = 0; i < sizeof(dma) / sizeof(dma[0]); i++)
		bpf_program__set_autoload(dma[i], false);
	skel->rodata->dma_windows_on = false;
}

/* Leave out programs whose tracepoint this kernel does not have. */
static void choose_programs(struct memacct_bpf *skel, const struct btf *btf)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *sec = bpf_program__section_name(prog);
		bool ok = true;

		if (!strncmp(sec, "tp_btf/", 7))
			ok = tp_btf_exists(btf, sec + 7);
		else if (!strncmp(sec, "tp/", 3))
			ok = tracefs_event_exists(sec + 3);
		if (!ok) {
			p_info("tracepoint %s missing on this kernel: program %s left out",
			       sec, bpf_program__name(prog));
			bpf_program__set_autoload(prog, false);
		}
	}
}

static void leave_out(struct bpf_program *prog, const char *why)
{
	if (!bpf_program__autoload(prog))
		return;
	p_info("%s: program %s left out", why, bpf_program__name(prog));
	bpf_program__set_autoload(prog, false);
}

/* The type of tp_btf/@name's first argument (btf_trace_<name> is a pointer
 * to a function taking void *ctx, then the arguments), resolved; NULL when
 * the tracepoint or its argument is not there. */
static const struct btf_type *tp_btf_first_arg(const struct btf *btf, const char *name)
{
	const struct btf_type *t;
	const struct btf_param *p;
	char buf[128];
	int id;

	snprintf(buf, sizeof(buf), "btf_trace_%s", name);
	id = btf ? btf__find_by_name_kind(btf, buf, BTF_KIND_TYPEDEF) : -1;
	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return NULL;
	p = btf_params(t);
	id = btf__resolve_type(btf, p[1].type);
	return id > 0 ? btf__type_by_id(btf, id) : NULL;
}

/* Does tp_btf/@name pass a pointer as its first argument? */
static bool tp_btf_first_arg_is_ptr(const struct btf *btf, const char *name)
{
	const struct btf_type *t = tp_btf_first_arg(btf, name);

	return t && btf_is_ptr(t);
}

/* Does tp_btf/@name pass a pointer to struct @sname first? */
static bool tp_btf_first_arg_points_to(const struct btf *btf, const char *name, const char *sname)
{
	const struct btf_type *t = tp_btf_first_arg(btf, name);
	int id;

	if (!t || !btf_is_ptr(t))
		return false;
	id = btf__resolve_type(btf, t->type);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), sname);
}

/*
 * Variants for older kernels (bpf/core_fixes.bpf.h): what the matrix of
 * tests/vmtest/ needs to load on 5.10 .. 7.x.
 */
static void choose_fallbacks(struct memacct_bpf *skel, const struct btf *btf)
{
	struct bpf_program *fresh[] = { skel->progs.page_fault_user, skel->progs.page_fault_kernel,
					skel->progs.mm_page_alloc, skel->progs.sched_switch };
	struct bpf_program *old[] = { skel->progs.page_fault_user_old,
				      skel->progs.page_fault_kernel_old,
				      skel->progs.mm_page_alloc_old, skel->progs.sched_switch_old };
	bool task_storage, find_vma, vmacache;
	size_t i;

	/* page cache by file: the folio walked by direct loads where the
	 * tracepoints pass it (bpf/page_cache.bpf.c), else the page read
	 * through helpers; without BTF the latter, which loads anywhere */
	if (tp_btf_first_arg_points_to(btf, "mm_filemap_add_to_page_cache", "folio") &&
	    tp_btf_first_arg_points_to(btf, "mm_filemap_delete_from_page_cache", "folio")) {
		bpf_program__set_autoload(skel->progs.pcache_add_old, false);
		bpf_program__set_autoload(skel->progs.pcache_del_old, false);
	} else {
		bpf_program__set_autoload(skel->progs.pcache_add, false);
		bpf_program__set_autoload(skel->progs.pcache_del, false);
	}
	if (!btf) {	/* cannot tell: the programs for current kernels */
		for (i = 0; i < sizeof(old) / sizeof(old[0]); i++)
			bpf_program__set_autoload(old[i], false);
		return;
	}
	task_storage = btf_enum_value(btf, "BPF_MAP_TYPE_TASK_STORAGE") >= 0;
	find_vma = btf_enum_value(btf, "BPF_FUNC_find_vma") >= 0;
	vmacache = btf__find_by_name_kind(btf, "vmacache", BTF_KIND_STRUCT) > 0;
	if (!task_storage) {
		/* the map must still be created: a plain 1-entry hash */
		bpf_map__set_type(skel->maps.fault_states, BPF_MAP_TYPE_HASH);
		bpf_map__set_max_entries(skel->maps.fault_states, 1);
	}
	/*
	 * Fault programs (CoW classifier, zero fills, remote NUMA allocations):
	 * with task storage (v5.11) and bpf_find_vma() (v5.17) the programs of
	 * bpf/faults.bpf.c; otherwise their *_old variants, which take the VMA
	 * from the task's vmacache (before v6.1); else none.
	 */
	if (task_storage && find_vma) {
		for (i = 0; i < sizeof(old) / sizeof(old[0]); i++)
			bpf_program__set_autoload(old[i], false);
	} else {
		for (i = 0; i < sizeof(fresh) / sizeof(fresh[0]); i++)
			leave_out(fresh[i], "no task storage or bpf_find_vma() (kernel < 5.17): the *_old variant instead");
		if (vmacache) {
			p_info("fault accounting through the task's vmacache (kernel without bpf_find_vma())");
		} else {
			for (i = 0; i < sizeof(old) / sizeof(old[0]); i++)
				leave_out(old[i], "neither bpf_find_vma() nor vmacache");
			p_warn("CoW, zero-fill and remote NUMA allocation accounting unavailable on this kernel (needs bpf_find_vma() or the vmacache): those counters stay 0");
		}
	}
	if (tp_btf_first_arg_is_ptr(btf, "mark_victim"))
		bpf_program__set_autoload(skel->progs.mark_victim_pid, false);
	else
		bpf_program__set_autoload(skel->progs.mark_victim, false);
}

enum loader_fault_hook loader_fault_hook;
/*
 * The perf event hook's attachments, one per online CPU: a BPF link fd
 * (BPF_LINK_TYPE_PERF_EVENT, v5.15), or -1 where the kernel has no such
 * link and the program was set on the event (PERF_EVENT_IOC_SET_BPF); the
 * event's fd, which the link also holds.
 */
static int *perf_link_fds, *perf_event_fds;
static int nperf;

const char *loader_fault_hook_name(enum loader_fault_hook h)
{
	switch (h) {
	case LOADER_FAULT_TRACEPOINT:
		return "tracepoint";
	case LOADER_FAULT_PERF:
		return "perf";
	default:
		return "none";
	}
}

int loader_fault_hook_want(const char *s, enum loader_fault_hook *h, bool *forced)
{
	*forced = false;
	if (!s || !*s || !strcmp(s, "auto"))
		return 0;
	if (!strcmp(s, "tracepoint"))
		*h = LOADER_FAULT_TRACEPOINT;
	else if (!strcmp(s, "perf"))
		*h = LOADER_FAULT_PERF;
	else if (!strcmp(s, "none"))
		*h = LOADER_FAULT_NONE;
	else
		return -EINVAL;
	*forced = true;
	return 0;
}

int loader_perf_links(const int **link_fds)
{
	*link_fds = perf_link_fds;
	return nperf;
}

void loader_perf_detach(void)
{
	for (int i = 0; i < nperf; i++) {
		if (perf_link_fds[i] >= 0)
			close(perf_link_fds[i]);
		close(perf_event_fds[i]);
	}
	free(perf_link_fds);
	free(perf_event_fds);
	perf_link_fds = perf_event_fds = NULL;
	nperf = 0;
}

/*
 * Choose the fault-entry programs before load (enum loader_fault_hook): the
 * tracepoint pair where this kernel has exceptions:page_fault_user (BTF, as
 * choose_programs() found it), else the perf event program. Only the chosen
 * ones load; the perf program is attached by attach_perf_hook().
 */
static int choose_fault_hook(struct memacct_bpf *skel, enum loader_fault_hook *out)
{
	struct bpf_program *tp[] = { skel->progs.page_fault_user, skel->progs.page_fault_kernel,
				     skel->progs.page_fault_user_old,
				     skel->progs.page_fault_kernel_old };
	struct bpf_program *perf = NULL;
	const char *env = getenv("MEMACCT_FAULT_HOOK");
	enum loader_fault_hook want = LOADER_FAULT_NONE;
	bool forced, have_tp;

	if (loader_fault_hook_want(env, &want, &forced)) {
		p_err("MEMACCT_FAULT_HOOK=%s: expected auto, tracepoint, perf or none", env);
		return -EINVAL;
	}
	if (forced && want == LOADER_FAULT_NONE) {
		/* no fault program at all: the classifier's figures are null */
		struct bpf_program *all[] = { skel->progs.page_fault_user,
					      skel->progs.page_fault_kernel,
					      skel->progs.page_fault_user_old,
					      skel->progs.page_fault_kernel_old,
					      skel->progs.page_fault_perf,
					      skel->progs.page_fault_perf_old,
					      skel->progs.mm_page_alloc, skel->progs.mm_page_alloc_old,
					      skel->progs.sched_switch, skel->progs.sched_switch_old };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			bpf_program__set_autoload(all[i], false);
		*out = LOADER_FAULT_NONE;
		return 0;
	}
	/* the classifier's programs choose_fallbacks() kept: fresh or old */
	if (bpf_program__autoload(skel->progs.mm_page_alloc))
		perf = skel->progs.page_fault_perf;
	else if (bpf_program__autoload(skel->progs.mm_page_alloc_old))
		perf = skel->progs.page_fault_perf_old;
	if (perf != skel->progs.page_fault_perf)
		bpf_program__set_autoload(skel->progs.page_fault_perf, false);
	if (perf != skel->progs.page_fault_perf_old)
		bpf_program__set_autoload(skel->progs.page_fault_perf_old, false);
	bpf_program__set_autoattach(skel->progs.page_fault_perf, false);
	bpf_program__set_autoattach(skel->progs.page_fault_perf_old, false);
	have_tp = bpf_program__autoload(skel->progs.page_fault_user) ||
		  bpf_program__autoload(skel->progs.page_fault_user_old);
	if (!forced)
		want = have_tp ? LOADER_FAULT_TRACEPOINT : LOADER_FAULT_PERF;
	if (!perf) {
		/* no classifier (choose_fallbacks() said why): no hook */
		if (forced) {
			p_err("MEMACCT_FAULT_HOOK=%s: this kernel has no fault classifier (needs bpf_find_vma() or the vmacache)",
			      env);
			return -ENOENT;
		}
		*out = LOADER_FAULT_NONE;
		return 0;
	}
	if (want == LOADER_FAULT_TRACEPOINT && !have_tp) {
		p_err("MEMACCT_FAULT_HOOK=tracepoint: this kernel has no exceptions:page_fault_user tracepoint (x86 only); unset it to use the perf event hook");
		return -ENOENT;
	}
	if (want == LOADER_FAULT_PERF) {
		for (size_t i = 0; i < sizeof(tp) / sizeof(tp[0]); i++)
			bpf_program__set_autoload(tp[i], false);
	} else {
		bpf_program__set_autoload(perf, false);
	}
	*out = want;
	return 0;
}

/* CPUs in /sys/devices/system/cpu/online ("0-3,8"), into @on (@max): how many */
static int online_cpus(bool *on, int max)
{
	char buf[1024], *p = buf, *end;
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	while (*p && *p != '\n') {
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b && c < max; c++, n++)
			on[c] = true;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n;
}

/* The value of "@key:" in /proc/self/status, into @out (@len); "?" if absent. */
static void self_status(const char *key, char *out, size_t len)
{
	char line[256];
	size_t k = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	snprintf(out, len, "?");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ':') {
			snprintf(out, len, "%s", line + k + 1 + strspn(line + k + 1, " \t"));
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

/*
 * Why perf_event_open() said @err (EACCES, EPERM): every knob that refuses
 * it, with its value here (docs/metrics.md "Fault hooks").
 */
static void perf_refused(int err)
{
	char caps[32] = "?", seccomp[16], lockdown[128] = "absent";
	unsigned long long eff = 0;
	long paranoid = -1;
	bool perfmon = false;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%ld", &paranoid) != 1)
			paranoid = -1;
		fclose(f);
	}
	self_status("CapEff", caps, sizeof(caps));
	if (sscanf(caps, "%llx", &eff) == 1)	/* CAP_PERFMON 38, CAP_SYS_ADMIN 21 */
		perfmon = eff & (1ULL << 38 | 1ULL << 21);
	self_status("Seccomp", seccomp, sizeof(seccomp));
	f = fopen("/sys/kernel/security/lockdown", "r");
	if (f) {
		if (!fgets(lockdown, sizeof(lockdown), f))
			snprintf(lockdown, sizeof(lockdown), "?");
		lockdown[strcspn(lockdown, "\n")] = '\0';
		fclose(f);
	}
	p_err("perf_event_open(PERF_COUNT_SW_PAGE_FAULTS, all tasks, per CPU) for the fault hook "
	      "refused: %s. What can refuse it: CAP_PERFMON or CAP_SYS_ADMIN (%s here), else "
	      "/proc/sys/kernel/perf_event_paranoid above 0 (it is %ld); a seccomp filter (%s here: "
	      "a container's profile must allow perf_event_open); an LSM or kernel lockdown "
	      "(/sys/kernel/security/lockdown: %s)",
	      strerror(err), perfmon ? "held" : "NOT held", paranoid,
	      !strcmp(seccomp, "2") ? "ACTIVE" : !strcmp(seccomp, "0") ? "none" : seccomp,
	      lockdown);
}

/*
 * The perf event hook: one PERF_COUNT_SW_PAGE_FAULTS event per online CPU,
 * every task (pid -1), sample_period 1 (the program runs on every fault),
 * nothing excluded (kernel-mode faults on user addresses: copy_to_user into
 * a CoW page), each running @prog_fd. CPUs that come online later are not
 * covered (a fault there is not classified).
 */
int loader_perf_attach(int prog_fd)
{
	int ncpu = libbpf_num_possible_cpus(), n, err = 0;
	bool *on;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	loader_perf_detach();
	on = calloc(ncpu, sizeof(*on));
	perf_link_fds = calloc(ncpu, sizeof(*perf_link_fds));
	perf_event_fds = calloc(ncpu, sizeof(*perf_event_fds));
	if (!on || !perf_link_fds || !perf_event_fds) {
		err = -ENOMEM;
		goto out;
	}
	n = online_cpus(on, ncpu);
	if (n <= 0) {
		err = n ? n : -ENOENT;
		p_err("reading /sys/devices/system/cpu/online: %s", strerror(-err));
		goto out;
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(a),
			.config = PERF_COUNT_SW_PAGE_FAULTS,
			.sample_period = 1,
		};
		int fd, lfd;

		if (!on[cpu])
			continue;
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV)	/* went offline since */
				continue;
			if (err == -EACCES || err == -EPERM)
				perf_refused(-err);
			else
				p_err("perf_event_open(PERF_COUNT_SW_PAGE_FAULTS, CPU %d): %s "
				      "(kernel without CONFIG_PERF_EVENTS?)", cpu, strerror(-err));
			goto out;
		}
		lfd = bpf_link_create(prog_fd, fd, BPF_PERF_EVENT, NULL);
		if (lfd < 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
			/* neither a perf link (v5.15) nor the ioctl */
			err = -errno;
			close(fd);
			p_err("attaching the fault hook to the page-fault perf event of CPU %d: %s",
			      cpu, strerror(-err));
			goto out;
		}
		perf_link_fds[nperf] = lfd < 0 ? -1 : lfd;
		perf_event_fds[nperf++] = fd;
	}
	err = 0;
out:
	free(on);
	if (err)
		loader_perf_detach();
	return err;
}

/*
 * loader_opts.pin_events: leave out every program but the syscall exits that
 * move locked_vm/pinned_vm, exec (comm), exit (the record leaves) and cgroup
 * moves (memcg_id follows). Returns how many syscall programs stay.
 */
static int pin_events_only(struct memacct_bpf *skel, const struct loader_opts *o)
{
	struct bpf_program *prog;
	int nsys = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		bool sys = !strncmp(name, "sys_exit_", 9);

		if (sys || !strncmp(name, "sys_enter_", 10) ||
		    !strncmp(name, "workqueue_execute_", 18) ||	/* DMA pins */
		    !strcmp(name, "sched_process_exit") ||
		    !strcmp(name, "sched_process_exec") || !strcmp(name, "cgroup_attach_task"))
			nsys += sys && bpf_program__autoload(prog);
		else
			bpf_program__set_autoload(prog, false);
	}
	skel->rodata->pin_events_on = true;
	if (o->pin_ring_bytes)
		bpf_map__set_max_entries(skel->maps.pin_events, o->pin_ring_bytes);
	if (o->exit_ring_bytes)
		bpf_map__set_max_entries(skel->maps.exits, o->exit_ring_bytes);
	return nsys;
}

/* Frame number of the page mapped at @addr, from /proc/self/pagemap (bit 63
 * present, bits 0-54 the pfn; reads as 0 without CAP_SYS_ADMIN,
 * Documentation/admin-guide/mm/pagemap.rst). */
static int pagemap_pfn(int fd, const volatile void *addr, uint64_t *pfn)
{
	uint64_t e;
	off_t off = (uintptr_t)addr / sysconf(_SC_PAGESIZE) * sizeof(e);
	ssize_t n = pread(fd, &e, sizeof(e), off);

	if (n != sizeof(e))
		return n < 0 ? -errno : -EIO;
	*pfn = e & ((1ULL << 55) - 1);
	return (e >> 63) && *pfn ? 0 : -ENODATA;
}

#if defined(__x86_64__)
/* The address of data symbol @name in /proc/kallsyms; 0 if absent or hidden. */
static uint64_t kallsyms_addr(const char *name)
{
	char line[256], sym[128], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}
#endif

int loader_measure_vmemmap(struct memacct_bpf *skel, uint64_t *base)
{
	enum { PAGES = 4 };
	long ps = sysconf(_SC_PAGESIZE);
	struct bpf_link *link;
	volatile char *buf;
	uint64_t got = 0;
	int fd, err = 0;

	if (bpf_program__fd(skel->progs.vmemmap_probe) < 0)
		return -ENOENT;
	buf = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -errno;
	/* order-0 pages: no THP or mTHP folio for these faults */
	madvise((void *)buf, PAGES * ps, MADV_NOHUGEPAGE);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_unmap;
	}
	link = bpf_program__attach(skel->progs.vmemmap_probe);
	if (!link) {
		err = -errno;
		goto out_close;
	}
	__atomic_store_n(&skel->bss->vmemmap_tid, (uint32_t)gettid(), __ATOMIC_SEQ_CST);
	for (int i = 0; i < PAGES && !err; i++) {
		uint64_t page, pfn = 0, b;

		__atomic_store_n(&skel->bss->vmemmap_page, 0, __ATOMIC_SEQ_CST);
		buf[i * ps] = 1;	/* the write fault allocates the page */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		page = __atomic_load_n(&skel->bss->vmemmap_page, __ATOMIC_SEQ_CST);
		if (!page) {
			err = -ESRCH;
			break;
		}
		err = pagemap_pfn(fd, buf + i * ps, &pfn);
		if (err)
			break;
		b = page - pfn * skel->bss->vmemmap_struct_size;
		if (got && b != got)
			err = -ERANGE;
		got = b;
	}
	__atomic_store_n(&skel->bss->vmemmap_tid, 0, __ATOMIC_SEQ_CST);
	bpf_link__destroy(link);
	if (!err)
		*base = got;
out_close:
	close(fd);
out_unmap:
	munmap((void *)buf, PAGES * ps);
	return err;
}

/* A number from a one-number /proc file, or @dflt. */
static uint64_t proc_number(const char *path, uint64_t dflt)
{
	char *buf, *end;
	uint64_t v;
	long n = read_file(path, &buf, 64);

	if (n < 0)
		return dflt;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		v = dflt;
	free(buf);
	return v;
}

#define SIZES_MIN	4096U
#define SIZES_MAX	(1U << 22)	/* PID_MAX_LIMIT */
#define CGROUPS_MAX	65536U	/* MEM_CGROUP_ID_MAX (65,535) + the root */

static uint32_t clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

void loader_sizes(const struct btf *btf, struct loader_sizes *sz)
{
	uint64_t pid_max = proc_number("/proc/sys/kernel/pid_max", 32768);
	uint64_t threads = proc_number("/proc/sys/kernel/threads-max", pid_max);
	uint64_t v;
	const char *env;

	/* hash maps allocate their elements with bpf_mem_alloc, in any
	 * context, since v6.1 (commit fba1a1c6c912, "bpf: Convert hash map to
	 * bpf_mem_alloc."): the struct tells */
	sz->no_prealloc = btf && btf__find_by_name_kind(btf, "bpf_mem_alloc",
							 BTF_KIND_STRUCT) > 0;
	sz->procs = clamp_u32(pid_max < threads ? pid_max : threads, SIZES_MIN,
			      sz->no_prealloc ? SIZES_MAX : 65536);
	sz->cgroups = CGROUPS_MAX;
	/* set by hand (docs/daemon.md "Map sizes"): the tests fill them */
	if ((env = getenv("MEMACCT_PROCS_MAX")) && !parse_u64(env, &v))
		sz->procs = clamp_u32(v, 16, SIZES_MAX);
	if ((env = getenv("MEMACCT_CGROUPS_MAX")) && !parse_u64(env, &v))
		sz->cgroups = clamp_u32(v, 16, SIZES_MAX);
}

/* The maps sized for this host (loader_sizes()), before load. */
static void size_maps(struct memacct_bpf *skel, const struct btf *btf)
{
	struct loader_sizes sz;

	loader_sizes(btf, &sz);
	bpf_map__set_max_entries(skel->maps.procs, sz.procs);
	/* a process's CoW mappings (issue 42): made at its first copy, at most
	 * one per record, not preallocated */
	bpf_map__set_max_entries(skel->maps.cow_maps, sz.procs);
	bpf_map__set_max_entries(skel->maps.cgroups, sz.cgroups);
	if (sz.no_prealloc) {
		bpf_map__set_map_flags(skel->maps.procs,
				       bpf_map__map_flags(skel->maps.procs) | BPF_F_NO_PREALLOC);
		/* CUDA pinned ranges: 16,384 preallocated (1.3 MiB) before 6.1 */
		bpf_map__set_max_entries(skel->maps.dma_ranges, 65536);
		bpf_map__set_map_flags(skel->maps.dma_ranges,
				       bpf_map__map_flags(skel->maps.dma_ranges) |
				       BPF_F_NO_PREALLOC);
	}
	/*
	 * Nothing reserved for what cannot happen (docs/overhead.md "Kernel
	 * memory"): without the DMA windows nothing writes the windows, fds
	 * and ranges maps (2.1 MiB: the first two preallocated); fault_spill
	 * serves the *_old fault programs only (512 KiB of buckets). A map
	 * must exist for the programs that name it: one entry.
	 */
	if (!skel->rodata->dma_windows_on) {
		bpf_map__set_max_entries(skel->maps.dma_windows, 1);
		bpf_map__set_max_entries(skel->maps.dma_fds, 1);
		bpf_map__set_max_entries(skel->maps.dma_ranges, 1);
	}
	if (!bpf_program__autoload(skel->progs.page_fault_user_old) &&
	    !bpf_program__autoload(skel->progs.mm_page_alloc_old) &&
	    !bpf_program__autoload(skel->progs.sched_switch_old))
		bpf_map__set_max_entries(skel->maps.fault_spill, 1);
}

/* What the programs read as constants: the filter, gfp bits from BTF, CPUs, page size. */
static void set_rodata(struct memacct_bpf *skel, const struct loader_opts *o, const struct btf *btf)
{
	skel->rodata->filter_cgid = o->filter_cgid;
	skel->rodata->filter_level = o->filter_level;
	skel->rodata->fallback_cgid = o->fallback_cgid;
	skel->rodata->gfp_user = gfp_bit(btf, "___GFP_HIGHMEM_BIT", 1) |
				 gfp_bit(btf, "___GFP_MOVABLE_BIT", 3);
	skel->rodata->gfp_highuser_movable =
		skel->rodata->gfp_user |
		gfp_bit(btf, "___GFP_DIRECT_RECLAIM_BIT", 10) |
		gfp_bit(btf, "___GFP_KSWAPD_RECLAIM_BIT", 11) |
		gfp_bit(btf, "___GFP_IO_BIT", 6) | gfp_bit(btf, "___GFP_FS_BIT", 7) |
		gfp_bit(btf, "___GFP_HARDWALL_BIT", 20);
	skel->rodata->foll_pin_nodes = possible_nodes();
	skel->rodata->foll_pin_cpus = libbpf_num_possible_cpus() > 0 ?
				      libbpf_num_possible_cpus() : 1;
	/* RSS exact as /proc's: every CPU's delta (core_fixes.bpf.h) */
	skel->rodata->rss_cpus = libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 0;
	skel->rodata->page_size = sysconf(_SC_PAGESIZE);
	skel->rodata->gfp_zero = gfp_bit(btf, "___GFP_ZERO_BIT", 8);
	skel->rodata->gfp_comp = gfp_bit(btf, "___GFP_COMP_BIT", 18);
	skel->rodata->gfp_large = skel->rodata->gfp_user | skel->rodata->gfp_comp |
				  gfp_bit(btf, "___GFP_IO_BIT", 6) | gfp_bit(btf, "___GFP_FS_BIT", 7) |
				  gfp_bit(btf, "___GFP_HARDWALL_BIT", 20);
}

/* The NUMA nodes' pfn ranges (/proc/zoneinfo), with several nodes only. */
static void set_node_ranges(struct memacct_bpf *skel)
{
	struct memacct_node_range ranges[MEMACCT_MAX_NODE_RANGES];
	int n, nodes = 1;

	n = read_node_ranges(ranges, MEMACCT_MAX_NODE_RANGES, &nodes);
	if (n == -E2BIG)
		p_warn("/proc/zoneinfo has more than %d memory ranges (nodes x zones): allocations "
		       "are not placed on nodes, remote_numa_alloc is not measured",
		       MEMACCT_MAX_NODE_RANGES);
	if (n <= 0 || nodes <= 1)
		return;
#if defined(__x86_64__)
	/* x86_64 vmemmap base without KASLR of the memory layout
	 * (arch/x86/include/asm/pgtable_64_types.h VMEMMAP_START).
	 * arm64 has no constant to fall back on: its vmemmap is
	 * VMEMMAP_START - (memstart_addr >> PAGE_SHIFT) pages
	 * (arch/arm64/include/asm/memory.h), memstart_addr known at
	 * boot only; measured (loader_measure_vmemmap()) or none */
	skel->rodata->vmemmap_start = 0xffffea0000000000ULL;
#endif
	memcpy((void *)skel->rodata->node_ranges, ranges, n * sizeof(ranges[0]));
	skel->rodata->nr_node_ranges = n;
}

/*
 * Which programs load (what the kernel offers, by BTF and tracepoint
 * existence), the fault hook, the maps' sizes. 0 or negative errno (said).
 */
static int choose_all(struct memacct_bpf *skel, struct btf *btf, const struct loader_opts *o)
{
	bool windows;
	int err;

	/* attached by loader_measure_vmemmap() only, while it measures */
	bpf_program__set_autoattach(skel->progs.vmemmap_probe, false);
	choose_programs(skel, btf);
	choose_fallbacks(skel, btf);
	if (!o->task_iter)
		bpf_program__set_autoload(skel->progs.task_stocks, false);
	windows = loader_dma_windows();
	if (!windows)
		dma_windows_off(skel);
	choose_pinned_hooks(skel, btf, windows);
	err = choose_fault_hook(skel, &loader_fault_hook);
	if (err)
		return err;
	size_maps(skel, btf);
	if (o->pin_events && pin_events_only(skel, o) == 0) {
		p_err("no syscalls tracepoints (is tracefs mounted? mount -t tracefs tracefs /sys/kernel/tracing)");
		return -ENOENT;
	}
	/* pin events only (audit --watch): no fault programs, so no hook */
	if (!bpf_program__autoload(skel->progs.mm_page_alloc) &&
	    !bpf_program__autoload(skel->progs.mm_page_alloc_old))
		loader_fault_hook = LOADER_FAULT_NONE;

	/* what sched_process_exit must clean up after (bpf/lifecycle.bpf.c) */
	skel->rodata->oom_by_pid = bpf_program__autoload(skel->progs.mark_victim_pid);
	skel->rodata->fault_old = bpf_program__autoload(skel->progs.page_fault_user_old) ||
				  bpf_program__autoload(skel->progs.mm_page_alloc_old) ||
				  bpf_program__autoload(skel->progs.sched_switch_old);
	return 0;
}

/* The cgroups map's record for flows that find no other (o->fallback_cgid). */
static int add_fallback_record(struct memacct_bpf *skel, uint64_t cgid)
{
	static const struct memacct_cgroup zero;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroups), &cgid, &zero, BPF_NOEXIST) &&
	    errno != EEXIST) {
		int err = -errno;

		p_err("making the cgroups map's fallback record: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* The struct page array's base, for placing allocations on nodes. */
static void set_vmemmap_base(struct memacct_bpf *skel)
{
	uint64_t base;
	int e = loader_measure_vmemmap(skel, &base);

	if (!e) {
		skel->bss->vmemmap_measured = base;
		return;
	}
#if defined(__x86_64__)
	p_warn("cannot measure the struct page array base (%s): remote-NUMA bytes rely on kallsyms or the default base",
	       strerror(-e));
	skel->bss->vmemmap_base_addr = kallsyms_addr("vmemmap_base");
#else
	p_warn("cannot measure the struct page array base (%s): allocations are not placed on nodes, remote_numa_alloc is not measured",
	       strerror(-e));
#endif
}

/* Every program attached, the perf event fault hook first. 0 or negative errno (said). */
static int attach_all(struct memacct_bpf *skel)
{
	int err;

	/* the perf event hook first: a refusal (perf_event_paranoid, seccomp,
	 * lockdown) is then what is reported, not a tracepoint's attach */
	if (loader_fault_hook == LOADER_FAULT_PERF &&
	    (bpf_program__autoload(skel->progs.page_fault_perf) ||
	     bpf_program__autoload(skel->progs.page_fault_perf_old))) {
		err = loader_perf_attach(bpf_program__fd(
			bpf_program__autoload(skel->progs.page_fault_perf) ?
			skel->progs.page_fault_perf : skel->progs.page_fault_perf_old));
		if (err)
			return err;
	}
	err = memacct_bpf__attach(skel);
	if (err) {
		p_err("attaching to tracepoints: %s (is tracefs mounted? mount -t tracefs tracefs /sys/kernel/tracing)",
		      strerror(-err));
		return err;
	}
	p_info("fault hook: %s (%s)", loader_fault_hook_name(loader_fault_hook),
	       loader_fault_hook == LOADER_FAULT_TRACEPOINT ?
	       "exceptions:page_fault_user, with the error code" :
	       loader_fault_hook == LOADER_FAULT_PERF ?
	       "PERF_COUNT_SW_PAGE_FAULTS on every CPU, no error code" :
	       "none: CoW and zero-fill figures not measured");
	return 0;
}

int loader_start(const struct loader_opts *o, struct memacct_bpf **out)
{
	struct memacct_bpf *skel;
	struct btf *btf;
	uint64_t t0 = mono_ns(), t1;
	int err;

	memset(&loader_timing, 0, sizeof(loader_timing));
	libbpf_set_print(libbpf_print);
	skel = memacct_bpf__open();
	if (!skel) {
		err = -errno;
		p_err("opening the BPF object: %s", strerror(-err));
		return err;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf)
		p_warn("cannot read the kernel's BTF; using built-in gfp bits");
	set_rodata(skel, o, btf);
	set_node_ranges(skel);
	err = choose_all(skel, btf, o);
	btf__free(btf);
	if (!err && o->before_load)
		err = o->before_load(skel, o->before_load_ctx);
	if (err)
		goto out_destroy;
	if (loader_phases())
		verify_stats_request(skel);
	t1 = mono_ns();
	loader_timing.open_ns = t1 - t0;
	err = memacct_bpf__load(skel);
	loader_timing.load_ns = mono_ns() - t1;
	verify_stats_collect(skel);
	if (err) {
		p_err("loading the BPF programs: %s (run with -v for the verifier log)",
		      strerror(-err));
		goto out_destroy;
	}
	if (o->fallback_cgid) {
		err = add_fallback_record(skel, o->fallback_cgid);
		if (err)
			goto out_destroy;
	}
	if (o->after_load) {
		err = o->after_load(skel, o->before_load_ctx);
		if (err)
			goto out_destroy;
	}
	t1 = mono_ns();
	if (skel->rodata->nr_node_ranges)
		set_vmemmap_base(skel);
	err = attach_all(skel);
	if (err)
		goto out_destroy;
	if (skel->rodata->dma_windows_on)
		learn_cpus();	/* sys_enter_close learns each CPU's offset */
	loader_timing.attach_ns = mono_ns() - t1;
	*out = skel;
	return 0;

out_destroy:
	loader_perf_detach();
	memacct_bpf__destroy(skel);
	return err;
}

void loader_stop(struct memacct_bpf *skel)
{
	loader_perf_detach();
	memacct_bpf__destroy(skel);
}

/* What the release helper needs; filled before clone(), read-only after. */
#define RELEASE_MAX_FDS 1024
static struct release_args {
	int keep[RELEASE_MAX_FDS];	/* perf event fds */
	int drop[RELEASE_MAX_FDS];	/* every other fd open at the scan */
	int nkeep, ndrop;
	int rfd, wfd;			/* the pipe */
} rel;
static char release_stack[64 * 1024] __attribute__((aligned(16)));

/*
 * The helper, in our address space (CLONE_VM) on its own stack: syscalls
 * only, none that can fail (each fd closed is open), so that libc's
 * syscall() never writes errno, which lives in our thread's TLS: the helper
 * shares the thread pointer. Every signal is blocked (inherited).
 */
static int release_helper(void *arg)
{
	char c;

	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, (unsigned long)"memacct-release", 0, 0, 0);
	syscall(SYS_setsid);	/* out of the caller's job: no terminal signal */
	syscall(SYS_close, rel.wfd);
	for (int i = 0; i < rel.ndrop; i++)
		syscall(SYS_close, rel.drop[i]);
	/* EOF when the parent's write end goes: at its exit, whatever ends it */
	while (syscall(SYS_read, rel.rfd, &c, 1) > 0)	/* 0: EOF; -1: any error */
		;
	return 0;	/* the kernel closes the perf events now, in this process */
}

/* This process's fds into rel: perf events to keep, the others to drop.
 * The number of perf events, or -1 (unreadable, too many). */
static int scan_fds(void)
{
	char path[64], target[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;

	if (!d)
		return -1;
	rel.nkeep = rel.ndrop = 0;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		int fd = (int)v;

		if (end == de->d_name || *end || v < 0 || v > INT32_MAX || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (rel.nkeep == RELEASE_MAX_FDS || rel.ndrop == RELEASE_MAX_FDS) {
			closedir(d);
			return -1;
		}
		if (!strcmp(target, "anon_inode:[perf_event]"))
			rel.keep[rel.nkeep++] = fd;
		else
			rel.drop[rel.ndrop++] = fd;
	}
	closedir(d);
	return rel.nkeep;
}

/* loader_oom_seen_seed()'s map and count of entries written */
struct oom_seed {
	int fd;
	int n;
};

/* loader_oom_seen_seed()'s step: @cg's count, unless the map has one */
static int oom_seen_seed_one(const struct memcg *cg, void *ctx)
{
	struct oom_seed *sd = ctx;
	uint64_t n;

	if (memcg_read_local_ooms(cg, &n))
		return 0;	/* the root, before 5.2, or removed meanwhile */
	if (!bpf_map_update_elem(sd->fd, &cg->id, &n, BPF_NOEXIST))
		sd->n++;
	return 0;
}

int loader_oom_seen_seed(struct memacct_bpf *skel, const struct memcg *cg)
{
	struct oom_seed sd = { .fd = bpf_map__fd(skel->maps.memcg_oom_seen) };
	char root[PATH_MAX];
	struct memcg *sub;
	int n, version, err;

	err = memcg_root(root, &version);
	if (err)
		return err;
	if (version == 1)	/* no memory.events.local to read */
		return 0;
	if (!cg || !cg->level) {	/* no array of every cgroup (8 KiB each) */
		err = memcg_walk(oom_seen_seed_one, &sd);
		return err < 0 ? err : sd.n;
	}
	n = memcg_subtree(cg, &sub);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		oom_seen_seed_one(&sub[i], &sd);
	free(sub);
	return sd.n;
}

void loader_stop_detached(struct memacct_bpf *skel)
{
	sigset_t all, old;
	int p[2];
	pid_t pid;

	if (scan_fds() <= 0 || pipe2(p, O_CLOEXEC)) {
		loader_stop(skel);
		return;
	}
	rel.rfd = p[0];
	rel.wfd = p[1];
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(release_helper, release_stack + sizeof(release_stack), CLONE_VM | SIGCHLD,
		    NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		p_info("release helper: clone: %s; detaching here", strerror(errno));
		close(p[1]);
		loader_stop(skel);
		return;
	}
	/* the helper holds its own references to the perf events now: our
	 * closes below are not the last, so they return at once; p[1] stays
	 * open until we exit */
	loader_stop(skel);
}

uint64_t prog_run_misses(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	/* an older kernel's shorter info leaves the field 0 (5.12+) */
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.recursion_misses : 0;
}

void loader_dropped(struct memacct_bpf *skel, uint64_t out[MEMACCT_DROP_NR])
{
	for (int i = 0; i < MEMACCT_DROP_NR; i++)
		out[i] = __atomic_load_n(&skel->bss->dropped[i], __ATOMIC_RELAXED);
}

uint64_t loader_runs_skipped(struct memacct_bpf *skel)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, skel->obj)
		n += prog_run_misses(bpf_program__fd(prog));
	return n;
}
