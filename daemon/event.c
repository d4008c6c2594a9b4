// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Decoding of ring-buffer records: the ring gives 8-byte aligned bytes, the
 * rest of the daemon wants a checked struct cs_event.
 */
#include <errno.h>
#include <string.h>
#include "event.h"

int event_decode(const void *data, size_t size, struct cs_event *out)
{
	struct cs_event e;

	if (!data || size != sizeof(e))
		return -EINVAL;
	memcpy(&e, data, sizeof(e));
	switch (e.type) {
	case CS_EV_SLAB_ALLOC:
	case CS_EV_SLAB_FREE:
		if (e.slab.shift > CS_RECORD_SHIFT_MAX || e.slab.old_shift > CS_RECORD_SHIFT_MAX)
			return -EINVAL;
		break;
	case CS_EV_PAGE_ADD:
	case CS_EV_PAGE_DEL:
		if (e.order > 31)
			return -EINVAL;
		break;
	case CS_EV_KV:
		if (e.kv.op < CS_KV_USE || e.kv.op > CS_KV_POOL)
			return -EINVAL;
		break;
	case CS_EV_GPU:
		if (e.gpu.op < CS_GPU_KERNEL || e.gpu.op > CS_GPU_OP_LAST)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	*out = e;
	return 0;
}
