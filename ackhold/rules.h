/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's rules, each with its reason: what a hold worth a record is,
 * when a sender waited on an ACK, and what Nagle's signature is. The
 * defaults of the options that set them are here too, written once.
 */
#ifndef ACKHOLD_RULES_H
#define ACKHOLD_RULES_H

/*
 * A hold is reported, one record each, from this long (--min-hold), and
 * always when the delayed-ACK timer sent the ACK. 10 ms is bbrtrace's
 * delayed-ACK floor (lib/trace.h): a prompt ACK leaves within microseconds
 * of the segment, and a host whose ACKs wait 10 ms without the timer is
 * starved of CPU, which is worth seeing too.
 */
#define AH_MIN_HOLD_MS_DEFAULT "10"

/*
 * What ended a hold the delayed-ACK timer did not: the sender's next data
 * when the ACK left within AH_DATA_ENDED_MS of the latest segment's arrival
 * (the kernel ACKs a second full segment, or one that fills a hole, as it
 * processes it: microseconds; 1 ms leaves room for a busy host's softirq).
 * Such a hold is the delayed-ACK policy waiting for more data while the
 * sender sent it: it held nothing back. Otherwise, when the delayed-ACK
 * timer was still armed as the ACK left (the kernel had scheduled a delayed
 * ACK), this host's application ended it: its data carried the ACK (an
 * answer), or its read let the kernel send it (tcp_cleanup_rbuf: a pushed
 * segment read, a window opened); quick ACKs would have sent those at
 * once. When the timer was not armed, no delayed ACK was scheduled: the
 * ACK was late for another reason (this host's CPU; a receive window the
 * application had not opened), which no quickack setting changes: seen in
 * the 6.1 guest with quick ACKs on the route, 4 holds of 10 to 85 ms. The
 * arrival time is the kernel's processing of the segment, so a hold never
 * includes this host's wait to process it.
 */
#define AH_DATA_ENDED_MS 1

/*
 * A hold with a segment that came out of order, or again after the kernel
 * dropped it, ended when the sender repaired the loss: the loss held the
 * ACK, not this host's ACK policy (whose ACKs are immediate while a hole
 * is open), and it is counted apart. Checked before the timer's.
 */

/*
 * The sender waited on an ACK when it had been silent until the ACK for
 * longer than the window below, and its next data segment arrived within
 * that window after the ACK. The window is max(2 RTT, AH_WAIT_FLOOR_MS):
 * one RTT for the ACK to reach the sender and its data to come back,
 * doubled for the RTT's own variation; the floor takes a busy sender's
 * wake-up at RTTs of microseconds (namespaces on one host, a datacenter).
 * A sender with nothing to send (an application-limited stream between
 * frames) resumes later, with its next frame: it did not wait.
 */
#define AH_WAIT_FLOOR_MS 2
#define AH_WAIT_RTTS 2

/*
 * Nagle's signature: the sender waited, and the hold's latest segment was
 * shorter than the MSS the receiver saw (icsk_ack.rcv_mss): Nagle keeps a
 * second short segment back until the first is ACKed, so a frame's tail
 * waits on the receiver's delayed ACK.
 */

/*
 * /metrics names the peers worst over the last AH_WINDOW_MIN minutes, as
 * bbrtrace's does (its BT_WINDOW_MIN): long enough for a scrape every
 * minute to see a stall, short enough that a fixed peer leaves the page
 * soon. AH_METRICS_PEERS of them by default (--metrics-peers), the rest
 * summed as peer="other": the page's series stay bounded whatever the
 * number of peers.
 */
#define AH_WINDOW_MIN 5
#define AH_METRICS_PEERS 10
#define AH_METRICS_PEERS_MAX 1000

#endif
