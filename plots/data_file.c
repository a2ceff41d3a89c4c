// SPDX-License-Identifier: GPL-2.0-only
/*
 * How bbrplot's data readers write the files the templates read: each file
 * created in the data directory and closed with a one-line error, a number
 * as gnuplot reads it, the out-of-memory error and the order of doubles for
 * a median.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "log.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

FILE *pd_open_out(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		log_fmt(err, errlen, "%s: cannot create: %s", path, strerror(errno));
	return f;
}

int pd_close_out(FILE *f, const char *name, char *err, size_t errlen)
{
	if (ferror(f) | fclose(f)) {
		log_fmt(err, errlen, "%s: write failed", name);
		return -1;
	}
	return 0;
}

int pd_out_of_memory(char *err, size_t errlen)
{
	log_fmt(err, errlen, "out of memory");
	return PD_ERR_SYSTEM;
}

/* "%g" that gnuplot reads, NaN for a missing value */
void pd_put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" NaN", f);
}

int pd_cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}
