// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "jsonl.h"
#include "plots/plotdata.h"

#define MAX_COLS 128

static void seterr(char *err, size_t len, const char *fmt, ...) TK_PRINTF(3, 4);
static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static const char *const cause_names[PD_NCAUSES] = { "delayed_ack", "rate_drop", "loss_policer", "other" };

const char *pd_cause_name(int cause)
{
	return cause >= 0 && cause < PD_NCAUSES ? cause_names[cause] : "other";
}

int pd_cause_parse(const char *s)
{
	for (int i = 0; s && i < PD_NCAUSES; i++)
		if (!strcmp(s, cause_names[i]))
			return i;
	return PD_OTHER;
}

static FILE *open_out(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		seterr(err, errlen, "%s: cannot create: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *name, char *err, size_t errlen)
{
	if (ferror(f) | fclose(f)) {
		seterr(err, errlen, "%s: write failed", name);
		return -1;
	}
	return 0;
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

struct flow_key {
	uint64_t cookie;
	char saddr[64], daddr[64];
	uint64_t sport, dport;
	uint64_t samples;
};

static bool key_of(const struct jl_obj *o, struct flow_key *k)
{
	const char *s = jl_str(o, "saddr"), *d = jl_str(o, "daddr");

	memset(k, 0, sizeof(*k));
	jl_u64(o, "cookie", &k->cookie);
	jl_u64(o, "sport", &k->sport);
	jl_u64(o, "dport", &k->dport);
	if (s)
		snprintf(k->saddr, sizeof(k->saddr), "%s", s);
	if (d)
		snprintf(k->daddr, sizeof(k->daddr), "%s", d);
	return k->cookie || s;
}

static bool same_flow(const struct flow_key *a, const struct flow_key *b)
{
	if (a->cookie || b->cookie)
		return a->cookie == b->cookie;
	return a->sport == b->sport && a->dport == b->dport && !strcmp(a->saddr, b->saddr) &&
	       !strcmp(a->daddr, b->daddr);
}

static void endpoint(const char *addr, uint64_t port, char *buf, size_t len)
{
	snprintf(buf, len, strchr(addr, ':') ? "[%s]:%llu" : "%s:%llu", addr, (unsigned long long)port);
}

static double mbps(const struct jl_obj *o, const char *key)
{
	double v;

	if (!jl_num(o, key, &v) || v <= 0)
		return NAN;
	return v * 1e-6;
}

static double positive(const struct jl_obj *o, const char *key)
{
	double v;

	return jl_num(o, key, &v) && v > 0 ? v : NAN;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int pd_dip_trace(const char *trace_path, const struct pd_flow_sel *sel, const char *dir,
		 struct pd_dip_info *info, char *err, size_t errlen)
{
	FILE *in = fopen(trace_path, "r"), *samples = NULL, *coll = NULL;
	struct jl_obj *o = malloc(sizeof(*o));
	struct flow_key *flows = NULL, chosen = { 0 };
	size_t nflows = 0, cap = 0, linecap = 0, ndiff = 0, capdiff = 0;
	double *diffs = NULL;
	char *line = NULL, perr[96];
	long lineno = 0;
	bool have_origin = false, found = false;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (!in || !o) {
		seterr(err, errlen, "%s: cannot open: %s", trace_path, strerror(errno));
		goto out;
	}
	/* pass 1: the flows, the time origin */
	while (getline(&line, &linecap, in) > 0) {
		struct flow_key k;
		const char *type;
		uint64_t t;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (jl_parse(line, o, perr, sizeof(perr))) {
			seterr(err, errlen, "%s:%ld: not a JSON record: %s", trace_path, lineno, perr);
			goto out;
		}
		type = jl_str(o, "type");
		if (!type || strcmp(type, "sample"))
			continue;
		if (!have_origin) {
			info->wall = jl_get(o, "wall_ns") != NULL;
			if (jl_u64(o, info->wall ? "wall_ns" : "t_ns", &t)) {
				info->origin_s = (double)t * 1e-9;
				have_origin = true;
			}
		}
		if (!key_of(o, &k))
			continue;
		size_t i;

		for (i = 0; i < nflows && !same_flow(&flows[i], &k); i++)
			;
		if (i == nflows) {
			if (nflows == cap) {
				struct flow_key *v = realloc(flows, (cap = cap ? cap * 2 : 8) * sizeof(*v));

				if (!v) {
					seterr(err, errlen, "out of memory");
					goto out;
				}
				flows = v;
			}
			flows[nflows++] = k;
		}
		flows[i].samples++;
	}
	info->flows = nflows;
	for (size_t i = 0; i < nflows; i++) {
		char ep[96];

		endpoint(flows[i].saddr, flows[i].sport, ep, sizeof(ep));
		if (sel->have_cookie || sel->sender) {
			if (sel->have_cookie ? flows[i].cookie == sel->cookie : !strcmp(ep, sel->sender)) {
				chosen = flows[i];
				found = true;
				break;
			}
		} else if (!found || flows[i].samples > chosen.samples) {
			/* by default the flow with the most samples */
			chosen = flows[i];
			found = true;
		}
	}
	if (!found) {
		if (!nflows)
			seterr(err, errlen, "%s: no \"sample\" records: nothing to draw", trace_path);
		else if (sel->have_cookie)
			seterr(err, errlen, "%s: no samples of the socket with cookie %llu", trace_path,
			       (unsigned long long)sel->cookie);
		else
			seterr(err, errlen, "%s: no samples of a socket at %s", trace_path, sel->sender);
		goto out;
	}
	info->cookie = chosen.cookie;
	snprintf(info->saddr, sizeof(info->saddr), "%s", chosen.saddr);
	snprintf(info->daddr, sizeof(info->daddr), "%s", chosen.daddr);
	info->sport = (uint16_t)chosen.sport;
	info->dport = (uint16_t)chosen.dport;

	/* pass 2: the chosen flow's samples and collapses */
	samples = open_out(dir, "samples.dat", err, errlen);
	coll = samples ? open_out(dir, "collapses.dat", err, errlen) : NULL;
	if (!samples || !coll)
		goto out;
	fputs("# t_s bw_mbps pacing_mbps rcv_interval_us snd_interval_us app_limited\n", samples);
	rewind(in);
	char *blocks[PD_NCAUSES] = { 0 };
	size_t blen[PD_NCAUSES] = { 0 };
	FILE *bf[PD_NCAUSES];

	for (int c = 0; c < PD_NCAUSES; c++) {
		bf[c] = open_memstream(&blocks[c], &blen[c]);
		if (!bf[c]) {
			seterr(err, errlen, "out of memory");
			for (int k = 0; k < c; k++) {
				fclose(bf[k]);
				free(blocks[k]);
			}
			goto out;
		}
	}
	while (getline(&line, &linecap, in) > 0) {
		struct flow_key k;
		const char *type;
		uint64_t t, ft;
		double ts;
		bool is_sample, is_coll;

		if (line[strspn(line, " \t\r\n")] == '\0' || jl_parse(line, o, perr, sizeof(perr)))
			continue;
		type = jl_str(o, "type");
		is_sample = type && !strcmp(type, "sample");
		is_coll = type && !strcmp(type, "collapse");
		if ((!is_sample && !is_coll) || !key_of(o, &k) || !same_flow(&k, &chosen))
			continue;
		if (!jl_u64(o, info->wall ? "wall_ns" : "t_ns", &t))
			continue;
		ts = (double)t * 1e-9 - info->origin_s;
		if (jl_u64(o, "frame_time_ns", &ft)) {
			if (ndiff == capdiff) {
				double *v = realloc(diffs, (capdiff = capdiff ? capdiff * 2 : 1024) * sizeof(*v));

				if (v)
					diffs = v;
				else
					capdiff = ndiff;
			}
			if (ndiff < capdiff)
				diffs[ndiff++] = ((double)ft - (double)t) * 1e-9;
		}
		if (is_sample) {
			bool app = false;

			jl_bool(o, "is_app_limited", &app);
			fprintf(samples, "%.9f", ts);
			put_num(samples, mbps(o, "bw_bps"));
			put_num(samples, mbps(o, "pacing_rate_bps"));
			put_num(samples, positive(o, "rcv_interval_us"));
			put_num(samples, positive(o, "snd_interval_us"));
			fprintf(samples, " %d\n", app);
			info->samples++;
			if (ts > info->last_s)
				info->last_s = ts;
		} else {
			int c = pd_cause_parse(jl_str(o, "cause"));
			double after = mbps(o, "bw_bps");

			fprintf(bf[c], "%.9f", ts);
			put_num(bf[c], isfinite(after) && after > PD_FLOOR_MBPS ? after : PD_FLOOR_MBPS);
			put_num(bf[c], mbps(o, "bw_prev_bps"));
			fputc('\n', bf[c]);
			info->collapses[c]++;
		}
	}
	/* one index block per cause, each with a NaN row so that none is empty */
	for (int c = 0; c < PD_NCAUSES; c++) {
		fclose(bf[c]);
		fprintf(coll, "%s# %s\nNaN NaN NaN\n%s\n\n", c ? "" : "# t_s bw_mbps bw_prev_mbps, one block per cause\n",
			cause_names[c], blocks[c] ? blocks[c] : "");
		free(blocks[c]);
	}
	if (ndiff) {
		qsort(diffs, ndiff, sizeof(*diffs), cmp_double);
		info->have_offset = true;
		info->offset_s = diffs[ndiff / 2];
	}
	rc = 0;
out:
	if (samples && close_out(samples, "samples.dat", err, errlen))
		rc = -1;
	if (coll && close_out(coll, "collapses.dat", err, errlen))
		rc = -1;
	if (in)
		fclose(in);
	free(line);
	free(o);
	free(flows);
	free(diffs);
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
			return n;
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
		seterr(err, errlen, "%s: empty: no CSV header", name);
		return -1;
	}
	c->nhead = pd_csv_split(c->headline, c->head, MAX_COLS);
	if (c->nhead < 2) {
		seterr(err, errlen, "%s:1: not a CSV header", name);
		return -1;
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
				seterr(err, errlen, "out of memory");
				free(line);
				return -1;
			}
		}
		f = malloc(MAX_COLS * sizeof(*f));
		if (!f) {
			seterr(err, errlen, "out of memory");
			free(line);
			return -1;
		}
		n = pd_csv_split(line, f, MAX_COLS);
		if (n < 0) {
			free(f);
			seterr(err, errlen, "%s:%ld: unterminated quote", name, lineno);
			free(line);
			return -1;
		}
		if (n != c->nhead) {
			/* a different record type (a new header) ends the table */
			if (n >= 1 && !strcmp(f[0], c->head[0])) {
				free(f);
				break;
			}
			seterr(err, errlen, "%s:%ld: %d fields where the header has %d", name, lineno, n, c->nhead);
			free(f);
			free(line);
			return -1;
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
			seterr(err, errlen, "%s: no column '%s' in the header", name, cols[i]);
			return -1;
		}
	}
	return 0;
}

long pd_dip_tput(FILE *csv, const struct pd_dip_info *info, double offset_s, const char *dir, char *err,
		 size_t errlen)
{
	static const char *const cols[] = { "src", "epoch_s", "data_bps", "acked_bps", "dip" };
	struct csv c;
	int idx[5];
	char sender[96];
	FILE *out;
	long n = 0;

	if (csv_read(csv, "bbrpcap throughput", &c, err, errlen))
		return -1;
	if (need_cols(&c, "bbrpcap throughput", cols, idx, 5, err, errlen)) {
		csv_free(&c);
		return -1;
	}
	out = open_out(dir, "tput.dat", err, errlen);
	if (!out) {
		csv_free(&c);
		return -1;
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
		n++;
	}
	csv_free(&c);
	if (close_out(out, "tput.dat", err, errlen))
		return -1;
	return n;
}

/* --- udpdwell ----------------------------------------------------------------------- */

#define DWELL_BUCKETS 9
static const char *const dwell_labels[DWELL_BUCKETS] = {
	"<=10us", "<=50us", "<=100us", "<=500us", "<=1ms", "<=5ms", "<=10ms", "<=50ms", ">50ms",
};

struct dwell_sock {
	char addr[64], comm[32];
	uint64_t port;
	uint64_t packets, buckets[DWELL_BUCKETS], drops;
	double avg_sum, max_us, p99_us;
	int state; /* 0 OK, 1 WARN, 2 ALERT */
};

static int state_rank(const char *s)
{
	return !s ? 0 : !strcmp(s, "ALERT") ? 2 : !strcmp(s, "WARN") ? 1 : 0;
}

static int cmp_sock(const void *x, const void *y)
{
	const struct dwell_sock *a = x, *b = y;

	if (a->state != b->state)
		return b->state - a->state;
	return a->port < b->port ? -1 : a->port > b->port;
}

int pd_dwell(const char *path, const char *dir, char *err, size_t errlen)
{
	static const char *const state_names[] = { "OK", "WARN", "ALERT" };
	FILE *in = fopen(path, "r"), *out = NULL;
	struct jl_obj *o = malloc(sizeof(*o));
	struct dwell_sock *socks = NULL;
	size_t n = 0, cap = 0, linecap = 0;
	char *line = NULL, perr[96];
	long lineno = 0;
	int rc = -1;

	if (!in || !o) {
		seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	while (getline(&line, &linecap, in) > 0) {
		const struct jl_field *b, *d;
		const char *type, *addr;
		struct dwell_sock *s;
		uint64_t port = 0, packets = 0;
		double v;
		size_t i;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (jl_parse(line, o, perr, sizeof(perr))) {
			seterr(err, errlen, "%s:%ld: not a JSON record: %s", path, lineno, perr);
			goto out;
		}
		type = jl_str(o, "type");
		if (!type || strcmp(type, "socket"))
			continue;
		addr = jl_str(o, "addr");
		jl_u64(o, "port", &port);
		for (i = 0; i < n && !(socks[i].port == port && !strcmp(socks[i].addr, addr ? addr : "")); i++)
			;
		if (i == n) {
			if (n == cap) {
				struct dwell_sock *nv = realloc(socks, (cap = cap ? cap * 2 : 8) * sizeof(*nv));

				if (!nv) {
					seterr(err, errlen, "out of memory");
					goto out;
				}
				socks = nv;
			}
			memset(&socks[n], 0, sizeof(socks[n]));
			snprintf(socks[n].addr, sizeof(socks[n].addr), "%s", addr ? addr : "");
			socks[n].port = port;
			n++;
		}
		s = &socks[i];
		if (jl_str(o, "comm"))
			snprintf(s->comm, sizeof(s->comm), "%s", jl_str(o, "comm"));
		jl_u64(o, "packets", &packets);
		s->packets += packets;
		if (jl_num(o, "avg_us", &v))
			s->avg_sum += v * (double)packets;
		if (jl_num(o, "max_us", &v) && v > s->max_us)
			s->max_us = v;
		if (jl_num(o, "p99_us", &v) && v > s->p99_us)
			s->p99_us = v;
		if (state_rank(jl_str(o, "state")) > s->state)
			s->state = state_rank(jl_str(o, "state"));
		b = jl_get(o, "buckets");
		if (!b || b->kind != JL_RAW || b->str[0] != '[') {
			seterr(err, errlen, "%s:%ld: a socket record without its buckets array", path, lineno);
			goto out;
		}
		const char *p = b->str + 1;

		for (int k = 0; k < DWELL_BUCKETS; k++) {
			char *end;
			unsigned long long x = strtoull(p, &end, 10);

			if (end == p) {
				seterr(err, errlen, "%s:%ld: buckets: expected %d counts", path, lineno, DWELL_BUCKETS);
				goto out;
			}
			s->buckets[k] += x;
			p = end + strspn(end, " ,");
		}
		d = jl_get(o, "drops");
		if (d && d->kind == JL_RAW) {
			for (const char *q = d->str; q < d->str + d->len; q++)
				if (*q == ':')
					s->drops += strtoull(q + 1, NULL, 10);
		}
	}
	if (!n) {
		seterr(err, errlen, "%s: no \"socket\" records (udpdwell --format json)", path);
		goto out;
	}
	qsort(socks, n, sizeof(*socks), cmp_sock);
	out = open_out(dir, "dwell.dat", err, errlen);
	if (!out)
		goto out;
	fputs("\"bucket\"", out);
	for (size_t i = 0; i < n; i++) {
		const struct dwell_sock *s = &socks[i];

		fprintf(out, " \"%s:%llu %s: %s, avg %.0f us, p99 %.0f us, max %.0f us, %llu drops\"", s->addr,
			(unsigned long long)s->port, s->comm, state_names[s->state],
			s->packets ? s->avg_sum / (double)s->packets : 0, s->p99_us, s->max_us,
			(unsigned long long)s->drops);
	}
	fputc('\n', out);
	for (int k = 0; k < DWELL_BUCKETS; k++) {
		fprintf(out, "\"%s\"", dwell_labels[k]);
		for (size_t i = 0; i < n; i++) {
			uint64_t tot = 0;

			for (int q = 0; q < DWELL_BUCKETS; q++)
				tot += socks[i].buckets[q];
			put_num(out, tot ? 100.0 * (double)socks[i].buckets[k] / (double)tot : 0);
		}
		fputc('\n', out);
	}
	rc = close_out(out, "dwell.dat", err, errlen) ? -1 : (int)n;
	out = NULL;
out:
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	free(line);
	free(o);
	free(socks);
	return rc;
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
	int idx[3], fcol, nlabels = 0, rc = -1;
	size_t nfloor = 0, lpos = 0;

	*floor_cycles = 0;
	labels[0] = '\0';
	if (!in) {
		seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (csv_read(in, path, &c, err, errlen) || need_cols(&c, path, cols, idx, 3, err, errlen))
		goto out;
	if (!c.nrows) {
		seterr(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	fcol = csv_col(&c, "floor_cycles");
	rows = calloc(c.nrows, sizeof(*rows));
	names = calloc(c.nrows, sizeof(*names));
	floors = calloc(c.nrows, sizeof(*floors));
	if (!rows || !names || !floors) {
		seterr(err, errlen, "out of memory");
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
			seterr(err, errlen, "%s:%zu: sessions and cycles_per_pkt must be numbers", path, i + 2);
			goto out;
		}
		if (fcol >= 0 && isfinite(cell(f[fcol])))
			floors[nfloor++] = cell(f[fcol]);
	}
	qsort(rows, c.nrows, sizeof(*rows), cmp_upf);
	out = open_out(dir, "upf.dat", err, errlen);
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
	rc = close_out(out, "upf.dat", err, errlen) ? -1 : nlabels;
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

int pd_sweep(const char *path, const char *dir, char *err, size_t errlen)
{
	static const char *const cols[] = {
		"rtt", "rtt_effective", "quickack", "delayed_ack_per_min", "rate_drop_per_min",
		"loss_policer_per_min", "other_per_min", "goodput_bps",
	};
	FILE *in = fopen(path, "r"), *out = NULL;
	struct csv c = { 0 };
	int idx[8], rc = -1;

	if (!in) {
		seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (csv_read(in, path, &c, err, errlen) || need_cols(&c, path, cols, idx, 8, err, errlen))
		goto out;
	if (!c.nrows) {
		seterr(err, errlen, "%s: no runs after the header", path);
		goto out;
	}
	out = open_out(dir, "sweep.dat", err, errlen);
	if (!out)
		goto out;
	fputs("# run delayed_ack rate_drop loss_policer other (collapses/min) goodput_mbps\n", out);
	for (size_t i = 0; i < c.nrows; i++) {
		char **f = c.fields[i];
		bool native = strcmp(f[idx[0]], f[idx[1]]);

		/* the RTT asked for, and what ran where netem is missing */
		fprintf(out, "\"%s%s%s%s, quickack %s\"", f[idx[0]], native ? " (ran " : "", native ? f[idx[1]] : "",
			native ? ")" : "", f[idx[2]]);
		for (int k = 3; k < 7; k++)
			put_num(out, isfinite(cell(f[idx[k]])) ? cell(f[idx[k]]) : 0);
		put_num(out, cell(f[idx[7]]) * 1e-6);
		fputc('\n', out);
	}
	rc = close_out(out, "sweep.dat", err, errlen) ? -1 : (int)c.nrows;
	out = NULL;
out:
	if (out)
		fclose(out);
	fclose(in);
	csv_free(&c);
	return rc;
}
