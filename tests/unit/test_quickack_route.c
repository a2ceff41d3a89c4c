// SPDX-License-Identifier: GPL-2.0-only
/* quickack's route model: parsing dumped routes, the requests rebuilt from them, changes, selection */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "tk_assert.h"
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "quickack/route.h"

/* --- a tiny builder for route messages as the kernel sends them ------------- */

struct msg {
	uint8_t b[2048];
	size_t len;
	size_t nest[4];
	int depth;
};

static void m_init(struct msg *m, int family, int dst_len, int table, int type, int flags)
{
	struct rtmsg rtm = { .rtm_family = (unsigned char)family, .rtm_dst_len = (unsigned char)dst_len,
			     .rtm_table = (unsigned char)(table < 256 ? table : RT_TABLE_COMPAT),
			     .rtm_protocol = RTPROT_STATIC, .rtm_scope = RT_SCOPE_UNIVERSE,
			     .rtm_type = (unsigned char)type, .rtm_flags = (unsigned int)flags };

	memset(m, 0, sizeof(*m));
	memcpy(m->b, &rtm, sizeof(rtm));
	m->len = NLMSG_ALIGN(sizeof(rtm));
}

static void m_attr(struct msg *m, uint16_t type, const void *p, size_t n)
{
	uint16_t hdr[2] = { (uint16_t)(NLA_HDRLEN + n), type };

	memcpy(m->b + m->len, hdr, 4);
	if (n)
		memcpy(m->b + m->len + 4, p, n);
	m->len += NLA_ALIGN(NLA_HDRLEN + n);
}

static void m_u32(struct msg *m, uint16_t type, uint32_t v) { m_attr(m, type, &v, 4); }

static void m_nest(struct msg *m, uint16_t type)
{
	m->nest[m->depth++] = m->len;
	m_attr(m, type, NULL, 0);
}

static void m_end(struct msg *m)
{
	size_t at = m->nest[--m->depth];
	uint16_t n = (uint16_t)(m->len - at);

	memcpy(m->b + at, &n, 2);
}

static void m_nh(struct msg *m, int ifindex, int flags, const char *gw4)
{
	struct rtnexthop nh = { .rtnh_flags = (unsigned char)flags, .rtnh_ifindex = ifindex };
	size_t at = m->len;
	struct in_addr a;

	memcpy(m->b + m->len, &nh, sizeof(nh));
	m->len += sizeof(nh);
	if (gw4) {
		inet_pton(AF_INET, gw4, &a);
		m_attr(m, RTA_GATEWAY, &a, 4);
	}
	nh.rtnh_len = (unsigned short)(m->len - at);
	memcpy(m->b + at, &nh, sizeof(nh));
}

static void m_dst4(struct msg *m, const char *a)
{
	struct in_addr x;

	inet_pton(AF_INET, a, &x);
	m_attr(m, RTA_DST, &x, 4);
}

/* 10.0.1.0/24 dev 2 table main, mtu 9000 initcwnd 20, as dumped */
static void basic(struct msg *m)
{
	struct rta_cacheinfo ci = { 0 };

	m_init(m, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, RTNH_F_LINKDOWN);
	m_u32(m, RTA_TABLE, RT_TABLE_MAIN);
	m_dst4(m, "10.0.1.0");
	m_nest(m, RTA_METRICS);
	m_u32(m, RTAX_MTU, 9000);
	m_u32(m, RTAX_INITCWND, 20);
	m_end(m);
	m_u32(m, RTA_OIF, 2);
	m_attr(m, RTA_CACHEINFO, &ci, sizeof(ci));
}

static int parse(struct msg *m, struct qa_route *r)
{
	char err[160];
	int rc = qa_route_parse(m->b, m->len, r, err, sizeof(err));

	if (rc)
		print_message("parse: %s\n", err);
	return rc;
}

static int parse_err(struct msg *m, const char *want)
{
	struct qa_route r;
	char err[160] = "";

	if (!qa_route_parse(m->b, m->len, &r, err, sizeof(err))) {
		qa_route_free(&r);
		return -1;
	}
	if (!strstr(err, want)) {
		print_message("error '%s' lacks '%s'\n", err, want);
		return -1;
	}
	return 0;
}

static void test_parse_basic(void **state)
{
	struct msg m;
	struct qa_route r;
	char buf[128];
	(void)state;

	basic(&m);
	assert_int_equal(parse(&m, &r), 0);
	assert_int_equal(r.family, AF_INET);
	assert_int_equal(r.table, RT_TABLE_MAIN);
	assert_int_equal(r.oif, 2);
	assert_int_equal(r.metric[RTAX_MTU], 9000);
	assert_int_equal(r.metric[RTAX_INITCWND], 20);
	assert_int_equal(r.metric[RTAX_QUICKACK], 0);
	assert_string_equal(r.cc, "");
	assert_string_equal(qa_route_name(&r, buf, sizeof(buf)), "10.0.1.0/24 table main metric 0");
	assert_int_equal(r.len, m.len);
	assert_memory_equal(r.msg, m.b, m.len);
	qa_route_free(&r);
}

static void test_parse_rejects(void **state)
{
	struct msg m;
	struct in_addr a;
	(void)state;

	basic(&m);
	m.len = 8;
	assert_int_equal(parse_err(&m, "shorter than struct rtmsg"), 0);

	m_init(&m, AF_PACKET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	assert_int_equal(parse_err(&m, "neither IPv4 nor IPv6"), 0);

	m_init(&m, AF_INET, 33, RT_TABLE_MAIN, RTN_UNICAST, 0);
	assert_int_equal(parse_err(&m, "too long for inet"), 0);

	basic(&m);
	m_u32(&m, RTA_PRIORITY, 5);
	m.b[m.len - 8] = 0xff; /* the last attribute's length runs past the end */
	assert_int_equal(parse_err(&m, "has a bad length"), 0);

	basic(&m);
	m_u32(&m, RTA_OIF, 3);
	assert_int_equal(parse_err(&m, "attribute 4 appears twice"), 0);

	m_init(&m, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, 0);
	inet_pton(AF_INET, "10.0.1.1", &a);
	m_attr(&m, RTA_DST, &a, 4);
	assert_int_equal(parse_err(&m, "has bits beyond /24"), 0);

	m_init(&m, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_attr(&m, RTA_DST, &a, 3);
	assert_int_equal(parse_err(&m, "destination address at offset 12 has 3 bytes"), 0);

	m_init(&m, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, 0);
	assert_int_equal(parse_err(&m, "has no destination address"), 0);

	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_METRICS);
	m_attr(&m, RTAX_MTU, "ab", 2);
	m_end(&m);
	assert_int_equal(parse_err(&m, "metric mtu at offset 16 has 2 bytes, not 4"), 0);

	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_METRICS);
	m_attr(&m, RTAX_CC_ALGO, "bbr", 3); /* no NUL */
	m_end(&m);
	assert_int_equal(parse_err(&m, "congctl metric at offset 16 is not a name"), 0);

	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_METRICS);
	m_u32(&m, RTAX_MTU, 1);
	m_u32(&m, RTAX_MTU, 2);
	m_end(&m);
	assert_int_equal(parse_err(&m, "metric mtu appears twice"), 0);

	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_MULTIPATH);
	m_end(&m);
	assert_int_equal(parse_err(&m, "has no nexthop"), 0);

	basic(&m);
	m.len += 2; /* two stray bytes */
	assert_int_equal(parse_err(&m, "2 stray bytes"), 0);
}

static void test_request_keeps_everything_but_kernel_state(void **state)
{
	struct msg m, want;
	struct qa_route r;
	uint8_t buf[512];
	struct qa_change on = { .op = QA_OP_QUICKACK, .value = 1 };
	int n;
	(void)state;

	basic(&m);
	assert_int_equal(parse(&m, &r), 0);
	n = qa_route_request(&r, &on, buf, sizeof(buf));
	/*
	 * ascending attribute order, linkdown cleared, cache info left out,
	 * metrics in RTAX order with quickack added
	 */
	m_init(&want, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_dst4(&want, "10.0.1.0");
	m_u32(&want, RTA_OIF, 2);
	m_nest(&want, RTA_METRICS);
	m_u32(&want, RTAX_MTU, 9000);
	m_u32(&want, RTAX_INITCWND, 20);
	m_u32(&want, RTAX_QUICKACK, 1);
	m_end(&want);
	m_u32(&want, RTA_TABLE, RT_TABLE_MAIN);
	assert_int_equal(n, want.len);
	assert_memory_equal(buf, want.b, want.len);
	/* too small a buffer is an error, never a cut request */
	assert_int_equal(qa_route_request(&r, &on, buf, 40), -1);
	qa_route_free(&r);
}

static void test_request_metric_removed_and_unknown_kept(void **state)
{
	struct msg m;
	struct qa_route r, q;
	uint8_t buf[512];
	struct qa_change off = { .op = QA_OP_QUICKACK, .value = 0 };
	char err[128];
	int n;
	(void)state;

	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_METRICS);
	m_u32(&m, RTAX_QUICKACK, 1);
	m_u32(&m, 42, 7); /* a metric newer than this program */
	m_end(&m);
	assert_int_equal(parse(&m, &r), 0);
	assert_int_equal(r.metric[RTAX_QUICKACK], 1);
	n = qa_route_request(&r, &off, buf, sizeof(buf));
	tk_assert_cmp(n, >, 0);
	assert_int_equal(qa_route_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
	assert_int_equal(q.metric[RTAX_QUICKACK], 0);
	assert_non_null(memmem(buf, (size_t)n, "\x08\x00\x2a\x00\x07\x00\x00\x00", 8));
	qa_route_free(&q);
	qa_route_free(&r);

	/* with no metric left, no RTA_METRICS at all */
	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_nest(&m, RTA_METRICS);
	m_u32(&m, RTAX_QUICKACK, 1);
	m_end(&m);
	assert_int_equal(parse(&m, &r), 0);
	n = qa_route_request(&r, &off, buf, sizeof(buf));
	assert_int_equal(n, NLMSG_ALIGN(sizeof(struct rtmsg)));
	qa_route_free(&r);
}

static void test_request_multipath_flags_and_nhid(void **state)
{
	struct msg m;
	struct qa_route r, q;
	uint8_t buf[512];
	char err[128];
	struct rtnexthop nh;
	int n;
	(void)state;

	m_init(&m, AF_INET, 0, 200, RTN_UNICAST, 0);
	m_u32(&m, RTA_TABLE, 200);
	m_nest(&m, RTA_MULTIPATH);
	m_nh(&m, 2, RTNH_F_ONLINK, "10.9.0.2");
	m_nh(&m, 3, RTNH_F_DEAD | RTNH_F_LINKDOWN, "10.8.0.2");
	m_end(&m);
	assert_int_equal(parse(&m, &r), 0);
	assert_int_equal(r.nexthops, 2);
	assert_true(qa_route_uses_dev(&r, 3));
	assert_false(qa_route_uses_dev(&r, 4));
	n = qa_route_request(&r, NULL, buf, sizeof(buf));
	assert_int_equal(qa_route_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
	/* the kernel sets dead and linkdown by itself and refuses them in a request */
	memcpy(&nh, q.msg + q.mpath_off, sizeof(nh));
	assert_int_equal(nh.rtnh_flags, RTNH_F_ONLINK);
	memcpy(&nh, q.msg + q.mpath_off + RTNH_ALIGN(nh.rtnh_len), sizeof(nh));
	assert_int_equal(nh.rtnh_flags, 0);
	assert_int_equal(nh.rtnh_ifindex, 3);
	qa_route_free(&q);
	qa_route_free(&r);

	/* a nexthop object: the id goes back, not the nexthop it stands for */
	m_init(&m, AF_INET, 0, RT_TABLE_MAIN, RTN_UNICAST, RTNH_F_ONLINK);
	m_u32(&m, RTA_OIF, 2);
	m_u32(&m, RTA_NH_ID, 10);
	assert_int_equal(parse(&m, &r), 0);
	n = qa_route_request(&r, NULL, buf, sizeof(buf));
	assert_int_equal(qa_route_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
	assert_true(q.has_nhid);
	assert_int_equal(q.nhid, 10);
	assert_int_equal(q.attr_off[RTA_OIF], 0);
	assert_int_equal(q.rtm.rtm_flags, 0);
	qa_route_free(&q);
	qa_route_free(&r);
}

/*
 * A host route from the route that covers an address: a default route (no
 * RTA_DST at all) and a subnet route (RTA_DST rewritten), each keeping its
 * table, metric, nexthops and metrics, with the change, protocol static.
 */
static void test_host_route(void **state)
{
	const struct qa_change on = { .op = QA_OP_QUICKACK, .value = 1 };
	struct cli_addr to = { .family = AF_INET };
	struct msg m;
	struct qa_route r, h;
	char err[160];
	(void)state;

	inet_pton(AF_INET, "198.51.100.7", to.bytes);
	m_init(&m, AF_INET, 0, 200, RTN_UNICAST, 0);
	m.b[offsetof(struct rtmsg, rtm_protocol)] = RTPROT_DHCP;
	m_u32(&m, RTA_TABLE, 200);
	m_u32(&m, RTA_PRIORITY, 100);
	m_nest(&m, RTA_MULTIPATH);
	m_nh(&m, 2, 0, "10.9.0.2");
	m_nh(&m, 3, 0, "10.8.0.2");
	m_end(&m);
	assert_int_equal(parse(&m, &r), 0);
	assert_int_equal(qa_route_host(&r, &to, &on, &h, err, sizeof(err)), 0);
	assert_int_equal(h.rtm.rtm_dst_len, 32);
	assert_memory_equal(h.dst, to.bytes, 4);
	assert_int_equal(h.table, 200);
	assert_int_equal(h.priority, 100);
	assert_int_equal(h.nexthops, 2);
	assert_true(qa_route_uses_gw(&h, AF_INET, (const uint8_t[]){ 10, 8, 0, 2 }));
	assert_true(qa_route_uses_dev(&h, 3));
	assert_int_equal(h.rtm.rtm_protocol, RTPROT_STATIC);
	assert_int_equal(h.metric[RTAX_QUICKACK], 1);
	assert_false(qa_change_needed(&h, &on));
	qa_route_free(&h);
	qa_route_free(&r);

	/* a subnet route: its destination becomes the address, the rest stays */
	basic(&m);
	assert_int_equal(parse(&m, &r), 0);
	inet_pton(AF_INET, "10.0.1.77", to.bytes);
	assert_int_equal(qa_route_host(&r, &to, &on, &h, err, sizeof(err)), 0);
	assert_int_equal(h.rtm.rtm_dst_len, 32);
	assert_memory_equal(h.dst, to.bytes, 4);
	assert_int_equal(h.oif, 2);
	assert_int_equal(h.metric[RTAX_MTU], 9000);
	assert_int_equal(h.metric[RTAX_INITCWND], 20);
	assert_int_equal(h.metric[RTAX_QUICKACK], 1);
	qa_route_free(&h);

	/* an IPv6 address is no host of an IPv4 route */
	to.family = AF_INET6;
	assert_int_equal(qa_route_host(&r, &to, &on, &h, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not of the address' family"));
	qa_route_free(&r);
}

static void test_same_ignores_order_and_kernel_state(void **state)
{
	struct msg a, b;
	struct qa_route ra, rb;
	struct qa_change on = { .op = QA_OP_QUICKACK, .value = 1 };
	(void)state;

	basic(&a);
	m_init(&b, AF_INET, 24, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m_u32(&b, RTA_OIF, 2);
	m_nest(&b, RTA_METRICS);
	m_u32(&b, RTAX_INITCWND, 20);
	m_u32(&b, RTAX_MTU, 9000);
	m_u32(&b, RTAX_HOPLIMIT, 0); /* zero: unset */
	m_end(&b);
	m_dst4(&b, "10.0.1.0");
	m_u32(&b, RTA_TABLE, RT_TABLE_MAIN);
	assert_int_equal(parse(&a, &ra), 0);
	assert_int_equal(parse(&b, &rb), 0);
	assert_true(qa_route_same(&ra, NULL, &rb, NULL));
	assert_false(qa_route_same(&ra, &on, &rb, NULL));
	assert_true(qa_route_same(&ra, &on, &rb, &on));
	qa_route_free(&ra);
	qa_route_free(&rb);
}

static void test_changes(void **state)
{
	struct msg m;
	struct qa_route r;
	uint32_t mx[QA_RTAX_N];
	char cc[QA_CC_NAME_MAX], d[128];
	struct qa_change c;
	(void)state;

	basic(&m);
	assert_int_equal(parse(&m, &r), 0);

	c = (struct qa_change){ .op = QA_OP_QUICKACK, .value = 0 };
	assert_false(qa_change_needed(&r, &c));
	c.value = 1;
	assert_true(qa_change_needed(&r, &c));
	qa_change_describe(&r, &c, d, sizeof(d));
	assert_string_equal(d, "quickack 0 -> 1");

	/* rto_min counts only when locked: set with its lock, removed with it */
	c = (struct qa_change){ .op = QA_OP_RTO_MIN, .value = 5 };
	qa_change_apply(&r, &c, mx, cc);
	assert_int_equal(mx[RTAX_RTO_MIN], 5);
	assert_int_equal(mx[RTAX_LOCK], 1u << RTAX_RTO_MIN);
	assert_int_equal(mx[RTAX_MTU], 9000);
	qa_change_describe(&r, &c, d, sizeof(d));
	assert_string_equal(d, "rto_min off -> 5ms");
	r.metric[RTAX_RTO_MIN] = 5;
	r.metric[RTAX_LOCK] = (1u << RTAX_RTO_MIN) | (1u << RTAX_MTU);
	c.value = 0;
	qa_change_apply(&r, &c, mx, cc);
	assert_int_equal(mx[RTAX_RTO_MIN], 0);
	assert_int_equal(mx[RTAX_LOCK], 1u << RTAX_MTU);

	c = (struct qa_change){ .op = QA_OP_CONGCTL, .cc = "bbr" };
	qa_change_apply(&r, &c, mx, cc);
	assert_string_equal(cc, "bbr");
	assert_int_equal(mx[RTAX_LOCK] & (1u << RTAX_CC_ALGO), 0);
	c.lock = true;
	qa_change_apply(&r, &c, mx, cc);
	assert_int_not_equal(mx[RTAX_LOCK] & (1u << RTAX_CC_ALGO), 0);
	qa_change_describe(&r, &c, d, sizeof(d));
	assert_string_equal(d, "congctl off -> bbr (locked)");
	qa_route_free(&r);
}

static void test_changeable(void **state)
{
	struct msg m;
	struct qa_route r;
	char why[160];
	struct rta_cacheinfo ci = { .rta_expires = 3000 };
	struct in6_addr d;
	(void)state;

	basic(&m);
	assert_int_equal(parse(&m, &r), 0);
	assert_true(qa_route_changeable(&r, why, sizeof(why)));
	qa_route_free(&r);

	m_init(&m, AF_INET, 0, RT_TABLE_LOCAL, RTN_LOCAL, 0);
	assert_int_equal(parse(&m, &r), 0);
	assert_false(qa_route_changeable(&r, why, sizeof(why)));
	assert_string_equal(why, "it is not a unicast route (quickack changes unicast routes only)");
	qa_route_free(&r);

	m_init(&m, AF_INET6, 64, RT_TABLE_MAIN, RTN_UNICAST, 0);
	inet_pton(AF_INET6, "fd00:1::", &d);
	m_attr(&m, RTA_DST, &d, 16);
	m_attr(&m, RTA_CACHEINFO, &ci, sizeof(ci));
	assert_int_equal(parse(&m, &r), 0);
	assert_false(qa_route_changeable(&r, why, sizeof(why)));
	assert_string_equal(why, "it expires in 30 s, and replacing it would reset its timer");
	qa_route_free(&r);

	m_init(&m, AF_INET6, 0, RT_TABLE_MAIN, RTN_UNICAST, 0);
	m.b[offsetof(struct rtmsg, rtm_protocol)] = RTPROT_RA;
	assert_int_equal(parse(&m, &r), 0);
	assert_false(qa_route_changeable(&r, why, sizeof(why)));
	qa_route_free(&r);
}

static void test_tables(void **state)
{
	uint32_t id;
	char buf[32];
	(void)state;

	assert_int_equal(qa_table_parse("main", &id), 0);
	assert_int_equal(id, RT_TABLE_MAIN);
	assert_int_equal(qa_table_parse("local", &id), 0);
	assert_int_equal(id, RT_TABLE_LOCAL);
	assert_int_equal(qa_table_parse("all", &id), 0);
	assert_int_equal(id, QA_TABLE_ALL);
	assert_int_equal(qa_table_parse("100", &id), 0);
	assert_int_equal(id, 100);
	assert_int_equal(qa_table_parse("4294967295", &id), 0);
	assert_int_equal(qa_table_parse("4294967296", &id), -2);
	assert_int_equal(qa_table_parse("0", &id), -2);
	assert_int_equal(qa_table_parse("5x", &id), -1);
	assert_int_equal(qa_table_parse("nosuch-table", &id), -1);
	assert_int_equal(qa_table_parse("", &id), -1);
	assert_string_equal(qa_table_str(RT_TABLE_MAIN, buf, sizeof(buf)), "main");
	assert_string_equal(qa_table_str(100, buf, sizeof(buf)), "100");
}

static void test_filter_and_closest(void **state)
{
	struct msg m;
	struct qa_route rs[4];
	struct qa_filter f = { .table = RT_TABLE_MAIN, .has_prefix = true };
	const char *dsts[] = { "10.0.1.0", "10.0.2.0", "10.0.0.0", "192.168.0.0" };
	const int lens[] = { 24, 24, 16, 16 };
	size_t near[3];
	(void)state;

	for (int i = 0; i < 4; i++) {
		m_init(&m, AF_INET, lens[i], RT_TABLE_MAIN, RTN_UNICAST, 0);
		m_dst4(&m, dsts[i]);
		m_nest(&m, RTA_MULTIPATH);
		m_nh(&m, 2, 0, "10.9.0.2");
		m_nh(&m, 3 + i, 0, "10.8.0.2");
		m_end(&m);
		assert_int_equal(parse(&m, &rs[i]), 0);
	}
	f.prefix.addr.family = AF_INET;
	inet_pton(AF_INET, "10.0.2.0", f.prefix.addr.bytes);
	f.prefix.len = 24;
	assert_false(qa_filter_match(&f, &rs[0]));
	assert_true(qa_filter_match(&f, &rs[1]));
	f.oif = 4; /* the second nexthop of route 1 */
	assert_true(qa_filter_match(&f, &rs[1]));
	f.oif = 9;
	assert_false(qa_filter_match(&f, &rs[1]));
	f.oif = 0;
	f.has_via = true;
	f.via.family = AF_INET;
	inet_pton(AF_INET, "10.8.0.2", f.via.bytes);
	assert_true(qa_filter_match(&f, &rs[1]));
	inet_pton(AF_INET, "10.8.0.3", f.via.bytes);
	assert_false(qa_filter_match(&f, &rs[1]));
	f.has_via = false;
	f.table = 100;
	assert_false(qa_filter_match(&f, &rs[1]));
	f.table = RT_TABLE_MAIN;

	/* 10.0.3.0/24: 10.0.0.0/16 and 10.0.2.0/24 share 16 and 22 bits */
	inet_pton(AF_INET, "10.0.3.0", f.prefix.addr.bytes);
	assert_int_equal(qa_closest(&f, rs, 4, near, 3), 3);
	assert_int_equal(near[0], 1);
	assert_int_equal(near[1], 0);
	assert_int_equal(near[2], 2);
	for (int i = 0; i < 4; i++)
		qa_route_free(&rs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_basic),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_request_keeps_everything_but_kernel_state),
		cmocka_unit_test(test_request_metric_removed_and_unknown_kept),
		cmocka_unit_test(test_request_multipath_flags_and_nhid),
		cmocka_unit_test(test_host_route),
		cmocka_unit_test(test_same_ignores_order_and_kernel_state),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_changeable),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_filter_and_closest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
