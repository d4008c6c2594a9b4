// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the CUPTI subscriber (cuda/cupti_sub.c) without a GPU:
 * activity records of the installed CUPTI headers' types, filled in here,
 * go through the record handler (and once through a buffer walked by
 * cuptiActivityGetNextRecord, which needs no driver), and the counters say
 * what it made of them.  The wiring tests replace the CUPTI calls that need
 * a driver with mocks (-Wl,--wrap, see WRAPPED below) to drive start, the
 * buffer callbacks, the flush thread and stop.  The last tests run
 * tests/helpers/nodriver with the built library injected and check that the
 * process runs on.
 *
 * WRAPPED: cuptiSubscribe_v2 cuptiUnsubscribe cuptiActivityRegisterCallbacks
 *          cuptiActivityEnable cuptiActivityDisable cuptiActivityFlushAll
 *          cuptiActivityGetNumDroppedRecords cuptiActivityRegisterTimestampCallback
 *          dlopen probe_batch (the batch probe: what it was handed)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>
#include "../cuda/batch.h"
#include "../cuda/cupti_sub.h"
#include "../cuda/probes.h"

#define VLLM_RESHAPE "_ZN4vllm24reshape_and_cache_kernelIttLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S7_PKlllllllPKfSB_"
#define VLLM_RESHAPE_FLASH "_ZN4vllm30reshape_and_cache_flash_kernelIttLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S7_PKllllllPKfSB_"
#define VLLM_PAGED_V2 "_ZN4vllm25paged_attention_v2_kernelIttLi128ELi16ELi128ELNS_18Fp8KVCacheDataTypeE0ELb0ELi512EEEvPfS2_PT_PKS3_PKT0_S9_ifPKiSB_iPKfiiiSD_SD_iii"
#define GEMM "_ZN7cutlass6KernelI53cutlass_80_tensorop_f16_s16816gemm_f16_128x128_32x4_nn_align8EEvNT_6ParamsE"
/* foo(reshape_and_cache_kernel): the KV name is a parameter type, not the function */
#define PARAM_ONLY "_Z3foo24reshape_and_cache_kernel"

static int reset_default(void **state)
{
	(void)state;
	unsetenv("CACHESCOPE_KV_KERNELS");
	unsetenv("CACHESCOPE_CUPTI_BUFFER_MB");
	unsetenv("CACHESCOPE_CUPTI_FLUSH_MS");
	unsetenv("CACHESCOPE_KV_CACHE");
	unsetenv("CACHESCOPE_KV_KERNELS_FILE");
	unsetenv("CACHESCOPE_CUPTI");
	assert_int_equal(cupti_sub_reset(), 0);
	return 0;
}

static struct cupti_sub_stats stats(void)
{
	struct cupti_sub_stats s;

	cupti_sub_get_stats(&s);
	return s;
}

static cupti_sub_kernel_rec kernel_rec(const char *name, uint64_t start,
				       uint64_t end)
{
	cupti_sub_kernel_rec k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = start;
	k.end = end;
	k.deviceId = 0;
	k.streamId = 7;
	k.correlationId = 42;
	k.gridX = 128;
	k.gridY = 4;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	return k;
}

static cupti_sub_memcpy_rec memcpy_rec(uint8_t kind, uint64_t bytes)
{
	cupti_sub_memcpy_rec m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = kind;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = bytes;
	m.start = 1000;
	m.end = 2000;
	m.streamId = 3;
	m.copyCount = 1;
	return m;
}

static cupti_sub_memory_rec memory_rec(CUpti_ActivityMemoryOperationType op,
				       uint64_t addr, uint64_t bytes)
{
	cupti_sub_memory_rec m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = op;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.address = addr;
	m.bytes = bytes;
	m.timestamp = 5000;
	return m;
}

/* ---- kernels ---- */

static void handle_record__concurrent_kernel__counts_kernel_and_time(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(GEMM, 1000, 1750);
	struct cupti_sub_stats s;

	(void)state;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	s = stats();
	assert_int_equal(s.records, 1);
	assert_int_equal(s.kernels, 1);
	assert_int_equal(s.kernel_ns, 750);
	assert_int_equal(s.kv_kernels, 0);
	assert_int_equal(s.memcpys, 0);
	assert_int_equal(s.ignored, 0);
}

static void handle_record__serial_kernel_kind__counted_as_kernel(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec("kvref_kv_paged_attention", 10, 30);

	(void)state;
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	assert_int_equal(stats().kernels, 1);
	assert_int_equal(stats().kv_kernels, 1);
}

static void handle_record__kernel_without_timestamps__no_time_added(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(GEMM, 0, 0);
	cupti_sub_kernel_rec open = kernel_rec(GEMM, 5000, 0);	/* forced flush */

	(void)state;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&open), 0);
	assert_int_equal(stats().kernels, 2);
	assert_int_equal(stats().kernel_ns, 0);
}

static void is_kv_kernel__default_patterns__match_vllm_and_kvref(void **state)
{
	(void)state;
	assert_true(cupti_sub_is_kv_kernel(VLLM_RESHAPE));
	assert_true(cupti_sub_is_kv_kernel(VLLM_RESHAPE_FLASH));
	assert_true(cupti_sub_is_kv_kernel(VLLM_PAGED_V2));
	assert_true(cupti_sub_is_kv_kernel("reshape_and_cache_kernel"));
	assert_true(cupti_sub_is_kv_kernel("paged_attention_v1_kernel"));
	assert_true(cupti_sub_is_kv_kernel("kvref_kv_paged_attention"));
	assert_true(cupti_sub_is_kv_kernel("_Z15kvref_kv_appendPfPKfi"));
	/* flash-attn 2's paged/KV-cache decode kernel, FlashInfer's decode */
	assert_true(cupti_sub_is_kv_kernel("_ZN5flash24flash_fwd_splitkv_kernelILb1EEEv16Flash_fwd_params"));
	assert_true(cupti_sub_is_kv_kernel("_ZN10flashinfer33BatchDecodeWithPagedKVCacheKernelILb0EEEvPfi"));
	/* vLLM's copy-on-write of blocks and its MLA cache writer */
	assert_true(cupti_sub_is_kv_kernel("_ZN4vllm18copy_blocks_kernelIfEEvPlS1_PKli"));
	assert_true(cupti_sub_is_kv_kernel("_ZN4vllm27concat_and_cache_mla_kernelIffLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_PKlliiiiiPKf"));
	/* FlashAttention 3 on Hopper: a cutlass device_kernel of FlashAttnFwdSm90 */
	assert_true(cupti_sub_is_kv_kernel("_ZN7cutlass13device_kernelIN5flash16FlashAttnFwdSm90INS1_25CollectiveMainloopFwdSm90ILi2EEEEEEEvNT_6ParamsE"));
	/* TensorRT-LLM's decoder attention over its KV cache */
	assert_true(cupti_sub_is_kv_kernel("_ZN12tensorrt_llm7kernels32masked_multihead_attention_kernelI6__halfLi128ELi4ELi4ELi256EEEvNS0_26Multihead_attention_paramsIT_Lb0EEE"));
}

static void is_kv_kernel__default_patterns__reject_other_kernels(void **state)
{
	(void)state;
	assert_false(cupti_sub_is_kv_kernel(GEMM));
	assert_false(cupti_sub_is_kv_kernel("ampere_sgemm_128x64_nn"));
	assert_false(cupti_sub_is_kv_kernel("my_reshape_and_cache"));
	assert_false(cupti_sub_is_kv_kernel("flash_fwd_kernel"));
	/* a cutlass GEMM is a device_kernel too, of another class */
	assert_false(cupti_sub_is_kv_kernel("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIvEEEEvNT_6ParamsE"));
	/* kvref's kernels that do not touch the cache */
	assert_false(cupti_sub_is_kv_kernel("kvref_rmsnorm"));
	assert_false(cupti_sub_is_kv_kernel("kvref_swiglu"));
	assert_false(cupti_sub_is_kv_kernel(PARAM_ONLY));
	assert_false(cupti_sub_is_kv_kernel(""));
	assert_false(cupti_sub_is_kv_kernel(NULL));
}

static void handle_record__kv_kernel__counted_as_kv_with_time(void **state)
{
	cupti_sub_kernel_rec kv = kernel_rec(VLLM_PAGED_V2, 100, 400);
	cupti_sub_kernel_rec other = kernel_rec(GEMM, 500, 600);
	struct cupti_sub_stats s;

	(void)state;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&kv), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&other), 0);
	s = stats();
	assert_int_equal(s.kernels, 2);
	assert_int_equal(s.kv_kernels, 1);
	assert_int_equal(s.kv_kernel_ns, 300);
	assert_int_equal(s.kernel_ns, 400);
}

/* An operator's file of more patterns, one a line with comments, comes
 * after the defaults (or CACHESCOPE_KV_KERNELS); a file that cannot be
 * read, or a pattern with a comma, is a configuration error and the rest
 * stays as it was. */
static void reset__kv_kernels_file__extends_defaults(void **state)
{
	char path[] = "/tmp/cs-test-kvfile-XXXXXX";
	struct cupti_sub_config cfg;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("# our engine's KV kernels\n  my_engine_kv_*  \n\nSplitDecodeKV # substring\n", f);
	fclose(f);
	setenv("CACHESCOPE_KV_KERNELS_FILE", path, 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 11);
	assert_string_equal(cfg.patterns[9], "my_engine_kv_*");
	assert_string_equal(cfg.patterns[10], "SplitDecodeKV");
	assert_true(cupti_sub_is_kv_kernel("my_engine_kv_append"));
	assert_true(cupti_sub_is_kv_kernel("_ZN3eng13SplitDecodeKVILi4EEEvPf"));
	assert_true(cupti_sub_is_kv_kernel(VLLM_RESHAPE));
	assert_false(cupti_sub_is_kv_kernel(GEMM));

	/* after CACHESCOPE_KV_KERNELS, which replaces the defaults */
	setenv("CACHESCOPE_KV_KERNELS", "attn_decode", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 3);
	assert_false(cupti_sub_is_kv_kernel(VLLM_RESHAPE));
	unsetenv("CACHESCOPE_KV_KERNELS");

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("good_one_*\nbad,one\n", f);
	fclose(f);
	assert_int_equal(cupti_sub_reset(), 1);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 9);	/* the defaults, nothing of the file */
	assert_false(cupti_sub_is_kv_kernel("good_one_x"));

	unlink(path);
	assert_int_equal(cupti_sub_reset(), 1);	/* gone: counted */
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 9);
	unsetenv("CACHESCOPE_KV_KERNELS_FILE");
}

static void handle_record__custom_kv_env__replaces_defaults(void **state)
{
	cupti_sub_kernel_rec a = kernel_rec("my_cache_write", 1, 2);
	cupti_sub_kernel_rec b = kernel_rec("fused_attn_decode_v2", 1, 2);
	cupti_sub_kernel_rec c = kernel_rec(VLLM_RESHAPE, 1, 2);
	struct cupti_sub_config cfg;

	(void)state;
	setenv("CACHESCOPE_KV_KERNELS", " my_cache_* , attn_decode, ,,", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 2);
	assert_string_equal(cfg.patterns[0], "my_cache_*");
	assert_string_equal(cfg.patterns[1], "attn_decode");
	cupti_sub_handle_record((CUpti_Activity *)&a);
	cupti_sub_handle_record((CUpti_Activity *)&b);
	cupti_sub_handle_record((CUpti_Activity *)&c);
	assert_int_equal(stats().kernels, 3);
	assert_int_equal(stats().kv_kernels, 2);
	assert_false(cupti_sub_is_kv_kernel(VLLM_RESHAPE));
	assert_false(cupti_sub_is_kv_kernel("xmy_cache_write"));
}

static void handle_record__custom_glob_on_qualified_name__matches(void **state)
{
	(void)state;
	setenv("CACHESCOPE_KV_KERNELS", "vllm::*cache*", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_true(cupti_sub_is_kv_kernel(VLLM_RESHAPE));
	assert_false(cupti_sub_is_kv_kernel(VLLM_PAGED_V2));
	assert_false(cupti_sub_is_kv_kernel("reshape_and_cache_kernel"));
}

static void reset__empty_kv_env__no_kernel_is_kv(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec("kvref_kv_paged_attention", 1, 2);
	struct cupti_sub_config cfg;

	(void)state;
	setenv("CACHESCOPE_KV_KERNELS", "", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.n_patterns, 0);
	cupti_sub_handle_record((CUpti_Activity *)&k);
	assert_int_equal(stats().kernels, 1);
	assert_int_equal(stats().kv_kernels, 0);
}

static void handle_record__null_name__counted_unnamed_not_kv(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(NULL, 10, 20);
	struct cupti_sub_stats s;

	(void)state;
	setenv("CACHESCOPE_KV_KERNELS", "*", 1);	/* would match any name */
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	s = stats();
	assert_int_equal(s.kernels, 1);
	assert_int_equal(s.unnamed_kernels, 1);
	assert_int_equal(s.kv_kernels, 0);
	assert_int_equal(s.kernel_ns, 10);
}

/* ---- copies, sets, memory ---- */

static void handle_record__memcpy__bytes_summed_by_kind(void **state)
{
	cupti_sub_memcpy_rec h2d = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096);
	cupti_sub_memcpy_rec h2d2 = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 100);
	cupti_sub_memcpy_rec d2h = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8192);
	cupti_sub_memcpy_rec odd = memcpy_rec(200, 7);
	struct cupti_sub_stats s;

	(void)state;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&h2d), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&h2d2), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&d2h), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&odd), 0);
	s = stats();
	assert_int_equal(s.memcpys, 4);
	assert_int_equal(s.memcpy_bytes, 4096 + 100 + 8192 + 7);
	assert_int_equal(s.memcpy_bytes_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_HTOD], 4196);
	assert_int_equal(s.memcpy_bytes_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_DTOH], 8192);
	assert_int_equal(s.memcpy_bytes_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN], 7);
	assert_int_equal(s.memcpy_bytes_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD], 0);
	assert_int_equal(s.kernels, 0);
}

static void handle_record__memset__bytes_summed(void **state)
{
	cupti_sub_memset_rec m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.bytes = 1 << 20;
	m.start = 10;
	m.end = 20;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&m), 0);
	m.bytes = 64;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&m), 0);
	assert_int_equal(stats().memsets, 2);
	assert_int_equal(stats().memset_bytes, (1 << 20) + 64);
	assert_int_equal(stats().memcpys, 0);
}

static void handle_record__memory_alloc_release__live_bytes(void **state)
{
	cupti_sub_memory_rec a1 = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
					     0x7f0000000000ull, 1 << 20);
	cupti_sub_memory_rec a2 = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
					     0x7f0000100000ull, 4096);
	cupti_sub_memory_rec r1 = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
					     0x7f0000000000ull, 1 << 20);
	cupti_sub_memory_rec bad = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID,
					      0x1000, 999);
	struct cupti_sub_stats s;

	(void)state;
	cupti_sub_handle_record((CUpti_Activity *)&a1);
	cupti_sub_handle_record((CUpti_Activity *)&a2);
	assert_int_equal(stats().mem_live_bytes, (1 << 20) + 4096);
	cupti_sub_handle_record((CUpti_Activity *)&r1);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&bad), 0);
	s = stats();
	assert_int_equal(s.memory_records, 4);
	assert_int_equal(s.mem_allocs, 2);
	assert_int_equal(s.mem_releases, 1);
	assert_int_equal(s.mem_alloc_bytes, (1 << 20) + 4096);
	assert_int_equal(s.mem_release_bytes, 1 << 20);
	assert_int_equal(s.mem_live_bytes, 4096);
}

static void handle_record__release_before_alloc__live_goes_negative(void **state)
{
	cupti_sub_memory_rec r = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
					    0x2000, 512);

	(void)state;
	cupti_sub_handle_record((CUpti_Activity *)&r);
	assert_true(stats().mem_live_bytes == -512);
}

static void handle_record__external_correlation__counted(void **state)
{
	cupti_sub_extcorr_rec e;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	e.externalId = 77;
	e.correlationId = 42;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&e), 0);
	assert_int_equal(stats().ext_corrs, 1);
	assert_int_equal(stats().ignored, 0);
}

/* ---- the rest ---- */

static void handle_record__unknown_kind__counted_ignored(void **state)
{
	CUpti_Activity marker = { .kind = CUPTI_ACTIVITY_KIND_MARKER };
	CUpti_Activity bogus = { .kind = (CUpti_ActivityKind)12345 };
	struct cupti_sub_stats s;

	(void)state;
	assert_int_equal(cupti_sub_handle_record(&marker), CUPTI_SUB_IGNORED);
	assert_int_equal(cupti_sub_handle_record(&bogus), CUPTI_SUB_IGNORED);
	s = stats();
	assert_int_equal(s.records, 2);
	assert_int_equal(s.ignored, 2);
	assert_int_equal(s.kernels + s.memcpys + s.memsets + s.memory_records +
			 s.ext_corrs, 0);
}

static void handle_record__null_record__einval(void **state)
{
	(void)state;
	assert_int_equal(cupti_sub_handle_record(NULL), -EINVAL);
	assert_int_equal(stats().records, 0);
}

static void handle_buffer__packed_records__each_handled(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(VLLM_RESHAPE, 100, 200);
	cupti_sub_memcpy_rec m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 333);
	cupti_sub_memory_rec a = memory_rec(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
					    0x4000, 1000);
	size_t len = sizeof(k) + sizeof(m) + sizeof(a);
	uint8_t *buf = aligned_alloc(8, 4096);
	struct cupti_sub_stats s;

	(void)state;
	assert_non_null(buf);
	memset(buf, 0, 4096);
	memcpy(buf, &k, sizeof(k));
	memcpy(buf + sizeof(k), &m, sizeof(m));
	memcpy(buf + sizeof(k) + sizeof(m), &a, sizeof(a));
	assert_int_equal(cupti_sub_handle_buffer(buf, len), 3);
	s = stats();
	assert_int_equal(s.buffers, 1);
	assert_int_equal(s.buffer_bytes, len);
	assert_int_equal(s.buffer_errors, 0);
	assert_int_equal(s.kernels, 1);
	assert_int_equal(s.kv_kernels, 1);
	assert_int_equal(s.memcpy_bytes_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD], 333);
	assert_int_equal(s.mem_live_bytes, 1000);
	assert_int_equal(cupti_sub_handle_buffer(NULL, 0), -EINVAL);
	free(buf);
}

static void handle_buffer__bogus_record_kind__eio_after_good_ones(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(GEMM, 100, 200);
	uint32_t bogus = 12345;
	uint8_t *buf = aligned_alloc(8, 4096);

	(void)state;
	assert_non_null(buf);
	memset(buf, 0, 4096);
	memcpy(buf, &k, sizeof(k));
	memcpy(buf + sizeof(k), &bogus, sizeof(bogus));
	assert_int_equal(cupti_sub_handle_buffer(buf, sizeof(k) + 64), -EIO);
	assert_int_equal(stats().kernels, 1);
	assert_int_equal(stats().buffer_errors, 1);
	free(buf);
}

static void reset__bad_env_values__defaults_used_and_counted(void **state)
{
	struct cupti_sub_config cfg;
	char many[400] = "";
	int i;

	(void)state;
	setenv("CACHESCOPE_CUPTI_BUFFER_MB", "9", 1);
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "10ms", 1);
	for (i = 0; i < CUPTI_SUB_MAX_PATTERNS + 1; i++)
		strcat(many, "k,");
	setenv("CACHESCOPE_KV_KERNELS", many, 1);
	assert_int_equal(cupti_sub_reset(), 3);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.buffer_bytes, CUPTI_SUB_BUFFER_MB_DEFAULT << 20);
	assert_int_equal(cfg.flush_ms, CUPTI_SUB_FLUSH_MS_DEFAULT);
	assert_int_equal(cfg.n_patterns, 9);
	assert_string_equal(cfg.patterns[8], "kvref_kv_*");
	assert_int_equal(stats().config_errors, 3);
}

static void reset__good_env_values__used(void **state)
{
	struct cupti_sub_config cfg;

	(void)state;
	setenv("CACHESCOPE_CUPTI_BUFFER_MB", "1", 1);
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.buffer_bytes, 1 << 20);
	assert_int_equal(cfg.flush_ms, 0);
	setenv("CACHESCOPE_CUPTI_BUFFER_MB", "8", 1);
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "250", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&cfg);
	assert_int_equal(cfg.buffer_bytes, 8 << 20);
	assert_int_equal(cfg.flush_ms, 250);
	assert_int_equal(stats().config_errors, 0);
}

static void reset__after_records__counters_zero(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec("kvref_kv_paged_attention", 1, 5);

	(void)state;
	cupti_sub_handle_record((CUpti_Activity *)&k);
	assert_int_equal(stats().kv_kernels, 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(stats().records, 0);
	assert_int_equal(stats().kv_kernels, 0);
	assert_int_equal(stats().kernel_ns, 0);
}

/* ---- the KV decision cache, and reset while records are handled ---- */

/* A templated kernel's mangled name, about len bytes long. */
static char *long_name(const char *head, size_t len, unsigned int seed)
{
	char *n = malloc(len + 64);
	size_t o;

	assert_non_null(n);
	o = (size_t)sprintf(n, "%s", head);
	while (o < len)
		o += (size_t)sprintf(n + o, "NS_%u6KernelILi%uEEE", seed, (unsigned int)o);
	strcpy(n + o, "EEvT_");
	return n;
}

#define KV_HEAD "_ZN4vllm24reshape_and_cache_kernelI"
#define GEMM_HEAD "_ZN7cutlass6KernelI53cutlass_80_tensorop_f16_s16816gemm"

/* More functions than the cache holds, long names: with the cache the
 * decision is the patterns' own, on the first call and on later ones. */
static void is_kv_kernel__cached__same_decision_as_patterns(void **state)
{
	enum { N = 1500 };	/* the cache holds 1024 */
	char *names[N];
	bool ref[N];
	int i, pass;

	(void)state;
	for (i = 0; i < N; i++)
		names[i] = long_name(i % 3 ? GEMM_HEAD : KV_HEAD, 200 + 20 * (size_t)(i % 50),
				     (unsigned int)i);
	setenv("CACHESCOPE_KV_CACHE", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	for (i = 0; i < N; i++) {
		ref[i] = cupti_sub_is_kv_kernel(names[i]);
		assert_int_equal(ref[i], i % 3 == 0);
	}
	assert_int_equal(stats().kv_cache_hits + stats().kv_cache_misses, 0);
	setenv("CACHESCOPE_KV_CACHE", "1", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < N; i++)
			assert_int_equal(cupti_sub_is_kv_kernel(names[i]), ref[i]);
	assert_int_equal(stats().kv_cache_hits + stats().kv_cache_misses, 3 * N);
	assert_true(stats().kv_cache_hits > 0);
	for (i = 0; i < N; i++)
		free(names[i]);
}

/* One function's records: decided once, then every record is a hit. */
static void handle_record__same_kernel_again__decided_once(void **state)
{
	char *name = long_name(KV_HEAD, 2000, 1);
	cupti_sub_kernel_rec k = kernel_rec(name, 10, 20);
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	assert_int_equal(stats().kv_kernels, 100);
	/* one batch: its records know the name by pointer */
	assert_int_equal(stats().kv_cache_misses, 1);
	assert_int_equal(stats().kv_cache_hits, 0);
	cupti_sub_flush_batch();
	for (i = 0; i < 100; i++)
		assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	assert_int_equal(stats().kv_kernels, 200);
	assert_int_equal(stats().kv_cache_misses, 1);	/* the next batch asks the cache */
	assert_int_equal(stats().kv_cache_hits, 1);
	cupti_sub_flush_batch();
	free(name);
}

/* A name pointer used again for another name is a miss, never the old
 * function's answer; the same name at another address gets the same one. */
static void is_kv_kernel__pointer_reused_for_other_name__decided_again(void **state)
{
	char buf[512], other[512];

	(void)state;
	strcpy(buf, VLLM_RESHAPE);
	assert_true(cupti_sub_is_kv_kernel(buf));
	assert_true(cupti_sub_is_kv_kernel(buf));
	strcpy(buf, GEMM);
	assert_false(cupti_sub_is_kv_kernel(buf));
	strcpy(buf, VLLM_RESHAPE);
	buf[5] = 'X';				/* same length, one byte off */
	assert_int_equal(cupti_sub_is_kv_kernel(buf), cupti_sub_is_kv_kernel(strcpy(other, buf)));
	strcpy(other, VLLM_PAGED_V2);
	assert_true(cupti_sub_is_kv_kernel(other));
}

/* Names too long to keep are decided every time, and counted. */
static void is_kv_kernel__name_past_cache_limit__decided_each_time(void **state)
{
	char *name = long_name(KV_HEAD, 20000, 2);

	(void)state;
	assert_true(cupti_sub_is_kv_kernel(name));
	assert_true(cupti_sub_is_kv_kernel(name));
	assert_int_equal(stats().kv_cache_uncached, 2);
	assert_int_equal(stats().kv_cache_hits, 0);
	free(name);
}

static void reset__bad_kv_cache_env__counted_cache_stays_on(void **state)
{
	struct cupti_sub_config c;

	(void)state;
	setenv("CACHESCOPE_KV_CACHE", "maybe", 1);
	assert_int_equal(cupti_sub_reset(), 1);
	cupti_sub_get_config(&c);
	assert_true(c.kv_cache);
	setenv("CACHESCOPE_KV_CACHE", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	cupti_sub_get_config(&c);
	assert_false(c.kv_cache);
}

static struct {
	volatile int stop;
	long wrong, handled;
} hammer;

/* Handle records of a KV kernel and a GEMM and check each decision, while
 * the main thread resets with two pattern lists that agree on both. */
static void *handle_loop(void *arg)
{
	cupti_sub_kernel_rec kv = kernel_rec(VLLM_RESHAPE, 10, 20);
	cupti_sub_kernel_rec gemm = kernel_rec(GEMM, 10, 20);

	(void)arg;
	while (!__atomic_load_n(&hammer.stop, __ATOMIC_RELAXED)) {
		cupti_sub_handle_record((CUpti_Activity *)&kv);
		cupti_sub_handle_record((CUpti_Activity *)&gemm);
		if (!cupti_sub_is_kv_kernel(VLLM_RESHAPE) || cupti_sub_is_kv_kernel(GEMM) ||
		    !cupti_sub_is_kv_kernel(VLLM_PAGED_V2))
			hammer.wrong++;
		hammer.handled++;
	}
	return NULL;
}

static void reset__while_records_handled__decisions_never_torn(void **state)
{
	struct timespec t0, t;
	pthread_t th;
	long resets = 0;

	(void)state;
	memset(&hammer, 0, sizeof(hammer));
	assert_int_equal(pthread_create(&th, NULL, handle_loop, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* both lists say reshape_and_cache and paged_attention are KV */
		if (resets & 1)
			setenv("CACHESCOPE_KV_KERNELS", "paged_attention*, *reshape_and_cache*,x*y", 1);
		else
			unsetenv("CACHESCOPE_KV_KERNELS");
		assert_int_equal(cupti_sub_reset(), 0);
		resets++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 400 ||
		 __atomic_load_n(&hammer.handled, __ATOMIC_RELAXED) < 1000);
	__atomic_store_n(&hammer.stop, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("%ld resets, %ld rounds of records\n", resets, hammer.handled);
	assert_true(resets > 100);
	assert_int_equal(hammer.wrong, 0);
}

/* ---- the injected library in a process without a driver ---- */

struct run {
	int status;
	char err[4096];
};

/* Run prog with one extra environment variable; stderr is kept. */
/* prog with var=val and, if var2, var2=val2 */
static int run_prog2(const char *prog, const char *var, const char *val, const char *var2,
		     const char *val2, struct run *r)
{
	int fd[2];
	ssize_t n;
	size_t o = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(fd) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 2);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		unsetenv("CUDA_INJECTION64_PATH");
		unsetenv("LD_PRELOAD");
		unsetenv("CACHESCOPE_CUPTI_LIB");
		setenv(var, val, 1);
		if (var2)
			setenv(var2, val2, 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], r->err + o, sizeof(r->err) - 1 - o)) > 0)
		o += (size_t)n;
	close(fd[0]);
	if (waitpid(pid, &r->status, 0) < 0)
		return -errno;
	return 0;
}

static int run_prog(const char *prog, const char *var, const char *val, struct run *r)
{
	return run_prog2(prog, var, val, NULL, NULL, r);
}

void *__real_dlopen(const char *file, int mode);

/* The real dlopen: is there a CUDA driver on this machine? */
static bool have_driver(void)
{
	return __real_dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != NULL;
}

/* ---- CUPTI mocks (linked with -Wl,--wrap) ---- */

static struct {
	bool fake_driver;		/* dlopen("libcuda.so.1") succeeds */
	CUptiResult subscribe_rc, register_rc, kernel_rc, memory2_rc;
	int subscribes, unsubscribes, flush0, flush_forced;
	uint64_t enabled, disabled;	/* bit per kind */
	size_t dropped;			/* next GetNumDroppedRecords answer */
	bool block_subscribe;		/* cuptiSubscribe_v2 never returns */
	/* CUPTI's one subscriber slot: who holds it ("" nobody); a holder
	 * refuses every other subscriber and is named to it */
	char holder[64];
	CUpti_TimestampCallbackFunc timestamp;	/* registered by the library */
	CUptiResult timestamp_rc;
	int in_subscribe;
	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	int copy_callbacks;		/* runtime copy callbacks enabled */
} mock;

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	if (mock.fake_driver && file && strcmp(file, "libcuda.so.1") == 0)
		return &mock;
	return __real_dlopen(file, mode);
}

CUptiResult CUPTIAPI __wrap_cuptiSubscribe_v2(CUpti_SubscriberHandle *h,
					       CUpti_CallbackFunc cb, void *u,
					       CUpti_SubscriberParams *p);
CUptiResult CUPTIAPI __wrap_cuptiSubscribe_v2(CUpti_SubscriberHandle *h,
					       CUpti_CallbackFunc cb, void *u,
					       CUpti_SubscriberParams *p)
{
	(void)cb;
	(void)u;
	assert_non_null(p);
	assert_non_null(p->subscriberName);
	__atomic_store_n(&mock.in_subscribe, 1, __ATOMIC_SEQ_CST);
	while (mock.block_subscribe)
		pause();
	if (mock.subscribe_rc != CUPTI_SUCCESS)
		return mock.subscribe_rc;
	if (*mock.holder) {
		if (p->oldSubscriberName && p->oldSubscriberSize)
			snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s", mock.holder);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	if (!strcmp(p->subscriberName, "cachescope"))
		mock.subscribes++;
	snprintf(mock.holder, sizeof(mock.holder), "%s", p->subscriberName);
	*h = (CUpti_SubscriberHandle)&mock;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle h,
						 CUpti_CallbackDomain d, CUpti_CallbackId cbid);
CUptiResult CUPTIAPI __wrap_cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle h,
						 CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	(void)h;
	(void)cbid;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
		mock.copy_callbacks += on ? 1 : -1;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiUnsubscribe(CUpti_SubscriberHandle h);
CUptiResult CUPTIAPI __wrap_cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	assert_ptr_equal(h, &mock);
	mock.unsubscribes++;
	mock.holder[0] = '\0';
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done);
CUptiResult CUPTIAPI __wrap_cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	if (mock.register_rc != CUPTI_SUCCESS)
		return mock.register_rc;
	mock.requested = req;
	mock.completed = done;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f);
CUptiResult CUPTIAPI __wrap_cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	/* before any kind, as CUPTI asks */
	assert_int_equal(mock.enabled, 0);
	mock.timestamp = f;
	return mock.timestamp_rc;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityEnable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI __wrap_cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && mock.kernel_rc)
		return mock.kernel_rc;
	if (kind == CUPTI_ACTIVITY_KIND_MEMORY2 && mock.memory2_rc)
		return mock.memory2_rc;
	/* CONCURRENT_KERNEL first, as the CUPTI documentation asks */
	if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		assert_true(mock.enabled & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	mock.enabled |= 1ull << kind;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityDisable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI __wrap_cuptiActivityDisable(CUpti_ActivityKind kind)
{
	mock.disabled |= 1ull << kind;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityFlushAll(uint32_t flag);
CUptiResult CUPTIAPI __wrap_cuptiActivityFlushAll(uint32_t flag)
{
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		__atomic_add_fetch(&mock.flush_forced, 1, __ATOMIC_SEQ_CST);
	else
		__atomic_add_fetch(&mock.flush0, 1, __ATOMIC_SEQ_CST);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI __wrap_cuptiActivityGetNumDroppedRecords(CUcontext c,
							     uint32_t s, size_t *d);
CUptiResult CUPTIAPI __wrap_cuptiActivityGetNumDroppedRecords(CUcontext c,
							     uint32_t s, size_t *d)
{
	(void)c;
	(void)s;
	*d = mock.dropped;
	mock.dropped = 0;
	return CUPTI_SUCCESS;
}

/* As if tracers were attached to the probes named (the kernel's uprobe
 * reference counts, which the library reads): "batch", "ext_corr", or
 * NULL for none. */
static void listen(const char *probe)
{
	CS_GPU_SEMA(batch) = probe && !strcmp(probe, "batch");
	CS_GPU_SEMA(ext_corr) = probe && !strcmp(probe, "ext_corr");
}

static int reset_mock(void **state)
{
	memset(&mock, 0, sizeof(mock));
	mock.fake_driver = true;
	listen(NULL);
	return reset_default(state);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* ---- CUPTI wiring, on the mocks ---- */

#define BATCH_KINDS (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL | \
		     1ull << CUPTI_ACTIVITY_KIND_MEMCPY | \
		     1ull << CUPTI_ACTIVITY_KIND_MEMORY2)

static void start__driver_present__enables_kinds_and_flushes(void **state)
{
	const uint64_t want = BATCH_KINDS |
			      1ull << CUPTI_ACTIVITY_KIND_MEMSET |
			      1ull << CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	int i;

	(void)state;
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "5", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	listen("batch");
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(cupti_sub_start(), 0);		/* already recording */
	assert_int_equal(mock.subscribes, 1);
	/* every kind tried at start; the daemon's batches read three */
	assert_int_equal(mock.enabled, want);
	assert_int_equal(stats().enabled_kinds, BATCH_KINDS);
	assert_int_equal(mock.disabled, want & ~BATCH_KINDS);
	/* the runtime's four copy entry points, with the copy records */
	assert_int_equal(mock.copy_callbacks, 4);
	assert_int_equal(stats().copy_callbacks, 1);
	assert_int_equal(cupti_sub_reset(), -EBUSY);
	for (i = 0; i < 200 && __atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST) < 3; i++)
		sleep_ms(5);
	assert_true(__atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST) >= 3);
	assert_int_equal(mock.flush_forced, 0);
	assert_int_equal(cupti_sub_stop(), 0);
	assert_int_equal(mock.flush_forced, 1);
	assert_int_equal(mock.disabled, want);
	assert_int_equal(mock.unsubscribes, 1);
	assert_int_equal(mock.copy_callbacks, 0);
	assert_true(stats().flushes >= 3);
	i = mock.flush0;
	sleep_ms(30);
	assert_int_equal(mock.flush0, i);		/* the thread is gone */
	assert_int_equal(cupti_sub_stop(), 0);		/* not recording */
	assert_int_equal(mock.flush_forced, 1);
	assert_int_equal(cupti_sub_reset(), 0);
}

static void start__memory2_refused__records_without_it(void **state)
{
	(void)state;
	mock.memory2_rc = CUPTI_ERROR_NOT_COMPATIBLE;
	listen("batch");
	assert_int_equal(cupti_sub_start(), 0);
	assert_false(stats().enabled_kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMORY2));
	assert_true(stats().enabled_kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMCPY));
	assert_int_equal(cupti_sub_stop(), 0);
	assert_false(mock.disabled & (1ull << CUPTI_ACTIVITY_KIND_MEMORY2));
}

static void buffer_callbacks__records_and_drops__handled_and_freed(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(VLLM_RESHAPE, 10, 50);
	uint8_t *buf = NULL;
	size_t size = 0, max = 99;

	(void)state;
	setenv("CACHESCOPE_CUPTI_BUFFER_MB", "2", 1);
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	assert_non_null(mock.requested);
	mock.requested(&buf, &size, &max);
	assert_non_null(buf);
	assert_int_equal((uintptr_t)buf % 8, 0);
	assert_int_equal(size, 2 << 20);
	assert_int_equal(max, 0);
	memcpy(buf, &k, sizeof(k));
	memcpy(buf + sizeof(k), &k, sizeof(k));
	mock.dropped = 5;
	mock.completed(NULL, 0, buf, size, 2 * sizeof(k));	/* frees buf */
	assert_int_equal(stats().kv_kernels, 2);
	assert_int_equal(stats().dropped, 5);
	mock.dropped = 2;
	mock.completed(NULL, 0, NULL, 0, 0);
	assert_int_equal(stats().dropped, 7);
	assert_int_equal(stats().flushes, 0);		/* FLUSH_MS=0: no thread */
	assert_int_equal(cupti_sub_stop(), 0);
	assert_int_equal(mock.flush0, 0);
	assert_int_equal(mock.flush_forced, 1);
}

static void stop__in_forked_child__no_flush_no_join(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "5", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int forced = mock.flush_forced;

		_exit(cupti_sub_stop() == 0 && mock.flush_forced == forced &&
		      mock.unsubscribes == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cupti_sub_stop(), 0);		/* the parent still records */
	assert_int_equal(mock.flush_forced, 1);
	assert_int_equal(mock.unsubscribes, 1);
}

/* ---- exit ordering ---- */

static int report_fd = -1;

/* A destructor runs after every atexit handler (glibc's _dl_fini is the
 * first one registered): reports what the library's exit did. */
__attribute__((destructor)) static void report_at_exit(void)
{
	uint64_t v[2] = { (uint64_t)mock.flush_forced, stats().exit_stop_skipped };

	if (report_fd >= 0 && write(report_fd, v, sizeof(v)) != sizeof(v))
		_exit(8);
}

static void *start_blocked(void *arg)
{
	(void)arg;
	cupti_sub_start();	/* holds the lock in cuptiSubscribe_v2, for ever */
	return NULL;
}

/* Fork a child that records, optionally has a thread stuck inside start,
 * and calls exit(0); returns the child's report, fails when it hangs. */
static void exit_child(bool stuck, uint64_t report[2])
{
	int fd[2], status = 0, i;
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t th;

		close(fd[0]);
		report_fd = fd[1];
		setenv("CACHESCOPE_CUPTI_FLUSH_MS", "5", 1);
		if (cupti_sub_reset() != 0 || cupti_sub_start() != 0)
			_exit(3);
		if (stuck) {
			/* stop, then a second start stays inside the driver */
			if (cupti_sub_stop() != 0)
				_exit(4);
			mock.block_subscribe = true;
			mock.in_subscribe = 0;
			if (pthread_create(&th, NULL, start_blocked, NULL))
				_exit(5);
			while (!__atomic_load_n(&mock.in_subscribe, __ATOMIC_SEQ_CST))
				sched_yield();
		}
		exit(0);
	}
	close(fd[1]);
	/* 5 s, never a fixed sleep: poll for the exit */
	for (i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		struct timespec t = { 0, 10000000L };

		nanosleep(&t, NULL);
	}
	if (i == 500) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fd[0]);
		fail_msg("the process hung in its exit");
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	n = read(fd[0], report, 2 * sizeof(uint64_t));
	close(fd[0]);
	assert_int_equal(n, 2 * sizeof(uint64_t));
}

static void atexit__recording__forced_flush_at_exit(void **state)
{
	uint64_t r[2];

	(void)state;
	exit_child(false, r);
	assert_int_equal(r[0], 1);	/* the records CUPTI held were handled */
	assert_int_equal(r[1], 0);
}

static void atexit__thread_holds_lock_in_start__exit_does_not_hang(void **state)
{
	uint64_t r[2];

	(void)state;
	exit_child(true, r);
	assert_int_equal(r[0], 1);	/* from the first stop only */
	assert_int_equal(r[1], 1);
}

/* Run cupti_sub_start in a child (SUB_OUT is for good); stderr is kept. */
static void start_in_child(struct run *r)
{
	int fd[2];
	ssize_t n;
	size_t o = 0;
	pid_t pid;
	int err;

	memset(r, 0, sizeof(*r));
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 2);
		err = cupti_sub_start();
		if (cupti_sub_start() != err)		/* same answer, no line */
			_exit(9);
		_exit(err == -EBUSY ? 1 : err == -ENODEV ? 2 : err == 0 ? 0 : 3);
	}
	close(fd[1]);
	while ((n = read(fd[0], r->err + o, sizeof(r->err) - 1 - o)) > 0)
		o += (size_t)n;
	close(fd[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	assert_true(WIFEXITED(r->status));
}

static void start__other_subscriber__one_line_ebusy(void **state)
{
	struct run r;

	(void)state;
	mock.subscribe_rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_string_equal(r.err, "cachescope-cupti: another CUPTI subscriber "
			    "is active; not recording\n");
}

/* The library stamps CUPTI's records on CLOCK_MONOTONIC, the daemon's
 * clock; CUPTI refusing the callback leaves its own clock and recording on. */
static void start__timestamps__monotonic_clock(void **state)
{
	struct cupti_sub_stats st;
	struct timespec t;
	uint64_t before, got, after;

	(void)state;
	assert_int_equal(cupti_sub_start(), 0);
	assert_non_null(mock.timestamp);
	clock_gettime(CLOCK_MONOTONIC, &t);
	before = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	got = mock.timestamp();
	clock_gettime(CLOCK_MONOTONIC, &t);
	after = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	assert_true(before <= got && got <= after);
	cupti_sub_get_stats(&st);
	assert_int_equal(st.monotonic_clock, 1);
	assert_int_equal(cupti_sub_stop(), 0);

	assert_int_equal(cupti_sub_reset(), 0);
	memset(&mock, 0, sizeof(mock));
	mock.fake_driver = true;
	mock.timestamp_rc = CUPTI_ERROR_NOT_INITIALIZED;
	assert_int_equal(cupti_sub_start(), 0);
	cupti_sub_get_stats(&st);
	assert_int_equal(st.monotonic_clock, 0);
	assert_int_equal(cupti_sub_stop(), 0);
}

/* Another profiler that subscribes as torch.profiler's Kineto does. */
static CUptiResult other_tool_subscribes(const char *name)
{
	CUpti_SubscriberParams p = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = name,
	};
	CUpti_SubscriberHandle h;

	return __wrap_cuptiSubscribe_v2(&h, NULL, NULL, &p);
}

/* The other tool first: the library names it, records nothing and lets
 * the process run (InitializeInjection answers 1 whatever start says). */
static void start__other_tool_first__named_not_recording(void **state)
{
	struct run r;

	(void)state;
	assert_int_equal(other_tool_subscribes("CUPTI for Kineto"), CUPTI_SUCCESS);
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_string_equal(r.err, "cachescope-cupti: another CUPTI subscriber is active "
			    "(CUPTI for Kineto); not recording\n");
}

/* A name CUPTI passes on is anyone's: what is not printable ASCII is not
 * written to the process's stderr. */
static void start__other_tool_odd_name__printable_only(void **state)
{
	struct run r;

	(void)state;
	assert_int_equal(other_tool_subscribes("ev\x1b[2Jil\xc3\xa9"), CUPTI_SUCCESS);
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_string_equal(r.err, "cachescope-cupti: another CUPTI subscriber is active "
			    "(ev?[2Jil?" "?); not recording\n");
}

/* Ours first: CUPTI refuses the other tool while we record, as it defines
 * it (first subscriber wins); once we stop, the slot is the other's. */
static void start__ours_first__other_tool_refused_until_stop(void **state)
{
	(void)state;
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(other_tool_subscribes("CUPTI for Kineto"),
			 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	assert_int_equal(cupti_sub_stop(), 0);
	assert_int_equal(other_tool_subscribes("CUPTI for Kineto"), CUPTI_SUCCESS);
}

/* CACHESCOPE_CUPTI=off, read at injection: the library does not subscribe,
 * says nothing, and the other tool gets the slot.  Any value but on and
 * off is a configuration error, and the library records. */
static void start__cupti_off__slot_left_to_other_tool(void **state)
{
	int fd[2], status;
	char buf[256];
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cupti_sub_stats st;

		close(fd[0]);
		dup2(fd[1], 2);
		setenv("CACHESCOPE_CUPTI", "off", 1);
		if (cupti_sub_reset() != 0 || cupti_sub_start() != -ECANCELED ||
		    mock.subscribes != 0 ||
		    other_tool_subscribes("CUPTI for Kineto") != CUPTI_SUCCESS)
			_exit(1);
		*mock.holder = '\0';
		cupti_sub_get_stats(&st);
		if (st.config_errors)
			_exit(2);
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], buf, sizeof(buf));
	close(fd[0]);
	assert_int_equal(n, 0);		/* not a word */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	setenv("CACHESCOPE_CUPTI", "maybe", 1);
	assert_int_equal(cupti_sub_reset(), 1);
	unsetenv("CACHESCOPE_CUPTI");
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(cupti_sub_stop(), 0);
}

static void start__register_refused_multiple__one_line_ebusy(void **state)
{
	struct run r;

	(void)state;
	mock.register_rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_string_equal(r.err, "cachescope-cupti: another CUPTI subscriber "
			    "is active; not recording\n");
}

static void start__kernel_kind_refused__one_line_enodev(void **state)
{
	struct run r;

	(void)state;
	mock.kernel_rc = CUPTI_ERROR_NOT_INITIALIZED;
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	assert_string_equal(r.err, "cachescope-cupti: no CUDA driver or device "
			    "(cuptiActivityEnable: CUPTI_ERROR_NOT_INITIALIZED); "
			    "not recording\n");
}

static void start__no_libcuda__one_line_enodev(void **state)
{
	struct run r;

	(void)state;
	if (have_driver())
		skip();
	mock.fake_driver = false;
	start_in_child(&r);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	assert_true(strncmp(r.err, "cachescope-cupti: no CUDA driver or device "
			    "(libcuda.so.1", 56) == 0);
	assert_int_equal(mock.subscribes, 0);
}

/* The nodriver helper and the built library's absolute path (PATH_MAX
 * each), or the test is skipped where they are not built. */
static void nodriver_paths(char *prog, char *abs)
{
	const char *b = getenv("CS_BUILD") ? getenv("CS_BUILD") : "build";
	char lib[PATH_MAX];

	snprintf(prog, PATH_MAX, "%s/tests/helpers/nodriver", b);
	snprintf(lib, sizeof(lib), "%s/libcachescope_cupti.so", b);
	if (access(prog, X_OK) != 0 || access(lib, R_OK) != 0) {
		print_message("%s or %s missing (build them first)\n", prog, lib);
		skip();
	}
	if (!realpath(lib, abs))
		fail_msg("cannot resolve %s", lib);
}

static void check_nodriver(const char *var)
{
	const char *want = "cachescope-cupti: no CUDA driver or device (";
	const char *tail = "); not recording\n";
	char prog[PATH_MAX], abs[PATH_MAX], link[64] = "", abs2[128];
	struct run r;
	size_t len;

	nodriver_paths(prog, abs);
	/* ld.so splits LD_PRELOAD at spaces and colons (CUDA_INJECTION64_PATH
	 * is one path): a checkout whose path has them is named by a link */
	if (!strcmp(var, "LD_PRELOAD") && strpbrk(abs, " :")) {
		snprintf(link, sizeof(link), "/tmp/cs-test-preload-XXXXXX");
		assert_non_null(mkdtemp(link));
		snprintf(abs2, sizeof(abs2), "%s/libcachescope_cupti.so", link);
		assert_int_equal(symlink(abs, abs2), 0);
		snprintf(abs, sizeof(abs), "%s", abs2);
	}
	assert_int_equal(run_prog(prog, var, abs, &r), 0);
	if (link[0]) {
		unlink(abs2);
		rmdir(link);
	}
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	if (have_driver()) {
		/* a driver without work to trace: the library attaches quietly */
		print_message("libcuda.so.1 present: expecting no output\n");
		assert_string_equal(r.err, "");
		return;
	}
	len = strlen(r.err);
	assert_true(strncmp(r.err, want, strlen(want)) == 0);
	assert_true(len > strlen(tail));
	assert_string_equal(r.err + len - strlen(tail), tail);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + len - 1);	/* one line */
}

/*
 * The library has no DT_NEEDED on libcupti (cuda/cupti_api.h): on a host
 * whose CUDA is older it still loads, says in one line which CUPTI it
 * found and which it needs, and the process runs on (exit 0).  The old
 * CUPTI is tests/helpers/oldcupti.c, as libcupti.so.12.
 */
static void check_old_cupti(const char *var2, const char *val2, const char *want)
{
	char prog[PATH_MAX], abs[PATH_MAX];
	struct run r;

	nodriver_paths(prog, abs);
	assert_int_equal(run_prog2(prog, "CUDA_INJECTION64_PATH", abs, var2, val2, &r), 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	if (strncmp(r.err, want, strlen(want)))
		fail_msg("expected '%s...', got '%s'", want, r.err);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);	/* one line */
	assert_non_null(strstr(r.err, "; not recording\n"));
}

/* an absolute path to build/tests/helpers/NAME (ld.so splits LD_PRELOAD at
 * spaces and colons: a checkout whose path has them is skipped there) */
static void helper_path(const char *name, char *out, size_t n)
{
	const char *b = getenv("CS_BUILD") ? getenv("CS_BUILD") : "build";
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/tests/helpers/%s", b, name);
	if (access(rel, R_OK) || !realpath(rel, out)) {
		print_message("%s missing (build it first)\n", rel);
		skip();
	}
	assert_true(strlen(out) < n);
}

static void old_cupti__named_by_cachescope_cupti_lib__one_line_says_version_needed(void **state)
{
	char old[PATH_MAX];

	(void)state;
	helper_path("libcupti.so.12", old, sizeof(old));
	check_old_cupti("CACHESCOPE_CUPTI_LIB", old,
			"cachescope-cupti: this CUPTI is API version 26: cachescope-cupti needs 130000 "
			"(CUDA 13.0) or newer");
}

static void old_cupti__already_in_process__one_line_names_it(void **state)
{
	char old[PATH_MAX];

	char link[64] = "", alias[128] = "";

	(void)state;
	helper_path("libcupti.so.12", old, sizeof(old));
	/* ld.so splits LD_PRELOAD at spaces and colons: a checkout whose path
	 * has them is named by a link */
	if (strpbrk(old, " :")) {
		snprintf(link, sizeof(link), "/tmp/cs-test-oldcupti-XXXXXX");
		assert_non_null(mkdtemp(link));
		snprintf(alias, sizeof(alias), "%s/libcupti.so.12", link);
		assert_int_equal(symlink(old, alias), 0);
		snprintf(old, sizeof(old), "%s", alias);
	}
	check_old_cupti("LD_PRELOAD", old,
			"cachescope-cupti: this process has libcupti.so.12 loaded, the CUPTI of an "
			"older CUDA; cachescope-cupti needs libcupti.so.13 (CUDA 13.0 or newer)");
	if (link[0]) {
		unlink(alias);
		rmdir(link);
	}
}

static void old_cupti__cachescope_cupti_lib_missing__one_line_says_which(void **state)
{
	(void)state;
	check_old_cupti("CACHESCOPE_CUPTI_LIB", "/nonexistent/libcupti.so.13",
			"cachescope-cupti: cannot load the CUPTI of CACHESCOPE_CUPTI_LIB: "
			"/nonexistent/libcupti.so.13: cannot open shared object file");
}

/* what makes the above possible: nothing names libcupti at load time */
static void library__needs_no_libcupti_at_load(void **state)
{
	const char *b = getenv("CS_BUILD") ? getenv("CS_BUILD") : "build";
	char cmd[PATH_MAX + 64], out[8192] = "";
	size_t n;
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof(cmd), "readelf -d '%s/libcachescope_cupti.so' 2>&1", b);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out, "(NEEDED)"));
	assert_null(strstr(out, "libcupti"));
}

static void nodriver__injection_path_without_driver__one_line_exit_0(void **state)
{
	(void)state;
	check_nodriver("CUDA_INJECTION64_PATH");
}

static void nodriver__ld_preload_without_driver__one_line_exit_0(void **state)
{
	(void)state;
	check_nodriver("LD_PRELOAD");
}

/* ---- batches ---- */

/* What the batch probe was handed, through --wrap=probe_batch. */
#define EMITTED_MAX 64
static struct {
	struct cs_gpu_bin bin[EMITTED_MAX][CS_GPU_BATCH_MAX];
	unsigned int n[EMITTED_MAX];
	unsigned int batches;
} emitted;

void __real_probe_batch(const struct cs_gpu_bin *bins, unsigned int n);
void __wrap_probe_batch(const struct cs_gpu_bin *bins, unsigned int n);
void __wrap_probe_batch(const struct cs_gpu_bin *bins, unsigned int n)
{
	if (emitted.batches < EMITTED_MAX) {
		memcpy(emitted.bin[emitted.batches], bins, n * sizeof(bins[0]));
		emitted.n[emitted.batches] = n;
	}
	emitted.batches++;
	__real_probe_batch(bins, n);
}

static int reset_batch(void **state)
{
	memset(&emitted, 0, sizeof(emitted));
	listen("batch");
	return reset_default(state);
}

static int stop_listening(void **state)
{
	(void)state;
	listen(NULL);
	return 0;
}

/* The bin of (op, kind, size) starting at start among the emitted ones. */
static const struct cs_gpu_bin *emitted_bin(uint8_t op, uint16_t kind, uint64_t size,
					    uint64_t start)
{
	unsigned int i, j;

	for (i = 0; i < emitted.batches && i < EMITTED_MAX; i++)
		for (j = 0; j < emitted.n[i]; j++) {
			const struct cs_gpu_bin *x = &emitted.bin[i][j];

			if (x->op == op && x->kind == kind && x->size == size && x->start == start)
				return x;
		}
	return NULL;
}

#define MS CS_GPU_BIN_NS

static void batch_run__within_one_bin__counted_with_its_time(void **state)
{
	struct batch b;

	(void)state;
	batch_clear(&b);
	batch_run(&b, CS_GPU_KERNEL, 0, 5 * MS + 100, 5 * MS + 900, 0);
	batch_run(&b, CS_GPU_KERNEL, 0, 5 * MS + 1000, 5 * MS + 1500, 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.bin[0].start, 5 * MS);
	assert_int_equal(b.bin[0].end, 6 * MS);
	assert_int_equal(b.bin[0].count, 2);
	assert_int_equal(b.bin[0].busy_ns, 1300);
	assert_int_equal(b.bin[0].op, CS_GPU_KERNEL);
}

/* A copy over three bins: counted in the first, time and bytes split by
 * time, and the sums exact. */
static void batch_run__straddling_bins__split_by_time_sums_exact(void **state)
{
	uint64_t start = 2 * MS + MS / 2, end = 4 * MS + MS / 4, bytes = 1000003;
	struct batch b;

	(void)state;
	batch_clear(&b);
	batch_run(&b, CS_GPU_MEMCPY, 1, start, end, bytes);
	assert_int_equal(b.n, 3);
	assert_int_equal(b.bin[0].count, 1);
	assert_int_equal(b.bin[1].count + b.bin[2].count, 0);
	assert_int_equal(b.bin[0].busy_ns, MS / 2);
	assert_int_equal(b.bin[1].busy_ns, MS);
	assert_int_equal(b.bin[2].busy_ns, MS / 4);
	assert_int_equal(b.bin[0].bytes, bytes * (MS / 2) / (end - start));
	assert_int_equal(b.bin[1].bytes, bytes * MS / (end - start));
	assert_int_equal(b.bin[0].bytes + b.bin[1].bytes + b.bin[2].bytes, bytes);
	assert_int_equal(b.bin[2].kind, 1);
}

/* Over CS_GPU_SPLIT_BINS bins: a bin of its own, its own time. */
static void batch_run__long_run__bin_of_its_own(void **state)
{
	struct batch b;

	(void)state;
	batch_clear(&b);
	batch_run(&b, CS_GPU_KERNEL, 0, 3 * MS + 7, 3 * MS + 7 + 250 * MS, 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.bin[0].start, 3 * MS + 7);
	assert_int_equal(b.bin[0].end, 3 * MS + 7 + 250 * MS);
	assert_int_equal(b.bin[0].busy_ns, 250 * MS);
	assert_int_equal(b.bin[0].count, 1);
}

/* No end (CUPTI's forced flush of work still running): counted, no time. */
static void batch_run__no_end__counted_without_time(void **state)
{
	struct batch b;

	(void)state;
	batch_clear(&b);
	batch_run(&b, CS_GPU_MEMCPY, 2, 9 * MS + 1, 0, 4096);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.bin[0].start, 9 * MS);
	assert_int_equal(b.bin[0].count, 1);
	assert_int_equal(b.bin[0].busy_ns, 0);
	assert_int_equal(b.bin[0].bytes, 4096);
}

/* Allocations fold by size: count of size, bytes count x size. */
static void batch_mem__sizes__one_bin_per_size(void **state)
{
	struct batch b;
	int i;

	(void)state;
	batch_clear(&b);
	for (i = 0; i < 5; i++)
		batch_mem(&b, CS_GPU_ALLOC, 7 * MS + (uint64_t)i, 2 << 20, BATCH_AGE_UNKNOWN);
	batch_mem(&b, CS_GPU_ALLOC, 7 * MS + 9, 4096, BATCH_AGE_UNKNOWN);
	batch_mem(&b, CS_GPU_RELEASE, 7 * MS + 10, 2 << 20, BATCH_AGE_UNKNOWN);
	assert_int_equal(b.n, 3);
	assert_int_equal(b.bin[0].count, 5);
	assert_int_equal(b.bin[0].size, 2 << 20);
	assert_int_equal(b.bin[0].bytes, 5ull * (2 << 20));
	assert_int_equal(b.bin[0].kind, 0);
	assert_int_equal(b.bin[0].busy_ns, 0);
	assert_int_equal(b.bin[1].count, 1);
	assert_int_equal(b.bin[1].size, 4096);
	assert_int_equal(b.bin[2].op, CS_GPU_RELEASE);
	assert_int_equal(b.bin[2].kind, 0);	/* its allocation not seen */
}

/* Releases fold by the slice of their allocations too: a bin says how old,
 * to the millisecond, what it released was. */
static void batch_mem__releases__one_bin_per_allocation_age(void **state)
{
	struct batch b;

	(void)state;
	batch_clear(&b);
	batch_mem(&b, CS_GPU_RELEASE, 9 * MS + 1, 4096, 2 * MS + 5);
	batch_mem(&b, CS_GPU_RELEASE, 9 * MS + 2, 4096, 2 * MS + 900000);
	batch_mem(&b, CS_GPU_RELEASE, 9 * MS + 3, 4096, 4 * MS);
	batch_mem(&b, CS_GPU_RELEASE, 9 * MS + 4, 4096, 9 * MS + 9);	/* after: age 0 */
	assert_int_equal(b.n, 3);
	assert_int_equal(b.bin[0].kind, CS_GPU_AGE_KNOWN);
	assert_int_equal(b.bin[0].count, 2);
	assert_int_equal(b.bin[0].busy_ns, 7 * MS);
	assert_int_equal(b.bin[1].count, 1);
	assert_int_equal(b.bin[1].busy_ns, 5 * MS);
	assert_int_equal(b.bin[2].busy_ns, 0);
	assert_int_equal(b.bin[2].start, 9 * MS);
}

/* A block copied out to a host buffer and back in from it is a swap-in,
 * near when fewer bytes went out meanwhile than a pool's worth (here, with
 * no allocation seen, 64 blocks); a copy in from elsewhere, or of another
 * size, is none. */
static void copy__out_and_back__swap_in_near_or_far(void **state)
{
	static char host[100][64];
	const struct cs_gpu_bin *x;
	struct cupti_sub_stats st;
	unsigned int i, j, out = 0, in = 0, near = 0, far = 0;
	char dev[64] = "";

	(void)state;
	cupti_sub_handle_copy(host[0], dev, 64, 2);		/* out, to host[0] */
	cupti_sub_handle_copy(dev, host[0], 64, 1);		/* and back: near */
	cupti_sub_handle_copy(dev, host[1], 64, 1);		/* never out: nothing */
	cupti_sub_handle_copy(host[1], dev, 64, 2);
	cupti_sub_handle_copy(dev, host[1], 32, 1);		/* not that block */
	cupti_sub_handle_copy(host[2], dev, 64, 2);		/* out, then 97 more */
	for (i = 3; i < 100; i++)
		cupti_sub_handle_copy(host[i], dev, 64, 2);
	cupti_sub_handle_copy(dev, host[2], 64, 1);		/* back from far */
	cupti_sub_handle_copy(dev, host[99], 64, 1);		/* back at once */
	cupti_sub_flush_batch();
	for (i = 0; i < emitted.batches && i < EMITTED_MAX; i++)
		for (j = 0; j < emitted.n[i]; j++) {
			x = &emitted.bin[i][j];
			if (x->op == CS_GPU_SWAP_OUT)
				out += x->count;
			else if (x->op == CS_GPU_SWAP_IN && x->kind == CS_GPU_NEAR)
				near += x->count;
			else if (x->op == CS_GPU_SWAP_IN)
				far += x->count;
			in += x->op == CS_GPU_SWAP_IN ? x->count : 0;
		}
	assert_int_equal(out, 100);
	assert_int_equal(in, 3);
	assert_int_equal(near, 2);
	assert_int_equal(far, 1);
	st = stats();
	assert_int_equal(st.swap_outs, 100);
	assert_int_equal(st.swap_ins, 3);
	assert_int_equal(st.swap_ins_near, 2);
	/* nobody listening: nothing remembered, nothing binned */
	listen(NULL);
	memset(&emitted, 0, sizeof(emitted));
	cupti_sub_handle_copy(host[0], dev, 64, 2);
	cupti_sub_flush_batch();
	assert_int_equal(emitted.batches, 0);
	assert_int_equal(stats().swap_outs, 100);
}

/* The handler remembers each allocation by address: its release's bin
 * carries its age, a release of memory it never saw allocated says so and
 * is counted, and an address allocated again after release is new. */
static void memory__release_after_alloc__bin_carries_age(void **state)
{
	const struct cs_gpu_bin *x;
	struct cupti_sub_stats st;
	cupti_sub_memory_rec m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1 << 20;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.address = 0x7f0000100000ull;
	m.timestamp = 3 * MS + 7;
	assert_int_equal(cupti_sub_handle_record((const CUpti_Activity *)&m), 0);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.timestamp = 50 * MS + 3;
	assert_int_equal(cupti_sub_handle_record((const CUpti_Activity *)&m), 0);
	/* released again: nothing remembered now */
	m.timestamp = 51 * MS;
	assert_int_equal(cupti_sub_handle_record((const CUpti_Activity *)&m), 0);
	cupti_sub_flush_batch();
	assert_int_equal(emitted.batches, 1);
	assert_int_equal(emitted.n[0], 3);
	x = emitted_bin(CS_GPU_RELEASE, CS_GPU_AGE_KNOWN, 1 << 20, 50 * MS);
	assert_non_null(x);
	assert_int_equal(x->busy_ns, 47 * MS);
	x = emitted_bin(CS_GPU_RELEASE, 0, 1 << 20, 51 * MS);
	assert_non_null(x);
	assert_int_equal(x->busy_ns, 0);
	cupti_sub_get_stats(&st);
	assert_int_equal(st.mem_unmatched, 1);
	assert_int_equal(st.mem_untracked, 0);
}

/* A bin never holds more than the daemon takes: another one follows. */
static void batch_run__bin_at_count_limit__another_bin(void **state)
{
	struct batch *b = malloc(sizeof(*b));
	uint32_t i;

	(void)state;
	assert_non_null(b);
	batch_clear(b);
	for (i = 0; i < CS_GPU_MAX_COUNT + 3; i++)
		batch_run(b, CS_GPU_KERNEL, 0, 0, 0, 0);
	assert_int_equal(b->n, 2);
	assert_int_equal(b->bin[0].count, CS_GPU_MAX_COUNT);
	assert_int_equal(b->bin[1].count, 3);
	free(b);
}

/* The batch takes records while batch_room says so, and never passes
 * CS_GPU_BATCH_MAX bins. */
static void batch_room__many_classes__bounded(void **state)
{
	struct batch b;
	unsigned int i = 0;

	(void)state;
	batch_clear(&b);
	while (batch_room(&b)) {
		batch_run(&b, CS_GPU_KERNEL, 0, (uint64_t)i * MS + MS - 10,
			  (uint64_t)(i + 7) * MS + 5, 0);
		i++;
	}
	assert_true(b.n <= CS_GPU_BATCH_MAX);
	assert_true(b.n > CS_GPU_BATCH_MAX - BATCH_RECORD_BINS);
}

/* Records through the handler while the daemon listens: one batch per
 * flush, its bins summing to the counters; forged values kept out. */
static void handle_record__batch_heard__bins_sum_to_counters(void **state)
{
	cupti_sub_kernel_rec k;
	cupti_sub_memcpy_rec m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20);
	uint64_t busy = 0, kv_busy = 0, kv = 0, bytes = 0, n = 0;
	const struct cs_gpu_bin *x;
	unsigned int i, j;

	(void)state;
	for (i = 0; i < 1000; i++) {
		k = kernel_rec(i % 4 ? GEMM : VLLM_PAGED_V2, 1000000 + i * 3000ull,
			       1000000 + i * 3000ull + 2500);
		assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	}
	m.start = 2 * MS - 100;
	m.end = 2 * MS + 300;
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&m), 0);
	/* forged: ends before it starts, device 5000, copy kind 200 */
	k = kernel_rec(GEMM, 5000, 4000);
	cupti_sub_handle_record((CUpti_Activity *)&k);
	k = kernel_rec(GEMM, 5000, 6000);
	k.deviceId = 5000;
	cupti_sub_handle_record((CUpti_Activity *)&k);
	m.copyKind = 200;
	cupti_sub_handle_record((CUpti_Activity *)&m);
	assert_true(cupti_sub_flush_batch() > 0);
	assert_int_equal(stats().rejected, 3);
	assert_int_equal(stats().batches, emitted.batches);
	for (i = 0; i < emitted.batches; i++)
		for (j = 0; j < emitted.n[i]; j++) {
			x = &emitted.bin[i][j];
			if (x->op == CS_GPU_KERNEL) {
				busy += x->busy_ns;
				n += x->count;
			} else if (x->op == CS_GPU_KV_KERNEL) {
				kv_busy += x->busy_ns;
				kv += x->count;
			} else if (x->op == CS_GPU_MEMCPY) {
				bytes += x->bytes;
			}
			assert_true(x->end > x->start);
		}
	assert_int_equal(n, 1000);
	assert_int_equal(busy, 1000 * 2500);
	assert_int_equal(kv, 250);
	assert_int_equal(kv_busy, 250 * 2500);
	assert_int_equal(bytes, 1 << 20);
	/* the copy straddles a bin boundary: its bytes by time */
	x = emitted_bin(CS_GPU_MEMCPY, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0, 2 * MS);
	assert_non_null(x);
	assert_int_equal(x->count, 0);
	assert_int_equal(x->bytes, (1 << 20) - (1 << 20) * 100 / 400);
	/* 3 ms of kernels: 3 bins of all kernels, 3 of the KV ones, 2 of the
	 * copy; one batch */
	assert_int_equal(emitted.batches, 1);
	assert_int_equal(emitted.n[0], 8);
	assert_int_equal(stats().bins, 8);
}

/* A fork while a batch is open: the child does not hand over its parent's
 * work as its own; the parent still does.  (The library's fork handler is
 * registered by its first start.) */
static void fork__open_batch__child_hands_over_nothing(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(GEMM, 5 * MS, 5 * MS + 100);
	int status;
	pid_t pid;

	(void)state;
	mock.fake_driver = true;
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(cupti_sub_flush_batch() == 0 && stats().kernels == 0 ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cupti_sub_flush_batch(), 1);
	assert_int_equal(stats().kernels, 1);
	assert_int_equal(cupti_sub_stop(), 0);
}

/* Nobody listening: counted, nothing batched, nothing checked. */
static void handle_record__nobody_listens__counted_not_batched(void **state)
{
	cupti_sub_kernel_rec k = kernel_rec(GEMM, 5000, 4000);

	(void)state;
	listen(NULL);
	assert_int_equal(cupti_sub_handle_record((CUpti_Activity *)&k), 0);
	assert_int_equal(cupti_sub_flush_batch(), 0);
	assert_int_equal(stats().kernels, 1);
	assert_int_equal(stats().rejected, 0);
	assert_int_equal(stats().batches, 0);
	assert_int_equal(emitted.batches, 0);
}

/* The flush thread collects only while a tracer is attached: no kinds
 * enabled and no flush without one, the batch kinds with the batch
 * probe's, external correlations only for their own probe. */
static bool wait_kinds(uint64_t want)
{
	int i;

	for (i = 0; i < 400 && stats().enabled_kinds != want; i++)
		sleep_ms(5);
	return stats().enabled_kinds == want;
}

static void collect__follows_tracers__kinds_on_and_off(void **state)
{
	int f;

	(void)state;
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "5", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(stats().enabled_kinds, 0);
	assert_int_equal(stats().collecting, 0);
	sleep_ms(30);
	assert_int_equal(__atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST), 0);
	listen("batch");
	assert_true(wait_kinds(BATCH_KINDS));
	assert_int_equal(stats().collect_on, 1);
	for (f = 0; f < 400 && __atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST) < 2; f++)
		sleep_ms(5);
	assert_true(__atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST) >= 2);
	listen("ext_corr");
	assert_true(wait_kinds(1ull << CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
	listen(NULL);
	assert_true(wait_kinds(0));
	assert_int_equal(stats().collect_off, 1);
	assert_int_equal(stats().collecting, 0);
	sleep_ms(20);	/* a flush that was under way */
	f = __atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST);
	sleep_ms(30);
	assert_int_equal(__atomic_load_n(&mock.flush0, __ATOMIC_SEQ_CST), f);
	assert_int_equal(cupti_sub_stop(), 0);
}

/* No flush thread to watch for tracers: everything, from the start. */
static void collect__no_flush_thread__every_kind(void **state)
{
	(void)state;
	setenv("CACHESCOPE_CUPTI_FLUSH_MS", "0", 1);
	assert_int_equal(cupti_sub_reset(), 0);
	assert_int_equal(cupti_sub_start(), 0);
	assert_int_equal(stats().enabled_kinds, mock.enabled);
	assert_true(stats().enabled_kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMSET));
	assert_int_equal(stats().collecting, 1);
	assert_int_equal(cupti_sub_stop(), 0);
}

#define T(f) cmocka_unit_test_setup(f, reset_default)
#define M(f) cmocka_unit_test_setup(f, reset_mock)
#define B(f) cmocka_unit_test_setup_teardown(f, reset_batch, stop_listening)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(handle_record__concurrent_kernel__counts_kernel_and_time),
		T(handle_record__serial_kernel_kind__counted_as_kernel),
		T(handle_record__kernel_without_timestamps__no_time_added),
		T(is_kv_kernel__default_patterns__match_vllm_and_kvref),
		T(reset__kv_kernels_file__extends_defaults),
		T(is_kv_kernel__default_patterns__reject_other_kernels),
		T(handle_record__kv_kernel__counted_as_kv_with_time),
		T(handle_record__custom_kv_env__replaces_defaults),
		T(handle_record__custom_glob_on_qualified_name__matches),
		T(reset__empty_kv_env__no_kernel_is_kv),
		T(handle_record__null_name__counted_unnamed_not_kv),
		T(handle_record__memcpy__bytes_summed_by_kind),
		T(handle_record__memset__bytes_summed),
		T(handle_record__memory_alloc_release__live_bytes),
		T(handle_record__release_before_alloc__live_goes_negative),
		T(handle_record__external_correlation__counted),
		T(handle_record__unknown_kind__counted_ignored),
		T(handle_record__null_record__einval),
		T(handle_buffer__packed_records__each_handled),
		T(handle_buffer__bogus_record_kind__eio_after_good_ones),
		T(reset__bad_env_values__defaults_used_and_counted),
		T(reset__good_env_values__used),
		T(reset__after_records__counters_zero),
		T(is_kv_kernel__cached__same_decision_as_patterns),
		T(handle_record__same_kernel_again__decided_once),
		T(is_kv_kernel__pointer_reused_for_other_name__decided_again),
		T(is_kv_kernel__name_past_cache_limit__decided_each_time),
		T(reset__bad_kv_cache_env__counted_cache_stays_on),
		T(reset__while_records_handled__decisions_never_torn),
		M(start__driver_present__enables_kinds_and_flushes),
		M(start__memory2_refused__records_without_it),
		M(buffer_callbacks__records_and_drops__handled_and_freed),
		M(stop__in_forked_child__no_flush_no_join),
		M(atexit__recording__forced_flush_at_exit),
		M(atexit__thread_holds_lock_in_start__exit_does_not_hang),
		M(start__other_subscriber__one_line_ebusy),
		M(start__register_refused_multiple__one_line_ebusy),
		M(start__timestamps__monotonic_clock),
		M(start__other_tool_first__named_not_recording),
		M(start__other_tool_odd_name__printable_only),
		M(start__ours_first__other_tool_refused_until_stop),
		M(start__cupti_off__slot_left_to_other_tool),
		M(start__kernel_kind_refused__one_line_enodev),
		M(start__no_libcuda__one_line_enodev),
		T(batch_run__within_one_bin__counted_with_its_time),
		T(batch_run__straddling_bins__split_by_time_sums_exact),
		T(batch_run__long_run__bin_of_its_own),
		T(batch_run__no_end__counted_without_time),
		T(batch_mem__sizes__one_bin_per_size),
		T(batch_mem__releases__one_bin_per_allocation_age),
		B(memory__release_after_alloc__bin_carries_age),
		B(copy__out_and_back__swap_in_near_or_far),
		T(batch_run__bin_at_count_limit__another_bin),
		T(batch_room__many_classes__bounded),
		B(handle_record__batch_heard__bins_sum_to_counters),
		B(handle_record__nobody_listens__counted_not_batched),
		B(fork__open_batch__child_hands_over_nothing),
		M(collect__follows_tracers__kinds_on_and_off),
		M(collect__no_flush_thread__every_kind),
		T(nodriver__injection_path_without_driver__one_line_exit_0),
		T(old_cupti__named_by_cachescope_cupti_lib__one_line_says_version_needed),
		T(old_cupti__already_in_process__one_line_names_it),
		T(old_cupti__cachescope_cupti_lib_missing__one_line_says_which),
		T(library__needs_no_libcupti_at_load),
		T(nodriver__ld_preload_without_driver__one_line_exit_0),
	};

	return cmocka_run_group_tests_name("cupti", tests, NULL, NULL);
}
