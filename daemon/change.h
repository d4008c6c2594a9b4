/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Behaviour changes found by clustering, beside the rule labels.  The rules
 * name the patterns they know; a pattern they do not know still shows as a
 * key whose newest vectors leave every cluster its own history lived in.
 * After each clustering run, for every key: its newest span (the last
 * CHANGE_AFTER_S), its history (what the analysis holds of it up to
 * CHANGE_GAP_S before that span: the gap keeps a new place's first vectors
 * out of the history they are tested against) and the history's recent
 * part (its last CHANGE_RECENT_S).  A change is a key whose newest span's
 * mean moved at least CHANGE_MIN_DIST from the recent part's (the cheap
 * test, first) and whose newest vectors, most of them
 * (CHANGE_NOVEL_SHARE), are within eps of none of the core points of its
 * history clustered as the daemon clusters all keys (the same eps and
 * min_pts): outside every cluster the key lived in, in a new place or
 * noise.  A key that comes back to a place its history knows (a server
 * whose threads the scheduler moves between CPUs, back and forth) is no
 * change; clustering all keys together could not tell, as DBSCAN chains
 * a host's ordinary keys into one large cluster.  Each change is told
 * once: the key is quiet until its new place is in its history.
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

#define CHANGE_AFTER_S 2.0	/* the newest span: the last this many seconds */
#define CHANGE_GAP_S 2.0	/* left out between history and newest span */
#define CHANGE_RECENT_S 10.0	/* the history's recent part, for the mean test */
#define CHANGE_MIN_BEFORE 50	/* vectors the history needs */
#define CHANGE_MIN_AFTER 10	/* ... and the newest span */
#define CHANGE_NOVEL_SHARE 0.8
#define CHANGE_MIN_DIST 0.2
#define CHANGE_KEEP 64		/* events kept for the CLI */

struct change {
	struct wkey key;
	char name[64];
	char comm[16];
	uint64_t window;	/* the newest span's first vector outside its history */
	int from, to;		/* clusters (CLUSTER_NOISE: noise) */
	/* mean vectors: of the history's recent part, of the newest span */
	double before[FEAT_DIM], after[FEAT_DIM];
	double dist;
};

struct changes {
	struct htab told;	/* per key: quiet until this window (a change told) */
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
