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
#include "inline.h"
#include "path.h"
#include "table.h"
#include "table_rte.h"

const char *const up_design_names[] = { "global", "sharded", "steered", NULL };
const char *const up_table_names[] = { "own", "rte_hash", "slot", NULL };
const char *const up_layout_names[] = { "fat", "split", "inline", NULL };
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
	uint16_t frame_len;     /* the template's: a cut frame is restored on the slot's next use */
	uint8_t gtp_flags;      /* the template's first GTP-U octet, likewise */
	uint8_t pad;
	struct gtpu_pkt pkt;
};

struct up_rx {
	const struct up_traffic *t;
	const struct up_spec *spec; /* generated: the stream with the run's kind of TEIDs */
	const uint32_t *pos_list; /* steered: this worker's stream positions; NULL: all */
	uint32_t len;           /* positions in one cycle */
	uint32_t idx, stride;
	uint64_t k, quota;
	uint8_t *slots;         /* generated traffic: RX_SLOTS frames */
	uint32_t nslots;
	struct up_mbuf *desc;
};

static int rx_init(struct up_rx *rx, const struct up_traffic *t, enum up_teids teids, uint32_t nslots)
{
	rx->t = t;
	rx->spec = teids == UP_TEIDS_SLOT ? t->slot_spec : t->spec;
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
		d->len = d->frame_len = tp->len;
		d->teid_off = tp->teid_off;
		d->ue_off = tp->ue_off;
		d->gtp_flags = tp->frame[tp->teid_off - 4];
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

/* the next stream position of this context */
static inline void rx_advance(uint32_t *idx, uint32_t stride, uint32_t len)
{
	uint32_t i = *idx + stride;

	while (i >= len)
		i -= len;
	*idx = i;
}

/* replayed frames: the descriptor points at the capture's frame */
static inline void rx_replayed(struct up_rx *rx, struct up_mbuf **m, unsigned int n)
{
	const struct up_traffic *t = rx->t;
	const uint32_t *pl = rx->pos_list;
	uint32_t idx = rx->idx, len = rx->len, stride = rx->stride, mask = rx->nslots - 1;
	uint64_t k = rx->k;

	for (unsigned int j = 0; j < n; j++, k++) {
		uint32_t pos = pl ? pl[idx] : idx;
		struct up_mbuf *d = &rx->desc[k & mask];

		d->data = t->fbuf + t->foff[pos];
		d->len = t->flen[pos];
		m[j] = d;
		rx_advance(&idx, stride, len);
	}
	rx->k = k;
	rx->idx = idx;
}

/*
 * Generated frames: the position's TEID and UE address written into the
 * slot's template. With bad positions, each frame is also cut or has its
 * GTP-U version changed, or is restored, as its position says; without,
 * those two writes are not in the loop at all.
 */
static inline __attribute__((always_inline)) void
rx_generated(struct up_rx *rx, struct up_mbuf **m, unsigned int n, const bool damaged)
{
	const uint8_t *bad = rx->t->bad;
	const uint32_t *pl = rx->pos_list;
	const struct up_spec *spec = rx->spec;
	uint32_t idx = rx->idx, len = rx->len, stride = rx->stride, mask = rx->nslots - 1;
	uint64_t k = rx->k;

	/* locals: the frame writes below may alias anything, so rx's fields would be reloaded */
	for (unsigned int j = 0; j < n; j++, k++) {
		uint32_t pos = pl ? pl[idx] : idx;
		struct up_mbuf *d = &rx->desc[k & mask];
		uint8_t *f = (uint8_t *)(uintptr_t)d->data;
		const uint8_t *ahead = rx->desc[(k + UP_MAX_BATCH) & mask].data;
		struct up_spec sp = spec[pos];

		memcpy(f + d->teid_off, &sp.teid_be, 4);
		memcpy(f + d->ue_off, &sp.ue_be, 4);
		if (damaged) {
			uint8_t kind = bad[pos];

			d->len = kind == UP_BAD_CUT ? UP_BAD_CUT_LEN : d->frame_len;
			f[d->teid_off - 4] = (uint8_t)(d->gtp_flags ^
						       (kind == UP_BAD_VERSION ? UP_BAD_VERSION_XOR : 0));
		}
		m[j] = d;
		/* the NIC has written these by now: bring the headers of a later burst in */
		up_prefetch_w(ahead);
		up_prefetch_w(ahead + 64);
		rx_advance(&idx, stride, len);
	}
	rx->k = k;
	rx->idx = idx;
}

/* the next n packets of this context, written into its ring like a NIC would */
static inline unsigned int rx_burst(struct up_rx *rx, struct up_mbuf **m, unsigned int n)
{
	if (rx->quota - rx->k < n)
		n = (unsigned int)(rx->quota - rx->k);
	if (rx->t->from_pcap)
		rx_replayed(rx, m, n);
	else if (rx->t->bad)
		rx_generated(rx, m, n, true);
	else
		rx_generated(rx, m, n, false);
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
	/* slot table: the TEID's slot bits, and the session indexes this pool holds */
	uint32_t slot_mask, slot_base, slot_count;
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
	enum up_teids teids;
	struct up_slot_split split; /* slot-encoded TEIDs: which worker owns a slot */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned int ready;
	bool go, abort;
	unsigned int nthreads;
	struct up_worker *w;
	struct up_ring *rings;
	int dispatch_done;
};

/* the worker that owns a TEID's session: by the steering hash, or by the range of its slot */
static inline unsigned int teid_owner(const struct up_traffic *t, enum up_teids teids,
				      const struct up_slot_split *split, unsigned int workers,
				      uint32_t teid)
{
	if (teids == UP_TEIDS_SLOT)
		return up_slot_owner(split, up_teid_index(t->plan.slot_mask, teid));
	return up_steer(teid, workers);
}

static inline unsigned int engine_owner(const struct up_engine *e, uint32_t teid)
{
	return teid_owner(e->t, e->teids, &e->split, e->c->workers, teid);
}

/* in this order: apply() computes a verdict by adding to V_NO_PDR */
enum verdict { V_NONE, V_NO_SESSION, V_NO_PDR, V_FAR_DROP, V_QER_DROP, V_FWD };
_Static_assert(UP_MAX_BATCH < 256, "apply() tallies verdicts in octets");

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

const char *up_cfg_refused(const struct up_run_cfg *c)
{
	if (c->table == UP_TABLE_SLOT && c->layout != UP_LAYOUT_SPLIT)
		return "--table slot: the TEID names a hot line of the split layout (not --layout fat or inline)";
	if (c->layout == UP_LAYOUT_INLINE && c->table != UP_TABLE_OWN)
		return "--layout inline: the hot lines are the buckets of the project's own table (--table own)";
	return NULL;
}

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

static inline void count_stage(struct up_worker *w, bool timed, enum up_stage s, unsigned int n)
{
	if (timed)
		w->st_pkts[s] += n;
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
				unsigned int wk = engine_owner(e, m[i]->pkt.teid);

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

/*
 * Each session's pool and its index there. Slot-encoded sessions go to
 * their slot's owner in slot order, so that a pool holds the contiguous
 * range its worker owns, at index slot - 1 - base.
 */
static int owner_init(struct owner *o, const struct up_engine *e, unsigned int nw)
{
	const struct up_traffic *t = e->t;

	memset(o, 0, sizeof(*o));
	o->nw = nw;
	o->of = malloc((size_t)(t->n_sess ? t->n_sess : 1) * sizeof(uint32_t));
	o->local = malloc((size_t)(t->n_sess ? t->n_sess : 1) * sizeof(uint32_t));
	o->count = calloc(nw, sizeof(uint32_t));
	o->gidx = calloc(nw, sizeof(uint32_t *));
	if (!o->of || !o->local || !o->count || !o->gidx)
		return -1;
	for (uint32_t s = 0; s < t->n_sess; s++) {
		o->of[s] = nw == 1 ? 0 : engine_owner(e, up_traffic_teid(t, e->teids, s));
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

void up_walk_init(struct up_walk *wk, const struct up_traffic *t, const struct up_run_cfg *c)
{
	memset(wk, 0, sizeof(*wk));
	wk->t = t;
	wk->c = c;
	wk->split = up_slot_split_of(t->n_sess, c->workers);
}

void up_walk_next(struct up_walk *wk, uint32_t *pos, uint64_t *k)
{
	const struct up_traffic *t = wk->t;
	const struct up_run_cfg *c = wk->c;
	uint64_t g = wk->g++;

	*pos = (uint32_t)(g % t->len);
	if (c->design == UP_GLOBAL) {
		*k = g / c->workers;
	} else if (c->design == UP_STEERED) {
		uint32_t teid = up_traffic_pos_teid(t, up_run_teids(c), *pos);

		*k = wk->kw[teid_owner(t, up_run_teids(c), &wk->split, c->workers, teid)]++;
	} else {
		*k = g;
	}
}

/* what every session should have counted, and the bad packets the run should have dropped */
struct expected {
	uint64_t *pkts, *bytes;
	uint64_t no_session, malformed;
};

static void walk_expected(const struct up_traffic *t, const struct up_run_cfg *c,
			  struct expected *x)
{
	struct up_walk wk;

	up_walk_init(&wk, t, c);
	for (uint64_t g = 0; g < c->packets; g++) {
		uint32_t pos, s;
		uint64_t k;

		up_walk_next(&wk, &pos, &k);
		s = t->sidx[pos];
		if (t->bad && t->bad[pos]) {
			x->malformed += up_bad_malformed(t->bad[pos]);
			x->no_session += !up_bad_malformed(t->bad[pos]);
		}
		if (s == UINT32_MAX)
			continue;
		x->pkts[s]++;
		x->bytes[s] += up_traffic_tpdu(t, k, pos);
	}
}

/* generated traffic: the drops by kind are known too (a capture's are whatever it holds) */
static void verify_drops(const struct up_traffic *t, struct up_result *r, const struct expected *x)
{
	size_t used = strlen(r->verify_msg);

	if (t->from_pcap || !r->verify_ok)
		return;
	if (r->no_session != x->no_session || r->malformed != x->malformed) {
		r->verify_ok = false;
		snprintf(r->verify_msg, sizeof(r->verify_msg),
			 "sent %llu packets with forged TEIDs and %llu malformed; dropped %llu as no session's and %llu as malformed",
			 (unsigned long long)x->no_session, (unsigned long long)x->malformed,
			 (unsigned long long)r->no_session, (unsigned long long)r->malformed);
		return;
	}
	if (t->bad)
		snprintf(r->verify_msg + used, sizeof(r->verify_msg) - used,
			 "; dropped as sent: %llu forged TEIDs (no session), %llu malformed",
			 (unsigned long long)x->no_session, (unsigned long long)x->malformed);
}

static int verify(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
		  const struct up_counters *got)
{
	struct expected x = { calloc(t->n_sess ? t->n_sess : 1, sizeof(uint64_t)),
			      calloc(t->n_sess ? t->n_sess : 1, sizeof(uint64_t)), 0, 0 };

	if (!x.pkts || !x.bytes) {
		free(x.pkts);
		free(x.bytes);
		return -1;
	}
	walk_expected(t, c, &x);
	r->verify_ok = true;
	r->verify_sessions = t->n_sess;
	r->verify_pkts = r->verify_bytes = 0;
	for (uint32_t s = 0; s < t->n_sess; s++) {
		r->verify_pkts += got->pkts[s];
		r->verify_bytes += got->bytes[s];
		if (r->verify_ok && (got->pkts[s] != x.pkts[s] || got->bytes[s] != x.bytes[s])) {
			r->verify_ok = false;
			snprintf(r->verify_msg, sizeof(r->verify_msg),
				 "session TEID 0x%08x: sent %llu packets / %llu bytes, counted %llu / %llu",
				 up_traffic_teid(t, up_run_teids(c), s), (unsigned long long)x.pkts[s],
				 (unsigned long long)x.bytes[s], (unsigned long long)got->pkts[s],
				 (unsigned long long)got->bytes[s]);
		}
	}
	if (r->verify_ok)
		snprintf(r->verify_msg, sizeof(r->verify_msg),
			 "exact for %u sessions: %llu packets, %llu bytes", t->n_sess,
			 (unsigned long long)r->verify_pkts, (unsigned long long)r->verify_bytes);
	verify_drops(t, r, &x);
	free(x.pkts);
	free(x.bytes);
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
	if (up_cfg_refused(c)) {
		snprintf(err, errlen, "%s", up_cfg_refused(c));
		return -1;
	}
	s->e.teids = up_run_teids(c);
	if (s->e.teids == UP_TEIDS_SLOT && t->from_pcap) {
		snprintf(err, errlen, "--table slot: a capture's TEIDs were not given out by this UPF");
		return -1;
	}
	s->e.split = up_slot_split_of(t->n_sess, W);
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
	if (owner_init(&s->o, &s->e, s->npools))
		return run_nomem(s);
	s->pools = calloc(s->npools, sizeof(*s->pools));
	s->own = calloc(s->npools, sizeof(*s->own));
	s->rte = calloc(s->npools, sizeof(*s->rte));
	if (!s->pools || !s->own || !s->rte)
		return run_nomem(s);
	for (unsigned int i = 0; i < s->npools; i++) {
		if (up_pool_init(&s->pools[i], s->c->layout, s->o.count[i], s->c->huge))
			return run_nomem(s);
		/* the inline table's entries are the hot parts; the slot design has no table */
		if (s->c->layout == UP_LAYOUT_INLINE) {
			s->r->table_bytes += s->pools[i].ent_bytes;
			continue;
		}
		s->r->session_bytes += s->pools[i].fat_bytes + s->pools[i].hot_bytes;
		if (s->c->table != UP_TABLE_SLOT && table_setup(s, i))
			return -1;
	}
	return 0;
}

/* every session into its owner's pool and table; then the huge pages they got */
static int sessions_insert(struct run_state *s)
{
	const struct up_traffic *t = s->t;
	const struct up_run_cfg *c = s->c;
	bool own = c->table == UP_TABLE_OWN && c->layout != UP_LAYOUT_INLINE;

	for (uint32_t i = 0; i < t->n_sess; i++) {
		unsigned int p = s->o.of[i];
		struct up_sess_def d = t->sess[i];
		uint32_t local = s->o.local[i];
		int irc;

		d.teid = up_traffic_teid(t, s->e.teids, i);
		irc = up_pool_set(&s->pools[p], local, &d, s->r->tsc_hz);
		if (!irc && own)
			irc = upt_insert(&s->own[p], d.teid, local);
		else if (!irc && c->table == UP_TABLE_RTE)
			irc = upt_rte_insert(s->rte[p], d.teid, local);
		if (irc) {
			snprintf(s->err, s->errlen, "inserting TEID 0x%08x into the %s table failed: %s",
				 d.teid, c->layout == UP_LAYOUT_INLINE ? "inline" : up_table_names[c->table],
				 strerror(-irc));
			return -1;
		}
	}
	for (unsigned int i = 0; i < s->npools; i++) {
		s->r->huge_kib += up_pool_huge_kib(&s->pools[i]);
		if (own)
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
		fill[engine_owner(&s->e, up_traffic_pos_teid(t, s->e.teids, pos))]++;
	for (unsigned int i = 0; i < W; i++) {
		s->pos_lists[i] = malloc((size_t)(fill[i] ? fill[i] : 1) * sizeof(uint32_t));
		if (!s->pos_lists[i])
			goto nomem;
		w[i].rx.len = fill[i];
		w[i].rx.quota = full * fill[i];
		fill[i] = 0;
	}
	for (uint32_t pos = 0; pos < t->len; pos++) {
		unsigned int wk = engine_owner(&s->e, up_traffic_pos_teid(t, s->e.teids, pos));

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
	if (rx_init(&w->rx, t, s->e.teids, nslots))
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
		w->loop = loops[c->design == UP_SHARDED][path_of(c)][c->design == UP_GLOBAL][c->prefetch];
		/* the pool holds the slots of a contiguous range of sessions, from its first */
		w->slot_mask = s->t->plan.slot_mask;
		w->slot_count = s->o.count[p];
		w->slot_base = w->slot_count ? s->o.gidx[p][0] : 0;
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
