/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether a kernel's BTF tracepoint has the prototype our tp_btf program
 * takes.  The BTF programs read their arguments typed, so one that runs on
 * an older prototype reads a size as a pointer; where the prototype
 * differs the loader runs the classic tracepoint instead.  The differences
 * and the kernel commits behind them: bpf/core_fixes.bpf.h.
 */
#ifndef CS_TPPROTO_H
#define CS_TPPROTO_H

#include <stdbool.h>

struct btf;

/* tp: the tracepoint's name (kmem_cache_alloc); btf: the kernel's.  True
 * when the kernel has btf_trace_<tp> and, for a tracepoint whose prototype
 * has changed under our program, the one the program takes. */
bool tpproto_ok(const struct btf *btf, const char *tp);

#endif /* CS_TPPROTO_H */
