/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Privileges: what cachescoped keeps once its programs are attached, and
 * which files root may run or load into other processes.
 */
#ifndef CS_PRIVS_H
#define CS_PRIVS_H

#include <stdbool.h>
#include <sys/capability.h>
#include <sys/stat.h>

/* Whether root may exec path or hand it to other processes: it must be a
 * regular file owned by root, not writable by group or others, in a
 * directory owned by root and not writable by group or others.  0, or
 * -EPERM with *why saying which (a static string); stat's -errno. */
int privs_check_file(const char *path, const char **why);
/* The same checks on the file open at fd (fstat: what was opened is what
 * is checked, whatever path names now), and on the directory of path, the
 * name it was opened by. */
int privs_check_opened(int fd, const char *path, const char **why);
/* Whether a process of uid and gid, without supplementary groups and
 * without capabilities, may mode (R_OK, X_OK or both) the file of st, by
 * its mode bits alone (no ACL is read). */
bool privs_user_may(const struct stat *st, uid_t uid, gid_t gid, int mode);
/* Whether root without capabilities may create and remove names in the
 * directory of path (its owner bits, or the group's or others'). */
bool privs_dir_writable(const char *path);
/* Run fn(ctx) with no effective capability (the permitted set unchanged)
 * and restore them; fn's return, or -errno when they cannot be changed. */
int privs_probe(int (*fn)(void *ctx), void *ctx);
/* What the daemon still does once everything only root could do is done,
 * and so which capabilities it keeps (DESIGN.md, "Privileges"). */
struct privs_needs {
	bool bpf_needs_cap;	/* bpf() asks a capability of every call (kernels
				 * before 6.5 with unprivileged BPF disabled) */
	bool cap_bpf;		/* the kernel knows CAP_BPF (else CAP_SYS_ADMIN) */
	bool signals_others;	/* it stops kvref, whatever user that runs as */
	bool dir_locked;	/* it writes names in a directory root's uid
				 * alone may not (privs_dir_writable false) */
};

#define PRIVS_KEEP_MAX 3

/* The capabilities to keep for needs, into keep (PRIVS_KEEP_MAX at most):
 * how many. */
int privs_policy(const struct privs_needs *needs, cap_value_t *keep);

/* From now on every mount this process sees is read-only (and nosuid),
 * but for the directories of the n paths (NULL ones skipped), in a mount
 * namespace of its own: what uid 0 could write by its owner bits alone
 * (a root-owned 0644 sysctl, /etc) it cannot once the capabilities are
 * gone.  Needs CAP_SYS_ADMIN.  0, or -errno with the step that failed in
 * failed. */
int privs_confine(const char *const *paths, int n, char *failed, size_t size);
/* Keep only keep[0..n): permitted, effective and bounding sets hold them
 * alone, inheritable and ambient are empty, securebits stop root from
 * gaining any by exec or setuid, and no_new_privs is set.  0 or -errno. */
int privs_drop(const cap_value_t *keep, int n);
/* "cap_bpf,cap_kill", or "none", for the log. */
void privs_names(const cap_value_t *keep, int n, char *buf, size_t size);

#endif
