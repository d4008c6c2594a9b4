/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control socket: a Unix stream socket where the cachescope CLI sends
 * one command line and reads the answer until the daemon closes.
 */
#ifndef CS_CONTROL_H
#define CS_CONTROL_H

#include <stdio.h>

typedef void (*control_cmd_fn)(const char *cmd, FILE *out, void *ctx);

/* Whether path can be listened on: 0 when nothing is there or a stale
 * socket (nothing answers), -EADDRINUSE when a daemon answers, -EEXIST
 * when something that is not a socket is there (it is never removed),
 * or another -errno. */
int control_check(const char *path);
/* Listen on path (mode 0600) after control_check.  A stale socket is
 * replaced.  Returns the listening fd or -errno. */
int control_listen(const char *path);
/* Accept one client, read its command, answer through fn, close. */
void control_serve(int lfd, control_cmd_fn fn, void *ctx);
void control_close(int lfd, const char *path);

#endif
