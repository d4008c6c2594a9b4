// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Escaping for the terminal.  The one idea: decode UTF-8 strictly (no
 * overlong forms, no surrogates, nothing past U+10FFFF) and pass only
 * characters a terminal prints; anything else, byte by byte, becomes
 * \xNN, so that a comm of "\e[31mevil" or a file name holding an OSC
 * sequence shows as text and cannot recolour, retitle or rewrite the
 * screen.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "strutil.h"

/* The length of the valid UTF-8 character at s (len bytes left), its code
 * point in *cp; 0 when s does not start one. */
static size_t utf8_char(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t k, i;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		v = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		v = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		v = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return k;
}

static int unsafe(uint32_t cp, int flags)
{
	if (cp == '\n' || cp == '\t')
		return !(flags & STR_KEEP_NL);
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *str_escape_mem(char *buf, size_t n, const char *s, size_t len, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0, i = 0, k, j;
	uint32_t cp;
	char esc[4 * 4 + 1];
	size_t elen;

	while (i < len) {
		k = utf8_char(p + i, len - i, &cp);
		if (!k || unsafe(cp, flags)) {
			if (!k)
				k = 1;
			for (j = 0, elen = 0; j < k; j++)
				elen += snprintf(esc + elen, sizeof(esc) - elen, "\\x%02x", p[i + j]);
		} else if (cp == '\\') {
			memcpy(esc, "\\\\", 2);
			elen = 2;
		} else {
			memcpy(esc, p + i, k);
			elen = k;
		}
		if (out + elen >= n)
			break;
		memcpy(buf + out, esc, elen);
		out += elen;
		i += k;
	}
	buf[out] = '\0';
	return buf;
}

const char *str_escape(char *buf, size_t n, const char *s, int flags)
{
	return str_escape_mem(buf, n, s, strlen(s), flags);
}

int str_to_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	*out = v;
	return 0;
}

int open_regular(const char *path, off_t max, struct stat *stp)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (st.st_size > max)
		err = -EFBIG;
	else
		err = 0;
	if (err) {
		close(fd);
		return err;
	}
	if (stp)
		*stp = st;
	return fd;
}

void str_append(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}
