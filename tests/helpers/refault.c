// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * refault: make a file's pages leave the page cache and come back.
 *
 *   refault PATH SIZE_KB PASSES [--keep]
 *
 * Writes PATH (SIZE_KB KiB), syncs it, then PASSES times drops its pages
 * with posix_fadvise(DONTNEED) and reads it whole again; --keep reads it
 * again without dropping anything (the control case: no refaults).  Prints
 * the key the daemon uses for the file ("key MAJOR:MINOR:INO").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what, const char *path)
{
	fprintf(stderr, "refault: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char buf[1 << 16];
	long size_kb, passes, p, pages = 0;
	struct stat st;
	ssize_t n;
	size_t done;
	int fd, keep;

	keep = argc == 5 && !strcmp(argv[4], "--keep");
	if (argc != 4 && !keep) {
		fprintf(stderr, "usage: refault PATH SIZE_KB PASSES [--keep]\n");
		return 2;
	}
	size_kb = strtol(argv[2], NULL, 10);
	passes = strtol(argv[3], NULL, 10);
	if (size_kb <= 0 || passes <= 0) {
		fprintf(stderr, "refault: SIZE_KB and PASSES must be positive\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return die("cannot create", argv[1]);
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < (size_t)size_kb << 10; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return die("cannot write", argv[1]);
	if (fsync(fd) || fstat(fd, &st))
		return die("cannot sync", argv[1]);
	printf("key %u:%u:%lu\n", major(st.st_dev), minor(st.st_dev),
	       (unsigned long)st.st_ino);
	fflush(stdout);
	for (p = 0; p < passes; p++) {
		if (!keep && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			return die("cannot drop pages of", argv[1]);
		if (lseek(fd, 0, SEEK_SET) < 0)
			return die("cannot seek", argv[1]);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			pages += n / 4096;
		if (n < 0)
			return die("cannot read", argv[1]);
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	}
	printf("pages_read %ld\n", pages);
	close(fd);
	return 0;
}
