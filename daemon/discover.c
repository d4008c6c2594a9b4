// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the daemon runs or hands to other processes, found and checked
 * before it does: the CUPTI library it watches (and kvref loads), kvref
 * and its CUDA backend.  Each is trusted only if root's alone
 * (privs_check_file), and what kvref gets is opened as root for the user
 * it runs as (spawn_open): nothing is left for that user to reach by a
 * path.  Every failure is logged here, one line naming the file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discover.h"
#include "log.h"
#include "paths.h"
#include "privs.h"

int discover_check_trusted(const char *path, const char *what)
{
	const char *why = NULL;
	int err = privs_check_file(path, &why);

	if (err == -EPERM)
		log_err("refusing to %s %s: %s (it must be root's and writable by root alone)",
			what, path, why);
	else if (err)
		log_err("cannot check %s: %s", path, strerror(-err));
	return err;
}

int discover_gpu_lib(const struct env *env, char *path, size_t n)
{
	int err;

	path[0] = '\0';
	if (env->no_gpu)
		return 0;
	if (env->gpu_lib) {
		/* absolute: it is also handed to kvref as CUDA_INJECTION64_PATH */
		if (!realpath(env->gpu_lib, path) || access(path, R_OK)) {
			err = -errno;
			log_err("cannot watch --gpu-lib %s: %s", env->gpu_lib, strerror(errno));
			path[0] = '\0';
			return err;
		}
	} else if (paths_find_mine("libcachescope_cupti.so", path, n) || access(path, R_OK)) {
		path[0] = '\0';
		return 0;
	}
	/* kvref loads it as root, and so may any process told to */
	err = discover_check_trusted(path, "load");
	if (err)
		path[0] = '\0';
	return err;
}


/* The CUDA backend kvref is to load: --workload-cuda-lib, or kvref_cuda.so
 * in kvref's own directory. */
static int find_backend(const struct env *env, const char *kvref, char *out, size_t n)
{
	const char *slash = strrchr(kvref, '/');

	if (env->workload_cuda_lib) {
		if (!realpath(env->workload_cuda_lib, out)) {
			log_err("cannot use --workload-cuda-lib %s: %s", env->workload_cuda_lib,
				strerror(errno));
			return -errno;
		}
		return 0;
	}
	if ((size_t)snprintf(out, n, "%.*s/kvref_cuda.so", (int)(slash - kvref), kvref) >= n)
		return -ENAMETOOLONG;
	if (access(out, F_OK)) {
		log_err("--workload-backend cuda needs %s: %s (built by make where nvcc exists)", out,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Open what kvref runs from, as root, for the user it runs as (spawn.h):
 * nothing is left for that user to reach by a path. */
static int open_workload_files(const struct env *env, const char *gpu_lib, const char *kvref,
			       const struct spawn_user *u, struct wl_files *f)
{
	char lib[PATH_MAX], why[512];
	const char *what;
	int err;

	err = spawn_open(&f->exe, kvref, u, X_OK, why, sizeof(why));
	if (err == -EPERM)
		log_err("refusing to run %s: %s", kvref, why);
	else if (err)
		log_err("cannot run %s as %s: %s", kvref, u->name, why);
	if (err)
		return err;
	if (!env->workload_backend || strcmp(env->workload_backend, "cuda"))
		return 0;
	if (!gpu_lib[0]) {
		log_err("--workload-backend cuda needs the CUPTI library: build it (make, with the CUDA toolkit) or name it with --gpu-lib");
		return -ENOENT;
	}
	err = find_backend(env, kvref, lib, sizeof(lib));
	if (err)
		return err;
	what = lib;
	err = spawn_open(&f->backend, lib, u, R_OK, why, sizeof(why));
	if (!err) {
		what = gpu_lib;
		err = spawn_open(&f->inject, gpu_lib, u, R_OK, why, sizeof(why));
	}
	if (err == -EPERM)
		log_err("refusing to hand %s to kvref: %s", what, why);
	else if (err)
		log_err("cannot hand %s to kvref as %s: %s", what, u->name, why);
	return err;
}

int discover_workload(const struct env *env, const char *gpu_lib, char *path,
		      struct spawn_user *user, struct wl_files *f)
{
	char found[4200];
	int err;

	err = paths_find_mine("kvref", found, sizeof(found));
	if (err == -ENOENT) {
		log_err("cannot run the workload: no kvref beside cachescoped (%s) nor in %s from there (build it with make)",
			found, paths_pkglib_rel());
		return err;
	}
	if (err) {
		log_err("cannot find kvref: %s", strerror(-err));
		return err;
	}
	if (!realpath(found, path)) {
		log_err("cannot run the workload: %s: %s (build it with make)", found, strerror(errno));
		return -errno;
	}
	/* the lock directory under the runtime directory (the unit's
	 * RuntimeDirectory=); where it cannot be made the lease is unlocked */
	if (mkdir(WL_RUNDIR, 0755) && errno != EEXIST)
		log_debug("cannot make %s: %s", WL_RUNDIR, strerror(errno));
	err = spawn_user_own(user, WL_UID_LOCKDIR, SPAWN_UID_MIN, SPAWN_UID_MAX);
	if (err) {
		log_err("cannot start %s: every uid of %u-%u is taken, none left for it to run as (it does not run as root)",
			path, SPAWN_UID_MIN, SPAWN_UID_MAX);
		return err;
	}
	err = open_workload_files(env, gpu_lib, path, user, f);
	if (err) {
		wl_files_close(f);
		spawn_user_release(user);
	}
	return err;
}
