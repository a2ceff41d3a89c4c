// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbr_traced: kernel BBR with a tap, as a struct_ops congestion control.
 *
 * Every callback calls the kernel's own BBR through its kfuncs, so a flow on
 * bbr_traced runs exactly the code a flow on bbr runs. cong_control reads the
 * max-bw filter before and after bbr_main() and sends one event per ACK.
 *
 * bbr_main() and tcp_congestion_ops.cong_control gained (ack, flag) in 6.10
 * (commit 57bfc7605ca5 "tcp: Add new args for cong_control in
 * tcp_congestion_ops"). bbr_traced_pre610.bpf.c builds this file with the
 * older two-argument form; user space picks one from BTF at run time.
 */
#define BT_RD(p, f) ((p)->f)
#define BT_COOKIE_TP 1
#define BT_DIRECT_CA 1
#include "bbrtrace.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern void bbr_init(struct sock *sk) __ksym;
extern __u32 bbr_sndbuf_expand(struct sock *sk) __ksym;
extern __u32 bbr_undo_cwnd(struct sock *sk) __ksym;
extern void bbr_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern __u32 bbr_ssthresh(struct sock *sk) __ksym;
extern __u32 bbr_min_tso_segs(struct sock *sk) __ksym;
extern void bbr_set_state(struct sock *sk, __u8 new_state) __ksym;
#ifdef BT_BBR_MAIN_2ARGS
extern void bbr_main(struct sock *sk, const struct rate_sample *rs) __ksym;
#else
extern void bbr_main(struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs) __ksym;
#endif

/* false: call bbr_main and nothing else (the benchmark's reference) */
const volatile bool targ_tap = true;

static __always_inline void bt_tap(struct sock *sk, const struct rate_sample *rs, __u32 bw_prev)
{
	struct bt_flow flow;
	__u64 cookie = sk->__sk_common.skc_cookie.counter;

	if (bt_flow_matches(sk, &flow, cookie) && BT_TAP_DOES(BT_STOP_SLOT))
		bt_emit(sk, (struct tcp_sock *)sk, rs, &flow, cookie, bw_prev, BT_SRC_STRUCT_OPS);
}

#ifdef BT_BBR_MAIN_2ARGS
SEC("struct_ops/bt_main")
void BPF_PROG(bt_main, struct sock *sk, const struct rate_sample *rs)
{
	__u32 bw_prev = targ_tap ? bt_bbr_max_bw(sk) : 0;

	bbr_main(sk, rs);
	if (targ_tap)
		bt_tap(sk, rs, bw_prev);
}
#else
SEC("struct_ops/bt_main")
void BPF_PROG(bt_main, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	__u32 bw_prev = targ_tap ? bt_bbr_max_bw(sk) : 0;

	bbr_main(sk, ack, flag, rs);
	if (targ_tap)
		bt_tap(sk, rs, bw_prev);
}
#endif

SEC("struct_ops/bt_init")
void BPF_PROG(bt_init, struct sock *sk)
{
	bbr_init(sk);
}

SEC("struct_ops/bt_sndbuf_expand")
__u32 BPF_PROG(bt_sndbuf_expand, struct sock *sk)
{
	return bbr_sndbuf_expand(sk);
}

SEC("struct_ops/bt_undo_cwnd")
__u32 BPF_PROG(bt_undo_cwnd, struct sock *sk)
{
	return bbr_undo_cwnd(sk);
}

SEC("struct_ops/bt_cwnd_event")
void BPF_PROG(bt_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	bbr_cwnd_event(sk, event);
}

SEC("struct_ops/bt_ssthresh")
__u32 BPF_PROG(bt_ssthresh, struct sock *sk)
{
	return bbr_ssthresh(sk);
}

SEC("struct_ops/bt_min_tso_segs")
__u32 BPF_PROG(bt_min_tso_segs, struct sock *sk)
{
	return bbr_min_tso_segs(sk);
}

SEC("struct_ops/bt_set_state")
void BPF_PROG(bt_set_state, struct sock *sk, __u8 new_state)
{
	bbr_set_state(sk, new_state);
}

/* the same callbacks as net/ipv4/tcp_bbr.c's tcp_bbr_cong_ops, minus get_info,
 * which BPF congestion controls cannot provide */
SEC(".struct_ops")
struct tcp_congestion_ops bbr_traced = {
	.init = (void *)bt_init,
	.cong_control = (void *)bt_main,
	.sndbuf_expand = (void *)bt_sndbuf_expand,
	.undo_cwnd = (void *)bt_undo_cwnd,
	.cwnd_event = (void *)bt_cwnd_event,
	.ssthresh = (void *)bt_ssthresh,
	.min_tso_segs = (void *)bt_min_tso_segs,
	.set_state = (void *)bt_set_state,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = "bbr_traced",
};
