/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allocation stacks of sampled slab objects, for the leak label's reason:
 * which code of the process allocated the objects that stay.
 *
 * For the tracked objects of the keys the daemon suspects (their old
 * objects rise: stacks_want), the BPF programs copy the user registers
 * and the top of the user stack at the allocating system call, with the
 * kernel's path (struct cs_stack, bpf/stack.bpf.h).  Each copy is kept
 * with its object, known by (address, allocation time), until the
 * object's free record names it; so what is kept at any time is the
 * sampled live objects of each key.  When a leak label asks which code
 * allocated a key's old objects, those not yet unwound are unwound, once,
 * by the call-frame information of the process's own files (elfutils'
 * libdwfl: the process's executable mappings, the ELF files behind them,
 * their .eh_frame) and named by their symbols; the kernel's path by the
 * kernel's.  A balanced object costs a copy and no unwinding.
 *
 * A file is opened by its path in the daemon's mount namespace, and only
 * if it is the inode the process maps: a process in a container of its
 * own gets the kernel path alone.
 *
 * Bounded: at most STACKS_PER_KEY objects a key and STACKS_MAX in all
 * (what does not fit is turned away and counted: the oldest stay, which
 * is what a leak leaves), unwinders of STACKS_PROCS processes at a time.
 */
#ifndef CS_STACKS_H
#define CS_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STACKS_PER_KEY 64
#define STACKS_MAX 2048		/* a copy of up to 8 KiB each until unwound */
#define STACKS_PROCS 32
#define STACKS_FRAMES 8		/* user frames named, innermost first */

struct ksyms;

struct stacks_stats {
	uint64_t received;	/* records read from the stack ring */
	uint64_t unwound;	/* of them: named past the first frame */
	uint64_t unreadable;	/* the process's maps could not be read (gone,
				 * or another user's after the daemon's drop) */
	uint64_t turned_away;	/* not kept: the key's share or the table full */
	uint64_t freed_first;	/* not kept: its free record came first */
	uint64_t bad;		/* malformed records */
	uint64_t kept;		/* objects remembered now */
	uint64_t unique;	/* distinct stacks held now */
	uint64_t unwind_ns;	/* time spent unwinding and naming */
	uint64_t named_again;	/* of the unwound: frames named before, the
				 * names reused */
};

/* What a key's sampled live objects say: the stack most of those older
 * than an age came from. */
struct stack_top {
	/* "fn (file) < caller (file) < ...", innermost first; a Python
	 * process's: "fn (file.py:line) < ... [native: ...]" */
	char user[480];
	char kernel[160];	/* "alloc_empty_file < path_openat < ..." */
	unsigned int with;	/* old sampled objects from that stack */
	unsigned int of;	/* old sampled objects of the key */
};

struct stacks;

/* Process pid's executable file mappings, "start end offset path" lines
 * in hex as /proc/PID/maps gives them, into buf (n bytes, NUL-ended):
 * bytes read, or -errno. */
typedef ssize_t (*stacks_maps_fn)(void *ctx, uint32_t pid, char *buf, size_t n);

/* The next mapping of a text in stacks_maps_fn's format: its start,
 * offset and path (terminated in place); *text moves past its line.
 * Lines that are not one are skipped; false at the end. */
bool stacks_maps_next(char **text, uint64_t *start, uint64_t *off, char **path);

/* maps reads a process's mappings (NULL: its /proc/PID/maps, which the
 * kernel shows only to who may trace the process).  NULL on no memory. */
struct stacks *stacks_new(stacks_maps_fn maps, void *maps_ctx);
/* ks names the kernel frames (NULL, the default: addresses) */
void stacks_set_ksyms(struct stacks *st, struct ksyms *ks);
void stacks_free(struct stacks *st);

/* One record of the stack ring (size bytes). */
void stacks_add(struct stacks *st, const void *data, size_t size);
/* The tracked object at ptr, allocated at alloc_ns, was freed. */
void stacks_freed(struct stacks *st, uint64_t ptr, uint64_t alloc_ns);
/* Key (tgid, cache)'s sampled objects allocated before now_ns - age_ns:
 * the stack most of them came from into top.  0, or -ENOENT when the key
 * has none. */
int stacks_top(struct stacks *st, uint32_t tgid, uint64_t cache, uint64_t now_ns,
	       uint64_t age_ns, struct stack_top *top);
void stacks_get_stats(const struct stacks *st, struct stacks_stats *out);

#endif
