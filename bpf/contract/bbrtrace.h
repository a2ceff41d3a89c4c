/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrtrace's contract between its BPF programs (bpf/bbrtrace*.bpf.[ch]) and
 * user space (bbrtrace/): what the kernel side sends per ACK, and the
 * counters it keeps. Fixed-size __u types only, so both compilers agree.
 * bpf/contract/ holds every such contract; bpf/ includes nothing above it.
 */
#ifndef BPF_CONTRACT_BBRTRACE_H
#define BPF_CONTRACT_BBRTRACE_H

#include <linux/types.h>

#define BT_BW_SCALE 24 /* BBR keeps bw in packets per usec << 24 */
#define BT_GAIN_UNIT 256

/*
 * BBR's modes (the kernel's enum bbr_mode), and one of bbrtrace's own: the
 * handshake's ACK reaches bbr_main() before tcp_init_transfer() calls
 * bbr_init(), so that sample's BBR state is not BBR's yet
 */
enum bt_mode { BT_STARTUP = 0, BT_DRAIN = 1, BT_PROBE_BW = 2, BT_PROBE_RTT = 3, BT_HANDSHAKE = 4 };

/* Which kernel hook produced the event. */
enum bt_source { BT_SRC_STRUCT_OPS = 1, BT_SRC_FENTRY = 2, BT_SRC_KPROBE = 3 };

/*
 * What the event is. An ACK: bbr_main() ran for it, every field is set. A
 * write: the application's send() on a traced flow returned (the
 * sock_send_length tracepoint, 6.3+, or fexit on tcp_sendmsg), after TCP
 * sent what it could; only the flow, the tcp_sock fields and these are set:
 *     delivered         the bytes the write queued
 *     prior_in_flight   packets in flight, as tcp_packets_in_flight() counts
 *                       them (packets_out - sacked_out - lost_out + retrans_out)
 *     rtt_us            how far the pacing clock (tp->tcp_wstamp_ns) was ahead
 *                       of now, in us: 0 when pacing held nothing back
 * A close: a traced flow's socket went to TCP_CLOSE (inet_sock_set_state);
 * only t_ns and the flow are set. The detector forgets the flow then.
 */
enum bt_kind { BT_KIND_ACK = 0, BT_KIND_WRITE = 1, BT_KIND_CLOSE = 2 };

struct bt_event {
	__u64 t_ns;              /* CLOCK_MONOTONIC: when TCP took the ACK in (see BT_TSTAMP_LEAD_NS) */
	__u64 cookie;            /* socket cookie (0 if the kernel had none yet) */
	__u8 saddr[16];          /* local address, IPv4 as ::ffff:a.b.c.d */
	__u8 daddr[16];          /* remote address */
	__u16 sport;             /* local port, host order */
	__u16 dport;             /* remote port, host order */
	__u32 netns;             /* network namespace inode */

	/* tcp_sock */
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 mss;
	__u32 cwnd;
	__u64 pacing_rate;       /* sk_pacing_rate, bytes/s; ~0 when unset */

	/* struct rate_sample, as passed to bbr_main */
	__s64 interval_us;
	__s64 rtt_us;
	__s32 delivered;
	__u32 snd_interval_us;
	__u32 rcv_interval_us;
	__s32 losses;
	__u32 acked_sacked;
	__u32 prior_in_flight;
	__u8 is_app_limited;
	__u8 is_retrans;
	__u8 is_ack_delayed;

	/* struct bbr */
	__u8 mode;
	__u8 lt_use_bw;
	__u8 source;             /* enum bt_source */
	__u16 pacing_gain;       /* << 8 */
	__u16 cwnd_gain;         /* << 8 */
	__u8 fin_acked;          /* this ACK covers the sender's FIN: the stream is over */
	__u8 nonagle;            /* tp->nonagle: 0 Nagle on; TCP_NODELAY 1, TCP_CORK 2, push 4 */
	__u32 bw_prev;           /* max-bw filter before this ACK, packets/us << 24 */
	__u32 bw;                /* after */
	__u32 lt_bw;
	__u32 min_rtt_us;

	/* the sender's queue, for stalls: write_seq - snd_nxt bytes were
	 * written and not sent yet; the peer allows up to snd_una + snd_wnd */
	__u32 write_seq;
	__u32 snd_wnd;
	__u8 kind;               /* enum bt_kind */
	__u8 tlp_out;            /* tp->tlp_high_seq set: a tail loss probe (a timer, no tap) is out */
	__u16 sent_ago_us;       /* how long before t_ns the last packet left, pacing time
				  * included (tp->tcp_wstamp_ns), us; 65535 at most, 0 if ahead */
	__u32 bw1;               /* the max-bw filter's other two entries after this ACK */
	__u32 bw2;               /* (bw is the first), packets/us << 24 */
};

/*
 * Where the tap stops, for the benchmark's cost breakdown only
 * (bench/21-bbrtap.sh): each stage adds the work of one step of the tap to
 * the ones before, so the difference between two stages measured in one run
 * is that step's cost. bbrtrace itself always runs BT_STOP_NONE, and the
 * verifier prunes the checks (targ_tap_stop is in .rodata).
 */
enum bt_tap_stop {
	BT_STOP_NONE = 0,        /* the whole tap */
	BT_STOP_FILTER,          /* max-bw before, the cookie, the flow's identity and the filter */
	BT_STOP_SLOT,            /* + a slot in the per-CPU batch (lookup, busy flag, count) */
	BT_STOP_COPY,            /* + the batch's copy to the ring buffer, 16 events at a time */
	BT_STOP_CLOCK,           /* + the timestamp */
	BT_STOP_TCP,             /* + the flow's fields and tcp_sock's */
	BT_STOP_RS,              /* + the rate sample's */
	BT_STOP_MAX,             /* (+ BBR's = the whole tap) */
};

/*
 * How long before the event reaches its per-CPU batch its t_ns may have been
 * taken: in ESTABLISHED, t_ns is the clock read TCP made as the segment came
 * in (tp->tcp_clock_cache), microseconds before bbr_main() runs; this bound
 * leaves room for a preempted socket-backlog run. User space releases events
 * in time order only once they are this much older than its last flush.
 */
#define BT_TSTAMP_LEAD_NS 10000000ULL /* 10 ms */

/* indexes of the per-CPU counters map */
enum bt_counter {
	BT_CNT_LOST = 0,         /* ring buffer full: an ACK's event dropped */
	BT_CNT_STACK,            /* kprobe/fentry entry-exit pairing failed: that ACK's sample
				  * was not made (nested too deep, or a call in progress
				  * at attach) */
	BT_CNT_LOST_WRITES,      /* ring buffer full: a write's event dropped */
	BT_CNT_LOST_CLOSES,      /* ring buffer full: a close's event dropped (the flow's state
				  * stays in the detector until bbrtrace exits) */
	BT_CNT_MAX,
};

#endif
