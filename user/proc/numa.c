// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * numa.c - per-node resident bytes of processes (numa_maps) and cgroups
 * (memory.numa_stat), the host's node topology and the home-node rule
 * (numa.h, docs/numa.md). Library code: negative errno, no printing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "numa.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define NUMA_MAPS_MAX	(256 << 20)
#define SMALL_FILE_MAX	(1 << 20)
#define NODE_DIR	"/sys/devices/system/node"

unsigned int numa_threshold_pct = NUMA_THRESHOLD_PCT_DEFAULT;

const char *numa_home_source_name(enum numa_home_source s)
{
	switch (s) {
	case NUMA_HOME_AFFINITY: return "affinity";
	case NUMA_HOME_LAST_CPU: return "last_cpu";
	case NUMA_HOME_CPUSET: return "cpuset";
	case NUMA_HOME_MOST_PAGES: return "most_pages";
	case NUMA_HOME_ONLY_NODE: return "only_node";
	default: return "unknown";
	}
}

/* ---- numa_maps ------------------------------------------------------ */

void numa_maps_free(struct numa_maps *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->maps[i].path);
	free(nm->maps);
	memset(nm, 0, sizeof(*nm));
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* seq_file_path(m, file, "\n\t= ") writes those bytes as \ooo: decode them. */
static char *decode_path(const char *s, size_t len)
{
	char *out = malloc(len + 1);

	if (out && octal_unescape(out, len + 1, s, len) < 0) {	/* never longer */
		free(out);
		out = NULL;
	}
	return out;
}

static int push_map(struct numa_maps *nm, const struct numa_map *m)
{
	struct numa_map *slot = array_grow(&nm->maps, nm->n, &nm->cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	*slot = *m;
	nm->n++;
	return 0;
}

/* One line (without its '\n') into @m; node counts are pages until the end. */
static int parse_numa_line(const char *p, const char *end, struct numa_map *m,
			   uint64_t pages[NUMA_MAX_NODES], bool keep)
{
	const char *tok, *eq;
	uint64_t v, kb = 0;
	bool any = false;
	int d;

	memset(m, 0, sizeof(*m));
	/* the start address */
	for (tok = p; p < end && *p != ' '; p++) {
		if ((d = hexval(*p)) < 0 || m->start >> 60)
			return -EINVAL;
		m->start = m->start << 4 | (uint64_t)d;
	}
	if (p == tok)
		return -EINVAL;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		for (tok = p; p < end && *p != ' '; p++)
			;
		if (p == tok)
			break;
		eq = memchr(tok, '=', p - tok);
		if (!eq) {
			/* the first name wins: a repeated word must not leak (D18) */
			if (keep && !m->path && p - tok == 4 && !memcmp(tok, "heap", 4))
				m->path = strdup("[heap]");
			else if (keep && !m->path && p - tok == 5 && !memcmp(tok, "stack", 5))
				m->path = strdup("[stack]");
			else if (p - tok == 4 && !memcmp(tok, "huge", 4))
				m->huge = true;
			continue;	/* the policy, or a word of it */
		}
		if (tok[0] == 'N' && eq > tok + 1 && tok[1] >= '0' && tok[1] <= '9') {
			uint64_t node;

			if (parse_u64_n(tok + 1, eq - tok - 1, &node) ||
			    parse_u64_n(eq + 1, p - eq - 1, &v))
				return -EINVAL;
			if (node >= NUMA_MAX_NODES)
				return -ERANGE;
			pages[node] += v;
			any = true;
		} else if (eq - tok == 17 && !memcmp(tok, "kernelpagesize_kB", 17)) {
			if (parse_u64_n(eq + 1, p - eq - 1, &kb))
				return -EINVAL;
		} else if (keep && eq - tok == 4 && !memcmp(tok, "file", 4) && !m->path) {
			m->path = decode_path(eq + 1, p - eq - 1);
			if (!m->path)
				return -ENOMEM;
		}
	}
	/* a mapping with pages always ends with kernelpagesize_kB */
	if (any && !kb)
		return -EINVAL;
	m->page_size = kb * 1024;
	return 0;
}

int parse_numa_maps(const char *text, struct numa_maps *nm, bool keep_maps)
{
	const char *p = text, *end;
	int lines = 0, err;

	memset(nm, 0, sizeof(*nm));
	for (; *p; p = *end ? end + 1 : end) {
		uint64_t pages[NUMA_MAX_NODES] = { 0 };
		struct numa_map m;

		end = strchrnul(p, '\n');
		if (end == p)
			continue;
		err = parse_numa_line(p, end, &m, pages, keep_maps);
		if (err) {
			free(m.path);
			numa_maps_free(nm);
			return err;
		}
		for (int i = 0; i < NUMA_MAX_NODES; i++) {
			if (!pages[i])
				continue;
			m.node_bytes[i] = pages[i] * m.page_size;
			m.bytes += m.node_bytes[i];
			nm->node_bytes[i] += m.node_bytes[i];
			nm->nodes |= 1ULL << i;
		}
		nm->bytes += m.bytes;
		lines++;
		if (keep_maps && (err = push_map(nm, &m))) {
			free(m.path);
			numa_maps_free(nm);
			return err;
		}
	}
	return lines;
}

int read_numa_maps(pid_t pid, struct numa_maps *nm, bool keep_maps)
{
	char path[64], *text;
	long len;
	int err;

	memset(nm, 0, sizeof(*nm));
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	len = read_file(path, &text, NUMA_MAPS_MAX);
	if (len < 0)
		return (int)len;
	err = parse_numa_maps(text, nm, keep_maps);
	free(text);
	return err < 0 ? err : 0;
}

/* ---- topology ------------------------------------------------------- */

int parse_cpulist(const char *text, bool *set, int max)
{
	const char *p = text;
	int n = 0;

	while (*p && *p != '\n') {
		char *e;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &e, 10);
		b = a;
		if (*e == '-') {
			if (e[1] < '0' || e[1] > '9')
				return -EINVAL;
			b = strtoul(e + 1, &e, 10);
			if (b < a)
				return -EINVAL;
		}
		if (*e == ':')	/* "0-7:2" stride form (bitmap_parselist) */
			return -EINVAL;
		if (b >= (unsigned long)max)
			return -ERANGE;
		for (unsigned long i = a; i <= b; i++) {
			n += !set[i];
			set[i] = true;
		}
		if (*e == ',')
			e++;
		else if (*e && *e != '\n')
			return -EINVAL;
		p = e;
	}
	return n;
}

void numa_topo_free(struct numa_topo *t)
{
	free(t->cpu_node);
	memset(t, 0, sizeof(*t));
}

int numa_cpu_node(const struct numa_topo *t, int cpu)
{
	return cpu >= 0 && cpu < t->ncpus ? t->cpu_node[cpu] : -1;
}

/* Every possible CPU on node 0: a kernel built without NUMA. */
static int topo_single(struct numa_topo *t)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	t->nnodes = 1;
	t->mem_nodes = 1;
	t->ncpus = n > 0 ? (int)n : 1;
	t->cpu_node = calloc(t->ncpus, sizeof(*t->cpu_node));
	return t->cpu_node ? 0 : -ENOMEM;
}

#define CPU_MAX 8192

int numa_topo_read_at(const char *dir, struct numa_topo *t)
{
	bool nodes[NUMA_MAX_NODES] = { false };
	bool *cpus = NULL;
	char path[4096], *text;
	int err = 0, maxcpu = -1;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/has_memory", dir);
	if (read_file(path, &text, SMALL_FILE_MAX) < 0) {
		snprintf(path, sizeof(path), "%s/online", dir);
		if (read_file(path, &text, SMALL_FILE_MAX) < 0)
			return topo_single(t);
	}
	err = parse_cpulist(text, nodes, NUMA_MAX_NODES);
	free(text);
	if (err < 0)
		return err;
	cpus = calloc(CPU_MAX, sizeof(*cpus));
	t->cpu_node = malloc(CPU_MAX * sizeof(*t->cpu_node));
	if (!cpus || !t->cpu_node) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < CPU_MAX; i++)
		t->cpu_node[i] = -1;
	for (int node = 0; node < NUMA_MAX_NODES; node++) {
		if (nodes[node]) {
			t->mem_nodes |= 1ULL << node;
			t->nnodes++;
		}
		/* CPUs of every node, memoryless ones included */
		snprintf(path, sizeof(path), "%s/node%d/cpulist", dir, node);
		if (read_file(path, &text, SMALL_FILE_MAX) < 0)
			continue;
		memset(cpus, 0, CPU_MAX * sizeof(*cpus));
		err = parse_cpulist(text, cpus, CPU_MAX);
		free(text);
		if (err < 0)
			goto out;
		for (int c = 0; c < CPU_MAX; c++)
			if (cpus[c]) {
				t->cpu_node[c] = node;
				if (c > maxcpu)
					maxcpu = c;
			}
	}
	err = 0;
	t->ncpus = maxcpu + 1;
	if (!t->nnodes) {	/* no has_memory entry: treat as node 0 */
		t->nnodes = 1;
		t->mem_nodes = 1;
	}
out:
	free(cpus);
	if (err)
		numa_topo_free(t);
	return err;
}

int numa_topo_read(struct numa_topo *t)
{
	if (access(NODE_DIR, F_OK)) {
		memset(t, 0, sizeof(*t));
		return topo_single(t);
	}
	return numa_topo_read_at(NODE_DIR, t);
}

/* ---- home node ------------------------------------------------------ */

void numa_usage_finish(struct numa_usage *u)
{
	u->bytes = 0;
	for (int i = 0; i < NUMA_MAX_NODES; i++)
		u->bytes += u->node_bytes[i];
	u->remote = u->home >= 0 && u->home < NUMA_MAX_NODES ?
		    u->bytes - u->node_bytes[u->home] : 0;
}

/* The one node of every CPU set in @set[0..@n-1] with a known node, else -1. */
static int cpus_one_node(const struct numa_topo *t, const bool *set, int n)
{
	int node = -1;

	for (int c = 0; c < n; c++) {
		int nd = set[c] ? numa_cpu_node(t, c) : -1;

		if (nd < 0)
			continue;
		if (node >= 0 && nd != node)
			return -1;
		node = nd;
	}
	return node;
}

int numa_home_choose(const struct numa_topo *t, const bool *allowed, int nallowed,
		     const int *last_cpu, int nthreads, enum numa_home_source *src)
{
	int count[NUMA_MAX_NODES] = { 0 };
	int node = cpus_one_node(t, allowed, nallowed), best = -1, leader;

	if (node >= 0) {
		*src = NUMA_HOME_AFFINITY;
		return node;
	}
	for (int i = 0; i < nthreads; i++) {
		int n = numa_cpu_node(t, last_cpu[i]);

		if (n >= 0 && n < NUMA_MAX_NODES)
			count[n]++;
	}
	for (int n = 0; n < NUMA_MAX_NODES; n++)
		if (count[n] && (best < 0 || count[n] > count[best]))
			best = n;
	if (best < 0) {
		*src = NUMA_HOME_UNKNOWN;
		return -ENOENT;
	}
	leader = nthreads ? numa_cpu_node(t, last_cpu[0]) : -1;
	if (leader >= 0 && leader < NUMA_MAX_NODES && count[leader] == count[best])
		best = leader;
	*src = NUMA_HOME_LAST_CPU;
	return best;
}

int parse_stat_processor(const char *text)
{
	const char *p = strrchr(text, ')');
	uint64_t v;
	int field = 2;

	if (!p)
		return -EINVAL;
	p++;
	/* fields after comm: " S ppid ..."; field 3 is the state */
	while (*p) {
		const char *tok;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		field++;
		for (tok = p; *p && *p != ' ' && *p != '\n'; p++)
			;
		if (field == 39) {
			if (parse_u64_n(tok, p - tok, &v) || v > 1 << 30)
				return -EINVAL;
			return (int)v;
		}
	}
	return -EINVAL;
}

/* The last CPU of every thread of @pid, leader first. Count or -errno. */
static int thread_cpus(pid_t pid, int **out)
{
	char path[96], *text;
	struct dirent *de;
	int n = 0, *v = NULL, *slot, cpu;
	size_t cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	slot = array_grow(&v, n, &cap, sizeof(*v));
	if (!slot) {
		closedir(d);
		return -ENOMEM;
	}
	*slot = -1;	/* the leader's slot */
	n++;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (parse_u64(de->d_name, &tid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%llu/stat", (int)pid,
			 (unsigned long long)tid);
		if (read_file(path, &text, 4096) < 0)
			continue;	/* the thread exited */
		cpu = parse_stat_processor(text);
		free(text);
		if (cpu < 0)
			continue;
		if ((pid_t)tid == pid) {
			v[0] = cpu;
			continue;
		}
		slot = array_grow(&v, n, &cap, sizeof(*v));
		if (!slot)
			break;
		*slot = cpu;
		n++;
	}
	closedir(d);
	if (v[0] < 0) {		/* the leader exited: keep the others */
		memmove(v, v + 1, (n - 1) * sizeof(*v));
		n--;
	}
	*out = v;
	return n;
}

int numa_proc_home(const struct numa_topo *t, pid_t pid, enum numa_home_source *src)
{
	int ncpu = t->ncpus > 0 ? t->ncpus : 1, nthreads, node, *cpus = NULL;
	bool *allowed = NULL;
	cpu_set_t *set = NULL;
	size_t size;
	int nset = ncpu < 1024 ? 1024 : ncpu;

	/* the kernel's mask may be larger than the CPUs we know of: grow on EINVAL */
	for (;;) {
		set = CPU_ALLOC(nset);
		if (!set)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(nset);
		if (!sched_getaffinity(pid, size, set))
			break;
		CPU_FREE(set);
		set = NULL;
		if (errno != EINVAL || nset >= 1 << 20)
			break;
		nset *= 2;
	}
	allowed = calloc(ncpu, sizeof(*allowed));
	if (!allowed) {
		CPU_FREE(set);
		return -ENOMEM;
	}
	for (int c = 0; set && c < ncpu; c++)
		allowed[c] = CPU_ISSET_S(c, size, set);
	nthreads = thread_cpus(pid, &cpus);
	if (!set && nthreads < 0) {
		free(allowed);
		return nthreads;
	}
	node = numa_home_choose(t, allowed, set ? ncpu : 0, cpus, nthreads > 0 ? nthreads : 0,
				src);
	if (set)
		CPU_FREE(set);
	free(allowed);
	free(cpus);
	return node;
}

int numa_proc_usage(const struct numa_topo *t, pid_t pid, struct numa_usage *u,
		    struct numa_maps *nm)
{
	struct numa_maps local;
	struct numa_maps *m = nm ? nm : &local;
	int err;

	memset(u, 0, sizeof(*u));
	u->home = -1;
	err = read_numa_maps(pid, m, nm != NULL);
	if (err)
		return err;
	memcpy(u->node_bytes, m->node_bytes, sizeof(u->node_bytes));
	if (!nm)
		numa_maps_free(&local);
	u->home = numa_proc_home(t, pid, &u->source);
	if (u->home < 0)
		u->home = -1;
	numa_usage_finish(u);
	return 0;
}

/* a mapping's resident bytes: smaps' Rss leaves hugetlb pages out */
static uint64_t smaps_resident(const struct smaps_map *sm)
{
	return sm->rss + sm->shared_hugetlb + sm->private_hugetlb;
}

int numa_smaps_usage(const struct numa_topo *t, const struct smaps *s,
		     struct numa_usage *u, struct numa_maps *nm)
{
	int node = t->nnodes == 1 && t->mem_nodes ? __builtin_ctzll(t->mem_nodes) : -1;

	memset(nm, 0, sizeof(*nm));
	memset(u, 0, sizeof(*u));
	u->home = -1;
	if (node < 0 || node >= NUMA_MAX_NODES)
		return -EINVAL;
	/* one zeroed array of the exact size: a struct numa_map is 552 bytes,
	 * and growing it by doubling copied and cleared megabytes for a
	 * process of 10,000 mappings (a third of explain's time) */
	for (size_t i = 0; i < s->n; i++)
		nm->cap += smaps_resident(&s->maps[i]) > 0;
	if (nm->cap && !(nm->maps = calloc(nm->cap, sizeof(*nm->maps))))
		goto nomem;
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *sm = &s->maps[i];
		uint64_t bytes = smaps_resident(sm);
		struct numa_map *m;

		if (!bytes)
			continue;
		m = &nm->maps[nm->n];
		m->start = sm->start;
		m->huge = sm->shared_hugetlb + sm->private_hugetlb > 0;
		m->bytes = bytes;
		m->node_bytes[node] = bytes;
		if (sm->path && !(m->path = strdup(sm->path)))
			goto nomem;
		nm->n++;
		nm->bytes += bytes;
		nm->node_bytes[node] += bytes;
	}
	if (nm->bytes)
		nm->nodes = 1ULL << node;
	memcpy(u->node_bytes, nm->node_bytes, sizeof(u->node_bytes));
	u->home = node;
	u->source = NUMA_HOME_ONLY_NODE;
	numa_usage_finish(u);
	return 0;
nomem:
	numa_maps_free(nm);
	return -ENOMEM;
}

/* ---- cgroups -------------------------------------------------------- */

/* Add the " N<node>=<value>" items of one numa_stat line to @acc (x @scale). */
static int add_nodes(const char *p, const char *end, uint64_t scale,
		     uint64_t acc[NUMA_MAX_NODES], uint64_t *mask)
{
	while (p < end) {
		const char *tok, *eq;
		uint64_t node, v;

		while (p < end && *p == ' ')
			p++;
		for (tok = p; p < end && *p != ' '; p++)
			;
		if (p == tok)
			break;
		if (tok[0] != 'N' || !(eq = memchr(tok, '=', p - tok)))
			continue;	/* "total=..." itself */
		if (parse_u64_n(tok + 1, eq - tok - 1, &node) ||
		    parse_u64_n(eq + 1, p - eq - 1, &v))
			return -EINVAL;
		if (node >= NUMA_MAX_NODES)
			return -ERANGE;
		acc[node] += v * scale;
		*mask |= 1ULL << node;
	}
	return 0;
}

/* The line whose first token is @key (v1 "key=<total>", v2 "key"). */
static const char *find_line(const char *text, const char *key, bool v1, const char **end)
{
	size_t n = strlen(key);

	for (const char *p = text; *p; p = **end ? *end + 1 : *end) {
		*end = strchrnul(p, '\n');
		if ((size_t)(*end - p) > n && !memcmp(p, key, n) && p[n] == (v1 ? '=' : ' '))
			return p + n;
	}
	return NULL;
}

int64_t parse_numa_stat(const char *text, int version, uint64_t page_size,
			uint64_t node_bytes[NUMA_MAX_NODES])
{
	static const char *const lru[] = { "active_anon", "inactive_anon", "active_file",
					   "inactive_file", "unevictable" };
	static const char *const rss[] = { "anon", "file" };
	const char *p, *end;
	uint64_t mask = 0;
	int err, found = 0;

	memset(node_bytes, 0, NUMA_MAX_NODES * sizeof(*node_bytes));
	if (version == 1) {
		p = find_line(text, "hierarchical_total", true, &end);
		if (!p)
			p = find_line(text, "total", true, &end);
		if (!p)
			return 0;
		err = add_nodes(p, end, page_size, node_bytes, &mask);
		return err ? err : (int64_t)mask;
	}
	/*
	 * anon + file (NR_ANON_MAPPED + NR_FILE_PAGES, shmem in file), as
	 * memory.stat's anon and file; the LRU lines lag behind them by the
	 * pages still in per-CPU LRU batches (seen in a 6.12 guest).
	 */
	for (size_t i = 0; i < 2; i++) {
		p = find_line(text, rss[i], false, &end);
		if (!p)
			continue;
		found++;
		err = add_nodes(p, end, 1, node_bytes, &mask);
		if (err)
			return err;
	}
	if (found)
		return (int64_t)mask;
	for (size_t i = 0; i < 5; i++) {
		p = find_line(text, lru[i], false, &end);
		if (p && (err = add_nodes(p, end, 1, node_bytes, &mask)))
			return err;
	}
	return (int64_t)mask;
}

int numa_cgroup_home(const struct numa_topo *t, const char *cpus_text, struct numa_usage *u)
{
	u->home = -1;
	u->source = NUMA_HOME_UNKNOWN;
	if (cpus_text && t->ncpus > 0) {
		bool *set = calloc(t->ncpus, sizeof(*set));
		int node;

		if (set && parse_cpulist(cpus_text, set, t->ncpus) > 0 &&
		    (node = cpus_one_node(t, set, t->ncpus)) >= 0) {
			u->home = node;
			u->source = NUMA_HOME_CPUSET;
		}
		free(set);
	}
	if (u->home < 0) {
		for (int n = 0; n < NUMA_MAX_NODES; n++)
			if ((t->mem_nodes >> n & 1) || u->node_bytes[n])
				if (u->home < 0 || u->node_bytes[n] > u->node_bytes[u->home])
					u->home = n;
		if (u->home >= 0)
			u->source = NUMA_HOME_MOST_PAGES;
	}
	numa_usage_finish(u);
	return u->home >= 0 ? u->home : -ENOENT;
}

/* Mount point of a cgroup v1 hierarchy with the cpuset controller, or "". */
static const char *cpuset_v1_root(void)
{
	static char root[PATH_MAX];
	static bool done;

	if (!done && cgroup_v1_mount("cpuset", root))
		root[0] = '\0';
	done = true;
	return root;
}

int memcg_numa_usage(const struct numa_topo *t, const struct memcg *cg, struct numa_usage *u)
{
	char path[2 * PATH_MAX + 64], *text = NULL, *cpus = NULL;
	int64_t mask;

	memset(u, 0, sizeof(*u));
	u->home = -1;
	if (memcg_read_file(cg, "memory.numa_stat", &text, SMALL_FILE_MAX) < 0)
		return -ENOENT;
	mask = parse_numa_stat(text, cg->version, (uint64_t)sysconf(_SC_PAGESIZE), u->node_bytes);
	free(text);
	if (mask < 0)
		return (int)mask;
	if (cg->version == 2) {
		if (memcg_read_file(cg, "cpuset.cpus.effective", &cpus, SMALL_FILE_MAX) < 0)
			cpus = NULL;
	} else {
		const char *root = cpuset_v1_root();

		if (root[0]) {
			snprintf(path, sizeof(path), "%s%s/cpuset.effective_cpus", root,
				 strcmp(cg->rel, "/") ? cg->rel : "");
			if (read_file(path, &cpus, SMALL_FILE_MAX) < 0)
				cpus = NULL;
		}
	}
	numa_cgroup_home(t, cpus, u);
	free(cpus);
	return 0;
}

/* ---- verdict -------------------------------------------------------- */

void numa_brief_of(const struct numa_usage *u, struct numa_brief *b)
{
	memset(b, 0, sizeof(*b));
	b->bytes = u->bytes;
	b->remote = u->remote;
	b->home = u->home;
	b->source = u->source;
	for (int n = 0; n < NUMA_MAX_NODES; n++)
		if (n != u->home && u->node_bytes[n])
			b->remote_nodes |= 1ULL << n;
}

bool numa_over_threshold(const struct numa_brief *b, unsigned int pct, uint64_t min_bytes)
{
	return b->home >= 0 && b->remote && b->remote >= min_bytes &&
	       (long double)b->remote * 100 >= (long double)b->bytes * pct;
}
