// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CSV tables bbrplot reads: a line split into fields (RFC 4180 quotes),
 * a header and its rows read whole, columns found by name, cells read as
 * numbers (data_csv.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "plots/data_csv.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

int pd_csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	for (;;) {
		char *w;

		if (n == max)
			return PD_CSV_TOO_WIDE; /* another field follows */
		if (*p == '"') {
			w = ++p;
			fields[n++] = w;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			*w = '\0';
			if (*p == ',') {
				p++;
				continue;
			}
			return n;
		}
		fields[n++] = p;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p++ = '\0';
	}
}

void pd_csv_free(struct pd_csv *c)
{
	for (size_t i = 0; i < c->nrows; i++) {
		free(c->lines[i]);
		free(c->fields[i]);
	}
	free(c->lines);
	free(c->fields);
	free(c->nfields);
	free(c->headline);
	memset(c, 0, sizeof(*c));
}

int pd_csv_read(FILE *in, const char *name, struct pd_csv *c, char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	long lineno = 1;

	memset(c, 0, sizeof(*c));
	if (getline(&c->headline, &cap, in) <= 0) {
		log_fmt(err, errlen, "%s: empty: no CSV header", name);
		return PD_ERR_INPUT;
	}
	c->nhead = pd_csv_split(c->headline, c->head, PD_CSV_MAX_COLS);
	if (c->nhead == PD_CSV_TOO_WIDE) {
		log_fmt(err, errlen, "%s:1: more than %d columns", name, PD_CSV_MAX_COLS);
		return PD_ERR_INPUT;
	}
	if (c->nhead < 2) {
		log_fmt(err, errlen, "%s:1: not a CSV header", name);
		return PD_ERR_INPUT;
	}
	cap = 0;
	while (getline(&line, &cap, in) > 0) {
		char **f;
		int n;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (c->nrows == rcap) {
			rcap = rcap ? rcap * 2 : 64;
			c->lines = realloc(c->lines, rcap * sizeof(*c->lines));
			c->fields = realloc(c->fields, rcap * sizeof(*c->fields));
			c->nfields = realloc(c->nfields, rcap * sizeof(*c->nfields));
			if (!c->lines || !c->fields || !c->nfields) {
				free(line);
				return pd_out_of_memory(err, errlen);
			}
		}
		f = malloc(PD_CSV_MAX_COLS * sizeof(*f));
		if (!f) {
			free(line);
			return pd_out_of_memory(err, errlen);
		}
		n = pd_csv_split(line, f, PD_CSV_MAX_COLS);
		if (n < 0) {
			free(f);
			if (n == PD_CSV_TOO_WIDE)
				log_fmt(err, errlen, "%s:%ld: more than %d fields", name, lineno, PD_CSV_MAX_COLS);
			else
				log_fmt(err, errlen, "%s:%ld: unterminated quote", name, lineno);
			free(line);
			return PD_ERR_INPUT;
		}
		if (n != c->nhead) {
			/* a different record type (a new header) ends the table */
			if (n >= 1 && !strcmp(f[0], c->head[0])) {
				free(f);
				break;
			}
			log_fmt(err, errlen, "%s:%ld: %d fields where the header has %d", name, lineno, n, c->nhead);
			free(f);
			free(line);
			return PD_ERR_INPUT;
		}
		c->lines[c->nrows] = line;
		c->fields[c->nrows] = f;
		c->nfields[c->nrows] = n;
		c->nrows++;
		line = NULL;
		cap = 0;
	}
	free(line);
	return 0;
}

int pd_csv_col(const struct pd_csv *c, const char *name)
{
	for (int i = 0; i < c->nhead; i++)
		if (!strcmp(c->head[i], name))
			return i;
	return -1;
}

bool pd_csv_at_end(FILE *in)
{
	int ch = getc(in);

	if (ch == EOF)
		return true;
	ungetc(ch, in);
	return false;
}

/* a number from a CSV cell; NaN when empty or not a number */
double pd_cell(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return NAN;
	v = strtod(s, &end);
	return *end ? NAN : v;
}

int pd_need_cols(const struct pd_csv *c, const char *name, const char *const *cols, int *idx, int n, char *err,
		 size_t errlen)
{
	for (int i = 0; i < n; i++) {
		idx[i] = pd_csv_col(c, cols[i]);
		if (idx[i] < 0) {
			log_fmt(err, errlen, "%s: no column '%s' in the header", name, cols[i]);
			return PD_ERR_INPUT;
		}
	}
	return 0;
}
