/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where kernels differ, in one place, each difference with the kernel
 * commit that made it (as libbpf-tools' core_fixes.bpf.h does).
 *
 * The BTF tracepoints' prototypes, which the programs in cachescope.bpf.c
 * take as typed arguments (the loader checks them, loader.c tp_btf_ok):
 *
 * - commit 2c1d697fb8ba ("mm/slab_common: drop kmem_alloc & avoid
 *   dereferencing fields when not using", 6.1) gave kmem_cache_alloc the
 *   cache itself, (call_site, ptr, s, gfp_flags, node), where it had the
 *   sizes, (call_site, ptr, bytes_req, bytes_alloc, gfp_flags); and
 *   commit 11e9734bcb6a ("mm/slab_common: unify NUMA and UMA version of
 *   tracepoints", 6.1) folded kmem_cache_alloc_node and kmalloc_node into
 *   them with a node argument.  On an older kernel the BTF programs
 *   would read a size as a pointer: the loader refuses them there and
 *   the classic tracepoints run instead.
 *
 * The structures the page-cache programs read:
 *
 * - commit 53fbef56e07d ("mm: introduce memdesc_flags_t", 6.18) made
 *   folio->flags a struct of one unsigned long; the word is read whole,
 *   so both layouts read alike.
 * - The order of a large folio sits in the low byte of _flags_1 (the
 *   kernel's folio_order()); a kernel without that field has no large
 *   page-cache folios to tell, and the order reads as 0.
 */
#ifndef CS_CORE_FIXES_BPF_H
#define CS_CORE_FIXES_BPF_H

/* folio_order() without the kernel's inline helpers: PG_head in the first
 * flags word (a plain unsigned long before 6.17, memdesc_flags_t after),
 * the order in the low byte of _flags_1. */
static __always_inline __u32 folio_order_of(struct folio *folio)
{
	unsigned long flags = 0, flags1 = 0;
	int head = bpf_core_enum_value(enum pageflags, PG_head);

	bpf_core_read(&flags, sizeof(flags), &folio->flags);
	if (!(flags & (1ul << head)))
		return 0;
	if (bpf_core_field_exists(folio->_flags_1))
		flags1 = BPF_CORE_READ(folio, _flags_1);
	return flags1 & 0xff;
}

#endif /* CS_CORE_FIXES_BPF_H */
