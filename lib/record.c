// SPDX-License-Identifier: GPL-2.0-only
/*
 * The record writers: each record built in one buffer and written whole (a
 * torn tail cut back when a write fails), numbers and strings formatted by
 * hand, and a schema's JSON, CSV and table forms.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common.h"
#include "log.h"
#include "record.h"
#include "recbuf.h"

struct rec_writer *rec_writer_new(enum rec_format fmt, FILE *out)
{
	struct rec_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->buf = malloc(BUF_CAP);
	if (!w->buf) {
		free(w);
		return NULL;
	}
	w->cap = BUF_CAP;
	w->fmt = fmt;
	w->out = out;
	return w;
}

enum rec_format rec_writer_format(const struct rec_writer *w) { return w->fmt; }
void rec_writer_reset_header(struct rec_writer *w) { w->last = NULL; }

/* a write that failed after `done` bytes: cut a regular file back to the
 * end of the last whole record those bytes held */
static void cut_torn_tail(int fd, off_t start, const char *buf, size_t done)
{
	struct stat st;

	while (done > 0 && buf[done - 1] != '\n')
		done--;
	if (start >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		(void)!ftruncate(fd, start + (off_t)done);
}

/* writes buf[0..n) (whole records) to the output; false on failure */
static bool write_out(struct rec_writer *w, size_t n)
{
	int fd = fileno(w->out);
	off_t start;
	size_t done = 0;

	if (w->failed)
		return false;
	if (fd < 0) { /* a memory stream: stdio is all there is */
		if (fwrite(w->buf, 1, n, w->out) != n)
			w->failed = true;
		return !w->failed;
	}
	if (fflush(w->out)) { /* what the caller wrote through stdio goes first */
		w->failed = true;
		return false;
	}
	start = lseek(fd, 0, SEEK_CUR);
	while (done < n) {
		ssize_t k = write(fd, w->buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = k < 0 ? errno : ENOSPC;

			cut_torn_tail(fd, start, w->buf, done);
			errno = err;
			w->failed = true;
			return false;
		}
		done += (size_t)k;
	}
	return true;
}

/* writes out the complete records in the buffer, keeping the one being built */
static void drain(struct rec_writer *w)
{
	size_t whole = w->rec_start;

	if (!whole)
		return;
	write_out(w, whole);
	memmove(w->buf, w->buf + whole, w->len - whole);
	w->len -= whole;
	w->rec_start = 0;
}

/* room for n more bytes (and the slack): complete records go out, then the
 * buffer grows if the record being built needs it */
void rec_reserve(struct rec_writer *w, size_t n)
{
	size_t need = w->len + n + BUF_SLACK;
	char *nb;

	if (need <= w->cap)
		return;
	drain(w);
	need = w->len + n + BUF_SLACK;
	if (need <= w->cap)
		return;
	nb = realloc(w->buf, need * 2);
	if (!nb) {
		/* the record is lost and the writer fails */
		w->failed = true;
		w->len = w->rec_start;
		return;
	}
	w->buf = nb;
	w->cap = need * 2;
}

int rec_writer_flush(struct rec_writer *w)
{
	if (w->len) {
		w->rec_start = w->len;
		drain(w);
	}
	if (!w->failed && fflush(w->out))
		w->failed = true;
	return w->failed ? -1 : 0;
}

int rec_writer_free(struct rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = rec_writer_flush(w);
	for (unsigned int i = 0; i < w->nplans; i++)
		free(w->plans[i].keys);
	free(w->csv);
	free(w->cell);
	free(w->buf);
	free(w);
	return err;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				     "25262728293031323334353637383940414243444546474849"
				     "50515253545556575859606162636465666768697071727374"
				     "75767778798081828384858687888990919293949596979899";

/* the number of decimal digits of v: from its bit length, then one compare */
static inline unsigned int count_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
		100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
	};
	/* 1233 / 4096 is just above log10(2): t = floor(bits * log10(2)) is
	 * the number of digits less one, or less two */
	unsigned int t = (unsigned int)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + 1 - ((v | 1) < pow10[t]);
}

/* the last two digits of v (v < 100) at p */
static inline void put_pair(char *p, unsigned int v)
{
	memcpy(p, digit_pairs + 2 * v, 2);
}

/* v < 10^8 as exactly 8 digits (leading zeros) ending at end */
static inline void put_8digits(char *end, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	put_pair(end - 2, lo % 100);
	put_pair(end - 4, lo / 100);
	put_pair(end - 6, hi % 100);
	put_pair(end - 8, hi / 100);
}

/* the n = count_digits(v) digits of v written back from end: 8 at a time in
 * 32-bit arithmetic, then pairs */
static inline void fmt_digits(char *end, uint64_t v)
{
	uint32_t v32;

	while (v >= 100000000) {
		put_8digits(end, (uint32_t)(v % 100000000));
		v /= 100000000;
		end -= 8;
	}
	v32 = (uint32_t)v;
	while (v32 >= 100) {
		put_pair(end - 2, v32 % 100);
		v32 /= 100;
		end -= 2;
	}
	if (v32 >= 10)
		put_pair(end - 2, v32);
	else
		end[-1] = (char)('0' + v32);
}

/* straight into the buffer (BUF_SLACK holds the longest, 20 digits); inlined
 * everywhere: it is most of what a trace's record formats */
static inline __attribute__((always_inline)) void put_u64(struct rec_writer *w, uint64_t v)
{
	unsigned int n = count_digits(v);

	if (w->len + BUF_SLACK > w->cap)
		rec_reserve(w, 24);
	fmt_digits(w->buf + w->len + n, v);
	w->len += n;
}

static void put_i64(struct rec_writer *w, int64_t v)
{
	if (v < 0) {
		putc_(w, '-');
		put_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

static void put_f64(struct rec_writer *w, double d, int prec, bool json)
{
	char tmp[64];
	int n;

	if (!isfinite(d)) {
		puts_(w, json ? "null" : "");
		return;
	}
	/*
	 * Fast path, byte-identical to printf("%.*f"): scale to an integer when
	 * that is exact enough, and leave ties and large values to printf (which
	 * rounds the exact binary value half-to-even).
	 */
	if (prec >= 0 && prec <= 6 && fabs(d) < 1e3) {
		static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
		double x = fabs(d) * scale[prec];
		double fl = floor(x), frac = x - fl;

		/* x < 1e9: its rounding error (< 1.2e-7) cannot move it across a tie */
		if (fabs(frac - 0.5) > 1e-6) {
			/* x < 1e9 + 1: 32-bit division, far cheaper than 64-bit */
			uint32_t q = (uint32_t)fl + (frac > 0.5);
			uint32_t p10 = (uint32_t)scale[prec];

			if (signbit(d)) /* printf keeps the sign of -0.0 and -0.0001 */
				putc_(w, '-');
			put_u64(w, q / p10);
			if (prec) {
				/* the fraction's digits with their leading zeros: the
				 * digits of p10 + f, its leading 1 replaced by the point */
				uint32_t f = q % p10 + p10;

				if (w->len + BUF_SLACK > w->cap)
					rec_reserve(w, 8);
				fmt_digits(w->buf + w->len + (unsigned int)prec + 1, f);
				w->buf[w->len] = '.';
				w->len += (unsigned int)prec + 1;
			}
			return;
		}
	}
	n = snprintf(tmp, sizeof(tmp), "%.*f", prec, d);
	if (n > 0)
		put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

size_t rec_json_escape(char *dst, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	if (!cap)
		return 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[7];
		size_t k = 0;

		if (c == '"' || c == '\\') {
			esc[k++] = '\\';
			esc[k++] = (char)c;
		} else if (c == '\n') {
			esc[k++] = '\\';
			esc[k++] = 'n';
		} else if (c == '\t') {
			esc[k++] = '\\';
			esc[k++] = 't';
		} else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			k = 4;
			esc[k++] = hex[c >> 4];
			esc[k++] = hex[c & 15];
		} else {
			esc[k++] = (char)c;
		}
		if (n + k >= cap)
			break;
		memcpy(dst + n, esc, k);
		n += k;
	}
	dst[n] = '\0';
	return n;
}

/* ,"name": written in place (keys are plain identifiers, never escaped) */
static void put_json_key(struct rec_writer *w, const char *name, bool first)
{
	size_t n = strnlen(name, 200);
	char *p;

	if (w->len + BUF_SLACK > w->cap)
		rec_reserve(w, 0);

	p = w->buf + w->len;
	if (!first)
		*p++ = ',';
	*p++ = '"';
	memcpy(p, name, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	w->len = (size_t)(p - w->buf);
}

/* the bytes that end a run a JSON string holds as is: the end, control
 * characters, '"' and '\\' */
static const uint8_t json_stop[256] = { [0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1 };

/* a JSON string of any length: runs that need no escaping are copied as
 * they are, the rest escaped a character at a time; a short string with
 * nothing to escape (addresses, names) is one copy */
static void put_json_str(struct rec_writer *w, const char *s)
{
	size_t n = 0;

	while (!json_stop[(unsigned char)s[n]])
		n++;
	if (!s[n] && n + 2 <= BUF_SLACK) {
		char *p;

		if (w->len + BUF_SLACK > w->cap)
			rec_reserve(w, 0);
		p = w->buf + w->len;
		p[0] = '"';
		memcpy(p + 1, s, n);
		p[n + 1] = '"';
		w->len += n + 2;
		return;
	}
	putc_(w, '"');
	while (*s) {
		char esc[8];

		n = 0;
		while (!json_stop[(unsigned char)s[n]])
			n++;
		put(w, s, n);
		s += n;
		if (!*s)
			break;
		put(w, esc, rec_json_escape(esc, sizeof(esc), (const char[]){ *s, '\0' }));
		s++;
	}
	putc_(w, '"');
}

/* CSV: quote when needed (RFC 4180) */
static void put_csv_str(struct rec_writer *w, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		puts_(w, s);
		return;
	}
	putc_(w, '"');
	for (; *s; s++) {
		if (*s == '"')
			putc_(w, '"');
		putc_(w, *s);
	}
	putc_(w, '"');
}

/* --- JSON ------------------------------------------------------------------ */

/* true or false: one fixed-size copy */
static inline void put_json_bool(struct rec_writer *w, bool b)
{
	static const char text[2][8] = { "false", "true" };

	if (w->len + BUF_SLACK > w->cap)
		rec_reserve(w, 8);
	memcpy(w->buf + w->len, text[b], 8);
	w->len += b ? 4 : 5;
}

/* one value (not null) */
static inline void put_json_value(struct rec_writer *w, const struct rec_field *f, const struct rec_value *v)
{
	switch (f->type) {
	case REC_U64: put_u64(w, v->u); break;
	case REC_I64: put_i64(w, v->i); break;
	case REC_F64: put_f64(w, v->d, f->prec, true); break;
	case REC_STR: put_json_str(w, v->s); break;
	case REC_BOOL: put_json_bool(w, v->b); break;
	case REC_U64_LIST:
		putc_(w, '[');
		for (unsigned int k = 0; k < v->list.n; k++) {
			if (k)
				putc_(w, ',');
			put_u64(w, v->list.v[k]);
		}
		putc_(w, ']');
		break;
	case REC_KV:
		putc_(w, '{');
		for (unsigned int k = 0; k < v->kv.n; k++) {
			if (k)
				putc_(w, ',');
			put_json_str(w, v->kv.v[k].key);
			putc_(w, ':');
			put_u64(w, v->kv.v[k].val);
		}
		putc_(w, '}');
		break;
	case REC_RAW: put(w, v->raw.s, v->raw.len); break;
	}
}

/* text of at most cap bytes at dst: a,b,c joined; its length, or 0 when
 * it does not fit */
static size_t join3(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
	int n = snprintf(dst, cap, "%s%s%s", a, b, c);

	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* the key texts of fixed schema s, made now; NULL when out of memory */
static struct json_plan *make_plan(struct rec_writer *w, const struct rec_schema *s)
{
	struct json_plan *p = &w->plans[w->nplans];
	bool first = !s->type;

	memset(p, 0, sizeof(*p));
	p->keys = calloc(s->nfields ? s->nfields : 1, sizeof(*p->keys));
	if (!p->keys)
		return NULL;
	p->s = s;
	if (s->type) {
		char esc[2 * KEY_SLOT];

		/* the escaped name must fit whole, or the slow way writes it */
		if (rec_json_escape(esc, sizeof(esc), s->type) < sizeof(esc) - 1)
			p->head_len = join3(p->head, sizeof(p->head), "{\"type\":\"", esc, "\"");
	} else {
		p->head_len = join3(p->head, sizeof(p->head), "{", "", "");
	}
	for (unsigned int i = 0; i < s->nfields; i++) {
		const char *name = s->fields[i].name;

		if (!name)
			continue;
		/* keys are plain identifiers, never escaped (as put_json_key) */
		p->keys[i].len = (uint8_t)join3(p->keys[i].text, sizeof(p->keys[i].text), first ? "\"" : ",\"",
						name, "\":");
		first = false;
	}
	w->nplans++;
	return p;
}

/* the plan of s when it is fixed and there is room for one; else NULL */
static struct json_plan *find_plan(struct rec_writer *w, const struct rec_schema *s)
{
	if (!s->fixed)
		return NULL;
	for (unsigned int i = 0; i < w->nplans; i++)
		if (w->plans[i].s == s)
			return &w->plans[i];
	return w->nplans < PLAN_MAX ? make_plan(w, s) : NULL;
}

/* the key of field i: its text from the plan, one fixed-size copy, when
 * the plan has it; else written out */
static void put_json_field_key(struct rec_writer *w, const struct json_plan *p, unsigned int i,
			       const char *name, bool first)
{
	const struct json_key *k = p ? &p->keys[i] : NULL;

	if (!k || !k->len) {
		put_json_key(w, name, first);
		return;
	}
	if (w->len + BUF_SLACK > w->cap)
		rec_reserve(w, 0);
	memcpy(w->buf + w->len, k->text, sizeof(k->text));
	w->len += k->len;
}

/* one JSON line; p: s's plan (fixed schemas), or NULL */
static void write_json(struct rec_writer *w, const struct rec_schema *s, const struct json_plan *p,
		       const struct rec_value *v)
{
	bool first = !s->type;

	if (p && p->head_len) {
		put(w, p->head, p->head_len);
	} else {
		putc_(w, '{');
		if (s->type) {
			puts_(w, "\"type\":");
			put_json_str(w, s->type);
		}
	}
	for (unsigned int i = 0; i < s->nfields; i++) {
		const struct rec_field *f = &s->fields[i];

		if (!f->name)
			continue;
		put_json_field_key(w, p, i, f->name, first);
		first = false;
		if (v[i].null)
			put(w, "null", 4);
		else if (f->type == REC_U64) /* most fields of a trace */
			put_u64(w, v[i].u);
		else
			put_json_value(w, f, &v[i]);
	}
	put(w, "}\n", 2);
}

/* --- CSV ------------------------------------------------------------------- */

/* the column of `name` in the union, added when new; -1 when full */
static int csv_column(struct csv_union *u, const char *name)
{
	for (unsigned int c = 0; c < u->ncols; c++)
		if (!strcmp(u->cols[c], name))
			return (int)c;
	if (u->ncols == CSV_MAX_COLS)
		return -1;
	u->cols[u->ncols] = name;
	return (int)u->ncols++;
}

int rec_writer_declare(struct rec_writer *w, const struct rec_schema *s)
{
	struct csv_union *u;
	unsigned int t;

	if (w->fmt != REC_CSV)
		return 0;
	if (!w->csv && !(w->csv = calloc(1, sizeof(*w->csv))))
		return -1;
	u = w->csv;
	for (t = 0; t < u->ntypes; t++)
		if (u->types[t] == s)
			return 0;
	if (u->header_done || u->ntypes == CSV_MAX_TYPES) {
		elog("internal error: CSV record type '%s' declared after the header or beyond %d types",
		     s->type ? s->type : "?", CSV_MAX_TYPES);
		return -1;
	}
	u->types[u->ntypes++] = s;
	memset(u->map[t], 0xff, sizeof(u->map[t]));
	for (unsigned int i = 0; i < s->nfields; i++) {
		int c = s->fields[i].name ? csv_column(u, s->fields[i].name) : -1;

		if (c >= 0)
			u->map[t][c] = (int16_t)i;
	}
	return 0;
}

/* the header; a "type" column first when the file may hold several types */
static void csv_header(struct rec_writer *w)
{
	struct csv_union *u = w->csv;

	u->typed = u->ntypes > 1;
	if (u->typed)
		puts_(w, "type");
	for (unsigned int c = 0; c < u->ncols; c++) {
		if (c || u->typed)
			putc_(w, ',');
		puts_(w, u->cols[c]);
	}
	putc_(w, '\n');
	u->header_done = true;
}

/* the declared type of s, declaring it if the header is not out yet; -1 when it
 * cannot be: the record is not written (a tool's bug, said once) */
static int csv_type(struct rec_writer *w, const struct rec_schema *s)
{
	if (rec_writer_declare(w, s))
		return -1;
	for (unsigned int t = 0; t < w->csv->ntypes; t++)
		if (w->csv->types[t] == s)
			return (int)t;
	return -1;
}

/* one cell of a CSV row */
static void csv_cell(struct rec_writer *w, const struct rec_field *f, const struct rec_value *v, unsigned int i)
{
	{
		if (v[i].null)
			return;
		switch (f->type) {
		case REC_U64: put_u64(w, v[i].u); break;
		case REC_I64: put_i64(w, v[i].i); break;
		case REC_F64: put_f64(w, v[i].d, f->prec, false); break;
		case REC_STR: put_csv_str(w, v[i].s); break;
		case REC_BOOL: puts_(w, v[i].b ? "1" : "0"); break;
		case REC_U64_LIST:
			for (unsigned int k = 0; k < v[i].list.n; k++) {
				if (k)
					putc_(w, ';');
				put_u64(w, v[i].list.v[k]);
			}
			break;
		case REC_KV:
			for (unsigned int k = 0; k < v[i].kv.n; k++) {
				if (k)
					putc_(w, ';');
				put_csv_str(w, v[i].kv.v[k].key);
				putc_(w, '=');
				put_u64(w, v[i].kv.v[k].val);
			}
			break;
		case REC_RAW:
			putc_(w, '"');
			for (size_t k = 0; k < v[i].raw.len; k++) {
				if (v[i].raw.s[k] == '"')
					putc_(w, '"');
				putc_(w, v[i].raw.s[k]);
			}
			putc_(w, '"');
			break;
		}
	}
}

/* a row under the file's one header: the record's type, then its value in each
 * of the union's columns that it has, empty in the others */
static void write_csv(struct rec_writer *w, const struct rec_schema *s, const struct rec_value *v)
{
	int t = csv_type(w, s);
	const int16_t *map;

	if (t < 0)
		return;
	if (!w->csv->header_done)
		csv_header(w);
	map = w->csv->map[t];
	if (w->csv->typed)
		put_csv_str(w, s->type ? s->type : "");
	for (unsigned int c = 0; c < w->csv->ncols; c++) {
		if (c || w->csv->typed)
			putc_(w, ',');
		if (map[c] >= 0)
			csv_cell(w, &s->fields[map[c]], v, (unsigned int)map[c]);
	}
	putc_(w, '\n');
}

void rec_write_header(struct rec_writer *w, const struct rec_schema *s)
{
	w->rec_start = w->len;
	if (w->last == s)
		return;
	if (w->fmt == REC_CSV) {
		if (csv_type(w, s) >= 0 && !w->csv->header_done)
			csv_header(w);
	} else if (w->fmt == REC_TABLE)
		rec_table_header(w, s);
	else
		return;
	w->last = s;
	w->rec_start = w->len;
}

int rec_write(struct rec_writer *w, const struct rec_schema *s, const struct rec_value *v)
{
	w->rec_start = w->len;
	switch (w->fmt) {
	case REC_JSON: write_json(w, s, find_plan(w, s), v); break;
	case REC_CSV: write_csv(w, s, v); break;
	case REC_TABLE: rec_table_write(w, s, v); break;
	}
	w->last = s;
	w->rec_start = w->len; /* this record is complete */
	if (w->len > BUF_HIGH)
		drain(w);
	return w->failed ? -1 : 0;
}

static const char *const format_names[] = { "table", "csv", "json", NULL };

int rec_format_parse(const char *opt, const char *s, enum rec_format *out)
{
	for (int i = 0; format_names[i]; i++) {
		if (!strcmp(s, format_names[i])) {
			*out = (enum rec_format)i;
			return 0;
		}
	}
	elog("%s: '%s' is not one of table|csv|json", opt, s);
	return -1;
}

enum rec_format rec_format_default(FILE *out)
{
	return isatty(fileno(out)) ? REC_TABLE : REC_JSON;
}

const char *rec_format_name(enum rec_format fmt) { return format_names[fmt]; }

/* --- --help ---------------------------------------------------------------- */

#define HELP_WIDTH 79
#define HELP_INDENT 11

/* "  second   key, key, ...", wrapped under the first key */
void rec_help_keys(FILE *f, const struct rec_schema *s)
{
	int col = fprintf(f, "  %-*s", HELP_INDENT - 2, s->type);

	/* a type as long as the indent has its keys on the next line */
	if (strlen(s->type) >= HELP_INDENT - 2)
		col = fprintf(f, "\n%*s", HELP_INDENT, "") - 1;
	for (unsigned int i = 0; i < s->nfields; i++) {
		const char *name = s->fields[i].name;
		/* the name and the comma after it */
		int len = (int)strlen(name) + 1;

		if (i && col + 2 + len > HELP_WIDTH) {
			fputs(",\n", f);
			col = fprintf(f, "%*s", HELP_INDENT, "");
		} else if (i) {
			col += fprintf(f, ", ");
		}
		col += fprintf(f, "%s", name);
	}
	fputc('\n', f);
}
