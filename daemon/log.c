// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Daemon logging.  Errors and warnings always print; info and debug need -v.
 */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

int log_verbosity;

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_verbosity)
		return;
	fputs(level == LOG_ERR ? "cachescoped: error: " :
	      level == LOG_WARN ? "cachescoped: warning: " : "cachescoped: ",
	      stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
