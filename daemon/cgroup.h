/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cgroup v2 path of a process and the container it names, for the
 * CSV's cgroup and container columns: read from /proc/<tgid>/cgroup once
 * per process and again once its entry is older than the refresh age (as
 * comm is refreshed), cached per tgid.
 */
#ifndef CS_CGROUP_H
#define CS_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* The path of the cgroup v2 line ("0::PATH") of a /proc/<pid>/cgroup text:
 * 0 with path (truncated to n) or -ENOENT (no v2 line: cgroup v1 only). */
int cgroup_parse(const char *text, char *path, size_t n);

/* The container a cgroup path names, from its innermost component that
 * names one: docker-ID.scope and /docker/ID (Docker), cri-containerd-ID.scope
 * (containerd), libpod-ID.scope (Podman), crio-ID.scope (CRI-O), an ID
 * below a kubepods pod directory (cgroupfs driver), where ID is 64
 * lower-case hex digits; else a kubepods pod, as pod:UID (from
 * kubepods-...-podUID.slice or kubepods/.../podUID, '_' read as '-').
 * 0 with id (truncated to n), or -ENOENT. */
int cgroup_container(const char *path, char *id, size_t n);

struct cgroup_info {
	char *path;		/* "" when unknown */
	char container[80];	/* "" when none */
};

struct cgcache;

/* proc: where the <pid>/cgroup files are ("/proc"; a copy in tests).
 * NULL when out of memory. */
struct cgcache *cgcache_new(const char *proc, uint64_t refresh_ns);
void cgcache_free(struct cgcache *c);

/* What is known of process tgid at time now (any clock that never goes
 * back, the same every call): read on first use and when older than the
 * refresh age; a process
 * that is gone keeps what was read last.  NULL for ids that are not
 * processes (0, the family and others ids of cachescope.h) and when out of
 * memory. */
const struct cgroup_info *cgcache_get(struct cgcache *c, uint32_t tgid, uint64_t now);

#endif
