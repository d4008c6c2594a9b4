/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text that other processes chose (comm, file and cache names, GPU kernel
 * names, kvref's lines) made safe for root's terminal: every byte a
 * terminal could act on is written as \xNN.  Used by the daemon's tables,
 * logs and control-socket replies and by the cachescope CLI.  Also the
 * one numeric parser and the one opener of files an operator names.
 */
#ifndef CS_STRUTIL_H
#define CS_STRUTIL_H

#include <stddef.h>
#include <sys/stat.h>

/* keep LF and TAB (text of several lines) */
#define STR_KEEP_NL 1

/* the buffer that holds any escape of n bytes */
#define STR_ESC_SIZE(n) (4 * (n) + 1)

/*
 * Copy the len bytes at s to buf (of size n > 0), NUL-terminated, with C0
 * controls, DEL, NUL, C1 controls (U+0080..U+009F, each of their bytes),
 * the bidirectional overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069) and every byte that is not part of valid UTF-8 written
 * as \xNN, and a backslash as \\; valid UTF-8 otherwise passes as is.
 * What does not fit is left off, never half an escape or a character.
 * Returns buf.
 */
const char *str_escape_mem(char *buf, size_t n, const char *s, size_t len, int flags);
/* The same for the string s. */
const char *str_escape(char *buf, size_t n, const char *s, int flags);

/*
 * The one numeric parser of the daemon, the CLI and kvref: s as a decimal
 * long (strtol, base 10) in min..max, all of s, nothing after it.  Returns
 * 0 and sets *out, or -EINVAL (not a number, trailing bytes, empty) or
 * -ERANGE (outside min..max); *out is then untouched.
 */
int str_to_long(const char *s, long min, long max, long *out);

/*
 * The one way a file an operator names (--rules, --web-config and what it
 * names) is opened: read-only, close-on-exec, O_NONBLOCK so that a FIFO
 * cannot block the open, and only a regular file of at most max bytes
 * (a device might never end).  Returns the descriptor, with its fstat()
 * in *st when st is not NULL, or -errno: -EINVAL not a regular file,
 * -EFBIG larger than max.
 */
int open_regular(const char *path, off_t max, struct stat *st);

/* Append printf's output to the string in buf (n bytes in all), cut to
 * fit; a full buffer takes nothing more. */
void str_append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
