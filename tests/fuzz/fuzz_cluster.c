// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: cachescope cluster end to end (tools/offline.c), the
 * input as the one CSV file it reads.  offline_load must either take the
 * file or give one line that names it; what it took must hold together
 * (every vector of a key it made, no more vectors than rows, cluster sizes
 * and noise the vectors); then the verb itself, text and JSON by the first
 * byte, must return 0 or 1.  A file that hangs it (the window of
 * 2^64 - 1 did, for ever) is libFuzzer's timeout.  abort() on any broken
 * invariant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tools/offline.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_cluster: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/fuzz-cluster-%ld.csv", (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	close(fd);
	/* the verb's tables go nowhere; its one-line errors stay on stderr */
	CHECK(freopen("/dev/null", "w", stdout));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct offline_params p = { .eps = 0.08, .min_pts = 5 };
	char *argv[4], err[1024];
	struct offline o;
	char *const files[] = { path };
	size_t i, members = 0, noise = 0;
	int fd, rc;

	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);

	err[0] = '\0';
	rc = offline_load(&o, files, 1, &p, err, sizeof(err));
	if (rc) {
		CHECK(rc < 0);
		CHECK(err[0] && !strchr(err, '\n'));
		CHECK(!strncmp(err, path, strlen(path)) || strstr(err, path));
	} else {
		CHECK(o.an.n <= o.rows);
		for (i = 0; i < o.an.n; i++)
			CHECK(o.vec[i].key < o.nkeys);
		for (i = 0; i < o.an.n; i++)
			noise += o.an.v[i].cluster == CLUSTER_NOISE;
		for (i = 0; i < o.an.nclusters; i++)
			members += o.an.clusters[i].size;
		if (o.an.runs)
			CHECK(members + noise == o.an.n);
	}
	offline_release(&o);

	argv[0] = "cluster";
	i = 1;
	if (size && (data[0] & 1))
		argv[i++] = "--json";
	argv[i++] = path;
	argv[i] = NULL;
	rc = offline_cluster_main((int)i, argv);
	CHECK(rc == 0 || rc == 1);
	return 0;
}
