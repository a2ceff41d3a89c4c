// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-socket FIFO of dwell/udpdwell.h, the code the BPF programs run,
 * replayed against a model of the kernel's UDP receive queue: each datagram
 * carries its true enqueue time, and each test plays one kernel behaviour
 * (every enqueue signalled, only-when-empty signalling, batched enqueue,
 * MSG_PEEK, failed reads, a read that dequeues and fails, several readers
 * racing, an overfull queue) and checks the dwell times the FIFO reports.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dwell/udpdwell.h"

/* the kernel side: a queue of true enqueue times */
struct kq {
	uint64_t t[8192];
	unsigned int head, tail;
};

static unsigned int kq_len(const struct kq *q) { return q->tail - q->head; }
static void kq_push(struct kq *q, uint64_t t) { q->t[q->tail++ % 8192] = t; }
static uint64_t kq_pop(struct kq *q) { return q->t[q->head++ % 8192]; }

/* reads matched: the sum of the buckets */
static uint64_t packets(const struct ud_sock *st)
{
	uint64_t n = 0;

	for (int i = 0; i < UD_NBUCKETS; i++)
		n += st->buckets[i];
	return n;
}

struct fixture {
	struct ud_sock *st;
	struct kq q;
	uint64_t sum_true_ns;   /* of the datagrams read */
	uint64_t n_true;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->st = calloc(1, sizeof(*f->st));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->st);
	free(f);
	return 0;
}

/* a datagram enqueued at t, signalled at once */
static void enqueue(struct fixture *f, uint64_t t, bool signal)
{
	kq_push(&f->q, t);
	if (signal)
		ud_on_enqueue(f->st, t, kq_len(&f->q));
}

/* a plain successful read at t; returns the dwell the FIFO reported */
static int64_t read_one(struct fixture *f, uint64_t t)
{
	uint64_t enq = kq_pop(&f->q);

	f->sum_true_ns += t - enq;
	f->n_true++;
	return ud_on_read(f->st, t, kq_len(&f->q), 1, 0);
}

static void test_every_enqueue_signalled(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1000, true);
	enqueue(f, 2000, true);
	enqueue(f, 3000, true);
	assert_int_equal(read_one(f, 11000), 10000);
	assert_int_equal(read_one(f, 12500), 10500);
	enqueue(f, 13000, true);
	assert_int_equal(read_one(f, 14000), 11000);
	assert_int_equal(read_one(f, 20000), 7000);
	assert_int_equal(packets(f->st), 4);
	assert_int_equal(f->st->sum_ns, f->sum_true_ns);
	assert_int_equal(f->st->max_ns, 11000);
	assert_int_equal(f->st->unmatched, 0);
}

static void test_bucket_edges_are_upper_inclusive(void **state)
{
	static const uint64_t edge[8] = { UD_LE0, UD_LE1, UD_LE2, UD_LE3,
					  UD_LE4, UD_LE5, UD_LE6, UD_LE7 };
	(void)state;
	assert_int_equal(ud_bucket(0), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(ud_bucket(edge[i]), i);
		assert_int_equal(ud_bucket(edge[i] + 1), i + 1);
		assert_int_equal(ud_bucket(edge[i] - 1), i);
	}
	assert_int_equal(ud_bucket(UINT64_MAX), 8);
	assert_int_equal(ud_bucket(10000), 0);  /* exactly 10 us: the first bucket */
	assert_int_equal(ud_bucket(10001), 1);
}

static void test_histogram_filled(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1000, true);
	read_one(f, 1000 + 10000); /* exactly 10 us: bucket 0 */
	enqueue(f, 100000, true);
	read_one(f, 100000 + 50001); /* bucket 2 */
	enqueue(f, 200000, true);
	read_one(f, 200000 + 60000000); /* >50 ms: bucket 8 */
	assert_int_equal(f->st->buckets[0], 1);
	assert_int_equal(f->st->buckets[2], 1);
	assert_int_equal(f->st->buckets[8], 1);
}

static void test_peek_and_errqueue_are_ignored(void **state)
{
	(void)state;
	assert_int_equal(ud_read_kind(100, UD_MSG_PEEK), -1);
	assert_int_equal(ud_read_kind(100, UD_MSG_ERRQUEUE), -1);
	assert_int_equal(ud_read_kind(-11, UD_MSG_PEEK), -1);
	assert_int_equal(ud_read_kind(100, 0x40 /* MSG_DONTWAIT */), 1);
	assert_int_equal(ud_read_kind(0, 0), 1); /* an empty datagram is a datagram */
	assert_int_equal(ud_read_kind(-11, 0), 0);
}

static void test_peek_then_read(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1000, true);
	enqueue(f, 2000, true);
	/* a peek returns 20 bytes; its event is dropped by ud_read_kind(): nothing
	 * reaches the FIFO. The real read that follows is matched normally. */
	assert_int_equal(ud_read_kind(20, UD_MSG_PEEK), -1);
	assert_int_equal(read_one(f, 5000), 4000);
	assert_int_equal(ud_read_kind(20, UD_MSG_PEEK), -1);
	assert_int_equal(read_one(f, 7000), 5000);
	assert_int_equal(packets(f->st), 2);
	assert_int_equal(f->st->sum_ns, f->sum_true_ns);
}

static void test_failed_reads_change_nothing(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1000, true);
	/* EAGAIN from another thread, and a timeout: queue unchanged */
	ud_on_read(f->st, 1500, kq_len(&f->q), 0, 0);
	ud_on_read(f->st, 90000000, kq_len(&f->q), 0, 0);
	assert_int_equal(read_one(f, 90001000), 90000000);
	assert_int_equal(f->st->unmatched, 0);
	assert_int_equal(f->st->resync_dropped, 0);
	/* EAGAIN on an empty queue */
	ud_on_read(f->st, 90002000, 0, 0, 0);
	assert_int_equal(f->st->tail - f->st->head, 0);
}

static void test_dequeued_then_failed_read_is_dropped_after_grace(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000;

	/* a datagram whose checksum fails at read time: dequeued, error returned */
	enqueue(f, t, true);
	enqueue(f, t + 100, true);
	kq_pop(&f->q);
	ud_on_read(f->st, t + 200, kq_len(&f->q), 0, 0);
	assert_int_equal(f->st->tail - f->st->head, 2); /* not yet: it may be a race */
	/* the next read, after the grace period, first drops the stale stamp */
	assert_int_equal(read_one(f, t + 200 + UD_GRACE_NS), 200 + UD_GRACE_NS - 100);
	assert_int_equal(f->st->resync_dropped, 1);
	assert_int_equal(f->st->tail - f->st->head, 0);
	enqueue(f, t + 3 * UD_GRACE_NS, true);
	assert_int_equal(read_one(f, t + 3 * UD_GRACE_NS + 777), 777);
}

static void test_signal_only_when_queue_was_empty(void **state)
{
	struct fixture *f = *state;

	/* 6.10 to early 6.12: sk_data_ready only for the first of a backlog */
	enqueue(f, 1000, true);
	enqueue(f, 2000, false);
	enqueue(f, 3000, false);
	/* the first read sees 3 queued and is matched exactly */
	assert_int_equal(read_one(f, 10000), 9000);
	/* the two unsignalled ones were stamped at that read: lower bounds */
	assert_int_equal(f->st->resync_added, 2);
	assert_int_equal(read_one(f, 11000), 1000);
	assert_int_equal(read_one(f, 12000), 2000);
	assert_int_equal(packets(f->st), 3);
	assert_int_equal(f->st->unmatched, 0);
	/* after the queue drained, the next enqueue is signalled again */
	enqueue(f, 20000, true);
	assert_int_equal(read_one(f, 25000), 5000);
}

static void test_batched_enqueue(void **state)
{
	struct fixture *f = *state;

	/* 6.18: three skbs drained from the per-NUMA list at 5000, then three
	 * sk_data_ready calls, each seeing all three in the queue */
	kq_push(&f->q, 5000);
	kq_push(&f->q, 5000);
	kq_push(&f->q, 5000);
	ud_on_enqueue(f->st, 5000, 3);
	ud_on_enqueue(f->st, 5010, 3);
	ud_on_enqueue(f->st, 5020, 3);
	assert_int_equal(f->st->tail - f->st->head, 3);
	assert_int_equal(read_one(f, 6000), 1000);
	assert_int_equal(read_one(f, 6000), 1000);
	assert_int_equal(read_one(f, 6000), 1000);
	assert_int_equal(f->st->unmatched, 0);
}

static void test_reader_wins_race_against_signal(void **state)
{
	struct fixture *f = *state;

	/* enqueued at 1000, read at 1500 by a busy reader, signalled at 1600 */
	kq_push(&f->q, 1000);
	assert_int_equal(read_one(f, 1500), 0); /* stamped at the read: a lower bound */
	ud_on_enqueue(f->st, 1600, kq_len(&f->q));
	assert_int_equal(f->st->tail - f->st->head, 0); /* no double count */
	enqueue(f, 2000, true);
	assert_int_equal(read_one(f, 2600), 600);
	assert_int_equal(packets(f->st), 2);
}

static void test_two_readers_in_flight(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000;
	int64_t a, b;

	for (int i = 0; i < 4; i++)
		enqueue(f, t + (uint64_t)i * 1000, true);
	/* reader B dequeues the first datagram but its event comes later; reader A
	 * dequeues the second and reports first: A's event sees one datagram
	 * fewer than the FIFO holds, which is not a lost datagram */
	kq_pop(&f->q);
	kq_pop(&f->q);
	a = ud_on_read(f->st, t + 10000, kq_len(&f->q), 1, 0);
	b = ud_on_read(f->st, t + 10100, kq_len(&f->q), 1, 0);
	assert_int_equal(f->st->resync_dropped, 0);
	/* the two reads share the two oldest stamps: the sum is exact */
	assert_int_equal(a + b, (10000 - 1000) + (10100 - 0));
	assert_int_equal(read_one(f, t + 20000), 18000);
	assert_int_equal(read_one(f, t + 20000), 17000);
	assert_int_equal(packets(f->st), 4);
	assert_int_equal(f->st->unmatched, 0);
}

static void test_transient_excess_is_forgiven(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 5000000;

	enqueue(f, t, true);
	enqueue(f, t + 10, true);
	/* an event sees one fewer (a read in flight), later ones see it resolved */
	ud_on_enqueue(f->st, t + 20, 1);
	ud_on_enqueue(f->st, t + 30, 2);
	kq_pop(&f->q);
	ud_on_read(f->st, t + 3 * UD_GRACE_NS, kq_len(&f->q), 1, 0);
	assert_int_equal(f->st->resync_dropped, 0);
	assert_int_equal(f->st->sum_ns, 3 * UD_GRACE_NS);
}

static void test_recvmmsg_batch(void **state)
{
	struct fixture *f = *state;

	/* recvmmsg fires one read event per datagram, queue shrinking each time */
	for (int i = 0; i < 8; i++)
		enqueue(f, 1000 + (uint64_t)i * 100, true);
	for (int i = 0; i < 8; i++)
		assert_int_equal(read_one(f, 50000), 50000 - (1000 + i * 100));
	/* the final call of the batch returns EAGAIN */
	ud_on_read(f->st, 50001, 0, 0, 0);
	assert_int_equal(packets(f->st), 8);
	assert_int_equal(f->st->sum_ns, f->sum_true_ns);
}

static void test_ring_full_is_counted(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < UD_RING + 10; i++)
		enqueue(f, 1000 + (uint64_t)i, true);
	assert_int_equal(f->st->tail - f->st->head, UD_RING);
	assert_int_equal(f->st->ring_full, 10);
	/* reads free slots; the unstamped ones are stamped late, never lost */
	for (int i = 0; i < UD_RING + 10; i++)
		read_one(f, 1000000);
	assert_int_equal(packets(f->st), UD_RING + 10);
	assert_int_equal(f->st->unmatched, 0);
}

static void test_large_backlog_in_steps(void **state)
{
	struct fixture *f = *state;

	/* 200 datagrams appear without a signal: stamps come UD_MAX_STEP per event */
	for (int i = 0; i < 200; i++)
		enqueue(f, 1000, false);
	ud_on_enqueue(f->st, 2000, 200);
	assert_int_equal(f->st->tail - f->st->head, UD_MAX_STEP);
	for (int i = 0; i < 200; i++)
		read_one(f, 3000);
	assert_int_equal(packets(f->st), 200);
	assert_int_equal(f->st->unmatched, 0);
}

static void test_interval_maximum_by_epoch(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1, true);
	ud_on_read(f->st, 9001, 0, 1, 4); kq_pop(&f->q);
	enqueue(f, 10000, true);
	ud_on_read(f->st, 12000, 0, 1, 4); kq_pop(&f->q);
	assert_int_equal(f->st->max_epoch_tag[0], 4);
	assert_int_equal(f->st->max_epoch_ns[0], 9000);
	/* the next interval starts afresh in the other slot */
	enqueue(f, 20000, true);
	ud_on_read(f->st, 21000, 0, 1, 5); kq_pop(&f->q);
	assert_int_equal(f->st->max_epoch_tag[1], 5);
	assert_int_equal(f->st->max_epoch_ns[1], 1000);
	/* and the one after reuses slot 0 without the old maximum */
	enqueue(f, 30000, true);
	ud_on_read(f->st, 30500, 0, 1, 6); kq_pop(&f->q);
	assert_int_equal(f->st->max_epoch_tag[0], 6);
	assert_int_equal(f->st->max_epoch_ns[0], 500);
	assert_int_equal(f->st->max_ns, 9000);
}

static void test_random_interleavings_keep_the_sum(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000, seed = 42;

	/* single reader, every enqueue signalled, random arrivals and reads:
	 * every dwell is exact */
	for (int step = 0; step < 200000; step++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		t += (seed >> 60) * 37;
		if ((seed >> 33) % 3 && kq_len(&f->q) < 1000)
			enqueue(f, t, true);
		else if (kq_len(&f->q)) {
			uint64_t truth = t - f->q.t[f->q.head % 8192];

			assert_int_equal(read_one(f, t), truth);
		} else {
			ud_on_read(f->st, t, 0, 0, 0);
		}
	}
	assert_int_equal(f->st->sum_ns, f->sum_true_ns);
	assert_int_equal(f->st->unmatched, 0);
	/* every enqueue was signalled: no stamp had to be added at a read */
	assert_int_equal(f->st->resync_added, 0);
	assert_int_equal(f->st->tail, packets(f->st) + (f->st->tail - f->st->head));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_enqueue_signalled, setup, teardown),
		cmocka_unit_test(test_bucket_edges_are_upper_inclusive),
		cmocka_unit_test_setup_teardown(test_histogram_filled, setup, teardown),
		cmocka_unit_test(test_peek_and_errqueue_are_ignored),
		cmocka_unit_test_setup_teardown(test_peek_then_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_reads_change_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dequeued_then_failed_read_is_dropped_after_grace,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal_only_when_queue_was_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batched_enqueue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_wins_race_against_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_readers_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transient_excess_is_forgiven, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recvmmsg_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_full_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_backlog_in_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_maximum_by_epoch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_interleavings_keep_the_sum, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
