// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of record decoding (daemon/event.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/event.h"

static void event_decode__valid_free__copied(void **state)
{
	struct cs_event in = { 0 }, out;
	unsigned char raw[sizeof(in) + 1];

	(void)state;
	in.type = CS_EV_SLAB_FREE;
	in.tgid = 99;
	in.slab.cache = 0xffff888000001000ull;
	in.slab.lifetime_ns = 12345;
	/* records need not be aligned in the caller's buffer */
	memcpy(raw + 1, &in, sizeof(in));
	assert_int_equal(event_decode(raw + 1, sizeof(in), &out), 0);
	assert_int_equal(out.tgid, 99);
	assert_int_equal(out.slab.lifetime_ns, 12345);
	assert_memory_equal(&in, &out, sizeof(in));
}

static void event_decode__wrong_size__einval(void **state)
{
	struct cs_event in = { .type = CS_EV_SLAB_ALLOC }, out;

	(void)state;
	assert_int_equal(event_decode(&in, sizeof(in) - 8, &out), -EINVAL);
	assert_int_equal(event_decode(&in, sizeof(in) + 8, &out), -EINVAL);
	assert_int_equal(event_decode(NULL, sizeof(in), &out), -EINVAL);
}

/* a weight of 2^shift past the largest shift the programs use is not ours */
static void event_decode__sample_shift_out_of_range__einval(void **state)
{
	struct cs_event in = { .type = CS_EV_SLAB_ALLOC }, out;

	(void)state;
	in.slab.shift = CS_RECORD_SHIFT_MAX;
	assert_int_equal(event_decode(&in, sizeof(in), &out), 0);
	in.slab.shift = CS_RECORD_SHIFT_MAX + 1;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
	in.slab.shift = 0;
	in.slab.old_shift = 200;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
}

static void event_decode__unknown_type__einval_output_untouched(void **state)
{
	struct cs_event in = { .type = 77 }, out;

	(void)state;
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
	assert_int_equal(out.type, 0xab);
	in.type = 0;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
}

static void event_decode__page_order_too_large__einval(void **state)
{
	struct cs_event in = { .type = CS_EV_PAGE_ADD, .order = 32 }, out;

	(void)state;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
	in.order = 9;
	assert_int_equal(event_decode(&in, sizeof(in), &out), 0);
	assert_int_equal(out.order, 9);
}

static void event_decode__kv_op_out_of_range__einval(void **state)
{
	struct cs_event in = { .type = CS_EV_KV }, out;

	(void)state;
	in.kv.op = CS_KV_SWAP_IN;
	assert_int_equal(event_decode(&in, sizeof(in), &out), 0);
	in.kv.op = 0;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
	in.kv.op = CS_KV_POOL + 1;
	assert_int_equal(event_decode(&in, sizeof(in), &out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_decode__valid_free__copied),
		cmocka_unit_test(event_decode__wrong_size__einval),
		cmocka_unit_test(event_decode__sample_shift_out_of_range__einval),
		cmocka_unit_test(event_decode__unknown_type__einval_output_untouched),
		cmocka_unit_test(event_decode__page_order_too_large__einval),
		cmocka_unit_test(event_decode__kv_op_out_of_range__einval),
	};

	return cmocka_run_group_tests_name("event", tests, NULL, NULL);
}
