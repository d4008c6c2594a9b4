/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Anomalies as an operator follows them.  A key (domain, cache, file or
 * pool, process) turns anomalous with its first vector labelled thrash,
 * false_sharing or leak, and is over when no vector of it has carried that
 * label for ANOMALY_RECOVER_NS, or another anomaly label replaces it, or
 * its key leaves the table.  Each start and end is an event handed to the
 * caller (the daemon logs it); the events are rate-limited here, a start
 * left unsaid counted and its end left unsaid too, so the log never shows
 * an end without its start.  The table of the keys anomalous now feeds
 * the metrics, `cachescope anomalies` and top's label column.
 *
 * Pure: no clock reads, no log; times are the rows' window starts
 * (CLOCK_MONOTONIC) and what the caller passes.
 */
#ifndef CS_ANOMALY_H
#define CS_ANOMALY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "classify.h"
#include "htab.h"
#include "window.h"

/* over when no vector carried its label for this long: the window of
 * recent vectors the anomalous-keys counts look back over, too */
#define ANOMALY_RECOVER_NS (10 * 1000000000ull)
/* anomalies held at once; a key past it is counted, not held */
#define ANOMALY_MAX 4096
#define ANOMALY_REASON_MAX 768

struct anomaly {
	struct wkey key;
	char name[64];		/* cache or pool name, or the file's path */
	char comm[16];
	char container[64];	/* "" when none */
	enum cs_label label;
	char reason[ANOMALY_REASON_MAX];	/* the newest vector's */
	uint64_t since_ns;	/* the window its first vector is of */
	uint64_t last_ns;	/* the window of its newest anomalous vector */
	uint64_t vectors;	/* anomalous vectors so far */
	int64_t live_objs, live_bytes;	/* at the newest anomalous vector's window end */
	double ops_per_s;	/* allocs and frees (or inserts and deletes) a second, then */
	bool said;		/* its start was told (not rate-limited) */
};

enum anomaly_event {
	ANOMALY_STARTS,
	ANOMALY_ENDS,		/* quiet for ANOMALY_RECOVER_NS */
	ANOMALY_REPLACED,	/* another anomaly label on the same key */
	ANOMALY_KEY_GONE,	/* the key left the table (its process exited...) */
	ANOMALY_UNWATCHED,	/* the daemon stops: no longer watched */
};

/* Told of an event; a->since_ns .. now_ns is how long it lasted (ends). */
typedef void (*anomaly_fn)(enum anomaly_event ev, const struct anomaly *a, uint64_t now_ns,
			   void *ctx);

struct anomalies {
	struct htab by_key;	/* of struct anomaly */
	uint64_t window_ns;	/* the rows' window, for the rates */
	anomaly_fn fn;
	void *ctx;
	/* the events' rate limit: a token bucket of burst events refilled at
	 * per_s a second (per_s 0: no limit) */
	double per_s, burst, tokens;
	uint64_t refilled_ns;
	uint64_t started, ended;	/* anomalies so far */
	uint64_t events_said, events_limited;
	uint64_t not_held;	/* anomalous vectors of keys past ANOMALY_MAX */
};

/* Events to fn (NULL: none), at most burst at once and per_s a second on
 * average (per_s 0: every one); rows of window_ns windows. */
void anomalies_init(struct anomalies *as, uint64_t window_ns, anomaly_fn fn, void *ctx,
		    double per_s, double burst);
void anomalies_release(struct anomalies *as);

/* Row r's vector carried label, for reason; container is its process's
 * ("" or NULL: none).  A normal label does nothing.  0, or -ENOMEM (the
 * anomaly not held, counted in not_held). */
int anomalies_vector(struct anomalies *as, const struct wrow *r, enum cs_label label,
		     const char *reason, const char *container);
/* End the anomalies quiet for ANOMALY_RECOVER_NS by now_ns (a window
 * start on the rows' clock). */
void anomalies_expire(struct anomalies *as, uint64_t now_ns);
/* End every anomaly: the daemon stops watching (ANOMALY_UNWATCHED). */
void anomalies_end_all(struct anomalies *as, uint64_t now_ns);
/* End key's anomaly, if it has one: its key left the table. */
void anomalies_key_gone(struct anomalies *as, const struct wkey *key, uint64_t now_ns);

/* The log line of an event (no program name, no newline):
 *   leak starts: slab filp of pid 1234 (fdchurn) in container web-1: REASON
 *   leak ends after 42.3 s: slab filp of pid 1234 (fdchurn) in container
 *     web-1: no leak vector for 10 s (1234 vectors)
 * ends say why: quiet for the recovery time, another label took its
 * place, or its key left the table (its process exited).  Names are as
 * the processes gave them; the log escapes them.  Returns buf. */
const char *anomaly_line(char *buf, size_t n, enum anomaly_event ev, const struct anomaly *a,
			 uint64_t now_ns);

/* The anomaly of key now, or NULL. */
const struct anomaly *anomalies_find(const struct anomalies *as, const struct wkey *key);
/* The anomalies now, most live bytes first (ties: oldest first), into a
 * malloc'd array of pointers (*out, freed by free()); how many, or
 * -ENOMEM.  Valid until the next change. */
int anomalies_sorted(const struct anomalies *as, const struct anomaly ***out);

#endif
