/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the data path does at a packet's session once its lookup method has
 * found it, for the sessions of the fat and split layouts: prefetch it,
 * match its PDRs, apply the FAR and the QER (the verdict), update its usage
 * counters. The lookup methods share these; the inline table's entries
 * are read into the same hot view by their own method (lookup_inline.c).
 */
#ifndef UP_PATH_SESSION_H
#define UP_PATH_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "hw.h"
#include "path_worker.h"
#include "session.h"

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

/* the verdict of a packet whose session gave PDR hits, fwd if the first one's FAR forwards */
static inline __attribute__((always_inline)) unsigned int
qer_verdict(const struct hot_view *v, const struct gtpu_pkt *p, uint64_t now_tick,
	    unsigned int hits, unsigned int fwd, const bool shared)
{
	bool pass;

	/* no branch on the outcome: a packet that is not forwarded asks the QER for 0 bytes */
	pass = shared ? up_qer_step_atomic(v->qer, now_tick, v->rate, v->burst,
					   fwd ? p->tpdu_len : 0)
		      : up_qer_step(v->qer, now_tick, v->rate, v->burst, fwd ? p->tpdu_len : 0);
	/* no PDR, FAR drop, QER drop, forwarded: fwd implies hits */
	return V_NO_PDR + (hits != 0) + fwd + (fwd & pass);
}

/* PDR match by QFI and inner 5-tuple, FAR, QER of a fat session: the packet's verdict */
static inline __attribute__((always_inline)) unsigned int
verdict_fat(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx, uint64_t now_tick,
	    const bool shared)
{
	struct up_sess_fat *s = &pool->fat[idx];
	struct hot_view v;
	unsigned int hits, first, fwd;

	hits = up_pdr_hits(s->pdr, s->n_pdr, p, s->ue_ip4, s->ue_ip6);
	v.qer = &s->qer_state;
	v.rate = s->qer_rate;
	v.burst = s->qer_burst;
	first = hits ? (unsigned int)__builtin_ctz(hits) : 0;
	fwd = (hits != 0) & (s->far[s->pdr[first].far_id].action == UP_FAR_FORWARD);
	return qer_verdict(&v, p, now_tick, hits, fwd, shared);
}

/* the same for a split session's hot line and its shared rule set */
static inline __attribute__((always_inline)) unsigned int
verdict_split(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx, uint64_t now_tick,
	      const bool shared)
{
	struct hot_view v;
	unsigned int hits, fwd;

	hot_view_split(&v, &pool->hot[idx]);
	hits = hot_hits(&v, p, &fwd);
	return qer_verdict(&v, p, now_tick, hits, fwd, shared);
}

/* the verdict of a fat or a split session */
static inline __attribute__((always_inline)) unsigned int
verdict_at(const struct up_pool *pool, const struct gtpu_pkt *p, uint32_t idx, uint64_t now_tick,
	   const bool fat, const bool shared)
{
	if (fat)
		return verdict_fat(pool, p, idx, now_tick, shared);
	return verdict_split(pool, p, idx, now_tick, shared);
}

/* the usage counters of a fat or a split session, for count_session() */
static inline __attribute__((always_inline)) uint64_t *
counters_at(const struct up_pool *pool, uint32_t idx, const bool fat)
{
	return fat ? &pool->fat[idx].pkts : &pool->hot[idx].pkts;
}

/* usage counters c[0..2] (packets, T-PDU bytes, dropped packets) of a fat or split session */
static inline __attribute__((always_inline)) void
count_session(uint64_t *c, uint32_t len, uint32_t drop, const bool shared)
{
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

#endif
