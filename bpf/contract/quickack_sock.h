/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * quickack's socket scopes: the contract between the BPF programs
 * (bpf/quickack_sock.bpf.c) and quickack (quickack/sockscope.c). What a
 * scope matches and sets, the counters the programs keep, and the record
 * the iterator writes for each connection that existed before the scope.
 * Fixed-size __u types only, so both compilers agree.
 */
#ifndef BPF_CONTRACT_QUICKACK_SOCK_H
#define BPF_CONTRACT_QUICKACK_SOCK_H

#include <linux/types.h>

/* ports one scope can name: a handful of services (RTMP 1935, RTMPS 443...) */
#define QS_PORTS_MAX 8

/*
 * Which connections a scope matches, and what it sets on them:
 *   QS_SIDE_RECV  connections accepted on one of the local ports: the
 *                 delayed-ACK timer's maximum (TCP_BPF_DELACK_MAX) at the
 *                 kernel's shortest, 2 jiffies (TCP_TIMEOUT_MIN), so that a
 *                 held ACK leaves within 2 jiffies instead of 40 ms or more;
 *   QS_SIDE_SEND  connections made to one of the remote ports: TCP_NODELAY,
 *                 so that Nagle never holds a frame's tail.
 */
enum qs_side { QS_SIDE_RECV = 1, QS_SIDE_SEND = 2 };

/*
 * The delayed-ACK maxima tried, shortest first, in us: 2 jiffies at HZ
 * 1000, 500, 250 and 100. The kernel rounds a value up to whole jiffies and
 * refuses one under TCP_TIMEOUT_MIN (2 jiffies), so the first it takes is
 * this kernel's floor, exactly at these HZ (Debian's kernels: 250, so
 * 8 ms); at another HZ (300) the timer may run up to a jiffy longer.
 */
#define QS_DELACK_TRIES { 2000, 4000, 8000, 20000 }
#define QS_NDELACK_TRIES 4

/* indexes of the counters map (an array of __u64) */
enum qs_counter {
	QS_CNT_NEW = 0,      /* connections set as they were established */
	QS_CNT_EXISTING,     /* connections set by the iterator (they existed before) */
	QS_CNT_FAILED,       /* connections the kernel refused the option on */
	QS_CNT_DELACK_US,    /* the delayed-ACK maximum last set, us (QS_SIDE_RECV) */
	QS_CNT_MAX,
};

/* one connection the iterator matched (bpf_seq_write, in the kernel's order) */
struct qs_conn {
	__u8 saddr[16];      /* local, IPv4 as ::ffff:a.b.c.d */
	__u8 daddr[16];      /* remote */
	__u16 sport;         /* local port, host order */
	__u16 dport;         /* remote port, host order */
	__u8 state;          /* TCP state (TCP_ESTABLISHED...) */
	__u8 pad[3];
	__s32 err;           /* 0: set; else bpf_setsockopt()'s -errno */
	__u32 value;         /* what was set: delayed-ACK maximum in us, or TCP_NODELAY's 1 */
};

#endif
