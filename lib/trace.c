// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace's names and fields: collapse and stall causes, impacts, stall
 * ends and BBR's modes by name, and each field defined once (JSON name, type,
 * value written, how it is read back) for the writer and reader of each record.
 */
#include <string.h>

#include "cli.h"
#include "common.h"
#include "trace.h"
#include "bpf/contract/bbrtrace.h"

#define BT_CAUSE_NAME(id, name, label) name,
#define BT_CAUSE_LABEL(id, name, label) label,
const char *const bt_cause_names[BT_NCAUSES] = { BT_CAUSES(BT_CAUSE_NAME) };
const char *const bt_cause_labels[BT_NCAUSES] = { BT_CAUSES(BT_CAUSE_LABEL) };

/* the index of name in names[0..n), or -1 */
static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; name && i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int bt_cause_parse(const char *name)
{
	return name_index(bt_cause_names, BT_NCAUSES, name);
}

#define BT_IMPACT_NAME(id, name, label) name,
const char *const bt_impact_names[BT_NIMPACTS] = { BT_IMPACTS(BT_IMPACT_NAME) };

int bt_impact_parse(const char *name)
{
	return name_index(bt_impact_names, BT_NIMPACTS, name);
}

#define BT_STALL_NAME(id, name, what, fix) name,
#define BT_STALL_WHAT(id, name, what, fix) what,
#define BT_STALL_FIX(id, name, what, fix) fix,
const char *const bt_stall_cause_names[BT_NSTALL_CAUSES] = { BT_STALL_CAUSES(BT_STALL_NAME) };
const char *const bt_stall_cause_whats[BT_NSTALL_CAUSES] = { BT_STALL_CAUSES(BT_STALL_WHAT) };
const char *const bt_stall_cause_fixes[BT_NSTALL_CAUSES] = { BT_STALL_CAUSES(BT_STALL_FIX) };

int bt_stall_cause_parse(const char *name)
{
	return name_index(bt_stall_cause_names, BT_NSTALL_CAUSES, name);
}

#define BT_STALL_END_NAME(id, name) name,
const char *const bt_stall_end_names[BT_NSTALL_ENDS] = { BT_STALL_ENDS(BT_STALL_END_NAME) };

int bt_stall_end_parse(const char *name)
{
	return name_index(bt_stall_end_names, BT_NSTALL_ENDS, name);
}

/* indexed by enum bt_mode (bpf/contract/bbrtrace.h) */
static const char *const mode_names[] = { "STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT", "HANDSHAKE" };
_Static_assert(ARRAY_SIZE(mode_names) == BT_HANDSHAKE + 1, "a name for every enum bt_mode");

const char *bt_mode_name(uint8_t mode)
{
	return mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "UNKNOWN";
}

bool bt_mode_is_handshake(uint8_t mode)
{
	return mode == BT_HANDSHAKE;
}

int bt_mode_parse(const char *name)
{
	return name_index(mode_names, (int)ARRAY_SIZE(mode_names), name);
}

/*
 * How a reader stores a field back, as a statement expression that is true
 * when the line held it: `f` is the line's field of that key (or NULL).
 */
#define RD_NONE ((void)f, false)
#define RD_NUM(lv, getter, T)                                                            \
	({                                                                               \
		T t_;                                                                    \
		bool ok_ = getter(f, &t_);                                               \
		if (ok_)                                                                 \
			(lv) = (__typeof__(lv))t_;                                       \
		ok_;                                                                     \
	})
#define RD_U64(lv) RD_NUM(lv, jl_field_u64, uint64_t)
#define RD_I64(lv) RD_NUM(lv, jl_field_i64, int64_t)
#define RD_F64(lv) RD_NUM(lv, jl_field_num, double)
#define RD_BOOL(lv) RD_NUM(lv, jl_field_bool, bool)
/* a number, or null for "not valid" */
#define RD_U64_OR_NULL(lv, valid) ((valid) = RD_U64(lv), (valid) || (f && f->kind == JL_NULL))
#define RD_ADDR(arr) rd_addr(jl_field_str(f), arr)
#define RD_MODE(lv) rd_enum(jl_field_str(f), bt_mode_parse, &(lv))
#define RD_CAUSE(lv) rd_named(jl_field_str(f), bt_cause_parse, &(lv))
#define RD_IMPACT(lv) rd_named(jl_field_str(f), bt_impact_parse, &(lv))
#define RD_STALL_CAUSE(lv) rd_named(jl_field_str(f), bt_stall_cause_parse, &(lv))
#define RD_STALL_END(lv) rd_named(jl_field_str(f), bt_stall_end_parse, &(lv))
#define RD_STR(arr) rd_str(jl_field_str(f), arr, sizeof(arr))

static bool rd_addr(const char *s, uint8_t out[16])
{
	struct cli_addr a;

	if (!s || cli_scan_addr(s, &a))
		return false;
	cli_addr_to_v6mapped(&a, out);
	return true;
}

static bool rd_enum(const char *s, int (*parse)(const char *), uint8_t *out)
{
	int v = parse(s);

	if (v < 0)
		return false;
	*out = (uint8_t)v;
	return true;
}

/* a name back into its enum's value, through parse; false when it is none */
#define rd_named(s, parse, out)                                                          \
	({                                                                               \
		int v_ = parse(s);                                                       \
		if (v_ >= 0)                                                             \
			*(out) = (__typeof__(*(out)))v_;                                 \
		v_ >= 0;                                                                 \
	})

static bool rd_str(const char *s, char *out, size_t len)
{
	if (!s)
		return false;
	snprintf(out, len, "%s", s);
	return true;
}

/*
 * Every field of the trace, once: ID, JSON name (NULL: a table-only
 * column), type, JSON decimals, the value written, and how a reader stores
 * it back. `a` is the ACK's sample, `r` the sample whose rate fields the
 * record carries (the ACK's own, or a collapse's culprit), `c` a collapse.
 */
#define BT_FIELD_TIME_S NULL, REC_F64, 6, rv_f64((double)(int64_t)(a->t_ns - t0_ns) * TK_SEC_PER_NSEC_F), RD_NONE
#define BT_FIELD_T_NS "t_ns", REC_U64, 0, rv_u64(a->t_ns), RD_U64(a->t_ns)
#define BT_FIELD_WALL_NS "wall_ns", REC_U64, 0, rv_u64(a->wall_ns), RD_U64(a->wall_ns)
#define BT_FIELD_COOKIE "cookie", REC_U64, 0, rv_u64(a->cookie), RD_U64(a->cookie)
#define BT_FIELD_SADDR "saddr", REC_STR, 0, \
	rv_str(cli_fmt_v6mapped(a->saddr, strs->saddr, sizeof(strs->saddr))), RD_ADDR(a->saddr)
#define BT_FIELD_DADDR "daddr", REC_STR, 0, \
	rv_str(cli_fmt_v6mapped(a->daddr, strs->daddr, sizeof(strs->daddr))), RD_ADDR(a->daddr)
#define BT_FIELD_SPORT "sport", REC_U64, 0, rv_u64(a->sport), RD_U64(a->sport)
#define BT_FIELD_DPORT "dport", REC_U64, 0, rv_u64(a->dport), RD_U64(a->dport)
#define BT_FIELD_SND_UNA "snd_una", REC_U64, 0, rv_u64(a->snd_una), RD_U64(a->snd_una)
#define BT_FIELD_SND_NXT "snd_nxt", REC_U64, 0, rv_u64(a->snd_nxt), RD_U64(a->snd_nxt)
#define BT_FIELD_MSS "mss", REC_U64, 0, rv_u64(a->mss), RD_U64(a->mss)
#define BT_FIELD_CWND "cwnd", REC_U64, 0, rv_u64(a->cwnd), RD_U64(a->cwnd)
#define BT_FIELD_PACING_RATE_BPS "pacing_rate_bps", REC_U64, 0, \
	a->pacing_rate_valid ? rv_u64(a->pacing_rate_bps) : rv_null(), \
	RD_U64_OR_NULL(a->pacing_rate_bps, a->pacing_rate_valid)
#define BT_FIELD_DELIVERED "delivered", REC_I64, 0, rv_i64(r->delivered), RD_I64(r->delivered)
#define BT_FIELD_INTERVAL_US "interval_us", REC_I64, 0, rv_i64(r->interval_us), RD_I64(r->interval_us)
#define BT_FIELD_SND_INTERVAL_US "snd_interval_us", REC_U64, 0, rv_u64(r->snd_interval_us), \
	RD_U64(r->snd_interval_us)
#define BT_FIELD_RCV_INTERVAL_US "rcv_interval_us", REC_U64, 0, rv_u64(r->rcv_interval_us), \
	RD_U64(r->rcv_interval_us)
#define BT_FIELD_RTT_US "rtt_us", REC_I64, 0, rv_i64(r->rtt_us), RD_I64(r->rtt_us)
#define BT_FIELD_LOSSES "losses", REC_I64, 0, rv_i64(r->losses), RD_I64(r->losses)
#define BT_FIELD_ACKED_SACKED "acked_sacked", REC_U64, 0, rv_u64(r->acked_sacked), \
	RD_U64(r->acked_sacked)
#define BT_FIELD_PRIOR_IN_FLIGHT "prior_in_flight", REC_U64, 0, rv_u64(r->prior_in_flight), \
	RD_U64(r->prior_in_flight)
#define BT_FIELD_IS_APP_LIMITED "is_app_limited", REC_BOOL, 0, rv_bool(r->is_app_limited), \
	RD_BOOL(r->is_app_limited)
#define BT_FIELD_IS_RETRANS "is_retrans", REC_BOOL, 0, rv_bool(r->is_retrans), RD_BOOL(r->is_retrans)
#define BT_FIELD_IS_ACK_DELAYED "is_ack_delayed", REC_BOOL, 0, rv_bool(r->is_ack_delayed), \
	RD_BOOL(r->is_ack_delayed)
/* null when BBR would ignore the sample (delivered < 0 or interval <= 0) */
#define BT_FIELD_SAMPLE_BW_BPS "sample_bw_bps", REC_U64, 0, \
	r->sample_valid ? rv_u64(r->sample_bw_bps) : rv_null(), \
	RD_U64_OR_NULL(r->sample_bw_bps, r->sample_valid)
#define BT_FIELD_BW_PREV_BPS "bw_prev_bps", REC_U64, 0, rv_u64(a->bw_prev_bps), RD_U64(a->bw_prev_bps)
#define BT_FIELD_BW_BPS "bw_bps", REC_U64, 0, rv_u64(a->bw_bps), RD_U64(a->bw_bps)
#define BT_FIELD_MODE "mode", REC_STR, 0, rv_str(bt_mode_name(a->mode)), RD_MODE(a->mode)
#define BT_FIELD_PACING_GAIN "pacing_gain", REC_F64, 3, rv_f64(a->pacing_gain), RD_F64(a->pacing_gain)
#define BT_FIELD_CWND_GAIN "cwnd_gain", REC_F64, 3, rv_f64(a->cwnd_gain), RD_F64(a->cwnd_gain)
#define BT_FIELD_MIN_RTT_US "min_rtt_us", REC_U64, 0, rv_u64(a->min_rtt_us), RD_U64(a->min_rtt_us)
#define BT_FIELD_LT_USE_BW "lt_use_bw", REC_BOOL, 0, rv_bool(a->lt_use_bw), RD_BOOL(a->lt_use_bw)
#define BT_FIELD_LT_BW_BPS "lt_bw_bps", REC_U64, 0, rv_u64(a->lt_bw_bps), RD_U64(a->lt_bw_bps)
#define BT_FIELD_WRITE_SEQ "write_seq", REC_U64, 0, rv_u64(a->write_seq), RD_U64(a->write_seq)
#define BT_FIELD_SND_WND "snd_wnd", REC_U64, 0, rv_u64(a->snd_wnd), RD_U64(a->snd_wnd)
#define BT_FIELD_NONAGLE "nonagle", REC_U64, 0, rv_u64(a->nonagle), RD_U64(a->nonagle)
/* `x`: a stall */
#define BT_FIELD_DURATION_US "duration_us", REC_U64, 0, rv_u64(x->duration_us), RD_U64(x->duration_us)
#define BT_FIELD_STALL_CAUSE "cause", REC_STR, 0, rv_str(bt_stall_cause_names[x->cause]), \
	RD_STALL_CAUSE(x->cause)
#define BT_FIELD_ENDED_BY "ended_by", REC_STR, 0, rv_str(bt_stall_end_names[x->ended_by]), \
	RD_STALL_END(x->ended_by)
#define BT_FIELD_HELD_BYTES "held_bytes", REC_U64, 0, rv_u64(x->held_bytes), RD_U64(x->held_bytes)
#define BT_FIELD_IN_FLIGHT_BYTES "in_flight_bytes", REC_U64, 0, rv_u64(x->in_flight_bytes), \
	RD_U64(x->in_flight_bytes)
#define BT_FIELD_FIX "fix", REC_STR, 0, rv_str(bt_stall_cause_fixes[x->cause]), RD_NONE
#define BT_FIELD_STALL_EVIDENCE "evidence", REC_STR, 0, rv_str(x->evidence), RD_STR(x->evidence)
#define BT_FIELD_DROP_RATIO "drop_ratio", REC_F64, 4, rv_f64(c->drop_ratio), RD_F64(c->drop_ratio)
#define BT_FIELD_CAUSE "cause", REC_STR, 0, rv_str(bt_cause_names[c->cause]), RD_CAUSE(c->cause)
#define BT_FIELD_IMPACT "impact", REC_STR, 0, rv_str(bt_impact_names[c->impact]), RD_IMPACT(c->impact)
#define BT_FIELD_HEADROOM "headroom", REC_F64, 3, rv_f64(c->headroom), RD_F64(c->headroom)
#define BT_FIELD_DEMAND_BPS "demand_bps", REC_U64, 0, rv_u64(c->demand_bps), RD_U64(c->demand_bps)
#define BT_FIELD_NEED_BPS "need_bps", REC_U64, 0, rv_u64(c->need_bps), RD_U64(c->need_bps)
#define BT_FIELD_RESET_BY_ACK "reset_by_ack", REC_BOOL, 0, rv_bool(c->reset_by_ack), \
	RD_BOOL(c->reset_by_ack)
#define BT_FIELD_SAMPLE_T_NS "sample_t_ns", REC_U64, 0, rv_u64(r->t_ns), RD_U64(r->t_ns)
#define BT_FIELD_EVIDENCE "evidence", REC_STR, 0, rv_str(c->evidence), RD_STR(c->evidence)

/* the parts of a field's definition, picked by position */
#define BT_EXPAND(m, ...) m(__VA_ARGS__)
#define BT_PART_SCHEMA(name, type, dec, value, read) name, type, dec
#define BT_PART_VALUE(name, type, dec, value, read) value
#define BT_PART_KEY(name, type, dec, value, read) name
#define BT_PART_READ(name, type, dec, value, read) read

#define BT_SCHEMA_ENTRY(id, head, width, scale, prec) \
	{ BT_EXPAND(BT_PART_SCHEMA, BT_FIELD_##id), head, width, scale, prec },
#define BT_VALUE_ENTRY(id, head, width, scale, prec) v[i++] = BT_EXPAND(BT_PART_VALUE, BT_FIELD_##id);
#define BT_KEY_ENTRY(id, head, width, scale, prec) BT_EXPAND(BT_PART_KEY, BT_FIELD_##id),
/* a writer puts field i at position i of the line ("type" first, the table's
 * time column not at all), so the lookup looks there first */
#define BT_READ_ENTRY(id, head, width, scale, prec)                                        \
	{                                                                                  \
		const struct jl_field *f = keys[i] ? jl_get_at(o, keys[i], i) : NULL;      \
		if (BT_EXPAND(BT_PART_READ, BT_FIELD_##id)) {                             \
			fs->bits[i / 64] |= 1ULL << (i % 64);                              \
			found++;                                                           \
		}                                                                          \
		i++;                                                                       \
	}

static const struct rec_field sample_fields[] = { BT_SAMPLE_COLUMNS(BT_SCHEMA_ENTRY) };
static const struct rec_field collapse_fields[] = { BT_COLLAPSE_COLUMNS(BT_SCHEMA_ENTRY) };
static const char *const sample_keys[] = { BT_SAMPLE_COLUMNS(BT_KEY_ENTRY) };
static const char *const collapse_keys[] = { BT_COLLAPSE_COLUMNS(BT_KEY_ENTRY) };
static const struct rec_field stall_fields[] = { BT_STALL_COLUMNS(BT_SCHEMA_ENTRY) };
static const char *const stall_keys[] = { BT_STALL_COLUMNS(BT_KEY_ENTRY) };

_Static_assert(ARRAY_SIZE(sample_fields) == BT_SAMPLE_NFIELDS, "one schema entry per sample field");
_Static_assert(ARRAY_SIZE(collapse_fields) == BT_COLLAPSE_NFIELDS, "one schema entry per collapse field");
#define BT_SAME_PLACE(id, head, width, scale, prec)                                        \
	_Static_assert((int)BT_F_##id == (int)BT_S_##id && (int)BT_F_##id == (int)BT_C_##id && \
			       (int)BT_F_##id == (int)BT_T_##id,                                 \
		       "the flow columns lead every record type");
BT_FLOW_COLUMNS(BT_SAME_PLACE)
_Static_assert(BT_COLLAPSE_NFIELDS <= 128 && BT_SAMPLE_NFIELDS <= 128, "struct bt_fieldset holds 128 bits");

const struct rec_schema bt_sample_schema = { "sample", sample_fields, BT_SAMPLE_NFIELDS, .fixed = true };
const struct rec_schema bt_collapse_schema = { "collapse", collapse_fields, BT_COLLAPSE_NFIELDS,
						    .fixed = true };
const struct rec_schema bt_stall_schema = { "stall", stall_fields, BT_STALL_NFIELDS, .fixed = true };

const char *bt_sample_key(enum bt_sample_field f)
{
	return (unsigned int)f < BT_SAMPLE_NFIELDS ? sample_keys[f] : NULL;
}

const char *bt_collapse_key(enum bt_collapse_field f)
{
	return (unsigned int)f < BT_COLLAPSE_NFIELDS ? collapse_keys[f] : NULL;
}

/* the strings a record's values point into */
struct bt_record_strs {
	char saddr[48], daddr[48];
};

int bt_sample_write(struct rec_writer *w, const struct bt_sample *s, uint64_t t0_ns)
{
	const struct bt_sample *a = s, *r = s;
	struct rec_value v[BT_SAMPLE_NFIELDS];
	struct bt_record_strs st, *strs = &st;
	unsigned int i = 0;

	BT_SAMPLE_COLUMNS(BT_VALUE_ENTRY)
	return rec_write(w, &bt_sample_schema, v);
}

int bt_collapse_write(struct rec_writer *w, const struct bt_collapse *c, uint64_t t0_ns)
{
	/* in a collapse record, the bw fields carry the estimate BBR paces with */
	struct bt_sample ack = c->ack;
	const struct bt_sample *a = &ack, *r = &c->culprit;
	struct rec_value v[BT_COLLAPSE_NFIELDS];
	struct bt_record_strs st, *strs = &st;
	unsigned int i = 0;

	ack.bw_prev_bps = c->bw_prev_bps;
	ack.bw_bps = c->bw_bps;
	BT_COLLAPSE_COLUMNS(BT_VALUE_ENTRY)
	return rec_write(w, &bt_collapse_schema, v);
}

int bt_stall_write(struct rec_writer *w, const struct bt_stall *x, uint64_t t0_ns)
{
	const struct bt_sample *a = &x->at;
	struct rec_value v[BT_STALL_NFIELDS];
	struct bt_record_strs st, *strs = &st;
	unsigned int i = 0;

	BT_STALL_COLUMNS(BT_VALUE_ENTRY)
	return rec_write(w, &bt_stall_schema, v);
}

const char *bt_record_type(const struct jl_obj *o)
{
	return jl_str(o, "type");
}

unsigned int bt_sample_read(const struct jl_obj *o, struct bt_sample *s, struct bt_fieldset *fs)
{
	const char *const *keys = sample_keys;
	struct bt_sample *a = s, *r = s;
	unsigned int i = 0, found = 0;

	memset(s, 0, sizeof(*s));
	memset(fs, 0, sizeof(*fs));
	BT_SAMPLE_COLUMNS(BT_READ_ENTRY)
	return found;
}

unsigned int bt_collapse_read(const struct jl_obj *o, struct bt_collapse *c, struct bt_fieldset *fs)
{
	const char *const *keys = collapse_keys;
	struct bt_sample *a = &c->ack, *r = &c->culprit;
	unsigned int i = 0, found = 0;

	memset(c, 0, sizeof(*c));
	memset(fs, 0, sizeof(*fs));
	BT_COLLAPSE_COLUMNS(BT_READ_ENTRY)
	c->bw_prev_bps = a->bw_prev_bps;
	c->bw_bps = a->bw_bps;
	return found;
}

unsigned int bt_stall_read(const struct jl_obj *o, struct bt_stall *x, struct bt_fieldset *fs)
{
	const char *const *keys = stall_keys;
	struct bt_sample *a = &x->at;
	unsigned int i = 0, found = 0;

	memset(x, 0, sizeof(*x));
	memset(fs, 0, sizeof(*fs));
	BT_STALL_COLUMNS(BT_READ_ENTRY)
	return found;
}
