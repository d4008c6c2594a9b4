// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * oldcupti: stands for the CUPTI of an older CUDA (a CUDA 12 host's
 * libcupti.so.12) where no such host is, for the tests of how the CUPTI
 * library refuses it: built as libcupti.so.12 (its soname), it answers
 * cuptiGetVersion with OLDCUPTI_VERSION (CUDA 12's CUPTI API versions are
 * two-digit numbers; the CUDA 13.0 headers here say 130001) and has the
 * other entry points the library looks up, which fail.  Named by CACHESCOPE_CUPTI_LIB, or preloaded to be "already
 * in the process".
 */
#include <stdint.h>

#define OLDCUPTI_VERSION 26
#define OLD_ERROR 999		/* CUPTI_ERROR_UNKNOWN */

int cuptiGetVersion(uint32_t *v);
int cuptiGetVersion(uint32_t *v)
{
	*v = OLDCUPTI_VERSION;
	return 0;
}

#define FAILING(name) \
	int name(void); \
	int name(void) { return OLD_ERROR; }

FAILING(cuptiGetResultString)
FAILING(cuptiSubscribe_v2)
FAILING(cuptiUnsubscribe)
FAILING(cuptiEnableCallback)
FAILING(cuptiActivityRegisterCallbacks)
FAILING(cuptiActivityRegisterTimestampCallback)
FAILING(cuptiActivityEnable)
FAILING(cuptiActivityDisable)
FAILING(cuptiActivityFlushAll)
FAILING(cuptiActivityGetNextRecord)
FAILING(cuptiActivityGetNumDroppedRecords)
