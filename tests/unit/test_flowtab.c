// SPDX-License-Identifier: GPL-2.0-only
/* The detector's flow table against a plain array, through growth and deletions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "bbrtrace/flowtab.h"

#define KEYS 4096

/* 200,000 random puts, gets and deletes of 4,096 keys (sequential ones, as
 * cookies are, and their neighbours collide in the low bits): every get
 * agrees with the array, and the count with the array's */
static void test_random_ops(void **state)
{
	static void *ref[KEYS];
	struct bt_flowtab t;
	uint32_t seed = 7;
	size_t n = 0;
	(void)state;

	bt_flowtab_init(&t, KEYS);
	for (int i = 0; i < 200000; i++) {
		uint64_t k;
		void *v;

		seed = seed * 1103515245 + 12345;
		k = (seed >> 8) % KEYS;
		switch ((seed >> 4) % 3) {
		case 0:
			if (!ref[k]) {
				ref[k] = (void *)(uintptr_t)(k + 1);
				assert_int_equal(bt_flowtab_put(&t, k * 4096, ref[k]), 0);
				n++;
			}
			break;
		case 1:
			v = bt_flowtab_del(&t, k * 4096);
			assert_ptr_equal(v, ref[k]);
			if (ref[k])
				n--;
			ref[k] = NULL;
			break;
		default:
			assert_ptr_equal(bt_flowtab_get(&t, k * 4096), ref[k]);
			/* the hint's lookup finds the value or nothing, never another's */
			v = bt_flowtab_peek(&t, k * 4096);
			assert_true(v == NULL || v == ref[k]);
			bt_flowtab_prefetch(&t, k * 4096);
		}
		assert_int_equal(t.n, n);
	}
	for (uint64_t k = 0; k < KEYS; k++)
		assert_ptr_equal(bt_flowtab_get(&t, k * 4096), ref[k]);
	/* at most half full, most keys sit in their home slot, where the hint
	 * looks: at least half of them (a count, not a probability bound: the
	 * seed is fixed) */
	size_t home = 0;

	for (uint64_t k = 0; k < KEYS; k++)
		home += ref[k] && bt_flowtab_peek(&t, k * 4096) == ref[k];
	assert_true(2 * home >= n);
	bt_flowtab_free(&t);
}

/* the cap refuses the flow past it, and a deletion makes room */
static void test_cap(void **state)
{
	struct bt_flowtab t;
	int one = 1;
	(void)state;

	bt_flowtab_init(&t, 3);
	for (uint64_t k = 1; k <= 3; k++)
		assert_int_equal(bt_flowtab_put(&t, k, &one), 0);
	assert_int_equal(bt_flowtab_put(&t, 4, &one), -1);
	assert_null(bt_flowtab_get(&t, 4));
	assert_ptr_equal(bt_flowtab_del(&t, 2), &one);
	assert_null(bt_flowtab_del(&t, 2));
	assert_int_equal(bt_flowtab_put(&t, 4, &one), 0);
	assert_ptr_equal(bt_flowtab_get(&t, 4), &one);
	bt_flowtab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
