// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nodriver: a process that loads the CUPTI subscriber the way the CUDA
 * driver would, does some work and exits 0, to show that the library stays
 * out of the way where there is no driver.
 *
 *   CUDA_INJECTION64_PATH=build/libcachescope_cupti.so nodriver
 *   LD_PRELOAD=build/libcachescope_cupti.so nodriver
 *
 * The driver reads CUDA_INJECTION64_PATH inside cuInit, dlopens that path
 * and calls its InitializeInjection; with no driver nothing would, so this
 * program does the same itself.  Without the variable it calls an
 * InitializeInjection already in the process (LD_PRELOAD), if any.  It
 * prints one line on stdout; anything on stderr comes from the library,
 * except its own errors (exit 2).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(void);

static int nodriver_inject(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *h = RTLD_DEFAULT;
	init_fn init;

	if (path && *path) {
		h = dlopen(path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "nodriver: cannot load %s: %s\n", path, dlerror());
			return -1;
		}
	}
	init = (init_fn)dlsym(h, "InitializeInjection");
	if (!init) {
		if (h == RTLD_DEFAULT)
			return 0;
		fprintf(stderr, "nodriver: %s has no InitializeInjection\n", path);
		return -1;
	}
	return init() == 1 ? 0 : -1;
}

/* Some work that the injected library must not disturb. */
static uint64_t nodriver_work(void)
{
	uint64_t x = 88172645463325252ull, sum = 0;
	int i;

	for (i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x >> 32;
	}
	return sum;
}

int main(void)
{
	if (nodriver_inject() < 0)
		return 2;
	printf("nodriver: %llu\n", (unsigned long long)nodriver_work());
	return 0;
}
