// SPDX-License-Identifier: GPL-2.0-only
/*
 * How a packet finds its session, and a worker's loop around it: the
 * lookup paths (a table's bucket then the session, the inline table's
 * line, the slot the TEID names), the rules, counters and decapsulation
 * that follow, and one loop per path, design and prefetching, so that
 * each inner loop is straight code.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hw.h"
#include "inline.h"
#include "lookup.h"
#include "path_ring.h"
#include "path_worker.h"

/*
 * The QER clock is read again once this many packets have been applied:
 * reading the TSC costs about 30 cycles here (a KVM guest), a third of a
 * packet, while the token bucket counts in ticks of 1024 TSC cycles.
 */
#define QER_CLOCK_PKTS 32u

/*
 * How a packet finds its session and which lines that touches; each has a
 * loop of its own, so that the inner loop is straight code.
 */
enum path {
	PATH_OWN_FAT, PATH_OWN_SPLIT,   /* the own table's bucket, then the session */
	PATH_RTE_FAT, PATH_RTE_SPLIT,   /* rte_hash, then the session */
	PATH_INLINE,                    /* the bucket is the session's hot line */
	PATH_SLOT,                      /* the TEID names the hot line, which must hold that TEID */
	PATH_SLOT_UNCHECKED,            /* the same, the line's TEID not compared */
	PATH_N
};

static inline bool path_fat(enum path k)
{
	return k == PATH_OWN_FAT || k == PATH_RTE_FAT;
}

static inline bool path_slot(enum path k)
{
	return k == PATH_SLOT || k == PATH_SLOT_UNCHECKED;
}

static enum path path_of(const struct up_run_cfg *c)
{
	bool fat = c->layout == UP_LAYOUT_FAT;

	if (c->table == UP_TABLE_SLOT)
		return c->teid_check ? PATH_SLOT : PATH_SLOT_UNCHECKED;
	if (c->layout == UP_LAYOUT_INLINE)
		return PATH_INLINE;
	if (c->table == UP_TABLE_RTE)
		return fat ? PATH_RTE_FAT : PATH_RTE_SPLIT;
	return fat ? PATH_OWN_FAT : PATH_OWN_SPLIT;
}

static inline void prefetch_session(const struct up_pool *p, uint32_t idx, const bool fat)
{
	if (fat) {
		const char *s = (const char *)&p->fat[idx];

		up_prefetch_w(s);
		up_prefetch_w(s + 64);
		up_prefetch_w(s + 128);
		up_prefetch_w(s + 192);
	} else {
		up_prefetch_w(&p->hot[idx]);
	}
}

/* the hot line a slot-encoded TEID names in this worker's pool; UPT_MISS beyond it */
static inline uint32_t slot_line(const struct up_worker *w, uint32_t teid)
{
	uint32_t local = up_teid_index(w->slot_mask, teid) - w->slot_base;

	return local < w->slot_count ? local : UPT_MISS;
}

/* one burst on its way through the stages */
struct burst {
	struct up_mbuf *m[UP_MAX_BATCH];
	const struct upt_bucket *b[UP_MAX_BATCH];
	uint32_t idx[UP_MAX_BATCH];
	uint64_t probe;         /* inline: packets whose session is past its home line */
	unsigned int n;
};

/*
 * Lookup, first half: locate and prefetch the one line each packet needs
 * first: the own table's bucket, the inline table's home line, or the
 * line the TEID's slot names (then the lookup is done).
 */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const enum path k)
{
	const struct up_pool *pool = w->pool;

	for (unsigned int i = 0; i < x->n; i++) {
		uint32_t teid = x->m[i]->pkt.teid;

		if (k == PATH_OWN_FAT || k == PATH_OWN_SPLIT) {
			x->b[i] = upt_bucket_of(w->own, teid);
			up_prefetch(x->b[i]);
		} else if (k == PATH_INLINE) {
			x->idx[i] = upi_home(pool, teid);
			up_prefetch_w(&pool->ent[(size_t)x->idx[i] * UPI_WAYS]);
		} else if (path_slot(k)) {
			x->idx[i] = slot_line(w, teid);
			if (x->idx[i] != UPT_MISS)
				up_prefetch_w(&pool->hot[x->idx[i]]);
		}
		/* rte_hash's bulk lookup prefetches inside itself */
	}
}

/* lookup, second half, for the two tables: compare (the buckets are in cache by now), prefetch the sessions */
static inline __attribute__((always_inline)) void
lookup_table(struct up_worker *w, struct burst *x, const enum path k, const bool prefetch)
{
	unsigned int n = x->n;
	const bool fat = path_fat(k);

	if (k == PATH_OWN_FAT || k == PATH_OWN_SPLIT) {
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
		return;
	}
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

/*
 * The inline table, its home lines in cache by now: a session found at
 * home is settled; one whose home line is full of others, and does not end
 * a probe, has the next line prefetched now, a step before lookup_settle()
 * walks there. Without a branch on the outcome, which the predictor cannot
 * learn: one packet in ten probes.
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

/*
 * Lookup, second half: each packet's line. The tables compare their
 * buckets (in cache by now) and prefetch the sessions. Without prefetching
 * every path does its whole lookup here; with it, the inline table and the
 * slots read their line two steps after its prefetch, not one
 * (lookup_inline_home(), lookup_settle()).
 */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const enum path k, const bool prefetch)
{
	if (k != PATH_INLINE && !path_slot(k)) {
		lookup_table(w, x, k, prefetch);
		return;
	}
	if (prefetch)
		return;
	for (unsigned int i = 0; i < x->n; i++) {
		const struct up_mbuf *m = x->m[i];

		if (m->status != GTPU_OK)
			x->idx[i] = UPT_MISS;
		else if (k == PATH_INLINE)
			x->idx[i] = upi_lookup(w->pool, m->pkt.teid);
		else
			x->idx[i] = slot_line(w, m->pkt.teid);
	}
}

/*
 * The burst about to be applied: an inline session past its home line is
 * found on the lines after it (the first one prefetched a step ago). (A
 * slot named by a packet that is no G-PDU needs no undoing: rules_one()
 * looks at the status first.)
 */
static inline __attribute__((always_inline)) void
lookup_settle(struct up_worker *w, struct burst *x, const enum path k)
{
	if (k != PATH_INLINE)
		return;
	for (uint64_t probe = x->probe; probe; probe &= probe - 1) {
		unsigned int i = (unsigned int)__builtin_ctzll(probe);

		x->idx[i] = upi_probe(w->pool, x->idx[i], x->m[i]->pkt.teid);
	}
	/* while a ring is empty the bursts turn without passing lookup_inline_home() */
	x->probe = 0;
}

/* what the rules need of a session's hot part, wherever that part lives */
struct hot_view {
	uint32_t ue_ip4;
	uint64_t ue6;           /* the UE's /64, as it sits in memory */
	const struct up_rules_vec *rules;
	uint64_t *qer;
	uint32_t rate, burst;
};

/* the PDRs of the rule set that match the packet; *fwd: whether the first one's FAR forwards */
static inline __attribute__((always_inline)) unsigned int
hot_hits(const struct hot_view *v, const struct gtpu_pkt *p, unsigned int *fwd)
{
	uint32_t src4, dst4;
	uint64_t src6;
	unsigned int is4 = p->inner_family == 4, is6 = p->inner_family == 6, ue_ok, hits;

	__builtin_memcpy(&src4, p->src, 4);
	__builtin_memcpy(&dst4, p->dst, 4);
	__builtin_memcpy(&src6, p->src, 8);
	ue_ok = (is4 & (src4 == v->ue_ip4)) | (is6 & (src6 == v->ue6));
	hits = up_rules_vec_hits(v->rules, up_vkey(p, ue_ok), dst4, p->dport);
	/* hits | 8: lane 3 when none, so ctz needs no branch */
	*fwd = (hits != 0) & v->rules->far_fwd[__builtin_ctz(hits | 8)];
	return hits;
}

static inline __attribute__((always_inline)) void
hot_view_split(struct hot_view *v, struct up_sess_hot *s)
{
	v->ue_ip4 = s->ue_ip4;
	__builtin_memcpy(&v->ue6, s->ue_ip6, 8);
	v->rules = &up_rule_vecs[s->rules];
	v->qer = &s->qer_state;
	v->rate = s->qer_rate;
	v->burst = s->qer_burst;
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

/* PDR match by QFI and inner 5-tuple, FAR, QER: the packet's verdict */
static inline __attribute__((always_inline)) unsigned int
rules_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, uint64_t now_tick,
	  const enum path k, const bool shared)
{
	const struct gtpu_pkt *p = &m->pkt;
	struct hot_view v;
	unsigned int hits, fwd;
	bool pass;

	if (m->status != GTPU_OK)
		return V_NONE;
	if (idx == UPT_MISS)
		return V_NO_SESSION;
	if (path_fat(k)) {
		struct up_sess_fat *s = &pool->fat[idx];
		unsigned int first;

		hits = up_pdr_hits(s->pdr, s->n_pdr, p, s->ue_ip4, s->ue_ip6);
		v.qer = &s->qer_state;
		v.rate = s->qer_rate;
		v.burst = s->qer_burst;
		first = hits ? (unsigned int)__builtin_ctz(hits) : 0;
		fwd = (hits != 0) & (s->far[s->pdr[first].far_id].action == UP_FAR_FORWARD);
	} else if (k == PATH_INLINE) {
		hot_view_inline(&v, pool, &pool->ent[idx]);
		hits = hot_hits(&v, p, &fwd);
	} else {
		/* a TEID the slot did not give out: stale, or forged */
		if (k == PATH_SLOT && __builtin_expect(pool->hot[idx].teid != p->teid, 0))
			return V_NO_SESSION;
		hot_view_split(&v, &pool->hot[idx]);
		hits = hot_hits(&v, p, &fwd);
	}
	/* no branch on the outcome: a packet that is not forwarded asks the QER for 0 bytes */
	pass = shared ? up_qer_step_atomic(v.qer, now_tick, v.rate, v.burst, fwd ? p->tpdu_len : 0)
		      : up_qer_step(v.qer, now_tick, v.rate, v.burst, fwd ? p->tpdu_len : 0);
	/* no PDR, FAR drop, QER drop, forwarded: fwd implies hits */
	return V_NO_PDR + (hits != 0) + fwd + (fwd & pass);
}

/* usage counters: every packet that reached its session */
static inline __attribute__((always_inline)) void
count_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, unsigned int v,
	  const enum path k, const bool shared)
{
	uint32_t len = m->pkt.tpdu_len, drop = v != V_FWD;
	uint64_t *c;

	if (v == V_NONE || v == V_NO_SESSION)
		return;
	if (k == PATH_INLINE) {
		if (shared)
			upi_count_shared(pool, idx, len, drop);
		else
			upi_count(pool, idx, len, drop);
		return;
	}
	c = path_fat(k) ? &pool->fat[idx].pkts : &pool->hot[idx].pkts;
	if (shared) {
		__atomic_fetch_add(&c[0], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c[1], len, __ATOMIC_RELAXED);
		if (drop)
			__atomic_fetch_add(&c[2], 1, __ATOMIC_RELAXED);
	} else {
		c[0]++;
		c[1] += len;
		c[2] += drop;
	}
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
apply(struct up_worker *w, struct burst *x, bool timed, uint64_t *t, const enum path k,
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
		verdict[i] = (uint8_t)rules_one(pool, x->m[i], x->idx[i], now_tick, k, shared);
	stamp(w, UP_ST_RULES, timed, t);
	for (unsigned int i = 0; i < n; i++)
		count_one(pool, x->m[i], x->idx[i], verdict[i], k, shared);
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

#define MAX_DEPTH 4

/*
 * Bursts in flight when prefetching, and when each looks at what it
 * prefetched. A table's bucket and then its session: a step apart each
 * (step 0 prefetches the bucket, step 1 compares and prefetches the
 * session, step 2 applies). The slots' one line: two steps (0, then 2).
 * The inline table's home line: two steps (0, then 2), and the next line
 * for the few sessions past their home one more (3). Two steps, not one,
 * because a burst of 8 packets is shorter than a DRAM access here; deeper
 * pipelines for the tables measured no better.
 */
static inline unsigned int path_depth(enum path k)
{
	return k == PATH_INLINE ? 4 : 3;
}

/* one step of the prefetching pipeline: st[s] is the burst received s steps ago */
static inline __attribute__((always_inline)) void
pipeline_step(struct up_worker *w, struct burst **st, const enum path k, const bool shared,
	      bool timed, uint64_t *t)
{
	const unsigned int depth = path_depth(k);
	struct burst *last = st[depth - 1];

	lookup_issue(w, st[0], k);
	if (k == PATH_INLINE)
		lookup_inline_home(w, st[depth - 2]);
	else
		lookup_finish(w, st[1], k, true);
	lookup_settle(w, last, k);
	stamp(w, UP_ST_LOOKUP, timed, t);
	count_stage(w, timed, UP_ST_LOOKUP, last->n);
	apply(w, last, timed, t, k, shared);
	count_stage(w, timed, UP_ST_RULES, last->n);
	count_stage(w, timed, UP_ST_COUNTERS, last->n);
	count_stage(w, timed, UP_ST_DECAP, last->n);
	last->n = 0;
}

/*
 * Without prefetching, each burst goes through every stage before the next
 * one. With it, path_depth() bursts are in flight: while the newest has
 * its first line prefetched, older ones have their lookups finished (and
 * their sessions prefetched), and the oldest is matched, counted and
 * decapsulated. Every memory access then has a burst's worth of work or
 * more to hide behind.
 */
static inline __attribute__((always_inline)) void
worker_loop(struct up_worker *w, const bool from_ring, const enum path k, const bool shared,
	    const bool prefetch)
{
	const unsigned int depth = prefetch ? path_depth(k) : 1;
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
			pipeline_step(w, st, k, shared, timed, &t);
			continue;
		}
		lookup_finish(w, st[0], k, false);
		stamp(w, UP_ST_LOOKUP, timed, &t);
		count_stage(w, timed, UP_ST_LOOKUP, st[0]->n);
		apply(w, st[0], timed, &t, k, shared);
		count_stage(w, timed, UP_ST_RULES, st[0]->n);
		count_stage(w, timed, UP_ST_COUNTERS, st[0]->n);
		count_stage(w, timed, UP_ST_DECAP, st[0]->n);
		st[0]->n = 0;
	}
}

/* one instance per combination, so that each inner loop is straight code */
#define LOOP(R, K, S, P)                                                               \
	static void loop_##R##_##K##_##S##P(struct up_worker *w)                      \
	{                                                                              \
		worker_loop(w, R, (enum path)K, S, P);                                 \
	}
#define LOOP_P(R, K, S) LOOP(R, K, S, 0) LOOP(R, K, S, 1)
#define LOOP_S(R, K) LOOP_P(R, K, 0) LOOP_P(R, K, 1)
#define LOOP_K(R) LOOP_S(R, 0) LOOP_S(R, 1) LOOP_S(R, 2) LOOP_S(R, 3) LOOP_S(R, 4) LOOP_S(R, 5) \
	LOOP_S(R, 6)
_Static_assert(PATH_N == 7, "a loop for every path");
LOOP_K(0)
LOOP_K(1)

#define REF(R, K, S, P) [R][K][S][P] = loop_##R##_##K##_##S##P
#define REF_P(R, K, S) REF(R, K, S, 0), REF(R, K, S, 1)
#define REF_S(R, K) REF_P(R, K, 0), REF_P(R, K, 1)
#define REF_K(R) REF_S(R, 0), REF_S(R, 1), REF_S(R, 2), REF_S(R, 3), REF_S(R, 4), REF_S(R, 5), \
	REF_S(R, 6)
static void (*const loops[2][PATH_N][2][2])(struct up_worker *) = { REF_K(0), REF_K(1) };

up_loop_fn *up_lookup_loop(const struct up_run_cfg *c)
{
	return loops[c->design == UP_SHARDED][path_of(c)][c->design == UP_GLOBAL][c->prefetch];
}
