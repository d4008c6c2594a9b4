// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/tpproto.c: the prototype check that picks a BTF or
 * a classic tracepoint, on type information written here with libbpf's
 * BTF writer in the two shapes kernels have had (bpf/core_fixes.bpf.h),
 * and on this machine's kernel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include "../daemon/tpproto.h"

/* typedef void (*btf_trace_<tp>)(void *, unsigned long, const void *,
 * <third>, gfp_t, int): third is the cache (6.1 on) or a size (before). */
static struct btf *kernel_like(const char *tp, bool cache_arg)
{
	struct btf *btf = btf__new_empty();
	int ulong, uint, sint, vptr, cvoid, cvptr, cache, cache_ptr, third, proto, fptr;

	assert_non_null(btf);
	ulong = btf__add_int(btf, "long unsigned int", 8, 0);
	uint = btf__add_int(btf, "unsigned int", 4, 0);
	sint = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	vptr = btf__add_ptr(btf, 0);
	cvoid = btf__add_const(btf, 0);
	cvptr = btf__add_ptr(btf, cvoid);
	cache = btf__add_struct(btf, "kmem_cache", 8);
	assert_int_equal(btf__add_field(btf, "size", uint, 0, 0), 0);
	cache_ptr = btf__add_ptr(btf, cache);
	third = cache_arg ? cache_ptr : btf__add_typedef(btf, "size_t", ulong);
	proto = btf__add_func_proto(btf, 0);
	assert_true(proto > 0);
	assert_int_equal(btf__add_func_param(btf, "__data", vptr), 0);
	assert_int_equal(btf__add_func_param(btf, "call_site", ulong), 0);
	assert_int_equal(btf__add_func_param(btf, "ptr", cvptr), 0);
	assert_int_equal(btf__add_func_param(btf, cache_arg ? "s" : "bytes_req", third), 0);
	assert_int_equal(btf__add_func_param(btf, "gfp_flags", uint), 0);
	assert_int_equal(btf__add_func_param(btf, cache_arg ? "node" : "bytes_alloc",
					     cache_arg ? sint : ulong), 0);
	fptr = btf__add_ptr(btf, proto);
	{
		char name[96];

		snprintf(name, sizeof(name), "btf_trace_%s", tp);
		assert_true(btf__add_typedef(btf, name, fptr) > 0);
	}
	return btf;
}

static void test_kmem_cache_alloc_shapes(void **state)
{
	struct btf *now = kernel_like("kmem_cache_alloc", true);
	struct btf *old = kernel_like("kmem_cache_alloc", false);

	(void)state;
	assert_true(tpproto_ok(now, "kmem_cache_alloc"));
	assert_false(tpproto_ok(old, "kmem_cache_alloc"));
	/* a tracepoint the kernel lacks */
	assert_false(tpproto_ok(now, "kmalloc"));
	btf__free(now);
	btf__free(old);
}

/* Only kmem_cache_alloc's prototype is checked: any other tracepoint the
 * kernel has is taken as it is. */
static void test_other_tracepoints_by_name(void **state)
{
	struct btf *btf = kernel_like("kfree", false);

	(void)state;
	assert_true(tpproto_ok(btf, "kfree"));
	assert_false(tpproto_ok(btf, "kmem_cache_alloc"));
	btf__free(btf);
}

/* This machine's kernel (6.1 or later here) has every tracepoint in the
 * shape the programs take. */
static void test_this_kernel(void **state)
{
	static const char *const tps[] = {
		"kmem_cache_alloc", "kmem_cache_free", "kmalloc", "kfree",
		"mm_filemap_add_to_page_cache", "mm_filemap_delete_from_page_cache",
		"sched_process_exec", "sched_process_fork", "sched_process_exit",
	};
	struct btf *btf;
	size_t i;

	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	btf = btf__load_vmlinux_btf();
	assert_non_null(btf);
	for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++)
		assert_true(tpproto_ok(btf, tps[i]));
	btf__free(btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kmem_cache_alloc_shapes),
		cmocka_unit_test(test_other_tracepoints_by_name),
		cmocka_unit_test(test_this_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
