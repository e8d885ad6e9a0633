/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * memacct_mark.h - phase marks from a program that `memacct run` started
 * (docs/run.md "Phases"). Header-only, libc only: copy it into a project or
 * include it from PREFIX/include. The same code is `memacct mark`'s client
 * and the test workloads', so there is one implementation of the protocol.
 *
 *	#include <memacct_mark.h>
 *	memacct_mark("load");		... phase "load" ...
 *	memacct_mark("first step");	... closes "load", opens "first step"
 *	memacct_mark_end();		closes it
 *
 * The protocol: memacct run gives CMD and its descendants MEMACCT_MARK_FD,
 * one end of an AF_UNIX SOCK_SEQPACKET socketpair (inherited; memacct
 * polls the other end). A message is one line: "phase NAME\n" (NAME UTF-8,
 * 1 to MEMACCT_MARK_NAME_MAX bytes, no control bytes) or "end\n". memacct
 * answers one line, "ok\n" once it has taken the snapshot, or "error
 * WHY\n". Every process that inherited the fd shares it, so an answer
 * written on it could be read by another process marking at the same
 * time: a client therefore sends, with its line, one end of a socketpair
 * of its own (SCM_RIGHTS), and memacct answers there, to that client only.
 * A line sent without a descriptor is answered on the shared fd (a
 * program that marks from one process at a time may do that).
 *
 * Never blocks longer than memacct takes to answer, at most
 * MEMACCT_MARK_TIMEOUT_MS; never raises SIGPIPE. Not async-signal-safe
 * (getenv). Thread-safe.
 */
#ifndef MEMACCT_MARK_H
#define MEMACCT_MARK_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MEMACCT_MARK_ENV	"MEMACCT_MARK_FD"
#define MEMACCT_MARK_NAME_MAX	200	/* bytes of NAME */
#define MEMACCT_MARK_LINE_MAX	256	/* bytes of a line, either way */
#define MEMACCT_MARK_TIMEOUT_MS	10000

/*
 * memacct_mark_fd() - the descriptor of MEMACCT_MARK_FD, or -1 when the
 * variable is absent or not a descriptor number (not under memacct run).
 */
static inline int memacct_mark_fd(void)
{
	const char *v = getenv(MEMACCT_MARK_ENV);
	char *end;
	long fd;

	if (!v || !*v)
		return -1;
	errno = 0;
	fd = strtol(v, &end, 10);
	if (errno || *end || fd < 0 || fd > 1 << 30)
		return -1;
	return (int)fd;
}

/*
 * memacct_mark_line() - send @line (with its '\n') and wait for the answer,
 * copied NUL-terminated to @reply (@len bytes; may be NULL). Returns 0 when
 * memacct answered "ok", 1 when there is no MEMACCT_MARK_FD (nothing done),
 * -EPROTO when it answered "error ..." (in @reply), -EMSGSIZE for a line
 * over MEMACCT_MARK_LINE_MAX, -ETIMEDOUT, -EPIPE when memacct is gone (the
 * other end closed), or another negative errno of socketpair/sendmsg
 * (-EBADF, -ENOTSOCK: the process closed or replaced the descriptor).
 */
static inline int memacct_mark_line(const char *line, char *reply, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { (void *)line, strlen(line) };
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	char ans[MEMACCT_MARK_LINE_MAX + 1];
	struct pollfd pfd;
	int fd = memacct_mark_fd(), sv[2], err = 0;
	ssize_t n;

	if (reply && len)
		reply[0] = '\0';
	if (fd < 0)
		return 1;
	if (iov.iov_len > MEMACCT_MARK_LINE_MAX)
		return -EMSGSIZE;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	memset(&c, 0, sizeof(c));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = c.buf;
	msg.msg_controllen = sizeof(c.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &sv[1], sizeof(int));
	/* never blocked by a full queue (memacct stopped, many markers):
	 * wait for room up to the timeout, then give up */
	pfd.fd = fd;
	pfd.events = POLLOUT;
	while (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		err = errno == ECONNRESET ? -EPIPE : -errno;
		if (err != -EAGAIN && err != -EINTR)
			break;
		n = poll(&pfd, 1, MEMACCT_MARK_TIMEOUT_MS);
		if (n == 0) {
			err = -ETIMEDOUT;
			break;
		}
		err = 0;
	}
	close(sv[1]);
	if (err)
		goto out_close;
	pfd.fd = sv[0];
	pfd.events = POLLIN;
	do
		n = poll(&pfd, 1, MEMACCT_MARK_TIMEOUT_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		err = n == 0 ? -ETIMEDOUT : -errno;
		goto out_close;
	}
	n = recv(sv[0], ans, sizeof(ans) - 1, 0);
	if (n <= 0) {
		err = n == 0 ? -EPIPE : -errno;
		goto out_close;
	}
	ans[n] = '\0';
	if (reply && len)
		snprintf(reply, len, "%.*s", (int)strcspn(ans, "\n"), ans);
	err = strcmp(ans, "ok\n") ? -EPROTO : 0;
out_close:
	close(sv[0]);
	return err;
}

/*
 * memacct_mark() - close the current phase and open phase @name; returns
 * as memacct_mark_line() (-ENAMETOOLONG: @name over MEMACCT_MARK_NAME_MAX).
 */
static inline int memacct_mark(const char *name)
{
	char line[MEMACCT_MARK_LINE_MAX + 1];

	if (strlen(name) > MEMACCT_MARK_NAME_MAX)
		return -ENAMETOOLONG;
	snprintf(line, sizeof(line), "phase %s\n", name);
	return memacct_mark_line(line, NULL, 0);
}

/* memacct_mark_end() - close the current phase; as memacct_mark_line(). */
static inline int memacct_mark_end(void)
{
	return memacct_mark_line("end\n", NULL, 0);
}

#endif
