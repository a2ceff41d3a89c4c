/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A BBR rate sample as user space sees it: the kernel's bt_event decoded into
 * units people use (bit/s, ratios, wall-clock time), and its one record schema
 * shared by the table, CSV and JSON writers.
 */
#ifndef BBRTRACE_SAMPLE_H
#define BBRTRACE_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bbrtrace/bbrtrace.h"
#include "record.h"

struct bt_sample {
	uint64_t t_ns;            /* CLOCK_MONOTONIC */
	uint64_t wall_ns;         /* CLOCK_REALTIME, ns since the epoch */
	uint64_t cookie;
	uint8_t saddr[16];        /* IPv4 as ::ffff:a.b.c.d */
	uint8_t daddr[16];
	uint16_t sport, dport;
	uint32_t netns;

	uint32_t snd_una, snd_nxt, mss, cwnd;
	uint64_t pacing_rate_bps;
	bool pacing_rate_valid;   /* false while the kernel has ~0 (unset) */

	int32_t delivered;
	int64_t interval_us;
	uint32_t snd_interval_us, rcv_interval_us;
	int64_t rtt_us;           /* -1 when the ACK gave no RTT sample */
	int32_t losses;
	uint32_t acked_sacked, prior_in_flight;
	bool is_app_limited, is_retrans, is_ack_delayed;

	uint64_t sample_bw_bps;   /* delivered * mss * 8 / interval */
	bool sample_valid;        /* BBR ignores samples with delivered < 0 or interval <= 0 */

	uint64_t bw_prev_bps;     /* max-bw filter before this ACK */
	uint64_t bw_bps;          /* after */
	uint8_t mode;             /* enum bt_mode */
	double pacing_gain, cwnd_gain;
	uint32_t min_rtt_us;
	bool lt_use_bw;
	uint64_t lt_bw_bps;
	/* this ACK covers the sender's FIN: the stream is over (for the
	 * detector; not in the sample record, whose fields are fixed) */
	bool fin_acked;
};

/* packets per usec << 24 (BBR's unit) to bit/s for a given MSS */
uint64_t bt_bw_to_bps(uint32_t bw, uint32_t mss);
const char *bt_mode_name(uint8_t mode);
/* parses STARTUP/DRAIN/PROBE_BW/PROBE_RTT; -1 when unknown */
int bt_mode_parse(const char *name);

void bt_sample_decode(struct bt_sample *s, const struct bt_event *e, int64_t mono_to_wall_ns);

/* "type":"sample": the fields of the sample record, in order */
extern const struct rec_schema bt_sample_schema;
#define BT_SAMPLE_NFIELDS 32
/*
 * Fills v[BT_SAMPLE_NFIELDS] for bt_sample_schema. Strings point into `strs`,
 * which must live as long as v. t0_ns is the trace's start (table column).
 */
struct bt_sample_strs {
	char saddr[48], daddr[48];
};
void bt_sample_values(const struct bt_sample *s, uint64_t t0_ns, struct bt_sample_strs *strs,
		      struct rec_value *v);

/*
 * What every bbrtrace record (sample, collapse) starts with: the time and
 * the flow, BT_FLOW_NFIELDS fields, filled by bt_flow_values() from the
 * sample of that ACK.
 */
#define BT_MBPS 1e-6
#define BT_FLOW_NFIELDS 9
#define BT_FLOW_FIELDS                                                  \
	{ NULL, REC_F64, 6, "time s", 10, 0, 6 },                       \
	{ "t_ns", REC_U64 },                                            \
	{ "wall_ns", REC_U64 },                                         \
	{ "cookie", REC_U64 },                                          \
	{ "saddr", REC_STR },                                           \
	{ "daddr", REC_STR },                                           \
	{ "sport", REC_U64 },                                           \
	{ "dport", REC_U64, 0, "dport", 5 },                            \
	{ "snd_una", REC_U64, 0, "snd_una", 10 }
void bt_flow_values(const struct bt_sample *s, uint64_t t0_ns, struct bt_sample_strs *strs,
		    struct rec_value *v);

/*
 * The rate sample's own fields, BT_RATE_NFIELDS values in this order:
 * delivered, interval_us, snd_interval_us, rcv_interval_us, rtt_us, losses,
 * acked_sacked, prior_in_flight, is_app_limited, is_retrans,
 * is_ack_delayed, sample_bw_bps (null when there was no valid sample).
 */
#define BT_RATE_NFIELDS 12
void bt_rate_values(const struct bt_sample *s, struct rec_value *v);

#endif
