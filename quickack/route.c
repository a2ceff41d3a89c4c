// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "common.h"
#include "log.h"
#include "route.h"

#define RTM_HDRLEN NLMSG_ALIGN(sizeof(struct rtmsg))
#define ATTR_HDRLEN NLA_HDRLEN

/* nexthop flags a request may carry; the others are state the kernel sets */
#define QA_RTNH_INPUT_FLAGS RTNH_F_ONLINK

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

static unsigned int addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static bool host_bits_zero(const uint8_t *a, unsigned int len, unsigned int max)
{
	for (unsigned int bit = len; bit < max; bit++)
		if (a[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

/*
 * Walk attributes in [p, p+len): each well formed, the last one possibly
 * without its padding. Calls fn for each; stops at the first error.
 */
typedef int (*attr_fn)(uint16_t type, const uint8_t *payload, uint16_t plen, size_t off, void *arg);

static int walk_attrs(const uint8_t *p, size_t len, size_t base, attr_fn fn, void *arg, char *err,
		      size_t errlen)
{
	size_t off = 0;

	while (off < len) {
		uint16_t alen, type;

		if (len - off < ATTR_HDRLEN) {
			log_fmt(err, errlen, "%zu stray bytes at offset %zu", len - off, base + off);
			return -1;
		}
		alen = get_u16(p + off);
		type = get_u16(p + off + 2) & NLA_TYPE_MASK;
		if (alen < ATTR_HDRLEN || alen > len - off) {
			log_fmt(err, errlen, "attribute %u at offset %zu has a bad length %u", type, base + off,
			     alen);
			return -1;
		}
		if (fn(type, p + off + ATTR_HDRLEN, (uint16_t)(alen - ATTR_HDRLEN), base + off, arg)) {
			return -1;
		}
		off += NLA_ALIGN(alen);
	}
	return 0;
}

struct parse_ctx {
	struct qa_route *r;
	char *err;
	size_t errlen;
	uint64_t seen_metrics;
	unsigned int alen;
};

static int parse_metric(uint16_t type, const uint8_t *pl, uint16_t plen, size_t off, void *arg)
{
	struct parse_ctx *c = arg;

	if (type == 0 || type >= QA_RTAX_N)
		return 0; /* a metric newer than this program: kept as it is */
	if (c->seen_metrics & (1ull << type)) {
		log_fmt(c->err, c->errlen, "metric %s appears twice (offset %zu)", metric_names[type], off);
		return -1;
	}
	c->seen_metrics |= 1ull << type;
	if (type == RTAX_CC_ALGO) {
		size_t n = strnlen((const char *)pl, plen);

		if (n == 0 || n == plen || n >= QA_CC_NAME_MAX) {
			log_fmt(c->err, c->errlen, "congctl metric at offset %zu is not a name", off);
			return -1;
		}
		memcpy(c->r->cc, pl, n);
		c->r->cc[n] = '\0';
		return 0;
	}
	if (plen != 4) {
		log_fmt(c->err, c->errlen, "metric %s at offset %zu has %u bytes, not 4", metric_names[type],
		     off, plen);
		return -1;
	}
	c->r->metric[type] = get_u32(pl);
	return 0;
}

static int check_nh_attr(uint16_t type, const uint8_t *pl, uint16_t plen, size_t off, void *arg)
{
	struct parse_ctx *c = arg;

	(void)pl;
	if (type == RTA_GATEWAY && plen != c->alen) {
		log_fmt(c->err, c->errlen, "nexthop gateway at offset %zu has %u bytes", off, plen);
		return -1;
	}
	if (type == RTA_VIA && plen < 2) {
		log_fmt(c->err, c->errlen, "nexthop via at offset %zu is too short", off);
		return -1;
	}
	return 0;
}

static int parse_multipath(struct parse_ctx *c, const uint8_t *pl, uint16_t plen, size_t off)
{
	size_t pos = 0;
	unsigned int n = 0;

	while (pos < plen) {
		struct rtnexthop nh;

		if (plen - pos < sizeof(nh)) {
			log_fmt(c->err, c->errlen, "truncated nexthop at offset %zu", off + pos);
			return -1;
		}
		memcpy(&nh, pl + pos, sizeof(nh));
		if (nh.rtnh_len < sizeof(nh) || nh.rtnh_len > plen - pos) {
			log_fmt(c->err, c->errlen, "nexthop at offset %zu has a bad length %u", off + pos,
			     nh.rtnh_len);
			return -1;
		}
		if (walk_attrs(pl + pos + sizeof(nh), nh.rtnh_len - sizeof(nh), off + pos + sizeof(nh),
			       check_nh_attr, c, c->err, c->errlen))
			return -1;
		n++;
		pos += RTNH_ALIGN(nh.rtnh_len);
	}
	if (!n) {
		log_fmt(c->err, c->errlen, "multipath attribute at offset %zu has no nexthop", off);
		return -1;
	}
	c->r->nexthops = n;
	return 0;
}

static int parse_attr(uint16_t type, const uint8_t *pl, uint16_t plen, size_t off, void *arg)
{
	struct parse_ctx *c = arg;
	struct qa_route *r = c->r;
	unsigned int max = c->alen * 8;

	if (type > RTA_MAX)
		return 0; /* newer than this program: left out of requests */
	if (r->attr_off[type]) {
		log_fmt(c->err, c->errlen, "attribute %u appears twice (offset %zu)", type, off);
		return -1;
	}
	r->attr_off[type] = (uint16_t)off;
	switch (type) {
	case RTA_DST:
	case RTA_SRC: {
		uint8_t *a = type == RTA_DST ? r->dst : r->src;
		unsigned int l = type == RTA_DST ? r->rtm.rtm_dst_len : r->rtm.rtm_src_len;

		if (plen != c->alen) {
			log_fmt(c->err, c->errlen, "%s address at offset %zu has %u bytes",
			     type == RTA_DST ? "destination" : "source", off, plen);
			return -1;
		}
		memcpy(a, pl, plen);
		if (!host_bits_zero(a, l, max)) {
			log_fmt(c->err, c->errlen, "%s address at offset %zu has bits beyond /%u",
			     type == RTA_DST ? "destination" : "source", off, l);
			return -1;
		}
		return 0;
	}
	case RTA_GATEWAY:
		if (plen != c->alen) {
			log_fmt(c->err, c->errlen, "gateway at offset %zu has %u bytes", off, plen);
			return -1;
		}
		r->gw_family = r->family;
		memcpy(r->gw, pl, plen);
		return 0;
	case RTA_VIA: {
		uint16_t fam;

		if (plen < 2) {
			log_fmt(c->err, c->errlen, "via at offset %zu is too short", off);
			return -1;
		}
		fam = get_u16(pl);
		if (addr_len(fam) && (unsigned int)(plen - 2) == addr_len(fam)) {
			r->gw_family = fam;
			memcpy(r->gw, pl + 2, addr_len(fam));
		}
		return 0;
	}
	case RTA_OIF:
	case RTA_PRIORITY:
	case RTA_TABLE:
	case RTA_NH_ID:
		if (plen != 4) {
			log_fmt(c->err, c->errlen, "attribute %u at offset %zu has %u bytes, not 4", type, off,
			     plen);
			return -1;
		}
		if (type == RTA_OIF)
			r->oif = get_u32(pl);
		else if (type == RTA_PRIORITY)
			r->priority = get_u32(pl);
		else if (type == RTA_TABLE)
			r->table = get_u32(pl);
		else {
			r->has_nhid = true;
			r->nhid = get_u32(pl);
		}
		return 0;
	case RTA_CACHEINFO: {
		struct rta_cacheinfo ci;

		if (plen < sizeof(ci)) {
			log_fmt(c->err, c->errlen, "cache info at offset %zu is too short", off);
			return -1;
		}
		memcpy(&ci, pl, sizeof(ci));
		r->expires_cs = ci.rta_expires;
		return 0;
	}
	case RTA_METRICS:
		return walk_attrs(pl, plen, off + ATTR_HDRLEN, parse_metric, c, c->err, c->errlen);
	case RTA_MULTIPATH:
		return parse_multipath(c, pl, plen, off + ATTR_HDRLEN);
	case RTA_PREF:
		if (plen != 1) {
			log_fmt(c->err, c->errlen, "preference at offset %zu has %u bytes", off, plen);
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}

int qa_route_parse(const void *data, size_t len, struct qa_route *r, char *err, size_t errlen)
{
	struct parse_ctx c = { .r = r, .err = err, .errlen = errlen };

	memset(r, 0, sizeof(*r));
	if (len < RTM_HDRLEN) {
		log_fmt(err, errlen, "route message of %zu bytes is shorter than struct rtmsg", len);
		return -1;
	}
	if (len > QA_MSG_MAX) {
		log_fmt(err, errlen, "route message of %zu bytes is too long", len);
		return -1;
	}
	memcpy(&r->rtm, data, sizeof(r->rtm));
	r->family = r->rtm.rtm_family;
	c.alen = addr_len(r->family);
	if (!c.alen) {
		log_fmt(err, errlen, "address family %u is neither IPv4 nor IPv6", r->rtm.rtm_family);
		return -1;
	}
	if (r->rtm.rtm_dst_len > c.alen * 8 || r->rtm.rtm_src_len > c.alen * 8) {
		log_fmt(err, errlen, "prefix length /%u is too long for %s", r->rtm.rtm_dst_len > c.alen * 8 ?
		     r->rtm.rtm_dst_len : r->rtm.rtm_src_len, qa_family_name(r->family));
		return -1;
	}
	r->table = r->rtm.rtm_table;
	if (walk_attrs((const uint8_t *)data + RTM_HDRLEN, len - RTM_HDRLEN, RTM_HDRLEN, parse_attr, &c,
		       err, errlen))
		return -1;
	if (r->rtm.rtm_dst_len && !r->attr_off[RTA_DST]) {
		log_fmt(err, errlen, "route /%u has no destination address", r->rtm.rtm_dst_len);
		return -1;
	}
	if (r->rtm.rtm_src_len && !r->attr_off[RTA_SRC]) {
		log_fmt(err, errlen, "route with source /%u has no source address", r->rtm.rtm_src_len);
		return -1;
	}
	if (r->attr_off[RTA_MULTIPATH]) {
		r->mpath_off = r->attr_off[RTA_MULTIPATH] + ATTR_HDRLEN;
		r->mpath_len = get_u16((const uint8_t *)data + r->attr_off[RTA_MULTIPATH]) - ATTR_HDRLEN;
	}
	r->msg = malloc(len);
	if (!r->msg) {
		log_fmt(err, errlen, "out of memory");
		return -1;
	}
	memcpy(r->msg, data, len);
	r->len = (uint32_t)len;
	return 0;
}

void qa_route_free(struct qa_route *r)
{
	if (!r)
		return;
	free(r->msg);
	r->msg = NULL;
	r->len = 0;
}

void qa_route_key(const struct qa_route *r, struct qa_route_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)r->family;
	k->dst_len = r->rtm.rtm_dst_len;
	k->src_len = r->rtm.rtm_src_len;
	k->tos = r->rtm.rtm_tos;
	k->table = r->table;
	k->priority = r->priority;
	memcpy(k->dst, r->dst, 16);
	memcpy(k->src, r->src, 16);
}

int qa_route_key_cmp(const struct qa_route_key *a, const struct qa_route_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

/* --- changes ----------------------------------------------------------------- */

void qa_change_apply(const struct qa_route *r, const struct qa_change *c, uint32_t metric[QA_RTAX_N],
		     char cc[QA_CC_NAME_MAX])
{
	memcpy(metric, r->metric, sizeof(r->metric));
	memcpy(cc, r->cc, QA_CC_NAME_MAX);
	if (!c)
		return;
	switch (c->op) {
	case QA_OP_QUICKACK:
		metric[RTAX_QUICKACK] = c->value;
		break;
	case QA_OP_RTO_MIN:
		/* the kernel uses a route's rto_min only when it is locked (as ip route does) */
		metric[RTAX_RTO_MIN] = c->value;
		if (c->value)
			metric[RTAX_LOCK] |= 1u << RTAX_RTO_MIN;
		else
			metric[RTAX_LOCK] &= ~(1u << RTAX_RTO_MIN);
		break;
	case QA_OP_CONGCTL:
		memset(cc, 0, QA_CC_NAME_MAX);
		snprintf(cc, QA_CC_NAME_MAX, "%s", c->cc);
		if (!c->cc[0])
			metric[RTAX_LOCK] &= ~(1u << RTAX_CC_ALGO);
		else if (c->lock)
			metric[RTAX_LOCK] |= 1u << RTAX_CC_ALGO;
		break;
	}
}

bool qa_change_needed(const struct qa_route *r, const struct qa_change *c)
{
	uint32_t m[QA_RTAX_N];
	char cc[QA_CC_NAME_MAX];

	qa_change_apply(r, c, m, cc);
	return memcmp(m, r->metric, sizeof(m)) || strcmp(cc, r->cc);
}

static void rto_str(uint32_t ms, char *buf, size_t len)
{
	if (ms)
		snprintf(buf, len, "%ums", ms);
	else
		snprintf(buf, len, "off");
}

void qa_change_describe(const struct qa_route *r, const struct qa_change *c, char *buf, size_t len)
{
	uint32_t m[QA_RTAX_N];
	char cc[QA_CC_NAME_MAX], a[24], b[24];

	qa_change_apply(r, c, m, cc);
	switch (c->op) {
	case QA_OP_QUICKACK:
		snprintf(buf, len, "quickack %u -> %u", r->metric[RTAX_QUICKACK], m[RTAX_QUICKACK]);
		break;
	case QA_OP_RTO_MIN:
		rto_str(r->metric[RTAX_RTO_MIN], a, sizeof(a));
		rto_str(m[RTAX_RTO_MIN], b, sizeof(b));
		snprintf(buf, len, "rto_min %s -> %s", a, b);
		break;
	case QA_OP_CONGCTL:
		snprintf(buf, len, "congctl %s%s -> %s%s", r->cc[0] ? r->cc : "off",
			 r->metric[RTAX_LOCK] & (1u << RTAX_CC_ALGO) ? " (locked)" : "",
			 cc[0] ? cc : "off", m[RTAX_LOCK] & (1u << RTAX_CC_ALGO) ? " (locked)" : "");
		break;
	}
}

bool qa_route_changeable(const struct qa_route *r, char *why, size_t len)
{
	if (r->rtm.rtm_type != RTN_UNICAST) {
		log_fmt(why, len, "it is not a unicast route (quickack changes unicast routes only)");
		return false;
	}
	if (r->rtm.rtm_flags & RTM_F_CLONED) {
		log_fmt(why, len, "it is a cached clone, not a route");
		return false;
	}
	if (r->expires_cs) {
		log_fmt(why, len, "it expires in %u s, and replacing it would reset its timer",
		     (r->expires_cs + 99) / 100);
		return false;
	}
	if (r->family == AF_INET6 && r->rtm.rtm_protocol == RTPROT_RA) {
		log_fmt(why, len, "it was learned from router advertisements (proto ra), which the kernel manages");
		return false;
	}
	return true;
}

/* --- requests ---------------------------------------------------------------- */

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

		walk_attrs(a + ATTR_HDRLEN, get_u16(a) - ATTR_HDRLEN, 0, copy_unknown_metric, &c, NULL, 0);
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

/* --- presentation ------------------------------------------------------------ */

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

void qa_route_nexthops(const struct qa_route *r,
		       void (*fn)(uint32_t ifindex, int gw_family, const uint8_t *gw, void *arg),
		       void *arg)
{
	const uint8_t *p = r->msg + r->mpath_off;
	size_t pos = 0;

	if (!r->nexthops) {
		if (r->oif || r->gw_family)
			fn(r->oif, r->gw_family, r->gw, arg);
		return;
	}
	while (pos < r->mpath_len) {
		struct rtnexthop nh;
		const uint8_t *a;
		size_t apos = 0, alen;
		int gwf = 0;
		uint8_t gw[16] = { 0 };

		memcpy(&nh, p + pos, sizeof(nh));
		a = p + pos + sizeof(nh);
		alen = nh.rtnh_len - sizeof(nh);
		while (apos + ATTR_HDRLEN <= alen) {
			uint16_t l = get_u16(a + apos), t = get_u16(a + apos + 2) & NLA_TYPE_MASK;

			if (l < ATTR_HDRLEN || l > alen - apos)
				break;
			if (t == RTA_GATEWAY && (unsigned int)(l - ATTR_HDRLEN) == addr_len(r->family)) {
				gwf = r->family;
				memcpy(gw, a + apos + ATTR_HDRLEN, addr_len(r->family));
			} else if (t == RTA_VIA && l - ATTR_HDRLEN >= 2) {
				uint16_t f = get_u16(a + apos + ATTR_HDRLEN);

				if (addr_len(f) && (unsigned int)(l - ATTR_HDRLEN - 2) == addr_len(f)) {
					gwf = f;
					memcpy(gw, a + apos + ATTR_HDRLEN + 2, addr_len(f));
				}
			}
			apos += NLA_ALIGN(l);
		}
		fn((uint32_t)nh.rtnh_ifindex, gwf, gw, arg);
		pos += RTNH_ALIGN(nh.rtnh_len);
	}
}

struct uses_ctx {
	uint32_t ifindex;
	int family;
	const uint8_t *gw;
	bool found;
};

static void uses_dev_cb(uint32_t ifindex, int gwf, const uint8_t *gw, void *arg)
{
	struct uses_ctx *c = arg;

	(void)gwf;
	(void)gw;
	if (ifindex == c->ifindex)
		c->found = true;
}

static void uses_gw_cb(uint32_t ifindex, int gwf, const uint8_t *gw, void *arg)
{
	struct uses_ctx *c = arg;

	(void)ifindex;
	if (gwf && gwf == c->family && !memcmp(gw, c->gw, addr_len(gwf)))
		c->found = true;
}

bool qa_route_uses_dev(const struct qa_route *r, uint32_t ifindex)
{
	struct uses_ctx c = { .ifindex = ifindex };

	qa_route_nexthops(r, uses_dev_cb, &c);
	return c.found;
}

bool qa_route_uses_gw(const struct qa_route *r, int family, const uint8_t *gw)
{
	struct uses_ctx c = { .family = family, .gw = gw };

	qa_route_nexthops(r, uses_gw_cb, &c);
	return c.found;
}

/* --- tables ------------------------------------------------------------------ */

struct table_name {
	uint32_t id;
	char name[64];
};

static struct table_name *table_names;
static size_t n_table_names;
static bool table_names_loaded;

static void add_table_name(uint32_t id, const char *name)
{
	struct table_name *t = realloc(table_names, (n_table_names + 1) * sizeof(*t));

	if (!t)
		return;
	table_names = t;
	t[n_table_names].id = id;
	snprintf(t[n_table_names].name, sizeof(t[n_table_names].name), "%s", name);
	n_table_names++;
}

/* iproute2's format: "ID NAME" per line, '#' comments; ID decimal or 0x hex */
static void read_table_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end, name[64];
		unsigned long id;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '#' || !*p)
			continue;
		errno = 0;
		id = strtoul(p, &end, 0);
		if (end == p || errno || id > UINT32_MAX)
			continue;
		if (sscanf(end, " %63[^ \t\n#]", name) == 1)
			add_table_name((uint32_t)id, name);
	}
	fclose(f);
}

static void read_table_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 5 && !strcmp(de->d_name + n - 5, ".conf")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			read_table_file(path);
		}
	}
	closedir(d);
}

static void load_table_names(void)
{
	if (table_names_loaded)
		return;
	table_names_loaded = true;
	add_table_name(RT_TABLE_DEFAULT, "default");
	add_table_name(RT_TABLE_MAIN, "main");
	add_table_name(RT_TABLE_LOCAL, "local");
	read_table_file("/etc/iproute2/rt_tables");
	read_table_dir("/etc/iproute2/rt_tables.d");
	read_table_file("/usr/share/iproute2/rt_tables");
	read_table_dir("/usr/share/iproute2/rt_tables.d");
}

int qa_table_parse(const char *s, uint32_t *id)
{
	if (!s || !*s)
		return -1;
	if (!strcmp(s, "all")) {
		*id = QA_TABLE_ALL;
		return 0;
	}
	if (isdigit((unsigned char)s[0])) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 10);
		if (*end)
			return -1; /* "5x": a name, and no table has it */
		if (errno || v == 0 || v > UINT32_MAX)
			return -2;
		*id = (uint32_t)v;
		return 0;
	}
	load_table_names();
	for (size_t i = 0; i < n_table_names; i++) {
		if (!strcmp(table_names[i].name, s)) {
			*id = table_names[i].id;
			return 0;
		}
	}
	return -1;
}

const char *qa_table_str(uint32_t id, char *buf, size_t cap)
{
	load_table_names();
	for (size_t i = 0; i < n_table_names; i++) {
		if (table_names[i].id == id) {
			snprintf(buf, cap, "%s", table_names[i].name);
			return buf;
		}
	}
	snprintf(buf, cap, "%u", id);
	return buf;
}

/* --- selecting ----------------------------------------------------------------- */

bool qa_filter_match(const struct qa_filter *f, const struct qa_route *r)
{
	if (f->family && r->family != f->family)
		return false;
	if (f->table != QA_TABLE_ALL && r->table != f->table)
		return false;
	if (f->unicast_only && r->rtm.rtm_type != RTN_UNICAST)
		return false;
	if (f->has_prefix) {
		if (r->family != f->prefix.addr.family || r->rtm.rtm_dst_len != f->prefix.len ||
		    memcmp(r->dst, f->prefix.addr.bytes, addr_len(r->family)))
			return false;
	}
	if (f->oif && !qa_route_uses_dev(r, f->oif))
		return false;
	if (f->has_key) {
		struct qa_route_key k;

		qa_route_key(r, &k);
		if (memcmp(&k, &f->key, sizeof(k)))
			return false;
	}
	if (f->has_via && !qa_route_uses_gw(r, f->via.family, f->via.bytes))
		return false;
	return true;
}

static unsigned int shared_bits(const uint8_t *a, const uint8_t *b, unsigned int max)
{
	unsigned int n = 0;

	while (n < max && !((a[n / 8] ^ b[n / 8]) & (0x80 >> (n % 8))))
		n++;
	return n;
}

size_t qa_closest(const struct qa_filter *f, const struct qa_route *routes, size_t n, size_t *out,
		  size_t max)
{
	size_t got = 0;
	unsigned int plen = f->has_prefix ? f->prefix.len : 0;
	int fam = f->has_prefix ? f->prefix.addr.family : f->family;
	unsigned int score[16], diff[16];

	if (max > 16)
		max = 16;
	for (size_t i = 0; i < n; i++) {
		const struct qa_route *r = &routes[i];
		unsigned int s, d, lim;
		size_t pos;

		if ((fam && r->family != fam) ||
		    (f->table != QA_TABLE_ALL && r->table != f->table))
			continue;
		lim = r->rtm.rtm_dst_len < plen ? r->rtm.rtm_dst_len : plen;
		s = f->has_prefix ? shared_bits(r->dst, f->prefix.addr.bytes, lim) : 0;
		d = r->rtm.rtm_dst_len > plen ? r->rtm.rtm_dst_len - plen : plen - r->rtm.rtm_dst_len;
		pos = got;
		while (pos > 0 && (score[pos - 1] < s || (score[pos - 1] == s && diff[pos - 1] > d)))
			pos--;
		if (pos >= max)
			continue;
		if (got < max)
			got++;
		for (size_t k = got - 1; k > pos; k--) {
			out[k] = out[k - 1];
			score[k] = score[k - 1];
			diff[k] = diff[k - 1];
		}
		out[pos] = i;
		score[pos] = s;
		diff[pos] = d;
	}
	return got;
}
