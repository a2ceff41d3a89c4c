/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace: the records bbrtrace writes and bbrpcap and bbrplot read. This
 * file is the one place that names their fields, the collapse and stall
 * causes and the impacts; the writer and every reader go through it. The
 * thresholds behind the causes are the detector's (bbrtrace/rules.h), all
 * but the delayed-ACK floor, which bbrpcap applies too.
 *
 * Each field is defined once, on one line of lib/trace.c: its JSON name,
 * type and decimals, the value written (an expression over `a`, the ACK's
 * sample, `r`, the sample whose rate fields the record carries, and `c`, a
 * collapse) and how a reader stores it back. Each record type is a list of
 * those fields in order, with its table columns. Adding a field is a line
 * in each; the round-trip test (tests/unit/test_trace.c) writes every
 * record type through the writer and reads it back through the reader, so
 * a field one side lacks fails it.
 */
#ifndef TK_TRACE_H
#define TK_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "jsonl.h"
#include "record.h"

/* --- the threshold a reader shares -------------------------------------------------- */

/*
 * The delayed-ACK floor: an ACK that came at least this long after the data
 * it covers may have been held by the receiver's delayed-ACK timer. The
 * kernel's timer is 40 ms at least (TCP_DELACK_MIN) unless a route's rto_min
 * lowers it; 10 ms keeps out the microsecond jitter of a veth path, where a
 * 20 us receive interval against a 0 us send interval is no delayed ACK.
 * bbrtrace's delayed_ack cause (bbrtrace/rules.h) and bbrpcap's delayed-ACK
 * candidates (acks' default --delack-ms, and join's) use the same floor.
 */
#define BT_DELACK_FLOOR_US 10000u
/*
 * The noise floor of a rate sample: a sample whose send and receive intervals
 * are both shorter than this measures timing noise, not the path. The kernel
 * times them in microseconds (tcp_mstamp), and discards samples shorter than
 * the flow's min_rtt (tcp_rate_gen), so only a path whose round trip is under
 * a millisecond (a datacenter, a veth) takes such samples. There scheduling,
 * softirq batching, GRO and interrupt coalescing move ACKs by tens to hundreds
 * of microseconds. Measured (a bulk iperf3 flow on an unshaped veth, 6.18,
 * 2 cores: 202,445 samples, min_rtt 2 us): against the flow's delivery over
 * the 10 ms around each sample, samples of 8-16 us read 1.4-7.1x it (p10-p90),
 * of 64-128 us 0.32-1.10x, of 512-1024 us still 0.59-1.36x: a 30% collapse
 * is within that noise up to a millisecond. bbrtrace's causes read it
 * (bbrtrace/rules.h, bbrtrace/cause.c).
 */
#define BT_NOISE_FLOOR_US 1000u

/* --- a collapse's impact ------------------------------------------------------------ */

/* X(id, name, what it means in a sentence) */
#define BT_IMPACTS(X)                                                                \
	X(UNKNOWN, "unknown", "impact unknown (a trace without it)")                   \
	X(THROTTLING, "throttling", "throttled the stream")                           \
	X(HARMLESS, "harmless", "left the pacing above the demand")

enum bt_impact {
#define BT_IMPACT_ENUM(id, name, label) BT_IMPACT_##id,
	BT_IMPACTS(BT_IMPACT_ENUM)
#undef BT_IMPACT_ENUM
	BT_NIMPACTS
};

extern const char *const bt_impact_names[BT_NIMPACTS];
/* the impact of that name, or -1 */
int bt_impact_parse(const char *name);

/* --- collapse causes ------------------------------------------------------------------ */

/* X(id, name, what it means in a legend or a sentence) */
#define BT_CAUSES(X)                                                                 \
	X(DELAYED_ACK, "delayed_ack", "delayed ACK")                                  \
	X(RATE_DROP, "rate_drop", "rate drop")                                        \
	X(LOSS_POLICER, "loss_policer", "loss/policer")                               \
	X(OTHER, "other", "other")                                                    \
	X(LONE_SEGMENT, "lone_segment", "lone late segment")                          \
	X(MAX_EXPIRED, "max_expired", "old max expired")                              \
	X(SENDER_LIMITED, "sender_limited", "sender-limited sample")                  \
	X(ACK_JITTER, "ack_jitter", "ACK jitter")                                      \
	X(BURST_MAX, "burst_max", "burst maximum")

enum bt_cause {
#define BT_CAUSE_ENUM(id, name, label) BT_CAUSE_##id,
	BT_CAUSES(BT_CAUSE_ENUM)
#undef BT_CAUSE_ENUM
	BT_NCAUSES
};

extern const char *const bt_cause_names[BT_NCAUSES];
extern const char *const bt_cause_labels[BT_NCAUSES];
/* the cause of that name, or -1 */
int bt_cause_parse(const char *name);

/* --- sender stalls ------------------------------------------------------------------ */

/* X(id, name, what held the data, the fix) */
#define BT_STALL_CAUSES(X)                                                           \
	X(NAGLE, "nagle", "Nagle's algorithm held a sub-MSS tail until the data in flight was ACKed", \
	  "TCP_NODELAY on the sender, or quick ACKs on the receiver (quickack on)")     \
	X(RWND, "rwnd_limited", "the receiver's window was full",                      \
	  "the receiver reads faster, or a larger receive buffer")                     \
	X(CWND, "cwnd_limited", "the congestion window was full",                       \
	  "none on the hosts: the path or BBR's estimate (see the collapses)")         \
	X(PACING, "pacing_limited", "the pacing rate held the next packet back",        \
	  "none on the hosts: BBR's pacing (see the collapses)")                       \
	X(OTHER, "other", "no window, Nagle or pacing reason seen (see the evidence)", "")

enum bt_stall_cause {
#define BT_STALL_ENUM(id, name, what, fix) BT_STALL_##id,
	BT_STALL_CAUSES(BT_STALL_ENUM)
#undef BT_STALL_ENUM
	BT_NSTALL_CAUSES
};

extern const char *const bt_stall_cause_names[BT_NSTALL_CAUSES];
extern const char *const bt_stall_cause_whats[BT_NSTALL_CAUSES];
extern const char *const bt_stall_cause_fixes[BT_NSTALL_CAUSES];
/* the stall cause of that name, or -1 */
int bt_stall_cause_parse(const char *name);

/* what ended a stall: the ACK that let the data go, the application's next
 * write (which went out with it), or neither seen (a timer) */
#define BT_STALL_ENDS(X)                                                             \
	X(ACK, "ack")                                                                 \
	X(WRITE, "write")                                                             \
	X(UNSEEN, "unseen")

enum bt_stall_end {
#define BT_STALL_END_ENUM(id, name) BT_STALL_END_##id,
	BT_STALL_ENDS(BT_STALL_END_ENUM)
#undef BT_STALL_END_ENUM
	BT_NSTALL_ENDS
};

extern const char *const bt_stall_end_names[BT_NSTALL_ENDS];
int bt_stall_end_parse(const char *name);

/*
 * --- BBR's modes (the kernel's enum bbr_mode: STARTUP 0 ... PROBE_RTT 3), and
 * HANDSHAKE (4): the handshake's ACK, which bbr_main() sees before bbr_init()
 */

const char *bt_mode_name(uint8_t mode);
/* STARTUP/DRAIN/PROBE_BW/PROBE_RTT/HANDSHAKE; -1 when unknown */
int bt_mode_parse(const char *name);
/* a handshake's sample: its BBR fields are not BBR's yet */
bool bt_mode_is_handshake(uint8_t mode);

/* --- what the records carry ---------------------------------------------------------- */

/* BBR's max-bw filter keeps this many entries (struct minmax's s[3]) */
#define BT_FILTER_ENTRIES 3

/* one ACK's rate sample and BBR's state after it, in the units people use */
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
	uint8_t mode;             /* BBR's mode, 0..3 (bt_mode_name) */
	double pacing_gain, cwnd_gain;
	uint32_t min_rtt_us;
	bool lt_use_bw;
	uint64_t lt_bw_bps;
	/* the sender's queue: write_seq - snd_nxt bytes written, not sent yet;
	 * the peer's window ends at snd_una + snd_wnd; nonagle is the kernel's
	 * tp->nonagle (0: Nagle on; 1 TCP_NODELAY, 2 TCP_CORK, 4 a push) */
	uint32_t write_seq, snd_wnd;
	uint8_t nonagle;
	/* this ACK covers the sender's FIN: the stream is over (for the
	 * detector; not a field of the sample record) */
	bool fin_acked;
	/* a tail loss probe is out (tp->tlp_high_seq): its timer may have sent
	 * held data, which no tap sees (for the detector; not a record field) */
	bool tlp_out;
	/* how long before t_ns the last packet left, its pacing time included
	 * (tp->tcp_wstamp_ns), us, 65535 at most: when a stall's data went out
	 * during a write or between two events (for the detector; not a record
	 * field) */
	uint32_t sent_ago_us;
	/* BBR's max-bw filter after this ACK: its three entries bw.s[0..2].v,
	 * packets/us << 24, as a live trace gets them (for the detector's
	 * culprits; not record fields: a recorded trace has only bw_bps) */
	uint32_t filter_bw[BT_FILTER_ENTRIES];
	bool filter_known;
	/* an ACK, or a write (enum bt_kind; not a field of the sample record):
	 * a write carries the flow, the tcp_sock fields and, in delivered, the
	 * bytes written, in prior_in_flight the packets in flight, in rtt_us
	 * how far ahead the pacing clock was (bpf/contract/bbrtrace.h) */
	uint8_t kind;
};

/* a stall of the sender: `at` is the write after which data stayed unsent */
struct bt_stall {
	struct bt_sample at;
	uint64_t duration_us;
	enum bt_stall_cause cause;
	enum bt_stall_end ended_by;
	uint32_t held_bytes;      /* written and not sent when it began */
	uint32_t in_flight_bytes; /* snd_nxt - snd_una then */
	char evidence[192];
};

/* a collapse of BBR's estimate on one ACK */
struct bt_collapse {
	uint64_t bw_prev_bps;     /* the estimate before this ACK */
	uint64_t bw_bps;          /* and after */
	double drop_ratio;        /* 1 - bw / bw_prev */
	enum bt_cause cause;
	enum bt_impact impact;
	uint64_t demand_bps;      /* the flow's demand (bbrtrace/rules.h) */
	/* the pacing the flow needed (the demand x the rule's factor,
	 * bbrtrace/rules.h): a collapse whose pacing is under it throttles */
	uint64_t need_bps;
	/* what the flow delivered while the old maximum held (bbrtrace/cause.h):
	 * what a rate_drop fell from; in the evidence, no field of the record */
	uint64_t delivered_bps;
	double headroom;          /* the pacing now allowed / demand */
	bool reset_by_ack;        /* the culprit is this ACK's own sample */
	struct bt_sample ack;     /* this ACK */
	struct bt_sample culprit; /* the sample whose bandwidth is the new estimate */
	char evidence[256];
};

/* --- record types ------------------------------------------------------------------- */

/*
 * Each record's fields in order: X(ID, table header with unit, width,
 * scale, decimals), the ID naming a field of lib/trace.c.
 */
#define BT_MBPS TK_MBPS_PER_BPS_F
#define BT_FLOW_COLUMNS(X)                                                           \
	X(TIME_S, "time s", 10, 0, 6)                                                 \
	X(T_NS, NULL, 0, 0, 0)                                                        \
	X(WALL_NS, NULL, 0, 0, 0)                                                     \
	X(COOKIE, NULL, 0, 0, 0)                                                      \
	X(SADDR, NULL, 0, 0, 0)                                                       \
	X(DADDR, NULL, 0, 0, 0)                                                       \
	X(SPORT, NULL, 0, 0, 0)                                                       \
	X(DPORT, "dport", 5, 0, 0)                                                    \
	X(SND_UNA, "snd_una", 10, 0, 0)

#define BT_SAMPLE_COLUMNS(X)                                                         \
	BT_FLOW_COLUMNS(X)                                                            \
	X(SND_NXT, NULL, 0, 0, 0)                                                     \
	X(MSS, NULL, 0, 0, 0)                                                         \
	X(CWND, "cwnd", 5, 0, 0)                                                      \
	X(PACING_RATE_BPS, NULL, 0, 0, 0)                                             \
	X(DELIVERED, "dlv", 4, 0, 0)                                                  \
	X(INTERVAL_US, NULL, 0, 0, 0)                                                 \
	X(SND_INTERVAL_US, "snd us", 7, 0, 0)                                         \
	X(RCV_INTERVAL_US, "rcv us", 7, 0, 0)                                         \
	X(RTT_US, "rtt us", 6, 0, 0)                                                  \
	X(LOSSES, NULL, 0, 0, 0)                                                      \
	X(ACKED_SACKED, NULL, 0, 0, 0)                                                \
	X(PRIOR_IN_FLIGHT, NULL, 0, 0, 0)                                             \
	X(IS_APP_LIMITED, "app", 3, 0, 0)                                             \
	X(IS_RETRANS, NULL, 0, 0, 0)                                                  \
	X(IS_ACK_DELAYED, NULL, 0, 0, 0)                                              \
	X(SAMPLE_BW_BPS, "smpl Mb/s", 9, BT_MBPS, 1)                                  \
	X(BW_PREV_BPS, "bw0 Mb/s", 8, BT_MBPS, 1)                                     \
	X(BW_BPS, "bw Mb/s", 8, BT_MBPS, 1)                                           \
	X(MODE, "mode", -9, 0, 0)                                                     \
	X(PACING_GAIN, "pg", 4, 0, 2)                                                 \
	X(CWND_GAIN, NULL, 0, 0, 0)                                                   \
	X(MIN_RTT_US, "mrtt us", 7, 0, 0)                                             \
	X(LT_USE_BW, NULL, 0, 0, 0)                                                   \
	X(LT_BW_BPS, NULL, 0, 0, 0)                                                   \
	X(WRITE_SEQ, NULL, 0, 0, 0)                                                   \
	X(SND_WND, NULL, 0, 0, 0)                                                     \
	X(NONAGLE, NULL, 0, 0, 0)

/* a collapse: the ACK's flow, the estimate before and after (in a collapse
 * record, bw_prev_bps and bw_bps are the estimate BBR paces with: max-bw, or
 * lt_bw while lt_use_bw), the cause, the culprit's rate sample, the flow's
 * state after the ACK, and the evidence in words */
#define BT_COLLAPSE_COLUMNS(X)                                                       \
	BT_FLOW_COLUMNS(X)                                                            \
	X(BW_PREV_BPS, "bw0 Mb/s", 9, BT_MBPS, 2)                                     \
	X(BW_BPS, "bw Mb/s", 9, BT_MBPS, 3)                                           \
	X(DROP_RATIO, "drop", 5, 0, 2)                                                \
	X(CAUSE, "cause", -12, 0, 0)                                                  \
	X(IMPACT, "impact", -10, 0, 0)                                                \
	X(HEADROOM, "headroom", 8, 0, 2)                                              \
	X(DEMAND_BPS, "dem Mb/s", 8, BT_MBPS, 2)                                      \
	X(NEED_BPS, NULL, 0, 0, 0)                                                    \
	X(RESET_BY_ACK, NULL, 0, 0, 0)                                                \
	X(SAMPLE_T_NS, NULL, 0, 0, 0)                                                 \
	X(DELIVERED, "dlv", 4, 0, 0)                                                  \
	X(INTERVAL_US, NULL, 0, 0, 0)                                                 \
	X(SND_INTERVAL_US, "snd us", 7, 0, 0)                                         \
	X(RCV_INTERVAL_US, "rcv us", 7, 0, 0)                                         \
	X(RTT_US, NULL, 0, 0, 0)                                                      \
	X(LOSSES, NULL, 0, 0, 0)                                                      \
	X(ACKED_SACKED, NULL, 0, 0, 0)                                                \
	X(PRIOR_IN_FLIGHT, NULL, 0, 0, 0)                                             \
	X(IS_APP_LIMITED, "app", 3, 0, 0)                                             \
	X(IS_RETRANS, NULL, 0, 0, 0)                                                  \
	X(IS_ACK_DELAYED, "dly", 3, 0, 0)                                             \
	X(SAMPLE_BW_BPS, NULL, 0, 0, 0)                                               \
	X(SND_NXT, NULL, 0, 0, 0)                                                     \
	X(MSS, NULL, 0, 0, 0)                                                         \
	X(CWND, NULL, 0, 0, 0)                                                        \
	X(PACING_RATE_BPS, NULL, 0, 0, 0)                                             \
	X(MODE, "mode", -9, 0, 0)                                                     \
	X(PACING_GAIN, NULL, 0, 0, 0)                                                 \
	X(CWND_GAIN, NULL, 0, 0, 0)                                                   \
	X(MIN_RTT_US, NULL, 0, 0, 0)                                                  \
	X(LT_USE_BW, NULL, 0, 0, 0)                                                   \
	X(LT_BW_BPS, NULL, 0, 0, 0)                                                   \
	X(EVIDENCE, NULL, 0, 0, 0)

/* a stall: the flow, when it began (t_ns, wall_ns), and what held the data */
#define BT_STALL_COLUMNS(X)                                                          \
	BT_FLOW_COLUMNS(X)                                                            \
	X(DURATION_US, "stall ms", 8, TK_MSEC_PER_USEC_F, 1)                          \
	X(STALL_CAUSE, "cause", -14, 0, 0)                                            \
	X(ENDED_BY, "ended by", -8, 0, 0)                                             \
	X(HELD_BYTES, "held B", 7, 0, 0)                                              \
	X(IN_FLIGHT_BYTES, "flight B", 8, 0, 0)                                       \
	X(SND_NXT, NULL, 0, 0, 0)                                                     \
	X(WRITE_SEQ, NULL, 0, 0, 0)                                                   \
	X(SND_WND, NULL, 0, 0, 0)                                                     \
	X(MSS, NULL, 0, 0, 0)                                                         \
	X(CWND, NULL, 0, 0, 0)                                                        \
	X(NONAGLE, NULL, 0, 0, 0)                                                     \
	X(FIX, NULL, 0, 0, 0)                                                         \
	X(STALL_EVIDENCE, NULL, 0, 0, 0)

/* each record's field indexes: BT_S_SND_UNA, BT_C_CAUSE, ...; the flow
 * columns lead both records, so BT_F_* index either */
enum bt_flow_field {
#define BT_F_ENUM(id, head, width, scale, prec) BT_F_##id,
	BT_FLOW_COLUMNS(BT_F_ENUM)
#undef BT_F_ENUM
	BT_FLOW_NFIELDS
};
enum bt_sample_field {
#define BT_S_ENUM(id, head, width, scale, prec) BT_S_##id,
	BT_SAMPLE_COLUMNS(BT_S_ENUM)
#undef BT_S_ENUM
	BT_SAMPLE_NFIELDS
};
enum bt_collapse_field {
#define BT_C_ENUM(id, head, width, scale, prec) BT_C_##id,
	BT_COLLAPSE_COLUMNS(BT_C_ENUM)
#undef BT_C_ENUM
	BT_COLLAPSE_NFIELDS
};
enum bt_stall_field {
#define BT_T_ENUM(id, head, width, scale, prec) BT_T_##id,
	BT_STALL_COLUMNS(BT_T_ENUM)
#undef BT_T_ENUM
	BT_STALL_NFIELDS
};

extern const struct rec_schema bt_sample_schema;   /* "type":"sample" */
extern const struct rec_schema bt_collapse_schema; /* "type":"collapse" */
extern const struct rec_schema bt_stall_schema;    /* "type":"stall" */

/*
 * The writer's side: one record through w. t0_ns is the trace's start, for
 * the table's time column. Returns rec_write()'s result.
 */
int bt_sample_write(struct rec_writer *w, const struct bt_sample *s, uint64_t t0_ns);
int bt_collapse_write(struct rec_writer *w, const struct bt_collapse *c, uint64_t t0_ns);
int bt_stall_write(struct rec_writer *w, const struct bt_stall *x, uint64_t t0_ns);

/* --- the readers' side ------------------------------------------------------------- */

/* which fields a record held; bit i is field i of its record type */
struct bt_fieldset {
	uint64_t bits[2];
};
static inline bool bt_has(const struct bt_fieldset *fs, unsigned int field)
{
	return fs->bits[field / 64] >> (field % 64) & 1;
}

/* the record's type: "sample", "collapse", ... (NULL when it has none) */
const char *bt_record_type(const struct jl_obj *o);
/*
 * A parsed JSON line back into the struct it was written from; fields the
 * line lacks (or holds with another type) stay zero and their bits clear.
 * Returns the number of fields found.
 */
unsigned int bt_sample_read(const struct jl_obj *o, struct bt_sample *s, struct bt_fieldset *fs);
unsigned int bt_collapse_read(const struct jl_obj *o, struct bt_collapse *c,
			      struct bt_fieldset *fs);
unsigned int bt_stall_read(const struct jl_obj *o, struct bt_stall *x, struct bt_fieldset *fs);
/* a field's JSON name (the readers' keys come from here, never typed) */
const char *bt_sample_key(enum bt_sample_field f);
const char *bt_collapse_key(enum bt_collapse_field f);

#endif
