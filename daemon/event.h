/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Decoding of ring-buffer records.
 */
#ifndef CS_EVENT_H
#define CS_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include "../bpf/cachescope.h"

/* Copy a record out of the ring into *out after checking its size and
 * type.  Returns 0, or -EINVAL for a record this daemon does not know. */
int event_decode(const void *data, size_t size, struct cs_event *out);

#endif
