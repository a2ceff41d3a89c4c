// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session tables: the TEID table (upf/table.c: insert, lookup, overflow
 * chains, delete, bulk), the inline table (upf/inline.c: entries, probes,
 * tombstones, counters that carry) and slot-encoded TEIDs (upf/teid.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "upf/inline.h"
#include "upf/table.h"
#include "upf/teid.h"

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
	tk_assert_cmp(t.nb, >, 6);
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

static void test_teid_plan(void **state)
{
	struct up_teid_plan p;
	(void)state;

	/* 2.2M slots: 22 bits hold 1..2.2M and more; 10 check bits */
	up_teid_plan_init(&p, 2200000, 42);
	assert_int_equal(p.slot_bits, 22);
	assert_int_equal(p.slot_mask, (1u << 22) - 1);
	/* 2^20 slots need 21 bits: slot 2^20 + 1 must exist beyond them */
	up_teid_plan_init(&p, 1u << 20, 42);
	assert_int_equal(p.slot_bits, 21);
	up_teid_plan_init(&p, 300, 7);
	for (uint32_t i = 0; i < 300; i++)
		for (uint32_t gen = 0; gen < 40; gen++) {
			uint32_t teid = up_teid_make(&p, i, gen);

			assert_int_not_equal(teid, 0);
			assert_int_equal(up_teid_index(p.slot_mask, teid), i);
			/* the generation before is refused: a different TEID for the same slot */
			assert_int_not_equal(teid, up_teid_make(&p, i, gen - 1));
		}
	/* the check bits are keyed: another key, another TEID for the same slot and generation */
	{
		struct up_teid_plan q;

		up_teid_plan_init(&q, 300, 8);
		assert_int_not_equal(up_teid_make(&p, 5, 1), up_teid_make(&q, 5, 1));
	}
	for (uint32_t nonce = 0; nonce < 5000; nonce++)
		tk_assert_cmp(up_teid_index(p.slot_mask, up_teid_out_of_range(&p, nonce)), >=, 300);
	/* slot 0 is among them (index UINT32_MAX) */
	assert_int_equal(up_teid_index(p.slot_mask, up_teid_out_of_range(&p, p.slot_mask - 300)),
			 UINT32_MAX);
}

static void test_slot_owner(void **state)
{
	(void)state;

	for (unsigned int w = 1; w <= 5; w++)
		for (uint32_t n = 1; n < 400; n += 37) {
			struct up_slot_split s = up_slot_split_of(n, w);
			unsigned int prev = 0;

			/* contiguous ranges, in order, every worker below w */
			for (uint32_t i = 0; i < n; i++) {
				unsigned int o = up_slot_owner(&s, i);

				tk_assert_cmp(o, <, w);
				tk_assert_cmp(o, >=, prev);
				prev = o;
			}
			assert_int_equal(up_slot_owner(&s, n), w - 1);
			assert_int_equal(up_slot_owner(&s, UINT32_MAX), w - 1);
		}
}

/* an inline pool of room for n sessions */
static void inline_pool(struct up_pool *p, uint32_t n)
{
	assert_int_equal(up_pool_init(p, UP_LAYOUT_INLINE, n, false), 0);
	assert_int_equal(p->lines, upi_lines(n));
}

/* keys whose home is inline line `home` */
static unsigned int keys_for_line(const struct up_pool *p, uint32_t home, uint32_t *out,
				  unsigned int n)
{
	unsigned int k = 0;

	for (uint32_t x = 1; k < n && x; x++)
		if (upi_home(p, x) == home)
			out[k++] = x;
	return k;
}

static void test_inline_insert_lookup(void **state)
{
	struct up_pool p;
	uint32_t e;
	(void)state;

	inline_pool(&p, 1000);
	for (uint32_t i = 1; i <= 1000; i++) {
		assert_int_equal(upi_insert(&p, i * 2654435761u, &e), 0);
		assert_int_equal(p.ent[e].teid, i * 2654435761u);
	}
	assert_int_equal(p.stored, 1000);
	for (uint32_t i = 1; i <= 1000; i++) {
		e = upi_lookup(&p, i * 2654435761u);
		tk_assert_cmp(e, <, p.lines * UPI_WAYS);
		assert_int_equal(p.ent[e].teid, i * 2654435761u);
	}
	assert_int_equal(upi_lookup(&p, 12345), UPT_MISS);
	assert_int_equal(upi_insert(&p, 2654435761u, &e), -EEXIST);
	/* TEID 0 marks a free entry: never a key, and a lookup of it misses */
	assert_int_equal(upi_insert(&p, 0, &e), -EINVAL);
	assert_int_equal(upi_lookup(&p, 0), UPT_MISS);
	assert_int_equal(upi_delete(&p, 0), -ENOENT);
	up_pool_free(&p);
}

static void test_inline_probe_and_tombstones(void **state)
{
	struct up_pool p;
	uint32_t keys[7], e;
	(void)state;

	inline_pool(&p, 200);
	assert_int_equal(keys_for_line(&p, 3, keys, 7), 7);
	/* 7 keys homed at line 3: two there, the rest in lines 4, 5, 6 */
	for (unsigned int i = 0; i < 7; i++) {
		assert_int_equal(upi_insert(&p, keys[i], &e), 0);
		assert_int_equal(e, 3 * UPI_WAYS + i);
	}
	assert_int_equal(upi_at_home(&p, 3, keys[0]), 3 * UPI_WAYS);
	assert_int_equal(upi_at_home(&p, 3, keys[6]), UPI_PROBE);
	for (unsigned int i = 0; i < 7; i++)
		assert_int_equal(upi_lookup(&p, keys[i]), 3 * UPI_WAYS + i);
	/* a released entry is a tombstone: the keys past it stay reachable */
	assert_int_equal(upi_delete(&p, keys[0]), 0);
	assert_int_equal(upi_delete(&p, keys[3]), 0);
	assert_int_equal(p.ent[3 * UPI_WAYS].rules, UPI_TOMBSTONE);
	assert_int_equal(upi_lookup(&p, keys[0]), UPT_MISS);
	for (unsigned int i = 4; i < 7; i++)
		assert_int_equal(upi_lookup(&p, keys[i]), 3 * UPI_WAYS + i);
	assert_int_equal(upi_delete(&p, keys[0]), -ENOENT);
	/* and free for an insert: the first tombstone on the way */
	assert_int_equal(upi_insert(&p, keys[0], &e), 0);
	assert_int_equal(e, 3 * UPI_WAYS);
	assert_int_equal(p.stored, 6);
	up_pool_free(&p);
}

static void test_inline_wraps_and_fills(void **state)
{
	struct up_pool p;
	uint32_t keys[4], e, n = 0;
	int rc;
	(void)state;

	inline_pool(&p, 50);
	assert_int_equal(keys_for_line(&p, p.lines - 1, keys, 4), 4);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(upi_insert(&p, keys[i], &e), 0);
	/* the last line's overflow went on to line 0 */
	assert_int_equal(upi_lookup(&p, keys[3]), 1);
	up_pool_free(&p);
	/* every entry can be used before ENOSPC, and every key is still found */
	inline_pool(&p, 50);
	for (uint32_t x = 1; (rc = upi_insert(&p, x * 2246822519u, &e)) == 0; x++)
		n++;
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(n, p.lines * UPI_WAYS);
	for (uint32_t x = 1; x <= n; x++)
		assert_int_equal(p.ent[upi_lookup(&p, x * 2246822519u)].teid, x * 2246822519u);
	/* a table with no never-taken entry: a miss walks it all, and ends */
	assert_int_equal(upi_lookup(&p, 1), UPT_MISS);
	up_pool_free(&p);
}

/* the counters of an inline session whose low halves are about to wrap */
static void counts_carry(bool shared)
{
	struct up_sess_def d = { .teid = 77, .ue_ip4 = 0x0100000a, .rules = 0, .mbr_bps = 100000000 };
	struct up_pool p;
	uint64_t pkts, bytes, drops;
	uint32_t e;

	inline_pool(&p, 10);
	assert_int_equal(up_pool_set(&p, 3, &d, 2e9), 0);
	e = p.cold[3].line;
	assert_int_equal(p.carry[e].cold, 3);
	p.ent[e].pkts_lo = UINT32_MAX - 1;
	p.ent[e].bytes_lo = UINT32_MAX - 1000;
	p.ent[e].drops_lo = UINT16_MAX;
	for (int i = 0; i < 3; i++) {
		if (shared)
			upi_count_shared(&p, e, 600, 1);
		else
			upi_count(&p, e, 600, 1);
	}
	up_pool_counters(&p, 3, &pkts, &bytes, &drops);
	assert_int_equal(pkts, (uint64_t)UINT32_MAX - 1 + 3);
	assert_int_equal(bytes, (uint64_t)UINT32_MAX - 1000 + 1800);
	assert_int_equal(drops, (uint64_t)UINT16_MAX + 3);
	assert_int_equal(p.carry[e].pkts_hi, 1);
	assert_int_equal(p.carry[e].bytes_hi, 1);
	assert_int_equal(p.carry[e].drops_hi, 1);
	up_pool_free(&p);
}

static void test_inline_counters_carry(void **state)
{
	(void)state;
	counts_carry(false);
	counts_carry(true);
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
		cmocka_unit_test(test_teid_plan),
		cmocka_unit_test(test_slot_owner),
		cmocka_unit_test(test_inline_insert_lookup),
		cmocka_unit_test(test_inline_probe_and_tombstones),
		cmocka_unit_test(test_inline_wraps_and_fills),
		cmocka_unit_test(test_inline_counters_carry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
