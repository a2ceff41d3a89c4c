// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reorder buffer: events wait in arrival order; on release their keys
 * are merge-sorted by t_ns from the runs already in order (each CPU's batch
 * is one), stably, so that equal times keep their arrival order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/reorder.h"
#include "common.h"

/* an event's place in the time order: its time and where it waits */
struct bt_reorder_key {
	uint64_t t_ns;
	size_t i;
};

/* room for cap events and the sort's scratch; 0, or -ENOMEM */
static int grow(struct bt_reorder *r, size_t cap)
{
	struct bt_event *ev = realloc(r->ev, cap * sizeof(*ev));
	struct bt_event *spare;
	struct bt_reorder_key *keys, *tmp;
	size_t *runs;

	if (!ev)
		return -ENOMEM;
	r->ev = ev;
	spare = realloc(r->spare, cap * sizeof(*spare));
	if (!spare)
		return -ENOMEM;
	r->spare = spare;
	keys = realloc(r->keys, cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	r->keys = keys;
	tmp = realloc(r->tmp, cap * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	r->tmp = tmp;
	runs = realloc(r->runs, (cap + 1) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	r->runs = runs;
	r->cap = cap;
	return 0;
}

int bt_reorder_push(struct bt_reorder *r, const struct bt_event *e)
{
	if (r->n == r->cap && grow(r, r->cap ? r->cap * 2 : 4096))
		return -ENOMEM;
	r->ev[r->n++] = *e;
	return 0;
}

/* the sorted runs a[lo..mid) and a[mid..hi) into out[lo..hi); of equal
 * times, the left run's (the earlier arrival) first */
static void merge(const struct bt_reorder_key *a, struct bt_reorder_key *out, size_t lo, size_t mid,
		  size_t hi)
{
	size_t i = lo, j = mid, o = lo;

	while (i < mid && j < hi)
		out[o++] = a[j].t_ns < a[i].t_ns ? a[j++] : a[i++];
	memcpy(out + o, a + i, (mid - i) * sizeof(*a));
	o += mid - i;
	memcpy(out + o, a + j, (hi - j) * sizeof(*a));
}

/*
 * The keys of the n waiting events in time order, equal times in arrival
 * order: a merge of the runs that are in order already (each CPU's batch
 * is), pairwise, until one is left. Returns the array that holds them.
 */
static struct bt_reorder_key *sort_keys(struct bt_reorder *r)
{
	struct bt_reorder_key *a = r->keys, *b = r->tmp, *t;
	size_t *run = r->runs, nrun = 0, n = r->n;

	for (size_t i = 0; i < n; i++) {
		a[i].t_ns = r->ev[i].t_ns;
		a[i].i = i;
		if (i == 0 || a[i].t_ns < a[i - 1].t_ns)
			run[nrun++] = i;
	}
	run[nrun] = n;
	while (nrun > 1) { /* halves every round: at most log2(n) rounds */
		size_t m = 0;

		for (size_t k = 0; k < nrun; k += 2) {
			if (k + 1 < nrun)
				merge(a, b, run[k], run[k + 1], run[k + 2]);
			else
				memcpy(b + run[k], a + run[k], (run[k + 1] - run[k]) * sizeof(*a));
			run[m++] = run[k];
		}
		run[m] = n;
		nrun = m;
		t = a;
		a = b;
		b = t;
	}
	return a;
}

/* all of an event's cache lines, for reading */
static void prefetch_event(const struct bt_event *e)
{
	const char *p = (const char *)e;

	for (size_t off = 0; off < sizeof(*e); off += 64)
		tk_prefetch(p + off);
	tk_prefetch(p + sizeof(*e) - 1);
}

/* the hints for the events handed on after event k of the m released */
static void run_ahead(const struct bt_reorder *r, const struct bt_reorder_key *key, size_t k,
		      size_t m)
{
	const struct bt_event *e[BT_REORDER_STAGES];
	size_t j = k + (BT_REORDER_STAGES + 1) * BT_REORDER_AHEAD;

	if (j < m)
		prefetch_event(&r->ev[key[j].i]);
	if (!r->ahead)
		return;
	/* stage s for an event whose stage 0 ran (k >= s x BT_REORDER_AHEAD):
	 * the first events of a release get no hints rather than a stage that
	 * reads what no earlier stage fetched */
	for (unsigned int s = 0; s < BT_REORDER_STAGES; s++) {
		j = k + (BT_REORDER_STAGES - s) * BT_REORDER_AHEAD;
		e[s] = j < m && k >= s * BT_REORDER_AHEAD ? &r->ev[key[j].i] : NULL;
	}
	r->ahead(r->ahead_ctx, e);
}

void bt_reorder_set_ahead(struct bt_reorder *r, bt_reorder_ahead_fn ahead, void *ctx)
{
	r->ahead = ahead;
	r->ahead_ctx = ctx;
}

size_t bt_reorder_release(struct bt_reorder *r, uint64_t before_ns, bt_reorder_fn fn, void *ctx)
{
	struct bt_reorder_key *key;
	struct bt_event *t;
	size_t k = 0, m = 0;

	if (!r->n)
		return 0;
	key = sort_keys(r);
	while (m < r->n && key[m].t_ns < before_ns)
		m++;
	for (; k < m; k++) {
		run_ahead(r, key, k, m);
		fn(ctx, &r->ev[key[k].i]);
	}
	/* the events that wait on, in time order */
	for (size_t j = k; j < r->n; j++)
		r->spare[j - k] = r->ev[key[j].i];
	t = r->ev;
	r->ev = r->spare;
	r->spare = t;
	r->n -= k;
	return k;
}

void bt_reorder_free(struct bt_reorder *r)
{
	free(r->ev);
	free(r->spare);
	free(r->keys);
	free(r->tmp);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}
