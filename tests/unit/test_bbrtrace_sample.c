// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "bbrtrace/reorder.h"
#include "bbrtrace/sample.h"
#include "jsonl.h"

static void test_bw_units(void **state)
{
	(void)state;
	/* 1 packet per usec << 24 at mss 1448 is 1448 bytes/us = 11.584 Gbit/s */
	tk_assert_cmp(bt_bw_to_bps(1u << 24, 1448), ==, 11584000000ULL);
	tk_assert_cmp(bt_bw_to_bps(0, 1448), ==, 0);
	/* no overflow at the extremes of u32 bw and a 64 KB mss */
	tk_assert_cmp(bt_bw_to_bps(UINT32_MAX, 65535), ==, (uint64_t)(((unsigned __int128)UINT32_MAX * 65535 * 8000000) >> 24));
}

static void test_mode_names(void **state)
{
	(void)state;
	assert_string_equal(bt_mode_name(BT_PROBE_BW), "PROBE_BW");
	assert_string_equal(bt_mode_name(7), "UNKNOWN");
	assert_int_equal(bt_mode_parse("PROBE_RTT"), BT_PROBE_RTT);
	assert_int_equal(bt_mode_parse("probe_rtt"), -1);
}

static struct bt_event delayed_ack_event(void)
{
	struct bt_event e;

	memset(&e, 0, sizeof(e));
	e.t_ns = 5000000000ULL;
	memcpy(e.saddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\x00\x00\x01", 16);
	memcpy(e.daddr, "\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	e.sport = 40000;
	e.dport = 1935;
	e.mss = 1448;
	e.pacing_rate = ~0ULL;
	e.delivered = 3;
	e.snd_interval_us = 100;
	e.rcv_interval_us = 40000;
	e.interval_us = 40000;
	e.rtt_us = -1;
	e.is_ack_delayed = 1;
	e.mode = BT_PROBE_BW;
	e.pacing_gain = 320; /* 1.25 */
	e.cwnd_gain = 512;
	e.bw_prev = 1u << 24;
	e.bw = 1u << 20;
	return e;
}

static void test_decode_delayed_ack(void **state)
{
	struct bt_event e = delayed_ack_event();
	struct bt_sample s;
	(void)state;

	bt_sample_decode(&s, &e, 1000);
	tk_assert_cmp(s.wall_ns, ==, 5000001000ULL);
	assert_false(s.pacing_rate_valid);
	assert_true(s.sample_valid);
	/* 3 * 1448 * 8 bits in 40 ms = 868.8 kbit/s */
	tk_assert_cmp(s.sample_bw_bps, ==, 868800);
	tk_assert_cmp(s.bw_prev_bps, ==, 11584000000ULL);
	tk_assert_cmp(s.bw_bps, ==, 11584000000ULL / 16);
	tk_assert_cmp(s.pacing_gain, ==, 1.25);
	tk_assert_cmp(s.cwnd_gain, ==, 2.0);
	e.interval_us = -1;
	bt_sample_decode(&s, &e, 0);
	assert_false(s.sample_valid);
}

/* the JSON record round-trips through the project's reader, with null where
 * the kernel had no value */
static void test_json_record(void **state)
{
	struct bt_event e = delayed_ack_event();
	struct bt_sample s;
	char *buf = NULL, err[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rec_writer *w = rec_writer_new(REC_JSON, f);
	struct jl_obj o;
	uint64_t u;
	(void)state;

	bt_sample_decode(&s, &e, 0);
	bt_sample_write(w, &s, 0);
	rec_writer_free(w);
	fclose(f);
	assert_int_equal(jl_parse(buf, &o, err, sizeof(err)), 0);
	/* "type" and every field but the table's time column */
	assert_int_equal(o.n, BT_SAMPLE_NFIELDS);
	assert_string_equal(jl_str(&o, "type"), "sample");
	assert_string_equal(jl_str(&o, "saddr"), "10.0.0.1");
	assert_string_equal(jl_str(&o, "daddr"), "fd00::2");
	assert_string_equal(jl_str(&o, "mode"), "PROBE_BW");
	assert_int_equal(jl_get(&o, "pacing_rate_bps")->kind, JL_NULL);
	assert_true(jl_u64(&o, "rcv_interval_us", &u));
	tk_assert_cmp(u, ==, 40000);
	assert_true(jl_u64(&o, "sample_bw_bps", &u));
	tk_assert_cmp(u, ==, 868800);
	free(buf);
}

struct seen {
	uint64_t t[64];
	int n;
};

static int collect(void *ctx, const struct bt_event *e)
{
	struct seen *s = ctx;

	s->t[s->n++] = e->t_ns * 100 + e->sport; /* time, then arrival tag */
	return 0;
}

static void test_reorder(void **state)
{
	struct bt_reorder r = {};
	struct seen s = {};
	struct bt_event e;
	/* two CPUs' batches; CPU 1's arrives first; two events share t=30 */
	static const uint64_t times[] = { 20, 40, 30, 10, 30, 50 };
	(void)state;

	memset(&e, 0, sizeof(e));
	for (int i = 0; i < 6; i++) {
		e.t_ns = times[i];
		e.sport = (uint16_t)i;
		assert_int_equal(bt_reorder_push(&r, &e), 0);
	}
	assert_int_equal(bt_reorder_release(&r, 30, collect, &s), 2);
	assert_int_equal(s.n, 2);
	tk_assert_cmp(s.t[0], ==, 1003);
	tk_assert_cmp(s.t[1], ==, 2000);
	/* equal times leave in arrival order */
	assert_int_equal(bt_reorder_release(&r, 41, collect, &s), 3);
	tk_assert_cmp(s.t[2], ==, 3002);
	tk_assert_cmp(s.t[3], ==, 3004);
	tk_assert_cmp(s.t[4], ==, 4001);
	e.t_ns = 45;
	e.sport = 6;
	bt_reorder_push(&r, &e);
	assert_int_equal(bt_reorder_release(&r, UINT64_MAX, collect, &s), 2);
	tk_assert_cmp(s.t[5], ==, 4506);
	tk_assert_cmp(s.t[6], ==, 5005);
	assert_int_equal(bt_reorder_release(&r, UINT64_MAX, collect, &s), 0);
	bt_reorder_free(&r);
}

struct order_seen {
	uint64_t last_t, last_tag, n;
	bool ok;
};

/* events leave by time, equal times by arrival (the tag counts arrivals) */
static int check_order(void *ctx, const struct bt_event *e)
{
	struct order_seen *s = ctx;
	uint64_t tag = e->cookie;

	if (s->n && (e->t_ns < s->last_t || (e->t_ns == s->last_t && tag < s->last_tag)))
		s->ok = false;
	s->last_t = e->t_ns;
	s->last_tag = tag;
	s->n++;
	return 0;
}

/* many CPUs' batches, each in order, arriving interleaved, with releases
 * between them: every event leaves once, in order */
static void test_reorder_many_batches(void **state)
{
	struct bt_reorder r = {};
	struct order_seen s = { .ok = true };
	struct bt_event e;
	uint64_t x = 7, cpu_t[5] = { 0 }, pushed = 0, released = 0;
	(void)state;

	memset(&e, 0, sizeof(e));
	for (int round = 0; round < 400; round++) {
		int cpu = (int)((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 61) % 5;
		int len = 1 + (int)(x >> 40) % 40;

		for (int k = 0; k < len; k++) {
			cpu_t[cpu] += (x >> (k % 32)) % 3; /* steps of 0: equal times */
			e.t_ns = cpu_t[cpu];
			e.cookie = pushed++;
			assert_int_equal(bt_reorder_push(&r, &e), 0);
		}
		if (round % 7 == 6) {
			uint64_t lo = cpu_t[0];

			for (int c = 1; c < 5; c++)
				lo = cpu_t[c] < lo ? cpu_t[c] : lo;
			released += bt_reorder_release(&r, lo, check_order, &s);
		}
	}
	released += bt_reorder_release(&r, UINT64_MAX, check_order, &s);
	assert_true(s.ok);
	tk_assert_cmp(released, ==, pushed);
	tk_assert_cmp(s.n, ==, pushed);
	bt_reorder_free(&r);
}

#define AHEAD_EVENTS 200
#define AHEAD_STAGES BT_REORDER_STAGES

/* per event (its cookie): the stages hinted so far, and whether handed on */
struct ahead_seen {
	unsigned int stages[AHEAD_EVENTS];
	bool handed[AHEAD_EVENTS];
	bool ok;
};

static void on_ahead(void *ctx, const struct bt_event *const e[BT_REORDER_STAGES])
{
	struct ahead_seen *s = ctx;

	/* stages in order, each once, all before the event is handed on */
	for (unsigned int stage = 0; stage < AHEAD_STAGES; stage++) {
		if (!e[stage])
			continue;
		if (s->stages[e[stage]->cookie] != stage || s->handed[e[stage]->cookie])
			s->ok = false;
		s->stages[e[stage]->cookie] = stage + 1;
	}
}

static int on_handed(void *ctx, const struct bt_event *e)
{
	struct ahead_seen *s = ctx;

	s->handed[e->cookie] = true;
	return 0;
}

/* release runs the hints' stages for the events it hands on, in order and
 * before each is handed on; every event but the first few of a release
 * gets all of them, and an event that waits gets none */
static void test_reorder_ahead(void **state)
{
	static struct ahead_seen s = { .ok = true };
	struct bt_reorder r = {};
	struct bt_event e;
	(void)state;

	memset(&e, 0, sizeof(e));
	bt_reorder_set_ahead(&r, on_ahead, &s);
	for (uint64_t i = 0; i < AHEAD_EVENTS; i++) {
		/* two CPUs' batches of 10, interleaved in time */
		e.t_ns = 1000 + (i / 20) * 20 + (i % 10) * 2 + (i / 10) % 2;
		e.cookie = i;
		assert_int_equal(bt_reorder_push(&r, &e), 0);
	}
	tk_assert_cmp(bt_reorder_release(&r, 1100, on_handed, &s), ==, 100);
	for (uint64_t i = 0; i < AHEAD_EVENTS; i++)
		if (!s.handed[i])
			tk_assert_cmp(s.stages[i], ==, 0); /* waits: no hint yet */
	tk_assert_cmp(bt_reorder_release(&r, UINT64_MAX, on_handed, &s), ==, 100);
	assert_true(s.ok);
	size_t hinted = 0;

	for (uint64_t i = 0; i < AHEAD_EVENTS; i++) {
		assert_true(s.handed[i]);
		hinted += s.stages[i] == AHEAD_STAGES;
	}
	/* each release's first AHEAD_STAGES x BT_REORDER_AHEAD come too soon */
	tk_assert_cmp(hinted, >=, AHEAD_EVENTS - 2 * AHEAD_STAGES * BT_REORDER_AHEAD);
	bt_reorder_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_units),
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test(test_decode_delayed_ack),
		cmocka_unit_test(test_json_record),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_reorder_many_batches),
		cmocka_unit_test(test_reorder_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
