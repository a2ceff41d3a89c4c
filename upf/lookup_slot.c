// SPDX-License-Identifier: GPL-2.0-only
/*
 * The slot lookup method, no table: a slot-encoded TEID names its session's
 * hot line in the split layout (teid.h), which holds the TEID the slot gave
 * out. Its variants: that TEID compared with the packet's (a stale or
 * forged TEID is no session's), or not, to measure what the check costs.
 */
#include "lookup.h"
#include "path_loop.h"

/*
 * The slot's one line is read two steps after its prefetch (0, then 2),
 * not one, because a burst of 8 packets is shorter than a DRAM access here.
 */
static inline unsigned int lookup_depth(const int var)
{
	(void)var;
	return 3;
}

/* the hot line a slot-encoded TEID names in this worker's pool; UPT_MISS beyond it */
static inline uint32_t slot_line(const struct up_worker *w, uint32_t teid)
{
	uint32_t local = up_teid_index(w->slot_mask, teid) - w->slot_base;

	return local < w->slot_count ? local : UPT_MISS;
}

/* the whole lookup: the line the TEID's slot names, prefetched */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const int var)
{
	const struct up_pool *pool = w->pool;

	(void)var;
	for (unsigned int i = 0; i < x->n; i++) {
		uint32_t teid = x->m[i]->pkt.teid;

		x->idx[i] = slot_line(w, teid);
		if (x->idx[i] != UPT_MISS)
			up_prefetch_w(&pool->hot[x->idx[i]]);
	}
}

/* with prefetching nothing is left to do; without, the whole lookup */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const int var, const bool prefetch)
{
	(void)var;
	if (prefetch)
		return;
	for (unsigned int i = 0; i < x->n; i++) {
		const struct up_mbuf *m = x->m[i];

		if (m->status != GTPU_OK)
			x->idx[i] = UPT_MISS;
		else
			x->idx[i] = slot_line(w, m->pkt.teid);
	}
}

/*
 * Nothing is left to settle: a slot named by a packet that is no G-PDU
 * needs no undoing, as rules_one() looks at the status first.
 */
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
	/* a TEID the slot did not give out: stale, or forged */
	if (var && __builtin_expect(pool->hot[idx].teid != p->teid, 0))
		return V_NO_SESSION;
	return verdict_split(pool, p, idx, now_tick, shared);
}

static inline __attribute__((always_inline)) void
session_count(const struct up_pool *pool, uint32_t idx, uint32_t len, uint32_t drop,
	      const int var, const bool shared)
{
	(void)var;
	count_session(counters_at(pool, idx, false), len, drop, shared);
}

/* the variant is whether the TEID is checked */
UP_LOOPS(slot_unchecked, 0)
UP_LOOPS(slot, 1)

static up_loop_fn *const slot_loops[][2][2][2] = {
	UP_LOOP_TABLE(slot_unchecked),
	UP_LOOP_TABLE(slot),
};

static bool slot_runs(const struct up_run_cfg *c)
{
	return c->table == UP_TABLE_SLOT;
}

static unsigned int slot_variant(const struct up_run_cfg *c)
{
	return c->teid_check ? 1 : 0;
}

const struct up_lookup up_lookup_slot = { slot_runs, slot_variant, slot_loops };
