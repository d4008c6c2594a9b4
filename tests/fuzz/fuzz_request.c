// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness of the control protocol's request lines
 * (report_parse_request, daemon/report.c) and of the answers made from
 * them: the input is one request line.  Invariants: a request that parses
 * names a known command and only arguments in their ranges, a key fits
 * and holds no newline; one that does not parse has a terminated,
 * non-empty reason; the error answer is one line of text or one JSON
 * document that json-c parses back as valid UTF-8 to an object with
 * "error".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "../../daemon/proto.h"
#include "../../daemon/report.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "broken: %s\n", #x); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[PROTO_MAX_REQUEST + 1], err[512], *out = NULL;
	struct report_request rq;
	size_t len = 0;
	FILE *f;
	int r;

	if (size > PROTO_MAX_REQUEST)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (strchr(line, '\n'))		/* the server cuts the line there */
		return 0;
	memset(err, 0, sizeof(err));
	r = report_parse_request(line, &rq, err, sizeof(err));
	CHECK(r == 0 || r == -EINVAL);
	CHECK(rq.fmt == REPORT_TEXT || rq.fmt == REPORT_JSON);
	if (!r) {
		CHECK(rq.cmd >= 0 && rq.cmd < CMD_N);
		CHECK(rq.n >= 1 && rq.n <= 1000000);
		CHECK(rq.since_s >= 0 && rq.since_s <= 366l * 86400);
		CHECK(rq.label <= LABEL_COUNT);
		CHECK(memchr(rq.key, '\0', sizeof(rq.key)) && !strchr(rq.key, '\n'));
		return 0;
	}
	CHECK(err[0] && memchr(err, '\0', sizeof(err)));
	f = open_memstream(&out, &len);
	CHECK(f);
	report_error(rq.fmt, f, "%s", err);
	fclose(f);
	CHECK(len && out[len - 1] == '\n' && strchr(out, '\n') == out + len - 1);
	if (rq.fmt == REPORT_JSON) {
		struct json_tokener *tok = json_tokener_new();
		json_object *o, *e;

		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		o = json_tokener_parse_ex(tok, out, len);
		CHECK(o && json_object_object_get_ex(o, "error", &e) && json_object_is_type(e, json_type_string));
		json_object_put(o);
		json_tokener_free(tok);
	} else {
		CHECK(!strncmp(out, PROTO_ERROR, strlen(PROTO_ERROR)));
	}
	free(out);
	return 0;
}
