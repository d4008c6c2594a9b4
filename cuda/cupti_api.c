// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUPTI's entry points, found at start (cuda/cupti_api.h says why).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cupti_api.h"

#ifdef CUPTI_SUB_LINKED

struct cupti_api cupti_api = {
	.GetVersion = cuptiGetVersion,
	.GetResultString = cuptiGetResultString,
	.Subscribe_v2 = cuptiSubscribe_v2,
	.Unsubscribe = cuptiUnsubscribe,
	.EnableCallback = cuptiEnableCallback,
	.ActivityRegisterCallbacks = cuptiActivityRegisterCallbacks,
	.ActivityRegisterTimestampCallback = cuptiActivityRegisterTimestampCallback,
	.ActivityEnable = cuptiActivityEnable,
	.ActivityDisable = cuptiActivityDisable,
	.ActivityFlushAll = cuptiActivityFlushAll,
	.ActivityGetNextRecord = cuptiActivityGetNextRecord,
	.ActivityGetNumDroppedRecords = cuptiActivityGetNumDroppedRecords,
};

int cupti_api_load(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

#else

struct cupti_api cupti_api;

static int loaded;		/* 1 done, else minus the errno of the answer */
static char loaded_why[320];

/* the CUDA the driver in this process supports, as "CUDA 12.4", or "" */
static void driver_cuda(char *out, size_t len)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*get)(int *);
	int v = 0;

	*out = '\0';
	if (!h)
		return;
	get = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	if (get && get(&v) == 0 && v > 0)
		snprintf(out, len, "; the driver supports CUDA %d.%d", v / 1000, v % 1000 / 10);
	dlclose(h);
}

/* an older CUPTI already in the process: two CUPTIs must not meet */
static const char *older_loaded(void)
{
	static const char *const older[] = { "libcupti.so.12", "libcupti.so.11", NULL };
	int i;

	for (i = 0; older[i]; i++) {
		void *h = dlopen(older[i], RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			dlclose(h);
			return older[i];
		}
	}
	return NULL;
}

#define LOOK(h, field, name) \
	((cupti_api.field = (__typeof__(cupti_api.field))dlsym((h), (name))) != NULL || (miss = (name)))

static int load(char *why, size_t len)
{
	const char *path = getenv("CACHESCOPE_CUPTI_LIB"), *old, *miss = NULL, *e;
	char drv[64];
	uint32_t version = 0;
	void *h;

	driver_cuda(drv, sizeof(drv));
	if (path && *path) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			e = dlerror();
			snprintf(why, len, "cannot load the CUPTI of CACHESCOPE_CUPTI_LIB: %s",
				 e ? e : path);
			return -ENOENT;
		}
	} else if (!(h = dlopen(CUPTI_API_SONAME, RTLD_NOW | RTLD_NOLOAD))) {
		if ((old = older_loaded())) {
			snprintf(why, len, "this process has %s loaded, the CUPTI of an older CUDA; "
				 "cachescope-cupti needs " CUPTI_API_SONAME " (CUDA 13.0 or newer)%s",
				 old, drv);
			return -ENOENT;
		}
		h = dlopen(CUPTI_API_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, len, "no " CUPTI_API_SONAME " here: cachescope-cupti needs the "
				 "CUPTI of CUDA 13.0 or newer (or CACHESCOPE_CUPTI_LIB naming one)%s", drv);
			return -ENOENT;
		}
	}
	if (!LOOK(h, GetVersion, "cuptiGetVersion") ||
	    !LOOK(h, GetResultString, "cuptiGetResultString") ||
	    !LOOK(h, Subscribe_v2, "cuptiSubscribe_v2") ||
	    !LOOK(h, Unsubscribe, "cuptiUnsubscribe") ||
	    !LOOK(h, EnableCallback, "cuptiEnableCallback") ||
	    !LOOK(h, ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks") ||
	    !LOOK(h, ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback") ||
	    !LOOK(h, ActivityEnable, "cuptiActivityEnable") ||
	    !LOOK(h, ActivityDisable, "cuptiActivityDisable") ||
	    !LOOK(h, ActivityFlushAll, "cuptiActivityFlushAll") ||
	    !LOOK(h, ActivityGetNextRecord, "cuptiActivityGetNextRecord") ||
	    !LOOK(h, ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords")) {
		snprintf(why, len, "this CUPTI has no %s: cachescope-cupti needs CUDA 13.0's or newer%s",
			 miss, drv);
		dlclose(h);
		return -EPROTO;
	}
	if (cupti_api.GetVersion(&version) != CUPTI_SUCCESS || version < CUPTI_API_NEEDED) {
		snprintf(why, len, "this CUPTI is API version %u: cachescope-cupti needs %u (CUDA 13.0) "
			 "or newer%s", version, CUPTI_API_NEEDED, drv);
		dlclose(h);
		return -EPROTO;
	}
	return 0;
}

int cupti_api_load(char *why, size_t len)
{
	int err;

	if (loaded == 1)
		return 0;
	if (loaded < 0) {
		snprintf(why, len, "%s", loaded_why);
		return loaded;
	}
	err = load(loaded_why, sizeof(loaded_why));
	if (err)
		memset(&cupti_api, 0, sizeof(cupti_api));	/* a half-filled table is no table */
	loaded = err ? err : 1;
	snprintf(why, len, "%s", loaded_why);
	return err;
}

#endif
