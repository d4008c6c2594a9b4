/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Labelling: thrash, false sharing, leak or normal, each with a one-line
 * reason that quotes the numbers.  The thresholds live in one table, named,
 * overridable from the command line (--rule NAME=VALUE) or a file (--rules).
 */
#ifndef CS_CLASSIFY_H
#define CS_CLASSIFY_H

#include <stddef.h>
#include "features.h"

enum cs_label {
	LABEL_NORMAL,
	LABEL_THRASH,
	LABEL_FALSE_SHARING,
	LABEL_LEAK,
	LABEL_COUNT,
};

enum rule_id {
	R_THRASH_REFAULT_SHARE,
	R_THRASH_MIN_REFAULT_PAGES_S,
	R_THRASH_CHURN_OPS_S,
	R_THRASH_CHURN_LIFETIME_NS,
	R_FS_MAX_LOCALITY,
	R_FS_MIN_SAME_SIZE,
	R_FS_MIN_REMOTE_FREES_S,
	R_FS_MAX_LIFETIME_NS,
	R_LEAK_MIN_WINDOWS,
	R_LEAK_MIN_GROWTH_S,
	R_LEAK_MAX_FREE_RATIO,
	R_CLUSTER_MIN_SHARE,
	RULE_COUNT,
};

struct rule_def {
	const char *name;
	double value;		/* default */
	const char *meaning;
};

extern const struct rule_def rule_defs[RULE_COUNT];

struct rules {
	double v[RULE_COUNT];
};

const char *label_name(enum cs_label l);
void rules_defaults(struct rules *r);
/* Apply "NAME=VALUE".  Returns 0, -ENOENT (no such rule) or -EINVAL. */
int rules_set(struct rules *r, const char *assignment);
/* Apply a file of "NAME = VALUE" lines ('#' starts a comment).  Returns 0
 * or -errno; on a bad line, *bad_line is its number (else 0). */
int rules_load(struct rules *r, const char *path, int *bad_line);

/* Label one vector; reason gets one line with the numbers behind it, and
 * for an anomaly, the process's GPU work of the same window if it had any. */
enum cs_label classify(const struct rules *r, const char *key,
		       const struct fvec *f, const struct evidence *e,
		       char *reason, size_t n);

/* Label a cluster from its members' labels: the commonest anomaly label
 * when at least cluster_min_share of the members carry it. */
enum cs_label classify_cluster(const struct rules *r, const unsigned int *counts,
			       unsigned int members);

#endif
