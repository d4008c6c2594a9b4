// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescope: the command line client of cachescoped.  Each command is one
 * request over the daemon's control socket (daemon/proto.h); the answer is
 * printed with every byte a terminal could act on escaped (the answer
 * names other processes' comms and files; the daemon escapes them too,
 * this holds for any daemon), or, under --json, checked to be one JSON
 * document and printed as it came.  Errors under --json are JSON too.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "cli.h"
#include "../daemon/proto.h"
#include "../daemon/strutil.h"
#include "offline.h"

/* a larger answer is refused (an export is at most --export-mb 1024) */
#define MAX_REPLY (1100u << 20)

static bool json_mode;

/* One line on stderr, or {"error": ...} on stdout under --json; returns rc. */
static int fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int rc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_mode) {
		char *j = cli_json_error(msg);

		puts(j ? j : "{\"error\":\"out of memory\"}");
		free(j);
	} else {
		char safe[STR_ESC_SIZE(sizeof(msg))];

		fprintf(stderr, "cachescope: %s\n", str_escape(safe, sizeof(safe), msg, 0));
	}
	return rc;
}

static int connect_error(const char *path, int err)
{
	if (err == EACCES || err == EPERM)
		return fail(CLI_EPERM, "cannot connect to %s: permission denied (cachescoped answers "
			    "root only: run cachescope as root, e.g. with sudo)", path);
	if (err == ENOENT || err == ECONNREFUSED)
		return fail(CLI_ENOTRUNNING, "cachescoped is not running: nothing answers at %s (%s)",
			    path, strerror(err));
	return fail(CLI_ENOTRUNNING, "cannot connect to %s: %s", path, strerror(err));
}

/* Send req, read the whole answer into *out (NUL-terminated).  Returns 0
 * or an exit code, said. */
static int ask(const char *path, const char *req, char **out, size_t *outlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(req), rlen = 0, cap = 0;
	char *reply = NULL;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(CLI_EUSAGE, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(CLI_ENOTRUNNING, "cannot make a socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		return connect_error(path, err);
	}
	/* a refused peer may be gone before the request is written */
	if (write(fd, req, len) != (ssize_t)len && errno != EPIPE && errno != ECONNRESET) {
		int err = errno;

		close(fd);
		return fail(CLI_ENOTRUNNING, "cannot send to %s: %s", path, strerror(err));
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		if (cap - rlen < 65536) {
			char *r;

			cap = cap ? cap * 2 : 65536 * 2;
			r = cap <= MAX_REPLY + 1 ? realloc(reply, cap) : NULL;
			if (!r) {
				free(reply);
				close(fd);
				return fail(CLI_EDAEMON, "cannot read the answer: %s",
					    cap > MAX_REPLY + 1 ? "too long" : "out of memory");
			}
			reply = r;
		}
		n = read(fd, reply + rlen, cap - rlen - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != ECONNRESET) {
			int err = errno;

			free(reply);
			close(fd);
			return fail(CLI_EDAEMON, "cannot read the answer: %s", strerror(err));
		}
		if (n <= 0)
			break;
		rlen += n;
	}
	close(fd);
	reply[rlen] = '\0';
	/* the daemon's SO_PEERCRED check answers this, whatever the mode */
	if (!strcmp(reply, "permission denied\n")) {
		free(reply);
		return fail(CLI_EPERM, "%s: permission denied (cachescoped answers root only: run "
			    "cachescope as root, e.g. with sudo)", path);
	}
	if (!rlen) {
		free(reply);
		return fail(CLI_EDAEMON, "%s: the daemon closed without an answer", path);
	}
	*out = reply;
	*outlen = rlen;
	return 0;
}

#define TRUNCATED "\nerror: reply truncated\n"

/* An answer that is an error: said, and CLI_EDAEMON; else 0. */
static int answer_error(const char *reply, size_t len)
{
	size_t t = strlen(TRUNCATED);

	/* the daemon's reply bound (control.h) cut it */
	if (len >= t && !memcmp(reply + len - t, TRUNCATED, t))
		return fail(CLI_EDAEMON, "the answer was cut at the daemon's reply bound (%zu bytes)",
			    len);
	if (json_mode && reply[0] == '{') {
		json_object *o = json_tokener_parse(reply), *e;
		int rc = 0;

		if (o && json_object_object_get_ex(o, "error", &e)) {
			fputs(reply, stdout);	/* it is JSON already */
			rc = CLI_EDAEMON;
		}
		json_object_put(o);
		return rc;
	}
	if (!strncmp(reply, PROTO_ERROR, strlen(PROTO_ERROR))) {
		char *nl = strchr(reply, '\n');

		if (nl)
			*nl = '\0';
		return fail(CLI_EDAEMON, "%s", reply + strlen(PROTO_ERROR));
	}
	return 0;
}

static int print_answer(const char *reply, size_t len)
{
	int rc = answer_error(reply, len);
	char *safe;

	if (rc)
		return rc;
	if (json_mode) {
		json_object *o = json_tokener_parse(reply);

		if (!o)
			return fail(CLI_EDAEMON, "the answer is not JSON (is the daemon older than this CLI?)");
		json_object_put(o);
		fputs(reply, stdout);
		return CLI_OK;
	}
	safe = malloc(STR_ESC_SIZE(len));
	if (!safe)
		return fail(CLI_EDAEMON, "cannot print the answer: out of memory");
	fputs(str_escape_mem(safe, STR_ESC_SIZE(len), reply, len, STR_KEEP_NL), stdout);
	free(safe);
	return CLI_OK;
}

/* export: the CSV text of the answer into file, whole or not at all. */
static int write_export(const struct cli *c, const char *reply, size_t len)
{
	const char *base = strrchr(c->csv, '/') ? strrchr(c->csv, '/') + 1 : c->csv;
	char *copy = strdup(c->csv), *tmp = NULL;
	size_t rows = 0, i;
	int fd = -1, rc = CLI_EOUTPUT, err = 0;

	/* beside the target, so that rename is atomic */
	if (!copy || asprintf(&tmp, "%s/.%s.tmp.XXXXXX", dirname(copy), base) < 0) {
		tmp = NULL;
		err = ENOMEM;
		goto out;
	}
	if (strncmp(reply, "ts,", 3) || reply[len - 1] != '\n') {
		rc = fail(CLI_EDAEMON, "the answer to export is not the daemon's CSV");
		goto out;
	}
	/* 0600 as the daemon's own CSV: it names every process's files */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	for (i = 0; i < len;) {
		ssize_t n = write(fd, reply + i, len - i);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			goto out;
		}
		i += n;
	}
	if (fsync(fd) || close(fd)) {
		fd = -1;
		err = errno;
		goto out;
	}
	fd = -1;
	if (rename(tmp, c->csv)) {
		err = errno;
		goto out;
	}
	free(tmp);
	tmp = NULL;
	for (i = 0; i < len; i++)
		rows += reply[i] == '\n';
	rows--;		/* the header */
	if (json_mode) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", json_object_new_string(c->csv));
		json_object_object_add(o, "rows", json_object_new_uint64(rows));
		json_object_object_add(o, "bytes", json_object_new_uint64(len));
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		char safe[STR_ESC_SIZE(4096)];

		printf("wrote %zu rows to %s\n", rows, str_escape(safe, sizeof(safe), c->csv, 0));
	}
	rc = CLI_OK;
out:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	if (err)
		rc = fail(CLI_EOUTPUT, "cannot write %s: %s", c->csv, strerror(err));
	free(tmp);
	free(copy);
	return rc;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* top and anomalies INTERVAL [COUNT]: a terminal is redrawn; a pipe gets every answer
 * after the other (one JSON document per line under --json). */
static int run_top(const struct cli *c, const char *req)
{
	bool redraw = !json_mode && isatty(STDOUT_FILENO);
	long i;
	int rc = CLI_OK;

	signal(SIGINT, on_interrupt);
	signal(SIGTERM, on_interrupt);
	for (i = 0; !interrupted && (!c->count || i < c->count); i++) {
		struct timespec ts = { c->interval_s, 0 };
		char *reply = NULL;
		size_t len;

		if (i)
			while (nanosleep(&ts, &ts) && !interrupted)
				;
		if (interrupted)
			break;
		rc = ask(c->socket, req, &reply, &len);
		if (rc)
			return rc;
		if (redraw)
			fputs("\033[H\033[2J", stdout);
		else if (i && !json_mode)
			putchar('\n');
		rc = print_answer(reply, len);
		free(reply);
		fflush(stdout);
		if (rc)
			return rc;
	}
	return rc;
}

int main(int argc, char **argv)
{
	char err[512], req[PROTO_MAX_REQUEST];
	struct cli c;
	char *reply = NULL;
	size_t len;
	int i, rc;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			json_mode = true;
	/* Offline verbs that read files and never connect (cluster FILE.csv,
	 * plot) are dispatched here, before the socket's parser: the first
	 * word that is not an option names the verb; a -j before it is
	 * passed on. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++)
		if (!strcmp(argv[i], "--socket"))
			i++;
	if (i < argc && (!strcmp(argv[i], "cluster") || !strcmp(argv[i], "plot"))) {
		int n = 0, k;
		char **v = calloc(argc + 2, sizeof(*v));

		if (!v)
			return fail(CLI_EDAEMON, "out of memory");
		v[n++] = argv[i];
		if (json_mode)
			v[n++] = "--json";
		for (k = i + 1; k < argc; k++)
			v[n++] = argv[k];
		rc = !strcmp(argv[i], "cluster") ? offline_cluster_main(n, v) : offline_plot_main(n, v);
		free(v);
		return rc;
	}
	rc = cli_parse(argc, argv, &c, err, sizeof(err));
	if (rc == 1) {
		cli_usage(stdout);
		return CLI_OK;
	}
	if (rc == 2) {
		printf("cachescope %s\n", CLI_VERSION);
		return CLI_OK;
	}
	if (rc)
		return fail(CLI_EUSAGE, "%s", err);
	json_mode = c.json;
	if (cli_request(&c, req, sizeof(req)))
		return fail(CLI_EUSAGE, "the request is too long");
	signal(SIGPIPE, SIG_IGN);
	if ((c.cmd == CMD_TOP || c.cmd == CMD_ANOMALIES) && c.interval_s)
		return run_top(&c, req);
	rc = ask(c.socket, req, &reply, &len);
	if (rc)
		return rc;
	if (c.cmd == CMD_EXPORT) {
		rc = answer_error(reply, len);
		if (!rc)
			rc = write_export(&c, reply, len);
	} else {
		rc = print_answer(reply, len);
	}
	free(reply);
	return rc;
}
