/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * cgroup_labels.h - who a cgroup is, from its path alone (below the
 * hierarchy's root, as the daemon's `cgroup` label): the Kubernetes pod and
 * QoS class, the container, the Slurm job, and the job it belongs to for
 * memacct_job (issue 45), by documented rules (docs/daemon.md "Jobs") or a
 * --job-from regular expression. Nothing is read from the kernel: paths
 * are given by the caller.
 */
#ifndef MEMACCT_CGROUP_LABELS_H
#define MEMACCT_CGROUP_LABELS_H

#include <regex.h>
#include <stdbool.h>

/* bytes of a job name with its NUL; a longer one gives no job (bounded label) */
#define CG_JOB_MAX	128

struct cg_labels {
	char pod_uid[40];	/* Kubernetes pod UID (from ".../pod<uid>...") */
	char container_id[72];	/* 64 hex digits (docker-, cri-containerd-, crio-) */
	char job_id[24];	/* Slurm job id (from ".../job_<id>/...") */
	/* Kubernetes QoS class: "guaranteed", "burstable", "besteffort" (from
	 * kubepods-<class>[-pod<uid>].slice, kubepods-pod<uid>.slice, or the
	 * cgroupfs driver's kubepods/<class>/ and kubepods/pod<uid>/) */
	char qos[12];
	/* the job (cgroup_path_labels()): "slurm/<id>", "k8s/<pod uid>",
	 * "run/<name>", "systemd/<unit>" or a --job-from capture; "" none */
	char job[CG_JOB_MAX];
	bool job_root;		/* the job's own cgroup, not one below it */
};

/* --job-from rules, tried in order before the built-in ones */
struct job_rules {
	regex_t *re;
	int n;
};

/*
 * job_rules_add() - compile @regex (POSIX extended, unanchored, matched
 * against the cgroup path below the root) as the next --job-from rule of
 * @r: its first capture group names the job (the whole match without one).
 * 0; -EINVAL (said on stderr, naming @opt) or -ENOMEM.
 */
int job_rules_add(struct job_rules *r, const char *opt, const char *regex);
/* job_rules_free() - what job_rules_add() compiled; @r emptied. */
void job_rules_free(struct job_rules *r);

/*
 * cgroup_path_labels() - fill @l from the cgroup path @path (below the
 * root, "/a/b"); empty strings where the path shows nothing. The job: the
 * first of @jobs (NULL: none) that matches, else a named `memacct run
 * --job` cgroup, else the outermost Slurm job_<id>, Kubernetes pod or
 * unnamed memacct run, else the innermost systemd .service or .scope.
 */
void cgroup_path_labels(const char *path, const struct job_rules *jobs, struct cg_labels *l);

/*
 * cgroup_job_name_ok() - whether @name can name a job of `memacct run
 * --job` (1 to 64 of [A-Za-z0-9._:@+-]: a cgroup name part and a label
 * value alike).
 */
bool cgroup_job_name_ok(const char *name);

/* the cgroup name suffix of a named run: memacct-run-PID-XXXXXXXX.job-NAME */
#define CG_JOB_SUFFIX	".job-"

/*
 * cgroup_run_name() - whether @name is a cgroup name memcg_create_locked()
 * gives memacct's own (cgroup.h): memacct-KIND-PID-XXXXXXXX, then nothing or
 * CG_JOB_SUFFIX and a name. KIND (run, keep, ctl) into @kind, PID into *@pid,
 * the 8 hex digits into @hex, and into *@job the name after CG_JOB_SUFFIX as
 * it is (unchecked: cgroup_job_name_ok()), NULL when there is none.
 */
bool cgroup_run_name(const char *name, char kind[5], int *pid, char hex[9], const char **job);

#endif
