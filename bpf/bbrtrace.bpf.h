/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tap shared by bbrtrace's three kernel backends (struct_ops, fentry,
 * kprobe): flow filter, event filling, batched ring-buffer submission.
 *
 * Before including this file, a backend defines BT_RD(ptr, field): a direct
 * load where the verifier knows the pointer's BTF type (struct_ops, fentry),
 * BPF_CORE_READ where it does not (kprobe).
 */
#ifndef BBRTRACE_BPF_H
#define BBRTRACE_BPF_H

#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/contract/bbrtrace.h"

#ifndef BT_RD
#error "define BT_RD(ptr, field) before including bbrtrace.bpf.h"
#endif
/* a bitfield: read in place where the pointer is the kernel's own (fentry,
 * struct_ops), through bpf_probe_read_kernel from a kprobe */
#ifndef BT_RD_BITS
#define BT_RD_BITS(p, f) BPF_CORE_READ_BITFIELD(p, f)
#endif

/* Set by user space before load; zero means "any". */
const volatile __u8 targ_saddr[16] = {};
const volatile __u8 targ_daddr[16] = {};
const volatile bool targ_has_saddr = false;
const volatile bool targ_has_daddr = false;
const volatile __u16 targ_sport = 0;
const volatile __u16 targ_dport = 0;
const volatile __u64 targ_cookie = 0;
/* wake the reader each time 2^shift more bytes wait (it also polls on a timer) */
const volatile __u32 targ_wakeup_shift = 18;
/* enum bt_tap_stop: set by the benchmark's loader only (bench/bbrtap_stages.c) */
const volatile __u32 targ_tap_stop = BT_STOP_NONE;

/* whether the tap does this step (enum bt_tap_stop) */
#define BT_TAP_DOES(step) (targ_tap_stop == BT_STOP_NONE || targ_tap_stop >= (step))

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* resized by user space */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void bt_count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

static __always_inline bool bt_addr_eq(const __u8 *a, const volatile __u8 *b)
{
	const __u64 *x = (const __u64 *)a;
	const volatile __u64 *y = (const volatile __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

struct bt_flow {
	__u8 saddr[16]; /* local, IPv4 as ::ffff:a.b.c.d */
	__u8 daddr[16]; /* remote */
	__u16 sport;    /* host order */
	__u16 dport;
};

static __always_inline void bt_read_addrs(struct sock *sk, struct bt_flow *f)
{
	unsigned short family = BT_RD(sk, __sk_common.skc_family);

	if (family == AF_INET) {
		__be32 s = BT_RD(sk, __sk_common.skc_rcv_saddr);
		__be32 d = BT_RD(sk, __sk_common.skc_daddr);

		__builtin_memset(f->saddr, 0, 10);
		__builtin_memset(f->daddr, 0, 10);
		f->saddr[10] = f->saddr[11] = 0xff;
		f->daddr[10] = f->daddr[11] = 0xff;
		__builtin_memcpy(&f->saddr[12], &s, 4);
		__builtin_memcpy(&f->daddr[12], &d, 4);
	} else {
		BPF_CORE_READ_INTO(&f->saddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&f->daddr, sk, __sk_common.skc_v6_daddr);
	}
}

/*
 * Reads the flow's identity and applies the user's filter to it, before any
 * ring-buffer space is taken: a flow that does not match costs a few loads.
 */
static __always_inline bool bt_flow_matches(struct sock *sk, struct bt_flow *f, __u64 cookie)
{
	if (targ_cookie && cookie != targ_cookie)
		return false;
	f->sport = BT_RD(sk, __sk_common.skc_num);
	f->dport = __builtin_bswap16(BT_RD(sk, __sk_common.skc_dport));
	if (targ_sport && f->sport != targ_sport)
		return false;
	if (targ_dport && f->dport != targ_dport)
		return false;
	bt_read_addrs(sk, f);
	if (targ_has_saddr && !bt_addr_eq(f->saddr, targ_saddr))
		return false;
	if (targ_has_daddr && !bt_addr_eq(f->daddr, targ_daddr))
		return false;
	return true;
}

static __always_inline void bt_fill_flow(struct bt_event *e, const struct bt_flow *f, __u64 cookie)
{
	__builtin_memcpy(e->saddr, f->saddr, 16);
	__builtin_memcpy(e->daddr, f->daddr, 16);
	e->sport = f->sport;
	e->dport = f->dport;
	e->cookie = cookie;
}

/*
 * BBR's private state in inet_csk(sk)->icsk_ca_priv. struct_ops programs see
 * sk as a tcp_sock and may load from it directly (BT_DIRECT_CA); fentry and
 * kprobe programs copy the area in one probe read and decode the copy.
 */
struct bt_bbr_copy {
	__u64 words[ICSK_CA_PRIV_WORDS];
};

static __always_inline void *bt_ca_priv(struct sock *sk)
{
	return (void *)&((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline __u32 bt_bbr_max_bw(struct sock *sk)
{
	struct bbr *bbr = bt_ca_priv(sk);
#ifdef BT_DIRECT_CA
	return bbr->bw.s[0].v;
#else
	__u32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &bbr->bw.s[0].v);
	return v;
#endif
}

/* the ACK of a SYN-ACK (active open) or of the handshake's last ACK (passive) */
static __always_inline bool bt_in_handshake(struct sock *sk)
{
	__u8 state = BT_RD(sk, __sk_common.skc_state);

	return state == TCP_SYN_SENT || state == TCP_SYN_RECV;
}

static __always_inline void bt_fill_bbr(struct sock *sk, struct bt_event *e)
{
#ifdef BT_DIRECT_CA
	struct bbr *bbr = bt_ca_priv(sk);
#else
	struct bt_bbr_copy copy;
	struct bbr *bbr = (struct bbr *)&copy;

	bpf_probe_read_kernel(&copy, sizeof(copy), bt_ca_priv(sk));
#endif
	e->bw = bbr->bw.s[0].v;
	e->bw1 = bbr->bw.s[1].v;
	e->bw2 = bbr->bw.s[2].v;
	e->min_rtt_us = bbr->min_rtt_us;
	e->lt_bw = bbr->lt_bw;
	e->mode = BPF_CORE_READ_BITFIELD(bbr, mode);
	e->lt_use_bw = BPF_CORE_READ_BITFIELD(bbr, lt_use_bw);
	e->pacing_gain = BPF_CORE_READ_BITFIELD(bbr, pacing_gain);
	e->cwnd_gain = BPF_CORE_READ_BITFIELD(bbr, cwnd_gain);
	if (bt_in_handshake(sk))
		e->mode = BT_HANDSHAKE;
}

/* rs may point to the kernel's rate_sample (BTF-typed) or to a stack copy */
static __always_inline void bt_fill_rs(const struct rate_sample *rs, struct bt_event *e)
{
	e->delivered = rs->delivered;
	e->interval_us = rs->interval_us;
	e->snd_interval_us = rs->snd_interval_us;
	e->rcv_interval_us = rs->rcv_interval_us;
	e->rtt_us = rs->rtt_us;
	e->losses = rs->losses;
	e->acked_sacked = rs->acked_sacked;
	e->prior_in_flight = rs->prior_in_flight;
	e->is_app_limited = rs->is_app_limited;
	e->is_retrans = rs->is_retrans;
	e->is_ack_delayed = rs->is_ack_delayed;
}


/* how long before t the last packet left: TCP stamps each with the pacing
 * clock, tp->tcp_wstamp_ns, then moves it on by the packet's pacing time */
static __always_inline __u16 bt_sent_ago_us(__u64 wstamp, __u64 t)
{
	__u64 us = wstamp < t ? (t - wstamp) / NSEC_PER_USEC : 0;

	return us > 65535 ? 65535 : (__u16)us;
}

/* the flow's tcp_sock fields; returns the pacing clock (tp->tcp_wstamp_ns) it read */
static __always_inline __u64 bt_fill_tcp(struct sock *sk, struct tcp_sock *tp, struct bt_event *e)
{
	__u64 wstamp = BT_RD(tp, tcp_wstamp_ns);
	__u8 state = BT_RD(sk, __sk_common.skc_state);

	e->snd_una = BT_RD(tp, snd_una);
	/* write_seq counts the FIN: all of it is acknowledged, FIN included */
	/* the states after the sender's FIN went out */
	e->fin_acked = (state == TCP_FIN_WAIT1 || state == TCP_LAST_ACK || state == TCP_CLOSING) &&
		       e->snd_una == BT_RD(tp, write_seq);
	e->snd_nxt = BT_RD(tp, snd_nxt);
	e->mss = BT_RD(tp, mss_cache);
	e->cwnd = BT_RD(tp, snd_cwnd);
	e->pacing_rate = BT_RD(sk, sk_pacing_rate);
	e->write_seq = BT_RD(tp, write_seq);
	e->snd_wnd = BT_RD(tp, snd_wnd);
	e->nonagle = BT_RD_BITS(tp, nonagle);
	e->tlp_out = BT_RD(tp, tlp_high_seq) != 0;
	e->sent_ago_us = bt_sent_ago_us(wstamp, e->t_ns);
#ifdef BT_DIRECT_CA
	e->netns = sk->__sk_common.skc_net.net->ns.inum;
#else
	e->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
#endif
	return wstamp;
}

/*
 * Wake user space only when the data waiting crosses a multiple of
 * 2^targ_wakeup_shift bytes: a wakeup per ACK costs more than the tap
 * itself, and so would one per ACK while a busy reader lags behind. User
 * space also drains on a short timer, so nothing waits long.
 */
static __always_inline __u64 bt_wakeup_flag(__u64 bytes)
{
	__u64 after = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + bytes;

	return (after >> targ_wakeup_shift) != ((after - bytes) >> targ_wakeup_shift)
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

/*
 * Events are staged per CPU and copied to the ring buffer BT_BATCH at a
 * time: a ring-buffer record per ACK (reserve, commit, and the cache lines
 * the reader on the other CPU keeps pulling away) costs several times more
 * than filling a slot in a hot per-CPU buffer. User space flushes the
 * partial batches every poll period by running bt_flush on each CPU
 * (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU), then puts the events of
 * all CPUs back in time order.
 *
 * `busy` guards against a call nested on the same CPU (a softirq
 * interrupting __release_sock's backlog processing, or the flush IPI): a
 * nested call that finds the batch busy writes its event directly.
 */
#define BT_BATCH 16

struct bt_stage {
	__u32 busy;
	__u32 count;
	struct bt_event ev[BT_BATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_stage);
} bt_stages SEC(".maps");

static __always_inline void bt_count_n(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += n;
}

static __always_inline void bt_stage_flush(struct bt_stage *st)
{
	__u32 n = st->count;
	__u64 bytes;

	if (n == 0)
		return;
	if (n > BT_BATCH)
		n = BT_BATCH;
	bytes = n * sizeof(struct bt_event);
	if (bpf_ringbuf_output(&events, st->ev, bytes, bt_wakeup_flag(bytes))) {
		__u64 writes = 0;

		/* lost: each kind counted apart, so that ACKs lost + ACKs seen = bbr_main's runs */
		for (__u32 i = 0; i < BT_BATCH; i++)
			if (i < n && st->ev[i].kind == BT_KIND_WRITE)
				writes++;
		bt_count_n(BT_CNT_LOST, n - writes);
		bt_count_n(BT_CNT_LOST_WRITES, writes);
	}
	st->count = 0;
}

/* a slot for one event; *stp is the batch it belongs to, or NULL for a
 * ring-buffer record of its own */
static __always_inline struct bt_event *bt_event_begin(struct bt_stage **stp, __u32 lost_idx)
{
	__u32 zero = 0;
	struct bt_stage *st = bpf_map_lookup_elem(&bt_stages, &zero);
	struct bt_event *e;
	__u32 c;

	*stp = NULL;
	if (st && !st->busy) {
		st->busy = 1;
		c = st->count;
		if (c >= BT_BATCH) /* never: a full batch is flushed at once */
			c = 0;
		*stp = st;
		return &st->ev[c];
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		bt_count(lost_idx);
	return e;
}

static __always_inline void bt_event_end(struct bt_stage *st, struct bt_event *e)
{
	if (!st) {
		bpf_ringbuf_submit(e, bt_wakeup_flag(sizeof(*e)));
		return;
	}
	st->count++;
	if (st->count >= BT_BATCH) {
		if (BT_TAP_DOES(BT_STOP_COPY))
			bt_stage_flush(st);
		else
			st->count = 0;
	}
	st->busy = 0;
}

/* run by user space on each CPU in turn; returns 1 when the batch was busy */
SEC("raw_tp")
int bt_flush(void *ctx)
{
	__u32 zero = 0;
	struct bt_stage *st = bpf_map_lookup_elem(&bt_stages, &zero);

	if (!st)
		return 0;
	if (st->busy)
		return 1;
	st->busy = 1;
	bt_stage_flush(st);
	st->busy = 0;
	return 0;
}

/*
 * The ACK's time, CLOCK_MONOTONIC. In ESTABLISHED, tcp_rcv_established()
 * has just read the clock for this segment into tp->tcp_clock_cache
 * (tcp_mstamp_refresh(); 4.20+, commit 5f6188a8003d), a few microseconds
 * before bbr_main(): reusing it saves a clock read per ACK. In the other
 * states tcp_ack() may run without that refresh (tcp_rcv_state_process()),
 * so they read the clock. User space allows for the lead when it orders
 * events (BT_TSTAMP_LEAD_NS).
 */
static __always_inline __u64 bt_ack_time(struct sock *sk, struct tcp_sock *tp)
{
	if (bpf_core_field_exists(tp->tcp_clock_cache) &&
	    BT_RD(sk, __sk_common.skc_state) == TCP_ESTABLISHED)
		return BT_RD(tp, tcp_clock_cache);
	return bpf_ktime_get_ns();
}

/* one sample: the flow already matched the filter */
static __always_inline void bt_emit(struct sock *sk, struct tcp_sock *tp,
				    const struct rate_sample *rs, const struct bt_flow *flow,
				    __u64 cookie, __u32 bw_prev, __u8 source)
{
	struct bt_stage *st;
	struct bt_event *e = bt_event_begin(&st, BT_CNT_LOST);

	if (!e)
		return;
	if (BT_TAP_DOES(BT_STOP_CLOCK)) {
		e->t_ns = bt_ack_time(sk, tp);
		e->source = source;
		e->kind = BT_KIND_ACK;
	}
	if (BT_TAP_DOES(BT_STOP_TCP)) {
		bt_fill_flow(e, flow, cookie);
		bt_fill_tcp(sk, tp, e);
	}
	if (BT_TAP_DOES(BT_STOP_RS))
		bt_fill_rs(rs, e);
	if (BT_TAP_DOES(BT_STOP_MAX)) {
		bt_fill_bbr(sk, e);
		e->bw_prev = bw_prev;
	}
	bt_event_end(st, e);
}

/*
 * The write tap, for stalls: after each send() of a traced flow, what TCP
 * left unsent and why it could not go. User space loads one of the two
 * programs (none without --detect): the sock_send_length tracepoint where
 * the kernel has it (6.3+), else fexit on tcp_sendmsg (fentry backend).
 * Only flows on the congestion control this backend traces: bbr_traced for
 * struct_ops (targ_ca_bbr_traced), bbr for the others; a write costs a few
 * loads before that test, and nothing for a socket that is not TCP.
 */
const volatile bool targ_ca_bbr_traced = false;

#define BT_IPPROTO_TCP 6

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bt_ca_traced compares names as little-endian words"
#endif
/* the names as little-endian words: "bbr\0"; "bbr_trac" then "ed\0" */
#define BT_CA_BBR 0x00726262ull
#define BT_CA_BBR_TRAC 0x636172745f726262ull
#define BT_CA_ED 0x006465ull

/* tp, not sk: a tracepoint's sk is a struct sock to the verifier, which
 * refuses loads past its end, such as inet_connection_sock's */
static __always_inline bool bt_ca_traced(struct tcp_sock *tp)
{
	const struct tcp_congestion_ops *ops = BT_RD((struct inet_connection_sock *)tp, icsk_ca_ops);
	__u64 w[2] = {}; /* the name's first 16 bytes (TCP_CA_NAME_MAX) */

	if (!ops)
		return false;
	BPF_CORE_READ_INTO(&w, ops, name);
	if (targ_ca_bbr_traced)
		return w[0] == BT_CA_BBR_TRAC && (w[1] & 0xffffff) == BT_CA_ED;
	return (w[0] & 0xffffffff) == BT_CA_BBR;
}

static __always_inline void bt_emit_write(struct sock *sk, int ret)
{
	struct tcp_sock *tp;
	struct bt_stage *st;
	struct bt_event *e;
	struct bt_flow flow;
	__u64 cookie, wstamp;

	if (ret <= 0 || BT_RD(sk, sk_protocol) != BT_IPPROTO_TCP)
		return;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp || !bt_ca_traced(tp))
		return;
	cookie = bpf_get_socket_cookie(sk);
	if (!bt_flow_matches(sk, &flow, cookie))
		return;
	e = bt_event_begin(&st, BT_CNT_LOST_WRITES);
	if (!e)
		return;
	e->t_ns = bpf_ktime_get_ns();
	e->kind = BT_KIND_WRITE;
	bt_fill_flow(e, &flow, cookie);
	wstamp = bt_fill_tcp(sk, tp, e);
	e->delivered = ret;
	/* what tcp_cwnd_test() counts (tcp_packets_in_flight): in loss
	 * recovery packets_out alone fills the window while TCP still sends */
	e->prior_in_flight = BT_RD(tp, packets_out) - BT_RD(tp, sacked_out) - BT_RD(tp, lost_out) +
			     BT_RD(tp, retrans_out);
	e->rtt_us = wstamp > e->t_ns ? (__s64)((wstamp - e->t_ns) / NSEC_PER_USEC) : 0;
	bt_event_end(st, e);
}

SEC("?tp_btf/sock_send_length")
int BPF_PROG(bt_write_tp, struct sock *sk, int ret, int flags)
{
	bt_emit_write(sk, ret);
	return 0;
}

struct msghdr;

SEC("?fexit/tcp_sendmsg")
int BPF_PROG(bt_write_fexit, struct sock *sk, struct msghdr *msg, __u64 size, int ret)
{
	bt_emit_write(sk, ret);
	return 0;
}

/* the detector forgets a flow when its socket closes: set by user space with --detect */
const volatile bool targ_close_events = false;

/* a traced flow's socket went to TCP_CLOSE */
static __always_inline void bt_emit_close(struct sock *sk)
{
	struct tcp_sock *tp;
	struct bt_stage *st;
	struct bt_event *e;
	struct bt_flow flow;
	__u64 cookie;

	if (BT_RD(sk, sk_protocol) != BT_IPPROTO_TCP)
		return;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp || !bt_ca_traced(tp))
		return;
	cookie = bpf_get_socket_cookie(sk);
	if (!bt_flow_matches(sk, &flow, cookie))
		return;
	e = bt_event_begin(&st, BT_CNT_LOST_CLOSES);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->t_ns = bpf_ktime_get_ns();
	e->kind = BT_KIND_CLOSE;
	bt_fill_flow(e, &flow, cookie);
	bt_event_end(st, e);
}

/*
 * A TCP socket's state changes. Socket cookies are assigned lazily, on first
 * use: backends that cannot call bpf_get_socket_cookie() on the ACK path
 * (struct_ops, kprobe) read sk->skc_cookie directly, so this assigns one to
 * every TCP socket as it enters the handshake (SYN_SENT when it connects,
 * SYN_RECV when a listener creates it), whose last ACK already reaches
 * bbr_main, or becomes established: a few calls per connection, none per ACK.
 * And a traced flow's close is an event: its detector state goes with it.
 */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(bt_sock_state, struct sock *sk, int oldstate, int newstate)
{
#ifdef BT_COOKIE_TP
	if (newstate == TCP_SYN_SENT || newstate == TCP_SYN_RECV || newstate == TCP_ESTABLISHED)
		bpf_get_socket_cookie(sk);
#endif
	if (targ_close_events && newstate == TCP_CLOSE)
		bt_emit_close(sk);
	return 0;
}

#endif
