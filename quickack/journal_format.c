// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal's lines written: the header, route and void records in the
 * format journal.h describes, each ended by its " crc=" field.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "journal.h"
#include "journal_line.h"

/* a name with bytes other than netns_plain() ones as %XX; a name of just
 * "-" is written %2D, so that it is not QAJ_NETNS_SELF (or "no devices") */
static size_t encode_name(const char *name, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && n + 4 < cap; p++) {
		if (netns_plain(*p) && !(*p == '-' && !name[1])) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return n;
}

static size_t encode_netns(const char *ns, char *out, size_t cap)
{
	if (!strcmp(ns, QAJ_NETNS_SELF))
		return (size_t)snprintf(out, cap, "%s", QAJ_NETNS_SELF);
	return encode_name(ns, out, cap);
}

/* finish a line in buf[0..n): append " crc=..." and the newline */
static int finish_line(char *buf, size_t cap, int n)
{
	int m;

	if (n < 0 || (size_t)n >= cap)
		return -1;
	m = snprintf(buf + n, cap - (size_t)n, " crc=%08" PRIx32 "\n", line_crc(buf, (size_t)n));
	if (m < 0 || (size_t)(n + m) >= cap)
		return -1;
	return n + m;
}

int qaj_format_header(char *buf, size_t cap, const char *netns, uint64_t created_s,
		      const struct qaj_ident *id)
{
	char ns[800];

	encode_netns(netns, ns, sizeof(ns));
	return finish_line(buf, cap,
			   snprintf(buf, cap,
				    "%s %d netns=%s created=%" PRIu64 " boot=%s netns_ino=%" PRIu64
				    " netns_cookie=%" PRIu64,
				    QAJ_MAGIC, QAJ_VERSION, ns, created_s, id->boot[0] ? id->boot : QAJ_UNKNOWN,
				    id->netns_ino, id->netns_cookie));
}

int qaj_format_void(char *buf, size_t cap, uint64_t seq)
{
	return finish_line(buf, cap, snprintf(buf, cap, "void seq=%" PRIu64, seq));
}

/* one device in devs=: "4294967295:" and a name of 15 bytes, each %XX, and a comma */
#define DEV_ITEM_MAX (10 + 1 + 3 * (QAJ_IFNAME_MAX - 1) + 1)

size_t qaj_route_line_max(const struct qa_route *route, size_t ndevs)
{
	return 2 * (size_t)route->len + 256 + ndevs * DEV_ITEM_MAX;
}

struct devs_ctx {
	struct qaj_dev *v;
	size_t n, max;
};

static void add_dev(uint32_t ifindex, int gw_family, const uint8_t *gw, void *arg)
{
	struct devs_ctx *c = arg;

	(void)gw_family;
	(void)gw;
	if (!ifindex || c->n == c->max)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].ifindex == ifindex)
			return;
	c->v[c->n].ifindex = ifindex;
	c->v[c->n++].name[0] = '\0';
}

size_t qaj_route_devs(const struct qa_route *route, struct qaj_dev *devs, size_t max)
{
	struct devs_ctx c = { devs, 0, max };

	qa_route_nexthops(route, add_dev, &c);
	return c.n;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(p, tmp + i, sizeof(tmp) - (size_t)i);
	return p + sizeof(tmp) - i;
}

static char *put_devs(char *p, const struct qaj_dev *devs, size_t n)
{
	char name[DEV_ITEM_MAX];

	if (!n)
		return put_str(p, "-");
	for (size_t i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p = put_u64(p, devs[i].ifindex);
		*p++ = ':';
		encode_name(devs[i].name, name, sizeof(name));
		p = put_str(p, name);
	}
	return p;
}

/* thousands of records per change: formatted by hand, not by snprintf */
int qaj_format_route(char *buf, size_t cap, uint64_t seq, uint64_t time_s, const char *op, bool added,
		     const struct qa_route *r, const struct qaj_dev *devs, size_t ndevs)
{
	static const char hex[] = "0123456789abcdef";
	char dst[64], *p = buf;

	if (cap < qaj_route_line_max(r, ndevs) || strlen(op) > 16)
		return -1;
	/* both words have 5 letters: qaj_route_line_max() holds for either */
	p = put_str(p, added ? "added seq=" : "route seq=");
	p = put_u64(p, seq);
	p = put_str(p, " time=");
	p = put_u64(p, time_s);
	p = put_str(p, " op=");
	p = put_str(p, op);
	p = put_str(p, " family=");
	p = put_str(p, qa_family_name(r->family));
	p = put_str(p, " table=");
	p = put_u64(p, r->table);
	p = put_str(p, " dst=");
	p = put_str(p, qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst)));
	p = put_str(p, " metric=");
	p = put_u64(p, r->priority);
	p = put_str(p, " devs=");
	p = put_devs(p, devs, ndevs);
	p = put_str(p, " state=");
	for (uint32_t i = 0; i < r->len; i++) {
		*p++ = hex[r->msg[i] >> 4];
		*p++ = hex[r->msg[i] & 15];
	}
	p = put_str(p, " crc=");
	{
		uint32_t crc = line_crc(buf, (size_t)(p - buf) - 5);

		for (int i = 7; i >= 0; i--)
			*p++ = hex[(crc >> (4 * i)) & 15];
	}
	*p++ = '\n';
	*p = '\0';
	return (int)(p - buf);
}

int qaj_format_scope(char *buf, size_t cap, const struct qaj_scope *sc)
{
	char cg[3 * PATH_MAX + 1], pin[3 * PATH_MAX + 1], ports[QS_PORTS_MAX * 6 + 1];
	size_t np = 0;

	ports[0] = '\0';
	for (unsigned int i = 0; i < sc->nports && i < QS_PORTS_MAX; i++)
		np += (size_t)snprintf(ports + np, sizeof(ports) - np, "%s%u", i ? "," : "", sc->ports[i]);
	encode_name(sc->cgroup, cg, sizeof(cg));
	encode_name(sc->pin, pin, sizeof(pin));
	return finish_line(buf, cap,
			   snprintf(buf, cap,
				    "scope seq=%" PRIu64 " time=%" PRIu64 " op=%s side=%s ports=%s cgroup=%s cgroup_id=%" PRIu64
				    " pin=%s",
				    sc->seq, sc->time_s, sc->op, sc->side == QS_SIDE_SEND ? "send" : "recv", ports, cg,
				    sc->cgroup_id, pin));
}
