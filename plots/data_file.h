/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How bbrplot's data readers write the files the templates read: each file
 * created in the data directory and closed with a one-line error, a number
 * as gnuplot reads it, and the two things every reader shares besides: the
 * out-of-memory error and the order of doubles for a median.
 */
#ifndef PLOTS_DATA_FILE_H
#define PLOTS_DATA_FILE_H

#include <stddef.h>
#include <stdio.h>

/* DIR/NAME opened for writing; NULL with err set */
FILE *pd_open_out(const char *dir, const char *name, char *err, size_t errlen);

/* closes f (the file NAME); 0, or -1 with err set when a write failed */
int pd_close_out(FILE *f, const char *name, char *err, size_t errlen);

/* err says "out of memory"; returns PD_ERR_SYSTEM */
int pd_out_of_memory(char *err, size_t errlen);

/* "%g" that gnuplot reads, NaN for a missing value */
void pd_put_num(FILE *f, double v);

/* qsort's order of two doubles, ascending */
int pd_cmp_double(const void *x, const void *y);

#endif
