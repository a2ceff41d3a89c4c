// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join: each bbrtrace sample and collapse record gets the capture
 * frame of the ACK that produced it.
 *
 * A sample is taken when the sender processes the ACK whose cumulative ACK
 * number is the sample's snd_una, so the candidates are the frames from the
 * receiver (daddr:dport) to the sender (saddr:sport) carrying that number.
 * This file reads the trace (through lib/trace.h's readers) and the capture,
 * and writes the joined records; pcap/joinmatch.c does the matching.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "jlines.h"
#include "jsonl.h"
#include "log.h"
#include "opt.h"
#include "pcap/bbrpcap.h"
#include "pcap/joinmatch.h"
#include "record.h"
#include "trace.h"

struct tr_flow {
	uint8_t family;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
};

struct join {
	/* trace */
	const char *trace_path;
	char *buf;
	size_t size;
	bool mapped;
	struct jm m;         /* the records, the capture's ACK events, the offset */
	size_t cap_recs;
	struct tr_flow *flows;
	uint32_t nflows, cap_flows;
	struct { uint64_t cookie; int32_t tflow; } *cookies;
	size_t ncookies, cap_cookies;
	bool use_wall;
	bool time_chosen;
	/* capture */
	size_t cap_evs;
	int32_t *flow_map;   /* an_flow id * 2 + data direction -> tflow; -2: not yet known */
	size_t cap_map;
	bool oom;
	int64_t t0_ns;
};

/* --- the trace ------------------------------------------------------------------- */

/* the trace into j->buf; a TK_EXIT_* code */
static int load_file(struct join *j, const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	size_t cap = 1 << 20, len = 0;

	if (fd < 0) {
		elog("%s: cannot open: %s", path, strerror(errno));
		return TK_EXIT_DATA;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		close(fd);
		if (m == MAP_FAILED) {
			elog("%s: cannot map: %s", path, strerror(errno));
			return TK_EXIT_DATA;
		}
		j->buf = m;
		j->size = (size_t)st.st_size;
		j->mapped = true;
		return TK_EXIT_OK;
	}
	j->buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (!j->buf) {
			close(fd);
			elog("%s: out of memory", path);
			return TK_EXIT_FAIL;
		}
		if (len == cap) {
			char *nb = realloc(j->buf, cap *= 2);

			if (!nb) {
				free(j->buf);
				j->buf = NULL;
				continue;
			}
			j->buf = nb;
		}
		n = read(fd, j->buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			elog("%s: read failed: %s", path, strerror(errno));
			close(fd);
			return TK_EXIT_DATA;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	j->size = len;
	return TK_EXIT_OK;
}

static int32_t flow_index(struct join *j, const struct tr_flow *k)
{
	for (uint32_t i = 0; i < j->nflows; i++) {
		const struct tr_flow *f = &j->flows[i];

		if (f->family == k->family && f->sport == k->sport && f->dport == k->dport &&
		    !memcmp(f->saddr, k->saddr, 16) && !memcmp(f->daddr, k->daddr, 16))
			return (int32_t)i;
	}
	if (j->nflows == j->cap_flows) {
		uint32_t n = j->cap_flows ? j->cap_flows * 2 : 8;
		struct tr_flow *v = realloc(j->flows, n * sizeof(*v));

		if (!v) {
			j->oom = true;
			return -1;
		}
		j->flows = v;
		j->cap_flows = n;
	}
	j->flows[j->nflows] = *k;
	return (int32_t)j->nflows++;
}

static void note_cookie(struct join *j, uint64_t cookie, int32_t tflow)
{
	for (size_t i = 0; i < j->ncookies; i++)
		if (j->cookies[i].cookie == cookie)
			return;
	if (j->ncookies == j->cap_cookies) {
		size_t n = j->cap_cookies ? j->cap_cookies * 2 : 8;
		void *v = realloc(j->cookies, n * sizeof(*j->cookies));

		if (!v) {
			j->oom = true;
			return;
		}
		j->cookies = v;
		j->cap_cookies = n;
	}
	j->cookies[j->ncookies].cookie = cookie;
	j->cookies[j->ncookies].tflow = tflow;
	j->ncookies++;
}

static int32_t cookie_flow(const struct join *j, uint64_t cookie)
{
	for (size_t i = 0; i < j->ncookies; i++)
		if (j->cookies[i].cookie == cookie)
			return j->cookies[i].tflow;
	return -1;
}

/* a v4-mapped address as the capture has it: IPv4 in the first 4 bytes */
static uint8_t wire_addr(const uint8_t mapped[16], uint8_t out[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(out, 0, 16);
	if (!memcmp(mapped, prefix, 12)) {
		memcpy(out, mapped + 12, 4);
		return 4;
	}
	memcpy(out, mapped, 16);
	return 6;
}

/* the record's flow, ACK number and time; its flow stays -1 when it lacks them */
/*
 * A stall record as join matches it: against the ACK it waited for, the one
 * that acknowledged all the data in flight when it began (what Nagle waits
 * for), at its end. Its fields say when it began; the copy in `x` is moved.
 */
static const struct bt_sample *stall_key(struct bt_stall *x, const struct jl_obj *o,
					 struct bt_fieldset *fs)
{
	bt_stall_read(o, x, fs);
	x->at.snd_una = x->at.snd_nxt;
	x->at.t_ns += x->duration_us * 1000;
	x->at.wall_ns += x->duration_us * 1000;
	return &x->at;
}

static void describe(struct join *j, struct jm_rec *r, const struct jl_obj *o)
{
	struct bt_collapse c;
	struct bt_stall x;
	struct bt_fieldset fs;
	const struct bt_sample *s = &c.ack;
	struct tr_flow k = { 0 };

	if (r->kind == JM_SAMPLE)
		bt_sample_read(o, &c.ack, &fs);
	else if (r->kind == JM_COLLAPSE)
		bt_collapse_read(o, &c, &fs);
	else
		s = stall_key(&x, o, &fs);
	r->flow = -1;
	if (!j->time_chosen) {
		j->use_wall = bt_has(&fs, BT_F_WALL_NS);
		j->time_chosen = true;
	}
	if (!bt_has(&fs, j->use_wall ? BT_F_WALL_NS : BT_F_T_NS) || !bt_has(&fs, BT_F_SND_UNA))
		return;
	r->t_ns = (int64_t)(j->use_wall ? s->wall_ns : s->t_ns);
	r->snd_una = s->snd_una;
	if (bt_has(&fs, BT_F_SPORT) && bt_has(&fs, BT_F_DPORT) && bt_has(&fs, BT_F_SADDR) &&
	    bt_has(&fs, BT_F_DADDR)) {
		k.family = wire_addr(s->saddr, k.saddr);
		if (wire_addr(s->daddr, k.daddr) == k.family) {
			k.sport = s->sport;
			k.dport = s->dport;
			r->flow = flow_index(j, &k);
			if (bt_has(&fs, BT_F_COOKIE) && r->flow >= 0)
				note_cookie(j, s->cookie, r->flow);
			return;
		}
	}
	if (bt_has(&fs, BT_F_COOKIE)) /* a collapse record may name its socket by cookie only */
		r->flow = cookie_flow(j, s->cookie);
}

/* the record o, at off (len bytes) in the trace, into j->m.recs; -1 when out of memory */
static int add_record(struct join *j, const struct jl_obj *o, size_t off, size_t len, unsigned long lineno)
{
	struct jm_rec *r;
	const char *type;

	if (j->m.nrecs == j->cap_recs) {
		size_t n = j->cap_recs ? j->cap_recs * 2 : 1024;
		struct jm_rec *v = realloc(j->m.recs, n * sizeof(*v));

		if (!v)
			return -1;
		j->m.recs = v;
		j->cap_recs = n;
	}
	r = &j->m.recs[j->m.nrecs++];
	memset(r, 0, sizeof(*r));
	r->off = off;
	r->len = len;
	r->lineno = (uint32_t)lineno;
	r->flow = -1;
	r->ev = -1;
	type = bt_record_type(o);
	r->kind = !type ? JM_OTHER
		  : !strcmp(type, bt_sample_schema.type)   ? JM_SAMPLE
		  : !strcmp(type, bt_collapse_schema.type) ? JM_COLLAPSE
		  : !strcmp(type, bt_stall_schema.type)    ? JM_STALL
							   : JM_OTHER;
	if (r->kind != JM_OTHER)
		describe(j, r, o);
	return 0;
}

/* one line of the trace, at off; what read_trace returns, or 3 at the end of the records */
static int trace_line(struct join *j, struct jl_lines *lines, char *line, size_t off, size_t len, bool ended,
		      struct jl_obj *o)
{
	char err[128];

	switch (jl_lines_next(lines, line, len + ended, o, err, sizeof(err))) {
	case JL_LINE_RECORD:
		return add_record(j, o, off, len, lines->lineno);
	case JL_LINE_BLANK:
		return 0;
	case JL_LINE_CUT:
		return 3;
	case JL_LINE_CAPTURE:
		elog("%s looks like a packet capture (%s), not a bbrtrace trace: join takes the trace first, "
		     "then the capture (bbrpcap join TRACE.jsonl CAPTURE)", j->trace_path, lines->capture);
		return 2;
	default:
		elog("%s:%lu: not a JSON record: %s; the %lu lines before it were read", j->trace_path,
		     lines->lineno, err, lines->lineno - 1);
		return 1;
	}
}

/* reads the trace; -1 on a system error, 1 on a bad line (records before it
 * kept), 2 when it is a packet capture (nothing kept) */
static int read_trace(struct join *j)
{
	char *scratch = NULL;
	size_t scap = 0, pos = 0;
	struct jl_obj *o = malloc(sizeof(*o));
	struct jl_lines lines;
	int rc = o ? 0 : -1;

	jl_lines_init(&lines, j->trace_path);
	while (!rc && pos < j->size) {
		char *nl = memchr(j->buf + pos, '\n', j->size - pos);
		size_t len = nl ? (size_t)(nl - (j->buf + pos)) : j->size - pos;

		if (len + 2 > scap) {
			char *ns = realloc(scratch, scap = len + 2 + 4096);

			if (!ns) {
				rc = -1;
				break;
			}
			scratch = ns;
		}
		/* with its '\n': a last line without one may be cut short */
		memcpy(scratch, j->buf + pos, len + (nl != NULL));
		scratch[len + (nl != NULL)] = '\0';
		rc = trace_line(j, &lines, scratch, pos, len, nl != NULL, o);
		pos += len + 1;
	}
	free(scratch);
	free(o);
	if (rc < 0 || j->oom) {
		elog("%s: out of memory", j->trace_path);
		return -1;
	}
	return rc == 3 ? 0 : rc;
}

/* --- the capture ------------------------------------------------------------------ */

static void on_ack(void *ctx, const struct an_flow *f, const struct an_ack *e)
{
	struct join *j = ctx;
	int ds = e->data_dir, dr = !e->data_dir;
	int32_t tf;

	size_t key = (size_t)f->id * 2 + (size_t)ds;

	if (key >= j->cap_map) {
		size_t n = j->cap_map ? j->cap_map : 64;
		int32_t *m;

		while (n <= key)
			n *= 2;
		m = realloc(j->flow_map, n * sizeof(*m));
		if (!m) {
			j->oom = true;
			return;
		}
		for (size_t i = j->cap_map; i < n; i++)
			m[i] = -2;
		j->flow_map = m;
		j->cap_map = n;
	}
	tf = j->flow_map[key];
	if (tf == -2) {
		tf = -1;
		for (uint32_t i = 0; i < j->nflows; i++) {
			const struct tr_flow *t = &j->flows[i];

			if (t->family == f->family && t->sport == f->port[ds] && t->dport == f->port[dr] &&
			    !memcmp(t->saddr, f->addr[ds], 16) && !memcmp(t->daddr, f->addr[dr], 16)) {
				tf = (int32_t)i;
				break;
			}
		}
		j->flow_map[key] = tf;
	}
	if (tf < 0)
		return;
	if (j->m.nevs == j->cap_evs) {
		size_t n = j->cap_evs ? j->cap_evs * 2 : 4096;
		struct jm_ev *v = realloc(j->m.evs, n * sizeof(*v));

		if (!v) {
			j->oom = true;
			return;
		}
		j->m.evs = v;
		j->cap_evs = n;
	}
	j->m.evs[j->m.nevs++] = (struct jm_ev){ .flow = (uint32_t)tf, .ack = e->ack, .ts_ns = e->ts_ns,
						.frame = e->frame, .delay_ns = e->delay_ns };
}

/* --- output ------------------------------------------------------------------------ */

static unsigned int decimals(const struct jl_field *f)
{
	const char *dot = memchr(f->str, '.', f->len), *e = NULL;
	unsigned int n = 0;

	for (size_t i = 0; i < f->len; i++)
		if (f->str[i] == 'e' || f->str[i] == 'E')
			e = f->str + i;
	if (dot)
		for (const char *p = dot + 1; p < (e ? e : f->str + f->len); p++)
			n++;
	if (e) {
		long x = strtol(e + 1, NULL, 10);

		n = x < 0 ? n + (unsigned int)(-x) : (n > (unsigned long)x ? n - (unsigned int)x : 0);
	}
	return n > 20 ? 20 : n;
}

/* what join adds to each sample and collapse record: where its ACK is in the
 * capture (a stall's: the ACK it waited for); over `e` (the matched frame, or
 * NULL) and the join `j` */
#define JOIN_FIELDS(X)                                                                    \
	X("frame", REC_U64, 0, REC_NOCOL, e ? rv_u64(e->frame) : rv_null())                \
	X("frame_time_s", REC_F64, 6, REC_NOCOL, e ? rv_f64((double)e->ts_ns * 1e-9) : rv_null()) \
	X("frame_time_ns", REC_U64, 0, REC_NOCOL, e ? rv_u64((uint64_t)e->ts_ns) : rv_null())  \
	X("frame_time_rel_s", REC_F64, 9, REC_NOCOL,                                         \
	  e ? rv_f64(((double)e->ts_ns - (double)j->t0_ns) * 1e-9) : rv_null())                     \
	X("ack_delay_us", REC_F64, 3, REC_NOCOL,                                           \
	  e && e->delay_ns >= 0 ? rv_f64((double)e->delay_ns * 1e-3) : rv_null())
static const struct rec_field join_fields[] = { JOIN_FIELDS(REC_FIELD) };

/* a field of the line, as it came: its name, and its value by its JSON kind */
static void pass_through(const struct jl_field *f, struct rec_field *field, struct rec_value *v)
{
	memset(field, 0, sizeof(*field));
	memset(v, 0, sizeof(*v));
	field->name = f->key;
	switch (f->kind) {
	case JL_NUM:
		if (f->is_int && f->str[0] != '-') {
			field->type = REC_U64;
			v->u = f->u64;
		} else if (f->is_int) {
			field->type = REC_I64;
			v->i = f->i64;
		} else {
			field->type = REC_F64;
			field->prec = (int)decimals(f);
			v->d = f->num;
		}
		break;
	case JL_STR:
		field->type = REC_STR;
		v->s = f->str;
		break;
	case JL_BOOL:
		field->type = REC_BOOL;
		v->b = f->b;
		break;
	case JL_NULL:
		field->type = REC_U64;
		v->null = true;
		break;
	case JL_RAW:
		field->type = REC_RAW;
		v->raw.s = f->str;
		v->raw.len = f->len;
		break;
	}
}

/* a field join adds (a trace joined before carries them already) */
static bool is_join_field(const char *key)
{
	for (size_t k = 0; k < ARRAY_SIZE(join_fields); k++)
		if (!strcmp(key, join_fields[k].name))
			return true;
	return false;
}

/* the trace record as it came, plus where its ACK is in the capture */
static int write_joined(struct rec_writer *w, const struct join *j, const struct jm_rec *r,
			const struct jl_obj *o)
{
	struct rec_field fields[JL_MAX_FIELDS + ARRAY_SIZE(join_fields)];
	struct rec_value v[JL_MAX_FIELDS + ARRAY_SIZE(join_fields)];
	struct rec_schema s = { bt_record_type(o), fields, 0 };
	const struct jm_ev *e = r->ev >= 0 ? &j->m.evs[r->ev] : NULL;
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->n; i++) {
		if (!strcmp(o->f[i].key, "type") || is_join_field(o->f[i].key))
			continue;
		pass_through(&o->f[i], &fields[n], &v[n]);
		n++;
	}
	if (r->kind != JM_OTHER) {
		const struct rec_value added[] = { JOIN_FIELDS(REC_VALUE) };

		memcpy(fields + n, join_fields, sizeof(join_fields));
		memcpy(v + n, added, sizeof(added));
		n += ARRAY_SIZE(join_fields);
	}
	s.nfields = n;
	return rec_write(w, &s, v);
}

/* 212 Mbit/s, 3.1 Mbit/s, 0.042 Mbit/s */
static void fmt_mbps(double bps, char *buf, size_t len)
{
	double m = bps * 1e-6;

	if (m >= 100 || m == 0)
		snprintf(buf, len, "%.0f", m);
	else if (m >= 10)
		snprintf(buf, len, "%.1f", m);
	else
		snprintf(buf, len, "%.2g", m);
}

/* one line per collapse: its frame, its cause, and for a delayed ACK how late
 * the ACK came after the data it covers */
static void collapse_line(FILE *out, const struct join *j, const struct jm_rec *r, const struct jl_obj *o)
{
	const struct jm_ev *e = r->ev >= 0 ? &j->m.evs[r->ev] : NULL;
	char bw0[32] = "?", bw1[32] = "?";
	struct bt_collapse c;
	struct bt_fieldset fs;
	const char *cause = "?";

	bt_collapse_read(o, &c, &fs);
	if (bt_has(&fs, BT_C_BW_PREV_BPS))
		fmt_mbps((double)c.bw_prev_bps, bw0, sizeof(bw0));
	if (bt_has(&fs, BT_C_BW_BPS))
		fmt_mbps((double)c.bw_bps, bw1, sizeof(bw1));
	if (bt_has(&fs, BT_C_CAUSE))
		cause = bt_cause_names[c.cause];
	if (!e) {
		fprintf(out, "no frame (trace line %u): ACK %u is not in the capture; %s; BBR bw %s Mbit/s \u2192 %s Mbit/s\n",
			r->lineno, r->snd_una, cause, bw0, bw1);
		return;
	}
	fprintf(out, "frame %llu (t=%.6f s): ACK %u", (unsigned long long)e->frame,
		((double)e->ts_ns - (double)j->t0_ns) * 1e-9, r->snd_una);
	if (bt_has(&fs, BT_C_CAUSE) && c.cause == BT_CAUSE_DELAYED_ACK) {
		if (e->delay_ns >= 1000000)
			fprintf(out, " came %.1f ms after the data it covers", (double)e->delay_ns * 1e-6);
		else if (e->delay_ns >= 0)
			fprintf(out, " came %.0f \u00b5s after the data it covers", (double)e->delay_ns * 1e-3);
		else
			fprintf(out, " covers data that is not in the capture");
	}
	fprintf(out, "; %s; BBR bw %s Mbit/s \u2192 %s Mbit/s\n", cause, bw0, bw1);
}

struct join_opts {
	const char *out_path;
	struct bp_input in;   /* the CAPTURE files */
	int reader;           /* enum cap_reader */
	double max_skew_ms;
	bool strict;
};

#define MAX_SKEW_MS_DEFAULT 500 /* well over a round trip, well under a sequence wraparound */

#define TK_OPT_CFG struct join_opts
static const struct opt options[] = {
	OPT_E_OUTPUT(out_path, "write the joined records to FILE"),
	OPT_E_DOUBLE("max-skew-ms", 0, "MS", max_skew_ms, 0.001, 3600000,
		     "a frame further than MS ms from its record's time\n"
		     "(after the clock offset) is no match (default 500;\n"
		     "0.001..3600000)"),
	OPT_E_FLAG("strict", 0, strict, "fail (exit status below) when a collapse record found\n"
					"no frame"),
	OPT_E_CHOICE("reader", 0, "R", reader, bp_reader_names, "mmap (default) or libpcap"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_DATA, TK_EXIT_UNMATCHED, -1 };
static const struct opt_cli cli = {
	"Usage: bbrpcap join TRACE.jsonl CAPTURE... [-o OUT.jsonl] [OPTIONS]\n"
	"Finds, for every bbrtrace \"sample\" and \"collapse\" record, the capture frame of\n"
	"the ACK that produced it: the frame from the receiver (daddr:dport) to the sender\n"
	"(saddr:sport) whose ACK number is the record's snd_una. For a \"stall\" record,\n"
	"the ACK it waited for: the one that acknowledged all the data in flight when it\n"
	"began (its snd_nxt), at its end (t_ns + duration_us); a stall that the next\n"
	"write ended may have no such frame, when that ACK also covered newer data.\n"
	"\n"
	"The capture may be taken on either host, may hold several flows, and may be\n"
	"several files (a ring: read as one, in time order, frames numbered on as\n"
	"Wireshark numbers the files merged by mergecap -a; see bbrpcap flows --help).\n"
	"The offset between the trace's clock (wall_ns, else t_ns) and the capture's is\n"
	"estimated from the data; each record takes the candidate frame nearest in time\n"
	"after that offset, so equal ACK numbers 4 GiB apart (sequence wraparound) are\n"
	"told apart.\n"
	"\n"
	"Output: the trace's records, in order, as JSON lines (the trace's own format),\n"
	"with frame (Wireshark's frame number), frame_time_s (since the epoch, us\n"
	"precision), frame_time_ns, frame_time_rel_s (since the first frame, Wireshark's\n"
	"default time) and ack_delay_us (how long after the newest data it covers the ACK\n"
	"was captured: from a sender-side capture this includes the round trip); null when\n"
	"no frame matched. Other records pass through unchanged. For each collapse one line:\n"
	"  frame 48213 (t=12.345678 s): ACK 3962813608 came 39.8 ms after the data it covers;\n"
	"  BBR bw 212 Mbit/s \u2192 3.1 Mbit/s\n"
	"With -o the records go to OUT and the lines to stdout; without, the records go to\n"
	"stdout and the lines to stderr.\n"
	"\n",
	options,
	"\n"
	"A trace without sample or collapse records (not bbrtrace's), a damaged trace or\n"
	"capture, or one that cannot be read, is bad input; the records before damage are\n"
	"still joined. A capture that holds none of the trace's flows (every record would\n"
	"go unmatched) is bad input too: one line names the flows, nothing is written.\n"
	"A trace still being written is read up to its last complete line: a last line\n"
	"cut short is left out, with a warning.\n",
	NULL,
	exit_codes,
};

static void parse_join_args(int argc, char **argv, struct join *j, struct join_opts *op)
{
	int first = opt_parse(&cli, argc, argv, op);

	if (argc - first < 2)
		cli_usage_die("join: needs TRACE.jsonl and CAPTURE");
	j->trace_path = argv[first];
	op->in.paths = argv + first + 1;
	op->in.n = (unsigned int)(argc - first - 1);
	op->in.reader = (enum cap_reader)op->reader;
	bp_check_stdin("join", op->in.paths, op->in.n);
	if (!strcmp(j->trace_path, "-") && !strcmp(op->in.paths[0], "-"))
		cli_usage_die("join: the trace and the capture cannot both come from stdin");
}

/* a trace with nothing to join is not bbrtrace's: TK_EXIT_DATA after saying so */
static int check_trace(const struct join *j)
{
	for (size_t i = 0; i < j->m.nrecs; i++)
		if (j->m.recs[i].kind != JM_OTHER)
			return TK_EXIT_OK;
	elog("%s: no bbrtrace \"%s\" or \"%s\" records (bbrtrace -f json writes them): nothing to join",
	     j->trace_path, bt_sample_schema.type, bt_collapse_schema.type);
	return TK_EXIT_DATA;
}

/* a trace whose records name no flow has nothing to look for: TK_EXIT_DATA after saying so */
static int check_trace_flows(const struct join *j)
{
	if (j->nflows)
		return TK_EXIT_OK;
	elog("%s: no \"%s\" or \"%s\" record names its flow (%s, %s, %s, %s): nothing to join", j->trace_path,
	     bt_sample_schema.type, bt_collapse_schema.type, bt_sample_schema.fields[BT_F_SADDR].name,
	     bt_sample_schema.fields[BT_F_SPORT].name, bt_sample_schema.fields[BT_F_DADDR].name,
	     bt_sample_schema.fields[BT_F_DPORT].name);
	return TK_EXIT_DATA;
}

/* "10.0.0.1:40000-10.0.0.2:5201, ..." (the first few) */
static void trace_flow_names(const struct join *j, char *buf, size_t len)
{
	enum { SHOWN = 3 };
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < j->nflows && i < SHOWN && n < len; i++) {
		const struct tr_flow *f = &j->flows[i];
		char s[64], d[64];

		an_fmt_endpoint(f->family, f->saddr, f->sport, s, sizeof(s));
		an_fmt_endpoint(f->family, f->daddr, f->dport, d, sizeof(d));
		n += (size_t)snprintf(buf + n, len - n, "%s%s-%s", i ? ", " : "", s, d);
	}
	if (j->nflows > SHOWN && n < len)
		snprintf(buf + n, len - n, " and %u more", j->nflows - SHOWN);
}

/* none of the trace's flows in the capture: every record would go unmatched */
static bool flows_absent(const struct join *j, const struct join_opts *op, const struct an *a)
{
	char names[320], what[32];
	const char *cap;

	for (uint32_t i = 0; i < a->nflows; i++)
		if (a->flows[i]->selected)
			return false;
	trace_flow_names(j, names, sizeof(names));
	cap = bp_input_name(&op->in, what, sizeof(what));
	if (a->nflows)
		elog("join: %s %s none of the trace's flows (%s), but %u other%s (`bbrpcap flows` lists them): "
		     "nothing to join",
		     cap, op->in.n == 1 ? "holds" : "hold", names, a->nflows, a->nflows == 1 ? "" : "s");
	else
		elog("join: %s %s none of the trace's flows (%s), and no other TCP flow: nothing to join", cap,
		     op->in.n == 1 ? "holds" : "hold", names);
	return true;
}

/* the analysis of the trace's flows only */
static struct an *trace_analysis(struct join *j, struct an_sel **sel)
{
	struct an_config cfg = { .acks = true, .delack_ns = BT_DELACK_FLOOR_US * 1000LL };
	struct an *a;

	*sel = calloc(j->nflows, sizeof(**sel));
	if (!*sel)
		return NULL;
	for (uint32_t i = 0; i < j->nflows; i++) {
		(*sel)[i].nend = 2;
		for (int k = 0; k < 2; k++) {
			(*sel)[i].end[k].family = j->flows[i].family;
			memcpy((*sel)[i].end[k].addr, k ? j->flows[i].daddr : j->flows[i].saddr, 16);
			(*sel)[i].end[k].port = k ? j->flows[i].dport : j->flows[i].sport;
		}
	}
	cfg.sel = *sel;
	cfg.nsel = j->nflows;
	cfg.on_ack = on_ack;
	cfg.ctx = j;
	a = an_new(&cfg);
	if (!a)
		free(*sel);
	return a;
}

/* the capture's ACKs of the trace's flows into j->m.evs; a TK_EXIT_* code,
 * and whether there is anything to join (the capture read, at least in part,
 * and holding one of the trace's flows) */
static int read_capture(struct join *j, struct join_opts *op, bool *joinable)
{
	struct an_sel *sel;
	struct an *a = trace_analysis(j, &sel);
	int rc;

	*joinable = false;
	if (!a) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	rc = bp_analyse(&op->in, a, joinable);
	j->t0_ns = a->t0_ns;
	if (*joinable && rc != TK_EXIT_FAIL && flows_absent(j, op, a)) {
		*joinable = false;
		rc = TK_EXIT_DATA;
	}
	an_free(a);
	free(sel);
	free(op->in.order);
	if (j->oom) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	return rc;
}

struct join_counts {
	uint64_t samples, samples_matched, collapses, collapses_matched, stalls, stalls_matched;
};

/* every trace record again, joined, to out; one line per collapse to lines */
static int write_output(const struct join *j, FILE *out, FILE *lines, const char *out_name,
			struct join_counts *n)
{
	struct rec_writer *w = rec_writer_new(REC_JSON, out);
	struct jl_obj *o = malloc(sizeof(*o));
	char *scratch = NULL;
	size_t scap = 0;
	int rc = TK_EXIT_OK;

	for (size_t i = 0; w && o && rc == TK_EXIT_OK && i < j->m.nrecs; i++) {
		const struct jm_rec *r = &j->m.recs[i];
		char err[128];

		if (r->len + 1 > scap) {
			char *ns = realloc(scratch, scap = r->len + 4097);

			if (!ns) {
				elog("out of memory");
				rc = TK_EXIT_FAIL;
				break;
			}
			scratch = ns;
		}
		memcpy(scratch, j->buf + r->off, r->len);
		scratch[r->len] = '\0';
		if (jl_parse(scratch, o, err, sizeof(err)))
			continue; /* cannot happen: the first pass parsed it */
		if (write_joined(w, j, r, o)) {
			elog("%s: write failed: %s", out_name, strerror(errno));
			rc = TK_EXIT_FAIL;
		} else if (r->kind == JM_SAMPLE) {
			n->samples++;
			n->samples_matched += r->ev >= 0;
		} else if (r->kind == JM_COLLAPSE) {
			n->collapses++;
			n->collapses_matched += r->ev >= 0;
			rec_writer_flush(w); /* keep the lines after their records when both go to stdout */
			collapse_line(lines, j, r, o);
		} else if (r->kind == JM_STALL) {
			n->stalls++;
			n->stalls_matched += r->ev >= 0;
		}
	}
	if (!w || !o) {
		elog("out of memory");
		rc = TK_EXIT_FAIL;
	}
	if (w && rec_writer_free(w) && rc == TK_EXIT_OK) {
		elog("%s: write failed", out_name);
		rc = TK_EXIT_FAIL;
	}
	free(o);
	free(scratch);
	return rc;
}

static void join_free(struct join *j)
{
	if (j->mapped)
		munmap(j->buf, j->size);
	else
		free(j->buf);
	free(j->m.recs);
	free(j->flows);
	free(j->cookies);
	free(j->m.evs);
	free(j->flow_map);
}

/* matches, writes, reports; a TK_EXIT_* code */
static int join_and_write(struct join *j, const struct join_opts *op, int trc, int arc)
{
	struct join_counts n = { 0 };
	FILE *out = stdout;
	size_t support = 0;
	int rc;

	jm_sort_events(&j->m);
	if (jm_estimate_offset(&j->m, &support))
		vlog("clock offset (capture - trace): %.3f us, from %zu candidate frames",
		     (double)j->m.offset_ns * 1e-3, support);
	jm_match(&j->m, (int64_t)llround(op->max_skew_ms * 1e6));
	if (j->m.oom) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	if (op->out_path && !(out = fopen(op->out_path, "w"))) {
		elog("%s: cannot create: %s", op->out_path, strerror(errno));
		return TK_EXIT_FAIL;
	}
	rc = write_output(j, out, op->out_path ? stdout : stderr, op->out_path ?: "stdout", &n);
	if (out != stdout && fclose(out) && rc == TK_EXIT_OK) {
		elog("%s: write failed", op->out_path);
		rc = TK_EXIT_FAIL;
	}
	if (rc != TK_EXIT_OK)
		return rc;
	ilog("matched %llu of %llu samples and %llu of %llu collapses to frames; clock offset (capture - trace) "
	     "%.3f ms",
	     (unsigned long long)n.samples_matched, (unsigned long long)n.samples,
	     (unsigned long long)n.collapses_matched, (unsigned long long)n.collapses,
	     (double)j->m.offset_ns * 1e-6);
	if (n.stalls)
		ilog("matched %llu of %llu stalls to the ACK each waited for (a stall that the next write "
		     "ended may have none: its ACK also covered newer data)",
		     (unsigned long long)n.stalls_matched, (unsigned long long)n.stalls);
	if (trc > 0 || arc == TK_EXIT_DATA)
		return TK_EXIT_DATA;
	if (op->strict && n.collapses_matched < n.collapses)
		return TK_EXIT_UNMATCHED;
	return TK_EXIT_OK;
}

int bp_join_main(int argc, char **argv)
{
	struct join_opts op = { .reader = CAP_READER_MMAP, .max_skew_ms = MAX_SKEW_MS_DEFAULT };
	struct join j = { 0 };
	bool joinable = false;
	int rc, trc, arc;

	parse_join_args(argc, argv, &j, &op);
	rc = load_file(&j, j.trace_path);
	if (rc != TK_EXIT_OK)
		return rc;
	trc = read_trace(&j);
	rc = trc < 0 ? TK_EXIT_FAIL : trc == 2 ? TK_EXIT_DATA : trc == 0 ? check_trace(&j) : TK_EXIT_OK;
	if (rc == TK_EXIT_OK)
		rc = check_trace_flows(&j);
	if (rc == TK_EXIT_OK) {
		arc = read_capture(&j, &op, &joinable);
		rc = arc == TK_EXIT_FAIL || !joinable ? arc : join_and_write(&j, &op, trc, arc);
	}
	join_free(&j);
	return rc;
}
