// SPDX-License-Identifier: GPL-2.0-only
/*
 * The own table's lookup method: a packet's TEID names a bucket of the
 * project's table (table.h), which holds the session's index; then the
 * session itself is read, its four lines (fat layout) or its hot line
 * (split). Its variants are the two layouts.
 */
#include "lookup.h"
#include "lookup_pool.h"

/*
 * A table's bucket and then its session, a step apart each: step 0
 * prefetches the bucket, step 1 compares and prefetches the session, step
 * 2 applies. Deeper pipelines measured no better.
 */
static inline unsigned int lookup_depth(const int var)
{
	(void)var;
	return 3;
}

/* each packet's bucket, prefetched */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const int var)
{
	(void)var;
	for (unsigned int i = 0; i < x->n; i++) {
		uint32_t teid = x->m[i]->pkt.teid;

		x->b[i] = upt_bucket_of(w->own, teid);
		up_prefetch(x->b[i]);
	}
}

/* compare (the buckets are in cache by now), prefetch the sessions */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const int var, const bool prefetch)
{
	unsigned int n = x->n;
	const bool fat = var == UP_LAYOUT_FAT;

	for (unsigned int i = 0; i < n; i++) {
		const struct up_mbuf *m = x->m[i];

		if (prefetch)
			x->idx[i] = m->status == GTPU_OK ? upt_lookup_at(w->own, x->b[i], m->pkt.teid)
							 : UPT_MISS;
		else
			x->idx[i] = m->status == GTPU_OK ? upt_lookup(w->own, m->pkt.teid) : UPT_MISS;
		if (prefetch && x->idx[i] != UPT_MISS)
			prefetch_session(w->pool, x->idx[i], fat);
	}
}

UP_LOOPS(own_fat, UP_LAYOUT_FAT)
UP_LOOPS(own_split, UP_LAYOUT_SPLIT)

static up_loop_fn *const own_loops[][2][2][2] = {
	UP_LOOP_TABLE(own_fat),
	UP_LOOP_TABLE(own_split),
};

static bool own_runs(const struct up_run_cfg *c)
{
	return c->table == UP_TABLE_OWN && c->layout != UP_LAYOUT_INLINE;
}

static unsigned int own_variant(const struct up_run_cfg *c)
{
	return c->layout == UP_LAYOUT_FAT ? 0 : 1;
}

const struct up_lookup up_lookup_own = { own_runs, own_variant, own_loops };
