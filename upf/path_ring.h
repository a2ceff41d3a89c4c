/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The single-producer single-consumer ring that carries packets from the
 * sharded design's dispatcher to a worker. Each side caches the other's
 * index and reads it again only when the ring looks full or empty.
 */
#ifndef UP_PATH_RING_H
#define UP_PATH_RING_H

#include <stdint.h>

#define QRING 256u               /* dispatcher -> worker ring */

struct up_ring {
	uint32_t head __attribute__((aligned(64))); /* producer */
	uint32_t tail_cache;
	uint32_t tail __attribute__((aligned(64))); /* consumer */
	uint32_t head_cache;
	void *slot[QRING] __attribute__((aligned(64)));
};

static inline unsigned int ring_enqueue(struct up_ring *r, void *const *p, unsigned int n)
{
	uint32_t h = r->head, room = QRING - (h - r->tail_cache);

	if (room < n) {
		r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		room = QRING - (h - r->tail_cache);
		if (room < n)
			n = room;
	}
	for (unsigned int i = 0; i < n; i++)
		r->slot[(h + i) & (QRING - 1)] = p[i];
	__atomic_store_n(&r->head, h + n, __ATOMIC_RELEASE);
	return n;
}

static inline unsigned int ring_dequeue(struct up_ring *r, void **p, unsigned int n)
{
	uint32_t t = r->tail, avail = r->head_cache - t;

	if (avail < n) {
		r->head_cache = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		avail = r->head_cache - t;
		if (avail < n)
			n = avail;
	}
	for (unsigned int i = 0; i < n; i++)
		p[i] = r->slot[(t + i) & (QRING - 1)];
	__atomic_store_n(&r->tail, t + n, __ATOMIC_RELEASE);
	return n;
}

#endif
