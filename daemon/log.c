// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Daemon logging.  Errors and warnings always print; info and debug need -v.
 * A message may name what other processes chose (a comm, a file name):
 * control bytes are escaped, so a line stays one line and cannot drive
 * the terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"
#include "strutil.h"

int log_verbosity;

void log_msg(int level, const char *fmt, ...)
{
	char msg[2048], safe[STR_ESC_SIZE(2048)];
	va_list ap;

	if (level > log_verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s\n",
		level == CS_LOG_ERR ? "cachescoped: error: " :
		level == CS_LOG_WARN ? "cachescoped: warning: " : "cachescoped: ",
		str_escape(safe, sizeof(safe), msg, 0));
}
