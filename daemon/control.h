/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control socket: a Unix stream socket where the cachescope CLI sends
 * one command line and reads the answer until the daemon closes.
 */
#ifndef CS_CONTROL_H
#define CS_CONTROL_H

#include <stdio.h>

typedef void (*control_cmd_fn)(const char *cmd, FILE *out, void *ctx);

/* Listen on path (mode 0600).  A stale socket is replaced; a live one is an
 * error (-EADDRINUSE).  Returns the listening fd or -errno. */
int control_listen(const char *path);
/* Accept one client, read its command, answer through fn, close. */
void control_serve(int lfd, control_cmd_fn fn, void *ctx);
void control_close(int lfd, const char *path);

#endif
