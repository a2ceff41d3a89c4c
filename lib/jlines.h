/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lines of a JSON-lines file, one at a time, as every reader of a trace
 * or of udpdwell's records takes them: each line one record (lib/jsonl.h),
 * blank lines skipped. Two files are told apart from a damaged one:
 *   - a file its writer is still appending to (bbrtrace -o trace.jsonl, still
 *     running) ends in a line cut short: that last line is left out, one
 *     warning says so, and the records before it are read;
 *   - a packet capture given where the records were expected is recognised
 *     by its first bytes (lib/capmagic.h), so that the caller can point to
 *     where a capture goes instead of calling a line of it "not a JSON record".
 * Any other line that is not a record is the file's damage, named by its
 * number; the caller says so and stops.
 */
#ifndef TK_JLINES_H
#define TK_JLINES_H

#include <stddef.h>

#include "capmagic.h"
#include "jsonl.h"

enum jl_line {
	JL_LINE_RECORD,  /* parsed into the caller's object */
	JL_LINE_BLANK,   /* white space only: skip it */
	JL_LINE_CUT,     /* the file's last line, cut short: the records end before it */
	JL_LINE_BAD,     /* not a JSON record: err says why */
	JL_LINE_CAPTURE, /* the file is a packet capture: `capture` says which kind */
};

struct jl_lines {
	const char *path;
	unsigned long lineno;  /* of the line last given, from 1 */
	unsigned long records; /* the lines that were records */
	const char *capture;   /* "pcap" or "pcapng" once the file's first bytes say so */
	unsigned char head[CAP_MAGIC_LEN]; /* the file's first bytes, as the lines bring them */
	size_t nhead;
};

void jl_lines_init(struct jl_lines *r, const char *path);

/*
 * The file's next line: NUL-terminated, len bytes with its '\n' when it has
 * one (only the file's last line may have none), which is overwritten by
 * the line's end: an error's column counts the record's own bytes. A record
 * is parsed into o, in place. JL_LINE_CUT comes with a warning on stderr that names the file
 * and the records read before the line.
 */
enum jl_line jl_lines_next(struct jl_lines *r, char *line, size_t len, struct jl_obj *o, char *err,
			   size_t errlen);

#endif
