// SPDX-License-Identifier: GPL-2.0-only
/*
 * The percentiles of a direction's ACK delays: the nearest-rank value,
 * selected in place among the delays the analysis kept.
 */
#include "pcap/analysis.h"

static void nth(int64_t *v, uint64_t n, uint64_t k)
{
	uint64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2];
		uint64_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				int64_t tmp = v[i];

				v[i] = v[j];
				v[j] = tmp;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

int64_t an_delay_pct(struct an_dir *d, double pct)
{
	uint64_t k;

	if (!d->ndelays)
		return -1;
	/* nearest rank: the smallest value with at least pct% at or below it */
	k = (uint64_t)(pct / 100.0 * (double)d->ndelays + 0.999999999);
	k = k ? k - 1 : 0;
	if (k >= d->ndelays)
		k = d->ndelays - 1;
	nth(d->delays, d->ndelays, k);
	return d->delays[k];
}
