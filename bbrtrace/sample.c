// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "bbrtrace/sample.h"
#include "cli.h"
#include "common.h"

uint64_t bt_bw_to_bps(uint32_t bw, uint32_t mss)
{
	/* bw * mss * 8 * 10^6 >> 24 overflows 64 bits for large bw * mss */
	unsigned __int128 v = (unsigned __int128)bw * mss * 8 * 1000000;

	return (uint64_t)(v >> BT_BW_SCALE);
}

static const char *const mode_names[] = { "STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT" };

const char *bt_mode_name(uint8_t mode)
{
	return mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "UNKNOWN";
}

int bt_mode_parse(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(mode_names); i++)
		if (!strcmp(name, mode_names[i]))
			return (int)i;
	return -1;
}

void bt_sample_decode(struct bt_sample *s, const struct bt_event *e, int64_t mono_to_wall_ns)
{
	s->t_ns = e->t_ns;
	s->wall_ns = (uint64_t)((int64_t)e->t_ns + mono_to_wall_ns);
	s->cookie = e->cookie;
	memcpy(s->saddr, e->saddr, 16);
	memcpy(s->daddr, e->daddr, 16);
	s->sport = e->sport;
	s->dport = e->dport;
	s->netns = e->netns;
	s->snd_una = e->snd_una;
	s->snd_nxt = e->snd_nxt;
	s->mss = e->mss;
	s->cwnd = e->cwnd;
	/* ~0UL is the kernel's "no pacing rate yet" (ss filters it too) */
	s->pacing_rate_valid = e->pacing_rate != ~0ULL && e->pacing_rate != 0xffffffffULL;
	s->pacing_rate_bps = s->pacing_rate_valid ? e->pacing_rate * 8 : 0;
	s->delivered = e->delivered;
	s->interval_us = e->interval_us;
	s->snd_interval_us = e->snd_interval_us;
	s->rcv_interval_us = e->rcv_interval_us;
	s->rtt_us = e->rtt_us;
	s->losses = e->losses;
	s->acked_sacked = e->acked_sacked;
	s->prior_in_flight = e->prior_in_flight;
	s->is_app_limited = e->is_app_limited;
	s->is_retrans = e->is_retrans;
	s->is_ack_delayed = e->is_ack_delayed;
	/* the same validity rule as bbr_update_bw() */
	s->sample_valid = e->delivered >= 0 && e->interval_us > 0;
	s->sample_bw_bps = s->sample_valid ? (uint64_t)((unsigned __int128)e->delivered * e->mss * 8 *
							 1000000 / (uint64_t)e->interval_us)
					   : 0;
	s->bw_prev_bps = bt_bw_to_bps(e->bw_prev, e->mss);
	s->bw_bps = bt_bw_to_bps(e->bw, e->mss);
	s->mode = e->mode;
	s->pacing_gain = (double)e->pacing_gain / BT_GAIN_UNIT;
	s->cwnd_gain = (double)e->cwnd_gain / BT_GAIN_UNIT;
	s->min_rtt_us = e->min_rtt_us;
	s->lt_use_bw = e->lt_use_bw;
	s->lt_bw_bps = bt_bw_to_bps(e->lt_bw, e->mss);
	s->fin_acked = e->fin_acked;
}

static const struct rec_field sample_fields[BT_SAMPLE_NFIELDS] = {
	BT_FLOW_FIELDS,
	{ "snd_nxt", REC_U64 },
	{ "mss", REC_U64 },
	{ "cwnd", REC_U64, 0, "cwnd", 5 },
	{ "pacing_rate_bps", REC_U64 },
	{ "delivered", REC_I64, 0, "dlv", 4 },
	{ "interval_us", REC_I64 },
	{ "snd_interval_us", REC_U64, 0, "snd us", 7 },
	{ "rcv_interval_us", REC_U64, 0, "rcv us", 7 },
	{ "rtt_us", REC_I64, 0, "rtt us", 6 },
	{ "losses", REC_I64 },
	{ "acked_sacked", REC_U64 },
	{ "prior_in_flight", REC_U64 },
	{ "is_app_limited", REC_BOOL, 0, "app", 3 },
	{ "is_retrans", REC_BOOL },
	{ "is_ack_delayed", REC_BOOL },
	{ "sample_bw_bps", REC_U64, 0, "smpl Mb/s", 9, BT_MBPS, 1 },
	{ "bw_prev_bps", REC_U64, 0, "bw0 Mb/s", 8, BT_MBPS, 1 },
	{ "bw_bps", REC_U64, 0, "bw Mb/s", 8, BT_MBPS, 1 },
	{ "mode", REC_STR, 0, "mode", -9 },
	{ "pacing_gain", REC_F64, 3, "pg", 4, 0, 2 },
	{ "cwnd_gain", REC_F64, 3 },
	{ "min_rtt_us", REC_U64, 0, "mrtt us", 7 },
	{ "lt_use_bw", REC_BOOL },
};

const struct rec_schema bt_sample_schema = { "sample", sample_fields, ARRAY_SIZE(sample_fields) };

void bt_flow_values(const struct bt_sample *s, uint64_t t0_ns, struct bt_sample_strs *strs,
		    struct rec_value *v)
{
	v[0] = rv_f64((double)(int64_t)(s->t_ns - t0_ns) * 1e-9);
	v[1] = rv_u64(s->t_ns);
	v[2] = rv_u64(s->wall_ns);
	v[3] = rv_u64(s->cookie);
	v[4] = rv_str(cli_fmt_v6mapped(s->saddr, strs->saddr, sizeof(strs->saddr)));
	v[5] = rv_str(cli_fmt_v6mapped(s->daddr, strs->daddr, sizeof(strs->daddr)));
	v[6] = rv_u64(s->sport);
	v[7] = rv_u64(s->dport);
	v[8] = rv_u64(s->snd_una);
}

void bt_rate_values(const struct bt_sample *s, struct rec_value *v)
{
	v[0] = rv_i64(s->delivered);
	v[1] = rv_i64(s->interval_us);
	v[2] = rv_u64(s->snd_interval_us);
	v[3] = rv_u64(s->rcv_interval_us);
	v[4] = rv_i64(s->rtt_us);
	v[5] = rv_i64(s->losses);
	v[6] = rv_u64(s->acked_sacked);
	v[7] = rv_u64(s->prior_in_flight);
	v[8] = rv_bool(s->is_app_limited);
	v[9] = rv_bool(s->is_retrans);
	v[10] = rv_bool(s->is_ack_delayed);
	v[11] = s->sample_valid ? rv_u64(s->sample_bw_bps) : rv_null();
}

void bt_sample_values(const struct bt_sample *s, uint64_t t0_ns, struct bt_sample_strs *strs,
		      struct rec_value *v)
{
	bt_flow_values(s, t0_ns, strs, v);
	v[9] = rv_u64(s->snd_nxt);
	v[10] = rv_u64(s->mss);
	v[11] = rv_u64(s->cwnd);
	v[12] = s->pacing_rate_valid ? rv_u64(s->pacing_rate_bps) : rv_null();
	bt_rate_values(s, v + 13);
	v[25] = rv_u64(s->bw_prev_bps);
	v[26] = rv_u64(s->bw_bps);
	v[27] = rv_str(bt_mode_name(s->mode));
	v[28] = rv_f64(s->pacing_gain);
	v[29] = rv_f64(s->cwnd_gain);
	v[30] = rv_u64(s->min_rtt_us);
	v[31] = rv_bool(s->lt_use_bw);
}
