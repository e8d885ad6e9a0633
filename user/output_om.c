// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* output_om.c - build, cgroup identity and self-process families (output_om.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "output_om.h"
#include "usage.h"
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
	struct rlimit rl;
	struct dirent *de;
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
	if (read_file("/proc/stat", &text, 1 << 20) > 0)
		om_parse_btime(text, &s->btime_s);
	free(text);
	if ((d = opendir("/proc/self/fd"))) {
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

void om_cgroup_info_family(struct mbuf *b)
{
	metrics_family(b, "memacct_cgroup_info", MT_GAUGE, NULL,
		       "Identity labels derived from each cgroup's path (pod_uid, container_id, "
		       "job_id); value 1");
}

void om_cgroup_info(struct mbuf *b, const char *rel)
{
	struct cg_labels cl;
	struct mlabel l[4];

	cgroup_path_labels(rel, &cl);
	l[0] = (struct mlabel){ "cgroup", rel };
	l[1] = (struct mlabel){ "pod_uid", cl.pod_uid[0] ? cl.pod_uid : NULL };
	l[2] = (struct mlabel){ "container_id", cl.container_id[0] ? cl.container_id : NULL };
	l[3] = (struct mlabel){ "job_id", cl.job_id[0] ? cl.job_id : NULL };
	metrics_sample_u64(b, l, 4, 1);
}
