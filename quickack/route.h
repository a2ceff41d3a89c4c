/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One route as the kernel reports it (RTM_NEWROUTE: struct rtmsg, then
 * attributes), and the requests that put it back with one metric changed.
 *
 * The kernel's own bytes are kept (qa_route.msg): the journal stores them,
 * and a request is rebuilt from them attribute by attribute, so every
 * attribute, metric and nexthop the kernel reported goes back as it was.
 * Only what the kernel reports but does not accept is left out: cache info,
 * kernel-set nexthop flags (dead, linkdown, offload, trap), and attribute
 * types this program does not know (see qa_route_request()).
 */
#ifndef QA_ROUTE_H
#define QA_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "cli.h"

/* a host prefix's length in family: 32 bits for IPv4, 128 for IPv6 (0: no
 * such family) */
static inline unsigned int qa_host_prefix_len(int family)
{
	return family == AF_INET ? 32 : family == AF_INET6 ? 128 : 0;
}

/* whether a prefix of len bits in family names one host alone */
static inline bool qa_is_host_prefix(int family, unsigned int len)
{
	return len && len == qa_host_prefix_len(family);
}

/* RTAX_* types known here: 1 (lock) .. 17 (fastopen_no_cookie) */
#define QA_RTAX_N 18
#define QA_CC_NAME_MAX 16 /* TCP_CA_NAME_MAX, with its NUL */
#define QA_MSG_MAX 65535  /* a route message never exceeds this */
/* what a request may add to the route it was built from: the changed metric,
 * RTA_METRICS' header, alignment */
#define QA_REQ_SLACK 256

struct qa_route {
	uint8_t *msg;              /* struct rtmsg + attributes, as dumped (owned) */
	uint32_t len;
	struct rtmsg rtm;
	int family;                /* AF_INET or AF_INET6 */
	uint32_t table;            /* RTA_TABLE, else rtm_table */
	uint8_t dst[16], src[16];  /* zero beyond the prefix */
	uint32_t priority;         /* RTA_PRIORITY ("metric" in ip route) */
	uint32_t oif;              /* RTA_OIF; 0 for multipath or none */
	int gw_family;             /* RTA_GATEWAY: family; RTA_VIA: its own; 0: none */
	uint8_t gw[16];
	bool has_nhid;
	uint32_t nhid;
	uint32_t expires_cs;       /* RTA_CACHEINFO rta_expires (1/100 s); 0: never */
	unsigned int nexthops;     /* entries in RTA_MULTIPATH; 0 without one */
	uint32_t mpath_off, mpath_len; /* RTA_MULTIPATH payload inside msg */
	uint16_t attr_off[RTA_MAX + 1]; /* offset of each top-level attribute in msg; 0: absent */
	uint32_t metric[QA_RTAX_N];    /* 0 when unset, as the kernel treats it */
	char cc[QA_CC_NAME_MAX];       /* RTAX_CC_ALGO, "" when unset */
};

/* what identifies a route for NLM_F_REPLACE: the kernel replaces by this */
struct qa_route_key {
	uint8_t family, dst_len, src_len, tos;
	uint32_t table, priority;
	uint8_t dst[16], src[16];
};

enum qa_op { QA_OP_QUICKACK, QA_OP_RTO_MIN, QA_OP_CONGCTL };

struct qa_change {
	enum qa_op op;
	uint32_t value;             /* quickack 0/1; rto_min in ms, 0 removes it */
	char cc[QA_CC_NAME_MAX];    /* congctl name, "" removes it */
	bool lock;                  /* congctl: also set its lock bit */
};

/* --- a route read from the kernel's bytes (route_parse.c) ---------------------- */

/*
 * Parse a dumped route (payload of an RTM_NEWROUTE message), copying it.
 * Strict: every attribute must be well formed and appear once, addresses
 * must have their family's length. Returns 0, or -1 with the reason in err.
 */
int qa_route_parse(const void *data, size_t len, struct qa_route *r, char *err, size_t errlen);
void qa_route_free(struct qa_route *r);

void qa_route_key(const struct qa_route *r, struct qa_route_key *k);
int qa_route_key_cmp(const struct qa_route_key *a, const struct qa_route_key *b);
/* the nexthops in order: fn(ifindex, gateway family (0: none), gateway, arg) */
void qa_route_nexthops(const struct qa_route *r,
		       void (*fn)(uint32_t ifindex, int gw_family, const uint8_t *gw, void *arg),
		       void *arg);

/* --- the change model (route_change.c) ----------------------------------------- */

/* the metrics of r once c is applied */
void qa_change_apply(const struct qa_route *r, const struct qa_change *c,
		     uint32_t metric[QA_RTAX_N], char cc[QA_CC_NAME_MAX]);
/* true when c would change r */
bool qa_change_needed(const struct qa_route *r, const struct qa_change *c);
/* "quickack 0 -> 1", "rto_min 5ms -> off", "congctl reno -> bbr (locked)" */
void qa_change_describe(const struct qa_route *r, const struct qa_change *c, char *buf, size_t len);

/* whether quickack may change r, and if not, why (one phrase in why) */
bool qa_route_changeable(const struct qa_route *r, char *why, size_t len);

/* --- requests (route_request.c) ------------------------------------------------ */

/*
 * The request that makes the kernel hold r with c applied (c NULL: r as it
 * is): struct rtmsg then attributes in ascending type order, RTA_METRICS
 * rebuilt in RTAX order without zero values, nexthop flags the kernel sets
 * by itself cleared. Into buf (cap bytes); returns the length, or -1 when
 * it does not fit or r cannot be expressed.
 */
int qa_route_request(const struct qa_route *r, const struct qa_change *c, uint8_t *buf, size_t cap);

/*
 * r with each device ifindex from[i] (RTA_OIF, RTA_IIF, each multipath
 * nexthop's) made to[i], into out (parsed again): a saved route put back
 * through a device made again under the same name. 0, or -1 with err.
 */
int qa_route_remap_devs(const struct qa_route *r, const uint32_t *from, const uint32_t *to, size_t n,
			struct qa_route *out, char *err, size_t errlen);

/* --- a host route (route_host.c) ---------------------------------------------- */

/*
 * The host route (/32, /128) for address `to`, made from r, the route that
 * covers it, with c applied: r's table, metric, tos, type, scope, nexthops
 * and metrics, protocol static, into out (parsed). 0, or -1 with err.
 */
int qa_route_host(const struct qa_route *r, const struct cli_addr *to, const struct qa_change *c,
		  struct qa_route *out, char *err, size_t errlen);

/*
 * Two routes (or a route and an expected state) hold the same state when
 * their requests are byte-identical: this is what "the kernel holds what
 * was asked" means after a change.
 */
bool qa_route_same(const struct qa_route *a, const struct qa_change *ca,
		   const struct qa_route *b, const struct qa_change *cb);

/* --- presentation (route_text.c) ----------------------------------------------- */

const char *qa_metric_name(int rtax);          /* iproute2's names: "mtu", "rto_min" */
const char *qa_family_name(int family);        /* "inet", "inet6" */
/* "10.0.1.0/24"; IPv4 and IPv6 */
const char *qa_prefix_str(int family, const uint8_t *addr, unsigned int len, char *buf, size_t cap);
const char *qa_addr_str(int family, const uint8_t *addr, char *buf, size_t cap);
/* "10.0.1.0/24 table main metric 0" (with "tos" and "from" when set) */
const char *qa_route_name(const struct qa_route *r, char *buf, size_t cap);

/* --- tables (route_table.c) ---------------------------------------------------- */

#define QA_TABLE_ALL 0u /* RT_TABLE_UNSPEC: every table */
/*
 * "main", "local", "default", "all", a number, or a name from iproute2's
 * rt_tables files. Returns 0; -1 for a name that is not known; -2 for a
 * number out of range.
 */
int qa_table_parse(const char *s, uint32_t *id);
/* "main", a name from rt_tables, or the number */
const char *qa_table_str(uint32_t id, char *buf, size_t cap);

/* --- selecting routes (route_select.c) ----------------------------------------- */

struct qa_filter {
	int family;              /* 0: both */
	uint32_t table;          /* QA_TABLE_ALL: every table */
	bool has_prefix;
	struct cli_prefix prefix;
	uint32_t oif;            /* 0: any device */
	bool has_via;
	struct cli_addr via;
	bool has_key;            /* --to: exactly the route of this key (metric, tos, ...) */
	struct qa_route_key key;
	bool unicast_only;
};

bool qa_route_uses_dev(const struct qa_route *r, uint32_t ifindex);
bool qa_route_uses_gw(const struct qa_route *r, int family, const uint8_t *gw);
bool qa_filter_match(const struct qa_filter *f, const struct qa_route *r);
/*
 * Up to max routes closest to f's prefix among routes[] of the same family
 * and table selection (longest shared leading bits, then nearest prefix
 * length). Writes indexes into out; returns how many.
 */
size_t qa_closest(const struct qa_filter *f, const struct qa_route *routes, size_t n, size_t *out,
		  size_t max);

#endif
