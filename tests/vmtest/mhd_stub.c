// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * mhd_stub.c - libmicrohttpd stand-ins for the static guest binary
 * (.output/memacct-static, tests/vmtest/). Debian ships libmicrohttpd.a but
 * its gnutls needs libp11-kit and libunistring, which have no .a files, so
 * the guest binary cannot link the real library. The guest never serves
 * metrics: the daemon's MHD_start_daemon() fails cleanly (NULL), saying why
 * (tests/integration_daemon.c skips its tests on that line). Add a stub here
 * when user/ starts calling another MHD_ function. libsystemd has no .a in
 * Debian either: its sd_notify() and sd_watchdog_enabled() are here too, as
 * outside a systemd service (0: nothing sent, no watchdog).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <microhttpd.h>
#include <systemd/sd-daemon.h>

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	fprintf(stderr, "memacct: built without HTTP (tests/vmtest/mhd_stub.c): "
		"the daemon cannot serve\n");
	errno = ENOSYS;
	return NULL;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	return NULL;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection,
				   unsigned int status_code,
				   struct MHD_Response *response)
{
	return MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response)
{
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response,
					const char *header, const char *content)
{
	return MHD_NO;
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection,
					enum MHD_ValueKind kind, const char *key)
{
	return NULL;
}

struct MHD_Response *MHD_create_response_from_buffer_with_free_callback_cls(
	size_t size, void *buffer, MHD_ContentReaderFreeCallback crfc, void *crfc_cls)
{
	return NULL;
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
							enum MHD_ConnectionInfoType info_type, ...)
{
	return NULL;
}

int sd_notify(int unset_environment, const char *state)
{
	return 0;
}

int sd_watchdog_enabled(int unset_environment, uint64_t *usec)
{
	return 0;
}
