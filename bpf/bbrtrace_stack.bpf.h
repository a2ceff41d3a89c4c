/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pairing of entry and exit probes on bbr_main for the fentry and kprobe
 * backends: the entry saves the max-bw filter before the call, the exit reads
 * it after. A per-CPU stack, not a single slot, because bbr_main can nest on
 * one CPU: __release_sock() runs the socket backlog with BHs enabled, so a
 * softirq may process another socket's ACK in the middle of a call.
 */
#ifndef BBRTRACE_STACK_BPF_H
#define BBRTRACE_STACK_BPF_H

#define BT_STACK_DEPTH 4

struct bt_stack {
	__u32 depth;
	__u32 bw[BT_STACK_DEPTH];
	__u64 sk[BT_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_stack);
} bt_stacks SEC(".maps");

static __always_inline void bt_push(struct sock *sk, __u32 bw)
{
	__u32 zero = 0;
	struct bt_stack *st = bpf_map_lookup_elem(&bt_stacks, &zero);
	__u32 d;

	if (!st)
		return;
	d = st->depth;
	if (d < BT_STACK_DEPTH) {
		st->bw[d] = bw;
		st->sk[d] = (__u64)sk;
	}
	st->depth = d + 1; /* counts past the top too, so pops stay paired */
}

/* returns false when the entry was not recorded (stack overflow or a probe
 * attached in the middle of a call) */
static __always_inline bool bt_pop(struct sock *sk, __u32 *bw)
{
	__u32 zero = 0;
	struct bt_stack *st = bpf_map_lookup_elem(&bt_stacks, &zero);
	__u32 d;

	if (!st || st->depth == 0)
		return false;
	d = --st->depth;
	if (d >= BT_STACK_DEPTH || st->sk[d] != (__u64)sk)
		return false;
	*bw = st->bw[d];
	return true;
}

#endif
