/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixes the verdicts propose, each worded once: the host's verdict and
 * each peer's verdict (bbrtrace/peerverdict.c) say the same thing for the
 * same cause.
 */
#ifndef BBRTRACE_FIXTEXT_H
#define BBRTRACE_FIXTEXT_H

#include <stddef.h>

/* a fix with two addresses and its words fits (verdict.h, peerverdict.h) */
#define BT_FIX_STR 384

/*
 * The receiver's quick ACKs for one sender: a host route to snd alone on
 * the receiver (quickack --to --host), not the route that covers snd, which
 * on an ingest is the default route to every pusher. The command as it
 * can be pasted there.
 */
void bt_fix_quickack_cmd(char *buf, size_t cap, const char *snd);
/* delayed ACKs that throttled: quick ACKs on the receiver rcv for snd */
void bt_fix_delack(char *buf, size_t cap, const char *rcv, const char *snd);
/*
 * Nagle's holds: TCP_NODELAY on the sender snd, with ffmpeg's flag for it
 * (the RTMP pusher the toolkit meets most), or quick ACKs on the receiver
 * rcv. Prompt ACKs end every hold after a round trip: the ones the delayed
 * ACK ended, and the ones the application's next write ended before it
 * came (rtmp.bats: ffmpeg at 60 fps, 296 of 299 holds ended by the next
 * write with quickack off, no Nagle stall with it on).
 */
void bt_fix_nagle(char *buf, size_t cap, const char *snd, const char *rcv);
/* a policer's: on the path (to peer, when one is named) */
void bt_fix_policer(char *buf, size_t cap, const char *peer);

#endif
