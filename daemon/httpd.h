/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The metrics endpoint: GET /metrics over HTTP, served by libmicrohttpd
 * without threads of its own.  Its epoll fd and a timerfd (set from
 * MHD_get_timeout) are sources of the daemon's one loop (loop.h), so the
 * body is rendered in the loop, between ingest handlers, and a slow
 * scraper only holds a socket: connections are bounded (HTTPD_MAX_CONNS)
 * and dropped after HTTPD_TIMEOUT_S idle seconds.
 */
#ifndef CS_HTTPD_H
#define CS_HTTPD_H

#include <stdint.h>
#include <sys/socket.h>

#define HTTPD_MAX_CONNS 8
#define HTTPD_TIMEOUT_S 5

struct loop;
struct httpd;

/* The body of /metrics in a malloc'd buffer: 0 or -errno. */
typedef int (*httpd_render_fn)(void *ctx, char **body, size_t *len);

struct httpd_stats {
	uint64_t served;	/* /metrics answered */
	uint64_t not_found;	/* other paths, other methods */
	uint64_t failed;	/* render or queue failures (500) */
};

/* Listen on addr; NULL with *err = -errno (-EADDRINUSE...). */
struct httpd *httpd_start(struct loop *l, const struct sockaddr *addr, socklen_t len,
			  httpd_render_fn fn, void *ctx, int *err);
void httpd_get_stats(const struct httpd *h, struct httpd_stats *st);
/* The port listened on (what port 0 was given), or -1. */
int httpd_port(const struct httpd *h);
/* Leave the loop and close every connection; NULL is ignored. */
void httpd_stop(struct httpd *h);

#endif
