/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Behaviour changes found by clustering, beside the rule labels.  The rules
 * name the patterns they know; a pattern they do not know still shows as a
 * key whose vectors leave the cluster its own recent history lived in.
 * After each clustering run, for every key: its "before" vectors (those
 * of [now - CHANGE_BEFORE_S, now - CHANGE_AFTER_S)) and its "after"
 * vectors (the last CHANGE_AFTER_S).  A change is a key whose before
 * vectors mostly (CHANGE_HOME_SHARE) sat in one cluster, its home, whose
 * after vectors mostly (CHANGE_NOW_SHARE) sit elsewhere (another cluster,
 * or noise), and whose mean vector moved at least CHANGE_MIN_DIST in the
 * scaled feature space (a cluster's id changing under a key that did not
 * move, as DBSCAN merges or splits clusters, is no change).  Each is told
 * once: the key's home is then the new place.
 *
 * Pure: reads the analysis's history, keeps its own per-key state.
 */
#ifndef CS_CHANGE_H
#define CS_CHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analysis.h"
#include "features.h"
#include "htab.h"

#define CHANGE_BEFORE_S 12.0	/* the before span starts this far back */
#define CHANGE_AFTER_S 2.0	/* the after span: the last this many seconds */
#define CHANGE_MIN_BEFORE 20	/* vectors the before span needs */
#define CHANGE_MIN_AFTER 10	/* ... and the after span */
#define CHANGE_HOME_SHARE 0.6
#define CHANGE_NOW_SHARE 0.8
#define CHANGE_MIN_DIST 0.2
#define CHANGE_KEEP 64		/* events kept for the CLI */

struct change {
	struct wkey key;
	char name[64];
	char comm[16];
	uint64_t window;	/* the after span's first vector's window */
	int from, to;		/* clusters (CLUSTER_NOISE: noise) */
	double before[FEAT_DIM], after[FEAT_DIM];	/* the spans' mean vectors */
	double dist;
};

struct changes {
	struct htab told;	/* per key: the window of its last change */
	struct change ring[CHANGE_KEEP];
	unsigned int head, n;
	uint64_t found;		/* events so far */
	uint64_t lost;		/* keys not tracked: no memory */
};

void changes_init(struct changes *c);
void changes_release(struct changes *c);

/* Find the changes of the history a holds at now_window (windows of
 * window_ns); each new one is kept and handed to fn.  Returns how many, or
 * -ENOMEM. */
int changes_scan(struct changes *c, const struct analysis *a, uint64_t now_window,
		 uint64_t window_ns, void (*fn)(const struct change *ch, void *ctx), void *ctx);
/* Key k left the window table: forget what was told of it. */
void changes_key_gone(struct changes *c, const struct wkey *k);

/* The feature names of FEAT_DIM ("freq", "hot", "entr", "loc", "numa"). */
const char *change_feature(unsigned int i);
/* One line: "kmalloc-512 of pid 12 (kvref) left cluster 3 for cluster 7 at
 * window W: freq +0.31, loc -0.62 (distance 0.70)". */
const char *change_line(char *buf, size_t n, const struct change *ch);

#endif
