// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace contract (lib/trace.h): every record type written through
 * bbrtrace's writer and read back through the reader that bbrpcap join and
 * bbrplot use gives back every field it carries, bit for bit. A field that
 * one side lacks, or reads into the wrong place, fails here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace.h"

/* a sample with a distinct value in every field a record carries */
static void fill_sample(struct bt_sample *s, uint64_t base)
{
	memset(s, 0, sizeof(*s));
	s->t_ns = base + 1;
	s->wall_ns = base + 2;
	s->cookie = base + 3;
	s->saddr[10] = s->saddr[11] = 0xff; /* ::ffff:10.0.0.1 */
	s->saddr[12] = 10;
	s->saddr[15] = 1;
	s->daddr[0] = 0xfd;                  /* fd00::2 */
	s->daddr[15] = 2;
	s->sport = 40001;
	s->dport = 1935;
	s->snd_una = 4000000001u;
	s->snd_nxt = 4000001449u;
	s->mss = 1448;
	s->cwnd = 17;
	s->pacing_rate_bps = 123456789;
	s->pacing_rate_valid = true;
	s->delivered = 3;
	s->interval_us = 41000;
	s->snd_interval_us = 12;
	s->rcv_interval_us = 41000;
	s->rtt_us = 140;
	s->losses = 2;
	s->acked_sacked = 5;
	s->prior_in_flight = 6;
	s->is_app_limited = true;
	s->is_retrans = true;
	s->is_ack_delayed = true;
	s->sample_bw_bps = 847609;
	s->sample_valid = true;
	s->bw_prev_bps = 6950000000;
	s->bw_bps = 280000;
	s->mode = 2;
	s->pacing_gain = 1.25;
	s->cwnd_gain = 2;
	s->min_rtt_us = 55;
	s->lt_use_bw = true;
	s->lt_bw_bps = 19200000;
}

/* writes with `write` into memory and parses the line back */
static char *write_line(int (*write)(struct rec_writer *, const void *), const void *rec,
			struct jl_obj *o)
{
	char *buf = NULL, err[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_JSON, f);

	assert_int_equal(write(w, rec), 0);
	assert_int_equal(rec_writer_free(w), 0);
	fclose(f);
	assert_int_equal(jl_parse(buf, o, err, sizeof(err)), 0);
	return buf;
}

static int write_sample(struct rec_writer *w, const void *s) { return bt_sample_write(w, s, 0); }
static int write_collapse(struct rec_writer *w, const void *c) { return bt_collapse_write(w, c, 0); }

static void test_sample_round_trip(void **state)
{
	struct bt_sample in, out;
	struct bt_fieldset fs;
	struct jl_obj o;
	char *buf;
	(void)state;

	fill_sample(&in, 1795989563000000000ULL);
	buf = write_line(write_sample, &in, &o);
	assert_string_equal(bt_record_type(&o), "sample");
	/* every field but the table-only time column, and nothing else */
	assert_int_equal(bt_sample_read(&o, &out, &fs), BT_SAMPLE_NFIELDS - 1);
	assert_int_equal(o.n, BT_SAMPLE_NFIELDS); /* with "type" */
	assert_false(bt_has(&fs, BT_S_TIME_S));
	assert_true(bt_has(&fs, BT_S_LT_BW_BPS));
	assert_memory_equal(&in, &out, sizeof(in));
	free(buf);
}

/* null where the kernel had no value comes back as "not valid" */
static void test_sample_nulls(void **state)
{
	struct bt_sample in, out;
	struct bt_fieldset fs;
	struct jl_obj o;
	char *buf;
	(void)state;

	fill_sample(&in, 7);
	in.pacing_rate_valid = false;
	in.pacing_rate_bps = 0;
	in.sample_valid = false;
	in.sample_bw_bps = 0;
	buf = write_line(write_sample, &in, &o);
	assert_int_equal(jl_get(&o, bt_sample_key(BT_S_PACING_RATE_BPS))->kind, JL_NULL);
	assert_int_equal(bt_sample_read(&o, &out, &fs), BT_SAMPLE_NFIELDS - 1);
	assert_memory_equal(&in, &out, sizeof(in));
	free(buf);
}

static void test_collapse_round_trip(void **state)
{
	struct bt_collapse in, out;
	struct bt_fieldset fs;
	struct jl_obj o;
	char *buf;
	(void)state;

	memset(&in, 0, sizeof(in));
	fill_sample(&in.ack, 1000);
	fill_sample(&in.culprit, 5000);
	/* what a collapse record carries of each: the ACK's flow and state,
	 * the culprit's time and rate sample, and the estimate as bw fields */
	memset(&in.culprit.wall_ns, 0, offsetof(struct bt_sample, delivered) -
					     offsetof(struct bt_sample, wall_ns));
	memset(&in.culprit.bw_prev_bps, 0, sizeof(in.culprit) - offsetof(struct bt_sample, bw_prev_bps));
	memset(&in.ack.delivered, 0, offsetof(struct bt_sample, bw_prev_bps) -
					 offsetof(struct bt_sample, delivered));
	in.bw_prev_bps = in.ack.bw_prev_bps = 6950000000;
	in.bw_bps = in.ack.bw_bps = 1737500000;
	in.drop_ratio = 0.75;
	in.cause = BT_CAUSE_RATE_DROP;
	in.reset_by_ack = true;
	snprintf(in.evidence, sizeof(in.evidence), "rcv_interval 41000 us \"quoted\"");
	buf = write_line(write_collapse, &in, &o);
	assert_string_equal(bt_record_type(&o), "collapse");
	assert_int_equal(bt_collapse_read(&o, &out, &fs), BT_COLLAPSE_NFIELDS - 1);
	assert_int_equal(o.n, BT_COLLAPSE_NFIELDS);
	assert_memory_equal(&in, &out, sizeof(in));
	free(buf);
}

/* each cause's name parses back; an unknown one does not */
static void test_causes(void **state)
{
	(void)state;
	for (int i = 0; i < BT_NCAUSES; i++) {
		assert_int_equal(bt_cause_parse(bt_cause_names[i]), i);
		assert_non_null(bt_cause_labels[i]);
	}
	assert_int_equal(bt_cause_parse("delayed-ack"), -1);
	assert_int_equal(bt_cause_parse(NULL), -1);
}

/* a reader gets nothing from a line of another type and marks nothing found */
static void test_missing_fields(void **state)
{
	char line[] = "{\"type\":\"sample\",\"t_ns\":5,\"snd_una\":\"x\"}", err[64];
	struct bt_sample s;
	struct bt_fieldset fs;
	struct jl_obj o;
	(void)state;

	assert_int_equal(jl_parse(line, &o, err, sizeof(err)), 0);
	assert_int_equal(bt_sample_read(&o, &s, &fs), 1);
	assert_true(bt_has(&fs, BT_S_T_NS));
	assert_false(bt_has(&fs, BT_S_SND_UNA));
	assert_int_equal(s.t_ns, 5);
	assert_int_equal(s.snd_una, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_round_trip),
		cmocka_unit_test(test_sample_nulls),
		cmocka_unit_test(test_collapse_round_trip),
		cmocka_unit_test(test_causes),
		cmocka_unit_test(test_missing_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
