// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where upfbench's commands write: -o FILE or stdout, a record writer in
 * -f's format, and the notes that follow a table or go to stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "cmd.h"

FILE *up_notes;

/* -o FILE, or stdout; NULL after one line */
FILE *up_output_open(const struct up_args *a)
{
	FILE *f;

	if (!a->output)
		return stdout;
	f = fopen(a->output, "w");
	if (!f)
		elog("--output: cannot write %s: %s", a->output, strerror(errno));
	return f;
}

/* 0, or TK_EXIT_FAIL after one line when the output could not be written */
int up_output_close(const struct up_args *a, FILE *f)
{
	if (!f)
		return 0;
	if (f == stdout ? fflush(f) : fclose(f)) {
		elog("--output: writing %s failed", a->output ? a->output : "stdout");
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* a writer in -f's format (by default as lib/record says for this stream); notes follow a table */
struct rec_writer *up_writer_open(const struct up_args *a, FILE *out)
{
	struct rec_writer *w = rec_writer_new(a->fmt_set ? a->fmt : rec_format_default(out), out);

	if (w)
		up_notes = rec_writer_format(w) == REC_TABLE ? out : stderr;
	return w;
}
