// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GTP-U codec: a header parsed and built, a whole N3 frame parsed to the
 * inner 5-tuple (the general parser out of line, the fast path tried first),
 * and frames built with their IP and UDP checksums.
 */
#include <string.h>

#include "gtpu.h"
#include "gtpu_fast.h"

static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * Inlined into the frame parser with a local header, so that the stores the
 * data path never reads (extension types, sequence, ...) are removed.
 */
static inline __attribute__((always_inline)) int parse_hdr(const uint8_t *buf, size_t len,
							   struct gtpu_hdr *h)
{
	size_t off = GTPU_HDR_LEN;
	uint8_t next;

	h->has_opt = false;
	h->seq = 0;
	h->npdu = 0;
	h->next_ext = 0;
	h->n_ext = 0;
	h->has_pdu_session = false;
	h->pdu_type = 0;
	h->qfi = 0;
	h->hdr_len = 0;
	h->tpdu_len = 0;
	if (len < GTPU_HDR_LEN)
		return GTPU_ERR_SHORT;
	h->flags = buf[0];
	h->version = buf[0] >> 5;
	h->msg_type = buf[1];
	h->length = gtpu_rd16(buf + 2);
	h->teid = gtpu_rd32(buf + 4);
	/* one branch for the common case: version 1, PT set, length right */
	if (__builtin_expect((h->version != 1) | !(h->flags & GTPU_FLAG_PT) |
			     ((size_t)h->length + GTPU_HDR_LEN != len), 0)) {
		if (h->version != 1)
			return GTPU_ERR_VERSION;
		if (!(h->flags & GTPU_FLAG_PT))
			return GTPU_ERR_PT;
		return GTPU_ERR_LENGTH;
	}
	if (h->flags & (GTPU_FLAG_E | GTPU_FLAG_S | GTPU_FLAG_PN)) {
		if (len < GTPU_HDR_LEN + GTPU_OPT_LEN)
			return GTPU_ERR_SHORT;
		h->has_opt = true;
		h->seq = gtpu_rd16(buf + 8);
		h->npdu = buf[10];
		h->next_ext = buf[11];
		off += GTPU_OPT_LEN;
		/* the next-extension field means something only when E is set */
		next = (h->flags & GTPU_FLAG_E) ? h->next_ext : GTPU_EXT_NONE;
		while (next != GTPU_EXT_NONE) {
			size_t elen;

			if (h->n_ext == GTPU_MAX_EXT)
				return GTPU_ERR_EXT_CHAIN;
			if (off >= len)
				return GTPU_ERR_EXT_TRUNC;
			elen = (size_t)buf[off] * 4;
			if (__builtin_expect(!elen | (elen > len - off), 0))
				return !elen ? GTPU_ERR_EXT_ZERO : GTPU_ERR_EXT_TRUNC;
			h->ext_type[h->n_ext++] = next;
			/* elen >= 4: the two octets after the length octet exist */
			if (next == GTPU_EXT_PDU_SESSION && !h->has_pdu_session) {
				h->has_pdu_session = true;
				h->pdu_type = buf[off + 1] >> 4;
				h->qfi = buf[off + 2] & 0x3f;
			}
			next = buf[off + elen - 1];
			off += elen;
		}
	}
	h->hdr_len = (uint16_t)off;
	h->tpdu_len = (uint16_t)(len - off);
	return GTPU_OK;
}

int gtpu_parse(const uint8_t *buf, size_t len, struct gtpu_hdr *h)
{
	return parse_hdr(buf, len, h);
}

const char *gtpu_strerror(int status)
{
	switch (status) {
	case GTPU_OK: return "ok";
	case GTPU_NOT_GTPU: return "not GTP-U (not IPv4/IPv6 UDP to port 2152, or an IP fragment)";
	case GTPU_NOT_GPDU: return "GTP-U signalling, not a G-PDU";
	case GTPU_ERR_FRAME: return "Ethernet or VLAN header truncated";
	case GTPU_ERR_IP: return "outer IP header truncated or inconsistent";
	case GTPU_ERR_UDP: return "UDP header truncated or its length inconsistent";
	case GTPU_ERR_SHORT: return "shorter than the GTP-U header";
	case GTPU_ERR_VERSION: return "GTP version is not 1";
	case GTPU_ERR_PT: return "protocol type is GTP' (PT=0)";
	case GTPU_ERR_LENGTH: return "GTP-U length field does not match the message";
	case GTPU_ERR_EXT_ZERO: return "extension header of length 0";
	case GTPU_ERR_EXT_TRUNC: return "extension header truncated";
	case GTPU_ERR_EXT_CHAIN: return "more than 16 extension headers";
	case GTPU_ERR_INNER: return "inner IP header truncated or inconsistent";
	}
	return "unknown status";
}

const char *gtpu_status_name(int status)
{
	switch (status) {
	case GTPU_OK: return "ok";
	case GTPU_NOT_GTPU: return "not_gtpu";
	case GTPU_NOT_GPDU: return "not_gpdu";
	case GTPU_ERR_FRAME: return "bad_frame";
	case GTPU_ERR_IP: return "bad_ip";
	case GTPU_ERR_UDP: return "bad_udp";
	case GTPU_ERR_SHORT: return "short";
	case GTPU_ERR_VERSION: return "bad_version";
	case GTPU_ERR_PT: return "bad_pt";
	case GTPU_ERR_LENGTH: return "bad_length";
	case GTPU_ERR_EXT_ZERO: return "ext_zero";
	case GTPU_ERR_EXT_TRUNC: return "ext_trunc";
	case GTPU_ERR_EXT_CHAIN: return "ext_chain";
	case GTPU_ERR_INNER: return "bad_inner";
	}
	return "unknown";
}

static bool has_opt(const struct gtpu_build *b)
{
	return b->seq_present || b->npdu_present || b->n_extra || b->pdu_session;
}

size_t gtpu_hdr_size(const struct gtpu_build *b)
{
	size_t n = GTPU_HDR_LEN;

	if (has_opt(b))
		n += GTPU_OPT_LEN;
	for (unsigned int i = 0; i < b->n_extra && i < 4; i++)
		n += (size_t)b->extra[i].len4 * 4;
	if (b->pdu_session)
		n += 4;
	return n;
}

size_t gtpu_build_hdr(uint8_t *buf, size_t cap, const struct gtpu_build *b, size_t tpdu_len)
{
	size_t hlen = gtpu_hdr_size(b), off;
	unsigned int n_extra = b->n_extra < 4 ? b->n_extra : 4;
	bool ext = n_extra || b->pdu_session;
	uint8_t flags = 0x20 | GTPU_FLAG_PT;

	if (hlen > cap || hlen + tpdu_len - GTPU_HDR_LEN > 0xffff)
		return 0;
	for (unsigned int i = 0; i < n_extra; i++)
		if (!b->extra[i].len4 || b->extra[i].type == GTPU_EXT_NONE)
			return 0;
	if (ext)
		flags |= GTPU_FLAG_E;
	if (b->seq_present)
		flags |= GTPU_FLAG_S;
	if (b->npdu_present)
		flags |= GTPU_FLAG_PN;
	buf[0] = flags;
	buf[1] = b->msg_type;
	wr16(buf + 2, (uint16_t)(hlen + tpdu_len - GTPU_HDR_LEN));
	wr32(buf + 4, b->teid);
	off = GTPU_HDR_LEN;
	if (!has_opt(b))
		return off;
	wr16(buf + 8, b->seq_present ? b->seq : 0);
	buf[10] = b->npdu_present ? b->npdu : 0;
	buf[11] = n_extra ? b->extra[0].type : b->pdu_session ? GTPU_EXT_PDU_SESSION : GTPU_EXT_NONE;
	off += GTPU_OPT_LEN;
	for (unsigned int i = 0; i < n_extra; i++) {
		size_t elen = (size_t)b->extra[i].len4 * 4;

		buf[off] = b->extra[i].len4;
		if (b->extra[i].content)
			memcpy(buf + off + 1, b->extra[i].content, elen - 2);
		else
			memset(buf + off + 1, 0, elen - 2);
		buf[off + elen - 1] = i + 1 < n_extra ? b->extra[i + 1].type
				      : b->pdu_session ? GTPU_EXT_PDU_SESSION : GTPU_EXT_NONE;
		off += elen;
	}
	if (b->pdu_session) {
		buf[off] = 1;
		buf[off + 1] = (uint8_t)(b->pdu_type << 4);
		buf[off + 2] = b->qfi & 0x3f;
		buf[off + 3] = GTPU_EXT_NONE;
		off += 4;
	}
	return off;
}

/* ---- the frame -------------------------------------------------------------- */

#define IP6_MAX_EXT 8

static inline __attribute__((always_inline)) int parse_inner(const uint8_t *t, size_t n,
							     struct gtpu_pkt *p)
{
	size_t l4, end;
	uint8_t nh;
	bool first_frag = true;

	if (!n || (t[0] >> 4 != 4 && t[0] >> 4 != 6))
		return GTPU_OK; /* not IP: Ethernet or unstructured PDU sessions */
	if (t[0] >> 4 == 4) {
		size_t ihl, tot;

		if (n < 20)
			return GTPU_ERR_INNER;
		ihl = (size_t)(t[0] & 15) * 4;
		tot = gtpu_rd16(t + 2);
		if ((ihl < 20) | (tot < ihl) | (tot > n))
			return GTPU_ERR_INNER;
		p->inner_family = 4;
		p->inner_len = (uint16_t)tot;
		p->proto = t[9];
		memcpy(p->src, t + 12, 4);
		memcpy(p->dst, t + 16, 4);
		if (gtpu_rd16(t + 6) & 0x1fff)
			return GTPU_OK; /* a later fragment has no ports */
		l4 = ihl;
		end = tot;
		nh = t[9];
	} else {
		if (n < 40)
			return GTPU_ERR_INNER;
		end = 40 + (size_t)gtpu_rd16(t + 4);
		if (end > n)
			return GTPU_ERR_INNER;
		p->inner_family = 6;
		p->inner_len = (uint16_t)end;
		memcpy(p->src, t + 8, 16);
		memcpy(p->dst, t + 24, 16);
		nh = t[6];
		l4 = 40;
		for (int i = 0; i < IP6_MAX_EXT && (gtpu_ip6_is_ext(nh) || nh == 44); i++) {
			size_t elen;

			if (end - l4 < 8)
				return GTPU_ERR_INNER;
			if (nh == 44) {
				first_frag = !(gtpu_rd16(t + l4 + 2) & 0xfff8);
				elen = 8;
			} else {
				elen = ((size_t)t[l4 + 1] + 1) * 8;
				if (elen > end - l4)
					return GTPU_ERR_INNER;
			}
			nh = t[l4];
			l4 += elen;
		}
		p->proto = nh;
	}
	if (first_frag & gtpu_l4_has_ports(nh) & (end - l4 >= 4)) {
		p->sport = gtpu_rd16(t + l4);
		p->dport = gtpu_rd16(t + l4 + 2);
	}
	return GTPU_OK;
}

/* the L3 header of an Ethernet frame: offset and ethertype, or a status */
static inline __attribute__((always_inline)) int frame_l3(const uint8_t *f, size_t len,
							  size_t *off, uint16_t *et)
{
	size_t o = 14;
	uint16_t t;

	if (len < 14)
		return GTPU_ERR_FRAME;
	t = gtpu_rd16(f + 12);
	for (int tags = 0; t == 0x8100 || t == 0x88a8; tags++) {
		if (tags == 2)
			return GTPU_NOT_GTPU;
		if (len - o < 4)
			return GTPU_ERR_FRAME;
		t = gtpu_rd16(f + o + 2);
		o += 4;
	}
	*off = o;
	*et = t;
	return GTPU_OK;
}

static inline __attribute__((always_inline)) int parse_frame(const uint8_t *f, size_t len,
							     struct gtpu_pkt *p, struct gtpu_hdr *h)
{
	size_t off, l4, l4end, udplen;
	uint16_t et;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = frame_l3(f, len, &off, &et);
	if (rc)
		return rc;
	if (et == 0x0800) {
		const uint8_t *ip = f + off;
		size_t ihl, tot;

		if (len - off < 20)
			return GTPU_ERR_IP;
		ihl = (size_t)(ip[0] & 15) * 4;
		tot = gtpu_rd16(ip + 2);
		/* bitwise |: one branch for the checks that hardly ever fail */
		if ((ip[0] >> 4 != 4) | (ihl < 20) | (tot < ihl) | (tot > len - off))
			return GTPU_ERR_IP;
		/* MF or an offset (a fragment), or not UDP */
		if ((gtpu_rd16(ip + 6) & 0x3fff) | (ip[9] != 17))
			return GTPU_NOT_GTPU;
		p->outer_family = 4;
		l4 = off + ihl;
		l4end = off + tot;
	} else if (et == 0x86dd) {
		const uint8_t *ip = f + off;
		uint8_t nh;

		if (len - off < 40 || ip[0] >> 4 != 6)
			return GTPU_ERR_IP;
		l4 = off + 40;
		l4end = l4 + gtpu_rd16(ip + 4);
		if (l4end > len)
			return GTPU_ERR_IP;
		nh = ip[6];
		for (int i = 0; i < IP6_MAX_EXT && gtpu_ip6_is_ext(nh); i++) {
			size_t elen;

			if (l4end - l4 < 8)
				return GTPU_ERR_IP;
			elen = ((size_t)f[l4 + 1] + 1) * 8;
			if (elen > l4end - l4)
				return GTPU_ERR_IP;
			nh = f[l4];
			l4 += elen;
		}
		if (nh != 17) /* a fragment header (44) lands here too */
			return GTPU_NOT_GTPU;
		p->outer_family = 6;
	} else {
		return GTPU_NOT_GTPU;
	}
	if (l4end - l4 < 4)
		return GTPU_ERR_UDP;
	if (gtpu_rd16(f + l4 + 2) != GTPU_PORT)
		return GTPU_NOT_GTPU;
	if (l4end - l4 < 8)
		return GTPU_ERR_UDP;
	udplen = gtpu_rd16(f + l4 + 4);
	if ((udplen < 8) | (udplen > l4end - l4))
		return GTPU_ERR_UDP;
	rc = parse_hdr(f + l4 + 8, udplen - 8, h);
	if (rc)
		return rc;
	p->teid = h->teid;
	p->msg_type = h->msg_type;
	p->has_qfi = h->has_pdu_session;
	p->qfi = h->qfi;
	p->pdu_type = h->pdu_type;
	p->tpdu_off = (uint16_t)(l4 + 8 + h->hdr_len);
	p->tpdu_len = h->tpdu_len;
	if (h->msg_type != GTPU_MSG_GPDU)
		return GTPU_NOT_GPDU;
	return parse_inner(f + p->tpdu_off, p->tpdu_len, p);
}

int gtpu_parse_frame_fast(const uint8_t *f, size_t len, struct gtpu_pkt *p)
{
	return gtpu_parse_fast(f, len, p);
}

/* out of line, so that the fast path's caller saves no registers for it */
static __attribute__((noinline)) int parse_frame_general(const uint8_t *f, size_t len,
							 struct gtpu_pkt *p, struct gtpu_hdr *hout)
{
	struct gtpu_hdr local;

	if (hout) {
		memset(hout, 0, sizeof(*hout));
		return parse_frame(f, len, p, hout);
	}
	return parse_frame(f, len, p, &local);
}

int gtpu_parse_frame(const uint8_t *f, size_t len, struct gtpu_pkt *p, struct gtpu_hdr *hout)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!hout) {
		int rc = gtpu_parse_fast(f, len, p);

		if (__builtin_expect(rc != GTPU_FAST_NO, 1))
			return rc;
	}
#endif
	return parse_frame_general(f, len, p, hout);
}

/* ---- building frames and checksums --------------------------------------------- */

uint32_t gtpu_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	uint64_t s = sum;

	for (; len >= 2; p += 2, len -= 2)
		s += gtpu_rd16(p);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffff) + (s >> 32);
	return (uint32_t)s;
}

uint16_t gtpu_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* checksum of an L4 segment with its pseudo header; 0 becomes 0xffff for UDP */
static uint16_t l4_csum(int family, const uint8_t *src, const uint8_t *dst, uint8_t proto,
			const uint8_t *seg, size_t len)
{
	uint8_t tail[4];
	uint32_t sum = 0;
	uint16_t c;

	sum = gtpu_csum_add(sum, src, family == 4 ? 4 : 16);
	sum = gtpu_csum_add(sum, dst, family == 4 ? 4 : 16);
	wr16(tail, proto);
	wr16(tail + 2, (uint16_t)len);
	sum = gtpu_csum_add(sum, tail, 4);
	sum = gtpu_csum_add(sum, seg, len);
	c = gtpu_csum_fold(sum);
	return c == 0 && proto == 17 ? 0xffff : c;
}

size_t gtpu_build_frame(uint8_t *buf, size_t cap, const struct gtpu_frame_spec *s,
			const uint8_t *tpdu, size_t tpdu_len)
{
	size_t ghl = gtpu_hdr_size(&s->gtp), iphl = s->outer_family == 6 ? 40 : 20;
	size_t udp_off = 14 + iphl, total = udp_off + 8 + ghl + tpdu_len;
	uint8_t *ip = buf + 14, *udp = buf + udp_off;

	if (total > cap || 8 + ghl + tpdu_len > 0xffff)
		return 0;
	memcpy(buf, s->dst_mac, 6);
	memcpy(buf + 6, s->src_mac, 6);
	wr16(buf + 12, s->outer_family == 6 ? 0x86dd : 0x0800);
	if (s->outer_family == 6) {
		wr32(ip, 0x60000000);
		wr16(ip + 4, (uint16_t)(8 + ghl + tpdu_len));
		ip[6] = 17;
		ip[7] = s->ttl;
		memcpy(ip + 8, s->outer_src, 16);
		memcpy(ip + 24, s->outer_dst, 16);
	} else {
		if (20 + 8 + ghl + tpdu_len > 0xffff)
			return 0;
		ip[0] = 0x45;
		ip[1] = 0;
		wr16(ip + 2, (uint16_t)(20 + 8 + ghl + tpdu_len));
		wr16(ip + 4, 0);
		wr16(ip + 6, 0);
		ip[8] = s->ttl;
		ip[9] = 17;
		wr16(ip + 10, 0);
		memcpy(ip + 12, s->outer_src, 4);
		memcpy(ip + 16, s->outer_dst, 4);
		wr16(ip + 10, gtpu_csum_fold(gtpu_csum_add(0, ip, 20)));
	}
	wr16(udp, s->sport);
	wr16(udp + 2, GTPU_PORT);
	wr16(udp + 4, (uint16_t)(8 + ghl + tpdu_len));
	wr16(udp + 6, 0);
	if (gtpu_build_hdr(udp + 8, cap - udp_off - 8, &s->gtp, tpdu_len) != ghl)
		return 0;
	if (tpdu_len)
		memcpy(udp + 8 + ghl, tpdu, tpdu_len);
	wr16(udp + 6, l4_csum(s->outer_family, ip + (s->outer_family == 6 ? 8 : 12),
			      ip + (s->outer_family == 6 ? 24 : 16), 17, udp, 8 + ghl + tpdu_len));
	return total;
}

/* fix the IPv4 header checksum and the TCP/UDP checksum of one IP packet */
static void fix_ip(uint8_t *ip, size_t n)
{
	size_t hl, tot;
	uint8_t proto, *l4;
	int fam;

	if (n < 20)
		return;
	if (ip[0] >> 4 == 4) {
		hl = (size_t)(ip[0] & 15) * 4;
		tot = gtpu_rd16(ip + 2);
		if (hl < 20 || tot < hl || tot > n)
			return;
		wr16(ip + 10, 0);
		wr16(ip + 10, gtpu_csum_fold(gtpu_csum_add(0, ip, hl)));
		if (gtpu_rd16(ip + 6) & 0x3fff)
			return;
		proto = ip[9];
		fam = 4;
	} else if (ip[0] >> 4 == 6 && n >= 40) {
		hl = 40;
		tot = 40 + (size_t)gtpu_rd16(ip + 4);
		if (tot > n)
			return;
		proto = ip[6];
		fam = 6;
	} else {
		return;
	}
	l4 = ip + hl;
	if (proto == 17 && tot - hl >= 8) {
		wr16(l4 + 6, 0);
		wr16(l4 + 6, l4_csum(fam, ip + (fam == 4 ? 12 : 8), ip + (fam == 4 ? 16 : 24), 17, l4,
				     tot - hl));
	} else if (proto == 6 && tot - hl >= 20) {
		wr16(l4 + 16, 0);
		wr16(l4 + 16, l4_csum(fam, ip + (fam == 4 ? 12 : 8), ip + (fam == 4 ? 16 : 24), 6, l4,
				      tot - hl));
	}
}

void gtpu_frame_fix_checksums(uint8_t *frame, size_t len)
{
	struct gtpu_pkt p;
	size_t off;
	uint16_t et;
	int rc = gtpu_parse_frame(frame, len, &p, NULL);

	if (rc != GTPU_OK && rc != GTPU_NOT_GPDU)
		return;
	if (rc == GTPU_OK && p.inner_family)
		fix_ip(frame + p.tpdu_off, p.tpdu_len);
	/* the outer UDP checksum covers the inner packet: fix it last */
	if (frame_l3(frame, len, &off, &et) == GTPU_OK)
		fix_ip(frame + off, len - off);
}
