// SPDX-License-Identifier: GPL-2.0-only
/*
 * A host route for one address, made from the route that covers it: the
 * same table, metric, nexthops and metrics, with the address as its whole
 * prefix (/32, /128), so that a change to it reaches that one peer and no
 * other.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"
#include "route_bytes.h"

struct copy_ctx {
	uint8_t *buf;
	size_t len;
};

/* each attribute but RTA_DST, as it is (with its padding) */
static int copy_attr(uint16_t type, const uint8_t *payload, uint16_t plen, size_t off, void *arg)
{
	struct copy_ctx *c = arg;
	size_t n = ATTR_HDRLEN + plen;

	(void)off;
	if (type == RTA_DST)
		return 0;
	memcpy(c->buf + c->len, payload - ATTR_HDRLEN, n);
	memset(c->buf + c->len + n, 0, NLA_ALIGN(n) - n);
	c->len += NLA_ALIGN(n);
	return 0;
}

/* the message of r with `to` as its destination, a host prefix */
static uint8_t *host_msg(const struct qa_route *r, const struct cli_addr *to, size_t *len, char *err,
			 size_t errlen)
{
	struct copy_ctx c = { malloc(RTM_HDRLEN + NLA_ALIGN(ATTR_HDRLEN + 16) + NLA_ALIGN(r->len)), 0 };
	struct rtmsg rtm = r->rtm;
	struct rtattr dst = { (unsigned short)(ATTR_HDRLEN + addr_len(to->family)), RTA_DST };

	if (!c.buf) {
		log_fmt(err, errlen, "out of memory");
		return NULL;
	}
	rtm.rtm_dst_len = (unsigned char)qa_host_prefix_len(to->family);
	/* made by the administrator, not by the kernel or a routing daemon:
	 * a daemon that owns the covering route's protocol leaves it alone */
	rtm.rtm_protocol = RTPROT_STATIC;
	memset(c.buf, 0, RTM_HDRLEN);
	memcpy(c.buf, &rtm, sizeof(rtm));
	c.len = RTM_HDRLEN;
	memcpy(c.buf + c.len, &dst, sizeof(dst));
	memcpy(c.buf + c.len + ATTR_HDRLEN, to->bytes, addr_len(to->family));
	c.len += NLA_ALIGN(dst.rta_len);
	if (qa_walk_attrs(r->msg + RTM_HDRLEN, r->len - RTM_HDRLEN, RTM_HDRLEN, copy_attr, &c, err, errlen)) {
		free(c.buf);
		return NULL;
	}
	*len = c.len;
	return c.buf;
}

int qa_route_host(const struct qa_route *r, const struct cli_addr *to, const struct qa_change *chg,
		  struct qa_route *out, char *err, size_t errlen)
{
	struct qa_route copy;
	uint8_t *req = malloc(QA_MSG_MAX);
	size_t len = 0;
	uint8_t *m;
	int n = -1, rc = -1;

	if (!req || to->family != r->family) {
		log_fmt(err, errlen, req ? "the route is not of the address' family" : "out of memory");
		free(req);
		return -1;
	}
	m = host_msg(r, to, &len, err, errlen);
	if (m && !qa_route_parse(m, len, &copy, err, errlen)) {
		n = qa_route_request(&copy, chg, req, QA_MSG_MAX);
		qa_route_free(&copy);
		if (n < 0)
			log_fmt(err, errlen, "the host route does not fit a request");
	}
	if (n >= 0)
		rc = qa_route_parse(req, (size_t)n, out, err, errlen);
	free(m);
	free(req);
	return rc;
}
