// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's records, from the one field list of lib/dwellrec.h: the buckets'
 * labels made from their edges before main, the states' names, and the writer
 * and reader that walk each record's fields by offset and the way it is kept.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "dwellrec.h"
#include "trace.h"

/* --- the buckets --------------------------------------------------------------------- */

const double ud_le_us[UD_NBUCKETS - 1] = {
	UD_LE0 / TK_NSEC_PER_USEC_F, UD_LE1 / TK_NSEC_PER_USEC_F,
	UD_LE2 / TK_NSEC_PER_USEC_F, UD_LE3 / TK_NSEC_PER_USEC_F,
	UD_LE4 / TK_NSEC_PER_USEC_F, UD_LE5 / TK_NSEC_PER_USEC_F,
	UD_LE6 / TK_NSEC_PER_USEC_F, UD_LE7 / TK_NSEC_PER_USEC_F,
};

/* the labels, and the table column's heading that runs them together
 * ("<=10us/50/100/500us/1ms/5/10/50ms/>50ms"), made from the edges before
 * main (name_buckets) */
#define UD_LABEL_LEN 24 /* "<=" or ">", %g (at most 13), the unit */
static char bucket_names[UD_NBUCKETS][UD_LABEL_LEN];
static char ud_buckets_head[UD_NBUCKETS * UD_LABEL_LEN];

const char *ud_bucket_name(unsigned int i)
{
	return i < UD_NBUCKETS ? bucket_names[i] : NULL;
}

/* an edge in the largest unit it is a whole number of: 10 us, 1 ms */
struct edge {
	double n;
	const char *unit;
};

static struct edge edge_of(unsigned int i)
{
	double us = ud_le_us[i];

	return us >= TK_USEC_PER_MSEC_F && fmod(us, TK_USEC_PER_MSEC_F) == 0
		       ? (struct edge){ us / TK_USEC_PER_MSEC_F, "ms" }
		       : (struct edge){ us, "us" };
}

/* the heading names a unit at the ends of each run of edges in that unit */
static bool unit_shown(unsigned int i)
{
	const char *unit = edge_of(i).unit;

	return i == 0 || i == UD_NBUCKETS - 2 || strcmp(unit, edge_of(i - 1).unit) ||
	       strcmp(unit, edge_of(i + 1).unit);
}

__attribute__((constructor)) static void name_buckets(void)
{
	const unsigned int last = UD_NBUCKETS - 1;
	struct edge e;
	size_t n = 0;

	for (unsigned int i = 0; i < last; i++) {
		e = edge_of(i);
		snprintf(bucket_names[i], UD_LABEL_LEN, "<=%g%s", e.n, e.unit);
		n += (size_t)snprintf(ud_buckets_head + n, sizeof(ud_buckets_head) - n, "%s%g%s",
				      i ? "/" : "<=", e.n, unit_shown(i) ? e.unit : "");
	}
	e = edge_of(last - 1);
	snprintf(bucket_names[last], UD_LABEL_LEN, ">%g%s", e.n, e.unit);
	snprintf(ud_buckets_head + n, sizeof(ud_buckets_head) - n, "/%s", bucket_names[last]);
}

/* --- the states ---------------------------------------------------------------------- */

#define UD_STATE_NAME(name, value) [UD_##name] = #name,
static const char *const state_names[UD_NSTATES] = { UD_STATES(UD_STATE_NAME, ) };

const char *ud_state_name(enum ud_state s)
{
	return (unsigned int)s < UD_NSTATES && state_names[s] ? state_names[s] : "?";
}

int ud_state_parse(const char *name)
{
	for (int i = 0; name && i < UD_NSTATES; i++)
		if (state_names[i] && !strcmp(name, state_names[i]))
			return i;
	return -1;
}

/* --- each record type's fields, once ----------------------------------------------------- */

/* where a field lives in its record's struct, and how it is kept */
struct ud_member {
	enum ud_keep kept;
	size_t off, size;
};

/* a record type: the writer's schema and where each field's value is */
struct ud_record {
	const struct rec_schema *schema;
	const struct ud_member *members;
};

/* the JSON type each way of keeping a field is written as */
#define UD_JSON_TYPE_TEXT REC_STR
#define UD_JSON_TYPE_TEXT_OR_NULL REC_STR
#define UD_JSON_TYPE_UINT REC_U64
#define UD_JSON_TYPE_UINT_OR_NULL REC_U64
#define UD_JSON_TYPE_REAL REC_F64
#define UD_JSON_TYPE_REAL_OR_NULL REC_F64
#define UD_JSON_TYPE_BUCKETS REC_U64_LIST
#define UD_JSON_TYPE_DROPS REC_KV
#define UD_JSON_TYPE_STATE REC_STR

#define UD_SCHEMA_ENTRY(name, type, kept, dec, col) { #name, UD_JSON_TYPE_##kept, dec, col },
#define UD_MEMBER_OF(T, name, kept) { UD_KEEP_##kept, offsetof(T, name), sizeof(((T *)0)->name) },
#define UD_IV_MEMBER(name, type, kept, dec, col) UD_MEMBER_OF(struct ud_interval_rec, name, kept)
#define UD_SK_MEMBER(name, type, kept, dec, col) UD_MEMBER_OF(struct ud_socket_rec, name, kept)
#define UD_BP_MEMBER(name, type, kept, dec, col) UD_MEMBER_OF(struct ud_bpf_rec, name, kept)

static const struct rec_field interval_fields[] = { UD_INTERVAL_FIELDS(UD_SCHEMA_ENTRY) };
static const struct rec_field socket_fields[] = { UD_SOCKET_FIELDS(UD_SCHEMA_ENTRY) };
static const struct rec_field bpf_fields[] = { UD_BPF_FIELDS(UD_SCHEMA_ENTRY) };
static const struct ud_member interval_members[] = { UD_INTERVAL_FIELDS(UD_IV_MEMBER) };
static const struct ud_member socket_members[] = { UD_SOCKET_FIELDS(UD_SK_MEMBER) };
static const struct ud_member bpf_members[] = { UD_BPF_FIELDS(UD_BP_MEMBER) };

_Static_assert(ARRAY_SIZE(interval_fields) == UD_INTERVAL_NFIELDS, "one entry per interval field");
_Static_assert(ARRAY_SIZE(socket_fields) == UD_SOCKET_NFIELDS, "one entry per socket field");
_Static_assert(ARRAY_SIZE(bpf_fields) == UD_BPF_NFIELDS, "one entry per bpf_prog field");
/* the fields a record type may have: struct ud_fieldset's bits */
#define UD_MAX_FIELDS 32
_Static_assert(UD_SOCKET_NFIELDS <= UD_MAX_FIELDS && UD_INTERVAL_NFIELDS <= UD_MAX_FIELDS &&
		       UD_BPF_NFIELDS <= UD_MAX_FIELDS && sizeof(struct ud_fieldset) * 8 == UD_MAX_FIELDS,
	       "struct ud_fieldset holds a bit per field");

const struct rec_schema ud_interval_schema = { "interval", interval_fields, UD_INTERVAL_NFIELDS };
const struct rec_schema ud_socket_schema = { "socket", socket_fields, UD_SOCKET_NFIELDS };
const struct rec_schema ud_bpf_schema = { "bpf_prog", bpf_fields, UD_BPF_NFIELDS };

static const struct ud_record interval_record = { &ud_interval_schema, interval_members };
static const struct ud_record socket_record = { &ud_socket_schema, socket_members };
static const struct ud_record bpf_record = { &ud_bpf_schema, bpf_members };

/* --- the writer ---------------------------------------------------------------------- */

static uint64_t uint_at(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

/* a field's value as written; kv: room for a DROPS field's pairs */
static struct rec_value value_of(const struct ud_member *m, const char *p, struct rec_kv *kv)
{
	const struct ud_drops *d = (const struct ud_drops *)p;
	double x = m->kept == UD_KEEP_REAL || m->kept == UD_KEEP_REAL_OR_NULL ? *(const double *)p : 0;

	switch (m->kept) {
	case UD_KEEP_TEXT: return rv_str(p);
	case UD_KEEP_TEXT_OR_NULL: return *p ? rv_str(p) : rv_null();
	case UD_KEEP_UINT: return rv_u64(uint_at(p, m->size));
	case UD_KEEP_UINT_OR_NULL: return uint_at(p, m->size) ? rv_u64(uint_at(p, m->size)) : rv_null();
	case UD_KEEP_REAL: return rv_f64(x);
	case UD_KEEP_REAL_OR_NULL: return isnan(x) ? rv_null() : rv_f64(x);
	case UD_KEEP_BUCKETS: return rv_list((const uint64_t *)p, UD_NBUCKETS);
	case UD_KEEP_DROPS:
		for (unsigned int i = 0; i < d->n && i < UD_MAX_REASONS; i++)
			kv[i] = (struct rec_kv){ d->v[i].reason, d->v[i].count };
		return rv_kv(kv, d->n < UD_MAX_REASONS ? d->n : UD_MAX_REASONS);
	case UD_KEEP_STATE: return rv_str(ud_state_name(*(const enum ud_state *)p));
	}
	return rv_null();
}

static int write_record(struct rec_writer *w, const struct ud_record *t, const void *rec)
{
	struct rec_value v[UD_MAX_FIELDS];
	struct rec_kv kv[UD_MAX_REASONS];

	for (unsigned int i = 0; i < t->schema->nfields; i++)
		v[i] = value_of(&t->members[i], (const char *)rec + t->members[i].off, kv);
	return rec_write(w, t->schema, v);
}

int ud_interval_write(struct rec_writer *w, const struct ud_interval_rec *r)
{
	return write_record(w, &interval_record, r);
}

int ud_socket_write(struct rec_writer *w, const struct ud_socket_rec *r)
{
	return write_record(w, &socket_record, r);
}

int ud_bpf_write(struct rec_writer *w, const struct ud_bpf_rec *r)
{
	return write_record(w, &bpf_record, r);
}

/* --- the reader ---------------------------------------------------------------------- */

static bool is_null(const struct jl_field *f)
{
	return f && f->kind == JL_NULL;
}

static bool read_text(const struct jl_field *f, char *out, size_t size)
{
	const char *s = jl_field_str(f);

	if (!s || f->len >= size)
		return false;
	memcpy(out, s, f->len + 1);
	return true;
}

static bool read_uint(const struct jl_field *f, void *out, size_t size)
{
	uint64_t u;

	if (!jl_field_u64(f, &u) || (size < sizeof(u) && u >> (size * 8)))
		return false;
	switch (size) {
	case 1: *(uint8_t *)out = (uint8_t)u; break;
	case 2: *(uint16_t *)out = (uint16_t)u; break;
	case 4: *(uint32_t *)out = (uint32_t)u; break;
	default: *(uint64_t *)out = u; break;
	}
	return true;
}

/* a nested value's text, NUL-terminated in buf; false when it is not one or too long */
static bool raw_copy(const struct jl_field *f, char open, char *buf, size_t len)
{
	if (!f || f->kind != JL_RAW || f->str[0] != open || f->len >= len)
		return false;
	memcpy(buf, f->str, f->len);
	buf[f->len] = '\0';
	return true;
}

/* "[n,n,...]": exactly UD_NBUCKETS unsigned integers */
static bool read_buckets(const struct jl_field *f, uint64_t *out)
{
	char buf[UD_NBUCKETS * 24 + 16], *p = buf + 1;

	if (!raw_copy(f, '[', buf, sizeof(buf)))
		return false;
	for (unsigned int k = 0; k < UD_NBUCKETS; k++) {
		char *end;

		p += strspn(p, " \t");
		if (*p < '0' || *p > '9')
			return false;
		errno = 0;
		out[k] = strtoull(p, &end, 10);
		p = end + strspn(end, " \t");
		if (errno || *p++ != (k + 1 < UD_NBUCKETS ? ',' : ']'))
			return false;
	}
	return *p == '\0';
}

/* {"REASON":n,...}: a flat object, read with the line's own parser */
static bool read_drops(const struct jl_field *f, struct ud_drops *out)
{
	char buf[UD_MAX_REASONS * (UD_TEXT_LEN + 24) + 16], err[64];
	struct jl_obj o;

	if (!raw_copy(f, '{', buf, sizeof(buf)) || jl_parse(buf, &o, err, sizeof(err)) ||
	    o.n > UD_MAX_REASONS)
		return false;
	for (unsigned int i = 0; i < o.n; i++) {
		struct jl_field key = { .kind = JL_STR, .str = o.f[i].key, .len = strlen(o.f[i].key) };

		if (!read_text(&key, out->v[i].reason, sizeof(out->v[i].reason)) ||
		    !jl_field_u64(&o.f[i], &out->v[i].count))
			return false;
	}
	out->n = o.n;
	return true;
}

static bool read_state(const struct jl_field *f, enum ud_state *out)
{
	int s = ud_state_parse(jl_field_str(f));

	if (s < 0)
		return false;
	*out = (enum ud_state)s;
	return true;
}

/* field f of the line into its member at p; true when the line held it */
static bool read_field(const struct jl_field *f, const struct ud_member *m, char *p)
{
	switch (m->kept) {
	case UD_KEEP_TEXT: return read_text(f, p, m->size);
	case UD_KEEP_TEXT_OR_NULL: return is_null(f) || read_text(f, p, m->size);
	case UD_KEEP_UINT: return read_uint(f, p, m->size);
	case UD_KEEP_UINT_OR_NULL: return is_null(f) || read_uint(f, p, m->size);
	case UD_KEEP_REAL: return jl_field_num(f, (double *)p);
	case UD_KEEP_REAL_OR_NULL:
		if (is_null(f))
			*(double *)p = NAN;
		return is_null(f) || jl_field_num(f, (double *)p);
	case UD_KEEP_BUCKETS: return read_buckets(f, (uint64_t *)p);
	case UD_KEEP_DROPS: return read_drops(f, (struct ud_drops *)p);
	case UD_KEEP_STATE: return read_state(f, (enum ud_state *)p);
	}
	return false;
}

bool ud_record_is(const struct jl_obj *o, const struct rec_schema *s)
{
	const char *type = bt_record_type(o); /* the key lib/record.c writes first */

	return type && s->type && !strcmp(type, s->type);
}

static unsigned int read_record(const struct jl_obj *o, const struct ud_record *t, void *rec, size_t size,
				struct ud_fieldset *fs)
{
	unsigned int found = 0;

	memset(rec, 0, size);
	fs->bits = 0;
	for (unsigned int i = 0; i < t->schema->nfields; i++) {
		const struct ud_member *m = &t->members[i];
		/* a writer puts field i at position i + 1, after "type" */
		const struct jl_field *f = jl_get_at(o, t->schema->fields[i].name, i + 1);
		char *p = (char *)rec + m->off;

		if (read_field(f, m, p)) {
			fs->bits |= 1u << i;
			found++;
		} else {
			memset(p, 0, m->size); /* nothing half read */
		}
	}
	return found;
}

unsigned int ud_interval_read(const struct jl_obj *o, struct ud_interval_rec *r, struct ud_fieldset *fs)
{
	return read_record(o, &interval_record, r, sizeof(*r), fs);
}

unsigned int ud_socket_read(const struct jl_obj *o, struct ud_socket_rec *r, struct ud_fieldset *fs)
{
	return read_record(o, &socket_record, r, sizeof(*r), fs);
}

unsigned int ud_bpf_read(const struct jl_obj *o, struct ud_bpf_rec *r, struct ud_fieldset *fs)
{
	return read_record(o, &bpf_record, r, sizeof(*r), fs);
}
