// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --web-config FILE (webconfig.h): libyaml reads it, libcrypt (libxcrypt)
 * checks the bcrypt hashes.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#include "strutil.h"
#include "webconfig.h"

struct user {
	char *name, *hash;
	char *ok;		/* the password last verified, or NULL */
};

struct webconfig {
	struct user u[WEBCONFIG_MAX_USERS];
	unsigned int n;
	char *cert, *key;
	char dummy[CRYPT_OUTPUT_SIZE];	/* an unknown user's hash: the same cost */
};

static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A regular file of at most max bytes into a NUL-terminated buffer.
 * O_NONBLOCK: a FIFO named here must not block the open. */
static int slurp(const char *path, const char *what, mode_t forbid, char **out, size_t *len,
		 char *why, size_t n)
{
	struct stat st;
	ssize_t r;
	size_t got = 0;
	char *buf;
	int fd;

	fd = open_regular(path, WEBCONFIG_MAX_BYTES, &st);
	if (fd == -EINVAL)
		return fail(why, n, "%s %s: not a regular file", what, path);
	if (fd == -EFBIG)
		return fail(why, n, "%s %s: larger than %d bytes", what, path, WEBCONFIG_MAX_BYTES);
	if (fd < 0)
		return fail(why, n, "%s %s: %s", what, path, strerror(-fd));
	/* its owner may rewrite it: users and TLS keys are root's to say */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		return fail(why, n, "%s %s: owned by uid %u, not root (chown root)", what, path,
			    (unsigned int)st.st_uid);
	}
	if (st.st_mode & forbid) {
		close(fd);
		return fail(why, n, "%s %s: mode %04o lets others %s it (chmod %s)", what, path,
			    (unsigned int)(st.st_mode & 07777),
			    forbid & 044 ? "read" : "write", forbid & 044 ? "600" : "go-w");
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return fail(why, n, "%s %s: out of memory", what, path);
	}
	while (got < (size_t)st.st_size &&
	       (r = read(fd, buf + got, (size_t)st.st_size - got)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return fail(why, n, "%s %s: %s", what, path, strerror(errno));
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

/* path relative to the directory of the config file base */
static char *beside(const char *base, const char *path)
{
	const char *slash = strrchr(base, '/');
	char *s;

	if (path[0] == '/' || !slash)
		return strdup(path);
	if (asprintf(&s, "%.*s/%s", (int)(slash - base), base, path) < 0)
		return NULL;
	return s;
}

static const char *scalar(yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

static bool bcrypt_hash(const char *h)
{
	size_t i;

	if (strncmp(h, "$2a$", 4) && strncmp(h, "$2b$", 4) && strncmp(h, "$2y$", 4))
		return false;
	if (strlen(h) != 60 || h[6] != '$')
		return false;
	if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || (h[4] == '3' && h[5] > '1'))
		return false;
	for (i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", h[i]))
			return false;
	return true;
}

static int users(struct webconfig *wc, yaml_document_t *doc, yaml_node_t *map, char *why, size_t n)
{
	yaml_node_pair_t *p;
	unsigned int i;

	if (map->type == YAML_SCALAR_NODE && !*scalar(map))
		return 0;	/* basic_auth_users: (nothing) */
	if (map->type != YAML_MAPPING_NODE)
		return fail(why, n, "basic_auth_users: expected a map of user: bcrypt hash");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *name = scalar(yaml_document_get_node(doc, p->key));
		const char *hash = scalar(yaml_document_get_node(doc, p->value));

		if (!name || !*name || strchr(name, ':'))
			return fail(why, n, "basic_auth_users: a user name must be a non-empty string without ':'");
		if (!hash || !bcrypt_hash(hash))
			return fail(why, n, "basic_auth_users: %s: expected a bcrypt hash ($2y$10$ and 53 characters: htpasswd -nBC 10 %s)",
				    name, name);
		for (i = 0; i < wc->n; i++)
			if (!strcmp(wc->u[i].name, name))
				return fail(why, n, "basic_auth_users: %s given twice", name);
		if (wc->n == WEBCONFIG_MAX_USERS)
			return fail(why, n, "basic_auth_users: more than %d users", WEBCONFIG_MAX_USERS);
		wc->u[wc->n].name = strdup(name);
		wc->u[wc->n].hash = strdup(hash);
		if (!wc->u[wc->n].name || !wc->u[wc->n].hash) {
			free(wc->u[wc->n].name);
			free(wc->u[wc->n].hash);
			return fail(why, n, "out of memory");
		}
		wc->n++;
	}
	return 0;
}

static int tls(struct webconfig *wc, const char *path, yaml_document_t *doc, yaml_node_t *map,
	       char *why, size_t n)
{
	const char *cert = NULL, *key = NULL;
	yaml_node_pair_t *p;
	char *full;
	int err;

	if (map->type != YAML_MAPPING_NODE)
		return fail(why, n, "tls_server_config: expected a map with cert_file and key_file");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		const char *v = scalar(yaml_document_get_node(doc, p->value));

		if (k && !strcmp(k, "cert_file") && v && *v)
			cert = v;
		else if (k && !strcmp(k, "key_file") && v && *v)
			key = v;
		else
			return fail(why, n, "tls_server_config: %s: not supported (only cert_file and key_file, as paths)",
				    k ? k : "(not a name)");
	}
	if (!cert || !key)
		return fail(why, n, "tls_server_config: needs both cert_file and key_file");
	full = beside(path, cert);
	if (!full)
		return fail(why, n, "out of memory");
	err = slurp(full, "cert_file", 022, &wc->cert, NULL, why, n);
	free(full);
	if (err)
		return err;
	full = beside(path, key);
	if (!full)
		return fail(why, n, "out of memory");
	err = slurp(full, "key_file", 026, &wc->key, NULL, why, n);
	free(full);
	return err;
}

static int parse(struct webconfig *wc, const char *path, const char *text, size_t len,
		 char *why, size_t n)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *p;
	int err = 0;

	if (!yaml_parser_initialize(&parser))
		return fail(why, n, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		err = fail(why, n, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			   parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return err;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && !(root->type == YAML_SCALAR_NODE && !*scalar(root))) {
		if (root->type != YAML_MAPPING_NODE)
			err = fail(why, n, "%s: expected a map (tls_server_config, basic_auth_users)", path);
		for (p = root->data.mapping.pairs.start; !err && p < root->data.mapping.pairs.top; p++) {
			const char *k = scalar(yaml_document_get_node(&doc, p->key));
			yaml_node_t *v = yaml_document_get_node(&doc, p->value);

			if (k && !strcmp(k, "basic_auth_users"))
				err = users(wc, &doc, v, why, n);
			else if (k && !strcmp(k, "tls_server_config"))
				err = tls(wc, path, &doc, v, why, n);
			else
				err = fail(why, n, "%s: %s: not supported (only tls_server_config and basic_auth_users)",
					   path, k ? k : "(not a name)");
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return err;
}

struct webconfig *webconfig_load(const char *path, char *why, size_t n)
{
	struct webconfig *wc = calloc(1, sizeof(*wc));
	struct crypt_data *cd;
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	char *text;
	size_t len;

	if (!wc) {
		fail(why, n, "out of memory");
		return NULL;
	}
	if (slurp(path, "--web-config", 022, &text, &len, why, n)) {
		free(wc);
		return NULL;
	}
	if (parse(wc, path, text, len, why, n)) {
		free(text);
		webconfig_free(wc);
		return NULL;
	}
	free(text);
	if (wc->n) {
		/* the first user's cost, so that a name that is not there
		 * takes as long to refuse as a wrong password */
		int cost = (wc->u[0].hash[4] - '0') * 10 + (wc->u[0].hash[5] - '0');

		cd = calloc(1, sizeof(*cd));
		if (!cd || !crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL, 0, salt, sizeof(salt)) ||
		    !crypt_rn("no such user", salt, cd, sizeof(*cd)) || cd->output[0] == '*') {
			free(cd);
			fail(why, n, "this libcrypt has no bcrypt");
			webconfig_free(wc);
			return NULL;
		}
		snprintf(wc->dummy, sizeof(wc->dummy), "%s", cd->output);
		free(cd);
	}
	return wc;
}

void webconfig_free(struct webconfig *wc)
{
	unsigned int i;

	if (!wc)
		return;
	for (i = 0; i < wc->n; i++) {
		free(wc->u[i].name);
		free(wc->u[i].hash);
		if (wc->u[i].ok) {
			explicit_bzero(wc->u[i].ok, strlen(wc->u[i].ok));
			free(wc->u[i].ok);
		}
	}
	if (wc->key) {
		explicit_bzero(wc->key, strlen(wc->key));
		free(wc->key);
	}
	free(wc->cert);
	free(wc);
}

unsigned int webconfig_users(const struct webconfig *wc)
{
	return wc ? wc->n : 0;
}

const char *webconfig_cert(const struct webconfig *wc)
{
	return wc ? wc->cert : NULL;
}

const char *webconfig_key(const struct webconfig *wc)
{
	return wc ? wc->key : NULL;
}

static const struct user *find(const struct webconfig *wc, const char *user)
{
	unsigned int i;

	for (i = 0; i < wc->n; i++)
		if (!strcmp(wc->u[i].name, user))
			return &wc->u[i];
	return NULL;
}

/* equal strings, in a time that depends on their lengths only */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

bool webconfig_cached(const struct webconfig *wc, const char *user, const char *pass)
{
	const struct user *u = find(wc, user);

	return u && u->ok && same(u->ok, pass);
}

bool webconfig_verify(struct webconfig *wc, const char *user, const char *pass)
{
	struct user *u = (struct user *)find(wc, user);
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *hash = u ? u->hash : wc->dummy;
	bool ok;

	if (!cd)
		return false;
	ok = crypt_rn(pass, hash, cd, sizeof(*cd)) && cd->output[0] != '*' &&
	     same(cd->output, hash) && u;
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok) {
		char *copy = strdup(pass);

		if (copy) {
			if (u->ok) {
				explicit_bzero(u->ok, strlen(u->ok));
				free(u->ok);
			}
			u->ok = copy;
		}
	}
	return ok;
}
