/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The human verdict at the end of a trace: how often BBR's bandwidth
 * estimate collapsed, why, and what to do about it, built from the
 * detector's statistics. One "type":"verdict" record carries the same
 * figures for machines, with the sentence in its "text" field.
 */
#ifndef BBRTRACE_VERDICT_H
#define BBRTRACE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "bbrtrace/detect.h"
#include "fixtext.h"
#include "bbrtrace/peerverdict.h"
#include "record.h"

struct bt_verdict {
	double elapsed_s;
	struct bt_detect_stats st;
	double collapse_ratio;
	uint64_t collapses;       /* all causes */
	bool stalls_untraced;     /* no write tap ran: the stall fields are null */
	uint64_t stalls;          /* the sender's stalls, all causes */
	uint64_t stalled_ns;      /* their time, all causes */
	char text[4096];         /* the longest verdict measured is under 2000 bytes */
	char fix[BT_FIX_STR];     /* empty when no fix applies */
	char stall_fix[BT_FIX_STR]; /* the sender's stalls' fix, when most were Nagle's */
	struct bt_peer_verdict peers; /* the peers that need a fix, worst first */
	bool window;              /* over the rolling window, not the whole trace */
};

/* elapsed_s: how long the trace ran (the sentence's "in N s"); why_empty: what
 * to say when no sample came (the ways a flow gets traced), or NULL */
void bt_verdict_build(struct bt_verdict *v, const struct bt_detect *d, double collapse_ratio,
		      double elapsed_s, const char *why_empty);

/* a running trace's verdict over the rolling window that ends at now_ns
 * (bbrtrace/peers.h): its figures, and the peers that need a fix */
void bt_verdict_build_window(struct bt_verdict *v, const struct bt_detect *d, uint64_t now_ns);

/* the throttling in st too small to act on (BT_FIX_MIN_LATE_BYTES, BT_FIX_MIN_THROTTLED_MS),
 * and over: a throttle still in progress at the end of the trace never is */
bool bt_throttle_negligible(const struct bt_detect_stats *st);

/* no write tap ran (why: bt_backend_write_hook's reason): the record's stall
 * fields are null, and the sentence says why stalls are missing */
void bt_verdict_no_stalls(struct bt_verdict *v, const char *why);

/* appends, when any event was lost, that the verdict is incomplete: `acks` and
 * `writes` in a full ring buffer, `unpaired` ACKs whose probes did not pair */
void bt_verdict_note_lost(struct bt_verdict *v, uint64_t acks, uint64_t writes, uint64_t unpaired);

/* "type":"verdict" at the end of a trace; "type":"window_verdict", the same
 * fields, over the rolling window while it runs */
extern const struct rec_schema bt_verdict_schema;
extern const struct rec_schema bt_window_verdict_schema;
int bt_verdict_write(struct rec_writer *w, const struct bt_verdict *v);
/* collapses by cause, keyed by the causes' names (the summary carries them too) */
void bt_verdict_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES]);
/* the sender's stalls, by cause */
void bt_verdict_stalls_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NSTALL_CAUSES]);
/* the throttling collapses (impact), by cause */
void bt_verdict_throttling_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES]);
/* the time flows spent throttled, in us, by the cause of the collapse that began
 * each throttle (the summary's: the whole trace's, never a window's) */
void bt_verdict_throttled_us_by_cause(const struct bt_verdict *v, struct rec_kv kv[BT_NCAUSES]);

#endif
