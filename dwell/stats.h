/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * udpdwell's arithmetic on the bucket histogram, kept apart from BPF and
 * I/O so that it is tested on its own: quantiles estimated from the buckets,
 * a socket's state against the thresholds, and per-interval differences of
 * the kernel's cumulative counters. The buckets' edges and labels and the
 * states' names are the records' (lib/dwellrec.h).
 */
#ifndef UD_STATS_H
#define UD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/contract/udpdwell.h"
#include "dwellrec.h" /* the buckets' edges and names, the states */

enum ud_state_on { UD_STATE_ON_P99 = 0, UD_STATE_ON_MAX = 1 };

/*
 * The q-quantile (0 < q <= 1) in microseconds, estimated from bucket counts
 * as Prometheus' histogram_quantile() does: linear inside the bucket that
 * holds rank q * total, from its lower to its upper edge. Two refinements:
 * the open last bucket ends at the observed maximum, and no estimate
 * exceeds the maximum (max_us; pass a negative value when unknown).
 * NaN when there are no observations.
 */
double ud_quantile_us(const uint64_t b[UD_NBUCKETS], double q, double max_us);

struct ud_thresholds {
	double warn_us;
	double alert_us;
	enum ud_state_on on;
};

/*
 * The state of one interval: the chosen measure (p99 or maximum, NaN when
 * there were no reads) or the age of the oldest datagram still waiting,
 * whichever is larger, against the thresholds (>= warn is WARN, >= alert is
 * ALERT); and ALERT whenever the socket itself dropped datagrams because its
 * buffer or protocol memory was full.
 */
enum ud_state ud_state_of(const struct ud_thresholds *t, double p99_us, double max_us,
			  double oldest_wait_us, uint64_t buffer_drops);

/* cumulative figures of one socket, as read from the kernel */
struct ud_cumul {
	uint64_t packets;
	uint64_t sum_ns;
	uint64_t buckets[UD_NBUCKETS];
	uint64_t unmatched;
	uint64_t resync_added;
	uint64_t resync_dropped;
	uint64_t ring_full;
};

/*
 * cur - prev, field by field; when any field went backwards the socket's
 * state was recreated in the kernel, and the interval is cur alone.
 * Returns true in that case.
 */
bool ud_cumul_delta(const struct ud_cumul *cur, const struct ud_cumul *prev, struct ud_cumul *out);

#endif
