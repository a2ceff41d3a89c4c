// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's tracepoint backend: stable tracepoints only (tp_btf, so no
 * tracefs is needed), for kernels without kprobes or BPF trampolines.
 *   sock:sk_data_ready     (6.3+) an enqueue signal; sk only
 *   sock:sock_recv_length  (6.3+) every recvmsg return, also for MSG_PEEK,
 *                          MSG_ERRQUEUE and errors, which are filtered;
 *                          recvmmsg fires it once per datagram
 * Drops: skb:kfree_skb or udp:udp_fail_queue_rcv_skb (udpdwell.bpf.h).
 * Kernels 6.10 to early 6.12 signal sk_data_ready only when the queue was
 * empty; the FIFO (bpf/contract/udpdwell_fifo.h) stamps the unsignalled datagrams at the
 * first read that finds them in reader_queue (lower bounds).
 */
#define UD_RD(p, f) ((p)->f)
#define UD_TRUSTED_SK 1
#include "udpdwell.bpf.h"

SEC("tp_btf/sk_data_ready")
int BPF_PROG(ud_tp_data_ready, struct sock *sk)
{
	__u16 port;

	/* the stamp after the filter: other sockets' signals pay no clock read */
	if (UD_STOP(UD_STAGE_EMPTY) || !ud_wanted(sk, &port) || UD_STOP(UD_STAGE_FILTER))
		return 0;
	ud_enqueued_wanted(sk, port, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ud_tp_recv_length, struct sock *sk, int ret, int flags)
{
	ud_read_done(sk, ret, flags);
	return 0;
}
