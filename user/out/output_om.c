// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* output_om.c - build, cgroup identity and self-process families (output_om.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "cgroup_labels.h"
#include "hostpin.h"
#include "metric_table.h"
#include "output_om.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

int om_parse_btime(const char *text, uint64_t *btime_s)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *end;

		if (strncmp(l, "btime ", 6))
			continue;
		end = l + 6 + strcspn(l + 6, "\n");
		return parse_u64_n(l + 6, end - (l + 6), btime_s) ? -EINVAL : 0;
	}
	return -EINVAL;
}

int om_self_read(struct om_self *s)
{
	/* btime never changes: /proc/stat is read once (show_stat() sums
	 * every interrupt over every CPU: the largest /proc read of a
	 * collection on a many-CPU host) */
	static uint64_t btime_s;
	struct rlimit rl;
	struct dirent *de;
	struct stat st;
	char *text = NULL;
	DIR *d;
	int err;

	memset(s, 0, sizeof(*s));
	s->clk_tck = sysconf(_SC_CLK_TCK);
	s->page_size = sysconf(_SC_PAGESIZE);
	s->open_fds = -1;
	err = read_stat(getpid(), &s->st);
	if (err)
		return err;
	if (!btime_s && read_file("/proc/stat", &text, 1 << 20) > 0)
		om_parse_btime(text, &btime_s);
	free(text);
	s->btime_s = btime_s;
	/* the count as st_size (proc_fd_getattr(), fs/proc/fd.c, since
	 * v6.2): one stat() instead of a readdir that makes a dentry per fd
	 * (~4% of a collection at 10,000 processes); 0 before, then readdir */
	if (!stat("/proc/self/fd", &st) && st.st_size > 0)
		s->open_fds = st.st_size;
	else if ((d = opendir("/proc/self/fd"))) {
		s->open_fds = 0;
		while ((de = readdir(d)))
			s->open_fds += de->d_name[0] != '.';
		s->open_fds--;	/* the directory's own fd */
		closedir(d);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		s->max_fds = rl.rlim_cur;
	return 0;
}

void om_self_metrics(struct mbuf *b, const struct om_self *s)
{
	double tck = s->clk_tck > 0 ? (double)s->clk_tck : 100.0;

	metrics_family(b, "process_cpu_seconds", MT_COUNTER, "seconds",
		       "Total user and system CPU time spent in seconds (/proc/self/stat)");
	metrics_sample(b, NULL, 0, (s->st.utime_ticks + s->st.stime_ticks) / tck);
	metrics_family(b, "process_resident_memory_bytes", MT_GAUGE, "bytes",
		       "Resident memory size in bytes (/proc/self/stat rss)");
	metrics_sample_u64(b, NULL, 0, s->st.rss_pages * (uint64_t)s->page_size);
	metrics_family(b, "process_virtual_memory_bytes", MT_GAUGE, "bytes",
		       "Virtual memory size in bytes (/proc/self/stat vsize)");
	metrics_sample_u64(b, NULL, 0, s->st.vsize);
	if (s->btime_s) {
		metrics_family(b, "process_start_time_seconds", MT_GAUGE, "seconds",
			       "Start time of the process since unix epoch in seconds");
		metrics_sample(b, NULL, 0, s->btime_s + s->st.starttime_ticks / tck);
	}
	if (s->open_fds >= 0) {
		metrics_family(b, "process_open_fds", MT_GAUGE, NULL,
			       "Number of open file descriptors (/proc/self/fd)");
		metrics_sample_u64(b, NULL, 0, s->open_fds);
	}
	if (s->max_fds) {
		metrics_family(b, "process_max_fds", MT_GAUGE, NULL,
			       "Maximum number of open file descriptors (RLIMIT_NOFILE)");
		metrics_sample_u64(b, NULL, 0, s->max_fds);
	}
}

void om_build_info(struct mbuf *b)
{
	char libbpf[32];
	struct mlabel l[2] = { { "version", MEMACCT_VERSION }, { "libbpf", libbpf } };

	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(),
		 libbpf_minor_version());
	metrics_family(b, "memacct_build_info", MT_GAUGE, NULL,
		       "memacct's version and the libbpf it runs with; value 1");
	metrics_sample_u64(b, l, 2, 1);
}

void om_kernel_features(struct mbuf *b, const char *fault_hook)
{
	struct mlabel l[1] = { { "fault_hook", fault_hook } };

	metrics_family(b, "memacct_kernel_features", MT_GAUGE, NULL,
		       "What the running kernel gave memacct: fault_hook is the fault entry "
		       "the CoW / zero-fill classifier runs on (tracepoint, perf, or none: "
		       "those figures unavailable); value 1");
	metrics_sample_u64(b, l, 1, 1);
}

void om_cgroup_info_family(struct mbuf *b)
{
	metrics_family(b, "memacct_cgroup_info", MT_GAUGE, NULL,
		       "Identity labels derived from each cgroup's path (pod_uid, container_id, "
		       "qos, job_id, memacct_job, job_root); value 1");
}

/* labels of a cgroup's samples: cgroup and its path labels */
#define CG_NLABELS 7

/* the labels of @rel, whose path labels are @cl, into @l (CG_NLABELS; the absent ones NULL): how many */
static int path_labels(const char *rel, const struct cg_labels *cl, struct mlabel *l)
{
	l[0] = (struct mlabel){ "cgroup", rel };
	l[1] = (struct mlabel){ "pod_uid", cl->pod_uid[0] ? cl->pod_uid : NULL };
	l[2] = (struct mlabel){ "container_id", cl->container_id[0] ? cl->container_id : NULL };
	l[3] = (struct mlabel){ "qos", cl->qos[0] ? cl->qos : NULL };
	l[4] = (struct mlabel){ "job_id", cl->job_id[0] ? cl->job_id : NULL };
	l[5] = (struct mlabel){ "memacct_job", cl->job[0] ? cl->job : NULL };
	l[6] = (struct mlabel){ "job_root", cl->job_root ? "true" : NULL };
	return CG_NLABELS;
}

void om_cgroup_info(struct mbuf *b, const char *rel)
{
	struct cg_labels cl;
	struct mlabel l[CG_NLABELS];

	cgroup_path_labels(rel, NULL, &cl);
	metrics_sample_u64(b, l, path_labels(rel, &cl, l), 1);
}

/* @c's labels (parsed by collect()) into @l: how many */
static int cg_labels_of(const struct cgi *c, struct mlabel *l)
{
	return path_labels(c->rel, &c->labels, l);
}

/* What a family of om_bound_families() shows of a cgroup; false: no sample. */
enum bound_fam { BF_LIMIT, BF_HIGH, BF_PEAK, BF_PSI_SOME, BF_PSI_FULL, BF_NR };

static bool bound_value(const struct cgi *c, enum bound_fam f, uint64_t *v)
{
	const struct memcg_bounds *b = &c->bounds;

	if (!c->wanted || !c->st_ok)
		return false;
	switch (f) {
	case BF_LIMIT: *v = b->max; return b->has_max;
	case BF_HIGH: *v = b->high; return b->has_high;
	case BF_PEAK: *v = c->st.peak; return c->st.has_peak;
	case BF_PSI_SOME: *v = b->psi_some_us; return b->has_psi;
	case BF_PSI_FULL: *v = b->psi_full_us; return b->has_psi;
	default: return false;
	}
}

/*
 * The cgroup's own limits, its kernel peak and its memory pressure, read
 * from its files at each collection (memcg_read_stat(), memcg_read_bounds()):
 * a cgroup gets a sample only where the kernel gives the figure (no limit
 * set, v1, memory.peak before 5.19, PSI off: no sample, never 0). Bytes as
 * integers; PSI's microseconds as seconds.
 */
static void om_bound_families(struct mbuf *b, const struct cgi *cg, size_t ncg)
{
	static const struct {
		const char *name, *unit, *help;
		enum mtype type;
	} fam[BF_NR] = {
		[BF_LIMIT] = { "memacct_memory_limit_bytes", "bytes",
			"The cgroup's memory limit: memory.max (v2) / memory.limit_in_bytes (v1); "
			"no sample when unlimited", MT_GAUGE },
		[BF_HIGH] = { "memacct_memory_high_bytes", "bytes",
			"The cgroup's memory.high throttle limit (v2); no sample when max", MT_GAUGE },
		[BF_PEAK] = { "memacct_memory_peak_bytes", "bytes",
			"The kernel's high-water mark of the cgroup's charge: memory.peak (v2, 5.19+) / "
			"memory.max_usage_in_bytes (v1)", MT_GAUGE },
		[BF_PSI_SOME] = { "memacct_memory_pressure_waiting_seconds", "seconds",
			"Time some task of the cgroup stalled on memory: memory.pressure some total= "
			"(v2 PSI)", MT_COUNTER },
		[BF_PSI_FULL] = { "memacct_memory_pressure_stalled_seconds", "seconds",
			"Time every non-idle task of the cgroup stalled on memory at once: "
			"memory.pressure full total= (v2 PSI)", MT_COUNTER },
	};
	struct mlabel l[CG_NLABELS];
	uint64_t v;

	for (int f = 0; f < BF_NR; f++) {
		metrics_family(b, fam[f].name, fam[f].type, fam[f].unit, fam[f].help);
		for (size_t i = 0; i < ncg; i++) {
			int nl;

			if (!bound_value(&cg[i], f, &v))
				continue;
			nl = cg_labels_of(&cg[i], l);
			if (f == BF_PSI_SOME || f == BF_PSI_FULL)
				metrics_sample(b, l, nl, v / 1e6);
			else
				metrics_sample_u64(b, l, nl, v);
		}
	}
}

/*
 * The cgroup's charge in parts that add up to it (memcg_charge_parts(), from
 * the memory.stat the collection read) and the part of the kubelet's working
 * set that reclaim can still free. A part's series appears from its first
 * byte (bounded: 8 parts a cgroup); none without a charge (the v2 root).
 */
static void om_part_families(struct mbuf *b, const struct cgi *cg, size_t ncg)
{
	struct mlabel l[CG_NLABELS + 1];

	metrics_family(b, "memacct_memory_part_bytes", MT_GAUGE, "bytes",
		       "The cgroup's charge (memory.current / usage_in_bytes) by part, the parts "
		       "adding up to it: anon, shmem, page_cache_active, page_cache_inactive, "
		       "page_cache_unevictable, kernel (v2), sock (v2), other (memory.stat)");
	for (size_t i = 0; i < ncg; i++) {
		const struct cgi *c = &cg[i];
		int nl;

		if (!c->wanted || !c->st_ok || !c->parts.usage)
			continue;
		nl = cg_labels_of(c, l);
		for (int p = 0; p < MEMCG_PART_NR; p++) {
			if (!c->parts.part[p])
				continue;
			l[nl] = (struct mlabel){ "part", memcg_part_name(p) };
			metrics_sample_u64(b, l, nl + 1, c->parts.part[p]);
		}
	}
	metrics_family(b, "memacct_working_set_reclaimable_bytes", MT_GAUGE, "bytes",
		       "Of memacct_working_set_bytes (usage - inactive_file, the kubelet's), what "
		       "reclaim can still free: active_file + slab_reclaimable (memory.stat)");
	for (size_t i = 0; i < ncg; i++) {
		const struct cgi *c = &cg[i];

		if (c->wanted && c->st_ok && c->parts.usage)
			metrics_sample_u64(b, l, cg_labels_of(c, l), c->parts.working_set_reclaimable);
	}
}

/* series of memacct_page_cache_file_bytes: per cgroup, and in all */
#define OM_PAGE_CACHE_FILES	5
#define OM_PAGE_CACHE_SERIES	1000

/*
 * The page cache of each cgroup by file (page_cache.h, issue 43): its own
 * records (not those below it), the OM_PAGE_CACHE_FILES largest of each,
 * OM_PAGE_CACHE_SERIES in all (cgroups in walk order), each labelled with
 * the kernel's dentry name of the file, its device and inode. Bytes added
 * since the daemon started less removed: pages cached before are not here.
 */
static void om_page_cache_family(struct mbuf *b, const struct cgi *cg, size_t ncg)
{
	struct mlabel l[CG_NLABELS + 3];
	char dev[24], ino[24];
	size_t series = 0;

	metrics_family(b, "memacct_page_cache_file_bytes", MT_GAUGE, "bytes",
		       "Page cache of a file charged to the cgroup (its own, not below): added "
		       "since the daemon started less removed (filemap tracepoints); the 5 largest "
		       "files a cgroup, 1000 series in all; tmpfs not here");
	for (size_t i = 0; i < ncg && series < OM_PAGE_CACHE_SERIES; i++) {
		const struct cgi *c = &cg[i];
		int nl;

		if (!c->wanted || !c->npcf)
			continue;
		nl = cg_labels_of(c, l);
		for (size_t k = 0; k < c->npcf && k < OM_PAGE_CACHE_FILES &&
		     series < OM_PAGE_CACHE_SERIES; k++) {
			const struct page_cache_file *f = &c->pcf[k];

			if (!f->bytes)
				break;
			snprintf(dev, sizeof(dev), "%u:%u", major(f->dev), minor(f->dev));
			snprintf(ino, sizeof(ino), "%llu", (unsigned long long)f->ino);
			l[nl] = (struct mlabel){ "file", f->name };
			l[nl + 1] = (struct mlabel){ "dev", dev };
			l[nl + 2] = (struct mlabel){ "inode", ino };
			metrics_sample_u64(b, l, nl + 3, f->bytes);
			series++;
		}
	}
}

/*
 * The OOM forecast of each limited cgroup (oom_forecast.h, collect.c): a
 * sample only while its unreclaimable bytes grow toward its memory.max,
 * labelled with the class that grows most (oom_forecast.h fc_estimate()).
 */
static void om_forecast_family(struct mbuf *b, const struct cgi *cg, size_t ncg)
{
	struct mlabel l[CG_NLABELS + 1];

	metrics_family(b, "memacct_oom_eta_seconds", MT_GAUGE, "seconds",
		       "Time until the cgroup's memory the kernel cannot reclaim (anon, shmem, "
		       "v2 kernel) reaches its memory.max / limit_in_bytes at its growth of the "
		       "last collections; class: the one that grows most (anon, shmem, kernel) "
		       "or what grows within it at least half as fast (mlocked, pinned, cow). No "
		       "sample while it does not grow");
	for (size_t i = 0; i < ncg; i++) {
		const struct cgi *c = &cg[i];
		int nl;

		if (!c->wanted || !c->has_eta)
			continue;
		nl = cg_labels_of(c, l);
		l[nl] = (struct mlabel){ "class", fc_class_name(c->oom_grows) };
		metrics_sample(b, l, nl + 1, c->oom_eta_s);
	}
}

void om_cgroup_families(struct mbuf *b, const struct cgi *cg, size_t ncg, bool one_node)
{
	struct mlabel l[CG_NLABELS];

	om_cgroup_info_family(b);
	for (size_t i = 0; i < ncg; i++)
		if (cg[i].wanted)	/* om_cgroup_info()'s, from the parsed labels */
			metrics_sample_u64(b, l, cg_labels_of(&cg[i], l), 1);
	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *md = &metric_table[id];

		if (!md->family)
			continue;
		metrics_family(b, md->family, md->flags & MF_FLOW ? MT_COUNTER : MT_GAUGE,
			       md->flags & MF_BYTES ? "bytes" : NULL, md->help);
		/* on one node no page is remote: no samples (migrations stay:
		 * compaction migrates pages within a node) */
		if ((md->flags & MF_REMOTE) && one_node)
			continue;
		for (size_t i = 0; i < ncg; i++) {
			const struct cgi *c = &cg[i];

			if (!c->wanted || (!c->st_ok && (md->flags & MF_MEMCG_STAT)) ||
			    (c->m.unknown & MBIT(id)))	/* not measured: no sample */
				continue;
			metrics_sample_u64(b, l, cg_labels_of(c, l), metric_get(&c->m, id));
		}
	}
	/* the same pages as memacct_numa_migrated_bytes, split by reason */
	metrics_family(b, "memacct_numa_migrated_by_reason_bytes", MT_COUNTER, "bytes",
		       "Pages migrated between NUMA nodes since attach, by migrate_reason "
		       "(a split of memacct_numa_migrated_bytes: do not add the two)");
	for (size_t i = 0; i < ncg; i++) {
		const struct cgi *c = &cg[i];
		struct mlabel rl[CG_NLABELS + 1];
		int nl;

		if (!c->wanted)
			continue;
		nl = cg_labels_of(c, rl);
		for (int r = 0; r < MEMACCT_MR_NR; r++) {
			if (!c->m.numa_migrated_by_reason[r])
				continue;	/* bounded cardinality: a series from its first page */
			rl[nl] = (struct mlabel){ "reason", migrate_reason_names[r] };
			metrics_sample_u64(b, rl, nl + 1, c->m.numa_migrated_by_reason[r]);
		}
	}
	/* the same pages as memacct_cow_copied_bytes and
	 * memacct_cow_file_copied_bytes together, split by the kind of the
	 * mapping copied (issue 42) */
	metrics_family(b, "memacct_cow_copied_by_mapping_kind_bytes", MT_COUNTER, "bytes",
		       "Pages copied by copy-on-write since attach (anonymous and private-file "
		       "together), by the kind of mapping copied: heap, anon, stack, file; unknown "
		       "before kernel 5.17 (a split of memacct_cow_copied_bytes + "
		       "memacct_cow_file_copied_bytes: do not add them)");
	for (size_t i = 0; i < ncg; i++) {
		const struct cgi *c = &cg[i];
		struct mlabel kl[CG_NLABELS + 1];
		int nl;

		if (!c->wanted || (c->m.unknown & MBIT(M_COW_COPIED)))
			continue;
		nl = cg_labels_of(c, kl);
		for (int k = 0; k < MEMACCT_COW_KIND_NR; k++) {
			uint64_t v = k ? c->m.cow_by_kind[k] : metrics_cow_unknown(&c->m);

			if (!v)
				continue;	/* bounded cardinality: a series from its first page */
			kl[nl] = (struct mlabel){ "mapping_kind", cow_kind_names[k] };
			metrics_sample_u64(b, kl, nl + 1, v);
		}
	}
	om_bound_families(b, cg, ncg);
	om_forecast_family(b, cg, ncg);
	om_part_families(b, cg, ncg);
	om_page_cache_family(b, cg, ncg);
}

void om_comm_families(struct mbuf *b, struct cgi *cg, size_t ncg,
		      const struct comm_sum *v, size_t n, long page_size)
{
	struct mlabel l[CG_NLABELS + 1];

	metrics_family(b, "memacct_comm_rss_bytes", MT_GAUGE, "bytes",
		       "RSS of the cgroup's own processes with that comm (summed; mm->rss_stat)");
	for (int fam = 0; fam < 2; fam++) {
		if (fam)
			metrics_family(b, "memacct_comm_processes", MT_GAUGE, NULL,
				       "Processes of the cgroup (its own, not below) with that comm");
		for (size_t i = 0; v && i < n; i++) {
			const struct cgi *c = cgi_find(cg, ncg, v[i].memcg_id);
			int nl;

			if (!c || !c->wanted)
				continue;
			nl = cg_labels_of(c, l);	/* the cgroup's job and path labels too */
			l[nl] = (struct mlabel){ "comm", v[i].comm };
			metrics_sample_u64(b, l, nl + 1,
					   fam ? v[i].n : v[i].rss_pages * (uint64_t)page_size);
		}
	}
}

/* ---- the host: FOLL_PIN and the memory budget (hostpin.h) ---- */

/* One sample of @v labelled {node="@node"}. */
static void node_sample(struct mbuf *b, int node, uint64_t v)
{
	struct mlabel l[1];
	char id[16];

	snprintf(id, sizeof(id), "%d", node);
	l[0] = (struct mlabel){ "node", id };
	metrics_sample_u64(b, l, 1, v);
}

void hostpin_metrics(struct mbuf *b, const struct hostpin *h, bool attributed_known,
		     uint64_t attributed)
{
	metrics_family(b, "memacct_host_foll_pin_counters", MT_GAUGE, NULL,
		       "1 when the kernel counts FOLL_PIN pages (nr_foll_pin_* in /proc/vmstat)");
	metrics_sample_u64(b, NULL, 0, h->known);
	metrics_family(b, "memacct_host_mem_total_bytes", MT_GAUGE, "bytes",
		       "MemTotal of the host and of each NUMA node");
	metrics_sample_u64(b, NULL, 0, h->mem_total);
	for (int i = 0; i < h->nnodes; i++) {
		node_sample(b, h->nodes[i].node, h->nodes[i].mem_total);
	}
	if (!h->known)
		return;	/* unknown on this kernel: no samples, never 0 */
	metrics_family(b, "memacct_host_foll_pinned_bytes", MT_GAUGE, "bytes",
		       "Pages pinned by pin_user_pages (FOLL_PIN) now: nr_foll_pin_acquired - "
		       "nr_foll_pin_released, host and per NUMA node");
	metrics_sample_u64(b, NULL, 0, h->foll_pinned);
	for (int i = 0; i < h->nnodes; i++) {
		if (!h->nodes[i].known)
			continue;
		node_sample(b, h->nodes[i].node, h->nodes[i].foll_pinned);
	}
	if (!attributed_known)
		return;
	metrics_family(b, "memacct_host_dma_pinned_unattributed_bytes", MT_GAUGE, "bytes",
		       "FOLL_PIN bytes not attributed to a live process (dma_pinned or pinned_vm): "
		       "exited owners, the kernel, paths memacct does not see");
	metrics_sample_u64(b, NULL, 0, h->foll_pinned > attributed ? h->foll_pinned - attributed : 0);
}

/* A gauge of the host and of each node: @off is a uint64_t in struct
 * hostmem, @known_off its bool (-1: known with the meminfo). */
static void mem_family(struct mbuf *b, const struct hostpin *h, const char *name,
		       const char *help, size_t off, long known_off)
{
	bool any = false;

#define HM_KNOWN(m) ((m)->meminfo && (known_off < 0 || *(const bool *)((const char *)(m) + known_off)))
#define HM_VAL(m) (*(const uint64_t *)((const char *)(m) + off))
	any = HM_KNOWN(&h->mem);
	for (int i = 0; i < h->nnodes; i++)
		any |= HM_KNOWN(&h->nodes[i].mem);
	if (!any)
		return;
	metrics_family(b, name, MT_GAUGE, "bytes", help);
	if (HM_KNOWN(&h->mem))
		metrics_sample_u64(b, NULL, 0, HM_VAL(&h->mem));
	for (int i = 0; i < h->nnodes; i++) {
		if (!HM_KNOWN(&h->nodes[i].mem))
			continue;
		node_sample(b, h->nodes[i].node, HM_VAL(&h->nodes[i].mem));
	}
#undef HM_KNOWN
#undef HM_VAL
}

void hostmem_metrics(struct mbuf *b, const struct hostpin *h)
{
	static const struct {
		const char *name, *help;
		size_t off;
		long known;
	} fam[] = {
		{ "memacct_host_mem_free_bytes", "MemFree of the host and of each NUMA node "
		  "(on unified memory: what a CUDA allocation can get now)",
		  offsetof(struct hostmem, mem_free), -1 },
		{ "memacct_host_mem_available_bytes", "MemAvailable of the host (no per-node figure)",
		  offsetof(struct hostmem, mem_available), offsetof(struct hostmem, avail_known) },
		{ "memacct_host_page_cache_bytes", "File LRU pages: Active(file) + Inactive(file)",
		  offsetof(struct hostmem, page_cache), -1 },
		{ "memacct_host_reclaimable_page_cache_bytes", "Clean file LRU pages reclaim can "
		  "drop: Active(file) + Inactive(file) - Dirty - Writeback",
		  offsetof(struct hostmem, reclaimable), -1 },
		{ "memacct_host_file_pages_bytes", "Page cache with shmem: NR_FILE_PAGES",
		  offsetof(struct hostmem, file_pages), -1 },
		{ "memacct_host_unevictable_bytes", "Unevictable LRU pages (mlocked, ramfs, "
		  "SHM_LOCK)", offsetof(struct hostmem, unevictable), -1 },
		{ "memacct_host_mlocked_bytes", "Mlocked pages (a part of unevictable)",
		  offsetof(struct hostmem, mlocked), -1 },
		{ "memacct_host_hugetlb_bytes", "The hugetlb pools (Hugetlb; per node the default "
		  "size's HugePages_Total)", offsetof(struct hostmem, hugetlb),
		  offsetof(struct hostmem, hugetlb_known) },
		{ "memacct_host_hugetlb_reserved_bytes", "HugePages_Rsvd x Hugepagesize: hugetlb "
		  "pages promised to mappings, not yet faulted", offsetof(struct hostmem,
		  hugetlb_reserved), offsetof(struct hostmem, rsvd_known) },
		{ "memacct_host_pcp_free_bytes", "Free pages on the per-CPU lists (zoneinfo "
		  "pagesets count): free, though MemFree leaves them out",
		  offsetof(struct hostmem, pcp_free), offsetof(struct hostmem, pcp_known) },
		{ "memacct_host_unowned_kernel_bytes", "MemTotal - MemFree - every category "
		  "meminfo accounts for: driver allocations, pipe and socket buffers "
		  "(docs/metrics.md)", offsetof(struct hostmem, unowned),
		  offsetof(struct hostmem, unowned_known) },
	};
	bool any = false;

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		mem_family(b, h, fam[i].name, fam[i].help, fam[i].off, fam[i].known);
	for (int i = 0; i < h->nnodes; i++)
		any |= h->nodes[i].cpu_known;
	if (any) {
		metrics_family(b, "memacct_host_node_cpuless", MT_GAUGE, NULL,
			       "1 for a NUMA node without CPUs (GPU HBM in NUMA mode, CXL)");
		for (int i = 0; i < h->nnodes; i++) {
			if (!h->nodes[i].cpu_known)
				continue;
			node_sample(b, h->nodes[i].node, h->nodes[i].cpuless);
		}
	}
	metrics_family(b, "memacct_host_unified_memory", MT_GAUGE, NULL,
		       "1 when the GPU allocates from the host's RAM (GB10, Tegra; MEMACCT_UMA)");
	metrics_sample_u64(b, NULL, 0, h->uma);
}

void doom_metrics(struct mbuf *b, const struct daemon_oom *o, const struct job_rules *jobs)
{
	struct mlabel l[CG_NLABELS + 1];
	struct cg_labels cl;

	metrics_family(b, "memacct_oom_last_kill_timestamp_seconds", MT_GAUGE, "seconds",
		       "Unix time of the last OOM kill of a process in the cgroup or below it "
		       "(oom:mark_victim; the OOM log's kills too); cause: its post-mortem's "
		       "(pinned, cow, shmem, page_cache, anon; absent when none was named)");
	for (size_t i = 0; i < o->nlast; i++) {
		int nl;

		/* the cgroup may be gone: its labels from its path alone */
		cgroup_path_labels(o->last[i].cgroup, jobs, &cl);
		nl = path_labels(o->last[i].cgroup, &cl, l);
		l[nl] = (struct mlabel){ "cause", o->last[i].cause[0] ? o->last[i].cause : NULL };
		metrics_sample(b, l, nl + 1, o->last[i].time);
	}
	metrics_family(b, "memacct_oom_last_kill_series_dropped", MT_COUNTER, NULL,
		       "Cgroups whose memacct_oom_last_kill_timestamp_seconds was dropped: the "
		       "oldest kill's past 1,024 cgroups, or out of memory");
	metrics_sample_u64(b, NULL, 0, o->last_dropped);
	metrics_family(b, "memacct_oom_postmortems", MT_COUNTER, NULL,
		       "OOM kills the daemon explained (a line in its OOM log each)");
	metrics_sample_u64(b, NULL, 0, o->recorded);
	metrics_family(b, "memacct_oom_postmortems_brief", MT_COUNTER, NULL,
		       "OOM post-mortems with the kernel's figures only: past 10 kills a second");
	metrics_sample_u64(b, NULL, 0, o->brief);
	metrics_family(b, "memacct_oom_log_errors", MT_COUNTER, NULL,
		       "OOM post-mortems that could not be written to the OOM log");
	metrics_sample_u64(b, NULL, 0, o->log_errors);
}
