/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The words of the verdicts: appending to a sentence, and durations, rates
 * and byte counts in the unit that reads best.
 */
#ifndef BBRTRACE_VTEXT_H
#define BBRTRACE_VTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define BT_ADDR_STR 48 /* an address as cli_fmt_v6mapped prints it (INET6_ADDRSTRLEN and more) */

/* appends to the NUL-terminated buf of cap bytes (cut at the end, never overrun) */
void vt_cat(char *buf, size_t cap, const char *fmt, ...) TK_PRINTF(3, 4);
/* "12.5 s", "40 ms", "0.2 ms", "35 us" */
void vt_us(char *buf, size_t cap, uint64_t us);
/* "1.2 Gbit/s", "40.0 Mbit/s", "300 kbit/s" */
void vt_bps(char *buf, size_t cap, uint64_t bps);
/* "1.5 MB", "29 kB" */
void vt_bytes(char *buf, size_t cap, double bytes);

#endif
