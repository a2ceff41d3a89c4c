/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What udpdwell's kernel side keeps per UDP socket, shared by the BPF programs
 * and user space (fixed-size __u types only), and the per-socket FIFO of
 * enqueue timestamps that matches each read with its enqueue.
 *
 * The FIFO code below is compiled twice: into the BPF programs, and into the
 * unit tests, which replay kernel behaviours against it.
 *
 * Histogram edges follow Prometheus `le` semantics (upper-inclusive), written
 * down once here: bucket i holds the dwell times d with
 *     le[i-1] < d <= le[i]      (le[-1] = 0, le[8] = +Inf)
 * with le = 10, 50, 100, 500 us, 1, 5, 10, 50 ms. So exactly 10 us falls in
 * the first bucket ("<10 us" in the table means "<= 10 us"), 10.001 us in the
 * second.
 *
 * How the FIFO stays right, whatever the backend:
 *   - It is level-based: every event (enqueue signal or read) carries the
 *     socket's real queue length at that instant (sk_receive_queue.qlen plus
 *     the UDP reader_queue.qlen). A read is seen as "the queue held q_after+1
 *     datagrams just before me". When the queue holds more datagrams than the
 *     FIFO has stamps, stamps are added at once, dated now: this covers
 *     enqueues the kernel did not signal (6.10 to early 6.12 call
 *     sk_data_ready only when the queue was empty), batched enqueues (6.18
 *     drains per-NUMA lists and then signals each skb), and a reader that won
 *     the race against the enqueue signal. Such stamps are lower bounds.
 *   - When the FIFO has more stamps than the queue has datagrams (a datagram
 *     left the queue without a successful read: a checksum error found at
 *     read time, a read that failed after dequeuing, a purge), the oldest
 *     stamps are dropped, but only after the excess has been seen for
 *     UD_GRACE_NS by every event in between: with several reader threads, a
 *     read whose datagram has left the queue but whose read event has not
 *     fired yet makes a transient excess that must not be dropped.
 *   - MSG_PEEK and MSG_ERRQUEUE reads leave the queue alone and are skipped;
 *     recvmmsg fires one read event per datagram; reads that fail count as
 *     "consumed nothing" and only resynchronise.
 *   - All updates are lock-free (cmpxchg on head/tail, xchg on the slot), as
 *     kprobe programs cannot take a bpf_spin_lock. A pop that meets a slot not
 *     yet written by a concurrent push is counted as unmatched.
 */
#ifndef UDPDWELL_H
#define UDPDWELL_H

#include <linux/types.h>

#ifndef __cplusplus
#ifndef bool
#define bool _Bool
#endif
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define UD_NBUCKETS 9
#define UD_RING 2048          /* stamps per socket: a power of two */
#define UD_RING_MASK (UD_RING - 1)
#define UD_MAX_STEP 64        /* stamps added or dropped per event at most */
#define UD_GRACE_NS 2000000ULL /* an excess of stamps must last this long */
#define UD_DEFAULT_SOCKETS 512

#define UD_MSG_PEEK 0x2
#define UD_MSG_ERRQUEUE 0x2000
#define UD_IPPROTO_UDP 17

/* reasons used when the kernel has no enum skb_drop_reason (legacy drops) */
#define UD_REASON_LEGACY_RCVBUFF 0xfffffff1u
#define UD_REASON_LEGACY_PROTO_MEM 0xfffffff2u

/* global per-CPU counters */
enum ud_counter {
	UD_CNT_INSERTS = 0,    /* sockets added to ud_socks */
	UD_CNT_REUSED,         /* a socket address reused by another port: reset */
	UD_CNT_DROP_INSERTS,   /* (socket, reason) pairs added to ud_drops */
	UD_CNT_DROPS_NO_SOCK,  /* drops of a wanted socket that found no room in ud_socks */
	UD_CNT_MAX,
};

struct ud_drop_key {
	__u64 sk;
	__u32 reason; /* enum skb_drop_reason of the running kernel */
	__u32 pad;
};

#define UD_LINE __attribute__((aligned(64)))

/*
 * The enqueue side and the read side often run on different CPUs: what each
 * side writes sits on cache lines of its own, so that a datagram moves as
 * few lines between them as the FIFO allows.
 */
struct ud_sock {
	/* identity, filled when the socket is first seen */
	__u8 addr[16];      /* local address, IPv4 as ::ffff:a.b.c.d */
	__u16 port;         /* local port, host order */
	__u16 family;
	__u32 netns;        /* network namespace inode */
	__u64 ino;          /* socket inode (as in ss and /proc/PID/fd) */

	/* written by the enqueue side */
	__u64 tail UD_LINE; /* stamps pushed; [head, tail) are datagrams queued */
	__u64 enq_event_ns; /* the last enqueue event */
	__u32 enq_queue_len; /* datagrams queued then */
	__u64 ring_full;    /* events that found the ring full (stamps come later) */

	/* written by the read side */
	__u64 head UD_LINE;
	__u64 read_event_ns; /* the last read event */
	__u32 read_queue_len; /* datagrams queued after it */
	__u32 tgid;         /* the last process that read */
	char comm[16];
	__u64 sum_ns;
	__u64 max_ns;
	__u64 max_epoch_ns[2]; /* maximum per interval, slot = epoch & 1 */
	__u64 max_epoch_tag[2];
	__u64 buckets[UD_NBUCKETS] UD_LINE; /* reads matched: their sum */
	__u64 unmatched;
	__u64 resync_added; /* stamps added at a read: enqueues nobody signalled */
	__u64 resync_dropped;
	/* an excess of stamps over the queue, and since when */
	__u64 excess_since_ns;
	__u64 excess_min;

	__u64 ring[UD_RING] UD_LINE;
};

/* upper edges in ns of the first 8 buckets; the 9th is +Inf */
#define UD_LE0 10000ULL
#define UD_LE1 50000ULL
#define UD_LE2 100000ULL
#define UD_LE3 500000ULL
#define UD_LE4 1000000ULL
#define UD_LE5 5000000ULL
#define UD_LE6 10000000ULL
#define UD_LE7 50000000ULL

static __always_inline __u32 ud_bucket(__u64 dwell_ns)
{
	if (dwell_ns <= UD_LE3) {
		if (dwell_ns <= UD_LE1)
			return dwell_ns <= UD_LE0 ? 0 : 1;
		return dwell_ns <= UD_LE2 ? 2 : 3;
	}
	if (dwell_ns <= UD_LE5)
		return dwell_ns <= UD_LE4 ? 4 : 5;
	if (dwell_ns <= UD_LE7)
		return dwell_ns <= UD_LE6 ? 6 : 7;
	return 8;
}

#define UD_LOAD(x) (*(volatile __typeof__(x) *)&(x))
#define UD_STORE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/*
 * Bring the FIFO to `level` datagrams. Returns the number of stamps added
 * (positive) or dropped (negative).
 */
static __always_inline int ud_fifo_level(struct ud_sock *st, __u64 now, __u32 level,
					 bool at_read)
{
	__u64 h = UD_LOAD(st->head), t = UD_LOAD(st->tail);
	__u64 have = t - h, k, want;

	if (t < h) /* a concurrent pop moved head past our snapshot of tail */
		return 0;
	if (level > have) {
		if (UD_LOAD(st->excess_since_ns))
			UD_STORE(st->excess_since_ns, 0);
		want = level - have;
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
			UD_STORE(st->ring[(t + i) & UD_RING_MASK], now);
		}
		if (at_read)
			__sync_fetch_and_add(&st->resync_added, k);
		return (int)k;
	}
	if (level == have) {
		if (UD_LOAD(st->excess_since_ns))
			UD_STORE(st->excess_since_ns, 0);
		return 0;
	}
	k = have - level;
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
		__sync_lock_test_and_set(&st->ring[(h + i) & UD_RING_MASK], 0);
	}
	__sync_fetch_and_add(&st->resync_dropped, k);
	return -(int)k;
}

/*
 * Take the oldest stamp. Returns its dwell time in ns, or -1 when there was
 * none (counted in st->unmatched).
 */
static __always_inline __s64 ud_fifo_pop(struct ud_sock *st, __u64 now)
{
	for (int tries = 0; tries < 4; tries++) {
		__u64 h = UD_LOAD(st->head), t = UD_LOAD(st->tail), ts;

		if (h >= t)
			break;
		if (__sync_val_compare_and_swap(&st->head, h, h + 1) != h)
			continue;
		ts = __sync_lock_test_and_set(&st->ring[h & UD_RING_MASK], 0);
		if (!ts || ts > now)
			break;
		return (__s64)(now - ts);
	}
	__sync_fetch_and_add(&st->unmatched, 1);
	return -1;
}

/* account one dwell time; epoch is user space's interval number */
static __always_inline void ud_account(struct ud_sock *st, __u64 dwell_ns, __u64 epoch)
{
	__u32 slot = epoch & 1;

	/* the number of reads is the sum of the buckets */
	__sync_fetch_and_add(&st->sum_ns, dwell_ns);
	__sync_fetch_and_add(&st->buckets[ud_bucket(dwell_ns)], 1);
	if (dwell_ns > UD_LOAD(st->max_ns))
		UD_STORE(st->max_ns, dwell_ns);
	if (UD_LOAD(st->max_epoch_tag[slot]) != epoch) {
		UD_STORE(st->max_epoch_tag[slot], epoch);
		UD_STORE(st->max_epoch_ns[slot], dwell_ns);
	} else if (dwell_ns > UD_LOAD(st->max_epoch_ns[slot])) {
		UD_STORE(st->max_epoch_ns[slot], dwell_ns);
	}
}

/*
 * What a read event means for the queue: -1 leave it alone (MSG_PEEK and
 * MSG_ERRQUEUE reads do not dequeue), 1 a datagram was consumed (ret >= 0,
 * even 0 for an empty datagram), 0 nothing was (an error such as EAGAIN; a
 * read that dequeued and then failed shows up as an excess later).
 */
static __always_inline int ud_read_kind(long ret, long flags)
{
	if (flags & (UD_MSG_PEEK | UD_MSG_ERRQUEUE))
		return -1;
	return ret >= 0;
}

/* an enqueue signal: the queue holds qlen datagrams now */
static __always_inline void ud_on_enqueue(struct ud_sock *st, __u64 now, __u32 qlen)
{
	ud_fifo_level(st, now, qlen, false);
	UD_STORE(st->enq_queue_len, qlen);
	UD_STORE(st->enq_event_ns, now);
}

/*
 * A read returned: consumed is 1 when it took a datagram (ret >= 0 without
 * MSG_PEEK), q_after the queue length after it. Returns the dwell time in ns
 * or -1.
 */
static __always_inline __s64 ud_on_read(struct ud_sock *st, __u64 now, __u32 q_after,
					__u32 consumed, __u64 epoch)
{
	__s64 dwell = -1;

	ud_fifo_level(st, now, q_after + consumed, true);
	if (consumed) {
		dwell = ud_fifo_pop(st, now);
		if (dwell >= 0)
			ud_account(st, (__u64)dwell, epoch);
	}
	UD_STORE(st->read_queue_len, q_after);
	UD_STORE(st->read_event_ns, now);
	return dwell;
}

#endif
