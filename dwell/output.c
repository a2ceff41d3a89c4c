// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "output.h"

int ud_output_open(struct ud_output *o)
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

int ud_output_close(struct ud_output *o, int code)
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
