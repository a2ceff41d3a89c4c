/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's bt_event decoded into a trace sample (lib/trace.h): units
 * people use (bit/s, ratios, wall-clock time).
 */
#ifndef BBRTRACE_SAMPLE_H
#define BBRTRACE_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/contract/bbrtrace.h"
#include "trace.h"

/* packets per usec << 24 (BBR's unit) to bit/s for a given MSS */
uint64_t bt_bw_to_bps(uint32_t bw, uint32_t mss);
void bt_sample_decode(struct bt_sample *s, const struct bt_event *e, int64_t mono_to_wall_ns);

#endif
