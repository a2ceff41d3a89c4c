// SPDX-License-Identifier: GPL-2.0-only
/*
 * A route in words: the names of metrics and families, addresses and
 * prefixes as text, and a route's name in messages.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "route.h"

static const char *const metric_names[QA_RTAX_N] = {
	[RTAX_LOCK] = "lock",           [RTAX_MTU] = "mtu",
	[RTAX_WINDOW] = "window",       [RTAX_RTT] = "rtt",
	[RTAX_RTTVAR] = "rttvar",       [RTAX_SSTHRESH] = "ssthresh",
	[RTAX_CWND] = "cwnd",           [RTAX_ADVMSS] = "advmss",
	[RTAX_REORDERING] = "reordering", [RTAX_HOPLIMIT] = "hoplimit",
	[RTAX_INITCWND] = "initcwnd",   [RTAX_FEATURES] = "features",
	[RTAX_RTO_MIN] = "rto_min",     [RTAX_INITRWND] = "initrwnd",
	[RTAX_QUICKACK] = "quickack",   [RTAX_CC_ALGO] = "congctl",
	[RTAX_FASTOPEN_NO_COOKIE] = "fastopen_no_cookie",
};

const char *qa_metric_name(int rtax)
{
	return rtax > 0 && rtax < QA_RTAX_N ? metric_names[rtax] : "unknown";
}

const char *qa_family_name(int family)
{
	return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "unknown";
}

const char *qa_addr_str(int family, const uint8_t *addr, char *buf, size_t cap)
{
	if (!inet_ntop(family, addr, buf, (socklen_t)cap))
		snprintf(buf, cap, "?");
	return buf;
}

const char *qa_prefix_str(int family, const uint8_t *addr, unsigned int len, char *buf, size_t cap)
{
	char a[INET6_ADDRSTRLEN];

	snprintf(buf, cap, "%s/%u", qa_addr_str(family, addr, a, sizeof(a)), len);
	return buf;
}

const char *qa_route_name(const struct qa_route *r, char *buf, size_t cap)
{
	char d[64], s[64], t[24];
	int n;

	n = snprintf(buf, cap, "%s table %s metric %u",
		     qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, d, sizeof(d)),
		     qa_table_str(r->table, t, sizeof(t)), r->priority);
	if (r->rtm.rtm_src_len && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " from %s",
			      qa_prefix_str(r->family, r->src, r->rtm.rtm_src_len, s, sizeof(s)));
	if (r->rtm.rtm_tos && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " tos 0x%02x", r->rtm.rtm_tos);
	return buf;
}
