/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cachescope CLI's command line and what it asks the daemon: parsed
 * into one struct cli, turned into one request line (daemon/proto.h).
 * Kept apart from the socket code so that the unit tests can parse.
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_VERSION "0.1"

/* Exit codes, as --help, cachescope(1) and docs/operating.md list them. */
enum cli_exit {
	CLI_OK = 0,
	CLI_EDAEMON = 1,	/* the daemon answered an error, or an answer that is not one */
	CLI_EUSAGE = 2,		/* bad command line */
	CLI_ENOTRUNNING = 3,	/* no daemon answers at the socket */
	CLI_EPERM = 4,		/* not allowed to ask (the daemon answers root only) */
	CLI_EOUTPUT = 5,	/* export: the file could not be written */
};

struct cli {
	const char *socket;
	bool json;
	int cmd;		/* enum proto_cmd */
	const char *verb;	/* as typed */
	long n;			/* top: keys (default 10) */
	long interval_s;	/* top, anomalies: 0 once, else refresh every interval */
	long count;		/* top, anomalies: refreshes (0: until interrupted) */
	long since_s;		/* vectors, export: 0 for all */
	const char *label;	/* clusters */
	const char *key;	/* vectors */
	const char *csv;	/* export: the file */
};

/* Parse argv.  Returns 0, 1 for --help, 2 for --version, or -EINVAL with
 * a one-line reason in err. */
int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t n);
/* The request line for c, newline included.  Returns 0 or -E2BIG. */
int cli_request(const struct cli *c, char *buf, size_t n);
/* {"error": msg} as one line, msg escaped (strutil.h) then JSON-encoded.
 * Returns a malloc'd string or NULL. */
char *cli_json_error(const char *msg);
void cli_usage(FILE *out);

#endif
