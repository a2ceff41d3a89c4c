// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's histogram arithmetic: a quantile interpolated inside its bucket,
 * a socket's state against the thresholds (a buffer drop always alerts), and
 * interval deltas of cumulative counters, where one going back is a reset.
 */
#include <math.h>

#include "common.h"
#include "stats.h"

double ud_quantile_us(const uint64_t b[UD_NBUCKETS], double q, double max_us)
{
	uint64_t total = 0, cum = 0;
	double rank;

	for (int i = 0; i < UD_NBUCKETS; i++)
		total += b[i];
	if (!total || !(q > 0) || q > 1)
		return NAN;
	rank = q * (double)total;
	for (int i = 0; i < UD_NBUCKETS; i++) {
		double lo, hi, v;

		if (!b[i] || (double)(cum + b[i]) < rank) {
			cum += b[i];
			continue;
		}
		lo = i ? ud_le_us[i - 1] : 0;
		if (i < UD_NBUCKETS - 1)
			hi = ud_le_us[i];
		else
			hi = max_us > lo ? max_us : lo;
		v = lo + (hi - lo) * ((rank - (double)cum) / (double)b[i]);
		if (max_us >= 0 && v > max_us)
			v = max_us;
		return v;
	}
	return NAN;
}

enum ud_state ud_state_of(const struct ud_thresholds *t, double p99_us, double max_us,
			  double oldest_wait_us, uint64_t buffer_drops)
{
	double m = t->on == UD_STATE_ON_MAX ? max_us : p99_us;

	if (buffer_drops)
		return UD_ALERT;
	if (isnan(m) || oldest_wait_us > m)
		m = oldest_wait_us;
	if (isnan(m))
		return UD_OK;
	if (m >= t->alert_us)
		return UD_ALERT;
	if (m >= t->warn_us)
		return UD_WARN;
	return UD_OK;
}

bool ud_cumul_delta(const struct ud_cumul *cur, const struct ud_cumul *prev, struct ud_cumul *out)
{
	const uint64_t *c = (const uint64_t *)cur, *p = (const uint64_t *)prev;
	uint64_t *o = (uint64_t *)out;
	const size_t n = sizeof(*cur) / sizeof(uint64_t);

	for (size_t i = 0; i < n; i++) {
		if (c[i] < p[i]) {
			*out = *cur;
			return true;
		}
	}
	for (size_t i = 0; i < n; i++)
		o[i] = c[i] - p[i];
	return false;
}
