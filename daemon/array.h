/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one way the tree grows an array: room for element n of an array of
 * *cap elements of size bytes each, the capacity doubled (first, when it
 * has none yet).  Header-only, so that any module and its unit test use it
 * without a link set of their own.
 */
#ifndef CS_ARRAY_H
#define CS_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* arrp: the address of the array's pointer (any element type).  0 with
 * room for element n, or -ENOMEM with the array as it was. */
static inline int array_room(void *arrp, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c = *cap ? *cap * 2 : first;
	void *p, *q;

	if (n < *cap)
		return 0;
	if (c < n + 1)
		c = n + 1;
	if (c > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&p, arrp, sizeof(p));
	q = realloc(p, c * size);
	if (!q)
		return -ENOMEM;
	memcpy(arrp, &q, sizeof(q));
	*cap = c;
	return 0;
}

#endif
