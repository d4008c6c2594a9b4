// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cgroup path and container id per process.  The one idea: a row asks by
 * tgid, and a process's cgroup rarely changes, so the answer is kept in a
 * table keyed by tgid (htab.h) and read again from /proc only once it is
 * older than the refresh age.  The table is emptied when it reaches
 * CG_MAX_USED processes (they have mostly exited by then), which bounds
 * its memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachescope.h"
#include "cgroup.h"
#include "htab.h"

#define CG_ID_LEN 64
#define CG_MAX_USED 12288

int cgroup_parse(const char *text, char *path, size_t n)
{
	const char *p = text, *end;

	while (p && *p) {
		if (!strncmp(p, "0::", 3)) {
			p += 3;
			end = strchr(p, '\n');
			if (!end)
				end = p + strlen(p);
			snprintf(path, n, "%.*s", (int)(end - p), p);
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

/* Whether the len bytes at s are a container id. */
static bool is_id(const char *s, size_t len)
{
	size_t i;

	if (len != CG_ID_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static bool ends(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/* A pod uid: hex digits and '-' (or '_', systemd's spelling), 32 digits. */
static bool is_uid(const char *s, size_t len)
{
	size_t i, digits = 0;

	for (i = 0; i < len; i++) {
		if ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))
			digits++;
		else if (s[i] != '-' && s[i] != '_')
			return false;
	}
	return digits == 32;
}

/* The container id a scope unit of a runtime names, if it names one. */
static const char *scope_id(const char *s, size_t len)
{
	static const char *const prefix[] = { "docker-", "cri-containerd-", "libpod-", "crio-" };
	size_t i, n;

	if (!ends(s, len, ".scope"))
		return NULL;
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		n = strlen(prefix[i]);
		if (starts(s, len, prefix[i]) && is_id(s + n, len - n - 6))
			return s + n;
	}
	return NULL;
}

/* The pod uid a component names (kubepods-...-podUID.slice; podUID within
 * kubepods), with its length in *ulen, if it names one. */
static const char *pod_uid(const char *s, size_t len, bool in_kubepods, size_t *ulen)
{
	const char *p, *end;

	if (starts(s, len, "kubepods") && ends(s, len, ".slice")) {
		end = s + len - 6;
		for (p = end; p > s && p[-1] != '-'; p--)
			;
		if (p == s || !starts(p, end - p, "pod") || !is_uid(p + 3, end - p - 3))
			return NULL;
		*ulen = end - p - 3;
		return p + 3;
	}
	if (in_kubepods && starts(s, len, "pod") && is_uid(s + 3, len - 3)) {
		*ulen = len - 3;
		return s + 3;
	}
	return NULL;
}

int cgroup_container(const char *path, char *id, size_t n)
{
	const char *p = path, *c, *ctr = NULL, *uid = NULL, *u;
	bool after_docker = false, after_pod = false, kube = false;
	size_t len, ulen = 0, i;

	/* the innermost component that names something wins */
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (c = p; *p && *p != '/'; p++)
			;
		len = p - c;
		if (starts(c, len, "kubepods"))
			kube = true;
		u = scope_id(c, len);
		if (!u && (after_docker || after_pod) && is_id(c, len))
			u = c;	/* cgroupfs drivers: /docker/ID, /kubepods/.../podUID/ID */
		after_pod = false;
		if (u) {
			ctr = u;
			uid = NULL;
		} else if ((u = pod_uid(c, len, kube, &i))) {
			uid = u;
			ulen = i;
			ctr = NULL;
			after_pod = true;
		}
		after_docker = len == 6 && !memcmp(c, "docker", 6);
	}
	if (ctr) {
		snprintf(id, n, "%.*s", CG_ID_LEN, ctr);
		return 0;
	}
	if (uid) {
		char buf[48];

		for (i = 0; i < ulen && i < sizeof(buf) - 1; i++)
			buf[i] = uid[i] == '_' ? '-' : uid[i];
		buf[i] = '\0';
		snprintf(id, n, "pod:%s", buf);
		return 0;
	}
	return -ENOENT;
}

struct cg_entry {
	uint32_t tgid;
	uint64_t read_at;
	struct cgroup_info info;
};

struct cgcache {
	char *proc;
	uint64_t refresh_ns;
	struct htab tab;	/* of struct cg_entry */
};

static uint64_t tgid_hash(uint32_t tgid)
{
	return tgid * 0x9e3779b97f4a7c15ull;
}

static uint64_t entry_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return tgid_hash(((const struct cg_entry *)entry)->tgid);
}

static bool entry_is(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct cg_entry *)entry)->tgid == *(const uint32_t *)key;
}

struct cgcache *cgcache_new(const char *proc, uint64_t refresh_ns)
{
	struct cgcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->proc = strdup(proc);
	if (!c->proc) {
		free(c);
		return NULL;
	}
	c->refresh_ns = refresh_ns;
	htab_init(&c->tab, 256, 3, 4, entry_hash, entry_is, NULL);
	return c;
}

/* Every entry goes, and the array with them. */
static void cgcache_clear(struct cgcache *c)
{
	size_t i;

	for (i = htab_next(&c->tab, 0); i < c->tab.cap; i = htab_next(&c->tab, i + 1)) {
		struct cg_entry *e = c->tab.slot[i];

		free(e->info.path);
		free(e);
	}
	htab_release(&c->tab);
}

void cgcache_free(struct cgcache *c)
{
	if (!c)
		return;
	cgcache_clear(c);
	free(c->proc);
	free(c);
}

/* Read tgid's cgroup into info; a process gone (or a file without a v2
 * line) leaves info as it was. */
static void cg_read(const struct cgcache *c, uint32_t tgid, struct cgroup_info *info)
{
	char file[300], text[8192], path[4096], *dup;
	size_t len;
	FILE *f;

	snprintf(file, sizeof(file), "%s/%u/cgroup", c->proc, tgid);
	f = fopen(file, "re");
	if (!f)
		return;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	if (cgroup_parse(text, path, sizeof(path)))
		return;
	dup = strdup(path);
	if (!dup)
		return;
	free(info->path);
	info->path = dup;
	if (cgroup_container(path, info->container, sizeof(info->container)))
		info->container[0] = '\0';
}

const struct cgroup_info *cgcache_get(struct cgcache *c, uint32_t tgid, uint64_t now)
{
	struct cg_entry *e;

	if (!tgid || tgid >= CS_TGID_FAMILY)
		return NULL;
	e = htab_find(&c->tab, tgid_hash(tgid), &tgid);
	if (e) {
		if (now >= e->read_at && now - e->read_at >= c->refresh_ns) {
			e->read_at = now;
			cg_read(c, tgid, &e->info);
		}
		return &e->info;
	}
	if (c->tab.n >= CG_MAX_USED)
		cgcache_clear(c);
	e = calloc(1, sizeof(*e));
	if (!e || !(e->info.path = strdup(""))) {
		free(e);
		return NULL;
	}
	e->tgid = tgid;
	e->read_at = now;
	if (htab_insert(&c->tab, e)) {
		free(e->info.path);
		free(e);
		return NULL;
	}
	cg_read(c, tgid, &e->info);
	return &e->info;
}
