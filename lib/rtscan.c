// SPDX-License-Identifier: GPL-2.0-only
/*
 * The route scan: each IPv4 and IPv6 route of the namespace read through
 * lib/nlroute, its RTA_METRICS searched for RTAX_CC_ALGO, and a match named
 * as ip route names it.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nlroute.h"
#include "rtscan.h"

/* the congctl of a route's RTA_METRICS, or NULL */
static const char *cc_of(const struct rtattr *metrics)
{
	const struct rtattr *a = RTA_DATA(metrics);
	int len = (int)RTA_PAYLOAD(metrics);

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type & ~RTAX_FEATURE_ALLFRAG) == RTAX_CC_ALGO && RTA_PAYLOAD(a) > 0)
			return RTA_DATA(a);
	return NULL;
}

/* "10.0.1.0/24 table 100", as ip route names it */
static void describe(const struct rtmsg *rtm, const struct rtattr *dst, unsigned int table, char *buf,
		     size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "default";

	if (dst)
		inet_ntop(rtm->rtm_family, RTA_DATA(dst), addr, sizeof(addr));
	if (dst || rtm->rtm_dst_len)
		snprintf(buf, len, "%s/%u", addr, rtm->rtm_dst_len);
	else
		snprintf(buf, len, "default");
	if (table != RT_TABLE_MAIN)
		snprintf(buf + strlen(buf), len - strlen(buf), " table %u", table);
}

/* one route message: does it name cc? */
static bool route_names(const struct nlmsghdr *h, const char *cc, char *desc, size_t len)
{
	const struct rtmsg *rtm = NLMSG_DATA(h);
	const struct rtattr *a = RTM_RTA(rtm), *dst = NULL;
	int alen = (int)RTM_PAYLOAD(h);
	unsigned int table = rtm->rtm_table;
	bool hit = false;

	for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type == RTA_DST)
			dst = a;
		else if (a->rta_type == RTA_TABLE && RTA_PAYLOAD(a) >= 4)
			memcpy(&table, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_METRICS) {
			const char *name = cc_of(a);

			hit = name && !strncmp(name, cc, RTA_PAYLOAD(a));
		}
	}
	if (hit)
		describe(rtm, dst, table, desc, len);
	return hit;
}

/* the routes found; a family's are forgotten when its dump is read again,
 * so that none is named twice */
struct scan {
	const char *cc;
	char (*names)[96];
	int n, cap, family_start;
};

static int on_route(const struct nlmsghdr *h, void *arg, char *why, size_t whylen)
{
	struct scan *s = arg;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return 0; /* a message too short to be a route names nothing */
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 8;
		char (*v)[96] = realloc(s->names, (size_t)cap * sizeof(*v));

		if (!v) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		s->names = v;
		s->cap = cap;
	}
	s->n += route_names(h, s->cc, s->names[s->n], sizeof(s->names[s->n]));
	return 0;
}

static void restart(void *arg)
{
	struct scan *s = arg;

	s->n = s->family_start;
}

static int dump_family(struct nl_sock *sk, int family, struct scan *s, char *err, size_t errlen)
{
	struct tk_nl_dump_ops ops = { .route = on_route, .restart = restart, .ctx = s };

	s->family_start = s->n;
	if (!tk_nl_dump_routes(sk, family, &ops, err, errlen))
		return 0;
	s->n = s->family_start; /* a family read in part names nothing */
	return -1;
}

int rtscan_congctl(const char *cc, void (*fn)(void *ctx, const char *route), void *ctx, char *err,
		   size_t errlen)
{
	struct scan s = { .cc = cc };
	struct nl_sock *sk = nl_socket_alloc();
	int e, r = -1;

	if (!sk) {
		snprintf(err, errlen, "cannot allocate a netlink socket");
		return -1;
	}
	e = nl_connect(sk, NETLINK_ROUTE);
	if (e < 0)
		snprintf(err, errlen, "cannot open a netlink socket: %s", nl_geterror(e));
	else if (!dump_family(sk, AF_INET, &s, err, errlen) && !dump_family(sk, AF_INET6, &s, err, errlen))
		r = s.n;
	nl_socket_free(sk);
	for (int i = 0; i < s.n; i++)
		fn(ctx, s.names[i]);
	free(s.names);
	return r;
}
