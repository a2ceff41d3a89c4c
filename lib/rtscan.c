// SPDX-License-Identifier: GPL-2.0-only
/*
 * The route scan: one RTM_GETROUTE dump per family on a raw rtnetlink socket,
 * each route's RTA_METRICS searched for RTAX_CC_ALGO, a match named as ip
 * route names it, and the dump bounded in messages.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtscan.h"

#define RTSCAN_BUF (64 * 1024)
#define RTSCAN_MAX_MSGS 1000000 /* a dump of more routes than this is cut: bound the loop */

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

static int dump_family(int fd, int family, const char *cc, void (*fn)(void *, const char *), void *ctx)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg r;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETROUTE,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		  .r = { .rtm_family = (unsigned char)family } };
	static char buf[RTSCAN_BUF];
	int found = 0;

	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	for (unsigned int msgs = 0; msgs < RTSCAN_MAX_MSGS;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		int len = (int)n;

		if (n < 0)
			return errno == EINTR ? -EINTR : -errno;
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (unsigned int)len); h = NLMSG_NEXT(h, len), msgs++) {
			char desc[96];

			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_type == RTM_NEWROUTE && route_names(h, cc, desc, sizeof(desc))) {
				fn(ctx, desc);
				found++;
			}
		}
	}
	return found;
}

int rtscan_congctl(const char *cc, void (*fn)(void *ctx, const char *route), void *ctx)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int n4, n6;

	if (fd < 0)
		return -errno;
	n4 = dump_family(fd, AF_INET, cc, fn, ctx);
	n6 = n4 < 0 ? n4 : dump_family(fd, AF_INET6, cc, fn, ctx);
	close(fd);
	if (n4 < 0)
		return n4;
	return n6 < 0 ? n6 : n4 + n6;
}
