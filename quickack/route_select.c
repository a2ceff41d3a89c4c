// SPDX-License-Identifier: GPL-2.0-only
/*
 * Selecting routes: the command line's filter (family, table, prefix,
 * device, gateway, --to's key) matched against a route, and the routes
 * closest to a prefix that none matched.
 */
#include <string.h>

#include "route.h"
#include "route_bytes.h"

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
