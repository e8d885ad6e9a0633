// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* cgroup_labels.c - who a cgroup is, from its path (cgroup_labels.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup_labels.h"
#include "util.h"

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* @comp (@n bytes) starts with @word, then ends or goes on with one of @next */
static bool comp_is(const char *comp, size_t n, const char *word, const char *next)
{
	size_t wl = strlen(word);

	return n >= wl && !strncmp(comp, word, wl) && (n == wl || strchr(next, comp[wl]));
}

/*
 * The QoS class the kubelet's tree gives the path component @comp (@n
 * bytes, after @prev of @prev_n) into @qos, if any: the systemd driver's
 * kubepods-burstable.slice, kubepods-besteffort.slice and a guaranteed
 * pod's kubepods-pod<uid>.slice right below kubepods.slice; the cgroupfs
 * driver's kubepods/burstable, kubepods/besteffort, kubepods/pod<uid>.
 */
static void kube_qos(const char *comp, size_t n, const char *prev, size_t prev_n, char qos[12])
{
	static const char *const classes[] = { "burstable", "besteffort" };
	char word[32];

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		snprintf(word, sizeof(word), "kubepods-%s", classes[i]);
		if (comp_is(comp, n, word, ".-") ||
		    (comp_is(prev, prev_n, "kubepods", "") && comp_is(comp, n, classes[i], ""))) {
			strcpy(qos, classes[i]);
			return;
		}
	}
	if (comp_is(comp, n, "kubepods-pod", "0123456789abcdef") ||
	    (comp_is(prev, prev_n, "kubepods", "") && comp_is(comp, n, "pod", "0123456789abcdef")))
		strcpy(qos, "guaranteed");
}

/*
 * The Kubernetes pod UID in the path component @comp (@n bytes) into @uid
 * (37 bytes: "_" of the systemd driver turned into "-"): "pod" then 36 of
 * [0-9a-f_-] then the component's end or "."; false if none.
 */
static bool comp_pod_uid(const char *comp, size_t n, char uid[37])
{
	for (size_t at = 0; at + 3 + 36 <= n; at++) {
		const char *u = comp + at + 3;
		bool ok = !strncmp(comp + at, "pod", 3) &&
			  (at + 3 + 36 == n || u[36] == '.');

		for (size_t i = 0; i < 36 && ok; i++)
			ok = u[i] == '-' || u[i] == '_' || is_hex(u + i, 1);
		if (!ok)
			continue;
		for (size_t i = 0; i < 36; i++)
			uid[i] = u[i] == '_' ? '-' : u[i];
		uid[36] = '\0';
		return true;
	}
	return false;
}

/* rules of the built-in jobs, strongest first (cgroup_labels.h) */
enum job_rank { JOB_NAMED_RUN, JOB_OUTER, JOB_UNIT, JOB_NONE };

/*
 * The job the path component @comp (@n bytes) makes, into @name (CG_JOB_MAX)
 * with its rank; JOB_NONE if it makes none or the name is too long.
 */
static enum job_rank comp_job(const char *comp, size_t n, char *name)
{
	char uid[37], c[256], hex[9], kind[5];
	enum job_rank rank = JOB_NONE;
	int pid, len = -1;
	const char *job;

	if (n >= sizeof(c))
		return JOB_NONE;
	memcpy(c, comp, n);
	c[n] = '\0';
	if (n > 4 && !strncmp(c, "job_", 4) && n - 4 <= 20 && strspn(c + 4, "0123456789") == n - 4) {
		len = snprintf(name, CG_JOB_MAX, "slurm/%s", c + 4);
		rank = JOB_OUTER;
	} else if (comp_pod_uid(c, n, uid)) {
		len = snprintf(name, CG_JOB_MAX, "k8s/%s", uid);
		rank = JOB_OUTER;
	} else if (cgroup_run_name(c, kind, &pid, hex, &job) && strcmp(kind, "ctl")) {
		if (!job) {
			len = snprintf(name, CG_JOB_MAX, "run/%d-%s", pid, hex);
			rank = JOB_OUTER;
		} else if (cgroup_job_name_ok(job)) {
			len = snprintf(name, CG_JOB_MAX, "run/%s", job);
			rank = JOB_NAMED_RUN;
		}
	} else if ((n > 8 && !strcmp(c + n - 8, ".service")) ||
		   (n > 6 && !strcmp(c + n - 6, ".scope"))) {
		len = snprintf(name, CG_JOB_MAX, "systemd/%s", c);
		rank = JOB_UNIT;
	}
	return len > 0 && len < CG_JOB_MAX ? rank : JOB_NONE;
}

/* The first of @r's rules that names a job in @path: its name and root. */
static bool job_from_rules(const struct job_rules *r, const char *path, struct cg_labels *l)
{
	regmatch_t m[2];

	for (int i = 0; r && i < r->n; i++) {
		regoff_t so, eo;
		const char *end;

		if (regexec(&r->re[i], path, 2, m, 0))
			continue;
		so = m[1].rm_so >= 0 ? m[1].rm_so : m[0].rm_so;
		eo = m[1].rm_so >= 0 ? m[1].rm_eo : m[0].rm_eo;
		if (eo <= so || eo - so >= CG_JOB_MAX)
			continue;
		memcpy(l->job, path + so, eo - so);
		l->job[eo - so] = '\0';
		/* the job's cgroup: the component where the name ends */
		end = strchr(path + eo - 1, '/');
		l->job_root = !end || !end[strspn(end, "/")];
		return true;
	}
	return false;
}

bool cgroup_run_name(const char *name, char kind[5], int *pid, char hex[9], const char **job)
{
	int end = 0;

	if (sscanf(name, "memacct-%4[a-z]-%d-%8[0-9a-f]%n", kind, pid, hex, &end) != 3 || !end ||
	    (strcmp(kind, "run") && strcmp(kind, "keep") && strcmp(kind, "ctl")) || *pid <= 0 ||
	    strlen(hex) != 8)
		return false;
	*job = NULL;
	if (!name[end])
		return true;
	if (strncmp(name + end, CG_JOB_SUFFIX, strlen(CG_JOB_SUFFIX)))
		return false;
	*job = name + end + strlen(CG_JOB_SUFFIX);
	return true;
}

bool cgroup_job_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= 64 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789._:@+-") == n;
}

int job_rules_add(struct job_rules *r, const char *opt, const char *regex)
{
	regex_t *re = realloc(r->re, (r->n + 1) * sizeof(*re));
	char msg[128];
	int err;

	if (!re)
		return -ENOMEM;
	r->re = re;
	err = regcomp(&re[r->n], regex, REG_EXTENDED);
	if (err) {
		regerror(err, &re[r->n], msg, sizeof(msg));
		p_err("%s: bad regular expression '%s': %s", opt, regex, msg);
		return -EINVAL;
	}
	if (re[r->n].re_nsub > 1) {
		regfree(&re[r->n]);
		p_err("%s: '%s' has %zu capture groups: one names the job", opt, regex,
		      re[r->n].re_nsub);
		return -EINVAL;
	}
	r->n++;
	return 0;
}

void job_rules_free(struct job_rules *r)
{
	for (int i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	free(r->re);
	r->re = NULL;
	r->n = 0;
}

void cgroup_path_labels(const char *path, const struct job_rules *jobs, struct cg_labels *l)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"containerd-", "libpod-" };
	const char *comp, *end, *prev = "";
	enum job_rank best = JOB_NONE, rank;
	char job[CG_JOB_MAX];
	size_t prev_n = 0;
	bool ruled;

	memset(l, 0, sizeof(*l));
	ruled = job_from_rules(jobs, path, l);
	/* each component: pod, QoS class, container id, Slurm job, the job */
	for (comp = path; *comp; comp = *end ? end + 1 : end) {
		size_t n;

		while (*comp == '/')
			comp++;
		end = strchr(comp, '/');
		if (!end)
			end = comp + strlen(comp);
		n = end - comp;
		if (!n)
			break;
		if (!l->pod_uid[0])	/* kubepods[-burstable]-pod<uid>.slice, /pod<uid>/ */
			comp_pod_uid(comp, n, l->pod_uid);
		if (!l->qos[0])
			kube_qos(comp, n, prev, prev_n, l->qos);
		prev = comp;
		prev_n = n;
		if (n > 4 && !strncmp(comp, "job_", 4) && n - 4 < sizeof(l->job_id) &&
		    strspn(comp + 4, "0123456789") == n - 4) {
			memcpy(l->job_id, comp + 4, n - 4);
			l->job_id[n - 4] = '\0';
		}
		rank = ruled ? JOB_NONE : comp_job(comp, n, job);
		/* the strongest rule; of one rank the outermost, but units innermost */
		if (rank < best || (rank == JOB_UNIT && best == JOB_UNIT)) {
			best = rank;
			strcpy(l->job, job);
			l->job_root = !end[strspn(end, "/")];
		} else if (best != JOB_NONE) {
			l->job_root = false;
		}
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t pl = strlen(prefixes[i]);

			if (n >= pl + 64 && !strncmp(comp, prefixes[i], pl)) {
				comp += pl;
				n -= pl;
				break;
			}
		}
		if (n >= 64 && is_hex(comp, 64) &&
		    (n == 64 || !strncmp(comp + 64, ".scope", n - 64 < 7 ? n - 64 : 7))) {
			memcpy(l->container_id, comp, 64);
			l->container_id[64] = '\0';
		}
		if (!*end)
			break;
	}
}
