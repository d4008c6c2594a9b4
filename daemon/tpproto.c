// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BTF tracepoints' prototypes (tpproto.h).  A BTF tracepoint is the
 * typedef btf_trace_<name>: a pointer to a function prototype whose first
 * parameter is the program's context and the rest the tracepoint's
 * arguments.
 */
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>

#include "tpproto.h"

/* The struct a parameter points to, by name; NULL if it is no pointer to
 * a struct. */
static const char *param_struct(const struct btf *btf, __u32 type)
{
	const struct btf_type *t;
	int id = btf__resolve_type(btf, type);

	if (id < 0 || !(t = btf__type_by_id(btf, id)) || !btf_is_ptr(t))
		return NULL;
	id = btf__resolve_type(btf, t->type);
	if (id < 0 || !(t = btf__type_by_id(btf, id)) || !btf_is_struct(t))
		return NULL;
	return btf__name_by_offset(btf, t->name_off);
}

/* kmem_cache_alloc(call_site, ptr, s, gfp_flags, node) since 6.1; before
 * it the third argument was bytes_req (core_fixes.bpf.h). */
static bool kmem_cache_alloc_ok(const struct btf *btf, const struct btf_type *proto)
{
	const struct btf_param *p = btf_params(proto);
	const char *s;

	if (btf_vlen(proto) != 6)
		return false;
	s = param_struct(btf, p[3].type);
	return s && !strcmp(s, "kmem_cache");
}

bool tpproto_ok(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[96];
	int id;

	if ((size_t)snprintf(name, sizeof(name), "btf_trace_%s", tp) >= sizeof(name))
		return false;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	if (strcmp(tp, "kmem_cache_alloc"))
		return true;
	t = btf__type_by_id(btf, id);
	if (!t || !(t = btf__type_by_id(btf, t->type)) || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) && kmem_cache_alloc_ok(btf, t);
}
