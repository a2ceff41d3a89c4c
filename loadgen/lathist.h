/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pushsim's frame-latency distribution: a fixed log-linear histogram of
 * latencies in microseconds, and its quantiles. It keeps a run of any
 * length in constant memory (15 KiB), exact below 64 us and within 1/32
 * (3.1%) of the value above, which is finer than a frame's latency varies
 * by from one frame to the next.
 */
#ifndef LOADGEN_LATHIST_H
#define LOADGEN_LATHIST_H

#include <stdint.h>

/* below 2 x LH_SUB us a bucket per microsecond; above, LH_SUB per power of two */
#define LH_SUB_BITS 5
#define LH_SUB (1u << LH_SUB_BITS)
#define LH_NBUCKETS (2 * LH_SUB + (64 - LH_SUB_BITS - 1) * LH_SUB)

struct lathist {
	uint64_t n;      /* latencies counted */
	uint64_t max_us; /* the largest, exactly */
	uint64_t b[LH_NBUCKETS];
};

void lathist_add(struct lathist *h, uint64_t us);

/*
 * The q-quantile (0 < q <= 1) by nearest rank: the smallest latency that
 * at least q of them do not exceed, given as its bucket's upper edge (so
 * never below the true value) and never above the maximum. 0 when empty.
 */
uint64_t lathist_quantile(const struct lathist *h, double q);

#endif
