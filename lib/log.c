// SPDX-License-Identifier: GPL-2.0-only
/*
 * The log: each message one line on stderr after the program's name and its
 * level's tag, shown only at or above the level set.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static const char *prog_name = "toolkit";
static int level = LOG_NORMAL;

void log_init(const char *prog)
{
	const char *slash = strrchr(prog, '/');

	prog_name = slash ? slash + 1 : prog;
}

void log_set_level(int l) { level = l; }
int log_get_level(void) { return level; }
const char *log_prog(void) { return prog_name; }

static void vemit(const char *tag, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* one line per message, whatever the caller passed */
	size_t n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	fprintf(stderr, "%s: %s%s\n", prog_name, tag, buf);
}

#define DEFINE_LOG(fn, min, tag)                 \
	void fn(const char *fmt, ...)            \
	{                                        \
		va_list ap;                      \
		if (level < (min))               \
			return;                  \
		va_start(ap, fmt);               \
		vemit(tag, fmt, ap);             \
		va_end(ap);                      \
	}

DEFINE_LOG(elog, LOG_QUIET, "")
DEFINE_LOG(wlog, LOG_QUIET, "warning: ")
DEFINE_LOG(ilog, LOG_NORMAL, "")
DEFINE_LOG(vlog, LOG_VERBOSE, "")
DEFINE_LOG(dlog, LOG_DEBUG, "debug: ")

void log_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}
