// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's passive backend with kprobe/kretprobe on bbr_main, for kernels
 * with kprobes but without BPF trampolines. Arguments come from registers:
 * rs is the 4th argument since 6.10 and the 2nd before, chosen by user space
 * from BTF (targ_rs_arg). The kretprobe has no arguments, so the entry saves
 * sk and rs on a per-CPU stack; pointers are read with probe reads.
 */
#define BT_RD(p, f) BPF_CORE_READ(p, f)
#define BT_RD_BITS(p, f) BPF_CORE_READ_BITFIELD_PROBED(p, f)
#define BT_COOKIE_TP 1
#include "bbrtrace.bpf.h"
#include "bbrtrace_stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile int targ_rs_arg = 4;

/* the rate_sample of the call in progress, per CPU and nesting level */
struct bt_rs_stack {
	__u64 rs[BT_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_rs_stack);
} bt_rs SEC(".maps");

/* large enough for any kernel's struct rate_sample (72 bytes in 6.18) */
struct bt_rs_copy {
	__u64 words[16];
};

SEC("kprobe/bbr_main")
int BPF_KPROBE(bt_kprobe, struct sock *sk)
{
	__u32 zero = 0;
	struct bt_rs_stack *rss = bpf_map_lookup_elem(&bt_rs, &zero);
	struct bt_stack *st = bpf_map_lookup_elem(&bt_stacks, &zero);
	/* two plain loads: a ctx access at a computed offset is refused */
	__u64 arg2 = PT_REGS_PARM2(ctx), arg4 = PT_REGS_PARM4(ctx);
	__u64 rs;

	barrier_var(arg2);
	barrier_var(arg4);
	rs = targ_rs_arg == 2 ? arg2 : arg4;

	if (rss && st && st->depth < BT_STACK_DEPTH)
		rss->rs[st->depth & (BT_STACK_DEPTH - 1)] = rs;
	bt_push(sk, bt_bbr_max_bw(sk));
	return 0;
}

SEC("kretprobe/bbr_main")
int BPF_KRETPROBE(bt_kretprobe)
{
	__u32 zero = 0;
	struct bt_rs_stack *rss = bpf_map_lookup_elem(&bt_rs, &zero);
	struct bt_stack *st = bpf_map_lookup_elem(&bt_stacks, &zero);
	struct bt_rs_copy rs_copy = {};
	struct bt_flow flow;
	struct sock *sk;
	__u32 bw_prev, d;
	__u64 cookie;
	__u32 rs_size;

	if (!rss || !st || st->depth == 0)
		return 0;
	d = st->depth - 1;
	if (d >= BT_STACK_DEPTH) {
		st->depth = d;
		bt_count(BT_CNT_STACK);
		return 0;
	}
	sk = (struct sock *)st->sk[d];
	if (!bt_pop(sk, &bw_prev)) {
		bt_count(BT_CNT_STACK);
		return 0;
	}
	cookie = BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
	if (!bt_flow_matches(sk, &flow, cookie))
		return 0;
	rs_size = bpf_core_type_size(struct rate_sample);
	if (rs_size > sizeof(rs_copy))
		rs_size = sizeof(rs_copy);
	bpf_probe_read_kernel(&rs_copy, rs_size, (void *)rss->rs[d]);
	bt_emit(sk, (struct tcp_sock *)sk, (struct rate_sample *)&rs_copy, &flow, cookie, bw_prev,
		BT_SRC_KPROBE);
	return 0;
}
