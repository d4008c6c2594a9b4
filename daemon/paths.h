/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where cachescoped finds the files it runs or watches (kvref, the CUPTI
 * library): beside its own binary, as in the build folder, or in its
 * package library directory, which `make install` puts at a path relative
 * to the daemon's directory (CS_PKGLIBDIR_REL, e.g. ../lib/cachescope
 * from sbin/).  Relative, so an installed tree works wherever it is
 * copied: under a DESTDIR as well as at its PREFIX.
 */
#ifndef CS_PATHS_H
#define CS_PATHS_H

#include <stddef.h>

/*
 * The first of dir/name and dir/rel/name that exists (rel NULL or "": only
 * the first).  Returns 0 with its path in out (the second without its
 * "..": resolved by realpath); -ENOENT when neither exists,
 * with the first in out, for the message; -ENAMETOOLONG when a path does
 * not fit in size.
 */
int paths_find(const char *dir, const char *rel, const char *name, char *out, size_t size);

/* paths_find from the directory of /proc/self/exe and the relative
 * package library directory compiled in; -errno when readlink fails. */
int paths_find_mine(const char *name, char *out, size_t size);

/* The package library directory as compiled in, relative to the binary. */
const char *paths_pkglib_rel(void);

#endif
