/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * udpdwell's kernel side, shared by its three backends (tracepoint, fentry,
 * kprobe): the socket filter, the socket's slot in the state array, the
 * enqueue and read handlers around the FIFO of bpf/contract/udpdwell_fifo.h, and drop
 * counting. Everything is aggregated here; nothing is sent to user space per
 * packet.
 *
 * Before including this file, a backend defines UD_RD(ptr, field): a direct
 * load where the verifier knows the pointer's BTF type (tp_btf, fentry),
 * BPF_CORE_READ where it does not (kprobe). UD_TRUSTED_SK also says that sk
 * is such a pointer, which lets the socket find its slot through
 * socket-local storage; without it (kprobe) a hash map does that.
 */
#ifndef UDPDWELL_BPF_H
#define UDPDWELL_BPF_H

#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#ifndef UD_RD
#error "define UD_RD(ptr, field) before including udpdwell.bpf.h"
#endif

#ifdef UD_TRUSTED_SK
/*
 * sk is a BTF pointer the verifier knows as struct sock, so reading UDP's
 * reader_queue needs a cast it accepts: bpf_rdonly_cast() (6.2+), which it
 * turns into a register move. Kernels before 6.2 (Debian 12's 6.1) lack the
 * kfunc: user space clears targ_rdonly_cast, the verifier drops the call as
 * dead code (weak, so libbpf loads the object without it), and a probe read
 * takes its place.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
const volatile bool targ_rdonly_cast = true;
#define UD_RDR_QLEN(sk)                                                                  \
	(targ_rdonly_cast ? (__u32)((struct udp_sock *)bpf_rdonly_cast(                  \
				  (sk), bpf_core_type_id_kernel(struct udp_sock)))        \
				  ->reader_queue.qlen                                     \
			  : (__u32)BPF_CORE_READ((struct udp_sock *)(sk), reader_queue.qlen))
#else
#define UD_RDR_QLEN(sk) ((__u32)UD_RD((struct udp_sock *)(sk), reader_queue.qlen))
#endif

#define UD_Q_RCV(sk) ((__u32)UD_RD((struct sock *)(sk), sk_receive_queue.qlen))
#define UD_Q_RDR(sk) \
	(bpf_core_field_exists(struct udp_sock, reader_queue) ? UD_RDR_QLEN((struct sock *)(sk)) : 0)
#include "bpf/contract/udpdwell_fifo.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u16 targ_port_lo = 10000;
const volatile __u16 targ_port_hi = 60000;
const volatile __u32 targ_max_sockets = UD_DEFAULT_SOCKETS; /* = ud_state's slots */
/* kernel's values of SKB_DROP_REASON_SOCKET_RCVBUFF / PROTO_MEM (from BTF) */
const volatile __u32 targ_reason_rcvbuff = UD_REASON_LEGACY_RCVBUFF;
const volatile __u32 targ_reason_proto_mem = UD_REASON_LEGACY_PROTO_MEM;
#ifdef UD_STAGES
/*
 * enum ud_stage: where the programs stop, in the cost breakdown's objects
 * only (bpf/udpdwell_tp_stages.bpf.c); udpdwell's own objects are built
 * without the knob, whose checks would stay in the code (the verifier drops a
 * branch never taken only when its target is otherwise dead).
 */
const volatile __u32 targ_stop_at = UD_STAGE_ALL;
#define UD_STOP(stage) (targ_stop_at == (stage))
#else
#define UD_STOP(stage) false
#endif

/* user space's interval number, for the per-interval maximum */
__u64 ud_epoch = 0;
/* the CLOCK hand over ud_state's slots */
__u64 ud_hand = 0;

/* the sockets' states, memory-mapped by user space (--max-sockets slots) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UD_DEFAULT_SOCKETS);
	__type(key, __u32);
	__type(value, struct ud_sock);
} ud_state SEC(".maps");

/* what reads add up, per CPU and slot (lazily reset by generation) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UD_DEFAULT_SOCKETS);
	__type(key, __u32);
	__type(value, struct ud_sock_stats);
} ud_stats SEC(".maps");

#ifdef UD_TRUSTED_SK
/* a socket's slot, in the socket itself: freed with it */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ud_sock_ref);
} ud_refs SEC(".maps");
#else
/* a socket's slot, by socket address: an entry per owned slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * UD_DEFAULT_SOCKETS);
	__type(key, __u64);
	__type(value, struct ud_sock_ref);
} ud_index SEC(".maps");
#endif

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4 * UD_DEFAULT_SOCKETS);
	__type(key, struct ud_drop_key);
	__type(value, __u64);
} ud_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UD_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} ud_counters SEC(".maps");

static __always_inline void ud_count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&ud_counters, &idx);

	if (c)
		*c += 1;
}

/* a UDP socket whose local port is in the range; costs two loads otherwise */
static __always_inline bool ud_wanted(struct sock *sk, __u16 *port)
{
	if (!sk || UD_RD(sk, sk_protocol) != UD_IPPROTO_UDP)
		return false;
	*port = UD_RD(sk, __sk_common.skc_num);
	return *port >= targ_port_lo && *port <= targ_port_hi;
}

static __always_inline void ud_fill_identity(struct ud_sock *st, struct sock *sk, __u16 port)
{
	__u16 family = UD_RD(sk, __sk_common.skc_family);

	st->port = port;
	st->family = family;
	if (family == AF_INET) {
		__be32 a = UD_RD(sk, __sk_common.skc_rcv_saddr);

		__builtin_memset(st->addr, 0, 10);
		st->addr[10] = st->addr[11] = 0xff;
		__builtin_memcpy(&st->addr[12], &a, 4);
	} else {
		BPF_CORE_READ_INTO(&st->addr, sk, __sk_common.skc_v6_rcv_saddr);
	}
	st->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	st->ino = BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
}

/*
 * A fresh start for a slot just claimed for sk: a new generation first, so
 * that its previous socket's events stop using it (and its per-CPU figures
 * count for nothing until each CPU's next read resets them), then zeroes. An
 * event of
 * the previous socket already under way on another CPU may still land here;
 * the resynchronisation absorbs a stamp too many or too few.
 */
static __always_inline __u32 ud_slot_reset(struct ud_sock *st, struct sock *sk, __u16 port)
{
	__u32 gen = __sync_fetch_and_add(&st->gen, 1) + 1;
	__u64 h = UD_LOAD(st->head), t = UD_LOAD(st->tail);

	/* the ring's free slots must read 0; head and tail go on from here */
	if (t > h) {
		for (__u32 i = 0; i < UD_RING; i++) {
			if (h + i >= t)
				break;
			UD_STORE(UD_SLOT(st, h + i), 0);
		}
	}
	st->head = t;
	st->enq_event_ns = 0;
	st->ring_full = 0;
	st->read_event_ns = 0;
	st->read_checked_ns = 0;
	st->tgid = 0;
	__builtin_memset(st->comm, 0, sizeof(st->comm));
	st->resync_added = 0;
	st->resync_dropped = 0;
	st->excess_since_ns = 0;
	st->excess_min = 0;
	ud_fill_identity(st, sk, port);
	st->ref = 1;
	return gen;
}

/*
 * A slot for a new socket: a free one, or the least recently active one's.
 * The CLOCK hand sweeps the slots; a slot whose socket was active since the
 * hand last passed has its `ref` cleared and is passed over once (second
 * chance). After UD_CLOCK_SCAN slots the hand takes the one it is on.
 */
static __always_inline struct ud_sock *ud_slot_claim(struct sock *sk, __u16 port,
						     struct ud_sock_ref *ref)
{
	for (__u32 i = 0; i < UD_CLOCK_SCAN; i++) {
		__u32 slot = (__u32)(__sync_fetch_and_add(&ud_hand, 1) % targ_max_sockets);
		struct ud_sock *st = bpf_map_lookup_elem(&ud_state, &slot);
		__u64 owner;

		if (!st)
			return NULL;
		owner = UD_LOAD(st->owner);
		if (owner && UD_LOAD(st->ref) && i < UD_CLOCK_SCAN - 1) {
			UD_STORE(st->ref, 0);
			continue;
		}
		if (__sync_val_compare_and_swap(&st->owner, owner, (__u64)sk) != owner)
			continue;
		if (owner) {
			ud_count(UD_CNT_EVICTED);
#ifndef UD_TRUSTED_SK
			bpf_map_delete_elem(&ud_index, &owner);
#endif
		}
		ref->slot = slot;
		ref->gen = ud_slot_reset(st, sk, port);
		ud_count(UD_CNT_INSERTS);
		return st;
	}
	ud_count(UD_CNT_NO_SLOT);
	return NULL;
}

/* the slot a valid ref points at, or NULL; generation 0 is no slot's */
static __always_inline struct ud_sock *ud_slot_of(const struct ud_sock_ref *ref)
{
	__u32 slot = ref->slot;
	struct ud_sock *st = bpf_map_lookup_elem(&ud_state, &slot);

	if (!st || !ref->gen || UD_LOAD(st->gen) != ref->gen)
		return NULL;
	if (!UD_LOAD(st->ref))
		UD_STORE(st->ref, 1);
	return st;
}

union ud_ref_word {
	__u64 v;
	struct ud_sock_ref r;
};

/*
 * The socket's state through its ref (socket-local storage, or the kprobe
 * index): a slot is claimed on first sight or after an eviction. Two events
 * of a new socket can race to claim one (a read on one CPU while the enqueue
 * that woke the reader is still being handled on another: the function hooks
 * run after the wake-up). The ref is published with one cmpxchg; the loser
 * gives its slot back and uses the winner's, so a socket never has two.
 */
static __always_inline struct ud_sock *ud_ref_resolve(struct ud_sock_ref *ref, struct sock *sk,
						      __u16 port, struct ud_sock_ref *where)
{
	union ud_ref_word seen, mine;
	struct ud_sock *st;

	seen.v = UD_LOAD(*(__u64 *)ref);
	st = ud_slot_of(&seen.r);
	if (st) {
		*where = seen.r;
		return st;
	}
	st = ud_slot_claim(sk, port, &mine.r);
	if (!st)
		return NULL;
	if (__sync_val_compare_and_swap((__u64 *)ref, seen.v, mine.v) == seen.v) {
		*where = mine.r;
		return st;
	}
	__sync_fetch_and_add(&st->gen, 1);
	UD_STORE(st->owner, 0);
	seen.v = UD_LOAD(*(__u64 *)ref);
	st = ud_slot_of(&seen.r);
	if (st)
		*where = seen.r;
	return st;
}

/* the socket's state; where says which slot and generation */
static __always_inline struct ud_sock *ud_sock_get(struct sock *sk, __u16 port,
						   struct ud_sock_ref *where)
{
	struct ud_sock_ref *ref;

#ifdef UD_TRUSTED_SK
	ref = bpf_sk_storage_get(&ud_refs, sk, 0, 0);
	if (!ref) {
		ref = bpf_sk_storage_get(&ud_refs, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!ref) /* also when a racing event created it first */
			ref = bpf_sk_storage_get(&ud_refs, sk, 0, 0);
		if (!ref)
			return NULL;
	}
	return ud_ref_resolve(ref, sk, port, where);
#else
	struct ud_sock_ref none = {};
	__u64 key = (__u64)sk;
	struct ud_sock *st;

	ref = bpf_map_lookup_elem(&ud_index, &key);
	if (!ref) {
		/* an entry with no slot yet; a racing event may add it first */
		bpf_map_update_elem(&ud_index, &key, &none, BPF_NOEXIST);
		ref = bpf_map_lookup_elem(&ud_index, &key);
		if (!ref)
			return NULL;
	}
	st = ud_ref_resolve(ref, sk, port, where);
	if (st && st->port != port) {
		/* the address of a closed socket, reused by a socket on another port */
		where->gen = ud_slot_reset(st, sk, port);
		ref->gen = where->gen;
		ud_count(UD_CNT_REUSED);
	}
	return st;
#endif
}

/*
 * A datagram was enqueued at ts for sk, a wanted socket on port
 * (sk_data_ready, or a successful enqueue function, dated at its start)
 */
static __always_inline void ud_enqueued_wanted(struct sock *sk, __u16 port, __u64 ts)
{
	struct ud_sock_ref where;
	struct ud_sock *st;

	if (UD_STOP(UD_STAGE_CLOCK))
		return;
	st = ud_sock_get(sk, port, &where);
	if (!st || UD_STOP(UD_STAGE_SLOT) || UD_STOP(UD_STAGE_STATS))
		return;
	/* reader_queue, the read side's line, only when the fast path fails */
	if (!ud_enqueue_stamp(st, ts, UD_Q_RCV(sk)))
		ud_enqueue_resync(st, ts, UD_Q_RCV(sk) + UD_Q_RDR(sk));
}

/* the same for any socket */
static __always_inline void ud_enqueued(struct sock *sk, __u64 ts)
{
	__u16 port;

	if (ud_wanted(sk, &port))
		ud_enqueued_wanted(sk, port, ts);
}

/*
 * A read took a datagram at now: the socket's receive queue, the enqueue
 * side's line, is read only for a full look
 */
static __always_inline void ud_read_matched(struct ud_sock *st, struct ud_sock_stats *stats,
					    struct sock *sk, __u64 now)
{
	__u32 rdr = UD_Q_RDR(sk);

	if (ud_read_must_check(st, now, rdr))
		ud_read_resync(st, now, rdr, UD_Q_RCV(sk) + rdr);
	if (UD_STOP(UD_STAGE_FIFO)) {
		ud_fifo_pop(st, now);
		return;
	}
	ud_read_pop(st, stats, now, rdr, ud_epoch);
}

/* a read returned ret with these flags */
static __always_inline void ud_read_done(struct sock *sk, long ret, long flags)
{
	struct ud_sock_stats *stats;
	struct ud_sock_ref where;
	struct ud_sock *st;
	__u32 tgid;
	__u16 port;
	__u64 now;

	/*
	 * Only reads that took a datagram: a failed read changed nothing, or
	 * dequeued and failed, which a later check sees as an excess. This
	 * skips the EAGAIN that ends every recvmmsg batch before any other
	 * work.
	 */
	if (UD_STOP(UD_STAGE_EMPTY) || ud_read_kind(ret, flags) <= 0 || !ud_wanted(sk, &port) ||
	    UD_STOP(UD_STAGE_FILTER))
		return;
	now = bpf_ktime_get_ns();
	if (UD_STOP(UD_STAGE_CLOCK))
		return;
	st = ud_sock_get(sk, port, &where);
	if (!st || UD_STOP(UD_STAGE_SLOT))
		return;
	stats = bpf_map_lookup_elem(&ud_stats, &where.slot);
	if (!stats)
		return;
	ud_stats_claim(stats, where.gen);
	if (UD_STOP(UD_STAGE_STATS))
		return;
	ud_read_matched(st, stats, sk, now);
	if (UD_STOP(UD_STAGE_ACCOUNT))
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (st->tgid != tgid) {
		st->tgid = tgid;
		bpf_get_current_comm(st->comm, sizeof(st->comm));
	}
}

/* a datagram for this socket was dropped, for this reason */
static __always_inline void ud_dropped(struct sock *sk, __u32 reason)
{
	struct ud_drop_key key = { .reason = reason };
	struct ud_sock_ref where;
	__u64 one = 1, *cnt;
	__u16 port;

	if (!ud_wanted(sk, &port))
		return;
	/* the socket's slot holds its identity for user space */
	if (!ud_sock_get(sk, port, &where)) {
		ud_count(UD_CNT_DROPS_NO_SOCK);
		return;
	}
	key.slot = where.slot;
	key.gen = where.gen;
	cnt = bpf_map_lookup_elem(&ud_drops, &key);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
		return;
	}
	if (bpf_map_update_elem(&ud_drops, &key, &one, BPF_NOEXIST) == 0)
		ud_count(UD_CNT_DROP_INSERTS);
	else if ((cnt = bpf_map_lookup_elem(&ud_drops, &key)))
		__sync_fetch_and_add(cnt, 1);
}

/*
 * Drops, the same for every backend. kfree_skb names the receiving socket
 * (rx_sk) on recent kernels, for every drop reason (buffer full, protocol
 * memory, checksum, socket filter, ...). Where it does not, or with
 * --legacy-drops, udp:udp_fail_queue_rcv_skb gives the socket of a failed
 * enqueue and the reason follows from its error code, as in
 * __udp_queue_rcv_skb(): -ENOMEM is a full receive buffer, the rest is
 * protocol memory. User space loads one of the two.
 */
SEC("tp_btf/kfree_skb")
int BPF_PROG(ud_kfree_skb, struct sk_buff *skb, void *location, int reason, struct sock *rx_sk)
{
	if (rx_sk)
		ud_dropped(rx_sk, (__u32)reason);
	return 0;
}

SEC("tp_btf/udp_fail_queue_rcv_skb")
int BPF_PROG(ud_udp_fail_queue, int rc, struct sock *sk)
{
	ud_dropped(sk, rc == -12 /* ENOMEM */ ? targ_reason_rcvbuff : targ_reason_proto_mem);
	return 0;
}

#endif
