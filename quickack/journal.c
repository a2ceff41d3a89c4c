// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common.h"
#include "log.h"
#include "journal.h"

#define CRC_FIELD_LEN 13 /* " crc=" + 8 hex digits */

static uint32_t line_crc(const char *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)p, (uInt)n);
}

/* --- formatting ---------------------------------------------------------------- */

static bool netns_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '+' || c == '-';
}

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
int qaj_format_route(char *buf, size_t cap, uint64_t seq, uint64_t time_s, const char *op,
		     const struct qa_route *r, const struct qaj_dev *devs, size_t ndevs)
{
	static const char hex[] = "0123456789abcdef";
	char dst[64], *p = buf;

	if (cap < qaj_route_line_max(r, ndevs) || strlen(op) > 16)
		return -1;
	p = put_str(p, "route seq=");
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

/* --- parsing ------------------------------------------------------------------- */

struct line {
	const char *p;     /* the line, without its newline */
	size_t len;
	size_t off;        /* its offset in the file */
	unsigned long no;
};

struct cursor {
	const struct line *l;
	size_t pos;        /* next token starts here (relative to the line) */
	struct qaj_error *e;
};

static int fail(struct cursor *c, size_t at, const char *fmt, ...) TK_PRINTF(3, 4);
static int fail(struct cursor *c, size_t at, const char *fmt, ...)
{
	va_list ap;

	c->e->line = c->l->no;
	c->e->offset = c->l->off + at;
	va_start(ap, fmt);
	vsnprintf(c->e->msg, sizeof(c->e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* the next "key=value" token; value is not NUL-terminated (vlen) */
static int field(struct cursor *c, const char *key, const char **val, size_t *vlen)
{
	const struct line *l = c->l;
	size_t start = c->pos, klen = strlen(key), end = start;

	while (end < l->len && l->p[end] != ' ')
		end++;
	if (start >= l->len)
		return fail(c, start, "missing field '%s'", key);
	if (end - start <= klen || memcmp(l->p + start, key, klen) || l->p[start + klen] != '=')
		return fail(c, start, "expected field '%s=' here, found '%.*s'", key,
			    (int)(end - start > 40 ? 40 : end - start), l->p + start);
	*val = l->p + start + klen + 1;
	*vlen = end - start - klen - 1;
	c->pos = end < l->len ? end + 1 : end;
	return 0;
}

static int field_u64(struct cursor *c, const char *key, uint64_t max, uint64_t *out)
{
	const char *v;
	size_t n, at = c->pos;
	uint64_t x = 0;

	if (field(c, key, &v, &n))
		return -1;
	if (!n || n > 20 || (n > 1 && v[0] == '0'))
		return fail(c, at, "field '%s' is not a decimal number", key);
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return fail(c, at, "field '%s' is not a decimal number", key);
		if (x > (UINT64_MAX - (uint64_t)(v[i] - '0')) / 10)
			return fail(c, at, "field '%s' is out of range", key);
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (x > max)
		return fail(c, at, "field '%s' is out of range", key);
	*out = x;
	return 0;
}

static int field_end(struct cursor *c)
{
	if (c->pos < c->l->len)
		return fail(c, c->pos, "unexpected text after the last field");
	return 0;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* a name written by encode_name(), of field `what`, into out */
static int decode_name(struct cursor *c, const char *what, size_t at, const char *v, size_t n, char *out,
		       size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (k + 1 >= cap)
			return fail(c, at, "field '%s' is too long", what);
		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return fail(c, at, "field '%s' has a cut %%XX escape", what);
			hi = hexval((char)(v[i + 1] | 0x20));
			lo = hexval((char)(v[i + 2] | 0x20));
			if (hi < 0 || lo < 0 || (!hi && !lo))
				return fail(c, at, "field '%s' has a bad %%XX escape", what);
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (netns_plain(ch)) {
			out[k++] = (char)ch;
		} else {
			return fail(c, at, "field '%s' has a character that must be escaped", what);
		}
	}
	out[k] = '\0';
	return 0;
}

static int decode_netns(struct cursor *c, size_t at, const char *v, size_t n, char *out, size_t cap)
{
	if (n == 1 && v[0] == '-') {
		snprintf(out, cap, "%s", QAJ_NETNS_SELF);
		return 0;
	}
	if (!n)
		return fail(c, at, "field 'netns' is empty");
	return decode_name(c, "netns", at, v, n, out, cap);
}

/* boot=: "-" (unknown) or the boot id, lowercase hex digits and dashes */
static int field_boot(struct cursor *c, char *out, size_t cap)
{
	const char *v;
	size_t n, at = c->pos;

	if (field(c, "boot", &v, &n))
		return -1;
	if (n == 1 && v[0] == '-') {
		out[0] = '\0';
		return 0;
	}
	if (!n || n >= cap)
		return fail(c, at, "field 'boot' is not a boot id");
	for (size_t i = 0; i < n; i++)
		if (hexval(v[i]) < 0 && v[i] != '-')
			return fail(c, at, "field 'boot' is not a boot id");
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

static int check_crc(struct cursor *c, size_t *body_len)
{
	const struct line *l = c->l;
	uint32_t stored = 0, computed;
	const char *f;

	if (l->len < CRC_FIELD_LEN || memcmp(l->p + l->len - CRC_FIELD_LEN, " crc=", 5))
		return fail(c, l->len, "the line does not end with its ' crc=' field");
	f = l->p + l->len - 8;
	for (int i = 0; i < 8; i++) {
		int v = hexval(f[i]);

		if (v < 0)
			return fail(c, l->len - 8, "the crc field is not 8 lowercase hex digits");
		stored = stored << 4 | (uint32_t)v;
	}
	computed = line_crc(l->p, l->len - CRC_FIELD_LEN);
	if (stored != computed)
		return fail(c, 0, "checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32
			    "): the line was altered or damaged", stored, computed);
	*body_len = l->len - CRC_FIELD_LEN;
	return 0;
}

/* version 2's identity fields, after created= */
static int parse_ident(struct cursor *c, struct qaj *j)
{
	if (field_boot(c, j->ident.boot, sizeof(j->ident.boot)) ||
	    field_u64(c, "netns_ino", UINT64_MAX, &j->ident.netns_ino) ||
	    field_u64(c, "netns_cookie", UINT64_MAX, &j->ident.netns_cookie))
		return -1;
	j->has_ident = true;
	return 0;
}

static int parse_header(struct cursor *c, struct qaj *j)
{
	struct line body = *c->l;
	size_t mlen = strlen(QAJ_MAGIC), blen;
	const char *v;
	size_t n;
	uint64_t version = 0;

	if (body.len < mlen + 2 || memcmp(body.p, QAJ_MAGIC " ", mlen + 1))
		return fail(c, 0, "not a quickack journal (the first line must start with '%s')", QAJ_MAGIC);
	/* the version comes before the crc: a newer format may check lines otherwise */
	for (size_t i = mlen + 1; i < body.len && body.p[i] != ' '; i++) {
		if (body.p[i] < '0' || body.p[i] > '9' || version > 1000000)
			return fail(c, mlen + 1, "the journal version is not a number");
		version = version * 10 + (uint64_t)(body.p[i] - '0');
	}
	if (version < QAJ_VERSION_NO_IDENT || version > QAJ_VERSION)
		return fail(c, mlen + 1,
			    "journal version %" PRIu64 " is not supported (this quickack reads versions %d to %d)",
			    version, QAJ_VERSION_NO_IDENT, QAJ_VERSION);
	if (check_crc(c, &blen))
		return -1;
	body.len = blen;
	c->l = &body;
	c->pos = mlen + 1;
	while (c->pos < body.len && body.p[c->pos] != ' ')
		c->pos++;
	c->pos++;
	if (field(c, "netns", &v, &n) ||
	    decode_netns(c, (size_t)(v - body.p), v, n, j->netns, sizeof(j->netns)) ||
	    field_u64(c, "created", UINT64_MAX, &j->created_s) ||
	    (version > QAJ_VERSION_NO_IDENT && parse_ident(c, j)) || field_end(c))
		return -1;
	j->version = (unsigned int)version;
	j->header_len = blen + CRC_FIELD_LEN + 1;
	j->has_header = true;
	return 0;
}

static struct qaj_entry *find_entry(struct qaj *j, uint64_t seq)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) { /* entries are in increasing seq order */
		size_t mid = (lo + hi) / 2;

		if (j->e[mid].seq == seq)
			return &j->e[mid];
		if (j->e[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* the fields of a route record that repeat what its state holds */
struct route_ids {
	const char *fam, *dst;
	size_t fam_n, dst_n, at;
	uint64_t table, metric;
};

/* seq, time and op */
static int route_head(struct cursor *c, const struct qaj *j, struct qaj_entry *ent)
{
	static const char *const ops[] = { "on", "off", "rto-min", "congctl" };
	const char *v;
	size_t n, at = c->pos;

	if (field_u64(c, "seq", UINT64_MAX, &ent->seq))
		return -1;
	if (ent->seq <= j->last_seq)
		return fail(c, at, "seq %" PRIu64 " does not follow %" PRIu64, ent->seq, j->last_seq);
	if (field_u64(c, "time", UINT64_MAX, &ent->time_s))
		return -1;
	at = c->pos;
	if (field(c, "op", &v, &n))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		if (n == strlen(ops[i]) && !memcmp(v, ops[i], n)) {
			memcpy(ent->op, v, n);
			return 0;
		}
	}
	return fail(c, at, "unknown op '%.*s'", (int)(n > 20 ? 20 : n), v);
}

static int route_ids(struct cursor *c, struct route_ids *ids)
{
	if (field(c, "family", &ids->fam, &ids->fam_n) || field_u64(c, "table", UINT32_MAX, &ids->table))
		return -1;
	ids->at = c->pos;
	return field(c, "dst", &ids->dst, &ids->dst_n) || field_u64(c, "metric", UINT32_MAX, &ids->metric);
}

/* one "IFINDEX:NAME" of devs= */
static int route_dev(struct cursor *c, size_t at, const char *v, size_t n, struct qaj_dev *d)
{
	const char *colon = memchr(v, ':', n);
	uint64_t x = 0;
	size_t digits = colon ? (size_t)(colon - v) : 0;

	if (!digits || digits > 10 || (digits > 1 && v[0] == '0'))
		return fail(c, at, "field 'devs' has an item that is not IFINDEX:NAME");
	for (size_t i = 0; i < digits; i++) {
		if (v[i] < '0' || v[i] > '9')
			return fail(c, at, "field 'devs' has an item that is not IFINDEX:NAME");
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (!x || x > UINT32_MAX)
		return fail(c, at, "field 'devs' has an ifindex out of range");
	d->ifindex = (uint32_t)x;
	return decode_name(c, "devs", at, colon + 1, n - digits - 1, d->name, sizeof(d->name));
}

/* devs=: "-", or IFINDEX:NAME items joined by commas */
static int route_devs(struct cursor *c, struct qaj_entry *ent)
{
	const char *v;
	size_t n, at = c->pos, items = 1;

	if (field(c, "devs", &v, &n))
		return -1;
	ent->has_devs = true;
	if (n == 1 && v[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		items += v[i] == ',';
	ent->devs = calloc(items, sizeof(*ent->devs));
	if (!ent->devs)
		return fail(c, at, "out of memory");
	for (size_t i = 0, start = 0; i <= n; i++) {
		if (i < n && v[i] != ',')
			continue;
		if (route_dev(c, at, v + start, i - start, &ent->devs[ent->ndevs++]))
			return -1;
		start = i + 1;
	}
	return 0;
}

/* state=: the saved route itself */
static int route_state(struct cursor *c, struct qaj_entry *ent)
{
	static uint8_t bin[QA_MSG_MAX]; /* decoded, then copied by qa_route_parse() */
	const char *v;
	size_t n, at = c->pos;
	char err[160];

	if (field(c, "state", &v, &n) || field_end(c))
		return -1;
	if (n % 2 || n < 2 * sizeof(struct rtmsg) || n > 2 * (size_t)QA_MSG_MAX)
		return fail(c, at, "field 'state' has %zu hex digits, not an even number of at least %zu", n,
			    2 * sizeof(struct rtmsg));
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return fail(c, at + 6 + 2 * i, "field 'state' has a character that is not lowercase hex");
		bin[i] = (uint8_t)(hi << 4 | lo);
	}
	if (qa_route_parse(bin, n / 2, &ent->route, err, sizeof(err)))
		return fail(c, at, "the saved route does not parse: %s", err);
	return 0;
}

/* family, table, dst, metric and devs must say what state says */
static int route_agrees(struct cursor *c, const struct qaj_entry *ent, const struct route_ids *ids)
{
	const struct qa_route *r = &ent->route;
	const char *fam = qa_family_name(r->family);
	struct qaj_dev *devs;
	char dst[64];
	size_t n;
	bool same;

	qa_prefix_str(r->family, r->dst, r->rtm.rtm_dst_len, dst, sizeof(dst));
	if (ids->fam_n != strlen(fam) || memcmp(ids->fam, fam, ids->fam_n) || ids->table != r->table ||
	    ids->metric != r->priority || ids->dst_n != strlen(dst) || memcmp(ids->dst, dst, ids->dst_n))
		return fail(c, ids->at, "fields family/table/dst/metric do not match the saved route (%s %s table %u metric %u)",
			    fam, dst, r->table, r->priority);
	if (!ent->has_devs)
		return 0;
	devs = calloc(r->nexthops + 1, sizeof(*devs));
	if (!devs)
		return fail(c, 0, "out of memory");
	n = qaj_route_devs(r, devs, r->nexthops + 1);
	same = n == ent->ndevs;
	for (size_t i = 0; same && i < n; i++)
		same = devs[i].ifindex == ent->devs[i].ifindex;
	free(devs);
	return same ? 0 : fail(c, ids->at, "field 'devs' does not list the saved route's devices");
}

static int add_entry(struct cursor *c, struct qaj *j, const struct qaj_entry *ent)
{
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct qaj_entry *e = realloc(j->e, cap * sizeof(*e));

		if (!e)
			return fail(c, 0, "out of memory");
		j->e = e;
		j->cap = cap;
	}
	j->e[j->n++] = *ent;
	j->last_seq = ent->seq;
	return 0;
}

static int parse_route(struct cursor *c, struct qaj *j)
{
	struct qaj_entry ent;
	struct route_ids ids;

	memset(&ent, 0, sizeof(ent));
	if (route_head(c, j, &ent) || route_ids(c, &ids) ||
	    (j->version > QAJ_VERSION_NO_IDENT && route_devs(c, &ent)) || route_state(c, &ent) ||
	    route_agrees(c, &ent, &ids))
		goto bad;
	/* the line as it is in the file (c->l stops before " crc=") */
	ent.line_off = c->l->off;
	ent.line_len = (uint32_t)(c->l->len + CRC_FIELD_LEN + 1);
	if (!add_entry(c, j, &ent))
		return 0;
bad:
	free(ent.devs);
	qa_route_free(&ent.route);
	return -1;
}

static int parse_void(struct cursor *c, struct qaj *j)
{
	uint64_t seq;
	size_t at = c->pos;
	struct qaj_entry *e;

	if (field_u64(c, "seq", UINT64_MAX, &seq) || field_end(c))
		return -1;
	e = find_entry(j, seq);
	if (!e)
		return fail(c, at, "void names seq %" PRIu64 ", which no route record has", seq);
	if (e->voided)
		return fail(c, at, "seq %" PRIu64 " is voided twice", seq);
	e->voided = true;
	e->void_off = c->l->off;
	e->void_len = (uint32_t)(c->l->len + CRC_FIELD_LEN + 1);
	return 0;
}

static int parse_record(struct cursor *c, struct qaj *j)
{
	struct line body = *c->l;
	size_t blen;

	if (!body.len)
		return fail(c, 0, "empty line");
	if (check_crc(c, &blen))
		return -1;
	body.len = blen;
	c->l = &body;
	if (blen > 6 && !memcmp(body.p, "route ", 6)) {
		c->pos = 6;
		return parse_route(c, j);
	}
	if (blen > 5 && !memcmp(body.p, "void ", 5)) {
		c->pos = 5;
		return parse_void(c, j);
	}
	return fail(c, 0, "unknown record '%.*s'", (int)strcspn(body.p, " ") > 20 ? 20 : (int)strcspn(body.p, " "),
		    body.p);
}

int qaj_parse(const char *buf, size_t len, struct qaj *j, struct qaj_error *e)
{
	size_t off = 0;
	unsigned long no = 0;

	memset(j, 0, sizeof(*j));
	memset(e, 0, sizeof(*e));
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		struct line l = { buf + off, 0, off, ++no };
		struct cursor c = { &l, 0, e };

		if (!nl) { /* a write cut short: never applied */
			j->torn_tail = true;
			j->torn_line = no;
			break;
		}
		l.len = (size_t)(nl - (buf + off));
		if (memchr(l.p, '\0', l.len)) {
			fail(&c, (size_t)((const char *)memchr(l.p, '\0', l.len) - l.p), "NUL byte in the line");
			goto bad;
		}
		if (no == 1 ? parse_header(&c, j) : parse_record(&c, j))
			goto bad;
		off += l.len + 1;
		j->valid_len = off;
	}
	return 0;
bad:
	qaj_free(j);
	return -1;
}

void qaj_free(struct qaj *j)
{
	for (size_t i = 0; i < j->n; i++) {
		qa_route_free(&j->e[i].route);
		free(j->e[i].devs);
	}
	free(j->e);
	j->e = NULL;
	j->n = j->cap = 0;
}

/* --- the file ---------------------------------------------------------------------- */

void qaj_default_path(const char *netns, char *buf, size_t cap)
{
	if (!netns)
		snprintf(buf, cap, "%s/quickack.journal", QAJ_DEFAULT_DIR);
	else
		snprintf(buf, cap, "%s/quickack-%s.journal", QAJ_DEFAULT_DIR, netns);
}

static int mkdirs(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, cap, ".");
	else if (slash == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, err = 0;

	dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fsync(fd))
		err = -1;
	close(fd);
	return err;
}

static int lock_wait(int fd, int op, int timeout_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int waited = 0;; waited += 10) {
		if (!flock(fd, op | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK || waited >= timeout_ms)
			return -1;
		nanosleep(&ts, NULL);
	}
}

static int read_all(int fd, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st))
		return -1;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -1;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				break;
			free(buf);
			return -1;
		}
		got += (size_t)n;
	}
	*out = buf;
	*len = got;
	return 0;
}

int qaj_open(struct qaj_file *f, const char *path, bool write, bool create, int lock_timeout_ms,
	     char *msg, size_t msglen)
{
	struct qaj_error pe;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	snprintf(f->path, sizeof(f->path), "%s", path);
	for (int tries = 0;; tries++) {
		struct stat a, b;
		int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;

		fd = open(path, flags);
		if (fd < 0 && errno == ENOENT && write && create) {
			char dir[PATH_MAX];

			dir_of(path, dir, sizeof(dir));
			if (mkdirs(dir)) {
				log_fmt(msg, msglen, "cannot create the journal directory %s: %s", dir,
				     strerror(errno));
				return QAJ_EIO;
			}
			fd = open(path, flags | O_CREAT | O_EXCL, 0644);
			if (fd >= 0)
				f->created = true;
			else if (errno == EEXIST)
				continue; /* another quickack made it first */
		}
		if (fd < 0) {
			if (errno == ENOENT && !(write && create))
				return QAJ_OK; /* no journal: nothing saved */
			log_fmt(msg, msglen, "cannot open the journal %s: %s", path, strerror(errno));
			return QAJ_EIO;
		}
		if (lock_wait(fd, write ? LOCK_EX : LOCK_SH, lock_timeout_ms)) {
			log_fmt(msg, msglen, "the journal %s is locked by another quickack (waited %d ms)", path,
			     lock_timeout_ms);
			close(fd);
			return QAJ_EIO;
		}
		/* the file may have been replaced or removed while we waited */
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(fd);
		fd = -1;
		if (tries > 100) {
			log_fmt(msg, msglen, "the journal %s keeps changing under us", path);
			return QAJ_EIO;
		}
	}
	if (read_all(fd, &buf, &len)) {
		log_fmt(msg, msglen, "cannot read the journal %s: %s", path, strerror(errno));
		close(fd);
		return QAJ_EIO;
	}
	if (qaj_parse(buf, len, &f->j, &pe)) {
		log_fmt(msg, msglen, "journal %s is corrupt at line %lu (byte %zu): %s; nothing was applied", path,
		     pe.line, pe.offset, pe.msg);
		free(buf);
		close(fd);
		return QAJ_ECORRUPT;
	}
	f->buf = buf;
	f->buf_len = len;
	f->fd = fd;
	return QAJ_OK;
}

static int write_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

int qaj_append(struct qaj_file *f, const char *netns, const struct qaj_ident *ident, const char *lines,
	       size_t len, char *msg, size_t msglen)
{
	off_t end = (off_t)f->j.valid_len;

	if (f->fd < 0) {
		log_fmt(msg, msglen, "the journal %s is not open for writing", f->path);
		return QAJ_EIO;
	}
	/* drop a line a crash cut short, so the next one does not run into it */
	if (f->j.torn_tail && ftruncate(f->fd, end)) {
		log_fmt(msg, msglen, "cannot truncate the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	f->j.torn_tail = false;
	if (!f->j.has_header) {
		char hdr[1024];
		int n = qaj_format_header(hdr, sizeof(hdr), netns, (uint64_t)time(NULL), ident);

		if (n < 0 || ftruncate(f->fd, 0) || write_all(f->fd, hdr, (size_t)n, 0)) {
			log_fmt(msg, msglen, "cannot write the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		end = n;
		f->j.has_header = true;
		f->j.version = QAJ_VERSION;
		f->j.has_ident = true;
		f->j.ident = *ident;
		snprintf(f->j.netns, sizeof(f->j.netns), "%s", netns);
	}
	if (write_all(f->fd, lines, len, end) || fsync(f->fd)) {
		log_fmt(msg, msglen, "cannot write the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	f->j.valid_len = (size_t)end + len;
	if (f->created) {
		if (sync_dir(f->path)) {
			log_fmt(msg, msglen, "cannot sync the directory of the journal %s: %s", f->path,
			     strerror(errno));
			return QAJ_EIO;
		}
		f->created = false;
	}
	return QAJ_OK;
}

/* the header and the lines of the entries marked want in mark[], as they are
 * in the file (each route record with its void record); NULL when out of memory */
static char *copy_lines(const struct qaj_file *f, const bool *mark, bool want, size_t *len)
{
	const struct qaj *j = &f->j;
	size_t n = j->header_len;
	char *out;

	for (size_t i = 0; i < j->n; i++)
		if (mark[i] == want)
			n += j->e[i].line_len + j->e[i].void_len;
	out = malloc(n ? n : 1);
	if (!out)
		return NULL;
	memcpy(out, f->buf, j->header_len);
	n = j->header_len;
	for (size_t i = 0; i < j->n; i++) {
		const struct qaj_entry *e = &j->e[i];

		if (mark[i] != want)
			continue;
		memcpy(out + n, f->buf + e->line_off, e->line_len);
		n += e->line_len;
		if (e->voided) {
			memcpy(out + n, f->buf + e->void_off, e->void_len);
			n += e->void_len;
		}
	}
	*len = n;
	return out;
}

/* a new file at path holding data, synced; its descriptor, or -1 (errno set) */
static int write_synced(const char *path, int flags, const char *data, size_t len)
{
	int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0644), e;

	if (fd < 0)
		return -1;
	if (!write_all(fd, data, len, 0) && !fsync(fd))
		return fd;
	e = errno;
	close(fd);
	unlink(path);
	errno = e;
	return -1;
}

/* data replaces the journal atomically; the new file's descriptor, or -1 */
static int replace_journal(struct qaj_file *f, const char *data, size_t len, char *msg, size_t msglen)
{
	char tmp[PATH_MAX + 32];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", f->path, (int)getpid());
	fd = write_synced(tmp, O_RDWR | O_TRUNC, data, len);
	/* nobody else knows tmp yet: the lock cannot be held elsewhere */
	if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) || rename(tmp, f->path))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: %s", f->path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	sync_dir(f->path);
	return fd;
}

int qaj_rewrite(struct qaj_file *f, const struct qaj_entry *const *keep, size_t n, char *msg, size_t msglen)
{
	bool *mark;
	char *data;
	size_t len;
	int fd;

	if (!n) {
		if (unlink(f->path) && errno != ENOENT) {
			log_fmt(msg, msglen, "cannot remove the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		sync_dir(f->path);
		return QAJ_OK;
	}
	mark = calloc(f->j.n, sizeof(*mark));
	if (!mark) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: out of memory", f->path);
		return QAJ_EIO;
	}
	for (size_t i = 0; i < n; i++)
		mark[keep[i] - f->j.e] = true;
	data = copy_lines(f, mark, true, &len);
	free(mark);
	if (!data) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: out of memory", f->path);
		return QAJ_EIO;
	}
	fd = replace_journal(f, data, len, msg, msglen);
	free(data);
	if (fd < 0)
		return QAJ_EIO;
	/* the new file, locked, until qaj_close; j still describes the old one */
	close(f->fd);
	f->fd = fd;
	return QAJ_OK;
}

/* the records marked aside, into a new file beside the journal: its path in side */
static int write_side(const struct qaj_file *f, const bool *aside, char *side, size_t sidelen, char *msg,
		      size_t msglen)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t len;
	char *data = copy_lines(f, aside, true, &len);
	int fd = -1;

	if (!data) {
		log_fmt(msg, msglen, "cannot set journal records aside: out of memory");
		return QAJ_EIO;
	}
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	for (int k = 1; fd < 0 && k <= 100; k++) {
		if (k == 1)
			snprintf(side, sidelen, "%s.stale-%s", f->path, stamp);
		else
			snprintf(side, sidelen, "%s.stale-%s-%d", f->path, stamp, k);
		fd = write_synced(side, O_WRONLY | O_EXCL, data, len);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	free(data);
	if (fd < 0) {
		log_fmt(msg, msglen, "cannot write %s to set journal records aside: %s", side, strerror(errno));
		return QAJ_EIO;
	}
	close(fd);
	sync_dir(side);
	return QAJ_OK;
}

/* no record is left: the journal is emptied in place, still locked, and
 * removed at qaj_close unless something is appended */
static int empty_journal(struct qaj_file *f, char *msg, size_t msglen)
{
	uint64_t last = f->j.last_seq;

	if (ftruncate(f->fd, 0) || fsync(f->fd)) {
		log_fmt(msg, msglen, "cannot empty the journal %s: %s", f->path, strerror(errno));
		return QAJ_EIO;
	}
	qaj_free(&f->j);
	memset(&f->j, 0, sizeof(f->j));
	f->j.last_seq = last;
	free(f->buf);
	f->buf = NULL;
	f->buf_len = 0;
	f->created = true;
	return QAJ_OK;
}

/* the journal rewritten with the records not set aside, and read again */
static int keep_rest(struct qaj_file *f, const bool *aside, char *msg, size_t msglen)
{
	struct qaj j;
	struct qaj_error pe;
	uint64_t last = f->j.last_seq;
	size_t len;
	char *data = copy_lines(f, aside, false, &len);
	int fd;

	if (!data || qaj_parse(data, len, &j, &pe)) {
		log_fmt(msg, msglen, "cannot rewrite the journal %s: %s", f->path, data ? pe.msg : "out of memory");
		free(data);
		return QAJ_EIO;
	}
	fd = replace_journal(f, data, len, msg, msglen);
	if (fd < 0) {
		qaj_free(&j);
		free(data);
		return QAJ_EIO;
	}
	close(f->fd);
	f->fd = fd;
	qaj_free(&f->j);
	f->j = j;
	f->j.last_seq = last > j.last_seq ? last : j.last_seq;
	free(f->buf);
	f->buf = data;
	f->buf_len = len;
	return QAJ_OK;
}

int qaj_set_aside(struct qaj_file *f, const bool *aside, char *side, size_t sidelen, char *msg,
		  size_t msglen)
{
	size_t rest = 0;

	side[0] = '\0';
	if (f->fd < 0 || !f->j.has_header) {
		log_fmt(msg, msglen, "the journal %s is not open for writing", f->path);
		return QAJ_EIO;
	}
	for (size_t i = 0; i < f->j.n; i++)
		rest += !aside[i];
	/* no record marked (a header alone, say): no side file */
	if (rest < f->j.n && write_side(f, aside, side, sidelen, msg, msglen))
		return QAJ_EIO;
	if (!rest)
		return empty_journal(f, msg, msglen); /* failing, it may be emptied: side stays */
	if (!keep_rest(f, aside, msg, msglen))
		return QAJ_OK;
	/* the journal is as it was: its records are not in two files */
	if (side[0])
		unlink(side);
	side[0] = '\0';
	return QAJ_EIO;
}

void qaj_close(struct qaj_file *f)
{
	/* made by this run and never written: leave no empty journal behind */
	if (f->fd >= 0 && f->created)
		unlink(f->path);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	qaj_free(&f->j);
	free(f->buf);
	f->buf = NULL;
}
