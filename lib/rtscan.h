/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which routes name a congestion control (their RTAX_CC_ALGO metric, ip
 * route's "congctl"), read with one raw rtnetlink dump per family: for
 * bbrtrace, which must tell the user, before it unregisters bbr_traced,
 * which routes still name it (a route naming a congestion control the kernel
 * no longer has makes iproute2 6.1's `ip route show` crash). The dumps go
 * through lib/nlroute, the toolkit's one rtnetlink stack.
 */
#ifndef TK_RTSCAN_H
#define TK_RTSCAN_H

#include <stddef.h>

/*
 * Calls fn once per route of this thread's network namespace whose congctl
 * is cc, with the route as `ip route` would name it ("10.0.1.0/24 table
 * 100"), once every route of its family is read. Returns how many, or -1
 * with err saying why the routes could not all be read (fn is called all
 * the same for the routes of a family read whole).
 */
int rtscan_congctl(const char *cc, void (*fn)(void *ctx, const char *route), void *ctx, char *err,
		   size_t errlen);

#endif
