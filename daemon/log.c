// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Daemon logging.  Errors, warnings and notices always print; info and
 * debug need -v.  A message may name what other processes chose (a comm,
 * a file name): control bytes are escaped, so a line stays one line and
 * cannot drive the terminal (or forge a journal priority).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "log.h"
#include "strutil.h"

int log_verbosity;
static int journal = -1;	/* unknown yet */

/* systemd sets JOURNAL_STREAM=DEV:INODE for a service whose stderr is a
 * stream to journald; a redirect of stderr (to a file) makes it stale,
 * which the device and inode tell */
bool log_to_journal(void)
{
	unsigned long long dev, ino;
	const char *js;
	struct stat st;

	if (journal >= 0)
		return journal;
	js = getenv("JOURNAL_STREAM");
	journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(2, &st) &&
		  (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return journal;
}

void log_reset(void)
{
	journal = -1;
}

bool log_shows(enum cs_log_level level)
{
	return (int)level <= CS_LOG_NOTICE + log_verbosity;
}

void log_msg(enum cs_log_level level, const char *fmt, ...)
{
	char msg[2048], safe[STR_ESC_SIZE(2048)];
	va_list ap;

	if (!log_shows(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	str_escape(safe, sizeof(safe), msg, 0);
	if (log_to_journal())
		fprintf(stderr, "<%d>%s\n", (int)level, safe);
	else
		fprintf(stderr, "%s%s\n", level == CS_LOG_ERR ? "cachescoped: error: " :
			level == CS_LOG_WARN ? "cachescoped: warning: " : "cachescoped: ", safe);
}
