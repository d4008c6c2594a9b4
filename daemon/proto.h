/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control protocol, shared by cachescoped and the cachescope CLI: where
 * the socket is, the names of the commands, and how a request line reads.
 *
 * A request is one line:  [json ]VERB[ NAME=VALUE...]
 * "json" first asks for the answer as one JSON document (errors too:
 * {"error": "..."}); without it the answer is text, and an error is one
 * line "error: ...".  Arguments are NAME=VALUE words; key= takes the rest
 * of the line, so it comes last (a key may hold spaces).  Numbers are
 * parsed with str_to_long (strutil.h) on both sides.
 */
#ifndef CS_PROTO_H
#define CS_PROTO_H

#include <string.h>

/* the directory is systemd's RuntimeDirectory=cachescope, or made at start */
#define PROTO_DEFAULT_RUNDIR "/run/cachescope"
#define PROTO_DEFAULT_SOCKET PROTO_DEFAULT_RUNDIR "/cachescope.sock"
#define PROTO_JSON "json"
#define PROTO_ERROR "error: "
/* bytes of a request line, newline included */
#define PROTO_MAX_REQUEST 256

enum proto_cmd {
	CMD_STATUS,	/* counters; "stats" is the same */
	CMD_CLUSTERS,	/* label=L: only clusters of that label */
	CMD_TOP,	/* n=N: the N busiest keys of the last closed window */
	CMD_VECTORS,	/* since=S, key=K: the vectors of the clustering history */
	CMD_EXPORT,	/* since=S: the CSV rows the daemon keeps, header first */
	CMD_RELOAD,	/* re-read --rules (SIGHUP does the same) */
	CMD_ANOMALIES,	/* the keys anomalous now (anomaly.h) */
	CMD_CHANGES,	/* the newest behaviour changes (change.h) */
	CMD_N,
};

static const char *const proto_cmd_names[CMD_N] = {
	[CMD_STATUS] = "status", [CMD_CLUSTERS] = "clusters", [CMD_TOP] = "top",
	[CMD_VECTORS] = "vectors", [CMD_EXPORT] = "export", [CMD_RELOAD] = "reload",
	[CMD_ANOMALIES] = "anomalies", [CMD_CHANGES] = "changes",
};

/* The command a verb names (its first len bytes), or -1.  "stats" is
 * status, "keys" is top. */
static inline int proto_cmd_of(const char *verb, size_t len)
{
	int i;

	if (len == 5 && !strncmp(verb, "stats", 5))
		return CMD_STATUS;
	if (len == 4 && !strncmp(verb, "keys", 4))
		return CMD_TOP;
	for (i = 0; i < CMD_N; i++)
		if (strlen(proto_cmd_names[i]) == len && !strncmp(verb, proto_cmd_names[i], len))
			return i;
	return -1;
}

#endif
