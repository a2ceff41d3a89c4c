// SPDX-License-Identifier: GPL-2.0-only
/* Route answers through libnl-3; dumps read again while the kernel marks them interrupted. */
#include <stdio.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "nlroute.h"

struct recv_state {
	const struct tk_nl_dump_ops *ops;
	char *why;
	size_t whylen;
	int refused;
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct recv_state *st = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);

	if (h->nlmsg_type != RTM_NEWROUTE)
		return NL_OK;
	if (st->ops->route(h, st->ops->ctx, st->why, st->whylen)) {
		st->refused = 1;
		return NL_STOP;
	}
	return NL_OK;
}

int tk_nl_recv_routes(struct nl_sock *sk, const struct tk_nl_dump_ops *ops, char *why, size_t whylen)
{
	struct recv_state st = { ops, why, whylen, 0 };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int e;

	if (!cb)
		return -NLE_NOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &st);
	e = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	return st.refused ? TK_NL_REFUSED : e;
}

/* one dump from the start: 0, 1 when interrupted, -1 (err) */
static int dump_once(struct nl_sock *sk, int family, const struct tk_nl_dump_ops *ops, char *err,
		     size_t errlen)
{
	struct rtmsg rtm = { .rtm_family = (unsigned char)family };
	int e;

	e = nl_send_simple(sk, RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm));
	if (e < 0) {
		snprintf(err, errlen, "cannot ask for the routes: %s", nl_geterror(e));
		return -1;
	}
	e = tk_nl_recv_routes(sk, ops, err, errlen);
	if (e == TK_NL_REFUSED)
		return -1;
	if (e == -NLE_DUMP_INTR)
		return 1;
	if (e < 0) {
		snprintf(err, errlen, "cannot read the routes: %s", nl_geterror(e));
		return -1;
	}
	return 0;
}

int tk_nl_dump_routes(struct nl_sock *sk, int family, const struct tk_nl_dump_ops *ops, char *err,
		      size_t errlen)
{
	for (int attempt = 0; attempt < TK_NL_DUMP_TRIES; attempt++) {
		int r;

		if (attempt && ops->restart)
			ops->restart(ops->ctx);
		r = dump_once(sk, family, ops, err, errlen);
		if (r <= 0)
			return r;
	}
	snprintf(err, errlen, "the routes kept changing during %d dumps", TK_NL_DUMP_TRIES);
	return -1;
}
