// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Dropping privileges with libcap.  cachescoped stays uid 0 (its CSV, its
 * socket and /proc/slabinfo are root's, reached by the owner's bits), but
 * keeps only the capabilities its later steps were measured to need; the
 * bounding set is cut to them before CAP_SETPCAP goes, so nothing it execs
 * can get more back.  A uid 0 without capabilities still writes every
 * root-owned file its owner may write (a 0644 sysctl, /etc/passwd), so
 * before the drop its whole filesystem is made read-only, in a mount
 * namespace of its own, but for the directories it writes in.
 */
#include <errno.h>
#include <limits.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "privs.h"

static int parent_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return snprintf(dir, n, ".") >= (int)n ? -ENAMETOOLONG : 0;
	if (slash == path)
		return snprintf(dir, n, "/") >= (int)n ? -ENAMETOOLONG : 0;
	if ((size_t)(slash - path) >= n)
		return -ENAMETOOLONG;
	memcpy(dir, path, slash - path);
	dir[slash - path] = '\0';
	return 0;
}

/* The file's own part of the trust check: a regular file, root's (or
 * ours), writable by its owner alone. */
static const char *untrusted_file(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* The directory's part: nobody but root may swap the name for another. */
static int check_dir_of(const char *path, const char **why)
{
	char dir[PATH_MAX];
	struct stat st;
	int err;

	err = parent_of(path, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st))
		return -errno;
	if (st.st_uid != 0 && st.st_uid != geteuid())
		*why = "its directory is not owned by root";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		*why = "its directory is writable by group or others";
	return *why ? -EPERM : 0;
}

int privs_check_file(const char *path, const char **why)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	*why = untrusted_file(&st);
	return *why ? -EPERM : check_dir_of(path, why);
}

int privs_check_opened(int fd, const char *path, const char **why)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*why = untrusted_file(&st);
	return *why ? -EPERM : check_dir_of(path, why);
}

bool privs_user_may(const struct stat *st, uid_t uid, gid_t gid, int mode)
{
	mode_t bits = 0;

	if (mode & R_OK)
		bits |= S_IROTH;
	if (mode & X_OK)
		bits |= S_IXOTH;
	/* the kernel's order: owner bits for the owner, then the group's,
	 * then others'; the first class that matches decides */
	if (st->st_uid == uid)
		return (st->st_mode & (bits << 6)) == bits << 6;
	if (st->st_gid == gid)
		return (st->st_mode & (bits << 3)) == bits << 3;
	return (st->st_mode & bits) == bits;
}

bool privs_dir_writable(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (parent_of(path, dir, sizeof(dir)) || stat(dir, &st))
		return false;
	return (st.st_uid == 0 && (st.st_mode & S_IWUSR)) ||
	       (st.st_gid == 0 && (st.st_mode & S_IWGRP)) || (st.st_mode & S_IWOTH);
}

int privs_probe(int (*fn)(void *ctx), void *ctx)
{
	cap_t saved = cap_get_proc(), none = NULL;
	int ret;

	if (!saved)
		return -errno;
	none = cap_dup(saved);
	if (!none || cap_clear_flag(none, CAP_EFFECTIVE) || cap_set_proc(none)) {
		ret = -errno;
		goto cleanup;
	}
	ret = fn(ctx);
	if (cap_set_proc(saved))
		ret = -errno;
cleanup:
	cap_free(none);
	cap_free(saved);
	return ret;
}

static bool kept(cap_value_t cap, const cap_value_t *keep, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (keep[i] == cap)
			return true;
	return false;
}

static bool have(cap_t caps, cap_value_t cap, cap_flag_t set)
{
	cap_flag_value_t v = CAP_CLEAR;

	return !cap_get_flag(caps, cap, set, &v) && v == CAP_SET;
}

int privs_policy(const struct privs_needs *needs, cap_value_t *keep)
{
	int n = 0;

	/* map lookups and the flush test-run every tick */
	if (needs->bpf_needs_cap)
		keep[n++] = needs->cap_bpf ? CAP_BPF : CAP_SYS_ADMIN;
	if (needs->signals_others)
		keep[n++] = CAP_KILL;
	/* the CSV renamed into place, the socket bound and removed at exit */
	if (needs->dir_locked)
		keep[n++] = CAP_DAC_OVERRIDE;
	return n;
}

int privs_confine(const char *const *paths, int n, char *failed, size_t size)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
	struct mount_attr rw = { .attr_clr = MOUNT_ATTR_RDONLY };
	char dir[PATH_MAX], cwd[PATH_MAX];
	int i, err;

#define STEP(what, call)							\
	do {								\
		if (call) {						\
			err = -errno;					\
			snprintf(failed, size, "%s", what);		\
			return err;					\
		}							\
	} while (0)
	/* mounts of its own, changes to them seen nowhere else */
	STEP("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
	STEP("making / private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	/* each directory written later a mount of its own, so that it alone
	 * can be made writable again; recursive, so that a mount below it
	 * (the other directory, on a file system of its own) stays seen */
	for (i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		err = parent_of(paths[i], dir, sizeof(dir));
		if (err) {
			snprintf(failed, size, "%s", paths[i]);
			return err;
		}
		STEP(paths[i], mount(dir, dir, NULL, MS_BIND | MS_REC, NULL));
	}
	STEP("making / read-only", mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)));
	for (i = 0; i < n; i++)
		if (paths[i] && !parent_of(paths[i], dir, sizeof(dir)))
			STEP(paths[i], mount_setattr(AT_FDCWD, dir, 0, &rw, sizeof(rw)));
	/* the working directory was taken before the binds: a relative path
	 * must resolve through them too */
	if (getcwd(cwd, sizeof(cwd)))
		STEP("chdir", chdir(cwd));
#undef STEP
	return 0;
}

int privs_drop(const cap_value_t *keep, int n)
{
	cap_value_t cap, last = cap_max_bits() - 1, held[CAP_LAST_CAP + 1];
	cap_t now = cap_get_proc(), caps = NULL;
	int err = 0, i, m = 0;

	if (!now)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		err = -errno;
		goto cleanup;
	}
	/* without CAP_SETPCAP (run with a few capabilities, not as root) the
	 * bounding set and securebits stay; no_new_privs still holds */
	if (have(now, CAP_SETPCAP, CAP_EFFECTIVE)) {
		/* uid 0 gains nothing by exec or setuid, and that cannot be undone */
		if (cap_set_secbits(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
				    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				    SECBIT_NO_CAP_AMBIENT_RAISE |
				    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)) {
			err = -errno;
			goto cleanup;
		}
		/* the bounding set first: it needs CAP_SETPCAP, which goes next */
		for (cap = 0; cap <= last; cap++) {
			if (!kept(cap, keep, n) && CAP_IS_SUPPORTED(cap) && cap_drop_bound(cap)) {
				err = -errno;
				goto cleanup;
			}
		}
	}
	if (cap_reset_ambient() && errno != EINVAL && errno != EPERM) {
		err = -errno;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		if (have(now, keep[i], CAP_PERMITTED))
			held[m++] = keep[i];
	caps = cap_init();
	if (!caps || (m && (cap_set_flag(caps, CAP_PERMITTED, m, held, CAP_SET) ||
			    cap_set_flag(caps, CAP_EFFECTIVE, m, held, CAP_SET))) ||
	    cap_set_proc(caps))
		err = -errno;
cleanup:
	cap_free(caps);
	cap_free(now);
	return err;
}

void privs_names(const cap_value_t *keep, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++) {
		char *name = cap_to_name(keep[i]);

		len += snprintf(buf + len, size - len, "%s%s", i ? "," : "", name ? name : "?");
		cap_free(name);
	}
	if (!n)
		snprintf(buf, size, "none");
}
