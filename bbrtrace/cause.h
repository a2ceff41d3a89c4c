/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A collapse's cause: the detector (bbrtrace/detect.c) hands over what it
 * knows of the collapse's flow; this names the cause and writes its evidence
 * into the collapse record.
 */
#ifndef BBRTRACE_CAUSE_H
#define BBRTRACE_CAUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "bbrtrace/culprit.h"
#include "bbrtrace/detect.h"
#include "trace.h"

/* what the cause is judged on, beside the collapse record itself */
struct bt_cause_in {
	const struct bt_detect_cfg *cfg;
	bool lt_switched;    /* BBR paces at its long-term rate after this ACK */
	bool lt_was_on;      /* ... and did before it (lowered, not switched to) */
	bool culprit_found;  /* c->culprit is the sample behind the new estimate */
	/* the sample that set the old maximum (bw_prev), and how old it was; NULL
	 * when the flow's history no longer holds it */
	const struct bt_hsample *max_sample;
	uint64_t max_age_ns;
	/* what the flow delivered while the old maximum held, bit/s: the more of
	 * its delivery over the demand's window before this ACK (lib/demand.h;
	 * during a throttle, before it began) and before max_sample; 0 unknown */
	uint64_t delivered_bps;
	bool app_limited;    /* ... and the flow was app-limited then (a stream, not bulk) */
};

/* the sample's send and receive intervals both lie under BT_NOISE_FLOOR_US */
bool bt_cause_in_noise(const struct bt_sample *k);

/* fills c->cause and c->evidence; c->ack, c->culprit, bw_prev_bps, bw_bps and
 * reset_by_ack are set */
void bt_cause_classify(const struct bt_cause_in *in, struct bt_collapse *c);

#endif
