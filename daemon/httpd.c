// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GET /metrics by libmicrohttpd in external-epoll mode (httpd.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <microhttpd.h>
#include "httpd.h"
#include "loop.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define CONN_MEMORY (32 * 1024)

struct httpd {
	struct MHD_Daemon *mhd;
	struct loop *loop;
	int mhd_fd, tfd;
	httpd_render_fn fn;
	void *ctx;
	struct httpd_stats st;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, char *body,
			     size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE) :
		   MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static char *text(const char *s, size_t *len)
{
	*len = strlen(s);
	return strdup(s);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	struct httpd *h = cls;
	char *body = NULL;
	size_t len = 0;

	(void)version;
	(void)upload;
	(void)con_cls;
	*upload_len = 0;	/* a body is not read */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		h->st.not_found++;
		body = text("only GET\n", &len);
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, body, len);
	}
	if (strcmp(url, "/metrics")) {
		h->st.not_found++;
		body = text(strcmp(url, "/") ? "not found: try /metrics\n" :
				"cachescoped: metrics at /metrics\n", &len);
		return reply(c, strcmp(url, "/") ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK, body, len);
	}
	h->st.served++;
	if (h->fn(h->ctx, &body, &len)) {
		h->st.served--;
		h->st.failed++;
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, 0);
	}
	return reply(c, MHD_HTTP_OK, body, len);
}

/* Run what is ready, then arm the timer for MHD's next timeout, or
 * HTTPD_IDLE_MS at most: MHD puts its listening socket back into its epoll
 * set only inside MHD_run, so once connections at the limit time out,
 * nothing would fire again to accept the next (seen: a scraper refused for
 * good after 16 idle connections). */
#define HTTPD_IDLE_MS 1000

static void pump(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG ms = HTTPD_IDLE_MS;
	struct itimerspec its = { 0 };

	MHD_run(h->mhd);
	if (MHD_get_timeout(h->mhd, &ms) != MHD_YES || ms > HTTPD_IDLE_MS)
		ms = HTTPD_IDLE_MS;
	if (!ms)
		ms = 1;
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	timerfd_settime(h->tfd, 0, &its, NULL);
}

static void on_mhd(int fd, uint32_t events, void *data)
{
	(void)fd;
	(void)events;
	pump(data);
}

static void on_timer(int fd, uint32_t events, void *data)
{
	uint64_t n;

	(void)events;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	pump(data);
}

struct httpd *httpd_start(struct loop *l, const struct sockaddr *addr, socklen_t len,
			  httpd_render_fn fn, void *ctx, int *err)
{
	unsigned int flags = MHD_USE_EPOLL | (addr->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	const union MHD_DaemonInfo *info;
	struct httpd *h = calloc(1, sizeof(*h));

	(void)len;
	*err = -ENOMEM;
	if (!h)
		return NULL;
	h->loop = l;
	h->fn = fn;
	h->ctx = ctx;
	h->mhd_fd = h->tfd = -1;
	errno = 0;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				  MHD_OPTION_SOCK_ADDR, addr,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTPD_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTPD_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				  MHD_OPTION_END);
	if (!h->mhd) {
		*err = errno ? -errno : -EADDRNOTAVAIL;
		goto fail;
	}
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!info || h->tfd < 0) {
		*err = h->tfd < 0 ? -errno : -EINVAL;
		goto fail;
	}
	h->mhd_fd = info->epoll_fd;
	*err = loop_add(l, h->mhd_fd, EPOLLIN, on_mhd, h);
	if (*err) {
		h->mhd_fd = -1;
		goto fail;
	}
	*err = loop_add(l, h->tfd, EPOLLIN, on_timer, h);
	if (*err)
		goto fail;
	pump(h);
	return h;
fail:
	httpd_stop(h);
	return NULL;
}

void httpd_get_stats(const struct httpd *h, struct httpd_stats *st)
{
	if (h)
		*st = h->st;
	else
		memset(st, 0, sizeof(*st));
}

int httpd_port(const struct httpd *h)
{
	const union MHD_DaemonInfo *info;

	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : -1;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	if (h->mhd_fd >= 0)
		loop_del(h->loop, h->mhd_fd);
	if (h->tfd >= 0) {
		loop_del(h->loop, h->tfd);
		close(h->tfd);
	}
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	free(h);
}
