// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: the --rules file parser (rules_load, daemon/classify.c).
 * The input is the file, written to a memfd and read back through
 * /proc/self/fd.  The result is checked against a parse of its own: the file
 * split at every newline, each line cut at '#', trimmed, and applied with
 * rules_set, stopping at the first line rules_set refuses.  rules_load must
 * agree on the error, the bad line's number and every threshold, and never
 * leave a threshold negative or not finite (abort() otherwise).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../daemon/classify.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_rules: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

static int fd = -1;
static char path[64];

/* The same file, parsed line by line with no limit on a line's length. */
static int expect(const uint8_t *data, size_t size, struct rules *r, int *bad_line)
{
	char *buf = malloc(size + 1), *line, *next, *s, *e;
	int n = 0, err = 0;

	CHECK(buf);
	memcpy(buf, data, size);
	buf[size] = '\0';
	*bad_line = 0;
	for (line = buf; line < buf + size; line = next) {
		next = memchr(line, '\n', (size_t)(buf + size - line));
		next = next ? next + 1 : buf + size;
		n++;
		next[-1] = next[-1] == '\n' ? '\0' : next[-1];
		line[strcspn(line, "#")] = '\0';	/* a NUL ends the line too */
		for (s = line; isspace((unsigned char)*s); s++)
			;
		for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); )
			*--e = '\0';
		if (!*s)
			continue;
		err = rules_set(r, s);
		if (err) {
			*bad_line = n;
			break;
		}
	}
	free(buf);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules got, want;
	int err, want_err, line, want_line, i;

	if (fd < 0) {
		fd = memfd_create("fuzz-rules", MFD_CLOEXEC);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);

	rules_defaults(&got);
	rules_defaults(&want);
	err = rules_load(&got, path, &line);
	want_err = expect(data, size, &want, &want_line);
	CHECK(err == want_err);
	CHECK(line == want_line);
	for (i = 0; i < RULE_COUNT; i++) {
		CHECK(got.v[i] == want.v[i]);
		CHECK(isfinite(got.v[i]) && got.v[i] >= 0);
	}
	return 0;
}
