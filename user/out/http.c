// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * http.c - the daemon's HTTP side (http.h) with libmicrohttpd: the published
 * texts of the last collection, /metrics and /healthz from them, slow
 * clients evicted, --listen parsing.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <zlib.h>
#include "http.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* Text of one collection, shared with HTTP responses (reference counted). */
struct snap {
	char *text;
	size_t len;
	int refs;
	char *gz;		/* text gzip-compressed (snap_gzip()), or NULL */
	size_t gzlen;
	bool gz_done;		/* compressed once, or tried to */
};

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct snap *snap_prom, *snap_om;
/*
 * /healthz's inputs, under snap_lock: when the last collection was published
 * (CLOCK_MONOTONIC ns), the age past which collections have stalled (3
 * intervals and 5 s), and the kernel side's links found gone at it.
 */
static uint64_t health_published_ns, health_stall_ns;
static int health_links_gone, health_links;
static char health_degraded[256];	/* why the figures are degraded, or "" */

/*
 * --listen ADDR:PORT into @ss: ADDR an IPv4 address, an IPv6 one in
 * brackets ([::1], [::] also takes IPv4 unless the host's bindv6only says
 * otherwise), "localhost" or nothing (127.0.0.1). 0 or -EINVAL.
 */
int http_parse_listen(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	const char *colon = strrchr(s, ':');
	size_t hl = colon ? (size_t)(colon - s) : 0;
	char host[64];
	uint64_t port;

	if (!colon || hl >= sizeof(host) || parse_u64(colon + 1, &port) || port == 0 ||
	    port > 65535)
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[') {
		if (hl < 3 || host[hl - 1] != ']')
			return -EINVAL;
		host[hl - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (!strcmp(host, "localhost") || !*host)
		strcpy(host, "127.0.0.1");
	return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -EINVAL;
}

const char *http_listen_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
			(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
			(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

const char *http_listen_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	http_listen_addr(ss, a, sizeof(a));
	snprintf(buf, len, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 http_listen_port(ss));
	return buf;
}

unsigned int http_listen_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port :
						 ((const struct sockaddr_in *)ss)->sin_port);
}

/* whether @ss is a loopback address (127/8, ::1, ::ffff:127/104) */
bool http_listen_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && s6->sin6_addr.s6_addr[12] == 127);
	return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
}


/* ---------------------------------------------------------------- snapshots */

static struct snap *snap_new(const char *text)
{
	struct snap *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->len = strlen(text);
	s->text = strdup(text);
	s->refs = 1;
	if (!s->text) {
		free(s);
		return NULL;
	}
	return s;
}

static void snap_put(struct snap *s)
{
	int last;

	if (!s)
		return;
	pthread_mutex_lock(&snap_lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&snap_lock);
	if (last) {
		free(s->gz);
		free(s->text);
		free(s);
	}
}

static struct snap *snap_get(bool om)
{
	struct snap *s;

	pthread_mutex_lock(&snap_lock);
	s = om ? snap_om : snap_prom;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&snap_lock);
	return s;
}

/*
 * @s's text gzip-compressed (RFC 1952, zlib level 1), made at the first
 * request that accepts it and kept with the snapshot: one compression per
 * collection, none while no scraper asks. NULL (*@len 0) when zlib failed:
 * the text is served then.
 */
static const char *snap_gzip(struct snap *s, size_t *len)
{
	static pthread_mutex_t gz_lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&gz_lock);
	if (!s->gz_done) {
		z_stream z = { 0 };

		s->gz_done = true;
		if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) == Z_OK) {
			uLong cap = deflateBound(&z, s->len);
			char *out = malloc(cap);

			z.next_in = (Bytef *)s->text;
			z.avail_in = s->len;
			z.next_out = (Bytef *)out;
			z.avail_out = cap;
			if (out && deflate(&z, Z_FINISH) == Z_STREAM_END) {
				s->gz = out;
				s->gzlen = z.total_out;
			} else {
				free(out);
			}
			deflateEnd(&z);
		}
	}
	pthread_mutex_unlock(&gz_lock);
	*len = s->gzlen;
	return s->gz;
}

/*
 * Serve @prom and @om from now on, and set /healthz's inputs with them under
 * the same lock: published now (0 when both are NULL, at the end), @links_gone
 * of @links programs without their pinned links, @degraded (or NULL).
 */
static void snap_publish(struct snap *prom, struct snap *om, int links_gone, int links,
			 const char *degraded)
{
	struct snap *old_p, *old_o;

	pthread_mutex_lock(&snap_lock);
	old_p = snap_prom;
	old_o = snap_om;
	snap_prom = prom;
	snap_om = om;
	health_published_ns = prom ? now_ns() : 0;
	health_links_gone = links_gone;
	health_links = links;
	snprintf(health_degraded, sizeof(health_degraded), "%s", degraded ? degraded : "");
	pthread_mutex_unlock(&snap_lock);
	snap_put(old_p);
	snap_put(old_o);
}

/* ---------------------------------------------------------------- HTTP */

/*
 * Slow clients (reliability audit D3). MHD's timeout is an idle timeout: a
 * client that trickles a header line every few seconds keeps its connection,
 * and 2,000 of them from one address (a local user; per-IP limits cannot
 * tell them from a Prometheus on the same host) took every slot. So each
 * connection is tracked from MHD's notify callbacks: one that has waited
 * HTTP_WAIT_NS for a complete request (headers) is shut down by the main
 * loop; and past HTTP_EVICT_AT open connections, the connections that have
 * waited longest (at least HTTP_EVICT_MIN_NS) are shut down, so that MHD
 * always has room to accept. The wait is counted from the accept: a
 * connection whose bytes still lie unread in its socket waits for the
 * daemon, not for its client, and is not shut for it (CI's loaded guest
 * left 12 of 1,000 requests sent at once unanswered; that they were shut
 * here unread is the likely cause, not reproduced).
 * A request being answered is never cut. shutdown(), not close(): MHD sees
 * the end of stream and closes the connection itself; the lock held around
 * shutdown() and around the CLOSED notification keeps the fd MHD's until
 * then.
 */
#define HTTP_CONN_LIMIT		2000U
#define HTTP_EVICT_AT		1500U
#define HTTP_WAIT_NS		5000000000ULL
#define HTTP_EVICT_MIN_NS	500000000ULL
/*
 * Requests a connection may make; the last is answered with "Connection:
 * close". 200 GETs of /metrics pipelined in one 7.2 KB write were all
 * answered, 35 MB at 9,200 cgroups (issue 23): at most 8 texts now. A
 * scraper that keeps its connection (Prometheus every 15 s) reconnects
 * every 8 scrapes, a handshake on loopback.
 */
#define HTTP_CONN_REQUESTS	8U
#define HTTP_CONN_MEMORY	16384	/* a connection's buffers, its request's too */

struct hconn {
	struct hconn *prev, *next;	/* oldest wait first */
	int fd;
	uint64_t since_ns;		/* waiting for a request since; 0: answering */
	bool shut;
	/* of the connection's thread only: */
	unsigned int requests;		/* requests so far (HTTP_CONN_REQUESTS) */
	const char *raw_uri;		/* the request's target as received (on_uri()) */
	size_t raw_len;			/* up to its first NUL */
};

static pthread_mutex_t hconn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hconn hconn_list = { .prev = &hconn_list, .next = &hconn_list, .fd = -1 };
static unsigned int hconn_n;
/* connections shut by on_accept() and http_reap_slow(), by why (under hconn_lock) */
static uint64_t hconn_shut_idle, hconn_shut_full;

static void hconn_unlink(struct hconn *h)
{
	h->prev->next = h->next;
	h->next->prev = h->prev;
}

static void hconn_append(struct hconn *h)
{
	h->prev = hconn_list.prev;
	h->next = &hconn_list;
	hconn_list.prev->next = h;
	hconn_list.prev = h;
}

static void hconn_shut(struct hconn *h)
{
	shutdown(h->fd, SHUT_RDWR);
	h->shut = true;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct hconn *h = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		h = calloc(1, sizeof(*h));
		if (!h || !ci) {
			free(h);
			return;
		}
		h->fd = ci->connect_fd;
		h->since_ns = now_ns();
		pthread_mutex_lock(&hconn_lock);
		hconn_append(h);
		hconn_n++;
		pthread_mutex_unlock(&hconn_lock);
		*socket_context = h;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && h) {
		pthread_mutex_lock(&hconn_lock);
		hconn_unlink(h);
		hconn_n--;
		pthread_mutex_unlock(&hconn_lock);
		free(h);
		*socket_context = NULL;
	}
}

/* @c's tracking entry (NULL when it could not be made) */
static struct hconn *hconn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/*
 * The connection's tracking entry: answering (request complete: one more
 * request counted) or waiting again.
 */
static void hconn_mark(struct MHD_Connection *c, bool answering)
{
	struct hconn *h = hconn_of(c);

	if (!h)
		return;
	pthread_mutex_lock(&hconn_lock);
	hconn_unlink(h);
	h->since_ns = answering ? 0 : now_ns();
	hconn_append(h);
	pthread_mutex_unlock(&hconn_lock);
	if (answering)
		h->requests++;
	else
		h->raw_uri = NULL;
}

/*
 * URI log callback: the request target as received, before libmicrohttpd
 * cuts its query off and unescapes it, NUL-terminated where the target
 * ends, or at the first NUL the client put in it (see target_whole()).
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct hconn *h = hconn_of(c);

	if (h) {
		h->raw_uri = uri;
		h->raw_len = strlen(uri);
	}
	return NULL;	/* no request context: on_request() makes its own */
}

/*
 * Whether the request target reached us whole. libmicrohttpd 0.9.75 hands
 * it over as a C string, so "GET /healthz\0junk HTTP/1.0" was /healthz, a
 * 200 (issue 23). It parses the request line in place: the target, a NUL
 * where the space before the version was, the version. A target cut short
 * by a NUL of its own ends before that: the version does not follow its
 * end. Taken as whole when there is nothing to compare: no version, or one
 * that is not in the same buffer shortly after the target (a libmicrohttpd
 * that parses otherwise).
 */
static bool target_whole(struct MHD_Connection *c, const char *version)
{
	struct hconn *h = hconn_of(c);
	uintptr_t t, v = (uintptr_t)version;

	if (!h || !h->raw_uri || !*version)
		return true;
	t = (uintptr_t)h->raw_uri;
	if (v <= t || v - t > HTTP_CONN_MEMORY)
		return true;
	return v == t + h->raw_len + 1;
}

/*
 * Unescape callback: %XX decoded in place, but an escaped control byte
 * (below 0x20, 0x7f) stays escaped: %00 decoded would cut the path as a
 * NUL does ("/healthz%00junk" was /healthz), and no path of ours has one.
 * The new length.
 */
static size_t on_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *in = s, *out = s;

	while (*in) {
		unsigned int v;
		char hex[3];

		if (in[0] == '%' && isxdigit((unsigned char)in[1]) &&
		    isxdigit((unsigned char)in[2])) {
			hex[0] = in[1];
			hex[1] = in[2];
			hex[2] = '\0';
			v = strtoul(hex, NULL, 16);
			if (v >= 0x20 && v != 0x7f) {
				*out++ = (char)v;
				in += 3;
				continue;
			}
		}
		*out++ = *in++;
	}
	*out = '\0';
	return out - s;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	hconn_mark(c, false);
}

/* Accept policy: past HTTP_EVICT_AT, make room by the longest wait. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	uint64_t now = now_ns();

	pthread_mutex_lock(&hconn_lock);
	if (hconn_n >= HTTP_EVICT_AT)
		for (struct hconn *h = hconn_list.next; h != &hconn_list; h = h->next)
			if (h->since_ns && !h->shut) {
				if (now - h->since_ns >= HTTP_EVICT_MIN_NS) {
					hconn_shut(h);
					hconn_shut_full++;
				}
				break;
			}
	pthread_mutex_unlock(&hconn_lock);
	return MHD_YES;
}

/*
 * From the main loop (every 100 ms): shut down connections that waited
 * HTTP_WAIT_NS for a request, and past HTTP_EVICT_AT open connections the
 * longest waits (MHD stops accepting at its limit, so on_accept() alone
 * cannot make room then).
 */
void http_reap_slow(void)
{
	uint64_t now = now_ns();
	unsigned int open;

	pthread_mutex_lock(&hconn_lock);
	open = hconn_n;
	for (struct hconn *h = hconn_list.next; h != &hconn_list; h = h->next)
		if (h->shut)
			open--;
	for (struct hconn *h = hconn_list.next; h != &hconn_list; h = h->next) {
		uint64_t waited = now - h->since_ns;

		if (!h->since_ns || h->shut)
			continue;
		if (waited >= HTTP_WAIT_NS) {
			int unread = 0;

			if (!ioctl(h->fd, FIONREAD, &unread) && unread > 0)
				continue;	/* the daemon is late, not the client */
			hconn_shut_idle++;
		} else if (open >= HTTP_EVICT_AT && waited >= HTTP_EVICT_MIN_NS) {
			hconn_shut_full++;
		} else {
			continue;
		}
		hconn_shut(h);
		open--;
	}
	pthread_mutex_unlock(&hconn_lock);
}

void http_shut_counts(uint64_t *idle, uint64_t *full)
{
	pthread_mutex_lock(&hconn_lock);
	*idle = hconn_shut_idle;
	*full = hconn_shut_full;
	pthread_mutex_unlock(&hconn_lock);
}

/*
 * Whether an Accept-Encoding value takes gzip (RFC 9110 12.5.3): a "gzip"
 * or "x-gzip" coding, any case, whose weight is not q=0.
 */
static bool accepts_gzip(const char *ae)
{
	char el[64], *name, *param, *save;

	while (ae && *ae) {
		size_t len = strcspn(ae, ",");

		if (len < sizeof(el)) {
			memcpy(el, ae, len);
			el[len] = '\0';
			name = strtok_r(el, " \t;", &save);
			if (name && (!strcasecmp(name, "gzip") || !strcasecmp(name, "x-gzip"))) {
				bool zero = false;

				while ((param = strtok_r(NULL, " \t;", &save)))
					if ((param[0] == 'q' || param[0] == 'Q') && param[1] == '=')
						zero = strtod(param + 2, NULL) == 0;
				return !zero;
			}
		}
		ae += len + (ae[len] == ',');
	}
	return false;
}

static void snap_free_cb(void *cls)
{
	snap_put(cls);
}

/* MHD_queue_response(), closing the connection after its last request */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned int status,
			     struct MHD_Response *r)
{
	struct hconn *h = hconn_of(c);

	if (h && h->requests >= HTTP_CONN_REQUESTS)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	return MHD_queue_response(c, status, r);
}

static enum MHD_Result reply_with(struct MHD_Connection *c, unsigned int status,
				  const char *text, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = queue(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* a constant text */
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status,
				  const char *text)
{
	return reply_with(c, status, text, MHD_RESPMEM_PERSISTENT);
}

/* a text on the caller's stack (MHD copies it) */
static enum MHD_Result reply_text_copy(struct MHD_Connection *c, unsigned int status,
				       const char *text)
{
	return reply_with(c, status, text, MHD_RESPMEM_MUST_COPY);
}

/*
 * /healthz: 200 "ok" while collections are published on time and every
 * program of the kernel side is still linked; else 503 saying which:
 * "starting" (no collection yet), "stalled" (none for 3 intervals + 5 s),
 * "kernel side incomplete" (links unpinned from under the daemon). 200
 * "degraded: WHY" while some figures are (a full map lately: the daemon's
 * health_degraded()): a restart would not mend them, so not a 503 that
 * a liveness probe restarts on.
 * The clock is read under the lock the publication takes: read before it,
 * a publication in between made now < published, and the age wrapped to
 * 18446744073.7 s, a 503 "stalled" (issue 23).
 */
static enum MHD_Result reply_health(struct MHD_Connection *c)
{
	uint64_t published, stall, now, age;
	char text[300], degraded[256];
	int gone, links;

	pthread_mutex_lock(&snap_lock);
	now = now_ns();
	published = health_published_ns;
	stall = health_stall_ns;
	gone = health_links_gone;
	links = health_links;
	memcpy(degraded, health_degraded, sizeof(degraded));
	pthread_mutex_unlock(&snap_lock);
	if (!published)
		return reply_text_copy(c, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
	age = now > published ? now - published : 0;
	if (age > stall) {
		snprintf(text, sizeof(text), "stalled: the last collection was published %.1f s "
			 "ago\n", age / 1e9);
		return reply_text_copy(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
	}
	if (gone) {
		snprintf(text, sizeof(text), "kernel side incomplete: %d of its %d programs' links "
			 "are no longer pinned; restart the daemon\n", gone, links);
		return reply_text_copy(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
	}
	if (degraded[0]) {
		snprintf(text, sizeof(text), "degraded: %s\n", degraded);
		return reply_text_copy(c, MHD_HTTP_OK, text);
	}
	return reply_text_copy(c, MHD_HTTP_OK, "ok\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	static int seen;
	struct MHD_Response *r;
	enum MHD_Result ret;
	const char *accept, *gz = NULL;
	struct snap *s;
	size_t gzlen = 0;
	bool om;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	/* absolute-form (RFC 9112 3.2.2, proxies send it): the path after the authority (D20) */
	if (!strncasecmp(url, "http://", 7))
		url = strchr(url + 7, '/') ? strchr(url + 7, '/') : "/";
	if (!*con_cls) {
		*con_cls = &seen;	/* headers only so far */
		hconn_mark(c, true);
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;	/* a GET body: ignored */
		return MHD_YES;
	}
	if (!target_whole(c, version))
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "bad request: a NUL in the target\n");
	if (!strcmp(url, "/healthz"))
		return reply_health(c);
	if (!strcmp(url, "/"))
		return reply_text(c, MHD_HTTP_OK, "memacct daemon: /metrics /healthz\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	om = accept && strstr(accept, "application/openmetrics-text");
	s = snap_get(om);
	if (!s)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no collection yet\n");
	if (accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING)))
		gz = snap_gzip(s, &gzlen);
	/* served from the snapshot itself; the reference goes with the response */
	r = MHD_create_response_from_buffer_with_free_callback_cls(gz ? gzlen : s->len,
								   gz ? (void *)gz : s->text,
								   snap_free_cb, s);
	if (!r) {
		snap_put(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (gz)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	MHD_add_response_header(r, "Content-Type", om ?
		"application/openmetrics-text; version=1.0.0; charset=utf-8" :
		"text/plain; version=0.0.4; charset=utf-8");
	ret = queue(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * The listening socket, bound here so that a failure says why (EADDRINUSE,
 * EADDRNOTAVAIL, EACCES): an fd, or negative errno.
 */
static int listen_fd(const struct sockaddr_storage *ss)
{
	int one = 1, fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						      sizeof(struct sockaddr_in);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, 1024)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* MHD on the socket @fd (MHD closes it when stopped); NULL on failure. */
static struct MHD_Daemon *mhd_start(int fd)
{
	return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
				0, on_accept, NULL, on_request, NULL,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2,
				MHD_OPTION_CONNECTION_LIMIT, HTTP_CONN_LIMIT,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)0,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
				/* HTTP/1.1 without Host: 400, as RFC 9112 3.2 requires (D20) */
				MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, on_unescape, NULL,
				MHD_OPTION_END);
}


int http_publish(const char *prom, const char *om, int links_gone, int links,
		 const char *degraded)
{
	struct snap *sp = snap_new(prom), *so = snap_new(om);

	if (!sp || !so) {
		snap_put(sp);
		snap_put(so);
		return -ENOMEM;
	}
	snap_publish(sp, so, links_gone, links, degraded);
	return 0;
}

struct MHD_Daemon *http_start(const struct sockaddr_storage *ss, uint64_t stall_ns, int *err)
{
	struct MHD_Daemon *d;
	int fd = listen_fd(ss);

	health_stall_ns = stall_ns;
	*err = fd < 0 ? fd : 0;
	if (fd < 0)
		return NULL;
	d = mhd_start(fd);
	if (!d)
		close(fd);
	return d;
}

void http_stop(struct MHD_Daemon *d)
{
	if (d)
		MHD_stop_daemon(d);
	snap_publish(NULL, NULL, 0, 0, NULL);
}
