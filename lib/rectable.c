// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table writer: fixed-width columns under headers that carry the units,
 * each cell formatted whole and padded, a cell wider than its column shown
 * whole with the row catching up on the padding after it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "record.h"
#include "recbuf.h"

/* a cell wider than its column is written whole; the row catches up on the
 * padding of the cells after it */
static void pad_cell(struct rec_writer *w, const char *cell, size_t n, int width)
{
	size_t aw = (size_t)(width < 0 ? -width : width), pad = 0;

	if (n > aw) {
		w->behind += n - aw;
	} else {
		size_t back = aw - n < w->behind ? aw - n : w->behind;

		pad = aw - n - back;
		w->behind -= back;
	}
	if (width > 0)
		for (size_t k = 0; k < pad; k++)
			putc_(w, ' ');
	put(w, cell, n);
	if (width < 0)
		for (size_t k = 0; k < pad; k++)
			putc_(w, ' ');
}

static void cell_add(struct rec_writer *w, const char *fmt, ...) TK_PRINTF(2, 3);
static void cell_add(struct rec_writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (w->cell_len + (size_t)n + 1 > w->cell_cap) {
		size_t cap = (w->cell_len + (size_t)n + 1) * 2;
		char *p = realloc(w->cell, cap);

		if (!p) {
			w->failed = true;
			return;
		}
		w->cell = p;
		w->cell_cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(w->cell + w->cell_len, w->cell_cap - w->cell_len, fmt, ap);
	va_end(ap);
	w->cell_len += (size_t)n;
}

static void table_number(struct rec_writer *w, const struct rec_field *f, const struct rec_value *v)
{
	double scale = f->tscale ? f->tscale : 1.0;

	switch (f->type) {
	case REC_U64:
		if (f->tscale)
			cell_add(w, "%.*f", f->tprec, (double)v->u * scale);
		else
			cell_add(w, "%llu", (unsigned long long)v->u);
		break;
	case REC_I64:
		if (f->tscale)
			cell_add(w, "%.*f", f->tprec, (double)v->i * scale);
		else
			cell_add(w, "%lld", (long long)v->i);
		break;
	default:
		if (isfinite(v->d))
			cell_add(w, "%.*f", f->tprec, v->d * scale);
		else
			cell_add(w, "-");
		break;
	}
}

/* the cell of value v, whole, into w->cell */
static void table_cell(struct rec_writer *w, const struct rec_field *f, const struct rec_value *v)
{
	w->cell_len = 0;
	if (v->null) {
		cell_add(w, "-");
		return;
	}
	switch (f->type) {
	case REC_U64:
	case REC_I64:
	case REC_F64: table_number(w, f, v); break;
	case REC_STR: cell_add(w, "%s", v->s); break;
	case REC_BOOL: cell_add(w, "%s", v->b ? "y" : "n"); break;
	case REC_U64_LIST:
		for (unsigned int k = 0; k < v->list.n; k++)
			cell_add(w, "%s%llu", k ? "/" : "", (unsigned long long)v->list.v[k]);
		break;
	case REC_KV:
		for (unsigned int k = 0; k < v->kv.n; k++)
			cell_add(w, "%s%s=%llu", k ? "," : "", v->kv.v[k].key,
				 (unsigned long long)v->kv.v[k].val);
		if (!v->kv.n)
			cell_add(w, "-");
		break;
	case REC_RAW: cell_add(w, "%.*s", (int)v->raw.len, v->raw.s); break;
	}
}

void rec_table_header(struct rec_writer *w, const struct rec_schema *s)
{
	bool first = true;

	w->behind = 0;
	for (unsigned int i = 0; i < s->nfields; i++) {
		if (!s->fields[i].head)
			continue;
		if (!first)
			putc_(w, ' ');
		first = false;
		pad_cell(w, s->fields[i].head, strlen(s->fields[i].head), s->fields[i].width);
	}
	putc_(w, '\n');
}

void rec_table_write(struct rec_writer *w, const struct rec_schema *s, const struct rec_value *v)
{
	bool first = true;

	if (w->last != s)
		rec_table_header(w, s);
	w->behind = 0;
	for (unsigned int i = 0; i < s->nfields; i++) {
		if (!s->fields[i].head)
			continue;
		if (!first)
			putc_(w, ' ');
		first = false;
		table_cell(w, &s->fields[i], &v[i]);
		pad_cell(w, w->cell ? w->cell : "", w->cell_len, s->fields[i].width);
	}
	putc_(w, '\n');
}
