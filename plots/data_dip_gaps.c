// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dip plot's silences: `bbrpcap gaps` of the traced flow's data
 * direction written as gaps.dat on the trace's time axis, one block per
 * state (idle, then in_flight), with their counts for the legend.
 */
#include <math.h>
#include <string.h>

#include "common.h"
#include "plots/data_csv.h"
#include "plots/data_dip.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"

/* the states, in gaps.dat's block order (pd_dip_info.gaps[]) */
static const char *const gap_states[PD_GAP_STATES] = { "idle", "in_flight" };

/* block k's rows: the sender's silences in state k */
static void write_block(FILE *out, const struct pd_csv *c, const int *idx, int k, const char *sender,
			struct pd_dip_info *info, double offset_s)
{
	fprintf(out, "# %s\nNaN NaN\n", gap_states[k]);
	for (size_t i = 0; i < c->nrows; i++) {
		char **f = c->fields[i];
		double t = pd_cell(f[idx[1]]) - offset_s - info->origin_s, d = pd_cell(f[idx[2]]) * TK_SEC_PER_USEC_F;

		if (strcmp(f[idx[0]], sender) || strcmp(f[idx[3]], gap_states[k]) || !isfinite(t) || !isfinite(d))
			continue;
		fprintf(out, "%.9f %.6f\n", t, d);
		info->gaps[k]++;
		info->gap_s[k] += d;
		if (d > info->gap_max_s[k])
			info->gap_max_s[k] = d;
	}
	fputs("\n\n", out);
}

long pd_dip_gaps(FILE *csv, struct pd_dip_info *info, double offset_s, const char *dir, char *err, size_t errlen)
{
	static const char *const cols[] = { "src", "epoch_s", "gap_us", "state" };
	struct pd_csv c = { 0 };
	int idx[ARRAY_SIZE(cols)], rc = 0;
	char sender[96];
	FILE *out;

	/* no silence at all is no header either: an empty file */
	if (!pd_csv_at_end(csv)) {
		rc = pd_csv_read(csv, "bbrpcap gaps", &c, err, errlen);
		if (!rc)
			rc = pd_need_cols(&c, "bbrpcap gaps", cols, idx, ARRAY_SIZE(cols), err, errlen);
	}
	out = rc ? NULL : pd_open_out(dir, "gaps.dat", err, errlen);
	if (!out) {
		pd_csv_free(&c);
		return rc ? rc : PD_ERR_SYSTEM;
	}
	dip_endpoint(info->saddr, info->sport, sender, sizeof(sender));
	fputs("# t_s duration_s, one block per state: idle, in_flight\n", out);
	for (int k = 0; k < PD_GAP_STATES; k++)
		write_block(out, &c, idx, k, sender, info, offset_s);
	pd_csv_free(&c);
	if (pd_close_out(out, "gaps.dat", err, errlen))
		return PD_ERR_SYSTEM;
	return (long)(info->gaps[0] + info->gaps[1]);
}
