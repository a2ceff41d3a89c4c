// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rte_hash lookup method: a burst's TEIDs go to DPDK's bulk lookup
 * (table_rte.h), which gives the sessions' indexes; then each session is
 * read, its four lines (fat layout) or its hot line (split). Its variants
 * are the two layouts.
 */
#include "lookup.h"
#include "lookup_pool.h"

/*
 * The lookup and then the session, a step apart: step 1 looks the burst
 * up and prefetches its sessions, step 2 applies. Deeper pipelines
 * measured no better.
 */
static inline unsigned int lookup_depth(const int var)
{
	(void)var;
	return 3;
}

/* nothing to issue: rte_hash's bulk lookup prefetches inside itself */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const int var)
{
	(void)w;
	(void)x;
	(void)var;
}

/* the bulk lookup, then the sessions prefetched */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const int var, const bool prefetch)
{
	unsigned int n = x->n;
	const bool fat = var == UP_LAYOUT_FAT;
	uint32_t teids[UP_MAX_BATCH];

	for (unsigned int i = 0; i < n; i++)
		teids[i] = x->m[i]->pkt.teid;
	if (n > 1)
		upt_rte_lookup_bulk(w->rte, teids, n, x->idx);
	else
		x->idx[0] = upt_rte_lookup(w->rte, teids[0]);
	for (unsigned int i = 0; i < n; i++) {
		if (x->m[i]->status != GTPU_OK)
			x->idx[i] = UPT_MISS;
		if (prefetch && x->idx[i] != UPT_MISS)
			prefetch_session(w->pool, x->idx[i], fat);
	}
}

UP_LOOPS(rte_fat, UP_LAYOUT_FAT)
UP_LOOPS(rte_split, UP_LAYOUT_SPLIT)

static up_loop_fn *const rte_loops[][2][2][2] = {
	UP_LOOP_TABLE(rte_fat),
	UP_LOOP_TABLE(rte_split),
};

static bool rte_runs(const struct up_run_cfg *c)
{
	return c->table == UP_TABLE_RTE;
}

static unsigned int rte_variant(const struct up_run_cfg *c)
{
	return c->layout == UP_LAYOUT_FAT ? 0 : 1;
}

const struct up_lookup up_lookup_rte = { rte_runs, rte_variant, rte_loops };
