// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Exact counts of a window's first distinct values: see topk.h. */
#include <math.h>
#include "topk.h"

void topk_add_n(struct topk *t, uint64_t val, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		if (t->val[i] == val) {
			t->cnt[i] += n;
			return;
		}
	}
	if (t->n < TOPK_SLOTS) {
		t->val[t->n] = val;
		t->cnt[t->n++] = n;
		return;
	}
	t->other += n;
}

void topk_add(struct topk *t, uint64_t val)
{
	topk_add_n(t, val, 1);
}

uint64_t topk_total(const struct topk *t)
{
	uint64_t sum = t->other;
	uint32_t i;

	for (i = 0; i < t->n; i++)
		sum += t->cnt[i];
	return sum;
}

uint64_t topk_argmax(const struct topk *t)
{
	uint32_t i, m = 0;
	uint64_t v = 0;

	for (i = 0; i < t->n; i++) {
		if (t->cnt[i] > m) {
			m = t->cnt[i];
			v = t->val[i];
		}
	}
	return v;
}

uint32_t topk_max(const struct topk *t)
{
	uint32_t i, m = 0;

	for (i = 0; i < t->n; i++)
		if (t->cnt[i] > m)
			m = t->cnt[i];
	return m;
}

/* Shannon entropy in bits.  Values past the first TOPK_SLOTS are spread
 * over as many singletons, which bounds the entropy from above. */
double topk_entropy(const struct topk *t)
{
	double total = (double)topk_total(t), h = 0, p;
	uint32_t i;

	if (total <= 0)
		return 0;
	for (i = 0; i < t->n; i++) {
		p = t->cnt[i] / total;
		h -= p * log2(p);
	}
	if (t->other) {
		p = 1.0 / total;
		h -= (double)t->other * p * log2(p);
	}
	return h;
}
