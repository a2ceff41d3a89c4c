/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The human verdict at the end of a trace: how often BBR's bandwidth
 * estimate collapsed, why, and what to do about it, built from the
 * detector's statistics. One "type":"verdict" record carries the same
 * figures for machines, with the sentence in its "text" field.
 */
#ifndef BBRTRACE_VERDICT_H
#define BBRTRACE_VERDICT_H

#include <stddef.h>

#include "bbrtrace/detect.h"
#include "record.h"

struct bt_verdict {
	double elapsed_s;
	struct bt_detect_stats st;
	double collapse_ratio;
	uint64_t collapses;       /* all causes */
	char text[1024];
	char fix[256];            /* empty when no fix applies */
};

/* elapsed_s: how long the trace ran (the sentence's "in N s") */
void bt_verdict_build(struct bt_verdict *v, const struct bt_detect *d, double collapse_ratio,
		      double elapsed_s);

extern const struct rec_schema bt_verdict_schema;
#define BT_VERDICT_NFIELDS 17
struct bt_verdict_strs {
	char sender[48], receiver[48];
	struct rec_kv by_cause[BT_NCAUSES];
};
void bt_verdict_values(const struct bt_verdict *v, struct bt_verdict_strs *strs,
		       struct rec_value *vals);

#endif
