/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Time in nanoseconds, as the records carry it (bpf_ktime_get_ns() is
 * CLOCK_MONOTONIC): one clock reading and the units, for every part of
 * the tree.
 */
#ifndef CS_CLOCK_H
#define CS_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull

/* clk now, in ns (CLOCK_MONOTONIC, CLOCK_REALTIME...). */
static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif
