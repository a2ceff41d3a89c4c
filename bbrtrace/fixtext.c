// SPDX-License-Identifier: GPL-2.0-only
/* The fixes the verdicts propose, each worded once. */
#include <stdio.h>

#include "bbrtrace/fixtext.h"

void bt_fix_nagle(char *buf, size_t cap, const char *snd, const char *rcv)
{
	snprintf(buf, cap,
		 "TCP_NODELAY on the sender %s (ffmpeg: -tcp_nodelay 1), or on the receiver %s "
		 "`quickack on --to %s`, whose prompt ACKs end each hold after a round trip",
		 snd, rcv, snd);
}

void bt_fix_policer(char *buf, size_t cap, const char *peer)
{
	snprintf(buf, cap,
		 "find the policer on the path%s%s and raise its rate or burst, or shape instead of "
		 "policing",
		 peer ? " to " : "", peer ? peer : "");
}
