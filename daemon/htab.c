// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Open addressing with linear probing and backward-shift removal: see htab.h. */
#include <errno.h>
#include <stdlib.h>
#include "htab.h"

void htab_init(struct htab *h, size_t first_cap, unsigned int load_num, unsigned int load_den,
	       htab_hash_fn hash, htab_eq_fn eq, void *ctx)
{
	*h = (struct htab){ .first_cap = first_cap, .load_num = load_num, .load_den = load_den,
			    .hash = hash, .eq = eq, .ctx = ctx };
}

void htab_release(struct htab *h)
{
	free(h->slot);
	h->slot = NULL;
	h->cap = h->n = 0;
}

/* Every entry again into an array of cap slots, in the old slot order. */
static int rehash(struct htab *h, size_t cap)
{
	void **slot = calloc(cap, sizeof(*slot));
	size_t i, j;

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++) {
		if (!h->slot[i])
			continue;
		j = h->hash(h->slot[i], h->ctx) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = h->slot[i];
	}
	free(h->slot);
	h->slot = slot;
	h->cap = cap;
	return 0;
}

int htab_reserve(struct htab *h)
{
	return h->cap ? 0 : rehash(h, h->first_cap);
}

size_t htab_slot(const struct htab *h, uint64_t hash, const void *key)
{
	size_t mask = h->cap - 1, i;

	if (!h->cap)
		return SIZE_MAX;
	for (i = hash & mask; h->slot[i] && !h->eq(h->slot[i], key, h->ctx); i = (i + 1) & mask)
		;
	return i;
}

void *htab_find(const struct htab *h, uint64_t hash, const void *key)
{
	size_t i = htab_slot(h, hash, key);

	return i == SIZE_MAX ? NULL : h->slot[i];
}

int htab_insert(struct htab *h, void *entry)
{
	size_t mask, i;

	if (!h->cap && rehash(h, h->first_cap))
		return -ENOMEM;
	if ((h->n + 1) * h->load_den > h->cap * h->load_num && rehash(h, h->cap * 2))
		return -ENOMEM;
	mask = h->cap - 1;
	for (i = h->hash(entry, h->ctx) & mask; h->slot[i]; i = (i + 1) & mask)
		;
	h->slot[i] = entry;
	h->n++;
	return 0;
}

/* Take out the entry in slot i, shifting the rest of its run back. */
static void remove_at(struct htab *h, size_t i)
{
	size_t mask = h->cap - 1, j = i, home;

	h->slot[i] = NULL;
	h->n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!h->slot[j])
			return;
		home = h->hash(h->slot[j], h->ctx) & mask;
		/* stays when its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		h->slot[i] = h->slot[j];
		h->slot[j] = NULL;
		i = j;
	}
}

void htab_remove(struct htab *h, const void *entry)
{
	size_t mask = h->cap - 1, i;

	for (i = h->hash(entry, h->ctx) & mask; h->slot[i] != entry; i = (i + 1) & mask)
		;
	remove_at(h, i);
}

int htab_filter(struct htab *h, bool (*keep)(void *entry, void *arg), void *arg)
{
	void **slot;
	size_t i, j, kept = 0;

	if (!h->cap)
		return 0;
	slot = calloc(h->cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	/* the survivors into a new array, in the old slot order */
	for (i = 0; i < h->cap; i++) {
		if (!h->slot[i] || !keep(h->slot[i], arg))
			continue;
		j = h->hash(h->slot[i], h->ctx) & (h->cap - 1);
		while (slot[j])
			j = (j + 1) & (h->cap - 1);
		slot[j] = h->slot[i];
		kept++;
	}
	free(h->slot);
	h->slot = slot;
	h->n = kept;
	return 0;
}
