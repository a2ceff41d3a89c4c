/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A worker's loop, written once for every lookup method: receive (or
 * dequeue) a burst, parse it, look its sessions up, then rules, counters
 * and decapsulation, in bursts of --batch packets, stage by stage, so that
 * with prefetching every lookup of a burst is in flight at once.
 *
 * Each lookup method's file (lookup_*.c) includes this header, defines the
 * steps declared below (those that the own table and rte_hash share are in
 * lookup_pool.h), and instantiates its loops with UP_LOOPS(): one
 * function per variant, design and prefetching, each with the method's
 * steps inlined, so that every inner loop is straight code with no call
 * and no branch on the method, the design or prefetching.
 */
#ifndef UP_PATH_LOOP_H
#define UP_PATH_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hw.h"
#include "path_ring.h"
#include "path_session.h"
#include "path_worker.h"

/*
 * The QER clock is read again once this many packets have been applied:
 * reading the TSC costs about 30 cycles here (a KVM guest), a third of a
 * packet, while the token bucket counts in ticks of 1024 TSC cycles.
 */
#define QER_CLOCK_PKTS 32u

/* one burst on its way through the stages */
struct burst {
	struct up_mbuf *m[UP_MAX_BATCH];
	const struct upt_bucket *b[UP_MAX_BATCH];
	uint32_t idx[UP_MAX_BATCH];
	uint64_t probe;         /* inline: packets whose session is past its home line */
	unsigned int n;
};

#define MAX_DEPTH 4

/*
 * The steps of a lookup method, defined by the file that includes this
 * header. `var` is the method's variant, a constant in each loop (the
 * session layout for the tables, whether the TEID is checked for the
 * slots); a step that does not depend on it ignores it.
 */

/* bursts in flight when prefetching, at most MAX_DEPTH */
static inline unsigned int lookup_depth(const int var);

/* lookup, first half: locate and prefetch the one line each packet needs first */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const int var);

/*
 * Lookup, second half: each packet's line in x->idx, UPT_MISS for none.
 * With prefetch, the pipelined step on the burst received lookup_depth() - 2
 * steps ago; without, the whole lookup of a burst.
 */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const int var, const bool prefetch);

/* the burst about to be applied: what is left of its lookups when prefetching */
static inline __attribute__((always_inline)) void
lookup_settle(struct up_worker *w, struct burst *x, const int var);

/* the verdict of a G-PDU whose session the lookup found at idx: PDRs, FAR, QER */
static inline __attribute__((always_inline)) unsigned int
session_verdict(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx,
		uint64_t now_tick, const int var, const bool shared);

/* the usage counters of the session at idx: a packet of len T-PDU bytes, dropped or not */
static inline __attribute__((always_inline)) void
session_count(const struct up_pool *pool, uint32_t idx, uint32_t len, uint32_t drop,
	      const int var, const bool shared);

/* PDR match by QFI and inner 5-tuple, FAR, QER: the packet's verdict */
static inline __attribute__((always_inline)) unsigned int
rules_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, uint64_t now_tick,
	  const int var, const bool shared)
{
	if (m->status != GTPU_OK)
		return V_NONE;
	if (idx == UPT_MISS)
		return V_NO_SESSION;
	return session_verdict(pool, &m->pkt, idx, now_tick, var, shared);
}

/* usage counters: every packet that reached its session */
static inline __attribute__((always_inline)) void
count_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, unsigned int v,
	  const int var, const bool shared)
{
	uint32_t len = m->pkt.tpdu_len, drop = v != V_FWD;

	if (v == V_NONE || v == V_NO_SESSION)
		return;
	session_count(pool, idx, len, drop, var, shared);
}

/* decapsulate: the forwarded packet is the T-PDU (rte_pktmbuf_adj); tally the verdict */
static inline __attribute__((always_inline)) void
decap_one(struct up_mbuf *m, unsigned int v, uint64_t *tally)
{
	bool fwd = v == V_FWD;

	m->out_off = (uint16_t)up_sel(fwd, m->pkt.tpdu_off, 0);
	m->out_len = (uint16_t)up_sel(fwd, m->pkt.tpdu_len, 0);
	*tally += (uint64_t)1 << (8 * v);
}

/* rules, counters, decapsulation of a burst whose sessions are known */
static inline __attribute__((always_inline)) void
apply(struct up_worker *w, struct burst *x, bool timed, uint64_t *t, const int var,
      const bool shared)
{
	uint8_t verdict[UP_MAX_BATCH];
	const struct up_pool *pool = w->pool;
	unsigned int n = x->n;
	uint64_t now_tick, tally = 0; /* an octet per verdict: n <= 64 */

	if (w->clock_pkts >= QER_CLOCK_PKTS || !w->now_tick) {
		w->now_tick = up_tsc() >> UP_QER_TICK_SHIFT;
		w->clock_pkts = 0;
	}
	w->clock_pkts += n;
	now_tick = w->now_tick;

	for (unsigned int i = 0; i < n; i++)
		verdict[i] = (uint8_t)rules_one(pool, x->m[i], x->idx[i], now_tick, var, shared);
	stamp(w, UP_ST_RULES, timed, t);
	for (unsigned int i = 0; i < n; i++)
		count_one(pool, x->m[i], x->idx[i], verdict[i], var, shared);
	stamp(w, UP_ST_COUNTERS, timed, t);
	for (unsigned int i = 0; i < n; i++)
		decap_one(x->m[i], verdict[i], &tally);
	for (unsigned int v = 0; v <= V_FWD; v++)
		w->verdicts[v] += tally >> (8 * v) & 0xff;
	stamp(w, UP_ST_DECAP, timed, t);
}

/* the next burst: from this worker's own receive context, or from its ring */
static inline __attribute__((always_inline)) unsigned int
receive(struct up_worker *w, struct burst *x, unsigned int batch, bool timed, uint64_t *t,
	const bool from_ring)
{
	if (from_ring)
		return ring_dequeue(w->in, (void **)x->m, batch);
	x->n = rx_burst(&w->rx, x->m, batch);
	stamp(w, UP_ST_RX, timed, t);
	parse_burst(w, x->m, x->n);
	stamp(w, UP_ST_PARSE, timed, t);
	return x->n;
}

/* one step of the prefetching pipeline: st[s] is the burst received s steps ago */
static inline __attribute__((always_inline)) void
pipeline_step(struct up_worker *w, struct burst **st, const int var, const bool shared,
	      bool timed, uint64_t *t)
{
	const unsigned int depth = lookup_depth(var);
	struct burst *last = st[depth - 1];

	lookup_issue(w, st[0], var);
	lookup_finish(w, st[depth - 2], var, true);
	lookup_settle(w, last, var);
	stamp(w, UP_ST_LOOKUP, timed, t);
	count_stage(w, timed, UP_ST_LOOKUP, last->n);
	apply(w, last, timed, t, var, shared);
	count_stage(w, timed, UP_ST_RULES, last->n);
	count_stage(w, timed, UP_ST_COUNTERS, last->n);
	count_stage(w, timed, UP_ST_DECAP, last->n);
	last->n = 0;
}

/*
 * Without prefetching, each burst goes through every stage before the next
 * one. With it, lookup_depth() bursts are in flight: while the newest has
 * its first line prefetched, older ones have their lookups finished (and
 * their sessions prefetched), and the oldest is matched, counted and
 * decapsulated. Every memory access then has a burst's worth of work or
 * more to hide behind.
 */
static inline __attribute__((always_inline)) void
worker_loop(struct up_worker *w, const bool from_ring, const int var, const bool shared,
	    const bool prefetch)
{
	const unsigned int depth = prefetch ? lookup_depth(var) : 1;
	struct burst bs[MAX_DEPTH], *st[MAX_DEPTH];
	unsigned int batch = w->e->c->batch, cur = 0;
	uint64_t iter = 0;

	memset(bs, 0, sizeof(bs));
	for (;; iter++, cur++) {
		bool timed = (iter & SAMPLE_MASK) == 0, idle = true;
		uint64_t t = timed ? up_tsc() : 0;

		for (unsigned int i = 0; i < depth; i++) {
			st[i] = &bs[(cur + depth - i) % depth];
			idle &= !st[i]->n;
		}
		st[0]->n = receive(w, st[0], batch, timed, &t, from_ring);
		w->pkts += st[0]->n;
		if (!from_ring) {
			count_stage(w, timed, UP_ST_RX, st[0]->n);
			count_stage(w, timed, UP_ST_PARSE, st[0]->n);
		}
		if (idle && !st[0]->n) {
			if (!from_ring)
				break;
			if (!__atomic_load_n(&w->e->dispatch_done, __ATOMIC_ACQUIRE)) {
				cpu_relax();
				continue;
			}
			/* the dispatcher's last enqueue happens before it sets done */
			st[0]->n = receive(w, st[0], batch, false, &t, from_ring);
			w->pkts += st[0]->n;
			if (!st[0]->n)
				break;
		}
		if (prefetch) {
			pipeline_step(w, st, var, shared, timed, &t);
			continue;
		}
		lookup_finish(w, st[0], var, false);
		stamp(w, UP_ST_LOOKUP, timed, &t);
		count_stage(w, timed, UP_ST_LOOKUP, st[0]->n);
		apply(w, st[0], timed, &t, var, shared);
		count_stage(w, timed, UP_ST_RULES, st[0]->n);
		count_stage(w, timed, UP_ST_COUNTERS, st[0]->n);
		count_stage(w, timed, UP_ST_DECAP, st[0]->n);
		st[0]->n = 0;
	}
}

/*
 * UP_LOOPS(N, VAR): the loops of variant VAR, loop_N_R_SP for R from a
 * ring, S shared pool, P prefetching; UP_LOOP_TABLE(N): them as a
 * [from a ring][shared][prefetch] table (struct up_lookup's loops).
 */
#define UP_LOOP(N, VAR, R, S, P)                                                       \
	static void loop_##N##_##R##_##S##P(struct up_worker *w)                       \
	{                                                                              \
		worker_loop(w, R, VAR, S, P);                                          \
	}
#define UP_LOOP_P(N, VAR, R, S) UP_LOOP(N, VAR, R, S, 0) UP_LOOP(N, VAR, R, S, 1)
#define UP_LOOP_S(N, VAR, R) UP_LOOP_P(N, VAR, R, 0) UP_LOOP_P(N, VAR, R, 1)
#define UP_LOOPS(N, VAR) UP_LOOP_S(N, VAR, 0) UP_LOOP_S(N, VAR, 1)

#define UP_LOOP_REF_P(N, R, S) { loop_##N##_##R##_##S##0, loop_##N##_##R##_##S##1 }
#define UP_LOOP_REF_S(N, R) { UP_LOOP_REF_P(N, R, 0), UP_LOOP_REF_P(N, R, 1) }
#define UP_LOOP_TABLE(N) { UP_LOOP_REF_S(N, 0), UP_LOOP_REF_S(N, 1) }

#endif
