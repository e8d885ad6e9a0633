/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * http.h - `memacct daemon`'s HTTP side, through libmicrohttpd: /metrics
 * serves the texts of the last published collection (Prometheus 0.0.4, or
 * OpenMetrics 1.0 when Accept asks; gzip when Accept-Encoding takes it),
 * /healthz says whether collections arrive and the kernel side is whole;
 * slow clients are evicted (reliability audit D3). One server per process.
 */
#ifndef MEMACCT_HTTP_H
#define MEMACCT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct MHD_Daemon;

/*
 * http_parse_listen() - --listen ADDR:PORT into @ss: ADDR an IPv4 address,
 * an IPv6 one in brackets ([::1]; [::] also takes IPv4 unless the host's
 * bindv6only says otherwise), "localhost" or nothing (127.0.0.1); PORT
 * 1..65535. 0, or -EINVAL.
 */
int http_parse_listen(const char *s, struct sockaddr_storage *ss);
/* http_listen_addr() - @ss's address alone ("127.0.0.1", "::1") into @buf. */
const char *http_listen_addr(const struct sockaddr_storage *ss, char *buf, size_t len);
/* http_listen_str() - @ss as ADDR:PORT or [ADDR]:PORT into @buf. */
const char *http_listen_str(const struct sockaddr_storage *ss, char *buf, size_t len);
unsigned int http_listen_port(const struct sockaddr_storage *ss);
/* http_listen_loopback() - whether @ss is loopback (127/8, ::1, ::ffff:127/104). */
bool http_listen_loopback(const struct sockaddr_storage *ss);

/*
 * http_start() - bind @ss (so that a failure says why) and serve on it from
 * libmicrohttpd's threads; /healthz turns 503 "stalled" when no collection
 * was published for @stall_ns. NULL on failure, *@err then the bind's
 * negative errno, or 0 when libmicrohttpd itself failed.
 */
struct MHD_Daemon *http_start(const struct sockaddr_storage *ss, uint64_t stall_ns, int *err);
/*
 * http_publish() - serve @prom (Prometheus text) and @om (OpenMetrics) from
 * now on (both copied; the previous texts are freed when their last reader
 * is done) and record for /healthz the time, that @links_gone of the
 * kernel side's @links programs have lost their pinned links, and why the
 * figures are degraded (@degraded, copied; NULL or "" when they are not).
 * 0, or -ENOMEM with the previous texts still served.
 */
int http_publish(const char *prom, const char *om, int links_gone, int links,
		 const char *degraded);
/* http_reap_slow() - shut the connections that waited too long for a request
 * (the main loop calls it every 100 ms). */
void http_reap_slow(void);
/*
 * http_shut_counts() - connections shut while they waited for a request,
 * since the start:
 * @idle, those that waited 5 s for a whole request (slow clients, and
 * keep-alive connections between requests); @full, those shut to
 * keep room in the connection table (1,500 of its 2,000 open, the longest
 * waiting first, each after 0.5 s at least). Counts, never reset.
 */
void http_shut_counts(uint64_t *idle, uint64_t *full);
/* http_stop() - stop serving (@d may be NULL) and free the published texts. */
void http_stop(struct MHD_Daemon *d);

#endif /* MEMACCT_HTTP_H */
