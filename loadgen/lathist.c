// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim's frame-latency distribution (loadgen/lathist.h): the bucket of a
 * latency, a bucket's upper edge, and the nearest-rank quantile over them.
 */
#include <math.h>

#include "loadgen/lathist.h"

/* below 2 x LH_SUB the value itself; above, LH_SUB buckets per power of two
 * [2^e, 2^(e+1)), each 2^(e - LH_SUB_BITS) wide */
static unsigned int bucket_of(uint64_t v)
{
	unsigned int e, shift;

	if (v < 2 * LH_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	shift = e - LH_SUB_BITS;
	return 2 * LH_SUB + (e - LH_SUB_BITS - 1) * LH_SUB + (unsigned int)((v >> shift) - LH_SUB);
}

/* the largest value that falls in bucket i */
static uint64_t upper_edge(unsigned int i)
{
	unsigned int k, shift;

	if (i < 2 * LH_SUB)
		return i;
	k = i - 2 * LH_SUB;
	shift = k / LH_SUB + 1;
	return (((uint64_t)(LH_SUB + k % LH_SUB) + 1) << shift) - 1;
}

void lathist_add(struct lathist *h, uint64_t us)
{
	h->b[bucket_of(us)]++;
	h->n++;
	if (us > h->max_us)
		h->max_us = us;
}

uint64_t lathist_quantile(const struct lathist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (unsigned int i = 0; i < LH_NBUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			return upper_edge(i) < h->max_us ? upper_edge(i) : h->max_us;
	}
	return h->max_us;
}
