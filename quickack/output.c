// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's output: a route described in words (devices by name, gateways,
 * metrics, as ip route prints it), and the route, change, netlink_request
 * and saved_route records, each written from its one field list.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/route.h>
#include <netlink/route/rtnl.h>

#include "common.h"
#include "output.h"

struct strbuf {
	char *p;
	size_t cap, len;
};

static void sb_add(struct strbuf *b, const char *fmt, ...) TK_PRINTF(2, 3);
static void sb_add(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len = b->len + (size_t)n < b->cap ? b->len + (size_t)n : b->cap - 1;
}

struct nh_ctx {
	struct qa_nl *nl;
	struct strbuf *b;
	bool devs;
	unsigned int n;
};

static void nh_cb(uint32_t ifindex, int gwf, const uint8_t *gw, void *arg)
{
	struct nh_ctx *c = arg;
	char name[64];

	if (c->devs) {
		if (!ifindex)
			return;
		sb_add(c->b, "%s%s", c->n++ ? "," : "", c->nl ? qa_nl_ifname(c->nl, ifindex, name, sizeof(name)) : "?");
	} else if (gwf) {
		sb_add(c->b, "%s%s", c->n++ ? "," : "", qa_addr_str(gwf, gw, name, sizeof(name)));
	}
}

const char *qa_route_devs(struct qa_nl *nl, const struct qa_route *r, char *buf, size_t cap)
{
	struct strbuf b = { buf, cap, 0 };
	struct nh_ctx c = { nl, &b, true, 0 };

	buf[0] = '\0';
	qa_route_nexthops(r, nh_cb, &c);
	return buf;
}

const char *qa_route_gws(const struct qa_route *r, char *buf, size_t cap)
{
	struct strbuf b = { buf, cap, 0 };
	struct nh_ctx c = { NULL, &b, false, 0 };

	buf[0] = '\0';
	qa_route_nexthops(r, nh_cb, &c);
	return buf;
}

static void locked_names(const struct qa_route *r, struct strbuf *b, const char *sep)
{
	unsigned int n = 0;

	for (int t = 1; t < QA_RTAX_N; t++)
		if (t != RTAX_LOCK && (r->metric[RTAX_LOCK] & (1u << t)))
			sb_add(b, "%s%s", n++ ? sep : "", qa_metric_name(t));
}

const char *qa_route_metrics_str(const struct qa_route *r, char *buf, size_t cap)
{
	struct strbuf b = { buf, cap, 0 };
	unsigned int n = 0;

	buf[0] = '\0';
	for (int t = 2; t < QA_RTAX_N; t++) {
		if (t == RTAX_CC_ALGO) {
			if (r->cc[0])
				sb_add(&b, "%s%s=%s", n++ ? " " : "", qa_metric_name(t), r->cc);
		} else if (r->metric[t]) {
			sb_add(&b, "%s%s=%u", n++ ? " " : "", qa_metric_name(t), r->metric[t]);
		}
	}
	if (r->metric[RTAX_LOCK]) {
		sb_add(&b, "%slock=", n++ ? " " : "");
		locked_names(r, &b, ",");
	}
	return buf;
}

static const uint8_t *attr_data(const struct qa_route *r, int type)
{
	return r->msg + r->attr_off[type] + NLA_HDRLEN;
}

static unsigned int attr_plen(const struct qa_route *r, int type)
{
	uint16_t len;

	memcpy(&len, r->msg + r->attr_off[type], 2);
	return len - NLA_HDRLEN;
}

struct desc_ctx {
	struct qa_nl *nl;
	struct strbuf *b;
	const struct qa_route *r;
	unsigned int n;
};

static void desc_nh(uint32_t ifindex, int gwf, const uint8_t *gw, void *arg)
{
	struct desc_ctx *c = arg;
	char a[64], d[64];

	sb_add(c->b, "%s", c->n++ ? "; " : "");
	if (gwf)
		sb_add(c->b, "via %s%s", gwf != c->r->family ? "inet6 " : "", qa_addr_str(gwf, gw, a, sizeof(a)));
	if (ifindex)
		sb_add(c->b, "%sdev %s", gwf ? " " : "", c->nl ? qa_nl_ifname(c->nl, ifindex, d, sizeof(d)) : "?");
}

const char *qa_route_describe(struct qa_nl *nl, const struct qa_route *r, char *buf, size_t cap)
{
	struct strbuf b = { buf, cap, 0 };
	char x[64], y[64];

	buf[0] = '\0';
	sb_add(&b, "family %s dst %s", qa_family_name(r->family),
	       qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, x, sizeof(x)));
	if (r->rtm.rtm_src_len)
		sb_add(&b, " from %s", qa_prefix_str(r->family, r->src, r->rtm.rtm_src_len, x, sizeof(x)));
	sb_add(&b, " table %s", qa_table_str(r->table, x, sizeof(x)));
	if (r->rtm.rtm_tos)
		sb_add(&b, " tos 0x%02x", r->rtm.rtm_tos);
	sb_add(&b, " type %s", nl_rtntype2str(r->rtm.rtm_type, x, sizeof(x)));
	sb_add(&b, " proto %s", rtnl_route_proto2str(r->rtm.rtm_protocol, y, sizeof(y)));
	sb_add(&b, " scope %s", rtnl_scope2str(r->rtm.rtm_scope, x, sizeof(x)));
	if (r->attr_off[RTA_PRIORITY])
		sb_add(&b, " metric %u", r->priority);
	if (r->rtm.rtm_flags & RTNH_F_ONLINK)
		sb_add(&b, " onlink");
	if (r->has_nhid)
		sb_add(&b, " nhid %u", r->nhid);
	if (r->nexthops) {
		struct desc_ctx c = { nl, &b, r, 0 };

		sb_add(&b, " nexthops {");
		qa_route_nexthops(r, desc_nh, &c);
		sb_add(&b, "}");
	} else if (r->oif || r->gw_family) {
		struct desc_ctx c = { nl, &b, r, 0 };

		sb_add(&b, " ");
		qa_route_nexthops(r, desc_nh, &c);
	}
	if (r->attr_off[RTA_PREFSRC] && attr_plen(r, RTA_PREFSRC) == (r->family == AF_INET ? 4 : 16))
		sb_add(&b, " src %s", qa_addr_str(r->family, attr_data(r, RTA_PREFSRC), x, sizeof(x)));
	if (r->attr_off[RTA_FLOW] && attr_plen(r, RTA_FLOW) == 4) {
		uint32_t flow;

		memcpy(&flow, attr_data(r, RTA_FLOW), 4);
		if (flow >> 16)
			sb_add(&b, " realms %u/%u", flow >> 16, flow & 0xffff);
		else
			sb_add(&b, " realm %u", flow & 0xffff);
	}
	if (r->attr_off[RTA_PREF]) {
		uint8_t pref = *attr_data(r, RTA_PREF);

		sb_add(&b, " pref %s", pref == 0 ? "medium" : pref == 1 ? "high" : pref == 3 ? "low" : "?");
	}
	if (r->attr_off[RTA_ENCAP])
		sb_add(&b, " encap");
	{
		char m[512];

		qa_route_metrics_str(r, m, sizeof(m));
		if (m[0])
			sb_add(&b, " metrics {%s}", m);
	}
	return buf;
}

static const char *str_or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/*
 * A route's identity, the columns every record about one route holds in
 * this order: family, table, dst, the record's own `between` columns, then
 * metric. Each record keeps its own width for the dst column (dst_width).
 * The values read the route r and fill the buffers table[32] and dst[64],
 * which the record's writer declares.
 */
#define ROUTE_ID_COLUMNS(X, dst_width, between)                                                \
	X("family", REC_STR, 0, REC_NOCOL, rv_str(qa_family_name(r->family)))                  \
	X("table", REC_STR, 0, REC_COL("table", -6, 0, 0),                                     \
	  rv_str(qa_table_str(r->table, table, sizeof(table))))                                \
	X("dst", REC_STR, 0, REC_COL("dst", dst_width, 0, 0),                                  \
	  rv_str(qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst))))      \
	between(X)                                                                             \
	X("metric", REC_U64, 0, REC_COL("metric", 6, 0, 0), rv_u64(r->priority))
#define NO_COLUMNS(X)

/* --- route ------------------------------------------------------------------------ */

static struct rec_value opt_u64(uint32_t v)
{
	return v ? rv_u64(v) : rv_null();
}

/* the text fields of a route, formatted once */
struct route_text {
	char src[64], type[32], proto[32], scope[32], devs[256], gws[512], locked[256];
};

static void route_text(struct qa_nl *nl, const struct qa_route *r, struct route_text *t)
{
	struct strbuf lb = { t->locked, sizeof(t->locked), 0 };

	t->locked[0] = '\0';
	locked_names(r, &lb, ",");
	t->src[0] = '\0';
	if (r->rtm.rtm_src_len)
		qa_prefix_str(r->family, r->src, r->rtm.rtm_src_len, t->src, sizeof(t->src));
	nl_rtntype2str(r->rtm.rtm_type, t->type, sizeof(t->type));
	rtnl_route_proto2str(r->rtm.rtm_protocol, t->proto, sizeof(t->proto));
	rtnl_scope2str(r->rtm.rtm_scope, t->scope, sizeof(t->scope));
	qa_route_devs(nl, r, t->devs, sizeof(t->devs));
	qa_route_gws(r, t->gws, sizeof(t->gws));
}

#define ROUTE_SRC_TOS(X)                                                                       \
	X("src", REC_STR, 0, REC_NOCOL, rv_str(str_or_null(t.src)))                            \
	X("tos", REC_U64, 0, REC_NOCOL, rv_u64(r->rtm.rtm_tos))

#define ROUTE_FIELDS(X)                                                                        \
	ROUTE_ID_COLUMNS(X, -24, ROUTE_SRC_TOS)                                                \
	X("route_type", REC_STR, 0, REC_COL("type", -9, 0, 0), rv_str(t.type))                 \
	X("protocol", REC_STR, 0, REC_COL("proto", -7, 0, 0), rv_str(t.proto))                 \
	X("scope", REC_STR, 0, REC_NOCOL, rv_str(t.scope))                                     \
	X("dev", REC_STR, 0, REC_COL("dev", -10, 0, 0), rv_str(str_or_null(t.devs)))           \
	X("gateway", REC_STR, 0, REC_COL("via", -24, 0, 0), rv_str(str_or_null(t.gws)))        \
	X("nexthops", REC_U64, 0, REC_NOCOL, rv_u64(r->nexthops))                              \
	X("nhid", REC_U64, 0, REC_NOCOL, r->has_nhid ? rv_u64(r->nhid) : rv_null())            \
	X("quickack", REC_BOOL, 0, REC_COL("quickack", -8, 0, 0),                              \
	  rv_bool(r->metric[RTAX_QUICKACK] != 0))                                              \
	X("rto_min_ms", REC_U64, 0, REC_COL("rto_min ms", 10, 0, 0), opt_u64(r->metric[RTAX_RTO_MIN])) \
	X("congctl", REC_STR, 0, REC_COL("congctl", -10, 0, 0), rv_str(str_or_null(r->cc)))    \
	X("mtu", REC_U64, 0, REC_COL("mtu", 5, 0, 0), opt_u64(r->metric[RTAX_MTU]))            \
	X("advmss", REC_U64, 0, REC_NOCOL, opt_u64(r->metric[RTAX_ADVMSS]))                    \
	X("initcwnd", REC_U64, 0, REC_COL("initcwnd", 8, 0, 0), opt_u64(r->metric[RTAX_INITCWND])) \
	X("initrwnd", REC_U64, 0, REC_COL("initrwnd", 8, 0, 0), opt_u64(r->metric[RTAX_INITRWND])) \
	X("features", REC_U64, 0, REC_NOCOL, opt_u64(r->metric[RTAX_FEATURES]))                \
	X("locked", REC_STR, 0, REC_COL("locked", -12, 0, 0), rv_str(str_or_null(t.locked)))   \
	X("metrics", REC_KV, 0, REC_NOCOL, rv_kv(kv, nkv))

static const struct rec_field route_fields[] = { ROUTE_FIELDS(REC_FIELD) };
static const struct rec_schema route_schema = { "route", route_fields, ARRAY_SIZE(route_fields) };

int qa_out_route(struct rec_writer *w, struct qa_nl *nl, const struct qa_route *r)
{
	struct rec_kv kv[QA_RTAX_N];
	struct route_text t;
	char table[32], dst[64];
	unsigned int nkv = 0;

	route_text(nl, r, &t);
	for (int m = 2; m < QA_RTAX_N; m++)
		if (m != RTAX_CC_ALGO && r->metric[m])
			kv[nkv++] = (struct rec_kv){ qa_metric_name(m), r->metric[m] };
	struct rec_value v[] = { ROUTE_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(route_fields), "a value per field");
	return rec_write(w, &route_schema, v);
}

/* --- change ------------------------------------------------------------------------- */

#define CHANGE_FIELDS(X)                                                                       \
	X("op", REC_STR, 0, REC_COL("op", -8, 0, 0), rv_str(op))                               \
	ROUTE_ID_COLUMNS(X, -20, NO_COLUMNS)                                                   \
	X("dev", REC_STR, 0, REC_COL("dev", -10, 0, 0),                                        \
	  rv_str(str_or_null(qa_route_devs(nl, r, devs, sizeof(devs)))))                       \
	X("gateway", REC_STR, 0, REC_NOCOL, rv_str(str_or_null(qa_route_gws(r, gws, sizeof(gws))))) \
	X("change", REC_STR, 0, REC_COL("change", -28, 0, 0), rv_str(change))                  \
	X("result", REC_STR, 0, REC_COL("result", -10, 0, 0), rv_str(result))                  \
	X("error", REC_STR, 0, REC_NOCOL, rv_str(str_or_null(error)))

static const struct rec_field change_fields[] = { CHANGE_FIELDS(REC_FIELD) };
static const struct rec_schema change_schema = { "change", change_fields, ARRAY_SIZE(change_fields) };

int qa_out_change(struct rec_writer *w, struct qa_nl *nl, const char *op, const struct qa_route *r,
		  const char *change, const char *result, const char *error)
{
	char table[32], dst[64], devs[256], gws[512];
	struct rec_value v[] = { CHANGE_FIELDS(REC_VALUE) };

	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(change_fields), "a value per field");
	return rec_write(w, &change_schema, v);
}

/* --- netlink_request ------------------------------------------------------------------- */

#define REQUEST_FIELDS(X)                                                                      \
	X("op", REC_STR, 0, REC_NOCOL, rv_str(op))                                             \
	ROUTE_ID_COLUMNS(X, -20, NO_COLUMNS)                                                   \
	X("change", REC_STR, 0, REC_COL("change", -24, 0, 0), rv_str(change))                  \
	X("request_bytes", REC_U64, 0, REC_NOCOL, rv_u64(NLMSG_LENGTH(req_len)))               \
	X("request", REC_STR, 0, REC_COL("netlink request", -250, 0, 0), rv_str(text))

static const struct rec_field request_fields[] = { REQUEST_FIELDS(REC_FIELD) };
static const struct rec_schema request_schema = { "netlink_request", request_fields,
						  ARRAY_SIZE(request_fields) };

/* "RTM_NEWROUTE flags REQUEST|ACK|REPLACE len 124: family inet dst ..." */
static const char *request_text(struct qa_nl *nl, const struct qa_req *rq, char *text, size_t len)
{
	char desc[900];
	struct qa_route q;

	if (qa_route_parse(rq->data, rq->len, &q, desc, sizeof(desc))) {
		snprintf(text, len, "(unreadable request: %s)", desc);
		return text;
	}
	snprintf(text, len, "%s flags REQUEST|ACK%s%s%s len %zu: %s",
		 rq->type == RTM_DELROUTE ? "RTM_DELROUTE" : "RTM_NEWROUTE",
		 rq->nlmsg_flags & NLM_F_REPLACE ? "|REPLACE" : "", rq->nlmsg_flags & NLM_F_CREATE ? "|CREATE" : "",
		 rq->nlmsg_flags & NLM_F_EXCL ? "|EXCL" : "", (size_t)NLMSG_LENGTH(rq->len),
		 qa_route_describe(nl, &q, desc, sizeof(desc)));
	qa_route_free(&q);
	return text;
}

int qa_out_request(struct rec_writer *w, struct qa_nl *nl, const char *op, const struct qa_route *r,
		   const char *change, const struct qa_req *rq)
{
	char table[32], dst[64], text[1024];
	size_t req_len = rq->len;

	request_text(nl, rq, text, sizeof(text));
	struct rec_value v[] = { REQUEST_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(request_fields), "a value per field");
	return rec_write(w, &request_schema, v);
}

/* --- saved_route ------------------------------------------------------------------------- */

#define SAVED_FIELDS(X)                                                                        \
	X("seq", REC_U64, 0, REC_COL("seq", 5, 0, 0), rv_u64(seq))                             \
	X("time", REC_U64, 0, REC_NOCOL, rv_u64(time_s))                                       \
	X("op", REC_STR, 0, REC_COL("first op", -8, 0, 0), rv_str(op))                         \
	X("records", REC_U64, 0, REC_COL("records", 7, 0, 0), rv_u64(records))                 \
	X("saved", REC_STR, 0, REC_COL("saved", -6, 0, 0), rv_str(e->added ? "absent" : "route"))\
	ROUTE_ID_COLUMNS(X, -20, NO_COLUMNS)                                                   \
	X("dev", REC_STR, 0, REC_COL("dev", -10, 0, 0),                                        \
	  rv_str(str_or_null(saved_devs(nl, e, devs, sizeof(devs)))))                          \
	X("saved_metrics", REC_STR, 0, REC_COL("saved metrics", -40, 0, 0),                    \
	  rv_str(qa_route_metrics_str(r, m, sizeof(m))))                                       \
	X("live", REC_STR, 0, REC_COL("live", -8, 0, 0), rv_str(live))                         \
	X("identity", REC_STR, 0, REC_COL("identity", -8, 0, 0), rv_str(identity))             \
	X("why", REC_STR, 0, REC_COL("why", -20, 0, 0), rv_str(str_or_null(why)))

static const struct rec_field saved_fields[] = { SAVED_FIELDS(REC_FIELD) };
static const struct rec_schema saved_schema = { "saved_route", saved_fields, ARRAY_SIZE(saved_fields) };

/* the devices as the journal names them; a format 1 record's by their ifindex now */
static const char *saved_devs(struct qa_nl *nl, const struct qaj_entry *e, char *buf, size_t cap)
{
	struct strbuf b = { buf, cap, 0 };

	if (!e->has_devs)
		return qa_route_devs(nl, &e->route, buf, cap);
	buf[0] = '\0';
	for (uint32_t i = 0; i < e->ndevs; i++) {
		if (e->devs[i].name[0])
			sb_add(&b, "%s%s", i ? "," : "", e->devs[i].name);
		else
			sb_add(&b, "%sif%u", i ? "," : "", e->devs[i].ifindex);
	}
	return buf;
}

int qa_out_saved(struct rec_writer *w, struct qa_nl *nl, const struct qaj_entry *e, unsigned int records,
		 const char *live, const char *identity, const char *why)
{
	const struct qa_route *r = &e->route;
	uint64_t seq = e->seq, time_s = e->time_s;
	const char *op = e->op;
	char table[32], dst[64], devs[256], m[512];
	struct rec_value v[] = { SAVED_FIELDS(REC_VALUE) };

	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(saved_fields), "a value per field");
	return rec_write(w, &saved_schema, v);
}

void qa_out_declare(struct rec_writer *w, enum qa_cmd cmd, bool scopes)
{
	if (cmd == QA_SHOW) {
		rec_writer_declare(w, &route_schema);
		return;
	}
	if (cmd == QA_RESTORE || cmd == QA_STATUS)
		rec_writer_declare(w, &saved_schema);
	if (cmd != QA_STATUS) {
		rec_writer_declare(w, &change_schema);
		rec_writer_declare(w, &request_schema);
	}
	if (scopes)
		qa_out_declare_scopes(w, cmd);
}
