/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An open-addressing hash table of the caller's entries (pointers; the
 * table never copies or frees them): linear probing over a power-of-two
 * array, grown to twice its size before an insert would pass the load
 * factor, removal by backward shift, so a lookup never meets a tombstone.
 *
 * The order of the slots, which htab_next walks, follows from the
 * sequence of inserts and removes alone: the same events give the same
 * order, so outputs that walk a table are reproducible.  A walk must not
 * insert or remove (a removal moves entries); htab_filter removes as it
 * walks.
 */
#ifndef CS_HTAB_H
#define CS_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the hash of an entry's key, ctx the table's */
typedef uint64_t (*htab_hash_fn)(const void *entry, void *ctx);
/* whether entry has the key a lookup was given */
typedef bool (*htab_eq_fn)(const void *entry, const void *key, void *ctx);

struct htab {
	void **slot;
	size_t cap, n;
	size_t first_cap;		/* the size of the first array */
	unsigned int load_num, load_den;	/* grow past num/den full */
	htab_hash_fn hash;
	htab_eq_fn eq;
	void *ctx;
};

/* An empty table; no memory until the first insert (or htab_reserve). */
void htab_init(struct htab *h, size_t first_cap, unsigned int load_num, unsigned int load_den,
	       htab_hash_fn hash, htab_eq_fn eq, void *ctx);
/* The array goes; the entries are the caller's. */
void htab_release(struct htab *h);
/* Room for the first array now: 0, or -ENOMEM. */
int htab_reserve(struct htab *h);

/* The slot of the entry with key (hash its hash), or of the empty slot
 * where it would go; SIZE_MAX where the table has no array yet. */
size_t htab_slot(const struct htab *h, uint64_t hash, const void *key);
/* The entry with key, or NULL. */
void *htab_find(const struct htab *h, uint64_t hash, const void *key);
/* Insert entry (its key not in the table): 0, or -ENOMEM (not inserted;
 * the table as it was). */
int htab_insert(struct htab *h, void *entry);
/* Take out entry (in the table). */
void htab_remove(struct htab *h, const void *entry);

/* Walk: for (i = htab_next(h, 0); i < h->cap; i = htab_next(h, i + 1)) h->slot[i] */
static inline size_t htab_next(const struct htab *h, size_t i)
{
	while (i < h->cap && !h->slot[i])
		i++;
	return i;
}

/* Remove every entry for which keep returns false (keep may free it),
 * asked in slot order; the rest keep their order.  Returns 0, or -ENOMEM
 * before keep was called (nothing removed). */
int htab_filter(struct htab *h, bool (*keep)(void *entry, void *arg), void *arg);

#endif
