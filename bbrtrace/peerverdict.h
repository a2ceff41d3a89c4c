/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verdict by peer: among all the peers the detector saw, those whose
 * streams were held back enough to act on, worst first, each with what held
 * them back and its own fix; the rest counted in one clause. Over the whole
 * trace (the verdict at exit) or over the rolling window (a running daemon's
 * verdict, bbrtrace/peers.h).
 *
 * A peer's harm is the time its streams were held back: throttled by a
 * collapse of BBR's estimate, or stalled with data waiting by Nagle or by
 * the receiver's window (a full congestion window or BBR's pacing stall a
 * bulk flow as it should). A peer needs a fix by the same floors as the
 * host's verdict (bbrtrace/rules.h): throttling of BT_FIX_MIN_THROTTLED_MS or
 * BT_FIX_MIN_LATE_BYTES, or delayed-ACK throttles BT_FIX_DELACK_RECURS times,
 * or Nagle stalls of BT_STALL_FIX_MIN_MS in all.
 */
#ifndef BBRTRACE_PEERVERDICT_H
#define BBRTRACE_PEERVERDICT_H

#include <stdint.h>

#include "fixtext.h"
#include "bbrtrace/peers.h"

#define BT_VERDICT_TOP_PEERS 3 /* peers named one by one; the others share a clause */

struct bt_peer_rank {
	uint8_t addr[16], local[16];
	uint16_t port;                 /* the peer's, on its latest flow */
	struct bt_harm h;
	char fix[BT_FIX_STR];          /* what to do for it, or empty */
};

struct bt_peer_verdict {
	uint64_t window_ns;            /* 0: the whole trace */
	unsigned int peers;            /* peers with a flow in it */
	unsigned int harmed;           /* of them, those that need a fix */
	unsigned int ntop;             /* the worst of those, in top[] */
	struct bt_peer_rank top[BT_VERDICT_TOP_PEERS];
	struct bt_harm rest;           /* the other peers that need a fix, together */
	char text[3072];               /* "By peer, worst first: ..." (empty when none is harmed):
					* three clauses with a fix each, and the rest */
};

/* ranks the peers: over the window that ends at now_ns, or the whole trace
 * when now_ns is 0 */
void bt_peer_verdict_build(struct bt_peer_verdict *pv, const struct bt_peers *p, uint64_t now_ns);
/* the ranking as a JSON array (a record's "peers" field) into buf */
void bt_peer_verdict_json(const struct bt_peer_verdict *pv, char *buf, size_t cap);

#endif
