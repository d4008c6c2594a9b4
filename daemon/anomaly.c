// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The anomalies now, and their starts and ends (anomaly.h).  One entry a
 * key in a hash table; the events go through a token bucket so that a
 * flood of them (many processes' keys turning at once) costs a bounded
 * number of log lines, the rest counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anomaly.h"
#include "clock.h"

static uint64_t by_key_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return wkey_hash(&((const struct anomaly *)entry)->key);
}

static bool by_key_eq(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return wkey_eq(&((const struct anomaly *)entry)->key, key);
}

void anomalies_init(struct anomalies *as, uint64_t window_ns, anomaly_fn fn, void *ctx,
		    double per_s, double burst)
{
	memset(as, 0, sizeof(*as));
	as->window_ns = window_ns;
	htab_init(&as->by_key, 64, 7, 10, by_key_hash, by_key_eq, NULL);
	as->fn = fn;
	as->ctx = ctx;
	as->per_s = per_s;
	as->burst = burst;
	as->tokens = burst;
}

void anomalies_release(struct anomalies *as)
{
	size_t i;

	for (i = htab_next(&as->by_key, 0); i < as->by_key.cap; i = htab_next(&as->by_key, i + 1))
		free(as->by_key.slot[i]);
	htab_release(&as->by_key);
}

/* Whether an event may be told now: a token taken, else counted. */
static bool may_tell(struct anomalies *as, uint64_t now_ns)
{
	if (as->per_s <= 0)
		return true;
	if (now_ns > as->refilled_ns) {
		as->tokens += (double)(now_ns - as->refilled_ns) / NSEC_PER_SEC * as->per_s;
		if (as->tokens > as->burst)
			as->tokens = as->burst;
		as->refilled_ns = now_ns;
	}
	if (as->tokens >= 1) {
		as->tokens -= 1;
		return true;
	}
	return false;
}

static void tell(struct anomalies *as, enum anomaly_event ev, struct anomaly *a, uint64_t now_ns)
{
	bool start = ev == ANOMALY_STARTS;

	/* an end is told when its start was, whatever the bucket holds */
	if (start ? !may_tell(as, now_ns) : !a->said) {
		as->events_limited++;
		return;
	}
	if (start)
		a->said = true;
	as->events_said++;
	if (as->fn)
		as->fn(ev, a, now_ns, as->ctx);
}

static void end(struct anomalies *as, struct anomaly *a, enum anomaly_event ev, uint64_t now_ns)
{
	as->ended++;
	tell(as, ev, a, now_ns);
	htab_remove(&as->by_key, a);
	free(a);
}

int anomalies_vector(struct anomalies *as, const struct wrow *r, enum cs_label label,
		     const char *reason, const char *container)
{
	struct anomaly *a;
	const struct wslot *s = r->s;
	double secs;

	if (label == LABEL_NORMAL || label >= LABEL_COUNT)
		return 0;
	a = htab_find(&as->by_key, wkey_hash(r->key), r->key);
	if (a && a->label != label) {
		end(as, a, ANOMALY_REPLACED, r->start_ns);
		a = NULL;
	}
	if (!a) {
		if (as->by_key.n >= ANOMALY_MAX) {
			as->not_held++;
			return 0;
		}
		a = calloc(1, sizeof(*a));
		if (a)
			a->key = *r->key;	/* what the table hashes */
		if (!a || htab_insert(&as->by_key, a)) {
			free(a);
			as->not_held++;
			return -ENOMEM;
		}
		a->label = label;
		a->since_ns = r->start_ns;
		snprintf(a->name, sizeof(a->name), "%s", r->file && r->file[0] ? r->file : r->name);
		as->started++;
	}
	/* the process may have renamed itself meanwhile: the newest name */
	snprintf(a->comm, sizeof(a->comm), "%s", r->comm ? r->comm : "");
	snprintf(a->container, sizeof(a->container), "%s", container ? container : "");
	snprintf(a->reason, sizeof(a->reason), "%s", reason ? reason : "");
	a->last_ns = r->start_ns;
	a->vectors++;
	a->live_objs = r->live_objs;
	a->live_bytes = r->live_bytes;
	secs = (double)as->window_ns / NSEC_PER_SEC;
	a->ops_per_s = s && secs > 0 ?
		       (double)(s->allocs + s->frees + s->page_adds + s->page_dels) / secs : 0;
	if (a->vectors == 1)
		tell(as, ANOMALY_STARTS, a, r->start_ns);
	return 0;
}

struct expiry {
	struct anomalies *as;
	uint64_t now_ns;
};

static bool still(void *entry, void *arg)
{
	struct anomaly *a = entry;
	struct expiry *x = arg;

	if (a->last_ns + ANOMALY_RECOVER_NS > x->now_ns)
		return true;
	x->as->ended++;
	tell(x->as, ANOMALY_ENDS, a, x->now_ns);
	free(a);
	return false;
}

void anomalies_expire(struct anomalies *as, uint64_t now_ns)
{
	struct expiry x = { as, now_ns };

	/* -ENOMEM: none removed now; the next call tries again */
	(void)htab_filter(&as->by_key, still, &x);
}

static bool none(void *entry, void *arg)
{
	struct anomaly *a = entry;
	struct expiry *x = arg;

	x->as->ended++;
	tell(x->as, ANOMALY_UNWATCHED, a, x->now_ns);
	free(a);
	return false;
}

void anomalies_end_all(struct anomalies *as, uint64_t now_ns)
{
	struct expiry x = { as, now_ns };

	(void)htab_filter(&as->by_key, none, &x);
}

void anomalies_key_gone(struct anomalies *as, const struct wkey *key, uint64_t now_ns)
{
	struct anomaly *a = htab_find(&as->by_key, wkey_hash(key), key);

	if (a)
		end(as, a, ANOMALY_KEY_GONE, now_ns);
}

const char *anomaly_line(char *buf, size_t n, enum anomaly_event ev, const struct anomaly *a,
			 uint64_t now_ns)
{
	char who[64], where[96] = "";
	const char *label = label_name(a->label);
	size_t len;

	if (a->key.tgid == CS_TGID_OTHER)
		snprintf(who, sizeof(who), "other processes");
	else if (tgid_is_family(a->key.tgid))
		snprintf(who, sizeof(who), "young processes (%s)", a->comm);
	else
		snprintf(who, sizeof(who), "pid %u (%s)", a->key.tgid, a->comm);
	if (a->container[0])
		snprintf(where, sizeof(where), " in container %s", a->container);
	if (ev == ANOMALY_STARTS) {
		snprintf(buf, n, "%s starts: %s %s of %s%s: %s", label, domain_name(a->key.domain),
			 a->name, who, where, a->reason);
		return buf;
	}
	len = (size_t)snprintf(buf, n, "%s ends after %.1f s: %s %s of %s%s: ", label,
			       (double)(now_ns - a->since_ns) / NSEC_PER_SEC,
			       domain_name(a->key.domain), a->name, who, where);
	if (len >= n)
		return buf;
	if (ev == ANOMALY_ENDS)
		snprintf(buf + len, n - len, "no %s vector for %.0f s (%llu vectors)", label,
			 (double)ANOMALY_RECOVER_NS / NSEC_PER_SEC, (unsigned long long)a->vectors);
	else if (ev == ANOMALY_REPLACED)
		snprintf(buf + len, n - len, "another label took its place (%llu vectors)",
			 (unsigned long long)a->vectors);
	else if (ev == ANOMALY_UNWATCHED)
		snprintf(buf + len, n - len, "still on when the daemon stops (%llu vectors)",
			 (unsigned long long)a->vectors);
	else
		snprintf(buf + len, n - len, "its key is gone: the process exited or the key was merged (%llu vectors)",
			 (unsigned long long)a->vectors);
	return buf;
}

const struct anomaly *anomalies_find(const struct anomalies *as, const struct wkey *key)
{
	return htab_find(&as->by_key, wkey_hash(key), key);
}

static int by_bytes(const void *x, const void *y)
{
	const struct anomaly *a = *(const struct anomaly *const *)x;
	const struct anomaly *b = *(const struct anomaly *const *)y;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes < b->live_bytes ? 1 : -1;
	if (a->since_ns != b->since_ns)
		return a->since_ns < b->since_ns ? -1 : 1;
	return wkey_cmp(&a->key, &b->key);
}

int anomalies_sorted(const struct anomalies *as, const struct anomaly ***out)
{
	const struct anomaly **v;
	size_t i, n = 0;

	*out = NULL;
	if (!as->by_key.n)
		return 0;
	v = malloc(as->by_key.n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = htab_next(&as->by_key, 0); i < as->by_key.cap; i = htab_next(&as->by_key, i + 1))
		v[n++] = as->by_key.slot[i];
	qsort(v, n, sizeof(*v), by_bytes);
	*out = v;
	return (int)n;
}
