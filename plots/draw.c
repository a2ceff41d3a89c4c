// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's drawing: each plot's data prepared (plotdata.h), its template's
 * variables (the causes' colours among them), gnuplot run on it, and the
 * picture checked.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demand.h"
#include "log.h"
#include "plots/bbrplot.h"
#include "trace.h"

/* how each cause is drawn, in lib/trace.h's order: a colour apart from the plot's
 * lines (the pacing is brown, the estimate black, the wire blue and green) and a
 * point type; a new cause without one fails the build */
static const struct {
	const char *colour;
	int pt;
} cause_style[] = {
	{ "#d62728", 9 },  /* delayed ACK: red */
	{ "#ff7f0e", 11 }, /* rate drop: orange */
	{ "#9467bd", 5 },  /* loss/policer: purple */
	{ "#7f7f7f", 13 }, /* other: grey */
	{ "#e377c2", 7 },  /* lone late segment: pink */
	{ "#17becf", 15 }, /* old max expired: cyan */
	{ "#bcbd22", 3 },  /* sender-limited: olive */
	{ "#393b79", 1 },  /* ACK jitter: indigo */
	{ "#b8860b", 2 },  /* burst maximum: dark gold, a cross */
};
_Static_assert(sizeof(cause_style) / sizeof(cause_style[0]) == BT_NCAUSES,
	       "plots/draw.c: cause_style needs a colour and point type for each of lib/trace.h's causes");

/* how each stall cause is drawn, in lib/trace.h's order: a bar's colour */
static const char *const stall_colour[] = {
	"#e6550d", /* nagle: dark orange */
	"#3182bd", /* rwnd_limited: blue */
	"#756bb1", /* cwnd_limited: purple */
	"#8c564b", /* pacing_limited: brown, as the pacing line */
	"#636363", /* other: grey */
};
_Static_assert(sizeof(stall_colour) / sizeof(stall_colour[0]) == BT_NSTALL_CAUSES,
	       "plots/draw.c: stall_colour needs a colour for each of lib/trace.h's stall causes");

/* the legend's stalls: nstalls, stall_label[], stall_n[], stall_s[], stall_colour[] */
static void gp_stalls(FILE *v, const struct pd_dip_info *info)
{
	fprintf(v, "nstalls=%d; array stall_label[%d]; array stall_n[%d]; array stall_s[%d]; "
		   "array stall_colour[%d]; ",
		BT_NSTALL_CAUSES, BT_NSTALL_CAUSES, BT_NSTALL_CAUSES, BT_NSTALL_CAUSES, BT_NSTALL_CAUSES);
	for (int c = 0; c < BT_NSTALL_CAUSES; c++) {
		char name[32];

		snprintf(name, sizeof(name), "stall_label[%d]", c + 1);
		gp_str(v, name, bt_stall_cause_names[c]);
		snprintf(name, sizeof(name), "stall_colour[%d]", c + 1);
		gp_str(v, name, stall_colour[c]);
		fprintf(v, "stall_n[%d]=%llu; stall_s[%d]=%.6f; ", c + 1, (unsigned long long)info->stalls[c],
			c + 1, info->stalled_s[c]);
	}
}

/* the legend's silences of the wire: gap_ms, gap_n[], gap_s[], gap_max_s[] (idle, in_flight) */
static void gp_gaps(FILE *v, const struct env *e, const struct pd_dip_info *info)
{
	fprintf(v, "gap_ms=%g; array gap_n[%d]; array gap_s[%d]; array gap_max_s[%d]; ", e->gap_ms, PD_GAP_STATES,
		PD_GAP_STATES, PD_GAP_STATES);
	for (int k = 0; k < PD_GAP_STATES; k++)
		fprintf(v, "gap_n[%d]=%llu; gap_s[%d]=%.6f; gap_max_s[%d]=%.6f; ", k + 1,
			(unsigned long long)info->gaps[k], k + 1, info->gap_s[k], k + 1, info->gap_max_s[k]);
}

/* the legend's causes, from lib/trace.h: ncauses, cause_label[], cause_n[],
 * cause_thr[] (the throttling ones), cause_colour[] and cause_pt[] */
static void gp_causes(FILE *v, const struct pd_dip_info *info)
{
	fprintf(v, "ncauses=%d; array cause_label[%d]; array cause_n[%d]; array cause_thr[%d]; "
		   "array cause_colour[%d]; array cause_pt[%d]; ",
		BT_NCAUSES, BT_NCAUSES, BT_NCAUSES, BT_NCAUSES, BT_NCAUSES, BT_NCAUSES);
	for (int c = 0; c < BT_NCAUSES; c++) {
		char name[32];

		snprintf(name, sizeof(name), "cause_label[%d]", c + 1);
		gp_str(v, name, bt_cause_labels[c]);
		snprintf(name, sizeof(name), "cause_colour[%d]", c + 1);
		gp_str(v, name, cause_style[c].colour);
		fprintf(v, "cause_n[%d]=%llu; cause_thr[%d]=%llu; cause_pt[%d]=%d; ", c + 1,
			(unsigned long long)info->collapses[c], c + 1, (unsigned long long)info->throttling[c], c + 1,
			cause_style[c].pt);
	}
}

/* the variables every template takes: the data, the picture, its title and
 * size; paths absolute, so that a kept plot.sh redraws from anywhere */
static void gp_common(FILE *v, const struct env *e, const char *title)
{
	gp_str(v, "data", data_dir);
	gp_str(v, "out", e->out_abs);
	gp_str(v, "term", e->svg ? "svg" : "pngcairo");
	gp_str(v, "ptitle", title);
	fprintf(v, "width=%u; height=%u; ", e->width, e->height);
}

/* the rate axis' floor: a decade below the lowest rate drawn, at least PD_FLOOR_MBPS */
static double rate_floor(const struct pd_dip_info *info)
{
	double f = info->min_mbps > 0 ? pow(10, floor(log10(info->min_mbps))) : PD_FLOOR_MBPS;

	return f > PD_FLOOR_MBPS ? f : PD_FLOOR_MBPS;
}

/* --from/--to must show some of what the plot covers; say what that is */
static int check_zoom(const struct env *e, const struct pd_dip_info *info)
{
	double from = isnan(e->from) ? 0 : e->from, to = isnan(e->to) ? info->last_s : e->to;

	if (from < info->last_s && to > 0)
		return TK_EXIT_OK;
	elog("--from %g --to %g is outside what the plot covers: 0 to %.3f s (from the trace's first sample "
	     "or the capture's first frame, whichever came first)",
	     from, to, info->last_s);
	return TK_EXIT_USAGE;
}

static int plot_dip(const struct env *e, char *vars, size_t vlen)
{
	struct pd_flow_sel sel = { e->have_cookie, e->cookie, e->sender };
	struct pd_dip_info info;
	char err[512], tmpl[PATH_MAX], title[512];
	long bins = 0;
	uint64_t ncoll = 0;
	int rc;
	FILE *v;

	if (find_template(plots[PLOT_DIP].tmpl, tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	rc = pd_dip_trace(e->trace, &sel, data_dir, &info, err, sizeof(err));
	if (rc) {
		elog("%s", err);
		return pd_exit(rc);
	}
	for (int c = 0; c < BT_NCAUSES; c++)
		ncoll += info.collapses[c];
	vlog("%s: flow %s:%u -> %s:%u (cookie %llu), %llu samples, %llu collapses; %llu flows in the trace",
	     e->trace, info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.cookie,
	     (unsigned long long)info.samples, (unsigned long long)ncoll, (unsigned long long)info.flows);
	rc = dip_capture(e, &info, &bins);
	if (rc != TK_EXIT_OK)
		return rc;
	rc = check_zoom(e, &info);
	if (rc != TK_EXIT_OK)
		return rc;
	if (e->title)
		snprintf(title, sizeof(title), "%s", e->title);
	else
		snprintf(title, sizeof(title), "BBR and the wire: %s:%u -> %s:%u (%llu samples, collapses: %llu)",
			 info.saddr, info.sport, info.daddr, info.dport, (unsigned long long)info.samples,
			 (unsigned long long)ncoll);
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_common(v, e, title);
	fprintf(v, "have_pcap=%d; bin_ms=%g; floor_mbps=%g; ceiling_mbps=%g; interval_floor_us=%d; ",
		e->pcap && bins > 0, e->bin_ms, e->rate_lo > 0 ? e->rate_lo : rate_floor(&info), e->rate_hi,
		PD_INTERVAL_FLOOR_US);
	gp_causes(v, &info);
	gp_stalls(v, &info);
	gp_gaps(v, e, &info);
	fprintf(v, "have_need=%d; have_demand=%d; headroom=%g; window_ms=%u; ", info.need_rows > 0,
		info.demand_rows > 0, BT_THROTTLE_HEADROOM, BT_DEMAND_WINDOW_MS);
	/* both panels on one explicit time axis: 0 is the earlier of the first
	 * sample and the first frame */
	fprintf(v, "xmin=%.9g; xmax=%.9g; ", isnan(e->from) ? 0 : e->from,
		isnan(e->to) ? info.last_s : e->to);
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

static int plot_other(const struct env *e, char *vars, size_t vlen)
{
	char err[512], tmpl[PATH_MAX], labels[4096] = "";
	double floor_cycles = 0;
	int n;
	FILE *v;

	if (find_template(plots[e->kind].tmpl, tmpl, sizeof(tmpl)))
		return TK_EXIT_FAIL;
	switch (e->kind) {
	case PLOT_DWELL:
		n = pd_dwell(e->input, data_dir, err, sizeof(err));
		break;
	case PLOT_UPF:
		n = pd_upf(e->input, data_dir, labels, sizeof(labels), &floor_cycles, err, sizeof(err));
		break;
	default:
		n = pd_sweep(e->input, data_dir, err, sizeof(err));
		break;
	}
	if (n < 0) {
		elog("%s", err);
		return pd_exit(n);
	}
	v = fmemopen(vars, vlen, "w");
	if (!v)
		return TK_EXIT_FAIL;
	gp_common(v, e, e->title ? e->title : plots[e->kind].title);
	if (e->kind == PLOT_DWELL)
		fprintf(v, "nsock=%d; ", n);
	if (e->kind == PLOT_UPF) {
		gp_str(v, "labels", labels);
		fprintf(v, "floor_cycles=%.9g; ", floor_cycles);
	}
	if (e->kind == PLOT_SWEEP) {
		struct pd_dip_info none = { 0 }; /* the sweep draws the causes' colours alone */

		gp_causes(v, &none);
	}
	if (fclose(v))
		return TK_EXIT_FAIL;
	return run_gnuplot(tmpl, vars) ? TK_EXIT_FAIL : TK_EXIT_OK;
}

#define VARS_MAX 65536 /* gnuplot -e's variables */

/* the data, then the picture; a TK_EXIT_* code */
int draw(const struct env *e)
{
	char *vars = malloc(VARS_MAX);
	struct stat st;
	int rc;

	if (!vars) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	/* gnuplot writes OUT; remove a stale one so a failure cannot leave an old picture */
	unlink(e->out);
	rc = e->kind == PLOT_DIP ? plot_dip(e, vars, VARS_MAX) : plot_other(e, vars, VARS_MAX);
	free(vars);
	if (rc != TK_EXIT_OK)
		return rc;
	if (stat(e->out, &st) || st.st_size == 0) {
		elog("%s: gnuplot wrote nothing", e->out);
		return TK_EXIT_FAIL;
	}
	vlog("%s: %lld bytes", e->out, (long long)st.st_size);
	return TK_EXIT_OK;
}
