// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GET /metrics by libmicrohttpd in external-epoll mode (httpd.h).
 *
 * MHD's own limits are per daemon and its timeout is on idleness, so a
 * client that sends a byte every few seconds holds a connection for as
 * long as it likes, and one user can hold all of them.  Each connection
 * is therefore tracked here from MHD's notifications: the client it
 * belongs to, and the deadline of the request in progress.  A connection
 * past either bound is shut down (shutdown(2) on MHD's socket: MHD reads
 * the end of it and closes the connection as it closes any other).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <microhttpd.h>
#include "clock.h"
#include "httpd.h"
#include "loop.h"
#include "webconfig.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define CONN_MEMORY (32 * 1024)
/* MHD may count a connection closed before it tells us: room to spare */
#define HTTPD_SLOTS (2 * HTTPD_MAX_CONNS)

struct conn {
	struct MHD_Connection *c;	/* NULL: a free slot */
	int fd;
	uint64_t client;		/* client_key() */
	int64_t deadline_ms;		/* of the request in progress; INT64_MAX once shut */
};

struct httpd {
	struct MHD_Daemon *mhd;
	struct loop *loop;
	int mhd_fd, tfd;
	int diag_fd;			/* NETLINK_SOCK_DIAG, or -1: clients by address only */
	bool loopback;			/* listening on loopback: Host: must be local */
	char node[65];			/* uname's nodename, for Host: */
	httpd_render_fn fn;
	void *ctx;
	struct webconfig *wc;		/* --web-config, or NULL */
	struct httpd_stats st;
	struct conn conns[HTTPD_SLOTS];
	struct {			/* the last bcrypt check, per client */
		uint64_t client;
		int64_t ms;
	} checked[HTTPD_SLOTS];
};

static int64_t now_ms(void)
{
	return (int64_t)(clock_ns(CLOCK_MONOTONIC) / NSEC_PER_MSEC);
}

/* ---- who a connection belongs to ---- */

/* An IPv4 address mapped into IPv6 (a v4 client of a [::] listener), as
 * the IPv4 address it is. */
static void unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}

/* The uid that owns the other end of a TCP connection on this host (in
 * this network namespace), as `ss -e` shows it: the peer's own socket,
 * looked up exactly by its four-tuple.  -ENOENT for a remote peer. */
static int peer_uid(int diag_fd, const struct sockaddr_storage *local,
		    const struct sockaddr_storage *peer, uint32_t *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = { 0 };
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} resp;
	struct nlmsghdr *nlh;
	const struct inet_diag_msg *m;
	ssize_t n;

	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)peer->ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* the peer's socket: its local end is our remote one */
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)local;

		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = l->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)local;

		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = l->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &l->sin6_addr, 16);
	}
	if (send(diag_fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return -errno;
	/* the kernel answers an exact lookup before send returns */
	n = recv(diag_fd, &resp, sizeof(resp), MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	nlh = &resp.nlh;
	if (!NLMSG_OK(nlh, (size_t)n))
		return -EBADMSG;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);

		return e->error ? e->error : -ENOENT;
	}
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EBADMSG;
	m = NLMSG_DATA(nlh);
	/* a peer no process holds any more (closed: orphaned, or a time-wait
	 * mini socket, whose uid reads 0) is nobody's, and not root's */
	if (!m->idiag_inode)
		return -ENOENT;
	*uid = m->idiag_uid;
	return 0;
}

#define CLIENT_UID (1ull << 63)

/* A client: a local peer's uid (bit 63 set), else a hash of the peer's
 * address without its port (bit 63 clear).  Every local user shares
 * 127.0.0.1, so on loopback only the uid tells them apart. */
static uint64_t client_key(struct httpd *h, int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	const unsigned char *b;
	uint64_t x = 14695981039346656037ull;
	uint32_t uid = 0;
	size_t i, n;

	if (getsockname(fd, (struct sockaddr *)&local, &ll) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl))
		return 0;
	unmap(&local);
	unmap(&peer);
	if (h->diag_fd >= 0 && peer.ss_family == local.ss_family &&
	    !peer_uid(h->diag_fd, &local, &peer, &uid))
		return CLIENT_UID | uid;
	if (peer.ss_family == AF_INET) {
		b = (const void *)&((struct sockaddr_in *)&peer)->sin_addr;
		n = 4;
	} else if (peer.ss_family == AF_INET6) {
		b = (const void *)&((struct sockaddr_in6 *)&peer)->sin6_addr;
		n = 16;
	} else {
		return 0;
	}
	for (i = 0; i < n; i++)
		x = (x ^ b[i]) * 1099511628211ull;
	return (x ^ peer.ss_family) & ~CLIENT_UID;
}

/* a local peer of uid 0 */
static bool client_root(uint64_t client)
{
	return client == CLIENT_UID;
}

static void shut(struct conn *k)
{
	shutdown(k->fd, SHUT_RDWR);
	k->deadline_ms = INT64_MAX;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *info;
	struct httpd *h = cls;
	struct conn *k, *free_slot = NULL;
	unsigned int same = 0;
	uint64_t client;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		k = *socket_context;
		if (k)
			k->c = NULL;
		return;
	}
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!info)
		return;
	client = client_key(h, info->connect_fd);
	for (k = h->conns; k < h->conns + HTTPD_SLOTS; k++) {
		if (!k->c) {
			if (!free_slot)
				free_slot = k;
		} else if (k->client == client && k->deadline_ms != INT64_MAX) {
			same++;
		}
	}
	if (!free_slot) {
		shutdown(info->connect_fd, SHUT_RDWR);
		h->st.client_limit++;
		return;
	}
	k = free_slot;
	*k = (struct conn){ .c = c, .fd = info->connect_fd, .client = client,
			    .deadline_ms = now_ms() + HTTPD_REQUEST_S * 1000 };
	*socket_context = k;
	if (same >= HTTPD_CLIENT_CONNS) {
		shut(k);
		h->st.client_limit++;
	}
}

/* A request is answered: the next on this connection has its own time. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *info;
	struct conn *k;

	(void)cls;
	(void)con_cls;
	(void)toe;
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	k = info ? info->socket_context : NULL;
	if (k && k->deadline_ms != INT64_MAX)
		k->deadline_ms = now_ms() + HTTPD_REQUEST_S * 1000;
}

static void expire(struct httpd *h)
{
	int64_t now = now_ms();
	struct conn *k;

	for (k = h->conns; k < h->conns + HTTPD_SLOTS; k++) {
		if (k->c && k->deadline_ms <= now) {
			shut(k);
			h->st.deadline++;
		}
	}
}

/* ---- Host: (DNS rebinding) ---- */

static bool port_ok(const char *p)
{
	size_t n = 0;

	if (!*p)
		return true;
	if (*p++ != ':')
		return false;
	while (isdigit((unsigned char)p[n]))
		n++;
	return n >= 1 && n <= 5 && !p[n];
}

/* Host: an IP literal, localhost, or, when listening beyond loopback, this
 * machine's nodename alone or followed by its domain.  A page elsewhere
 * that rebinds its own name to this address sends its own name. */
static bool host_ok(const struct httpd *h, const char *host)
{
	char name[256], buf[sizeof(struct in6_addr)];
	const char *end;
	size_t n, nl;

	if (!host)	/* HTTP/1.0 (MHD refuses a 1.1 request without one) */
		return true;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end || (size_t)(end - host - 1) >= sizeof(name))
			return false;
		n = (size_t)(end - host - 1);
		memcpy(name, host + 1, n);
		name[n] = 0;
		return inet_pton(AF_INET6, name, buf) == 1 && port_ok(end + 1);
	}
	end = strchr(host, ':');
	n = end ? (size_t)(end - host) : strlen(host);
	if (n >= sizeof(name) || !port_ok(host + n))
		return false;
	memcpy(name, host, n);
	name[n] = 0;
	if (n && name[n - 1] == '.')
		name[--n] = 0;
	if (inet_pton(AF_INET, name, buf) == 1 || !strcasecmp(name, "localhost"))
		return true;
	if (h->loopback || !h->node[0])
		return false;
	/* its short name, alone or under any domain: a target written as
	 * gpu-7.cluster.internal reaches a host whose nodename is gpu-7 */
	nl = strcspn(h->node, ".");
	return !strcasecmp(name, h->node) ||
	       (n >= nl && !strncasecmp(name, h->node, nl) && (!name[nl] || name[nl] == '.'));
}

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

/* ---- basic auth (--web-config) ---- */

/* May this client have a bcrypt check now?  One a second each (a check
 * is tens of ms of the one loop); the oldest client's turn is forgotten
 * first. */
static bool may_check(struct httpd *h, uint64_t client)
{
	int64_t now = now_ms();
	unsigned int i, old = 0;

	for (i = 0; i < HTTPD_SLOTS; i++) {
		if (h->checked[i].ms && h->checked[i].client == client) {
			if (now - h->checked[i].ms < HTTPD_CHECK_GAP_MS)
				return false;
			h->checked[i].ms = now;
			return true;
		}
		if (h->checked[i].ms < h->checked[old].ms)
			old = i;
	}
	h->checked[old].client = client;
	h->checked[old].ms = now;
	return true;
}

enum auth { AUTH_OK, AUTH_NO, AUTH_LATER };

static enum auth authenticate(struct httpd *h, struct MHD_Connection *c, const struct conn *k)
{
	char *pass = NULL, *user = MHD_basic_auth_get_username_password(c, &pass);
	enum auth a;

	if (!user || !pass)
		a = AUTH_NO;
	else if (webconfig_cached(h->wc, user, pass))
		a = AUTH_OK;
	else if (!may_check(h, k ? k->client : 0))
		a = AUTH_LATER;
	else
		a = webconfig_verify(h->wc, user, pass) ? AUTH_OK : AUTH_NO;
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return a;
}

static enum MHD_Result unauthorized(struct MHD_Connection *c)
{
	static const char msg[] = "cachescoped: user name and password wanted (--web-config)\n";
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_basic_auth_fail_response(c, "cachescoped", r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	const union MHD_ConnectionInfo *info;
	struct httpd *h = cls;
	const struct conn *k;
	char *body = NULL;
	size_t len = 0;
	bool detail;

	(void)version;
	(void)upload;
	(void)con_cls;
	*upload_len = 0;	/* a body is not read */
	if (!host_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
		h->st.bad_host++;
		body = text("Host: must be an address, localhost or this machine\n", &len);
		return reply(c, MHD_HTTP_MISDIRECTED_REQUEST, body, len);
	}
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	k = info ? info->socket_context : NULL;
	/* the kernel shows /proc/slabinfo to root only: so does this, unless
	 * --web-config names who else may see it (and then asks everyone) */
	detail = k && client_root(k->client);
	if (webconfig_users(h->wc)) {
		switch (authenticate(h, c, k)) {
		case AUTH_OK:
			detail = true;
			break;
		case AUTH_LATER:
			h->st.auth_rate++;
			body = text("a password was checked for this client less than a second ago\n", &len);
			return reply(c, MHD_HTTP_TOO_MANY_REQUESTS, body, len);
		case AUTH_NO:
			h->st.auth_failed++;
			return unauthorized(c);
		}
	}
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
	if (h->fn(h->ctx, detail, &body, &len)) {
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

	expire(h);
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

static bool is_loopback(const struct sockaddr *a)
{
	const struct sockaddr_in6 *s6 = (const void *)a;

	if (a->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	return a->sa_family == AF_INET6 &&
	       (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
		(IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && s6->sin6_addr.s6_addr[12] == 127));
}

struct httpd *httpd_start(struct loop *l, const struct sockaddr *addr, socklen_t len,
			  struct webconfig *wc, httpd_render_fn fn, void *ctx, int *err)
{
	unsigned int flags = MHD_USE_EPOLL | (addr->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	const char *cert = webconfig_cert(wc), *key = webconfig_key(wc);
	const union MHD_DaemonInfo *info;
	struct httpd *h = calloc(1, sizeof(*h));
	struct utsname un;

	(void)len;
	*err = -ENOMEM;
	if (!h)
		return NULL;
	h->loop = l;
	h->fn = fn;
	h->ctx = ctx;
	h->wc = wc;
	h->mhd_fd = h->tfd = -1;
	/* no privilege needed (any user's `ss` asks the same); without it,
	 * local users are told apart by address only, as remote ones */
	h->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	h->loopback = is_loopback(addr);
	if (!uname(&un))
		snprintf(h->node, sizeof(h->node), "%s", un.nodename);
	if (cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			*err = -EPROTONOSUPPORT;
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	errno = 0;
	/* the key and certificate only with MHD_USE_TLS (MHD refuses them
	 * otherwise): an array, ended early without TLS */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert },
		{ MHD_OPTION_END, 0, NULL },
	};
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				  MHD_OPTION_ARRAY, cert ? tls : tls + 2,
				  MHD_OPTION_SOCK_ADDR, addr,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTPD_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTPD_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
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
	if (h->diag_fd >= 0)
		close(h->diag_fd);
	free(h);
}
