/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's verdict: the peers whose senders waited on this host's ACKs,
 * worst first, each with its cause and the narrowest fix (lib/fixtext.h,
 * worded as bbrtrace words them); the rest in one clause; and what it
 * could not see (lost records, untracked flows) before anything else.
 */
#ifndef ACKHOLD_VERDICT_H
#define ACKHOLD_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "ackhold/peers.h"

/* a verdict with --top's most (100) peers, each with its fix */
#define AH_VERDICT_MAX 65536

/* ranked: the peers, most waited first (ah_peers_ranked) */
void ah_verdict(char *buf, size_t cap, struct ah_peer *const *ranked, size_t n, uint32_t top,
		double min_hold_ms, const uint64_t cnt[AH_CNT_ALL]);

#endif
