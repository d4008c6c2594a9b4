// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of --web-config (daemon/webconfig.c): what is read, what is
 * refused with which reason, and the bcrypt check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <crypt.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/webconfig.h"

struct fixture {
	char dir[64];
	char hash[CRYPT_OUTPUT_SIZE];	/* of "secret", cost 4 */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct crypt_data cd = { 0 };
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/cs-webconfig.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_non_null(crypt_gensalt_rn("$2y$", 4, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("secret", salt, &cd, sizeof(cd)));
	snprintf(f->hash, sizeof(f->hash), "%s", cd.output);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* name in the fixture's directory, with text and mode; its path */
static const char *put(struct fixture *f, const char *name, const char *text, mode_t mode)
{
	static char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* text refused, with a reason holding want */
static void refused(struct fixture *f, const char *text, mode_t mode, const char *want)
{
	const char *path = put(f, "web.yml", text, mode);
	char why[512] = "";
	struct webconfig *wc = webconfig_load(path, why, sizeof(why));

	if (wc)
		fail_msg("accepted: %s", text);
	if (!strstr(why, want))
		fail_msg("want '%s' in '%s'", want, why);
	assert_null(strchr(why, '\n'));
}

static void webconfig__users__verified(void **state)
{
	struct fixture *f = *state;
	char text[1024], why[512];
	struct webconfig *wc;

	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  \"bob\": '%s'\n", f->hash,
		 f->hash);
	wc = webconfig_load(put(f, "web.yml", text, 0600), why, sizeof(why));
	if (!wc)
		fail_msg("%s", why);
	assert_int_equal(webconfig_users(wc), 2);
	assert_null(webconfig_cert(wc));
	assert_false(webconfig_cached(wc, "alice", "secret"));
	assert_true(webconfig_verify(wc, "alice", "secret"));
	assert_true(webconfig_cached(wc, "alice", "secret"));
	assert_false(webconfig_cached(wc, "alice", "secre"));
	assert_false(webconfig_cached(wc, "alice", "secret2"));
	assert_false(webconfig_cached(wc, "bob", "secret"));
	assert_false(webconfig_verify(wc, "alice", "Secret"));
	assert_false(webconfig_verify(wc, "carol", "secret"));	/* the dummy hash */
	assert_false(webconfig_verify(wc, "", ""));
	assert_true(webconfig_verify(wc, "bob", "secret"));
	webconfig_free(wc);
}

static void webconfig__empty__no_users_no_tls(void **state)
{
	struct fixture *f = *state;
	char why[512];
	struct webconfig *wc = webconfig_load(put(f, "web.yml", "# nothing\n", 0600), why, sizeof(why));

	assert_non_null(wc);
	assert_int_equal(webconfig_users(wc), 0);
	assert_null(webconfig_key(wc));
	webconfig_free(wc);
}

static void webconfig__tls__files_beside_the_config(void **state)
{
	struct fixture *f = *state;
	char why[512];
	struct webconfig *wc;

	put(f, "c.pem", "CERT\n", 0644);
	put(f, "k.pem", "KEY\n", 0600);
	wc = webconfig_load(put(f, "web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n", 0644),
			    why, sizeof(why));
	if (!wc)
		fail_msg("%s", why);
	assert_string_equal(webconfig_cert(wc), "CERT\n");
	assert_string_equal(webconfig_key(wc), "KEY\n");
	webconfig_free(wc);
	/* a key others may read is refused */
	put(f, "k.pem", "KEY\n", 0644);
	refused(f, "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n", 0600,
		"key_file");
	put(f, "k.pem", "KEY\n", 0600);
	refused(f, "tls_server_config:\n  cert_file: c.pem\n", 0600, "needs both");
	refused(f, "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  client_auth_type: RequireAndVerifyClientCert\n",
		0600, "client_auth_type: not supported");
	refused(f, "tls_server_config:\n  cert_file: nope.pem\n  key_file: k.pem\n", 0600,
		"No such file");
}

static void webconfig__bad__one_line_reason(void **state)
{
	struct fixture *f = *state;
	char text[1024];

	refused(f, "http_server_config:\n  http2: false\n", 0600, "http_server_config: not supported");
	refused(f, "basic_auth_users:\n  alice: plain\n", 0600, "alice: expected a bcrypt hash");
	refused(f, "basic_auth_users:\n  alice: $1$abc$def\n", 0600, "bcrypt");
	refused(f, "basic_auth_users: [alice]\n", 0600, "expected a map");
	refused(f, "- a\n- b\n", 0600, "expected a map");
	refused(f, "basic_auth_users:\n  alice: [\n", 0600, "web.yml:");
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  alice: %s\n", f->hash, f->hash);
	refused(f, text, 0600, "alice given twice");
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", f->hash);
	refused(f, text, 0620, "lets others write it");
	refused(f, text, 0602, "lets others write it");
	/* a file another user owns is that user's to rewrite (as root) */
	if (!geteuid()) {
		const char *path = put(f, "web.yml", text, 0600);
		char why[512] = "";

		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_null(webconfig_load(path, why, sizeof(why)));
		assert_non_null(strstr(why, "owned by uid 65534, not root (chown root)"));
		assert_int_equal(unlink(path), 0);
	}
}

/* A FIFO named as the file does not block the load. */
static void webconfig__fifo__refused_at_once(void **state)
{
	struct fixture *f = *state;
	char path[128], why[512];

	snprintf(path, sizeof(path), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(webconfig_load(path, why, sizeof(why)));
	assert_non_null(strstr(why, "not a regular file"));
	assert_null(webconfig_load("/nonexistent/web.yml", why, sizeof(why)));
	assert_non_null(strstr(why, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(webconfig__users__verified, setup, teardown),
		cmocka_unit_test_setup_teardown(webconfig__empty__no_users_no_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(webconfig__tls__files_beside_the_config, setup, teardown),
		cmocka_unit_test_setup_teardown(webconfig__bad__one_line_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(webconfig__fifo__refused_at_once, setup, teardown),
	};

	return cmocka_run_group_tests_name("webconfig", tests, NULL, NULL);
}
