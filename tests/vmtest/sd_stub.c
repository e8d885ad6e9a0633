// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * sd_stub.c - libsystemd stand-ins for the static guest binaries
 * (tests/vmtest/). libsystemd has no .a in Debian; the guest has no
 * systemd either, so its sd_notify() and sd_watchdog_enabled() answer as
 * outside a systemd service (0: nothing sent, no watchdog). Add a stub here
 * when user/ starts calling another sd_ function. (libmicrohttpd is the real
 * one, built static without TLS by tests/vmtest/build-mhd.sh.)
 */
#include <stdint.h>
#include <systemd/sd-daemon.h>

int sd_notify(int unset_environment, const char *state)
{
	return 0;
}

int sd_watchdog_enabled(int unset_environment, uint64_t *usec)
{
	return 0;
}
