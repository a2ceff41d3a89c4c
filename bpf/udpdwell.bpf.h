/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * udpdwell's kernel side, shared by its three backends (tracepoint, fentry,
 * kprobe): the socket filter, the per-socket state in an LRU map, the enqueue
 * and read handlers around the FIFO of dwell/udpdwell.h, and drop counting.
 * Everything is aggregated here; nothing is sent to user space per packet.
 *
 * Before including this file, a backend defines UD_RD(ptr, field): a direct
 * load where the verifier knows the pointer's BTF type (tp_btf, fentry),
 * BPF_CORE_READ where it does not (kprobe).
 */
#ifndef UDPDWELL_BPF_H
#define UDPDWELL_BPF_H

#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "dwell/udpdwell.h"

#ifndef UD_RD
#error "define UD_RD(ptr, field) before including udpdwell.bpf.h"
#endif

#ifdef UD_TRUSTED_SK
/*
 * sk is a BTF pointer the verifier knows as struct sock, so reading UDP's
 * reader_queue needs a cast it accepts: bpf_rdonly_cast() (6.2+), which it
 * turns into a register move.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define UD_UDP_SK(sk) \
	((struct udp_sock *)bpf_rdonly_cast((sk), bpf_core_type_id_kernel(struct udp_sock)))
#else
#define UD_UDP_SK(sk) ((struct udp_sock *)(sk))
#endif

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u16 targ_port_lo = 10000;
const volatile __u16 targ_port_hi = 60000;
/* kernel's values of SKB_DROP_REASON_SOCKET_RCVBUFF / PROTO_MEM (from BTF) */
const volatile __u32 targ_reason_rcvbuff = UD_REASON_LEGACY_RCVBUFF;
const volatile __u32 targ_reason_proto_mem = UD_REASON_LEGACY_PROTO_MEM;

/* user space's interval number, for the per-interval maximum */
__u64 ud_epoch = 0;

/* the initial value of a socket's state: one zeroed entry, never written */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ud_sock);
} ud_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UD_DEFAULT_SOCKETS); /* --max-sockets */
	__type(key, __u64);                      /* struct sock * */
	__type(value, struct ud_sock);
} ud_socks SEC(".maps");

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

/* datagrams queued: the receive queue plus what a reader already moved */
static __always_inline __u32 ud_qlen(struct sock *sk)
{
	__u32 q = UD_RD(sk, sk_receive_queue.qlen);

	if (bpf_core_field_exists(struct udp_sock, reader_queue))
		q += UD_RD(UD_UDP_SK(sk), reader_queue.qlen);
	return q;
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
 * The socket's state, created on first sight. A socket address reused by a
 * socket on another port starts afresh.
 */
static __always_inline struct ud_sock *ud_sock_get(struct sock *sk, __u16 port)
{
	__u64 key = (__u64)sk;
	struct ud_sock *st = bpf_map_lookup_elem(&ud_socks, &key), *zero;
	__u32 zkey = 0;

	if (st && st->port == port)
		return st;
	zero = bpf_map_lookup_elem(&ud_zero, &zkey);
	if (!zero)
		return NULL;
	if (st) {
		if (bpf_map_update_elem(&ud_socks, &key, zero, BPF_EXIST))
			return NULL;
		ud_count(UD_CNT_REUSED);
	} else if (bpf_map_update_elem(&ud_socks, &key, zero, BPF_NOEXIST) == 0) {
		ud_count(UD_CNT_INSERTS);
	}
	st = bpf_map_lookup_elem(&ud_socks, &key);
	if (st && st->port != port)
		ud_fill_identity(st, sk, port);
	return st;
}

/* an enqueue happened (sk_data_ready, or a successful enqueue function) */
static __always_inline void ud_enqueued(struct sock *sk)
{
	struct ud_sock *st;
	__u16 port;

	if (!ud_wanted(sk, &port))
		return;
	st = ud_sock_get(sk, port);
	if (st)
		ud_on_enqueue(st, bpf_ktime_get_ns(), ud_qlen(sk));
}

/* a read returned ret with these flags */
static __always_inline void ud_read_done(struct sock *sk, long ret, long flags)
{
	int kind = ud_read_kind(ret, flags);
	struct ud_sock *st;
	__u32 tgid;
	__u16 port;

	/*
	 * Only reads that took a datagram: a failed read changed nothing, or
	 * dequeued and failed, which the next event sees as an excess. This
	 * skips the EAGAIN that ends every recvmmsg batch, at no cost.
	 */
	if (kind <= 0 || !ud_wanted(sk, &port))
		return;
	st = ud_sock_get(sk, port);
	if (!st)
		return;
	ud_on_read(st, bpf_ktime_get_ns(), ud_qlen(sk), kind, ud_epoch);
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
	__u64 one = 1, *cnt;
	__u16 port;

	if (!ud_wanted(sk, &port))
		return;
	/* the socket's state holds its identity for user space */
	if (!ud_sock_get(sk, port))
		ud_count(UD_CNT_DROPS_NO_SOCK);
	key.sk = (__u64)sk;
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
