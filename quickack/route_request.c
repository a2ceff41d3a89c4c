// SPDX-License-Identifier: GPL-2.0-only
/*
 * The requests: the RTM_NEWROUTE payload that makes the kernel hold a
 * route with a change applied, rebuilt attribute by attribute from the
 * kernel's own bytes; a saved route moved to devices made again; and two
 * routes compared by their requests.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"
#include "route_bytes.h"

/* nexthop flags a request may carry; the others are state the kernel sets */
#define QA_RTNH_INPUT_FLAGS RTNH_F_ONLINK

struct out {
	uint8_t *buf;
	size_t cap, len;
	bool overflow;
};

static void out_bytes(struct out *o, const void *p, size_t n)
{
	if (o->overflow || o->cap - o->len < n) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void out_pad(struct out *o)
{
	static const uint8_t zero[4];

	out_bytes(o, zero, NLA_ALIGN(o->len) - o->len);
}

/* an attribute header whose length is patched by attr_end() */
static size_t attr_begin(struct out *o, uint16_t type)
{
	uint16_t hdr[2] = { 0, type };
	size_t at = o->len;

	out_bytes(o, hdr, sizeof(hdr));
	return at;
}

static void attr_end(struct out *o, size_t at)
{
	uint16_t n;

	if (o->overflow || o->len - at > 0xffff) {
		o->overflow = true;
		return;
	}
	n = (uint16_t)(o->len - at);
	memcpy(o->buf + at, &n, 2);
	out_pad(o);
}

static void attr_put(struct out *o, uint16_t type, const void *p, size_t n)
{
	size_t at = attr_begin(o, type);

	out_bytes(o, p, n);
	attr_end(o, at);
}

/* copy one attribute of r, header and payload, as the kernel sent it */
static void attr_copy(struct out *o, const struct qa_route *r, uint16_t type)
{
	const uint8_t *a = r->msg + r->attr_off[type];
	uint16_t alen = get_u16(a);

	out_bytes(o, a, alen);
	out_pad(o);
}

struct mx_copy_ctx {
	struct out *o;
};

static int copy_unknown_metric(uint16_t type, const uint8_t *pl, uint16_t plen, size_t off, void *arg)
{
	struct mx_copy_ctx *c = arg;

	(void)off;
	if (type == 0 || type >= QA_RTAX_N)
		attr_put(c->o, type, pl, plen);
	return 0;
}

static void put_metrics(struct out *o, const struct qa_route *r, const uint32_t *m, const char *cc)
{
	size_t at, start;

	at = attr_begin(o, RTA_METRICS);
	start = o->len;
	for (int t = 1; t < QA_RTAX_N; t++) {
		if (t == RTAX_CC_ALGO) {
			if (cc[0])
				attr_put(o, (uint16_t)t, cc, strlen(cc) + 1);
		} else if (m[t]) {
			attr_put(o, (uint16_t)t, &m[t], 4);
		}
	}
	if (r->attr_off[RTA_METRICS]) {
		const uint8_t *a = r->msg + r->attr_off[RTA_METRICS];
		struct mx_copy_ctx c = { o };

		qa_walk_attrs(a + ATTR_HDRLEN, get_u16(a) - ATTR_HDRLEN, 0, copy_unknown_metric, &c, NULL, 0);
	}
	if (o->len == start) { /* no metric at all: no attribute */
		o->len = at;
		return;
	}
	attr_end(o, at);
}

static void put_multipath(struct out *o, const struct qa_route *r)
{
	const uint8_t *p = r->msg + r->mpath_off;
	size_t pos = 0, at = attr_begin(o, RTA_MULTIPATH);

	while (pos < r->mpath_len) {
		struct rtnexthop nh;

		memcpy(&nh, p + pos, sizeof(nh));
		nh.rtnh_flags &= QA_RTNH_INPUT_FLAGS;
		out_bytes(o, &nh, sizeof(nh));
		out_bytes(o, p + pos + sizeof(nh), nh.rtnh_len - sizeof(nh));
		out_pad(o);
		pos += RTNH_ALIGN(nh.rtnh_len);
	}
	attr_end(o, at);
}

/* the attributes a request carries as the kernel reported them */
static bool attr_is_input(uint16_t type)
{
	switch (type) {
	case RTA_DST: case RTA_SRC: case RTA_IIF: case RTA_OIF: case RTA_GATEWAY:
	case RTA_PRIORITY: case RTA_PREFSRC: case RTA_FLOW: case RTA_TABLE: case RTA_VIA:
	case RTA_NEWDST: case RTA_PREF: case RTA_ENCAP_TYPE: case RTA_ENCAP:
	case RTA_TTL_PROPAGATE: case RTA_NH_ID:
		return true;
	default:
		return false;
	}
}

/* what a nexthop object stands for in a route */
static bool attr_is_nexthop(uint16_t type)
{
	switch (type) {
	case RTA_OIF: case RTA_GATEWAY: case RTA_VIA: case RTA_MULTIPATH: case RTA_FLOW:
	case RTA_ENCAP_TYPE: case RTA_ENCAP: case RTA_NEWDST:
		return true;
	default:
		return false;
	}
}

int qa_route_request(const struct qa_route *r, const struct qa_change *c, uint8_t *buf, size_t cap)
{
	struct out o = { buf, cap, 0, false };
	struct rtmsg rtm = r->rtm;
	uint32_t m[QA_RTAX_N];
	char cc[QA_CC_NAME_MAX];

	qa_change_apply(r, c, m, cc);
	/*
	 * A route using a nexthop object (RTA_NH_ID) is dumped with that
	 * nexthop spelled out too, but the kernel takes only the id back
	 * ("Nexthop specification and nexthop id are mutually exclusive").
	 */
	rtm.rtm_flags &= r->has_nhid ? 0 : QA_RTNH_INPUT_FLAGS;
	out_bytes(&o, &rtm, sizeof(rtm));
	out_pad(&o);
	for (uint16_t t = 1; t <= RTA_MAX; t++) {
		if (r->has_nhid && attr_is_nexthop(t))
			continue;
		if (t == RTA_METRICS)
			put_metrics(&o, r, m, cc);
		else if (t == RTA_MULTIPATH && r->attr_off[t])
			put_multipath(&o, r);
		else if (r->attr_off[t] && attr_is_input(t))
			attr_copy(&o, r, t);
	}
	return o.overflow ? -1 : (int)o.len;
}

/* an ifindex at p (host order, 4 bytes) through the map, when it is in it */
static void remap_ifindex(uint8_t *p, const uint32_t *from, const uint32_t *to, size_t n)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	for (size_t i = 0; i < n; i++) {
		if (v == from[i]) {
			memcpy(p, &to[i], sizeof(to[i]));
			return;
		}
	}
}

int qa_route_remap_devs(const struct qa_route *r, const uint32_t *from, const uint32_t *to, size_t n,
			struct qa_route *out, char *err, size_t errlen)
{
	uint8_t *m = malloc(r->len ? r->len : 1);
	size_t pos = 0;
	int rc;

	if (!m) {
		log_fmt(err, errlen, "out of memory");
		return -1;
	}
	memcpy(m, r->msg, r->len);
	if (r->attr_off[RTA_OIF])
		remap_ifindex(m + r->attr_off[RTA_OIF] + ATTR_HDRLEN, from, to, n);
	if (r->attr_off[RTA_IIF])
		remap_ifindex(m + r->attr_off[RTA_IIF] + ATTR_HDRLEN, from, to, n);
	while (r->nexthops && pos < r->mpath_len) {
		struct rtnexthop nh;

		memcpy(&nh, m + r->mpath_off + pos, sizeof(nh));
		remap_ifindex(m + r->mpath_off + pos + offsetof(struct rtnexthop, rtnh_ifindex), from, to, n);
		pos += RTNH_ALIGN(nh.rtnh_len);
	}
	rc = qa_route_parse(m, r->len, out, err, errlen);
	free(m);
	return rc;
}

bool qa_route_same(const struct qa_route *a, const struct qa_change *ca, const struct qa_route *b,
		   const struct qa_change *cb)
{
	size_t cap = (size_t)(a->len > b->len ? a->len : b->len) + QA_REQ_SLACK;
	uint8_t *x = malloc(cap), *y = malloc(cap);
	int nx, ny;
	bool same = false;

	if (x && y) {
		nx = qa_route_request(a, ca, x, cap);
		ny = qa_route_request(b, cb, y, cap);
		same = nx >= 0 && nx == ny && !memcmp(x, y, (size_t)nx);
	}
	free(x);
	free(y);
	return same;
}
