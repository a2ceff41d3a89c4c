/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The record writers' shared state, inside lib/ only: struct rec_writer,
 * its buffer and the raw appends every format's writer makes into it.
 * lib/record.c owns the buffer and writes JSON and CSV; lib/rectable.c
 * writes tables.
 */
#ifndef TK_RECBUF_H
#define TK_RECBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

#define BUF_CAP (64 * 1024)                 /* the buffer's size; it grows for a larger record */
#define BUF_HIGH (BUF_CAP - 8 * 1024)       /* write out when a record ends above this */
#define BUF_SLACK 256                       /* room put_json_key and put_u64 write into unchecked */
#define KEY_SLOT 32                         /* a fixed schema's JSON key text, copied whole: ,"name": */
#define PLAN_MAX 8                          /* fixed schemas per writer with their key texts made */

/*
 * Records are built in a buffer and written out whole, with write(2): only
 * complete records ever reach the output. When a write fails part way (a
 * full disk), a regular file is cut back to the end of its last whole
 * record, so a reader never finds a torn last line.
 */
#define CSV_MAX_TYPES 16   /* record types one CSV file may hold */
#define CSV_MAX_COLS 256   /* columns of their union */

/* CSV: one header for the whole file, the union of the declared record
 * types' fields, after a "type" column when there are several types;
 * map[t][c] is column c's field in type t, or -1 */
struct csv_union {
	const struct rec_schema *types[CSV_MAX_TYPES];
	unsigned int ntypes;
	const char *cols[CSV_MAX_COLS];
	unsigned int ncols;
	int16_t map[CSV_MAX_TYPES][CSV_MAX_COLS];
	bool header_done;
	bool typed;        /* the header has a "type" column: more than one type declared */
};

/* JSON: a fixed schema's text around its values, made once per writer:
 * head is {"type":"name", key[i] is field i's ,"name": (no comma on the
 * record's first); a key of length 0 does not fit its slot and is written
 * the slow way */
struct json_key {
	char text[KEY_SLOT - 1];
	uint8_t len;
};

struct json_plan {
	const struct rec_schema *s;
	char head[2 * KEY_SLOT];
	size_t head_len;       /* 0: the head does not fit, written the slow way */
	struct json_key *keys; /* one per field */
};

struct rec_writer {
	enum rec_format fmt;
	FILE *out;
	struct csv_union *csv;
	const struct rec_schema *last;
	size_t len, cap;
	size_t rec_start;                   /* where the record being built starts */
	bool failed;
	char *buf;
	/* table: the cell being formatted, grown to fit (a cell is never cut) */
	char *cell;
	size_t cell_len, cell_cap;
	/* table: how far the row runs past its columns after a cell wider than
	 * its column; the next cells' padding takes it back */
	size_t behind;
	struct json_plan plans[PLAN_MAX];
	unsigned int nplans;
};

/* room for n more bytes (and the slack): complete records go out, then the
 * buffer grows if the record being built needs it */
void rec_reserve(struct rec_writer *w, size_t n);

static inline void put(struct rec_writer *w, const char *s, size_t n)
{
	if (w->len + n + BUF_SLACK > w->cap)
		rec_reserve(w, n);
	if (w->len + n + BUF_SLACK > w->cap)
		return; /* out of memory: failed is set */
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static inline void putc_(struct rec_writer *w, char c)
{
	if (w->len + BUF_SLACK > w->cap)
		rec_reserve(w, 1);
	w->buf[w->len++] = c;
}

static inline void puts_(struct rec_writer *w, const char *s) { put(w, s, strlen(s)); }

/* the table's header row for s, and one row of s's values under it */
void rec_table_header(struct rec_writer *w, const struct rec_schema *s);
void rec_table_write(struct rec_writer *w, const struct rec_schema *s, const struct rec_value *v);

#endif
