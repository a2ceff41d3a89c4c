/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the dwell tools' records go (-o FILE, else stdout) and in which
 * format (-f, else table on a terminal and JSON lines otherwise): opened
 * once before the work starts, so that a file that cannot be written is
 * refused before any packet is sent or counted.
 */
#ifndef UD_OUTPUT_H
#define UD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "record.h"

struct ud_output {
	const char *path;        /* -o; NULL: stdout */
	enum rec_format format;  /* -f, or the default once opened */
	bool format_set;
	FILE *f;
	struct rec_writer *w;
};

/* TK_EXIT_OK, or TK_EXIT_FAIL after one line saying why */
int ud_output_open(struct ud_output *o);
/* flushes and closes; code, or TK_EXIT_FAIL after one line when a record
 * was not written and code was TK_EXIT_OK */
int ud_output_close(struct ud_output *o, int code);

#endif
