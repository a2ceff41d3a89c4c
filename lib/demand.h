/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flow's demand: the bytes it delivered (ACKed, from snd_una) over the last
 * BT_DEMAND_WINDOW_MS, and whether it was app-limited then (bbrtrace/rules.h
 * says why). The flow's running counts are checkpointed at most every
 * BT_DEMAND_STEP_NS; the demand at an ACK is measured from the oldest
 * checkpoint inside the window, and the older ones go. The checkpoints live
 * in a ring that grows with the flow's ACK rate: a flow that ACKs once a
 * second keeps one, one that ACKs every 50 ms 21, a busy one up to
 * BT_DEMAND_SLOTS (4 KiB). Shared by bbrtrace's detector and
 * bbrplot, which draws the demand over a whole run by the same rule.
 */
#ifndef TK_DEMAND_H
#define TK_DEMAND_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

/*
 * The need: an app-limited flow is throttled when the pacing rate BBR allows
 * (the new estimate x its pacing gain) is under BT_THROTTLE_HEADROOM x its
 * demand. A live stream sends each frame as a burst at the pacing rate: with
 * less than 25% headroom a frame's burst fills most of the frame interval,
 * and the next frame queues behind it. (A bulk flow's need is the detector's:
 * bbrtrace/rules.h.)
 */
#define BT_THROTTLE_HEADROOM 1.25
/*
 * demand: the bytes ACKed over the last BT_DEMAND_WINDOW_MS before the ACK
 * (a young flow's: since its first sample, at least BT_DEMAND_MIN_SPAN_MS).
 * When the flow was app-limited (it had nothing more to send) for at least
 * BT_DEMAND_APP_SHARE of that window's samples, that is what the application
 * was sending, and the flow needs BT_THROTTLE_HEADROOM x it. A flow that was
 * not, a bulk sender with more to send, is throttled when the pacing allowed
 * falls under what it delivered. A flow younger than the minimum span (a
 * collapse in its first 20 ms) delivered what it did over 20 ms at least: on
 * a veth, a first burst ACKed in microseconds reads as Gbit/s, and taking the
 * estimate it had as the demand would make a 4 us dip "hold back" 9 kB.
 * A flow that delivered nothing yet wants the estimate it had.
 */
#define BT_DEMAND_WINDOW_MS 1000u
#define BT_DEMAND_MIN_SPAN_MS 20u
#define BT_DEMAND_APP_SHARE 0.5

#define BT_DEMAND_STEP_NS (10 * TK_NSEC_PER_MSEC)
/* checkpoints that span the window at one per step (101), with room to
 * spare; a power of two, so that the ring's index is a mask */
#define BT_DEMAND_SLOTS 128
_Static_assert(BT_DEMAND_SLOTS > BT_DEMAND_WINDOW_MS / 10 + 1, "the ring spans the demand's window");

/* the bytes ACKed so far, and how many samples were app-limited, at one moment */
struct bt_checkpoint {
	uint64_t t_ns;
	uint64_t acked_bytes;
	uint64_t samples, app_limited;
};

/* the demand as measured at one checkpoint */
struct bt_demand_at {
	uint64_t t_ns;     /* the checkpoint's time */
	uint64_t since_ns; /* where its window began: the oldest checkpoint in it */
	uint64_t bps;      /* the delivery over that window, bit/s */
	bool app_limited;  /* for BT_DEMAND_APP_SHARE of the window's samples */
};

struct bt_demand {
	bool una_seen;
	uint32_t last_una;
	uint64_t acked_bytes, samples, app_limited;
	struct bt_demand_at last;  /* at the newest checkpoint (valid when n > 0) */
	struct bt_checkpoint *cp;  /* a ring of cap; NULL until the first checkpoint */
	unsigned int cap, n, head;
};

/* the flow's next ACK sample: its bytes ACKed and app-limited count, and a
 * checkpoint when the last is a step old (none without memory: the demand
 * then comes from the checkpoints kept), measured into d->last; true when
 * it took one */
bool bt_demand_track(struct bt_demand *d, const struct bt_sample *s);
/* the delivery rate over the window before now_ns, bit/s, and whether the
 * flow was app-limited for BT_DEMAND_APP_SHARE of it; 0 before the first
 * checkpoint, or when it delivered nothing */
uint64_t bt_demand_measured(const struct bt_demand *d, uint64_t now_ns, bool *app_limited);
/* the delivery over the window as of the newest checkpoint (at most
 * BT_DEMAND_STEP_NS old), bit/s; 0 before the first. It costs nothing a sample:
 * each sample's is kept with it (bbrtrace/culprit.h) */
uint64_t bt_demand_recent(const struct bt_demand *d);
/* a hint before the flow's next sample: the ring's lines that a checkpoint
 * reads and writes (the oldest kept, the next one's place), fetched into the
 * cache (inline: it runs for every event) */
static inline void bt_demand_prefetch(const struct bt_demand *d)
{
	if (!d->n)
		return;
	tk_prefetch(&d->cp[(d->head - d->n) & (d->cap - 1)]);
	tk_prefetch(&d->cp[d->head]);
}
void bt_demand_free(struct bt_demand *d);

#endif
