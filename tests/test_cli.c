// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the cachescope command line (tools/cli.c): what each
 * command line parses to, the request it sends, and its JSON errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "../daemon/proto.h"
#include "../tools/cli.h"

static char err[512];

/* parse a NULL-terminated list of words after "cachescope" */
#define PARSE(c, ...) parse_words((c), (const char *[]){ "cachescope", __VA_ARGS__, NULL })
static int parse_words(struct cli *c, const char **w)
{
	int argc = 0;

	while (w[argc])
		argc++;
	err[0] = '\0';
	return cli_parse(argc, (char **)w, c, err, sizeof(err));
}

static const char *request(const struct cli *c)
{
	static char buf[PROTO_MAX_REQUEST];

	assert_int_equal(cli_request(c, buf, sizeof(buf)), 0);
	return buf;
}

static void cli_parse__verbs_and_options__requests(void **state)
{
	struct cli c;

	(void)state;
	assert_int_equal(PARSE(&c, "status"), 0);
	assert_string_equal(c.socket, PROTO_DEFAULT_SOCKET);
	assert_string_equal(request(&c), "status\n");
	assert_int_equal(PARSE(&c, "--socket=/tmp/x.sock", "stats"), 0);
	assert_string_equal(c.socket, "/tmp/x.sock");
	assert_string_equal(request(&c), "status\n");
	/* options anywhere, as getopt_long permutes */
	assert_int_equal(PARSE(&c, "clusters", "--label", "leak", "-j"), 0);
	assert_string_equal(request(&c), "json clusters label=leak\n");
	assert_int_equal(PARSE(&c, "--json", "top", "5", "2", "3"), 0);
	assert_int_equal(c.n, 5);
	assert_int_equal(c.interval_s, 2);
	assert_int_equal(c.count, 3);
	assert_string_equal(request(&c), "json top n=5\n");
	assert_int_equal(PARSE(&c, "keys"), 0);
	assert_string_equal(request(&c), "top n=10\n");
	assert_int_equal(PARSE(&c, "vectors", "--since=30", "--key", "8:1:7 x"), 0);
	assert_string_equal(request(&c), "vectors since=30 key=8:1:7 x\n");
	assert_int_equal(PARSE(&c, "export", "--csv", "/tmp/o.csv", "--since", "60"), 0);
	assert_string_equal(c.csv, "/tmp/o.csv");
	assert_string_equal(request(&c), "export since=60\n");
	assert_int_equal(PARSE(&c, "reload"), 0);
	assert_string_equal(request(&c), "reload\n");
	assert_int_equal(PARSE(&c, "anomalies", "-j"), 0);
	assert_int_equal(c.interval_s, 0);
	assert_string_equal(request(&c), "json anomalies\n");
	assert_int_equal(PARSE(&c, "anomalies", "2", "5"), 0);
	assert_int_equal(c.interval_s, 2);
	assert_int_equal(c.count, 5);
	assert_string_equal(request(&c), "anomalies\n");
	assert_int_equal(PARSE(&c, "-V"), 2);
	assert_int_equal(PARSE(&c, "--help"), 1);
}

static void cli_parse__bad_lines__one_line_errors(void **state)
{
	struct cli c;

	(void)state;
	assert_int_equal(PARSE(&c, "bogus"), -EINVAL);
	assert_string_equal(err, "unknown command 'bogus' (see --help)");
	assert_int_equal(PARSE(&c, "--frob", "status"), -EINVAL);
	assert_string_equal(err, "unknown option '--frob' (see --help)");
	assert_int_equal(PARSE(&c, "status", "--socket"), -EINVAL);
	assert_string_equal(err, "option '--socket' needs a value (see --help)");
	assert_int_equal(PARSE(&c, "top", "0"), -EINVAL);
	assert_string_equal(err, "invalid count of keys '0': expected an integer in 1..1000000");
	assert_int_equal(PARSE(&c, "top", "5", "1s"), -EINVAL);
	assert_int_equal(PARSE(&c, "top", "1", "2", "3", "4"), -EINVAL);
	assert_int_equal(PARSE(&c, "anomalies", "1", "2", "3"), -EINVAL);
	assert_string_equal(err, "anomalies takes at most INTERVAL COUNT, not '3'");
	assert_int_equal(PARSE(&c, "anomalies", "0"), -EINVAL);
	assert_int_equal(PARSE(&c, "status", "--label", "leak"), -EINVAL);
	assert_string_equal(err, "--label is an option of clusters, not of status");
	assert_int_equal(PARSE(&c, "export"), -EINVAL);
	assert_string_equal(err, "export needs --csv FILE");
	assert_int_equal(PARSE(&c, "vectors", "--since", "-5"), -EINVAL);
	assert_int_equal(PARSE(&c, "clusters", "extra"), -EINVAL);
	assert_int_equal(PARSE(&c, "-j"), -EINVAL);
	assert_string_equal(err, "no command given (see --help)");
	/* what was typed is escaped in the error */
	assert_int_equal(PARSE(&c, "st\x1b[2Jatus"), -EINVAL);
	assert_string_equal(err, "unknown command 'st\\x1b[2Jatus' (see --help)");
}

/* A key is the rest of the request line: one that would not fit is
 * refused, never cut. */
static void cli_request__long_key__refused(void **state)
{
	char key[300], buf[PROTO_MAX_REQUEST];
	struct cli c;

	(void)state;
	memset(key, 'k', 250);
	key[250] = '\0';
	assert_int_equal(PARSE(&c, "vectors", "--key", key), -EINVAL);
	key[199] = '\0';
	assert_int_equal(PARSE(&c, "vectors", "--since", "100000", "--key", key), 0);
	assert_int_equal(cli_request(&c, buf, 64), -E2BIG);
}

static void cli_json_error__non_utf8__valid_json_with_escaped_text(void **state)
{
	struct json_tokener *tok = json_tokener_new();
	char *s = cli_json_error("cannot connect to /run/\xff\x1b.sock");
	json_object *o, *e;

	(void)state;
	assert_non_null(s);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, strlen(s));
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "error", &e));
	assert_string_equal(json_object_get_string(e), "cannot connect to /run/\\xff\\x1b.sock");
	json_object_put(o);
	json_tokener_free(tok);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli_parse__verbs_and_options__requests),
		cmocka_unit_test(cli_parse__bad_lines__one_line_errors),
		cmocka_unit_test(cli_request__long_key__refused),
		cmocka_unit_test(cli_json_error__non_utf8__valid_json_with_escaped_text),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
