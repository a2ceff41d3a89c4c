// SPDX-License-Identifier: GPL-2.0-only
/*
 * The inline table's lookup method: a packet's TEID names a home line of
 * the inline table (inline.h), whose entries are the sessions' hot parts,
 * so the line the lookup reads is the one the packet then updates. A
 * session past its home line is found on the lines after it. One variant.
 */
#include "inline.h"
#include "lookup.h"
#include "path_loop.h"

/*
 * The home line is read two steps after its prefetch (0, then 2), not one,
 * because a burst of 8 packets is shorter than a DRAM access here; the
 * next line, for the few sessions past their home, one step more (3).
 */
static inline unsigned int lookup_depth(const int var)
{
	(void)var;
	return 4;
}

/* each packet's home line, prefetched */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const int var)
{
	const struct up_pool *pool = w->pool;

	(void)var;
	for (unsigned int i = 0; i < x->n; i++) {
		uint32_t teid = x->m[i]->pkt.teid;

		x->idx[i] = upi_home(pool, teid);
		up_prefetch_w(&pool->ent[(size_t)x->idx[i] * UPI_WAYS]);
	}
}

/*
 * The home lines in cache by now: a session found at home is settled; one
 * whose home line is full of others, and does not end a probe, has the
 * next line prefetched now, a step before lookup_settle() walks there.
 * Without a branch on the outcome, which the predictor cannot learn: one
 * packet in ten probes.
 */
static inline __attribute__((always_inline)) void
lookup_inline_home(struct up_worker *w, struct burst *x)
{
	const struct up_pool *pool = w->pool;
	uint64_t probe = 0;

	for (unsigned int i = 0; i < x->n; i++) {
		const struct up_mbuf *m = x->m[i];
		uint32_t home = x->idx[i], teid = m->pkt.teid;
		uint32_t next = home + 1 == pool->lines ? 0 : home + 1;
		unsigned int hit = upi_match(pool, home, teid), valid = m->status == GTPU_OK && teid != 0;
		bool found = valid && hit, on = valid && !hit && !upi_ends(pool, home);

		x->idx[i] = (uint32_t)up_sel(found, home * UPI_WAYS + (hit >> 1), up_sel(on, home, UPT_MISS));
		probe |= (uint64_t)on << i;
		up_prefetch_w(&pool->ent[(size_t)up_sel(on, next, home) * UPI_WAYS]);
	}
	x->probe = probe;
}

/* with prefetching, the home lines' step; without, the whole lookup */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const int var, const bool prefetch)
{
	(void)var;
	if (prefetch) {
		lookup_inline_home(w, x);
		return;
	}
	for (unsigned int i = 0; i < x->n; i++) {
		const struct up_mbuf *m = x->m[i];

		if (m->status != GTPU_OK)
			x->idx[i] = UPT_MISS;
		else
			x->idx[i] = upi_lookup(w->pool, m->pkt.teid);
	}
}

/*
 * The burst about to be applied: a session past its home line is found on
 * the lines after it (the first one prefetched a step ago).
 */
static inline __attribute__((always_inline)) void
lookup_settle(struct up_worker *w, struct burst *x, const int var)
{
	(void)var;
	for (uint64_t probe = x->probe; probe; probe &= probe - 1) {
		unsigned int i = (unsigned int)__builtin_ctzll(probe);

		x->idx[i] = upi_probe(w->pool, x->idx[i], x->m[i]->pkt.teid);
	}
	/* while a ring is empty the bursts turn without passing lookup_inline_home() */
	x->probe = 0;
}

/* the inline entry's: its /64 is the rule set's pool and its own four octets; its QER a profile's */
static inline __attribute__((always_inline)) void
hot_view_inline(struct hot_view *v, const struct up_pool *pool, struct up_sess_inline *s)
{
	const struct up_qer_profile *q = &pool->qer[s->qer];
	uint32_t pool6;

	v->ue_ip4 = s->ue_ip4;
	v->rules = &up_rule_vecs[s->rules];
	__builtin_memcpy(&pool6, v->rules->ue6_pool, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v->ue6 = (uint64_t)s->ue6_mid << 32 | pool6;
#else
	v->ue6 = (uint64_t)pool6 << 32 | s->ue6_mid;
#endif
	v->qer = &s->qer_state;
	v->rate = q->rate;
	v->burst = q->burst;
}

static inline __attribute__((always_inline)) unsigned int
session_verdict(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx,
		uint64_t now_tick, const int var, const bool shared)
{
	struct hot_view v;
	unsigned int hits, fwd;

	(void)var;
	hot_view_inline(&v, pool, &pool->ent[idx]);
	hits = hot_hits(&v, p, &fwd);
	return qer_verdict(&v, p, now_tick, hits, fwd, shared);
}

static inline __attribute__((always_inline)) void
session_count(const struct up_pool *pool, uint32_t idx, uint32_t len, uint32_t drop,
	      const int var, const bool shared)
{
	(void)var;
	if (shared)
		upi_count_shared(pool, idx, len, drop);
	else
		upi_count(pool, idx, len, drop);
}

UP_LOOPS(inline, 0)

static up_loop_fn *const inline_loops[][2][2][2] = { UP_LOOP_TABLE(inline) };

static bool inline_runs(const struct up_run_cfg *c)
{
	return c->layout == UP_LAYOUT_INLINE;
}

static unsigned int inline_variant(const struct up_run_cfg *c)
{
	(void)c;
	return 0;
}

const struct up_lookup up_lookup_inline = { inline_runs, inline_variant, inline_loops };
