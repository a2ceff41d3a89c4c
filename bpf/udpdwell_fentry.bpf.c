// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's fentry backend: fentry and fexit on the enqueue, counted only
 * when it succeeded, and fexit on the UDP read functions (IPv4 and IPv6
 * sockets). The enqueue is dated at its start: its end comes after
 * sk_data_ready() has woken the reader, which is no part of the dwell (a
 * cross-CPU wake-up can take longer than the dwell itself).
 * Sees every enqueue, also on kernels that do not signal each one. On 6.18 a
 * successful __udp_enqueue_schedule_skb() may only have put the skb on a
 * per-NUMA list that another CPU drains: its return still pushes one stamp
 * when the receive queue holds datagrams, and otherwise the FIFO
 * (bpf/contract/udpdwell_fifo.h) stamps it at the first read that finds it in reader_queue.
 */
#define UD_RD(p, f) ((p)->f)
#define UD_TRUSTED_SK 1
#include "udpdwell.bpf.h"

/* index of `flags` in udp_recvmsg(): 3 since 5.19, 4 before (noblock) */
const volatile __u32 targ_recv_flags_arg = 3;

/* the start of this CPU's enqueue (softirqs off: never nested) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ud_enq_start SEC(".maps");

SEC("fentry/__udp_enqueue_schedule_skb")
int BPF_PROG(ud_fentry_enqueue, struct sock *sk)
{
	__u32 zero = 0;
	__u64 *start = bpf_map_lookup_elem(&ud_enq_start, &zero);
	__u16 port;

	if (start && ud_wanted(sk, &port))
		*start = bpf_ktime_get_ns();
	return 0;
}

SEC("fexit/__udp_enqueue_schedule_skb")
int BPF_PROG(ud_fexit_enqueue, struct sock *sk, struct sk_buff *skb, int ret)
{
	__u32 zero = 0;
	__u64 *start = bpf_map_lookup_elem(&ud_enq_start, &zero), ts;

	if (!start)
		return 0;
	ts = *start;
	*start = 0;
	if (ret == 0)
		ud_enqueued(sk, ts ?: bpf_ktime_get_ns());
	return 0;
}

static __always_inline void ud_recv_exit(void *ctx, struct sock *sk)
{
	__u64 flags = 0, ret = 0;

	bpf_get_func_arg(ctx, targ_recv_flags_arg, &flags);
	bpf_get_func_ret(ctx, &ret);
	ud_read_done(sk, (int)ret, (int)flags);
}

SEC("fexit/udp_recvmsg")
int BPF_PROG(ud_fexit_recvmsg, struct sock *sk)
{
	ud_recv_exit(ctx, sk);
	return 0;
}

SEC("fexit/udpv6_recvmsg")
int BPF_PROG(ud_fexit_recvmsg6, struct sock *sk)
{
	ud_recv_exit(ctx, sk);
	return 0;
}
