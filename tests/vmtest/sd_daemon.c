// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * sd_daemon.c - the two calls of libsystemd that memacct makes, for the
 * static guest binaries (tests/vmtest/): libsystemd has no .a in Debian.
 * They speak the protocol of sd_notify(3) and sd_watchdog_enabled(3) as
 * libsystemd does, so that test_sd_notify runs in the guest too: a datagram
 * to $NOTIFY_SOCKET (a path, or '@' for the abstract namespace), and
 * $WATCHDOG_USEC for this process ($WATCHDOG_PID, when set, names it).
 * Add a function here when user/ starts calling another sd_ function.
 * (libmicrohttpd is the real one, built static without TLS by
 * tests/vmtest/build-mhd.sh.)
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

int sd_notify(int unset_environment, const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *e = getenv("NOTIFY_SOCKET");
	size_t n = e ? strlen(e) : 0;
	int fd, r = 0;

	if (!state)
		r = -EINVAL;
	else if (!n)
		r = 0;	/* not run by a service manager that wants to hear */
	else if ((e[0] != '/' && e[0] != '@') || n >= sizeof(sa.sun_path))
		r = -EINVAL;
	else if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		r = -errno;
	else {
		memcpy(sa.sun_path, e, n);
		if (sa.sun_path[0] == '@')
			sa.sun_path[0] = '\0';
		r = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
			   offsetof(struct sockaddr_un, sun_path) + n) < 0 ? -errno : 1;
		close(fd);
	}
	if (unset_environment)
		unsetenv("NOTIFY_SOCKET");
	return r;
}

int sd_watchdog_enabled(int unset_environment, uint64_t *usec)
{
	const char *s = getenv("WATCHDOG_USEC"), *p = getenv("WATCHDOG_PID");
	unsigned long long u;
	char *end;
	long pid;
	int r = 0;

	if (s && *s) {
		errno = 0;
		u = strtoull(s, &end, 10);
		if (errno || *end || !u) {
			r = -EINVAL;
		} else if (p && *p) {
			errno = 0;
			pid = strtol(p, &end, 10);
			if (errno || *end || pid <= 0)
				r = -EINVAL;
			else if (pid == getpid())
				r = 1;
		} else {
			r = 1;
		}
		if (r > 0 && usec)
			*usec = u;
	}
	if (unset_environment) {
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
	}
	return r;
}
