// SPDX-License-Identifier: GPL-2.0
/*
 * Test scaffolding for bbrpcap: 802.1Q tagging between two namespaces on a
 * kernel without the 8021q module. Attached with tc (clsact, direct action):
 * "tc/push" on egress tags every frame with VLAN 100, "tc/pop" on ingress
 * removes the tag again before the stack sees it. Packet sockets on either
 * side see the tagged frames, as they would on a trunk port.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TEST_VLAN_ID 100

SEC("tc/push")
int vlan_push(struct __sk_buff *skb)
{
	bpf_skb_vlan_push(skb, bpf_htons(0x8100), TEST_VLAN_ID);
	return TC_ACT_OK;
}

SEC("tc/pop")
int vlan_pop(struct __sk_buff *skb)
{
	if (skb->vlan_present)
		bpf_skb_vlan_pop(skb);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
