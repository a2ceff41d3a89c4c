// SPDX-License-Identifier: GPL-2.0-only
/*
 * Setting a run up and taking it down: which pool each session goes to,
 * the pools and their tables, the sessions in them, and the threads with
 * their rings, receive contexts and loops (the lookup method's, lookup.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "lookup.h"
#include "path_ring.h"
#include "path_run.h"
#include "path_rx.h"

int up_rte_prepare(uint32_t max_sessions, bool huge, char *err, size_t errlen)
{
	if (upt_rte_missing()) {
		snprintf(err, errlen, "--table rte_hash: %s", upt_rte_missing());
		return -ENOTSUP;
	}
	/* per-worker tables round up separately: room for twice the largest */
	return upt_rte_eal_init(2 * upt_rte_mem_mb(max_sessions), huge, err, errlen);
}

int run_nomem(struct run_state *s)
{
	snprintf(s->err, s->errlen, "out of memory setting up %u sessions", s->t->n_sess);
	return -1;
}

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
	snprintf(name, sizeof(name), "up%u-%u", s->run_no, i);
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
int pools_setup(struct run_state *s)
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
int sessions_insert(struct run_state *s)
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
		w->loop = up_lookup_loop(c);
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
int workers_setup(struct run_state *s)
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

void run_free(struct run_state *s)
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
