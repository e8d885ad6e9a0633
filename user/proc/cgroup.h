/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cgroup.h - memory cgroup discovery, resolution, creation and memory.stat
 * parsing, for cgroup v1 (memory controller hierarchy) and v2 (unified).
 * Sizes in bytes. Error returns are negative errno.
 */
#ifndef MEMACCT_CGROUP_H
#define MEMACCT_CGROUP_H

#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct memcg {
	char path[PATH_MAX];	/* absolute cgroupfs directory */
	char rel[PATH_MAX];	/* path below the memory hierarchy root ("/" for root) */
	uint64_t id;		/* kernfs id = inode number of the directory */
	int version;		/* 1 or 2 */
	int level;		/* depth below the root (root = 0) */
	bool dir_open;		/* dirfd is open (memcg_dir_open()) */
	int dirfd;		/* O_PATH fd of path while dir_open: files by openat() */
};

/*
 * memcg_dir_open() - open @cg's directory (O_PATH) so that the memcg_read_*()
 * of @cg that follow open its files relative to it, without a walk of the
 * whole path per file; memcg_dir_close() closes it. 0 or negative errno
 * (-ENOENT: the cgroup was removed). A @cg that is not open reads by path.
 */
int memcg_dir_open(struct memcg *cg);
void memcg_dir_close(struct memcg *cg);

/*
 * memcg_read_file() - the whole text of @cg's file @name (a memory.* or
 * cpuset.* file: one kernfs record, READ_FILE_ONE_SHOW) into a malloc'd
 * buffer of up to @max bytes (caller frees). Its length, or negative errno
 * (-ENOENT: absent on this kernel or the cgroup removed; -EFBIG).
 */
long memcg_read_file(const struct memcg *cg, const char *name, char **buf, size_t max);

/*
 * memcg_root() - the mount point of the hierarchy with the memory controller:
 * a cgroup v1 mount with option "memory", else a cgroup2 mount whose
 * cgroup.controllers lists "memory" (from /proc/self/mountinfo).
 * Fills @root (PATH_MAX) and @version. -ENOENT when there is none.
 */
int memcg_root(char *root, int *version);

/* memcg_root_id() - the memcg id (kernfs id = inode) of memcg_root()'s
 * mount point; 0 when there is none. */
uint64_t memcg_root_id(void);

/* parse_mountinfo_memcg() - the same, from the text of a mountinfo file; for
 * v2 candidates @v2_has_memory(path) decides. Used by memcg_root() and tests. */
int parse_mountinfo_memcg(const char *text, char *root, int *version,
			  bool (*v2_has_memory)(const char *mnt));

/*
 * memcg_resolve() - a cgroup given by absolute path, path below the memory
 * root, or unique directory name anywhere below the root (Slurm job_123,
 * Kubernetes pod dirs, systemd scopes). -ENOENT when nothing matches,
 * -ENOTUNIQ when a name matches several: then the candidates (absolute
 * paths) are printed one per line to @ambiguous if not NULL.
 */
int memcg_resolve(const char *arg, struct memcg *cg, FILE *ambiguous);

/*
 * memcg_resolve_is_usage() - whether a memcg_resolve() error is the
 * argument's fault (exit status 2: unknown or ambiguous cgroup, "." or "..",
 * an empty or too long name, a file): -ENOENT, -ENOTUNIQ, -EINVAL,
 * -ENAMETOOLONG, -ENOTDIR, -ELOOP. Others (-EACCES, -EIO) are the
 * environment's (3).
 */
bool memcg_resolve_is_usage(int err);

/* memcg_of_path() - fill @cg for an existing directory below the root. */
int memcg_of_path(const char *root, int version, const char *abs, struct memcg *cg);

/* memcg_parent() - the parent of @cg into @parent (may be @cg itself; not
 * opened); 0, -ENOENT for the root, memcg_of_path()'s errors. */
int memcg_parent(const struct memcg *cg, struct memcg *parent);

/*
 * memcg_resolve_at() - memcg_resolve() below the hierarchy mounted at @root
 * (version @version) instead of the one found by memcg_root(); for tests.
 */
int memcg_resolve_at(const char *root, int version, const char *arg,
		     struct memcg *cg, FILE *ambiguous);

/*
 * memcg_of_pid() - the memory cgroup of @pid (0: the caller) from
 * /proc/PID/cgroup: on v2 the nearest cgroup, itself or an ancestor, that
 * has the memory controller (memcg_charged_at()).
 */
int memcg_of_pid(pid_t pid, struct memcg *cg);

/*
 * memcg_member_of() - the cgroup @pid (0: the caller) is a member of, from
 * /proc/PID/cgroup, below memcg_root(): on v2 it may lack the memory
 * controller (memcg_of_pid() goes on to where its tasks are charged).
 * Errors as memcg_of_pid().
 */
int memcg_member_of(pid_t pid, struct memcg *cg);

/*
 * memcg_has_memory() - whether @cg has the memory controller: always on v1
 * and for the root; on v2 when its cgroup.controllers lists "memory" (its
 * parent's cgroup.subtree_control enables it). Without it the cgroup's
 * tasks are charged to the nearest ancestor that has it. 1, 0, or negative
 * errno when cgroup.controllers cannot be read.
 */
int memcg_has_memory(const struct memcg *cg);

/*
 * memcg_charged_at() - replace @cg by the nearest cgroup, itself or an
 * ancestor below @root (its hierarchy's mount point), that has the memory
 * controller: where the kernel charges @cg's tasks (mm/memcontrol.c). 0 or
 * negative errno (memcg_has_memory(), memcg_of_path()).
 */
int memcg_charged_at(const char *root, struct memcg *cg);

/*
 * parse_proc_cgroup() - the memory cgroup's path (relative to the cgroup
 * namespace root, e.g. "/system.slice/foo.service") from the text of
 * /proc/PID/cgroup: for v1 the line whose controller list has "memory", for
 * v2 the "0::" line. -ENOENT when there is no such line, -ENAMETOOLONG.
 */
int parse_proc_cgroup(const char *text, int version, char *path, size_t len);

/*
 * memcg_create() - mkdir @name below the memory root. Fails with -EEXIST rather than reuse a cgroup memacct did not create.
 * v2: enables the memory controller in the parent's cgroup.subtree_control
 * first if it is not (a note on stderr); -EBUSY when the kernel refuses.
 */
int memcg_create(const char *name, struct memcg *cg);
/* memcg_create_at() - memcg_create() below the hierarchy mounted at @root. */
int memcg_create_at(const char *root, int version, const char *name, struct memcg *cg);

/*
 * memcg_limited() - whether v2 cgroup @cg carries a memory limit of its
 * own: memory.max, memory.high, memory.swap.max or memory.zswap.max other
 * than "max" (a missing file limits nothing). 1, 0, -EINVAL on v1, or the
 * read's negative errno.
 */
int memcg_limited(const struct memcg *cg);

/*
 * memcg_run_parent() - where `memacct run` creates CMD's cgroup for a caller
 * in @own (memcg_member_of()), so that every memory limit that binds the
 * caller binds CMD: v1, @own; v2, the nearest of @own and its ancestors
 * that may have a child with the memory controller (the root, or a cgroup
 * with "memory" in its cgroup.subtree_control) when none of the cgroups
 * below it on the way, @own included, is limited (memcg_limited()).
 * Fills @parent; 0, -EBUSY when a limited cgroup stops the walk (copied to
 * @blocker if not NULL), or the negative errno of a read.
 */
int memcg_run_parent(const struct memcg *own, struct memcg *parent, struct memcg *blocker);

/*
 * memcg_lock() - open @cg's directory (O_CLOEXEC) and flock() it LOCK_EX,
 * waiting for it if @wait: the mark of a live owner that survives neither
 * the owner's death nor PID namespaces. Returns the fd (the caller closes
 * it to unlock), -EWOULDBLOCK when held and !@wait, or negative errno.
 */
int memcg_lock(const struct memcg *cg, bool wait);

/*
 * memcg_create_locked() - create @parent/@prefix-PID-XXXXXXXX@suffix (PID:
 * ours in our PID namespace, X: 32 random bits in hex, @suffix "" or a
 * named run's CG_JOB_SUFFIX NAME; another name when it exists) and hold its
 * memcg_lock(). v2: enables the memory controller in
 * the parent's cgroup.subtree_control only when the parent is the root,
 * as memcg_create_at(). Returns the lock's fd, or negative errno
 * (memcg_create_at()'s).
 */
int memcg_create_locked(const struct memcg *parent, const char *prefix, const char *suffix,
			struct memcg *cg);

/*
 * memcg_leaf_move() - v2, where @own (the caller's cgroup, not the root)
 * holds the caller alone: move the caller into a new child of @own made by
 * memcg_create_locked(@own, @prefix) (filled in @leaf) and enable the
 * memory controller in @own's cgroup.subtree_control (*@enabled: whether
 * this call did), so that @own may have a memory child beside the leaf.
 * Returns the leaf's lock fd; -EINVAL (v1, the root), -EBUSY (other
 * processes in @own), or the kernel's refusal, everything undone.
 */
int memcg_leaf_move(const struct memcg *own, const char *prefix, struct memcg *leaf,
		    bool *enabled);

/*
 * memcg_leaf_return() - undo memcg_leaf_move() once @own's other children
 * are gone: "-memory" if it was @enabled, the caller back into @own, the
 * leaf removed. 0 or the first negative errno.
 */
int memcg_leaf_return(const struct memcg *own, const struct memcg *leaf, bool enabled);
/* memcg_remove() - rmdir; retries while the last tasks are still leaving. */
int memcg_remove(const struct memcg *cg);
/* memcg_add_pid() - move @pid (0: the caller) into @cg (cgroup.procs). */
int memcg_add_pid(const struct memcg *cg, pid_t pid);

/*
 * memcg_walk() - call @fn for every memory cgroup of the hierarchy, the
 * root first, parents before children, without a bound on their number;
 * cgroups removed during the walk are skipped. Stops at @fn's first nonzero
 * return and returns it; 0, or negative errno (no memory cgroup hierarchy:
 * memcg_root()'s error).
 */
int memcg_walk(int (*fn)(const struct memcg *cg, void *ctx), void *ctx);

/*
 * memcg_pids() - the thread group ids in @cg and, if @recursive, in its
 * descendants (cgroup.procs). malloc'd array in @pids (caller frees);
 * returns the count or negative errno.
 */
int memcg_pids(const struct memcg *cg, bool recursive, pid_t **pids);

/*
 * memcg_descendant_ids() - ids (inodes) of @cg and every cgroup below it.
 * Returns the count, malloc'd array in @ids, or negative errno.
 */
int memcg_descendant_ids(const struct memcg *cg, uint64_t **ids);

/*
 * memcg_subtree() - @cg (first) and every cgroup below it, in walk order:
 * a parent before its children, and each cgroup's whole subtree before its
 * next sibling (so the parent of entry i is the nearest entry before it one
 * level up). malloc'd array in *@out (caller frees); the count, or negative
 * errno (-ENOENT when @cg is gone). Cgroups removed meanwhile are skipped.
 */
int memcg_subtree(const struct memcg *cg, struct memcg **out);

/*
 * Stocks and event counters of a memory cgroup, hierarchical (the cgroup and
 * its descendants), from memory.stat (v1 total_* keys; v2 keys) and the
 * usage/peak files. v1: memory.usage_in_bytes, memory.max_usage_in_bytes,
 * memory.oom_control oom_kill. v2: memory.current, memory.peak (>= 5.19),
 * memory.events oom_kill. Fields the kernel does not have stay 0 and their
 * has_* flag false.
 */
struct memcg_stat {
	uint64_t usage;		/* charged bytes now (incl. page cache) */
	uint64_t peak;		/* kernel's own high-water mark of usage */
	bool has_peak;
	uint64_t anon, file, shmem, file_mapped, file_dirty, file_writeback;
	uint64_t active_file, inactive_file, active_anon, inactive_anon;
	uint64_t unevictable, slab_reclaimable;
	uint64_t slab, kernel;	/* v2 only: kernel memory charged (0: absent) */
	/* v2 only, kernel memory by kind (0: absent) and socket buffers */
	uint64_t slab_unreclaimable, kernel_stack, pagetables, percpu, vmalloc, sock;
	uint64_t pgfault, pgmajfault;	/* counts */
	uint64_t oom_kill;		/* count */
	bool has_oom_kill;
};
/* parse_memory_stat() - v1 or v2 memory.stat text; unknown keys ignored. */
int parse_memory_stat(const char *text, int version, struct memcg_stat *s);
/* parse_memory_events() - v2 memory.events or v1 memory.oom_control: oom_kill. */
int parse_oom_kill(const char *text, uint64_t *oom_kill);
/*
 * parse_memory_event() - the count of line "@key N" of a memory.events,
 * memory.events.local or memory.oom_control text (a whole-line key: "oom"
 * is not "oom_kill"). 0, -ENOENT (no such line), -EINVAL.
 */
int parse_memory_event(const char *text, const char *key, uint64_t *n);
/*
 * memcg_read_local_ooms() - the kernel's count of OOM events in which
 * @cg's own limit was hit: "oom" of v2 memory.events.local (v5.2+;
 * mm/memcontrol.c memory_events_local[MEMCG_OOM]). 0; -ENOENT on v1, for
 * the root, or before 5.2 (no such file or line); other negative errno.
 */
int memcg_read_local_ooms(const struct memcg *cg, uint64_t *n);
/*
 * parse_memory_pressure() - the cumulative stall times of a v2
 * memory.pressure file (PSI, kernel/sched/psi.c psi_show(): lines "some
 * avg10=.. avg60=.. avg300=.. total=US" and "full ..."), in microseconds,
 * into *@some_us and *@full_us. 0; -EINVAL when either line or its total=
 * is missing or not a number.
 */
int parse_memory_pressure(const char *text, uint64_t *some_us, uint64_t *full_us);
/*
 * memcg_read_pressure() - parse_memory_pressure() of @cg's memory.pressure
 * (v2 only: PSI is a cgroup2 interface; kernels >= 4.20 built with
 * CONFIG_PSI, not booted psi=0). -ENOENT when @cg is v1 or the file is
 * absent (PSI off, or the cgroup removed), -EOPNOTSUPP where reading it
 * fails so (psi=0 leaves the files, which then refuse), read_file()'s
 * other errors.
 */
int memcg_read_pressure(const struct memcg *cg, uint64_t *some_us, uint64_t *full_us);
/*
 * cgroup_v1_mount() - the mount point of the cgroup v1 hierarchy with
 * @controller ("cpuset") from /proc/self/mountinfo, unescaped, into @mnt
 * (PATH_MAX bytes). 0, -ENOENT (none), or read_file()'s error.
 */
int cgroup_v1_mount(const char *controller, char *mnt);
/* parse_mountinfo_v1() - the same from mountinfo @text (the one parser). */
int parse_mountinfo_v1(const char *text, const char *controller, char *mnt);
/*
 * memcg_read_usage() - @cg's charged bytes now, page cache included (v1
 * memory.usage_in_bytes, v2 memory.current). 0; -ENOENT (gone, or the v2
 * root, which has no such file), read_file()'s or parse_u64()'s errors.
 */
int memcg_read_usage(const struct memcg *cg, uint64_t *bytes);
/* memcg_read_stat() - all of the above for a live cgroup. */
int memcg_read_stat(const struct memcg *cg, struct memcg_stat *s);
/*
 * memcg_reclaimable() - clean page cache of @s in bytes: active_file +
 * inactive_file - dirty - writeback (0 when more is busy than resident).
 */
uint64_t memcg_reclaimable(const struct memcg_stat *s);
/*
 * memcg_working_set() - usage - inactive_file of @s in bytes, what the
 * kubelet evicts on (cAdvisor's container_memory_working_set_bytes).
 */
uint64_t memcg_working_set(const struct memcg_stat *s);

/*
 * The parts of a memory cgroup's charge (bytes), each from its memory.stat
 * (mm/memcontrol.c memory_stat_format(); v1 memcg_stat_show()'s total_*),
 * so that they add up to the charge (memory.current / usage_in_bytes):
 * anon; shmem (tmpfs, /dev/shm, shared anon); the page cache of files on
 * the active and inactive LRUs and off them (file - shmem - both LRUs:
 * mlocked file pages, pages isolated for a moment); kernel memory (v2
 * "kernel" from 5.18, else the sum of its kinds; v1: the
 * memory.kmem.usage_in_bytes the caller read, charged to usage_in_bytes
 * below the root only); socket buffers (v2 "sock": charged, not in
 * "kernel"); other: the charge less the parts (0 when they exceed it: the
 * counters are read one after another). The kubelet's working set is the
 * charge less inactive_file (cAdvisor's container_memory_working_set_bytes);
 * of it, the active page cache and reclaimable slab are what reclaim can
 * still free.
 */
enum memcg_part {
	MEMCG_PART_ANON, MEMCG_PART_SHMEM, MEMCG_PART_FILE_ACTIVE, MEMCG_PART_FILE_INACTIVE,
	MEMCG_PART_FILE_UNEVICTABLE, MEMCG_PART_KERNEL, MEMCG_PART_SOCK, MEMCG_PART_OTHER,
	MEMCG_PART_NR
};
struct memcg_parts {
	uint64_t usage;
	uint64_t part[MEMCG_PART_NR];
	enum memcg_part largest;
	uint64_t working_set;		/* usage - inactive_file */
	uint64_t working_set_reclaimable;	/* active_file + slab_reclaimable */
};
/* memcg_part_name() - "anon", "shmem", "page_cache_active", ... (JSON keys
 * less "_bytes"; static strings). */
const char *memcg_part_name(enum memcg_part p);
/*
 * memcg_charge_parts() - @s split into *@out (above). @kmem_v1: v1's
 * memory.kmem.usage_in_bytes (0 on v2, or when unread), @root_v1: @s is the
 * v1 root's, whose usage_in_bytes is its rss + cache (no kmem).
 */
void memcg_charge_parts(const struct memcg_stat *s, int version, uint64_t kmem_v1,
			bool root_v1, struct memcg_parts *out);
/*
 * memcg_read_kmem() - v1 memory.kmem.usage_in_bytes of @cg in bytes. 0;
 * -ENOENT on v2, or a v1 kernel without kmem accounting.
 */
int memcg_read_kmem(const struct memcg *cg, uint64_t *bytes);

#endif
