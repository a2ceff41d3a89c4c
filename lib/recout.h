/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a tool's records go (-o FILE, else stdout) and in which format
 * (-f, else table on a terminal and JSON lines otherwise): opened once
 * before the work starts, so that a file that cannot be written is refused
 * before any packet is sent or counted. udpdwell, rtpsend and sfu_echo
 * write through it.
 */
#ifndef TK_RECOUT_H
#define TK_RECOUT_H

#include <stdbool.h>
#include <stdio.h>

#include "record.h"

struct rec_out {
	const char *path;        /* -o; NULL: stdout */
	enum rec_format format;  /* -f, or the default once opened */
	bool format_set;
	FILE *f;
	struct rec_writer *w;
};

/* TK_EXIT_OK, or TK_EXIT_FAIL after one line saying why */
int rec_out_open(struct rec_out *o);
/* flushes and closes; code, or TK_EXIT_FAIL after one line when a record
 * was not written and code was TK_EXIT_OK */
int rec_out_close(struct rec_out *o, int code);

#endif
