// SPDX-License-Identifier: GPL-2.0-only
/*
 * The change model: what a change (quickack, rto_min or congctl) makes of
 * a route's metrics, whether it changes the route at all, how it reads in
 * words, and which routes quickack may change.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "route.h"

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
