/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's contract between its BPF programs (bpf/ackhold.bpf.c) and the
 * tool (ackhold/): the flows it keeps, the records it sends up, the
 * counters. Fixed-size __u types only, so both compilers agree.
 *
 * A hold is what one ACK of the receiver held: the time from the oldest data
 * segment the ACK is the first to cover to the ACK leaving the host (a pure
 * ACK, or data carrying it). tests/fixtures/quickack/ack_holds.awk measures
 * the same from a capture.
 */
#ifndef BPF_CONTRACT_ACKHOLD_H
#define BPF_CONTRACT_ACKHOLD_H

#include <linux/types.h>

/* local ports one run can name: a handful of services (RTMP 1935, 443...) */
#define AH_PORTS_MAX 8

/* the flows kept at once by default. Each is a hash map entry allocated as
 * the flow comes (the map is not preallocated) and freed as it closes: its
 * header (48 bytes on 64-bit kernels), key and struct ah_flow (240 bytes),
 * in the BPF allocator's next size class, 512 bytes: 32 MiB at most */
#define AH_FLOWS_DEFAULT 65536

/* record kinds */
enum ah_kind {
	/* a hold of min_hold_ns or more, or one the delayed-ACK timer ended;
	 * sent when the flow's next data segment arrives (resume_ns then
	 * known) or when the socket is destroyed (AH_NO_RESUME) */
	AH_REC_HOLD = 1,
	/* a flow's totals, when its socket is destroyed */
	AH_REC_CLOSE = 2,
};

#define AH_NO_RESUME 0xffffffffffffffffULL

/* who a flow is: the local and remote ends as the socket has them */
struct ah_id {
	__u64 cookie;     /* the socket's cookie (ss -e shows it) */
	__u8 laddr[16];   /* IPv4 in the first 4 bytes */
	__u8 raddr[16];
	__u16 lport;      /* host order */
	__u16 rport;      /* host order */
	__u16 family;     /* AF_INET or AF_INET6 */
	__u16 pad;
};

/* a flow's counts since ackhold saw its first segment */
struct ah_totals {
	__u64 first_ns;   /* CLOCK_MONOTONIC of its first data segment */
	__u64 last_ns;    /* of its latest data segment or ACK */
	__u64 segs;       /* data segments in */
	__u64 bytes;      /* payload bytes in */
	__u64 acks;       /* ACKs out that covered new data */
	__u64 timer_acks; /* ACKs the delayed-ACK timer sent: of acks, and of a FIN
			   * no data came with (TcpExtDelayedACKs counts both) */
	__u64 held_ns;    /* the holds of all those ACKs, summed */
};

/* one hold, as sent up */
struct ah_hold {
	__u64 ack_ns;     /* CLOCK_MONOTONIC when the ACK left */
	__u64 hold_ns;    /* oldest covered segment's arrival to the ACK */
	__u64 quiet_ns;   /* the latest segment's arrival to the ACK: no data came meanwhile */
	__u64 resume_ns;  /* the ACK to the next data segment; AH_NO_RESUME: none came */
	__u32 segs;       /* data segments the ACK covered */
	__u32 bytes;      /* their payload */
	__u32 last_len;   /* the latest segment's payload */
	__u32 mss;        /* the receiver's estimate of the sender's MSS (icsk_ack.rcv_mss) */
	__u32 rtt_us;     /* the socket's minimum RTT then, else the receiver's estimate; 0: unknown */
	__u32 ack;        /* the ACK's number (the sender's snd_una once it has it) */
	__u8 timer;       /* 1: the delayed-ACK timer fired for it */
	__u8 answer;      /* 1: the ACK rode on data this host's application sent */
	__u8 repair;      /* 1: a segment of the hold came out of order or again (a loss repaired) */
	__u8 armed;       /* 1: the delayed-ACK timer was armed when the ACK left: the
			   * kernel had scheduled a delayed ACK */
	__u8 unseen;      /* 1: the ACK that ended it, or a segment, went by unseen
			   * (bpf/ackhold.bpf.c's unseen_ack and ah_xmit): only
			   * ack, segs, bytes and timer are known; when a segment
			   * went unseen, ack is the held data's end (segs 0: the
			   * held segment itself unseen, ack the ACK seen) */
};

struct ah_rec {
	__u32 kind;       /* enum ah_kind */
	__u32 pad;
	struct ah_id id;
	union {
		struct ah_hold hold;
		struct ah_totals totals;
	};
};

/* the per-flow state in the flows map (key: the socket's address) */
struct ah_flow {
	struct ah_id id;
	struct ah_totals totals;
	__u64 held_since; /* arrival of the oldest unACKed segment; 0: none */
	__u64 last_seg_ns;
	__u64 timer_ns;   /* when the delayed-ACK timer last fired to send an ACK
			   * while the application held the socket: its handler
			   * then runs later, at the socket's release */
	__u32 timer_ack;  /* the ACK number the timer's handler last sent */
	__u32 timer_ack_valid;
	__u32 end_seq;    /* the furthest end of the segments seen */
	__u32 repair;     /* the running hold has a segment out of order or again */
	__u32 acked;      /* the latest ACK number sent */
	__u32 segs, bytes, last_len;
	__u32 acked_valid;
	struct ah_hold pend; /* the latest reported hold, until data resumes */
	__u32 pend_valid;
};

/* indexes of the counters map (a per-CPU array of __u64) */
enum ah_counter {
	AH_CNT_LOST = 0,      /* records the ring buffer had no room for */
	AH_CNT_UNTRACKED,     /* data segments of flows the full flows map could not take */
	AH_CNT_SEGS,          /* data segments seen on the chosen ports */
	AH_CNT_ACKS,          /* ACKs out that covered new data */
	AH_CNT_TIMER_FIRED,   /* delayed-ACK timer expiries that found an ACK due */
	AH_CNT_UNSEEN,        /* holds whose ACK, or a segment with it, the tracepoints did not show */
	AH_CNT_MAX,
	/* not a BPF counter: the runs of ackhold's programs the kernel skipped
	 * (one of them already running on that CPU), from their bpf_prog_info */
	AH_CNT_SKIPPED = AH_CNT_MAX,
	AH_CNT_ALL,
};

#endif
