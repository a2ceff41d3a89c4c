/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The detector's rules: the thresholds by which bbrtrace finds a collapse,
 * names its cause and impact, finds a stall and decides whether its verdict
 * proposes a fix, each with its unit and its reason. The records they fill
 * and the delayed-ACK floor that bbrpcap applies too are the trace's
 * (lib/trace.h).
 */
#ifndef BBRTRACE_RULES_H
#define BBRTRACE_RULES_H

#include "demand.h" /* the demand and an app-limited flow's need */

/* --- collapses and their causes ----------------------------------------------------- */

/* a collapse: BBR's estimate fell by at least this fraction on one ACK */
#define BT_COLLAPSE_RATIO_DEFAULT 0.30
/*
 * delayed_ack: the culprit sample's rcv_interval is at least this many times
 * its snd_interval (the ACK came late, not the data), and at least
 * BT_DELACK_FLOOR_US long (lib/trace.h) ...
 */
#define BT_DELACK_RATIO 5.0
/*
 * ... and the late ACK held back at most this many segments: a delayed-ACK
 * timer holds the ACK of the last one or two (RFC 1122 ACKs every second
 * full segment at once). More segments arriving that late drained through
 * a queue at the path's rate: a rate_drop, whatever the sender's burst. So
 * are more segments whose receive interval is at least the floor and over
 * their send interval by less than BT_DELACK_RATIO (a rate cut's queue as
 * BBR's pacing comes down: 22 ms against 5.2 ms, 21.6 against 10.8).
 */
#define BT_DELACK_MAX_SEGS 2
/*
 * ... and at most this long: the delayed-ACK timer is capped at 200 ms
 * (TCP_DELACK_MAX); a longer gap is something else (a retransmission
 * timeout, a closed window). 250 ms leaves a scheduler's slack.
 */
#define BT_DELACK_CEIL_US 250000u
/* rate_drop: the culprit's two intervals agree within this factor */
#define BT_AGREE_RATIO 2.0
/*
 * ack_jitter: the culprit's send and receive intervals are both under
 * BT_NOISE_FLOOR_US (lib/trace.h): the sample measured timing noise, not the
 * path (a veth's or a datacenter's round trip is tens of microseconds, and
 * scheduling, softirq batching and interrupt coalescing move an ACK by that
 * much). A receive interval between that floor and the delayed-ACK floor,
 * over its send interval, for a few segments, stays other, with its evidence.
 */
/*
 * burst_max: the old maximum was over BT_BURST_RATIO x what a bulk flow (not
 * app-limited) delivered while it held (lib/demand.h: a rate its path
 * sustained; a stream's says nothing of its path): over the demand's window
 * before the collapse, or before the maximum's sample when that was more
 * (behind a 2000-packet queue BBR's 10 rounds last 2 s, and a maximum from
 * before a rate cut collapses when the window holds only the new rate);
 * and the sample behind the new estimate still carries at least
 * (1 - collapse ratio) x that: the path gives what it gave; the maximum came from a burst no
 * sustained rate explains (a token bucket's allowance let through at line
 * rate, ACKs compressed into a train). Measured: through a 200 Mbit/s htb with
 * a 64 kB burst, two samples of 16-32 us set a 6.6 Gbit/s maximum; the bulk
 * flow delivered 191 Mbit/s. Twice is the margin the verdict keeps from a
 * path's capacity: a rate_drop never claims a fall from more than that.
 */
#define BT_BURST_RATIO 2.0

/* --- a collapse's impact: the flow's demand ----------------------------------------- */

/*
 * impact: a collapse throttles an app-limited flow when the pacing rate BBR
 * now allows is under BT_THROTTLE_HEADROOM x its demand. Both, and the
 * demand's window, are lib/demand.h's: bbrplot draws that need over the run.
 */
/*
 * A flow with more to send (not app-limited) is throttled when the pacing
 * allowed falls under (1 - collapse ratio) x what it delivered: its own
 * samples spread that far under its delivery (a bulk flow through a 200
 * Mbit/s htb: p5 0.77x, in samples of 4-8 ms), and a pacing within it is
 * BBR's sampling, not a throttle. A path that gave less (rate_drop,
 * loss_policer) throttles it until the pacing is back at all of what it
 * delivered: (1 - collapse ratio) would end a rate drop's throttle on the ACK
 * that began it. A policer's throttle lasts while BBR paces at its long-term
 * rate (lt_use_bw): the policer holds the flow there, and its delivery is the
 * policer's rate too, within 2% of lt_bw either way (headroom 0.99-1.04 in a
 * 20 Mbit/s tbf run), so a throttle ended by the pacing would last 12 ms in
 * one run and 3.4 s in the next.
 * It is not throttled by a collapse
 * of BT_CAUSE_BURST_MAX, or one whose culprit lies under BT_NOISE_FLOOR_US
 * (lib/trace.h): the estimate fell by noise, and comes back with the flow's
 * next sample over it. Measured on an unshaped veth (a bulk iperf3 flow,
 * 4,421 collapses that put the pacing under the demand): the estimate came
 * back over the demand after 57-195 us (medians by cause), and meanwhile the
 * flow delivered 0.82-1.31x its demand (medians): it was never held back.
 */

/* --- sender stalls ------------------------------------------------------------------ */

/*
 * A stall: after a write, data stayed unsent (write_seq ahead of snd_nxt)
 * and nothing more went out for at least BT_STALL_MIN_US. Below that, a
 * sub-MSS tail waiting a round trip for its ACK, or a pacing gap, is how TCP
 * works; 10 ms, the delayed-ACK floor, keeps out a veth path's jitter while
 * every delayed-ACK timer (40 ms at least) is over it.
 */
#define BT_STALL_MIN_US 10000u

/* --- the verdict: what is worth a fix ----------------------------------------------- */

/*
 * negligible throttling: the verdict proposes no fix when the throttling
 * collapses together held back less than BT_FIX_MIN_LATE_BYTES and
 * throttled for less than BT_FIX_MIN_THROTTLED_MS: under one frame of a
 * 1 Mbit/s stream at 30 fps (4.2 kB), within three frame intervals. One
 * held ACK around a push's handshake (11 ms, 0 kB) is not worth a change.
 */
#define BT_FIX_MIN_LATE_BYTES 4000u
#define BT_FIX_MIN_THROTTLED_MS 100u
/*
 * ... unless delayed ACKs throttled the stream this many times or more: then
 * the receiver's timer bites the stream's bursts again and again, and the
 * fix is proposed whatever the cost so far (a 10 s trace of the demo's push
 * measured 3 such throttles, 7.8 ms and 3 kB in all; a longer one, or a busier
 * receiver, measures more). One alone, as around a push's handshake, is not.
 */
#define BT_FIX_DELACK_RECURS 2u
/*
 * negligible stalls: the verdict proposes no fix for the sender's stalls
 * when together they held its data for less than this: two or three frames
 * held a few ms past BT_STALL_MIN_US. Under emulation an ACK that the
 * receiver sends at once (quickack on) can come 10 ms late: 3 such Nagle
 * stalls, 41 ms in all, are no reason to propose quickack.
 */
#define BT_STALL_FIX_MIN_MS 100u

#endif
