/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's one event loop, over epoll.  Each source registers its own
 * handler and data (as redis's aeCreateFileEvent and sd-event do): the
 * loop finds them through epoll_event.data.ptr and calls the handler, so a
 * new source is one loop_add.
 */
#ifndef CS_LOOP_H
#define CS_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
/* events: the EPOLL* bits that fired */
typedef void (*loop_fn)(int fd, uint32_t events, void *data);

struct loop_source {
	int fd;
	loop_fn fn;		/* NULL once removed */
	void *data;
	struct loop_source *next_dead;
};

struct loop {
	int epfd;
	struct loop_source **by_fd;	/* the source of each fd, or NULL */
	int nfd;
	struct loop_source *dead;	/* removed while dispatching: freed after */
	bool stop;
};

/* Returns 0 or -errno (epoll_create1). */
int loop_init(struct loop *l);
/* Stop watching every source (their fds stay open) and close epoll. */
void loop_release(struct loop *l);
/* Watch fd for events, calling fn(fd, events, data).  -EEXIST if fd is
 * watched already, -ENOMEM, or epoll_ctl's -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *data);
/* Change the events watched on fd: 0, -ENOENT or -errno. */
int loop_mod(struct loop *l, int fd, uint32_t events);
/* Stop watching fd (before closing it); safe from inside a handler, also
 * its own.  Unknown fds are ignored. */
void loop_del(struct loop *l, int fd);
/* Wait up to timeout_ms (-1: forever) and run the handlers of what fired.
 * Returns how many fired, 0 on EINTR or timeout, or -errno. */
int loop_run_once(struct loop *l, int timeout_ms);

#endif
