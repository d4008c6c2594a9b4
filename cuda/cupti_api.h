/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUPTI entry points the library calls, looked up when recording
 * starts instead of linked: libcachescope_cupti.so has no DT_NEEDED on
 * libcupti, so that on a host whose CUDA is older than the headers it was
 * built with (a CUDA 12 host has libcupti.so.12 and no .so.13) it still
 * loads, says in one line which CUPTI it needs, and leaves the engine to
 * run without GPU records, where a missing DT_NEEDED would make the driver
 * drop the library without a word.
 *
 * Built with CUPTI_SUB_LINKED (the unit tests, the benchmark, the fuzzer)
 * the table holds the linked functions, so --wrap mocks them as before.
 */
#ifndef CACHESCOPE_CUPTI_API_H
#define CACHESCOPE_CUPTI_API_H

#include <stddef.h>
#include <cupti.h>

/* the soname of the CUPTI of the headers built with, and the least API
 * version whose records (Kernel10, Memcpy6, Memory4) those headers read */
#define CUPTI_API_SONAME "libcupti.so.13"
#define CUPTI_API_NEEDED 130000

struct cupti_api {
	CUptiResult (CUPTIAPI *GetVersion)(uint32_t *version);
	CUptiResult (CUPTIAPI *GetResultString)(CUptiResult result, const char **str);
	CUptiResult (CUPTIAPI *Subscribe_v2)(CUpti_SubscriberHandle *subscriber,
					     CUpti_CallbackFunc callback, void *userdata,
					     CUpti_SubscriberParams *params);
	CUptiResult (CUPTIAPI *Unsubscribe)(CUpti_SubscriberHandle subscriber);
	CUptiResult (CUPTIAPI *EnableCallback)(uint32_t enable, CUpti_SubscriberHandle subscriber,
					       CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
	CUptiResult (CUPTIAPI *ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc requested,
							  CUpti_BuffersCallbackCompleteFunc completed);
	CUptiResult (CUPTIAPI *ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc f);
	CUptiResult (CUPTIAPI *ActivityEnable)(CUpti_ActivityKind kind);
	CUptiResult (CUPTIAPI *ActivityDisable)(CUpti_ActivityKind kind);
	CUptiResult (CUPTIAPI *ActivityFlushAll)(uint32_t flag);
	CUptiResult (CUPTIAPI *ActivityGetNextRecord)(uint8_t *buffer, size_t valid,
						      CUpti_Activity **record);
	CUptiResult (CUPTIAPI *ActivityGetNumDroppedRecords)(CUcontext context, uint32_t stream,
							     size_t *dropped);
};

/* Filled by cupti_api_load; read only after it returned 0. */
extern struct cupti_api cupti_api;

/*
 * Find CUPTI and fill cupti_api, once: the CUPTI library named by
 * CACHESCOPE_CUPTI_LIB (a path) if set, else the CUPTI_API_SONAME the
 * process has loaded already (PyTorch's, say), else that soname on the
 * library path (the library's RPATH names the toolkit's).  0 when every
 * entry point is there and its version is CUPTI_API_NEEDED or newer;
 * else -ENOENT (no such CUPTI, or an older one, libcupti.so.12, already in
 * the process) or -EPROTO (too old, or an entry point missing), with one
 * sentence in why that says what was found and what is needed.  The
 * answer is kept: later calls return it again.  Not thread-safe; the
 * library calls it under its start lock.
 */
int cupti_api_load(char *why, size_t len);

#endif
