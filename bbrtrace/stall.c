// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stall tracker: a write that leaves data unsent, or an ACK whose window
 * leaves no room, opens a stall with its cause read then; it closes when the
 * data is seen gone, at the time it left, and counts from BT_STALL_MIN_US.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bbrtrace/rules.h"
#include "bbrtrace/stall.h"
#include "bpf/contract/bbrtrace.h"
#include "common.h"

/* tp->nonagle's bits (include/net/tcp.h) */
#define NAGLE_OFF 1
#define NAGLE_CORK 2

#define NO_EVENT 0xff

void bt_stall_reset(struct bt_stall_state *st)
{
	memset(st, 0, sizeof(*st));
	st->last.kind = NO_EVENT;
}

/* b is after a in sequence space */
static bool seq_after(uint32_t b, uint32_t a)
{
	return (int32_t)(b - a) > 0;
}

enum bt_stall_cause bt_stall_cause_of(const struct bt_sample *e, char *evidence, unsigned int len)
{
	/* no evidence asked (len 0): the cause alone, without formatting */
	uint32_t held = e->write_seq - e->snd_nxt, flight = e->snd_nxt - e->snd_una;
	uint32_t next = held < e->mss ? held : e->mss;
	uint32_t packets = e->prior_in_flight; /* a write: tcp_packets_in_flight() */

	if (flight + next > e->snd_wnd) {
		if (len)
			snprintf(evidence, len, "%u bytes in flight and the next %u do not fit the peer's %u-byte window",
			 flight, next, e->snd_wnd);
		return BT_STALL_RWND;
	}
	if (e->cwnd && packets >= e->cwnd) {
		if (len)
			snprintf(evidence, len, "%u packets in flight fill the congestion window of %u", packets,
			 e->cwnd);
		return BT_STALL_CWND;
	}
	if (held < e->mss && flight > 0 && !(e->nonagle & (NAGLE_OFF | NAGLE_CORK))) {
		if (len)
			snprintf(evidence, len, "%u bytes under one MSS (%u) held while %u bytes in flight wait for "
			 "their ACK, Nagle on (no TCP_NODELAY)", held, e->mss, flight);
		return BT_STALL_NAGLE;
	}
	if (e->rtt_us > 0) { /* a write carries the pacing clock's lead here */
		if (len)
			snprintf(evidence, len, "the pacing clock %lld us ahead", (long long)e->rtt_us);
		return BT_STALL_PACING;
	}
	if (len)
		snprintf(evidence, len, "%u bytes held, %u in flight, %u packets of a %u-packet window, "
		 "nonagle %u", held, flight, packets, e->cwnd, e->nonagle);
	return BT_STALL_OTHER;
}

/*
 * A stall's evidence in words, written only for one that counts: a bulk
 * sender opens a stall at nearly every write, and most close within
 * microseconds.
 */
static void evidence(const struct bt_stall_state *st, struct bt_stall *out)
{
	const struct bt_sample *e = &st->cur.at;

	if (st->window_opened)
		snprintf(out->evidence, sizeof(out->evidence),
			 "after an ACK, the peer's %u-byte window has no room for a segment and %u bytes wait",
			 e->snd_wnd, st->cur.held_bytes);
	else
		bt_stall_cause_of(e, out->evidence, sizeof(out->evidence));
}

/* the stall in progress ends at end_ns, by `by`; true when it counts */
static bool close_stall(struct bt_stall_state *st, uint64_t end_ns, enum bt_stall_end by,
			struct bt_stall *out)
{
	uint64_t us = end_ns > st->cur.at.t_ns ? (end_ns - st->cur.at.t_ns) / TK_NSEC_PER_USEC : 0;

	st->open = false;
	if (us < BT_STALL_MIN_US)
		return false;
	*out = st->cur;
	out->duration_us = us;
	out->ended_by = by;
	evidence(st, out);
	return true;
}

/* the data that stayed unsent after write e: a stall begins */
static void open_stall(struct bt_stall_state *st, const struct bt_sample *e)
{
	memset(&st->cur, 0, sizeof(st->cur));
	st->cur.at = *e;
	st->cur.held_bytes = e->write_seq - e->snd_nxt;
	st->cur.in_flight_bytes = e->snd_nxt - e->snd_una;
	st->cur.cause = bt_stall_cause_of(e, NULL, 0);
	st->start_snd_nxt = e->snd_nxt;
	st->window_opened = false;
	st->open = true;
}

/*
 * An ACK after which the peer's window leaves no room for a segment (under
 * one MSS past snd_nxt) while data waits: nothing can go until the window
 * opens (a window update reaches no tap: the stall ends "unseen", or on a
 * later ACK or write). Only then is the window the limit: with room left,
 * TCP sends and what holds the rest (cwnd, pacing) shows at the next write.
 */
static void open_window_stall(struct bt_stall_state *st, const struct bt_sample *e)
{
	memset(&st->cur, 0, sizeof(st->cur));
	st->cur.at = *e;
	st->cur.held_bytes = e->write_seq - e->snd_nxt;
	st->cur.in_flight_bytes = e->snd_nxt - e->snd_una;
	st->cur.cause = BT_STALL_RWND;
	st->start_snd_nxt = e->snd_nxt;
	st->window_opened = true;
	st->open = true;
}

/* the window left no room for a segment past snd_nxt */
static bool window_full(const struct bt_sample *e)
{
	return (int32_t)(e->snd_una + e->snd_wnd - e->snd_nxt) < (int32_t)(e->mss ? e->mss : 1);
}

/* the last event was an ACK that could let the held data go: not the ACK
 * that opened the stall; for Nagle, one that ACKed all in flight; for the
 * window, one whose window reached past where sending stopped */
static bool released_by_last_ack(const struct bt_stall_state *st)
{
	const struct bt_stall_seen *l = &st->last;

	if (l->kind != BT_KIND_ACK || l->t_ns == st->cur.at.t_ns)
		return false;
	if (st->cur.cause == BT_STALL_NAGLE)
		return l->una == l->nxt;
	if (st->cur.cause == BT_STALL_RWND)
		return seq_after(l->una + l->wnd, st->start_snd_nxt);
	return true;
}

/*
 * A write that read the socket before an ACK that comes earlier in time order
 * took effect: its snd_una is behind that ACK's. An ACK's time is when TCP
 * took the segment in, and another CPU can process it while send() returns;
 * that ACK, processed after the write's read, may have sent what the write
 * left (a ffmpeg push: a 1092-byte tail on the wire 10 us after the write,
 * called an 11.6 ms Nagle stall). Such a write opens no stall.
 */
static bool stale_write(const struct bt_stall_state *st, const struct bt_sample *e)
{
	return e->kind == BT_KIND_WRITE && st->last.kind == BT_KIND_ACK && seq_after(st->last.una, e->snd_una);
}

/*
 * Timers send held data too, and no tap sees them. A tail loss probe sent
 * since the stall began (out at e, not at its start) sends new data, Nagle
 * or not: under load, with ACKs late, 7 ms into a push's 16 ms Nagle hold.
 */
static bool probe_sent(const struct bt_stall_state *st, const struct bt_sample *e)
{
	return e->tlp_out && !st->cur.at.tlp_out;
}

/* the pacing timer sends when the pacing clock's lead at a pacing stall's
 * start runs out; UINT64_MAX for the other causes */
static uint64_t pacing_end_ns(const struct bt_stall_state *st)
{
	const struct bt_sample *at = &st->cur.at;

	return st->cur.cause == BT_STALL_PACING && at->rtt_us > 0 ? at->t_ns + (uint64_t)at->rtt_us * TK_NSEC_PER_USEC
								  : UINT64_MAX;
}

/* a write that brought the held data of a Nagle stall to a full segment:
 * Nagle holds it no longer, whatever holds it now (pacing, cwnd) */
static bool nagle_outgrown(const struct bt_stall_state *st, const struct bt_sample *e)
{
	return st->cur.cause == BT_STALL_NAGLE && e->kind == BT_KIND_WRITE &&
	       e->write_seq - e->snd_nxt >= e->mss;
}

/*
 * When the data seen gone at e left: its last packet's time (the pacing clock
 * it was stamped with, e's sent_ago_us before e), after the last event, which
 * saw it still held. An event comes when a write returns, or when TCP takes in
 * an ACK, which a write that holds the socket defers to its end: under load a
 * ffmpeg write sent a tail, then held the socket 1.25 ms, and the Nagle stall
 * was called 1.25 ms longer than the wire showed.
 */
static uint64_t sent_ns(const struct bt_stall_state *st, const struct bt_sample *e)
{
	uint64_t ago = (uint64_t)e->sent_ago_us * TK_NSEC_PER_USEC, t = e->t_ns > ago ? e->t_ns - ago : 0;

	return t > st->last.t_ns ? t : st->last.t_ns;
}

/* what sent the data of the stall in progress, seen at e: a stall that counts */
static bool close_sent(struct bt_stall_state *st, const struct bt_sample *e, struct bt_stall *out)
{
	uint64_t paced_ns = pacing_end_ns(st);

	if (paced_ns < e->t_ns)
		return close_stall(st, paced_ns, BT_STALL_END_UNSEEN, out);
	if (released_by_last_ack(st))
		return close_stall(st, st->last.t_ns, BT_STALL_END_ACK, out);
	if (probe_sent(st, e))
		return close_stall(st, e->t_ns, BT_STALL_END_UNSEEN, out);
	if (e->kind == BT_KIND_WRITE || seq_after(e->write_seq, st->last.wseq))
		/* a write, or an ACK while one was in progress: its data went out */
		return close_stall(st, sent_ns(st, e), BT_STALL_END_WRITE, out);
	return close_stall(st, sent_ns(st, e), BT_STALL_END_UNSEEN, out);
}

bool bt_stall_step(struct bt_stall_state *st, const struct bt_sample *e, struct bt_stall *out)
{
	bool ended = false;

	if (st->open && e->kind == BT_KIND_ACK && e->fin_acked)
		st->open = false; /* the stream is over */
	else if (st->open && seq_after(e->snd_nxt, st->start_snd_nxt))
		ended = close_sent(st, e, out); /* it went out between the last event and this one */
	else if (st->open && nagle_outgrown(st, e))
		ended = close_stall(st, e->t_ns, BT_STALL_END_WRITE, out);
	if (stale_write(st, e)) {
		st->last.wseq = e->write_seq; /* it wrote that much, all the same */
		return ended;
	}
	if (!st->open && e->kind == BT_KIND_WRITE && seq_after(e->write_seq, e->snd_nxt))
		open_stall(st, e);
	else if (!st->open && e->kind == BT_KIND_ACK && !e->fin_acked && e->write_seq &&
		 seq_after(e->write_seq, e->snd_nxt) && window_full(e))
		open_window_stall(st, e);
	st->last = (struct bt_stall_seen){ .t_ns = e->t_ns, .una = e->snd_una, .nxt = e->snd_nxt,
					   .wseq = e->write_seq, .wnd = e->snd_wnd, .kind = e->kind };
	return ended;
}
