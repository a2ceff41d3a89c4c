// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal read: every line checked against the format journal.h
 * describes (its fields, its CRC, the saved route's state agreeing with
 * the fields that repeat it) into struct qaj. The first fault names its
 * line and byte offset; a last line without its newline is set apart as
 * torn.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "journal.h"
#include "journal_line.h"

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

static int parse_route(struct cursor *c, struct qaj *j, bool added)
{
	struct qaj_entry ent;
	struct route_ids ids;

	memset(&ent, 0, sizeof(ent));
	ent.added = added;
	if (added && j->version < QAJ_VERSION_ADDED)
		return fail(c, 0, "an added record in a version %u journal (added records came with version %d)",
			    j->version, QAJ_VERSION_ADDED);
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

static struct qaj_scope *find_scope(struct qaj *j, uint64_t seq)
{
	for (size_t i = 0; i < j->nsc; i++)
		if (j->sc[i].seq == seq)
			return &j->sc[i];
	return NULL;
}

static int parse_void(struct cursor *c, struct qaj *j)
{
	uint64_t seq;
	size_t at = c->pos;
	struct qaj_entry *e;
	struct qaj_scope *sc;
	bool *voided;

	if (field_u64(c, "seq", UINT64_MAX, &seq) || field_end(c))
		return -1;
	e = find_entry(j, seq);
	sc = e ? NULL : find_scope(j, seq);
	if (!e && !sc)
		return fail(c, at, "void names seq %" PRIu64 ", which no route or scope record has", seq);
	voided = e ? &e->voided : &sc->voided;
	if (*voided)
		return fail(c, at, "seq %" PRIu64 " is voided twice", seq);
	*voided = true;
	if (e) {
		e->void_off = c->l->off;
		e->void_len = (uint32_t)(c->l->len + CRC_FIELD_LEN + 1);
	} else {
		sc->void_off = c->l->off;
		sc->void_len = (uint32_t)(c->l->len + CRC_FIELD_LEN + 1);
	}
	return 0;
}

/* ports=P[,P...]: 1 to QS_PORTS_MAX ports, each 1..65535 */
static int scope_ports(struct cursor *c, struct qaj_scope *sc)
{
	const char *v;
	size_t n, at = c->pos;

	if (field(c, "ports", &v, &n))
		return -1;
	for (size_t i = 0; i < n; sc->nports++) {
		uint32_t p = 0;
		size_t d = 0;

		if (sc->nports == QS_PORTS_MAX)
			return fail(c, at, "field 'ports' names more than %d ports", QS_PORTS_MAX);
		for (; i < n && v[i] >= '0' && v[i] <= '9' && d < 6; i++, d++)
			p = p * 10 + (uint32_t)(v[i] - '0');
		if (!d || p < 1 || p > 65535 || (i < n && v[i] != ',') || (i < n && i + 1 == n))
			return fail(c, at, "field 'ports' is not a list of ports 1 to 65535");
		sc->ports[sc->nports] = (uint16_t)p;
		i += i < n;
	}
	if (!sc->nports)
		return fail(c, at, "field 'ports' is empty");
	return 0;
}

/* a path field written by encode_name(), not empty */
static int scope_path(struct cursor *c, const char *key, char *out, size_t cap)
{
	const char *v;
	size_t n, at = c->pos;

	if (field(c, key, &v, &n))
		return -1;
	if (!n)
		return fail(c, at, "field '%s' is empty", key);
	return decode_name(c, key, at, v, n, out, cap);
}

static int scope_fields(struct cursor *c, const struct qaj *j, struct qaj_scope *sc)
{
	const char *v;
	size_t n, at = c->pos;

	if (field_u64(c, "seq", UINT64_MAX, &sc->seq))
		return -1;
	if (sc->seq <= j->last_seq)
		return fail(c, at, "seq %" PRIu64 " does not follow %" PRIu64, sc->seq, j->last_seq);
	if (field_u64(c, "time", UINT64_MAX, &sc->time_s))
		return -1;
	at = c->pos;
	if (field(c, "op", &v, &n))
		return -1;
	if (n != 2 || memcmp(v, "on", 2))
		return fail(c, at, "unknown op '%.*s' for a scope", (int)(n > 20 ? 20 : n), v);
	memcpy(sc->op, "on", 3);
	at = c->pos;
	if (field(c, "side", &v, &n))
		return -1;
	if (n == 4 && (!memcmp(v, "recv", 4) || !memcmp(v, "send", 4)))
		sc->side = v[0] == 'r' ? QS_SIDE_RECV : QS_SIDE_SEND;
	else
		return fail(c, at, "field 'side' is neither recv nor send");
	return scope_ports(c, sc) || scope_path(c, "cgroup", sc->cgroup, sizeof(sc->cgroup)) ||
	       field_u64(c, "cgroup_id", UINT64_MAX, &sc->cgroup_id) ||
	       scope_path(c, "pin", sc->pin, sizeof(sc->pin)) || field_end(c);
}

static int parse_scope(struct cursor *c, struct qaj *j)
{
	struct qaj_scope sc;

	if (j->version < QAJ_VERSION_SCOPE)
		return fail(c, 0, "a scope record in a version %u journal (scope records came with version %d)",
			    j->version, QAJ_VERSION_SCOPE);
	memset(&sc, 0, sizeof(sc));
	if (scope_fields(c, j, &sc))
		return -1;
	sc.keep = true;
	sc.line_off = c->l->off;
	sc.line_len = (uint32_t)(c->l->len + CRC_FIELD_LEN + 1);
	if (j->nsc == j->sccap) {
		size_t cap = j->sccap ? j->sccap * 2 : 4;
		struct qaj_scope *v = realloc(j->sc, cap * sizeof(*v));

		if (!v)
			return fail(c, 0, "out of memory");
		j->sc = v;
		j->sccap = cap;
	}
	j->sc[j->nsc++] = sc;
	j->last_seq = sc.seq;
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
	if (blen > 6 && (!memcmp(body.p, "route ", 6) || !memcmp(body.p, "added ", 6))) {
		c->pos = 6;
		return parse_route(c, j, body.p[0] == 'a');
	}
	if (blen > 6 && !memcmp(body.p, "scope ", 6)) {
		c->pos = 6;
		return parse_scope(c, j);
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
	free(j->sc);
	j->sc = NULL;
	j->nsc = j->sccap = 0;
}
