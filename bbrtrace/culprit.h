/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flow's culprits: which of its samples set a bandwidth that BBR's max-bw
 * filter holds. The detector asks, after a collapse, for the most recent of
 * the flow's last BT_DETECT_HISTORY samples whose bandwidth, as BBR stores
 * it (delivered << 24 / interval_us), is a given estimate.
 *
 * Two ways to answer, with the same answers:
 *   slots    live traces carry the filter's three entries after each ACK
 *            (bw.s[0..2]). An estimate the filter holds later is a value it
 *            holds now, or the value of a sample still to come (a value
 *            leaves the filter for good: it comes back only with a newer
 *            sample of that bandwidth). So the most recent sample of each
 *            value the filter holds answers every later question: three
 *            samples per flow, whatever its rate.
 *   history  recorded traces carry only bw.s[0]: the flow's last
 *            BT_DETECT_HISTORY samples, searched from the newest (128 KiB a
 *            flow). bbrtrace --check-detector runs both and counts any
 *            answer they give differently.
 * One difference is known: an estimate that is the long-term rate lt_bw
 * (leaving BBR's policer mode) is no filter value, and only the history can
 * find a sample that happens to have that bandwidth.
 */
#ifndef BBRTRACE_CULPRIT_H
#define BBRTRACE_CULPRIT_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

#define BT_DETECT_HISTORY 2048 /* samples a culprit may be back (BBR's 10-round window
				* holds about 1000 ACKs on a 10 Mbit/s path with a 100 ms queue) */

/* what is kept of a sample: enough to name and classify a culprit */
struct bt_hsample {
	uint64_t t_ns;
	int64_t interval_us, rtt_us;
	uint64_t sample_bw_bps;
	/* what the flow had delivered over the demand's window when the sample
	 * came (bt_demand_recent): a maximum it set is judged against it */
	uint64_t flow_delivered_bps;
	int32_t delivered, losses;
	uint32_t snd_interval_us, rcv_interval_us, acked_sacked, prior_in_flight;
	bool is_app_limited, is_retrans, is_ack_delayed, sample_valid;
};

/* a slot's value and the sample's place; its sample is the slot's h[] */
struct bt_culprit_key {
	uint32_t bw;              /* the filter value, packets/us << 24 */
	bool used;
	uint64_t idx;             /* the sample's number in its flow */
};

enum bt_culprit_way { BT_CULPRIT_SLOTS = 1, BT_CULPRIT_HISTORY = 2 };

struct bt_culprits {
	unsigned int ways;        /* enum bt_culprit_way bits */
	uint64_t n;               /* samples put so far */
	/* the slots' keys apart from their samples: most ACKs move no slot and
	 * read only these (48 bytes) */
	struct bt_culprit_key key[BT_FILTER_ENTRIES];
	struct bt_hsample h[BT_FILTER_ENTRIES];
	struct bt_hsample *hist;  /* BT_DETECT_HISTORY, a ring; allocated with the history way */
	unsigned int hn, head;
};

/* ways: which to keep (both for --check-detector); returns -1 without memory
 * for the history */
int bt_culprits_init(struct bt_culprits *c, unsigned int ways);
void bt_culprits_free(struct bt_culprits *c);
/* the flow's next sample, after the detector judged it, with the flow's
 * delivery then (bit/s, 0 unknown) */
void bt_culprits_put(struct bt_culprits *c, const struct bt_sample *s, uint64_t flow_delivered_bps);
/*
 * The most recent sample whose bandwidth, converted at ack's MSS, is bw_bps,
 * among the last BT_DETECT_HISTORY put; NULL when none. way: one of the ways
 * kept. *age_ns: how long before ack it was.
 */
const struct bt_hsample *bt_culprits_find(const struct bt_culprits *c, enum bt_culprit_way way,
					  const struct bt_sample *ack, uint64_t bw_bps, uint64_t *age_ns);
/* the culprit's rate-sample fields into *s (its flow and MSS stay the ACK's) */
void bt_hsample_get(struct bt_sample *s, const struct bt_hsample *h);

#endif
