// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescope: the command line client of cachescoped.  It sends one command
 * over the daemon's control socket and prints the answer, with every byte a
 * terminal could act on escaped (the answer names other processes' comms
 * and files; the daemon escapes them too, this holds for any daemon).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "../daemon/strutil.h"
#include "offline.h"

#define DEFAULT_SOCKET "/run/cachescope.sock"
/* a larger answer is cut there */
#define MAX_REPLY (16u << 20)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: cachescope [--socket PATH] COMMAND\n"
		"\n"
		"Ask a running cachescoped what it sees.\n"
		"\n"
		"commands:\n"
		"  stats      event counters: produced, consumed, dropped, windows, keys\n"
		"  top [N]    the N busiest keys of the last closed window (default 10)\n"
		"  clusters   the clusters of the last run: id, label, size, keys, centroid, reason\n"
		"\n"
		"offline (no daemon needed; see cachescope cluster --help, plot --help):\n"
		"  cluster FILE.csv...            DBSCAN and the labels again over --csv files\n"
		"  plot FILE.csv... --svg OUT.svg  the same as a picture\n"
		"\n"
		"options:\n"
		"  --socket PATH   the daemon's control socket (default " DEFAULT_SOCKET ")\n"
		"  -h, --help      this text\n");
}

int main(int argc, char **argv)
{
	const char *path = DEFAULT_SOCKET;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cmd[256] = "", buf[4096], *reply = NULL, *safe;
	int i = 1, fd, rc;
	ssize_t n;
	size_t len = 0, rlen = 0;

	/* the offline verbs read files and never connect */
	if (argc > 1 && !strcmp(argv[1], "cluster"))
		return offline_cluster_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "plot"))
		return offline_plot_main(argc - 1, argv + 1);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			path = argv[++i];
		} else {
			fprintf(stderr, "cachescope: unknown option '%s' (see --help)\n", argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[i], "stats") && strcmp(argv[i], "top") && strcmp(argv[i], "clusters")) {
		fprintf(stderr, "cachescope: unknown command '%s' (see --help)\n", argv[i]);
		return 2;
	}
	for (; i < argc; i++) {
		int w = snprintf(cmd + len, sizeof(cmd) - len, "%s%s", len ? " " : "", argv[i]);

		if (w < 0 || (size_t)w >= sizeof(cmd) - len) {
			fprintf(stderr, "cachescope: command too long\n");
			return 2;
		}
		len += w;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "cachescope: socket path too long: %s\n", path);
		return 2;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "cachescope: cannot connect to %s: %s (is cachescoped running?)\n",
			path, strerror(errno));
		return 1;
	}
	cmd[len++] = '\n';
	if (write(fd, cmd, len) != (ssize_t)len) {
		fprintf(stderr, "cachescope: cannot send to %s: %s\n", path, strerror(errno));
		return 1;
	}
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0 && rlen + n <= MAX_REPLY) {
		char *r = realloc(reply, rlen + n);

		if (!r) {
			fprintf(stderr, "cachescope: cannot read the answer: out of memory\n");
			return 1;
		}
		reply = r;
		memcpy(reply + rlen, buf, n);
		rlen += n;
	}
	close(fd);
	safe = malloc(STR_ESC_SIZE(rlen));
	if (!safe) {
		fprintf(stderr, "cachescope: cannot print the answer: out of memory\n");
		return 1;
	}
	fputs(str_escape_mem(safe, STR_ESC_SIZE(rlen), reply ? reply : "", rlen, STR_KEEP_NL),
	      stdout);
	rc = rlen >= 7 && !strncmp(reply, "error: ", 7);
	free(safe);
	free(reply);
	return rc;
}
