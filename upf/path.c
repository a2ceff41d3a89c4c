// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gtpu_fast.h"
#include "hw.h"
#include "path.h"
#include "table.h"
#include "table_rte.h"

const char *const up_design_names[] = { "global", "sharded", "steered", NULL };
const char *const up_table_names[] = { "own", "rte_hash", NULL };
const char *const up_layout_names[] = { "fat", "split", NULL };
const char *const up_stage_names[] = { "rx", "parse", "lookup", "rules", "counters", "decap", NULL };

/* not a power of two, so that the slots' headers spread over the cache sets */
#define SLOT_BYTES 2240u
#define RX_SLOTS 512u            /* a NIC-sized ring per receive context; a multiple of UP_NTPL */
#define QRING 256u               /* dispatcher -> worker ring */
#define SAMPLE_MASK 63u          /* stage times are taken on one burst in 64 */
/*
 * The QER clock is read again once this many packets have been applied:
 * reading the TSC costs about 30 cycles here (a KVM guest), a third of a
 * packet, while the token bucket counts in ticks of 1024 TSC cycles.
 */
#define QER_CLOCK_PKTS 32u

_Static_assert(RX_SLOTS % UP_NTPL == 0, "slot k always holds template k mod UP_NTPL");

/*
 * A polling thread spins, as a DPDK worker does; after many empty polls it
 * yields, so that a run with more threads than CPUs still makes progress.
 */
static inline void cpu_relax(void)
{
	static __thread unsigned int spins;

#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
	if (++spins % 4096 == 0)
		sched_yield();
}

/* ---- packet descriptors and receive contexts ------------------------------------ */

struct up_mbuf {
	const uint8_t *data;
	uint16_t len;
	uint16_t out_off;       /* after decapsulation: where the forwarded packet starts */
	uint16_t out_len;
	int16_t status;         /* enum gtpu_status */
	uint16_t teid_off, ue_off;
	uint32_t pad;
	struct gtpu_pkt pkt;
};

struct up_rx {
	const struct up_traffic *t;
	const uint32_t *pos_list; /* steered: this worker's stream positions; NULL: all */
	uint32_t len;           /* positions in one cycle */
	uint32_t idx, stride;
	uint64_t k, quota;
	uint8_t *slots;         /* generated traffic: RX_SLOTS frames */
	uint32_t nslots;
	struct up_mbuf *desc;
};

static int rx_init(struct up_rx *rx, const struct up_traffic *t, uint32_t nslots)
{
	rx->t = t;
	rx->nslots = nslots;
	rx->desc = up_mem_alloc((size_t)nslots * sizeof(*rx->desc), false);
	if (!rx->desc)
		return -1;
	if (t->from_pcap)
		return 0;
	rx->slots = up_mem_alloc((size_t)nslots * SLOT_BYTES, false);
	if (!rx->slots)
		return -1;
	for (uint32_t s = 0; s < nslots; s++) {
		const struct up_tpl *tp = &t->tpl[s % UP_NTPL];
		struct up_mbuf *d = &rx->desc[s];

		memcpy(rx->slots + (size_t)s * SLOT_BYTES, tp->frame, tp->len);
		d->data = rx->slots + (size_t)s * SLOT_BYTES;
		d->len = tp->len;
		d->teid_off = tp->teid_off;
		d->ue_off = tp->ue_off;
	}
	return 0;
}

static void rx_free(struct up_rx *rx)
{
	up_mem_free(rx->desc, (size_t)rx->nslots * sizeof(*rx->desc));
	up_mem_free(rx->slots, (size_t)rx->nslots * SLOT_BYTES);
	rx->desc = NULL;
	rx->slots = NULL;
}

/* the next n packets of this context, written into its ring like a NIC would */
static inline unsigned int rx_burst(struct up_rx *rx, struct up_mbuf **m, unsigned int n)
{
	const struct up_traffic *t = rx->t;
	const uint32_t *pl = rx->pos_list;
	uint32_t idx = rx->idx, len = rx->len, stride = rx->stride, mask = rx->nslots - 1;
	uint64_t k = rx->k;

	if (rx->quota - k < n)
		n = (unsigned int)(rx->quota - k);
	/* locals: the frame writes below may alias anything, so rx's fields would be reloaded */
	if (t->from_pcap) {
		for (unsigned int j = 0; j < n; j++) {
			uint32_t pos = pl ? pl[idx] : idx;
			struct up_mbuf *d = &rx->desc[k & mask];

			d->data = t->fbuf + t->foff[pos];
			d->len = t->flen[pos];
			m[j] = d;
			k++;
			idx += stride;
			while (idx >= len)
				idx -= len;
		}
	} else {
		const struct up_spec *spec = t->spec;

		for (unsigned int j = 0; j < n; j++) {
			uint32_t pos = pl ? pl[idx] : idx;
			struct up_mbuf *d = &rx->desc[k & mask];
			uint8_t *f = (uint8_t *)(uintptr_t)d->data;
			const uint8_t *ahead = rx->desc[(k + UP_MAX_BATCH) & mask].data;
			struct up_spec sp = spec[pos];

			memcpy(f + d->teid_off, &sp.teid_be, 4);
			memcpy(f + d->ue_off, &sp.ue_be, 4);
			m[j] = d;
			/* the NIC has written these by now: bring the headers of a later burst in */
			up_prefetch_w(ahead);
			up_prefetch_w(ahead + 64);
			k++;
			idx += stride;
			while (idx >= len)
				idx -= len;
		}
	}
	rx->k = k;
	rx->idx = idx;
	return n;
}

/* ---- single-producer single-consumer ring ----------------------------------------- */

struct up_ring {
	uint32_t head __attribute__((aligned(64))); /* producer */
	uint32_t tail_cache;
	uint32_t tail __attribute__((aligned(64))); /* consumer */
	uint32_t head_cache;
	void *slot[QRING] __attribute__((aligned(64)));
};

static inline unsigned int ring_enqueue(struct up_ring *r, void *const *p, unsigned int n)
{
	uint32_t h = r->head, room = QRING - (h - r->tail_cache);

	if (room < n) {
		r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		room = QRING - (h - r->tail_cache);
		if (room < n)
			n = room;
	}
	for (unsigned int i = 0; i < n; i++)
		r->slot[(h + i) & (QRING - 1)] = p[i];
	__atomic_store_n(&r->head, h + n, __ATOMIC_RELEASE);
	return n;
}

static inline unsigned int ring_dequeue(struct up_ring *r, void **p, unsigned int n)
{
	uint32_t t = r->tail, avail = r->head_cache - t;

	if (avail < n) {
		r->head_cache = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		avail = r->head_cache - t;
		if (avail < n)
			n = avail;
	}
	for (unsigned int i = 0; i < n; i++)
		p[i] = r->slot[(t + i) & (QRING - 1)];
	__atomic_store_n(&r->tail, t + n, __ATOMIC_RELEASE);
	return n;
}

/* ---- workers ----------------------------------------------------------------------- */

struct up_engine;

struct up_worker {
	struct up_engine *e;
	unsigned int id;
	int cpu;
	bool dispatcher;
	struct up_rx rx;
	struct up_ring *in;     /* sharded worker: its ring */
	const struct upt *own;
	struct upt_rte *rte;
	struct up_pool *pool;
	void (*loop)(struct up_worker *w);
	/* results */
	uint64_t tsc0, tsc1;
	double cpu_s;
	uint64_t pkts, malformed, not_gtpu;
	uint64_t verdicts[8];   /* by enum verdict */
	uint64_t st[UP_NSTAGES], st_pkts[UP_NSTAGES];
	uint64_t llc, dtlb;
	uint64_t sink;
	uint64_t now_tick;      /* the QER clock, in ticks of 1024 TSC cycles */
	unsigned int clock_pkts; /* packets applied since it was read */
} __attribute__((aligned(64)));

struct up_engine {
	const struct up_run_cfg *c;
	const struct up_traffic *t;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned int ready;
	bool go, abort;
	unsigned int nthreads;
	struct up_worker *w;
	struct up_ring *rings;
	int dispatch_done;
};

/* in this order: apply() computes a verdict by adding to V_NO_PDR */
enum verdict { V_NONE, V_NO_SESSION, V_NO_PDR, V_FAR_DROP, V_QER_DROP, V_FWD };
_Static_assert(UP_MAX_BATCH < 256, "apply() tallies verdicts in octets");

static inline void parse_burst(struct up_worker *w, struct up_mbuf **m, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int rc = gtpu_parse_fast(m[i]->data, m[i]->len, &m[i]->pkt);

		if (__builtin_expect(rc == GTPU_FAST_NO, 0))
			rc = gtpu_parse_frame(m[i]->data, m[i]->len, &m[i]->pkt, NULL);

		m[i]->status = (int16_t)rc;
		if (rc < 0)
			w->malformed++;
		else if (rc > 0)
			w->not_gtpu++;
	}
}

static inline void prefetch_session(const struct up_pool *p, uint32_t idx, const enum up_layout layout)
{
	if (layout == UP_LAYOUT_FAT) {
		const char *s = (const char *)&p->fat[idx];

		up_prefetch_w(s);
		up_prefetch_w(s + 64);
		up_prefetch_w(s + 128);
		up_prefetch_w(s + 192);
	} else {
		up_prefetch_w(&p->hot[idx]);
	}
}

/* what reading the TSC itself costs, taken out of each stage time */
static uint64_t tsc_cost;

static void measure_tsc_cost(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 1000; i++) {
		uint64_t a = up_tsc(), b = up_tsc();

		if (b - a < best)
			best = b - a;
	}
	tsc_cost = best;
}

static inline void stamp(struct up_worker *w, enum up_stage s, bool timed, uint64_t *t)
{
	if (timed) {
		uint64_t now = up_tsc();

		w->st[s] += now - *t > tsc_cost ? now - *t - tsc_cost : 0;
		*t = now;
	}
}

/* one burst on its way through the stages */
struct burst {
	struct up_mbuf *m[UP_MAX_BATCH];
	const struct upt_bucket *b[UP_MAX_BATCH];
	uint32_t idx[UP_MAX_BATCH];
	unsigned int n;
};

/* lookup, first half: locate and prefetch every bucket of the burst */
static inline __attribute__((always_inline)) void
lookup_issue(struct up_worker *w, struct burst *x, const enum up_table_kind tk)
{
	if (tk != UP_TABLE_OWN)
		return; /* rte_hash's bulk lookup prefetches inside itself */
	for (unsigned int i = 0; i < x->n; i++) {
		x->b[i] = upt_bucket_of(w->own, x->m[i]->pkt.teid);
		up_prefetch(x->b[i]);
	}
}

/* lookup, second half: compare (the buckets are in cache by now), prefetch the sessions */
static inline __attribute__((always_inline)) void
lookup_finish(struct up_worker *w, struct burst *x, const enum up_layout layout,
	      const enum up_table_kind tk, const bool prefetch)
{
	unsigned int n = x->n;

	if (tk == UP_TABLE_OWN) {
		for (unsigned int i = 0; i < n; i++) {
			const struct up_mbuf *m = x->m[i];

			if (prefetch)
				x->idx[i] = m->status == GTPU_OK ? upt_lookup_at(w->own, x->b[i], m->pkt.teid)
								 : UPT_MISS;
			else
				x->idx[i] = m->status == GTPU_OK ? upt_lookup(w->own, m->pkt.teid) : UPT_MISS;
			if (prefetch && x->idx[i] != UPT_MISS)
				prefetch_session(w->pool, x->idx[i], layout);
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
			prefetch_session(w->pool, x->idx[i], layout);
	}
}

/* PDR match by QFI and inner 5-tuple, FAR, QER: the packet's verdict */
static inline __attribute__((always_inline)) unsigned int
rules_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, uint64_t now_tick,
	  const enum up_layout layout, const bool shared)
{
	const struct gtpu_pkt *p = &m->pkt;
	unsigned int hits, fwd;
	uint64_t *qer;
	uint32_t rate, burst;
	bool pass;

	if (m->status != GTPU_OK)
		return V_NONE;
	if (idx == UPT_MISS)
		return V_NO_SESSION;
	if (layout == UP_LAYOUT_FAT) {
		struct up_sess_fat *s = &pool->fat[idx];
		unsigned int first;

		hits = up_pdr_hits(s->pdr, s->n_pdr, p, s->ue_ip4, s->ue_ip6);
		qer = &s->qer_state;
		rate = s->qer_rate;
		burst = s->qer_burst;
		first = hits ? (unsigned int)__builtin_ctz(hits) : 0;
		fwd = (hits != 0) & (s->far[s->pdr[first].far_id].action == UP_FAR_FORWARD);
	} else {
		struct up_sess_hot *s = &pool->hot[idx];
		const struct up_rules_vec *r = &up_rule_vecs[s->rules];
		uint32_t src4, dst4;
		uint64_t src6, ue6;
		unsigned int is4 = p->inner_family == 4, is6 = p->inner_family == 6, ue_ok;

		qer = &s->qer_state;
		rate = s->qer_rate;
		burst = s->qer_burst;
		__builtin_memcpy(&src4, p->src, 4);
		__builtin_memcpy(&dst4, p->dst, 4);
		__builtin_memcpy(&src6, p->src, 8);
		__builtin_memcpy(&ue6, s->ue_ip6, 8);
		ue_ok = (is4 & (src4 == s->ue_ip4)) | (is6 & (src6 == ue6));
		hits = up_rules_vec_hits(r, up_vkey(p, ue_ok), dst4, p->dport);
		/* hits | 8: lane 3 when none, so ctz needs no branch */
		fwd = (hits != 0) & r->far_fwd[__builtin_ctz(hits | 8)];
	}
	/* no branch on the outcome: a packet that is not forwarded asks the QER for 0 bytes */
	pass = shared ? up_qer_step_atomic(qer, now_tick, rate, burst, fwd ? p->tpdu_len : 0)
		      : up_qer_step(qer, now_tick, rate, burst, fwd ? p->tpdu_len : 0);
	/* no PDR, FAR drop, QER drop, forwarded: fwd implies hits */
	return V_NO_PDR + (hits != 0) + fwd + (fwd & pass);
}

/* usage counters: every packet that reached its session */
static inline __attribute__((always_inline)) void
count_one(const struct up_pool *pool, const struct up_mbuf *m, uint32_t idx, unsigned int v,
	  const enum up_layout layout, const bool shared)
{
	uint32_t len = m->pkt.tpdu_len, drop = v != V_FWD;
	uint64_t *c;

	if (v == V_NONE || v == V_NO_SESSION)
		return;
	c = layout == UP_LAYOUT_FAT ? &pool->fat[idx].pkts : &pool->hot[idx].pkts;
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
apply(struct up_worker *w, struct burst *x, bool timed, uint64_t *t,
      const enum up_layout layout, const bool shared)
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
		verdict[i] = (uint8_t)rules_one(pool, x->m[i], x->idx[i], now_tick, layout, shared);
	stamp(w, UP_ST_RULES, timed, t);
	for (unsigned int i = 0; i < n; i++)
		count_one(pool, x->m[i], x->idx[i], verdict[i], layout, shared);
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

static inline void count_stage(struct up_worker *w, bool timed, enum up_stage s, unsigned int n)
{
	if (timed)
		w->st_pkts[s] += n;
}

/*
 * Without prefetching, each burst goes through every stage before the next
 * one. With it, three bursts are in flight: burst j has its buckets
 * prefetched while burst j-1 finishes its lookups (and prefetches its
 * sessions) and burst j-2 is matched, counted and decapsulated. Every
 * memory access then has a burst's worth of work to hide behind.
 */
static inline __attribute__((always_inline)) void
worker_loop(struct up_worker *w, const bool from_ring, const enum up_layout layout,
	    const bool shared, const enum up_table_kind tk, const bool prefetch)
{
	struct burst bs[3];
	unsigned int batch = w->e->c->batch, cur = 0;
	uint64_t iter = 0;

	memset(bs, 0, sizeof(bs));
	for (;; iter++) {
		bool timed = (iter & SAMPLE_MASK) == 0;
		uint64_t t = timed ? up_tsc() : 0;
		struct burst *a = &bs[cur], *b = &bs[(cur + 2) % 3], *c = &bs[(cur + 1) % 3];

		a->n = receive(w, a, batch, timed, &t, from_ring);
		w->pkts += a->n;
		if (!from_ring) {
			count_stage(w, timed, UP_ST_RX, a->n);
			count_stage(w, timed, UP_ST_PARSE, a->n);
		}
		if (!prefetch) {
			if (!a->n) {
				if (!from_ring)
					break;
				if (!__atomic_load_n(&w->e->dispatch_done, __ATOMIC_ACQUIRE)) {
					cpu_relax();
					continue;
				}
				/* the dispatcher's last enqueue happens before it sets done */
				a->n = receive(w, a, batch, false, &t, from_ring);
				w->pkts += a->n;
				if (!a->n)
					break;
			}
			lookup_finish(w, a, layout, tk, false);
			stamp(w, UP_ST_LOOKUP, timed, &t);
			count_stage(w, timed, UP_ST_LOOKUP, a->n);
			apply(w, a, timed, &t, layout, shared);
			count_stage(w, timed, UP_ST_RULES, a->n);
			count_stage(w, timed, UP_ST_COUNTERS, a->n);
			count_stage(w, timed, UP_ST_DECAP, a->n);
			continue;
		}
		if (!a->n && !b->n && !c->n) {
			if (!from_ring)
				break;
			if (__atomic_load_n(&w->e->dispatch_done, __ATOMIC_ACQUIRE)) {
				a->n = receive(w, a, batch, false, &t, from_ring);
				w->pkts += a->n;
				if (!a->n)
					break;
			} else {
				cpu_relax();
				continue;
			}
		}
		lookup_issue(w, a, tk);
		lookup_finish(w, b, layout, tk, true);
		stamp(w, UP_ST_LOOKUP, timed, &t);
		count_stage(w, timed, UP_ST_LOOKUP, b->n);
		apply(w, c, timed, &t, layout, shared);
		count_stage(w, timed, UP_ST_RULES, c->n);
		count_stage(w, timed, UP_ST_COUNTERS, c->n);
		count_stage(w, timed, UP_ST_DECAP, c->n);
		c->n = 0;
		cur = (cur + 1) % 3;
	}
}

/* one instance per combination, so that each inner loop is straight code */
#define LOOP(R, L, S, T, P)                                                            \
	static void loop_##R##L##S##T##P(struct up_worker *w)                         \
	{                                                                              \
		worker_loop(w, R, L ? UP_LAYOUT_SPLIT : UP_LAYOUT_FAT, S,                \
			    T ? UP_TABLE_RTE : UP_TABLE_OWN, P);                          \
	}
#define LOOP_P(R, L, S, T) LOOP(R, L, S, T, 0) LOOP(R, L, S, T, 1)
#define LOOP_T(R, L, S) LOOP_P(R, L, S, 0) LOOP_P(R, L, S, 1)
#define LOOP_S(R, L) LOOP_T(R, L, 0) LOOP_T(R, L, 1)
#define LOOP_L(R) LOOP_S(R, 0) LOOP_S(R, 1)
LOOP_L(0)
LOOP_L(1)

#define REF(R, L, S, T, P) [R][L][S][T][P] = loop_##R##L##S##T##P
#define REF_P(R, L, S, T) REF(R, L, S, T, 0), REF(R, L, S, T, 1)
#define REF_T(R, L, S) REF_P(R, L, S, 0), REF_P(R, L, S, 1)
#define REF_S(R, L) REF_T(R, L, 0), REF_T(R, L, 1)
#define REF_L(R) REF_S(R, 0), REF_S(R, 1)
static void (*const loops[2][2][2][2][2])(struct up_worker *) = { REF_L(0), REF_L(1) };

static void dispatcher_loop(struct up_worker *d)
{
	struct up_engine *e = d->e;
	unsigned int batch = e->c->batch, W = e->c->workers, n;
	struct up_mbuf *m[UP_MAX_BATCH], *out[UP_MAX_WORKERS][UP_MAX_BATCH];
	unsigned int cnt[UP_MAX_WORKERS];
	uint64_t bursts = 0;

	for (;;) {
		bool timed = (bursts++ & SAMPLE_MASK) == 0;
		uint64_t t = timed ? up_tsc() : 0;

		n = rx_burst(&d->rx, m, batch);
		if (!n)
			break;
		stamp(d, UP_ST_RX, timed, &t);
		parse_burst(d, m, n);
		stamp(d, UP_ST_PARSE, timed, &t);
		if (timed) {
			d->st_pkts[UP_ST_RX] += n;
			d->st_pkts[UP_ST_PARSE] += n;
		}
		memset(cnt, 0, W * sizeof(cnt[0]));
		for (unsigned int i = 0; i < n; i++)
			if (m[i]->status == GTPU_OK) {
				unsigned int wk = up_steer(m[i]->pkt.teid, W);

				out[wk][cnt[wk]++] = m[i];
			}
		for (unsigned int wk = 0; wk < W; wk++) {
			unsigned int done = 0;

			while (done < cnt[wk]) {
				done += ring_enqueue(&e->rings[wk], (void *const *)out[wk] + done,
						     cnt[wk] - done);
				if (done < cnt[wk])
					cpu_relax();
			}
		}
		d->pkts += n;
	}
	__atomic_store_n(&e->dispatch_done, 1, __ATOMIC_RELEASE);
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *thread_main(void *arg)
{
	struct up_worker *w = arg;
	struct up_perf perf;
	double c0;

	if (w->cpu >= 0)
		up_pin(w->cpu);
	struct up_engine *e = w->e;

	if (e->c->perf)
		up_perf_open(&perf);
	else
		perf.fd_llc = perf.fd_dtlb = -1;
	pthread_mutex_lock(&e->lock);
	e->ready++;
	pthread_cond_broadcast(&e->cv);
	while (!e->go)
		pthread_cond_wait(&e->cv, &e->lock);
	pthread_mutex_unlock(&e->lock);
	if (e->abort) {
		up_perf_stop(&perf, &w->llc, &w->dtlb);
		return NULL;
	}
	if (w->e->c->perf)
		up_perf_start(&perf);
	c0 = thread_cpu_s();
	w->tsc0 = up_tsc();
	if (w->dispatcher)
		dispatcher_loop(w);
	else
		w->loop(w);
	w->tsc1 = up_tsc();
	w->cpu_s = thread_cpu_s() - c0;
	if (w->e->c->perf)
		up_perf_stop(&perf, &w->llc, &w->dtlb);
	else
		w->llc = w->dtlb = UINT64_MAX;
	return NULL;
}

/* ---- setup --------------------------------------------------------------------------- */

int up_rte_prepare(uint32_t max_sessions, bool huge, char *err, size_t errlen)
{
	if (upt_rte_missing()) {
		snprintf(err, errlen, "--table rte_hash: %s", upt_rte_missing());
		return -ENOTSUP;
	}
	/* per-worker tables round up separately: room for twice the largest */
	return upt_rte_eal_init(2 * upt_rte_mem_mb(max_sessions), huge, err, errlen);
}

struct owner {
	unsigned int nw;                /* pools */
	uint32_t *of;                   /* traffic session -> pool */
	uint32_t *local;                /* traffic session -> index in its pool */
	uint32_t *count;                /* sessions per pool */
	uint32_t **gidx;                /* pool, local index -> traffic session */
};

static void owner_free(struct owner *o)
{
	if (o->gidx)
		for (unsigned int i = 0; i < o->nw; i++)
			free(o->gidx[i]);
	free(o->gidx);
	free(o->of);
	free(o->local);
	free(o->count);
}

static int owner_init(struct owner *o, const struct up_traffic *t, unsigned int nw)
{
	memset(o, 0, sizeof(*o));
	o->nw = nw;
	o->of = malloc((size_t)(t->n_sess ? t->n_sess : 1) * sizeof(uint32_t));
	o->local = malloc((size_t)(t->n_sess ? t->n_sess : 1) * sizeof(uint32_t));
	o->count = calloc(nw, sizeof(uint32_t));
	o->gidx = calloc(nw, sizeof(uint32_t *));
	if (!o->of || !o->local || !o->count || !o->gidx)
		return -1;
	for (uint32_t s = 0; s < t->n_sess; s++) {
		o->of[s] = nw == 1 ? 0 : up_steer(t->sess[s].teid, nw);
		o->local[s] = o->count[o->of[s]]++;
	}
	for (unsigned int i = 0; i < nw; i++) {
		o->gidx[i] = malloc((size_t)(o->count[i] ? o->count[i] : 1) * sizeof(uint32_t));
		if (!o->gidx[i])
			return -1;
	}
	for (uint32_t s = 0; s < t->n_sess; s++)
		o->gidx[o->of[s]][o->local[s]] = s;
	return 0;
}

/* the session a stream position sends to, and the worker that receives it when steered */
static inline uint32_t pos_teid(const struct up_traffic *t, uint32_t pos)
{
	if (!t->from_pcap)
		return __builtin_bswap32(t->spec[pos].teid_be);
	return t->sidx[pos] == UINT32_MAX ? 0 : t->sess[t->sidx[pos]].teid;
}

/*
 * Walk the packets in generation order g = 0..P-1 as the receive contexts
 * produce them: fn(g, k, pos) where k counts the packets of g's context.
 */
static void walk_expected(const struct up_traffic *t, const struct up_run_cfg *c,
			  uint64_t *pkts, uint64_t *bytes)
{
	uint64_t kw[UP_MAX_WORKERS] = { 0 };
	unsigned int W = c->workers;

	for (uint64_t g = 0; g < c->packets; g++) {
		uint32_t pos = (uint32_t)(g % t->len), s = t->sidx[pos];
		uint64_t k;

		if (c->design == UP_GLOBAL) {
			k = g / W;
		} else if (c->design == UP_STEERED) {
			k = kw[up_steer(pos_teid(t, pos), W)]++;
		} else {
			k = g;
		}
		if (s == UINT32_MAX)
			continue;
		pkts[s]++;
		bytes[s] += up_traffic_tpdu(t, k, pos);
	}
}

static int verify(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
		  const struct up_counters *got)
{
	uint64_t *ep = calloc(t->n_sess ? t->n_sess : 1, sizeof(uint64_t));
	uint64_t *eb = calloc(t->n_sess ? t->n_sess : 1, sizeof(uint64_t));

	if (!ep || !eb) {
		free(ep);
		free(eb);
		return -1;
	}
	walk_expected(t, c, ep, eb);
	r->verify_ok = true;
	r->verify_sessions = t->n_sess;
	r->verify_pkts = r->verify_bytes = 0;
	for (uint32_t s = 0; s < t->n_sess; s++) {
		r->verify_pkts += got->pkts[s];
		r->verify_bytes += got->bytes[s];
		if (r->verify_ok && (got->pkts[s] != ep[s] || got->bytes[s] != eb[s])) {
			r->verify_ok = false;
			snprintf(r->verify_msg, sizeof(r->verify_msg),
				 "session TEID 0x%08x: sent %llu packets / %llu bytes, counted %llu / %llu",
				 t->sess[s].teid, (unsigned long long)ep[s], (unsigned long long)eb[s],
				 (unsigned long long)got->pkts[s], (unsigned long long)got->bytes[s]);
		}
	}
	if (r->verify_ok)
		snprintf(r->verify_msg, sizeof(r->verify_msg),
			 "exact for %u sessions: %llu packets, %llu bytes", t->n_sess,
			 (unsigned long long)r->verify_pkts, (unsigned long long)r->verify_bytes);
	free(ep);
	free(eb);
	return 0;
}

/* ---- one run, stage by stage ----------------------------------------------------- */

#define PIN_CPUS_MAX 256         /* CPUs a run spreads its threads over, at most */

/* what a run sets up, in the order it does, and run_free() takes down */
struct run_state {
	const struct up_traffic *t;
	const struct up_run_cfg *c;
	struct up_result *r;
	char *err;
	size_t errlen;
	unsigned int npools;            /* one shared pool (global), or one per worker */
	struct owner o;
	struct up_pool *pools;
	struct upt *own;
	struct upt_rte **rte;
	uint32_t **pos_lists;           /* steered over several workers: each one's positions */
	struct up_engine e;
	pthread_t *tid;
	bool sync_init;
	int cpus[PIN_CPUS_MAX];
	int ncpu;
};

/* names each run's rte_hash tables apart */
static unsigned int run_no;

static int run_nomem(struct run_state *s)
{
	snprintf(s->err, s->errlen, "out of memory setting up %u sessions", s->t->n_sess);
	return -1;
}

/* the result's constant part, and whether the configuration can run at all */
static int run_begin(struct run_state *s, const struct up_traffic *t, const struct up_run_cfg *c,
		     struct up_result *r, char *err, size_t errlen)
{
	unsigned int W = c->workers;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->c = c;
	s->r = r;
	s->err = err;
	s->errlen = errlen;
	s->npools = c->design == UP_GLOBAL ? 1 : W;
	s->e.c = c;
	s->e.t = t;
	s->ncpu = up_cpus(s->cpus, PIN_CPUS_MAX);
	memset(r, 0, sizeof(*r));
	if (!tsc_cost)
		measure_tsc_cost();
	r->cfg = *c;
	r->tsc_hz = up_tsc_hz();
	r->sessions = t->n_sess;
	r->packets = c->packets;
	r->llc_per_pkt = r->dtlb_per_pkt = NAN;
	run_no++;
	if (!W || W > UP_MAX_WORKERS || !c->batch || c->batch > UP_MAX_BATCH || !c->packets) {
		snprintf(err, errlen, "invalid run: workers %u, batch %u, packets %llu", W, c->batch,
			 (unsigned long long)c->packets);
		return -1;
	}
	s->e.nthreads = W + (c->design == UP_SHARDED);
	r->threads = s->e.nthreads;
	r->oversubscribed = s->ncpu > 0 && s->e.nthreads > (unsigned int)s->ncpu;
	return 0;
}

/* pool i's table, empty */
static int table_setup(struct run_state *s, unsigned int i)
{
	uint32_t keys = s->o.count[i];
	size_t before;
	char name[32];

	if (s->c->table == UP_TABLE_OWN) {
		if (upt_init(&s->own[i], keys, s->c->huge))
			return run_nomem(s);
		s->r->table_bytes += s->own[i].bytes;
		return 0;
	}
	before = upt_rte_heap_bytes();
	snprintf(name, sizeof(name), "up%u-%u", run_no, i);
	s->rte[i] = upt_rte_create(name, keys);
	if (!s->rte[i]) {
		snprintf(s->err, s->errlen, "rte_hash_create(%u keys) failed%s%s", keys,
			 upt_rte_missing() ? ": " : "", upt_rte_missing() ? upt_rte_missing() : "");
		return -1;
	}
	s->r->table_bytes += upt_rte_heap_bytes() - before;
	return 0;
}

/* the session pools and their tables, empty */
static int pools_setup(struct run_state *s)
{
	if (owner_init(&s->o, s->t, s->npools))
		return run_nomem(s);
	s->pools = calloc(s->npools, sizeof(*s->pools));
	s->own = calloc(s->npools, sizeof(*s->own));
	s->rte = calloc(s->npools, sizeof(*s->rte));
	if (!s->pools || !s->own || !s->rte)
		return run_nomem(s);
	for (unsigned int i = 0; i < s->npools; i++) {
		if (up_pool_init(&s->pools[i], s->c->layout, s->o.count[i], s->c->huge))
			return run_nomem(s);
		s->r->session_bytes += s->pools[i].fat_bytes + s->pools[i].hot_bytes;
		if (table_setup(s, i))
			return -1;
	}
	return 0;
}

/* every session into its owner's pool and table; then the huge pages they got */
static int sessions_insert(struct run_state *s)
{
	const struct up_traffic *t = s->t;
	const struct up_run_cfg *c = s->c;

	for (uint32_t i = 0; i < t->n_sess; i++) {
		unsigned int p = s->o.of[i];
		uint32_t local = s->o.local[i], teid = t->sess[i].teid;
		int irc;

		up_pool_set(&s->pools[p], local, &t->sess[i], s->r->tsc_hz);
		irc = c->table == UP_TABLE_OWN ? upt_insert(&s->own[p], teid, local)
					       : upt_rte_insert(s->rte[p], teid, local);
		if (irc) {
			snprintf(s->err, s->errlen, "inserting TEID 0x%08x into the %s table failed: %s",
				 teid, up_table_names[c->table], strerror(-irc));
			return -1;
		}
	}
	for (unsigned int i = 0; i < s->npools; i++) {
		s->r->huge_kib += up_pool_huge_kib(&s->pools[i]);
		if (c->table == UP_TABLE_OWN)
			s->r->huge_kib += up_mem_huge_kib(s->own[i].b);
	}
	if (c->table == UP_TABLE_RTE)
		s->r->huge_kib += upt_rte_huge_kib();
	s->r->proc_huge_kib = up_proc_huge_kib();
	return 0;
}

/* steered over several workers: each worker's stream positions, and its share of the packets */
static int steer_positions(struct run_state *s)
{
	const struct up_traffic *t = s->t;
	unsigned int W = s->c->workers;
	uint64_t full = s->c->packets / t->len, part = s->c->packets % t->len;
	uint32_t *fill = calloc(W, sizeof(uint32_t));
	struct up_worker *w = s->e.w;

	s->pos_lists = calloc(W, sizeof(*s->pos_lists));
	if (!fill || !s->pos_lists)
		goto nomem;
	for (uint32_t pos = 0; pos < t->len; pos++)
		fill[up_steer(pos_teid(t, pos), W)]++;
	for (unsigned int i = 0; i < W; i++) {
		s->pos_lists[i] = malloc((size_t)(fill[i] ? fill[i] : 1) * sizeof(uint32_t));
		if (!s->pos_lists[i])
			goto nomem;
		w[i].rx.len = fill[i];
		w[i].rx.quota = full * fill[i];
		fill[i] = 0;
	}
	for (uint32_t pos = 0; pos < t->len; pos++) {
		unsigned int wk = up_steer(pos_teid(t, pos), W);

		s->pos_lists[wk][fill[wk]++] = pos;
		if (pos < part)
			w[wk].rx.quota++;
	}
	free(fill);
	return 0;
nomem:
	free(fill);
	return run_nomem(s);
}

/* a receive context: the dispatcher's, or that of worker wi when it receives itself */
static int rx_setup(struct run_state *s, struct up_worker *w, unsigned int wi, bool disp)
{
	const struct up_run_cfg *c = s->c;
	const struct up_traffic *t = s->t;
	unsigned int W = c->workers;
	uint32_t nslots = RX_SLOTS;

	if (disp)
		while (nslots < 2 * (W * QRING + 4 * UP_MAX_BATCH))
			nslots *= 2;
	if (rx_init(&w->rx, t, nslots))
		return -1;
	if (c->design == UP_GLOBAL) {
		w->rx.len = t->len;
		w->rx.idx = wi % t->len;
		w->rx.stride = W;
		w->rx.quota = c->packets / W + (wi < c->packets % W);
	} else if (c->design == UP_STEERED && W > 1) {
		w->rx.pos_list = s->pos_lists[wi];
		w->rx.stride = 1;
		if (!w->rx.len)
			w->rx.quota = 0;
	} else {
		w->rx.len = t->len;
		w->rx.stride = 1;
		w->rx.quota = c->packets;
	}
	return 0;
}

/* thread i: the dispatcher (sharded: thread 0) or a worker, with its pool, table and input */
static int worker_setup(struct run_state *s, unsigned int i)
{
	const struct up_run_cfg *c = s->c;
	struct up_worker *w = &s->e.w[i];
	bool disp = c->design == UP_SHARDED && i == 0;
	unsigned int wi = c->design == UP_SHARDED ? i - 1 : i; /* worker number */
	unsigned int p = disp || c->design == UP_GLOBAL ? 0 : wi;

	w->e = &s->e;
	w->id = i;
	w->cpu = s->ncpu > 0 ? s->cpus[i % (unsigned int)s->ncpu] : -1;
	w->dispatcher = disp;
	if (!disp) {
		w->pool = &s->pools[p];
		w->own = &s->own[p];
		w->rte = s->rte[p];
		w->loop = loops[c->design == UP_SHARDED][c->layout == UP_LAYOUT_SPLIT]
			       [c->design == UP_GLOBAL][c->table == UP_TABLE_RTE][c->prefetch];
	}
	if (c->design == UP_SHARDED && !disp) {
		w->in = &s->e.rings[wi];
		return 0;
	}
	return rx_setup(s, w, wi, disp);
}

/* the threads, their rings (sharded) and their receive contexts */
static int workers_setup(struct run_state *s)
{
	const struct up_run_cfg *c = s->c;
	struct up_engine *e = &s->e;

	e->w = calloc(e->nthreads, sizeof(*e->w));
	s->tid = calloc(e->nthreads, sizeof(*s->tid));
	if (!e->w || !s->tid)
		return run_nomem(s);
	if (c->design == UP_SHARDED) {
		e->rings = up_mem_alloc((size_t)c->workers * sizeof(*e->rings), false);
		if (!e->rings)
			return run_nomem(s);
		memset(e->rings, 0, (size_t)c->workers * sizeof(*e->rings));
	}
	if (c->design == UP_STEERED && c->workers > 1 && steer_positions(s))
		return -1;
	for (unsigned int i = 0; i < e->nthreads; i++)
		if (worker_setup(s, i))
			return run_nomem(s);
	return 0;
}

/* the run itself: every thread started, released together, joined */
static int threads_run(struct run_state *s)
{
	struct up_engine *e = &s->e;
	unsigned int started = 0;
	double wall0, wall1;

	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cv, NULL);
	s->sync_init = true;
	for (; started < e->nthreads; started++)
		if (pthread_create(&s->tid[started], NULL, thread_main, &e->w[started])) {
			snprintf(s->err, s->errlen, "cannot start thread %u of %u", started + 1,
				 e->nthreads);
			break;
		}
	pthread_mutex_lock(&e->lock);
	while (e->ready < started)
		pthread_cond_wait(&e->cv, &e->lock);
	e->abort = started < e->nthreads;
	e->go = true;
	/* before the release: the workers may finish before this thread runs again */
	wall0 = up_now_s();
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->lock);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(s->tid[i], NULL);
	wall1 = up_now_s();
	s->r->wall_s = wall1 - wall0;
	return e->abort ? -1 : 0;
}

/* the threads' tallies into the run's figures */
static void results_sum(const struct run_state *s)
{
	const struct up_run_cfg *c = s->c;
	const struct up_engine *e = &s->e;
	struct up_result *r = s->r;
	uint64_t cyc = 0, st[UP_NSTAGES] = { 0 }, stp[UP_NSTAGES] = { 0 }, llc = 0, dtlb = 0;
	double elapsed_s = 0, cpu_s = 0, stsum = 0, hz = r->tsc_hz;
	bool hw = c->perf;

	for (unsigned int i = 0; i < e->nthreads; i++) {
		const struct up_worker *w = &e->w[i];

		cyc += w->tsc1 - w->tsc0;
		elapsed_s += (double)(w->tsc1 - w->tsc0) / hz;
		cpu_s += w->cpu_s;
		r->malformed += w->malformed;
		r->not_gtpu += w->not_gtpu;
		r->no_session += w->verdicts[V_NO_SESSION];
		r->no_pdr += w->verdicts[V_NO_PDR];
		r->far_drop += w->verdicts[V_FAR_DROP];
		r->qer_drop += w->verdicts[V_QER_DROP];
		r->forwarded += w->verdicts[V_FWD];
		for (int k = 0; k < UP_NSTAGES; k++) {
			st[k] += w->st[k];
			stp[k] += w->st_pkts[k];
		}
		if (w->llc == UINT64_MAX || w->dtlb == UINT64_MAX) {
			hw = false;
		} else {
			llc += w->llc;
			dtlb += w->dtlb;
		}
	}
	r->mpps = (double)c->packets / r->wall_s / 1e6;
	r->cycles_per_pkt = (double)cyc / (double)c->packets;
	for (int k = 0; k < UP_NSTAGES; k++) {
		r->stage_cycles[k] = stp[k] ? (double)st[k] / (double)stp[k] : 0;
		stsum += r->stage_cycles[k];
	}
	r->other_cycles = r->cycles_per_pkt - stsum;
	r->identity_ratio = r->mpps * 1e6 * r->cycles_per_pkt / ((double)e->nthreads * hz);
	r->cpu_share = elapsed_s > 0 ? cpu_s / elapsed_s : 0;
	r->cpu_cycles_per_pkt = cpu_s * hz / (double)c->packets;
	if (hw) {
		r->llc_per_pkt = (double)llc / (double)c->packets;
		r->dtlb_per_pkt = (double)dtlb / (double)c->packets;
	}
}

/* per-session counters by the traffic's session index (into out), and --verify's check */
static int counters_collect(struct run_state *s, struct up_counters *out)
{
	const struct up_traffic *t = s->t;
	size_t n = t->n_sess ? t->n_sess : 1;
	struct up_counters mine = { 0 }, *g = out ? out : &mine;
	int rc = 0;

	if (!s->c->verify && !out)
		return 0;
	if (!out) {
		mine.pkts = calloc(n, sizeof(uint64_t));
		mine.bytes = calloc(n, sizeof(uint64_t));
		mine.drops = calloc(n, sizeof(uint64_t));
		if (!mine.pkts || !mine.bytes || !mine.drops) {
			rc = run_nomem(s);
			goto out;
		}
	}
	for (unsigned int p = 0; p < s->npools; p++)
		for (uint32_t l = 0; l < s->o.count[p]; l++) {
			uint32_t i = s->o.gidx[p][l];

			up_pool_counters(&s->pools[p], l, &g->pkts[i], &g->bytes[i], &g->drops[i]);
		}
	if (s->c->verify && verify(t, s->c, s->r, g))
		rc = run_nomem(s);
out:
	free(mine.pkts);
	free(mine.bytes);
	free(mine.drops);
	return rc;
}

static void run_free(struct run_state *s)
{
	struct up_engine *e = &s->e;
	unsigned int W = s->c->workers;

	if (s->sync_init) {
		pthread_mutex_destroy(&e->lock);
		pthread_cond_destroy(&e->cv);
	}
	if (e->w)
		for (unsigned int i = 0; i < e->nthreads; i++)
			rx_free(&e->w[i].rx);
	if (e->rings)
		up_mem_free(e->rings, (size_t)W * sizeof(*e->rings));
	if (s->pos_lists)
		for (unsigned int i = 0; i < W; i++)
			free(s->pos_lists[i]);
	free(s->pos_lists);
	free(e->w);
	free(s->tid);
	for (unsigned int i = 0; s->pools && i < s->npools; i++)
		up_pool_free(&s->pools[i]);
	for (unsigned int i = 0; s->own && i < s->npools; i++)
		if (s->own[i].b)
			upt_free(&s->own[i]);
	for (unsigned int i = 0; s->rte && i < s->npools; i++)
		upt_rte_free(s->rte[i]);
	free(s->pools);
	free(s->own);
	free(s->rte);
	owner_free(&s->o);
}

int up_run(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
	   struct up_counters *out, char *err, size_t errlen)
{
	struct run_state s;
	int rc;

	if (run_begin(&s, t, c, r, err, errlen))
		return -1;
	rc = pools_setup(&s);
	if (!rc)
		rc = sessions_insert(&s);
	if (!rc)
		rc = workers_setup(&s);
	if (!rc)
		rc = threads_run(&s);
	if (!rc) {
		results_sum(&s);
		rc = counters_collect(&s, out);
	}
	run_free(&s);
	return rc;
}

/* ---- lookups alone ------------------------------------------------------------------- */

int up_lookup_bench(const struct up_traffic *t, enum up_table_kind kind, unsigned int batch,
		    bool huge, uint64_t lookups, struct up_lookup_result *r, char *err,
		    size_t errlen)
{
	static unsigned int bench_no;
	struct upt own = { 0 };
	struct upt_rte *rte = NULL;
	uint32_t *keys, vals[UP_MAX_BATCH];
	uint64_t pos = 0, t0, t1, sum = 0, misses = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->table = kind;
	r->batch = batch;
	r->sessions = t->n_sess;
	r->lookups = lookups;
	r->tsc_hz = up_tsc_hz();
	if (!batch || batch > UP_MAX_BATCH || t->from_pcap) {
		snprintf(err, errlen, "invalid lookup run");
		return -1;
	}
	keys = malloc((size_t)t->len * sizeof(*keys));
	if (!keys) {
		snprintf(err, errlen, "out of memory for %u keys", t->len);
		return -1;
	}
	for (uint32_t i = 0; i < t->len; i++)
		keys[i] = __builtin_bswap32(t->spec[i].teid_be);
	if (kind == UP_TABLE_OWN) {
		if (upt_init(&own, t->n_sess, huge)) {
			snprintf(err, errlen, "out of memory for the table");
			goto out;
		}
		r->table_bytes = own.bytes;
	} else {
		char name[32];
		size_t before = upt_rte_heap_bytes();

		snprintf(name, sizeof(name), "uplk%u", ++bench_no);
		rte = upt_rte_create(name, t->n_sess);
		if (!rte) {
			snprintf(err, errlen, "rte_hash_create(%u keys) failed", t->n_sess);
			goto out;
		}
		r->table_bytes = upt_rte_heap_bytes() - before;
	}
	for (uint32_t s = 0; s < t->n_sess; s++) {
		int irc = kind == UP_TABLE_OWN ? upt_insert(&own, t->sess[s].teid, s)
					       : upt_rte_insert(rte, t->sess[s].teid, s);

		if (irc) {
			snprintf(err, errlen, "insert failed: %s", strerror(-irc));
			goto out;
		}
	}
	r->huge_kib = kind == UP_TABLE_OWN ? up_mem_huge_kib(own.b) : upt_rte_huge_kib();
	t0 = up_tsc();
	for (uint64_t done = 0; done < lookups;) {
		unsigned int n = batch;

		if (lookups - done < n)
			n = (unsigned int)(lookups - done);
		if (pos + n > t->len)
			pos = 0;
		if (kind == UP_TABLE_OWN) {
			if (n > 1)
				upt_lookup_bulk(&own, keys + pos, n, vals);
			else
				vals[0] = upt_lookup(&own, keys[pos]);
		} else {
			if (n > 1)
				upt_rte_lookup_bulk(rte, keys + pos, n, vals);
			else
				vals[0] = upt_rte_lookup(rte, keys[pos]);
		}
		for (unsigned int i = 0; i < n; i++) {
			misses += vals[i] == UINT32_MAX;
			sum += vals[i];
		}
		pos += n;
		done += n;
	}
	t1 = up_tsc();
	r->misses = misses;
	r->cycles_per_lookup = (double)(t1 - t0) / (double)lookups;
	if (sum == 42) /* keep the lookups from being optimised away */
		fputc('\0', stderr);
	rc = 0;
out:
	if (own.b)
		upt_free(&own);
	upt_rte_free(rte);
	free(keys);
	return rc;
}
