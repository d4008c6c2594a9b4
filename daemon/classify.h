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
#include "stacks.h"

enum cs_label {
	LABEL_NORMAL,
	LABEL_THRASH,
	LABEL_FALSE_SHARING,
	LABEL_LEAK,
	LABEL_COUNT,		/* how many labels there are */
	/* no label: a rule that found nothing, a filter of every label, a
	 * name that is none of them (never stored with a vector) */
	LABEL_NONE = LABEL_COUNT,
};

enum rule_id {
	R_THRASH_REFAULT_SHARE,
	R_THRASH_MIN_REFAULT_PAGES,
	R_THRASH_MIN_REPEAT_SHARE,
	R_THRASH_MIN_SPAN_S,
	R_THRASH_MAX_QUIET_S,
	R_THRASH_NEAR_SHARE,
	R_THRASH_MIN_REFAULT_KIB_S,
	R_THRASH_MIN_STALL_SHARE,
	R_FS_MAX_LOCALITY,
	R_FS_MIN_SAME_SIZE,
	R_FS_MIN_REMOTE_FREES,
	R_FS_MAX_LIFETIME_NS,
	R_FS_MIN_OWN_SHARE,
	R_FS_MIN_WINDOWS,
	R_LEAK_MIN_GROWTH_S,
	R_LEAK_SEEN_FREE_SHARE,
	R_LEAK_MIN_RISE_S,
	R_LEAK_MIN_STEPS,
	R_LEAK_MIN_STEPS_SAMPLED,
	R_LEAK_MAX_STEP_SHARE,
	R_LEAK_MIN_STEPS_S,
	R_LEAK_MIN_OBJECTS,
	R_LEAK_MIN_SHARE,
	R_LEAK_MAX_QUIET_S,
	R_LEAK_BLIND_RISE_S,
	R_LEAK_MIN_AGE_S,
	R_LEAK_AGE_LIFETIMES,
	R_LEAK_MIN_CACHE_SHARE,
	R_LEAK_MIN_WARMUP_S,
	R_LEAK_CONFIRM_FREE_SHARE,
	R_LEAK_UNSEEN_SHARE,
	R_LEAK_CACHE_PAID_SHARE,
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

/* The one table of label names: "false_sharing" ("?" for none of them),
 * the short form of table headings ("f_share"), and back (LABEL_NONE for
 * a name that is none). */
const char *label_name(enum cs_label l);
const char *label_short(enum cs_label l);
enum cs_label label_of(const char *name);
/* What a label on a key of domain means, in a fixed phrase with no
 * number in it ("live objects keep growing and are not freed"): the
 * bounded reason a metric label or an alert carries, where the full
 * reason (its numbers change every window) would make a new series of
 * each vector.  "" for normal. */
const char *label_cause(enum cs_label l, int domain);
/* How long the kernel keeps objects of a slab cache by design before a
 * timer frees them (TIME_WAIT sockets...), 0 for none. */
uint64_t rules_expiry_ns(const char *cache);
void rules_defaults(struct rules *r);
/* Apply "NAME=VALUE".  Returns 0, -ENOENT (no such rule) or -EINVAL. */
int rules_set(struct rules *r, const char *assignment);
/* Apply a file of "NAME = VALUE" lines ('#' starts a comment).  Returns 0
 * or -errno; on a bad line, *bad_line is its number (else 0). */
int rules_load(struct rules *r, const char *path, int *bad_line);
/* Whether the file open at fd, by the name path, may be believed: 0, or
 * -EPERM with *why saying why not in a few words ("writable by group or
 * others"), or -errno.  A daemon's rules decide what it reports: a file
 * another user may write is not believed (privs_check_opened). */
typedef int (*rules_trust_fn)(int fd, const char *path, const char **why);
/* rules_load, the file first passing trust (NULL: any file): -EPERM with
 * *why when it does not. */
int rules_load_trusted(struct rules *r, const char *path, rules_trust_fn trust, int *bad_line,
		       const char **why);
/* The rules as the daemon and the offline tools take them: the defaults,
 * then the --rules file (path, may be NULL; it must pass trust, NULL: any),
 * then each --rule NAME=VALUE of args.  Returns 0, or -errno with one line
 * in msg naming the option, the file and its line ("invalid --rules F:
 * line 3: no such rule", "refusing --rules F: writable by group or
 * others (it must be root's and writable by root alone)"). */
int rules_from(struct rules *r, const char *path, rules_trust_fn trust,
	       const char *const *args, int nargs, char *msg,
	       size_t n);

/* What the kernel itself says, for the rules to check the events against.
 * Either function may be NULL; both return 0 or -errno. */
struct kview {
	/* growth per second of the kernel's own object count of a slab cache
	 * over the last span_s seconds; *got_s: the span its samples cover */
	int (*cache_growth)(void *ctx, const char *cache, double span_s,
			    double *per_s, double *got_s);
	/* objects that count can gain without showing them (its granularity) */
	long (*cache_resolution)(void *ctx, const char *cache);
	/* 1 when the kernel reclaims the cache under memory pressure */
	int (*cache_reclaimable)(void *ctx, const char *cache);
	/* "symbol+0xoff" of a kernel address */
	int (*site_name)(void *ctx, uint64_t addr, char *buf, size_t n);
	/* pages on the kernel's file LRU lists now: the memory the page
	 * cache has, against which a refault distance is small or not */
	int (*file_lru_pages)(void *ctx, uint64_t *pages);
	/* the share of [from_ns, to_ns] (CLOCK_MONOTONIC) that process
	 * tgid's cgroup (or the system, where its cgroup has none) stalled
	 * on memory, PSI's "some"; where says whose ("the system", "cgroup
	 * /x").  -ENOTSUP where the kernel has no PSI, -ENOENT when too
	 * little of the span was sampled */
	int (*memory_stall)(void *ctx, uint32_t tgid, uint64_t from_ns, uint64_t to_ns,
			    double *share, char *where, size_t n);
	/* the allocation stack most of key (tgid, cache)'s sampled live
	 * objects older than age_ns came from (stacks.h): 0, or -ENOENT
	 * where none is known; NULL: no stacks (a CSV read back) */
	int (*leak_stack)(void *ctx, uint32_t tgid, uint64_t cache, uint64_t age_ns,
			  struct stack_top *top);
	/* sampling in time (duty.h): the largest shift the alloc
	 * programs ran under over the last span_s seconds (attached 1/2^shift
	 * of the time; 0: all of it), kmalloc's where kmalloc is set (the
	 * daemon may hold it attached), and its periods a second; NULL: none
	 * (a CSV read back) */
	unsigned int (*alloc_duty)(void *ctx, double span_s, bool kmalloc, double *periods_per_s);
	/* --sample-time-frees: the frees' programs go with the allocs', so a
	 * tracked object freed between slices looks live until a slice sees
	 * its address handed out again */
	/* whether the frees were sampled in time too at any time over the
	 * last span_s seconds (--sample-time-frees, the budget's last level) */
	bool (*frees_in_time)(void *ctx, double span_s);
	void *ctx;
};

/* Label one vector of a key of domain dom (enum cs_domain); reason gets one
 * line with the numbers behind it and what contradicts them, and for an
 * anomaly, the process's GPU work of the same window if it had any.  A slab
 * leak is only called when kview says the kernel's count of the cache grows
 * too (kview NULL or without the count: the reason says it was not checked). */
enum cs_label classify(const struct rules *r, int dom, const char *key,
		       const struct fvec *f, const struct evidence *e,
		       const struct kview *kview, char *reason, size_t n);

/* Label a cluster from its members' labels: the commonest anomaly label
 * when at least cluster_min_share of the members carry it. */
enum cs_label classify_cluster(const struct rules *r, const unsigned int *counts,
			       unsigned int members);

#endif
