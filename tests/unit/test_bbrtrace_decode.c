// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's user-space path (reorder -> decode -> writer) writes the same
 * bytes as the build that made the fixtures (tests/fixtures/bbrtrace/README):
 * a fixed batch of events with values at the edges of every field (IPv4 and
 * IPv6 addresses, unset pacing rates, negative and invalid samples, unknown
 * modes, the largest integers, gains that round), with collapse records
 * among them, in JSON, CSV and table. A writer made faster must not change
 * a byte.
 *
 * TK_FIXTURE_WRITE=1 writes the fixtures instead of comparing (only to make
 * them with the reference build).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bbrtrace/reorder.h"
#include "bbrtrace/sample.h"

#define NEVENTS 96             /* the batch: 6 per-CPU batches of 16 */
#define BATCH 16               /* events per CPU batch, as the kernel side hands them over */
#define MONO_TO_WALL_NS 1795989563000000000LL
#define T0_NS 1129000000000ULL /* the trace's start, for the table's time column */
#define FIXTURES "tests/fixtures/bbrtrace/decode-batch."

/* a fixed pseudo-random sequence (xorshift64*), the same on every machine */
static uint64_t next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

/* one of a few addresses: IPv4-mapped short and long, IPv6 with and without
 * zero runs */
static void pick_addr(uint8_t a[16], uint64_t r)
{
	static const uint8_t addrs[][16] = {
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 201, 0, 1 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 255, 255, 255, 255 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0 },
		{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 },
		{ 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11, 0x22, 0x33, 0x44 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
	};

	memcpy(a, addrs[r % (sizeof(addrs) / sizeof(addrs[0]))], 16);
}

/* a value that is often at an edge of its range */
static uint64_t edgy(uint64_t *x, uint64_t max)
{
	uint64_t r = next(x);

	switch (r % 8) {
	case 0: return 0;
	case 1: return max;
	case 2: return r % 10;
	default: return (r >> 8) % (max ? max : 1) + (max == UINT64_MAX ? r >> 60 : 0);
	}
}

static void fill_rate(struct bt_event *e, uint64_t *x)
{
	static const uint64_t rates[] = { ~0ULL, 0xffffffffULL, 0, 503971875ULL };

	e->pacing_rate = next(x) % 3 ? rates[next(x) % 4] : edgy(x, UINT64_MAX / 8);
	e->interval_us = (int64_t)edgy(x, 2000000) - (next(x) % 5 == 0 ? 1000 : 0);
	e->rtt_us = next(x) % 4 ? (int64_t)edgy(x, 5000000) : -1;
	e->delivered = (int32_t)edgy(x, INT32_MAX) * (next(x) % 6 ? 1 : -1);
	e->snd_interval_us = (uint32_t)edgy(x, UINT32_MAX);
	e->rcv_interval_us = (uint32_t)edgy(x, UINT32_MAX);
	e->losses = (int32_t)edgy(x, 1000) - (int32_t)(next(x) % 3);
	e->acked_sacked = (uint32_t)edgy(x, UINT32_MAX);
	e->prior_in_flight = (uint32_t)edgy(x, 100000);
	e->is_app_limited = next(x) & 1;
	e->is_retrans = next(x) % 5 == 0;
	e->is_ack_delayed = next(x) % 3 == 0;
}

static void fill_bbr(struct bt_event *e, uint64_t *x)
{
	static const uint16_t gains[] = { 256, 320, 192, 739, 512, 1, 65535, 128 };

	e->mode = (uint8_t)(next(x) % 6); /* 5: not a mode, "UNKNOWN" */
	e->lt_use_bw = next(x) % 7 == 0;
	e->pacing_gain = next(x) % 2 ? gains[next(x) % 8] : (uint16_t)next(x);
	e->cwnd_gain = next(x) % 2 ? gains[next(x) % 8] : (uint16_t)next(x);
	e->fin_acked = next(x) % 50 == 0;
	e->bw_prev = (uint32_t)edgy(x, UINT32_MAX);
	e->bw = (uint32_t)edgy(x, UINT32_MAX);
	e->lt_bw = (uint32_t)edgy(x, UINT32_MAX);
	e->min_rtt_us = (uint32_t)edgy(x, UINT32_MAX);
}

/* event i of the batch; CPU batches overlap in time, and some events share
 * a time stamp */
static void fill_event(struct bt_event *e, int i, uint64_t *x)
{
	int cpu = (i / BATCH) % 3;

	memset(e, 0, sizeof(*e));
	e->t_ns = T0_NS + (uint64_t)(i / (3 * BATCH)) * 100000 + (uint64_t)(i % BATCH) * 997 +
		  (uint64_t)cpu * 331 - (i == 5 ? T0_NS / 2 : 0);
	if (i % 17 == 3)
		e->t_ns -= 331; /* the same time as another CPU's event */
	e->cookie = edgy(x, UINT64_MAX);
	pick_addr(e->saddr, next(x));
	pick_addr(e->daddr, next(x));
	e->sport = (uint16_t)edgy(x, 65535);
	e->dport = (uint16_t)edgy(x, 65535);
	e->netns = (uint32_t)next(x);
	e->snd_una = (uint32_t)edgy(x, UINT32_MAX);
	e->snd_nxt = (uint32_t)edgy(x, UINT32_MAX);
	e->mss = (uint32_t)(next(x) % 4 ? 1448 : edgy(x, 65535));
	e->cwnd = (uint32_t)edgy(x, UINT32_MAX);
	fill_rate(e, x);
	fill_bbr(e, x);
	/* the sender's queue (added after the fixtures' first version: drawn
	 * from i, not x, so every earlier field keeps its value) */
	e->write_seq = e->snd_nxt + (uint32_t)(i % 5 == 0 ? 0 : i * 7919u);
	e->snd_wnd = i % 7 == 0 ? UINT32_MAX : (uint32_t)i * 104729u;
	e->nonagle = (uint8_t)(i % 8);
}

/* a collapse record from two samples, with the writer's hard cases in its
 * floats and its evidence */
static void fill_collapse(struct bt_collapse *c, const struct bt_sample *ack, const struct bt_sample *culprit,
			  uint64_t *x)
{
	static const double ratios[] = { 0.5, 0.99995, 0.12345, 1.0 / 3, -0.0, 0.00005, 1e300, NAN, -INFINITY };
	static const char *const evidence[] = { "plain words", "a \"quoted\" word, a comma", "a\nnew line\tand tab",
						"\x01 control", "" };

	memset(c, 0, sizeof(*c));
	c->ack = *ack;
	c->culprit = *culprit;
	c->bw_prev_bps = ack->bw_prev_bps;
	c->bw_bps = next(x) % 2 ? ack->bw_bps : ack->lt_bw_bps;
	c->drop_ratio = ratios[next(x) % 9];
	c->cause = (enum bt_cause)(next(x) % BT_NCAUSES);
	c->impact = (enum bt_impact)(next(x) % BT_NIMPACTS);
	c->demand_bps = edgy(x, UINT64_MAX);
	/* from the demand, drawing nothing: the fields after it keep the values they had */
	c->need_bps = c->demand_bps - c->demand_bps / 5;
	c->headroom = ratios[next(x) % 9] * 7;
	c->reset_by_ack = next(x) & 1;
	snprintf(c->evidence, sizeof(c->evidence), "%s", evidence[next(x) % 5]);
}

struct out {
	struct rec_writer *w;
	struct bt_sample prev;
	uint64_t x;
	int n;
};

/* what bbrtrace's on_event does, with a collapse after every 7th sample */
static int on_event(void *ctx, const struct bt_event *e)
{
	struct out *o = ctx;
	struct bt_sample s;

	bt_sample_decode(&s, e, MONO_TO_WALL_NS - (o->n % 11 == 0 ? 2 * MONO_TO_WALL_NS : 0));
	assert_int_equal(bt_sample_write(o->w, &s, T0_NS), 0);
	if (++o->n % 7 == 0) {
		struct bt_collapse c;

		fill_collapse(&c, &s, &o->prev, &o->x);
		assert_int_equal(bt_collapse_write(o->w, &c, T0_NS), 0);
	}
	o->prev = s;
	return 0;
}

/* the batch through reorder, decode and the writer of fmt, into memory */
static char *decode_batch(enum rec_format fmt, size_t *len)
{
	static struct bt_event ev[NEVENTS];
	struct bt_reorder ro = {};
	struct out o = { .x = 0x9e3779b97f4a7c15ULL };
	uint64_t x = 42;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	o.w = rec_writer_new(fmt, f);
	rec_writer_declare(o.w, &bt_sample_schema);
	rec_writer_declare(o.w, &bt_collapse_schema);
	for (int i = 0; i < NEVENTS; i++)
		fill_event(&ev[i], i, &x);
	/* each round, the CPUs' batches arrive newest CPU first */
	for (int round = 0; round < NEVENTS / (3 * BATCH); round++) {
		for (int cpu = 2; cpu >= 0; cpu--)
			for (int k = 0; k < BATCH; k++)
				assert_int_equal(bt_reorder_push(&ro, &ev[(round * 3 + cpu) * BATCH + k]), 0);
		bt_reorder_release(&ro, T0_NS + (uint64_t)round * 100000 + 8000, on_event, &o);
	}
	bt_reorder_release(&ro, UINT64_MAX, on_event, &o);
	bt_reorder_free(&ro);
	assert_int_equal(o.n, NEVENTS);
	assert_int_equal(rec_writer_free(o.w), 0);
	fclose(f);
	return buf;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("%s: cannot open (run from the source tree)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* the first line that differs, for the failure message */
static void check_same(const char *path, const char *want, size_t wlen, const char *got, size_t glen)
{
	size_t k = 0, line = 1;

	while (k < wlen && k < glen && want[k] == got[k])
		line += want[k++] == '\n';
	if (k == wlen && k == glen)
		return;
	fail_msg("%s: line %zu differs at byte %zu (%zu bytes written, %zu in the fixture)", path, line, k, glen,
		 wlen);
}

static void check_format(enum rec_format fmt, const char *ext)
{
	char path[128];
	size_t glen, wlen;
	char *got = decode_batch(fmt, &glen), *want;

	snprintf(path, sizeof(path), "%s%s", FIXTURES, ext);
	if (getenv("TK_FIXTURE_WRITE")) {
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(got, 1, glen, f), glen);
		assert_int_equal(fclose(f), 0);
	}
	want = read_file(path, &wlen);
	check_same(path, want, wlen, got, glen);
	free(want);
	free(got);
}

static void test_json_bytes(void **state)
{
	(void)state;
	check_format(REC_JSON, "jsonl");
}

static void test_csv_bytes(void **state)
{
	(void)state;
	check_format(REC_CSV, "csv");
}

static void test_table_bytes(void **state)
{
	(void)state;
	check_format(REC_TABLE, "txt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_bytes),
		cmocka_unit_test(test_csv_bytes),
		cmocka_unit_test(test_table_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
