/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --web-config FILE: who may read the metrics endpoint's detail, and over
 * what.  The file is the subset of the Prometheus exporter toolkit's web
 * configuration that the endpoint implements, in the same YAML:
 *
 *   tls_server_config:
 *     cert_file: server.crt     # PEM; relative paths from FILE's directory
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...    # bcrypt ($2a$, $2b$, $2y$)
 *
 * Any other key is refused (a setting silently ignored would be a hole).
 * An empty file is valid: no TLS, no users.  The file must be a regular
 * file of at most 1 MiB that no one but its owner may write; the key file
 * one that no one but its owner may read.
 */
#ifndef CS_WEBCONFIG_H
#define CS_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define WEBCONFIG_MAX_USERS 64
#define WEBCONFIG_MAX_BYTES (1 << 20)

struct webconfig;

/* NULL with a one-line reason in why (of size n). */
struct webconfig *webconfig_load(const char *path, char *why, size_t n);
void webconfig_free(struct webconfig *wc);

unsigned int webconfig_users(const struct webconfig *wc);
/* The PEM texts (NUL-terminated), or NULL without TLS. */
const char *webconfig_cert(const struct webconfig *wc);
const char *webconfig_key(const struct webconfig *wc);

/* Whether (user, pass) is the pair last verified for that user: no bcrypt,
 * a constant-time compare. */
bool webconfig_cached(const struct webconfig *wc, const char *user, const char *pass);
/* The bcrypt check (tens of ms at cost 10; an unknown user costs the same
 * as a known one); a pair that passes is remembered for cached(). */
bool webconfig_verify(struct webconfig *wc, const char *user, const char *pass);

#endif
