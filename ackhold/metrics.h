/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What --prometheus serves while ackhold traces: /metrics, the host's
 * counts since the start, and the peers this host held back most over the
 * last AH_WINDOW_MIN minutes (--metrics-peers of them, the rest as
 * peer="other"), built under the lock the record loop takes.
 */
#ifndef ACKHOLD_METRICS_H
#define ACKHOLD_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "prom.h"

#include "ackhold/peers.h"
#include "ackhold/probe.h"

struct ah_metrics {
	pthread_mutex_t *lock;         /* held while peers changes */
	const struct ah_peers *peers;
	const struct ah_probe *probe;  /* its counters, read without the lock */
	uint32_t k;                    /* peers named */
};

/* the /metrics page, on the server's thread; ctx is the struct ah_metrics */
int ah_metrics_render(struct prom_buf *pb, void *ctx);

#endif
