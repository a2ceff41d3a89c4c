/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The GTP-U codec's fast path, inline, so that a data path parses the
 * common N3 frame without a call (gtpu.h: gtpu_parse_frame_fast() is the
 * same function out of line). The common shape: Ethernet without VLAN
 * tags, IPv4 without options or IPv6 without extension headers, UDP to
 * port 2152, a G-PDU whose only extension header is one 4-octet PDU Session
 * Container, an inner IPv4 (without options) or IPv6 (without extension
 * headers) packet. Header fields are checked eight octets at a time under
 * masks, in about 100 instructions where the general parser takes 230.
 * GTPU_OK comes only where gtpu_parse_frame() says so, with the same packet
 * (the unit tests and the fuzzer compare the two); any other frame,
 * well-formed or not, gets GTPU_FAST_NO: then call gtpu_parse_frame().
 * Nothing is read outside [f, f + len).
 */
#ifndef UP_GTPU_FAST_H
#define UP_GTPU_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gtpu.h"

/* big-endian loads: one load and a byte swap each */
static inline uint16_t gtpu_rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return (uint16_t)(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap16(v) : v);
}

static inline uint32_t gtpu_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap32(v) : v;
}

static inline bool gtpu_l4_has_ports(uint8_t proto)
{
	/* TCP UDP SCTP UDP-Lite: bits 6 and 17 of the low word, 4 and 8 of the word of 128..191 */
	static const uint64_t ports[4] = { (1ull << 6) | (1ull << 17), 0, (1ull << 4) | (1ull << 8), 0 };

	return ports[proto >> 6] >> (proto & 63) & 1;
}

/* IPv6 extension headers that may precede the transport header */
static inline bool gtpu_ip6_is_ext(uint8_t nh) { return nh == 0 || nh == 43 || nh == 60; }

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint64_t gtpu_ld64le(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline __attribute__((always_inline)) int gtpu_parse_fast(const uint8_t *f, size_t len,
								 struct gtpu_pkt *p)
{
	uint64_t eth, w;
	size_t l4, l4end, udplen, n;
	const uint8_t *u, *g, *t;

	memset(p, 0, sizeof(*p));
	if (len < 14 + 20 + 8 + 16)
		return GTPU_FAST_NO;
	eth = gtpu_ld64le(f + 12);
	if ((eth & 0xffffff) == 0x450008) {
		/* ethertype 0x0800, version 4, IHL 5; no MF, no offset, UDP */
		size_t tot = gtpu_rd16(f + 16);

		w = gtpu_ld64le(f + 20);
		if (((w & 0xff00ff3f) != 0x11000000) | (tot > len - 14))
			return GTPU_FAST_NO;
		l4 = 34;
		l4end = 14 + tot;
		p->outer_family = 4;
	} else if ((eth & 0xf0ffff) == 0x60dd86) {
		/* ethertype 0x86dd, version 6, next header UDP */
		l4 = 54;
		l4end = 54 + (size_t)gtpu_rd16(f + 18);
		if ((f[20] != 17) | (l4end > len))
			return GTPU_FAST_NO;
		p->outer_family = 6;
	} else {
		return GTPU_FAST_NO;
	}
	/* room for UDP (8), GTP-U (8), options (4) and the container (4) */
	if (l4end < l4 + 24)
		return GTPU_FAST_NO;
	u = f + l4;
	g = u + 8;
	udplen = gtpu_rd16(u + 4);
	/* the UDP length covers the GTP-U message and fits the IP packet */
	if ((gtpu_rd16(u + 2) != GTPU_PORT) | (udplen < 24) | (udplen > l4end - l4))
		return GTPU_FAST_NO;
	/* version 1, PT, E; G-PDU; the length field matches */
	w = gtpu_ld64le(g);
	if (((w & 0xfff4) != 0xff34) | ((size_t)gtpu_rd16(g + 2) + 16 != udplen))
		return GTPU_FAST_NO;
	/* next extension 0x85 of length 1, then the end of the chain */
	if ((gtpu_ld64le(g + 8) & 0xff0000ffff000000ull) != 0x0000000185000000ull)
		return GTPU_FAST_NO;
	p->teid = gtpu_rd32(g + 4);
	p->msg_type = GTPU_MSG_GPDU;
	p->has_qfi = 1;
	p->pdu_type = g[13] >> 4;
	p->qfi = g[14] & 0x3f;
	p->tpdu_off = (uint16_t)(l4 + 24);
	p->tpdu_len = (uint16_t)(udplen - 24);
	t = g + 16;
	n = udplen - 24;
	if ((n >= 20) & (t[0] == 0x45)) {
		size_t tot = gtpu_rd16(t + 2);

		if ((tot < 20) | (tot > n))
			return GTPU_FAST_NO;
		p->inner_family = 4;
		p->inner_len = (uint16_t)tot;
		p->proto = t[9];
		memcpy(p->src, t + 12, 4);
		memcpy(p->dst, t + 16, 4);
		/* a later fragment has no ports */
		if (!(gtpu_rd16(t + 6) & 0x1fff) & gtpu_l4_has_ports(t[9]) & (tot >= 24)) {
			p->sport = gtpu_rd16(t + 20);
			p->dport = gtpu_rd16(t + 22);
		}
		return GTPU_OK;
	}
	if ((n >= 40) & (t[0] >> 4 == 6)) {
		size_t end = 40 + (size_t)gtpu_rd16(t + 4);
		uint8_t nh = t[6];

		if ((end > n) | gtpu_ip6_is_ext(nh) | (nh == 44))
			return GTPU_FAST_NO;
		p->inner_family = 6;
		p->inner_len = (uint16_t)end;
		p->proto = nh;
		memcpy(p->src, t + 8, 16);
		memcpy(p->dst, t + 24, 16);
		if (gtpu_l4_has_ports(nh) & (end >= 44)) {
			p->sport = gtpu_rd16(t + 40);
			p->dport = gtpu_rd16(t + 42);
		}
		return GTPU_OK;
	}
	return GTPU_FAST_NO;
}
#else
static inline int gtpu_parse_fast(const uint8_t *f, size_t len, struct gtpu_pkt *p)
{
	(void)f;
	(void)len;
	(void)p;
	return GTPU_FAST_NO;
}
#endif

#endif
