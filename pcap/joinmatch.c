// SPDX-License-Identifier: GPL-2.0-only
/*
 * The join's matching (joinmatch.h): records against ACK frames, by flow,
 * ACK number and time, after a clock offset estimated from the data.
 */
#include <stdint.h>
#include <stdlib.h>

#include "pcap/joinmatch.h"

#define CLUSTER_NS 20000000 /* width of the window in which the clock offset is sought */
#define MAX_CAND 8          /* candidates per record used for the offset */

/* nanosecond arithmetic that saturates: a damaged trace or capture may hold any
 * 64-bit time, and an overflow would be undefined */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_abs(int64_t a)
{
	return a == INT64_MIN ? INT64_MAX : a < 0 ? -a : a;
}

static int cmp_ev(const void *x, const void *y)
{
	const struct jm_ev *a = x, *b = y;

	if (a->flow != b->flow)
		return a->flow < b->flow ? -1 : 1;
	if (a->ack != b->ack)
		return a->ack < b->ack ? -1 : 1;
	return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

void jm_sort_events(struct jm *j)
{
	if (j->nevs) /* a capture without ACKs has no array: qsort wants one */
		qsort(j->evs, j->nevs, sizeof(*j->evs), cmp_ev);
}

/* first event with (flow, ack) >= the key */
static size_t ev_lower(const struct jm *j, uint32_t flow, uint32_t ack)
{
	size_t lo = 0, hi = j->nevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jm_ev *e = &j->evs[mid];

		if (e->flow < flow || (e->flow == flow && e->ack < ack))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t ev_upper(const struct jm *j, size_t lo, uint32_t flow, uint32_t ack)
{
	while (lo < j->nevs && j->evs[lo].flow == flow && j->evs[lo].ack == ack)
		lo++;
	return lo;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* the capture-minus-trace clock offset: the median of the densest cluster of
 * (frame time - record time) over each record's candidate frames */
bool jm_estimate_offset(struct jm *j, size_t *support)
{
	int64_t *d = NULL;
	size_t n = 0, cap = 0, best_lo = 0, best_n = 0;

	for (size_t i = 0; i < j->nrecs; i++) {
		const struct jm_rec *r = &j->recs[i];
		size_t lo, hi;

		if ((r->kind != JM_SAMPLE && r->kind != JM_COLLAPSE) || r->flow < 0)
			continue;
		lo = ev_lower(j, (uint32_t)r->flow, r->snd_una);
		hi = ev_upper(j, lo, (uint32_t)r->flow, r->snd_una);
		if (hi - lo > MAX_CAND)
			hi = lo + MAX_CAND;
		for (size_t k = lo; k < hi; k++) {
			if (n == cap) {
				int64_t *v = realloc(d, (cap = cap ? cap * 2 : 4096) * sizeof(*v));

				if (!v) {
					free(d);
					j->oom = true;
					return false;
				}
				d = v;
			}
			d[n++] = sat_sub(j->evs[k].ts_ns, r->t_ns);
		}
	}
	if (!n) {
		free(d);
		*support = 0;
		return false;
	}
	qsort(d, n, sizeof(*d), cmp_i64);
	for (size_t lo = 0, hi = 0; lo < n; lo++) {
		while (hi < n && sat_sub(d[hi], d[lo]) <= CLUSTER_NS)
			hi++;
		if (hi - lo > best_n) {
			best_n = hi - lo;
			best_lo = lo;
		}
	}
	j->offset_ns = d[best_lo + best_n / 2];
	*support = best_n;
	free(d);
	return true;
}

static int cmp_rec_idx(const void *x, const void *y, void *ctx)
{
	const struct jm *j = ctx;
	const struct jm_rec *a = &j->recs[*(const size_t *)x], *b = &j->recs[*(const size_t *)y];

	if (a->flow != b->flow)
		return a->flow < b->flow ? -1 : 1;
	if (a->snd_una != b->snd_una)
		return a->snd_una < b->snd_una ? -1 : 1;
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

#define DP_MAX_CELLS (4u << 20)

/*
 * Records r[0..m) (in time order) against the frames evs[lo..lo+n) (in time
 * order) carrying the same ACK number: the order-preserving assignment with
 * the least total time error, a record left without a frame costing the
 * tolerance. Duplicate ACKs and the frames of ACKs that made no sample are
 * told apart this way. false when the group is too large for it.
 */
static bool match_group_dp(struct jm *j, const size_t *r, size_t m, size_t lo, size_t n, int64_t max_skew_ns)
{
	size_t w = n + 1, i, k;
	double *cost;
	uint8_t *how;

	if ((m + 1) * w > DP_MAX_CELLS)
		return false;
	cost = malloc((m + 1) * w * sizeof(*cost));
	how = malloc((m + 1) * w);
	if (!cost || !how) {
		free(cost);
		free(how);
		return false;
	}
	for (k = 0; k <= n; k++) {
		cost[k] = 0;
		how[k] = 0;
	}
	for (i = 1; i <= m; i++) {
		int64_t want = sat_add(j->recs[r[i - 1]].t_ns, j->offset_ns);

		cost[i * w] = cost[(i - 1) * w] + (double)max_skew_ns;
		how[i * w] = 1;
		for (k = 1; k <= n; k++) {
			int64_t err = sat_abs(sat_sub(j->evs[lo + k - 1].ts_ns, want));
			double best = cost[i * w + k - 1], c;
			uint8_t h = 0; /* frame k unused */

			c = cost[(i - 1) * w + k] + (double)max_skew_ns;
			if (c < best) {
				best = c;
				h = 1; /* record i unmatched */
			}
			if (err <= max_skew_ns) {
				c = cost[(i - 1) * w + k - 1] + (double)err;
				if (c < best) {
					best = c;
					h = 2; /* record i is frame k */
				}
			}
			cost[i * w + k] = best;
			how[i * w + k] = h;
		}
	}
	for (i = m, k = n; i > 0;) {
		uint8_t h = how[i * w + k];

		if (h == 0) {
			k--;
		} else if (h == 1) {
			i--;
		} else {
			j->recs[r[i - 1]].ev = (int64_t)(lo + k - 1);
			i--;
			k--;
		}
	}
	free(cost);
	free(how);
	return true;
}

/* the fallback for huge groups: each record takes the nearest frame after the previous one's */
static void match_group_greedy(struct jm *j, const size_t *r, size_t m, size_t lo, size_t hi, int64_t max_skew_ns)
{
	size_t next = lo;

	for (size_t k = 0; k < m && next < hi; k++) {
		struct jm_rec *rec = &j->recs[r[k]];
		int64_t want = sat_add(rec->t_ns, j->offset_ns), err;
		size_t a = next, b = hi, best;

		while (a < b) { /* first candidate at or after the expected time */
			size_t mid = a + (b - a) / 2;

			if (j->evs[mid].ts_ns < want)
				a = mid + 1;
			else
				b = mid;
		}
		best = a < hi ? a : hi - 1;
		if (a > next && (a == hi || sat_sub(want, j->evs[a - 1].ts_ns) <= sat_sub(j->evs[a].ts_ns, want)))
			best = a - 1;
		err = sat_sub(j->evs[best].ts_ns, want);
		if (err > max_skew_ns || err < -max_skew_ns)
			continue;
		rec->ev = (int64_t)best;
		next = best + 1;
	}
}

/*
 * Records of one kind (samples, or collapses: a collapse comes from the same
 * ACK as its sample, so the two kinds do not compete for frames).
 */
static void match_kind(struct jm *j, uint8_t kind, int64_t max_skew_ns)
{
	size_t *idx = malloc((j->nrecs ? j->nrecs : 1) * sizeof(*idx));
	size_t n = 0;

	if (!idx) {
		j->oom = true;
		return;
	}
	for (size_t i = 0; i < j->nrecs; i++)
		if (j->recs[i].kind == kind && j->recs[i].flow >= 0)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_rec_idx, (void *)j);
	for (size_t g = 0; g < n;) {
		const struct jm_rec *first = &j->recs[idx[g]];
		size_t lo = ev_lower(j, (uint32_t)first->flow, first->snd_una);
		size_t hi = ev_upper(j, lo, (uint32_t)first->flow, first->snd_una);
		size_t end = g;

		while (end < n && j->recs[idx[end]].flow == first->flow && j->recs[idx[end]].snd_una == first->snd_una)
			end++;
		if (hi > lo && !match_group_dp(j, idx + g, end - g, lo, hi - lo, max_skew_ns))
			match_group_greedy(j, idx + g, end - g, lo, hi, max_skew_ns);
		g = end;
	}
	free(idx);
}

void jm_match(struct jm *j, int64_t max_skew_ns)
{
	match_kind(j, JM_SAMPLE, max_skew_ns);
	match_kind(j, JM_COLLAPSE, max_skew_ns);
	match_kind(j, JM_STALL, max_skew_ns);
}
