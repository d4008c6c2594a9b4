/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control socket: a Unix stream socket where the cachescope CLI sends
 * one command line and reads the answer until the daemon closes.  Clients
 * are sources of the daemon's event loop, never served to completion
 * inside it: a slow or silent client cannot hold up ingest.
 */
#ifndef CS_CONTROL_H
#define CS_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "loop.h"
#include "proto.h"

typedef void (*control_cmd_fn)(const char *cmd, FILE *out, void *ctx);

#define CONTROL_MAX_REQUEST PROTO_MAX_REQUEST
#define CONTROL_MAX_CLIENTS 16
#define CONTROL_REQUEST_MS 2000		/* from accept to the whole request */
#define CONTROL_REPLY_MS 10000		/* from the request to the whole reply read */
/* bytes of a reply: a longer one is cut and ends "error: reply truncated".
 * The daemon raises it to hold a whole export (--export-mb); each reply
 * lives in memory only while its client reads it. */
#define CONTROL_MAX_REPLY (32u << 20)

struct control_limits {
	size_t max_request;
	int max_clients;
	long request_ms, reply_ms;
	size_t max_reply;
	uid_t allow_uid;		/* besides root, who may ask: root's own 0 by default */
};

struct control_stats {
	uint64_t served;		/* replies written whole */
	uint64_t timeouts;		/* clients dropped: too slow to ask or to read */
	uint64_t denied;		/* peers that are not allowed (SO_PEERCRED) */
	uint64_t busy;			/* refused: CONTROL_MAX_CLIENTS connected */
	uint64_t too_long;		/* requests over max_request */
};

/* One client's state; embedded in the server, exposed for the unit tests. */
enum control_phase { CTL_READING, CTL_WRITING, CTL_DONE };

struct control_client {
	int fd;
	enum control_phase phase;
	char in[CONTROL_MAX_REQUEST + 1];
	size_t in_len;
	char *out;			/* the whole reply, written as the socket takes it */
	size_t out_len, out_off;
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC */
};

struct control;

void control_limits_default(struct control_limits *lim);

/* Whether path can be listened on: 0 when nothing is there or a stale
 * socket (nothing answers), -EADDRINUSE when a daemon answers, -EEXIST
 * when something that is not a socket is there (it is never removed),
 * or another -errno. */
int control_check(const char *path);
/* Listen on path (mode 0600) after control_check.  A stale socket is
 * replaced.  Returns the listening (non-blocking) fd or -errno. */
int control_listen(const char *path);
/* Serve lfd from loop l: the listening socket and a deadline timer become
 * sources of l; each request is answered through fn.  NULL on failure
 * (errno set). */
struct control *control_new(struct loop *l, int lfd, const struct control_limits *lim,
			    control_cmd_fn fn, void *ctx);
/* Drop every client and leave the loop; lfd stays open. */
void control_free(struct control *c);
void control_get_stats(const struct control *c, struct control_stats *st);
void control_close(int lfd, const char *path);

/* Per-client buffering (used by the server; exported for the unit tests). */
/* Take n bytes of request: 1 when the request is whole (a newline, or eof
 * with n == 0 after some bytes), 0 when more is needed, -E2BIG when it is
 * longer than max bytes.  On 1 c->in holds the command, without the
 * line end. */
int control_client_feed(struct control_client *c, const char *buf, size_t n, bool eof,
			size_t max);
/* Write what the socket accepts of the reply: 1 when all is written, 0
 * when the socket is full (wait for EPOLLOUT), or -errno. */
int control_client_flush(struct control_client *c);

#endif
