// SPDX-License-Identifier: GPL-2.0-only
/* The session table (upf/table.c): insert, lookup, overflow chains, delete, bulk. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "upf/table.h"

static void test_insert_lookup(void **state)
{
	struct upt t;
	(void)state;

	assert_int_equal(upt_init(&t, 1000, false), 0);
	for (uint32_t i = 1; i <= 1000; i++)
		assert_int_equal(upt_insert(&t, i * 2654435761u, i), 0);
	assert_int_equal(t.count, 1000);
	for (uint32_t i = 1; i <= 1000; i++)
		assert_int_equal(upt_lookup(&t, i * 2654435761u), i);
	assert_int_equal(upt_lookup(&t, 12345), UPT_MISS);
	assert_int_equal(upt_insert(&t, 2654435761u, 7), -EEXIST);
	assert_int_equal(upt_lookup(&t, 2654435761u), 1);
	upt_free(&t);
}

static void test_teid_zero(void **state)
{
	struct upt t;
	(void)state;

	assert_int_equal(upt_init(&t, 10, false), 0);
	assert_int_equal(upt_insert(&t, 0, 1), -EINVAL);
	/* empty slots hold 0: a lookup of 0 must still miss */
	assert_int_equal(upt_lookup(&t, 0), UPT_MISS);
	assert_int_equal(upt_delete(&t, 0), -ENOENT);
	upt_free(&t);
}

/* keys whose home is bucket `home` */
static unsigned int keys_for_bucket(const struct upt *t, uint32_t home, uint32_t *out,
				    unsigned int n)
{
	unsigned int k = 0;

	for (uint32_t x = 1; k < n && x; x++)
		if (upt_home(t, upt_hash(x)) == home)
			out[k++] = x;
	return k;
}

static void test_overflow_chain(void **state)
{
	struct upt t;
	uint32_t keys[30];
	(void)state;

	assert_int_equal(upt_init(&t, 200, false), 0);
	assert_true(t.nb > 6);
	assert_int_equal(keys_for_bucket(&t, 3, keys, 30), 30);
	/* 30 keys homed at bucket 3: 7 fit, the rest go on to buckets 4, 5, 6, 7 */
	for (unsigned int i = 0; i < 30; i++)
		assert_int_equal(upt_insert(&t, keys[i], 100 + i), 0);
	assert_int_equal(t.b[3].overflow, 23);
	assert_int_equal(t.b[4].overflow, 16);
	assert_int_equal(t.b[6].overflow, 2);
	assert_int_equal(t.b[7].overflow, 0);
	for (unsigned int i = 0; i < 30; i++)
		assert_int_equal(upt_lookup(&t, keys[i]), 100 + i);
	/* delete every other key: the rest stay reachable */
	for (unsigned int i = 0; i < 30; i += 2)
		assert_int_equal(upt_delete(&t, keys[i]), 0);
	for (unsigned int i = 0; i < 30; i++)
		assert_int_equal(upt_lookup(&t, keys[i]), i % 2 ? 100 + i : UPT_MISS);
	assert_int_equal(upt_delete(&t, keys[0]), -ENOENT);
	for (unsigned int i = 1; i < 30; i += 2)
		assert_int_equal(upt_delete(&t, keys[i]), 0);
	for (uint32_t b = 0; b < t.nb; b++)
		assert_int_equal(t.b[b].overflow, 0);
	assert_int_equal(t.count, 0);
	upt_free(&t);
}

static void test_wraps_at_the_end(void **state)
{
	struct upt t;
	uint32_t keys[10];
	(void)state;

	assert_int_equal(upt_init(&t, 100, false), 0);
	assert_int_equal(keys_for_bucket(&t, t.nb - 1, keys, 10), 10);
	for (unsigned int i = 0; i < 10; i++)
		assert_int_equal(upt_insert(&t, keys[i], i), 0);
	/* the last bucket's overflow went on to bucket 0 */
	assert_int_equal(t.b[t.nb - 1].overflow, 3);
	for (unsigned int i = 0; i < 10; i++)
		assert_int_equal(upt_lookup(&t, keys[i]), i);
	upt_free(&t);
}

static void test_full_table(void **state)
{
	struct upt t;
	uint32_t n = 0;
	int rc;
	(void)state;

	assert_int_equal(upt_init(&t, 50, false), 0);
	/* every slot can be used before ENOSPC */
	for (uint32_t x = 1; (rc = upt_insert(&t, x * 2246822519u, x)) == 0; x++)
		n++;
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(n, t.nb * UPT_SLOTS);
	for (uint32_t x = 1; x <= n; x++)
		assert_int_equal(upt_lookup(&t, x * 2246822519u), x);
	upt_free(&t);
}

static void test_bulk_equals_single(void **state)
{
	struct upt t;
	uint32_t keys[200], bulk[200];
	(void)state;

	assert_int_equal(upt_init(&t, 5000, false), 0);
	for (uint32_t i = 1; i <= 5000; i++)
		assert_int_equal(upt_insert(&t, i * 747796405u, i), 0);
	for (unsigned int i = 0; i < 200; i++)
		keys[i] = (i % 3 ? (i + 1) * 747796405u : i * 7919u + 1); /* hits and misses */
	upt_lookup_bulk(&t, keys, 200, bulk);
	for (unsigned int i = 0; i < 200; i++)
		assert_int_equal(bulk[i], upt_lookup(&t, keys[i]));
	upt_free(&t);
}

static void test_sizing(void **state)
{
	struct upt t;
	(void)state;

	/* 2.2M keys at 60% of 7-slot buckets: about 32 MiB, no power-of-two rounding */
	assert_int_equal(upt_init(&t, 2200000, false), 0);
	assert_int_equal(t.nb, (uint32_t)(2200000 / (7 * 0.6)) + 1);
	assert_int_equal(t.bytes, (size_t)t.nb * 64);
	assert_int_equal(sizeof(struct upt_bucket), 64);
	upt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_lookup),
		cmocka_unit_test(test_teid_zero),
		cmocka_unit_test(test_overflow_chain),
		cmocka_unit_test(test_wraps_at_the_end),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_bulk_equals_single),
		cmocka_unit_test(test_sizing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
