/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Running a program as another user from files root opened.  The
 * executable and each library the program is to load are opened while we
 * are root, checked as opened (privs.h), and handed over by descriptor:
 * the child runs the executable with fexecve(3) and finds each library at
 * /proc/self/fd/N.  The user needs no path to them, only the files' own
 * mode bits (a checkout in a 0700 home directory works), and what was
 * checked is what runs.
 */
#ifndef CS_SPAWN_H
#define CS_SPAWN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct spawn_user {
	uid_t uid;
	gid_t gid;
	bool drop;			/* change to uid/gid, no supplementary groups */
	char name[64];			/* for messages: "nobody", or "uid 1000" */
	int lock_fd;			/* spawn_user_own's lease, or -1 */
};

/* The range of spawn_user_own's uids: systemd's for DynamicUser= units
 * (systemd's UIDS-GIDS.md), which no distribution gives to accounts. */
#define SPAWN_UID_MIN 61184u
#define SPAWN_UID_MAX 65519u

/*
 * A user of the child's own, as systemd's DynamicUser= leases one: a uid,
 * and a gid of the same number, in [min, max] (SPAWN_UID_MIN/MAX) that no
 * account or group names, that systemd has not leased
 * (/run/systemd/dynamic-uid/N), that no process on the host runs as (any
 * of its real, effective, saved or file-system ids), and that no other
 * daemon holds: a lock on lockdir/N (the directory made 0700 if missing),
 * kept in u->lock_fd until spawn_user_release().  So no other process may
 * signal, trace or share files with the child through a uid of its own.
 * A lockdir that cannot be made leaves the lease unlocked (lock_fd -1;
 * the process scan still stands).  When we are not root: ourselves, as
 * spawn_user_get().  0; -EAGAIN when every uid of the range is taken,
 * -EINVAL for an empty range or one holding root's.
 */
int spawn_user_own(struct spawn_user *u, const char *lockdir, uid_t min, uid_t max);
/* End u's lease (its lock); a user with none: nothing. */
void spawn_user_release(struct spawn_user *u);

/* A file opened for a child: the descriptor is close-on-exec here and
 * kept open across the child's exec when it is passed. */
struct spawn_file {
	int fd;				/* -1: none */
	char path[PATH_MAX];		/* the name it was opened by */
	char fdpath[32];		/* /proc/self/fd/N: its name in the child */
};

/* Whom a child runs as: name (looked up now, before any fork) when we are
 * root, else ourselves.  0; -ENOENT when name does not exist or is root. */
int spawn_user_get(struct spawn_user *u, const char *name);

/* Open path for u to run (X_OK) or to load (R_OK).  The file opened must
 * pass privs_check_opened(); then its mode bits must let u, without
 * supplementary groups, do mode.  Returns 0 with f filled; -EPERM when
 * root may not trust it, -EACCES when u may not use it, -errno when it
 * cannot be opened; then why holds the reason in a few words and f->fd
 * is -1. */
int spawn_open(struct spawn_file *f, const char *path, const struct spawn_user *u, int mode,
	       char *why, size_t n);
/* Close f; on a closed or never-opened f (fd -1) it does nothing. */
void spawn_close(struct spawn_file *f);

struct spawn_req {
	const struct spawn_file *exe;	/* an ELF executable (fexecve of a
					 * close-on-exec fd cannot run a script) */
	char *const *argv;
	char *const *envp;		/* the child's whole environment */
	const struct spawn_file *const *pass;	/* kept open in the child; NULL-ended */
	const struct spawn_user *user;
	int stdout_fd;			/* becomes the child's stdout; -1: ours */
	bool own_group;			/* setpgid(0, 0): not in our terminal's group */
	bool die_with_parent;		/* SIGTERM when we exit, however */
};

/*
 * Fork and exec r->exe as r->user, in /, with every signal unblocked and
 * SIGPIPE at its default.  Returns once the exec happened (0, *pid set) or
 * failed: then the child is reaped and -errno returned, with why saying
 * which step failed and why, ending in the errno's name ("it is not
 * executable by nobody (mode 0700) (EACCES)").
 */
int spawn_run(const struct spawn_req *r, pid_t *pid, char *why, size_t n);

/* envp for spawn_req: a copy of environ without the names in drop[] and
 * with add[] ("NAME=value") appended, in one allocation freed by free();
 * NULL when out of memory. */
char **spawn_env(char *const *environ_, const char *const *drop, const char *const *add);

#endif
