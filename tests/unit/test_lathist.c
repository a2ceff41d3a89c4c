// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's frame-latency histogram (loadgen/lathist.h): exact below 64 us,
 * within 1/32 above, nearest-rank quantiles, the maximum as a cap, and
 * values up to 2^64 - 1 in a bucket of their own range.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "loadgen/lathist.h"

static struct lathist h;

static int reset(void **state)
{
	(void)state;
	memset(&h, 0, sizeof(h));
	return 0;
}

static void test_empty(void **state)
{
	(void)state;
	assert_int_equal(lathist_quantile(&h, 0.99), 0);
}

/* 1..100 us: every value has a bucket of its own up to 63 */
static void test_small_values_exact(void **state)
{
	(void)state;
	for (uint64_t v = 1; v <= 60; v++)
		lathist_add(&h, v);
	assert_int_equal(lathist_quantile(&h, 0.5), 30);
	assert_int_equal(lathist_quantile(&h, 0.99), 60);
	assert_int_equal(lathist_quantile(&h, 1.0), 60);
	assert_int_equal(lathist_quantile(&h, 0.001), 1);
}

/* 100 frames: 98 at 1.1 ms, one at 13 ms, one at 84 ms (the demo's kind of
 * run): the p99 is the 99th smallest, 13 ms, to within 1/32 above */
static void test_p99_nearest_rank(void **state)
{
	uint64_t p99;
	(void)state;
	for (int i = 0; i < 98; i++)
		lathist_add(&h, 1100);
	lathist_add(&h, 13000);
	lathist_add(&h, 84000);
	p99 = lathist_quantile(&h, 0.99);
	tk_assert_cmp(p99, >=, 13000);
	tk_assert_cmp(p99, <=, 13000 + 13000 / 32);
	assert_int_equal(lathist_quantile(&h, 1.0), 84000);
	tk_assert_cmp(lathist_quantile(&h, 0.5), >=, 1100);
	tk_assert_cmp(lathist_quantile(&h, 0.5), <=, 1100 + 1100 / 32);
}

/* an upper edge never exceeds the largest value seen */
static void test_capped_by_max(void **state)
{
	(void)state;
	lathist_add(&h, 1000);
	assert_int_equal(lathist_quantile(&h, 0.99), 1000);
}

/* every value from 1 us to 2^62 lands in a bucket whose edge is within 1/32 above it */
static void test_relative_error_bound(void **state)
{
	(void)state;
	/* v grows by half each step: 1 us to 2^62 in about 110 steps, and
	 * the sum never overflows while v is under 2^62 */
	for (uint64_t v = 1; v < (1ULL << 62); v += v / 2 + 1) {
		uint64_t q;

		reset(NULL);
		lathist_add(&h, v);
		h.max_us = UINT64_MAX; /* look at the bucket's own edge */
		q = lathist_quantile(&h, 1.0);
		tk_assert_cmp(q, >=, v);
		tk_assert_cmp(q - v, <=, v / 32);
	}
	reset(NULL);
	lathist_add(&h, UINT64_MAX);
	assert_int_equal(lathist_quantile(&h, 1.0), UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty, reset),
		cmocka_unit_test_setup(test_small_values_exact, reset),
		cmocka_unit_test_setup(test_p99_nearest_rank, reset),
		cmocka_unit_test_setup(test_capped_by_max, reset),
		cmocka_unit_test_setup(test_relative_error_bound, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
