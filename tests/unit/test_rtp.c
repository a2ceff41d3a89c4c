// SPDX-License-Identifier: GPL-2.0-only
/*
 * The media-server demo's datagram and its receiver's figures
 * (loadgen/rtp.h): the header packed and unpacked, loss, reordering and
 * sequence wraps, RFC 3550 jitter and the receiver's own wait.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "loadgen/rtp.h"

#define NEAR(a, b) tk_assert_near((a), (b), 1e-6)

static void test_rtp_roundtrip(void **state)
{
	struct rtp_pkt p = { .seq = 65535, .ts = 0xdeadbeef, .ssrc = 0x5eed,
			     .send_ns = 0x0102030405060708ULL }, q;
	uint8_t buf[64];
	(void)state;

	assert_int_equal(rtp_pack(buf, &p), RTP_MIN_LEN);
	assert_int_equal(buf[0], 0x80);
	assert_true(rtp_unpack(buf, RTP_MIN_LEN, &q));
	assert_int_equal(q.seq, 65535);
	assert_int_equal(q.ts, 0xdeadbeef);
	assert_int_equal(q.ssrc, 0x5eed);
	assert_int_equal(q.send_ns, 0x0102030405060708ULL);
	assert_false(rtp_unpack(buf, RTP_MIN_LEN - 1, &q));
	buf[0] = 0x40;
	assert_false(rtp_unpack(buf, RTP_MIN_LEN, &q));
}

static void add(struct rtp_stats *s, uint16_t seq, uint64_t send_ns, uint64_t read_ns)
{
	struct rtp_pkt p = { .seq = seq, .ssrc = 1, .send_ns = send_ns };

	p.ts = (uint32_t)(send_ns / (1000000000ULL / RTP_CLOCK_HZ));
	rtp_stats_add(s, &p, read_ns);
}

static void test_rtp_loss_reorder_wrap(void **state)
{
	struct rtp_stats s = { 0 };
	(void)state;

	add(&s, 65534, 0, 1000);
	add(&s, 1, 0, 1000);     /* 65535 and 0 missing, across the wrap */
	add(&s, 0, 0, 1000);     /* one of them late */
	add(&s, 2, 0, 1000);
	assert_int_equal(rtp_expected(&s), 5);
	assert_int_equal(s.received, 4);
	assert_int_equal(rtp_lost(&s), 1);
	assert_int_equal(s.reordered, 1);
}

static void test_rtp_jitter_and_wait(void **state)
{
	struct rtp_stats s = { 0 };
	(void)state;

	/* constant transit: no jitter */
	for (int i = 0; i < 50; i++)
		add(&s, (uint16_t)i, (uint64_t)i * 20000000, (uint64_t)i * 20000000 + 1000000);
	tk_assert_cmp(rtp_jitter_ms(&s), <, 0.02);
	NEAR(s.wait_sum_ns / (double)s.wait_n, 1000000);
	assert_int_equal(s.wait_max_ns, 1000000);
	/* alternate 1 ms and 11 ms transit: |D| = 10 ms, J converges to 10 ms */
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 400; i++)
		add(&s, (uint16_t)i, (uint64_t)i * 20000000,
		    (uint64_t)i * 20000000 + (i % 2 ? 11000000 : 1000000));
	tk_assert_near(rtp_jitter_ms(&s), 10, 0.1);
	assert_int_equal(s.wait_max_ns, 11000000);
	/* then 100 at a constant transit: J decays to nothing, its peak stays */
	for (int i = 400; i < 500; i++)
		add(&s, (uint16_t)i, (uint64_t)i * 20000000, (uint64_t)i * 20000000 + 1000000);
	tk_assert_cmp(rtp_jitter_ms(&s), <, 0.1);
	tk_assert_near(rtp_jitter_max_ms(&s), 10, 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtp_roundtrip),
		cmocka_unit_test(test_rtp_loss_reorder_wrap),
		cmocka_unit_test(test_rtp_jitter_and_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
