// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the labelling rules (daemon/classify.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "../daemon/classify.h"

static struct rules rules;
static struct fvec f;
static struct evidence e;
static struct wrow row;	/* e.r */
static struct wslot slot;	/* row.s */
static char reason[384];

/* The kernel's count as the test sets it. */
static double kgrowth;
static int kerr;
static char kasked[64];

static int fake_growth(void *ctx, const char *cache, double span_s, double *per_s,
		       double *got_s)
{
	(void)ctx;
	snprintf(kasked, sizeof(kasked), "%s", cache);
	if (kerr)
		return kerr;
	*per_s = kgrowth;
	*got_s = span_s;
	return 0;
}

static int fake_site(void *ctx, uint64_t addr, char *buf, size_t n)
{
	(void)ctx;
	snprintf(buf, n, "%s", addr == 0xffffffff81234567ull ? "alloc_empty_file+0x4a" :
			       addr == 0xffffffff81300058ull ? "alloc_slab_obj_exts+0x58" :
			       addr == 0xffffffff81400170ull ? "__d_alloc+0x170" :
			       addr == 0xffffffff81500027ull ? "security_file_alloc+0x27" :
			       addr == 0xffffffff81600086ull ? "__alloc_skb+0x86" :
			       addr == 0xffffffff81700a90ull ? "copy_process+0xa90" :
			       addr == 0xffffffff818002aeull ? "__inet_hash_connect+0x2ae" : "?");
	return 0;
}

static uint64_t lru_pages;

static int fake_lru(void *ctx, uint64_t *pages)
{
	(void)ctx;
	*pages = lru_pages;
	return lru_pages ? 0 : -ENODATA;
}

static long kres;

static long fake_res(void *ctx, const char *cache)
{
	(void)ctx;
	(void)cache;
	return kres;
}

static int fake_reclaimable(void *ctx, const char *cache)
{
	(void)ctx;
	return !strcmp(cache, "buffer_head") || !strcmp(cache, "dentry");
}

/* PSI as the daemon would give it: the share and whose, or an error */
static double stall_share;
static int stall_err = -ENOTSUP;
static uint64_t stall_from, stall_to;

static int fake_stall(void *ctx, uint32_t tgid, uint64_t from_ns, uint64_t to_ns, double *share,
		      char *where, size_t n)
{
	(void)ctx;
	(void)tgid;
	stall_from = from_ns;
	stall_to = to_ns;
	if (stall_err)
		return stall_err;
	*share = stall_share;
	snprintf(where, n, "cgroup /web");
	return 0;
}

/* the row's key (a process no stack is known for, unless a test says) */
static struct wkey row_key;

/* the allocation stack of a key's old objects: known for pid 4242 alone */
static uint64_t stack_age_asked;

static int fake_stack(void *ctx, uint32_t tgid, uint64_t cache, uint64_t age_ns,
		      struct stack_top *top)
{
	(void)ctx;
	(void)cache;
	stack_age_asked = age_ns;
	if (tgid != 4242)
		return -ENOENT;
	snprintf(top->user, sizeof(top->user), "open64 (libc.so.6) < remember (srv) < main (srv)");
	snprintf(top->kernel, sizeof(top->kernel), "alloc_empty_file < path_openat");
	top->with = 5;
	top->of = 6;
	return 0;
}

/* sampling in time: the alloc programs attached 1/2^duty_shift
 * of each of 10 periods a second; the span asked */
static unsigned int duty_shift;
static double duty_span;

static bool duty_kmalloc;	/* asked about kmalloc's program */

static unsigned int fake_duty(void *ctx, double span_s, bool kmalloc, double *periods_per_s)
{
	(void)ctx;
	duty_span = span_s;
	duty_kmalloc = kmalloc;
	*periods_per_s = 10;
	return duty_shift;
}

/* the frees sampled in time too over the span asked about */
static bool frees_cycled;
static double frees_span;

static bool fake_frees(void *ctx, double span_s)
{
	(void)ctx;
	frees_span = span_s;
	return frees_cycled;
}

static struct kview kview = { fake_growth, fake_res, fake_reclaimable, fake_site,
			      fake_lru, fake_stall, fake_stack, fake_duty, fake_frees, NULL };

static enum cs_label label(int dom, const char *key)
{
	return classify(&rules, dom, key, &f, &e, &kview, reason, sizeof(reason));
}

static int setup(void **state)
{
	(void)state;
	rules_defaults(&rules);
	memset(&f, 0, sizeof(f));
	memset(&e, 0, sizeof(e));
	memset(&row, 0, sizeof(row));
	memset(&slot, 0, sizeof(slot));
	e.r = &row;
	row.s = &slot;
	row_key = (struct wkey){ .tgid = 77 };
	row.key = &row_key;
	f.raw[FEAT_LOCALITY] = 1.0;
	f.raw[FEAT_FREQ] = 1000;
	slot.allocs = 100;
	slot.frees = 100;
	e.free_ratio = 1.0;
	row.lifetime_p50_ns = 1000000;
	e.window_s = 0.1;
	kgrowth = 0;
	kerr = 0;
	kasked[0] = 0;
	lru_pages = 0;
	kres = 84;
	stall_err = -ENOTSUP;
	stall_share = 0;
	duty_shift = 0;
	duty_span = 0;
	return 0;
}

static void classify__ordinary_churn__normal(void **state)
{
	(void)state;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: filp"));
}

/* A file that keeps coming back: refaults over seconds, pages back again. */
static void thrashing_file(void)
{
	slot.page_adds = 512;
	slot.refault_pages = 500;
	slot.repeat_pages = 400;
	e.refault_share = 500.0 / 512;
	row.refault_dist_p50 = 42;
	row.recent_page_adds = 9500;
	row.recent_refault_pages = 9000;
	row.recent_repeat_pages = 7200;
	row.refault_windows = 25;
	row.refault_span_s = 3.2;
}

/* Device memory's blocks out and back (CUPTI's copy callbacks): back within
 * a pool's worth for seconds is GPU KV thrash, in its own words; blocks
 * back only from far, or not for long, are not. */
static void classify__gpu_blocks_back_within_a_pool__thrash_in_its_words(void **state)
{
	(void)state;
	thrashing_file();
	slot.page_dels = 600;
	row.live_bytes = 64ll << 20;
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_THRASH);
	assert_string_equal(reason, "thrash: gpu-memory 600 copies out of device memory and 500 blocks back in from where they went; 9000 back over 3.2 s, 80% of them within a pool's worth of copies out (64.0 MiB of device memory)");
	row.recent_repeat_pages = 100;		/* from far: a pool turned over */
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "1% of them within a pool's worth of copies out (64.0 MiB of device memory): from far, each once"));
	thrashing_file();
	row.refault_span_s = 0.1;		/* a burst */
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_NORMAL);
	assert_non_null(strstr(reason, ": not sustained"));
}

static void classify__refaults_repeat_for_seconds__thrash_with_numbers(void **state)
{
	(void)state;
	thrashing_file();
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_string_equal(reason, "thrash: 254:0:12 500 of 512 inserted pages refaulted (98%); 9000 refaulted over 3.2 s (11.0 MiB/s), 80% of them back a second time or more; median refault distance 42 evictions; no memory stall figure (no PSI in this kernel or view)");
	/* a window of the thrashing file with no refault of its own */
	slot.refault_pages = 0;
	slot.repeat_pages = 0;
	e.refault_share = 0;
	row.refault_quiet_s = 0.4;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_int_equal(label(DOM_KV, "kv-pool"), LABEL_THRASH);
	/* the refaults stopped 1.5 s ago: it thrashed, it does not now (a
	 * pool after its thrashing phase, the file's history still full) */
	row.refault_quiet_s = 1.5;
	assert_int_equal(label(DOM_KV, "kv-pool"), LABEL_NORMAL);
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	row.refault_quiet_s = 0;
	/* a few refaults in a large insert stream are not thrash */
	thrashing_file();
	row.recent_page_adds = 60000;
	slot.refault_pages = 100;
	e.refault_share = 100.0 / 512;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	/* nor is a high share of very few pages */
	thrashing_file();
	row.recent_refault_pages = 20;
	row.recent_repeat_pages = 20;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
}

static void classify__one_cold_pass_after_eviction__normal_cold_reread(void **state)
{
	(void)state;
	thrashing_file();
	/* every page back once: a drop_caches, then one read */
	slot.repeat_pages = 0;
	row.recent_repeat_pages = 0;
	slot.refault_pages = 318;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: 254:0:12 cold re-read: 318 pages refaulted once"));
	/* repeats, but all within a moment: one burst, not persistence */
	thrashing_file();
	row.refault_span_s = 0.3;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: 254:0:12 refaults not sustained: 500 pages"));
	/* once each, far: evicted with a whole cache (drop_caches) */
	thrashing_file();
	row.recent_repeat_pages = 0;
	row.refault_dist_p50 = 300000;
	lru_pages = 100000;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "median refault distance 300000 evictions of 100000 file LRU pages)"));
}

static void classify__pages_back_soon_and_again__thrash_by_distance_and_repeats(void **state)
{
	(void)state;
	/* pages back again and again, soon after their eviction: the
	 * kernel's workingset test says a larger cache would keep them */
	thrashing_file();
	row.refault_dist_p50 = 96;
	lru_pages = 100000;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_non_null(strstr(reason, "80% of them back a second time or more; median refault distance 96 evictions of 100000 file LRU pages"));
	/* each back once, however soon, for seconds: one pass over pages
	 * proactive reclaim took (a program's libraries at its start) */
	row.recent_repeat_pages = 0;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "cold re-read"));
	/* again and again, but from far: a larger cache would not keep them */
	row.recent_repeat_pages = 7200;
	row.refault_dist_p50 = 60000;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: 254:0:12 refaults from far"));
	/* without the kernel's LRU size the repeats decide */
	lru_pages = 0;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
}

/*
 * Thrash must cost something.  A few pages a window, every one back (the
 * issue's negative controls: 2-4 pages a 100 ms window under DAMON's
 * proactive reclaim) are too few; refaults enough in bytes but with no
 * memory stall where PSI says so are reclaim coming back; with a stall
 * it is thrash, and the reason quotes both.
 */
static void classify__refaults_without_cost__normal_with_stall__thrash(void **state)
{
	(void)state;
	/* 3 pages a window for 3.2 s: 32 windows of them, 96 pages, all back */
	thrashing_file();
	row.recent_refault_pages = 96;
	row.recent_repeat_pages = 96;
	row.recent_page_adds = 96;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_string_equal(reason, "normal: 254:0:12 refaults too few to cost: 120 KiB/s over 3.2 s (96 pages, 100% back a second time; thrash needs 256 KiB/s): cold pages coming back now and then, such as proactive reclaim's");
	/* the same of a KV pool (no PSI there) */
	assert_int_equal(label(DOM_KV, "kv-pool"), LABEL_NORMAL);
	/* bytes enough, but nobody stalled on memory meanwhile */
	thrashing_file();
	row.start_ns = 50ull * 1000000000;
	stall_err = 0;
	stall_share = 0.0004;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	assert_string_equal(reason, "normal: 254:0:12 refaults with no memory stall: 11250 KiB/s refaulted over 3.2 s, but cgroup /web stalled on memory 0.04% of the time (PSI some; thrash needs 1.0%): the kernel's proactive reclaim taking cold pages that come back, not a working set that does not fit");
	/* the span asked: the refaults' span and the window, up to its end */
	assert_int_equal(stall_to, 50ull * 1000000000 + 100000000);
	assert_int_equal(stall_to - stall_from, 3300000000ull);
	/* a KV pool's swaps are not the kernel's memory: no stall asked */
	assert_int_equal(label(DOM_KV, "kv-pool"), LABEL_THRASH);
	/* with a stall: thrash, its cost in the reason */
	stall_share = 0.123;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_non_null(strstr(reason, "over 3.2 s (11.0 MiB/s), 80% of them back"));
	assert_non_null(strstr(reason, "; memory stall 12.3% of the time (cgroup /web)"));
	/* too little sampled yet: said so, the bytes decide */
	stall_err = -ENOENT;
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_non_null(strstr(reason, "; no memory stall figure (too little sampled yet)"));
	/* the thresholds are rules */
	stall_err = 0;
	stall_share = 0.004;
	assert_int_equal(rules_set(&rules, "thrash_min_stall_share = 0.002"), 0);
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_THRASH);
	assert_int_equal(rules_set(&rules, "thrash_min_refault_kib_s = 20000"), 0);
	assert_int_equal(label(DOM_PAGE, "254:0:12"), LABEL_NORMAL);
	rules_defaults(&rules);
}

/* A pure leak: objects never freed, their old population rising for 9 s. */
static void leaking_fds(void)
{
	slot.frees = 0;
	e.free_ratio = 0;
	row.growth_per_s = 330;
	row.live_objs = 3000;
	row.age_ns = 1000000000;
	row.old_objs = 2640;
	row.old_rise = 2640;
	row.old_rise_s = 8.0;
	row.old_steps = 32;
	row.old_max_step = 120;
	row.old_rise_allocs = 3000;
	row.old_rise_frees = 0;
}

static void classify__old_objects_never_freed_kernel_agrees__leak(void **state)
{
	(void)state;
	leaking_fds();
	row.top_site = 0xffffffff81234567ull;
	kgrowth = 320;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_string_equal(kasked, "filp");
	assert_string_equal(reason, "leak: filp 2640 objects older than 1.0 s, +330/s for 8.0 s (frees/allocs 0.00); cache filp +320/s over 8.0 s, hot site alloc_empty_file+0x4a");
	/* the code that allocated the old objects, where its stacks are known */
	row_key.tgid = 4242;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_string_equal(reason, "leak: filp 2640 objects older than 1.0 s, +330/s for 8.0 s (frees/allocs 0.00); cache filp +320/s over 8.0 s, hot site alloc_empty_file+0x4a; allocated at open64 (libc.so.6) < remember (srv) < main (srv) [kernel: alloc_empty_file < path_openat] (5 of 6 sampled old objects)");
	assert_int_equal(stack_age_asked, 1000000000);
	row_key.tgid = 77;
	/* never freed for less than 8 s: kfree_rcu may still hold the frees */
	row.old_rise_s = 6.0;
	row.old_rise = 1980;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* nor growth of objects none of which is old yet (TIME_WAIT sockets
	 * before their 60 s, a warm-up) */
	leaking_fds();
	row.old_objs = 0;
	assert_int_equal(label(DOM_SLAB, "tw_sock_TCP"), LABEL_NORMAL);
	assert_true(rules_expiry_ns("tw_sock_TCP") >= 60000000000ull);
	assert_int_equal(rules_expiry_ns("filp"), 0);
	/* a cache the kernel reclaims (page-cache buffer heads): cached */
	leaking_fds();
	kgrowth = 330;
	assert_int_equal(label(DOM_SLAB, "buffer_head"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "in a cache the kernel reclaims under memory pressure"));
	/* but dentries have their count in use, and are checked by it */
	assert_int_equal(label(DOM_SLAB, "dentry"), LABEL_LEAK);
	/* vmalloc areas, freed lazily by the kernel */
	assert_int_equal(label(DOM_SLAB, "vmap_area"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "vmalloc areas the kernel frees lazily"));
	/* the slab allocator's vectors for other caches' new slabs */
	row.top_site = 0xffffffff81300058ull;
	assert_int_equal(label(DOM_SLAB, "kmalloc-512"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by alloc_slab_obj_exts+0x58 for other caches' slabs"));
	/* long names of new files' dentries (a fuzzer writing its corpus):
	 * cached with their dentries, which the dentry key judges */
	row.top_site = 0xffffffff81400170ull;
	assert_int_equal(label(DOM_SLAB, "kmalloc-96"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by __d_alloc+0x170 as dentry names"));
	/* not the dentries themselves, from the same function */
	assert_int_equal(label(DOM_SLAB, "dentry"), LABEL_LEAK);
	/* a file's security blob follows its file */
	row.top_site = 0xffffffff81500027ull;
	assert_int_equal(label(DOM_SLAB, "lsm_file_cache"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by security_file_alloc+0x27 for files: freed with them (see the filp key)"));
	/* a window that allocated nothing (sampled in time, a slow key's
	 * windows hold mostly frees): the key's own last site stands */
	row.top_site = 0;
	row.key_top_site = 0xffffffff81500027ull;
	assert_int_equal(label(DOM_SLAB, "lsm_file_cache"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by security_file_alloc+0x27 for files"));
	row.key_top_site = 0;
	/* data queued on sockets for a reader (a database's clients while
	 * its backends are busy; bench/corpus.py postgres-pgbench) */
	row.top_site = 0xffffffff81600086ull;
	assert_int_equal(label(DOM_SLAB, "kmalloc-512"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by __alloc_skb+0x86 as socket buffers' data queued for a reader"));
	/* the bind buckets of connected ports, kept while a TIME_WAIT
	 * socket holds the port (stress-ng --sock, in a merged cache) */
	row.top_site = 0xffffffff818002aeull;
	assert_int_equal(label(DOM_SLAB, "eventpoll_epi"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by __inet_hash_connect+0x2ae as bind buckets of local ports"));
	row.top_site = 0;
	/* a family of young processes: each one's start-up objects, kept
	 * as it grows up (a database's backends, a compiler's writeback;
	 * postgres-pgbench and parallel-build in the corpus) */
	e.family = true;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "of young processes: what each allocated in its first second and keeps as it grows up"));
	e.family = false;
	/* a warm-up that ended: no rise for the last 3 s */
	leaking_fds();
	row.old_quiet_s = 3;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
}

static void classify__growth_the_kernel_does_not_see__normal_unseen_frees(void **state)
{
	(void)state;
	leaking_fds();
	slot.allocs = 1000;
	slot.unseen_frees = 120;
	kgrowth = 3;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_NORMAL);
	assert_string_equal(reason, "normal: skbuff_head_cache 2640 objects older than 1.0 s, +330/s for 8.0 s (frees/allocs 0.00) by events, but the kernel's count of cache skbuff_head_cache +3/s over 8.0 s: frees the tracepoints did not see (unseen frees 12% of allocs)");
	/* half the key's growth is enough: the cache has other users */
	kgrowth = 170;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; unseen frees 12% of allocs"));
	/* no kernel count to check against: labelled, and it says so */
	kerr = -ENOENT;
	assert_int_equal(label(DOM_SLAB, "kmalloc-16384"), LABEL_LEAK);
	assert_non_null(strstr(reason, "no kernel count of this cache to check"));
	/* KV blocks are seen whole by their own probes: no kernel check */
	kerr = 0;
	kgrowth = 0;
	kasked[0] = 0;
	assert_int_equal(label(DOM_KV, "kv-pool"), LABEL_LEAK);
	assert_string_equal(kasked, "");
}

/* The rows of a sampled leak: 4 s of a leak of 50/s counted as +100/s,
 * in 8 steps (2 a second), tracked 1 in 4. */
static void sampled_leak_rows(void)
{
	slot.allocs = 400;
	slot.frees = 380;
	e.free_ratio = 0.95;
	e.sample = 4;
	row.age_ns = 500000000;
	row.old_objs = 400;
	row.old_rise = 400;
	row.old_rise_s = 4.0;
	row.old_steps = 8;
	row.old_max_step = 60;
	row.old_rise_allocs = 8000;
	row.old_rise_frees = 7600;
}

/*
 * Sampled in time (1/4 of each of 10 periods a second), a leak of one burst
 * a period is caught in 1 period of 4 at random: its count may read twice
 * the truth and the kernel's count half of it; it may go 1.7 s with no
 * period caught; its steps come 1/4 as often.  The kernel's count must still
 * grow: a rise it does not see at all is not a leak.
 */
static void classify__leak_sampled_in_time__allowed_its_error_kernel_still_checked(void **state)
{
	(void)state;
	sampled_leak_rows();
	row.old_quiet_s = 1.5;
	kres = 0;
	kgrowth = 40;
	/* attached all the time, the same rows are not a leak: quiet for
	 * 1.5 s is a rise that ended */
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_null(strstr(reason, "leak"));
	row.old_quiet_s = 0.2;
	row.old_steps = 40;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "frees the tracepoints did not see"));
	assert_null(strstr(reason, "traced 1/"));
	/* 1/4 of the time: 40 periods, a count's error sqrt(3/40) = 27 %:
	 * the kernel's count must reach half of 73/s */
	duty_shift = 2;
	row.old_steps = 8;
	row.old_quiet_s = 1.5;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; cache filp +40/s over 4.0 s; allocations traced 1/4 of the time"));
	/* over the rise, the age before it and the quiet after it */
	assert_true(duty_span > 5.99 && duty_span < 6.01);
	kgrowth = 36;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "frees the tracepoints did not see (allocations traced 1/4 of the time: the events' rise at least +73/s)"));
	/* a kernel's count that does not grow contradicts any rise */
	kgrowth = 0;
	row.old_rise_s = 1.5;	/* amid churn: the 1.5 s a rise needs */
	row.old_steps = 4;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* quiet longer than 17 periods: no longer rising */
	kgrowth = 40;
	row.old_rise_s = 4.0;
	row.old_steps = 8;
	row.old_quiet_s = 1.8;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_null(strstr(reason, "leak"));
	/* 1/8 of the time: 35 periods may pass uncaught */
	duty_shift = 3;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* the steps: a quarter of 1 a second at 1/4, 5 over 20 s */
	duty_shift = 2;
	row.old_quiet_s = 0.2;
	row.old_rise_s = 20.0;
	row.old_steps = 4;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_steps = 5;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* attached all the time again, 20 are needed */
	duty_shift = 0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_steps = 20;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* a leak in bursts rises in a window only where a slice caught a
	 * burst: sampled in time, 3 windows with a rise are enough
	 * (leak_min_steps_sampled), 4 when attached all the time */
	row.old_rise_s = 3.0;
	row.old_steps = 3;
	row.old_max_step = 150;
	kgrowth = 80;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	duty_shift = 2;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* two are not */
	row.old_steps = 2;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	duty_shift = 0;
}

/*
 * --sample-time-frees: the frees go with the allocs, and a tracked object
 * freed between the slices stays counted live until a slice sees its
 * address handed out again.  A rise the kernel's count confirms is still a
 * leak.  One it is too coarse to see, or cannot count, is a leak only where
 * the frees it may hide are a small part of it: for each old object's free
 * seen, 3 unseen (traced 1/4 of the time), and for each free found later by
 * its address, one not found yet; or where the kernel's count rose with it
 * all the same, within what its slabs hide.  sqlite's kmalloc-16 rose
 * +53/s for 2.2 s so, the cache's count flat and 20 frees hidden, where
 * fdchurn's leaked files rose with none, and kvref's with the count.
 */
static void classify__leak_frees_in_time__rise_over_the_frees_it_may_hide(void **state)
{
	(void)state;
	sampled_leak_rows();
	row.old_quiet_s = 0.2;
	kerr = 0;
	kgrowth = 40;
	kres = 0;
	duty_shift = 2;
	frees_cycled = true;
	/* confirmed: a leak, and it says what was traced */
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; cache filp +40/s over 4.0 s; allocations and frees traced 1/4 of the time (old objects seen freed meanwhile 0, frees found later 0);"));
	/* the count confirms it, but it is the whole cache's: another key's
	 * leak makes it grow (nginx's sockets under nginx-leak, while wrk's
	 * filp rose by frees it missed), so the frees it may hide still count */
	row.old_rise_unseen = 30;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "but frees are traced 1/4 of the time and the kernel's count (+40/s over 4.0 s) is the whole cache's, not the key's: objects freed between the slices could make it (old objects seen freed 0, frees found later 30: about 30 unseen)"));
	/* unless the count pays for the rises of every key of the cache
	 * together (nginx's two workers' filp, +361 and +421/s, against
	 * +822/s), at least 0.9 of them (leak_cache_paid_share) */
	row.cache_rise_per_s = 44;
	row.cache_rising_keys = 2;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; cache filp +40/s over 4.0 s, the rises of its 2 rising keys together +44/s;"));
	/* not where it pays for less (wrk's filp, +1259/s by frees it
	 * missed, beside nginx's +1774/s, against +1774/s) */
	row.cache_rise_per_s = 45;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "the kernel's count (+40/s over 4.0 s) is the whole cache's and pays for less than the rises of its 2 rising keys together (+45/s, at least +45/s): objects freed between the slices could make it"));
	/* counted by periods, the sum is checked by its lower bound: one
	 * standard error below, its variance the keys' per_s^2 / rise_s
	 * (cache_rise_var) x (d - 1) / periods a second.  Two keys of +25/s
	 * over 4 s: 312.5 x 3 / 10, an error of 9.7/s: +50/s at least +40.3 */
	row.cache_rise_per_s = 50;
	row.cache_rise_var = 2 * 25.0 * 25.0 / 4.0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	row.cache_rise_per_s = 56;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "together (+56/s, at least +46/s)"));
	row.cache_rise_var = 0;
	row.cache_rise_per_s = 0;
	row.cache_rising_keys = 0;
	row.old_rise_unseen = 0;
	/* asked over the rise, its quiet and the age before it */
	assert_true(frees_span > 4.69 && frees_span < 4.71);
	/* about kmalloc's program for a kmalloc-* key (an id below
	 * CS_KMALLOC_ID_MAX: its size), which the daemon may hold attached,
	 * else about the allocs' */
	row_key.id = 1ull << 40;
	label(DOM_SLAB, "filp");
	assert_false(duty_kmalloc);
	row_key.id = 64;
	label(DOM_SLAB, "kmalloc-64");
	assert_true(duty_kmalloc);
	row_key.id = 0;
	/* too coarse to confirm, and no old object's free seen nor any free
	 * found later: the rise is the key's own */
	kres = 1000;
	kgrowth = 0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "allocations and frees traced 1/4 of the time (old objects seen freed meanwhile 0, frees found later 0)"));
	/* the rise's lower bound: 400 less its relative error over 40
	 * periods at 1/4, sqrt(3/40): 290; a tenth of it is 29.0.  9 old
	 * objects' frees seen stand for 27 unseen: still a leak */
	row.old_rise_old_frees = 9;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* 10 for 30: more than the tenth, not a leak, and why */
	row.old_rise_old_frees = 10;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "but frees are traced 1/4 of the time and the kernel's count (+0/s, in slabs hiding 1000) cannot confirm it: objects freed between the slices could make it (old objects seen freed 10, frees found later 0: about 30 unseen)"));
	/* the kernel's count rose with it all the same, by half its lower
	 * bound (72.6/s) or more, within what the slabs hide: the key's own */
	kgrowth = 37;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; cache filp +37/s over 4.0 s, too coarse to see 400 objects (slabs hide 1000);"));
	kgrowth = 36;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	kgrowth = 0;
	/* frees found later count one for one */
	row.old_rise_old_frees = 0;
	row.old_rise_unseen = 30;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "(old objects seen freed 0, frees found later 30: about 30 unseen)"));
	/* the frees attached all the time: the events are trusted */
	frees_cycled = false;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "too coarse to see 400 objects"));
	assert_null(strstr(reason, "frees found later"));
	/* no kernel count at all */
	frees_cycled = true;
	kres = 0;
	kerr = -ENOENT;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "there is no kernel count of this cache to confirm it"));
	/* attached all the time: nothing sampled, nothing changes */
	duty_shift = 0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	frees_cycled = false;
	kerr = 0;
	/* the frees traced 1/4 of the time, a free is seen 1 time in 4 at
	 * least: frees/allocs above a quarter of leak_seen_free_share (0.25)
	 * is a leak amid churn, 1.5 s of rise enough (kvref's filp, half
	 * its objects freed, read 0.25-0.27) */
	duty_shift = 2;
	frees_cycled = true;
	kres = 1000;
	kgrowth = 0;
	row.old_warmup_s = 10;
	row.old_rise_unseen = 0;
	row.old_rise_frees = 800;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* 0.05: blind, and 4 s of rise are not the 8 s it then needs */
	row.old_rise_frees = 400;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* with the frees attached all the time, 0.1 is blind too */
	row.old_rise_frees = 800;
	frees_cycled = false;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_rise_frees = 7600;
	row.old_warmup_s = 0;
	duty_shift = 0;
	kres = 0;
}

/* Device memory (CUPTI's allocation records): a caching allocator or a KV
 * pool grows at its start and then stays; only a rise that goes on past the
 * key's start-up is a leak, and its reason says how much lives. */
static void classify__gpu_memory_rise__leak_only_past_the_start_up(void **state)
{
	(void)state;
	leaking_fds();		/* 8 s of rise, no frees */
	row.live_bytes = 3000ll << 20;
	row.old_warmup_s = 0;	/* from the key's first second */
	/* 8 s, of which 5 are the start-up: 3 s past it, and no frees seen:
	 * not yet the 8 s a blind rise needs */
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_NORMAL);
	assert_string_equal(reason, "normal: gpu-memory 2640 objects older than 1.0 s, +330/s for 8.0 s (frees/allocs 0.00), 0.0 s after the key's first event: a caching allocator's or a pool's start-up growth, not yet past it");
	/* amid churn (frees seen), 2 s past the start-up is enough */
	row.old_rise_frees = 1500;
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_LEAK);
	assert_string_equal(reason, "leak: gpu-memory 2640 objects older than 1.0 s, +330/s for 8.0 s amid churn (frees/allocs 0.50), past the start-up; 3000.0 MiB live");
	/* a rise that began late in the process's life is all past it */
	leaking_fds();
	row.old_warmup_s = 30;
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_LEAK);
	/* a pool that grew for its first 3 s and stays: quiet since */
	leaking_fds();
	row.old_rise_s = 3.0;
	row.old_quiet_s = 5.0;
	assert_int_equal(label(DOM_GPU, "gpu-memory"), LABEL_NORMAL);
}

static void classify__old_objects_rise_amid_churn__leak(void **state)
{
	(void)state;
	/* 1000 allocs/s, 5 % kept: frees/allocs 0.95, old population +50/s */
	slot.allocs = 100;
	slot.frees = 95;
	e.free_ratio = 0.95;
	row.growth_per_s = 50;
	row.age_ns = 1000000000;
	row.old_objs = 100;
	row.old_rise = 100;
	row.old_rise_s = 2.0;
	row.old_steps = 8;
	row.old_max_step = 13;
	row.old_rise_allocs = 3000;
	row.old_rise_frees = 2850;
	kgrowth = 48;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_string_equal(reason, "leak: filp 100 objects older than 1.0 s, +50/s for 2.0 s amid churn (frees/allocs 0.95); cache filp +48/s over 2.0 s");
	/* at 1 in 16 a rise of 100 is 6 tracked objects: too few */
	e.sample = 16;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	e.sample = 8;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	/* a label on sampled counts says so */
	assert_non_null(strstr(reason, "; from 1 in 8 objects tracked (sampled: counts estimated)"));
	/* where the records behind the rise are known, they count: objects
	 * tracked one by one before the sampling went up to 1 in 64 */
	e.sample = 64;
	row.old_rise_tracked = 90;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	row.old_rise_tracked = 6;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_rise_tracked = 0;
	e.sample = 0;
	/* 100 objects left over from 30 000 skb allocs: a residue of churn
	 * (buffers queued in sockets), not a leak */
	row.old_rise_allocs = 30000;
	row.old_rise_frees = 29900;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_rise_allocs = 3000;
	row.old_rise_frees = 2850;
	/* a handful of objects is no leak, however steady */
	row.old_objs = 6;
	row.old_rise = 6;
	row.old_rise_s = 4.0;
	row.old_steps = 6;
	row.old_max_step = 1;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* a rise the kernel's slab-sized count cannot show: not contradicted */
	row.old_objs = 30;
	row.old_rise = 30;
	row.old_rise_s = 4.0;
	row.old_steps = 16;
	row.growth_per_s = 7;
	row.old_warmup_s = 20;
	kgrowth = 0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	assert_non_null(strstr(reason, "; cache filp +0/s over 4.0 s, too coarse to see 30 objects (slabs hide 84)"));
	/* the same with records lost to full rings meanwhile: a lost free
	 * leaves its object live, and the kernel cannot say otherwise */
	row.old_rise_dropped = true;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "records were dropped meanwhile"));
	/* where the kernel's count confirms it, drops do not matter */
	kgrowth = 7;
	kres = 20;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	kgrowth = 0;
	kres = 84;
	row.old_rise_dropped = false;
	/* nor in a process's first seconds: its footprint grows as it starts
	 * (a compiler's VMAs, two thirds of them freed again) ... */
	row.old_warmup_s = 0.5;
	row.old_rise_frees = 2000;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "start-up growth"));
	/* ... unless the events see its frees: then they are believed */
	row.old_rise_frees = 2850;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	slot.unseen_frees = 3;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	slot.unseen_frees = 0;
	/* ... or unless it goes on past the start-up: a rise from 0.5 s that
	 * lasts 7.5 s has lasted 3 s after the first 5 s; one of 5.5 s, only
	 * 1 s (leak_min_rise_s: 1.5 s) */
	row.old_rise_frees = 2000;
	row.old_rise_s = 7.5;
	row.old_steps = 30;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	row.old_rise_s = 5.5;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "start-up growth"));
	row.old_rise_s = 4.0;
	row.old_steps = 16;
	row.old_rise_frees = 2850;
	row.old_warmup_s = 20;
	/* nor when the count falls meanwhile by more than it can hide
	 * (-30/s over 4 s: 120 objects, slabs hide 84) ... */
	kgrowth = -30;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "frees the tracepoints did not see"));
	/* ... but a smaller fall is the cache's other users emptying slabs */
	kgrowth = -12;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
	kgrowth = 0;
	/* nor when it can see it: contradicted */
	kres = 20;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	kres = 84;
	row.old_rise_s = 2.0;
	row.old_steps = 8;
	/* balanced churn: nothing grows old */
	row.old_objs = 0;
	row.old_rise = 0;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* a few long-lived objects, then flat: too few to be a leak */
	row.old_objs = 3;
	row.old_rise = 3;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	/* four steps over 6 s: a flat stretch and a late burst */
	row.old_rise_s = 6.2;
	row.old_rise = 33;
	row.old_steps = 4;
	row.old_max_step = 11;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_rise_s = 2.0;
	row.old_rise = 100;
	row.old_steps = 8;
	row.old_max_step = 13;
	/* a few steps, but one of them carries most of the rise: a burst
	 * (children not reaped yet), not a steady leak */
	row.old_max_step = 60;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_max_step = 13;
	/* objects that came in one burst and grew old together */
	row.old_objs = 100;
	row.old_rise = 100;
	row.old_steps = 1;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	row.old_steps = 8;
	/* rising, but not for long enough yet */
	row.old_rise_s = 1.2;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
}

static void classify__remote_frees_of_one_size__false_sharing(void **state)
{
	(void)state;
	f.raw[FEAT_LOCALITY] = 0.02;
	slot.frees = 4500;
	slot.remote_frees = 4410;
	row.same_size_share = 1.0;
	row.lifetime_p50_ns = 23000;
	row.key_lifetime_p50_ns = 19000;
	row.recent_locality = 0.03;
	row.recent_windows = 10;
	row.recent_own_share = 0.99;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_FALSE_SHARING);
	assert_string_equal(reason, "false_sharing: skbuff_head_cache 98% of 4500 frees on another CPU than the alloc (44100/s; 97% over its last 10 windows, 99% of those by its own threads), 100% of allocs one size, median lifetime 23.0 us");
	/* the same frees by another process on its CPU (a server's replies
	 * read by a client, or freed in the softirq that interrupted it):
	 * the I/O between two programs, wherever the scheduler puts them */
	row.recent_own_share = 0.04;
	assert_int_equal(label(DOM_SLAB, "skbuff_small_head"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "; 97% freed on other CPUs over its last 10 windows, 4% of those by its own threads (the rest by other processes: I/O between programs)"));
	rules.v[R_FS_MIN_OWN_SHARE] = 0;
	assert_int_equal(label(DOM_SLAB, "skbuff_small_head"), LABEL_FALSE_SHARING);
	rules.v[R_FS_MIN_OWN_SHARE] = 0.5;
	row.recent_own_share = 0.5;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_FALSE_SHARING);
	/* a fork loop: its children's signal handlers, allocated as it
	 * forks them and freed as it reaps them, on whichever CPU it is then */
	row.top_site = 0xffffffff81700a90ull;
	assert_int_equal(label(DOM_SLAB, "sighand_cache"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "allocated by copy_process+0xa90: a new task's own objects"));
	row.top_site = 0;
	/* one window of it, as the scheduler moves a server's threads: the
	 * last second's locality is what counts */
	row.recent_locality = 0.45;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_NORMAL);
	row.recent_locality = 0.03;
	/* a family of processes younger than a second (a shell loop): what a
	 * child hands its parent as it exits (sigqueue) is not it */
	e.family = true;
	assert_int_equal(label(DOM_SLAB, "sigqueue"), LABEL_NORMAL);
	e.family = false;
	/* the key's first windows: too few to tell */
	row.recent_locality = 0.03;
	row.recent_windows = 4;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_NORMAL);
	row.recent_windows = 10;
	/* mixed sizes: not the one-line pattern */
	row.same_size_share = 0.5;
	assert_int_equal(label(DOM_SLAB, "x"), LABEL_NORMAL);
	/* a few remote frees, as when a forked child exits elsewhere */
	row.same_size_share = 1.0;
	slot.remote_frees = 5;
	assert_int_equal(label(DOM_SLAB, "x"), LABEL_NORMAL);
	/* 16 estimated from two tracked objects at 1 in 8 (a busy server's
	 * request socks): too few seen to tell; 16 seen ones are enough */
	slot.remote_frees = 16;
	slot.frees = 16;
	e.sample = 8;
	assert_int_equal(label(DOM_SLAB, "request_sock_TCP"), LABEL_NORMAL);
	e.sample = 1;
	assert_int_equal(label(DOM_SLAB, "request_sock_TCP"), LABEL_FALSE_SHARING);
	e.sample = 0;
	slot.frees = 4500;
	/* many, but of objects that lived for seconds: a teardown, not ping-pong */
	slot.remote_frees = 4410;
	row.lifetime_p50_ns = 5000000000ull;
	assert_int_equal(label(DOM_SLAB, "x"), LABEL_NORMAL);
	/* a window of short lives in a key whose objects live long (bios
	 * completed on another CPU) */
	row.lifetime_p50_ns = 65535;
	row.key_lifetime_p50_ns = 3145728;
	assert_int_equal(label(DOM_SLAB, "bio-184"), LABEL_NORMAL);
	/* a hand-off through a socket lives as long as its reader takes to
	 * wake: 64-128 us on a VM is still one */
	row.lifetime_p50_ns = 101682;
	row.key_lifetime_p50_ns = 99433;
	assert_int_equal(label(DOM_SLAB, "skbuff_head_cache"), LABEL_FALSE_SHARING);
}

static void classify__fast_churn_short_lives__normal(void **state)
{
	(void)state;
	/* short-lived objects at a high rate are what a slab cache is for */
	f.raw[FEAT_FREQ] = 250000;
	row.lifetime_p50_ns = 2100;
	assert_int_equal(label(DOM_SLAB, "kmalloc-64"), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: kmalloc-64 250000 ops/s"));
}

static void classify__several_rules_hold__refault_thrash_first(void **state)
{
	(void)state;
	thrashing_file();
	leaking_fds();
	kgrowth = 2000;
	assert_int_equal(label(DOM_KV, "k"), LABEL_THRASH);
	/* a cold re-read does not hide a leak */
	row.recent_repeat_pages = 0;
	assert_int_equal(label(DOM_KV, "k"), LABEL_LEAK);
	slot.refault_pages = 0;
	e.refault_share = 0;
	row.recent_refault_pages = 0;
	assert_int_equal(label(DOM_KV, "k"), LABEL_LEAK);
}

static void classify__anomaly_of_a_gpu_process__reason_carries_gpu_work(void **state)
{
	(void)state;
	thrashing_file();
	row.tgid_gpu_kernel_ns = 12500000;
	row.tgid_gpu_kv_kernel_ns = 3000000;
	row.tgid_gpu_copy_bytes = 2000000;
	assert_int_equal(label(DOM_KV, "kv-pool-gpu"), LABEL_THRASH);
	assert_non_null(strstr(reason, "evictions; GPU meanwhile: 12.5 ms kernels (3.0 ms KV), 2.00 MB copied"));
	/* a normal vector says nothing of the GPU */
	slot.refault_pages = 0;
	e.refault_share = 0;
	row.recent_refault_pages = 0;
	assert_int_equal(label(DOM_KV, "kv-pool-gpu"), LABEL_NORMAL);
	assert_null(strstr(reason, "GPU"));
	/* a short buffer stays terminated */
	thrashing_file();
	assert_int_equal(classify(&rules, DOM_KV, "kv-pool-gpu", &f, &e, &kview, reason, 40),
			 LABEL_THRASH);
	assert_int_equal(strlen(reason), 39);
}

static void rules_set__known_and_unknown_names__applied_or_rejected(void **state)
{
	(void)state;
	assert_int_equal(rules_set(&rules, "leak_blind_rise_s=30"), 0);
	assert_true(rules.v[R_LEAK_BLIND_RISE_S] == 30);
	assert_int_equal(rules_set(&rules, " thrash_refault_share = 0.5 "), 0);
	assert_true(rules.v[R_THRASH_REFAULT_SHARE] == 0.5);
	assert_int_equal(rules_set(&rules, "no_such_rule=1"), -ENOENT);
	assert_int_equal(rules_set(&rules, "leak_blind_rise_s"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_blind_rise_s=abc"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_blind_rise_s=-1"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_blind_rise_s=nan"), -EINVAL);
	assert_true(rules.v[R_LEAK_BLIND_RISE_S] == 30);
	/* with the raised threshold, 8 s of rise no longer count */
	leaking_fds();
	kgrowth = 330;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_NORMAL);
	rules.v[R_LEAK_BLIND_RISE_S] = 8;
	assert_int_equal(label(DOM_SLAB, "filp"), LABEL_LEAK);
}

static void rules_load__file_with_comments__applied_and_bad_line_named(void **state)
{
	char path[] = "/tmp/cs-rules-XXXXXX";
	int fd = mkstemp(path), line;
	FILE *fp = fdopen(fd, "w");

	(void)state;
	fputs("# calibrated on host A\n\nleak_min_growth_s = 50  # objects/s\n"
	      "false_sharing_max_locality=0.2\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), 0);
	assert_int_equal(line, 0);
	assert_true(rules.v[R_LEAK_MIN_GROWTH_S] == 50);
	assert_true(rules.v[R_FS_MAX_LOCALITY] == 0.2);
	fp = fopen(path, "w");
	fputs("leak_min_growth_s = 5\nbogus = 1\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), -ENOENT);
	assert_int_equal(line, 2);
	unlink(path);
	assert_int_equal(rules_load(&rules, path, &line), -ENOENT);
	assert_int_equal(line, 0);
}

/* The trust check sees the file opened (its inode is the path's) and its
 * refusal is the one line the daemon says, nothing applied. */
static ino_t trusted_ino;

static int refuse_writable(int fd, const char *path, const char **why)
{
	struct stat a, b;

	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	if (a.st_mode & S_IWOTH) {
		*why = "writable by group or others";
		return -EPERM;
	}
	trusted_ino = a.st_ino;
	return 0;
}

static void rules_from__file_not_trusted__refused_nothing_applied(void **state)
{
	char path[] = "/tmp/cs-rules-XXXXXX", msg[512], want[512];
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	struct stat st;

	(void)state;
	assert_non_null(fp);
	fputs("leak_min_growth_s = 9999\n", fp);
	fclose(fp);
	assert_int_equal(chmod(path, 0646), 0);
	assert_int_equal(rules_from(&rules, path, refuse_writable, NULL, 0, msg, sizeof(msg)), -EPERM);
	snprintf(want, sizeof(want), "refusing --rules %s: writable by group or others (it must be root's and writable by root alone)",
		 path);
	assert_string_equal(msg, want);
	assert_true(rules.v[R_LEAK_MIN_GROWTH_S] != 9999);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(rules_from(&rules, path, refuse_writable, NULL, 0, msg, sizeof(msg)), 0);
	assert_true(rules.v[R_LEAK_MIN_GROWTH_S] == 9999);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(trusted_ino, st.st_ino);
	unlink(path);
	rules_defaults(&rules);
}

/* A line longer than any buffer is one line: a long comment is a comment,
 * and the lines after it keep their numbers (fgets into 256 bytes read the
 * rest of a long line as a line of its own; found by tests/fuzz/fuzz_rules);
 * and a read error (a directory) is not an empty file */
static void rules_load__long_comment_line__one_line(void **state)
{
	char path[] = "/tmp/cs-rules-XXXXXX";
	int fd = mkstemp(path), line, i;
	FILE *fp = fdopen(fd, "w");

	(void)state;
	assert_non_null(fp);
	fputs("# ", fp);
	for (i = 0; i < 1000; i++)
		fputc('x', fp);
	fputs("\nleak_min_growth_s = 7\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), 0);
	assert_int_equal(line, 0);
	assert_true(rules.v[R_LEAK_MIN_GROWTH_S] == 7);
	fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("bogus = 1\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), -ENOENT);
	assert_int_equal(line, 3);
	unlink(path);
	/* what is not a regular file is an error, not an empty file: a
	 * directory, a device that never ends, and a FIFO, which blocked the
	 * daemon's loop on reload before (the alarm fails the test then) */
	assert_int_equal(rules_load(&rules, "/tmp", &line), -EINVAL);
	assert_int_equal(line, 0);
	assert_int_equal(rules_load(&rules, "/dev/zero", &line), -EINVAL);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_int_equal(rules_load(&rules, path, &line), -EINVAL);
	alarm(0);
	unlink(path);
	{
		char msg[256];

		assert_int_equal(rules_from(&rules, "/tmp", NULL, NULL, 0, msg, sizeof(msg)), -EINVAL);
		assert_string_equal(msg, "cannot read --rules /tmp: not a regular file");
	}
	rules_defaults(&rules);
}

static void classify_cluster__majority_anomaly__cluster_takes_it(void **state)
{
	unsigned int counts[LABEL_COUNT] = { 0 };

	(void)state;
	counts[LABEL_NORMAL] = 40;
	counts[LABEL_LEAK] = 60;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_LEAK);
	counts[LABEL_NORMAL] = 60;
	counts[LABEL_LEAK] = 40;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_NORMAL);
	counts[LABEL_NORMAL] = 0;
	counts[LABEL_LEAK] = 30;
	counts[LABEL_THRASH] = 70;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_THRASH);
	memset(counts, 0, sizeof(counts));
	assert_int_equal(classify_cluster(&rules, counts, 0), LABEL_NORMAL);
	assert_string_equal(label_name(LABEL_FALSE_SHARING), "false_sharing");
}

/* docs/rules.md's table names every rule once, with its default: the
 * table in classify.c is the one list, the docs follow it. */
static void rules__docs_table__every_rule_with_its_default(void **state)
{
	FILE *f = fopen("docs/rules.md", "r");
	unsigned int seen[RULE_COUNT] = { 0 };
	char line[4096];
	int i;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *name = line + 3, *q, *v, *end;
		double d;

		if (strncmp(line, "| `", 3))
			continue;
		q = strchr(name, '`');
		assert_non_null(q);
		*q = 0;
		v = strchr(q + 1, '|');
		assert_non_null(v);
		d = strtod(v + 1, &end);
		for (i = 0; i < RULE_COUNT && strcmp(rule_defs[i].name, name); i++)
			;
		if (i == RULE_COUNT)
			fail_msg("docs/rules.md lists '%s', which is no rule", name);
		if (end == v + 1 || d != rule_defs[i].value)
			fail_msg("docs/rules.md gives '%s' a default other than %g", name,
				 rule_defs[i].value);
		seen[i]++;
	}
	fclose(f);
	for (i = 0; i < RULE_COUNT; i++)
		if (seen[i] != 1)
			fail_msg("docs/rules.md lists rule '%s' %u times", rule_defs[i].name, seen[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(classify__ordinary_churn__normal, setup),
		cmocka_unit_test_setup(classify__refaults_repeat_for_seconds__thrash_with_numbers, setup),
		cmocka_unit_test_setup(classify__one_cold_pass_after_eviction__normal_cold_reread, setup),
		cmocka_unit_test_setup(classify__pages_back_soon_and_again__thrash_by_distance_and_repeats, setup),
		cmocka_unit_test_setup(classify__refaults_without_cost__normal_with_stall__thrash, setup),
		cmocka_unit_test_setup(classify__old_objects_never_freed_kernel_agrees__leak, setup),
		cmocka_unit_test_setup(classify__growth_the_kernel_does_not_see__normal_unseen_frees, setup),
		cmocka_unit_test_setup(classify__old_objects_rise_amid_churn__leak, setup),
		cmocka_unit_test_setup(classify__remote_frees_of_one_size__false_sharing, setup),
		cmocka_unit_test_setup(classify__fast_churn_short_lives__normal, setup),
		cmocka_unit_test_setup(classify__several_rules_hold__refault_thrash_first, setup),
		cmocka_unit_test_setup(classify__anomaly_of_a_gpu_process__reason_carries_gpu_work, setup),
		cmocka_unit_test_setup(classify__leak_sampled_in_time__allowed_its_error_kernel_still_checked, setup),
		cmocka_unit_test_setup(classify__leak_frees_in_time__rise_over_the_frees_it_may_hide, setup),
		cmocka_unit_test_setup(classify__gpu_memory_rise__leak_only_past_the_start_up, setup),
		cmocka_unit_test_setup(classify__gpu_blocks_back_within_a_pool__thrash_in_its_words, setup),
		cmocka_unit_test_setup(rules_set__known_and_unknown_names__applied_or_rejected, setup),
		cmocka_unit_test_setup(rules_load__file_with_comments__applied_and_bad_line_named, setup),
		cmocka_unit_test_setup(rules_load__long_comment_line__one_line, setup),
		cmocka_unit_test_setup(rules_from__file_not_trusted__refused_nothing_applied, setup),
		cmocka_unit_test_setup(classify_cluster__majority_anomaly__cluster_takes_it, setup),
		cmocka_unit_test(rules__docs_table__every_rule_with_its_default),
	};

	return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
