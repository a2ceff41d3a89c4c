/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CSV tables bbrplot reads (bbrpcap's throughput and gaps, upfbench's and
 * repro/sweep.sh's sweeps): a header and its rows, read whole, columns found
 * by name, cells read as numbers. pd_csv_split, a line into fields, is in
 * plotdata.h.
 */
#ifndef PLOTS_DATA_CSV_H
#define PLOTS_DATA_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define PD_CSV_MAX_COLS 128

struct pd_csv {
	char **rows;       /* each row's fields, in place */
	int *nfields;
	char ***fields;
	size_t nrows;
	char *head[PD_CSV_MAX_COLS];
	int nhead;
	char *headline;
	char **lines;
};

void pd_csv_free(struct pd_csv *c);

/* nothing left to read, not even a header (a command that found nothing) */
bool pd_csv_at_end(FILE *in);

/* the header and every row up to the end or a new header; 0 or PD_ERR_*
 * with err set */
int pd_csv_read(FILE *in, const char *name, struct pd_csv *c, char *err, size_t errlen);

/* the index of the column NAME, or -1 */
int pd_csv_col(const struct pd_csv *c, const char *name);

/* a number from a CSV cell; NaN when empty or not a number */
double pd_cell(const char *s);

/* idx[i]: the index of the column cols[i], each of the n required; 0 or
 * PD_ERR_INPUT with err set */
int pd_need_cols(const struct pd_csv *c, const char *name, const char *const *cols, int *idx, int n, char *err,
		 size_t errlen);

#endif
