// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap join's matching on its own (pcap/joinmatch.h): the clock offset
 * between trace and capture, and which frame each record gets, for the
 * cases a live capture brings: an unknown offset, duplicate ACKs, ACKs that
 * made no sample, sequence wraparound, frames outside the tolerance, two
 * flows, and a collapse sharing its sample's frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pcap/joinmatch.h"

#define MS 1000000LL
#define OFFSET (3500 * MS) /* the capture's clock runs 3.5 s ahead of the trace's */
#define SKEW (500 * MS)

struct fixture {
	struct jm_rec recs[64];
	struct jm_ev evs[64];
	struct jm m;
};

static void rec(struct fixture *f, uint8_t kind, int32_t flow, uint32_t ack, int64_t t_ns)
{
	f->recs[f->m.nrecs++] = (struct jm_rec){ .kind = kind, .flow = flow, .snd_una = ack,
						 .t_ns = t_ns, .ev = -1 };
}

/* a frame at trace time t (the capture stamps it t + OFFSET) */
static void frame(struct fixture *f, uint32_t flow, uint32_t ack, int64_t t_ns, uint64_t no)
{
	f->evs[f->m.nevs++] = (struct jm_ev){ .flow = flow, .ack = ack, .ts_ns = t_ns + OFFSET,
					      .frame = no, .delay_ns = -1 };
}

static void init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->m.recs = f->recs;
	f->m.evs = f->evs;
}

/* the frame number record i got, 0 for none */
static uint64_t got(const struct fixture *f, size_t i)
{
	return f->recs[i].ev >= 0 ? f->evs[f->recs[i].ev].frame : 0;
}

static void run(struct fixture *f)
{
	size_t support;

	jm_sort_events(&f->m);
	assert_true(jm_estimate_offset(&f->m, &support));
	jm_match(&f->m, SKEW);
	assert_false(f->m.oom);
}

static void test_offset_and_plain_acks(void **state)
{
	struct fixture f;
	(void)state;

	init(&f);
	for (int i = 0; i < 10; i++) {
		rec(&f, JM_SAMPLE, 0, 1000u + 1448u * (uint32_t)i, 1000 * MS + i * MS);
		frame(&f, 0, 1000u + 1448u * (uint32_t)i, 1000 * MS + i * MS + 20000, 100 + (uint64_t)i);
	}
	run(&f);
	/* the median of the densest cluster: every candidate says 3.5 s + 20 us */
	assert_int_equal(f.m.offset_ns, OFFSET + 20000);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(got(&f, i), 100 + i);
}

/* three samples of one ACK number (duplicate ACKs) and a fourth frame of that
 * number that made no sample: each sample takes its own frame in time */
static void test_duplicate_acks(void **state)
{
	struct fixture f;
	(void)state;

	init(&f);
	rec(&f, JM_SAMPLE, 0, 5000, 2000 * MS);
	rec(&f, JM_SAMPLE, 0, 5000, 2010 * MS);
	rec(&f, JM_SAMPLE, 0, 5000, 2040 * MS);
	frame(&f, 0, 5000, 2000 * MS, 11);
	frame(&f, 0, 5000, 2010 * MS, 12);
	frame(&f, 0, 5000, 2025 * MS, 13); /* no sample came of it */
	frame(&f, 0, 5000, 2040 * MS, 14);
	run(&f);
	assert_int_equal(got(&f, 0), 11);
	assert_int_equal(got(&f, 1), 12);
	assert_int_equal(got(&f, 2), 14);
}

/* the same 32-bit ACK number 4 GiB later, 20 s apart: told apart by time */
static void test_wraparound(void **state)
{
	struct fixture f;
	(void)state;

	init(&f);
	rec(&f, JM_SAMPLE, 0, 777, 100 * MS);
	rec(&f, JM_SAMPLE, 0, 777, 20100 * MS);
	frame(&f, 0, 777, 20100 * MS, 2);
	frame(&f, 0, 777, 100 * MS, 1);
	run(&f);
	assert_int_equal(got(&f, 0), 1);
	assert_int_equal(got(&f, 1), 2);
}

/* a frame further than the tolerance is no match */
static void test_outside_tolerance(void **state)
{
	struct fixture f;
	(void)state;

	init(&f);
	rec(&f, JM_SAMPLE, 0, 9000, 500 * MS);
	frame(&f, 0, 9000, 500 * MS, 7);
	rec(&f, JM_SAMPLE, 0, 9500, 600 * MS);
	frame(&f, 0, 9500, 600 * MS + SKEW + MS, 8);
	rec(&f, JM_SAMPLE, 0, 9900, 700 * MS);
	frame(&f, 0, 9900, 700 * MS, 9);
	run(&f);
	assert_int_equal(got(&f, 0), 7);
	assert_int_equal(got(&f, 1), 0);
	assert_int_equal(got(&f, 2), 9);
}

/* two flows with the same ACK numbers, and a collapse record of the same ACK
 * as a sample: flows never mix, and the collapse gets its sample's frame */
static void test_flows_and_collapses(void **state)
{
	struct fixture f;
	(void)state;

	init(&f);
	rec(&f, JM_SAMPLE, 0, 100, 10 * MS);
	rec(&f, JM_SAMPLE, 1, 100, 11 * MS);
	rec(&f, JM_COLLAPSE, 1, 100, 11 * MS);
	rec(&f, JM_OTHER, -1, 0, 0);
	frame(&f, 1, 100, 11 * MS, 21);
	frame(&f, 0, 100, 10 * MS, 20);
	run(&f);
	assert_int_equal(got(&f, 0), 20);
	assert_int_equal(got(&f, 1), 21);
	assert_int_equal(got(&f, 2), 21);
	assert_int_equal(got(&f, 3), 0);
}

/* nothing to go on: no record has a candidate frame */
static void test_no_candidates(void **state)
{
	struct fixture f;
	size_t support = 1;
	(void)state;

	init(&f);
	rec(&f, JM_SAMPLE, 0, 100, 10 * MS);
	frame(&f, 0, 200, 10 * MS, 1);
	jm_sort_events(&f.m);
	assert_false(jm_estimate_offset(&f.m, &support));
	assert_int_equal(support, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offset_and_plain_acks),
		cmocka_unit_test(test_duplicate_acks),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_outside_tolerance),
		cmocka_unit_test(test_flows_and_collapses),
		cmocka_unit_test(test_no_candidates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
