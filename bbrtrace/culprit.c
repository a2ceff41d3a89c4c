// SPDX-License-Identifier: GPL-2.0-only
/* A flow's culprits: the samples behind the values of BBR's max-bw filter. */
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/culprit.h"
#include "bbrtrace/sample.h"

int bt_culprits_init(struct bt_culprits *c, unsigned int ways)
{
	memset(c, 0, sizeof(*c));
	c->ways = ways;
	if (ways & BT_CULPRIT_HISTORY) {
		c->hist = malloc(BT_DETECT_HISTORY * sizeof(*c->hist));
		if (!c->hist)
			return -1;
	}
	return 0;
}

void bt_culprits_free(struct bt_culprits *c)
{
	free(c->hist);
	c->hist = NULL;
}

static void hsample_put(struct bt_hsample *h, const struct bt_sample *s, uint64_t flow_bps)
{
	h->flow_delivered_bps = flow_bps;
	h->t_ns = s->t_ns;
	h->interval_us = s->interval_us;
	h->rtt_us = s->rtt_us;
	h->sample_bw_bps = s->sample_bw_bps;
	h->delivered = s->delivered;
	h->losses = s->losses;
	h->snd_interval_us = s->snd_interval_us;
	h->rcv_interval_us = s->rcv_interval_us;
	h->acked_sacked = s->acked_sacked;
	h->prior_in_flight = s->prior_in_flight;
	h->is_app_limited = s->is_app_limited;
	h->is_retrans = s->is_retrans;
	h->is_ack_delayed = s->is_ack_delayed;
	h->sample_valid = s->sample_valid;
}

void bt_hsample_get(struct bt_sample *c, const struct bt_hsample *h)
{
	c->t_ns = h->t_ns;
	c->interval_us = h->interval_us;
	c->rtt_us = h->rtt_us;
	c->sample_bw_bps = h->sample_bw_bps;
	c->delivered = h->delivered;
	c->losses = h->losses;
	c->snd_interval_us = h->snd_interval_us;
	c->rcv_interval_us = h->rcv_interval_us;
	c->acked_sacked = h->acked_sacked;
	c->prior_in_flight = h->prior_in_flight;
	c->is_app_limited = h->is_app_limited;
	c->is_retrans = h->is_retrans;
	c->is_ack_delayed = h->is_ack_delayed;
	c->sample_valid = h->sample_valid;
}

/* the sample's bandwidth as BBR computes it for its filter (bbr_update_bw), in
 * packets/us << 24; false when BBR takes none from it, or when it does not fit
 * the filter's 32 bits (the kernel truncates it; no estimate equals it then) */
static bool raw_bw(int32_t delivered, int64_t interval_us, uint32_t *bw)
{
	uint64_t v;

	if (delivered < 0 || interval_us <= 0)
		return false;
	v = ((uint64_t)delivered << BT_BW_SCALE) / (uint64_t)interval_us;
	if (v > UINT32_MAX)
		return false;
	*bw = (uint32_t)v;
	return true;
}

/* the most recent slot holding value bw, or -1 */
static int slot_of(const struct bt_culprit_key *key, uint32_t bw)
{
	int best = -1;

	for (int k = 0; k < BT_FILTER_ENTRIES; k++)
		if (key[k].used && key[k].bw == bw && (best < 0 || key[k].idx > key[best].idx))
			best = k;
	return best;
}

/* the filter's values are those of the slots, each slot's own, and the sample
 * has none of them: the slots stand as they are */
static bool unchanged(const struct bt_culprit_key *key, const uint32_t *filter_bw, uint32_t bw, bool has)
{
	for (int k = 0; k < BT_FILTER_ENTRIES; k++)
		if (!key[k].used || key[k].bw != filter_bw[k] || (has && bw == filter_bw[k]))
			return false;
	return true;
}

/*
 * The filter after sample s: each entry's value keeps the most recent sample
 * of that value, s itself when its bandwidth is the value. A handshake's
 * sample comes before bbr_init(), which then resets the filter: it leaves no
 * slot.
 */
static void slots_put(struct bt_culprits *c, const struct bt_sample *s, uint64_t flow_bps)
{
	struct bt_culprit_key key[BT_FILTER_ENTRIES];
	struct bt_hsample h[BT_FILTER_ENTRIES];
	uint32_t bw = 0;
	bool has = raw_bw(s->delivered, s->interval_us, &bw);

	if (!s->filter_known || bt_mode_is_handshake(s->mode)) {
		memset(c->key, 0, sizeof(c->key));
		return;
	}
	if (unchanged(c->key, s->filter_bw, has ? bw : 0, has)) /* most ACKs: nothing moves */
		return;
	for (int k = 0; k < BT_FILTER_ENTRIES; k++) {
		int old = slot_of(c->key, s->filter_bw[k]);

		if (has && bw == s->filter_bw[k]) {
			key[k] = (struct bt_culprit_key){ .bw = bw, .used = true, .idx = c->n };
			hsample_put(&h[k], s, flow_bps);
		} else if (old >= 0) {
			key[k] = c->key[old];
			h[k] = c->h[old];
		} else {
			key[k] = (struct bt_culprit_key){ .used = false };
		}
	}
	memcpy(c->key, key, sizeof(key));
	for (int k = 0; k < BT_FILTER_ENTRIES; k++)
		if (key[k].used)
			c->h[k] = h[k];
}

void bt_culprits_put(struct bt_culprits *c, const struct bt_sample *s, uint64_t flow_bps)
{
	if (c->ways & BT_CULPRIT_SLOTS)
		slots_put(c, s, flow_bps);
	if (c->hist) {
		hsample_put(&c->hist[c->head], s, flow_bps);
		c->head = (c->head + 1) % BT_DETECT_HISTORY;
		if (c->hn < BT_DETECT_HISTORY)
			c->hn++;
	}
	c->n++;
}

/* the sample's bandwidth, converted at the ACK's MSS as bw_bps was, is bw_bps */
static bool sets(int32_t delivered, int64_t interval_us, const struct bt_sample *ack, uint64_t bw_bps)
{
	uint32_t bw;

	return raw_bw(delivered, interval_us, &bw) && bt_bw_to_bps(bw, ack->mss) == bw_bps;
}

static const struct bt_hsample *history_find(const struct bt_culprits *c, const struct bt_sample *ack,
					     uint64_t bw_bps)
{
	for (unsigned int i = 0; c->hist && i < c->hn; i++) {
		const struct bt_hsample *h = &c->hist[(c->head + BT_DETECT_HISTORY - 1 - i) % BT_DETECT_HISTORY];

		if (sets(h->delivered, h->interval_us, ack, bw_bps))
			return h;
	}
	return NULL;
}

/* a value's slot, when its sample is among the last BT_DETECT_HISTORY */
static const struct bt_hsample *slots_find(const struct bt_culprits *c, const struct bt_sample *ack,
					   uint64_t bw_bps)
{
	int best = -1;

	for (int k = 0; k < BT_FILTER_ENTRIES; k++) {
		const struct bt_culprit_key *s = &c->key[k];

		if (s->used && s->idx + BT_DETECT_HISTORY >= c->n && bt_bw_to_bps(s->bw, ack->mss) == bw_bps &&
		    (best < 0 || s->idx > c->key[best].idx))
			best = k;
	}
	return best >= 0 ? &c->h[best] : NULL;
}

const struct bt_hsample *bt_culprits_find(const struct bt_culprits *c, enum bt_culprit_way way,
					  const struct bt_sample *ack, uint64_t bw_bps, uint64_t *age_ns)
{
	const struct bt_hsample *h = way == BT_CULPRIT_SLOTS ? slots_find(c, ack, bw_bps)
							     : history_find(c, ack, bw_bps);

	if (h && age_ns)
		*age_ns = ack->t_ns - h->t_ns;
	return h;
}
