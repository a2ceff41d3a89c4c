// SPDX-License-Identifier: GPL-2.0-only
/*
 * The frame decoder: the link layer by its type, then IPv4 or IPv6 (past
 * extension headers, first fragments only), then TCP, the payload length
 * taken from IP and the options read on SYNs only.
 */
#include <string.h>

#include "pcap/decode.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define ETH_P_QINQ 0x9100
#define MAX_VLAN_TAGS 8
#define MAX_IPV6_EXT 8

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void tcp_options(const uint8_t *p, uint32_t len, struct pkt_tcp *t)
{
	uint32_t i = 0;

	while (i < len) {
		uint8_t kind = p[i], olen;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			break;
		olen = p[i + 1];
		if (olen < 2 || i + olen > len)
			break;
		switch (kind) {
		case 2:
			if (olen == 4)
				t->mss_opt = be16(p + i + 2);
			break;
		case 3:
			if (olen == 3)
				t->wscale = p[i + 2];
			break;
		case 4:
			t->sack_ok = true;
			break;
		case 5:
			for (uint32_t k = 0; k + 8 <= (uint32_t)olen - 2 && t->nsack < 4; k += 8) {
				t->sack[t->nsack][0] = be32(p + i + 2 + k);
				t->sack[t->nsack][1] = be32(p + i + 6 + k);
				t->nsack++;
			}
			break;
		case 8:
			if (olen == 10) {
				t->has_ts = true;
				t->tsval = be32(p + i + 2);
				t->tsecr = be32(p + i + 6);
			}
			break;
		}
		i += olen;
	}
}

/*
 * p: the TCP header, avail: captured bytes from it, ip_payload: the IP
 * layer's payload length (TCP header + data), 0 when unknown.
 */
static int tcp(const uint8_t *p, uint32_t avail, uint64_t ip_payload, struct pkt_tcp *t)
{
	uint32_t hlen;

	if (avail < 14)
		return PKT_TRUNC;
	t->sport = be16(p);
	t->dport = be16(p + 2);
	t->seq = be32(p + 4);
	t->ack = be32(p + 8);
	hlen = (uint32_t)(p[12] >> 4) * 4;
	t->flags = p[13];
	t->win = avail >= 16 ? be16(p + 14) : 0;
	if (hlen < 20 || ip_payload < hlen)
		return PKT_BAD;
	t->tcp_hdr_len = hlen;
	t->payload_len = (uint32_t)(ip_payload - hlen);
	t->mss_opt = 0;
	t->wscale = 0xff;
	t->nsack = 0;
	t->has_ts = false;
	t->sack_ok = false;
	/* the handshake's options, and a pure ACK's SACK blocks (a duplicate ACK's
	 * proof of data outstanding); a data segment's are never used, and
	 * reading them would cost time on most of a capture */
	if ((t->flags & TCP_SYN || !t->payload_len) && hlen > 20 && avail > 20)
		tcp_options(p + 20, (avail < hlen ? avail : hlen) - 20, t);
	return PKT_TCP;
}

/* ip: start of the IP header; caplen_ip and origlen_ip: bytes from there on */
static int ipv4(const uint8_t *p, uint32_t avail, uint32_t orig, struct pkt_tcp *t)
{
	uint32_t ihl, tot;

	if (avail < 20)
		return PKT_TRUNC;
	if ((p[0] >> 4) != 4)
		return PKT_BAD;
	ihl = (uint32_t)(p[0] & 15) * 4;
	if (ihl < 20)
		return PKT_BAD;
	if (p[9] != 6)
		return PKT_OTHER;
	if (be16(p + 6) & 0x1fff) /* not the first fragment: no TCP header */
		return PKT_OTHER;
	tot = be16(p + 2);
	if (tot == 0) /* TSO/BIG TCP: the length is the frame's */
		tot = orig;
	if (tot < ihl)
		return PKT_BAD;
	if (avail < ihl)
		return PKT_TRUNC;
	t->family = 4;
	t->ttl = p[8];
	memcpy(t->saddr, p + 12, 4);
	memcpy(t->daddr, p + 16, 4);
	memset(t->saddr + 4, 0, 12);
	memset(t->daddr + 4, 0, 12);
	return tcp(p + ihl, avail - ihl, tot - ihl, t);
}

static int ipv6(const uint8_t *p, uint32_t avail, uint32_t orig, struct pkt_tcp *t)
{
	uint32_t off = 40;
	uint64_t len;
	uint8_t nh;

	if (avail < 40)
		return PKT_TRUNC;
	if ((p[0] >> 4) != 6)
		return PKT_BAD;
	len = be16(p + 4);
	if (len == 0) /* jumbogram / BIG TCP: the frame's length */
		len = orig > 40 ? orig - 40 : 0;
	nh = p[6];
	for (int k = 0; k < MAX_IPV6_EXT && nh != 6; k++) {
		uint32_t elen;

		switch (nh) {
		case 0:  /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
			if (avail < off + 2)
				return PKT_TRUNC;
			elen = ((uint32_t)p[off + 1] + 1) * 8;
			break;
		case 44: /* fragment */
			if (avail < off + 8)
				return PKT_TRUNC;
			if (be16(p + off + 2) & 0xfff8)
				return PKT_OTHER;
			elen = 8;
			break;
		case 51: /* AH */
			if (avail < off + 2)
				return PKT_TRUNC;
			elen = ((uint32_t)p[off + 1] + 2) * 4;
			break;
		default:
			return PKT_OTHER;
		}
		if (len < off - 40 + elen)
			return PKT_BAD;
		nh = p[off];
		off += elen;
	}
	if (nh != 6)
		return PKT_OTHER;
	if (avail < off)
		return PKT_TRUNC;
	t->family = 6;
	t->ttl = p[7];
	memcpy(t->saddr, p + 8, 16);
	memcpy(t->daddr, p + 24, 16);
	return tcp(p + off, avail - off, len - (off - 40), t);
}

static int ip(uint16_t proto, const uint8_t *p, uint32_t avail, uint32_t orig, struct pkt_tcp *t)
{
	if (proto == ETH_P_IP)
		return ipv4(p, avail, orig, t);
	if (proto == ETH_P_IPV6)
		return ipv6(p, avail, orig, t);
	return PKT_OTHER;
}

/* after the link header: skip VLAN tags, then IP */
static int ether_payload(uint16_t proto, const uint8_t *p, uint32_t avail, uint32_t orig, struct pkt_tcp *t)
{
	for (int k = 0; k < MAX_VLAN_TAGS && (proto == ETH_P_8021Q || proto == ETH_P_8021AD || proto == ETH_P_QINQ);
	     k++) {
		if (avail < 4)
			return PKT_OTHER;
		proto = be16(p + 2);
		p += 4;
		avail -= 4;
		orig = orig >= 4 ? orig - 4 : 0;
	}
	return ip(proto, p, avail, orig, t);
}

static int raw_ip(const uint8_t *p, uint32_t avail, uint32_t orig, struct pkt_tcp *t)
{
	if (avail < 1)
		return PKT_OTHER;
	switch (p[0] >> 4) {
	case 4: return ipv4(p, avail, orig, t);
	case 6: return ipv6(p, avail, orig, t);
	}
	return PKT_OTHER;
}

int pkt_decode(uint32_t linktype, const uint8_t *d, uint32_t caplen, uint32_t origlen, struct pkt_tcp *t)
{
	uint32_t fam;

	if (origlen < caplen)
		origlen = caplen;
	t->pkttype = -1;
	switch (linktype) {
	case 1: /* Ethernet */
		if (caplen < 14)
			return PKT_OTHER;
		return ether_payload(be16(d + 12), d + 14, caplen - 14, origlen - 14, t);
	case 113: /* Linux cooked v1 */
		if (caplen < 16)
			return PKT_OTHER;
		t->pkttype = (int8_t)(be16(d) <= 4 ? be16(d) : -1);
		return ether_payload(be16(d + 14), d + 16, caplen - 16, origlen - 16, t);
	case 276: /* Linux cooked v2 */
		if (caplen < 20)
			return PKT_OTHER;
		t->pkttype = (int8_t)(d[10] <= 4 ? d[10] : -1);
		return ether_payload(be16(d), d + 20, caplen - 20, origlen - 20, t);
	case 12:
	case 14:
	case 101: /* raw IP */
		return raw_ip(d, caplen, origlen, t);
	case 228:
		return ipv4(d, caplen, origlen, t);
	case 229:
		return ipv6(d, caplen, origlen, t);
	case 0:   /* BSD loopback */
	case 108: /* OpenBSD loopback */
		if (caplen < 4)
			return PKT_OTHER;
		/* the writer's byte order for 0, network order for 108: try both */
		fam = be32(d);
		if (fam > 0xffff)
			fam = __builtin_bswap32(fam);
		if (fam == 2)
			return ipv4(d + 4, caplen - 4, origlen - 4, t);
		if (fam == 10 || fam == 24 || fam == 28 || fam == 30)
			return ipv6(d + 4, caplen - 4, origlen - 4, t);
		return PKT_OTHER;
	}
	return PKT_OTHER;
}
