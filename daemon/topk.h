/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exact counts of the first TOPK_SLOTS distinct values of a window (sizes
 * requested, call sites); whatever comes after they are taken is summed in
 * other.  A window's values are few and repeat, so a linear scan over 32
 * slots beats a hash; the entropy of the tail is bounded from above by
 * counting it as singletons.
 */
#ifndef CS_TOPK_H
#define CS_TOPK_H

#include <stdint.h>

#define TOPK_SLOTS 32

struct topk {
	uint64_t val[TOPK_SLOTS];
	uint32_t cnt[TOPK_SLOTS];
	uint32_t n;
	uint64_t other;
};

void topk_add(struct topk *t, uint64_t val);
void topk_add_n(struct topk *t, uint64_t val, uint32_t n);	/* n times */
uint64_t topk_total(const struct topk *t);
uint32_t topk_max(const struct topk *t);	/* the largest count, 0 if none */
uint64_t topk_argmax(const struct topk *t);	/* the commonest value, 0 if none */
double topk_entropy(const struct topk *t);	/* bits, 0 if none */

#endif
