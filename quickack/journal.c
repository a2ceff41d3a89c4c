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

static size_t encode_netns(const char *ns, char *out, size_t cap)
{
	size_t n = 0;

	if (!strcmp(ns, QAJ_NETNS_SELF))
		return (size_t)snprintf(out, cap, "%s", QAJ_NETNS_SELF);
	for (const unsigned char *p = (const unsigned char *)ns; *p && n + 4 < cap; p++) {
		/* a namespace literally named "-" is written %2D, so it is not ours */
		if (netns_plain(*p) && !(*p == '-' && !ns[1]))
			out[n++] = (char)*p;
		else
			n += (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
	}
	out[n] = '\0';
	return n;
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

int qaj_format_header(char *buf, size_t cap, const char *netns, uint64_t created_s)
{
	char ns[800];

	encode_netns(netns, ns, sizeof(ns));
	return finish_line(buf, cap,
			   snprintf(buf, cap, "%s %d netns=%s created=%" PRIu64, QAJ_MAGIC, QAJ_VERSION, ns,
				    created_s));
}

int qaj_format_void(char *buf, size_t cap, uint64_t seq)
{
	return finish_line(buf, cap, snprintf(buf, cap, "void seq=%" PRIu64, seq));
}

size_t qaj_route_line_max(const struct qa_route *route)
{
	return 2 * (size_t)route->len + 256;
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

/* thousands of records per change: formatted by hand, not by snprintf */
int qaj_format_route(char *buf, size_t cap, uint64_t seq, uint64_t time_s, const char *op,
		     const struct qa_route *r)
{
	static const char hex[] = "0123456789abcdef";
	char dst[64], *p = buf;

	if (cap < qaj_route_line_max(r) || strlen(op) > 16)
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

static int decode_netns(struct cursor *c, size_t at, const char *v, size_t n, char *out, size_t cap)
{
	size_t k = 0;

	if (n == 1 && v[0] == '-') {
		snprintf(out, cap, "%s", QAJ_NETNS_SELF);
		return 0;
	}
	if (!n)
		return fail(c, at, "field 'netns' is empty");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (k + 1 >= cap)
			return fail(c, at, "field 'netns' is too long");
		if (ch == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return fail(c, at, "field 'netns' has a cut %%XX escape");
			hi = hexval((char)(v[i + 1] | 0x20));
			lo = hexval((char)(v[i + 2] | 0x20));
			if (hi < 0 || lo < 0 || (!hi && !lo))
				return fail(c, at, "field 'netns' has a bad %%XX escape");
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (netns_plain(ch)) {
			out[k++] = (char)ch;
		} else {
			return fail(c, at, "field 'netns' has a character that must be escaped");
		}
	}
	out[k] = '\0';
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
	if (version != QAJ_VERSION)
		return fail(c, mlen + 1, "journal version %" PRIu64 " is not supported (this quickack reads version %d)",
			    version, QAJ_VERSION);
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
	    field_u64(c, "created", UINT64_MAX, &j->created_s) || field_end(c))
		return -1;
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

static int parse_route(struct cursor *c, struct qaj *j)
{
	static const char *const ops[] = { "on", "off", "rto-min", "congctl" };
	struct qaj_entry ent;
	const char *v, *fam_v, *dst_v;
	size_t n, fam_n, dst_n, at, state_at;
	uint64_t table, metric;
	char err[160], dst[64];
	static uint8_t bin[QA_MSG_MAX]; /* decoded, then copied by qa_route_parse() */
	bool op_ok = false;

	memset(&ent, 0, sizeof(ent));
	at = c->pos;
	if (field_u64(c, "seq", UINT64_MAX, &ent.seq))
		return -1;
	if (ent.seq <= j->last_seq)
		return fail(c, at, "seq %" PRIu64 " does not follow %" PRIu64, ent.seq, j->last_seq);
	if (field_u64(c, "time", UINT64_MAX, &ent.time_s))
		return -1;
	at = c->pos;
	if (field(c, "op", &v, &n))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (n == strlen(ops[i]) && !memcmp(v, ops[i], n))
			op_ok = true;
	if (!op_ok)
		return fail(c, at, "unknown op '%.*s'", (int)(n > 20 ? 20 : n), v);
	memcpy(ent.op, v, n);
	if (field(c, "family", &fam_v, &fam_n) || field_u64(c, "table", UINT32_MAX, &table))
		return -1;
	at = c->pos;
	if (field(c, "dst", &dst_v, &dst_n) || field_u64(c, "metric", UINT32_MAX, &metric))
		return -1;
	state_at = c->pos;
	if (field(c, "state", &v, &n) || field_end(c))
		return -1;
	if (n % 2 || n < 2 * sizeof(struct rtmsg) || n > 2 * (size_t)QA_MSG_MAX)
		return fail(c, state_at, "field 'state' has %zu hex digits, not an even number of at least %zu",
			    n, 2 * sizeof(struct rtmsg));
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return fail(c, state_at + 6 + 2 * i, "field 'state' has a character that is not lowercase hex");
		bin[i] = (uint8_t)(hi << 4 | lo);
	}
	if (qa_route_parse(bin, n / 2, &ent.route, err, sizeof(err)))
		return fail(c, state_at, "the saved route does not parse: %s", err);
	qa_prefix_str(ent.route.family, ent.route.dst, ent.route.rtm.rtm_dst_len, dst, sizeof(dst));
	if (fam_n != strlen(qa_family_name(ent.route.family)) ||
	    memcmp(fam_v, qa_family_name(ent.route.family), fam_n) || table != ent.route.table ||
	    metric != ent.route.priority || dst_n != strlen(dst) || memcmp(dst_v, dst, dst_n)) {
		qa_route_free(&ent.route);
		return fail(c, at, "fields family/table/dst/metric do not match the saved route (%s %s table %u metric %u)",
			    qa_family_name(ent.route.family), dst, ent.route.table, ent.route.priority);
	}
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct qaj_entry *e = realloc(j->e, cap * sizeof(*e));

		if (!e) {
			qa_route_free(&ent.route);
			return fail(c, 0, "out of memory");
		}
		j->e = e;
		j->cap = cap;
	}
	j->e[j->n++] = ent;
	j->last_seq = ent.seq;
	return 0;
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
	for (size_t i = 0; i < j->n; i++)
		qa_route_free(&j->e[i].route);
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
	free(buf);
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

int qaj_append(struct qaj_file *f, const char *netns, const char *lines, size_t len, char *msg,
	       size_t msglen)
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
		int n = qaj_format_header(hdr, sizeof(hdr), netns, (uint64_t)time(NULL));

		if (n < 0 || ftruncate(f->fd, 0) || write_all(f->fd, hdr, (size_t)n, 0)) {
			log_fmt(msg, msglen, "cannot write the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		end = n;
		f->j.has_header = true;
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

int qaj_rewrite(struct qaj_file *f, const char *netns, const struct qaj_entry *const *keep, size_t n,
		char *msg, size_t msglen)
{
	char tmp[PATH_MAX + 32], hdr[1024];
	char *line = NULL;
	off_t off = 0;
	int fd, len;

	if (!n) {
		if (unlink(f->path) && errno != ENOENT) {
			log_fmt(msg, msglen, "cannot remove the journal %s: %s", f->path, strerror(errno));
			return QAJ_EIO;
		}
		sync_dir(f->path);
		return QAJ_OK;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", f->path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	len = qaj_format_header(hdr, sizeof(hdr), netns, f->j.created_s ? f->j.created_s : (uint64_t)time(NULL));
	if (len < 0 || write_all(fd, hdr, (size_t)len, off))
		goto fail_fd;
	off += len;
	for (size_t i = 0; i < n; i++) {
		size_t cap = qaj_route_line_max(&keep[i]->route);

		free(line);
		line = malloc(cap);
		if (!line)
			goto fail_fd;
		len = qaj_format_route(line, cap, keep[i]->seq, keep[i]->time_s, keep[i]->op, &keep[i]->route);
		if (len < 0 || write_all(fd, line, (size_t)len, off))
			goto fail_fd;
		off += len;
	}
	free(line);
	line = NULL;
	if (fsync(fd) || close(fd)) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, f->path))
		goto fail;
	sync_dir(f->path);
	return QAJ_OK;
fail_fd:
	close(fd);
fail:
	log_fmt(msg, msglen, "cannot rewrite the journal %s: %s", f->path, strerror(errno));
	free(line);
	unlink(tmp);
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
}
