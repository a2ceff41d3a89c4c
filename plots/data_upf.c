// SPDX-License-Identifier: GPL-2.0-only
/*
 * The upf plot's data: upfbench's sweep CSV written as upf.dat, one block
 * per design (label) sorted by sessions, with the median memory floor.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "plots/data_csv.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

struct upf_row {
	int label;
	double sessions, cycles;
};

static int cmp_upf(const void *x, const void *y)
{
	const struct upf_row *a = x, *b = y;

	if (a->label != b->label)
		return a->label - b->label;
	return a->sessions < b->sessions ? -1 : a->sessions > b->sessions;
}

int pd_upf(const char *path, const char *dir, char *labels, size_t labels_len, double *floor_cycles, char *err,
	   size_t errlen)
{
	static const char *const cols[] = { "label", "sessions", "cycles_per_pkt" };
	FILE *in = fopen(path, "r"), *out = NULL;
	struct pd_csv c = { 0 };
	struct upf_row *rows = NULL;
	const char **names = NULL;
	double *floors = NULL;
	int idx[3], fcol, nlabels = 0, rc;
	size_t nfloor = 0, lpos = 0;

	*floor_cycles = 0;
	labels[0] = '\0';
	if (!in) {
		log_fmt(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return PD_ERR_INPUT;
	}
	rc = pd_csv_read(in, path, &c, err, errlen);
	if (!rc)
		rc = pd_need_cols(&c, path, cols, idx, 3, err, errlen);
	if (rc)
		goto out;
	rc = PD_ERR_INPUT;
	if (!c.nrows) {
		log_fmt(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	fcol = pd_csv_col(&c, "floor_cycles");
	rows = calloc(c.nrows, sizeof(*rows));
	names = calloc(c.nrows, sizeof(*names));
	floors = calloc(c.nrows, sizeof(*floors));
	if (!rows || !names || !floors) {
		rc = pd_out_of_memory(err, errlen);
		goto out;
	}
	for (size_t i = 0; i < c.nrows; i++) {
		char **f = c.fields[i];
		int l;

		for (l = 0; l < nlabels && strcmp(names[l], f[idx[0]]); l++)
			;
		if (l == nlabels)
			names[nlabels++] = f[idx[0]];
		rows[i].label = l;
		rows[i].sessions = pd_cell(f[idx[1]]);
		rows[i].cycles = pd_cell(f[idx[2]]);
		if (!isfinite(rows[i].sessions) || !isfinite(rows[i].cycles)) {
			log_fmt(err, errlen, "%s:%zu: sessions and cycles_per_pkt must be numbers", path, i + 2);
			goto out;
		}
		if (fcol >= 0 && isfinite(pd_cell(f[fcol])))
			floors[nfloor++] = pd_cell(f[fcol]);
	}
	qsort(rows, c.nrows, sizeof(*rows), cmp_upf);
	out = pd_open_out(dir, "upf.dat", err, errlen);
	rc = PD_ERR_SYSTEM;
	if (!out)
		goto out;
	for (int l = 0; l < nlabels; l++) {
		fprintf(out, "# %s: sessions cycles_per_pkt\n", names[l]);
		for (size_t i = 0; i < c.nrows; i++)
			if (rows[i].label == l)
				fprintf(out, "%.9g %.9g\n", rows[i].sessions, rows[i].cycles);
		fputs("\n\n", out);
		/* gnuplot's word() splits on blanks */
		for (const char *p = names[l]; *p && lpos + 2 < labels_len; p++)
			labels[lpos++] = (*p == ' ' || *p == '"' || *p == '\'') ? '_' : *p;
		if (lpos + 1 < labels_len && l + 1 < nlabels)
			labels[lpos++] = ' ';
		labels[lpos] = '\0';
	}
	if (nfloor) {
		qsort(floors, nfloor, sizeof(*floors), pd_cmp_double);
		*floor_cycles = floors[nfloor / 2];
	}
	rc = pd_close_out(out, "upf.dat", err, errlen) ? PD_ERR_SYSTEM : nlabels;
	out = NULL;
out:
	if (out)
		fclose(out);
	fclose(in);
	pd_csv_free(&c);
	free(rows);
	free(names);
	free(floors);
	return rc;
}
