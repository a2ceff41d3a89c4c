/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a run ends with once tracing has stopped: the summary record, the
 * verdict, each BPF program's statistics, and their lines on stderr.
 */
#ifndef BBRTRACE_REPORT_H
#define BBRTRACE_REPORT_H

#include "bbrtrace/run.h"
#include "record.h"

/* the records this file writes, for the CSV header the output declares */
extern const struct rec_schema bt_summary_schema;

/* the summary, the verdict and the statistics, once tracing has stopped */
void bt_report(const struct bt_env *env, struct bt_run *r);

#endif
