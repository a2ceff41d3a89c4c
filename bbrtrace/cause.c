// SPDX-License-Identifier: GPL-2.0-only
/*
 * A collapse's cause: what its culprit sample, the flow's delivery and the
 * sample that set the old maximum show, named by the rules of
 * bbrtrace/rules.h, with the evidence in words (bbrtrace/detect.h lists the
 * causes in the order they are checked).
 */
#include <stdio.h>

#include "bbrtrace/cause.h"
#include "bbrtrace/rules.h"
#include "common.h"

static double ms(uint64_t us)
{
	return (double)us / TK_USEC_PER_MSEC_F;
}

/* ", against the X Mbit/s the flow delivered" into buf when that is known */
static const char *delivered_note(const struct bt_cause_in *in, char *buf, size_t len)
{
	buf[0] = '\0';
	if (in->delivered_bps)
		snprintf(buf, len, ", against the %.3f Mbit/s the flow delivered",
			 (double)in->delivered_bps * TK_MBPS_PER_BPS_F);
	return buf;
}

/* the culprit's receive interval dominates its send interval, past the delayed-ACK floor */
static bool held(const struct bt_cause_in *in, const struct bt_sample *k)
{
	return k->rcv_interval_us >= in->cfg->delack_floor_us &&
	       (double)k->rcv_interval_us >= in->cfg->delack_ratio * (double)k->snd_interval_us;
}

/* more segments than a held ACK holds, sent faster than they came back: they
 * drained through a queue at the path's rate (rate_drop) */
static bool queue_drained(const struct bt_sample *k)
{
	return k->delivered > BT_DELACK_MAX_SEGS && k->rcv_interval_us > k->snd_interval_us;
}

bool bt_cause_in_noise(const struct bt_sample *k)
{
	return k->snd_interval_us < BT_NOISE_FLOOR_US && k->rcv_interval_us < BT_NOISE_FLOOR_US;
}

/* a bulk flow's old maximum, whose sample is known (the evidence), was over
 * BT_BURST_RATIO x what the flow delivered, and the new estimate still carries
 * (1 - collapse ratio) x that (bbrtrace/rules.h); an app-limited flow
 * delivered what it had, which says nothing of its path */
static bool burst_max(const struct bt_cause_in *in, const struct bt_collapse *c)
{
	double d = (double)in->delivered_bps;

	return in->delivered_bps && in->max_sample && !in->app_limited &&
	       (double)c->bw_prev_bps > BT_BURST_RATIO * d &&
	       (double)c->bw_bps >= (1.0 - in->cfg->collapse_ratio) * d;
}

static void classify_burst(const struct bt_cause_in *in, struct bt_collapse *c)
{
	const struct bt_hsample *h = in->max_sample;
	double x = (double)c->bw_prev_bps / (double)in->delivered_bps;
	char *e = c->evidence;
	size_t n = sizeof(c->evidence);

	c->cause = BT_CAUSE_BURST_MAX;
	snprintf(e, n, "BBR's maximum %.3f Mbit/s was %.1fx what the flow delivered (%.3f Mbit/s "
		 "over %u ms at most), set %.3f ms before by %d segments sent in %.3f ms, ACKed "
		 "over %.3f ms: a burst; the estimate is back to %.3f Mbit/s",
		 (double)c->bw_prev_bps * TK_MBPS_PER_BPS_F, x, (double)in->delivered_bps * TK_MBPS_PER_BPS_F,
		 BT_DEMAND_WINDOW_MS, (double)in->max_age_ns / TK_NSEC_PER_MSEC_F, h->delivered,
		 ms(h->snd_interval_us), ms(h->rcv_interval_us), (double)c->bw_bps * TK_MBPS_PER_BPS_F);
}

/* the new estimate is under (1 - collapse ratio) x what the flow delivered, when that is known */
static bool path_gives_less(const struct bt_cause_in *in, const struct bt_collapse *c)
{
	return in->delivered_bps &&
	       (double)c->bw_bps < (1.0 - in->cfg->collapse_ratio) * (double)in->delivered_bps;
}

/*
 * The culprit measured the path (its intervals agree, or a queue drained): a
 * rate_drop when the new estimate is under (1 - collapse ratio) x what the
 * flow delivered (or that is unknown). Otherwise the path still gives what
 * the flow had, and the old maximum was above it: a burst_max (far above, a
 * bulk flow), else an old maximum the filter let go (max_expired). True when
 * it named the cause.
 */
static bool path_still_gives(const struct bt_cause_in *in, struct bt_collapse *c, const char *who)
{
	double d = (double)in->delivered_bps;

	if (!in->delivered_bps || path_gives_less(in, c))
		return false;
	if (burst_max(in, c)) {
		classify_burst(in, c);
		return true;
	}
	c->cause = BT_CAUSE_MAX_EXPIRED;
	snprintf(c->evidence, sizeof(c->evidence),
		 "%s: the path gives %.3f Mbit/s, still %.2fx what the flow delivered (%.3f "
		 "Mbit/s): BBR's old maximum %.3f Mbit/s, above both, left the filter",
		 who, (double)c->bw_bps * TK_MBPS_PER_BPS_F, (double)c->bw_bps / d, d * TK_MBPS_PER_BPS_F,
		 (double)c->bw_prev_bps * TK_MBPS_PER_BPS_F);
	return true;
}

static void classify_queue(const struct bt_cause_in *in, struct bt_collapse *c, const char *who)
{
	const struct bt_sample *k = &c->culprit;

	if (path_still_gives(in, c, who))
		return;
	c->cause = BT_CAUSE_RATE_DROP;
	snprintf(c->evidence, sizeof(c->evidence),
		 "%s: %d segments sent in %.3f ms drained over %.3f ms, at %.3f Mbit/s: a queue "
		 "at the path's rate, not a held ACK (that holds %d segments at most)",
		 who, k->delivered, ms(k->snd_interval_us), ms(k->rcv_interval_us),
		 (double)k->sample_bw_bps * TK_MBPS_PER_BPS_F, BT_DELACK_MAX_SEGS);
}

/* a late ACK: a delayed_ack when it held back one or two segments within the timer's
 * range; many segments that late drained through a queue (rate_drop) */
static void classify_held(const struct bt_cause_in *in, struct bt_collapse *c, const char *who,
			  const char *hint)
{
	const struct bt_sample *k = &c->culprit;
	uint64_t snd = k->snd_interval_us, rcv = k->rcv_interval_us;
	char *e = c->evidence;
	size_t n = sizeof(c->evidence);

	if (queue_drained(k)) {
		classify_queue(in, c, who);
	} else if (rcv > BT_DELACK_CEIL_US) {
		c->cause = BT_CAUSE_OTHER;
		snprintf(e, n,
			 "%s: %d delivered after %.3f ms, longer than any delayed-ACK timer (%.0f ms at "
			 "most): a timeout or a closed window",
			 who, k->delivered, ms(rcv), ms(BT_DELACK_CEIL_US));
	} else {
		c->cause = BT_CAUSE_DELAYED_ACK;
		snprintf(e, n,
			 "%s: rcv_interval %.3f ms >= %g x snd_interval %.3f ms, not app-limited, "
			 "%d delivered in %.3f ms%s",
			 who, ms(rcv), in->cfg->delack_ratio, ms(snd), k->delivered, ms(rcv), hint);
	}
}

/* the filter's window rotated past the old maximum: how old it was, and what set it */
static void classify_expired(const struct bt_cause_in *in, struct bt_collapse *c,
			     const char *who)
{
	uint64_t age_ns = in->max_age_ns;
	const struct bt_hsample *h = in->max_sample;
	char *e = c->evidence;
	size_t n = sizeof(c->evidence);
	uint32_t rtt = c->ack.min_rtt_us;

	c->cause = BT_CAUSE_MAX_EXPIRED;
	if (!h) {
		snprintf(e, n,
			 "BBR's max-bw filter let its old maximum %.3f Mbit/s expire (set before the "
			 "flow's last %d samples); %s, %d delivered, is the largest left",
			 (double)c->bw_prev_bps * TK_MBPS_PER_BPS_F, BT_DETECT_HISTORY, who, c->culprit.delivered);
		return;
	}
	snprintf(e, n,
		 "BBR's max-bw filter let its old maximum %.3f Mbit/s expire after %.3f ms (%.0f "
		 "rounds of min_rtt %u us): %d segments sent in %.3f ms, ACKed over %.3f ms%s; %s, %d "
		 "delivered, is the largest left",
		 (double)c->bw_prev_bps * TK_MBPS_PER_BPS_F, (double)age_ns / TK_NSEC_PER_MSEC_F,
		 rtt ? (double)age_ns / TK_NSEC_PER_USEC_F / rtt : 0.0, rtt, h->delivered, ms(h->snd_interval_us),
		 ms(h->rcv_interval_us), h->snd_interval_us * 10 < h->rcv_interval_us ? " (a burst)" : "",
		 who, c->culprit.delivered);
}

/* neither held nor agreeing: a lone segment ACKed a little late, an old maximum
 * expired, a sender-limited sample, ACK jitter, or other */
static void classify_rest(const struct bt_cause_in *in, struct bt_collapse *c,
			  const char *who, const char *hint)
{
	const struct bt_sample *k = &c->culprit;
	uint64_t snd = k->snd_interval_us, rcv = k->rcv_interval_us;
	char *e = c->evidence;
	size_t n = sizeof(c->evidence);

	if (!k->is_app_limited && k->is_ack_delayed && k->delivered <= BT_DELACK_MAX_SEGS && rcv > snd) {
		c->cause = BT_CAUSE_LONE_SEGMENT;
		snprintf(e, n,
			 "%s: %d segment ACKed alone %.3f ms after it was sent (snd_interval %.3f ms), "
			 "as the kernel's is_ack_delayed says: a sub-MSS segment acknowledged a little "
			 "late, under the %.3f ms delayed-ACK floor",
			 who, k->delivered, ms(rcv), ms(snd), ms(in->cfg->delack_floor_us));
		return;
	}
	if (!c->reset_by_ack) {
		/* the largest sample left drained a bulk flow's queue at a rate
		 * under what the flow delivered: the path gives less, whether a
		 * new sample or the window's rotation let the old maximum go
		 * (the intervals' agreement is judged so either way) */
		if (!k->is_app_limited && !bt_cause_in_noise(k) && queue_drained(k) &&
		    path_gives_less(in, c))
			classify_queue(in, c, who);
		else
			classify_expired(in, c, who);
		return;
	}
	if ((double)snd > in->cfg->agree_ratio * (double)rcv) {
		c->cause = BT_CAUSE_SENDER_LIMITED;
		snprintf(e, n,
			 "%s: snd_interval %.3f ms > %gx rcv_interval %.3f ms: the sender sent its %d "
			 "segments slowly (its own pacing, cwnd or application), so the sample measured "
			 "the sender, not the path",
			 who, ms(snd), in->cfg->agree_ratio, ms(rcv), k->delivered);
		return;
	}
	if (bt_cause_in_noise(k)) {
		c->cause = BT_CAUSE_ACK_JITTER;
		snprintf(e, n,
			 "%s: %d delivered, ACKed %.3f ms after a %.3f ms send, not app-limited: "
			 "both under the %.3f ms noise floor of timing jitter (scheduling, batching), "
			 "not a held ACK (%.3f ms at least) nor a slower path",
			 who, k->delivered, ms(rcv), ms(snd), ms(BT_NOISE_FLOOR_US),
			 ms(in->cfg->delack_floor_us));
		return;
	}
	if (queue_drained(k)) {
		/* a burst sent faster than it came back: a queue draining at the
		 * path's rate, whatever the absolute intervals */
		classify_queue(in, c, who);
		return;
	}
	c->cause = BT_CAUSE_OTHER;
	if (rcv > snd && (double)rcv >= in->cfg->delack_ratio * (double)snd)
		snprintf(e, n,
			 "%s: rcv_interval %.3f ms dominates snd_interval %.3f ms but is under "
			 "the %.3f ms delayed-ACK floor%s",
			 who, ms(rcv), ms(snd), ms(in->cfg->delack_floor_us), hint);
	else
		snprintf(e, n,
			 "%s: rcv_interval %.3f ms and snd_interval %.3f ms neither agree nor "
			 "show a held ACK",
			 who, ms(rcv), ms(snd));
}

void bt_cause_classify(const struct bt_cause_in *in, struct bt_collapse *c)
{
	const struct bt_sample *k = &c->culprit;
	uint64_t snd = k->snd_interval_us, rcv = k->rcv_interval_us;
	uint64_t lo = snd < rcv ? snd : rcv, hi = snd < rcv ? rcv : snd;
	const char *hint = k->is_ack_delayed ? "; the kernel flagged it a lone delayed segment "
					       "(is_ack_delayed)" : "";
	const char *who = c->reset_by_ack ? "this ACK's sample" : "an earlier sample";
	char *e = c->evidence, note[64];
	size_t n = sizeof(c->evidence);

	if (in->lt_switched) {
		c->cause = BT_CAUSE_LOSS_POLICER;
		snprintf(e, n,
			 "BBR %s its long-term rate lt_bw %.3f Mbit/s after sustained losses "
			 "(%d lost in this sample), as behind a policer",
			 in->lt_was_on ? "lowered" : "switched to", (double)c->ack.lt_bw_bps * TK_MBPS_PER_BPS_F,
			 c->ack.losses);
	} else if (!in->culprit_found) {
		c->cause = BT_CAUSE_OTHER;
		snprintf(e, n,
			 "the new max-bw %.3f Mbit/s matches none of the flow's last %d samples "
			 "(trace started mid-flow or events were lost)",
			 (double)c->bw_bps * TK_MBPS_PER_BPS_F, BT_DETECT_HISTORY);
	} else if (k->is_app_limited && c->reset_by_ack) {
		c->cause = BT_CAUSE_OTHER;
		snprintf(e, n,
			 "%s set the estimate but was app-limited (rcv_interval %.3f ms, "
			 "snd_interval %.3f ms)",
			 who, ms(rcv), ms(snd));
	} else if (!k->is_app_limited && held(in, k)) {
		classify_held(in, c, who, hint);
	} else if (burst_max(in, c)) {
		classify_burst(in, c);
	} else if (!k->is_app_limited && lo > 0 && hi >= BT_NOISE_FLOOR_US &&
		   (double)hi <= in->cfg->agree_ratio * (double)lo) {
		if (path_still_gives(in, c, who))
			return;
		c->cause = BT_CAUSE_RATE_DROP;
		snprintf(e, n,
			 "%s: rcv_interval %.3f ms and snd_interval %.3f ms agree (within %gx): "
			 "the path delivered %.3f Mbit/s%s",
			 who, ms(rcv), ms(snd), in->cfg->agree_ratio, (double)k->sample_bw_bps * TK_MBPS_PER_BPS_F,
			 delivered_note(in, note, sizeof(note)));
	} else {
		classify_rest(in, c, who, hint);
	}
}
