/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files the daemon runs or hands to other processes: found, checked
 * (root's and writable by root alone) and, for kvref, opened for the user
 * it runs as.  Each function logs its failure (one line naming the file
 * and why) and returns -errno; -EPERM: the file is not to be trusted.
 */
#ifndef CS_DISCOVER_H
#define CS_DISCOVER_H

#include <stddef.h>
#include "args.h"
#include "spawn.h"
#include "workload.h"

/* path root runs or hands on must be root's alone; what: "load", "run" */
int discover_check_trusted(const char *path, const char *what);
/* The CUPTI library to watch: --gpu-lib, or the one beside cachescoped
 * (or in its package library directory); path "" for none (--gpu-lib
 * none, or none found: 0).  n at least PATH_MAX. */
int discover_gpu_lib(const struct env *env, char *path, size_t n);
/* kvref (path, PATH_MAX), the user it runs as, and its files opened as
 * that user may use them (f: its executable; with --workload-backend
 * cuda its backend and gpu_lib, which must be watched).  On failure f is
 * closed. */
int discover_workload(const struct env *env, const char *gpu_lib, char *path,
		      struct spawn_user *user, struct wl_files *f);

#endif
