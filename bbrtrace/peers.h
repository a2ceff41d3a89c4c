/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Harm by peer: what the detector found, summed by the remote address of
 * each flow (the receiver, on the sending host), over the whole trace and
 * minute by minute over a rolling window (BT_WINDOW_MIN), so that a verdict
 * can name the peers that need a fix among thousands, and a daemon can give
 * one while it runs. A peer stays while it has flows open or harm in the
 * window; the table holds at most as many peers as --max-flows. Harm past
 * that goes to the host's totals only, and is counted (peers_untracked).
 */
#ifndef BBRTRACE_PEERS_H
#define BBRTRACE_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#include "bbrtrace/flowtab.h"
#include "common.h"
#include "trace.h"

/* the rolling window of the verdict and /metrics, in minutes */
#define BT_WINDOW_MIN 5
#define BT_NSEC_PER_MIN (60 * TK_NSEC_PER_SEC)

/* what hurt a peer's streams, and how much */
struct bt_harm {
	uint64_t collapses[BT_NCAUSES];
	uint64_t throttling[BT_NCAUSES];   /* collapses that throttled their flow */
	uint64_t throttled_ns;             /* time its flows spent throttled, summed */
	double late_bytes;                 /* bytes their demand wanted that the pacing held back */
	uint64_t stalls[BT_NSTALL_CAUSES];
	uint64_t stalled_ns[BT_NSTALL_CAUSES];
	uint64_t nagle_ended[BT_NSTALL_ENDS];
	uint64_t flows;                    /* flows that began */
	uint64_t active_ns;                /* time its flows were active (BT_ACTIVE_GAP_NS), summed:
					    * the harm per flow is harm / active time */
};

/* a flow is active between two samples less than this apart (longer: idle) */
#define BT_ACTIVE_GAP_NS TK_NSEC_PER_SEC

struct bt_harm_minute {
	uint64_t minute;                   /* t_ns / BT_NSEC_PER_MIN */
	struct bt_harm h;
};

struct bt_peer {
	uint8_t addr[16];                  /* the peer, IPv4 as ::ffff:a.b.c.d */
	uint8_t local[16];                 /* this host's address on its latest flow */
	uint16_t port;                     /* its port on its latest flow (the fixes' --port) */
	uint64_t live_flows;               /* its flows open now */
	uint64_t last_ns;                  /* its latest event */
	struct bt_harm total;              /* since the trace began */
	struct bt_harm_minute win[BT_WINDOW_MIN + 1]; /* a ring, by minute */
};

struct bt_peers {
	struct bt_flowtab t;               /* struct bt_peer by address hash */
	struct bt_harm total;              /* the host's, every peer included */
	struct bt_harm_minute win[BT_WINDOW_MIN + 1];
	uint64_t untracked;                /* flows whose peer the table could not take */
};

void bt_peers_init(struct bt_peers *p, uint64_t max);
void bt_peers_free(struct bt_peers *p);
/* a flow to addr's port (from local) began at t_ns: its peer, or NULL when
 * the table is full (its harm then counts for the host only) */
struct bt_peer *bt_peers_flow_begins(struct bt_peers *p, const uint8_t addr[16], uint16_t port,
				     const uint8_t local[16], uint64_t t_ns);
/* a flow of peer (may be NULL) ended */
void bt_peers_flow_ends(struct bt_peers *p, struct bt_peer *peer);
/* where harm at t_ns adds up: the host's total and minute, and the peer's
 * (when not NULL); returns how many of out[] it filled (2 or 4) */
unsigned int bt_peers_targets(struct bt_peers *p, struct bt_peer *peer, uint64_t t_ns,
			      struct bt_harm *out[4]);
/* the harm over the window of the last BT_WINDOW_MIN minutes (this one
 * included) at now_ns, into *out: the host's when peer is NULL */
void bt_peers_window(const struct bt_peers *p, const struct bt_peer *peer, uint64_t now_ns,
		     struct bt_harm *out);
/* forgets peers with no open flow and nothing in the window ending at now_ns */
void bt_peers_expire(struct bt_peers *p, uint64_t now_ns);
/* how bad: the time its streams were held back in ways a host can change:
 * throttled by a collapse, or stalled by Nagle or by the receiver's window */
uint64_t bt_harm_ns(const struct bt_harm *h);
/* calls fn on every peer */
void bt_peers_each(const struct bt_peers *p, void (*fn)(const struct bt_peer *peer, void *ctx), void *ctx);

#endif
