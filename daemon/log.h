/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Daemon logging: one line per message to stderr.  On a terminal or a
 * file each line begins with the program's name ("cachescoped: warning:
 * ..."); where stderr is the journal (systemd's JOURNAL_STREAM names its
 * device and inode) each begins with its syslog priority instead ("<4>"),
 * which journald takes as the entry's PRIORITY, so `journalctl -p warning`
 * and alerting on priorities see what the daemon meant.  Only the daemon
 * logs; libraries return codes.
 */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdbool.h>

extern int log_verbosity;	/* 0: notices, warnings and errors, 1: info, 2: debug */

/* levels: syslog's priorities, the journal's PRIORITY; shown when at most
 * CS_LOG_NOTICE + log_verbosity */
enum cs_log_level {
	CS_LOG_ERR = 3,
	CS_LOG_WARN = 4,
	CS_LOG_NOTICE = 5,
	CS_LOG_INFO = 6,
	CS_LOG_DEBUG = 7,
};

void log_msg(enum cs_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether a message of level would show. */
bool log_shows(enum cs_log_level level);

#define log_err(...)    log_msg(CS_LOG_ERR, __VA_ARGS__)
#define log_warn(...)   log_msg(CS_LOG_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(CS_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)   log_msg(CS_LOG_INFO, __VA_ARGS__)
#define log_debug(...)  log_msg(CS_LOG_DEBUG, __VA_ARGS__)

/* Whether stderr is the journal (JOURNAL_STREAM is its device:inode);
 * read once, at the first message, or again after log_reset(). */
bool log_to_journal(void);
void log_reset(void);

#endif
