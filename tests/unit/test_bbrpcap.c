// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrpcap's parser and analysis on captures built byte by byte (each case
 * one behaviour: a header field, an error text, an edge of the arithmetic),
 * and the mmap reader against libpcap's pcap_next_ex on the real captures
 * in tests/fixtures/pcap.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "pcap/analysis.h"
#include "pcap/capfile.h"
#include "pcap/decode.h"

/* --- building captures ------------------------------------------------------------ */

struct buf {
	uint8_t b[1 << 16];
	size_t n;
	bool swap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	tk_assert_cmp(b->n + n, <=, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	put(b, &v, 4);
}

static void put16(struct buf *b, uint16_t v)
{
	if (b->swap)
		v = __builtin_bswap16(v);
	put(b, &v, 2);
}

static void pcap_header(struct buf *b, uint32_t magic, uint32_t linktype)
{
	put32(b, magic);
	put16(b, 2);
	put16(b, 4);
	put32(b, 0);
	put32(b, 0);
	put32(b, 262144);
	put32(b, linktype);
}

static void pcap_record(struct buf *b, uint32_t sec, uint32_t frac, const uint8_t *f, uint32_t caplen,
			uint32_t origlen)
{
	put32(b, sec);
	put32(b, frac);
	put32(b, caplen);
	put32(b, origlen);
	put(b, f, caplen);
}

/* A = 10.0.0.1:1000, B = 10.0.0.2:2000 */
struct seg {
	bool from_b;
	uint32_t seq, ack;
	uint8_t flags;
	uint32_t len;        /* payload, not captured */
	uint16_t mss;        /* SYN option */
	int vlans;
	uint8_t ttl;         /* 0: 64 */
	uint16_t win;        /* 0: 65535 */
	uint32_t sack_l, sack_r; /* one SACK block, when sack_r is set */
};

static size_t be16put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static size_t be32put(uint8_t *p, uint32_t v)
{
	be16put(p, (uint16_t)(v >> 16));
	be16put(p + 2, (uint16_t)v);
	return 4;
}

/* IPv4 + TCP headers of s at p; returns their length */
static size_t ipv4_tcp(uint8_t *p, const struct seg *s, uint16_t tot_override, bool use_override)
{
	size_t thl = 20 + (s->mss ? 4 : 0) + (s->sack_r ? 12 : 0), o = 40;
	uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };

	memset(p, 0, 20 + thl);
	p[0] = 0x45;
	be16put(p + 2, use_override ? tot_override : (uint16_t)(20 + thl + s->len));
	p[8] = s->ttl ? s->ttl : 64;
	p[9] = 6;
	memcpy(p + 12, s->from_b ? b : a, 4);
	memcpy(p + 16, s->from_b ? a : b, 4);
	be16put(p + 20, s->from_b ? 2000 : 1000);
	be16put(p + 22, s->from_b ? 1000 : 2000);
	be32put(p + 24, s->seq);
	be32put(p + 28, s->ack);
	p[32] = (uint8_t)((thl / 4) << 4);
	p[33] = s->flags;
	be16put(p + 34, s->win ? s->win : 65535);
	if (s->mss) {
		p[o] = 2;
		p[o + 1] = 4;
		be16put(p + o + 2, s->mss);
		o += 4;
	}
	if (s->sack_r) { /* NOP, NOP, SACK of one block */
		p[o] = p[o + 1] = 1;
		p[o + 2] = 5;
		p[o + 3] = 10;
		be32put(p + o + 4, s->sack_l);
		be32put(p + o + 8, s->sack_r);
	}
	return 20 + thl;
}

static size_t eth_frame(uint8_t *f, const struct seg *s)
{
	size_t n = 12;

	memset(f, 0xaa, 12);
	for (int k = 0; k < s->vlans; k++) {
		n += be16put(f + n, k == 0 && s->vlans > 1 ? 0x88a8 : 0x8100);
		n += be16put(f + n, 100 + k);
	}
	n += be16put(f + n, 0x0800);
	return n + ipv4_tcp(f + n, s, 0, false);
}

/* an Ethernet pcap (us) of segments at the given times (us) */
static void pcap_of(struct buf *b, const struct seg *segs, const uint64_t *t_us, size_t n)
{
	b->n = 0;
	pcap_header(b, 0xa1b2c3d4, 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t f[128];
		size_t len = eth_frame(f, &segs[i]);

		pcap_record(b, (uint32_t)(1700000000 + t_us[i] / 1000000), (uint32_t)(t_us[i] % 1000000), f,
			    (uint32_t)len, (uint32_t)(len + segs[i].len));
	}
}

/* --- the reader ------------------------------------------------------------------- */

static void test_pcap_us_and_frames(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg s = { .seq = 1, .flags = TCP_ACK, .len = 100 };
	uint64_t t[2] = { 5, 1000007 };
	struct seg segs[2] = { s, s };
	struct cap_file c;
	struct cap_frame f;
	(void)state;

	pcap_of(b, segs, t, 2);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(c.format, CAP_PCAP);
	assert_int_equal(cap_next(&c, &f), 1);
	assert_int_equal(f.no, 1);
	tk_assert_cmp(f.ts_ns, ==, 1700000000ll * 1000000000 + 5000);
	assert_int_equal(f.offset, 24);
	assert_int_equal(f.linktype, 1);
	assert_int_equal(f.origlen, f.caplen + 100);
	assert_int_equal(cap_next(&c, &f), 1);
	assert_int_equal(f.no, 2);
	tk_assert_cmp(f.ts_ns, ==, 1700000001ll * 1000000000 + 7000);
	assert_int_equal(cap_next(&c, &f), 0);
	cap_close(&c);
	free(b);
}

static void test_pcap_swapped_nanoseconds(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[64] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	b->swap = true;
	pcap_header(b, 0xa1b23c4d, 113);
	pcap_record(b, 10, 999999999, f, 60, 60);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_true(c.swap);
	assert_int_equal(cap_next(&c, &fr), 1);
	tk_assert_cmp(fr.ts_ns, ==, 10999999999ll);
	assert_int_equal(fr.linktype, 113);
	assert_int_equal(fr.caplen, 60);
	cap_close(&c);
	free(b);
}

static void test_wrong_magic(void **state)
{
	uint8_t junk[32] = { 0xde, 0xad, 0xbe, 0xef };
	struct cap_file c;
	(void)state;

	assert_int_equal(cap_open_mem(&c, junk, sizeof(junk)), -1);
	assert_false(c.nomem); /* the file's fault, not the system's */
	assert_string_equal(c.err, "byte offset 0: unknown magic number 0xdeadbeef (neither pcap nor pcapng)");
}

/* a file that cannot be opened is the file's fault too */
static void test_missing_file(void **state)
{
	struct cap_file c;
	(void)state;

	assert_int_equal(cap_open(&c, "/nonexistent/none.pcap", CAP_READER_MMAP), -1);
	assert_false(c.nomem);
	assert_string_equal(c.err, "cannot open: No such file or directory");
}

static void test_short_header(void **state)
{
	uint8_t hdr[10] = { 0xd4, 0xc3, 0xb2, 0xa1 };
	struct cap_file c;
	(void)state;

	assert_int_equal(cap_open_mem(&c, hdr, sizeof(hdr)), -1);
	assert_string_equal(c.err, "byte offset 10: file ends inside the 24-byte pcap header");
}

/* frame 1 is whole, frame 2 is cut: the error names frame 2 and its offset */
static void test_truncated_record(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[64] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	pcap_header(b, 0xa1b2c3d4, 1);
	pcap_record(b, 1, 0, f, 60, 60);
	pcap_record(b, 2, 0, f, 60, 60);
	b->n -= 30;
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), 1);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 2 at byte offset 100: truncated record (60 bytes announced, 30 in the file)");
	cap_close(&c);
	free(b);
}

static void test_truncated_record_header(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[64] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	pcap_header(b, 0xa1b2c3d4, 1);
	pcap_record(b, 1, 0, f, 60, 60);
	put32(b, 5);
	put32(b, 6);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), 1);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 2 at byte offset 100: truncated record header (8 of 16 bytes)");
	cap_close(&c);
	free(b);
}

static void test_nonsense_lengths(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	pcap_header(b, 0xa1b2c3d4, 1);
	put32(b, 1);
	put32(b, 0);
	put32(b, 0xffffffff);
	put32(b, 0xffffffff);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 1 at byte offset 24: captured length 4294967295 exceeds the maximum 262144");
	cap_close(&c);

	b->n = 0;
	pcap_header(b, 0xa1b2c3d4, 1);
	put32(b, 1);
	put32(b, 0);
	put32(b, 60);
	put32(b, 59);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 1 at byte offset 24: original length 59 is less than captured length 60");
	cap_close(&c);
	free(b);
}

/* --- pcapng ------------------------------------------------------------------------ */

static void ng_shb(struct buf *b)
{
	put32(b, 0x0a0d0d0a);
	put32(b, 28);
	put32(b, 0x1a2b3c4d);
	put16(b, 1);
	put16(b, 0);
	put32(b, 0xffffffff);
	put32(b, 0xffffffff);
	put32(b, 28);
}

/* tsresol: the option's byte, or -1 for none */
static void ng_idb(struct buf *b, uint16_t linktype, int tsresol)
{
	uint32_t len = 20 + (tsresol >= 0 ? 12 : 0);

	put32(b, 1);
	put32(b, len);
	put16(b, linktype);
	put16(b, 0);
	put32(b, 0);
	if (tsresol >= 0) {
		uint8_t v[4] = { (uint8_t)tsresol };

		put16(b, 9);
		put16(b, 1);
		put(b, v, 4);
		put32(b, 0);
	}
	put32(b, len);
}

static void ng_epb(struct buf *b, uint32_t ifid, uint64_t ts, const uint8_t *f, uint32_t caplen, uint32_t origlen)
{
	uint32_t pad = (4 - (caplen & 3)) & 3, len = 32 + caplen + pad;
	static const uint8_t zero[4];

	put32(b, 6);
	put32(b, len);
	put32(b, ifid);
	put32(b, (uint32_t)(ts >> 32));
	put32(b, (uint32_t)ts);
	put32(b, caplen);
	put32(b, origlen);
	put(b, f, caplen);
	put(b, zero, pad);
	put32(b, len);
}

static void test_pcapng_interfaces_and_resolution(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[61] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	ng_shb(b);
	ng_idb(b, 1, 9);       /* ns */
	ng_idb(b, 276, -1);    /* us, the default */
	ng_idb(b, 101, 0x8a);  /* 2^-10 s */
	ng_epb(b, 0, 1234567890123ull, f, 61, 1500);
	ng_epb(b, 1, 1000001, f, 20, 20);
	ng_epb(b, 2, 3 * 1024 + 512, f, 20, 20);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(c.format, CAP_PCAPNG);
	assert_int_equal(cap_next(&c, &fr), 1);
	tk_assert_cmp(fr.ts_ns, ==, 1234567890123ll);
	assert_int_equal(fr.linktype, 1);
	assert_int_equal(fr.caplen, 61);
	assert_int_equal(fr.origlen, 1500);
	assert_int_equal(cap_next(&c, &fr), 1);
	tk_assert_cmp(fr.ts_ns, ==, 1000001000ll);
	assert_int_equal(fr.linktype, 276);
	assert_int_equal(fr.no, 2);
	assert_int_equal(cap_next(&c, &fr), 1);
	tk_assert_cmp(fr.ts_ns, ==, 3500000000ll);
	assert_int_equal(fr.linktype, 101);
	assert_int_equal(cap_next(&c, &fr), 0);
	cap_close(&c);
	free(b);
}

static void test_pcapng_errors(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[60] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	size_t at;
	(void)state;

	/* a packet on an interface never described */
	ng_shb(b);
	ng_idb(b, 1, -1);
	at = b->n;
	ng_epb(b, 3, 1, f, 60, 60);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_int_equal(at, 48);
	assert_string_equal(c.err, "frame 1 at byte offset 48: interface 3 was never described");
	cap_close(&c);

	/* a block length that is not a multiple of 4 */
	b->n = 0;
	ng_shb(b);
	ng_idb(b, 1, -1);
	ng_epb(b, 0, 1, f, 60, 60);
	put32(b, 6);
	put32(b, 1001);
	put32(b, 0);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), 1);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 2 at byte offset 144: block length 1001 is nonsense (needs 12..16777216 and a multiple of 4)");
	cap_close(&c);

	/* a block cut by the end of the file */
	b->n = 0;
	ng_shb(b);
	ng_idb(b, 1, -1);
	ng_epb(b, 0, 1, f, 60, 60);
	b->n -= 8;
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 1 at byte offset 48: truncated block (92 bytes announced, 84 in the file)");
	cap_close(&c);

	/* the trailing length disagrees */
	b->n = 0;
	ng_shb(b);
	ng_idb(b, 1, -1);
	ng_epb(b, 0, 1, f, 60, 60);
	b->b[b->n - 4] = 0x55;
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 1 at byte offset 136: block's trailing length 85 differs from its length 92");
	cap_close(&c);

	/* captured length larger than the block */
	b->n = 0;
	ng_shb(b);
	ng_idb(b, 1, -1);
	ng_epb(b, 0, 1, f, 60, 60);
	b->b[48 + 20] = 200;
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), -1);
	assert_string_equal(c.err, "frame 1 at byte offset 48: captured length 200 exceeds its block (92 bytes)");
	cap_close(&c);
	free(b);
}

/* a second section in the other byte order restarts the interface numbering */
static void test_pcapng_two_sections(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t f[20] = { 0 };
	struct cap_file c;
	struct cap_frame fr;
	(void)state;

	ng_shb(b);
	ng_idb(b, 1, -1);
	ng_epb(b, 0, 5, f, 20, 20);
	b->swap = true;
	ng_shb(b);
	ng_idb(b, 113, -1);
	ng_epb(b, 0, 7, f, 20, 20);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(cap_next(&c, &fr), 1);
	assert_int_equal(fr.linktype, 1);
	assert_int_equal(cap_next(&c, &fr), 1);
	assert_int_equal(fr.linktype, 113);
	tk_assert_cmp(fr.ts_ns, ==, 7000);
	assert_int_equal(fr.no, 2);
	assert_int_equal(cap_next(&c, &fr), 0);
	cap_close(&c);
	free(b);
}

/* --- the decoder ------------------------------------------------------------------ */

static void test_decode_vlan_tags(void **state)
{
	struct seg s = { .seq = 7, .ack = 9, .flags = TCP_ACK | TCP_PSH, .len = 1448, .vlans = 2 };
	uint8_t f[128];
	size_t n = eth_frame(f, &s);
	struct pkt_tcp t;
	(void)state;

	assert_int_equal(pkt_decode(1, f, (uint32_t)n, (uint32_t)n + 1448, &t), PKT_TCP);
	assert_int_equal(t.sport, 1000);
	assert_int_equal(t.dport, 2000);
	assert_int_equal(t.seq, 7);
	assert_int_equal(t.ack, 9);
	assert_int_equal(t.payload_len, 1448);
	assert_int_equal(t.flags, TCP_ACK | TCP_PSH);
}

static void test_decode_cooked_and_raw(void **state)
{
	struct seg s = { .seq = 1, .flags = TCP_SYN, .mss = 1460 };
	uint8_t f[128] = { 0 };
	struct pkt_tcp t;
	size_t n;
	(void)state;

	/* SLL: protocol at 14 */
	be16put(f + 14, 0x0800);
	n = 16 + ipv4_tcp(f + 16, &s, 0, false);
	assert_int_equal(pkt_decode(113, f, (uint32_t)n, (uint32_t)n, &t), PKT_TCP);
	assert_int_equal(t.mss_opt, 1460);
	/* SLL2: protocol first */
	memset(f, 0, sizeof(f));
	be16put(f, 0x0800);
	n = 20 + ipv4_tcp(f + 20, &s, 0, false);
	assert_int_equal(pkt_decode(276, f, (uint32_t)n, (uint32_t)n, &t), PKT_TCP);
	assert_int_equal(t.flags, TCP_SYN);
	/* raw IPv4 */
	n = ipv4_tcp(f, &s, 0, false);
	assert_int_equal(pkt_decode(101, f, (uint32_t)n, (uint32_t)n, &t), PKT_TCP);
	assert_int_equal(t.family, 4);
	assert_int_equal(t.saddr[3], 1);
}

static void test_decode_ipv6_extension_headers(void **state)
{
	uint8_t f[128] = { 0 };
	struct pkt_tcp t;
	(void)state;

	f[0] = 0x60;
	be16put(f + 4, 8 + 20 + 100); /* hop-by-hop + TCP + data */
	f[6] = 0;                     /* next: hop-by-hop */
	f[23] = 1;
	f[39] = 2;
	f[40] = 6;                    /* hop-by-hop's next: TCP */
	f[41] = 0;                    /* 8 bytes */
	be16put(f + 48, 443);
	be16put(f + 50, 5555);
	f[60] = 5 << 4;
	f[61] = TCP_ACK;
	assert_int_equal(pkt_decode(229, f, 68, 168, &t), PKT_TCP);
	assert_int_equal(t.family, 6);
	assert_int_equal(t.sport, 443);
	assert_int_equal(t.payload_len, 100);
	assert_int_equal(t.daddr[15], 2);
}

/* a TSO super-segment captured with BIG TCP carries total length 0 */
static void test_decode_length_from_frame(void **state)
{
	struct seg s = { .seq = 1, .flags = TCP_ACK };
	uint8_t f[128];
	size_t n;
	struct pkt_tcp t;
	(void)state;

	n = 14 + ipv4_tcp(f + 14, &s, 0, true);
	be16put(f + 12, 0x0800);
	assert_int_equal(pkt_decode(1, f, (uint32_t)n, 14 + 40 + 100000, &t), PKT_TCP);
	assert_int_equal(t.payload_len, 100000);
}

static void test_decode_cut_and_malformed(void **state)
{
	struct seg s = { .seq = 1, .flags = TCP_ACK, .len = 10 };
	uint8_t f[128];
	size_t n = eth_frame(f, &s);
	struct pkt_tcp t;
	(void)state;

	/* snaplen cut inside the TCP header, before the flags */
	assert_int_equal(pkt_decode(1, f, 14 + 20 + 10, (uint32_t)n + 10, &t), PKT_TRUNC);
	/* cut after the flags: still decoded, the length comes from IP */
	assert_int_equal(pkt_decode(1, f, 14 + 20 + 16, (uint32_t)n + 10, &t), PKT_TCP);
	assert_int_equal(t.payload_len, 10);
	/* IP total length shorter than the headers */
	be16put(f + 16, 30);
	assert_int_equal(pkt_decode(1, f, (uint32_t)n, (uint32_t)n, &t), PKT_BAD);
	/* a later fragment has no TCP header */
	n = eth_frame(f, &s);
	be16put(f + 20, 0x0010);
	assert_int_equal(pkt_decode(1, f, (uint32_t)n, (uint32_t)n, &t), PKT_OTHER);
	/* not IP at all */
	be16put(f + 12, 0x0806);
	assert_int_equal(pkt_decode(1, f, (uint32_t)n, (uint32_t)n, &t), PKT_OTHER);
}

/* --- the analysis --------------------------------------------------------------- */

struct acks_seen {
	struct an_ack v[64];
	int n;
};

static void keep_ack(void *ctx, const struct an_flow *f, const struct an_ack *a)
{
	struct acks_seen *s = ctx;
	(void)f;

	if (s->n < 64)
		s->v[s->n++] = *a;
}

static struct an *analyse(struct buf *b, struct an_config *cfg)
{
	struct cap_file c;
	struct an *a = an_new(cfg);

	assert_non_null(a);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(an_run(a, &c), 0);
	cap_close(&c);
	return a;
}

/* ten 1000-byte segments across 2^32, each ACKed */
static void test_sequence_wraparound(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[20];
	uint64_t t[20];
	struct an_config cfg = { .bin_ns = 1000000, .acks = true, .mss = 1000, .delack_ns = 10000000 };
	uint32_t isn = 0xfffff000u, peer = 77;
	struct an *a;
	(void)state;

	for (int i = 0; i < 10; i++) {
		segs[2 * i] = (struct seg){ .seq = isn + (uint32_t)i * 1000, .ack = peer, .flags = TCP_ACK, .len = 1000 };
		segs[2 * i + 1] = (struct seg){ .from_b = true, .seq = peer, .ack = isn + (uint32_t)(i + 1) * 1000,
						.flags = TCP_ACK };
		t[2 * i] = (uint64_t)i * 100;
		t[2 * i + 1] = (uint64_t)i * 100 + 50;
	}
	pcap_of(b, segs, t, 20);
	a = analyse(b, &cfg);
	assert_int_equal(a->nflows, 1);
	assert_int_equal(a->flows[0]->d[0].unique_bytes, 10000);
	assert_int_equal(a->flows[0]->d[0].rexmt_bytes, 0);
	assert_int_equal(a->flows[0]->d[0].acks_adv, 9);
	assert_int_equal(a->flows[0]->d[0].nbins, 1);
	assert_int_equal(a->flows[0]->d[0].bins[0].acked_bytes, 9000);
	assert_int_equal(an_delay_pct(&a->flows[0]->d[0], 50), 50000);
	an_free(a);
	free(b);
}

/* a gap the capture missed is filled later: unique, not a retransmission */
static void test_holes_and_retransmissions(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[4] = {
		{ .seq = 1000, .flags = TCP_ACK, .len = 1000 },
		{ .seq = 3000, .flags = TCP_ACK, .len = 1000 },
		{ .seq = 2000, .flags = TCP_ACK, .len = 1000 },
		{ .seq = 2000, .flags = TCP_ACK, .len = 1000 },
	};
	uint64_t t[4] = { 0, 1, 2, 3 };
	struct an_config cfg = { 0 };
	struct an *a;
	(void)state;

	pcap_of(b, segs, t, 4);
	a = analyse(b, &cfg);
	assert_int_equal(a->flows[0]->d[0].unique_bytes, 3000);
	assert_int_equal(a->flows[0]->d[0].data_bytes, 4000);
	assert_int_equal(a->flows[0]->d[0].rexmt_pkts, 1);
	assert_int_equal(a->flows[0]->d[0].rexmt_bytes, 1000);
	an_free(a);
	free(b);
}

/* more gaps at once than any fixed table would hold: each fill is unique, each repeat a retransmission */
static void test_many_holes(void **state)
{
	enum { EVEN = 50, ODD = 49, SEG = 100, N = EVEN + 2 * ODD };
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[N];
	uint64_t t[N];
	struct an_config cfg = { 0 };
	struct an *a;
	int n = 0;
	(void)state;

	for (int i = 0; i < EVEN; i++)
		segs[n++] = (struct seg){ .seq = 1000 + (uint32_t)(2 * i) * SEG, .flags = TCP_ACK, .len = SEG };
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ODD; i++)
			segs[n++] = (struct seg){ .seq = 1000 + (uint32_t)(2 * i + 1) * SEG, .flags = TCP_ACK, .len = SEG };
	for (int i = 0; i < N; i++)
		t[i] = (uint64_t)i;
	pcap_of(b, segs, t, N);
	a = analyse(b, &cfg);
	assert_int_equal(a->flows[0]->d[0].unique_bytes, (EVEN + ODD) * SEG);
	assert_int_equal(a->flows[0]->d[0].rexmt_pkts, ODD);
	assert_int_equal(a->flows[0]->d[0].rexmt_bytes, ODD * SEG);
	assert_int_equal(a->flows[0]->d[0].nholes, 0);
	an_free(a);
	free(b);
}

/* Story 1: a full segment, then a runt; the ACK for both comes 40 ms later */
static void test_delayed_ack_candidate(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[5] = {
		{ .seq = 100, .flags = TCP_SYN, .mss = 1460 },
		{ .from_b = true, .seq = 500, .ack = 101, .flags = TCP_SYN | TCP_ACK, .mss = 1460 },
		{ .seq = 101, .ack = 501, .flags = TCP_ACK, .len = 1460 },
		{ .seq = 1561, .ack = 501, .flags = TCP_ACK | TCP_PSH, .len = 300 },
		{ .from_b = true, .seq = 501, .ack = 1861, .flags = TCP_ACK },
	};
	uint64_t t[5] = { 0, 60, 61, 100, 40100 };
	struct acks_seen seen = { 0 };
	struct an_config cfg = { .acks = true, .delack_ns = 10000000, .on_ack = keep_ack, .ctx = &seen };
	struct an *a;
	const struct an_ack *e;
	(void)state;

	pcap_of(b, segs, t, 5);
	a = analyse(b, &cfg);
	e = &seen.v[seen.n - 1];
	assert_int_equal(e->frame, 5);
	assert_true(e->advancing);
	assert_int_equal(e->acked_bytes, 1760);
	assert_int_equal(e->mss, 1460);
	assert_int_equal(e->acked_segs, 2);
	assert_int_equal(e->covered_pkts, 2);
	assert_int_equal(e->delay_ns, 40000000);
	assert_int_equal(e->data_frame, 4);
	assert_true(e->runt);
	assert_false(e->single);
	assert_true(e->candidate);
	assert_int_equal(a->flows[0]->d[0].candidates, 1);
	/* SYN -> SYN/ACK took the round trip: the capture is at the client, the sender */
	assert_int_equal(a->flows[0]->side[0], AN_SIDE_SENDER);
	assert_int_equal(a->flows[0]->side_basis[0], AN_BASIS_HANDSHAKE);
	assert_int_equal(a->flows[0]->side[1], AN_SIDE_RECEIVER);
	an_free(a);
	free(b);
}

/* a duplicate ACK (per ACK: dupack) is what the direction counts in dupacks,
 * as RFC 5681 defines it: data outstanding, the highest ACK number again,
 * nothing else and the same window; a window update, data, a FIN, an advance,
 * or the same ACK once nothing is outstanding is not */
static void test_dupacks(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[11] = {
		{ .from_b = true, .seq = 1, .ack = 1, .flags = TCP_ACK }, /* the first: where ACKs start */
		{ .seq = 1, .ack = 1, .flags = TCP_ACK, .len = 1000 },
		{ .seq = 1001, .ack = 1, .flags = TCP_ACK, .len = 1000 },
		{ .from_b = true, .seq = 1, .ack = 1001, .flags = TCP_ACK },
		{ .from_b = true, .seq = 1, .ack = 1001, .flags = TCP_ACK },
		{ .from_b = true, .seq = 1, .ack = 1001, .flags = TCP_ACK, .win = 1000 },
		{ .from_b = true, .seq = 1, .ack = 1001, .flags = TCP_ACK, .win = 1000 },
		{ .from_b = true, .seq = 1, .ack = 1001, .flags = TCP_ACK, .len = 100, .win = 1000 },
		{ .from_b = true, .seq = 101, .ack = 1001, .flags = TCP_ACK | TCP_FIN, .win = 1000 },
		{ .from_b = true, .seq = 102, .ack = 2001, .flags = TCP_ACK, .win = 1000 },
		{ .from_b = true, .seq = 102, .ack = 2001, .flags = TCP_ACK, .win = 1000 },
	};
	static const bool dup[11] = { [4] = true, [6] = true }, adv[11] = { [3] = true, [9] = true };
	uint64_t t[11] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct acks_seen seen = { 0 };
	struct an_config cfg = { .acks = true, .delack_ns = 10000000, .on_ack = keep_ack, .ctx = &seen };
	struct an *a;
	int ndup = 0, n = 0;
	(void)state;

	pcap_of(b, segs, t, 11);
	a = analyse(b, &cfg);
	for (int i = 0; i < seen.n; i++) {
		const struct an_ack *e = &seen.v[i];

		if (e->data_dir != 1) /* B's first packet made it the flow's side A: d[1] is the data */
			continue;
		n++;
		assert_int_equal(e->dupack, dup[e->frame - 1]);
		assert_int_equal(e->advancing, adv[e->frame - 1]);
		ndup += e->dupack;
	}
	assert_int_equal(n, 9);
	assert_int_equal(ndup, 2);
	assert_int_equal(a->flows[0]->d[1].dupacks, 2);
	an_free(a);
	free(b);
}

/* data the capture did not see is outstanding when the ACK SACKs it: the
 * capture saw up to 2000, the receiver holds 3001..4000 and asks for 2001.
 * The same ACK without the SACK, or with a D-SACK below it, is no duplicate */
static void test_dupack_proved_by_sack(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[7] = {
		{ .from_b = true, .seq = 1, .ack = 1, .flags = TCP_ACK },
		{ .seq = 1, .ack = 1, .flags = TCP_ACK, .len = 1000 },
		{ .seq = 1001, .ack = 1, .flags = TCP_ACK, .len = 1000 },
		{ .from_b = true, .seq = 1, .ack = 2001, .flags = TCP_ACK },
		{ .from_b = true, .seq = 1, .ack = 2001, .flags = TCP_ACK, .sack_l = 3001, .sack_r = 4001 },
		{ .from_b = true, .seq = 1, .ack = 2001, .flags = TCP_ACK },
		{ .from_b = true, .seq = 1, .ack = 2001, .flags = TCP_ACK, .sack_l = 1001, .sack_r = 2001 },
	};
	static const bool dup[7] = { [4] = true };
	uint64_t t[7] = { 0, 1, 2, 3, 4, 5, 6 };
	struct acks_seen seen = { 0 };
	struct an_config cfg = { .acks = true, .delack_ns = 10000000, .on_ack = keep_ack, .ctx = &seen };
	struct an *a;
	int n = 0;
	(void)state;

	pcap_of(b, segs, t, 7);
	a = analyse(b, &cfg);
	for (int i = 0; i < seen.n; i++) {
		const struct an_ack *e = &seen.v[i];

		if (e->data_dir != 1)
			continue;
		n++;
		tk_assert_cmp(e->dupack, ==, dup[e->frame - 1]);
	}
	tk_assert_cmp(n, ==, 5);
	tk_assert_cmp(a->flows[0]->d[1].dupacks, ==, 1);
	an_free(a);
	free(b);
}

/* the receiver ACKs by MSS inside one 10000-byte super-segment */
static void test_ack_inside_super_segment(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[3] = {
		{ .seq = 1, .flags = TCP_ACK, .len = 10000 },
		{ .from_b = true, .ack = 1, .flags = TCP_ACK },
		{ .from_b = true, .ack = 2897, .flags = TCP_ACK },
	};
	uint64_t t[3] = { 0, 1, 1000 };
	struct acks_seen seen = { 0 };
	struct an_config cfg = { .acks = true, .mss = 1448, .delack_ns = 10000000, .on_ack = keep_ack, .ctx = &seen };
	struct an *a;
	(void)state;

	pcap_of(b, segs, t, 3);
	a = analyse(b, &cfg);
	/* the data segment's own ACK flag, B's first ACK, then the one that matters */
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.v[2].data_dir, 0);
	assert_int_equal(seen.v[2].acked_bytes, 2896);
	assert_int_equal(seen.v[2].acked_segs, 2);
	assert_int_equal(seen.v[2].covered_pkts, 0);
	assert_int_equal(seen.v[2].delay_ns, 1000000);
	assert_int_equal(seen.v[2].data_frame, 1);
	assert_false(seen.v[2].runt);
	assert_false(seen.v[2].candidate);
	an_free(a);
	free(b);
}

/* no handshake: the side whose packets keep TTL 64 is where the capture was */
static void test_side_from_ttl(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[4] = {
		{ .seq = 1, .flags = TCP_ACK, .len = 1000 },
		{ .from_b = true, .ack = 1001, .flags = TCP_ACK, .ttl = 63 },
		{ .seq = 1001, .flags = TCP_ACK, .len = 1000 },
		{ .from_b = true, .ack = 2001, .flags = TCP_ACK, .ttl = 63 },
	};
	uint64_t t[4] = { 0, 100, 200, 300 };
	struct an_config cfg = { .acks = true, .delack_ns = 10000000 };
	struct an *a;
	(void)state;

	pcap_of(b, segs, t, 4);
	a = analyse(b, &cfg);
	assert_int_equal(a->flows[0]->side[0], AN_SIDE_SENDER);
	assert_int_equal(a->flows[0]->side_basis[0], AN_BASIS_TTL);
	an_free(a);
	/* all at 64: nothing tells, and the handshake is missing */
	segs[1].ttl = segs[3].ttl = 0;
	pcap_of(b, segs, t, 4);
	a = analyse(b, &cfg);
	assert_int_equal(a->flows[0]->side[0], AN_SIDE_UNKNOWN);
	assert_int_equal(a->flows[0]->side_basis[0], AN_BASIS_NONE);
	an_free(a);
	free(b);
}

/* a handshake whose two gaps are close proves nothing */
static void test_side_handshake_needs_a_clear_gap(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[3] = {
		{ .seq = 100, .flags = TCP_SYN },
		{ .from_b = true, .seq = 500, .ack = 101, .flags = TCP_SYN | TCP_ACK },
		{ .seq = 101, .ack = 501, .flags = TCP_ACK },
	};
	uint64_t t[3] = { 0, 30, 42 }; /* 30 us then 12 us: less than 4x apart */
	struct an_config cfg = { .acks = true, .delack_ns = 10000000 };
	struct an *a;
	(void)state;

	pcap_of(b, segs, t, 3);
	a = analyse(b, &cfg);
	assert_int_equal(a->flows[0]->side[0], AN_SIDE_UNKNOWN);
	an_free(a);
	free(b);
}

/* bins are counted in microseconds rounded, from the first frame, like tshark */
static void test_bin_edges(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg s = { .seq = 1, .flags = TCP_ACK, .len = 10 };
	struct seg segs[3] = { s, s, s };
	struct an_config cfg = { .bin_ns = 1000000 };
	struct cap_file c;
	struct an *a;
	(void)state;

	segs[1].seq = 11;
	segs[2].seq = 21;
	/* ns timestamps: 0, 999.4 us (bin 0), 999.6 us (rounds to 1000 us: bin 1) */
	b->n = 0;
	pcap_header(b, 0xa1b23c4d, 1);
	for (int i = 0; i < 3; i++) {
		uint8_t f[128];
		size_t n = eth_frame(f, &segs[i]);
		uint32_t ns[3] = { 0, 999400, 999600 };

		pcap_record(b, 100, ns[i], f, (uint32_t)n, (uint32_t)n + 10);
	}
	a = an_new(&cfg);
	assert_int_equal(cap_open_mem(&c, b->b, b->n), 0);
	assert_int_equal(an_run(a, &c), 0);
	assert_int_equal(a->flows[0]->d[0].nbins, 2);
	assert_int_equal(a->flows[0]->d[0].bins[0].frames, 2);
	assert_int_equal(a->flows[0]->d[0].bins[1].idx, 1);
	assert_int_equal(a->flows[0]->d[0].bins[1].data_bytes, 10);
	an_free(a);
	free(b);
}

/* a new SYN on a 4-tuple whose connection ended starts a second flow */
static void test_port_reuse(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct seg segs[4] = {
		{ .seq = 100, .flags = TCP_SYN },
		{ .seq = 101, .flags = TCP_FIN | TCP_ACK },
		{ .seq = 900000, .flags = TCP_SYN },
		{ .seq = 900001, .flags = TCP_ACK, .len = 5 },
	};
	uint64_t t[4] = { 0, 1, 2, 3 };
	struct an_config cfg = { 0 };
	struct an *a;
	(void)state;

	pcap_of(b, segs, t, 4);
	a = analyse(b, &cfg);
	assert_int_equal(a->nflows, 2);
	assert_int_equal(a->flows[0]->d[0].pkts, 2);
	assert_int_equal(a->flows[1]->d[0].pkts, 2);
	assert_int_equal(a->flows[1]->d[0].unique_bytes, 5);
	an_free(a);
	free(b);
}

static void test_delay_percentiles(void **state)
{
	struct an_dir d = { 0 };
	int64_t v[10] = { 9, 1, 8, 2, 7, 3, 6, 4, 5, 10 };
	(void)state;

	d.delays = v;
	d.ndelays = 10;
	assert_int_equal(an_delay_pct(&d, 50), 5);
	assert_int_equal(an_delay_pct(&d, 90), 9);
	assert_int_equal(an_delay_pct(&d, 99), 10);
	assert_int_equal(an_delay_pct(&d, 0), 1);
	d.ndelays = 0;
	assert_int_equal(an_delay_pct(&d, 50), -1);
}

static void test_flow_selectors(void **state)
{
	struct an_sel s;
	char err[160];
	struct an_flow f = { .id = 3, .family = 4, .port = { 1000, 2000 } };
	(void)state;

	f.addr[0][0] = 10, f.addr[0][3] = 1;
	f.addr[1][0] = 10, f.addr[1][3] = 2;
	assert_int_equal(an_sel_parse("3", &s, err, sizeof(err)), 0);
	assert_true(an_flow_selected(&s, 1, &f));
	assert_int_equal(an_sel_parse("10.0.0.2:2000", &s, err, sizeof(err)), 0);
	assert_true(an_flow_selected(&s, 1, &f));
	assert_int_equal(an_sel_parse(":1000", &s, err, sizeof(err)), 0);
	assert_true(an_flow_selected(&s, 1, &f));
	assert_int_equal(an_sel_parse("10.0.0.2:*-10.0.0.1:1000", &s, err, sizeof(err)), 0);
	assert_true(an_flow_selected(&s, 1, &f));
	assert_int_equal(an_sel_parse("10.0.0.2:2000,10.0.0.1:1001", &s, err, sizeof(err)), 0);
	assert_false(an_flow_selected(&s, 1, &f));
	assert_int_equal(an_sel_parse("[fd00::1]:443", &s, err, sizeof(err)), 0);
	assert_int_equal(s.end[0].family, 6);
	assert_false(an_flow_selected(&s, 1, &f));

	assert_int_equal(an_sel_parse("10.0.0.1", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "'10.0.0.1' is not an endpoint (ADDR:PORT, [ADDR6]:PORT, :PORT or ADDR:*)");
	assert_int_equal(an_sel_parse("10.0.0.1:70000", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "'70000' is not a port (0..65535)");
	assert_int_equal(an_sel_parse("fd00::1:443", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "'fd00::1' is not an IPv4 address (IPv6 goes in brackets)");
	assert_int_equal(an_sel_parse("0", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "'0' is not a flow number (1.. as `bbrpcap flows` lists them)");
}

/* --- several files read as one ------------------------------------------------------ */

struct overlaps {
	int n;
	const char *earlier, *later;
};

static void note_overlap(void *ctx, const char *earlier, const char *later)
{
	struct overlaps *o = ctx;

	o->n++;
	o->earlier = earlier;
	o->later = later;
}

/* three frames of A's data at base_us + 0, 10, 20 us */
static void three_frames(struct buf *b, uint64_t base_us, uint32_t seq)
{
	struct seg segs[3];
	uint64_t t[3];

	for (int i = 0; i < 3; i++) {
		segs[i] = (struct seg){ .seq = seq + (uint32_t)i * 100, .flags = TCP_ACK, .len = 100 };
		t[i] = base_us + (uint64_t)i * 10;
	}
	pcap_of(b, segs, t, 3);
}

/* every frame of the set: its number and time, in order */
static int read_set(struct cap_set *s, uint64_t *no, int64_t *ts, int max)
{
	struct cap_frame f;
	int n = 0, rc;

	while ((rc = cap_set_next(s, &f)) == 1) {
		tk_assert_cmp(n, <, max);
		no[n] = f.no;
		ts[n++] = f.ts_ns;
	}
	assert_int_equal(rc, 0);
	return n;
}

/* given newest first, read oldest first; the numbers run on across files */
static void test_set_time_order(void **state)
{
	struct buf *b1 = calloc(1, sizeof(*b1)), *b2 = calloc(1, sizeof(*b2)), *b3 = calloc(1, sizeof(*b3));
	struct overlaps o = { 0 };
	struct cap_set s;
	uint64_t no[16];
	int64_t ts[16];
	(void)state;

	three_frames(b1, 0, 1);
	three_frames(b2, 1000, 301);
	three_frames(b3, 2000, 601);
	struct cap_member m[3] = { { .path = "c", .buf = b3->b, .len = b3->n },
				   { .path = "a", .buf = b1->b, .len = b1->n },
				   { .path = "b", .buf = b2->b, .len = b2->n } };
	assert_int_equal(cap_set_open_mem(&s, m, 3), 0);
	s.on_overlap = note_overlap;
	s.ctx = &o;
	assert_string_equal(s.files[0].path, "a");
	assert_string_equal(s.files[2].path, "c");
	assert_int_equal(read_set(&s, no, ts, 16), 9);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(no[i], i + 1);
		if (i)
			tk_assert_cmp(ts[i], >, ts[i - 1]);
	}
	assert_int_equal(o.n, 0);
	cap_set_close(&s);
	free(b1);
	free(b2);
	free(b3);
}

/* a file starting before the last frame of the one before: said, with both names */
static void test_set_overlap(void **state)
{
	struct buf *b1 = calloc(1, sizeof(*b1)), *b2 = calloc(1, sizeof(*b2));
	struct overlaps o = { 0 };
	struct cap_set s;
	uint64_t no[16];
	int64_t ts[16];
	(void)state;

	three_frames(b1, 0, 1);
	three_frames(b2, 15, 301); /* starts between the first file's 2nd and 3rd frames */
	struct cap_member m[2] = { { .path = "late", .buf = b2->b, .len = b2->n },
				   { .path = "early", .buf = b1->b, .len = b1->n } };
	assert_int_equal(cap_set_open_mem(&s, m, 2), 0);
	s.on_overlap = note_overlap;
	s.ctx = &o;
	assert_int_equal(read_set(&s, no, ts, 16), 6);
	assert_int_equal(o.n, 1);
	assert_string_equal(o.earlier, "early");
	assert_string_equal(o.later, "late");
	/* read one after the other, as mergecap -a: the older frame follows */
	tk_assert_cmp(ts[3], <, ts[2]);
	assert_int_equal(no[3], 4);
	cap_set_close(&s);
	free(b1);
	free(b2);
}

/* each frame keeps its own file's link type; a file without frames counts for nothing */
static void test_set_linktypes_and_empty_file(void **state)
{
	struct buf *eth = calloc(1, sizeof(*eth)), *raw = calloc(1, sizeof(*raw)), *none = calloc(1, sizeof(*none));
	struct seg sg = { .seq = 1001, .flags = TCP_ACK, .len = 100 };
	struct an_config cfg = { 0 };
	uint8_t f[128];
	size_t len = ipv4_tcp(f, &sg, 0, false);
	struct cap_set s;
	struct an *a = an_new(&cfg);
	(void)state;

	three_frames(eth, 0, 1);
	pcap_header(raw, 0xa1b2c3d4, 101);
	pcap_record(raw, 1700000001, 0, f, (uint32_t)len, (uint32_t)len + 100);
	pcap_header(none, 0xa1b2c3d4, 1);
	struct cap_member m[3] = { { .path = "raw", .buf = raw->b, .len = raw->n },
				   { .path = "none", .buf = none->b, .len = none->n },
				   { .path = "eth", .buf = eth->b, .len = eth->n } };
	assert_int_equal(cap_set_open_mem(&s, m, 3), 0);
	assert_int_equal(an_run_set(a, &s), 0);
	assert_int_equal(a->frames, 4);
	assert_int_equal(a->tcp_frames, 4);
	assert_int_equal(a->nlinktypes, 2);
	assert_int_equal(a->linktypes[0], 1);
	assert_int_equal(a->linktypes[1], 101);
	assert_int_equal(a->nflows, 1);
	assert_int_equal(a->flows[0]->d[0].unique_bytes, 400);
	cap_set_close(&s);
	an_free(a);
	free(eth);
	free(raw);
	free(none);
}

/* a damaged record in the second file: that file, its own frame and offset */
static void test_set_damage(void **state)
{
	struct buf *b1 = calloc(1, sizeof(*b1)), *b2 = calloc(1, sizeof(*b2)), *bad = calloc(1, sizeof(*bad));
	struct cap_set s;
	struct cap_frame f;
	int n = 0, rc;
	(void)state;

	three_frames(b1, 0, 1);
	three_frames(b2, 1000, 301);
	b2->n -= 30;
	struct cap_member m[2] = { { .path = "second", .buf = b2->b, .len = b2->n },
				   { .path = "first", .buf = b1->b, .len = b1->n } };
	assert_int_equal(cap_set_open_mem(&s, m, 2), 0);
	while ((rc = cap_set_next(&s, &f)) == 1)
		n++;
	assert_int_equal(rc, -1);
	assert_int_equal(n, 5);
	assert_string_equal(s.err_path, "second");
	assert_non_null(strstr(s.err, "frame 3 at byte offset "));
	assert_non_null(strstr(s.err, "truncated record"));
	cap_set_close(&s);

	/* damaged before its first frame: refused when the set is opened, named */
	memcpy(bad->b, "junkjunkjunk", 12);
	bad->n = 12;
	m[0] = (struct cap_member){ .path = "junk", .buf = bad->b, .len = bad->n };
	assert_int_equal(cap_set_open_mem(&s, m, 2), -1);
	assert_string_equal(s.err_path, "junk");
	assert_string_equal(s.err, "byte offset 0: unknown magic number 0x6a756e6b (neither pcap nor pcapng)");
	free(b1);
	free(b2);
	free(bad);
}

/* files that cannot be opened are named; stdin only alone */
static void test_set_open_errors(void **state)
{
	const char *missing[2] = { "tests/fixtures/pcap/eth-us.pcap", "/nonexistent/none.pcap" };
	const char *stdin_too[2] = { "tests/fixtures/pcap/eth-us.pcap", "-" };
	struct cap_set s;
	(void)state;

	assert_int_equal(cap_set_open(&s, missing, 2, CAP_READER_MMAP), -1);
	assert_string_equal(s.err_path, "/nonexistent/none.pcap");
	assert_string_equal(s.err, "cannot open: No such file or directory");
	assert_false(s.nomem);
	assert_int_equal(cap_set_open(&s, stdin_too, 2, CAP_READER_MMAP), -1);
	assert_string_equal(s.err_path, "-");
	assert_non_null(strstr(s.err, "only be read alone"));
}

/* the same real capture twice, with either reader: twice the frames, numbered on */
static void test_set_readers_on_fixture(void **state)
{
	const char *twice[2] = { "tests/fixtures/pcap/eth.pcapng", "tests/fixtures/pcap/eth.pcapng" };
	(void)state;

	for (int r = CAP_READER_MMAP; r <= CAP_READER_LIBPCAP; r++) {
		struct overlaps o = { 0 };
		struct cap_set s;
		uint64_t no[512];
		int64_t ts[512];
		int n;

		assert_int_equal(cap_set_open(&s, twice, 2, (enum cap_reader)r), 0);
		s.on_overlap = note_overlap;
		s.ctx = &o;
		n = read_set(&s, no, ts, 512);
		tk_assert_cmp(n, >, 20);
		tk_assert_cmp(n % 2, ==, 0);
		assert_int_equal(no[n - 1], n);
		tk_assert_cmp(ts[n / 2], ==, ts[0]);
		assert_int_equal(o.n, 1);
		cap_set_close(&s);
	}
}

/* --- the mmap reader and libpcap agree on every real capture ---------------------- */

static void test_readers_agree_on_fixtures(void **state)
{
	DIR *d = opendir("tests/fixtures/pcap");
	struct dirent *de;
	int files = 0;
	(void)state;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512];
		struct cap_file m, l;
		struct cap_frame fm, fl;
		uint64_t frames = 0;
		int rm, rl;

		if (!strstr(de->d_name, ".pcap"))
			continue;
		snprintf(path, sizeof(path), "tests/fixtures/pcap/%s", de->d_name);
		assert_int_equal(cap_open(&m, path, CAP_READER_MMAP), 0);
		if (cap_open(&l, path, CAP_READER_LIBPCAP)) {
			print_error("%s: libpcap: %s\n", path, l.err);
			fail();
		}
		for (;;) {
			rm = cap_next(&m, &fm);
			rl = cap_next(&l, &fl);
			assert_int_equal(rm, rl);
			if (rm != 1)
				break;
			frames++;
			tk_assert_cmp(fm.ts_ns, ==, fl.ts_ns);
			assert_int_equal(fm.caplen, fl.caplen);
			assert_int_equal(fm.origlen, fl.origlen);
			assert_int_equal(fm.linktype, fl.linktype);
			assert_memory_equal(fm.data, fl.data, fm.caplen);
		}
		assert_int_equal(rm, 0);
		tk_assert_cmp(frames, >, 10);
		cap_close(&m);
		cap_close(&l);
		files++;
	}
	closedir(d);
	tk_assert_cmp(files, >=, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcap_us_and_frames),
		cmocka_unit_test(test_pcap_swapped_nanoseconds),
		cmocka_unit_test(test_wrong_magic),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_short_header),
		cmocka_unit_test(test_truncated_record),
		cmocka_unit_test(test_truncated_record_header),
		cmocka_unit_test(test_nonsense_lengths),
		cmocka_unit_test(test_pcapng_interfaces_and_resolution),
		cmocka_unit_test(test_pcapng_errors),
		cmocka_unit_test(test_pcapng_two_sections),
		cmocka_unit_test(test_decode_vlan_tags),
		cmocka_unit_test(test_decode_cooked_and_raw),
		cmocka_unit_test(test_decode_ipv6_extension_headers),
		cmocka_unit_test(test_decode_length_from_frame),
		cmocka_unit_test(test_decode_cut_and_malformed),
		cmocka_unit_test(test_sequence_wraparound),
		cmocka_unit_test(test_holes_and_retransmissions),
		cmocka_unit_test(test_many_holes),
		cmocka_unit_test(test_delayed_ack_candidate),
		cmocka_unit_test(test_dupacks),
		cmocka_unit_test(test_dupack_proved_by_sack),
		cmocka_unit_test(test_ack_inside_super_segment),
		cmocka_unit_test(test_side_from_ttl),
		cmocka_unit_test(test_side_handshake_needs_a_clear_gap),
		cmocka_unit_test(test_bin_edges),
		cmocka_unit_test(test_port_reuse),
		cmocka_unit_test(test_delay_percentiles),
		cmocka_unit_test(test_flow_selectors),
		cmocka_unit_test(test_set_time_order),
		cmocka_unit_test(test_set_overlap),
		cmocka_unit_test(test_set_linktypes_and_empty_file),
		cmocka_unit_test(test_set_damage),
		cmocka_unit_test(test_set_open_errors),
		cmocka_unit_test(test_set_readers_on_fixture),
		cmocka_unit_test(test_readers_agree_on_fixtures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
