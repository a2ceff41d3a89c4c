/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixes the verdicts propose, each worded once: bbrtrace's verdict for
 * the host and for each peer (bbrtrace/peerverdict.c), and ackhold's from
 * the receiver, say the same thing for the same cause. Each is the narrowest fix the evidence supports, its commands
 * in backquotes as they are pasted on the host named before them.
 */
#ifndef TK_FIXTEXT_H
#define TK_FIXTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* a fix with two addresses, two ports and its words fits (verdict.h, peerverdict.h) */
#define BT_FIX_STR 448

/*
 * Delayed ACKs that throttled: on the receiver rcv, quick ACKs for snd
 * alone through a host route (quickack --to --host), never the route that
 * covers snd, which on an ingest is the default route to every pusher.
 * The port's socket scope (quickack on --port), which touches no route, is
 * named with why it does not stop them: the kernel takes no delayed-ACK cap
 * under 2 jiffies (TCP_BPF_DELACK_MAX), and a hold of milliseconds collapses
 * the estimate of a stream sent in bursts, whose samples span microseconds
 * when ACKed at once. repro/dip.sh --receiver app-ack, native RTT, 20 s,
 * three runs each: delayed_ack throttles 7, 8, 12 without it, 4, 7, 2 with
 * it (their rcv_interval 43 ms, 10 to 14 ms), throttled 39 to 60 ms without,
 * 150 to 394 ms with; none with quick ACKs.
 */
void bt_fix_delack(char *buf, size_t cap, const char *rcv, const char *snd, uint16_t port);

/*
 * Nagle's holds, by what ended them (ended[], lib/trace.h's ends): the
 * receiver's late ACK ended at least as many as the application's next
 * write did. Only then is the receiver's side of the fix worth naming: the
 * holds the next write ended were not waiting on the receiver.
 */
bool bt_nagle_ack_ended(const uint64_t ended[BT_NSTALL_ENDS]);

/*
 * Nagle's holds of the sender snd's stream to port on rcv: TCP_NODELAY on
 * the sender, which removes them (the sender-side scope, quickack nodelay
 * --dport, or the pusher's own option: ffmpeg's, the RTMP pusher the
 * toolkit meets most); and when the receiver's late ACK ended them
 * (ack_ended), also the receiver's port scope, whose ACKs within 2 jiffies
 * end each hold sooner (ffmpeg into nginx-rtmp at 20 fps: Nagle holds of
 * 37 ms each without it, 11 ms with it; rtmp.bats).
 */
void bt_fix_nagle(char *buf, size_t cap, const char *snd, const char *rcv, uint16_t port, bool ack_ended);

/* a policer's: on the path (to peer, when one is named) */
void bt_fix_policer(char *buf, size_t cap, const char *peer);

#endif
