/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the route_*.c files share about a route's bytes: header lengths,
 * unaligned reads, an address family's length, and the attribute walk.
 * Private to them.
 */
#ifndef QA_ROUTE_BYTES_H
#define QA_ROUTE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define RTM_HDRLEN NLMSG_ALIGN(sizeof(struct rtmsg))
#define ATTR_HDRLEN NLA_HDRLEN

static inline unsigned int addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static inline uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Walk attributes in [p, p+len): each well formed, the last one possibly
 * without its padding. Calls fn for each; stops at the first error.
 */
typedef int (*attr_fn)(uint16_t type, const uint8_t *payload, uint16_t plen, size_t off, void *arg);
int qa_walk_attrs(const uint8_t *p, size_t len, size_t base, attr_fn fn, void *arg, char *err,
		  size_t errlen);

#endif
