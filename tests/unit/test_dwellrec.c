// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's records (lib/dwellrec.h): every record type written through
 * udpdwell's writer and read back through the reader bbrplot uses gives back
 * every field, bit for bit; a record that left a field at its zero fails
 * here, so a new field must be given a value; and udpdwell's real output
 * (the fixture bbrplot's tests draw) reads and writes back byte for byte,
 * so a key renamed, moved, added or written with other decimals fails too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "dwellrec.h"

#define FIXTURE "tests/fixtures/plots/dwell.jsonl"

/* --- each record type, as the test drives it ---------------------------------------- */

static int put_interval(struct rec_writer *w, const void *r) { return ud_interval_write(w, r); }
static int put_socket(struct rec_writer *w, const void *r) { return ud_socket_write(w, r); }
static int put_bpf(struct rec_writer *w, const void *r) { return ud_bpf_write(w, r); }
static unsigned int get_interval(const struct jl_obj *o, void *r, struct ud_fieldset *fs)
{
	return ud_interval_read(o, r, fs);
}
static unsigned int get_socket(const struct jl_obj *o, void *r, struct ud_fieldset *fs)
{
	return ud_socket_read(o, r, fs);
}
static unsigned int get_bpf(const struct jl_obj *o, void *r, struct ud_fieldset *fs)
{
	return ud_bpf_read(o, r, fs);
}

static const struct kind {
	const struct rec_schema *schema;
	int (*put)(struct rec_writer *, const void *);
	unsigned int (*get)(const struct jl_obj *, void *, struct ud_fieldset *);
	size_t size;
} kinds[] = {
	{ &ud_interval_schema, put_interval, get_interval, sizeof(struct ud_interval_rec) },
	{ &ud_socket_schema, put_socket, get_socket, sizeof(struct ud_socket_rec) },
	{ &ud_bpf_schema, put_bpf, get_bpf, sizeof(struct ud_bpf_rec) },
};
enum { INTERVAL, SOCKET, BPF };

/* the record as one JSON line, in a string to free */
static char *to_json(const struct kind *k, const void *rec)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	struct rec_writer *w = rec_writer_new(REC_JSON, mem);
	int rc = k->put(w, rec);

	rc |= rec_writer_free(w);
	assert_int_equal(rc | fclose(mem), 0);
	return text;
}

static const struct kind *kind_of(const struct jl_obj *o)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (ud_record_is(o, kinds[i].schema))
			return &kinds[i];
	return NULL;
}

/* a field left at its zero ("", 0, null, [0,...], {}) was not filled in */
static void assert_all_given(const struct jl_obj *o)
{
	for (unsigned int i = 1; i < o->n; i++) {
		const struct jl_field *f = &o->f[i];

		if (f->kind == JL_NULL || (f->kind == JL_NUM && f->num == 0) || (f->kind == JL_STR && !f->len) ||
		    (f->kind == JL_RAW && !strpbrk(f->str, "123456789")))
			fail_msg("field \"%s\" is left at its zero: give it a value in this test", f->key);
	}
}

/*
 * rec through the writer and back through the reader: the line has "type"
 * and every field of its kind, all of them read, into the same bytes.
 * given: every field must hold more than its zero.
 */
static void round_trip(const struct kind *k, const void *rec, bool given)
{
	char *line = to_json(k, rec), err[64];
	void *back = malloc(k->size);
	struct ud_fieldset fs;
	struct jl_obj o;

	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), 0);
	assert_ptr_equal(kind_of(&o), k);
	assert_int_equal(o.n, k->schema->nfields + 1);
	if (given)
		assert_all_given(&o);
	assert_int_equal(k->get(&o, back, &fs), k->schema->nfields);
	assert_int_equal(fs.bits, (1ULL << k->schema->nfields) - 1);
	assert_memory_equal(back, rec, k->size);
	free(back);
	free(line);
}

/* --- records with every field given ---------------------------------------------- */

static void test_interval(void **state)
{
	struct ud_interval_rec r = { .interval_s = 4.001, .sockets = 2, .tracked = 3, .packets = 10584,
				     .unmatched = 5, .resync_added = 6, .resync_dropped = 7 };
	(void)state;

	r.ring_full = 8;
	r.evicted = 1ULL << 63;
	r.unattributed = 9;
	strcpy(r.time, "2026-11-29T22:47:34.127Z");
	strcpy(r.backend, "tracepoint");
	round_trip(&kinds[INTERVAL], &r, true);
}

/* a socket with the widest values its members hold, and every drop reason it
 * carries (static: its padding is zero, as the reader leaves it) */
static void full_socket(struct ud_socket_rec *r)
{
	static const struct ud_socket_rec widest = {
		.port = 65535, .addr = "fd00::2", .pid = 4000000000u, .comm = "sfu \"echo\"\\", .packets = 5286,
		.avg_us = 18193.5, .p50_us = 21504.2, .p99_us = 49094.8, .max_us = 123456789.1,
		.queue_len = UINT32_MAX, .state = UD_WARN,
	};

	memcpy(r, &widest, sizeof(*r));
	for (unsigned int k = 0; k < UD_NBUCKETS; k++)
		r->buckets[k] = 1000000000000ULL * k + k + 1;
	for (r->drops.n = 0; r->drops.n < UD_MAX_REASONS; r->drops.n++) {
		struct ud_drop *d = &r->drops.v[r->drops.n];

		snprintf(d->reason, sizeof(d->reason), "REASON_%u", 4000000000u + r->drops.n);
		d->count = r->drops.n * 1000ULL + 1;
	}
}

static void test_socket(void **state)
{
	struct ud_socket_rec r;
	(void)state;

	full_socket(&r);
	round_trip(&kinds[SOCKET], &r, true);
	for (int s = 0; s < UD_NSTATES; s++) {
		r.state = (enum ud_state)s;
		round_trip(&kinds[SOCKET], &r, true);
	}
}

/* what udpdwell does not know is written null, and comes back as unknown */
static void test_socket_unknowns(void **state)
{
	static const enum ud_socket_field nulls[] = { UD_SK_pid, UD_SK_comm, UD_SK_avg_us, UD_SK_p50_us,
						      UD_SK_p99_us, UD_SK_max_us };
	struct ud_socket_rec r;
	char *line, err[64];
	struct jl_obj o;
	(void)state;

	full_socket(&r);
	r.pid = 0;
	memset(r.comm, 0, sizeof(r.comm));
	r.avg_us = r.p50_us = r.p99_us = r.max_us = NAN;
	memset(&r.drops, 0, sizeof(r.drops));
	round_trip(&kinds[SOCKET], &r, false);
	line = to_json(&kinds[SOCKET], &r);
	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		assert_int_equal(jl_get(&o, ud_socket_schema.fields[nulls[i]].name)->kind, JL_NULL);
	free(line);
}

static void test_bpf(void **state)
{
	struct ud_bpf_rec r = { .prog = "ud_tp_data_ready", .run_cnt = 3, .run_time_ns = 1000, .ns_per_run = 333.3 };
	(void)state;

	round_trip(&kinds[BPF], &r, true);
	r.run_cnt = 0;
	r.ns_per_run = NAN;
	round_trip(&kinds[BPF], &r, false);
}

/* --- udpdwell's real output ------------------------------------------------------- */

/* each line read and written back is the line */
static void test_fixture_byte_for_byte(void **state)
{
	FILE *f = fopen(FIXTURE, "r");
	char *line = NULL, *copy, err[64];
	size_t cap = 0;
	int n[3] = { 0 };
	(void)state;

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		union {
			struct ud_interval_rec interval;
			struct ud_socket_rec socket;
			struct ud_bpf_rec bpf;
		} rec;
		const struct kind *k;
		char *again;
		struct ud_fieldset fs;
		struct jl_obj o;

		copy = strdup(line);
		assert_int_equal(jl_parse(copy, &o, err, sizeof(err)), 0);
		k = kind_of(&o);
		assert_non_null(k);
		assert_int_equal(k->get(&o, &rec, &fs), k->schema->nfields);
		again = to_json(k, &rec);
		assert_string_equal(again, line);
		n[k - kinds]++;
		free(again);
		free(copy);
	}
	free(line);
	fclose(f);
	tk_assert_cmp(n[INTERVAL], >=, 1);
	tk_assert_cmp(n[SOCKET], >=, 2);
}

/* --- the buckets and the states ------------------------------------------------------ */

/* the labels and the table's heading come from the contract's edges */
static void test_bucket_names(void **state)
{
	static const char *const want[] = { "<=10us", "<=50us", "<=100us", "<=500us", "<=1ms",
					    "<=5ms",  "<=10ms", "<=50ms",  ">50ms" };
	(void)state;

	assert_int_equal(UD_NBUCKETS, sizeof(want) / sizeof(want[0]));
	for (unsigned int i = 0; i < UD_NBUCKETS; i++)
		assert_string_equal(ud_bucket_name(i), want[i]);
	assert_null(ud_bucket_name(UD_NBUCKETS));
	assert_string_equal(ud_socket_schema.fields[UD_SK_buckets].head, "<=10us/50/100/500us/1ms/5/10/50ms/>50ms");
	tk_assert_cmp(ud_le_us[0], ==, 10);
	tk_assert_cmp(ud_le_us[UD_NBUCKETS - 2], ==, 50000);
}

static void test_states(void **state)
{
	(void)state;

	for (int s = 0; s < UD_NSTATES; s++)
		assert_int_equal(ud_state_parse(ud_state_name((enum ud_state)s)), s);
	tk_assert_cmp(UD_OK, <, UD_WARN);
	tk_assert_cmp(UD_WARN, <, UD_ALERT);
	assert_string_equal(ud_state_name(UD_ALERT), "ALERT");
	assert_string_equal(ud_state_name((enum ud_state)UD_NSTATES), "?");
	assert_int_equal(ud_state_parse("alert"), -1);
	assert_int_equal(ud_state_parse(NULL), -1);
	assert_string_equal(UD_STATE_LEGEND, "0 OK, 1 WARN, 2 ALERT");
}

/* --- what a reader refuses ------------------------------------------------------------ */

/* a socket line read; the number of fields found, fs their bits */
static unsigned int read_socket_line(const char *line, struct ud_socket_rec *r, struct ud_fieldset *fs)
{
	char *copy = strdup(line), err[64];
	struct jl_obj o;
	unsigned int found;

	assert_int_equal(jl_parse(copy, &o, err, sizeof(err)), 0);
	found = ud_socket_read(&o, r, fs);
	free(copy); /* r holds copies */
	return found;
}

/* the socket line's field is not read: its bit is clear and the record all zero */
static void assert_not_read(const char *line, enum ud_socket_field field)
{
	static const struct ud_socket_rec zero;
	struct ud_socket_rec r;
	struct ud_fieldset fs;

	read_socket_line(line, &r, &fs);
	if (ud_has(&fs, field))
		fail_msg("read from %s", line);
	assert_memory_equal(&r, &zero, sizeof(r));
}

static void test_bad_fields(void **state)
{
	(void)state;

	assert_not_read("{\"type\":\"socket\",\"buckets\":[1,2,3,4,5,6,7,8]}", UD_SK_buckets);
	assert_not_read("{\"type\":\"socket\",\"buckets\":[1,2,3,4,5,6,7,8,9,10]}", UD_SK_buckets);
	assert_not_read("{\"type\":\"socket\",\"buckets\":[1,2,3,4,5,6,7,8,-9]}", UD_SK_buckets);
	assert_not_read("{\"type\":\"socket\",\"buckets\":[1,2,3,4,5,6,7,8,9.5]}", UD_SK_buckets);
	assert_not_read("{\"type\":\"socket\",\"buckets\":\"none\"}", UD_SK_buckets);
	assert_not_read("{\"type\":\"socket\",\"port\":65536}", UD_SK_port);
	assert_not_read("{\"type\":\"socket\",\"port\":-1}", UD_SK_port);
	assert_not_read("{\"type\":\"socket\",\"state\":\"BAD\"}", UD_SK_state);
	assert_not_read("{\"type\":\"socket\",\"drops\":{\"A\":1,\"B\":\"x\"}}", UD_SK_drops);
	assert_not_read("{\"type\":\"socket\",\"drops\":[1]}", UD_SK_drops);
	assert_not_read("{\"type\":\"socket\",\"addr\":null}", UD_SK_addr);
	assert_not_read("{\"type\":\"socket\",\"addr\":\"0123456789012345678901234567890123456789012345678901234567890123\"}",
			UD_SK_addr);
}

/* spaces as other writers put them are fine */
static void test_spaces(void **state)
{
	struct ud_socket_rec r;
	struct ud_fieldset fs;
	(void)state;

	assert_int_equal(read_socket_line("{\"type\":\"socket\",\"buckets\":[ 1, 2 ,3,4,5,6,7,8,9 ],"
					  "\"drops\":{ \"A\" : 2 }}", &r, &fs), 2);
	assert_true(ud_has(&fs, UD_SK_buckets) && ud_has(&fs, UD_SK_drops));
	assert_int_equal(r.buckets[8], 9);
	assert_int_equal(r.drops.n, 1);
	assert_string_equal(r.drops.v[0].reason, "A");
	assert_int_equal(r.drops.v[0].count, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_socket_unknowns),
		cmocka_unit_test(test_bpf),
		cmocka_unit_test(test_fixture_byte_for_byte),
		cmocka_unit_test(test_bucket_names),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_spaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
