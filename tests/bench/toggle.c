// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * toggle: attach and detach whole sets of already loaded BPF programs, so
 * that tests/bench/paired.py alternates its arms for each workload without
 * starting, settling and stopping a daemon per visit (docs/overhead.md "How
 * the per-event cost is measured").
 *
 * Commands on stdin, one per line; each is answered with one line, "ok ..."
 * or "error ...":
 *   take ARM            take every tracepoint link created since the last
 *                       take (raw_tp/tp_btf links and perf-event tracepoint
 *                       links) as ARM: hold a reference on each link's
 *                       program, remember its tracepoint. The caller then
 *                       stops the process that loaded them (its own links
 *                       go; the programs and their maps stay, held here).
 *   take ARM CAT/NAME   the same for the programs loaded since the last take
 *                       that have no link (bpftrace attaches with
 *                       PERF_EVENT_IOC_SET_BPF): each BPF_PROG_TYPE_TRACEPOINT
 *                       one, on tracepoint CAT/NAME
 *   on ARM / off ARM    attach ARM's programs with links of our own / close
 *                       them (a closed raw_tp link unregisters its probe
 *                       before close() returns)
 *   quit                everything off, exit 0 (also on stdin EOF)
 * The programs run exactly as their loader built them (rodata, maps): only
 * the userspace of that loader is gone. Its ring buffers are drained here
 * before every command (memacct's exits ring: a full one would leave exited
 * processes in its procs map until the map is full, and every later process
 * would then be dropped, a cheaper path than the one measured).
 * Tracepoint names of perf-event links come from BPF_OBJ_GET_INFO_BY_FD
 * (bpf_perf_link_fill_link_info(), kernel/bpf/syscall.c, since v6.6); older
 * kernels answer "error" and paired.py falls back to process arms. Needs
 * root. Exit 0: errors are answered on stdout, not fatal.
 */
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAX_PROGS 256
#define MAX_ARMS 8

struct prog {
	int arm;
	int fd;			/* the program, held */
	int raw;		/* 1: raw_tp/tp_btf link; 0: perf-event tracepoint */
	char tp[128];		/* raw_tp name ("" for tp_btf: in the program) or perf event id path */
	int link_fd, perf_fd;	/* while on; else -1 */
};

static struct prog progs[MAX_PROGS];
static int nprogs;
static char arms[MAX_ARMS][32];
static int narms;
static __u32 link_mark, prog_mark;	/* highest ids seen by the last take */
static struct ring_buffer *rings;	/* every ring buffer map of the programs taken */
static __u32 ring_ids[16];
static int nrings;

static int drop_record(void *ctx, void *data, size_t size)
{
	return 0;
}

/* drain the ring buffers of @prog_fd's maps from now on */
static void add_rings(int prog_fd)
{
	__u32 ids[64], pl;
	struct bpf_prog_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 64;
	pi.map_ids = (unsigned long)ids;
	pl = sizeof(pi);
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &pl))
		return;
	for (__u32 i = 0; i < pi.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 ml = sizeof(mi);
		int j, fd;

		for (j = 0; j < nrings && ring_ids[j] != ids[i]; j++)
			;
		if (j < nrings || nrings == 16)
			continue;
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &ml) || mi.type != BPF_MAP_TYPE_RINGBUF) {
			close(fd);
			continue;
		}
		if (!rings)
			rings = ring_buffer__new(fd, drop_record, NULL, NULL);
		else
			ring_buffer__add(rings, fd, drop_record, NULL);
		ring_ids[nrings++] = ids[i];	/* the ring holds the map: fd kept */
	}
}

/* struct bpf_link_info as of 6.6 for the perf_event member (uapi
 * linux/bpf.h; Debian 12's header predates it): offsets fixed by the ABI */
struct link_info_pe {
	__u32 type, id, prog_id, pad;
	__u32 pe_type, pad2;	/* enum bpf_perf_event_type: 5 is TRACEPOINT */
	__u64 tp_name;
	__u32 name_len, pad3;
	__u64 cookie;
	__u8 rest[64];
};

static int arm_of(const char *name, int create)
{
	for (int i = 0; i < narms; i++)
		if (!strcmp(arms[i], name))
			return i;
	if (!create || narms == MAX_ARMS)
		return -1;
	snprintf(arms[narms], sizeof(arms[narms]), "%s", name);
	return narms++;
}

/* tracefs id file of event CAT/NAME, or NAME in any category ("" when none
 * or several), under tracefs or debugfs's tracing, as libbpf looks */
static void event_id_path(const char *cat_name, char *out, size_t n)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char pat[256];
	glob_t g;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !out[0]; i++) {
		snprintf(pat, sizeof(pat), strchr(cat_name, '/') ? "%s/events/%s/id" :
			 "%s/events/*/%s/id", roots[i], cat_name);
		if (!glob(pat, 0, NULL, &g) && g.gl_pathc == 1)
			snprintf(out, n, "%s", g.gl_pathv[0]);
		globfree(&g);
	}
}

static int add_prog(int arm, __u32 prog_id, int raw, const char *tp)
{
	struct prog *p = &progs[nprogs];

	if (nprogs == MAX_PROGS)
		return -E2BIG;
	p->fd = bpf_prog_get_fd_by_id(prog_id);
	if (p->fd < 0)
		return -errno;
	add_rings(p->fd);
	p->arm = arm;
	p->raw = raw;
	p->link_fd = p->perf_fd = -1;
	snprintf(p->tp, sizeof(p->tp), "%s", tp);
	nprogs++;
	return 0;
}

/* the links created since the last take: returns programs taken or -errno */
static int take_links(int arm)
{
	__u32 id = link_mark, next;
	int n = 0, err;

	while (!bpf_link_get_next_id(id, &next)) {
		struct link_info_pe li;
		__u32 len = sizeof(li);
		char name[128] = "", path[256];
		int fd;

		id = next;
		link_mark = id;
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(&li, 0, sizeof(li));	/* no name buffers: type and ids */
		if (bpf_obj_get_info_by_fd(fd, &li, &len)) {
			close(fd);
			continue;
		}
		if (li.type == BPF_LINK_TYPE_RAW_TRACEPOINT) {
			struct bpf_link_info ri = { 0 };
			struct bpf_prog_info pi = { 0 };
			__u32 rl = sizeof(ri), pl = sizeof(pi);

			ri.raw_tracepoint.tp_name = (unsigned long)name;
			ri.raw_tracepoint.tp_name_len = sizeof(name);
			bpf_obj_get_info_by_fd(fd, &ri, &rl);
			err = add_prog(arm, li.prog_id, 1, name);
			/* tp_btf (BPF_PROG_TYPE_TRACING): the program names its
			 * tracepoint, and the attach takes no name */
			if (!err && !bpf_obj_get_info_by_fd(progs[nprogs - 1].fd, &pi, &pl) &&
			    pi.type == BPF_PROG_TYPE_TRACING)
				progs[nprogs - 1].tp[0] = '\0';
		} else if (li.type == BPF_LINK_TYPE_PERF_EVENT) {
			memset(&li, 0, sizeof(li));
			li.tp_name = (unsigned long)name;
			li.name_len = sizeof(name);
			len = sizeof(li);
			if (bpf_obj_get_info_by_fd(fd, &li, &len) || li.pe_type != 5 || !name[0]) {
				close(fd);
				return -EOPNOTSUPP;	/* before 6.6, or not a tracepoint */
			}
			event_id_path(name, path, sizeof(path));
			err = path[0] ? add_prog(arm, li.prog_id, 0, path) : -ENOENT;
		} else {
			close(fd);
			continue;	/* iterators, cgroups, ...: not ours to toggle */
		}
		close(fd);
		if (err)
			return err;
		n++;
	}
	return n;
}

/* programs loaded since the last take with no link: BPF_PROG_TYPE_TRACEPOINT
 * ones go on tracepoint @cat_name */
static int take_progs(int arm, const char *cat_name)
{
	__u32 id = prog_mark, next;
	char path[256];
	int n = 0, err;

	event_id_path(cat_name, path, sizeof(path));
	if (!path[0])
		return -ENOENT;
	while (!bpf_prog_get_next_id(id, &next)) {
		struct bpf_prog_info pi = { 0 };
		__u32 pl = sizeof(pi);
		int fd;

		id = next;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &pi, &pl) && pi.type == BPF_PROG_TYPE_TRACEPOINT) {
			err = add_prog(arm, id, 0, path);
			if (err) {
				close(fd);
				return err;
			}
			n++;
		}
		close(fd);
	}
	return n;
}

static void marks_now(void)
{
	__u32 next;

	while (!bpf_link_get_next_id(link_mark, &next))
		link_mark = next;
	while (!bpf_prog_get_next_id(prog_mark, &next))
		prog_mark = next;
}

static int perf_tracepoint(const char *id_path)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .sample_period = 1, .wakeup_events = 1 };
	FILE *f = fopen(id_path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", (unsigned long long *)&a.config) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	/* pid -1, cpu 0: a program on a tracepoint event runs on every CPU */
	ok = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return ok < 0 ? -errno : ok;
}

static int prog_on(struct prog *p)
{
	if (p->link_fd >= 0)
		return 0;
	if (p->raw) {
		p->link_fd = bpf_raw_tracepoint_open(p->tp[0] ? p->tp : NULL, p->fd);
		return p->link_fd < 0 ? -errno : 0;
	}
	p->perf_fd = perf_tracepoint(p->tp);
	if (p->perf_fd < 0)
		return p->perf_fd;
	p->link_fd = bpf_link_create(p->fd, p->perf_fd, BPF_PERF_EVENT, NULL);
	if (p->link_fd < 0) {
		int err = -errno;

		close(p->perf_fd);
		p->perf_fd = -1;
		return err;
	}
	return 0;
}

static void *prog_off(void *arg)
{
	struct prog *p = arg;

	if (p->link_fd >= 0)
		close(p->link_fd);
	if (p->perf_fd >= 0)
		close(p->perf_fd);
	p->link_fd = p->perf_fd = -1;
	return NULL;
}

/*
 * Off closes every link of the arm at once, each from its own thread. A
 * raw_tp link goes in ~0.1 ms; a perf-event link on a syscall tracepoint
 * waits for RCU grace periods under the kernel's event mutex (syscall
 * tracepoints may fault since 6.14), 20-40 ms each, one after another: 30 to
 * 650 ms for memacct's 17 (on, ~2 ms, is cheap).
 */
static int arm_set(int arm, int on)
{
	pthread_t th[MAX_PROGS];
	int n = 0, err;

	for (int i = 0; i < nprogs; i++) {
		if (progs[i].arm != arm)
			continue;
		if (on) {
			err = prog_on(&progs[i]);
			if (err)
				return err;
		} else if (pthread_create(&th[i], NULL, prog_off, &progs[i])) {
			prog_off(&progs[i]);
			th[i] = 0;
		}
		n++;
	}
	for (int i = 0; !on && i < nprogs; i++)
		if (progs[i].arm == arm && th[i])
			pthread_join(th[i], NULL);
	return n;
}

int main(void)
{
	char line[256], cmd[16], name[32], tp[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	marks_now();
	while (fgets(line, sizeof(line), stdin)) {
		int k = sscanf(line, "%15s %31s %127s", cmd, name, tp), arm, n;

		if (rings)
			ring_buffer__consume(rings);

		if (k >= 1 && !strcmp(cmd, "quit"))
			break;
		if (k < 2) {
			printf("error usage: take ARM [CAT/NAME] | on ARM | off ARM | quit\n");
			continue;
		}
		arm = arm_of(name, !strcmp(cmd, "take"));
		if (arm < 0) {
			printf("error no arm %s\n", name);
			continue;
		}
		if (!strcmp(cmd, "take")) {
			n = k == 3 ? take_progs(arm, tp) : take_links(arm);
			marks_now();
		} else if (!strcmp(cmd, "on") || !strcmp(cmd, "off")) {
			n = arm_set(arm, !strcmp(cmd, "on"));
		} else {
			printf("error unknown command %s\n", cmd);
			continue;
		}
		if (n < 0)
			printf("error %s %s: %s\n", cmd, name, strerror(-n));
		else
			printf("ok %d\n", n);
	}
	for (int i = 0; i < narms; i++)
		arm_set(i, 0);
	return 0;
}
