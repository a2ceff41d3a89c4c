/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collapse detector: finds each ACK after which BBR's bandwidth estimate
 * fell by at least a set fraction, and says why.
 *
 * It is a pure module: it takes decoded samples (struct bt_sample) in the
 * order the kernel produced them, keeps a little state per flow (keyed by
 * socket cookie), and hands back collapse records. bbrtrace feeds it live;
 * the unit tests feed it recorded traces.
 *
 * The estimate is the one BBR paces with: the max-bw filter (bw_bps), or the
 * long-term rate lt_bw while lt_use_bw is set. A collapse is an ACK where
 *     estimate_after < (1 - collapse_ratio) * estimate_before.
 *
 * An ACK that covers the sender's FIN (fin_acked) is never a collapse: the
 * stream is over, nothing is left to pace, and that ACK times the receiver's
 * close (in ping-pong mode it waits for the application to close), not the
 * path.
 *
 * The sample that set the new estimate (the "culprit") is this ACK's own
 * sample when its bandwidth, computed as BBR does (delivered << 24 /
 * interval_us, in packets per us), equals the new max; otherwise the filter
 * rotated to an older sample (its window of 10 rounds expired) and the
 * culprit is the most recent of the flow's last BT_DETECT_HISTORY samples
 * with that bandwidth (bbrtrace/culprit.h: how it is found in a few bytes a
 * flow).
 *
 * Causes, checked in this order:
 *   loss_policer  lt_use_bw is set after this ACK: after sustained losses
 *                 BBR switched to (or lowered) its long-term, policed rate.
 *   delayed_ack   the culprit is not app-limited, and its receive interval
 *                 dominates its send interval, within a delayed-ACK timer's
 *                 range, for at most BT_DELACK_MAX_SEGS segments:
 *                     rcv_interval_us >= delack_ratio * snd_interval_us
 *                     rcv_interval_us >= delack_floor_us
 *                     rcv_interval_us <= BT_DELACK_CEIL_US
 *                     delivered <= BT_DELACK_MAX_SEGS
 *                 More segments that late drained through a queue: a
 *                 rate_drop, with that evidence.
 *                 (BT_DELACK_RATIO in bbrtrace/rules.h, BT_DELACK_FLOOR_US in
 *                 lib/trace.h)
 *                 The ACK came late, not the data: the receiver held its
 *                 ACK (the delayed-ACK timer is 40 ms at least unless a
 *                 route's rto_min lowers it). The floor keeps out the
 *                 microsecond jitter of a veth path, where a 20 us receive
 *                 interval against a 0 us send interval is no delayed ACK.
 *                 is_ack_delayed is only a hint, named in the evidence: the
 *                 kernel sets it only for a lone sub-MSS segment ACKed alone.
 *   rate_drop     the culprit is not app-limited and its two intervals
 *                 agree (the larger is at most agree_ratio, BT_AGREE_RATIO,
 *                 times the smaller): the path really delivered less.
 *                 So is a bulk culprit over the noise floor that drained a
 *                 queue (more than BT_DELACK_MAX_SEGS segments, received
 *                 over longer than they were sent) when the new estimate is
 *                 under (1 - collapse_ratio) x what the flow delivered,
 *                 this ACK's sample or an earlier one.
 *   lone_segment  the kernel flagged the culprit a lone segment ACKed alone
 *                 (is_ack_delayed), at most BT_DELACK_MAX_SEGS delivered, its
 *                 receive interval over its send interval but under the
 *                 floor: a sub-MSS segment ACKed microseconds late.
 *   max_expired   an earlier sample is the new estimate (not this ACK's) and
 *                 it shows neither a held ACK, an agreeing path nor a
 *                 queue draining under what the flow delivered: the
 *                 filter's window let an old maximum expire; the evidence
 *                 gives its age and what set it (often a burst).
 *   sender_limited this ACK's sample, its send interval over agree_ratio x
 *                 its receive interval: it measured the sender's own pace.
 *   ack_jitter    this ACK's sample, not app-limited, both its intervals
 *                 under BT_NOISE_FLOOR_US (lib/trace.h): timing jitter of
 *                 the path's end hosts, not a held ACK nor the path.
 *   burst_max     (checked after delayed_ack) a bulk flow's old maximum was
 *                 over BT_BURST_RATIO x what it delivered while it held
 *                 (bbrtrace/cause.h), and the new
 *                 estimate still carries (1 - collapse_ratio) x that: the
 *                 maximum came from a burst. A rate_drop needs the new
 *                 estimate under that share of the delivery, and intervals
 *                 at or over the noise floor.
 *   other         anything else, with the evidence (app-limited culprit,
 *                 a receive interval between BT_NOISE_FLOOR_US and the floor,
 *                 or longer than any delayed-ACK timer, no culprit found).
 */
#ifndef BBRTRACE_DETECT_H
#define BBRTRACE_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "bbrtrace/culprit.h"
#include "bbrtrace/reorder.h"
#include "trace.h"

/*
 * Flows tracked at once by default (--max-flows). A flow leaves when its
 * socket closes (bt_detect_close); none is ever evicted: a flow past the cap,
 * or one that finds no memory, is counted untracked and never judged.
 */
#define BT_DETECT_FLOWS 131072

/* the thresholds, by default those of bbrtrace/rules.h */
struct bt_detect_cfg {
	double collapse_ratio;    /* a drop by at least this fraction */
	double delack_ratio;      /* rcv_interval >= this * snd_interval */
	uint32_t delack_floor_us; /* and rcv_interval >= this */
	double agree_ratio;       /* intervals within this factor agree */
	unsigned int max_flows;   /* flows tracked at once */
	bool check;               /* find each culprit both ways and count the answers that
				   * differ (bbrtrace/culprit.h; --check-detector) */
};

void bt_detect_cfg_default(struct bt_detect_cfg *cfg);

struct bt_detect;

struct bt_detect *bt_detect_new(const struct bt_detect_cfg *cfg);
void bt_detect_free(struct bt_detect *d);

/* one sample, in kernel order; returns true and fills *c when this ACK is a collapse */
bool bt_detect_feed(struct bt_detect *d, const struct bt_sample *s, struct bt_collapse *c);
/* one write of a flow (kind BT_KIND_WRITE), in time order with its ACKs */
void bt_detect_write(struct bt_detect *d, const struct bt_sample *w);
/*
 * The detector's hints, a bt_reorder_ahead_fn with the detector for ctx:
 * the events in e[] are fed soon, one a stage (bbrtrace/reorder.h). Stage 0
 * fetches its flow's table slot into the cache, 1 its state's per-ACK
 * lines, 2 its demand checkpoints' (each stage reads what the one before
 * fetched). With many flows each of these lines is a miss, and fed in time
 * order the flows take turns, so no hardware prefetcher sees them coming.
 * Nothing changes: an event without a socket cookie (a socket's first
 * samples) or a flow not in its home slot is skipped. It reads the flow
 * table and the flows' state only: whoever runs it without the detector's
 * lock must be the one thread that feeds it.
 */
void bt_detect_ahead(void *detector, const struct bt_event *const e[BT_REORDER_STAGES]);
/*
 * Whether the hints pay: with fewer than BT_DETECT_PREFETCH_FLOWS flows
 * their state stays in a core's caches between two ACKs of a flow, and the
 * hints' instructions (about 140 an ACK) cost more than the misses they
 * hide (bench/bbrtrace_detect: 1.11x at 1 flow). In bbrtrace itself,
 * where the flows' own traffic runs between its polls, they are even at
 * 1,000 flows and pay at 10,000, the more the sooner they start while the
 * flows come (bench/22-scale; ratios in the commit that set it)
 */
#define BT_DETECT_PREFETCH_FLOWS 512
bool bt_detect_hints_pay(const struct bt_detect *d);
/* the flow's socket closed (kind BT_KIND_CLOSE): its state goes */
void bt_detect_close(struct bt_detect *d, const struct bt_sample *s);
/* after bt_detect_feed() or bt_detect_write(): true and *out filled when that
 * event ended a stall of the sender (bbrtrace/stall.h) */
bool bt_detect_take_stall(struct bt_detect *d, struct bt_stall *out);

/* medians over a set of collapses: their culprits' intervals, the estimate before and
 * after, and what the flow delivered while the old maximum held */
struct bt_collapse_medians {
	uint32_t rcv_interval_us, snd_interval_us;
	uint64_t bw_prev_bps, bw_bps, delivered_bps;
};

/* a flow's two ends, as the verdict names them in a fix: the sender (local) first */
struct bt_flow_ends {
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
};

/* what the verdict needs, accumulated over every sample fed */
struct bt_detect_stats {
	uint64_t samples;
	uint64_t app_limited_samples;
	uint64_t flows;                    /* flows seen */
	uint64_t flows_live;               /* tracked now (not closed) */
	uint64_t flows_closed;             /* whose socket closed */
	uint64_t samples_untracked;        /* samples and writes of flows that could not be
					    * tracked (--max-flows, or memory): not judged */
	bool untracked_at_cap;             /* some were refused at --max-flows (else memory) */
	uint64_t culprit_checks, culprit_mismatches; /* --check-detector's */
	uint64_t collapses[BT_NCAUSES];
	uint64_t throttling[BT_NCAUSES];   /* of which throttled the flow (impact) */
	uint64_t throttling_app;           /* of those, of an app-limited flow (its need:
					    * BT_THROTTLE_HEADROOM x its demand) */
	uint64_t throttled_ns;             /* time flows spent throttled, summed over flows */
	uint64_t throttled_ns_by[BT_NCAUSES]; /* of that, by the cause of the collapse that
					       * began each throttle */
	double late_bytes;                 /* bytes their demand wanted that the pacing held back */
	uint64_t throttles_open;           /* flows still throttled at their last sample: their
					    * cost so far is a floor */
	/* the sender's stalls (bbrtrace/stall.h), by cause, and their time */
	uint64_t writes;
	uint64_t stalls[BT_NSTALL_CAUSES];
	uint64_t stalled_ns[BT_NSTALL_CAUSES];
	uint64_t nagle_ended[BT_NSTALL_ENDS]; /* Nagle stalls, by what ended them */
	struct bt_flow_ends nagle_ends;    /* the last Nagle stall's flow */
	uint64_t first_t_ns, last_t_ns;
	/* medians over the delayed_ack and the rate_drop collapses: all of them (the
	 * verdict record's), and the throttling ones (the verdict's clauses) */
	struct bt_collapse_medians delack, delack_thr, rate, rate_thr;
	uint64_t lt_bw_last_bps;           /* the last loss_policer collapse's lt_bw */
	uint64_t other_bw_min_bps;         /* the lowest estimate an 'other' collapse left */
	struct bt_flow_ends delack_ends;   /* the flow with the most delayed_ack collapses */
};

void bt_detect_stats(const struct bt_detect *d, struct bt_detect_stats *st);

/* a flow's latest state, for exporters (Prometheus) */
struct bt_flow_state {
	uint64_t cookie;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
	uint64_t bw_bps;          /* the estimate BBR paces with (max-bw, or lt_bw) */
	uint64_t last_t_ns;
	uint64_t collapses[BT_NCAUSES];
};

/* harm by peer and over the rolling window (bbrtrace/peers.h) */
struct bt_peers;
const struct bt_peers *bt_detect_peers(const struct bt_detect *d);
/* forgets the peers with no open flow and no harm in the window ending at now_ns */
void bt_detect_expire(struct bt_detect *d, uint64_t now_ns);

/* up to max flows whose last sample is at or after since_ns; returns how many */
unsigned int bt_detect_flow_states(const struct bt_detect *d, uint64_t since_ns,
				   struct bt_flow_state *out, unsigned int max);

#endif
