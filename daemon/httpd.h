/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The metrics endpoint: GET /metrics over HTTP, served by libmicrohttpd
 * without threads of its own.  Its epoll fd and a timerfd (set from
 * MHD_get_timeout) are sources of the daemon's one loop (loop.h), so the
 * body is rendered in the loop, between ingest handlers, and a slow
 * scraper only holds a socket: connections are bounded (HTTPD_MAX_CONNS),
 * HTTPD_CLIENT_CONNS of them per client (a local peer's uid, looked up by
 * NETLINK_SOCK_DIAG, or a remote peer's address), dropped after
 * HTTPD_TIMEOUT_S idle seconds, and closed when a request has taken
 * HTTPD_REQUEST_S from its first byte to its last answered, however
 * steadily it trickles.  A request whose Host: names neither an address,
 * localhost nor this machine is refused (DNS rebinding).
 */
#ifndef CS_HTTPD_H
#define CS_HTTPD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define HTTPD_MAX_CONNS 16
#define HTTPD_CLIENT_CONNS 4
#define HTTPD_TIMEOUT_S 5
#define HTTPD_REQUEST_S 10
#define HTTPD_CHECK_GAP_MS 1000	/* one bcrypt check a second per client */

struct loop;
struct httpd;
struct webconfig;

/* The body of /metrics in a malloc'd buffer: 0 or -errno.  detail: for a
 * client that may see per-cache figures (see httpd_start). */
typedef int (*httpd_render_fn)(void *ctx, bool detail, char **body, size_t *len);

struct httpd_stats {
	uint64_t served;	/* /metrics answered */
	uint64_t not_found;	/* other paths, other methods */
	uint64_t failed;	/* render or queue failures (500) */
	uint64_t client_limit;	/* connections refused: their client had HTTPD_CLIENT_CONNS */
	uint64_t deadline;	/* connections closed past HTTPD_REQUEST_S */
	uint64_t bad_host;	/* requests refused for their Host: (421) */
	uint64_t auth_failed;	/* no or wrong user name and password (401) */
	uint64_t auth_rate;	/* a password check refused: one a second per client (429) */
};

/* Listen on addr; NULL with *err = -errno (-EADDRINUSE; -EPROTONOSUPPORT:
 * TLS asked of a libmicrohttpd without it).  wc (kept, may be NULL): TLS
 * and users.  Without users a render has detail for a local peer of uid
 * 0 only, who may read /proc/slabinfo; with users every request must name
 * one of them (else 401) and has detail. */
struct httpd *httpd_start(struct loop *l, const struct sockaddr *addr, socklen_t len,
			  struct webconfig *wc, httpd_render_fn fn, void *ctx, int *err);
void httpd_get_stats(const struct httpd *h, struct httpd_stats *st);
/* The port listened on (what port 0 was given), or -1. */
int httpd_port(const struct httpd *h);
/* Leave the loop and close every connection; NULL is ignored. */
void httpd_stop(struct httpd *h);

#endif
