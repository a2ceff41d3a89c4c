/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The steps that the lookup methods whose sessions live in the pool, fat
 * or split (the method's variant), share: the own table's and rte_hash's.
 * Both find every session in lookup_finish(), and both read a session by
 * its layout. The slot and inline methods read their sessions otherwise.
 */
#ifndef UP_LOOKUP_POOL_H
#define UP_LOOKUP_POOL_H

#include "path_loop.h"

/* nothing is left: lookup_finish() found every session */
static inline __attribute__((always_inline)) void
lookup_settle(struct up_worker *w, struct burst *x, const int var)
{
	(void)w;
	(void)x;
	(void)var;
}

static inline __attribute__((always_inline)) unsigned int
session_verdict(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx,
		uint64_t now_tick, const int var, const bool shared)
{
	return verdict_at(pool, p, idx, now_tick, var == UP_LAYOUT_FAT, shared);
}

static inline __attribute__((always_inline)) void
session_count(const struct up_pool *pool, uint32_t idx, uint32_t len, uint32_t drop,
	      const int var, const bool shared)
{
	count_session(counters_at(pool, idx, var == UP_LAYOUT_FAT), len, drop, shared);
}

#endif
