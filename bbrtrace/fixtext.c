// SPDX-License-Identifier: GPL-2.0-only
/* The fixes the verdicts propose, each worded once. */
#include <stdio.h>

#include "bbrtrace/fixtext.h"

void bt_fix_quickack_cmd(char *buf, size_t cap, const char *snd)
{
	snprintf(buf, cap, "`quickack on --to %s --host`", snd);
}

void bt_fix_delack(char *buf, size_t cap, const char *rcv, const char *snd)
{
	char cmd[128];

	bt_fix_quickack_cmd(cmd, sizeof(cmd), snd);
	snprintf(buf, cap, "on the receiver %s, %s (a host route to this sender alone), so that it ACKs at once",
		 rcv, cmd);
}

void bt_fix_nagle(char *buf, size_t cap, const char *snd, const char *rcv)
{
	char cmd[128];

	bt_fix_quickack_cmd(cmd, sizeof(cmd), snd);
	snprintf(buf, cap,
		 "TCP_NODELAY on the sender %s (ffmpeg: -tcp_nodelay 1), or on the receiver %s %s, whose "
		 "prompt ACKs end each hold after a round trip",
		 snd, rcv, cmd);
}

void bt_fix_policer(char *buf, size_t cap, const char *peer)
{
	snprintf(buf, cap,
		 "find the policer on the path%s%s and raise its rate or burst, or shape instead of "
		 "policing",
		 peer ? " to " : "", peer ? peer : "");
}
