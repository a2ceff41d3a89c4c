// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sweep plot's data: repro/sweep.sh's CSV written as sweep.dat, a row
 * per run with its collapses per minute by cause and its goodput.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "plots/data_csv.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"
#include "trace.h"

/* repro/sweep.sh's columns: the run, then collapses per minute by cause (in
 * lib/trace.h's order, named after the causes), then the goodput. The run's
 * and the goodput's are needed, and every cause's but burst_max's: a sweep
 * made before that cause was has none, and its runs count none of it */
#define SWEEP_RUN_COLS 3
#define SWEEP_CAUSE_COL(id, name, label) name "_per_min",
#define SWEEP_GOODPUT_COL (SWEEP_RUN_COLS + BT_NCAUSES)

int pd_sweep(const char *path, const char *dir, char *err, size_t errlen)
{
	static const char *const cols[] = {
		"rtt", "rtt_effective", "quickack", BT_CAUSES(SWEEP_CAUSE_COL) "goodput_bps",
	};

	FILE *in = fopen(path, "r"), *out = NULL;
	struct pd_csv c = { 0 };
	int idx[ARRAY_SIZE(cols)], rc;

	if (!in) {
		log_fmt(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return PD_ERR_INPUT;
	}
	rc = pd_csv_read(in, path, &c, err, errlen);
	if (rc)
		goto out;
	for (size_t k = 0; k < ARRAY_SIZE(cols); k++) {
		idx[k] = pd_csv_col(&c, cols[k]);
		if (idx[k] < 0 && k != SWEEP_RUN_COLS + BT_CAUSE_BURST_MAX) {
			log_fmt(err, errlen, "%s: no column '%s' in the header", path, cols[k]);
			rc = PD_ERR_INPUT;
			goto out;
		}
	}
	rc = PD_ERR_INPUT;
	if (!c.nrows) {
		log_fmt(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	out = pd_open_out(dir, "sweep.dat", err, errlen);
	rc = PD_ERR_SYSTEM;
	if (!out)
		goto out;
	fputs("# run", out);
	for (int k = 0; k < BT_NCAUSES; k++)
		fprintf(out, " %s", bt_cause_names[k]);
	fputs(" (collapses/min) goodput_mbps\n", out);
	for (size_t i = 0; i < c.nrows; i++) {
		char **f = c.fields[i];
		bool native = strcmp(f[idx[0]], f[idx[1]]);

		/* the RTT asked for, and what ran where netem is missing */
		fprintf(out, "\"%s%s%s%s, quickack %s\"", f[idx[0]], native ? " (ran " : "", native ? f[idx[1]] : "",
			native ? ")" : "", f[idx[2]]);
		for (int k = SWEEP_RUN_COLS; k < SWEEP_GOODPUT_COL; k++)
			pd_put_num(out, idx[k] >= 0 && isfinite(pd_cell(f[idx[k]])) ? pd_cell(f[idx[k]]) : 0);
		pd_put_num(out, pd_cell(f[idx[SWEEP_GOODPUT_COL]]) * TK_MBPS_PER_BPS_F);
		fputc('\n', out);
	}
	rc = pd_close_out(out, "sweep.dat", err, errlen) ? PD_ERR_SYSTEM : (int)c.nrows;
	out = NULL;
out:
	if (out)
		fclose(out);
	fclose(in);
	pd_csv_free(&c);
	return rc;
}
