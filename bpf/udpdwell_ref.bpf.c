// SPDX-License-Identifier: GPL-2.0-only
/*
 * A reference for udpdwell's cost figures (udpdwell --bpf-reference): empty
 * programs on the tracepoint backend's hooks. Their bpf_stats run time is
 * what a program costs there before doing anything: the dispatch and the
 * statistics' own clock reads, which on a virtual machine are not small.
 */
#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sk_data_ready")
int BPF_PROG(ud_ref_data_ready, struct sock *sk)
{
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ud_ref_recv_length, struct sock *sk, int ret, int flags)
{
	return 0;
}

/* the same, plus one clock read: what each of udpdwell's two stamps costs */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(ud_ref_clock_data_ready, struct sock *sk)
{
	return bpf_ktime_get_ns() == 1;
}
