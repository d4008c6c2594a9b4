// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the open-addressing hash table (daemon/htab.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "../daemon/htab.h"

struct ent {
	uint64_t key;
	int gone;
};

/* every key's home is its value mod 8: collisions on purpose */
static uint64_t ent_hash(const void *e, void *ctx)
{
	(void)ctx;
	return ((const struct ent *)e)->key % 8;
}

static bool ent_is(const void *e, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct ent *)e)->key == *(const uint64_t *)key;
}

static struct ent *find(const struct htab *h, uint64_t key)
{
	return htab_find(h, key % 8, &key);
}

static void htab_find__before_any_insert__null_and_no_array(void **state)
{
	struct htab h;

	(void)state;
	htab_init(&h, 16, 7, 10, ent_hash, ent_is, NULL);
	assert_null(find(&h, 3));
	assert_int_equal(htab_slot(&h, 3, &(uint64_t){ 3 }), SIZE_MAX);
	assert_int_equal(h.cap, 0);
	htab_release(&h);
}

static void htab_insert__past_load__doubles_and_finds_all(void **state)
{
	struct ent e[40];
	struct htab h;
	size_t i;

	(void)state;
	htab_init(&h, 16, 7, 10, ent_hash, ent_is, NULL);
	for (i = 0; i < 40; i++) {
		e[i].key = i * 8 + 1;	/* all 40 share home 1 */
		assert_int_equal(htab_insert(&h, &e[i]), 0);
		/* never over 7/10 full */
		assert_true(h.n * 10 <= h.cap * 7);
	}
	assert_int_equal(h.n, 40);
	assert_int_equal(h.cap, 64);
	for (i = 0; i < 40; i++)
		assert_ptr_equal(find(&h, i * 8 + 1), &e[i]);
	assert_null(find(&h, 2));
	htab_release(&h);
}

/* Removal from the middle of a run shifts the rest back: every other key
 * of the run is still found, the removed one is not, and no slot holds it. */
static void htab_remove__middle_of_run__rest_still_found(void **state)
{
	struct ent e[6];
	struct htab h;
	size_t i, j;

	(void)state;
	htab_init(&h, 16, 7, 10, ent_hash, ent_is, NULL);
	for (i = 0; i < 6; i++) {
		e[i].key = i < 4 ? 7 + 8 * i : 8 * i;	/* a run that wraps past slot 15 */
		assert_int_equal(htab_insert(&h, &e[i]), 0);
	}
	htab_remove(&h, &e[1]);
	assert_int_equal(h.n, 5);
	assert_null(find(&h, e[1].key));
	for (i = 0; i < 6; i++)
		if (i != 1)
			assert_ptr_equal(find(&h, e[i].key), &e[i]);
	for (j = 0; j < h.cap; j++)
		assert_ptr_not_equal(h.slot[j], &e[1]);
	htab_release(&h);
}

static bool keep_odd(void *entry, void *arg)
{
	struct ent *e = entry;

	(*(int *)arg)++;
	if (e->key % 2)
		return true;
	e->gone = 1;
	return false;
}

static void htab_filter__drops_some__asks_each_once_and_keeps_rest(void **state)
{
	struct ent e[20];
	struct htab h;
	int asked = 0;
	size_t i, n = 0;

	(void)state;
	htab_init(&h, 64, 7, 10, ent_hash, ent_is, NULL);
	for (i = 0; i < 20; i++) {
		e[i] = (struct ent){ .key = i };
		assert_int_equal(htab_insert(&h, &e[i]), 0);
	}
	assert_int_equal(htab_filter(&h, keep_odd, &asked), 0);
	assert_int_equal(asked, 20);
	assert_int_equal(h.n, 10);
	for (i = 0; i < 20; i++) {
		assert_int_equal(e[i].gone, !(i % 2));
		if (i % 2)
			assert_ptr_equal(find(&h, i), &e[i]);
		else
			assert_null(find(&h, i));
	}
	for (i = htab_next(&h, 0); i < h.cap; i = htab_next(&h, i + 1))
		n++;
	assert_int_equal(n, 10);
	htab_release(&h);
}

/* The walk's order follows from the inserts and removes alone. */
static void htab_next__same_operations__same_order(void **state)
{
	struct ent e[2][30];
	struct htab h[2];
	size_t i, k, a, b;

	(void)state;
	for (k = 0; k < 2; k++) {
		htab_init(&h[k], 16, 7, 10, ent_hash, ent_is, NULL);
		for (i = 0; i < 30; i++) {
			e[k][i] = (struct ent){ .key = i * 37 % 101 };
			assert_int_equal(htab_insert(&h[k], &e[k][i]), 0);
			if (i % 4 == 3)
				htab_remove(&h[k], &e[k][i - 2]);
		}
	}
	a = htab_next(&h[0], 0);
	b = htab_next(&h[1], 0);
	while (a < h[0].cap || b < h[1].cap) {
		assert_int_equal(a, b);
		assert_int_equal(((struct ent *)h[0].slot[a])->key,
				 ((struct ent *)h[1].slot[b])->key);
		a = htab_next(&h[0], a + 1);
		b = htab_next(&h[1], b + 1);
	}
	htab_release(&h[0]);
	htab_release(&h[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(htab_find__before_any_insert__null_and_no_array),
		cmocka_unit_test(htab_insert__past_load__doubles_and_finds_all),
		cmocka_unit_test(htab_remove__middle_of_run__rest_still_found),
		cmocka_unit_test(htab_filter__drops_some__asks_each_once_and_keeps_rest),
		cmocka_unit_test(htab_next__same_operations__same_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
