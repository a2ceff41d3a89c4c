// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-socket FIFO of bpf/contract/udpdwell_fifo.h, the code the BPF programs run,
 * replayed against a model of the kernel's UDP receive path: datagrams are
 * queued on the receive queue, and a reader whose reader_queue is empty moves
 * the whole receive queue there at once before taking the first (as
 * __skb_recv_udp() does). Each datagram carries its true enqueue time, and
 * each test plays one kernel behaviour (every enqueue signalled,
 * only-when-empty signalling, batched signals, MSG_PEEK, failed reads, a read
 * that dequeues and fails, several readers racing, an overfull queue) and
 * checks the dwell times the FIFO reports. The model also counts which queue
 * lengths each event read, to check that the fast paths stay on their own
 * side's cache lines.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#define KQ_SIZE 16384

/* the kernel side: true enqueue times; [head, split) is reader_queue, [split, tail) the receive queue */
struct kq {
	uint64_t t[KQ_SIZE];
	unsigned int head, split, tail;
	unsigned int rcv_reads, rdr_reads; /* how often the FIFO read each length */
};

static uint32_t kq_rcv(const void *q)
{
	struct kq *k = (struct kq *)q;

	k->rcv_reads++;
	return k->tail - k->split;
}

static uint32_t kq_rdr(const void *q)
{
	struct kq *k = (struct kq *)q;

	k->rdr_reads++;
	return k->split - k->head;
}

#include "bpf/contract/udpdwell_fifo.h"

/* the two steps of each event, composed as bpf/udpdwell.bpf.h composes them */
static void on_enqueue(struct ud_sock *st, uint64_t now, struct kq *q)
{
	if (!ud_enqueue_stamp(st, now, kq_rcv(q)))
		ud_enqueue_resync(st, now, kq_rcv(q) + kq_rdr(q));
}

static int64_t on_read(struct ud_sock *st, struct ud_sock_stats *s, uint64_t now, struct kq *q,
		       uint64_t epoch)
{
	uint32_t rdr = kq_rdr(q);

	if (ud_read_must_check(st, now, rdr))
		ud_read_resync(st, now, rdr, kq_rcv(q) + rdr);
	return ud_read_pop(st, s, now, rdr, epoch);
}

static unsigned int kq_len(const struct kq *q) { return q->tail - q->head; }
static void kq_push(struct kq *q, uint64_t t) { q->t[q->tail++ % KQ_SIZE] = t; }

/* a reader takes the oldest datagram, moving the receive queue over first if need be */
static uint64_t kq_take(struct kq *q)
{
	if (q->head == q->split)
		q->split = q->tail;
	return q->t[q->head++ % KQ_SIZE];
}

/* reads matched: the sum of the buckets */
static uint64_t packets(const struct ud_sock_stats *s)
{
	uint64_t n = 0;

	for (int i = 0; i < UD_NBUCKETS; i++)
		n += s->buckets[i];
	return n;
}

struct fixture {
	struct ud_sock *st;
	struct ud_sock_stats cpu[2]; /* two CPUs' figures */
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

static uint64_t fifo_len(const struct fixture *f) { return f->st->tail - f->st->head; }

/* a datagram enqueued at t, signalled at once (or not) */
static void enqueue(struct fixture *f, uint64_t t, bool signal)
{
	kq_push(&f->q, t);
	if (signal)
		on_enqueue(f->st, t, &f->q);
}

/* the read event of a datagram already taken, on CPU cpu */
static int64_t read_event(struct fixture *f, uint64_t t, int cpu)
{
	ud_stats_claim(&f->cpu[cpu], f->st->gen);
	return on_read(f->st, &f->cpu[cpu], t, &f->q, 0);
}

/* a plain successful read at t; returns the dwell the FIFO reported */
static int64_t read_one(struct fixture *f, uint64_t t)
{
	uint64_t enq = kq_take(&f->q);

	f->sum_true_ns += t - enq;
	f->n_true++;
	return read_event(f, t, 0);
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
	assert_int_equal(packets(&f->cpu[0]), 4);
	assert_int_equal(f->cpu[0].sum_ns, f->sum_true_ns);
	assert_int_equal(f->cpu[0].max_ns, 11000);
	assert_int_equal(f->cpu[0].unmatched, 0);
}

static void test_fast_paths_read_only_their_own_queue(void **state)
{
	struct fixture *f = *state;
	unsigned int rcv, rdr;

	enqueue(f, 1000, true);
	enqueue(f, 1100, true);
	read_one(f, 2000);
	/* a signal while the receive queue holds datagrams: one stamp, from
	 * the receive queue's length alone */
	rdr = f->q.rdr_reads;
	enqueue(f, 3000, true);
	enqueue(f, 3100, true);
	assert_int_equal(f->q.rdr_reads, rdr);
	assert_int_equal(fifo_len(f), 3);
	/* reads whose cheap check holds: reader_queue's length alone */
	rcv = f->q.rcv_reads;
	assert_int_equal(read_one(f, 4000), 2900);
	assert_int_equal(read_one(f, 4100), 1100);
	assert_int_equal(read_one(f, 4200), 1100);
	assert_int_equal(f->q.rcv_reads, rcv);
	assert_int_equal(f->st->resync_added + f->st->resync_dropped, 0);
	/* UD_CHECK_NS later, a read resynchronises in full */
	enqueue(f, 5000, true);
	rcv = f->q.rcv_reads;
	read_one(f, 5000 + UD_CHECK_NS);
	assert_int_equal(f->q.rcv_reads, rcv + 1);
	assert_int_equal(f->st->read_checked_ns, 5000 + UD_CHECK_NS);
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
	assert_int_equal(f->cpu[0].buckets[0], 1);
	assert_int_equal(f->cpu[0].buckets[2], 1);
	assert_int_equal(f->cpu[0].buckets[8], 1);
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
	assert_int_equal(packets(&f->cpu[0]), 2);
	assert_int_equal(f->cpu[0].sum_ns, f->sum_true_ns);
}

static void test_failed_reads_change_nothing(void **state)
{
	struct fixture *f = *state;

	enqueue(f, 1000, true);
	/* EAGAIN from another thread, and a timeout: skipped before the FIFO */
	assert_int_equal(ud_read_kind(-11, 0x40), 0);
	assert_int_equal(ud_read_kind(-110, 0), 0);
	assert_int_equal(read_one(f, 90001000), 90000000);
	assert_int_equal(f->cpu[0].unmatched, 0);
	assert_int_equal(f->st->resync_dropped, 0);
	assert_int_equal(fifo_len(f), 0);
}

static void test_dequeued_then_failed_read_is_dropped_after_grace(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000;

	/* a datagram taken by a read that then failed (no event): its stamp is
	 * one too many */
	enqueue(f, t, true);
	enqueue(f, t + 100, true);
	kq_take(&f->q);
	/* the next read's resynchronisation sees the excess, but it may be a
	 * race of readers: it only starts timing it; this read is measured
	 * from the stale stamp */
	assert_int_equal(read_one(f, t + 1000), 1000);
	assert_int_equal(f->st->resync_dropped, 0);
	assert_int_equal(f->st->excess_since_ns, t + 1000);
	/* a resynchronisation UD_GRACE_NS later drops it, then matches exactly */
	enqueue(f, t + 2000, true);
	assert_int_equal(read_one(f, t + 1000 + UD_GRACE_NS), UD_GRACE_NS - 1000);
	assert_int_equal(f->st->resync_dropped, 1);
	assert_int_equal(fifo_len(f), 0);
	enqueue(f, t + 3 * UD_GRACE_NS, true);
	assert_int_equal(read_one(f, t + 3 * UD_GRACE_NS + 777), 777);
}

static void test_excess_found_by_the_periodic_resync(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000, gap = 10000; /* 100,000 datagrams/s */
	int64_t d;
	int i;

	/* steady traffic, each datagram read 5 us after its enqueue */
	for (i = 0; i < 10; i++) {
		enqueue(f, t + i * gap, true);
		assert_int_equal(read_one(f, t + i * gap + 5000), 5000);
	}
	/* one datagram taken by a read that failed: no event, no cheap check
	 * sees it; every read is now measured from the previous stamp */
	enqueue(f, t + i * gap, true);
	kq_take(&f->q);
	for (i++; i < 1000; i++) {
		enqueue(f, t + i * gap, true);
		d = read_one(f, t + i * gap + 5000);
		if (d == 5000)
			break;
		assert_int_equal(d, 5000 + gap);
	}
	/* found within a check period plus the grace period, then exact again */
	assert_int_equal(f->st->resync_dropped, 1);
	tk_assert_cmp((uint64_t)i * gap, <=, 10 * gap + UD_CHECK_NS + UD_GRACE_NS + gap);
	for (i++; i < 1010; i++) {
		enqueue(f, t + i * gap, true);
		assert_int_equal(read_one(f, t + i * gap + 5000), 5000);
	}
}

static void test_signal_only_when_queue_was_empty(void **state)
{
	struct fixture *f = *state;

	/* 6.10 to early 6.12: sk_data_ready only for the first of a backlog */
	enqueue(f, 1000, true);
	enqueue(f, 2000, false);
	enqueue(f, 3000, false);
	/* the first read moves all three to reader_queue and is matched
	 * exactly; its cheap check sees the two unstamped ones */
	assert_int_equal(read_one(f, 10000), 9000);
	/* they were stamped at that read: lower bounds */
	assert_int_equal(f->st->resync_added, 2);
	assert_int_equal(read_one(f, 11000), 1000);
	assert_int_equal(read_one(f, 12000), 2000);
	assert_int_equal(packets(&f->cpu[0]), 3);
	assert_int_equal(f->cpu[0].unmatched, 0);
	/* after the queue drained, the next enqueue is signalled again */
	enqueue(f, 20000, true);
	assert_int_equal(read_one(f, 25000), 5000);
}

static void test_batched_signals(void **state)
{
	struct fixture *f = *state;

	/* 6.18: three skbs drained from the per-NUMA list at 5000, then one
	 * sk_data_ready call per skb, each seeing all three queued: one stamp
	 * each, dated by its own call */
	kq_push(&f->q, 5000);
	kq_push(&f->q, 5000);
	kq_push(&f->q, 5000);
	on_enqueue(f->st, 5000, &f->q);
	on_enqueue(f->st, 5010, &f->q);
	on_enqueue(f->st, 5020, &f->q);
	assert_int_equal(fifo_len(f), 3);
	assert_int_equal(read_one(f, 6000), 1000);
	assert_int_equal(read_one(f, 6000), 990);
	assert_int_equal(read_one(f, 6000), 980);
	assert_int_equal(f->cpu[0].unmatched, 0);
	assert_int_equal(f->st->resync_added, 0);
}

static void test_reader_wins_race_against_signal(void **state)
{
	struct fixture *f = *state;

	/* enqueued at 1000, read at 1500 by a busy reader, signalled at 1600 */
	kq_push(&f->q, 1000);
	assert_int_equal(read_one(f, 1500), 0); /* stamped at the read: a lower bound */
	/* the late signal finds the receive queue empty, resynchronises, and
	 * adds nothing */
	on_enqueue(f->st, 1600, &f->q);
	assert_int_equal(fifo_len(f), 0);
	enqueue(f, 2000, true);
	assert_int_equal(read_one(f, 2600), 600);
	assert_int_equal(packets(&f->cpu[0]), 2);
}

static void test_read_resync_leaves_signals_on_the_way(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000;

	/* D0 and D1 signalled and moved to reader_queue by the first read */
	enqueue(f, t, true);
	enqueue(f, t + 100, true);
	read_one(f, t + 1000);
	/* D2 on the receive queue, its signal still on the way */
	kq_push(&f->q, t + 2000);
	/* a read with a full resynchronisation (UD_CHECK_NS since the last)
	 * gives D2 no stamp */
	assert_int_equal(read_one(f, t + 1000 + UD_CHECK_NS), UD_CHECK_NS + 900);
	assert_int_equal(f->st->read_checked_ns, t + 1000 + UD_CHECK_NS);
	assert_int_equal(fifo_len(f), 0);
	/* D2's signal stamps it, once */
	on_enqueue(f->st, t + 2000, &f->q);
	assert_int_equal(read_one(f, t + 2 * UD_CHECK_NS), 2 * UD_CHECK_NS - 2000);
	assert_int_equal(f->st->resync_added + f->st->resync_dropped, 0);
	assert_int_equal(f->st->excess_since_ns, 0);
}

static void test_two_readers_in_flight(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000000;
	int64_t a, b;

	for (int i = 0; i < 4; i++)
		enqueue(f, t + (uint64_t)i * 1000, true);
	/* reader B takes the first datagram but its event comes later; reader
	 * A takes the second and reports first: A's event sees one datagram
	 * fewer than the FIFO holds, which is not a lost datagram */
	kq_take(&f->q);
	kq_take(&f->q);
	a = read_event(f, t + 10000, 0);
	b = read_event(f, t + 10100, 1);
	assert_int_equal(f->st->resync_dropped, 0);
	/* the two reads share the two oldest stamps: the sum is exact */
	assert_int_equal(a + b, (10000 - 1000) + (10100 - 0));
	assert_int_equal(read_one(f, t + 20000), 18000);
	assert_int_equal(read_one(f, t + 20000), 17000);
	/* figures per CPU: user space adds them */
	assert_int_equal(packets(&f->cpu[0]) + packets(&f->cpu[1]), 4);
	assert_int_equal(f->cpu[0].unmatched + f->cpu[1].unmatched, 0);
}

static void test_transient_excess_is_forgiven(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 5000000;

	/* a resynchronisation sees a read in flight (an excess of one) */
	enqueue(f, t, true);
	enqueue(f, t + 10, true);
	enqueue(f, t + 20, true);
	kq_take(&f->q);
	kq_take(&f->q);
	read_event(f, t + 1000, 0);
	assert_int_equal(f->st->excess_since_ns, t + 1000);
	/* the other reader's event, then a read that leaves no stamp beyond
	 * the reader's queue: no excess now, the timing stops */
	read_event(f, t + 1100, 1);
	assert_int_equal(f->st->excess_since_ns, 0);
	read_one(f, t + 1200);
	/* much later, another read in flight is seen: it is timed afresh, not
	 * dropped as if it had lasted since the first */
	enqueue(f, t + 3 * UD_GRACE_NS, true);
	enqueue(f, t + 3 * UD_GRACE_NS + 10, true);
	kq_take(&f->q);
	kq_take(&f->q);
	read_event(f, t + 3 * UD_GRACE_NS + 100, 0);
	assert_int_equal(f->st->resync_dropped, 0);
	read_event(f, t + 3 * UD_GRACE_NS + 200, 1);
	assert_int_equal(f->st->resync_dropped, 0);
	assert_int_equal(f->cpu[0].sum_ns + f->cpu[1].sum_ns,
			 (1000 + 1090 + 1180) + (100 + 190));
}

static void test_recvmmsg_batch(void **state)
{
	struct fixture *f = *state;

	/* recvmmsg fires one read event per datagram, queue shrinking each time */
	for (int i = 0; i < 8; i++)
		enqueue(f, 1000 + (uint64_t)i * 100, true);
	for (int i = 0; i < 8; i++)
		assert_int_equal(read_one(f, 50000), 50000 - (1000 + i * 100));
	/* the final call of the batch returns EAGAIN, skipped */
	assert_int_equal(ud_read_kind(-11, 0x40), 0);
	assert_int_equal(packets(&f->cpu[0]), 8);
	assert_int_equal(f->cpu[0].sum_ns, f->sum_true_ns);
}

static void test_ring_full_is_counted(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < UD_RING + 10; i++)
		enqueue(f, 1000 + (uint64_t)i, true);
	assert_int_equal(fifo_len(f), UD_RING);
	assert_int_equal(f->st->ring_full, 10);
	/* reads free slots; the unstamped ones are stamped late, never lost */
	for (int i = 0; i < UD_RING + 10; i++)
		read_one(f, 1000000);
	assert_int_equal(packets(&f->cpu[0]), UD_RING + 10);
	assert_int_equal(f->cpu[0].unmatched, 0);
}

static void test_large_unsignalled_backlog_in_steps(void **state)
{
	struct fixture *f = *state;

	/* 200 datagrams, one signal: one stamp at the signal, the others at
	 * reads, UD_MAX_STEP at a time */
	for (int i = 0; i < 200; i++)
		enqueue(f, 1000, false);
	on_enqueue(f->st, 2000, &f->q);
	assert_int_equal(fifo_len(f), 1);
	read_one(f, 3000);
	assert_int_equal(fifo_len(f), UD_MAX_STEP);
	for (int i = 1; i < 200; i++)
		read_one(f, 3000);
	assert_int_equal(packets(&f->cpu[0]), 200);
	assert_int_equal(f->cpu[0].unmatched, 0);
	assert_int_equal(f->st->resync_added, 199);
}

static void test_unwritten_stamp_leaves_head(void **state)
{
	struct fixture *f = *state;

	/* a push claimed the slot (tail moved) but has not written it yet */
	kq_push(&f->q, 1000);
	f->st->tail = 1;
	kq_take(&f->q);
	assert_int_equal(read_event(f, 1200, 0), -1);
	assert_int_equal(f->cpu[0].unmatched, 1);
	assert_int_equal(f->st->head, 0);
	/* the stamp lands; it is one too many and goes as an excess */
	f->st->ring[0] = 1000;
	enqueue(f, 5000, true);
	kq_take(&f->q);
	read_event(f, 5000 + UD_CHECK_NS, 0);
	enqueue(f, 6000 + UD_CHECK_NS + UD_GRACE_NS, true);
	kq_take(&f->q);
	assert_int_equal(read_event(f, 6100 + UD_CHECK_NS + UD_GRACE_NS, 0), 100);
	assert_int_equal(f->st->resync_dropped, 1);
}

static void test_interval_maximum_by_epoch(void **state)
{
	struct fixture *f = *state;
	struct ud_sock_stats *s = &f->cpu[0];

	enqueue(f, 1, true);
	kq_take(&f->q);
	on_read(f->st, s, 9001, &f->q, 4);
	enqueue(f, 10000, true);
	kq_take(&f->q);
	on_read(f->st, s, 12000, &f->q, 4);
	assert_int_equal(s->max_epoch_tag[0], 4);
	assert_int_equal(s->max_epoch_ns[0], 9000);
	/* the next interval starts afresh in the other slot */
	enqueue(f, 20000, true);
	kq_take(&f->q);
	on_read(f->st, s, 21000, &f->q, 5);
	assert_int_equal(s->max_epoch_tag[1], 5);
	assert_int_equal(s->max_epoch_ns[1], 1000);
	/* and the one after reuses slot 0 without the old maximum */
	enqueue(f, 30000, true);
	kq_take(&f->q);
	on_read(f->st, s, 30500, &f->q, 6);
	assert_int_equal(s->max_epoch_tag[0], 6);
	assert_int_equal(s->max_epoch_ns[0], 500);
	assert_int_equal(s->max_ns, 9000);
}

static void test_cpu_figures_reset_by_generation(void **state)
{
	struct fixture *f = *state;
	struct ud_sock_stats *s = &f->cpu[1];

	/* figures a CPU kept for the slot's previous socket */
	s->gen = 3;
	s->sum_ns = 777;
	s->buckets[4] = 9;
	s->unmatched = 2;
	s->reads = 11;
	ud_stats_claim(s, 3);
	assert_int_equal(s->sum_ns, 777);
	/* the slot changed hands: this CPU's first read starts afresh */
	f->st->gen = 4;
	enqueue(f, 1000, true);
	kq_take(&f->q);
	assert_int_equal(read_event(f, 1500, 1), 500);
	assert_int_equal(s->gen, 4);
	assert_int_equal(s->sum_ns, 500);
	assert_int_equal(packets(s), 1);
	assert_int_equal(s->unmatched, 0);
	/* the count of every read goes on across the change of hands */
	assert_int_equal(s->reads, 12);
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
		if ((seed >> 33) % 3 && kq_len(&f->q) < 1000) {
			enqueue(f, t, true);
		} else if (kq_len(&f->q)) {
			uint64_t truth = t - f->q.t[f->q.head % KQ_SIZE];

			assert_int_equal(read_one(f, t), truth);
		}
	}
	assert_int_equal(f->cpu[0].sum_ns, f->sum_true_ns);
	assert_int_equal(f->cpu[0].unmatched, 0);
	/* every enqueue was signalled: no stamp had to be added at a read */
	assert_int_equal(f->st->resync_added, 0);
	assert_int_equal(f->st->tail, packets(&f->cpu[0]) + fifo_len(f));
	/* and the slot's count of every read is the reads */
	assert_int_equal(f->cpu[0].reads, packets(&f->cpu[0]) + f->cpu[0].unmatched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_enqueue_signalled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_paths_read_only_their_own_queue, setup,
						teardown),
		cmocka_unit_test(test_bucket_edges_are_upper_inclusive),
		cmocka_unit_test_setup_teardown(test_histogram_filled, setup, teardown),
		cmocka_unit_test(test_peek_and_errqueue_are_ignored),
		cmocka_unit_test_setup_teardown(test_peek_then_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_reads_change_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dequeued_then_failed_read_is_dropped_after_grace,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_excess_found_by_the_periodic_resync, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_signal_only_when_queue_was_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batched_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_wins_race_against_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_resync_leaves_signals_on_the_way, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_readers_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transient_excess_is_forgiven, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recvmmsg_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_full_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_unsignalled_backlog_in_steps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unwritten_stamp_leaves_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_maximum_by_epoch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_figures_reset_by_generation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_interleavings_keep_the_sum, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
