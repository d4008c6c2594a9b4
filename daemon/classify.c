// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rules.  A vector is checked against them in a fixed order (refault
 * thrash, leak, false sharing, churn thrash): the first that holds names it,
 * and its reason quotes the evidence that made it hold.  The thresholds
 * were calibrated on induced behaviour: bench/calibrate.py, results and
 * margins in bench/calibration.md.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "classify.h"

const struct rule_def rule_defs[RULE_COUNT] = {
	[R_THRASH_REFAULT_SHARE] = { "thrash_refault_share", 0.3,
		"refaulted pages / inserted pages at or above this is thrash" },
	[R_THRASH_MIN_REFAULT_PAGES_S] = { "thrash_min_refault_pages_s", 80,
		"... with at least this many pages refaulting per second" },
	[R_THRASH_CHURN_OPS_S] = { "thrash_churn_ops_s", 100000,
		"slab churn: allocs+frees per second at or above this ..." },
	[R_THRASH_CHURN_LIFETIME_NS] = { "thrash_churn_lifetime_ns", 5000,
		"... with median lifetime at or below this (ns) is thrash" },
	[R_FS_MAX_LOCALITY] = { "false_sharing_max_locality", 0.3,
		"frees on the allocating CPU / frees below this ..." },
	[R_FS_MIN_SAME_SIZE] = { "false_sharing_min_same_size", 0.92,
		"... with this share of allocs of one size ..." },
	[R_FS_MIN_REMOTE_FREES_S] = { "false_sharing_min_remote_frees_s", 1000,
		"... at least this many remote frees per second ..." },
	[R_FS_MAX_LIFETIME_NS] = { "false_sharing_max_lifetime_ns", 100000,
		"... of objects whose median lifetime is at most this (ns) is false sharing" },
	[R_LEAK_MIN_WINDOWS] = { "leak_min_windows", 20,
		"live objects grew for at least this many consecutive active windows ..." },
	[R_LEAK_MIN_GROWTH_S] = { "leak_min_growth_s", 10,
		"... at least this many objects per second ..." },
	[R_LEAK_MAX_FREE_RATIO] = { "leak_max_free_ratio", 0.5,
		"... with frees / allocs at or below this is a leak" },
	[R_CLUSTER_MIN_SHARE] = { "cluster_min_share", 0.5,
		"a cluster takes an anomaly label when this share of its members carry it" },
};

const char *label_name(enum cs_label l)
{
	static const char *names[LABEL_COUNT] = {
		"normal", "thrash", "false_sharing", "leak",
	};

	return (unsigned int)l < LABEL_COUNT ? names[l] : "?";
}

void rules_defaults(struct rules *r)
{
	int i;

	for (i = 0; i < RULE_COUNT; i++)
		r->v[i] = rule_defs[i].value;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int rules_set(struct rules *r, const char *assignment)
{
	char buf[128], *eq, *name, *val, *end;
	double v;
	int i;

	if (strlen(assignment) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, assignment);
	eq = strchr(buf, '=');
	if (!eq)
		return -EINVAL;
	*eq = '\0';
	name = trim(buf);
	val = trim(eq + 1);
	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < RULE_COUNT; i++) {
		if (!strcmp(rule_defs[i].name, name)) {
			r->v[i] = v;
			return 0;
		}
	}
	return -ENOENT;
}

int rules_load(struct rules *r, const char *path, int *bad_line)
{
	char line[256], *s;
	int n = 0, err;
	FILE *f;

	*bad_line = 0;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "#\n")] = '\0';
		s = trim(line);
		if (!*s)
			continue;
		err = rules_set(r, s);
		if (err) {
			*bad_line = n;
			fclose(f);
			return err;
		}
	}
	fclose(f);
	return 0;
}

static void fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, n, "%.1f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, n, "%.1f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, n, "%.1f us", ns / 1e3);
	else
		snprintf(buf, n, "%llu ns", (unsigned long long)ns);
}

static enum cs_label classify_host(const struct rules *r, const char *key,
				   const struct fvec *f, const struct evidence *e,
				   char *reason, size_t n)
{
	const double *t = r->v;
	double locality = f->raw[FEAT_LOCALITY];
	char life[32];

	if (e->refault_share >= t[R_THRASH_REFAULT_SHARE] &&
	    e->refault_pages >= t[R_THRASH_MIN_REFAULT_PAGES_S] * e->window_s) {
		snprintf(reason, n, "thrash: %s %llu of %llu inserted pages refaulted (%.0f%%), median refault distance %llu evictions",
			 key, (unsigned long long)e->refault_pages,
			 (unsigned long long)e->page_adds, 100 * e->refault_share,
			 (unsigned long long)e->refault_dist_p50);
		return LABEL_THRASH;
	}
	if (e->grew_windows >= t[R_LEAK_MIN_WINDOWS] &&
	    e->growth_per_s >= t[R_LEAK_MIN_GROWTH_S] &&
	    e->free_ratio <= t[R_LEAK_MAX_FREE_RATIO]) {
		snprintf(reason, n, "leak: %s live %+.0f/s for %u consecutive windows, %lld live, frees/allocs %.2f",
			 key, e->growth_per_s, e->grew_windows,
			 (long long)e->live_objs, e->free_ratio);
		return LABEL_LEAK;
	}
	/* objects handed between CPUs while hot: a high rate of short-lived
	 * objects freed remotely; a burst of old objects freed elsewhere
	 * (process exit, reclaim) is not it */
	if (e->frees && locality < t[R_FS_MAX_LOCALITY] &&
	    e->same_size_share >= t[R_FS_MIN_SAME_SIZE] &&
	    e->remote_frees >= t[R_FS_MIN_REMOTE_FREES_S] * e->window_s &&
	    e->lifetime_p50_ns <= t[R_FS_MAX_LIFETIME_NS]) {
		fmt_ns(life, sizeof(life), e->lifetime_p50_ns);
		snprintf(reason, n, "false_sharing: %s %.0f%% of %llu frees on another CPU than the alloc (%.0f/s), %.0f%% of allocs one size, median lifetime %s",
			 key, 100 * (1 - locality), (unsigned long long)e->frees,
			 e->remote_frees / e->window_s, 100 * e->same_size_share, life);
		return LABEL_FALSE_SHARING;
	}
	if (f->raw[FEAT_FREQ] >= t[R_THRASH_CHURN_OPS_S] && e->frees &&
	    e->lifetime_p50_ns <= t[R_THRASH_CHURN_LIFETIME_NS]) {
		fmt_ns(life, sizeof(life), e->lifetime_p50_ns);
		snprintf(reason, n, "thrash: %s churns %.0f allocs+frees/s, median lifetime %s",
			 key, f->raw[FEAT_FREQ], life);
		return LABEL_THRASH;
	}
	fmt_ns(life, sizeof(life), e->lifetime_p50_ns);
	snprintf(reason, n, "normal: %s %.0f ops/s, locality %.2f, live %+.0f/s, median lifetime %s",
		 key, f->raw[FEAT_FREQ], locality, e->growth_per_s, life);
	return LABEL_NORMAL;
}

/* What the process did on the GPU in the same window, after the reason of
 * an anomaly: the host-GPU join, in words. */
static void gpu_evidence(const struct evidence *e, char *reason, size_t n)
{
	size_t len = strlen(reason);

	if ((!e->gpu_kernel_ns && !e->gpu_copy_bytes) || len + 1 >= n)
		return;
	snprintf(reason + len, n - len, "; GPU meanwhile: %.1f ms kernels (%.1f ms KV), %.2f MB copied",
		 e->gpu_kernel_ns / 1e6, e->gpu_kv_kernel_ns / 1e6, e->gpu_copy_bytes / 1e6);
}

enum cs_label classify(const struct rules *r, const char *key,
		       const struct fvec *f, const struct evidence *e,
		       char *reason, size_t n)
{
	enum cs_label l = classify_host(r, key, f, e, reason, n);

	if (l != LABEL_NORMAL)
		gpu_evidence(e, reason, n);
	return l;
}

enum cs_label classify_cluster(const struct rules *r, const unsigned int *counts,
			       unsigned int members)
{
	unsigned int i, best = LABEL_NORMAL + 1;

	for (i = best + 1; i < LABEL_COUNT; i++)
		if (counts[i] > counts[best])
			best = i;
	if (members && counts[best] &&
	    counts[best] >= r->v[R_CLUSTER_MIN_SHARE] * members)
		return best;
	return LABEL_NORMAL;
}
