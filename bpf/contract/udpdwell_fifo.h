/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-socket FIFO of enqueue timestamps that matches each read with its
 * enqueue. Compiled twice: into the BPF programs (bpf/udpdwell.bpf.h), and
 * into the unit tests, which replay kernel behaviours against it.
 *
 * It knows two queue lengths, which its caller reads from the socket and
 * passes in:
 *   rcv  datagrams in the socket's receive queue (sk_receive_queue)
 *   rdr  datagrams in UDP's reader_queue (4.13+; 0 where it is absent)
 * The enqueue side has just written the first; the read side has just
 * dequeued from the second. Each side's own queue is a cache line it holds;
 * the other side's is a cache miss, and so are the other side's FIFO index
 * and cache lines. So each event is two steps, and the caller reads the
 * other side's length only when the first step asks for it:
 *   enqueue:  ud_enqueue_stamp(st, now, rcv), and only when it returns false,
 *             ud_enqueue_resync(st, now, rcv + rdr);
 *   read:     ud_read_must_check(st, now, rdr), and only when it returns true,
 *             ud_read_resync(st, now, rdr, rcv + rdr); then ud_read_pop().
 *
 * The ring: slots [head, tail) hold stamps (nonzero), every other slot is 0.
 * A pop therefore needs no look at tail (the enqueue side's line): the slot
 * at head says whether a stamp is there.
 *
 * How the FIFO stays right, whatever the backend:
 *   - An enqueue event with a datagram on the receive queue pushes one stamp,
 *     dated now, from the enqueue side's own lines: the signalled datagram is
 *     still there, since a reader moves the whole receive queue at once and,
 *     with one CPU enqueuing for the socket, nothing can refill it between
 *     the move and the signal. So does each of the signals 6.18 sends, one
 *     per skb, after draining its per-NUMA lists. An enqueue event that finds
 *     the receive queue empty (a reader took the datagram first) or the ring
 *     full brings the FIFO to the real queue length instead (both queues,
 *     both indexes): a late signal adds nothing.
 *   - A read pops the oldest stamp. It resynchronises in full (both queue
 *     lengths, both indexes) only when a cheap check says the FIFO is short,
 *     or when UD_CHECK_NS has passed since its last full one:
 *       - the cheap check, from the read side's own lines: the slot at head
 *         (this datagram's stamp) and the one rdr slots further (the last
 *         datagram waiting in reader_queue, rdr = reader_queue.qlen after the
 *         read) must hold stamps. Kernels 6.10 to early 6.12 call
 *         sk_data_ready only when the queue was empty: the unsignalled
 *         datagrams reach reader_queue at the reader's next bulk move and are
 *         stamped at the first read after it, dated then (lower bounds), as
 *         the old every-event resynchronisation did. A reader that wins the
 *         race against the enqueue signal stamps its datagram itself (dwell
 *         about 0, which it was).
 *       - a read adds stamps only for the datagrams in reader_queue: one still
 *         on the receive queue may have its signal on the way, which stamps
 *         it; stamping it at the read too would make one stamp too many.
 *       - the periodic check finds an excess of stamps over the whole queue
 *         (a datagram that left the queue without a successful read: a read
 *         that dequeued and then failed, a purge; or, with several CPUs
 *         enqueuing for one socket, a signal racing a reader). An excess is
 *         dropped once it has been seen for UD_GRACE_NS with no look between
 *         that saw none, because with several reader threads a read whose
 *         datagram left the queue but whose event has not fired yet makes a
 *         transient one. Meanwhile each dwell is measured from the stamp of
 *         the datagram before.
 *     The trade-off against resynchronising at every event: an excess lasts
 *     up to UD_CHECK_NS + UD_GRACE_NS (2.5 ms) instead of UD_GRACE_NS; the
 *     programs touch the other side's cache lines only then.
 *   - MSG_PEEK and MSG_ERRQUEUE reads leave the queue alone and failed reads
 *     took nothing: the programs skip them before anything else; recvmmsg
 *     fires one read event per datagram.
 *   - All updates of the FIFO are lock-free (cmpxchg on head/tail, stores or
 *     xchg on the slots), as kprobe programs cannot take a bpf_spin_lock. A
 *     pop that meets a slot claimed by a concurrent push but not yet written
 *     looks again UD_SPIN times; then it leaves head alone and counts the
 *     read as unmatched (the pushing CPU was interrupted), and the stamp,
 *     written later, is one too many and goes as an excess. The figures reads
 *     add up are per CPU (struct ud_sock_stats): plain additions, no lock.
 */
#ifndef UD_FIFO_H
#define UD_FIFO_H

#include "udpdwell.h"

#define UD_LOAD(x) (*(volatile __typeof__(x) *)&(x))
#define UD_STORE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define UD_SLOT(st, i) ((st)->ring[(i) & UD_RING_MASK])
#define UD_SPIN 64 /* looks at a claimed slot before calling it unmatched */

/*
 * Bring the FIFO's count of stamps between lo and hi: stamps are added up to
 * lo, and an excess over hi is timed, then dropped. Returns the number of
 * stamps added (positive) or dropped (negative).
 */
static __always_inline int ud_fifo_level(struct ud_sock *st, __u64 now, __u32 lo, __u32 hi,
					 bool at_read)
{
	__u64 h = UD_LOAD(st->head), t = UD_LOAD(st->tail);
	__u64 have = t - h, k, want;

	if (t < h) /* a concurrent pop moved head past our snapshot of tail */
		return 0;
	if (lo > have) {
		if (UD_LOAD(st->excess_since_ns))
			UD_STORE(st->excess_since_ns, 0);
		want = lo - have;
		if (have >= UD_RING) {
			__sync_fetch_and_add(&st->ring_full, 1);
			return 0;
		}
		k = want;
		if (k > UD_RING - have) {
			k = UD_RING - have;
			__sync_fetch_and_add(&st->ring_full, 1);
		}
		if (k > UD_MAX_STEP)
			k = UD_MAX_STEP;
		if (__sync_val_compare_and_swap(&st->tail, t, t + k) != t)
			return 0; /* a concurrent event did it; the next one rechecks */
		for (__u32 i = 0; i < UD_MAX_STEP; i++) {
			if (i >= k)
				break;
			UD_STORE(UD_SLOT(st, t + i), now);
		}
		if (at_read)
			__sync_fetch_and_add(&st->resync_added, k);
		return (int)k;
	}
	if (have <= hi) {
		if (UD_LOAD(st->excess_since_ns))
			UD_STORE(st->excess_since_ns, 0);
		return 0;
	}
	k = have - hi;
	if (!UD_LOAD(st->excess_since_ns)) {
		UD_STORE(st->excess_min, k);
		UD_STORE(st->excess_since_ns, now);
		return 0;
	}
	if (k < UD_LOAD(st->excess_min))
		UD_STORE(st->excess_min, k);
	if (now - UD_LOAD(st->excess_since_ns) < UD_GRACE_NS)
		return 0;
	k = UD_LOAD(st->excess_min);
	if (k > UD_MAX_STEP)
		k = UD_MAX_STEP;
	UD_STORE(st->excess_since_ns, 0);
	if (__sync_val_compare_and_swap(&st->head, h, h + k) != h)
		return 0;
	for (__u32 i = 0; i < UD_MAX_STEP; i++) {
		if (i >= k)
			break;
		__sync_lock_test_and_set(&UD_SLOT(st, h + i), 0);
	}
	__sync_fetch_and_add(&st->resync_dropped, k);
	return -(int)k;
}

/*
 * Take the oldest stamp. Returns its dwell time in ns, or -1 when there was
 * none (head stays).
 */
static __always_inline __s64 ud_fifo_pop(struct ud_sock *st, __u64 now)
{
	for (int tries = 0; tries < 4; tries++) {
		__u64 h = UD_LOAD(st->head), ts = UD_LOAD(UD_SLOT(st, h));

		/* a push that moved tail writes its stamp a moment later */
		for (int spin = 0; spin < UD_SPIN && !ts && UD_LOAD(st->tail) > h; spin++)
			ts = UD_LOAD(UD_SLOT(st, h));
		if (!ts)
			break;
		if (__sync_val_compare_and_swap(&st->head, h, h + 1) != h)
			continue;
		UD_STORE(UD_SLOT(st, h), 0);
		/* stamped by an event whose clock read came after ours: no wait */
		return ts < now ? (__s64)(now - ts) : 0;
	}
	return -1;
}

/*
 * This CPU's figures for the slot's socket of generation gen: started
 * afresh when they belonged to an earlier one.
 */
static __always_inline void ud_stats_claim(struct ud_sock_stats *s, __u32 gen)
{
	if (s->gen != gen) {
		__u32 reads = s->reads;

		__builtin_memset(s, 0, sizeof(*s));
		s->reads = reads;
		s->gen = gen;
	}
}

/* one more read counted, after the figures it went into (see reads) */
static __always_inline void ud_count_read(struct ud_sock_stats *s)
{
	__asm__ __volatile__("" ::: "memory");
	UD_STORE(s->reads, s->reads + 1);
}

/* account one dwell time (or a read without a stamp, dwell_ns < 0) */
static __always_inline void ud_account(struct ud_sock_stats *s, __s64 dwell_ns, __u64 epoch)
{
	__u32 slot = epoch & 1, tag = (__u32)epoch;
	__u64 d = (__u64)dwell_ns;

	if (dwell_ns < 0) {
		s->unmatched++;
		ud_count_read(s);
		return;
	}
	/* the number of reads is the sum of the buckets */
	s->sum_ns += d;
	s->buckets[ud_bucket(d)]++;
	if (d > s->max_ns)
		s->max_ns = d;
	if (s->max_epoch_tag[slot] != tag) {
		s->max_epoch_tag[slot] = tag;
		s->max_epoch_ns[slot] = d;
	} else if (d > s->max_epoch_ns[slot]) {
		s->max_epoch_ns[slot] = d;
	}
	ud_count_read(s);
}

/*
 * What a read event means for the queue: -1 leave it alone (MSG_PEEK and
 * MSG_ERRQUEUE reads do not dequeue), 1 a datagram was consumed (ret >= 0,
 * even 0 for an empty datagram), 0 nothing was (an error such as EAGAIN; a
 * read that dequeued and then failed shows up as an excess later). The
 * programs skip every kind but 1 at once.
 */
static __always_inline int ud_read_kind(long ret, long flags)
{
	if (flags & (UD_MSG_PEEK | UD_MSG_ERRQUEUE))
		return -1;
	return ret >= 0;
}

/*
 * An enqueue signal, the receive queue holding rcv datagrams. When it holds
 * one, the signalled datagram is still there (a reader moves the whole
 * receive queue at once): one stamp, from the enqueue side's own lines, and
 * true. Otherwise (a reader took it, or the kernel signals differently, or
 * the slot is taken) false: the caller brings the FIFO to the queue's length
 * with ud_enqueue_resync().
 */
static __always_inline bool ud_enqueue_stamp(struct ud_sock *st, __u64 now, __u32 rcv)
{
	__u64 t = UD_LOAD(st->tail);

	if (!rcv || UD_LOAD(UD_SLOT(st, t)) ||
	    __sync_val_compare_and_swap(&st->tail, t, t + 1) != t)
		return false;
	UD_STORE(UD_SLOT(st, t), now);
	UD_STORE(st->enq_event_ns, now);
	return true;
}

/* the enqueue signal's slow path: qlen datagrams wait in both queues */
static __always_inline void ud_enqueue_resync(struct ud_sock *st, __u64 now, __u32 qlen)
{
	ud_fifo_level(st, now, qlen, qlen, false);
	UD_STORE(st->enq_event_ns, now);
}

/* the datagrams after this one in reader_queue, as far as the ring can tell */
static __always_inline __u32 ud_rdr_clamp(__u32 rdr)
{
	return rdr > UD_RING - 1 ? UD_RING - 1 : rdr;
}

/*
 * A read took one datagram and left rdr in reader_queue. True when the read
 * must look at the whole queue first (ud_read_resync): UD_CHECK_NS passed
 * since the last full look, or the cheap check, from the read side's own
 * lines, finds no stamp for this datagram or for the last one waiting.
 */
static __always_inline bool ud_read_must_check(struct ud_sock *st, __u64 now, __u32 rdr)
{
	__u64 h = UD_LOAD(st->head);

	return now - UD_LOAD(st->read_checked_ns) >= UD_CHECK_NS || !UD_LOAD(UD_SLOT(st, h)) ||
	       !UD_LOAD(UD_SLOT(st, h + ud_rdr_clamp(rdr)));
}

/*
 * The full look, qlen datagrams in both queues after the read. Stamps only
 * for the datagrams the reader holds: those still on the receive queue may
 * have a signal on its way, which stamps them. The whole queue bounds the
 * excess.
 */
static __always_inline void ud_read_resync(struct ud_sock *st, __u64 now, __u32 rdr, __u32 qlen)
{
	UD_STORE(st->read_checked_ns, now);
	ud_fifo_level(st, now, ud_rdr_clamp(rdr) + 1, qlen + 1, true);
}

/*
 * The read's dwell: the oldest stamp popped and accounted in s, this CPU's
 * figures. Returns the dwell time in ns or -1.
 */
static __always_inline __s64 ud_read_pop(struct ud_sock *st, struct ud_sock_stats *s, __u64 now,
					 __u32 rdr, __u64 epoch)
{
	__s64 dwell = ud_fifo_pop(st, now);

	ud_account(s, dwell, epoch);
	/*
	 * An excess being timed must be seen by every look between: no stamp
	 * past the datagrams reader_queue holds means none now.
	 */
	if (UD_LOAD(st->excess_since_ns) &&
	    !UD_LOAD(UD_SLOT(st, UD_LOAD(st->head) + ud_rdr_clamp(rdr))))
		UD_STORE(st->excess_since_ns, 0);
	UD_STORE(st->read_event_ns, now);
	return dwell;
}

#endif
