// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's passive backend with fentry/fexit on bbr_main: sees every BBR
 * flow of the host, no opt-in. Two pairs of programs, one per bbr_main
 * signature (four arguments since 6.10, two before); user space loads only
 * the pair that matches the running kernel's BTF.
 */
#define BT_RD(p, f) ((p)->f)
#include "bbrtrace.bpf.h"
#include "bbrtrace_stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline void bt_exit(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp;
	struct bt_flow flow;
	__u32 bw_prev;
	__u64 cookie;

	if (!bt_pop(sk, &bw_prev)) {
		bt_count(BT_CNT_STACK);
		return;
	}
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return;
	cookie = bpf_get_socket_cookie(sk);
	if (bt_flow_matches(sk, &flow, cookie))
		bt_emit(sk, tp, rs, &flow, cookie, bw_prev, BT_SRC_FENTRY);
}

SEC("fentry/bbr_main")
int BPF_PROG(bt_fentry4, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	bt_push(sk, bt_bbr_max_bw(sk));
	return 0;
}

SEC("fexit/bbr_main")
int BPF_PROG(bt_fexit4, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	bt_exit(sk, rs);
	return 0;
}

SEC("fentry/bbr_main")
int BPF_PROG(bt_fentry2, struct sock *sk, const struct rate_sample *rs)
{
	bt_push(sk, bt_bbr_max_bw(sk));
	return 0;
}

SEC("fexit/bbr_main")
int BPF_PROG(bt_fexit2, struct sock *sk, const struct rate_sample *rs)
{
	bt_exit(sk, rs);
	return 0;
}
