// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tool's record output: the -o file (or stdout) opened with the writer
 * of the -f format, and closed with a failed write turned into a failure.
 */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "recout.h"

int rec_out_open(struct rec_out *o)
{
	o->f = stdout;
	if (o->path) {
		o->f = fopen(o->path, "w");
		if (!o->f) {
			elog("cannot write %s: %s", o->path, strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
	if (!o->format_set)
		o->format = rec_format_default(o->f);
	o->w = rec_writer_new(o->format, o->f);
	if (!o->w) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

int rec_out_close(struct rec_out *o, int code)
{
	bool failed = o->w && rec_writer_free(o->w);

	o->w = NULL;
	if (o->f && o->f != stdout && fclose(o->f))
		failed = true;
	o->f = NULL;
	if (failed && code == TK_EXIT_OK) {
		elog("cannot write the output%s%s: %s", o->path ? " " : "", o->path ? o->path : "",
		     strerror(errno));
		return TK_EXIT_FAIL;
	}
	return code;
}
