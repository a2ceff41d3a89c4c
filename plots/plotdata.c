// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrplot's data for each plot, from its own input: a dip's trace flow and
 * throughput CSV, udpdwell's sockets, upfbench's and the sweep's CSVs, each
 * written as the whitespace-separated tables its template reads.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "dwellrec.h"
#include "jlines.h"
#include "jsonl.h"
#include "log.h"
#include "plots/plotdata.h"
#include "trace.h"

#define MAX_COLS 128

static FILE *open_out(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		log_fmt(err, errlen, "%s: cannot create: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *name, char *err, size_t errlen)
{
	if (ferror(f) | fclose(f)) {
		log_fmt(err, errlen, "%s: write failed", name);
		return -1;
	}
	return 0;
}

static int out_of_memory(char *err, size_t errlen)
{
	log_fmt(err, errlen, "out of memory");
	return PD_ERR_SYSTEM;
}

/* "%g" that gnuplot reads, NaN for a missing value */
static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" NaN", f);
}

/* --- the trace ------------------------------------------------------------------- */

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

/* "ADDR:PORT", "[ADDR]:PORT" for IPv6 */
static void endpoint(const char *addr, unsigned int port, char *buf, size_t len)
{
	snprintf(buf, len, strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, port);
}

static double mbps(uint64_t bps, bool valid)
{
	return valid && bps > 0 ? (double)bps * 1e-6 : NAN;
}

/* the lowest rate drawn above 0, for the rate axis' floor */
static void note_rate(struct pd_dip_info *info, double mbps_v)
{
	if (mbps_v > 0 && isfinite(mbps_v) && (info->min_mbps <= 0 || mbps_v < info->min_mbps))
		info->min_mbps = mbps_v;
}

/* an interval on the log axis: 0 us (the usual snd_interval on a veth) at the floor */
static double interval(uint32_t us)
{
	return us > 0 ? (double)us : PD_INTERVAL_FLOOR_US;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* one parsed record of the trace: its kind, and the sample (or collapse) in it */
struct trace_rec {
	bool is_sample, is_collapse;
	struct bt_collapse c;      /* a sample is read into c.ack */
	struct bt_fieldset fs;
};

/* the parsed record o into r; false for a record of another type */
static bool rec_of(const struct jl_obj *o, struct trace_rec *r)
{
	const char *type = bt_record_type(o);

	r->is_sample = type && !strcmp(type, bt_sample_schema.type);
	r->is_collapse = type && !strcmp(type, bt_collapse_schema.type);
	if (r->is_sample)
		bt_sample_read(o, &r->c.ack, &r->fs);
	else if (r->is_collapse)
		bt_collapse_read(o, &r->c, &r->fs);
	return r->is_sample || r->is_collapse;
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
			info->origin_s = (double)(info->wall ? r.c.ack.wall_ns : r.c.ack.t_ns) * 1e-9;
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

		endpoint(cli_fmt_v6mapped(flows[i].saddr, a, sizeof(a)), flows[i].sport, ep, sizeof(ep));
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
	put_num(f, mbps(s->bw_bps, true));
	put_num(f, mbps(s->pacing_rate_bps, s->pacing_rate_valid));
	put_num(f, interval(s->rcv_interval_us));
	put_num(f, interval(s->snd_interval_us));
	fprintf(f, " %d\n", s->is_app_limited);
	note_rate(info, mbps(s->bw_bps, true));
	note_rate(info, mbps(s->pacing_rate_bps, s->pacing_rate_valid));
}

static void write_collapse_row(FILE *f, double ts, const struct bt_collapse *c)
{
	double after = mbps(c->bw_bps, true);

	fprintf(f, "%.9f", ts);
	put_num(f, isfinite(after) && after > PD_FLOOR_MBPS ? after : PD_FLOOR_MBPS);
	put_num(f, mbps(c->bw_prev_bps, true));
	fputc('\n', f);
}

/* pass 2: the chosen flow's samples to samples.dat, its collapses by cause */
static void write_series(struct trace_pass *p, const struct flow_key *chosen, FILE *samples, FILE *bf[],
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
		    !key_of(&r.c.ack, &r.fs, &k) || !same_flow(&k, chosen) ||
		    !bt_has(&r.fs, info->wall ? BT_F_WALL_NS : BT_F_T_NS))
			continue;
		t = info->wall ? r.c.ack.wall_ns : r.c.ack.t_ns;
		ts = (double)t * 1e-9 - info->origin_s;
		/* bbrpcap join added the frame's time */
		if (jl_u64(p->o, "frame_time_ns", &ft))
			note_offset(&diffs, &ndiff, &capdiff, ((double)ft - (double)t) * 1e-9);
		if (r.is_sample) {
			/* counted, not drawn: the handshake's sample holds no BBR state yet */
			if (!bt_mode_is_handshake(r.c.ack.mode))
				write_sample_row(samples, ts, &r.c.ack, info);
			info->samples++;
			if (ts > info->last_s)
				info->last_s = ts;
		} else {
			write_collapse_row(bf[r.c.cause], ts, &r.c);
			info->collapses[r.c.cause]++;
		}
	}
	if (ndiff) {
		qsort(diffs, ndiff, sizeof(*diffs), cmp_double);
		info->have_offset = true;
		info->offset_s = diffs[ndiff / 2];
	}
	free(diffs);
}

/* collapses.dat: one index block per cause, in lib/trace.h's order, each
 * with a NaN row so that none is empty */
static int write_collapse_blocks(struct trace_pass *p, const struct flow_key *chosen, FILE *samples, FILE *coll,
				 struct pd_dip_info *info, char *err, size_t errlen)
{
	char *blocks[BT_NCAUSES] = { 0 };
	size_t blen[BT_NCAUSES] = { 0 };
	FILE *bf[BT_NCAUSES];

	for (int c = 0; c < BT_NCAUSES; c++) {
		bf[c] = open_memstream(&blocks[c], &blen[c]);
		if (!bf[c]) {
			log_fmt(err, errlen, "out of memory");
			while (c-- > 0) {
				fclose(bf[c]);
				free(blocks[c]);
			}
			return PD_ERR_SYSTEM;
		}
	}
	write_series(p, chosen, samples, bf, info);
	for (int c = 0; c < BT_NCAUSES; c++) {
		fclose(bf[c]);
		fprintf(coll, "%s# %s\nNaN NaN NaN\n%s\n\n",
			c ? "" : "# t_s bw_mbps bw_prev_mbps, one block per cause\n", bt_cause_names[c],
			blocks[c] ? blocks[c] : "");
		free(blocks[c]);
	}
	return 0;
}

int pd_dip_trace(const char *trace_path, const struct pd_flow_sel *sel, const char *dir,
		 struct pd_dip_info *info, char *err, size_t errlen)
{
	struct trace_pass p = { .in = fopen(trace_path, "r"), .path = trace_path, .o = malloc(sizeof(*p.o)) };
	struct flow_key *flows = NULL, chosen = { 0 };
	FILE *samples = NULL, *coll = NULL;
	size_t nflows = 0;
	int rc = PD_ERR_INPUT;

	memset(info, 0, sizeof(*info));
	jl_lines_init(&p.lines, trace_path);
	if (!p.in) {
		log_fmt(err, errlen, "%s: cannot open: %s", trace_path, strerror(errno));
		goto out;
	}
	rc = p.o ? scan_flows(&p, info, &flows, &nflows, err, errlen) : out_of_memory(err, errlen);
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
	samples = open_out(dir, "samples.dat", err, errlen);
	coll = samples ? open_out(dir, "collapses.dat", err, errlen) : NULL;
	rc = PD_ERR_SYSTEM;
	if (!samples || !coll)
		goto out;
	fputs("# t_s bw_mbps pacing_mbps rcv_interval_us snd_interval_us app_limited\n", samples);
	rewind(p.in);
	rc = write_collapse_blocks(&p, &chosen, samples, coll, info, err, errlen);
out:
	if (samples && close_out(samples, "samples.dat", err, errlen))
		rc = PD_ERR_SYSTEM;
	if (coll && close_out(coll, "collapses.dat", err, errlen))
		rc = PD_ERR_SYSTEM;
	if (p.in)
		fclose(p.in);
	free(p.line);
	free(p.o);
	free(flows);
	return rc;
}

/* --- CSV ---------------------------------------------------------------------------- */

int pd_csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	for (;;) {
		char *w;

		if (n == max)
			return PD_CSV_TOO_WIDE; /* another field follows */
		if (*p == '"') {
			w = ++p;
			fields[n++] = w;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			*w = '\0';
			if (*p == ',') {
				p++;
				continue;
			}
			return n;
		}
		fields[n++] = p;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p++ = '\0';
	}
}

struct csv {
	char **rows;       /* each row's fields, in place */
	int *nfields;
	char ***fields;
	size_t nrows;
	char *head[MAX_COLS];
	int nhead;
	char *headline;
	char **lines;
};

static void csv_free(struct csv *c)
{
	for (size_t i = 0; i < c->nrows; i++) {
		free(c->lines[i]);
		free(c->fields[i]);
	}
	free(c->lines);
	free(c->fields);
	free(c->nfields);
	free(c->headline);
	memset(c, 0, sizeof(*c));
}

static int csv_read(FILE *in, const char *name, struct csv *c, char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	long lineno = 1;

	memset(c, 0, sizeof(*c));
	if (getline(&c->headline, &cap, in) <= 0) {
		log_fmt(err, errlen, "%s: empty: no CSV header", name);
		return PD_ERR_INPUT;
	}
	c->nhead = pd_csv_split(c->headline, c->head, MAX_COLS);
	if (c->nhead == PD_CSV_TOO_WIDE) {
		log_fmt(err, errlen, "%s:1: more than %d columns", name, MAX_COLS);
		return PD_ERR_INPUT;
	}
	if (c->nhead < 2) {
		log_fmt(err, errlen, "%s:1: not a CSV header", name);
		return PD_ERR_INPUT;
	}
	cap = 0;
	while (getline(&line, &cap, in) > 0) {
		char **f;
		int n;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (c->nrows == rcap) {
			rcap = rcap ? rcap * 2 : 64;
			c->lines = realloc(c->lines, rcap * sizeof(*c->lines));
			c->fields = realloc(c->fields, rcap * sizeof(*c->fields));
			c->nfields = realloc(c->nfields, rcap * sizeof(*c->nfields));
			if (!c->lines || !c->fields || !c->nfields) {
				free(line);
				return out_of_memory(err, errlen);
			}
		}
		f = malloc(MAX_COLS * sizeof(*f));
		if (!f) {
			free(line);
			return out_of_memory(err, errlen);
		}
		n = pd_csv_split(line, f, MAX_COLS);
		if (n < 0) {
			free(f);
			if (n == PD_CSV_TOO_WIDE)
				log_fmt(err, errlen, "%s:%ld: more than %d fields", name, lineno, MAX_COLS);
			else
				log_fmt(err, errlen, "%s:%ld: unterminated quote", name, lineno);
			free(line);
			return PD_ERR_INPUT;
		}
		if (n != c->nhead) {
			/* a different record type (a new header) ends the table */
			if (n >= 1 && !strcmp(f[0], c->head[0])) {
				free(f);
				break;
			}
			log_fmt(err, errlen, "%s:%ld: %d fields where the header has %d", name, lineno, n, c->nhead);
			free(f);
			free(line);
			return PD_ERR_INPUT;
		}
		c->lines[c->nrows] = line;
		c->fields[c->nrows] = f;
		c->nfields[c->nrows] = n;
		c->nrows++;
		line = NULL;
		cap = 0;
	}
	free(line);
	return 0;
}

static bool at_end(FILE *f)
{
	int ch = getc(f);

	if (ch == EOF)
		return true;
	ungetc(ch, f);
	return false;
}

static int csv_col(const struct csv *c, const char *name)
{
	for (int i = 0; i < c->nhead; i++)
		if (!strcmp(c->head[i], name))
			return i;
	return -1;
}

/* a number from a CSV cell; NaN when empty or not a number */
static double cell(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return NAN;
	v = strtod(s, &end);
	return *end ? NAN : v;
}

static int need_cols(const struct csv *c, const char *name, const char *const *cols, int *idx, int n, char *err,
		     size_t errlen)
{
	for (int i = 0; i < n; i++) {
		idx[i] = csv_col(c, cols[i]);
		if (idx[i] < 0) {
			log_fmt(err, errlen, "%s: no column '%s' in the header", name, cols[i]);
			return PD_ERR_INPUT;
		}
	}
	return 0;
}

long pd_dip_tput(FILE *csv, struct pd_dip_info *info, double offset_s, const char *dir, double *first_s,
		 char *err, size_t errlen)
{
	static const char *const cols[] = { "src", "epoch_s", "data_bps", "acked_bps", "dip" };
	struct csv c = { 0 };
	int idx[ARRAY_SIZE(cols)], rc = 0;
	char sender[96];
	FILE *out;
	long n = 0;

	/* nothing at all (not even a header) is no bins: bbrpcap found no frame of the flow */
	if (!at_end(csv)) {
		rc = csv_read(csv, "bbrpcap throughput", &c, err, errlen);
		if (!rc)
			rc = need_cols(&c, "bbrpcap throughput", cols, idx, ARRAY_SIZE(cols), err, errlen);
	}
	out = rc ? NULL : open_out(dir, "tput.dat", err, errlen);
	if (!out) {
		csv_free(&c);
		return rc ? rc : PD_ERR_SYSTEM;
	}
	endpoint(info->saddr, info->sport, sender, sizeof(sender));
	fputs("# t_s sent_mbps acked_mbps dip\nNaN NaN NaN 0\n", out);
	for (size_t i = 0; i < c.nrows; i++) {
		char **f = c.fields[i];
		double t = cell(f[idx[1]]) - offset_s - info->origin_s;
		double sent = cell(f[idx[2]]) * 1e-6, acked = cell(f[idx[3]]) * 1e-6;

		if (strcmp(f[idx[0]], sender) || !isfinite(t))
			continue;
		fprintf(out, "%.9f", t);
		put_num(out, sent > PD_FLOOR_MBPS ? sent : PD_FLOOR_MBPS);
		put_num(out, acked > PD_FLOOR_MBPS ? acked : PD_FLOOR_MBPS);
		fprintf(out, " %d\n", !strcmp(f[idx[4]], "1"));
		note_rate(info, sent);
		note_rate(info, acked);
		if (!n || t < *first_s)
			*first_s = t;
		if (t > info->last_s)
			info->last_s = t;
		n++;
	}
	csv_free(&c);
	if (close_out(out, "tput.dat", err, errlen))
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
	if (close_out(out, name, err, errlen) || rename(tmp, path)) {
		log_fmt(err, errlen, "%s: cannot rewrite: %s", path, strerror(errno));
		rc = PD_ERR_SYSTEM;
	}
	return rc;
}

int pd_dip_shift(const char *dir, struct pd_dip_info *info, double first_s, char *err, size_t errlen)
{
	static const char *const files[] = { "samples.dat", "collapses.dat", "tput.dat" };
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

/* --- udpdwell ----------------------------------------------------------------------- */

struct dwell_sock {
	ud_text addr, comm;
	uint16_t port;
	uint64_t packets, buckets[UD_NBUCKETS], drops;
	double avg_sum, max_us, p99_us;
	enum ud_state state; /* its worst */
};

static int cmp_sock(const void *x, const void *y)
{
	const struct dwell_sock *a = x, *b = y;

	if (a->state != b->state)
		return (int)b->state - (int)a->state;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* the sockets seen so far */
struct dwell_set {
	struct dwell_sock *socks;
	size_t n, cap;
};

/* the socket at addr:port, added when new; NULL when out of memory */
static struct dwell_sock *dwell_sock_of(struct dwell_set *set, const char *addr, uint16_t port)
{
	struct dwell_sock *s;

	for (size_t i = 0; i < set->n; i++)
		if (set->socks[i].port == port && !strcmp(set->socks[i].addr, addr))
			return &set->socks[i];
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 8;
		struct dwell_sock *v = realloc(set->socks, cap * sizeof(*v));

		if (!v)
			return NULL;
		set->socks = v;
		set->cap = cap;
	}
	s = &set->socks[set->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	s->port = port;
	return s;
}

/* one "socket" record into its socket's sums; 0 or PD_ERR_* with err set */
static int dwell_add(struct dwell_set *set, const struct jl_obj *o, const char *where, char *err, size_t errlen)
{
	struct ud_socket_rec r;
	struct ud_fieldset fs;
	struct dwell_sock *s;

	ud_socket_read(o, &r, &fs);
	if (!ud_has(&fs, UD_SK_buckets)) {
		log_fmt(err, errlen, "%s: a socket record without its buckets array of %d counts", where,
			UD_NBUCKETS);
		return PD_ERR_INPUT;
	}
	s = dwell_sock_of(set, r.addr, r.port);
	if (!s)
		return out_of_memory(err, errlen);
	if (r.comm[0])
		memcpy(s->comm, r.comm, sizeof(s->comm));
	s->packets += r.packets;
	if (!isnan(r.avg_us))
		s->avg_sum += r.avg_us * (double)r.packets;
	if (r.max_us > s->max_us)
		s->max_us = r.max_us;
	if (r.p99_us > s->p99_us)
		s->p99_us = r.p99_us;
	if (r.state > s->state)
		s->state = r.state;
	for (int k = 0; k < UD_NBUCKETS; k++)
		s->buckets[k] += r.buckets[k];
	for (unsigned int j = 0; j < r.drops.n; j++)
		s->drops += r.drops.v[j].count;
	return 0;
}

/* one line of the file into the sockets' sums: 0 to go on, 1 at the end of
 * the records, or PD_ERR_* with err set */
static int dwell_line(struct jl_lines *lines, char *line, ssize_t len, struct jl_obj *o, struct dwell_set *set,
		      char *err, size_t errlen)
{
	char perr[96], where[4200];

	switch (jl_lines_next(lines, line, (size_t)len, o, perr, sizeof(perr))) {
	case JL_LINE_RECORD:
		if (!ud_record_is(o, &ud_socket_schema))
			return 0;
		snprintf(where, sizeof(where), "%s:%lu", lines->path, lines->lineno);
		return dwell_add(set, o, where, err, errlen);
	case JL_LINE_BLANK:
		return 0;
	case JL_LINE_CUT:
		return 1;
	case JL_LINE_CAPTURE:
		log_fmt(err, errlen, "%s looks like a packet capture (%s), not udpdwell's records (udpdwell "
			"--format json): bbrplot draws a capture in the dip plot, with --pcap", lines->path,
			lines->capture);
		return PD_ERR_INPUT;
	default:
		log_fmt(err, errlen, "%s:%lu: not a JSON record: %s", lines->path, lines->lineno, perr);
		return PD_ERR_INPUT;
	}
}

/* every "socket" record of the file; 0 or PD_ERR_* with err set */
static int dwell_read(FILE *in, const char *path, struct dwell_set *set, char *err, size_t errlen)
{
	struct jl_obj *o = malloc(sizeof(*o));
	struct jl_lines lines;
	size_t linecap = 0;
	char *line = NULL;
	ssize_t len;
	int rc = o ? 0 : out_of_memory(err, errlen);

	jl_lines_init(&lines, path);
	while (!rc && (len = getline(&line, &linecap, in)) > 0)
		rc = dwell_line(&lines, line, len, o, set, err, errlen);
	free(line);
	free(o);
	if (rc > 0)
		rc = 0;
	if (!rc && !set->n) {
		log_fmt(err, errlen, "%s: no \"%s\" records (udpdwell --format json)", path, ud_socket_schema.type);
		rc = PD_ERR_INPUT;
	}
	return rc;
}

/* dwell.dat: a header of the sockets' legends, then a row per bucket */
static int dwell_write(const char *dir, const struct dwell_set *set, char *err, size_t errlen)
{
	FILE *out = open_out(dir, "dwell.dat", err, errlen);

	if (!out)
		return PD_ERR_SYSTEM;
	fputs("\"bucket\"", out);
	for (size_t i = 0; i < set->n; i++) {
		const struct dwell_sock *s = &set->socks[i];

		fprintf(out, " \"%s:%u %s: %s, avg %.0f us, p99 %.0f us, max %.0f us, %llu drops\"", s->addr,
			s->port, s->comm, ud_state_name(s->state),
			s->packets ? s->avg_sum / (double)s->packets : 0, s->p99_us, s->max_us,
			(unsigned long long)s->drops);
	}
	fputc('\n', out);
	for (unsigned int k = 0; k < UD_NBUCKETS; k++) {
		fprintf(out, "\"%s\"", ud_bucket_name(k));
		for (size_t i = 0; i < set->n; i++) {
			uint64_t tot = 0;

			for (int q = 0; q < UD_NBUCKETS; q++)
				tot += set->socks[i].buckets[q];
			put_num(out, tot ? 100.0 * (double)set->socks[i].buckets[k] / (double)tot : 0);
		}
		fputc('\n', out);
	}
	return close_out(out, "dwell.dat", err, errlen) ? PD_ERR_SYSTEM : 0;
}

int pd_dwell(const char *path, const char *dir, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	struct dwell_set set = { 0 };
	int rc;

	if (!in) {
		log_fmt(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return PD_ERR_INPUT;
	}
	rc = dwell_read(in, path, &set, err, errlen);
	fclose(in);
	if (!rc) {
		qsort(set.socks, set.n, sizeof(*set.socks), cmp_sock);
		rc = dwell_write(dir, &set, err, errlen);
	}
	free(set.socks);
	return rc ? rc : (int)set.n;
}

/* --- upfbench ------------------------------------------------------------------- */

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
	struct csv c = { 0 };
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
	rc = csv_read(in, path, &c, err, errlen);
	if (!rc)
		rc = need_cols(&c, path, cols, idx, 3, err, errlen);
	if (rc)
		goto out;
	rc = PD_ERR_INPUT;
	if (!c.nrows) {
		log_fmt(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	fcol = csv_col(&c, "floor_cycles");
	rows = calloc(c.nrows, sizeof(*rows));
	names = calloc(c.nrows, sizeof(*names));
	floors = calloc(c.nrows, sizeof(*floors));
	if (!rows || !names || !floors) {
		rc = out_of_memory(err, errlen);
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
		rows[i].sessions = cell(f[idx[1]]);
		rows[i].cycles = cell(f[idx[2]]);
		if (!isfinite(rows[i].sessions) || !isfinite(rows[i].cycles)) {
			log_fmt(err, errlen, "%s:%zu: sessions and cycles_per_pkt must be numbers", path, i + 2);
			goto out;
		}
		if (fcol >= 0 && isfinite(cell(f[fcol])))
			floors[nfloor++] = cell(f[fcol]);
	}
	qsort(rows, c.nrows, sizeof(*rows), cmp_upf);
	out = open_out(dir, "upf.dat", err, errlen);
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
		qsort(floors, nfloor, sizeof(*floors), cmp_double);
		*floor_cycles = floors[nfloor / 2];
	}
	rc = close_out(out, "upf.dat", err, errlen) ? PD_ERR_SYSTEM : nlabels;
	out = NULL;
out:
	if (out)
		fclose(out);
	fclose(in);
	csv_free(&c);
	free(rows);
	free(names);
	free(floors);
	return rc;
}

/* --- repro sweep ------------------------------------------------------------------- */

/* repro/sweep.sh's columns: the run, then collapses per minute by cause (in
 * lib/trace.h's order, named after the causes), then the goodput */
#define SWEEP_RUN_COLS 3
#define SWEEP_CAUSE_COL(id, name, label) name "_per_min",
#define SWEEP_GOODPUT_COL (SWEEP_RUN_COLS + BT_NCAUSES)

int pd_sweep(const char *path, const char *dir, char *err, size_t errlen)
{
	static const char *const cols[] = {
		"rtt", "rtt_effective", "quickack", BT_CAUSES(SWEEP_CAUSE_COL) "goodput_bps",
	};
	FILE *in = fopen(path, "r"), *out = NULL;
	struct csv c = { 0 };
	int idx[ARRAY_SIZE(cols)], rc;

	if (!in) {
		log_fmt(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return PD_ERR_INPUT;
	}
	rc = csv_read(in, path, &c, err, errlen);
	if (!rc)
		rc = need_cols(&c, path, cols, idx, ARRAY_SIZE(cols), err, errlen);
	if (rc)
		goto out;
	rc = PD_ERR_INPUT;
	if (!c.nrows) {
		log_fmt(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	out = open_out(dir, "sweep.dat", err, errlen);
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
			put_num(out, isfinite(cell(f[idx[k]])) ? cell(f[idx[k]]) : 0);
		put_num(out, cell(f[idx[SWEEP_GOODPUT_COL]]) * 1e-6);
		fputc('\n', out);
	}
	rc = close_out(out, "sweep.dat", err, errlen) ? PD_ERR_SYSTEM : (int)c.nrows;
	out = NULL;
out:
	if (out)
		fclose(out);
	fclose(in);
	csv_free(&c);
	return rc;
}
