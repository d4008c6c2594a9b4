// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocation stacks of sampled slab objects (stacks.h): unwound by libdwfl
 * from the registers and the stack copy BPF took, named, and kept per
 * object until its free.
 */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../bpf/cachescope.h"
#include "clock.h"
#include "htab.h"
#include "kstate.h"
#include "stacks.h"
#include "strutil.h"

/* a distinct stack, shared by the objects allocated from it */
struct ustack {
	uint64_t hash;
	uint32_t refs;
	char user[sizeof(((struct stack_top *)0)->user)];
	char kernel[sizeof(((struct stack_top *)0)->kernel)];
};

/* a sampled live object: its stack as BPF copied it until it is asked
 * for (most objects are freed before: a leak's stay), then named */
struct sobj {
	uint64_t ptr, alloc_ns, cache;
	uint32_t tgid;
	struct cs_stack *raw;	/* the record's header and len bytes of stack */
	struct ustack *stack;
};

/* a key's count of objects */
struct skey {
	uint64_t cache;
	uint32_t tgid;
	uint32_t n;
};

struct frames {
	Dwarf_Addr pc[STACKS_FRAMES];
	int n;
};

/* A stack of the process named already: its frames, and their names.  A
 * leak's objects come from one call path, each unwound once: naming its
 * frames again (libdwfl's symbol lookups) was 6 % of the daemon's CPU under
 * --workload leak.  Valid while the process's Dwfl is (its maps as read). */
#define STACKS_NAMED 4
struct named {
	struct frames f;
	char user[sizeof(((struct ustack *)0)->user)];
};

/* a process's unwinder: its modules, reported from its maps */
struct sproc {
	uint32_t pid;
	Dwfl *dwfl;
	uint64_t used_ns;
	struct named named[STACKS_NAMED];
	unsigned int next_named;	/* the one replaced next */
};

/* what the thread callbacks read: the record being unwound */
struct unwind_arg {
	const struct cs_stack *rec;
	bool asked;
};

/* Tracked objects freed lately, by a hash of (address, allocation time),
 * direct-mapped: the free record of an object can be read before its
 * stack record (they come through different rings), and such an object
 * must not be kept as live. */
#define RECENT_FREES 16384

struct stacks {
	uint64_t recent[RECENT_FREES];
	struct htab objs;	/* of struct sobj, by ptr */
	struct htab keys;	/* of struct skey */
	struct htab uniq;	/* of struct ustack, by hash */
	struct sproc procs[STACKS_PROCS];
	struct unwind_arg arg;
	struct ksyms *ks;
	stacks_maps_fn maps;
	void *maps_ctx;
	char maps_buf[64 << 10];
	struct stacks_stats s;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h;
}

static uint64_t obj_hash(const void *e, void *ctx)
{
	(void)ctx;
	return mix64(((const struct sobj *)e)->ptr);
}

static bool obj_eq(const void *e, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct sobj *)e)->ptr == *(const uint64_t *)key;
}

static uint64_t skey_hash_of(uint32_t tgid, uint64_t cache)
{
	return mix64(cache ^ (uint64_t)tgid * 0x9e3779b97f4a7c15ull);
}

static uint64_t key_hash(const void *e, void *ctx)
{
	const struct skey *k = e;

	(void)ctx;
	return skey_hash_of(k->tgid, k->cache);
}

static bool key_eq(const void *e, const void *key, void *ctx)
{
	const struct skey *a = e, *b = key;

	(void)ctx;
	return a->tgid == b->tgid && a->cache == b->cache;
}

static uint64_t uniq_hash(const void *e, void *ctx)
{
	(void)ctx;
	return ((const struct ustack *)e)->hash;
}

static bool uniq_eq(const void *e, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct ustack *)e)->hash == *(const uint64_t *)key;
}

struct stacks *stacks_new(stacks_maps_fn maps, void *maps_ctx)
{
	struct stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	htab_init(&st->objs, 1024, 3, 4, obj_hash, obj_eq, NULL);
	htab_init(&st->keys, 64, 3, 4, key_hash, key_eq, NULL);
	htab_init(&st->uniq, 256, 3, 4, uniq_hash, uniq_eq, NULL);
	st->maps = maps;
	st->maps_ctx = maps_ctx;
	return st;
}

void stacks_set_ksyms(struct stacks *st, struct ksyms *ks)
{
	st->ks = ks;
}

static void proc_drop(struct sproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

void stacks_free(struct stacks *st)
{
	size_t i;

	if (!st)
		return;
	for (i = htab_next(&st->objs, 0); i < st->objs.cap; i = htab_next(&st->objs, i + 1)) {
		free(((struct sobj *)st->objs.slot[i])->raw);
		free(st->objs.slot[i]);
	}
	for (i = htab_next(&st->keys, 0); i < st->keys.cap; i = htab_next(&st->keys, i + 1))
		free(st->keys.slot[i]);
	for (i = htab_next(&st->uniq, 0); i < st->uniq.cap; i = htab_next(&st->uniq, i + 1))
		free(st->uniq.slot[i]);
	htab_release(&st->objs);
	htab_release(&st->keys);
	htab_release(&st->uniq);
	for (i = 0; i < STACKS_PROCS; i++)
		proc_drop(&st->procs[i]);
	free(st);
}

/* ---- unwinding: libdwfl's thread callbacks over one record ---- */

static pid_t cb_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unwind_arg *a = dwfl_arg;

	(void)dwfl;
	if (a->asked)
		return 0;
	a->asked = true;
	*thread_argp = a;
	return a->rec->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	struct unwind_arg *a = dwfl_arg;

	(void)dwfl;
	if ((uint32_t)tid != a->rec->tid)
		return false;
	*thread_argp = a;
	return true;
}

/* Only the copied stack is readable: the call-frame rules read saved
 * registers and return addresses there. */
static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	const struct cs_stack *r = ((struct unwind_arg *)dwfl_arg)->rec;
	uint64_t sp = r->regs[7];

	(void)dwfl;
	if (addr < sp || addr - sp > r->len || r->len - (addr - sp) < sizeof(*result))
		return false;
	memcpy(result, r->data + (addr - sp), sizeof(*result));
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct cs_stack *r = ((struct unwind_arg *)thread_arg)->rec;
	Dwarf_Word regs[CS_STACK_REGS];
	int i;

	for (i = 0; i < CS_STACK_REGS; i++)
		regs[i] = r->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, CS_STACK_REGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, r->regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static ssize_t proc_maps(uint32_t pid, char *buf, size_t n)
{
	char path[32], line[512];
	size_t got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &at) < 4 || !at || perms[2] != 'x' || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (got + 1 < n)
			got += snprintf(buf + got, n - got, "%llx %llx %llx %s\n", start, end, off,
					line + at);
	}
	fclose(f);
	return got < n ? (ssize_t)got : (ssize_t)n - 1;
}

bool stacks_maps_next(char **text, uint64_t *start, uint64_t *off, char **path)
{
	while (*text && **text) {
		char *line = *text, *nl = strchr(line, '\n');
		unsigned long long s, e, o;
		int at = 0;

		*text = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		if (sscanf(line, "%llx %llx %llx %n", &s, &e, &o, &at) >= 3 && at &&
		    line[at] == '/') {
			*start = s;
			*off = o;
			*path = line + at;
			return true;
		}
	}
	return false;
}

/* Report each executable file mapping's ELF file, loaded at its start
 * less its offset (the text segment's address in the file equals its
 * offset, as linkers lay them out); a file that cannot be opened is left
 * out, and its frames end the stack. */
static int report_maps(Dwfl *dwfl, char *text)
{
	uint64_t start, off;
	char *file;
	int n = 0;

	while (stacks_maps_next(&text, &start, &off, &file)) {
		if (start < off || dwfl_addrmodule(dwfl, start))
			continue;
		if (dwfl_report_elf(dwfl, strrchr(file, '/') + 1, file, -1, start - off, false))
			n++;
	}
	return n;
}

/* The unwinder of process pid, made (again, with rebuild) from its maps;
 * NULL when they cannot be read. */
static struct sproc *proc_dwfl(struct stacks *st, uint32_t pid, uint64_t now, bool rebuild)
{
	struct sproc *p = NULL, *lru = &st->procs[0];
	ssize_t len;
	int i;

	for (i = 0; i < STACKS_PROCS; i++) {
		if (st->procs[i].pid == pid && st->procs[i].dwfl) {
			p = &st->procs[i];
			break;
		}
		if (st->procs[i].used_ns < lru->used_ns)
			lru = &st->procs[i];
	}
	if (p && !rebuild) {
		p->used_ns = now;
		return p;
	}
	if (!p)
		p = lru;
	proc_drop(p);
	p->dwfl = dwfl_begin(&proc_cbs);
	if (!p->dwfl)
		return NULL;
	len = st->maps ? st->maps(st->maps_ctx, pid, st->maps_buf, sizeof(st->maps_buf)) :
			 proc_maps(pid, st->maps_buf, sizeof(st->maps_buf));
	if (len <= 0 || !report_maps(p->dwfl, st->maps_buf) ||
	    dwfl_report_end(p->dwfl, NULL, NULL) ||
	    !dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &thread_cbs, &st->arg)) {
		proc_drop(p);
		return NULL;
	}
	p->pid = pid;
	p->used_ns = now;
	return p;
}

/* The names of frames f where p named them before. */
static bool named_find(const struct sproc *p, const struct frames *f, char *buf, size_t n)
{
	int i;

	for (i = 0; i < STACKS_NAMED; i++) {
		const struct named *m = &p->named[i];

		if (m->f.n == f->n && !memcmp(m->f.pc, f->pc, (size_t)f->n * sizeof(f->pc[0]))) {
			snprintf(buf, n, "%s", m->user);
			return true;
		}
	}
	return false;
}

static void named_keep(struct sproc *p, const struct frames *f, const char *user)
{
	struct named *m = &p->named[p->next_named++ % STACKS_NAMED];

	m->f = *f;
	snprintf(m->user, sizeof(m->user), "%s", user);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	bool activation;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a return address points past its call: name the call */
	f->pc[f->n++] = activation ? pc : pc - 1;
	return f->n < STACKS_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* "fn (file) < caller (file) < file+0xoff" of the frames (the offset in
 * its file where a frame has no symbol); false when a pc is in no module
 * (the maps changed since they were read). */
static bool name_frames(Dwfl *dwfl, const struct frames *f, char *buf, size_t n)
{
	int i;

	buf[0] = 0;
	for (i = 0; i < f->n; i++) {
		Dwfl_Module *mod = dwfl_addrmodule(dwfl, f->pc[i]);
		const char *sym, *file = NULL, *base;
		Dwarf_Addr start = 0;
		GElf_Off off = 0;
		GElf_Sym s;

		if (!mod)
			return false;
		sym = dwfl_module_addrinfo(mod, f->pc[i], &off, &s, NULL, NULL, NULL);
		dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &file, NULL);
		base = file ? strrchr(file, '/') : NULL;
		base = base ? base + 1 : file ? file : "?";
		if (i)
			str_append(buf, n, " < ");
		if (sym)
			str_append(buf, n, "%s (%s)", sym, base);
		else
			str_append(buf, n, "%s+0x%llx", base, (unsigned long long)(f->pc[i] - start));
	}
	return true;
}

/* A Python process's own frames (read by BPF from the interpreter's
 * frame chain) first, "fn (file.py:line) < ...", its native ones after, in
 * brackets: they name the interpreter's loop. */
static void python_first(const struct cs_stack *r, char *user, size_t n)
{
	char text[sizeof(((struct stack_top *)0)->user)] = "";
	unsigned int i, np = r->npy < CS_PY_FRAMES ? r->npy : CS_PY_FRAMES;

	for (i = 0; i < np; i++) {
		const struct cs_py_frame *f = &r->py[i];
		char name[sizeof(f->name) + 1], file[sizeof(f->file) + 1];
		const char *base;

		memcpy(name, f->name, sizeof(f->name));
		name[sizeof(f->name)] = 0;
		memcpy(file, f->file, sizeof(f->file));
		file[sizeof(f->file)] = 0;
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		str_append(text, sizeof(text), "%s%s (%s:%u)", i ? " < " : "", name[0] ? name : "?",
		       base[0] ? base : "?", f->line);
	}
	str_append(text, sizeof(text), " [native: %s]", user[0] ? user : "?");
	snprintf(user, n, "%s", text);
}

/* Kernel frames past the tracing and the allocator itself: the path that
 * asked for the object. */
static void name_kernel(struct stacks *st, const struct cs_stack *r, char *buf, size_t n)
{
	static const char *const skip[] = { "bpf_", "__bpf_", "trace_", "__trace",
		"perf_", "kmem_cache_alloc", "__kmem_cache_alloc", "kmalloc", "__kmalloc",
		"slab_", "__slab", "___slab", "__do_kmalloc" };
	unsigned int i, j, shown = 0, nk = r->nkframes;
	char sym[96];

	buf[0] = 0;
	if (nk > CS_STACK_KFRAMES)
		nk = CS_STACK_KFRAMES;
	for (i = 0; i < nk && shown < 4; i++) {
		char *plus;
		bool skipped = false;

		if (!st->ks || ksyms_name(st->ks, r->kframes[i], sym, sizeof(sym)))
			snprintf(sym, sizeof(sym), "0x%llx", (unsigned long long)r->kframes[i]);
		plus = strchr(sym, '+');
		if (plus)
			*plus = 0;
		for (j = 0; j < sizeof(skip) / sizeof(skip[0]); j++)
			if (!strncmp(sym, skip[j], strlen(skip[j])))
				skipped = true;
		if (skipped && !shown)
			continue;
		str_append(buf, n, "%s%s", shown ? " < " : "", sym);
		shown++;
	}
}

static uint64_t text_hash(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
	return mix64(h);
}

static struct ustack *intern(struct stacks *st, const char *user, const char *kernel)
{
	uint64_t h = text_hash(user, kernel);
	struct ustack *u = htab_find(&st->uniq, h, &h);

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->hash = h;
	snprintf(u->user, sizeof(u->user), "%s", user);
	snprintf(u->kernel, sizeof(u->kernel), "%s", kernel);
	if (htab_insert(&st->uniq, u)) {
		free(u);
		return NULL;
	}
	st->s.unique++;
	return u;
}

static void unref(struct stacks *st, struct ustack *u)
{
	if (--u->refs)
		return;
	htab_remove(&st->uniq, u);
	st->s.unique--;
	free(u);
}

static struct skey *key_get(struct stacks *st, uint32_t tgid, uint64_t cache, bool make)
{
	struct skey k = { .cache = cache, .tgid = tgid }, *kp;
	uint64_t h = skey_hash_of(tgid, cache);

	kp = htab_find(&st->keys, h, &k);
	if (kp || !make)
		return kp;
	kp = calloc(1, sizeof(*kp));
	if (!kp)
		return NULL;
	*kp = k;
	if (htab_insert(&st->keys, kp)) {
		free(kp);
		return NULL;
	}
	return kp;
}

static void key_put(struct stacks *st, struct skey *k)
{
	if (--k->n)
		return;
	htab_remove(&st->keys, k);
	free(k);
}

static uint64_t obj_id(uint64_t ptr, uint64_t alloc_ns)
{
	return mix64(ptr ^ mix64(alloc_ns)) | 1;	/* never 0, the empty slot */
}

static void obj_free(struct stacks *st, struct sobj *o)
{
	struct skey *k = key_get(st, o->tgid, o->cache, false);

	htab_remove(&st->objs, o);
	if (k)
		key_put(st, k);
	if (o->stack)
		unref(st, o->stack);
	free(o->raw);
	st->s.kept--;
	free(o);
}

void stacks_add(struct stacks *st, const void *data, size_t size)
{
	const struct cs_stack *r = data;
	size_t keep = offsetof(struct cs_stack, data) + r->len;
	struct skey *k;
	struct sobj *o;
	uint64_t id;

	st->s.received++;
	if (size < sizeof(*r) || r->len > CS_STACK_BYTES) {
		st->s.bad++;
		return;
	}
	/* an object still held at this address was freed before it was
	 * handed out again, its free record not read yet */
	o = htab_find(&st->objs, mix64(r->ptr), &r->ptr);
	if (o)
		obj_free(st, o);
	id = obj_id(r->ptr, r->ts_ns);
	if (st->recent[id % RECENT_FREES] == id) {	/* freed already */
		st->s.freed_first++;
		return;
	}
	k = key_get(st, r->tgid, r->cache, false);
	if (st->s.kept >= STACKS_MAX || (k && k->n >= STACKS_PER_KEY)) {
		st->s.turned_away++;
		return;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->raw = malloc(keep)))
		goto nomem;
	memcpy(o->raw, r, keep);
	o->ptr = r->ptr;
	o->alloc_ns = r->ts_ns;
	o->cache = r->cache;
	o->tgid = r->tgid;
	k = key_get(st, r->tgid, r->cache, true);
	if (!k)
		goto nomem;
	k->n++;
	if (htab_insert(&st->objs, o)) {
		key_put(st, k);
		goto nomem;
	}
	st->s.kept++;
	return;
nomem:	/* as if never taken */
	if (o)
		free(o->raw);
	free(o);
}

/* Unwind and name a kept object's stack, once: its copy goes. */
static void obj_unwind(struct stacks *st, struct sobj *o, uint64_t now)
{
	char user[sizeof(((struct ustack *)0)->user)], kernel[sizeof(((struct ustack *)0)->kernel)];
	const struct cs_stack *r = o->raw;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct frames f = { .n = 0 };
	struct sproc *p;
	int tries;

	user[0] = 0;
	for (tries = 0; tries < 2; tries++) {
		p = proc_dwfl(st, r->pid, now, tries > 0);
		if (!p) {
			st->s.unreadable++;
			break;
		}
		st->arg.rec = r;
		st->arg.asked = false;
		f.n = 0;
		dwfl_getthread_frames(p->dwfl, (pid_t)r->tid, frame_cb, &f);
		if (f.n && named_find(p, &f, user, sizeof(user))) {
			st->s.named_again++;
			break;
		}
		if (f.n && name_frames(p->dwfl, &f, user, sizeof(user))) {
			named_keep(p, &f, user);
			break;
		}
		user[0] = 0;
	}
	if (f.n > 1 && user[0])
		st->s.unwound++;
	if (r->npy)
		python_first(r, user, sizeof(user));
	name_kernel(st, r, kernel, sizeof(kernel));
	o->stack = intern(st, user[0] ? user : "?", kernel);
	if (!o->stack)
		return;		/* no memory: asked again next time */
	o->stack->refs++;
	free(o->raw);
	o->raw = NULL;
	st->s.unwind_ns += clock_ns(CLOCK_MONOTONIC) - t0;
}

void stacks_freed(struct stacks *st, uint64_t ptr, uint64_t alloc_ns)
{
	struct sobj *o = htab_find(&st->objs, mix64(ptr), &ptr);
	uint64_t id = obj_id(ptr, alloc_ns);

	st->recent[id % RECENT_FREES] = id;
	/* the address's object now may be a newer one (its stack record came
	 * before this free of the old one): only the object itself goes */
	if (o && o->alloc_ns == alloc_ns)
		obj_free(st, o);
}

int stacks_top(struct stacks *st, uint32_t tgid, uint64_t cache, uint64_t now_ns,
	       uint64_t age_ns, struct stack_top *top)
{
	struct ustack *cand[STACKS_PER_KEY];
	unsigned int cnt[STACKS_PER_KEY] = { 0 }, nc = 0, best = 0, i;
	struct skey *k = key_get(st, tgid, cache, false);
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t s;

	memset(top, 0, sizeof(*top));
	if (!k)
		return -ENOENT;
	for (s = htab_next(&st->objs, 0); s < st->objs.cap; s = htab_next(&st->objs, s + 1)) {
		struct sobj *o = st->objs.slot[s];

		if (o->tgid != tgid || o->cache != cache || o->alloc_ns + age_ns > now_ns)
			continue;
		if (!o->stack)
			obj_unwind(st, o, t0);
		if (!o->stack)
			continue;
		top->of++;
		for (i = 0; i < nc && cand[i] != o->stack; i++)
			;
		if (i == nc) {
			if (nc == STACKS_PER_KEY)
				continue;
			cand[nc] = o->stack;
			cnt[nc++] = 0;
		}
		cnt[i]++;
	}
	if (!top->of)
		return -ENOENT;
	for (i = 1; i < nc; i++)
		if (cnt[i] > cnt[best])
			best = i;
	top->with = cnt[best];
	snprintf(top->user, sizeof(top->user), "%s", cand[best]->user);
	snprintf(top->kernel, sizeof(top->kernel), "%s", cand[best]->kernel);
	return 0;
}

void stacks_get_stats(const struct stacks *st, struct stacks_stats *out)
{
	*out = st->s;
}
