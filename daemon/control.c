// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control socket.  Every client is a non-blocking source of the
 * daemon's event loop with its own input and output buffers: its request is
 * read as it arrives, its whole reply is made at once into memory and then
 * written as the socket accepts it.  Limits keep any client from holding
 * the daemon: the request's size, the number of clients, and two deadlines
 * (to ask, and to read the answer), checked by a timer of our own.  Only
 * root (or limits.allow_uid) may ask: the peer is checked with SO_PEERCRED,
 * whatever the socket file's mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>
#include "clock.h"
#include "control.h"

static int fill_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int control_check(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int probe, err;

	err = fill_addr(path, &sa);
	if (err)
		return err;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	err = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) ? 0 : -EADDRINUSE;
	close(probe);
	return err;
}

/* the inode of the socket we bound: only that one is removed at exit */
static ino_t bound_ino;

int control_listen(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd, err;

	err = control_check(path);
	if (err)
		return err;
	err = fill_addr(path, &sa);
	if (err)
		return err;
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
		unlink(path);	/* stale: nothing answered */

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (err || listen(fd, 16)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!stat(path, &st))
		bound_ino = st.st_ino;
	return fd;
}


struct control {
	struct loop *loop;
	int lfd, tfd;
	struct control_limits lim;
	control_cmd_fn fn;
	void *ctx;
	struct control_client **clients;	/* lim.max_clients slots */
	int nclients;
	struct control_stats st;
};

void control_limits_default(struct control_limits *lim)
{
	lim->max_request = CONTROL_MAX_REQUEST;
	lim->max_clients = CONTROL_MAX_CLIENTS;
	lim->request_ms = CONTROL_REQUEST_MS;
	lim->reply_ms = CONTROL_REPLY_MS;
	lim->max_reply = CONTROL_MAX_REPLY;
	lim->allow_uid = 0;
}

int control_client_feed(struct control_client *c, const char *buf, size_t n, bool eof,
			size_t max)
{
	size_t room = sizeof(c->in) - 1 - c->in_len, take = n < room ? n : room;
	char *nl;

	if (max > sizeof(c->in) - 1)
		max = sizeof(c->in) - 1;
	memcpy(c->in + c->in_len, buf, take);
	c->in_len += take;
	c->in[c->in_len] = '\0';
	nl = memchr(c->in, '\n', c->in_len);
	if (nl && (size_t)(nl - c->in) + 1 <= max) {
		*nl = '\0';
		c->in[strcspn(c->in, "\r")] = '\0';
		return 1;
	}
	if (nl || c->in_len > max || take < n)
		return -E2BIG;
	if (eof && c->in_len)
		return 1;
	return 0;
}

int control_client_flush(struct control_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		}
		c->out_off += n;
	}
	return 1;
}

static void arm_timer(struct control *c)
{
	/* ticks only while someone is connected */
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (c->nclients)
		its.it_interval.tv_nsec = its.it_value.tv_nsec = 100000000;
	timerfd_settime(c->tfd, 0, &its, NULL);
}

static void drop_client(struct control *c, int slot)
{
	struct control_client *cl = c->clients[slot];

	loop_del(c->loop, cl->fd);
	close(cl->fd);
	free(cl->out);
	free(cl);
	c->clients[slot] = NULL;
	if (!--c->nclients)
		arm_timer(c);
}

static int slot_of(const struct control *c, int fd)
{
	int i;

	for (i = 0; i < c->lim.max_clients; i++)
		if (c->clients[i] && c->clients[i]->fd == fd)
			return i;
	return -1;
}

/* Answer the request in cl->in: the whole reply into memory, then out. */
static void answer(struct control *c, struct control_client *cl, const char *text)
{
	size_t len = 0;
	FILE *out;

	free(cl->out);
	cl->out = NULL;
	out = open_memstream(&cl->out, &len);
	if (out) {
		if (text)
			fputs(text, out);
		else
			c->fn(cl->in, out, c->ctx);
		fclose(out);
	}
	cl->out_len = cl->out ? len : 0;
	if (cl->out_len > c->lim.max_reply) {
		static const char cut[] = "\nerror: reply truncated\n";

		memcpy(cl->out + c->lim.max_reply - (sizeof(cut) - 1), cut, sizeof(cut) - 1);
		cl->out_len = c->lim.max_reply;
	}
	cl->out_off = 0;
	cl->phase = CTL_WRITING;
	cl->deadline_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)c->lim.reply_ms * 1000000ull;
}

/* Write what fits; done (or failed): close.  Returns whether it is gone. */
static bool push(struct control *c, int slot)
{
	struct control_client *cl = c->clients[slot];
	int r = control_client_flush(cl);

	if (r == 0) {
		loop_mod(c->loop, cl->fd, EPOLLOUT);
		return false;
	}
	if (r == 1 && cl->phase == CTL_WRITING)
		c->st.served++;
	drop_client(c, slot);
	return true;
}

static void on_client(int fd, uint32_t events, void *data)
{
	struct control *c = data;
	int slot = slot_of(c, fd), r = 0;
	struct control_client *cl;
	char buf[512];
	ssize_t n;

	if (slot < 0)
		return;
	cl = c->clients[slot];
	if (cl->phase == CTL_WRITING) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			push(c, slot);
		return;
	}
	while (cl->phase == CTL_READING) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 || (n == 0 && !cl->in_len)) {
			drop_client(c, slot);	/* gone, or a probe that asked nothing */
			return;
		}
		r = control_client_feed(cl, buf, n, n == 0, c->lim.max_request);
		if (r == -E2BIG) {
			char msg[64];

			c->st.too_long++;
			snprintf(msg, sizeof(msg), "error: request too long (at most %zu bytes)\n",
				 c->lim.max_request);
			answer(c, cl, msg);
			cl->phase = CTL_DONE;	/* an error, not a reply */
			shutdown(fd, SHUT_RD);
		} else if (r == 1) {
			answer(c, cl, NULL);
		} else if (n == 0) {
			drop_client(c, slot);
			return;
		}
	}
	push(c, slot);
}

/* Best effort, on a socket we close next: the line fits any empty buffer. */
static void refuse(int fd, const char *msg)
{
	ssize_t n = send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);

	(void)n;
	close(fd);
}

static bool peer_allowed(const struct control *c, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof(cr))
		return false;
	return cr.uid == 0 || cr.uid == c->lim.allow_uid;
}

static void on_accept(int lfd, uint32_t events, void *data)
{
	struct control *c = data;
	struct control_client *cl;
	int fd, slot;

	(void)events;
	/* a few at a time: the rest on the next turn of the loop */
	for (int k = 0; k < 8; k++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (!peer_allowed(c, fd)) {
			c->st.denied++;
			refuse(fd, "permission denied\n");
			continue;
		}
		for (slot = 0; slot < c->lim.max_clients && c->clients[slot]; slot++)
			;
		if (slot == c->lim.max_clients) {
			c->st.busy++;
			refuse(fd, "error: too many clients, try again\n");
			continue;
		}
		cl = calloc(1, sizeof(*cl));
		if (!cl || loop_add(c->loop, fd, EPOLLIN, on_client, c)) {
			free(cl);
			close(fd);
			continue;
		}
		cl->fd = fd;
		cl->phase = CTL_READING;
		cl->deadline_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)c->lim.request_ms * 1000000ull;
		c->clients[slot] = cl;
		if (!c->nclients++)
			arm_timer(c);
	}
}

static void on_timer(int tfd, uint32_t events, void *data)
{
	struct control *c = data;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), exp;
	int i;

	(void)events;
	if (read(tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		return;
	for (i = 0; i < c->lim.max_clients; i++) {
		if (c->clients[i] && now >= c->clients[i]->deadline_ns) {
			c->st.timeouts++;
			drop_client(c, i);
		}
	}
}

struct control *control_new(struct loop *l, int lfd, const struct control_limits *lim,
			    control_cmd_fn fn, void *ctx)
{
	struct control *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	if (!c)
		goto fail;
	c->loop = l;
	c->lfd = lfd;
	c->tfd = -1;
	c->fn = fn;
	c->ctx = ctx;
	if (lim)
		c->lim = *lim;
	else
		control_limits_default(&c->lim);
	if (c->lim.max_clients < 1)
		c->lim.max_clients = 1;
	if (c->lim.max_request < 1 || c->lim.max_request > CONTROL_MAX_REQUEST)
		c->lim.max_request = CONTROL_MAX_REQUEST;
	if (c->lim.max_reply < 64)
		c->lim.max_reply = 64;
	c->clients = calloc(c->lim.max_clients, sizeof(*c->clients));
	if (!c->clients)
		goto fail;
	c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->tfd < 0) {
		err = -errno;
		goto fail;
	}
	err = loop_add(l, lfd, EPOLLIN, on_accept, c);
	if (!err) {
		err = loop_add(l, c->tfd, EPOLLIN, on_timer, c);
		if (err)
			loop_del(l, lfd);
	}
	if (!err)
		return c;
fail:
	if (c) {
		if (c->tfd >= 0)
			close(c->tfd);
		free(c->clients);
		free(c);
	}
	errno = -err;
	return NULL;
}

void control_free(struct control *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->lim.max_clients; i++)
		if (c->clients[i])
			drop_client(c, i);
	loop_del(c->loop, c->lfd);
	loop_del(c->loop, c->tfd);
	close(c->tfd);
	free(c->clients);
	free(c);
}

void control_get_stats(const struct control *c, struct control_stats *st)
{
	if (c)
		*st = c->st;
	else
		memset(st, 0, sizeof(*st));
}

void control_close(int lfd, const char *path)
{
	struct stat st;

	if (lfd < 0)
		return;
	close(lfd);
	/* not a socket someone else made there since */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_ino == bound_ino)
		unlink(path);
}
