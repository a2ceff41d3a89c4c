// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dip plot's trace: the flow to draw chosen from bbrtrace's JSON lines
 * (pass 1), then its samples, its collapses by cause, the pacing it needed
 * at each, its stalls by cause, and its demand over the run written as
 * samples.dat, collapses.dat, need.dat, stalls.dat and demand.dat (pass 2).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "demand.h"
#include "jlines.h"
#include "jsonl.h"
#include "log.h"
#include "plots/data_dip.h"
#include "plots/data_file.h"
#include "plots/plotdata.h"
#include "trace.h"

/* a traced socket: by cookie when it has one, else by its addresses and ports */
struct flow_key {
	uint64_t cookie;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
	uint64_t samples;
};

/* the flow of a sample or collapse record (the flow columns lead both) */
static bool key_of(const struct bt_sample *s, const struct bt_fieldset *fs, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->cookie = s->cookie;
	memcpy(k->saddr, s->saddr, 16);
	memcpy(k->daddr, s->daddr, 16);
	k->sport = s->sport;
	k->dport = s->dport;
	return k->cookie || bt_has(fs, BT_F_SADDR);
}

static bool same_flow(const struct flow_key *a, const struct flow_key *b)
{
	if (a->cookie || b->cookie)
		return a->cookie == b->cookie;
	return a->sport == b->sport && a->dport == b->dport && !memcmp(a->saddr, b->saddr, 16) &&
	       !memcmp(a->daddr, b->daddr, 16);
}

static double mbps(uint64_t bps, bool valid)
{
	return valid && bps > 0 ? (double)bps * TK_MBPS_PER_BPS_F : NAN;
}

/* an interval on the log axis: 0 us (the usual snd_interval on a veth) at the floor */
static double interval(uint32_t us)
{
	return us > 0 ? (double)us : PD_INTERVAL_FLOOR_US;
}

/* one parsed record of the trace: its kind, and the sample, collapse or stall in it */
struct trace_rec {
	bool is_sample, is_collapse, is_stall;
	struct bt_collapse c;      /* a sample is read into c.ack */
	struct bt_stall x;
	struct bt_fieldset fs;
};

/* the parsed record o into r; false for a record of another type */
static bool rec_of(const struct jl_obj *o, struct trace_rec *r)
{
	const char *type = bt_record_type(o);

	r->is_sample = type && !strcmp(type, bt_sample_schema.type);
	r->is_collapse = type && !strcmp(type, bt_collapse_schema.type);
	r->is_stall = type && !strcmp(type, bt_stall_schema.type);
	if (r->is_sample)
		bt_sample_read(o, &r->c.ack, &r->fs);
	else if (r->is_collapse)
		bt_collapse_read(o, &r->c, &r->fs);
	else if (r->is_stall)
		bt_stall_read(o, &r->x, &r->fs);
	return r->is_sample || r->is_collapse || r->is_stall;
}

/* the record's flow and time: a stall's are those of the write it began at */
static const struct bt_sample *rec_at(const struct trace_rec *r)
{
	return r->is_stall ? &r->x.at : &r->c.ack;
}

struct trace_pass {
	FILE *in;
	const char *path;
	struct jl_obj *o;
	char *line;
	size_t linecap;
	struct jl_lines lines;
	/* pass 1's lines before a cut last line: pass 2 reads those alone, so
	 * that lines a writer adds meanwhile change neither pass */
	unsigned long complete;
};

/* pass 1's next line into r: 1 for a sample or collapse, 0 to go on, 2 at
 * the end of the records, or PD_ERR_INPUT with err set */
#define TRACE_END 2
static int next_rec(struct trace_pass *p, ssize_t len, struct trace_rec *r, char *err, size_t errlen)
{
	char perr[96];

	switch (jl_lines_next(&p->lines, p->line, (size_t)len, p->o, perr, sizeof(perr))) {
	case JL_LINE_RECORD:
		p->complete = p->lines.lineno;
		return rec_of(p->o, r);
	case JL_LINE_BLANK:
		p->complete = p->lines.lineno;
		return 0;
	case JL_LINE_CUT:
		return TRACE_END;
	case JL_LINE_CAPTURE:
		log_fmt(err, errlen,
			"%s looks like a packet capture (%s), not a bbrtrace trace: give it with --pcap, "
			"and the trace (bbrtrace's JSON lines) with --trace",
			p->path, p->lines.capture);
		return PD_ERR_INPUT;
	default:
		log_fmt(err, errlen, "%s:%lu: not a JSON record: %s", p->path, p->lines.lineno, perr);
		return PD_ERR_INPUT;
	}
}

/* pass 1: every flow with its count of samples, and the time origin */
static int scan_flows(struct trace_pass *p, struct pd_dip_info *info, struct flow_key **flows, size_t *nflows,
		      char *err, size_t errlen)
{
	size_t cap = 0;
	bool have_origin = false;
	ssize_t len;
	int rc;

	while ((len = getline(&p->line, &p->linecap, p->in)) > 0) {
		struct trace_rec r;
		struct flow_key k;
		size_t i;

		rc = next_rec(p, len, &r, err, errlen);
		if (rc == PD_ERR_INPUT)
			return rc;
		if (rc == TRACE_END)
			break;
		if (!rc || !r.is_sample)
			continue;
		if (!have_origin && (bt_has(&r.fs, BT_F_WALL_NS) || bt_has(&r.fs, BT_F_T_NS))) {
			info->wall = bt_has(&r.fs, BT_F_WALL_NS);
			info->origin_s = (double)(info->wall ? r.c.ack.wall_ns : r.c.ack.t_ns) * TK_SEC_PER_NSEC_F;
			have_origin = true;
		}
		if (!key_of(&r.c.ack, &r.fs, &k))
			continue;
		for (i = 0; i < *nflows && !same_flow(&(*flows)[i], &k); i++)
			;
		if (i == *nflows) {
			if (*nflows == cap) {
				struct flow_key *v = realloc(*flows, (cap = cap ? cap * 2 : 8) * sizeof(*v));

				if (!v) {
					log_fmt(err, errlen, "out of memory");
					return PD_ERR_SYSTEM;
				}
				*flows = v;
			}
			(*flows)[(*nflows)++] = k;
		}
		(*flows)[i].samples++;
	}
	return 0;
}

/* the flow to draw: the one asked for, else the one with the most samples */
static int choose_flow(const struct flow_key *flows, size_t nflows, const struct pd_flow_sel *sel,
		       const char *path, struct flow_key *chosen, char *err, size_t errlen)
{
	bool found = false;

	for (size_t i = 0; i < nflows; i++) {
		char ep[96], a[48];

		dip_endpoint(cli_fmt_v6mapped(flows[i].saddr, a, sizeof(a)), flows[i].sport, ep, sizeof(ep));
		if (sel->have_cookie || sel->sender) {
			if (sel->have_cookie ? flows[i].cookie == sel->cookie : !strcmp(ep, sel->sender)) {
				*chosen = flows[i];
				return 0;
			}
		} else if (!found || flows[i].samples > chosen->samples) {
			*chosen = flows[i];
			found = true;
		}
	}
	if (found)
		return 0;
	if (!nflows)
		log_fmt(err, errlen, "%s: no \"sample\" records: nothing to draw", path);
	else if (sel->have_cookie)
		log_fmt(err, errlen, "%s: no samples of the socket with cookie %llu", path,
		       (unsigned long long)sel->cookie);
	else
		log_fmt(err, errlen, "%s: no samples of a socket at %s", path, sel->sender);
	return PD_ERR_INPUT;
}

/* a joined record's capture-minus-trace time, kept for the median offset */
static void note_offset(double **diffs, size_t *n, size_t *cap, double d)
{
	if (*n == *cap) {
		double *v = realloc(*diffs, (*cap ? *cap * 2 : 1024) * sizeof(*v));

		if (!v)
			return;
		*diffs = v;
		*cap = *cap ? *cap * 2 : 1024;
	}
	(*diffs)[(*n)++] = d;
}

static void write_sample_row(FILE *f, double ts, const struct bt_sample *s, struct pd_dip_info *info)
{
	fprintf(f, "%.9f", ts);
	pd_put_num(f, mbps(s->bw_bps, true));
	pd_put_num(f, mbps(s->pacing_rate_bps, s->pacing_rate_valid));
	pd_put_num(f, interval(s->rcv_interval_us));
	pd_put_num(f, interval(s->snd_interval_us));
	fprintf(f, " %d\n", s->is_app_limited);
	dip_note_rate(info, mbps(s->bw_bps, true));
	dip_note_rate(info, mbps(s->pacing_rate_bps, s->pacing_rate_valid));
}

/* a collapse in its cause's block; the pacing it needed and the demand
 * (bbrtrace's need_bps and demand_bps; a trace without them: none) in need.dat */
static void write_collapse_row(FILE *f, FILE *need, double ts, const struct trace_rec *r,
			       struct pd_dip_info *info)
{
	const struct bt_collapse *c = &r->c;
	double after = mbps(c->bw_bps, true);
	bool throttling = c->impact == BT_IMPACT_THROTTLING;

	fprintf(f, "%.9f", ts);
	pd_put_num(f, isfinite(after) && after > PD_FLOOR_MBPS ? after : PD_FLOOR_MBPS);
	pd_put_num(f, mbps(c->bw_prev_bps, true));
	fprintf(f, " %d\n", throttling);
	info->collapses[c->cause]++;
	info->throttling[c->cause] += throttling;
	if (!bt_has(&r->fs, BT_C_NEED_BPS) || !c->need_bps)
		return;
	fprintf(need, "%.9f", ts);
	pd_put_num(need, mbps(c->need_bps, true));
	pd_put_num(need, mbps(c->demand_bps, bt_has(&r->fs, BT_C_DEMAND_BPS)));
	fputc('\n', need);
	info->need_rows++;
	dip_note_rate(info, mbps(c->need_bps, true));
}

/*
 * The flow's demand after each sample, by bbrtrace's rule (lib/demand.h): a
 * row in demand.dat at each new checkpoint (every BT_DEMAND_STEP_NS of the
 * flow's samples), with the need of an app-limited flow (BT_THROTTLE_HEADROOM
 * x the demand; NaN while it had more to send, whose need is the detector's)
 * and the window it was measured over, s.
 */
static void write_demand_row(FILE *f, double ts, struct bt_demand *d, const struct bt_sample *s,
			     struct pd_dip_info *info)
{
	const struct bt_demand_at *at = &d->last;

	if (!bt_demand_track(d, s))
		return;
	fprintf(f, "%.9f", ts);
	pd_put_num(f, mbps(at->bps, true));
	pd_put_num(f, at->app_limited ? mbps(at->bps, true) * BT_THROTTLE_HEADROOM : NAN);
	fprintf(f, " %.9f %d\n", (double)(at->t_ns - at->since_ns) * TK_SEC_PER_NSEC_F, at->app_limited);
	info->demand_rows++;
	dip_note_rate(info, mbps(at->bps, true));
}

/* a stall in its cause's block: when it began and how long it held, s */
static void write_stall_row(FILE *f, double ts, const struct bt_stall *x, struct pd_dip_info *info)
{
	fprintf(f, "%.9f", ts);
	pd_put_num(f, (double)x->duration_us * TK_SEC_PER_USEC_F);
	fputc('\n', f);
	info->stalls[x->cause]++;
	info->stalled_s[x->cause] += (double)x->duration_us * TK_SEC_PER_USEC_F;
	if (ts + (double)x->duration_us * TK_SEC_PER_USEC_F > info->last_s)
		info->last_s = ts + (double)x->duration_us * TK_SEC_PER_USEC_F;
}

/* where pass 2 writes: samples.dat, need.dat, demand.dat (with the demand's
 * running state), and a block per cause of collapses.dat and of stalls.dat */
struct dip_out {
	FILE *samples, *need, *demand;
	struct bt_demand dem; /* the chosen flow's */
	FILE *coll[BT_NCAUSES];
	FILE *stall[BT_NSTALL_CAUSES];
};

/* pass 2: the chosen flow's records to their files */
static void write_series(struct trace_pass *p, const struct flow_key *chosen, struct dip_out *o,
			 struct pd_dip_info *info)
{
	size_t ndiff = 0, capdiff = 0;
	double *diffs = NULL;
	uint64_t ft;

	for (unsigned long n = 0; n < p->complete && getline(&p->line, &p->linecap, p->in) > 0; n++) {
		struct trace_rec r;
		struct flow_key k;
		char perr[96];
		uint64_t t;
		double ts;

		/* pass 1 read these lines: a blank one is no object */
		if (jl_parse(p->line, p->o, perr, sizeof(perr)) || !rec_of(p->o, &r) ||
		    !key_of(rec_at(&r), &r.fs, &k) || !same_flow(&k, chosen) ||
		    !bt_has(&r.fs, info->wall ? BT_F_WALL_NS : BT_F_T_NS))
			continue;
		t = info->wall ? rec_at(&r)->wall_ns : rec_at(&r)->t_ns;
		ts = (double)t * TK_SEC_PER_NSEC_F - info->origin_s;
		/* bbrpcap join added the frame's time */
		if (jl_u64(p->o, "frame_time_ns", &ft))
			note_offset(&diffs, &ndiff, &capdiff, ((double)ft - (double)t) * TK_SEC_PER_NSEC_F);
		if (r.is_sample) {
			write_demand_row(o->demand, ts, &o->dem, &r.c.ack, info);
			/* counted, not drawn: the handshake's sample holds no BBR state yet */
			if (!bt_mode_is_handshake(r.c.ack.mode))
				write_sample_row(o->samples, ts, &r.c.ack, info);
			info->samples++;
			if (ts > info->last_s)
				info->last_s = ts;
		} else if (r.is_collapse) {
			write_collapse_row(o->coll[r.c.cause], o->need, ts, &r, info);
		} else {
			write_stall_row(o->stall[r.x.cause], ts, &r.x, info);
		}
	}
	if (ndiff) {
		qsort(diffs, ndiff, sizeof(*diffs), pd_cmp_double);
		info->have_offset = true;
		info->offset_s = diffs[ndiff / 2];
	}
	free(diffs);
}

/* a memory stream per block, so that pass 2 writes each record once */
struct blocks {
	FILE *f[BT_NCAUSES + BT_NSTALL_CAUSES];
	char *buf[BT_NCAUSES + BT_NSTALL_CAUSES];
	size_t len[BT_NCAUSES + BT_NSTALL_CAUSES];
};

static int blocks_open(struct blocks *b, struct dip_out *o, char *err, size_t errlen)
{
	for (int i = 0; i < BT_NCAUSES + BT_NSTALL_CAUSES; i++) {
		b->f[i] = open_memstream(&b->buf[i], &b->len[i]);
		if (!b->f[i]) {
			while (i-- > 0) {
				fclose(b->f[i]);
				free(b->buf[i]);
			}
			return pd_out_of_memory(err, errlen);
		}
	}
	memcpy(o->coll, b->f, sizeof(o->coll));
	memcpy(o->stall, b->f + BT_NCAUSES, sizeof(o->stall));
	return 0;
}

/* the blocks written out, each after its name and a NaN row, so that none
 * is empty (gnuplot's index counts blocks) */
static void blocks_write(struct blocks *b, FILE *coll, FILE *stalls)
{
	for (int i = 0; i < BT_NCAUSES + BT_NSTALL_CAUSES; i++) {
		bool is_coll = i < BT_NCAUSES;

		fclose(b->f[i]);
		fprintf(is_coll ? coll : stalls, "# %s\n%s\n%s\n\n",
			is_coll ? bt_cause_names[i] : bt_stall_cause_names[i - BT_NCAUSES],
			is_coll ? "NaN NaN NaN 0" : "NaN NaN", b->buf[i] ? b->buf[i] : "");
		free(b->buf[i]);
	}
}

/* pass 2 into the five files */
static int write_files(struct trace_pass *p, const struct flow_key *chosen, FILE *samples, FILE *coll,
		       FILE *need, FILE *stalls, FILE *demand, struct pd_dip_info *info, char *err,
		       size_t errlen)
{
	struct dip_out o = { .samples = samples, .need = need, .demand = demand };
	struct blocks b;
	int rc = blocks_open(&b, &o, err, errlen);

	if (rc)
		return rc;
	fputs("# t_s bw_mbps pacing_mbps rcv_interval_us snd_interval_us app_limited\n", samples);
	fputs("# t_s bw_mbps bw_prev_mbps throttling, one block per cause\n", coll);
	fputs("# t_s need_mbps demand_mbps: at each collapse (bbrtrace's need_bps, demand_bps)\n", need);
	fputs("# t_s duration_s, one block per stall cause\n", stalls);
	fprintf(demand, "# t_s demand_mbps need_mbps window_s app_limited: the demand at each checkpoint "
			"(lib/demand.h); need: %g x demand when app-limited, else NaN\n",
		BT_THROTTLE_HEADROOM);
	write_series(p, chosen, &o, info);
	blocks_write(&b, coll, stalls);
	bt_demand_free(&o.dem);
	return 0;
}

int pd_dip_trace(const char *trace_path, const struct pd_flow_sel *sel, const char *dir,
		 struct pd_dip_info *info, char *err, size_t errlen)
{
	static const char *const names[] = { "samples.dat", "collapses.dat", "need.dat", "stalls.dat", "demand.dat" };
	struct trace_pass p = { .in = fopen(trace_path, "r"), .path = trace_path, .o = malloc(sizeof(*p.o)) };
	struct flow_key *flows = NULL, chosen = { 0 };
	FILE *f[ARRAY_SIZE(names)] = { 0 };
	size_t nflows = 0, nf = 0;
	int rc = PD_ERR_INPUT;

	memset(info, 0, sizeof(*info));
	jl_lines_init(&p.lines, trace_path);
	if (!p.in) {
		log_fmt(err, errlen, "%s: cannot open: %s", trace_path, strerror(errno));
		goto out;
	}
	rc = p.o ? scan_flows(&p, info, &flows, &nflows, err, errlen) : pd_out_of_memory(err, errlen);
	if (!rc)
		rc = choose_flow(flows, nflows, sel, trace_path, &chosen, err, errlen);
	if (rc)
		goto out;
	info->flows = nflows;
	info->cookie = chosen.cookie;
	cli_fmt_v6mapped(chosen.saddr, info->saddr, sizeof(info->saddr));
	cli_fmt_v6mapped(chosen.daddr, info->daddr, sizeof(info->daddr));
	info->sport = chosen.sport;
	info->dport = chosen.dport;
	rc = PD_ERR_SYSTEM;
	for (; nf < ARRAY_SIZE(names); nf++)
		if (!(f[nf] = pd_open_out(dir, names[nf], err, errlen)))
			goto out;
	rewind(p.in);
	rc = write_files(&p, &chosen, f[0], f[1], f[2], f[3], f[4], info, err, errlen);
out:
	for (size_t i = 0; i < nf; i++)
		if (pd_close_out(f[i], names[i], err, errlen))
			rc = PD_ERR_SYSTEM;
	if (p.in)
		fclose(p.in);
	free(p.line);
	free(p.o);
	free(flows);
	return rc;
}
