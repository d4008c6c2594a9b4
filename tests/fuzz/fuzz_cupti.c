// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness of the CUPTI library's record handler and KV-name
 * matcher (cuda/cupti_sub.c), the code that runs inside customers'
 * processes on whatever CUPTI hands it.  No GPU or driver: records are
 * built from the input as the installed CUPTI headers define them.
 *
 * Input: one byte of mode (bit 0: patterns from the input, bit 1: the KV
 * cache off, bit 2: a tracer attached to the batch probe), then, with bit 0, a pattern list up to a 0 byte; then
 * records: a selector byte (the kind), a name length byte (kernels; 0xff:
 * no name) and that many name bytes, then the record's bytes (zero-padded
 * at the end of the input).
 *
 * Invariants checked: every record is counted once under its kind; KV
 * kernels are kernels; records kept out of the batch are among those
 * batched, and a batch made while a tracer listens is handed to it; the
 * cached decision for every name seen is the one the patterns give with
 * the cache off.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../cuda/cupti_sub.h"
#include "../../cuda/probes.h"

#define MAX_NAMES 16

static void check(bool ok)
{
	if (!ok)
		abort();
}

static size_t take(const uint8_t **d, size_t *n, void *out, size_t len)
{
	size_t k = *n < len ? *n : len;

	memset(out, 0, len);
	memcpy(out, *d, k);
	*d += k;
	*n -= k;
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *names[MAX_NAMES];
	union {
		CUpti_Activity a;
		cupti_sub_kernel_rec k;
		cupti_sub_memcpy_rec c;
		cupti_sub_memset_rec s;
		cupti_sub_memory_rec m;
		cupti_sub_extcorr_rec x;
	} r;
	struct cupti_sub_stats st;
	bool dec[MAX_NAMES];
	unsigned int nn = 0, i;
	uint8_t mode = 0, sel, len;
	uint64_t kinds;
	bool kv;

	take(&data, &size, &mode, 1);
	unsetenv("CACHESCOPE_KV_KERNELS");
	if (mode & 1) {
		const uint8_t *z = memchr(data, 0, size);
		size_t l = z ? (size_t)(z - data) : size;
		char *pat = malloc(l + 1);

		check(pat != NULL);
		memcpy(pat, data, l);
		pat[l] = '\0';
		setenv("CACHESCOPE_KV_KERNELS", pat, 1);
		free(pat);
		data += l < size ? l + 1 : l;
		size -= l < size ? l + 1 : l;
	}
	setenv("CACHESCOPE_KV_CACHE", mode & 2 ? "0" : "1", 1);
	check(cupti_sub_reset() >= 0);
	CS_GPU_SEMA(batch) = (mode & 4) != 0;
	while (size > 0 && nn < MAX_NAMES) {
		take(&data, &size, &sel, 1);
		switch (sel % 7) {
		case 0:
		case 1:
			take(&data, &size, &len, 1);
			take(&data, &size, &r.k, sizeof(r.k));
			r.k.kind = sel % 7 ? CUPTI_ACTIVITY_KIND_KERNEL :
					     CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			r.k.name = NULL;
			if (len != 0xff) {
				names[nn] = malloc((size_t)len + 1);
				check(names[nn] != NULL);
				take(&data, &size, names[nn], len);
				names[nn][len] = '\0';
				r.k.name = names[nn++];
			}
			break;
		case 2:
			take(&data, &size, &r.c, sizeof(r.c));
			r.c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			break;
		case 3:
			take(&data, &size, &r.s, sizeof(r.s));
			r.s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
			break;
		case 4:
			take(&data, &size, &r.m, sizeof(r.m));
			r.m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
			break;
		case 5:
			take(&data, &size, &r.x, sizeof(r.x));
			r.x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			break;
		default:
			take(&data, &size, &r.a, sizeof(r.a));
			r.a.kind = CUPTI_ACTIVITY_KIND_MARKER;
			break;
		}
		cupti_sub_handle_record(&r.a);
	}
	cupti_sub_flush_batch();
	cupti_sub_get_stats(&st);
	kinds = st.kernels + st.memcpys + st.memsets + st.memory_records + st.ext_corrs +
		st.ignored;
	check(st.records == kinds);
	check(st.rejected <= st.kernels + st.memcpys + st.memory_records);
	check((mode & 4) || st.rejected == 0);
	check(!(mode & 4) || st.batches_unheard == 0);
	check(st.kv_kernels <= st.kernels);
	check(st.unnamed_kernels <= st.kernels);
	/* the cache, as the records left it, says what the patterns say */
	for (i = 0; i < nn; i++) {
		kv = cupti_sub_is_kv_kernel(names[i]);
		check(cupti_sub_is_kv_kernel(names[i]) == kv);
		dec[i] = kv;
	}
	setenv("CACHESCOPE_KV_CACHE", "0", 1);
	check(cupti_sub_reset() >= 0);
	for (i = 0; i < nn; i++)
		check(cupti_sub_is_kv_kernel(names[i]) == dec[i]);
	for (i = 0; i < nn; i++) {
		free(names[i]);
		names[i] = NULL;
	}
	return 0;
}
