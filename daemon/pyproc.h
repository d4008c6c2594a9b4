/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python processes, for the leak stacks: a Python program's native stack
 * names the interpreter's loop alone, so where a leak suspect is a CPython
 * 3.11 process, the BPF programs also read its own frames (stack.bpf.h,
 * py_frames).  They need the address of the interpreter's _PyRuntime in
 * that process: found here from its executable mappings (the python3.11
 * executable or libpython3.11, their symbols and load bias, by libelf),
 * and only for an interpreter whose Py_Version says 3.11, whose layout
 * the programs know.
 */
#ifndef CS_PYPROC_H
#define CS_PYPROC_H

#include <stdbool.h>
#include <stdint.h>

/* Whether a mapped file may be a CPython interpreter (python3*,
 * libpython3*). */
bool pyproc_candidate(const char *path);
/* The address of _PyRuntime in a process that maps path's bytes at offset
 * off at start: 0, -ENOTSUP (a Python but not 3.11), or -errno/-ENOENT. */
int pyproc_runtime(const char *path, uint64_t start, uint64_t off, uint64_t *runtime);
/* The same for the first interpreter among maps ("start end offset path"
 * lines in hex, as loader_read_maps gives them; read with
 * stacks_maps_next, which terminates the paths in place). */
int pyproc_find(char *maps, uint64_t *runtime);

#endif
