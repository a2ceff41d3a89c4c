// SPDX-License-Identifier: GPL-2.0-only
/* The words of the verdicts: units that read best. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bbrtrace/vtext.h"
#include "common.h"

void vt_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

void vt_us(char *buf, size_t cap, uint64_t us)
{
	if (us >= 10 * TK_USEC_PER_SEC)
		snprintf(buf, cap, "%.1f s", (double)us / TK_USEC_PER_SEC);
	else if (us >= 10 * TK_USEC_PER_MSEC)
		snprintf(buf, cap, "%.0f ms", (double)us / TK_USEC_PER_MSEC);
	else if (us >= 100)
		snprintf(buf, cap, "%.1f ms", (double)us / TK_USEC_PER_MSEC);
	else
		snprintf(buf, cap, "%llu us", (unsigned long long)us);
}

void vt_bps(char *buf, size_t cap, uint64_t bps)
{
	if (bps >= TK_BPS_PER_GBPS)
		snprintf(buf, cap, "%.1f Gbit/s", (double)bps / TK_BPS_PER_GBPS_F);
	else if (bps >= TK_BPS_PER_MBPS)
		snprintf(buf, cap, "%.1f Mbit/s", (double)bps / TK_BPS_PER_MBPS_F);
	else
		snprintf(buf, cap, "%.0f kbit/s", (double)bps / TK_BPS_PER_KBPS_F);
}

void vt_bytes(char *buf, size_t cap, double bytes)
{
	if (bytes >= TK_BYTES_PER_MB_F)
		snprintf(buf, cap, "%.1f MB", bytes / TK_BYTES_PER_MB_F);
	else
		snprintf(buf, cap, "%.0f kB", bytes / TK_BYTES_PER_KB_F);
}
