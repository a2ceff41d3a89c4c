/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One source of truth per record type, three writers.
 *
 * A tool describes each record type once, as a schema (field names, types,
 * table headers with units), and fills an array of values per record. The
 * table, CSV and JSON-lines writers below are the only code in the project
 * that formats records, so every tool's output follows the same rules:
 *   json   one object per line, "type" first when the schema has one;
 *          null for a value marked null; floats with the field's precision
 *   csv    one header row for the whole file: the union of the fields of
 *          every record type the file may hold (declared with
 *          rec_writer_declare before the first record), after a "type"
 *          column when there are several; each row fills its own type's
 *          columns; empty cell for null; lists
 *          joined with ';', maps as k=v;k=v
 *   table  fixed-width columns whose headers carry the units; only fields
 *          with a header are shown; '-' for null; a value wider than its
 *          column is shown whole (never cut), and the cells after it give
 *          up their padding until the row is back in line
 */
#ifndef TK_RECORD_H
#define TK_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

enum rec_type {
	REC_U64,
	REC_I64,
	REC_F64,
	REC_STR,
	REC_BOOL,
	REC_U64_LIST, /* JSON array of integers */
	REC_KV,       /* JSON object of string -> integer */
	REC_RAW,      /* a JSON value given as text (passed through): as is in JSON,
	               * quoted in CSV, as is in the table */
};

struct rec_field {
	const char *name;   /* key in JSON and CSV; NULL: a table-only column */
	enum rec_type type;
	int prec;           /* REC_F64: decimals in JSON and CSV */
	const char *head;   /* table column header with its unit, NULL: not in the table */
	int width;          /* table column width; negative: left-aligned */
	double tscale;      /* the table shows value * tscale (0 means 1) */
	int tprec;          /* decimals in the table (numbers scaled or REC_F64) */
};

struct rec_schema {
	const char *type;   /* the value of the "type" key; NULL for none */
	const struct rec_field *fields;
	unsigned int nfields;
	/* true: the schema, its fields and their names never change while the
	 * program runs (a static table), so a writer may keep what it derives
	 * from them (JSON: each field's "name": text) by the schema's address;
	 * false for a schema built per record */
	bool fixed;
};

struct rec_kv {
	const char *key;
	uint64_t val;
};

struct rec_value {
	union {
		uint64_t u;
		int64_t i;
		double d;
		const char *s;
		bool b;
		struct {
			const uint64_t *v;
			unsigned int n;
		} list;
		struct {
			const struct rec_kv *v;
			unsigned int n;
		} kv;
		struct {
			const char *s;
			size_t len;
		} raw;
	};
	bool null;
};

/*
 * A record type written as one list, so that each value sits next to its
 * field's name and nothing is placed by index:
 *
 *   #define VERDICT_FIELDS(X)                                               \
 *           X("samples", REC_U64, 0, REC_NOCOL, rv_u64(st->samples))       \
 *           X("text", REC_STR, 0, REC_COL("verdict", -100, 0, 0), rv_str(t))
 *   static const struct rec_field fields[] = { VERDICT_FIELDS(REC_FIELD) };
 *   ...
 *   struct rec_value v[] = { VERDICT_FIELDS(REC_VALUE) };
 *
 * X(name, type, decimals, table column, value): the column is REC_NOCOL or
 * REC_COL(header with unit, width, scale, decimals).
 */
#define REC_COL(head, width, scale, tprec) head, width, scale, tprec
#define REC_NOCOL NULL, 0, 0, 0
#define REC_FIELD(name, type, dec, col, value) { name, type, dec, col },
#define REC_VALUE(name, type, dec, col, value) (value),

enum rec_format { REC_TABLE, REC_CSV, REC_JSON };

struct rec_writer;

struct rec_writer *rec_writer_new(enum rec_format fmt, FILE *out);
/*
 * CSV: the record types this writer may write, before the first record, so
 * that the one header holds them all (a type not declared is declared by its
 * first record if the header is not out yet). Nothing for other formats.
 */
int rec_writer_declare(struct rec_writer *w, const struct rec_schema *s);
/* write one record; returns 0, or -1 when the output failed (errno set) */
int rec_write(struct rec_writer *w, const struct rec_schema *s, const struct rec_value *v);
/* the table/CSV header of schema s now, before any record (nothing for JSON) */
void rec_write_header(struct rec_writer *w, const struct rec_schema *s);
/* forget the last schema, so the next record repeats the table/CSV header */
void rec_writer_reset_header(struct rec_writer *w);
int rec_writer_flush(struct rec_writer *w);
/* flushes, then frees; returns -1 if any write failed */
int rec_writer_free(struct rec_writer *w);
enum rec_format rec_writer_format(const struct rec_writer *w);

/* "table", "csv" or "json"; -1 with a one-line error otherwise */
int rec_format_parse(const char *opt, const char *s, enum rec_format *out);
/* table on a terminal, JSON lines otherwise */
enum rec_format rec_format_default(FILE *out);
const char *rec_format_name(enum rec_format fmt);

/*
 * --help's line of one record type's keys, from its schema: the type, then
 * the keys in the schema's order, wrapped at 79 columns under the first key
 */
void rec_help_keys(FILE *f, const struct rec_schema *s);

/* helpers to fill values */
static inline struct rec_value rv_u64(uint64_t u) { struct rec_value v = { .u = u }; return v; }
static inline struct rec_value rv_i64(int64_t i) { struct rec_value v = { .i = i }; return v; }
static inline struct rec_value rv_f64(double d) { struct rec_value v = { .d = d }; return v; }
static inline struct rec_value rv_str(const char *s) { struct rec_value v = { .s = s, .null = !s }; return v; }
static inline struct rec_value rv_bool(bool b) { struct rec_value v = { .b = b }; return v; }
static inline struct rec_value rv_null(void) { struct rec_value v = { .null = true }; return v; }
/* a JSON value given as text, written as it is */
static inline struct rec_value rv_raw(const char *s)
{
	struct rec_value v = { .raw = { s, strlen(s) } };
	return v;
}
static inline struct rec_value rv_list(const uint64_t *p, unsigned int n)
{
	struct rec_value v = { .list = { p, n } };
	return v;
}
static inline struct rec_value rv_kv(const struct rec_kv *p, unsigned int n)
{
	struct rec_value v = { .kv = { p, n } };
	return v;
}

/* JSON string escaping into a buffer; returns the length written (truncates safely) */
size_t rec_json_escape(char *dst, size_t cap, const char *s);

#endif
