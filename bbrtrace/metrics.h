/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What --prometheus serves while bbrtrace traces: /metrics, the detector's
 * counts and the worst peers over the window, and /verdict, the window
 * verdict as JSON; each built under the detector's lock.
 */
#ifndef BBRTRACE_METRICS_H
#define BBRTRACE_METRICS_H

#include <stdint.h>

#include "bbrtrace/run.h"
#include "bbrtrace/verdict.h"
#include "prom.h"

/* the /metrics page, on the server's thread; ctx is the struct bt_run */
int bt_metrics_render(struct prom_buf *pb, void *ctx);
/* /verdict: the window verdict record, as JSON; ctx is the struct bt_run */
int bt_metrics_verdict(struct prom_buf *pb, void *ctx);
/* the window verdict (bbrtrace/verdict.h), built under the detector's lock */
void bt_metrics_window_verdict(struct bt_run *r, struct bt_verdict *v, uint64_t now_ns);

#endif
