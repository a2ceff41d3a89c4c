// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dip plot's capture: bbrpcap's throughput CSV of the traced flow
 * written as tput.dat on the trace's time axis, and every data file moved
 * when the capture started before the trace (time 0 is the earlier of the
 * two).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "plots/data_csv.h"
#include "plots/data_dip.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

long pd_dip_tput(FILE *csv, struct pd_dip_info *info, double offset_s, const char *dir, double *first_s,
		 char *err, size_t errlen)
{
	static const char *const cols[] = { "src", "epoch_s", "data_bps", "acked_bps", "dip" };
	struct pd_csv c = { 0 };
	int idx[ARRAY_SIZE(cols)], rc = 0;
	char sender[96];
	FILE *out;
	long n = 0;

	/* nothing at all (not even a header) is no bins: bbrpcap found no frame of the flow */
	if (!pd_csv_at_end(csv)) {
		rc = pd_csv_read(csv, "bbrpcap throughput", &c, err, errlen);
		if (!rc)
			rc = pd_need_cols(&c, "bbrpcap throughput", cols, idx, ARRAY_SIZE(cols), err, errlen);
	}
	out = rc ? NULL : pd_open_out(dir, "tput.dat", err, errlen);
	if (!out) {
		pd_csv_free(&c);
		return rc ? rc : PD_ERR_SYSTEM;
	}
	dip_endpoint(info->saddr, info->sport, sender, sizeof(sender));
	fputs("# t_s sent_mbps acked_mbps dip\nNaN NaN NaN 0\n", out);
	for (size_t i = 0; i < c.nrows; i++) {
		char **f = c.fields[i];
		double t = pd_cell(f[idx[1]]) - offset_s - info->origin_s;
		double sent = pd_cell(f[idx[2]]) * TK_MBPS_PER_BPS_F, acked = pd_cell(f[idx[3]]) * TK_MBPS_PER_BPS_F;

		if (strcmp(f[idx[0]], sender) || !isfinite(t))
			continue;
		fprintf(out, "%.9f", t);
		pd_put_num(out, sent > PD_FLOOR_MBPS ? sent : PD_FLOOR_MBPS);
		pd_put_num(out, acked > PD_FLOOR_MBPS ? acked : PD_FLOOR_MBPS);
		fprintf(out, " %d\n", !strcmp(f[idx[4]], "1"));
		dip_note_rate(info, sent);
		dip_note_rate(info, acked);
		if (!n || t < *first_s)
			*first_s = t;
		if (t > info->last_s)
			info->last_s = t;
		n++;
	}
	pd_csv_free(&c);
	if (pd_close_out(out, "tput.dat", err, errlen))
		return PD_ERR_SYSTEM;
	return n;
}

/* adds shift to the first number of each row of DIR/name; "NaN" rows and
 * comments stay as they are */
static int shift_file(const char *dir, const char *name, double shift, char *err, size_t errlen)
{
	char path[4096], tmp[4200], *line = NULL;
	size_t cap = 0;
	FILE *in, *out;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.shift", path);
	in = fopen(path, "r");
	out = in ? fopen(tmp, "w") : NULL;
	if (!in || !out) {
		log_fmt(err, errlen, "%s: cannot rewrite: %s", path, strerror(errno));
		if (in)
			fclose(in);
		return PD_ERR_SYSTEM;
	}
	while (getline(&line, &cap, in) > 0) {
		char *end;
		double t = strtod(line, &end);

		if (line[0] == '#' || end == line || !isfinite(t)) {
			fputs(line, out);
		} else {
			double v = t + shift;

			/* the earliest row lands on 0, not on -0.000000000 from rounding */
			fprintf(out, "%.9f%s", v < 0 && v > -1e-9 ? 0.0 : v, end);
		}
	}
	free(line);
	fclose(in);
	if (pd_close_out(out, name, err, errlen) || rename(tmp, path)) {
		log_fmt(err, errlen, "%s: cannot rewrite: %s", path, strerror(errno));
		rc = PD_ERR_SYSTEM;
	}
	return rc;
}

int pd_dip_shift(const char *dir, struct pd_dip_info *info, double first_s, char *err, size_t errlen)
{
	static const char *const files[] = { "samples.dat", "collapses.dat", "need.dat", "stalls.dat", "demand.dat",
					     "tput.dat", "gaps.dat" };
	double shift = -first_s;

	if (!(first_s < 0))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		int rc = shift_file(dir, files[i], shift, err, errlen);

		if (rc)
			return rc;
	}
	info->origin_s -= shift;
	info->last_s += shift;
	return 0;
}
