// SPDX-License-Identifier: GPL-2.0-only
/*
 * The media-server demo's datagram (rtp.h), packed by rtpsend and unpacked
 * by sfu_echo, and the receiver's figures over the datagrams it read.
 */
#include <string.h>

#include "rtp.h"
#include "common.h"

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

size_t rtp_pack(uint8_t *buf, const struct rtp_pkt *p)
{
	buf[0] = 0x80; /* V=2, no padding, no extension, no CSRC */
	buf[1] = 96;   /* dynamic payload type, marker 0 */
	put_be(buf + 2, p->seq, 2);
	put_be(buf + 4, p->ts, 4);
	put_be(buf + 8, p->ssrc, 4);
	put_be(buf + 12, p->send_ns, 8);
	return RTP_MIN_LEN;
}

bool rtp_unpack(const uint8_t *buf, size_t len, struct rtp_pkt *p)
{
	if (len < RTP_MIN_LEN || (buf[0] >> 6) != 2)
		return false;
	p->seq = (uint16_t)get_be(buf + 2, 2);
	p->ts = (uint32_t)get_be(buf + 4, 4);
	p->ssrc = (uint32_t)get_be(buf + 8, 4);
	p->send_ns = get_be(buf + 12, 8);
	return true;
}

void rtp_stats_add(struct rtp_stats *s, const struct rtp_pkt *p, uint64_t read_ns)
{
	/* arrival in timestamp units, for the RFC 3550 jitter */
	int64_t arrival_ts = (int64_t)(read_ns / (TK_NSEC_PER_SEC / RTP_CLOCK_HZ));
	int64_t transit = arrival_ts - (int64_t)p->ts;
	uint16_t udelta;

	if (!s->started) {
		memset(s, 0, sizeof(*s));
		s->started = true;
		s->ssrc = p->ssrc;
		s->base_seq = s->max_seq = p->seq;
	} else {
		udelta = (uint16_t)(p->seq - s->max_seq);
		if (udelta > 0 && udelta < 0x8000) {
			if (p->seq < s->max_seq)
				s->cycles += 1U << 16;
			s->max_seq = p->seq;
		} else if (udelta == 0) {
			s->duplicates_or_old++;
		} else {
			s->reordered++;
		}
	}
	s->received++;
	if (s->have_transit) {
		int64_t d = transit - s->last_transit_ts;

		if (d < 0)
			d = -d;
		s->jitter_ts += ((double)d - s->jitter_ts) / 16.0;
		if (s->jitter_ts > s->jitter_max_ts)
			s->jitter_max_ts = s->jitter_ts;
	}
	s->last_transit_ts = transit;
	s->have_transit = true;
	if (read_ns >= p->send_ns) {
		uint64_t w = read_ns - p->send_ns;

		s->wait_n++;
		s->wait_sum_ns += (double)w;
		if (w > s->wait_max_ns)
			s->wait_max_ns = w;
	}
}

uint64_t rtp_expected(const struct rtp_stats *s)
{
	if (!s->started)
		return 0;
	return (uint64_t)s->cycles + s->max_seq - s->base_seq + 1;
}

uint64_t rtp_lost(const struct rtp_stats *s)
{
	uint64_t e = rtp_expected(s), r = s->received - s->duplicates_or_old;

	return e > r ? e - r : 0;
}

double rtp_jitter_ms(const struct rtp_stats *s)
{
	return s->jitter_ts * TK_MSEC_PER_SEC_F / RTP_CLOCK_HZ;
}

double rtp_jitter_max_ms(const struct rtp_stats *s)
{
	return s->jitter_max_ts * TK_MSEC_PER_SEC_F / RTP_CLOCK_HZ;
}
