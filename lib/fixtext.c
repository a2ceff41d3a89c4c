// SPDX-License-Identifier: GPL-2.0-only
/* The fixes the verdicts propose, each worded once. */
#include <stdio.h>

#include "fixtext.h"

void bt_fix_delack(char *buf, size_t cap, const char *rcv, const char *snd, uint16_t port)
{
	snprintf(buf, cap,
		 "on the receiver %s, `quickack on --to %s --host` (a host route to this sender alone), so "
		 "that it ACKs at once; a socket scope on its port, `quickack on --port %u`, touches no route "
		 "but does not stop these: it caps each hold at 2 jiffies (8 ms at HZ 250) at best, and holds that "
		 "long still collapse the estimate",
		 rcv, snd, port);
}

bool bt_nagle_ack_ended(const uint64_t ended[BT_NSTALL_ENDS])
{
	return ended[BT_STALL_END_ACK] && ended[BT_STALL_END_ACK] >= ended[BT_STALL_END_WRITE];
}

void bt_fix_nagle(char *buf, size_t cap, const char *snd, const char *rcv, uint16_t port, bool ack_ended)
{
	int n = snprintf(buf, cap,
			 "TCP_NODELAY on the sender %s, with `quickack nodelay --dport %u` there or the pusher's "
			 "own option (ffmpeg: -tcp_nodelay 1)",
			 snd, port);

	if (ack_ended && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n,
			 "; and on the receiver %s, `quickack on --port %u`, whose ACKs within 2 jiffies end "
			 "each hold sooner",
			 rcv, port);
}

void bt_fix_policer(char *buf, size_t cap, const char *peer)
{
	snprintf(buf, cap,
		 "find the policer on the path%s%s and raise its rate or burst, or shape instead of "
		 "policing",
		 peer ? " to " : "", peer ? peer : "");
}
