// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cachescope command line, as bpftool and libbpf-tools read theirs:
 * getopt_long, options anywhere, every number through the one checked
 * parser (str_to_long), a one-line error naming what was wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "cli.h"
#include "../daemon/proto.h"
#include "../daemon/strutil.h"

void cli_usage(FILE *out)
{
	fprintf(out,
		"usage: cachescope [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Ask a running cachescoped what it sees.\n"
		"\n"
		"commands:\n"
		"  status                      counters: events, windows, keys, history, export rows\n"
		"                              (\"stats\" is the same)\n"
		"  clusters [--label L]        the clusters of the last run; with L only those\n"
		"                              labelled L or holding vectors labelled L (normal,\n"
		"                              thrash, false_sharing, leak)\n"
		"  top [N] [INTERVAL [COUNT]]  the N busiest keys of the last window (default 10),\n"
		"                              every INTERVAL seconds, COUNT times (default: until\n"
		"                              interrupted); a terminal is redrawn, a pipe gets lines\n"
		"                              (\"keys\" is the same)\n"
		"  anomalies [INTERVAL [COUNT]]  the keys anomalous now: label, key, process,\n"
		"                              container, since when, live bytes, reason; every\n"
		"                              INTERVAL seconds as top does\n"
		"  changes                     the newest behaviour changes: keys whose newest\n"
		"                              vectors left every cluster of their history\n"
		"  vectors [--key K] [--since S]  the feature vectors of the clustering history\n"
		"  export --csv FILE [--since S]  the daemon's newest CSV rows (its --csv columns)\n"
		"                              into FILE, written whole (temporary file + rename)\n"
		"  reload                      re-read the daemon's --rules (as SIGHUP does)\n"
		"\n"
		"offline (no daemon needed; see cachescope cluster --help, plot --help):\n"
		"  cluster FILE.csv...         DBSCAN and the labels again over --csv files\n"
		"  plot FILE.csv... --svg OUT.svg  the same as a picture\n"
		"\n"
		"options:\n"
		"  --socket=PATH   the daemon's control socket (default " PROTO_DEFAULT_SOCKET ")\n"
		"  -j, --json      answer as JSON (one document per answer, errors too)\n"
		"  --label=L       clusters: only those of label L\n"
		"  --key=K         vectors: only those of key K (a cache name or dev:ino)\n"
		"  --since=S       vectors, export: only the last S seconds\n"
		"  --csv=FILE      export: the file to write\n"
		"  -V, --version   the version\n"
		"  -h, --help      this text\n"
		"\n"
		"exit status:\n"
		"  0  done\n"
		"  1  the daemon answered an error (or something that is not an answer);\n"
		"     cluster, plot: a file could not be read or written\n"
		"  2  bad command line\n"
		"  3  cachescoped is not running (nothing answers at the socket)\n"
		"  4  permission denied (cachescoped answers root only)\n"
		"  5  export: FILE could not be written\n");
}

enum { OPT_SOCKET = 0x100, OPT_LABEL, OPT_KEY, OPT_SINCE, OPT_CSV };

static const struct option opts[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "json", no_argument, NULL, 'j' },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int bad(char *err, size_t n, const char *fmt, const char *arg)
{
	char safe[STR_ESC_SIZE(64)];

	snprintf(err, n, fmt, arg ? str_escape_mem(safe, sizeof(safe), arg,
						   strnlen(arg, 64), 0) : "");
	return -EINVAL;
}

static int num(const char *what, const char *arg, long min, long max, long *out, char *err,
	       size_t n)
{
	char safe[STR_ESC_SIZE(64)];

	if (!str_to_long(arg, min, max, out))
		return 0;
	snprintf(err, n, "invalid %s '%s': expected an integer in %ld..%ld", what,
		 str_escape_mem(safe, sizeof(safe), arg, strnlen(arg, 64), 0), min, max);
	return -EINVAL;
}

int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t n)
{
	const char *since = NULL;
	int o, npos;

	memset(c, 0, sizeof(*c));
	c->socket = PROTO_DEFAULT_SOCKET;
	c->n = 10;
	c->cmd = -1;
	optind = 0;	/* glibc: start afresh (the unit tests parse many times) */
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":jVh", opts, NULL)) != -1) {
		switch (o) {
		case OPT_SOCKET:
			c->socket = optarg;
			break;
		case 'j':
			c->json = true;
			break;
		case OPT_LABEL:
			c->label = optarg;
			break;
		case OPT_KEY:
			c->key = optarg;
			break;
		case OPT_SINCE:
			since = optarg;
			break;
		case OPT_CSV:
			c->csv = optarg;
			break;
		case 'V':
			return 2;
		case 'h':
			return 1;
		case ':':
			return bad(err, n, "option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			return bad(err, n, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return bad(err, n, "no command given (see --help)%s", NULL);
	c->verb = argv[optind++];
	/* the offline verbs (cluster FILE.csv, plot) are dispatched by main
	 * before this parser: they never reach the socket */
	c->cmd = proto_cmd_of(c->verb, strlen(c->verb));
	if (c->cmd < 0)
		return bad(err, n, "unknown command '%s' (see --help)", c->verb);
	npos = argc - optind;
	if (!*c->socket)
		return bad(err, n, "--socket needs a path%s", NULL);
	if (c->label && c->cmd != CMD_CLUSTERS)
		return bad(err, n, "--label is an option of clusters, not of %s", c->verb);
	if (c->key && c->cmd != CMD_VECTORS)
		return bad(err, n, "--key is an option of vectors, not of %s", c->verb);
	if (since && c->cmd != CMD_VECTORS && c->cmd != CMD_EXPORT)
		return bad(err, n, "--since is an option of vectors and export, not of %s", c->verb);
	if (c->csv && c->cmd != CMD_EXPORT)
		return bad(err, n, "--csv is an option of export, not of %s", c->verb);
	if (since && num("--since", since, 1, 366l * 86400, &c->since_s, err, n))
		return -EINVAL;
	if (c->key && (!*c->key || strchr(c->key, '\n') || strlen(c->key) > 200))
		return bad(err, n, "invalid --key '%s': 1 to 200 bytes, no newline", c->key);
	if (c->label && (!*c->label || strpbrk(c->label, " \n")))
		return bad(err, n, "invalid --label '%s' (labels: normal, thrash, false_sharing, leak)",
			   c->label);
	if (c->cmd == CMD_ANOMALIES) {
		if (npos > 2)
			return bad(err, n, "anomalies takes at most INTERVAL COUNT, not '%s'",
				   argv[optind + 2]);
		if (npos > 0 && num("interval", argv[optind], 1, 86400, &c->interval_s, err, n))
			return -EINVAL;
		if (npos > 1 && num("count", argv[optind + 1], 1, 1l << 30, &c->count, err, n))
			return -EINVAL;
	} else if (c->cmd == CMD_TOP) {
		if (npos > 3)
			return bad(err, n, "top takes at most N INTERVAL COUNT, not '%s'", argv[optind + 3]);
		if (npos > 0 && num("count of keys", argv[optind], 1, 1000000, &c->n, err, n))
			return -EINVAL;
		if (npos > 1 && num("interval", argv[optind + 1], 1, 86400, &c->interval_s, err, n))
			return -EINVAL;
		if (npos > 2 && num("count", argv[optind + 2], 1, 1l << 30, &c->count, err, n))
			return -EINVAL;
	} else if (npos > 0) {
		return bad(err, n, "unexpected argument '%s' (see --help)", argv[optind]);
	}
	if (c->cmd == CMD_EXPORT && (!c->csv || !*c->csv))
		return bad(err, n, "export needs --csv FILE%s", NULL);
	return 0;
}

int cli_request(const struct cli *c, char *buf, size_t n)
{
	size_t len;
	int w;

	w = snprintf(buf, n, "%s%s", c->json ? PROTO_JSON " " : "", proto_cmd_names[c->cmd]);
	if (w < 0 || (size_t)w >= n)
		return -E2BIG;
	len = w;
#define ADD(...) do { \
		w = snprintf(buf + len, n - len, __VA_ARGS__); \
		if (w < 0 || (size_t)w >= n - len) \
			return -E2BIG; \
		len += w; \
	} while (0)
	if (c->cmd == CMD_TOP)
		ADD(" n=%ld", c->n);
	if (c->label)
		ADD(" label=%s", c->label);
	if (c->since_s)
		ADD(" since=%ld", c->since_s);
	if (c->key)
		ADD(" key=%s", c->key);	/* last: the rest of the line */
	ADD("\n");
#undef ADD
	return 0;
}

char *cli_json_error(const char *msg)
{
	size_t n = STR_ESC_SIZE(strlen(msg));
	json_object *o = json_object_new_object();
	char *safe = malloc(n), *s = NULL;

	if (o && safe) {
		json_object_object_add(o, "error",
				       json_object_new_string(str_escape(safe, n, msg, 0)));
		s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(o);
	free(safe);
	return s;
}
