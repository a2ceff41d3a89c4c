// SPDX-License-Identifier: GPL-2.0-only
/*
 * A kernel event decoded into a trace sample: BBR's bandwidth unit (packets
 * per usec << 24) in bit/s, computed in 128 bits, and the kernel's own
 * rules for an unset pacing rate and a valid rate sample.
 */
#include <string.h>

#include "bbrtrace/sample.h"
#include "common.h"

uint64_t bt_bw_to_bps(uint32_t bw, uint32_t mss)
{
	/* bw * mss * 8 * 10^6 >> 24 overflows 64 bits for large bw * mss */
	unsigned __int128 v = (unsigned __int128)bw * mss * 8 * TK_USEC_PER_SEC;

	return (uint64_t)(v >> BT_BW_SCALE);
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
							 TK_USEC_PER_SEC / (uint64_t)e->interval_us)
					   : 0;
	s->bw_prev_bps = bt_bw_to_bps(e->bw_prev, e->mss);
	s->bw_bps = bt_bw_to_bps(e->bw, e->mss);
	s->mode = e->mode;
	s->pacing_gain = (double)e->pacing_gain / BT_GAIN_UNIT;
	s->cwnd_gain = (double)e->cwnd_gain / BT_GAIN_UNIT;
	s->min_rtt_us = e->min_rtt_us;
	s->lt_use_bw = e->lt_use_bw;
	s->lt_bw_bps = bt_bw_to_bps(e->lt_bw, e->mss);
	s->write_seq = e->write_seq;
	s->snd_wnd = e->snd_wnd;
	s->nonagle = e->nonagle;
	s->tlp_out = e->tlp_out;
	s->sent_ago_us = e->sent_ago_us;
	s->fin_acked = e->fin_acked;
	s->kind = e->kind;
	s->filter_bw[0] = e->bw;
	s->filter_bw[1] = e->bw1;
	s->filter_bw[2] = e->bw2;
	s->filter_known = e->kind == BT_KIND_ACK;
}
