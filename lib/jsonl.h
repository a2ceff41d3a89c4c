/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A reader for JSON lines made of flat objects, as the project's tools write
 * them (bbrtrace records, udpdwell sockets): one object per line, values that
 * are numbers, strings, true/false/null. Nested arrays and objects are kept
 * as raw text (jl_raw) rather than parsed.
 *
 * Parsing is in place and allocation-free: jl_parse() points the fields at
 * the line's own bytes (strings are unescaped in place), so the line buffer
 * must outlive the lookups.
 */
#ifndef TK_JSONL_H
#define TK_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JL_MAX_FIELDS 64 /* a line with more is refused (jl_parse says so) */

enum jl_kind { JL_NULL, JL_BOOL, JL_NUM, JL_STR, JL_RAW };

struct jl_field {
	const char *key;
	enum jl_kind kind;
	const char *str;  /* JL_STR: unescaped, NUL-terminated; JL_NUM/JL_RAW: the text */
	size_t len;
	double num;       /* JL_NUM */
	int64_t i64;      /* JL_NUM when it is an integer that fits */
	uint64_t u64;     /* JL_NUM when it is a non-negative integer that fits */
	bool is_int;
	bool b;           /* JL_BOOL */
};

struct jl_obj {
	struct jl_field f[JL_MAX_FIELDS];
	unsigned int n;
};

/*
 * Parse one line (modified in place). Returns 0, or -1 with a reason in err
 * (e.g. "expected ':' at column 17").
 */
int jl_parse(char *line, struct jl_obj *o, char *err, size_t errlen);

const struct jl_field *jl_get(const struct jl_obj *o, const char *key);
/* the same, looking first at position `hint` (where a writer puts that key) */
const struct jl_field *jl_get_at(const struct jl_obj *o, const char *key, unsigned int hint);
/* typed reads of one field (NULL allowed): false when missing or of another kind */
bool jl_field_u64(const struct jl_field *f, uint64_t *v);
bool jl_field_i64(const struct jl_field *f, int64_t *v);
bool jl_field_num(const struct jl_field *f, double *v);
bool jl_field_bool(const struct jl_field *f, bool *v);
const char *jl_field_str(const struct jl_field *f);
/* typed lookups: return false when missing or of another kind */
bool jl_u64(const struct jl_obj *o, const char *key, uint64_t *v);
bool jl_i64(const struct jl_obj *o, const char *key, int64_t *v);
bool jl_num(const struct jl_obj *o, const char *key, double *v);
bool jl_bool(const struct jl_obj *o, const char *key, bool *v);
const char *jl_str(const struct jl_obj *o, const char *key);

#endif
