/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rtnetlink through libnl-3: route dumps, device names, and batches of
 * route requests. A batch goes out as few datagrams as it can (many
 * RTM_NEWROUTE messages per sendmsg); only the last message of a datagram
 * asks for an ACK, as a fence: the kernel answers the others only when they
 * fail, with extended ACKs on so that its own error text reaches the user.
 */
#ifndef QA_NL_H
#define QA_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "route.h"

struct nl_sock;
struct nl_cache;

struct qa_nl {
	struct nl_sock *sk;
	struct nl_cache *links;
	uint32_t seq;
	unsigned int window;     /* messages in flight per datagram */
};

struct qa_routes {
	struct qa_route *v;
	size_t n, cap;
};

/* one route request of a batch: struct rtmsg + attributes, sent as
 * message type (RTM_NEWROUTE, RTM_DELROUTE) with nlmsg_flags (NLM_F_REPLACE;
 * NLM_F_CREATE | NLM_F_EXCL; 0) */
struct qa_req {
	const uint8_t *data;
	uint32_t len;
	uint16_t type;
	uint16_t nlmsg_flags;
};

struct qa_ack {
	bool acked;
	int error;         /* 0, or a positive errno from the kernel */
	char msg[200];     /* the kernel's extended-ack message, "" when none */
};

struct qa_batch_stats {
	unsigned int datagrams;
	unsigned int messages;
	uint64_t bytes;
};

/* open and connect; changes: large socket buffers for batches. 0 or -1 (err) */
int qa_nl_open(struct qa_nl *nl, bool changes, char *err, size_t errlen);
void qa_nl_close(struct qa_nl *nl);

/* device index by name (0: no such device), and the name of an index */
uint32_t qa_nl_ifindex(struct qa_nl *nl, const char *name);
const char *qa_nl_ifname(struct qa_nl *nl, uint32_t ifindex, char *buf, size_t len);
/* the name of an index, or NULL when no device has it (qa_nl_ifname says "ifN") */
const char *qa_nl_ifname_known(struct qa_nl *nl, uint32_t ifindex, char *buf, size_t len);

/* the route the kernel would use to reach `to` (ip route get fibmatch), in
 * table `table` (0: the kernel's choice); 0, 1 when none reaches it, -1 */
struct cli_addr;
int qa_nl_route_to(struct qa_nl *nl, const struct cli_addr *to, uint32_t table, struct qa_route *out,
		   char *err, size_t errlen);

/* dump IPv4 and/or IPv6 routes (family 0: both) into out, appending */
int qa_nl_dump(struct qa_nl *nl, int family, struct qa_routes *out, char *err, size_t errlen);
void qa_routes_free(struct qa_routes *rs);

/*
 * Send n requests (NLM_F_REQUEST is added to each one's flags, and
 * NLM_F_ACK on each datagram's fence) and fill one answer per request
 * into acks[]: the kernel's error, or success.
 * Returns 0 when every request got its answer; -1 when the transport
 * failed (err says how; requests whose acks[i].acked is false may or may
 * not have been applied, so read the routes back).
 */
int qa_nl_batch(struct qa_nl *nl, const struct qa_req *reqs, size_t n, struct qa_ack *acks,
		struct qa_batch_stats *st, char *err, size_t errlen);

#endif
