// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/stacks.c: objects kept with their stack record
 * until their free names them (by address and allocation time), the free
 * that comes before its stack, an address handed out again, the bounds;
 * and a real stack of this process, copied as the BPF program copies one,
 * unwound by the call-frame information and named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cmocka.h>
#include "../daemon/stacks.h"
#include "../bpf/cachescope.h"

/* no process's files: every stack is "?" */
static ssize_t no_maps(void *ctx, uint32_t pid, char *buf, size_t n)
{
	(void)ctx;
	(void)pid;
	(void)buf;
	(void)n;
	return -ENOENT;
}

static struct cs_stack rec;

static void add(struct stacks *st, uint32_t tgid, uint64_t cache, uint64_t ptr, uint64_t ts)
{
	memset(&rec, 0, offsetof(struct cs_stack, data));
	rec.tgid = rec.pid = rec.tid = tgid;
	rec.cache = cache;
	rec.ptr = ptr;
	rec.ts_ns = ts;
	rec.len = 64;
	stacks_add(st, &rec, sizeof(rec));
}

static void stacks__frees_by_address_and_time__live_objects_left(void **state)
{
	struct stacks *st = stacks_new(no_maps, NULL);
	struct stacks_stats s;
	struct stack_top top;

	(void)state;
	assert_non_null(st);
	add(st, 7, 0x10, 0x1000, 100);
	add(st, 7, 0x10, 0x2000, 200);
	add(st, 7, 0x10, 0x3000, 300);
	add(st, 7, 0x20, 0x4000, 300);		/* another cache: another key */
	stacks_freed(st, 0x2000, 200);
	stacks_freed(st, 0x3000, 299);		/* an older object at that address */
	assert_int_equal(stacks_top(st, 7, 0x10, 1000, 0, &top), 0);
	assert_int_equal(top.of, 2);
	assert_int_equal(top.with, 2);
	assert_string_equal(top.user, "?");
	/* only objects older than the age */
	assert_int_equal(stacks_top(st, 7, 0x10, 1000, 800, &top), 0);
	assert_int_equal(top.of, 1);
	assert_int_equal(stacks_top(st, 7, 0x10, 1000, 950, &top), -ENOENT);
	assert_int_equal(stacks_top(st, 8, 0x10, 1000, 0, &top), -ENOENT);
	/* the free read before the stack: never kept */
	stacks_freed(st, 0x5000, 500);
	add(st, 7, 0x10, 0x5000, 500);
	/* an address handed out again: its old object was freed */
	add(st, 7, 0x10, 0x1000, 600);
	assert_int_equal(stacks_top(st, 7, 0x10, 1000, 0, &top), 0);
	assert_int_equal(top.of, 2);		/* 0x1000 of 600, 0x3000 */
	stacks_get_stats(st, &s);
	assert_int_equal(s.received, 6);
	assert_int_equal(s.freed_first, 1);
	assert_int_equal(s.kept, 3);
	stacks_free(st);
}

static void stacks__key_full__turned_away_and_counted(void **state)
{
	struct stacks *st = stacks_new(no_maps, NULL);
	struct stacks_stats s;
	struct stack_top top;
	int i;

	(void)state;
	for (i = 0; i < STACKS_PER_KEY + 6; i++)
		add(st, 9, 0x30, 0x10000 + 64 * i, 10 + i);
	add(st, 10, 0x30, 0x90000, 10);		/* another process still gets room */
	stacks_get_stats(st, &s);
	assert_int_equal(s.kept, STACKS_PER_KEY + 1);
	assert_int_equal(s.turned_away, 6);
	assert_int_equal(stacks_top(st, 10, 0x30, 100, 0, &top), 0);
	/* a malformed record */
	stacks_add(st, &rec, 16);
	stacks_get_stats(st, &s);
	assert_int_equal(s.bad, 1);
	stacks_free(st);
}

/* ---- a real stack: this thread's, as stack.bpf.h copies a task's ---- */

static struct cs_stack *real;

/* the copy BPF makes with probe reads: no sanitizer's view of the bytes */
__attribute__((no_sanitize("address"), noinline))
static void copy_stack(uint8_t *dst, const uint8_t *src, size_t n)
{
	volatile const uint8_t *s = src;
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = s[i];
}

__attribute__((noinline)) void cs_test_capture(void)
{
	uint64_t sp, bp, ip;

	asm volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
		     : "=r"(sp), "=r"(bp), "=r"(ip));
	memset(real, 0, offsetof(struct cs_stack, data));
	real->regs[6] = bp;
	real->regs[7] = sp;
	real->regs[16] = ip;
	real->len = 4096;
	copy_stack(real->data, (const uint8_t *)sp, real->len);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void cs_test_leaky_handler(void)
{
	cs_test_capture();
	asm volatile("" ::: "memory");	/* not a tail call */
}

static void *capture_thread(void *arg)
{
	(void)arg;
	cs_test_leaky_handler();
	return NULL;
}

static void stacks__real_stack__unwound_and_named(void **state)
{
	struct stacks *st = stacks_new(NULL, NULL);	/* /proc/self/maps */
	struct stacks_stats s;
	pthread_attr_t attr;
	struct stack_top top;
	pthread_t t;

	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	real = calloc(1, sizeof(*real));
	assert_non_null(real);
	/* a thread of its own: its stack has room above the copy */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	assert_int_equal(pthread_create(&t, &attr, capture_thread, NULL), 0);
	pthread_join(t, NULL);
	/* the unwinder asks the thread: tid stands for a live one (this) */
	real->pid = getpid();
	real->tid = (uint32_t)syscall(SYS_gettid);
	real->tgid = 1;
	real->cache = 0x40;
	real->ptr = 0xabc0;
	real->ts_ns = 1;
	stacks_add(st, real, sizeof(*real));
	assert_int_equal(stacks_top(st, 1, 0x40, 10, 0, &top), 0);
	print_message("stack: %s\n", top.user);
	assert_non_null(strstr(top.user, "cs_test_capture (test_stacks) < cs_test_leaky_handler (test_stacks) < capture_thread (test_stacks)"));
	stacks_get_stats(st, &s);
	assert_int_equal(s.unwound, 1);
	assert_int_equal(s.named_again, 0);
	/* a second object from the same call path: its frames are the
	 * first's, their names reused, the same stack of two objects */
	real->ptr = 0xdef0;
	real->ts_ns = 2;
	stacks_add(st, real, sizeof(*real));
	assert_int_equal(stacks_top(st, 1, 0x40, 10, 0, &top), 0);
	stacks_get_stats(st, &s);
	assert_int_equal(s.unwound, 2);
	assert_int_equal(s.named_again, 1);
	assert_int_equal(top.of, 2);
	assert_int_equal(top.with, 2);
	assert_int_equal(s.unique, 1);
	assert_non_null(strstr(top.user, "cs_test_capture (test_stacks) < cs_test_leaky_handler (test_stacks) < capture_thread (test_stacks)"));
	free(real);
	stacks_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stacks__frees_by_address_and_time__live_objects_left),
		cmocka_unit_test(stacks__key_full__turned_away_and_counted),
		cmocka_unit_test(stacks__real_stack__unwound_and_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
