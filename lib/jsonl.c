// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON-lines reader: one flat object parsed in place (strings unescaped
 * over their own bytes, nested arrays and objects kept raw), each error placed
 * by its column, and typed lookups of the fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "jsonl.h"

struct cur {
	char *p;
	char *base;
	char *err;
	size_t errlen;
};

static int fail(struct cur *c, const char *what)
{
	snprintf(c->err, c->errlen, "%s at column %ld", what, (long)(c->p - c->base) + 1);
	return -1;
}

static void ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')
		c->p++;
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	if (h >= 'a' && h <= 'f')
		return h - 'a' + 10;
	if (h >= 'A' && h <= 'F')
		return h - 'A' + 10;
	return -1;
}

/* c->p at the opening quote; unescapes in place; returns the start */
static char *string(struct cur *c, size_t *len)
{
	char *start = ++c->p, *w = start;

	for (;;) {
		char ch = *c->p;

		if (ch == '\0')
			return fail(c, "unterminated string"), NULL;
		if (ch == '"')
			break;
		if ((unsigned char)ch < 0x20)
			return fail(c, "control character in string"), NULL;
		if (ch != '\\') {
			*w++ = *c->p++;
			continue;
		}
		c->p++;
		switch (*c->p) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '/': *w++ = '/'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			int v = 0;

			for (int k = 1; k <= 4; k++) {
				int h = hexval(c->p[k]);

				if (h < 0)
					return fail(c, "bad \\u escape"), NULL;
				v = v * 16 + h;
			}
			c->p += 4;
			/* UTF-8 for the BMP; surrogates are kept as '?' */
			if (v < 0x80) {
				*w++ = (char)v;
			} else if (v < 0x800) {
				*w++ = (char)(0xc0 | (v >> 6));
				*w++ = (char)(0x80 | (v & 0x3f));
			} else if (v >= 0xd800 && v <= 0xdfff) {
				*w++ = '?';
			} else {
				*w++ = (char)(0xe0 | (v >> 12));
				*w++ = (char)(0x80 | ((v >> 6) & 0x3f));
				*w++ = (char)(0x80 | (v & 0x3f));
			}
			break;
		}
		default:
			return fail(c, "bad escape"), NULL;
		}
		c->p++;
	}
	*w = '\0'; /* w <= closing quote, so this never passes the string */
	*len = (size_t)(w - start);
	c->p++;
	return start;
}

/* skip a nested array/object; strings inside may contain brackets */
static int skip_nested(struct cur *c)
{
	int depth = 0;

	do {
		char ch = *c->p;

		if (ch == '\0')
			return fail(c, "unterminated array or object");
		if (ch == '"') {
			c->p++;
			while (*c->p && *c->p != '"') {
				if (*c->p == '\\' && c->p[1])
					c->p++;
				c->p++;
			}
			if (!*c->p)
				return fail(c, "unterminated string");
		} else if (ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
		c->p++;
	} while (depth > 0);
	return 0;
}

static int value(struct cur *c, struct jl_field *f)
{
	char *start = c->p;

	memset(&f->kind, 0, sizeof(*f) - offsetof(struct jl_field, kind));
	switch (*c->p) {
	case '"':
		f->kind = JL_STR;
		f->str = string(c, &f->len);
		return f->str ? 0 : -1;
	case '[':
	case '{':
		if (skip_nested(c))
			return -1;
		f->kind = JL_RAW;
		f->str = start;
		f->len = (size_t)(c->p - start);
		return 0;
	case 't':
		if (strncmp(c->p, "true", 4))
			return fail(c, "bad literal");
		c->p += 4;
		f->kind = JL_BOOL;
		f->b = true;
		return 0;
	case 'f':
		if (strncmp(c->p, "false", 5))
			return fail(c, "bad literal");
		c->p += 5;
		f->kind = JL_BOOL;
		return 0;
	case 'n':
		if (strncmp(c->p, "null", 4))
			return fail(c, "bad literal");
		c->p += 4;
		f->kind = JL_NULL;
		return 0;
	default: {
		char *end;
		bool integer = true;

		if (*c->p != '-' && (*c->p < '0' || *c->p > '9'))
			return fail(c, "expected a value");
		f->num = strtod(c->p, &end);
		if (end == c->p)
			return fail(c, "bad number");
		for (char *q = c->p; q < end; q++)
			if (*q == '.' || *q == 'e' || *q == 'E')
				integer = false;
		if (integer) {
			errno = 0;
			if (*c->p == '-') {
				long long v = strtoll(c->p, NULL, 10);

				if (!errno) {
					f->i64 = v;
					f->is_int = true;
				}
			} else {
				unsigned long long v = strtoull(c->p, NULL, 10);

				if (!errno) {
					f->u64 = v;
					f->i64 = (int64_t)v;
					f->is_int = true;
				}
			}
		}
		f->kind = JL_NUM;
		f->str = start;
		f->len = (size_t)(end - start);
		c->p = end;
		return 0;
	}
	}
}

int jl_parse(char *line, struct jl_obj *o, char *err, size_t errlen)
{
	struct cur c = { line, line, err, errlen };

	o->n = 0;
	ws(&c);
	if (*c.p != '{')
		return fail(&c, "expected '{'");
	c.p++;
	ws(&c);
	if (*c.p == '}') {
		c.p++;
		goto end;
	}
	for (;;) {
		struct jl_field *f = &o->f[o->n];
		size_t klen;
		char *key;

		/* the toolkit's records have fewer: a line with more is not one */
		if (o->n == JL_MAX_FIELDS)
			return fail(&c, "more than " TK_STR(JL_MAX_FIELDS) " fields");
		ws(&c);
		if (*c.p != '"')
			return fail(&c, "expected a key");
		key = string(&c, &klen);
		if (!key)
			return -1;
		ws(&c);
		if (*c.p != ':')
			return fail(&c, "expected ':'");
		c.p++;
		ws(&c);
		/* the key's closing quote was overwritten by its NUL terminator, so
		 * the value may be parsed without disturbing it */
		if (value(&c, f))
			return -1;
		f->key = key;
		o->n++;
		ws(&c);
		if (*c.p == ',') {
			c.p++;
			continue;
		}
		if (*c.p == '}') {
			c.p++;
			break;
		}
		return fail(&c, "expected ',' or '}'");
	}
end:
	ws(&c);
	if (*c.p)
		return fail(&c, "trailing characters");
	return 0;
}

const struct jl_field *jl_get(const struct jl_obj *o, const char *key)
{
	for (unsigned int i = 0; i < o->n; i++)
		if (!strcmp(o->f[i].key, key))
			return &o->f[i];
	return NULL;
}

const struct jl_field *jl_get_at(const struct jl_obj *o, const char *key, unsigned int hint)
{
	if (hint < o->n && !strcmp(o->f[hint].key, key))
		return &o->f[hint];
	return jl_get(o, key);
}

bool jl_field_u64(const struct jl_field *f, uint64_t *v)
{
	if (!f || f->kind != JL_NUM || !f->is_int || f->str[0] == '-')
		return false;
	*v = f->u64;
	return true;
}

bool jl_field_i64(const struct jl_field *f, int64_t *v)
{
	if (!f || f->kind != JL_NUM || !f->is_int)
		return false;
	*v = f->i64;
	return true;
}

bool jl_field_num(const struct jl_field *f, double *v)
{
	if (!f || f->kind != JL_NUM)
		return false;
	*v = f->num;
	return true;
}

bool jl_field_bool(const struct jl_field *f, bool *v)
{
	if (!f || f->kind != JL_BOOL)
		return false;
	*v = f->b;
	return true;
}

const char *jl_field_str(const struct jl_field *f)
{
	return f && f->kind == JL_STR ? f->str : NULL;
}

bool jl_u64(const struct jl_obj *o, const char *key, uint64_t *v)
{
	return jl_field_u64(jl_get(o, key), v);
}

bool jl_i64(const struct jl_obj *o, const char *key, int64_t *v)
{
	return jl_field_i64(jl_get(o, key), v);
}

bool jl_num(const struct jl_obj *o, const char *key, double *v)
{
	return jl_field_num(jl_get(o, key), v);
}

bool jl_bool(const struct jl_obj *o, const char *key, bool *v)
{
	return jl_field_bool(jl_get(o, key), v);
}

const char *jl_str(const struct jl_obj *o, const char *key)
{
	return jl_field_str(jl_get(o, key));
}
