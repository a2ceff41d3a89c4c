/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The datagram of the media-server demo, and the receiver's own figures.
 *
 * Each datagram starts with a 12-byte RTP header (version 2, payload type
 * 96, sequence number, 90 kHz timestamp, SSRC), followed by the sender's
 * send time in CLOCK_MONOTONIC nanoseconds (8 bytes, big-endian). Payload
 * bytes after that are zero.
 *
 * The receiver keeps, like a WebRTC receiver's getStats(): the RFC 3550
 * interarrival jitter, packets lost (expected minus received, from the
 * extended highest sequence number), reordered packets, and its own wait
 * per datagram (read time minus send time, the ground truth udpdwell is
 * compared with).
 */
#ifndef UD_RTP_H
#define UD_RTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTP_HDR_LEN 12
#define RTP_MIN_LEN (RTP_HDR_LEN + 8)
#define RTP_CLOCK_HZ 90000

struct rtp_pkt {
	uint16_t seq;
	uint32_t ts;       /* 90 kHz */
	uint32_t ssrc;
	uint64_t send_ns;  /* CLOCK_MONOTONIC */
};

/* writes RTP_MIN_LEN bytes; returns RTP_MIN_LEN */
size_t rtp_pack(uint8_t *buf, const struct rtp_pkt *p);
/* false when the datagram is too short or not RTP version 2 */
bool rtp_unpack(const uint8_t *buf, size_t len, struct rtp_pkt *p);

struct rtp_stats {
	bool started;
	uint32_t ssrc;
	uint16_t base_seq;
	uint16_t max_seq;
	uint32_t cycles;          /* sequence wraps, << 16 */
	uint64_t received;
	uint64_t reordered;       /* arrived below the highest sequence so far */
	uint64_t duplicates_or_old;
	double jitter_ts;         /* RFC 3550 J, in timestamp units */
	double jitter_max_ts;     /* the largest J so far: J follows the last ~16 datagrams
				   * (gain 1/16), so its value at the end says nothing of
				   * the stream before */
	int64_t last_transit_ts;
	bool have_transit;
	/* the receiver's own wait per datagram: read time - send time */
	uint64_t wait_n;
	double wait_sum_ns;
	uint64_t wait_max_ns;
};

/* one datagram read at read_ns (CLOCK_MONOTONIC) */
void rtp_stats_add(struct rtp_stats *s, const struct rtp_pkt *p, uint64_t read_ns);
uint64_t rtp_expected(const struct rtp_stats *s);
/* expected - received, never negative */
uint64_t rtp_lost(const struct rtp_stats *s);
double rtp_jitter_ms(const struct rtp_stats *s);
double rtp_jitter_max_ms(const struct rtp_stats *s);

#endif
