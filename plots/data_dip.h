/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the dip plot's two readers (the trace, data_dip_trace.c; the
 * capture's throughput, data_dip_tput.c) share: a socket's end written as
 * bbrpcap writes it, and the lowest rate drawn, for the rate axis' floor.
 */
#ifndef PLOTS_DATA_DIP_H
#define PLOTS_DATA_DIP_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plots/plotdata.h"

/* "ADDR:PORT", "[ADDR]:PORT" for IPv6 */
static inline void dip_endpoint(const char *addr, unsigned int port, char *buf, size_t len)
{
	snprintf(buf, len, strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, port);
}

/* the lowest rate drawn above 0, for the rate axis' floor */
static inline void dip_note_rate(struct pd_dip_info *info, double mbps_v)
{
	if (mbps_v > 0 && isfinite(mbps_v) && (info->min_mbps <= 0 || mbps_v < info->min_mbps))
		info->min_mbps = mbps_v;
}

#endif
