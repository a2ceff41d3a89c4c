// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lines of a JSON-lines file: a line cut short at the end forgiven, a
 * packet capture recognised (see jlines.h).
 */
#include <stdbool.h>
#include <string.h>

#include "jlines.h"
#include "log.h"

void jl_lines_init(struct jl_lines *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
}

/* the file's first bytes, gathered across its first lines (pcapng's first
 * byte is a '\n', a line of its own) */
static void note_head(struct jl_lines *r, const char *line, size_t len)
{
	size_t n = len < CAP_MAGIC_LEN - r->nhead ? len : CAP_MAGIC_LEN - r->nhead;

	if (r->nhead == CAP_MAGIC_LEN)
		return;
	memcpy(r->head + r->nhead, line, n);
	r->nhead += n;
	if (r->nhead == CAP_MAGIC_LEN)
		r->capture = cap_magic_kind(r->head, r->nhead);
}

enum jl_line jl_lines_next(struct jl_lines *r, char *line, size_t len, struct jl_obj *o, char *err,
			   size_t errlen)
{
	bool ended = len > 0 && line[len - 1] == '\n';

	r->lineno++;
	note_head(r, line, len);
	if (r->capture)
		return JL_LINE_CAPTURE;
	if (ended)
		line[len - 1] = '\0'; /* an error's column counts the record's bytes, not its '\n' */
	if (line[strspn(line, " \t\r\n")] == '\0')
		return JL_LINE_BLANK;
	/*
	 * A last line without its '\n' that parses is a whole record: a record
	 * is one object, and jl_parse refuses anything but white space after
	 * its closing '}', so no record cut short parses. Only the final '\n'
	 * is missing: not written yet, or never (a file edited by hand).
	 */
	if (!jl_parse(line, o, err, errlen)) {
		r->records++;
		return JL_LINE_RECORD;
	}
	if (ended)
		return JL_LINE_BAD;
	wlog("%s: its last line is incomplete (still being written?): read the %lu complete record%s before it",
	     r->path, r->records, r->records == 1 ? "" : "s");
	return JL_LINE_CUT;
}
