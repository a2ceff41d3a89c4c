/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Route dumps through libnl-3, the toolkit's one rtnetlink stack: one
 * RTM_GETROUTE dump per family, read again from the start when the kernel
 * marks it interrupted (NLM_F_DUMP_INTR: the table changed under the dump,
 * so what was read may miss routes or hold stale ones).
 */
#ifndef TK_NLROUTE_H
#define TK_NLROUTE_H

#include <stddef.h>

struct nl_sock;
struct nlmsghdr;

/* a dump interrupted this many times in a row is given up, with the reason */
#define TK_NL_DUMP_TRIES 5

struct tk_nl_dump_ops {
	/* one RTM_NEWROUTE message: 0 to go on, or -1 to stop the dump, with
	 * why (up to whylen bytes) saying what was wrong with it */
	int (*route)(const struct nlmsghdr *h, void *ctx, char *why, size_t whylen);
	/* forget what route() took so far: the dump is read again (may be NULL) */
	void (*restart)(void *ctx);
	void *ctx;
};

/*
 * Reads the answer to a route request already sent on sk, calling
 * ops->route for each route in it. libnl's result (0, or -NLE_*: the
 * kernel's error among them), or TK_NL_REFUSED with why saying why route()
 * refused a message.
 */
#define TK_NL_REFUSED 1
int tk_nl_recv_routes(struct nl_sock *sk, const struct tk_nl_dump_ops *ops, char *why, size_t whylen);

/*
 * Dumps family's routes (AF_INET or AF_INET6) on sk, calling ops->route for
 * each. 0, or -1 with err saying why: the socket failed, route() refused a
 * message, or the dump was interrupted TK_NL_DUMP_TRIES times.
 */
int tk_nl_dump_routes(struct nl_sock *sk, int family, const struct tk_nl_dump_ops *ops, char *err,
		      size_t errlen);

#endif
