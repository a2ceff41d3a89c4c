// SPDX-License-Identifier: GPL-2.0-only
/*
 * quickack's socket scopes: one TCP option set on exactly the connections a
 * scope matches (bpf/contract/quickack_sock.h says which, and what).
 *   qs_sockops  a cgroup sock_ops program: each connection as it is
 *               established (accepted, or made), in the cgroup it is
 *               attached to and its descendants, in one network namespace;
 *   qs_iter     an iterator over the namespace's TCP sockets: the ones
 *               that existed before, each written as a struct qs_conn.
 * Each scope loads its own copy: what it matches is read-only data, set
 * before load.
 */
#include "tk_core.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bpf/contract/quickack_sock.h"

#define SOL_TCP 6
#define TCP_NODELAY 1
#define TCP_LISTEN 10

char LICENSE[] SEC("license") = "GPL";

const volatile __u8 targ_side = QS_SIDE_RECV;
const volatile __u16 targ_ports[QS_PORTS_MAX] = {};
const volatile __u32 targ_nports = 0;
/* the network namespace's cookie (SO_NETNS_COOKIE); 0: any */
const volatile __u64 targ_netns_cookie = 0;
/* the iterator's cgroup (its id, the cgroup v2 directory's inode); 0: any */
const volatile __u64 targ_cgroup_id = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QS_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)
struct kernfs_node {
	__u64 id;
};

struct cgroup;
struct cgroup_subsys_state {
	struct cgroup *cgroup;
	struct cgroup_subsys_state *parent;
};

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
};

struct sock_cgroup_data {
	struct cgroup *cgroup;
};

struct sock___cg {
	struct sock_cgroup_data sk_cgrp_data;
};

struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
};

struct bpf_iter__tcp {
	struct bpf_iter_meta *meta;
	struct sock_common *sk_common;
};
#pragma clang attribute pop

/* cgroups a socket's may be nested in under the scope's */
#define QS_CGROUP_DEPTH 32

static __always_inline void qs_count(__u32 idx, __u64 add, bool assign)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (!c)
		return;
	if (assign)
		*c = add;
	else
		__sync_fetch_and_add(c, add);
}

static __always_inline bool qs_port_wanted(__u16 port)
{
	for (__u32 i = 0; i < QS_PORTS_MAX; i++)
		if (i < targ_nports && targ_ports[i] == port)
			return true;
	return false;
}

/*
 * Sets the scope's option on sk (a sock_ops context or a tcp_sock): 0, or
 * the kernel's -errno for the last value tried; *value is what was set.
 */
static __always_inline long qs_set(void *sk, __u32 *value)
{
	static const __u32 tries[QS_NDELACK_TRIES] = QS_DELACK_TRIES;
	int one = 1;
	long err = -1;

	if (targ_side == QS_SIDE_SEND) {
		*value = 1;
		return bpf_setsockopt(sk, SOL_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	for (__u32 i = 0; i < QS_NDELACK_TRIES; i++) {
		int us = tries[i];

		err = bpf_setsockopt(sk, SOL_TCP, TCP_BPF_DELACK_MAX, &us, sizeof(us));
		if (!err) {
			*value = us;
			qs_count(QS_CNT_DELACK_US, us, true);
			return 0;
		}
	}
	return err;
}

SEC("sockops")
int qs_sockops(struct bpf_sock_ops *skops)
{
	__u32 value = 0;
	__u16 port;

	if (skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB && targ_side == QS_SIDE_RECV)
		port = skops->local_port;
	else if (skops->op == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB && targ_side == QS_SIDE_SEND)
		port = bpf_ntohl(skops->remote_port);
	else
		return 1;
	if (!qs_port_wanted(port))
		return 1;
	if (targ_netns_cookie && bpf_get_netns_cookie(skops) != targ_netns_cookie)
		return 1;
	qs_count(qs_set(skops, &value) ? QS_CNT_FAILED : QS_CNT_NEW, 1, false);
	return 1;
}

/* the socket's cgroup is the scope's, or nested in it */
static __always_inline bool qs_in_cgroup(struct tcp_sock *tp)
{
	struct sock___cg *sk = (void *)tp;
	struct cgroup_subsys_state *css;
	struct cgroup *cg;

	if (!targ_cgroup_id)
		return true;
	cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
	if (!cg)
		return false;
	css = &cg->self;
	for (int i = 0; i < QS_CGROUP_DEPTH && css; i++) {
		if (BPF_CORE_READ(css, cgroup, kn, id) == targ_cgroup_id)
			return true;
		css = BPF_CORE_READ(css, parent);
	}
	return false;
}

static __always_inline void qs_conn_fill(struct qs_conn *c, struct sock_common *skc)
{
	if (skc->skc_family == AF_INET) {
		__be32 s = skc->skc_rcv_saddr, d = skc->skc_daddr;

		c->saddr[10] = c->saddr[11] = 0xff;
		c->daddr[10] = c->daddr[11] = 0xff;
		__builtin_memcpy(&c->saddr[12], &s, 4);
		__builtin_memcpy(&c->daddr[12], &d, 4);
	} else {
		BPF_CORE_READ_INTO(&c->saddr, skc, skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&c->daddr, skc, skc_v6_daddr);
	}
	c->sport = skc->skc_num;
	c->dport = bpf_ntohs(skc->skc_dport);
	c->state = skc->skc_state;
}

SEC("iter/tcp")
int qs_iter(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct qs_conn c = {};
	struct tcp_sock *tp;
	__u16 port;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp || skc->skc_state == TCP_LISTEN)
		return 0;
	qs_conn_fill(&c, skc);
	port = targ_side == QS_SIDE_RECV ? c.sport : c.dport;
	if (!qs_port_wanted(port) || !qs_in_cgroup(tp))
		return 0;
	c.err = qs_set(tp, &c.value);
	qs_count(c.err ? QS_CNT_FAILED : QS_CNT_EXISTING, 1, false);
	bpf_seq_write(ctx->meta->seq, &c, sizeof(c));
	return 0;
}
