/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bbrplot's files share: the plot kinds and the run's settings (struct
 * env), the data directory, and each file's entry points: the command line
 * (options.c), the templates (template.c), gnuplot (gnuplot.c), the
 * capture's throughput (capture.c) and the drawing (draw.c).
 */
#ifndef PLOTS_BBRPLOT_H
#define PLOTS_BBRPLOT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "opt.h"
#include "plots/plotdata.h"

/* the installed data directory, from PREFIX (Makefile) */
#ifndef TK_DATADIR
#define TK_DATADIR "/usr/local/share/bbrkit"
#endif

enum plot_kind { PLOT_DIP, PLOT_DWELL, PLOT_UPF, PLOT_SWEEP, PLOT_KINDS };

struct env {
	enum plot_kind kind;
	const char *input;      /* dwell/upf/sweep */
	const char *trace, *pcap, *out, *title, *keep;
	char out_abs[PATH_MAX + 256]; /* -o, absolute (for gnuplot and plot.sh) */
	const char *sender;
	bool have_cookie;
	uint64_t cookie;
	unsigned int width, height;
	double from, to, offset_ms; /* NAN: not given */
	double rate_lo, rate_hi;    /* --rate-range, Mbit/s; 0: fitted to the data */
	double bin_ms;
	double gap_ms;              /* the shortest silence of the wire drawn */
	bool svg;
};

/* a kind of plot: its name on the command line, its template, its options;
 * the others' line in bbrplot --help and their default title */
struct plot {
	const char *name;
	const char *tmpl;
	const struct opt_cli *cli;
	const char *what;
	const char *title;
};
extern const struct plot plots[PLOT_KINDS];

/* where the data files go (bbrplot.c: --keep-data, or a temporary one) */
extern char data_dir[PATH_MAX - 64]; /* room for a file name after it */

/* a PD_ERR_* of plotdata.h as an exit code */
static inline int pd_exit(int pd_err)
{
	return pd_err == PD_ERR_SYSTEM ? TK_EXIT_FAIL : TK_EXIT_DATA;
}

/* options.c: the command line into e; exits on a bad one */
void parse_args(int argc, char **argv, struct env *e);

/* template.c */
const char *exe_dir(void);
int find_template(const char *name, char *path, size_t len);

/* gnuplot.c */
void gp_str(FILE *f, const char *name, const char *v);
int run_gnuplot(const char *tmpl, const char *vars);

/* capture.c */
int dip_capture(const struct env *e, struct pd_dip_info *info, long *bins);

/* draw.c */
int draw(const struct env *e);

#endif
