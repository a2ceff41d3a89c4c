// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's kprobe backend, for kernels with kprobes but without BPF
 * trampolines: kprobe + kretprobe on the enqueue (counted only when it
 * returned 0) and on the UDP read functions. A kretprobe has no arguments,
 * so each entry saves them: per CPU for the enqueue (softirq, never sleeps),
 * per thread for the read (it sleeps and migrates). The enqueue is dated at
 * its start, as in the fentry backend. Pointers are read with probe reads.
 */
#define UD_RD(p, f) BPF_CORE_READ(p, f)
#include "udpdwell.bpf.h"

/* index of `flags` in udp_recvmsg(): 4th argument since 5.19, 5th before */
const volatile __u32 targ_recv_flags_arg = 3;

struct ud_enq_args {
	__u64 sk; /* 0: not a socket of ours */
	__u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ud_enq_args);
} ud_enq SEC(".maps");

struct ud_read_args {
	__u64 sk;
	__u64 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct ud_read_args);
} ud_reads SEC(".maps");

SEC("kprobe/__udp_enqueue_schedule_skb")
int BPF_KPROBE(ud_kp_enqueue, struct sock *sk)
{
	__u32 zero = 0;
	struct ud_enq_args *a = bpf_map_lookup_elem(&ud_enq, &zero);
	__u16 port;

	if (!a)
		return 0;
	a->sk = 0;
	if (ud_wanted(sk, &port)) {
		a->sk = (__u64)sk;
		a->start_ns = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("kretprobe/__udp_enqueue_schedule_skb")
int BPF_KRETPROBE(ud_krp_enqueue, int ret)
{
	__u32 zero = 0;
	struct ud_enq_args *a = bpf_map_lookup_elem(&ud_enq, &zero);
	struct sock *sk;

	if (!a)
		return 0;
	sk = (struct sock *)a->sk;
	a->sk = 0;
	if (ret == 0 && sk)
		ud_enqueued(sk, a->start_ns);
	return 0;
}

static __always_inline void ud_recv_enter(struct pt_regs *ctx, struct sock *sk)
{
	/* two plain loads: a ctx access at a computed offset is refused */
	__u64 arg4 = PT_REGS_PARM4(ctx), arg5 = PT_REGS_PARM5(ctx);
	struct ud_read_args a = { .sk = (__u64)sk };
	__u64 id = bpf_get_current_pid_tgid();

	barrier_var(arg4);
	barrier_var(arg5);
	a.flags = targ_recv_flags_arg == 3 ? arg4 : arg5;
	bpf_map_update_elem(&ud_reads, &id, &a, BPF_ANY);
}

static __always_inline void ud_recv_return(int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ud_read_args *a = bpf_map_lookup_elem(&ud_reads, &id);
	struct ud_read_args copy;

	if (!a)
		return;
	copy = *a;
	bpf_map_delete_elem(&ud_reads, &id);
	ud_read_done((struct sock *)copy.sk, ret, (int)copy.flags);
}

SEC("kprobe/udp_recvmsg")
int BPF_KPROBE(ud_kp_recvmsg, struct sock *sk)
{
	ud_recv_enter(ctx, sk);
	return 0;
}

SEC("kretprobe/udp_recvmsg")
int BPF_KRETPROBE(ud_krp_recvmsg, int ret)
{
	ud_recv_return(ret);
	return 0;
}

SEC("kprobe/udpv6_recvmsg")
int BPF_KPROBE(ud_kp_recvmsg6, struct sock *sk)
{
	ud_recv_enter(ctx, sk);
	return 0;
}

SEC("kretprobe/udpv6_recvmsg")
int BPF_KRETPROBE(ud_krp_recvmsg6, int ret)
{
	ud_recv_return(ret);
	return 0;
}
