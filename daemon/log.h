/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Daemon logging: one line per message to stderr, prefixed with the program
 * name.  Only the daemon logs; libraries return codes.
 */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdbool.h>

extern int log_verbosity;	/* 0: warnings and errors, 1: info, 2: debug */

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* levels, compared with log_verbosity (not <syslog.h>'s priorities) */
enum cs_log_level {
	CS_LOG_ERR = -1,
	CS_LOG_WARN = 0,
	CS_LOG_INFO = 1,
	CS_LOG_DEBUG = 2,
};

#define log_err(...)   log_msg(CS_LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(CS_LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(CS_LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(CS_LOG_DEBUG, __VA_ARGS__)

#endif
