/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * From a captured frame to its TCP header: Ethernet (with any number of
 * 802.1Q/802.1ad tags, up to 8), Linux cooked SLL and SLL2, raw IP (101, 228,
 * 229), BSD loopback (0, 108); IPv4 and IPv6 (with extension headers).
 *
 * The payload length comes from the IP header, not from the captured length,
 * so a headers-only snaplen still counts every byte. A TSO/GSO super-segment
 * captured on the sender has an IP length up to 64 KiB; with BIG TCP it has
 * none (IPv4 total length 0, IPv6 payload length 0), and then the frame's
 * original length is used.
 */
#ifndef PCAP_DECODE_H
#define PCAP_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/* the packet types of Linux cooked captures (sll_pkttype) */
#define PKT_TYPE_HOST 0
#define PKT_TYPE_OUTGOING 4

enum pkt_result {
	PKT_TCP = 1,      /* decoded */
	PKT_OTHER = 0,    /* not TCP over IP, or a later IP fragment */
	PKT_TRUNC = -1,   /* TCP, but the capture cut the headers before seq/ack/flags */
	PKT_BAD = -2,     /* malformed: lengths that contradict each other */
};

struct pkt_tcp {
	uint8_t family;           /* 4 or 6 */
	uint8_t flags;            /* TCP_* */
	/* options are read from SYN segments and pure ACKs only */
	uint8_t nsack;            /* SACK blocks present (0..4) */
	uint8_t wscale;           /* window scale option, 0xff when absent */
	uint8_t ttl;              /* IPv4 TTL or IPv6 hop limit */
	int8_t pkttype;           /* Linux cooked captures: PKT_HOST, PKT_OUTGOING, ...; else -1 */
	bool has_ts;              /* timestamp option present */
	bool sack_ok;             /* SACK permitted */
	uint16_t sport, dport;
	uint16_t mss_opt;         /* SYN: MSS option, 0 when absent */
	uint16_t win;
	uint8_t saddr[16], daddr[16]; /* IPv4 in the first 4 bytes, the rest zero */
	uint32_t seq, ack;
	uint32_t payload_len;     /* TCP payload bytes, from the IP length */
	uint32_t tcp_hdr_len;
	uint32_t tsval, tsecr;
	uint32_t sack[4][2];      /* left, right edges */
};

/* one of enum pkt_result; out is filled for PKT_TCP */
int pkt_decode(uint32_t linktype, const uint8_t *data, uint32_t caplen, uint32_t origlen, struct pkt_tcp *out);

#endif
