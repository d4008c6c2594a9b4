// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The event loop.  A source is a small heap object {fd, handler, data}
 * that epoll hands back in data.ptr.  A handler may remove sources (a
 * client it closes, another it drops) while later events of the same
 * epoll_wait batch still point at them, so removed sources are only marked
 * (fn = NULL) and freed once the batch is done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "loop.h"

#define LOOP_BATCH 32

int loop_init(struct loop *l)
{
	memset(l, 0, sizeof(*l));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

static void free_dead(struct loop *l)
{
	while (l->dead) {
		struct loop_source *s = l->dead;

		l->dead = s->next_dead;
		free(s);
	}
}

void loop_release(struct loop *l)
{
	int fd;

	for (fd = 0; fd < l->nfd; fd++)
		free(l->by_fd[fd]);
	free(l->by_fd);
	free_dead(l);
	if (l->epfd >= 0)
		close(l->epfd);
	memset(l, 0, sizeof(*l));
	l->epfd = -1;
}

static int grow(struct loop *l, int fd)
{
	struct loop_source **n;
	int cap = l->nfd ? l->nfd : 16;

	while (cap <= fd)
		cap *= 2;
	if (cap == l->nfd)
		return 0;
	n = realloc(l->by_fd, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + l->nfd, 0, (cap - l->nfd) * sizeof(*n));
	l->by_fd = n;
	l->nfd = cap;
	return 0;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *data)
{
	struct epoll_event ev = { .events = events };
	struct loop_source *s;
	int err;

	if (fd < 0)
		return -EBADF;
	err = grow(l, fd);
	if (err)
		return err;
	if (l->by_fd[fd])
		return -EEXIST;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->fn = fn;
	s->data = data;
	ev.data.ptr = s;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		err = -errno;
		free(s);
		return err;
	}
	l->by_fd[fd] = s;
	return 0;
}

int loop_mod(struct loop *l, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events };

	if (fd < 0 || fd >= l->nfd || !l->by_fd[fd])
		return -ENOENT;
	ev.data.ptr = l->by_fd[fd];
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

void loop_del(struct loop *l, int fd)
{
	struct loop_source *s;

	if (fd < 0 || fd >= l->nfd || !l->by_fd[fd])
		return;
	s = l->by_fd[fd];
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	l->by_fd[fd] = NULL;
	s->fn = NULL;
	s->next_dead = l->dead;
	l->dead = s;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event evs[LOOP_BATCH];
	int n, i;

	n = epoll_wait(l->epfd, evs, LOOP_BATCH, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct loop_source *s = evs[i].data.ptr;

		if (s->fn)
			s->fn(s->fd, evs[i].events, s->data);
	}
	free_dead(l);
	return n;
}
