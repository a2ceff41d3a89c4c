// SPDX-License-Identifier: GPL-2.0-only
/*
 * A route read from the kernel's bytes: the strict parse of an
 * RTM_NEWROUTE payload into struct qa_route, the key the kernel replaces
 * a route by, and the walk over its nexthops.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"
#include "route_bytes.h"

static bool host_bits_zero(const uint8_t *a, unsigned int len, unsigned int max)
{
	for (unsigned int bit = len; bit < max; bit++)
		if (a[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

int qa_walk_attrs(const uint8_t *p, size_t len, size_t base, attr_fn fn, void *arg, char *err,
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
		log_fmt(c->err, c->errlen, "metric %s appears twice (offset %zu)", qa_metric_name(type), off);
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
		log_fmt(c->err, c->errlen, "metric %s at offset %zu has %u bytes, not 4", qa_metric_name(type),
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
		if (qa_walk_attrs(pl + pos + sizeof(nh), nh.rtnh_len - sizeof(nh), off + pos + sizeof(nh),
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
		return qa_walk_attrs(pl, plen, off + ATTR_HDRLEN, parse_metric, c, c->err, c->errlen);
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
	if (qa_walk_attrs((const uint8_t *)data + RTM_HDRLEN, len - RTM_HDRLEN, RTM_HDRLEN, parse_attr, &c,
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
