// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leakclose.so: make a real server forget a share of its sockets.
 *
 *   LEAKCLOSE_EVERY=N LD_PRELOAD=.../leakclose.so nginx ...
 *
 * Every Nth close() of a connected TCP socket does not close it: the fd,
 * its file, socket inode and TCP socket stay allocated for as long as the
 * process runs, as in a server that loses track of a connection on one of
 * its paths.  Everything else closes as usual.  LEAKCLOSE_EVERY unset or
 * not a positive number: nothing leaks.  For the calibration corpus
 * (bench/corpus.py): a leak induced inside software nobody here wrote.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int (*real_close)(int);
static long every = -1;		/* -1: not read yet; 0: no leak */
static atomic_long seen;

static long leak_every(void)
{
	const char *s;
	char *end;
	long n;

	if (every >= 0)
		return every;
	s = getenv("LEAKCLOSE_EVERY");
	n = s ? strtol(s, &end, 10) : 0;
	every = s && *s && !*end && n > 0 ? n : 0;
	return every;
}

/* A stream socket that is not listening: a connection a server serves. */
static int is_connection(int fd)
{
	int type, listening;
	socklen_t len = sizeof(type);
	struct stat st;

	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
		return 0;
	len = sizeof(listening);
	return !getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) && !listening;
}

int close(int fd)
{
	int saved = errno;
	long n = leak_every();

	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (n && is_connection(fd) && (atomic_fetch_add(&seen, 1) + 1) % n == 0) {
		errno = saved;
		return 0;	/* forgotten: the socket stays open */
	}
	errno = saved;
	return real_close(fd);
}
