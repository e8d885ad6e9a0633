// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * phases.c - phase marks of `memacct run` (phases.h, docs/run.md "Phases").
 * The channel is an AF_UNIX SOCK_SEQPACKET socketpair: a message is a line
 * whole (several processes writing at once never interleave), and a
 * client's private answer socket travels with its line (SCM_RIGHTS). At
 * each mark: session_report() (the report's own figures, from the kernel:
 * /proc/PID/status and stat, BPF flows, memory.stat) and /proc/PID/smaps
 * of every live process of the report; a phase is the difference of two
 * such snapshots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "memacct_mark.h"
#include "phases.h"
#include "session.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

enum mark_kind mark_parse(const char *buf, size_t n, char *name, size_t len, char *why,
			  size_t whylen)
{
	size_t i;

	if (n && buf[n - 1] == '\n')
		n--;
	if (n == 3 && !memcmp(buf, "end", 3))
		return MARK_END;
	if (n < 6 || memcmp(buf, "phase ", 6)) {
		snprintf(why, whylen, "expected 'phase NAME' or 'end'");
		return MARK_BAD;
	}
	buf += 6;
	n -= 6;
	if (!n || n > MEMACCT_MARK_NAME_MAX || n >= len) {
		snprintf(why, whylen, "NAME must be 1 to %d bytes", MEMACCT_MARK_NAME_MAX);
		return MARK_BAD;
	}
	for (i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)buf + i);

		if (!l || i + l > n) {
			snprintf(why, whylen, "NAME is not UTF-8");
			return MARK_BAD;
		}
		if (l == 1 && ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)) {
			snprintf(why, whylen, "control byte in NAME");
			return MARK_BAD;
		}
		i += l;
	}
	memcpy(name, buf, n);
	name[n] = '\0';
	return MARK_PHASE;
}

/*
 * The Python client (user/memacct.py) importable in CMD when this memacct
 * runs from a build tree: .output/memacct beside .output/python/memacct.py
 * (make). That directory goes at the end of PYTHONPATH: it holds that one
 * module, and an installed memacct (the .deb: dist-packages) adds nothing.
 */
static void python_client_path(struct phases *p)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32], *slash, *v;
	const char *was = getenv("PYTHONPATH");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dir, sizeof(dir), "%s/python/memacct.py", exe);
	if (access(dir, R_OK))
		return;
	dir[strlen(dir) - strlen("/memacct.py")] = '\0';
	if (asprintf(&v, "%s%s%s", was && *was ? was : "", was && *was ? ":" : "", dir) < 0)
		return;
	p->pythonpath_was = was ? strdup(was) : NULL;
	p->pythonpath_set = !setenv("PYTHONPATH", v, 1);
	free(v);
}

int phases_open(struct phases *p, struct session *s)
{
	int sv[2];
	char v[16];

	memset(p, 0, sizeof(*p));
	p->fd = p->child_fd = -1;
	p->s = s;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -errno;
	/* ours: not inherited, never blocks our loop */
	if (fcntl(sv[0], F_SETFD, FD_CLOEXEC) < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	/* each message carries its sender's pid (SCM_CREDENTIALS, filled
	 * in by the kernel): a `memacct mark` client is known by it */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)))
		p_warn("SO_PASSCRED on the mark channel: %s (memacct mark's own rows "
		       "stay in the phase tables)", strerror(errno));
	p->fd = sv[0];
	p->child_fd = sv[1];
	snprintf(v, sizeof(v), "%d", sv[1]);
	if (setenv(MEMACCT_MARK_ENV, v, 1))
		return -errno;
	python_client_path(p);
	return 0;
}

void phases_spawned(struct phases *p)
{
	unsetenv(MEMACCT_MARK_ENV);
	if (p->pythonpath_set) {
		if (p->pythonpath_was)
			setenv("PYTHONPATH", p->pythonpath_was, 1);
		else
			unsetenv("PYTHONPATH");
		p->pythonpath_set = false;
	}
	free(p->pythonpath_was);
	p->pythonpath_was = NULL;
	if (p->child_fd >= 0)
		close(p->child_fd);
	p->child_fd = -1;
}

static void snap_free(struct phase_snap *sn)
{
	for (size_t i = 0; i < sn->nmaps; i++)
		smaps_free(&sn->maps[i].sm);
	free(sn->maps);
	report_free(&sn->r);
	memset(sn, 0, sizeof(*sn));
}

/* the same process: a start time of 0 is unknown (no BPF record yet) */
static bool same_proc(const struct proc_row *a, const struct proc_row *b)
{
	return a->pid == b->pid && (!a->start_boottime_ns || !b->start_boottime_ns ||
				    a->start_boottime_ns == b->start_boottime_ns);
}

static bool is_client(const struct phases *p, const struct proc_row *r)
{
	for (size_t i = 0; i < p->nclients; i++)
		if (p->clients[i] == r->pid && !strcmp(r->comm, "memacct"))
			return true;
	return false;
}

/* Whether process @pid runs the binary memacct runs (the same inode). */
static bool runs_memacct(pid_t pid)
{
	char path[32];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return !stat(path, &a) && !stat("/proc/self/exe", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* @pid, the sender of a mark, among @p->clients when it is memacct mark */
static void note_client(struct phases *p, pid_t pid)
{
	int *v;

	if (pid <= 0 || !runs_memacct(pid))
		return;
	for (size_t i = 0; i < p->nclients; i++)
		if (p->clients[i] == pid)
			return;
	v = array_grow(&p->clients, p->nclients, &p->clients_cap, sizeof(*v));
	if (v) {
		*v = pid;
		p->nclients++;
	}
}

static const struct snap_maps *snap_maps_of(const struct phase_snap *sn, int pid,
					     uint64_t start_ns)
{
	for (size_t i = 0; i < sn->nmaps; i++)
		if (sn->maps[i].pid == pid && (!start_ns || !sn->maps[i].start_ns ||
					       sn->maps[i].start_ns == start_ns))
			return &sn->maps[i];
	return NULL;
}

/*
 * Whether @row's stocks are those it had in @prev, whose smaps were read:
 * reading smaps walks the page tables and is most of a mark's cost
 * (docs/run.md "Phases"), so an unchanged process is not read again.
 */
static bool unchanged(const struct phase_snap *prev, const struct proc_row *row)
{
	static const enum metric_id stocks[] = { M_RSS, M_ANON, M_FILE, M_SHMEM, M_MLOCKED,
						  M_PINNED_VM };

	if (!prev || !snap_maps_of(prev, row->pid, row->start_boottime_ns))
		return false;
	for (size_t i = 0; i < prev->r.nprocs; i++) {
		const struct proc_row *o = &prev->r.procs[i];

		if (o->exited || !same_proc(o, row))
			continue;
		for (size_t k = 0; k < sizeof(stocks) / sizeof(stocks[0]); k++)
			if (metric_get(&o->m, stocks[k]) != metric_get(&row->m, stocks[k]))
				return false;
		return true;
	}
	return false;
}

/*
 * A snapshot: the report's figures and smaps of its live processes, but
 * those unchanged since @prev (NULL: none), taken from it by snap_adopt().
 */
static int snap_take(struct session *s, struct phase_snap *sn, const struct phase_snap *prev)
{
	int err;

	memset(sn, 0, sizeof(*sn));
	err = session_report(s, &sn->r);
	if (err)
		return err;
	sn->maps = calloc(sn->r.nprocs ? sn->r.nprocs : 1, sizeof(*sn->maps));
	if (!sn->maps) {
		report_free(&sn->r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sn->r.nprocs; i++) {
		const struct proc_row *row = &sn->r.procs[i];
		struct snap_maps *m = &sn->maps[sn->nmaps];

		if (row->exited)
			continue;
		m->reused = unchanged(prev, row);
		/* a process that exited meanwhile has no mappings to diff */
		if (!m->reused && read_smaps(row->pid, &m->sm) < 0)
			continue;
		m->pid = row->pid;
		m->start_ns = row->start_boottime_ns;
		sn->nmaps++;
	}
	return 0;
}

/* the smaps of @sn's reused entries moved from @prev (then freed) */
static void snap_adopt(struct phase_snap *sn, struct phase_snap *prev)
{
	for (size_t i = 0; i < sn->nmaps; i++) {
		struct snap_maps *m = &sn->maps[i];

		for (size_t j = 0; m->reused && j < prev->nmaps; j++) {
			struct snap_maps *o = &prev->maps[j];

			if (o->pid != m->pid || (m->start_ns && o->start_ns &&
						 m->start_ns != o->start_ns))
				continue;
			m->sm = o->sm;
			memset(&o->sm, 0, sizeof(o->sm));
			m->reused = false;
		}
	}
}

static void metrics_delta(struct phase_proc *d, const struct metrics *a, const struct metrics *b,
			  unsigned int skip)
{
	d->unknown = (a ? a->unknown : 0) | b->unknown;
	for (int id = 0; id < M_NR; id++) {
		if (metric_table[id].flags & skip)
			d->unknown |= MBIT(id);
		else
			d->d[id] = (int64_t)metric_get(b, id) -
				   (a ? (int64_t)metric_get(a, id) : 0);
	}
	d->cow_by_kind[0] = (int64_t)metrics_cow_unknown(b) -
			    (a ? (int64_t)metrics_cow_unknown(a) : 0);
	for (int k = 1; k < MEMACCT_COW_KIND_NR; k++)
		d->cow_by_kind[k] = (int64_t)b->cow_by_kind[k] - (a ? (int64_t)a->cow_by_kind[k] : 0);
}

static bool delta_zero(const struct phase_proc *d)
{
	for (int id = 0; id < M_NR; id++)
		if (!(d->unknown & MBIT(id)) && d->d[id])
			return false;
	return true;
}

static bool same_object(const struct smaps_map *a, const struct smaps_map *b)
{
	if (a->inode != b->inode || a->kind != b->kind)
		return false;
	if (!a->path || !b->path)
		return !a->path && !b->path;
	return !strcmp(a->path, b->path);
}

static int push_map(struct phase *ph, size_t *cap, int pid, enum map_change c,
		    const struct smaps_map *now, const struct smaps_map *was)
{
	const struct smaps_map *m = now ? now : was;
	struct phase_map *pm = array_grow(&ph->maps, ph->nmaps, cap, sizeof(*pm));

	if (!pm)
		return -ENOMEM;
	ph->nmaps++;
	memset(pm, 0, sizeof(*pm));
	pm->pid = pid;
	pm->change = c;
	pm->start = m->start;
	pm->end = m->end;
	pm->kind = m->kind;
	snprintf(pm->path, sizeof(pm->path), "%s", m->path ? m->path : "");
	pm->size = now ? now->size : 0;
	pm->rss = now ? now->rss : 0;
	pm->locked = now ? smaps_locked(now) : 0;
	pm->size_change = (int64_t)(now ? now->size : 0) - (int64_t)(was ? was->size : 0);
	pm->rss_change = (int64_t)(now ? now->rss : 0) - (int64_t)(was ? was->rss : 0);
	pm->freed_in = -1;
	return 0;
}

static bool big(int64_t v)
{
	return (uint64_t)(v < 0 ? -v : v) >= PHASE_MAP_MIN_BYTES;
}

/*
 * Mappings of one process that moved: a mapping now is the one before that
 * overlaps it and maps the same object (a VMA merged with a neighbour or
 * split by mlock keeps its identity); each old mapping matches once.
 */
static int diff_maps(struct phase *ph, size_t *cap, int pid, const struct smaps *was,
		     const struct smaps *now)
{
	bool *used = calloc(was->n ? was->n : 1, sizeof(*used));
	int err = 0;

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < now->n && !err; i++) {
		const struct smaps_map *n = &now->maps[i], *o = NULL;

		for (size_t j = 0; j < was->n; j++) {
			const struct smaps_map *w = &was->maps[j];

			if (used[j] || w->end <= n->start || w->start >= n->end ||
			    !same_object(w, n))
				continue;
			used[j] = true;
			o = w;
			break;
		}
		if (!o) {
			if (big(n->size) || big(n->rss))
				err = push_map(ph, cap, pid, MAP_APPEARED, n, NULL);
			continue;
		}
		if (big((int64_t)n->size - (int64_t)o->size) ||
		    big((int64_t)n->rss - (int64_t)o->rss))
			err = push_map(ph, cap, pid,
				       (int64_t)n->size + (int64_t)n->rss >=
				       (int64_t)o->size + (int64_t)o->rss ? MAP_GREW : MAP_SHRANK,
				       n, o);
	}
	for (size_t j = 0; j < was->n && !err; j++)
		if (!used[j] && (big(was->maps[j].size) || big(was->maps[j].rss)))
			err = push_map(ph, cap, pid, MAP_VANISHED, NULL, &was->maps[j]);
	free(used);
	return err;
}

/*
 * The phase from @a to @b: each process of @b against its row in @a (none:
 * it appeared), those that moved but @p's mark clients; the totals;
 * mappings of the processes live at both ends (@b's maps NULL: none).
 */
static int phase_build(const struct phases *p, struct phase *ph, const struct phase_snap *a,
		       const struct report *b, const struct phase_snap *bmaps)
{
	size_t mcap = 0;
	int err;

	ph->start_s = a->r.elapsed_s;
	ph->end_s = b->elapsed_s;
	ph->procs = calloc(b->nprocs ? b->nprocs : 1, sizeof(*ph->procs));
	if (!ph->procs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nprocs; i++) {
		const struct proc_row *rb = &b->procs[i], *ra = NULL;
		struct phase_proc *d = &ph->procs[ph->nprocs];

		if (is_client(p, rb))
			continue;

		for (size_t j = 0; j < a->r.nprocs; j++)
			if (same_proc(&a->r.procs[j], rb) &&
			    (!ra || a->r.procs[j].exited == rb->exited))
				ra = &a->r.procs[j];
		if (ra && ra->exited && !rb->exited)
			ra = NULL;	/* the PID's earlier process */
		memset(d, 0, sizeof(*d));
		metrics_delta(d, ra ? &ra->m : NULL, &rb->m, MF_TOTALS);
		if (ra && delta_zero(d))
			continue;
		d->pid = rb->pid;
		snprintf(d->comm, sizeof(d->comm), "%s", rb->comm);
		d->appeared = !ra;
		d->exited = rb->exited;
		ph->nprocs++;
	}
	if (ph->nprocs < b->nprocs) {	/* a phase keeps only the rows that moved */
		struct phase_proc *fit = realloc(ph->procs, (ph->nprocs ? ph->nprocs : 1) *
						 sizeof(*fit));

		if (fit)
			ph->procs = fit;
	}
	metrics_delta(&ph->totals, &a->r.totals, &b->totals, 0);
	if (!bmaps)
		return 0;
	for (size_t i = 0; i < bmaps->nmaps; i++) {
		const struct snap_maps *n = &bmaps->maps[i];
		const struct snap_maps *o = snap_maps_of(a, n->pid, n->start_ns);

		if (!o || n->reused)	/* reused: the same smaps, nothing moved */
			continue;
		err = diff_maps(ph, &mcap, n->pid, &o->sm, &n->sm);
		if (err)
			return err;
	}
	return 0;
}

static void phase_free(struct phase *ph)
{
	free(ph->procs);
	free(ph->maps);
}

/*
 * Mappings of earlier phases that appeared or grew and are gone in @ph
 * (index @idx): one of @ph's vanished mappings of the same process and
 * object overlaps them, or their process exited in @ph.
 */
static void note_freed(struct phases *p, const struct phase *ph, int idx)
{
	for (size_t e = 0; e < p->ndone; e++) {
		for (size_t i = 0; i < p->done[e].nmaps; i++) {
			struct phase_map *m = &p->done[e].maps[i];

			if (m->freed_in >= 0 ||
			    (m->change != MAP_APPEARED && m->change != MAP_GREW))
				continue;
			for (size_t j = 0; j < ph->nprocs && m->freed_in < 0; j++)
				if (ph->procs[j].pid == m->pid && ph->procs[j].exited)
					m->freed_in = idx;
			for (size_t j = 0; j < ph->nmaps && m->freed_in < 0; j++) {
				const struct phase_map *v = &ph->maps[j];

				if (v->change == MAP_VANISHED && v->pid == m->pid &&
				    v->kind == m->kind && !strcmp(v->path, m->path) &&
				    v->start < m->end && m->start < v->end)
					m->freed_in = idx;
			}
		}
	}
}

/* close the open phase at @b; its snapshot (@bmaps) may be NULL */
static int phase_close(struct phases *p, const struct report *b, const struct phase_snap *bmaps)
{
	struct phase *ph;
	int err;

	if (!p->open)
		return 0;
	ph = array_grow(&p->done, p->ndone, &p->cap, sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	memset(ph, 0, sizeof(*ph));
	snprintf(ph->name, sizeof(ph->name), "%s", p->cur_name);
	err = phase_build(p, ph, &p->start, b, bmaps);
	if (err) {
		phase_free(ph);
		return err;
	}
	note_freed(p, ph, (int)p->ndone);
	p->ndone++;
	return 0;
}

/* a mark: snapshot, close the open phase, open @name (NULL: "end") */
static int mark(struct phases *p, const char *name)
{
	struct phase_snap now;
	uint64_t t = now_ns();
	int err;

	err = snap_take(p->s, &now, p->open ? &p->start : NULL);
	if (err)
		return err;
	if (p->on_mark)
		p->on_mark(p->on_mark_ctx, name, &now.r);
	err = phase_close(p, &now.r, &now);
	if (p->open) {
		snap_adopt(&now, &p->start);
		snap_free(&p->start);
		p->open = false;
	}
	if (err) {
		snap_free(&now);
		return err;
	}
	if (name) {
		snprintf(p->cur_name, sizeof(p->cur_name), "%s", name);
		p->start = now;
		p->open = true;
	} else {
		snap_free(&now);
	}
	t = now_ns() - t;
	p->snap_ns_sum += t;
	p->snap_ns_max = t > p->snap_ns_max ? t : p->snap_ns_max;
	p->marks++;
	return 0;
}

/*
 * The answer, on the client's own socket when it sent one, as one message;
 * else on ours a byte a message: a reader of the shared socket may read a
 * byte at a time (bash's read, a C loop of read(fd, &c, 1)), and each read
 * of a SEQPACKET socket takes a whole message, dropping what does not fit
 * (bash then waited for ever for the '\n'); a reader of lines (fgets,
 * Python's readline) reads on until the '\n' either way.
 */
static void reply(struct phases *p, int fd, const char *line)
{
	size_t n = strlen(line), step = fd >= 0 ? n : 1;

	/* SEQPACKET: a short message is sent whole or not at all; a client
	 * gone or not reading never blocks us */
	for (size_t off = 0; off < n; off += step)
		if (send(fd >= 0 ? fd : p->fd, line + off, step, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno != EPIPE && errno != ECONNRESET && errno != EAGAIN)
				p_warn("answering a phase mark: %s", strerror(errno));
			break;
		}
}

/* one message: 1 served, 0 none waiting, negative errno */
static int serve_one(struct phases *p)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} c;
	char buf[MEMACCT_MARK_LINE_MAX + 1], name[MEMACCT_MARK_NAME_MAX + 1], why[128], ans[160];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	int fd = -1, err = 0;
	enum mark_kind k;
	ssize_t n;

	n = recvmsg(p->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0 && !msg.msg_controllen) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

		/* the end of the channel (no process holds CMD's end any more:
		 * POLLHUP), or a message of 0 bytes, which a client may send:
		 * answered as bad, the channel kept for everyone else */
		if (poll(&pfd, 1, 0) < 0 || (pfd.revents & POLLHUP))
			return -EPIPE;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), fds[4];

		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
			note_client(p, uc.pid);	/* before the snapshot: its phase too */
			continue;
		}
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(fds, CMSG_DATA(cm), nfd * sizeof(int));
		for (int i = 0; i < nfd; i++) {
			if (fd < 0)
				fd = fds[i];
			else
				close(fds[i]);	/* one answer socket, the rest closed */
		}
	}
	if (msg.msg_flags & MSG_TRUNC)
		k = MARK_BAD, snprintf(why, sizeof(why), "line over %d bytes",
				       MEMACCT_MARK_LINE_MAX);
	else
		k = mark_parse(buf, n, name, sizeof(name), why, sizeof(why));
	/* a phase past PHASES_MAX is refused; "end" of the last one is not */
	if (k == MARK_PHASE && p->ndone + p->open + 1 > PHASES_MAX) {
		p->refused++;
		k = MARK_BAD;
		snprintf(why, sizeof(why), "too many phases (%d): mark ignored", PHASES_MAX);
	}
	if (k != MARK_BAD) {
		err = mark(p, k == MARK_PHASE ? name : NULL);
		if (err)
			snprintf(why, sizeof(why), "snapshot failed: %s", strerror(-err));
	}
	if (k == MARK_BAD || err) {
		p->failed++;
		snprintf(ans, sizeof(ans), "error %s\n", why);
	} else
		snprintf(ans, sizeof(ans), "ok\n");
	reply(p, fd, ans);
	if (fd >= 0)
		close(fd);
	return 1;
}

int phases_serve(struct phases *p)
{
	int n;

	if (p->fd < 0)
		return 0;
	/* a bounded batch: the loop's reaping and reports go on during a storm */
	for (int i = 0; i < 64; i++) {
		n = serve_one(p);
		if (n == 1)
			continue;
		if (n < 0) {
			if (n != -EPIPE)
				p_warn("phase marks: %s; no more marks taken", strerror(-n));
			close(p->fd);
			p->fd = -1;
			return n == -EPIPE ? 0 : n;
		}
		break;
	}
	return 0;
}

int phases_finish(struct phases *p, const struct report *final)
{
	int err = phase_close(p, final, NULL);

	if (p->open)
		snap_free(&p->start);
	p->open = false;
	return err;
}

void phases_free(struct phases *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->child_fd >= 0)
		close(p->child_fd);
	if (p->open)
		snap_free(&p->start);
	for (size_t i = 0; i < p->ndone; i++)
		phase_free(&p->done[i]);
	free(p->done);
	free(p->clients);
	free(p->pythonpath_was);	/* not spawned: phases_spawned() did not */
	p->pythonpath_was = NULL;
	p->clients = NULL;
	p->nclients = p->clients_cap = 0;
	p->fd = p->child_fd = -1;
	p->done = NULL;
	p->ndone = p->cap = 0;
	p->open = false;
}

int parse_params(const char *s, double *out)
{
	static const struct { char c; double mul; } suffixes[] = {
		{ 'K', 1e3 }, { 'k', 1e3 }, { 'M', 1e6 }, { 'B', 1e9 }, { 'G', 1e9 },
		{ 'T', 1e12 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v <= 0)
		return -EINVAL;
	for (size_t i = 0; *end && i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (*end == suffixes[i].c) {
			v *= suffixes[i].mul;
			end++;
			break;
		}
	if (*end || v < 1)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_bytes_per_param(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* a phase's change of @id, 0 when unknown (the caller checked anon, shmem) */
static double known(const struct phase_proc *d, enum metric_id id)
{
	return d->unknown & MBIT(id) ? 0 : (double)d->d[id];
}

/* @m of phase @e is still mapped at the end of phase @i */
static bool map_held(const struct phase_map *m, int e, int i)
{
	return e <= i && (m->change == MAP_APPEARED || m->change == MAP_GREW) &&
	       m->rss_change > 0 && (m->freed_in < 0 || m->freed_in > i);
}

/* @a (of phase @ea) before @b (of @eb) in the list of phase @i: more
 * locked, then of phase @i itself, then more resident */
static bool map_before(const struct phase_map *a, int ea, const struct phase_map *b, int eb,
		       int i)
{
	if (a->locked != b->locked)
		return a->locked > b->locked;
	if ((ea == i) != (eb == i))
		return ea == i;
	return a->rss_change > b->rss_change;
}

int phase_budget(const struct phases *p, size_t i, struct phase_budget *b)
{
	const uint64_t need = MBIT(M_ANON) | MBIT(M_SHMEM);
	double n = p->params;

	memset(b, 0, sizeof(*b));
	if (n <= 0 || i >= p->ndone)
		return -EINVAL;
	for (size_t e = 0; e <= i; e++) {
		const struct phase_proc *t = &p->done[e].totals;
		double mem;

		if (t->unknown & need)
			return -ENODATA;
		mem = (double)t->d[M_ANON] + (double)t->d[M_SHMEM];
		b->cumulative += mem / n;
		if (e == i)
			b->change = mem / n;
		b->pinned += known(t, M_PINNED) / n;
		b->mlocked += known(t, M_MLOCKED) / n;
		b->pinned_vm += known(t, M_PINNED_VM) / n;
		b->dma_pinned += known(t, M_DMA_PINNED) / n;
		b->file += known(t, M_FILE) / n;
		for (size_t j = 0; j < p->done[e].nmaps; j++) {
			const struct phase_map *m = &p->done[e].maps[j];
			int k;

			if (!map_held(m, (int)e, (int)i))
				continue;
			/* insertion into the sorted top list */
			for (k = b->ntop; k > 0; k--) {
				const struct phase_map *o =
					&p->done[b->top[k - 1].phase].maps[b->top[k - 1].map];

				if (!map_before(m, (int)e, o, b->top[k - 1].phase, (int)i))
					break;
				if (k < PHASE_BUDGET_MAPS)
					b->top[k] = b->top[k - 1];
			}
			if (k < PHASE_BUDGET_MAPS) {
				b->top[k].phase = (int)e;
				b->top[k].map = (int)j;
				if (b->ntop < PHASE_BUDGET_MAPS)
					b->ntop++;
			}
		}
	}
	b->unpinned = b->cumulative - b->pinned;
	b->excess = b->cumulative - p->expect_bpp;
	if (b->excess > 0) {
		b->excess_pinned = b->pinned <= 0 ? 0 :
				   b->pinned < b->excess ? b->pinned : b->excess;
		b->excess_unpinned = b->excess - b->excess_pinned;
	}
	return 0;
}
