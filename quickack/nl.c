// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's rtnetlink socket through libnl-3: opened with extended ACKs and
 * buffers sized for batches, device names from the link cache, route dumps
 * and fibmatch lookups, and batches sent with one fenced ACK per datagram.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/socket.h>
#include <netlink/cache.h>
#include <netlink/route/link.h>

#include "nl.h"
#include "nlroute.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define BATCH_BYTES_MAX (256 * 1024) /* per datagram: under the netlink sndbuf we ask for */
#define ACK_TIMEOUT_MS 10000

int qa_nl_open(struct qa_nl *nl, bool changes, char *err, size_t errlen)
{
	int one = 1, fd, rcv = 0;
	socklen_t sl = sizeof(rcv);
	int e;

	memset(nl, 0, sizeof(*nl));
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		snprintf(err, errlen, "cannot allocate a netlink socket");
		return -1;
	}
	e = nl_connect(nl->sk, NETLINK_ROUTE);
	if (e < 0) {
		snprintf(err, errlen, "cannot open a netlink socket: %s", nl_geterror(e));
		nl_socket_free(nl->sk);
		nl->sk = NULL;
		return -1;
	}
	nl_socket_enable_msg_peek(nl->sk);
	fd = nl_socket_get_fd(nl->sk);
	/* the kernel's error text (extended ACK), without the request echoed back */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (changes) {
		int sz = 8 << 20;

		/* FORCE needs CAP_NET_ADMIN, which changes need anyway */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &sl);
	/* an error answer costs about 1 KiB of receive buffer: if every request of a
	 * datagram failed, their answers must still fit */
	nl->window = (unsigned int)(rcv / 2048);
	if (nl->window < 32)
		nl->window = 32;
	if (nl->window > 2048)
		nl->window = 2048;
	e = rtnl_link_alloc_cache(nl->sk, AF_UNSPEC, &nl->links);
	if (e < 0) {
		snprintf(err, errlen, "cannot read the network devices: %s", nl_geterror(e));
		qa_nl_close(nl);
		return -1;
	}
	nl->seq = 1000;
	return 0;
}

void qa_nl_close(struct qa_nl *nl)
{
	if (nl->links)
		nl_cache_free(nl->links);
	if (nl->sk)
		nl_socket_free(nl->sk);
	memset(nl, 0, sizeof(*nl));
}

uint32_t qa_nl_ifindex(struct qa_nl *nl, const char *name)
{
	int i = rtnl_link_name2i(nl->links, name);

	return i > 0 ? (uint32_t)i : 0;
}

const char *qa_nl_ifname_known(struct qa_nl *nl, uint32_t ifindex, char *buf, size_t len)
{
	return rtnl_link_i2name(nl->links, (int)ifindex, buf, len) ? buf : NULL;
}

const char *qa_nl_ifname(struct qa_nl *nl, uint32_t ifindex, char *buf, size_t len)
{
	if (!rtnl_link_i2name(nl->links, (int)ifindex, buf, len))
		snprintf(buf, len, "if%u", ifindex);
	return buf;
}

/* --- dumps -------------------------------------------------------------------------- */

/* the routes read so far, and where this family's began (a restart goes back there) */
struct dump_ctx {
	struct qa_routes *out;
	size_t start;
};

/* one route message into out: 0, or -1 with why */
static int take_route(const struct nlmsghdr *h, void *arg, char *why, size_t whylen)
{
	struct dump_ctx *c = arg;
	struct qa_routes *rs = c->out;
	struct qa_route r;
	char bad[160];

	if (qa_route_parse(nlmsg_data(h), (size_t)nlmsg_datalen(h), &r, bad, sizeof(bad))) {
		snprintf(why, whylen, "the kernel sent a route this program cannot read: %s", bad);
		return -1;
	}
	if (r.rtm.rtm_flags & RTM_F_CLONED) { /* cache entries, not routes */
		qa_route_free(&r);
		return 0;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 256;
		struct qa_route *v = realloc(rs->v, cap * sizeof(*v));

		if (!v) {
			qa_route_free(&r);
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = r;
	return 0;
}

static void forget_family(void *arg)
{
	struct dump_ctx *c = arg;

	while (c->out->n > c->start)
		qa_route_free(&c->out->v[--c->out->n]);
}

static int dump_family(struct qa_nl *nl, int family, struct qa_routes *out, char *err, size_t errlen)
{
	struct dump_ctx c = { .out = out, .start = out->n };
	struct tk_nl_dump_ops ops = { .route = take_route, .restart = forget_family, .ctx = &c };

	if (!tk_nl_dump_routes(nl->sk, family, &ops, err, errlen))
		return 0;
	forget_family(&c);
	return -1;
}

int qa_nl_dump(struct qa_nl *nl, int family, struct qa_routes *out, char *err, size_t errlen)
{
	if ((!family || family == AF_INET) && dump_family(nl, AF_INET, out, err, errlen))
		return -1;
	if ((!family || family == AF_INET6) && dump_family(nl, AF_INET6, out, err, errlen))
		return -1;
	return 0;
}

/*
 * The route the kernel would use to reach `to`, as `ip route get fibmatch`
 * finds it (RTM_F_FIB_MATCH, 4.13+: the FIB entry itself, not a clone), in
 * table `table` (0: the kernel's choice). 0 and the route in *out, 1 when no
 * route reaches it, -1 on error.
 */
int qa_nl_route_to(struct qa_nl *nl, const struct cli_addr *to, uint32_t table, struct qa_route *out,
		   char *err, size_t errlen)
{
	struct qa_routes found = { 0 };
	struct dump_ctx c = { .out = &found };
	struct tk_nl_dump_ops ops = { .route = take_route, .ctx = &c };
	struct rtmsg rtm = { .rtm_family = (unsigned char)to->family,
			     .rtm_dst_len = to->family == AF_INET ? 32 : 128, .rtm_flags = RTM_F_FIB_MATCH };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
	int e;

	if (!msg || nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO) ||
	    nla_put(msg, RTA_DST, to->family == AF_INET ? 4 : 16, to->bytes) ||
	    (table && nla_put_u32(msg, RTA_TABLE, table))) {
		nlmsg_free(msg);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	e = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (e < 0) {
		snprintf(err, errlen, "cannot ask for the route: %s", nl_geterror(e));
		return -1;
	}
	e = tk_nl_recv_routes(nl->sk, &ops, err, errlen);
	/* the answer came; the ACK libnl asked for follows it: read it too, so
	 * that the next dump does not take it for its own end */
	if (e == TK_NL_REFUSED) {
		nl_wait_for_ack(nl->sk);
		qa_routes_free(&found);
		return -1;
	}
	if (e == 0)
		e = nl_wait_for_ack(nl->sk);
	/* ENETUNREACH, EHOSTUNREACH: no route; the kernel says so as an error */
	if (e == -NLE_NOADDR || e == -NLE_OBJ_NOTFOUND || e == -NLE_FAILURE || !found.n) {
		qa_routes_free(&found);
		return 1;
	}
	if (e < 0) {
		qa_routes_free(&found);
		snprintf(err, errlen, "cannot read the route: %s", nl_geterror(e));
		return -1;
	}
	*out = found.v[0];
	for (size_t i = 1; i < found.n; i++)
		qa_route_free(&found.v[i]);
	free(found.v);
	return 0;
}

void qa_routes_free(struct qa_routes *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		qa_route_free(&rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

/* --- batches --------------------------------------------------------------------------- */

/* an NLMSG_ERROR answer: errno and the extended-ack text when there is one */
static void read_ack(const struct nlmsghdr *h, struct qa_ack *ack)
{
	const struct nlmsgerr *e = nlmsg_data(h);
	size_t off, total = h->nlmsg_len;

	ack->acked = true;
	ack->error = e->error < 0 ? -e->error : e->error;
	ack->msg[0] = '\0';
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = NLMSG_HDRLEN + sizeof(*e);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(e->msg);
	if (off >= total)
		return;
	{
		struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

		if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)h + off), (int)(total - off),
			      NULL) < 0)
			return;
		if (tb[NLMSGERR_ATTR_MSG]) {
			int n = nla_len(tb[NLMSGERR_ATTR_MSG]);

			snprintf(ack->msg, sizeof(ack->msg), "%.*s", n, (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
			n = (int)strlen(ack->msg);
			while (n && (ack->msg[n - 1] == '\n' || ack->msg[n - 1] == '.'))
				ack->msg[--n] = '\0';
		}
	}
}

/*
 * Read answers until the fence (the last request of [lo, hi), the only one
 * sent with NLM_F_ACK) has one. The kernel handles a datagram's requests in
 * order and answers a request without NLM_F_ACK only when it fails, so once
 * the fence is answered every failure before it has been read, and the
 * requests without an answer succeeded. -1 on failure or timeout.
 */
static int collect_acks(struct qa_nl *nl, uint32_t seq0, size_t lo, size_t hi, struct qa_ack *acks,
			char *err, size_t errlen)
{
	static char buf[64 * 1024] __attribute__((aligned(8)));
	int fd = nl_socket_get_fd(nl->sk);
	size_t fence = hi - 1;

	while (!acks[fence].acked) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int pr = poll(&p, 1, ACK_TIMEOUT_MS);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			snprintf(err, errlen, "no answer from the kernel for %zu request(s) after %d ms", hi - lo,
				 ACK_TIMEOUT_MS);
			return -1;
		}
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			snprintf(err, errlen, "reading the kernel's answers failed: %s%s", strerror(errno),
				 errno == ENOBUFS ? " (answers were lost; the routes are read back)" : "");
			return -1;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			uint32_t idx = h->nlmsg_seq - seq0;

			if (h->nlmsg_type != NLMSG_ERROR || idx < lo || idx >= hi ||
			    h->nlmsg_len < NLMSG_HDRLEN + sizeof(struct nlmsgerr))
				continue;
			read_ack(h, &acks[idx]);
		}
	}
	for (size_t i = lo; i < fence; i++)
		acks[i].acked = true; /* no answer before the fence: done, without error */
	return 0;
}

int qa_nl_batch(struct qa_nl *nl, const struct qa_req *reqs, size_t n, struct qa_ack *acks,
		struct qa_batch_stats *st, char *err, size_t errlen)
{
	int fd = nl_socket_get_fd(nl->sk);
	uint32_t seq0 = nl->seq, port = nl_socket_get_local_port(nl->sk);
	uint8_t *buf = malloc(BATCH_BYTES_MAX);
	size_t i = 0;
	int ret = 0;

	memset(acks, 0, n * sizeof(*acks));
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (i < n) {
		size_t first = i, used = 0;
		ssize_t sent;

		/* as many messages as fit the datagram and the ACK window */
		while (i < n && i - first < nl->window) {
			size_t mlen = NLMSG_SPACE(reqs[i].len);
			struct nlmsghdr *h = (struct nlmsghdr *)(buf + used);

			if (used + mlen > BATCH_BYTES_MAX)
				break;
			memset(h, 0, NLMSG_HDRLEN);
			h->nlmsg_len = (uint32_t)NLMSG_LENGTH(reqs[i].len);
			h->nlmsg_type = reqs[i].type;
			h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | reqs[i].nlmsg_flags);
			h->nlmsg_seq = seq0 + (uint32_t)i;
			h->nlmsg_pid = port;
			memcpy(NLMSG_DATA(h), reqs[i].data, reqs[i].len);
			memset((uint8_t *)h + h->nlmsg_len, 0, mlen - h->nlmsg_len);
			used += mlen;
			i++;
		}
		if (i == first) {
			snprintf(err, errlen, "a request of %u bytes does not fit a datagram", reqs[i].len);
			ret = -1;
			break;
		}
		/* the last request of the datagram is the fence: the only one acknowledged */
		((struct nlmsghdr *)(buf + used - NLMSG_SPACE(reqs[i - 1].len)))->nlmsg_flags |= NLM_F_ACK;
		do
			sent = send(fd, buf, used, 0);
		while (sent < 0 && errno == EINTR);
		if (sent < 0) {
			snprintf(err, errlen, "sending %zu route requests failed: %s", i - first, strerror(errno));
			ret = -1;
			break;
		}
		if (st) {
			st->datagrams++;
			st->messages += (unsigned int)(i - first);
			st->bytes += used;
		}
		if (collect_acks(nl, seq0, first, i, acks, err, errlen)) {
			ret = -1;
			break;
		}
	}
	nl->seq = seq0 + (uint32_t)n + 1;
	free(buf);
	return ret;
}
