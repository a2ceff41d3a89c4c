/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel types for the project's BPF programs, CO-RE style.
 *
 * This replaces a generated vmlinux.h: each struct holds only the fields the
 * programs read, and preserve_access_index makes libbpf relocate every access
 * against the running kernel's BTF (vmlinux or module BTF), so field offsets
 * never come from the headers of the build machine.
 *
 * __VMLINUX_H__ is defined so that bpf_tracing.h uses the kernel's register
 * names declared below (x86's pt_regs: di, si, ...; arm64's user_pt_regs:
 * regs[0..30]), chosen by __TARGET_ARCH_x86 or __TARGET_ARCH_arm64.
 */
#ifndef TK_CORE_BPF_H
#define TK_CORE_BPF_H

#define __VMLINUX_H__ 1

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/in6.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
/* icsk_ca_priv, where a congestion control keeps its state (struct bbr):
 * ICSK_CA_PRIV_SIZE in include/net/inet_connection_sock.h, 13 u64 words
 * (104 bytes) in the kernels this toolkit supports */
#define ICSK_CA_PRIV_WORDS 13
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#elif defined(__TARGET_ARCH_arm64)
/* bpf_tracing.h reads arm64's registers through user_pt_regs, which pt_regs begins with */
struct user_pt_regs {
	u64 regs[31];
	u64 sp;
	u64 pc;
	u64 pstate;
};

struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			u64 regs[31];
			u64 sp;
			u64 pc;
			u64 pstate;
		};
	};
	u64 orig_x0;
};
#else
#error "tk_core.bpf.h declares pt_regs for x86 and arm64 only: add this architecture's"
#endif

typedef struct {
	s64 counter;
} atomic64_t;

struct net {
	struct {
		unsigned int inum;
	} ns;
};

typedef struct {
	struct net *net;
} possible_net_t;

struct sock_common {
	union {
		struct {
			__be32 skc_daddr;
			__be32 skc_rcv_saddr;
		};
	};
	union {
		struct {
			__be16 skc_dport;
			__u16 skc_num;
		};
	};
	unsigned short skc_family;
	volatile unsigned char skc_state;
	possible_net_t skc_net;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
	atomic64_t skc_cookie;
};

struct sk_buff_head {
	__u32 qlen;
};

struct inode {
	unsigned long i_ino;
};

struct file {
	struct inode *f_inode;
};

struct socket {
	struct file *file;
};

struct sock {
	struct sock_common __sk_common;
	unsigned long sk_pacing_rate;
	int sk_rcvbuf;
	u16 sk_protocol;
	struct sk_buff_head sk_receive_queue;
	struct socket *sk_socket;
};

/* UDP moves the receive queue to reader_queue in bulk at read time (4.13+) */
struct udp_sock {
	struct sk_buff_head reader_queue;
};

struct sk_buff;

struct tcp_congestion_ops;

struct inet_connection_sock {
	const struct tcp_congestion_ops *icsk_ca_ops;
	u64 icsk_ca_priv[ICSK_CA_PRIV_WORDS];
};

struct tcp_sock {
	u32 snd_una;
	u32 snd_nxt;
	u32 mss_cache;
	u32 snd_cwnd;
	u32 srtt_us;
	u32 delivered;
	u32 app_limited;
	u32 write_seq;
	u32 snd_wnd;         /* the window the peer offers, bytes from snd_una */
	u32 packets_out;
	u32 sacked_out;      /* with lost_out and retrans_out: tcp_packets_in_flight() */
	u32 lost_out;
	u32 retrans_out;
	u32 tlp_high_seq;    /* snd_nxt when a tail loss probe went out; 0 once it is ACKed */
	u64 tcp_wstamp_ns;   /* 4.20+: when pacing lets the next packet go (CLOCK_MONOTONIC) */
	u8 nonagle: 4;       /* TCP_NAGLE_OFF 1 (TCP_NODELAY), _CORK 2, _PUSH 4; a
			      * bitfield whose place CO-RE finds in each kernel */
	u64 tcp_clock_cache; /* 4.20+: CLOCK_MONOTONIC ns of the last tcp_mstamp_refresh() */
};

struct rate_sample {
	u64 prior_mstamp;
	u32 prior_delivered;
	s32 delivered;
	long interval_us;
	u32 snd_interval_us;
	u32 rcv_interval_us;
	long rtt_us;
	int losses;
	u32 acked_sacked;
	u32 prior_in_flight;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
};

/* net/ipv4/tcp_bbr.c: private to BBR, found in vmlinux or tcp_bbr module BTF */
struct minmax_sample {
	u32 t;
	u32 v;
};

struct minmax {
	struct minmax_sample s[3];
};

struct bbr {
	u32 min_rtt_us;
	struct minmax bw;
	u32 mode : 3;
	u32 lt_use_bw : 1;
	u32 lt_bw;
	u32 pacing_gain : 10;
	u32 cwnd_gain : 10;
	u32 full_bw_reached : 1;
};

#pragma clang attribute pop

enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

union tcp_cc_info;
struct ack_sample;

/* Matched by name against the kernel's struct when registered as struct_ops. */
struct tcp_congestion_ops {
	u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, u32 ack, u32 acked);
	void (*set_state)(struct sock *sk, u8 new_state);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	void (*in_ack_event)(struct sock *sk, u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, u32 ack, int flag, const struct rate_sample *rs);
	u32 (*undo_cwnd)(struct sock *sk);
	u32 (*sndbuf_expand)(struct sock *sk);
	char name[16];
	u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
};

#define TCP_CONG_NON_RESTRICTED 0x1
/* include/net/tcp_states.h */
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define TCP_FIN_WAIT1 4
#define TCP_CLOSE 7
#define TCP_LAST_ACK 9
#define TCP_CLOSING 11
/* include/vdso/time64.h: the BPF programs cannot include lib/common.h (user
 * space's headers), so they take the kernel's own unit, by its name */
#define NSEC_PER_USEC 1000L

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#endif
