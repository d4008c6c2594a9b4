// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's own numbers.  Every sample reads /proc/slabinfo whole (about
 * a millisecond for 250 caches) into one global ring of sample times, with
 * one ring of counts per cache indexed the same way, so counts of several
 * caches (the kmalloc variants of one size) add up sample by sample.
 */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "array.h"
#include "kstate.h"
#include "stats.h"

#define KCACHE_NAME 40

struct kcache {
	char name[KCACHE_NAME];
	uint32_t kmalloc_size;	/* objects of N bytes in a kmalloc cache, else 0 */
	uint32_t per_slab;	/* objects per slab; 0: an exact count */
	int8_t reclaimable;	/* 1, 0, or -1: not read yet */
	int32_t cpu_partial;	/* objects a CPU's partial slabs keep; -1: not read */
	int64_t val[KSTATE_SAMPLES];
};

struct kstate {
	char *slabinfo, *dentry_state, *meminfo, *slab_dir, *vmallocinfo;
	uint64_t vmalloc_ns;	/* when vmallocinfo was last read; 0: never */
	int64_t vmalloc_areas;	/* and its count then */
	uint64_t file_lru_pages;	/* 0: unknown */
	struct kcache *c;
	size_t n, cap;
	uint64_t ts[KSTATE_SAMPLES];
	uint64_t samples;	/* taken so far; the newest is (samples - 1) % N */
};

struct kstate *kstate_new(const char *slabinfo, const char *dentry_state,
			  const char *meminfo)
{
	struct kstate *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->slabinfo = strdup(slabinfo ? slabinfo : "/proc/slabinfo");
	ks->dentry_state = strdup(dentry_state ? dentry_state : "/proc/sys/fs/dentry-state");
	ks->meminfo = strdup(meminfo ? meminfo : "/proc/meminfo");
	ks->vmallocinfo = strdup("/proc/vmallocinfo");
	if (!ks->slabinfo || !ks->dentry_state || !ks->meminfo || !ks->vmallocinfo) {
		kstate_free(ks);
		return NULL;
	}
	return ks;
}

void kstate_free(struct kstate *ks)
{
	if (!ks)
		return;
	free(ks->slabinfo);
	free(ks->dentry_state);
	free(ks->meminfo);
	free(ks->slab_dir);
	free(ks->vmallocinfo);
	free(ks->c);
	free(ks);
}

/* "kmalloc-96", "kmalloc-cg-1k", "dma-kmalloc-rcl-2k", "kmalloc-rnd-03-64":
 * the size of its objects, or 0 for any other cache. */
static uint32_t kmalloc_size_of(const char *name)
{
	const char *p = strstr(name, "kmalloc-"), *last;
	char *end;
	unsigned long v;

	if (!p || (p != name && strncmp(name, "dma-", 4)))
		return 0;
	last = strrchr(name, '-') + 1;
	if (!isdigit((unsigned char)*last))
		return 0;
	v = strtoul(last, &end, 10);
	if (*end == 'k' && !end[1])
		v <<= 10;
	else if (*end)
		return 0;
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* Whether c counts towards cache: kmalloc-<N> is every kmalloc cache of N
 * bytes (want = N), any other name itself. */
static bool kcache_is(const struct kcache *c, const char *cache, uint32_t want)
{
	return want ? c->kmalloc_size == want : !strcmp(c->name, cache);
}

static struct kcache *kcache_get(struct kstate *ks, const char *name)
{
	struct kcache *c;
	size_t i;

	for (i = 0; i < ks->n; i++)
		if (!strcmp(ks->c[i].name, name))
			return &ks->c[i];
	if (array_room(&ks->c, &ks->cap, ks->n, sizeof(*ks->c), 256))
		return NULL;
	c = &ks->c[ks->n++];
	memset(c, 0, sizeof(*c));	/* no count before it appeared: 0 */
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->kmalloc_size = kmalloc_size_of(name);
	c->reclaimable = -1;
	c->cpu_partial = -1;
	return c;
}

int kstate_sample(struct kstate *ks, uint64_t now_ns)
{
	unsigned long long dentries, unused;
	uint32_t k = ks->samples % KSTATE_SAMPLES;
	char line[512], name[128];
	long long active, num, objsize, per_slab;
	size_t i;
	FILE *f;

	f = fopen(ks->slabinfo, "re");
	if (!f)
		return -errno;
	/* a cache missing from this sample has no objects now */
	for (i = 0; i < ks->n; i++)
		ks->c[i].val[k] = 0;
	while (fgets(line, sizeof(line), f)) {
		struct kcache *c;

		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%127s %lld %lld %lld %lld", name, &active, &num, &objsize,
			   &per_slab) != 5 || active < 0)
			continue;
		if (!strcmp(name, "dentry") || !strcmp(name, "vmap_area"))
			continue;	/* counted in use, below */
		c = kcache_get(ks, name);
		if (c) {
			c->val[k] = active;
			c->per_slab = per_slab > 0 && per_slab < 1 << 20 ? (uint32_t)per_slab : 1;
		}
	}
	fclose(f);
	/* dentries in use: the dcache keeps unused and negative ones as a
	 * cache, which grows by design and is not a leak */
	f = fopen(ks->dentry_state, "re");
	if (f) {
		if (fscanf(f, "%llu %llu", &dentries, &unused) == 2 && dentries >= unused) {
			struct kcache *c = kcache_get(ks, "dentry");

			if (c)
				c->val[k] = (int64_t)(dentries - unused);
		}
		fclose(f);
	}
	/* vmalloc areas in use: freed ones wait in a lazy list, purged in a
	 * batch once 32 MiB x log2(CPUs) of them pile up (kernel stacks of
	 * exited processes, say), and only the busy ones are listed here.
	 * Read at most once a KSTATE_VMALLOC_EVERY_NS: the kernel names every
	 * area's caller through kallsyms (0.85 ms a read here: read every
	 * sample it was a quarter of the daemon's CPU under a server's load
	 * at --budget 5, once a second still 6 %); the samples between repeat
	 * the last count, which only vmap_area's rows show (its rises are
	 * the kernel's lazy freeing, never labelled a leak). */
	if (ks->vmallocinfo && (!ks->vmalloc_ns || now_ns - ks->vmalloc_ns >= KSTATE_VMALLOC_EVERY_NS))
		f = fopen(ks->vmallocinfo, "re");
	else
		f = NULL;
	if (f) {
		int64_t areas = 0;

		while (fgets(line, sizeof(line), f))
			if (strchr(line, '\n'))
				areas++;
		fclose(f);
		ks->vmalloc_areas = areas;
		ks->vmalloc_ns = now_ns;
	}
	if (ks->vmalloc_ns) {
		struct kcache *c = kcache_get(ks, "vmap_area");

		if (c)
			c->val[k] = ks->vmalloc_areas;
	}
	f = fopen(ks->meminfo, "re");
	if (f) {
		unsigned long long kb, lru = 0;
		int seen = 0;

		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Active(file): %llu", &kb) == 1 ||
			    sscanf(line, "Inactive(file): %llu", &kb) == 1) {
				lru += kb;
				seen++;
			}
		}
		fclose(f);
		ks->file_lru_pages = seen == 2 ? lru * 1024 / (uint64_t)sysconf(_SC_PAGESIZE) : 0;
	}
	ks->ts[k] = now_ns;
	ks->samples++;
	return 0;
}

int kstate_set_slab_dir(struct kstate *ks, const char *dir)
{
	char *d = strdup(dir);

	if (!d)
		return -ENOMEM;
	free(ks->slab_dir);
	ks->slab_dir = d;
	return 0;
}

int kstate_set_vmallocinfo(struct kstate *ks, const char *path)
{
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return -ENOMEM;
	free(ks->vmallocinfo);
	ks->vmallocinfo = p;
	return 0;
}

/* An integer attribute of a cache in SLUB's sysfs: 0 and *v, or -errno. */
static int slab_attr(const struct kstate *ks, const char *cache, const char *attr, int *v)
{
	char path[300];
	int err = 0;
	FILE *f;

	if (strchr(cache, '/') || !strcmp(cache, "..") || !strcmp(cache, "."))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s/%s",
		 ks->slab_dir ? ks->slab_dir : "/sys/kernel/slab", cache, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", v) != 1)
		err = -EINVAL;
	fclose(f);
	return err;
}

int kstate_reclaimable(struct kstate *ks, const char *cache)
{
	struct kcache *c;
	int v = -1, err;
	size_t i;

	if (!ks || kmalloc_size_of(cache))	/* kmalloc-N: a mix; the -rcl ones are few */
		return 0;
	for (i = 0, c = NULL; i < ks->n; i++)
		if (!strcmp(ks->c[i].name, cache))
			c = &ks->c[i];
	if (c && c->reclaimable >= 0)
		return c->reclaimable;
	err = slab_attr(ks, cache, "reclaim_account", &v);
	if (err)
		return err;
	if (v != 0 && v != 1)
		return -EINVAL;
	if (c)
		c->reclaimable = (int8_t)v;
	return v;
}

/* SLUB's per-CPU partial slabs, in objects (sysfs cpu_partial); 0 if unknown. */
static int32_t cpu_partial_of(struct kstate *ks, struct kcache *c)
{
	int v = 0;

	if (c->cpu_partial >= 0 || !c->per_slab)
		return c->cpu_partial > 0 ? c->cpu_partial : 0;
	if (slab_attr(ks, c->name, "cpu_partial", &v) || v < 0)
		v = 0;
	c->cpu_partial = v;
	return v;
}

long kstate_resolution(struct kstate *ks, const char *cache)
{
	uint32_t want = kmalloc_size_of(cache);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), res = -1;
	size_t i;

	if (cpus < 1)
		cpus = 1;
	for (i = 0; ks && i < ks->n; i++) {
		struct kcache *c = &ks->c[i];

		if (!kcache_is(c, cache, want))
			continue;
		res = (res < 0 ? 0 : res) +
		      cpus * (2L * c->per_slab + cpu_partial_of(ks, c));
	}
	return res;
}

int kstate_file_lru(const struct kstate *ks, uint64_t *pages)
{
	if (!ks || !ks->file_lru_pages)
		return -ENODATA;
	*pages = ks->file_lru_pages;
	return 0;
}

int kstate_growth(const struct kstate *ks, const char *cache, uint64_t span_ns,
		  double *per_s, double *got_s)
{
	double x[KSTATE_SAMPLES], y[KSTATE_SAMPLES];
	uint32_t want = kmalloc_size_of(cache), n = 0, j;
	uint64_t newest, s, avail;
	size_t i, nm = 0, *match;

	if (!ks->samples)
		return -ENODATA;
	/* the caches that count, found once rather than at every sample */
	match = malloc((ks->n ? ks->n : 1) * sizeof(*match));
	if (!match)
		return -ENOMEM;
	for (i = 0; i < ks->n; i++)
		if (kcache_is(&ks->c[i], cache, want))
			match[nm++] = i;
	avail = ks->samples < KSTATE_SAMPLES ? ks->samples : KSTATE_SAMPLES;
	newest = ks->ts[(ks->samples - 1) % KSTATE_SAMPLES];
	for (s = 0; s < avail; s++) {
		uint32_t k = (ks->samples - 1 - s) % KSTATE_SAMPLES;
		double sum = 0;

		if (newest - ks->ts[k] > span_ns)
			break;
		for (i = 0; i < nm; i++)
			sum += (double)ks->c[match[i]].val[k];
		x[n] = -(double)(newest - ks->ts[k]) / 1e9;
		y[n++] = sum;
	}
	free(match);
	if (!nm || n < 2)
		return -ENOENT;
	/* x counts back from the newest sample: reverse so it runs forward */
	for (j = 0; j < n / 2; j++) {
		double t;

		t = x[j], x[j] = x[n - 1 - j], x[n - 1 - j] = t;
		t = y[j], y[j] = y[n - 1 - j], y[n - 1 - j] = t;
	}
	*per_s = stats_slope(x, y, n);
	*got_s = x[n - 1] - x[0];
	return 0;
}

/* ---- kernel symbols ----
 * A kernel has over 10^5 text symbols, 3 MB of names: they are kept
 * compressed (zlib) in blocks of KSYM_BLOCK names in address order, the
 * addresses apart for the search, and the last blocks read are kept
 * open: a window's call sites are few and repeat. */

#define KSYM_BLOCK 64
#define KSYM_OPEN 64		/* blocks kept uncompressed, by block number */

struct ksym_open {
	size_t block;		/* SIZE_MAX: none */
	char *names;		/* KSYM_BLOCK names, each 0-terminated */
};

struct ksyms {
	uint64_t *addr;		/* sorted */
	size_t n;
	uint32_t *zoff;		/* [nblocks + 1]: each block's place in z */
	uint32_t *rawlen;	/* [nblocks]: its names' bytes */
	unsigned char *z;
	struct ksym_open open[KSYM_OPEN];
};

/* while loading: a symbol, its name in names */
struct ksym_tmp {
	uint64_t addr;
	uint32_t name;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_tmp *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ksyms_free(struct ksyms *k)
{
	unsigned int i;

	if (!k)
		return;
	for (i = 0; i < KSYM_OPEN; i++)
		free(k->open[i].names);
	free(k->addr);
	free(k->zoff);
	free(k->rawlen);
	free(k->z);
	free(k);
}

/* The symbols of t (sorted, names in names) into k's blocks.  0 or -ENOMEM. */
static int ksyms_pack(struct ksyms *k, const struct ksym_tmp *t, size_t n, const char *names)
{
	size_t nb = (n + KSYM_BLOCK - 1) / KSYM_BLOCK, b, i, zlen = 0, zcap = 0;
	char raw[KSYM_BLOCK * 256];

	k->addr = malloc(n * sizeof(*k->addr));
	k->zoff = malloc((nb + 1) * sizeof(*k->zoff));
	k->rawlen = malloc(nb * sizeof(*k->rawlen));
	if (!k->addr || !k->zoff || !k->rawlen)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		k->addr[i] = t[i].addr;
	k->n = n;
	for (b = 0; b < nb; b++) {
		size_t len = 0;
		uLongf out;

		for (i = b * KSYM_BLOCK; i < n && i < (b + 1) * KSYM_BLOCK; i++) {
			size_t l = strlen(names + t[i].name) + 1;	/* < 256: %255s */

			memcpy(raw + len, names + t[i].name, l);
			len += l;
		}
		out = compressBound(len);
		if (zlen + out > zcap) {
			size_t cap = zcap ? zcap * 2 : 1 << 20;
			unsigned char *z;

			while (cap < zlen + out)
				cap *= 2;
			z = realloc(k->z, cap);
			if (!z)
				return -ENOMEM;
			k->z = z;
			zcap = cap;
		}
		if (compress2(k->z + zlen, &out, (const Bytef *)raw, len, Z_BEST_SPEED) != Z_OK)
			return -ENOMEM;
		k->zoff[b] = (uint32_t)zlen;
		k->rawlen[b] = (uint32_t)len;
		zlen += out;
	}
	k->zoff[nb] = (uint32_t)zlen;
	if (zlen) {	/* give back what the doubling left unused */
		unsigned char *z = realloc(k->z, zlen);

		if (z)
			k->z = z;
	}
	for (i = 0; i < KSYM_OPEN; i++)
		k->open[i].block = SIZE_MAX;
	return 0;
}

/* Text symbols only: call sites are code addresses.  Returns NULL when the
 * file cannot be read, holds no addresses (kptr_restrict) or memory ran out. */
struct ksyms *ksyms_load(const char *path)
{
	char line[512], name[256], type;
	size_t n = 0, cap = 0, len = 0, ncap = 0;
	struct ksym_tmp *t = NULL;
	unsigned long long addr;
	struct ksyms *k = NULL;
	char *names = NULL;
	bool nomem = false;
	FILE *f;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return NULL;
	while (!nomem && fgets(line, sizeof(line), f)) {
		size_t l;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		l = strlen(name) + 1;
		if (n == cap) {
			struct ksym_tmp *p = realloc(t, (cap = cap ? cap * 2 : 65536) * sizeof(*t));

			if (!p) {
				nomem = true;
				break;
			}
			t = p;
		}
		if (len + l > ncap) {
			char *p = realloc(names, ncap = ncap ? ncap * 2 : 1 << 20);

			if (!p) {
				nomem = true;
				break;
			}
			names = p;
		}
		memcpy(names + len, name, l);
		t[n].addr = addr;
		t[n++].name = (uint32_t)len;
		len += l;
	}
	fclose(f);
	if (!nomem && n) {
		qsort(t, n, sizeof(*t), ksym_cmp);
		k = calloc(1, sizeof(*k));
		if (k && ksyms_pack(k, t, n, names)) {
			ksyms_free(k);
			k = NULL;
		}
	}
	free(t);
	free(names);
	return k;
}

/* The names of block b, uncompressed (kept open), or NULL. */
static const char *ksyms_block(struct ksyms *k, size_t b)
{
	struct ksym_open *o = &k->open[b % KSYM_OPEN];
	uLongf len = k->rawlen[b];
	char *p;

	if (o->block == b)
		return o->names;
	p = realloc(o->names, len ? len : 1);
	if (!p)
		return NULL;
	o->names = p;
	o->block = SIZE_MAX;
	if (uncompress((Bytef *)p, &len, k->z + k->zoff[b], k->zoff[b + 1] - k->zoff[b]) != Z_OK ||
	    len != k->rawlen[b])
		return NULL;
	o->block = b;
	return p;
}

int ksyms_name(struct ksyms *k, uint64_t addr, char *buf, size_t n)
{
	size_t lo = 0, hi = k ? k->n : 0, i;
	const char *name;

	while (lo < hi) {	/* the last symbol at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	name = lo ? ksyms_block(k, (lo - 1) / KSYM_BLOCK) : NULL;
	if (!name) {
		snprintf(buf, n, "0x%llx", (unsigned long long)addr);
		return -ENOENT;
	}
	for (i = (lo - 1) % KSYM_BLOCK; i; i--)
		name += strlen(name) + 1;
	snprintf(buf, n, "%s+0x%llx", name, (unsigned long long)(addr - k->addr[lo - 1]));
	return 0;
}
