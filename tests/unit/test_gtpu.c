// SPDX-License-Identifier: GPL-2.0-only
/* The GTP-U codec (upf/gtpu.c): header, extension chain, frame, malformations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "upf/gtpu.h"

/* a heap copy of exactly len bytes, so that ASan catches any read past the end */
static uint8_t *exact(const uint8_t *p, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	assert_non_null(b);
	memcpy(b, p, len);
	return b;
}

static int parse_exact(const uint8_t *p, size_t len, struct gtpu_hdr *h)
{
	uint8_t *b = exact(p, len);
	int rc = gtpu_parse(b, len, h);

	free(b);
	return rc;
}

static void test_minimal_header(void **state)
{
	/* flags 0x30: version 1, PT 1; G-PDU; length 4; TEID 0x01020304; 4 bytes of T-PDU */
	const uint8_t m[] = { 0x30, 0xff, 0x00, 0x04, 0x01, 0x02, 0x03, 0x04, 0x45, 0, 0, 0 };
	struct gtpu_hdr h;
	(void)state;

	assert_int_equal(parse_exact(m, sizeof(m), &h), GTPU_OK);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.msg_type, GTPU_MSG_GPDU);
	assert_int_equal(h.length, 4);
	assert_int_equal(h.teid, 0x01020304);
	assert_false(h.has_opt);
	assert_int_equal(h.n_ext, 0);
	assert_false(h.has_pdu_session);
	assert_int_equal(h.hdr_len, 8);
	assert_int_equal(h.tpdu_len, 4);
}

static void test_sequence_and_npdu(void **state)
{
	/* S and PN set: sequence 0xBEEF, N-PDU 0x42, no extension */
	const uint8_t m[] = { 0x33, 0xff, 0x00, 0x06, 0, 0, 0, 9, 0xbe, 0xef, 0x42, 0x00, 0xaa, 0xbb };
	struct gtpu_hdr h;
	(void)state;

	assert_int_equal(parse_exact(m, sizeof(m), &h), GTPU_OK);
	assert_true(h.has_opt);
	assert_int_equal(h.seq, 0xbeef);
	assert_int_equal(h.npdu, 0x42);
	assert_int_equal(h.next_ext, 0);
	assert_int_equal(h.hdr_len, 12);
	assert_int_equal(h.tpdu_len, 2);
}

static void test_pdu_session_container(void **state)
{
	/* E set, next extension 0x85: length 1, UL (type 1), QFI 9, next 0 */
	const uint8_t m[] = { 0x34, 0xff, 0x00, 0x09, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0x85,
			      0x01, 0x10, 0x09, 0x00, 0x60 };
	struct gtpu_hdr h;
	(void)state;

	assert_int_equal(parse_exact(m, sizeof(m), &h), GTPU_OK);
	assert_int_equal(h.teid, 0xdeadbeef);
	assert_int_equal(h.n_ext, 1);
	assert_int_equal(h.ext_type[0], GTPU_EXT_PDU_SESSION);
	assert_true(h.has_pdu_session);
	assert_int_equal(h.pdu_type, GTPU_PDU_UL);
	assert_int_equal(h.qfi, 9);
	assert_int_equal(h.hdr_len, 16);
	assert_int_equal(h.tpdu_len, 1);
}

static void test_extension_chain(void **state)
{
	/* UDP port (0x40, 1 unit) -> PDCP number (0xC0, 1 unit) -> PDU session DL QFI 63 */
	const uint8_t m[] = { 0x34, 0xff, 0x00, 0x10, 0, 0, 0, 1, 0, 0, 0, 0x40,
			      0x01, 0x08, 0x68, 0xc0, /* port 2152, next 0xC0 */
			      0x01, 0x00, 0x07, 0x85, /* PDCP 7, next 0x85 */
			      0x01, 0x00, 0x3f, 0x00 };
	struct gtpu_hdr h;
	(void)state;

	assert_int_equal(parse_exact(m, sizeof(m), &h), GTPU_OK);
	assert_int_equal(h.n_ext, 3);
	assert_int_equal(h.ext_type[0], GTPU_EXT_UDP_PORT);
	assert_int_equal(h.ext_type[1], GTPU_EXT_PDCP_NUMBER);
	assert_int_equal(h.ext_type[2], GTPU_EXT_PDU_SESSION);
	assert_int_equal(h.pdu_type, GTPU_PDU_DL);
	assert_int_equal(h.qfi, 63);
	assert_int_equal(h.hdr_len, 24);
	assert_int_equal(h.tpdu_len, 0);
}

static void test_next_ext_ignored_without_e(void **state)
{
	/* S set, E clear: the next-extension octet is not followed */
	const uint8_t m[] = { 0x32, 0xff, 0x00, 0x04, 0, 0, 0, 1, 0, 1, 0, 0x85 };
	struct gtpu_hdr h;
	(void)state;

	assert_int_equal(parse_exact(m, sizeof(m), &h), GTPU_OK);
	assert_int_equal(h.next_ext, 0x85);
	assert_int_equal(h.n_ext, 0);
	assert_false(h.has_pdu_session);
}

static void test_malformed(void **state)
{
	struct gtpu_hdr h;
	(void)state;
	const uint8_t v2[] = { 0x50, 0xff, 0x00, 0x00, 0, 0, 0, 1 };   /* version 2 */
	const uint8_t pt0[] = { 0x20, 0xff, 0x00, 0x00, 0, 0, 0, 1 };  /* GTP' */
	const uint8_t longer[] = { 0x30, 0xff, 0x00, 0x05, 0, 0, 0, 1, 1, 2, 3, 4 };
	const uint8_t shorter[] = { 0x30, 0xff, 0x00, 0x03, 0, 0, 0, 1, 1, 2, 3, 4 };
	const uint8_t opt_short[] = { 0x32, 0xff, 0x00, 0x02, 0, 0, 0, 1, 0, 0 };
	const uint8_t ext_zero[] = { 0x34, 0xff, 0x00, 0x08, 0, 0, 0, 1, 0, 0, 0, 0x85,
				     0x00, 0x10, 0x09, 0x00 };
	const uint8_t ext_trunc[] = { 0x34, 0xff, 0x00, 0x08, 0, 0, 0, 1, 0, 0, 0, 0x85,
				      0x02, 0x10, 0x09, 0x00 };
	const uint8_t ext_no_len[] = { 0x34, 0xff, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0x85 };
	uint8_t chain[8 + 4 + 17 * 4];

	assert_int_equal(parse_exact(v2, 7, &h), GTPU_ERR_SHORT);
	assert_int_equal(parse_exact(v2, sizeof(v2), &h), GTPU_ERR_VERSION);
	assert_int_equal(parse_exact(pt0, sizeof(pt0), &h), GTPU_ERR_PT);
	assert_int_equal(parse_exact(longer, sizeof(longer), &h), GTPU_ERR_LENGTH);
	assert_int_equal(parse_exact(shorter, sizeof(shorter), &h), GTPU_ERR_LENGTH);
	assert_int_equal(parse_exact(opt_short, sizeof(opt_short), &h), GTPU_ERR_SHORT);
	assert_int_equal(parse_exact(ext_zero, sizeof(ext_zero), &h), GTPU_ERR_EXT_ZERO);
	assert_int_equal(parse_exact(ext_trunc, sizeof(ext_trunc), &h), GTPU_ERR_EXT_TRUNC);
	assert_int_equal(parse_exact(ext_no_len, sizeof(ext_no_len), &h), GTPU_ERR_EXT_TRUNC);

	/* 17 extension headers of one unit each */
	memset(chain, 0, sizeof(chain));
	chain[0] = 0x34;
	chain[1] = 0xff;
	chain[2] = 0;
	chain[3] = (uint8_t)(sizeof(chain) - 8);
	chain[11] = GTPU_EXT_UDP_PORT;
	for (int i = 0; i < 17; i++) {
		chain[12 + 4 * i] = 1;
		chain[12 + 4 * i + 3] = i < 16 ? GTPU_EXT_UDP_PORT : 0;
	}
	assert_int_equal(parse_exact(chain, sizeof(chain), &h), GTPU_ERR_EXT_CHAIN);
	chain[12 + 4 * 15 + 3] = 0; /* 16 is allowed */
	chain[3] = (uint8_t)(sizeof(chain) - 8);
	assert_int_equal(parse_exact(chain, sizeof(chain) - 4, &h), GTPU_ERR_LENGTH);
}

static void test_every_prefix_is_rejected(void **state)
{
	struct gtpu_build b = {
		.msg_type = GTPU_MSG_GPDU, .teid = 7, .seq_present = true, .seq = 3,
		.npdu_present = true, .npdu = 4, .n_extra = 1,
		.extra = { { .type = GTPU_EXT_UDP_PORT, .len4 = 2 } },
		.pdu_session = true, .pdu_type = GTPU_PDU_UL, .qfi = 5,
	};
	uint8_t m[64];
	struct gtpu_hdr h;
	size_t n;
	(void)state;

	n = gtpu_build_hdr(m, sizeof(m), &b, 3);
	assert_int_equal(n, 8 + 4 + 8 + 4);
	memset(m + n, 0x45, 3);
	assert_int_equal(parse_exact(m, n + 3, &h), GTPU_OK);
	/* a cut message is malformed, whatever the length field says, and never over-read */
	for (size_t len = 0; len < n + 3; len++)
		tk_assert_cmp(parse_exact(m, len, &h), <, 0);
}

static void test_build_parse_roundtrip(void **state)
{
	(void)state;
	for (unsigned int v = 0; v < 64; v++) {
		const uint8_t content[6] = { 1, 2, 3, 4, 5, 6 };
		struct gtpu_build b = {
			.msg_type = v & 1 ? GTPU_MSG_GPDU : GTPU_MSG_END_MARKER,
			.teid = 0x9e3779b9u * (v + 1),
			.seq_present = v & 2, .seq = (uint16_t)(v * 1000),
			.npdu_present = v & 4, .npdu = (uint8_t)v,
			.n_extra = (v >> 3) & 1,
			.extra = { { .type = GTPU_EXT_PDCP_NUMBER, .len4 = 2, .content = content } },
			.pdu_session = v & 16, .pdu_type = (v >> 5) & 1, .qfi = (uint8_t)v,
		};
		uint8_t m[128];
		struct gtpu_hdr h;
		size_t n = gtpu_build_hdr(m, sizeof(m), &b, 10);

		assert_int_equal(n, gtpu_hdr_size(&b));
		memset(m + n, 0, 10);
		assert_int_equal(parse_exact(m, n + 10, &h), GTPU_OK);
		assert_int_equal(h.msg_type, b.msg_type);
		assert_int_equal(h.teid, b.teid);
		assert_int_equal(h.has_opt, b.seq_present || b.npdu_present || b.n_extra || b.pdu_session);
		if (b.seq_present)
			assert_int_equal(h.seq, b.seq);
		if (b.npdu_present)
			assert_int_equal(h.npdu, b.npdu);
		assert_int_equal(h.n_ext, b.n_extra + b.pdu_session);
		assert_int_equal(h.has_pdu_session, b.pdu_session);
		if (b.pdu_session) {
			assert_int_equal(h.qfi, b.qfi & 0x3f);
			assert_int_equal(h.pdu_type, b.pdu_type);
		}
		assert_int_equal(h.hdr_len, n);
		assert_int_equal(h.tpdu_len, 10);
	}
}

static void test_build_limits(void **state)
{
	struct gtpu_build b = { .msg_type = GTPU_MSG_GPDU, .teid = 1 };
	struct gtpu_build zero_ext = { .msg_type = GTPU_MSG_GPDU, .n_extra = 1,
				       .extra = { { .type = 0x40, .len4 = 0 } } };
	uint8_t m[16];
	(void)state;

	assert_int_equal(gtpu_build_hdr(m, 7, &b, 0), 0);          /* no room */
	assert_int_equal(gtpu_build_hdr(m, 8, &b, 65536), 0);      /* length field overflow */
	assert_int_equal(gtpu_build_hdr(m, 8, &b, 65535), 8);
	assert_int_equal(gtpu_build_hdr(m, sizeof(m), &zero_ext, 0), 0);
}

/* ---- frames ------------------------------------------------------------------------ */

static size_t inner_v4(uint8_t *b, uint8_t proto, uint16_t dport, uint16_t len)
{
	memset(b, 0, len);
	b[0] = 0x45;
	b[2] = (uint8_t)(len >> 8);
	b[3] = (uint8_t)len;
	b[8] = 64;
	b[9] = proto;
	inet_pton(AF_INET, "10.0.0.7", b + 12);
	inet_pton(AF_INET, "198.51.100.1", b + 16);
	b[20] = 0x9c;
	b[21] = 0x40;
	b[22] = (uint8_t)(dport >> 8);
	b[23] = (uint8_t)dport;
	return len;
}

static size_t frame(uint8_t *buf, size_t cap, int outer, const uint8_t *tpdu, size_t tlen,
		    uint8_t qfi, uint32_t teid)
{
	struct gtpu_frame_spec s = {
		.outer_family = outer, .sport = GTPU_PORT, .ttl = 64,
		.gtp = { .msg_type = GTPU_MSG_GPDU, .teid = teid, .pdu_session = true,
			 .pdu_type = GTPU_PDU_UL, .qfi = qfi },
	};

	if (outer == 6) {
		inet_pton(AF_INET6, "fd00:3::2", s.outer_src);
		inet_pton(AF_INET6, "fd00:3::1", s.outer_dst);
	} else {
		inet_pton(AF_INET, "172.16.0.2", s.outer_src);
		inet_pton(AF_INET, "172.16.255.1", s.outer_dst);
	}
	return gtpu_build_frame(buf, cap, &s, tpdu, tlen);
}

static int parse_frame_exact(const uint8_t *f, size_t len, struct gtpu_pkt *p)
{
	uint8_t *b = exact(f, len);
	int rc = gtpu_parse_frame(b, len, p, NULL);

	free(b);
	return rc;
}

static void test_frame_v4(void **state)
{
	uint8_t in[100], f[256];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	inner_v4(in, 6, 443, 60);
	n = frame(f, sizeof(f), 4, in, 60, 9, 0xabcdef01);
	assert_int_equal(n, 14 + 20 + 8 + 16 + 60);
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_OK);
	assert_int_equal(p.teid, 0xabcdef01);
	assert_int_equal(p.outer_family, 4);
	assert_int_equal(p.inner_family, 4);
	assert_true(p.has_qfi);
	assert_int_equal(p.qfi, 9);
	assert_int_equal(p.tpdu_off, 14 + 20 + 8 + 16);
	assert_int_equal(p.tpdu_len, 60);
	assert_int_equal(p.inner_len, 60);
	assert_int_equal(p.proto, 6);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 443);
	assert_memory_equal(p.src, "\x0a\x00\x00\x07", 4);
	assert_memory_equal(p.dst, "\xc6\x33\x64\x01", 4);
	/* the outer IPv4 header checksum verifies */
	assert_int_equal(gtpu_csum_fold(gtpu_csum_add(0, f + 14, 20)), 0);
	/* Ethernet padding after the IP packet is not part of it */
	memset(f + n, 0, 8);
	assert_int_equal(parse_frame_exact(f, n + 8, &p), GTPU_OK);
	assert_int_equal(p.tpdu_len, 60);
}

static void test_frame_v6_and_vlan(void **state)
{
	uint8_t in[100], f[300], v[300];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	/* inner IPv6 UDP to port 53 */
	memset(in, 0, 60);
	in[0] = 0x60;
	in[5] = 20;
	in[6] = 17;
	in[7] = 64;
	inet_pton(AF_INET6, "2001:db8:a::1", in + 8);
	inet_pton(AF_INET6, "2001:db8:ffff::53", in + 24);
	in[40] = 0x12;
	in[41] = 0x34;
	in[43] = 53;
	n = frame(f, sizeof(f), 6, in, 60, 5, 42);
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_OK);
	assert_int_equal(p.outer_family, 6);
	assert_int_equal(p.inner_family, 6);
	assert_int_equal(p.proto, 17);
	assert_int_equal(p.dport, 53);
	assert_int_equal(p.sport, 0x1234);
	assert_int_equal(p.inner_len, 60);
	assert_memory_equal(p.src, in + 8, 16);
	/* the same behind an 802.1Q tag */
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0;
	v[15] = 100;
	memcpy(v + 16, f + 12, n - 12);
	assert_int_equal(parse_frame_exact(v, n + 4, &p), GTPU_OK);
	assert_int_equal(p.tpdu_off, 14 + 4 + 40 + 8 + 16);
	assert_int_equal(p.teid, 42);
}

static void test_frame_not_user_data(void **state)
{
	uint8_t in[60], f[200];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	inner_v4(in, 17, 53, 40);
	n = frame(f, sizeof(f), 4, in, 40, 9, 5);
	/* another UDP port */
	f[14 + 20 + 3] = 0x35;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_NOT_GTPU);
	f[14 + 20 + 3] = 0x68;
	/* a fragment */
	f[14 + 6] = 0x20;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_NOT_GTPU);
	f[14 + 6] = 0;
	/* ARP */
	f[12] = 0x08;
	f[13] = 0x06;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_NOT_GTPU);
	f[13] = 0x00;
	/* an echo request is GTP-U, but not user data */
	f[14 + 20 + 8 + 1] = GTPU_MSG_ECHO_REQ;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_NOT_GPDU);
	assert_int_equal(p.teid, 5);
	f[14 + 20 + 8 + 1] = GTPU_MSG_GPDU;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_OK);
}

static void test_frame_malformed(void **state)
{
	uint8_t in[60], f[200];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	inner_v4(in, 6, 80, 40);
	n = frame(f, sizeof(f), 4, in, 40, 9, 5);
	assert_int_equal(parse_frame_exact(f, 13, &p), GTPU_ERR_FRAME);
	assert_int_equal(parse_frame_exact(f, 14 + 19, &p), GTPU_ERR_IP);
	/* every cut of the frame is malformed (the IP total length no longer fits) */
	for (size_t len = 14; len < n; len++)
		tk_assert_cmp(parse_frame_exact(f, len, &p), <, 0);
	/* UDP length beyond the IP packet */
	f[14 + 20 + 5] += 1;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_ERR_UDP);
	f[14 + 20 + 5] -= 1;
	/* inner total length beyond the T-PDU */
	f[14 + 20 + 8 + 16 + 3] = 41;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_ERR_INNER);
	f[14 + 20 + 8 + 16 + 3] = 40;
	/* GTP version 2 inside a good frame */
	f[14 + 20 + 8] = 0x54;
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_ERR_VERSION);
}

/*
 * The fast path against the general one, on one frame of exactly len bytes:
 * the same status and the same packet, field for field.
 */
static int fast_vs_general(const uint8_t *f, size_t len)
{
	uint8_t *b = exact(f, len);
	struct gtpu_pkt fast, gen, dflt;
	struct gtpu_hdr h;
	int rc_fast = gtpu_parse_frame_fast(b, len, &fast);
	int rc_gen = gtpu_parse_frame(b, len, &gen, &h);   /* with a header: the general path */
	int rc = gtpu_parse_frame(b, len, &dflt, NULL);    /* the data path's call */

	free(b);
	assert_int_equal(rc, rc_gen);
	assert_memory_equal(&dflt, &gen, sizeof(gen));
	if (rc_fast != GTPU_FAST_NO) {
		assert_int_equal(rc_fast, GTPU_OK);
		assert_int_equal(rc_gen, GTPU_OK);
		assert_memory_equal(&fast, &gen, sizeof(gen));
	}
	return rc_fast;
}

/* every common frame shape takes the fast path, and any change to one gives the general path's answer */
static void test_fast_path_matches_general(void **state)
{
	uint8_t in[200], f[300];
	unsigned int fast_ok = 0, cases = 0;
	(void)state;

	for (int outer = 4; outer <= 6; outer += 2) {
		for (int kind = 0; kind < 6; kind++) {
			size_t tlen, n;

			switch (kind) {
			case 0: tlen = inner_v4(in, 6, 443, 60); break;
			case 1: tlen = inner_v4(in, 17, 53, 28); break;        /* 8 bytes of UDP, no payload */
			case 2: tlen = inner_v4(in, 1, 0, 40); break;          /* ICMP: no ports */
			case 3: tlen = inner_v4(in, 17, 5060, 24); in[6] = 0x20; break; /* first fragment */
			case 4: tlen = inner_v4(in, 6, 80, 40); in[7] = 0x10; break;    /* a later fragment */
			default:
				memset(in, 0, 60);
				in[0] = 0x60;
				in[5] = 20;
				in[6] = 17;
				inet_pton(AF_INET6, "2001:db8:a::1", in + 8);
				inet_pton(AF_INET6, "2001:db8:ffff::53", in + 24);
				in[41] = 7;
				in[43] = 53;
				tlen = 60;
			}
			n = frame(f, sizeof(f), outer, in, tlen, 9, 0x01020304u * (unsigned int)(kind + 1));
			tk_assert_cmp(n, >, 0);
			/* the frame as built, and with 6 bytes of Ethernet padding */
			assert_int_equal(fast_vs_general(f, n), GTPU_OK);
			memset(f + n, 0xa5, 6);
			assert_int_equal(fast_vs_general(f, n + 6), GTPU_OK);
			fast_ok += 2;
			/* every cut */
			for (size_t len = 0; len < n; len++, cases++)
				fast_vs_general(f, len);
			/* every bit of the headers and of the inner packet's first 48 octets flipped */
			for (size_t i = 0; i < n && i < (outer == 4 ? 58u : 78u) + 48; i++) {
				static const uint8_t xr[9] = { 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0xff };
				uint8_t keep = f[i];

				for (int v = 0; v < 9; v++, cases++) {
					f[i] = keep ^ xr[v];
					fast_vs_general(f, n);
				}
				f[i] = 0;
				fast_vs_general(f, n);
				f[i] = keep;
			}
		}
	}
	assert_int_equal(fast_ok, 24);
	tk_assert_cmp(cases, >, 5000);
}

/* the shapes the fast path leaves to the general one, each still parsed right */
static void test_fast_path_declines(void **state)
{
	uint8_t in[100], f[300], v[300];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	inner_v4(in, 6, 443, 60);
	n = frame(f, sizeof(f), 4, in, 60, 9, 77);
	/* behind a VLAN tag */
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0;
	v[15] = 7;
	memcpy(v + 16, f + 12, n - 12);
	assert_int_equal(gtpu_parse_frame_fast(v, n + 4, &p), GTPU_FAST_NO);
	assert_int_equal(fast_vs_general(v, n + 4), GTPU_FAST_NO);
	assert_int_equal(parse_frame_exact(v, n + 4, &p), GTPU_OK);
	assert_int_equal(p.teid, 77);
	/* no extension header (flags 0x30) */
	{
		struct gtpu_frame_spec s = { .outer_family = 4, .sport = GTPU_PORT, .ttl = 64,
					     .gtp = { .msg_type = GTPU_MSG_GPDU, .teid = 78 } };

		n = gtpu_build_frame(f, sizeof(f), &s, in, 60);
		assert_int_equal(fast_vs_general(f, n), GTPU_FAST_NO);
		assert_int_equal(parse_frame_exact(f, n, &p), GTPU_OK);
		assert_int_equal(p.teid, 78);
		assert_false(p.has_qfi);
	}
	/* two extension headers before the container */
	{
		struct gtpu_frame_spec s = {
			.outer_family = 4, .sport = GTPU_PORT, .ttl = 64,
			.gtp = { .msg_type = GTPU_MSG_GPDU, .teid = 79, .n_extra = 1,
				 .extra = { { .type = GTPU_EXT_UDP_PORT, .len4 = 1 } },
				 .pdu_session = true, .qfi = 5 },
		};

		n = gtpu_build_frame(f, sizeof(f), &s, in, 60);
		assert_int_equal(fast_vs_general(f, n), GTPU_FAST_NO);
		assert_int_equal(parse_frame_exact(f, n, &p), GTPU_OK);
		assert_int_equal(p.qfi, 5);
	}
	/* a malformed frame is never the fast path's: GTP version 2 */
	n = frame(f, sizeof(f), 4, in, 60, 9, 80);
	f[14 + 20 + 8] = 0x54;
	assert_int_equal(fast_vs_general(f, n), GTPU_FAST_NO);
	assert_int_equal(parse_frame_exact(f, n, &p), GTPU_ERR_VERSION);
}

static void test_status_names(void **state)
{
	(void)state;
	for (int s = GTPU_ERR_MIN; s <= GTPU_NOT_GPDU; s++) {
		assert_string_not_equal(gtpu_strerror(s), "unknown status");
		assert_string_not_equal(gtpu_status_name(s), "unknown");
	}
	assert_string_equal(gtpu_status_name(GTPU_ERR_EXT_ZERO), "ext_zero");
	assert_string_equal(gtpu_strerror(GTPU_ERR_EXT_ZERO), "extension header of length 0");
	assert_string_equal(gtpu_strerror(99), "unknown status");
}

static void test_fix_checksums(void **state)
{
	uint8_t in[60], f[200];
	struct gtpu_pkt p;
	size_t n;
	(void)state;

	inner_v4(in, 17, 53, 40);
	in[24] = 0;
	in[25] = 20; /* UDP length */
	n = frame(f, sizeof(f), 4, in, 40, 9, 5);
	gtpu_frame_fix_checksums(f, n);
	assert_int_equal(gtpu_parse_frame(f, n, &p, NULL), GTPU_OK);
	/* inner IPv4 header sums to zero, and the outer IPv4 header still does */
	assert_int_equal(gtpu_csum_fold(gtpu_csum_add(0, f + p.tpdu_off, 20)), 0);
	assert_int_equal(gtpu_csum_fold(gtpu_csum_add(0, f + 14, 20)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_header),
		cmocka_unit_test(test_sequence_and_npdu),
		cmocka_unit_test(test_pdu_session_container),
		cmocka_unit_test(test_extension_chain),
		cmocka_unit_test(test_next_ext_ignored_without_e),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_prefix_is_rejected),
		cmocka_unit_test(test_build_parse_roundtrip),
		cmocka_unit_test(test_build_limits),
		cmocka_unit_test(test_frame_v4),
		cmocka_unit_test(test_frame_v6_and_vlan),
		cmocka_unit_test(test_frame_not_user_data),
		cmocka_unit_test(test_frame_malformed),
		cmocka_unit_test(test_fast_path_matches_general),
		cmocka_unit_test(test_fast_path_declines),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_fix_checksums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
