// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collapse detector at work: each sample into its flow (by cookie, or by
 * 4-tuple until it has one), a collapse of BBR's estimate given its cause and
 * impact, and throttles and stalls summed for the host and for each peer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/cause.h"
#include "bbrtrace/culprit.h"
#include "demand.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/flowtab.h"
#include "bbrtrace/peers.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/stall.h"
#include "bbrtrace/sample.h"
#include "cli.h"
#include "common.h"

/* every field: one left as the caller's stack had it is a rule nobody chose */
void bt_detect_cfg_default(struct bt_detect_cfg *cfg)
{
	*cfg = (struct bt_detect_cfg){
		.collapse_ratio = BT_COLLAPSE_RATIO_DEFAULT,
		.delack_ratio = BT_DELACK_RATIO,
		.delack_floor_us = BT_DELACK_FLOOR_US,
		.agree_ratio = BT_AGREE_RATIO,
		.max_flows = BT_DETECT_FLOWS,
	};
}

/* a flow's state, what every ACK reads and writes first: at 10,000 flows each
 * cache line an ACK touches is a miss */
struct flow {
	uint64_t key;
	uint64_t last_t_ns;
	uint64_t lt_bw_bps;
	uint64_t cookie;
	uint64_t last_est_bps;       /* the estimate after its last sample (max-bw or lt_bw) */
	uint64_t last_allowed_bps;   /* the pacing it allowed (allowed_bps) */
	struct bt_peer *peer;        /* its peer's harm (NULL: the host's only) */
	/* a throttle in progress: since when, against which demand, and the pacing
	 * that ends it (the demand x BT_THROTTLE_HEADROOM for an app-limited flow; a
	 * bulk flow's, the estimate it had, back) */
	uint64_t throttled_since_ns, throttle_demand_bps, throttle_end_bps;
	bool lt_use_bw;
	/* the throttle is a policer's: it ends when BBR leaves its long-term rate */
	bool throttle_lt;
	bool throttle_app; /* it began on an app-limited flow */
	uint8_t throttle_cause; /* the cause of the collapse that began it */
	struct bt_demand demand;     /* bytes ACKed over the last window */
	struct bt_culprits cul;      /* the samples behind the filter's values */
	struct bt_stall_state stall; /* the sender's stall in progress (bbrtrace/stall.h) */
	/* read at a collapse, or at the end */
	uint64_t delack_count;
	uint64_t collapses[BT_NCAUSES];
	struct bt_flow_ends ends;    /* its addresses and ports (its first sample's) */
};

struct vec {
	uint64_t *v;
	size_t n, cap;
};

/* what medians are kept of: bt_detect_stats' delack, delack_thr, rate, rate_thr */
enum { MED_DELACK, MED_DELACK_THR, MED_RATE, MED_RATE_THR, MED_N };

/* the values whose medians the verdict gives, one vector each */
struct medians {
	struct vec rcv, snd, bw_prev, bw, delivered;
};

struct bt_detect {
	struct bt_detect_cfg cfg;
	struct bt_flowtab flows;
	struct bt_flowtab refused; /* keys of flows refused while open: they stay untracked */
	struct bt_peers peers;     /* harm by peer, and over the rolling window */
	struct bt_detect_stats st;
	uint64_t best_delack_count;
	bool stall_pending;   /* a stall the last event ended, for bt_detect_take_stall() */
	struct bt_stall stall;
	struct medians med[MED_N];
};

struct bt_detect *bt_detect_new(const struct bt_detect_cfg *cfg)
{
	struct bt_detect *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (cfg)
		d->cfg = *cfg;
	else
		bt_detect_cfg_default(&d->cfg);
	if (!d->cfg.max_flows)
		d->cfg.max_flows = BT_DETECT_FLOWS;
	bt_flowtab_init(&d->flows, d->cfg.max_flows);
	bt_flowtab_init(&d->refused, d->cfg.max_flows);
	bt_peers_init(&d->peers, d->cfg.max_flows);
	return d;
}

static void flow_free(void *p, void *ctx)
{
	struct flow *f = p;

	(void)ctx;
	bt_culprits_free(&f->cul);
	bt_demand_free(&f->demand);
	free(f);
}

static void vec_free(struct vec *v)
{
	free(v->v);
}

/* a failed allocation only thins the medians; detection goes on */
static void vec_push(struct vec *v, uint64_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		uint64_t *p = realloc(v->v, cap * sizeof(*p));

		if (!p)
			return;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the lower median; 0 for none */
static uint64_t vec_median(const struct vec *v)
{
	uint64_t *tmp, m;

	if (!v->n)
		return 0;
	tmp = malloc(v->n * sizeof(*tmp));
	if (!tmp)
		return v->v[v->n / 2];
	memcpy(tmp, v->v, v->n * sizeof(*tmp));
	qsort(tmp, v->n, sizeof(*tmp), cmp_u64);
	m = tmp[(v->n - 1) / 2];
	free(tmp);
	return m;
}

static void med_free(struct medians *m)
{
	vec_free(&m->rcv);
	vec_free(&m->snd);
	vec_free(&m->bw_prev);
	vec_free(&m->bw);
	vec_free(&m->delivered);
}

/* the collapse into the medians of its set (all), and of the throttling ones (all + 1) */
static void med_push(struct medians *med, int all, const struct bt_collapse *c)
{
	for (int k = 0; k < 2; k++) {
		struct medians *m = &med[all + k];

		if (k && c->impact != BT_IMPACT_THROTTLING)
			break;
		vec_push(&m->rcv, c->culprit.rcv_interval_us);
		vec_push(&m->snd, c->culprit.snd_interval_us);
		vec_push(&m->bw_prev, c->bw_prev_bps);
		vec_push(&m->bw, c->bw_bps);
		vec_push(&m->delivered, c->delivered_bps ? c->delivered_bps : c->demand_bps);
	}
}

static void med_get(const struct medians *m, struct bt_collapse_medians *out)
{
	out->rcv_interval_us = (uint32_t)vec_median(&m->rcv);
	out->snd_interval_us = (uint32_t)vec_median(&m->snd);
	out->bw_prev_bps = vec_median(&m->bw_prev);
	out->bw_bps = vec_median(&m->bw);
	out->delivered_bps = vec_median(&m->delivered);
}

void bt_detect_free(struct bt_detect *d)
{
	if (!d)
		return;
	for (int i = 0; i < MED_N; i++)
		med_free(&d->med[i]);
	bt_flowtab_each(&d->flows, flow_free, NULL);
	bt_flowtab_free(&d->flows);
	bt_flowtab_free(&d->refused);
	bt_peers_free(&d->peers);
	free(d);
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* the 4-tuple's key, for samples taken before the socket had a cookie */
static uint64_t tuple_key(const struct bt_sample *s)
{
	uint64_t k = 0;

	for (int i = 0; i < 16; i++)
		k = mix64(k ^ s->saddr[i] ^ ((uint64_t)s->daddr[i] << 8));
	return mix64(k ^ s->sport ^ ((uint64_t)s->dport << 16)) | 1ull << 63;
}

static uint64_t flow_key(const struct bt_sample *s)
{
	return s->cookie ? s->cookie : tuple_key(s);
}

/* the ends of the sample's flow, for the verdict's fix */
static void flow_ends(const struct bt_sample *s, struct bt_flow_ends *e)
{
	memcpy(e->saddr, s->saddr, sizeof(e->saddr));
	memcpy(e->daddr, s->daddr, sizeof(e->daddr));
	e->sport = s->sport;
	e->dport = s->dport;
}

/* a new flow's state: the culprits' way from its first sample (slots when the
 * trace carries the filter's entries), both with --check-detector; NULL
 * without memory */
static struct flow *flow_new(const struct bt_detect *d, const struct bt_sample *s, uint64_t key)
{
	unsigned int ways = s->filter_known ? BT_CULPRIT_SLOTS : BT_CULPRIT_HISTORY;
	struct flow *f = calloc(1, sizeof(*f));

	if (d->cfg.check)
		ways = BT_CULPRIT_SLOTS | BT_CULPRIT_HISTORY;
	if (!f)
		return NULL;
	if (bt_culprits_init(&f->cul, ways)) {
		flow_free(f, NULL);
		return NULL;
	}
	f->key = key;
	flow_ends(s, &f->ends);
	bt_stall_reset(&f->stall);
	return f;
}

/* a flow that could not be tracked: counted, and remembered until its
 * socket closes, so that a place freed later does not take it in with its
 * start missing (a refusal that cannot be remembered, out of memory, is
 * counted all the same) */
static struct flow *untracked(struct bt_detect *d, uint64_t key)
{
	d->st.samples_untracked++;
	if (d->flows.n >= d->cfg.max_flows)
		d->st.untracked_at_cap = true;
	if (!bt_flowtab_get(&d->refused, key))
		bt_flowtab_put(&d->refused, key, &d->refused);
	return NULL;
}

/*
 * The sample's flow, made when it is new; NULL when it cannot be tracked (the
 * table is at --max-flows, or memory ran out): counted, never judged.
 */
static struct flow *flow_get(struct bt_detect *d, const struct bt_sample *s, bool *fresh)
{
	uint64_t key = flow_key(s);
	struct flow *f = bt_flowtab_get(&d->flows, key);

	*fresh = false;
	if (f)
		return f;
	if (d->refused.n && bt_flowtab_get(&d->refused, key))
		return untracked(d, key);
	/*
	 * A socket's first samples may come before it has a cookie (bbrtrace
	 * assigns cookies on the way): the flow they started under its 4-tuple
	 * is the same flow, now known by its cookie.
	 */
	f = s->cookie ? bt_flowtab_del(&d->flows, tuple_key(s)) : NULL;
	if (!f) {
		f = flow_new(d, s, key);
		*fresh = true;
	}
	if (!f || bt_flowtab_put(&d->flows, key, f)) {
		if (f)
			flow_free(f, NULL);
		return untracked(d, key);
	}
	f->key = key;
	if (*fresh) {
		d->st.flows++;
		f->peer = bt_peers_flow_begins(&d->peers, s->daddr, s->dport, s->saddr, s->t_ns);
	}
	return f;
}

/* the cache lines of a flow's state that an ACK reads and writes, by the
 * fields that open them (struct flow's order) */
static void prefetch_flow(const struct flow *f)
{
	tk_prefetch(&f->key);
	tk_prefetch(&f->throttle_demand_bps);
	tk_prefetch(&f->demand.last);
	tk_prefetch(&f->cul.key);
	tk_prefetch(&f->stall);
}

_Static_assert(BT_REORDER_STAGES == 3, "the hints' three stages: slot, state, checkpoints");

/* an event's key in the flow table, for a hint: its socket cookie (0: none) */
static uint64_t hint_key(const struct bt_event *e)
{
	return e ? e->cookie : 0;
}

/* the flow under an event's cookie, when its home slot holds it */
static const struct flow *flow_hinted(const struct bt_detect *d, const struct bt_event *e)
{
	return hint_key(e) ? bt_flowtab_peek(&d->flows, hint_key(e)) : NULL;
}

void bt_detect_ahead(void *detector, const struct bt_event *const e[BT_REORDER_STAGES])
{
	const struct bt_detect *d = detector;
	const struct flow *f;

	if (hint_key(e[0]))
		bt_flowtab_prefetch(&d->flows, hint_key(e[0]));
	if ((f = flow_hinted(d, e[1])))
		prefetch_flow(f);
	if ((f = flow_hinted(d, e[2])))
		bt_demand_prefetch(&f->demand);
}

bool bt_detect_hints_pay(const struct bt_detect *d)
{
	return d->flows.n >= BT_DETECT_PREFETCH_FLOWS;
}

void bt_detect_close(struct bt_detect *d, const struct bt_sample *s)
{
	struct flow *f = bt_flowtab_del(&d->flows, flow_key(s));

	bt_flowtab_del(&d->refused, flow_key(s));
	if (s->cookie)
		bt_flowtab_del(&d->refused, tuple_key(s));

	if (!f && s->cookie)
		f = bt_flowtab_del(&d->flows, tuple_key(s));
	if (!f)
		return;
	d->st.flows_closed++;
	bt_peers_flow_ends(&d->peers, f->peer);
	flow_free(f, NULL);
}

/* the sample's bandwidth as BBR stores it in its filter, converted like bw_bps */
static bool sample_sets(int32_t delivered, int64_t interval_us, const struct bt_sample *ack)
{
	uint64_t bw;

	if (delivered < 0 || interval_us <= 0)
		return false;
	bw = ((uint64_t)delivered << BT_BW_SCALE) / (uint64_t)interval_us;
	if (bw > UINT32_MAX)
		return false;
	return bt_bw_to_bps((uint32_t)bw, ack->mss) == ack->bw_bps;
}

/* two answers are the same sample (or both none) */
static bool same_sample(const struct bt_hsample *a, const struct bt_hsample *b)
{
	if (!a || !b)
		return a == b;
	return a->t_ns == b->t_ns && a->delivered == b->delivered && a->interval_us == b->interval_us &&
	       a->snd_interval_us == b->snd_interval_us && a->rcv_interval_us == b->rcv_interval_us;
}

/*
 * The most recent of the flow's samples whose bandwidth is bw_bps
 * (bt_culprits_find), or NULL. With --check-detector the history answers
 * too, and an answer it gives differently is counted.
 */
static const struct bt_hsample *culprit_of(struct bt_detect *d, const struct flow *f,
					   const struct bt_sample *ack, uint64_t bw_bps, uint64_t *age_ns)
{
	enum bt_culprit_way way = f->cul.ways & BT_CULPRIT_SLOTS ? BT_CULPRIT_SLOTS : BT_CULPRIT_HISTORY;
	const struct bt_hsample *h = bt_culprits_find(&f->cul, way, ack, bw_bps, age_ns);

	if (f->cul.ways == (BT_CULPRIT_SLOTS | BT_CULPRIT_HISTORY)) {
		d->st.culprit_checks++;
		if (!same_sample(h, bt_culprits_find(&f->cul, BT_CULPRIT_HISTORY, ack, bw_bps, NULL)))
			d->st.culprit_mismatches++;
	}
	return h;
}

/* the collapse's cause (bbrtrace/cause.c), with the sample that set the old
 * maximum when the flow's history holds it. What the flow delivered is the
 * more of its delivery now and when that sample came: BBR holds a maximum
 * for 10 rounds, seconds behind a deep queue, and a path cut since leaves
 * only the new rate in the window now (a cut 2 s before the collapse, behind
 * a 2000-packet queue, read as a burst maximum without it) */
static void classify(struct bt_detect *d, const struct flow *f, struct bt_collapse *c,
		     bool lt_switched, bool culprit_found, uint64_t delivered_bps, bool app)
{
	struct bt_cause_in in = {
		.cfg = &d->cfg,
		.lt_switched = lt_switched,
		.lt_was_on = f->lt_use_bw,
		.culprit_found = culprit_found,
		.delivered_bps = delivered_bps,
		.app_limited = app,
	};

	if (culprit_found && !lt_switched)
		in.max_sample = culprit_of(d, f, &c->ack, c->bw_prev_bps, &in.max_age_ns);
	if (in.max_sample && in.max_sample->flow_delivered_bps > in.delivered_bps)
		in.delivered_bps = in.max_sample->flow_delivered_bps;
	c->delivered_bps = in.delivered_bps;
	bt_cause_classify(&in, c);
}

/* the pacing rate BBR allows after this ACK: its estimate x its pacing gain. PROBE_BW
 * cycles its gain (1.25, 0.75, then 1 for six rounds): the cycle's mean, 1, is used */
static uint64_t allowed_bps(const struct bt_sample *s)
{
	uint64_t est = s->lt_use_bw ? s->lt_bw_bps : s->bw_bps;
	double gain = s->mode == BT_PROBE_BW || s->pacing_gain <= 0 ? 1.0 : s->pacing_gain;

	return (uint64_t)((double)est * gain);
}

/* adds to the host's and the flow's peer's harm, in total and this minute:
 * the statement stmt runs with h naming each in turn */
#define HARM(d, f, t_ns, stmt)                                                             \
	do {                                                                               \
		struct bt_harm *hs_[4];                                                    \
		unsigned int n_ = bt_peers_targets(&(d)->peers, (f)->peer, (t_ns), hs_);   \
		for (unsigned int i_ = 0; i_ < n_; i_++) {                                 \
			struct bt_harm *h = hs_[i_];                                       \
			stmt;                                                              \
		}                                                                          \
	} while (0)

/* what the flow delivered over the demand's window, bit/s (0: unknown), and
 * whether it was app-limited; during a throttle, what it was before */
static uint64_t flow_demand(const struct flow *f, uint64_t t_ns, bool *app)
{
	*app = false;
	if (f->throttled_since_ns)
		return f->throttle_demand_bps;
	return bt_demand_measured(&f->demand, t_ns, app);
}

/* the path gave less than before: a rate drop, or a policer's long-term rate */
static bool path_gave_less(const struct bt_collapse *c)
{
	return c->cause == BT_CAUSE_RATE_DROP || c->cause == BT_CAUSE_LOSS_POLICER;
}

/*
 * The collapse's impact, and a throttle begins when it throttles. An
 * app-limited flow needs BT_THROTTLE_HEADROOM x its demand. A flow with more
 * to send (not app-limited) is throttled when its path gave less (rate_drop,
 * loss_policer), until the pacing allowed is back at what it delivered; else
 * when the pacing falls under (1 - collapse ratio) x that (without a window
 * yet, x the estimate it had; bbrtrace/rules.h says why).
 */
static void impact_of(struct bt_detect *d, struct flow *f, struct bt_collapse *c,
		      uint64_t demand_bps, bool app)
{
	uint64_t allowed = allowed_bps(&c->ack);
	double need = 1.0;

	c->demand_bps = demand_bps ? demand_bps : c->bw_prev_bps;
	if (f->throttled_since_ns)
		need = (double)f->throttle_end_bps / (double)f->throttle_demand_bps;
	else if (app)
		need = BT_THROTTLE_HEADROOM;
	else if (!path_gave_less(c))
		need = 1.0 - d->cfg.collapse_ratio; /* BBR's own spread (rules.h) */
	c->headroom = c->demand_bps ? (double)allowed / (double)c->demand_bps : 0;
	c->need_bps = (uint64_t)(need * (double)c->demand_bps);
	c->impact = c->headroom < need ? BT_IMPACT_THROTTLING : BT_IMPACT_HARMLESS;
	/* a flow with more to send whose path gave less (a rate drop, a policer) is held
	 * back by its path, whatever it delivered before */
	if (!app && !f->throttled_since_ns && path_gave_less(c))
		c->impact = BT_IMPACT_THROTTLING;
	/* nor by noise: a burst maximum, or a culprit under the noise floor (rules.h);
	 * BBR's long-term rate is no sample's, and it holds until losses stop */
	if (!f->throttled_since_ns && c->cause != BT_CAUSE_LOSS_POLICER &&
	    (c->cause == BT_CAUSE_BURST_MAX || bt_cause_in_noise(&c->culprit)))
		c->impact = BT_IMPACT_HARMLESS;
	if (c->impact != BT_IMPACT_THROTTLING)
		return;
	d->st.throttling[c->cause]++;
	d->st.throttling_app += f->throttled_since_ns ? f->throttle_app : app;
	HARM(d, f, c->ack.t_ns, h->throttling[c->cause]++);
	if (!f->throttled_since_ns) {
		f->throttled_since_ns = c->ack.t_ns;
		f->throttle_demand_bps = c->demand_bps;
		f->throttle_end_bps = c->need_bps;
		f->throttle_lt = !app && c->cause == BT_CAUSE_LOSS_POLICER;
		f->throttle_app = app;
		f->throttle_cause = (uint8_t)c->cause;
	}
}

/* a throttle in progress: its time, and the bytes the demand wanted that the pacing did
 * not allow, until the pacing allowed is back at what the flow needed; a policer's
 * throttle of a flow with more to send, until BBR leaves its long-term rate (rules.h) */
static void throttle_track(struct bt_detect *d, struct flow *f, const struct bt_sample *s)
{
	uint64_t paced, from, dt;
	double late;

	if (!f->throttled_since_ns)
		return;
	from = f->last_t_ns > f->throttled_since_ns ? f->last_t_ns : f->throttled_since_ns;
	/* the pacing in force since the previous ACK, and the time to this one */
	paced = f->last_allowed_bps;
	dt = s->t_ns > from ? s->t_ns - from : 0;
	late = paced < f->throttle_demand_bps ? (double)(f->throttle_demand_bps - paced) * (double)dt / 8e9 : 0;
	d->st.throttled_ns += dt;
	d->st.throttled_ns_by[f->throttle_cause] += dt;
	d->st.late_bytes += late;
	HARM(d, f, s->t_ns, (h->throttled_ns += dt, h->late_bytes += late));
	if (s->fin_acked || (f->throttle_lt ? !s->lt_use_bw : allowed_bps(s) >= f->throttle_end_bps))
		f->throttled_since_ns = 0;
}


/* the flow's event through its stall tracker: a stall it ended is counted and kept */
static void stall_step(struct bt_detect *d, struct flow *f, const struct bt_sample *s)
{
	struct bt_stall *x = &d->stall;

	if (!bt_stall_step(&f->stall, s, x))
		return;
	d->stall_pending = true;
	d->st.stalls[x->cause]++;
	d->st.stalled_ns[x->cause] += x->duration_us * TK_NSEC_PER_USEC;
	HARM(d, f, s->t_ns, (h->stalls[x->cause]++, h->stalled_ns[x->cause] += x->duration_us * TK_NSEC_PER_USEC,
			     h->nagle_ended[x->ended_by] += x->cause == BT_STALL_NAGLE));
	if (x->cause == BT_STALL_NAGLE) {
		flow_ends(&x->at, &d->st.nagle_ends);
		d->st.nagle_ended[x->ended_by]++;
	}
}

void bt_detect_write(struct bt_detect *d, const struct bt_sample *w)
{
	bool fresh;
	struct flow *f;

	d->st.writes++;
	f = flow_get(d, w, &fresh);
	if (f)
		stall_step(d, f, w);
}

bool bt_detect_take_stall(struct bt_detect *d, struct bt_stall *out)
{
	if (!d->stall_pending)
		return false;
	*out = d->stall;
	d->stall_pending = false;
	return true;
}

bool bt_detect_feed(struct bt_detect *d, const struct bt_sample *s, struct bt_collapse *c)
{
	bool fresh, lt_switched, found = false, collapsed = false, app = false;
	struct flow *f;
	uint64_t before, after, demand;

	d->st.samples++;
	if (s->is_app_limited)
		d->st.app_limited_samples++;
	if (!d->st.first_t_ns || s->t_ns < d->st.first_t_ns)
		d->st.first_t_ns = s->t_ns;
	if (s->t_ns > d->st.last_t_ns)
		d->st.last_t_ns = s->t_ns;
	f = flow_get(d, s, &fresh);
	if (!f)
		return false; /* untracked: counted, not judged */
	if (!fresh && s->t_ns > f->last_t_ns && s->t_ns - f->last_t_ns < BT_ACTIVE_GAP_NS)
		HARM(d, f, s->t_ns, h->active_ns += s->t_ns - f->last_t_ns);
	stall_step(d, f, s);

	before = !fresh && f->lt_use_bw ? f->lt_bw_bps : s->bw_prev_bps;
	after = s->lt_use_bw ? s->lt_bw_bps : s->bw_bps;
	/* the estimate is lt_bw after this ACK: BBR is on its long-term (policed) rate */
	lt_switched = s->lt_use_bw;

	if (!s->fin_acked && before > 0 &&
	    (double)after < (1.0 - d->cfg.collapse_ratio) * (double)before) {
		memset(c, 0, sizeof(*c));
		c->bw_prev_bps = before;
		c->bw_bps = after;
		c->drop_ratio = 1.0 - (double)after / (double)before;
		c->ack = *s;
		c->culprit = *s;
		if (lt_switched) {
			found = true;
			c->reset_by_ack = true;
		} else if (sample_sets(s->delivered, s->interval_us, s)) {
			found = true;
			c->reset_by_ack = true;
		} else {
			const struct bt_hsample *h = culprit_of(d, f, s, s->bw_bps, NULL);

			if (h) {
				bt_hsample_get(&c->culprit, h);
				found = true;
			}
		}
		demand = flow_demand(f, s->t_ns, &app);
		classify(d, f, c, lt_switched, found, demand, app);
		impact_of(d, f, c, demand, app);
		d->st.collapses[c->cause]++;
		HARM(d, f, s->t_ns, h->collapses[c->cause]++);
		f->collapses[c->cause]++;
		switch (c->cause) {
		case BT_CAUSE_DELAYED_ACK:
			med_push(d->med, MED_DELACK, c);
			if (++f->delack_count > d->best_delack_count) {
				d->best_delack_count = f->delack_count;
				flow_ends(s, &d->st.delack_ends);
			}
			break;
		case BT_CAUSE_RATE_DROP:
			med_push(d->med, MED_RATE, c);
			break;
		case BT_CAUSE_LOSS_POLICER:
			d->st.lt_bw_last_bps = s->lt_bw_bps;
			break;
		default:
			if (!d->st.other_bw_min_bps || after < d->st.other_bw_min_bps)
				d->st.other_bw_min_bps = after;
			break;
		}
		collapsed = true;
	}

	if (!fresh)
		throttle_track(d, f, s);
	bt_demand_track(&f->demand, s);
	f->lt_use_bw = s->lt_use_bw;
	f->lt_bw_bps = s->lt_bw_bps;
	f->last_t_ns = s->t_ns;
	f->last_est_bps = after;
	f->last_allowed_bps = allowed_bps(s);
	f->cookie = s->cookie;
	bt_culprits_put(&f->cul, s, bt_demand_recent(&f->demand));
	return collapsed;
}

static void count_throttle(void *p, void *ctx)
{
	const struct flow *f = p;

	*(uint64_t *)ctx += f->throttled_since_ns != 0;
}

void bt_detect_stats(const struct bt_detect *d, struct bt_detect_stats *st)
{
	*st = d->st;
	med_get(&d->med[MED_DELACK], &st->delack);
	med_get(&d->med[MED_DELACK_THR], &st->delack_thr);
	med_get(&d->med[MED_RATE], &st->rate);
	med_get(&d->med[MED_RATE_THR], &st->rate_thr);
	st->throttles_open = 0;
	bt_flowtab_each(&d->flows, count_throttle, &st->throttles_open);
	st->flows_live = d->flows.n;
}

struct flow_states {
	uint64_t since_ns;
	struct bt_flow_state *out;
	unsigned int k, max;
};

static void flow_state(void *p, void *ctx)
{
	const struct flow *f = p;
	struct flow_states *fs = ctx;
	struct bt_flow_state *o;

	if (fs->k >= fs->max || f->last_t_ns < fs->since_ns)
		return;
	o = &fs->out[fs->k++];
	o->cookie = f->cookie;
	memcpy(o->saddr, f->ends.saddr, 16);
	memcpy(o->daddr, f->ends.daddr, 16);
	o->sport = f->ends.sport;
	o->dport = f->ends.dport;
	o->bw_bps = f->last_est_bps;
	o->last_t_ns = f->last_t_ns;
	memcpy(o->collapses, f->collapses, sizeof(f->collapses));
}

unsigned int bt_detect_flow_states(const struct bt_detect *d, uint64_t since_ns,
				   struct bt_flow_state *out, unsigned int max)
{
	struct flow_states fs = { since_ns, out, 0, max };

	bt_flowtab_each(&d->flows, flow_state, &fs);
	return fs.k;
}

const struct bt_peers *bt_detect_peers(const struct bt_detect *d)
{
	return &d->peers;
}

void bt_detect_expire(struct bt_detect *d, uint64_t now_ns)
{
	bt_peers_expire(&d->peers, now_ns);
}
