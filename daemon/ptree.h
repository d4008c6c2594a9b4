/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process tree as /proc shows it: the descendants of some processes,
 * for --pid-tree's start (the BPF fork program follows it from there).
 */
#ifndef CS_PTREE_H
#define CS_PTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The parent pid in a /proc/<pid>/stat line ("pid (comm) state ppid ...";
 * comm may hold spaces and parentheses).  0 and *ppid set, or -EINVAL. */
int ptree_parse_stat(const char *line, pid_t *ppid);

/* Every process below roots (children, their children, ...), the roots
 * themselves not included, from the <pid>/stat files under proc (a /proc
 * or a copy of one).  Processes that vanish during the walk are skipped.
 * 0 with *out (malloc'ed, the caller frees it; NULL when *n is 0) and *n,
 * or -errno (proc unreadable, no memory). */
int ptree_descendants(const char *proc, const pid_t *roots, size_t nroots,
		      pid_t **out, size_t *n);

/* Whether proc/<pid> exists. */
bool ptree_alive(const char *proc, pid_t pid);

#endif
