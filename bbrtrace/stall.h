/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stalls of the sender that are not collapses: data written and not sent
 * while nothing goes out, until an ACK or the application's next write
 * lets it go. A pure module: one flow's events (ACKs and writes, struct
 * bt_sample with its kind) in time order in, a stall record out when one
 * ends.
 *
 * The write tap reads the socket as send() returns, after TCP sent what it
 * could. Data left unsent then (write_seq ahead of snd_nxt) opens a stall,
 * its cause read from that moment, in this order:
 *   rwnd_limited    the next segment does not fit the peer's window
 *                   (snd_nxt + min(held, mss) - snd_una > snd_wnd)
 *   cwnd_limited    the packets in flight fill the congestion window
 *   nagle           the held data is under one MSS, data is in flight, and
 *                   neither TCP_NODELAY nor TCP_CORK is set: Nagle's
 *                   algorithm waits for the ACK of what is in flight
 *   pacing_limited  the pacing clock is ahead of now
 *   other           none of those (the evidence says what was seen)
 * An ACK after which the peer's window has no room for a segment (under one
 * MSS past snd_nxt) while data waits opens an rwnd_limited stall too: an
 * application that wrote everything long before is stalled by its receiver
 * all the same. A write whose snd_una is behind the last ACK's read the
 * socket before that ACK took effect (another CPU processed it while send()
 * returned; an ACK's time is when TCP took it in): that ACK may have sent
 * what the write left, so such a write opens no stall.
 * The stall lasts until an event shows snd_nxt past where it stood. An ACK's
 * event comes before TCP sends on it: when the data went out after the
 * previous event and that event was an ACK that could release it (not the
 * one that opened it; for Nagle, one that ACKed all in flight; for the
 * window, one whose window reached past where sending stopped), that ACK
 * did (ended_by "ack");
 * else, when this event is a write, or an ACK that shows more written than
 * the last event did (a write in progress: TCP processes the ACKs that came
 * meanwhile before send() returns), the write did ("write"); otherwise
 * something neither tap sees, such as the pacing timer ("unseen"), at the
 * latest by this event. Timers count first: a tail loss probe that went out
 * during the stall (tp->tlp_high_seq set at this event, not at its start)
 * sends held data whatever Nagle says ("unseen", by this event); a pacing
 * stall ends when the pacing clock's lead at its start runs out, if that
 * comes before this event ("unseen", then). A write that brings a Nagle
 * stall's held data to a full segment ends it ("write"): Nagle holds it no
 * longer, and the write opens a stall of what holds it now. A stall shorter
 * than BT_STALL_MIN_US (bbrtrace/rules.h) is no stall. An ACK that covers
 * the FIN ends any stall unreported.
 */
#ifndef BBRTRACE_STALL_H
#define BBRTRACE_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

/* what the tracker keeps of an event: when, its sequence numbers, its kind */
struct bt_stall_seen {
	uint64_t t_ns;
	uint32_t una, nxt, wseq, wnd;
	uint8_t kind;             /* enum bt_kind; 0xff before the first event */
};

/* one flow's stall in progress, and its last event */
struct bt_stall_state {
	/* what every event reads first, the stall in progress (456 bytes) last */
	bool open;
	bool window_opened;       /* opened by an ACK on a full window (its evidence differs) */
	uint32_t start_snd_nxt;
	struct bt_stall_seen last;
	struct bt_stall cur;      /* the stall in progress (open) */
};

void bt_stall_reset(struct bt_stall_state *st);

/* the flow's next event; true and *out filled when it ended a stall of at
 * least BT_STALL_MIN_US */
bool bt_stall_step(struct bt_stall_state *st, const struct bt_sample *e, struct bt_stall *out);

/* the cause of data left unsent after the write e, with its evidence in
 * evidence (len bytes; none when len is 0) */
enum bt_stall_cause bt_stall_cause_of(const struct bt_sample *e, char *evidence, unsigned int len);

#endif
