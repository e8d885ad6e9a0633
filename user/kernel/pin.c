// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* pin.c - load once, pin under bpffs, re-attach after a restart (pin.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_loader.h"
#include "bss_layout.h"
#include "memacct.skel.h"
#include "pin.h"
#include "records.h"
#include "task_walk.h"
#include "proc.h"
#include "cgroup.h"
#include "dma_ranges.h"
#include "util.h"

/* Every program of the object has a slot in struct pinned (bpf_stats, the
 * links-gone check): past PIN_MAX_PROGS one would be left out silently. */
_Static_assert(sizeof(((struct memacct_bpf *)0)->progs) / sizeof(struct bpf_program *) <=
	       PIN_MAX_PROGS, "more BPF programs than PIN_MAX_PROGS: raise it (user/kernel/pin.h)");

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define BPF_FS_MAGIC_ 0xcafe4a11

struct map_want {
	const char *name;
	size_t key_size, value_size;	/* 0: not checked */
	bool optional;			/* pins of an older build lack it: made and
					 * pinned at the reload their .bss asks for */
};

static const struct map_want maps_wanted[] = {
	{ "procs", sizeof(struct memacct_proc_key), sizeof(struct memacct_proc), false },
	{ "cgroups", sizeof(__u64), sizeof(struct memacct_cgroup), false },
	{ "exits", 0, 0, false },
	{ "bss", 4, 0, false },	/* its layout, not its size: bss_layout_check() */
	{ "dma_ranges", sizeof(struct memacct_dma_range_key), sizeof(struct memacct_dma_range_val), false },
	{ "oom_events", 0, 0, false },
	{ "oom_history", sizeof(__u32), sizeof(struct memacct_oom_event), false },
	{ "cow_maps", sizeof(struct memacct_proc_key), sizeof(struct memacct_cow_maps), true },
	{ "page_cache", sizeof(struct memacct_page_cache_key),
	  sizeof(struct memacct_page_cache_file), true },
};

#define NMAPS_WANTED (sizeof(maps_wanted) / sizeof(maps_wanted[0]))

static int *map_fd_slot(struct pinned *p, int i)
{
	int *slots[] = { &p->procs_fd, &p->cgroups_fd, &p->exits_fd, &p->bss_fd,
			 &p->dma_ranges_fd, &p->oom_events_fd, &p->oom_history_fd,
			 &p->cow_maps_fd, &p->page_cache_fd };

	return slots[i];
}

static void path_of(char *buf, size_t n, const char *dir, const char *sub, const char *name)
{
	snprintf(buf, n, "%s/%s/%s", dir, sub, name);
}

int pin_check_dir(const char *dir)
{
	char parent[256], *slash;
	struct statfs fs;

	if (!dir[0]) {
		p_err("--pin-path: an empty path");
		return -ENOTSUP;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	/* like bpftool: mount the standard bpffs when nobody did */
	if (!strcmp(parent, "/sys/fs/bpf") && !statfs(parent, &fs) &&
	    fs.f_type != BPF_FS_MAGIC_ && mount("bpf", parent, "bpf", 0, "mode=0700"))
		p_warn("mounting bpffs on %s: %s", parent, strerror(errno));
	/* DIR itself when it exists (it may be a bpffs mount point), else its parent */
	if (!statfs(dir, &fs) && fs.f_type == BPF_FS_MAGIC_)
		return 0;
	if (statfs(parent, &fs) || fs.f_type != BPF_FS_MAGIC_) {
		p_err("%s is not on a bpffs (mount -t bpf bpf /sys/fs/bpf)", parent);
		return -ENOTSUP;
	}
	return 0;
}

static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

/*
 * The perf event fault hook's links, one per CPU: DIR/links/page_fault_perf_cpuN.
 * No dot: bpffs refuses names with one (EPERM, kernel/bpf/inode.c
 * bpf_lookup(): "Dots in names ... are reserved").
 */
#define PERF_LINK_PREFIX "page_fault_perf_cpu"

static bool is_perf_link(const char *name)
{
	return !strncmp(name, PERF_LINK_PREFIX, sizeof(PERF_LINK_PREFIX) - 1);
}

/* The entry of @p->progs for a pinned link named @name: a perf hook link
 * (NAME_cpuI) is counted into its program's one entry, made on the first. */
static int add_prog_of_link(struct pinned *p, int link_fd, const char *name)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);
	bool perf = is_perf_link(name);
	int fd;

	for (int i = 0; perf && i < p->nprogs; i++)
		if (p->progs[i].cpu_links > 0) {
			p->progs[i].cpu_links++;
			return 0;
		}
	if (p->nprogs >= PIN_MAX_PROGS)
		return 0;
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(link_fd, &li, &len))
		return -errno;
	fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (fd < 0)
		return -errno;
	snprintf(p->progs[p->nprogs].name, sizeof(p->progs[0].name), "%.31s",
		 perf ? "page_fault_perf" : name);
	p->progs[p->nprogs].cpu_links = perf;
	p->progs[p->nprogs].held = false;
	p->progs[p->nprogs++].fd = fd;
	return 0;
}

static void reattach_perf_hook(struct pinned *p);
static struct memacct_bpf__bss *bss_read(const struct pinned *p, int *err);
static int mkdir_made(const char *path);
static int unpin_ours(const char *dir, const char *sub, int *kept);

/*
 * Whether the pinned .bss (@p->bss_fd) is laid out as this build's: the same
 * variables at the same offsets (BTF, bss_layout.h). When it is not, its
 * layout is kept in @p->bss_old: pin_open() loads the programs again and
 * carries its values across by name. Without BTF on either side, the sizes
 * alone are compared, and a difference refuses the pins. 0 or -errno
 * (printed).
 */
static int bss_layout_check(struct pinned *p, __u32 pinned_size)
{
	struct bss_layout mine, pinned;
	struct memacct_bpf *skel;
	int err = -ENOENT;

	/* .bss also holds static variables the skeleton does not show: take
	 * its layout from this build's object, unloaded */
	skel = memacct_bpf__open();
	if (skel) {
		err = bss_layout_of_object(skel->obj, &mine);
		if (err)
			mine.size = bpf_map__value_size(skel->maps.bss);
		memacct_bpf__destroy(skel);
	}
	if (!skel) {
		err = -errno;
		p_err("opening this build's BPF object: %s", strerror(-err));
		return err;
	}
	if (!err)
		err = bss_layout_of_map(p->bss_fd, &pinned);
	if (err) {	/* a side without BTF: the sizes only */
		__u32 size = mine.size;

		bss_layout_free(&mine);
		if (pinned_size == size)
			return 0;
		p_err("the pinned .bss has %u bytes, this build's %u, and no BTF tells which "
		      "variable is where: pinned by another version; run 'memacct detach' first",
		      pinned_size, size);
		return -EPROTO;
	}
	if (bss_layout_equal(&mine, &pinned)) {
		bss_layout_free(&mine);
		bss_layout_free(&pinned);
		return 0;
	}
	bss_layout_free(&mine);
	p->bss_old = malloc(sizeof(*p->bss_old));
	if (!p->bss_old) {
		bss_layout_free(&pinned);
		return -ENOMEM;
	}
	*p->bss_old = pinned;
	return 0;
}

/*
 * The pinned maps opened into @p, each checked against this build's key and
 * value sizes (.bss: its layout, bss_layout_check()), with their sizes kept.
 */
static int reattach_maps(struct pinned *p)
{
	char path[512];
	struct bpf_map_info info;
	int err;

	for (size_t i = 0; i < sizeof(maps_wanted) / sizeof(maps_wanted[0]); i++) {
		const struct map_want *w = &maps_wanted[i];
		int fd;

		path_of(path, sizeof(path), p->dir, "maps", w->name);
		fd = bpf_obj_get(path);
		if (fd < 0 && w->optional && errno == ENOENT) {
			*map_fd_slot(p, i) = -1;
			continue;
		}
		if (fd < 0) {
			p_err("%s: %s (incomplete pins: run memacct detach)", path, strerror(errno));
			return -EPROTO;
		}
		*map_fd_slot(p, i) = fd;
		err = map_info(fd, &info);
		if (err)
			return err;
		if (w->key_size && (info.key_size != w->key_size ||
				    (w->value_size && info.value_size != w->value_size))) {
			p_err("pinned map %s has key/value sizes %u/%u, this build needs %zu/%zu: "
			      "pinned by another version; run 'memacct detach' first",
			      path, info.key_size, info.value_size, w->key_size, w->value_size);
			return -EPROTO;
		}
		if (!strcmp(w->name, "procs"))
			p->procs_max = info.max_entries;
		else if (!strcmp(w->name, "cgroups"))
			p->cgroups_max = info.max_entries;
		else if (!strcmp(w->name, "page_cache"))
			p->page_cache_max = info.max_entries;
		else if (!strcmp(w->name, "bss"))
			p->bss_size = info.value_size;
	}
	return bss_layout_check(p, p->bss_size);
}

/* The fault hook whose program a pinned link named @name runs, or NULL. */
static const char *link_fault_hook(const char *name)
{
	if (is_perf_link(name))
		return "perf";
	if (!strncmp(name, "page_fault_user", 15))
		return "tracepoint";
	return NULL;
}

bool pin_dir_fault_hooked(const char *dir)
{
	char path[512];
	struct dirent *de;
	bool hooked = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/links", dir);
	d = opendir(path);
	if (!d)
		return true;
	while (!hooked && (de = readdir(d)))
		hooked = link_fault_hook(de->d_name);
	closedir(d);
	return hooked;
}

/*
 * The pinned links: the task iterator's kept open, the fault hook named,
 * each link's program listed (for bpf_stats). 0 or -errno.
 */
static int reattach_links(struct pinned *p)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int err;

	snprintf(path, sizeof(path), "%s/links", p->dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char lp[768];
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(lp, sizeof(lp), "%s/%s", path, de->d_name);
		fd = bpf_obj_get(lp);
		if (fd < 0)
			continue;
		if (!strcmp(de->d_name, "task_stocks"))
			p->iter_link_fd = fd;
		if (link_fault_hook(de->d_name))
			snprintf(p->fault_hook, sizeof(p->fault_hook), "%s",
				 link_fault_hook(de->d_name));
		err = add_prog_of_link(p, fd, de->d_name);
		if (fd != p->iter_link_fd)
			close(fd);
		if (err)
			p_warn("program of link %s: %s", lp, strerror(-err));
	}
	closedir(d);
	return 0;
}

static int reload_on_pinned_maps(struct pinned *p);

/* The links pinned now in DIR/links (each CPU's of the fault hook apart). */
static int links_found(const struct pinned *p)
{
	int n = 0;

	for (int i = 0; i < p->nprogs; i++)
		n += p->progs[i].cpu_links > 0 ? p->progs[i].cpu_links : 1;
	return n;
}

static int reattach(struct pinned *p)
{
	struct memacct_bpf__bss *bss;
	uint64_t pinned;
	int err, n;

	err = reattach_maps(p);
	if (err)
		return err;
	if (p->bss_old) {	/* an upgrade: the programs of this build, the counters carried */
		p_warn("%s: the pinned .bss is laid out by another build of memacct (%d variables, "
		       "%u bytes; this build's differ): loading this build's programs on the pinned "
		       "maps and carrying the counters across by name", p->dir, p->bss_old->n,
		       p->bss_old->size);
		err = reload_on_pinned_maps(p);
		bss_layout_free(p->bss_old);
		free(p->bss_old);
		p->bss_old = NULL;
		return err;
	}
	err = reattach_links(p);
	if (err)
		return err;
	p->reattached = true;
	/* as many links as were pinned at load, or load them again */
	bss = bss_read(p, &err);
	pinned = bss ? bss->links_pinned : 0;
	free(bss);
	n = links_found(p);
	if (pinned > (uint64_t)n) {
		p_warn("%s: %d of the %llu links pinned at load are gone (their programs "
		       "detached): loading the programs again on the pinned maps, whose counters "
		       "carry on", p->dir, (int)(pinned - n), (unsigned long long)pinned);
		return reload_on_pinned_maps(p);
	}
	if (p->iter_link_fd < 0) {
		p_err("no task_stocks iterator pinned in %s/links: pinned by another version; "
		      "run 'memacct detach' first", p->dir);
		return -EPROTO;
	}
	if (!strcmp(p->fault_hook, "none"))
		reattach_perf_hook(p);
	return 0;
}

/*
 * The perf event fault hook (docs/metrics.md "Fault hooks"): its program is
 * pinned (DIR/progs/page_fault_perf), so that a daemon restarted on the pins
 * can attach it again; its per-CPU links too (DIR/links/page_fault_perf_cpuN),
 * so that it keeps counting while no daemon runs, where the kernel has perf
 * links (v5.15, b89fbfbb854c "bpf: Implement minimal BPF perf link"). Where
 * it has not, this daemon holds them: faults are not classified between its
 * exit and the next start.
 */
static int pin_perf_hook(struct pinned *p)
{
	struct bpf_program *prog = bpf_program__autoload(p->skel->progs.page_fault_perf) ?
				   p->skel->progs.page_fault_perf :
				   p->skel->progs.page_fault_perf_old;
	char path[512], dir[512], name[32];
	const int *lfd;
	int n = loader_perf_links(&lfd), err = 0, i;

	snprintf(dir, sizeof(dir), "%s/progs", p->dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	path_of(path, sizeof(path), p->dir, "progs", "page_fault_perf");
	if (bpf_obj_pin(bpf_program__fd(prog), path)) {
		err = -errno;
		p_err("pinning %s: %s", path, strerror(-err));
		return err;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), PERF_LINK_PREFIX "%d", i);
		path_of(path, sizeof(path), p->dir, "links", name);
		if (lfd[i] < 0) {
			err = -EOPNOTSUPP;
			break;
		}
		if (bpf_obj_pin(lfd[i], path)) {
			err = -errno;
			break;
		}
	}
	if (!err) {
		if (p->nprogs < PIN_MAX_PROGS) {
			snprintf(p->progs[p->nprogs].name, sizeof(p->progs[0].name),
				 "page_fault_perf");
			p->progs[p->nprogs].cpu_links = n;
			p->progs[p->nprogs].held = false;
			p->progs[p->nprogs++].fd = dup(bpf_program__fd(prog));
		}
		return 0;
	}
	/* all or none: the links pinned so far go */
	while (i-- > 0) {
		snprintf(name, sizeof(name), PERF_LINK_PREFIX "%d", i);
		path_of(path, sizeof(path), p->dir, "links", name);
		unlink(path);
	}
	p_warn("the fault hook's perf event links cannot be pinned here (%s): this daemon "
	       "holds them, and faults are not classified while no daemon runs",
	       err == -EOPNOTSUPP ? "no perf links before v5.15" : strerror(-err));
	return 0;
}

/* Re-attach: the pinned perf event hook's program on every CPU, held by this
 * daemon, where its links were not pinned (pin_perf_hook()). */
static void reattach_perf_hook(struct pinned *p)
{
	char path[512];
	int fd, err;

	path_of(path, sizeof(path), p->dir, "progs", "page_fault_perf");
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	err = loader_perf_attach(fd);
	close(fd);
	if (err)
		p_warn("re-attaching the fault hook (%s): %s: CoW and zero fills not classified",
		       path, strerror(-err));
	else
		snprintf(p->fault_hook, sizeof(p->fault_hook), "perf");
}

/* The maps of @skel that are pinned, in maps_wanted[]'s order. */
static void pinned_maps(struct memacct_bpf *skel, struct bpf_map *maps[NMAPS_WANTED])
{
	maps[0] = skel->maps.procs;
	maps[1] = skel->maps.cgroups;
	maps[2] = skel->maps.exits;
	maps[3] = skel->maps.bss;
	maps[4] = skel->maps.dma_ranges;
	maps[5] = skel->maps.oom_events;
	maps[6] = skel->maps.oom_history;
	maps[7] = skel->maps.cow_maps;
	maps[8] = skel->maps.page_cache;
	_Static_assert(9 == NMAPS_WANTED, "every wanted map pinned");
}

/*
 * The links of the loaded @p->skel pinned at DIR/links/NAME (and the fault
 * hook's per CPU), their programs listed, and their number written to the
 * pinned .bss (links_pinned). A tracepoint's link (tp/) is a perf event
 * link, which the kernel pins only from v5.15 (b89fbfbb854c "bpf: Implement
 * minimal BPF perf link"; before, libbpf's link is the perf event's fd and
 * pinning it fails with EINVAL): this daemon holds it, and counts it in
 * links_pinned, so that a daemon restarted on the pins finds it missing
 * and loads the programs again on the pinned maps (reattach()). 0 or
 * -errno (printed); the caller unpins.
 */
static int pin_links(struct pinned *p)
{
	const struct bpf_object_skeleton *s = p->skel->skeleton;
	char path[512], held[256] = "";
	int err, n = 0, nheld = 0;

	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link *l = *s->progs[i].link;
		const char *sec = bpf_program__section_name(*s->progs[i].prog);

		if (!l)
			continue;
		path_of(path, sizeof(path), p->dir, "links", s->progs[i].name);
		err = bpf_link__pin(l, path);
		if (err == -EINVAL && !strncmp(sec, "tp/", 3)) {
			size_t len = strlen(held);

			snprintf(held + len, sizeof(held) - len, "%s%s", nheld ? ", " : "",
				 s->progs[i].name);
			nheld++;
		} else if (err) {
			p_err("pinning %s: %s", path, strerror(-err));
			return err;
		}
		n++;
		if (p->nprogs < PIN_MAX_PROGS) {
			snprintf(p->progs[p->nprogs].name, sizeof(p->progs[0].name), "%.31s",
				 s->progs[i].name);
			p->progs[p->nprogs].cpu_links = 0;
			p->progs[p->nprogs].held = err != 0;
			p->progs[p->nprogs++].fd = dup(bpf_program__fd(*s->progs[i].prog));
		}
		if (!strcmp(s->progs[i].name, "task_stocks"))
			p->iter_link_fd = dup(bpf_link__fd(l));
	}
	if (loader_fault_hook == LOADER_FAULT_PERF) {
		int before = p->nprogs;

		err = pin_perf_hook(p);
		if (err)
			return err;
		if (p->nprogs > before)	/* its per-CPU links pinned */
			n += p->progs[before].cpu_links;
	}
	snprintf(p->fault_hook, sizeof(p->fault_hook), "%s",
		 loader_fault_hook_name(loader_fault_hook));
	if (p->iter_link_fd < 0) {
		p_err("the task_stocks iterator did not attach (kernel without iter/task?)");
		return -ENOTSUP;
	}
	p->skel->bss->links_pinned = n;
	if (nheld)
		p_warn("%d tracepoint links cannot be pinned here (no perf links before v5.15): "
		       "this daemon holds them (%s): their events are not counted while no "
		       "daemon runs, and a daemon restarted on the pins loads the programs "
		       "again", nheld, held);
	return 0;
}

static int load_and_pin(struct pinned *p)
{
	struct loader_opts o = { 0 };	/* every process */
	struct bpf_map *maps[NMAPS_WANTED];
	char path[512];
	int err;

	o.fallback_cgid = memcg_root_id();
	o.task_iter = true;
	err = loader_start(&o, &p->skel);
	if (err)
		return err;
	loader_oom_seen_seed(p->skel, NULL);
	pinned_maps(p->skel, maps);
	for (size_t i = 0; i < NMAPS_WANTED; i++) {
		path_of(path, sizeof(path), p->dir, "maps", maps_wanted[i].name);
		err = bpf_map__pin(maps[i], path);
		if (err) {
			p_err("pinning %s: %s", path, strerror(-err));
			goto out_unpin;
		}
		*map_fd_slot(p, i) = dup(bpf_map__fd(maps[i]));
	}
	p->procs_max = bpf_map__max_entries(p->skel->maps.procs);
	p->cgroups_max = bpf_map__max_entries(p->skel->maps.cgroups);
	p->page_cache_max = bpf_map__max_entries(p->skel->maps.page_cache);
	p->bss_size = bpf_map__value_size(p->skel->maps.bss);
	err = pin_links(p);
	if (err)
		goto out_unpin;
	return 0;

out_unpin:
	pin_remove(p->dir);
	return err;
}

/* before_load of a reload: the programs get the pinned maps (the records,
 * the rings and the .bss counters carry on). */
static int reuse_pinned_maps(struct memacct_bpf *skel, void *ctx)
{
	struct pinned *p = ctx;
	struct bpf_map *maps[NMAPS_WANTED];
	int err;

	pinned_maps(skel, maps);
	for (size_t i = 0; i < NMAPS_WANTED; i++) {
		if (maps[i] == skel->maps.bss && p->bss_old)
			continue;	/* another layout: a new one, carry_bss() */
		if (*map_fd_slot(p, i) < 0)
			continue;	/* not pinned by that build: a new one, pinned after */
		err = bpf_map__reuse_fd(maps[i], *map_fd_slot(p, i));
		if (err) {
			p_err("reusing the pinned map %s: %s", maps_wanted[i].name,
			      strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * after_load of a reload on a pinned .bss of another layout: the old
 * values, read now (the old programs are detached: nothing adds to them),
 * written into the new .bss by name before any new program runs.
 */
static int carry_bss(struct memacct_bpf *skel, void *ctx)
{
	struct pinned *p = ctx;
	struct bss_layout mine;
	struct bss_carry c;
	__u32 key = 0;
	char *old;
	int err;

	err = bss_layout_of_object(skel->obj, &mine);
	if (err) {
		p_err("the layout of this build's .bss: %s", strerror(-err));
		return err;
	}
	old = calloc(1, p->bss_size);
	if (!old || bpf_map_lookup_elem(p->bss_fd, &key, old)) {
		err = old ? -errno : -ENOMEM;
		p_err("reading the pinned .bss: %s", strerror(-err));
		free(old);
		bss_layout_free(&mine);
		return err;
	}
	bss_layout_carry(p->bss_old, old, &mine, skel->bss, &c);
	free(old);
	bss_layout_free(&mine);
	p_notice("%s: .bss of another layout: %d variables carried, %d new (at their initial "
		 "value), %d of the old build's dropped", p->dir, c.carried, c.fresh, c.dropped);
	return 0;
}

/* The .bss of the reloaded @p->skel pinned in place of the old one. */
static int repin_bss(struct pinned *p)
{
	char path[512];
	int err;

	path_of(path, sizeof(path), p->dir, "maps", "bss");
	if (unlink(path) && errno != ENOENT) {
		err = -errno;
		p_err("unpinning the old %s: %s", path, strerror(-err));
		return err;
	}
	err = bpf_map__pin(p->skel->maps.bss, path);
	if (err) {
		p_err("pinning %s: %s", path, strerror(-err));
		return err;
	}
	close(p->bss_fd);
	p->bss_fd = dup(bpf_map__fd(p->skel->maps.bss));
	p->bss_size = bpf_map__value_size(p->skel->maps.bss);
	return 0;
}

/*
 * The programs loaded again on the pinned maps, in two cases (the caller
 * says which):
 * - Links of the pinned kernel side were removed while no daemon ran (by
 *   hand, or by a tool that is not memacct): their programs are detached,
 *   and a daemon that only re-attached counted without them, /healthz 200
 *   (issue 39).
 * - The pinned .bss is laid out by another build (@p->bss_old): the old
 *   programs keep counting into it, and this build would misread it. The
 *   new programs get a .bss of their own, which takes the old values by
 *   name before they are attached, and is pinned in the old one's place.
 * The old links are unpinned (the rest of the old programs detach) and the
 * new ones pinned: the counters, records and rings carry on. Lost: what the
 * old programs held in their unpinned maps (at most a fold batch of pending
 * flows a CPU, faults in flight), anything the removed programs did not see
 * while they were detached, and the events between the unpinning and the
 * new attach (the load's verification: seconds). 0 or -errno (printed).
 */
/* A map that pins of an older build lack (@*fd < 0), pinned now from the
 * reloaded skeleton at DIR/maps/@name; 0 or negative errno. */
static int pin_new_map(struct pinned *p, struct bpf_map *map, const char *name, int *fd)
{
	char path[512];
	int err;

	if (*fd >= 0)
		return 0;
	path_of(path, sizeof(path), p->dir, "maps", name);
	err = bpf_map__pin(map, path);
	if (err) {
		p_err("pinning %s: %s", path, strerror(-err));
		return err;
	}
	*fd = dup(bpf_map__fd(map));
	return *fd < 0 ? -errno : 0;
}

static int reload_on_pinned_maps(struct pinned *p)
{
	struct loader_opts o = { 0 };
	char links[512];
	int err, kept = 0;

	err = unpin_ours(p->dir, "links", &kept);
	if (!err)
		err = unpin_ours(p->dir, "progs", &kept);
	if (err || kept) {
		p_err("%s: unpinning the old links: %s", p->dir,
		      err ? strerror(-err) : "pins of another tool there");
		return err ? err : -EPROTO;
	}
	snprintf(links, sizeof(links), "%s/links", p->dir);
	err = mkdir_made(links);
	if (err < 0) {
		p_err("creating %s: %s", links, strerror(-err));
		return err;
	}
	for (int i = 0; i < p->nprogs; i++)
		close(p->progs[i].fd);
	p->nprogs = 0;
	if (p->iter_link_fd >= 0)
		close(p->iter_link_fd);
	p->iter_link_fd = -1;
	snprintf(p->fault_hook, sizeof(p->fault_hook), "none");
	o.fallback_cgid = memcg_root_id();
	o.task_iter = true;
	o.before_load = reuse_pinned_maps;
	o.before_load_ctx = p;
	if (p->bss_old)
		o.after_load = carry_bss;
	err = loader_start(&o, &p->skel);
	if (err)
		return err;
	loader_oom_seen_seed(p->skel, NULL);	/* a new map: the counts now */
	if (p->bss_old) {
		err = repin_bss(p);
		if (err)
			return err;
	}
	/* pins of a build before them */
	err = pin_new_map(p, p->skel->maps.cow_maps, "cow_maps", &p->cow_maps_fd);
	if (!err)
		err = pin_new_map(p, p->skel->maps.page_cache, "page_cache",
				  &p->page_cache_fd);
	if (!err)
		p->page_cache_max = bpf_map__max_entries(p->skel->maps.page_cache);
	if (err)
		return err;
	err = pin_links(p);
	if (err)
		return err;
	p->reattached = false;
	return 0;
}

/*
 * The process walk, loaded at every start (it keeps no state: nothing of it
 * is pinned). Without it, pin_read_stocks() reads the iter/task link.
 */
static void walk_open(struct pinned *p)
{
	int err = task_walk_open(4096, &p->walk);

	if (err == -ENOTSUP)
		p_info("no open-coded task iterator (kernel before 6.7): each collection "
		       "reads the task iterator, which visits every thread");
	else if (err)
		p_warn("loading the process walk: %s: each collection reads the task "
		       "iterator, which visits every thread (-v shows libbpf's log)",
		       strerror(-err));
}

/*
 * mkdir @path (0700): 1 when made here, 0 when it was there, or negative
 * errno.
 */
static int mkdir_made(const char *path)
{
	if (!mkdir(path, 0700))
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

/*
 * The value of the 4-byte .rodata variable @name of the loaded programs
 * @p->progs, from the kernel: a program's .rodata map (its map ids; the
 * map is not pinned) and the layout its BTF gives. 0 or negative errno
 * (-ENOENT: no program has one with @name).
 */
static int progs_rodata_u32(const struct pinned *p, const char *name, __u32 *out)
{
	int err = -ENOENT;

	for (int i = 0; i < p->nprogs && err == -ENOENT; i++) {
		__u32 ids[64], len = sizeof(struct bpf_prog_info);
		struct bpf_prog_info info = { .nr_map_ids = 64, .map_ids = (__u64)(unsigned long)ids };

		if (bpf_obj_get_info_by_fd(p->progs[i].fd, &info, &len))
			return -errno;
		for (__u32 j = 0; j < info.nr_map_ids && j < 64 && err == -ENOENT; j++) {
			int fd = bpf_map_get_fd_by_id(ids[j]);
			struct bpf_map_info mi;
			struct bss_layout l;
			__u32 zero = 0;
			char *val;

			if (fd < 0)
				continue;
			if (map_info(fd, &mi) || !strstr(mi.name, ".rodata") ||
			    bss_layout_of_map(fd, &l)) {
				close(fd);
				continue;
			}
			val = calloc(1, mi.value_size);
			for (int k = 0; val && k < l.n; k++)
				if (!strcmp(l.v[k].name, name) && l.v[k].size == sizeof(*out) &&
				    l.v[k].off + sizeof(*out) <= mi.value_size) {
					err = bpf_map_lookup_elem(fd, &zero, val) ? -errno : 0;
					if (!err)
						memcpy(out, val + l.v[k].off, sizeof(*out));
				}
			free(val);
			bss_layout_free(&l);
			close(fd);
		}
	}
	return err;
}

/* @p->fault_alloc_counted, from the loaded programs (struct pinned) */
static void learn_fault_alloc(struct pinned *p)
{
	__u32 ranges = 0;

	p->fault_alloc_counted = progs_rodata_u32(p, "nr_node_ranges", &ranges) || ranges > 0;
}

int pin_open(const char *dir, struct pinned *p)
{
	char maps[512], links[512], path[512];
	int err, made_dir, made_maps = 0, made_links = 0;

	memset(p, 0, sizeof(*p));
	p->procs_fd = p->cgroups_fd = p->exits_fd = p->bss_fd = p->iter_link_fd = -1;
	p->dma_ranges_fd = p->oom_events_fd = p->oom_history_fd = p->cow_maps_fd = -1;
	p->page_cache_fd = -1;
	p->lock_fd = -1;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	snprintf(p->fault_hook, sizeof(p->fault_hook), "none");
	snprintf(maps, sizeof(maps), "%s/maps", dir);
	snprintf(links, sizeof(links), "%s/links", dir);
	err = pin_check_dir(dir);
	if (err)
		return err;
	made_dir = mkdir_made(dir);
	if (made_dir < 0) {
		p_err("creating %s: %s", dir, strerror(-made_dir));
		return made_dir;
	}
	p->lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->lock_fd < 0 || flock(p->lock_fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		if (err == -EWOULDBLOCK) {
			p_err("another memacct daemon runs on %s (it holds the lock)", dir);
			pin_close(p);
			return -EBUSY;	/* its directory, even if made here a moment ago */
		}
		p_err("locking %s: %s", dir, strerror(-err));
		goto out_rmdir;
	}
	path_of(path, sizeof(path), dir, "maps", "procs");
	if (access(path, F_OK) == 0) {
		err = reattach(p);
		if (err)
			goto out_close;
		learn_fault_alloc(p);
		walk_open(p);
		return 0;
	}
	made_maps = mkdir_made(maps) > 0;
	made_links = mkdir_made(links) > 0;
	err = load_and_pin(p);
	if (err)
		goto out_rmdir;
	learn_fault_alloc(p);
	walk_open(p);
	return 0;

out_rmdir:
	/* a failed first start leaves no empty directories of its own (issue 23:
	 * out of descriptors, DIR, DIR/maps and DIR/links stayed) */
	if (made_links)
		rmdir(links);
	if (made_maps)
		rmdir(maps);
	if (made_dir)
		rmdir(dir);
out_close:
	pin_close(p);
	return err;
}

int pin_links_gone(const struct pinned *p)
{
	int found[PIN_MAX_PROGS] = { 0 };
	char path[512];
	struct dirent *de;
	int gone = 0;
	DIR *d;

	/* one directory read, not a path lookup per program (every collection) */
	snprintf(path, sizeof(path), "%s/links", p->dir);
	d = opendir(path);
	while (d && (de = readdir(d)))
		for (int i = 0; i < p->nprogs; i++) {
			bool cpu = p->progs[i].cpu_links > 0;

			if (cpu ? is_perf_link(de->d_name) :
				  !found[i] && !strcmp(de->d_name, p->progs[i].name)) {
				found[i]++;
				break;
			}
		}
	if (d)
		closedir(d);
	for (int i = 0; i < p->nprogs; i++)	/* a held link has no file */
		gone += !p->progs[i].held &&
			found[i] < (p->progs[i].cpu_links > 0 ? p->progs[i].cpu_links : 1);
	return gone;
}

void pin_close(struct pinned *p)
{
	int *fds[] = { &p->procs_fd, &p->cgroups_fd, &p->exits_fd, &p->bss_fd,
		       &p->dma_ranges_fd, &p->oom_events_fd, &p->oom_history_fd,
		       &p->cow_maps_fd, &p->page_cache_fd, &p->iter_link_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	for (int i = 0; i < p->nprogs; i++)
		if (p->progs[i].fd >= 0)
			close(p->progs[i].fd);
	p->nprogs = 0;
	task_walk_close(p->walk);
	p->walk = NULL;
	free(p->iter_stocks);
	p->iter_stocks = NULL;
	loader_perf_detach();	/* those of a re-attach; loader_stop() too */
	if (p->skel)
		loader_stop(p->skel);	/* the pinned links stay attached */
	p->skel = NULL;
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	p->lock_fd = -1;
}

/* "bpf-map", "bpf-link", ... for a BPF object fd (its anon inode's name), else "" */
static void bpf_obj_kind(int fd, char *kind, size_t n)
{
	char link[64], target[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, target, sizeof(target) - 1);
	target[len > 0 ? len : 0] = '\0';
	snprintf(kind, n, "%s", !strncmp(target, "anon_inode:", 11) ? target + 11 : "");
}

/*
 * Whether @path (named @name in DIR/@sub) is a pin of memacct's: maps/NAME
 * for NAME one of maps_wanted, a BPF map whose kernel name is NAME and
 * whose key and value sizes are this build's (the .bss map: "<object>.bss"); links/NAME a BPF link whose program's kernel
 * name is NAME (truncated to BPF_OBJ_NAME_LEN - 1 bytes, as the kernel
 * keeps it), the name load_and_pin() gives it.
 */
static bool is_our_pin(const char *path, const char *sub, const char *name)
{
	char kind[64];
	bool ours = false;
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return false;
	bpf_obj_kind(fd, kind, sizeof(kind));
	if (!strcmp(sub, "maps") && !strcmp(kind, "bpf-map")) {
		struct bpf_map_info info;

		for (size_t i = 0; i < sizeof(maps_wanted) / sizeof(maps_wanted[0]); i++)
			if (!strcmp(name, maps_wanted[i].name) && !map_info(fd, &info)) {
				size_t l = strlen(info.name);

				ours = !strcmp(name, "bss") ?
				       l > 4 && !strcmp(info.name + l - 4, ".bss") :
				       !strcmp(info.name, name) &&
				       (!maps_wanted[i].key_size ||
					(info.key_size == maps_wanted[i].key_size &&
					 info.value_size == maps_wanted[i].value_size));
			}
	} else if (!strcmp(sub, "progs") && !strcmp(kind, "bpf-prog")) {
		struct bpf_prog_info pi;
		__u32 len = sizeof(pi);

		memset(&pi, 0, sizeof(pi));
		ours = !strcmp(name, "page_fault_perf") && !bpf_obj_get_info_by_fd(fd, &pi, &len) &&
		       !strncmp(pi.name, "page_fault_perf", sizeof(pi.name) - 1);
	} else if (!strcmp(sub, "links") && !strcmp(kind, "bpf-link")) {
		struct bpf_link_info li;
		struct bpf_prog_info pi;
		__u32 len = sizeof(li);
		int pfd;

		memset(&li, 0, sizeof(li));
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) &&
		    (pfd = bpf_prog_get_fd_by_id(li.prog_id)) >= 0) {
			len = sizeof(pi);
			memset(&pi, 0, sizeof(pi));
			if (!bpf_obj_get_info_by_fd(pfd, &pi, &len))
				ours = pi.name[0] &&
				       !strncmp(name, pi.name, sizeof(pi.name) - 1) &&
				       (strlen(name) < sizeof(pi.name) - 1 ||
					strlen(pi.name) == sizeof(pi.name) - 1);
			close(pfd);
		}
	}
	close(fd);
	return ours;
}

/* Unpin memacct's pins in DIR/@sub; others are named and kept. Count kept. */
static int unpin_ours(const char *dir, const char *sub, int *kept)
{
	char sdir[512], path[768];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(sdir, sizeof(sdir), "%s/%s", dir, sub);
	d = opendir(sdir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sdir, de->d_name);
		if (!is_our_pin(path, sub, de->d_name)) {
			p_warn("kept %s: not pinned by memacct", path);
			(*kept)++;
			continue;
		}
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	closedir(d);
	if (!*kept && rmdir(sdir) && errno != ENOENT)
		err = -errno;
	return err;
}

int pin_remove(const char *dir)
{
	struct statfs fs;
	int err, e, kept = 0;

	if (statfs(dir, &fs))
		return errno == ENOENT ? 0 : -errno;
	if (fs.f_type != BPF_FS_MAGIC_) {
		p_err("%s is not on a bpffs: nothing of memacct's can be pinned there", dir);
		return -ENOTSUP;
	}
	err = unpin_ours(dir, "links", &kept);
	e = unpin_ours(dir, "maps", &kept);
	if (!err)
		err = e;
	e = unpin_ours(dir, "progs", &kept);
	if (!err)
		err = e;
	/* EBUSY: DIR is the bpffs mount point itself (--pin-path /sys/fs/bpf) */
	if (!kept && rmdir(dir) && errno != ENOENT && errno != ENOTEMPTY && errno != EBUSY &&
	    !err)
		err = -errno;
	return err;
}

/*
 * A copy of the pinned .bss (malloc'd, the size the pin has, which is at
 * least this build's), or NULL with *@err set to a negative errno.
 */
static struct memacct_bpf__bss *bss_read(const struct pinned *p, int *err)
{
	__u32 key = 0;
	char *buf;

	*err = -EPROTO;
	if (p->bss_size < sizeof(struct memacct_bpf__bss))
		return NULL;
	*err = -ENOMEM;
	buf = calloc(1, p->bss_size);
	if (!buf)
		return NULL;
	if (bpf_map_lookup_elem(p->bss_fd, &key, buf)) {
		*err = -errno;
		free(buf);
		return NULL;
	}
	*err = 0;
	return (struct memacct_bpf__bss *)buf;
}

uint64_t pin_run_misses(const struct pinned *p)
{
	uint64_t n = 0;

	for (int i = 0; i < p->nprogs; i++)
		n += prog_run_misses(p->progs[i].fd);
	return n;
}

int pin_counters(const struct pinned *p, struct pin_counters *c)
{
	int err;
	struct memacct_bpf__bss *bss = bss_read(p, &err);

	memset(c, 0, sizeof(*c));
	if (!bss)
		return err;
	for (int i = 0; i < MEMACCT_DROP_NR; i++)
		c->dropped[i] = bss->dropped[i];
	c->vma_lockless = bss->vma_lockless_lookups;
	c->dma_attributed_pages = bss->dma_attributed_pages;
	for (int i = 0; i < MEMACCT_NV_NR; i++)
		c->nv_calls[i] = bss->nv_calls[i];
	c->dma_readable = !bss->dma_unreadable;
	c->flow_moves_begin = bss->flow_moves_begin;
	c->flow_moves_end = bss->flow_moves_end;
	c->exit_folds_begin = bss->exit_folds_begin;
	c->exit_folds_end = bss->exit_folds_end;
	{
		const struct memacct_flows *l = &bss->lost_flows;
		uint64_t n = l->cow_copied_pages + l->cow_file_copied_pages +
			     l->zero_fill_pages + l->fault_unclassified_pages;

		/* as report_flows_lost_bytes() */
		c->flows_lost_pages = n > l->fault_alloc_pages ? n : l->fault_alloc_pages;
	}
	free(bss);
	return 0;
}

static int cmp_int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

static bool is_ours(const uint32_t *ours, int n, uint32_t id)
{
	for (int i = 0; i < n; i++)
		if (ours[i] == id)
			return true;
	return false;
}

int pin_other_kernel_sides(const struct pinned *p)
{
	uint32_t ours[PIN_MAX_PROGS] = { 0 }, id = 0;
	int copies[PIN_MAX_PROGS] = { 0 };

	if (!p->nprogs)
		return 0;
	for (int i = 0; i < p->nprogs; i++) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(p->progs[i].fd, &info, &len))
			ours[i] = info.id;
	}
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;	/* gone meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !is_ours(ours, p->nprogs, info.id))
			for (int i = 0; i < p->nprogs; i++)
				/* the kernel keeps BPF_OBJ_NAME_LEN - 1 bytes of a name, so
				 * sys_exit_munlock and sys_exit_munlockall look alike: an
				 * own program is never another side's copy */
				if (!strncmp(info.name, p->progs[i].name, sizeof(info.name) - 1))
					copies[i]++;
		close(fd);
	}
	if (errno != ENOENT)
		return -errno;
	qsort(copies, p->nprogs, sizeof(copies[0]), cmp_int_desc);
	return copies[p->nprogs / 2];
}

/*
 * The record of PID 1 from /proc, for an iterator that skipped it: on the
 * 6.18 kernel here iter/task began at PID 2 (reliability audit D16). Same
 * units as the BPF record (pages); start time at clock-tick precision
 * (proc_start_matches() compares so). 0, or negative errno.
 */
static int init_stock(struct memacct_task_stock *r)
{
	long page = sysconf(_SC_PAGESIZE), tck = sysconf(_SC_CLK_TCK);
	struct proc_status st;
	struct proc_stat ps;
	struct memcg cg;
	int err;

	memset(r, 0, sizeof(*r));
	if ((err = read_status(1, &st)) || (err = read_stat(1, &ps)))
		return err;
	if (!st.has_mm)
		return -ESRCH;
	r->tgid = 1;
	r->ppid = st.ppid;
	r->start_boottime_ns = ps.starttime_ticks * (1000000000ULL / (tck > 0 ? tck : 100));
	r->rss_anon_pages = st.rss_anon / page;
	r->rss_file_pages = st.rss_file / page;
	r->rss_shmem_pages = st.rss_shmem / page;
	r->locked_vm_pages = st.locked / page;
	r->pinned_vm_pages = st.pinned / page;
	r->hiwater_rss_pages = st.hwm / page;
	r->min_flt = ps.minflt;
	r->maj_flt = ps.majflt;
	if (!memcg_of_pid(1, &cg))
		r->memcg_id = cg.id;
	snprintf(r->comm, sizeof(r->comm), "%.*s", (int)sizeof(r->comm) - 1, ps.comm);
	return 0;
}

/*
 * One read of the iter/task link: malloc'd records with room for one more
 * (the buffer grows before a read, never fills at the end), count or
 * negative errno.
 */
static long iter_read(const struct pinned *p, struct memacct_task_stock **out)
{
	size_t cap = 256, n = 0;
	struct memacct_task_stock *v = malloc(cap * sizeof(*v));
	int fd = bpf_iter_create(p->iter_link_fd);
	long err = 0;

	if (fd < 0 || !v) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out_err;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			struct memacct_task_stock *nv = realloc(v, 2 * cap * sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				goto out_err;
			}
			v = nv;
			cap *= 2;
		}
		r = read(fd, (char *)(v + n), (cap - n) * sizeof(*v));
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err = -errno;
			goto out_err;
		}
		if (r == 0)
			break;
		n += r / sizeof(*v);	/* records are written whole */
	}
	close(fd);
	*out = v;
	return n;

out_err:
	if (fd >= 0)
		close(fd);
	free(v);
	return err;
}

long pin_read_stocks(struct pinned *p, bool own_fields, struct memacct_task_stock **out)
{
	struct memacct_task_stock *v = NULL;
	bool has_init = false;
	long n = -ENOTSUP;

	free(p->iter_stocks);
	p->iter_stocks = NULL;
	if (p->walk) {
		n = task_walk_read(p->walk, own_fields, &v);
		if (n < 0) {
			p_warn("the process walk failed (%s): the task iterator from now on",
			       strerror(-n));
			task_walk_close(p->walk);
			p->walk = NULL;
		}
	}
	if (n < 0 && (n = iter_read(p, &v)) >= 0)
		p->iter_stocks = v;
	if (n < 0)
		return n;
	for (long i = 0; i < n && !has_init; i++)
		has_init = v[i].tgid == 1;
	if (!has_init)	/* both passes leave room for one more */
		n += !init_stock(&v[n]);
	*out = v;
	return n;
}

/* pin_procs_of()'s search: the records of the processes @pids */
struct procs_of {
	const pid_t *pids;
	size_t n;
	int rfd;		/* the dma_ranges map, or -1 */
	void (*fn)(size_t i, const struct memacct_proc *v, const struct dma_ranges *r, void *ctx);
	void *ctx;
	int found;
};

static int proc_of(const struct memacct_proc_key *key, const struct memacct_proc *v, void *ctx)
{
	struct procs_of *po = ctx;

	for (size_t i = 0; i < po->n; i++) {
		struct dma_ranges r;
		struct proc_stat st;

		if ((pid_t)key->tgid != po->pids[i] || read_stat(po->pids[i], &st) ||
		    !proc_start_matches(key->start_boottime_ns, st.starttime_ticks))
			continue;
		po->fn(i, v, dma_ranges_read(po->rfd, key, v, &r) < 0 ? NULL : &r, po->ctx);
		dma_ranges_free(&r);
		po->found++;
	}
	return 0;
}

/* a pid and its index in the caller's array, sorted by pid */
struct pid_at {
	pid_t pid;
	size_t i;
};

static int cmp_pid_at(const void *a, const void *b)
{
	const struct pid_at *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int pin_map_get(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/maps/%s", dir, name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int pin_cow_maps_of(const char *dir, const pid_t *pids, size_t n,
		    void (*fn)(size_t i, const struct memacct_cow_maps *cm, void *ctx), void *ctx)
{
	struct memacct_proc_key k, next, *prev = NULL;
	struct memacct_cow_maps *cm = NULL;
	struct pid_at *at = NULL, *hit;
	struct memacct_proc p;
	char path[PATH_MAX];
	int fd, pfd = -1, found = 0;

	snprintf(path, sizeof(path), "%s/maps/cow_maps", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/maps/procs", dir);
	pfd = bpf_obj_get(path);
	if (pfd < 0) {
		found = -errno;
		goto out;
	}
	at = calloc(n ? n : 1, sizeof(*at));
	cm = malloc(sizeof(*cm));	/* 3 KiB: not on the stack */
	if (!at || !cm) {
		found = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		at[i] = (struct pid_at){ pids[i], i };
	qsort(at, n, sizeof(*at), cmp_pid_at);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct pid_at want = { (pid_t)next.tgid, 0 };

		k = next;
		prev = &k;
		hit = bsearch(&want, at, n, sizeof(*at), cmp_pid_at);
		if (hit && !bpf_map_lookup_elem(pfd, &k, &p) && !(p.flags & MEMACCT_PROC_EXITED) &&
		    !bpf_map_lookup_elem(fd, &k, cm)) {
			fn(hit->i, cm, ctx);
			found++;
		}
	}
out:
	free(cm);
	free(at);
	if (pfd >= 0)
		close(pfd);
	close(fd);
	return found;
}

int pin_procs_of(const char *dir, const pid_t *pids, size_t n,
		 void (*fn)(size_t i, const struct memacct_proc *v, const struct dma_ranges *r,
			    void *ctx), void *ctx)
{
	struct procs_of po = { pids, n, -1, fn, ctx, 0 };
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/maps/procs", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/maps/dma_ranges", dir);
	po.rfd = bpf_obj_get(path);	/* -1: the record's ranges only */
	snprintf(path, sizeof(path), "%s/maps/procs", dir);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.key_size != sizeof(struct memacct_proc_key) ||
	    info.value_size != sizeof(struct memacct_proc)) {
		p_info("%s: not the procs map of this build", path);
		if (po.rfd >= 0)
			close(po.rfd);
		close(fd);
		return -EPROTO;
	}
	procs_map_each(fd, proc_of, &po);
	if (po.rfd >= 0)
		close(po.rfd);
	close(fd);
	return po.found;
}
