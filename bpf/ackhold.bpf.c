// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold's programs: how long this host held each ACK of the TCP flows it
 * receives on the chosen ports, from stable tracepoints only (tp_btf: no
 * kprobes, no trampolines, no tracefs), so they run on every kernel the
 * toolkit supports (6.1, 6.12, 6.18):
 *   tcp:tcp_probe           each segment tcp_rcv_established() processes
 *                           (the arrival of data: it starts a hold)
 *   net:net_dev_start_xmit  each packet a tracked socket sends, as it goes
 *                           to the device (where tcpdump sees it): an ACK
 *                           number past the last one ends the hold
 *   timer:timer_expire_entry the delayed-ACK timer (tcp_delack_timer),
 *   timer:timer_expire_exit  found by its function's address, and the
 *                           time its handler runs on a CPU
 *   net:net_dev_queue       each packet as the stack hands it to the device,
 *                           in the sender's context: the ACK the timer's
 *                           handler sends, before a qdisc can defer it
 *   tcp:tcp_destroy_sock    the flow's end: its totals go up, its entry goes
 * The contract, with what a hold is: bpf/contract/ackhold.h.
 */
#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "bpf/contract/ackhold.h"

char LICENSE[] SEC("license") = "GPL";

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)
struct sk_buff {
	unsigned int len;
	unsigned char *data;
	char cb[48];
	unsigned char *head;
	__u16 transport_header;
	struct sock *sk;
};

/* TCP_SKB_CB(skb): the segment's sequence space, set before tcp_rcv_established() */
struct tcp_skb_cb {
	__u32 seq;
	__u32 end_seq;
	__u8 tcp_flags;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct timer_list {
	struct hlist_node entry;   /* pprev set while the timer is armed (timer_pending()) */
	void (*function)(struct timer_list *);
};

/* ___ah: the fields ackhold reads, beside tk_core.bpf.h's own declarations */
struct sock___ah {
	struct {
		int owned; /* sock_owned_by_user() */
	} sk_lock;
};

struct inet_connection_sock___ah {
	struct timer_list icsk_delack_timer;
	struct {
		__u8 pending;
		__u16 rcv_mss;
	} icsk_ack;
};

struct tcp_sock___ah {
	__u32 rcv_nxt;
	__u32 rcv_wup;
	struct minmax rtt_min;
	struct {
		__u32 rtt_us;
	} rcv_rtt_est;
};
#pragma clang attribute pop

/* include/net/inet_connection_sock.h */
enum inet_csk_ack_state_t___ah { ICSK_ACK_TIMER___ah = 2 };
#define AH_TCPHDR_FIN 0x01

/* set by ackhold before loading */
const volatile __u16 ah_ports[AH_PORTS_MAX];
const volatile __u32 ah_nports;
const volatile __u64 ah_min_hold_ns;
const volatile __u64 ah_delack_fn; /* tcp_delack_timer's address (/proc/kallsyms) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, AH_FLOWS_DEFAULT); /* ackhold sets --max-flows */
	__type(key, __u64);                    /* the socket's address */
	__type(value, struct ah_flow);
} ah_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} ah_records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AH_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} ah_counters SEC(".maps");

/* the socket whose delayed-ACK timer runs on this CPU, from
 * timer_expire_entry to timer_expire_exit; 0: none. Timer callbacks run one
 * at a time on a CPU, in its softirq, so a packet queued on this CPU meanwhile
 * by that socket is the timer handler's own */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ah_timer_cpu SEC(".maps");

/* how many CPUs run a traced flow's delayed-ACK timer now: net_dev_queue
 * looks no further while none does (one load for each packet the host sends) */
__u64 ah_timers_running;

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&ah_counters, &idx);

	if (c)
		(*c)++;
}

static __always_inline bool before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline bool port_wanted(__u16 lport)
{
	__u32 i;

	if (!ah_nports)
		return true;
	for (i = 0; i < AH_PORTS_MAX; i++)
		if (i < ah_nports && ah_ports[i] == lport)
			return true;
	return false;
}

static __always_inline void send_hold(const struct ah_flow *f)
{
	struct ah_rec *r = bpf_ringbuf_reserve(&ah_records, sizeof(*r), 0);

	if (!r) {
		count(AH_CNT_LOST);
		return;
	}
	r->kind = AH_REC_HOLD;
	r->pad = 0;
	r->id = f->id;
	r->hold = f->pend;
	bpf_ringbuf_submit(r, 0);
}

static __always_inline void send_close(const struct ah_flow *f)
{
	struct ah_rec *r = bpf_ringbuf_reserve(&ah_records, sizeof(*r), 0);

	if (!r) {
		count(AH_CNT_LOST);
		return;
	}
	r->kind = AH_REC_CLOSE;
	r->pad = 0;
	r->id = f->id;
	__builtin_memset(&r->hold, 0, sizeof(r->hold));
	r->totals = f->totals;
	bpf_ringbuf_submit(r, 0);
}

/* the hold an unseen ACK or segment ended: the ACK's number and what it
 * covered (nothing known when the hold's own segment went unseen); its end,
 * and so its length, not known */
static __always_inline void send_unseen(const struct ah_flow *f, __u32 ack, bool timer)
{
	struct ah_rec *r = bpf_ringbuf_reserve(&ah_records, sizeof(*r), 0);

	if (!r) {
		count(AH_CNT_LOST);
		return;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->kind = AH_REC_HOLD;
	r->id = f->id;
	r->hold.resume_ns = AH_NO_RESUME;
	if (f->held_since) {
		r->hold.segs = f->segs;
		r->hold.bytes = f->bytes;
		r->hold.last_len = f->last_len;
	}
	r->hold.timer = timer;
	r->hold.ack = ack;
	r->hold.unseen = 1;
	bpf_ringbuf_submit(r, 0);
}

/* a new flow's entry: who it is; NULL when the map is full */
static __always_inline struct ah_flow *flow_new(struct sock *sk, __u64 key, __u16 lport)
{
	struct ah_flow init = {};

	init.id.cookie = bpf_get_socket_cookie(sk);
	init.id.lport = lport;
	init.id.rport = bpf_ntohs(sk->__sk_common.skc_dport);
	init.id.family = sk->__sk_common.skc_family;
	if (init.id.family == AF_INET6) {
		BPF_CORE_READ_INTO(&init.id.laddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&init.id.raddr, sk, __sk_common.skc_v6_daddr);
	} else {
		__builtin_memcpy(init.id.laddr, &sk->__sk_common.skc_rcv_saddr, 4);
		__builtin_memcpy(init.id.raddr, &sk->__sk_common.skc_daddr, 4);
	}
	/* -E2BIG when full: the lookup then finds nothing */
	bpf_map_update_elem(&ah_flows, &key, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&ah_flows, &key);
}

/* whether the delayed-ACK timer sent the ACK that ends the running hold:
 * its handler sent it (direct, seen at net_dev_queue), or it fired while the
 * application held the socket (its handler then runs at the socket's
 * release, in the application's context, where no program can tell it from
 * the application's read: the firing's time decides, right but for a read
 * or a segment that sends the ACK first) */
static __always_inline bool timer_sent(const struct ah_flow *f, bool direct)
{
	return direct || (f->held_since && f->timer_ns >= f->held_since);
}

/* a hold ended unseen, by an ACK that covered up to ack: counted and
 * written, not judged */
static __always_inline void hold_unseen(struct ah_flow *f, __u32 ack, bool direct)
{
	bool timer = timer_sent(f, direct);

	count(AH_CNT_UNSEEN);
	send_unseen(f, ack, timer);
	f->totals.acks++;
	f->totals.timer_acks += timer;
	f->held_since = 0;
}

/*
 * An ACK the transmit tracepoint did not show: the kernel sets rcv_wup to
 * rcv_nxt in every segment it sends (tcp_select_window), so a rcv_wup past
 * the last ACK seen, over the held data, is an ACK that left unseen: looked
 * for as the next segment arrives, and as the socket goes. On 6.18, about
 * 1 in 1,000 delayed ACKs reached tcpdump on the device while neither this
 * object's timer program nor its transmit program ran for them (the same
 * with net_dev_queue; recursion_misses 0; not the deferred timer,
 * TcpExtDelayedACKLocked 0); not seen on 6.1 or 6.12. The cause is not
 * found. Such an ACK is counted (the timer's only when the timer program
 * saw the timer fire), and its hold is written with the ACK's number and no
 * length (ended_by unseen): not judged, but a collapse on it finds it.
 */
static __always_inline void unseen_ack(struct sock *sk, struct ah_flow *f)
{
	__u32 wup;

	if (!f->held_since)
		return;
	wup = BPF_CORE_READ((struct tcp_sock___ah *)sk, rcv_wup);
	if (before(wup, f->end_seq) || (f->acked_valid && !before(f->acked, wup)))
		return;
	hold_unseen(f, wup, false);
	f->acked = wup;
	f->acked_valid = 1;
}

/* a FIN with no data on a traced flow: its sequence number is the end the
 * ACK of it covers (ah_xmit takes an ACK past the furthest segment seen
 * for one the tracepoints missed); a hold running ends with it, as with
 * the sender's next data */
static __always_inline void fin_arrived(__u64 key, __u32 end)
{
	struct ah_flow *f = bpf_map_lookup_elem(&ah_flows, &key);

	if (!f)
		return;
	if (before(f->end_seq, end))
		f->end_seq = end;
	if (f->held_since)
		f->last_seg_ns = bpf_ktime_get_ns();
}

/* a data segment arrives: it resumes the flow after a reported hold, and
 * starts a hold unless one is running */
SEC("tp_btf/tcp_probe")
int BPF_PROG(ah_tcp_probe, struct sock *sk, const struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb = (const void *)skb->cb;
	__u16 lport = sk->__sk_common.skc_num;
	__u64 key = (__u64)sk, now;
	__u32 seq, end, len, fin;
	struct ah_flow *f;

	/* the port first: one load, where the segment's reads are three */
	if (!port_wanted(lport))
		return 0;
	seq = BPF_CORE_READ(cb, seq);
	end = BPF_CORE_READ(cb, end_seq);
	fin = !!(BPF_CORE_READ(cb, tcp_flags) & AH_TCPHDR_FIN);
	len = end - seq - fin;
	if ((__s32)len < 0)
		return 0;
	if (!len) {
		if (fin)
			fin_arrived(key, end);
		return 0;
	}
	count(AH_CNT_SEGS);
	f = bpf_map_lookup_elem(&ah_flows, &key);
	if (!f)
		f = flow_new(sk, key, lport);
	if (!f) {
		count(AH_CNT_UNTRACKED);
		return 0;
	}
	now = bpf_ktime_get_ns();
	unseen_ack(sk, f);
	if (f->pend_valid) {
		f->pend.resume_ns = now - f->pend.ack_ns;
		send_hold(f);
		f->pend_valid = 0;
	}
	if (!f->totals.first_ns)
		f->totals.first_ns = now;
	f->totals.last_ns = now;
	f->totals.segs++;
	f->totals.bytes += len;
	/* a segment already ACKed (a retransmission) starts no hold */
	if (f->acked_valid && !before(f->acked, end))
		return 0;
	/* before its processing, the kernel expects rcv_nxt: a segment that
	 * starts elsewhere came out of order; one that starts before the
	 * furthest end came again, after the kernel dropped it */
	if (seq != BPF_CORE_READ((struct tcp_sock___ah *)sk, rcv_nxt) ||
	    (f->held_since && before(seq, f->end_seq)))
		f->repair = 1;
	else if (!f->held_since)
		f->repair = 0;
	if (!f->held_since) {
		f->held_since = now;
		f->segs = 0;
		f->bytes = 0;
	}
	f->segs++;
	f->bytes += len;
	f->last_len = len;
	f->last_seg_ns = now;
	/* the furthest end: a retransmission that fills a hole ends before
	 * the segments after the hole, which the next ACK covers too */
	if (f->totals.segs == 1 || before(f->end_seq, end))
		f->end_seq = end;
	return 0;
}

/* the socket's RTT, us: its minimum over the kernel's window (tcp_min_rtt)
 * where it sends data, else what the receiver measured (tcp_rcv_rtt_measure);
 * 0 when neither is known. Not srtt: a receiver's srtt times its own data's
 * ACKs, which the sender delays in turn (tens of ms in an app-ack push) */
static __always_inline __u32 rtt_us(struct sock *sk)
{
	struct tcp_sock___ah *tp = (void *)sk;
	__u32 min = BPF_CORE_READ(tp, rtt_min.s[0].v);

	return min && min != ~0U ? min : BPF_CORE_READ(tp, rcv_rtt_est.rtt_us) >> 3;
}

/* an ACK past the last one left: the hold it ends */
static __always_inline void ack_sent(struct sock *sk, struct ah_flow *f, __u32 ack, bool answer, bool direct,
				     __u64 now)
{
	struct inet_connection_sock___ah *icsk = (void *)sk;
	__u64 hold = now - f->held_since;
	bool timer = timer_sent(f, direct);

	count(AH_CNT_ACKS);
	f->totals.acks++;
	f->totals.timer_acks += timer;
	f->totals.held_ns += hold;
	f->totals.last_ns = now;
	if (hold >= ah_min_hold_ns || timer) {
		if (f->pend_valid) /* a partial ACK's hold, no data between */
			send_hold(f);
		f->pend.ack_ns = now;
		f->pend.hold_ns = hold;
		f->pend.quiet_ns = now - f->last_seg_ns;
		f->pend.resume_ns = AH_NO_RESUME;
		f->pend.segs = f->segs;
		f->pend.bytes = f->bytes;
		f->pend.last_len = f->last_len;
		f->pend.mss = BPF_CORE_READ(icsk, icsk_ack.rcv_mss);
		f->pend.rtt_us = rtt_us(sk);
		f->pend.timer = timer;
		f->pend.answer = answer;
		f->pend.repair = f->repair;
		/* sending an ACK clears the timer's flags, not the timer
		 * (inet_csk_clear_xmit_timer): still armed here when the kernel
		 * had scheduled a delayed ACK for the held data */
		f->pend.armed = !!BPF_CORE_READ(icsk, icsk_delack_timer.entry.pprev);
		f->pend.ack = ack;
		f->pend.unseen = 0;
		f->pend_valid = 1;
	}
	if (!before(ack, f->end_seq)) {
		f->held_since = 0;
		f->repair = 0;
		return;
	}
	/* it covered part of what arrived: the rest is held from the latest
	 * segment's arrival (the older ones' are not kept; a receiver ACKs
	 * its rcv_nxt, so this is rare) */
	f->held_since = f->last_seg_ns;
	f->segs = 1;
	f->bytes = f->last_len;
}

struct ah_tcphdr {
	__be16 source, dest;
	__be32 seq, ack_seq;
	__u8 doff;   /* the header's length in 32-bit words, in the high nibble */
	__u8 flags;  /* ACK is 0x10 */
	__be16 window, check, urg_ptr;
};

/* whether the packet carries data: its length past the TCP header (skb->data
 * is the link layer's header here, in front of the network's) */
static __always_inline bool has_payload(const struct sk_buff *skb, const struct ah_tcphdr *th)
{
	__u32 before = (__u32)(skb->head + skb->transport_header - skb->data) + (th->doff >> 4) * 4;

	return skb->len > before;
}

/* the TCP header of a packet this host sends; false unless it carries an ACK */
static __always_inline bool read_ack(const struct sk_buff *skb, struct ah_tcphdr *th)
{
	return !bpf_probe_read_kernel(th, sizeof(*th), skb->head + skb->transport_header) &&
	       (th->flags & 0x10);
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(ah_xmit, struct sk_buff *skb, void *dev)
{
	struct sock *sk = skb->sk;
	struct ah_tcphdr th;
	struct ah_flow *f;
	__u64 key = (__u64)sk;
	bool direct;
	__u32 ack;

	/* a flow is a socket on a chosen port: one load spares the hash
	 * lookup to every other packet the host sends */
	if (!sk || !port_wanted(sk->__sk_common.skc_num))
		return 0;
	f = bpf_map_lookup_elem(&ah_flows, &key);
	if (!f)
		return 0;
	if (!read_ack(skb, &th))
		return 0;
	ack = bpf_ntohl(th.ack_seq);
	direct = f->timer_ack_valid && f->timer_ack == ack;
	if (direct)
		f->timer_ack_valid = 0;
	if (f->acked_valid && !before(f->acked, ack))
		return 0;
	f->acked = ack;
	f->acked_valid = 1;
	/*
	 * The ACK number passes only what the kernel has processed, and
	 * tcp_probe shows every segment it processes: one past the furthest
	 * segment tcp_probe showed means it missed one. On 6.18, about once a
	 * push of 100 delayed ACKs: a held segment, or the timer's firing, its
	 * ACK and the sender's next segment together within 0.1 ms; this ACK
	 * would then have closed the timer's hold as the application's read,
	 * or ended none. The hold is written unseen and not judged: with the
	 * held data's end as its ACK number when a hold ran (the ACK that
	 * covered it, this one or one unseen), else this ACK's.
	 */
	if (before(f->end_seq, ack)) {
		hold_unseen(f, f->held_since ? f->end_seq : ack, direct);
		f->end_seq = ack;
		return 0;
	}
	/* a held segment is past the previous ACK (tcp_probe skips the rest):
	 * a new ACK covers held data whenever some is held */
	if (f->held_since)
		ack_sent(sk, f, ack, has_payload(skb, &th), direct, bpf_ktime_get_ns());
	/* else it covers only a FIN that came with no data (fin_arrived): the
	 * kernel delays that ACK too (pingpong mode from CLOSE_WAIT on), and
	 * counts it in TcpExtDelayedACKs when the application's close does not
	 * come first; it ends no hold, but it is the timer's */
	else if (direct)
		f->totals.timer_acks++;
	return 0;
}

/* the end of a timer's callback on this CPU: first in this file so that it
 * attaches before timer_expire_entry, which no exit could then miss */
SEC("tp_btf/timer_expire_exit")
int BPF_PROG(ah_timer_exit, struct timer_list *timer)
{
	__u32 zero = 0;
	__u64 *cpu;

	if (!ah_timers_running)
		return 0;
	cpu = bpf_map_lookup_elem(&ah_timer_cpu, &zero);
	if (!cpu || !*cpu)
		return 0;
	*cpu = 0;
	__sync_fetch_and_sub(&ah_timers_running, 1);
	return 0;
}

/* the ACK the delayed-ACK timer's handler sends, as the stack queues it on
 * this CPU: its number, for ah_xmit to know it when it leaves */
SEC("tp_btf/net_dev_queue")
int BPF_PROG(ah_queue, struct sk_buff *skb)
{
	__u64 key = (__u64)skb->sk, *cpu;
	struct ah_tcphdr th;
	struct ah_flow *f;
	__u32 zero = 0;

	if (!ah_timers_running)
		return 0;
	cpu = bpf_map_lookup_elem(&ah_timer_cpu, &zero);
	if (!cpu || !key || *cpu != key)
		return 0;
	f = bpf_map_lookup_elem(&ah_flows, &key);
	if (!f || !read_ack(skb, &th))
		return 0;
	f->timer_ack = bpf_ntohl(th.ack_seq);
	f->timer_ack_valid = 1;
	f->timer_ns = 0; /* the handler ran: a deferred firing's is done */
	return 0;
}

/* the delayed-ACK timer: it sends the ACK when it finds one due, with
 * ICSK_ACK_TIMER set (tcp_delack_timer_handler(); a timer left over from
 * an ACK already sent finds it clear and does nothing). Its other check, a
 * timeout moved later than the timer, cannot hold here: every kernel moves
 * the timer with the timeout (sk_reset_timer), and 6.18 keeps the timeout
 * in the timer alone. While the application holds the socket, the handler
 * waits for the socket's release (TcpExtDelayedACKLocked): the firing's time
 * is kept for ack_sent. Else the handler runs now, on this CPU, and what its
 * socket queues until timer_expire_exit is the handler's: another CPU's
 * segment may send the ACK first, while the handler waits for the socket's
 * lock, and that ACK is not the timer's (nor in TcpExtDelayedACKs). */
SEC("tp_btf/timer_expire_entry")
int BPF_PROG(ah_timer, struct timer_list *timer, unsigned long baseclk)
{
	struct inet_connection_sock___ah *icsk;
	struct ah_flow *f;
	__u32 zero = 0;
	__u64 key, *cpu;

	if (!ah_delack_fn || (__u64)timer->function != ah_delack_fn)
		return 0;
	/* the socket around the timer, as a plain number: the verifier lets no
	 * trusted pointer be moved before its start (container_of) */
	if (bpf_probe_read_kernel(&key, sizeof(key), &ctx[0]))
		return 0;
	key -= bpf_core_field_offset(struct inet_connection_sock___ah, icsk_delack_timer);
	f = bpf_map_lookup_elem(&ah_flows, &key);
	if (!f)
		return 0;
	icsk = (void *)key;
	if (!(BPF_CORE_READ(icsk, icsk_ack.pending) & ICSK_ACK_TIMER___ah))
		return 0;
	count(AH_CNT_TIMER_FIRED);
	if (BPF_CORE_READ((struct sock___ah *)key, sk_lock.owned)) {
		f->timer_ns = bpf_ktime_get_ns();
		return 0;
	}
	cpu = bpf_map_lookup_elem(&ah_timer_cpu, &zero);
	if (!cpu)
		return 0;
	if (!*cpu)
		__sync_fetch_and_add(&ah_timers_running, 1);
	*cpu = key;
	return 0;
}

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(ah_destroy, struct sock *sk)
{
	__u64 key = (__u64)sk;
	struct ah_flow *f = bpf_map_lookup_elem(&ah_flows, &key);

	if (!f)
		return 0;
	unseen_ack(sk, f); /* the flow's last ACK, which no next segment follows */
	if (f->pend_valid)
		send_hold(f);
	send_close(f);
	bpf_map_delete_elem(&ah_flows, &key);
	return 0;
}
