// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join's output: every trace record written again as it came, with
 * where its ACK is in the capture added to samples, collapses and stalls,
 * and one line per collapse that says which frame to open and why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "jsonl.h"
#include "log.h"
#include "pcap/join.h"
#include "record.h"
#include "trace.h"


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
	X("frame_time_s", REC_F64, 6, REC_NOCOL, e ? rv_f64((double)e->ts_ns * TK_SEC_PER_NSEC_F) : rv_null()) \
	X("frame_time_ns", REC_U64, 0, REC_NOCOL, e ? rv_u64((uint64_t)e->ts_ns) : rv_null())  \
	X("frame_time_rel_s", REC_F64, 9, REC_NOCOL,                                         \
	  e ? rv_f64(((double)e->ts_ns - (double)j->t0_ns) * TK_SEC_PER_NSEC_F) : rv_null())        \
	X("ack_delay_us", REC_F64, 3, REC_NOCOL,                                           \
	  e && e->delay_ns >= 0 ? rv_f64((double)e->delay_ns * TK_USEC_PER_NSEC_F) : rv_null())
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
	double m = bps * TK_MBPS_PER_BPS_F;

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
		((double)e->ts_ns - (double)j->t0_ns) * TK_SEC_PER_NSEC_F, r->snd_una);
	if (bt_has(&fs, BT_C_CAUSE) && c.cause == BT_CAUSE_DELAYED_ACK) {
		if (e->delay_ns >= (int64_t)TK_NSEC_PER_MSEC)
			fprintf(out, " came %.1f ms after the data it covers", (double)e->delay_ns * TK_MSEC_PER_NSEC_F);
		else if (e->delay_ns >= 0)
			fprintf(out, " came %.0f \u00b5s after the data it covers", (double)e->delay_ns * TK_USEC_PER_NSEC_F);
		else
			fprintf(out, " covers data that is not in the capture");
	}
	fprintf(out, "; %s; BBR bw %s Mbit/s \u2192 %s Mbit/s\n", cause, bw0, bw1);
}

/* the throttling collapses shown of max_lines: as many as there are, up to it */
static uint64_t throttling_shown(const struct join *j, uint64_t max_lines)
{
	uint64_t n = 0;

	for (size_t i = 0; i < j->m.nrecs && n < max_lines; i++)
		n += j->m.recs[i].kind == JM_COLLAPSE && j->m.recs[i].throttling;
	return n;
}

/* every trace record again, joined, to out; a line for each of max_lines
 * collapses to lines (those that throttled first), then how many more there were */
int join_write_output(const struct join *j, FILE *out, FILE *lines, uint64_t max_lines,
		      const char *out_name, struct join_counts *n)
{
	struct rec_writer *w = rec_writer_new(REC_JSON, out);
	struct jl_obj *o = malloc(sizeof(*o));
	char *scratch = NULL;
	size_t scap = 0;
	int rc = TK_EXIT_OK;
	uint64_t thr_quota = throttling_shown(j, max_lines), harm_quota = max_lines - thr_quota, thr = 0, harm = 0;

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
			if (r->throttling ? thr++ < thr_quota : harm++ < harm_quota) {
				rec_writer_flush(w); /* keep the lines after their records when both go to stdout */
				collapse_line(lines, j, r, o);
			}
		} else if (r->kind == JM_STALL) {
			n->stalls++;
			n->stalls_matched += r->ev >= 0;
		}
	}
	if (rc == TK_EXIT_OK && max_lines && n->collapses > max_lines)
		fprintf(lines, "... and %llu more collapses, %llu of them throttling (-v lists every one)\n",
			(unsigned long long)(n->collapses - max_lines),
			(unsigned long long)(thr > thr_quota ? thr - thr_quota : 0));
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
