// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the GTP-U codec: the header parser and the frame parser on exact-size
 * copies of the input (so ASan sees any read past the end), the frame
 * parser's fast path against its general path (same status, same packet),
 * the checksum fixer, and a build -> parse round trip driven by the input.
 * Any broken invariant aborts, so libFuzzer reports it as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upf/gtpu.h"

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "fuzz_gtpu: invariant broken: %s\n", #c); \
			abort();                                               \
		}                                                              \
	} while (0)

static void check_header(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	struct gtpu_hdr h;
	int rc;

	memcpy(b, data, size);
	rc = gtpu_parse(b, size, &h);
	CHECK(rc <= 0 && rc >= GTPU_ERR_MIN);
	if (rc == GTPU_OK) {
		CHECK((size_t)h.hdr_len + h.tpdu_len == size);
		CHECK((size_t)h.length + GTPU_HDR_LEN == size);
		CHECK(h.version == 1);
		CHECK(h.n_ext <= GTPU_MAX_EXT);
		CHECK(h.qfi < 64);
		CHECK(h.has_opt || h.hdr_len == GTPU_HDR_LEN);
		CHECK(!h.n_ext || (h.flags & GTPU_FLAG_E));
	}
	free(b);
}

static void check_frame(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	struct gtpu_pkt p, p2, pf;
	struct gtpu_hdr h;
	int rc, rc2, rcf;

	memcpy(b, data, size);
	rc = gtpu_parse_frame(b, size, &p, &h);
	CHECK(rc <= GTPU_NOT_GPDU && rc >= GTPU_ERR_MIN);
	/* without the full header (the fast path first): the same answer, the same packet */
	rc2 = gtpu_parse_frame(b, size, &p2, NULL);
	CHECK(rc == rc2);
	CHECK(!memcmp(&p, &p2, sizeof(p)));
	/* the fast path alone answers only for well-formed G-PDUs, as the general path does */
	rcf = gtpu_parse_frame_fast(b, size, &pf);
	CHECK(rcf == GTPU_FAST_NO || rcf == GTPU_OK);
	if (rcf == GTPU_OK)
		CHECK(rc == GTPU_OK && !memcmp(&p, &pf, sizeof(p)));
	if (rc == GTPU_OK || rc == GTPU_NOT_GPDU) {
		CHECK((size_t)p.tpdu_off + p.tpdu_len <= size);
		CHECK(p.teid == h.teid);
		CHECK(p.outer_family == 4 || p.outer_family == 6);
	}
	if (rc == GTPU_OK && p.inner_family)
		CHECK(p.inner_len <= p.tpdu_len);
	gtpu_frame_fix_checksums(b, size);
	/* fixing checksums never changes what the frame parses to */
	CHECK(gtpu_parse_frame(b, size, &p, NULL) == rc);
	free(b);
}

/* a header built from the first bytes of the input parses back to the same fields */
static void check_roundtrip(const uint8_t *d, size_t size)
{
	uint8_t content[4][64], m[512];
	struct gtpu_build b;
	struct gtpu_hdr h;
	size_t n, tlen;

	if (size < 12)
		return;
	memset(&b, 0, sizeof(b));
	b.msg_type = d[0];
	b.teid = (uint32_t)d[1] << 24 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 8 | d[4];
	b.seq_present = d[5] & 1;
	b.npdu_present = d[5] & 2;
	b.pdu_session = d[5] & 4;
	b.n_extra = (d[5] >> 3) & 3;
	b.seq = (uint16_t)(d[6] << 8 | d[7]);
	b.npdu = d[8];
	b.pdu_type = d[9] & 1;
	b.qfi = d[9] >> 2;
	tlen = d[10];
	for (unsigned int i = 0; i < b.n_extra; i++) {
		/* never 0 (end of chain), never 0x85: the first PDU Session Container wins */
		b.extra[i].type = (uint8_t)(d[11] + i) | 1;
		if (b.extra[i].type == GTPU_EXT_PDU_SESSION)
			b.extra[i].type = GTPU_EXT_PDCP_NUMBER;
		b.extra[i].len4 = (uint8_t)(1 + (d[11] >> (2 * i) & 3));
		memset(content[i], d[11], sizeof(content[i]));
		b.extra[i].content = content[i];
	}
	n = gtpu_build_hdr(m, sizeof(m) - 255, &b, tlen);
	CHECK(n == gtpu_hdr_size(&b));
	memset(m + n, 0xee, tlen);
	CHECK(gtpu_parse(m, n + tlen, &h) == GTPU_OK);
	CHECK(h.teid == b.teid && h.msg_type == b.msg_type);
	CHECK(h.hdr_len == n && h.tpdu_len == tlen);
	CHECK(h.n_ext == b.n_extra + b.pdu_session);
	if (b.seq_present)
		CHECK(h.seq == b.seq);
	if (b.npdu_present)
		CHECK(h.npdu == b.npdu);
	if (b.pdu_session)
		CHECK(h.has_pdu_session && h.qfi == (b.qfi & 0x3f) && h.pdu_type == b.pdu_type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_header(data, size);
	check_frame(data, size);
	check_roundtrip(data, size);
	return 0;
}
