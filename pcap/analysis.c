// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one pass over a capture: frames into flows by 4-tuple, counted per
 * direction and binned in time, each ACK matched to the data it covers. The
 * capture's side, guessed per flow after the last frame, is pcap/side.c's;
 * the --flow selector and the names of flows pcap/flowsel.c's; the ACK
 * delays' percentiles pcap/ackdelay.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "pcap/analysis.h"

#define SEQ_BIAS (1ull << 32) /* unwrapped sequences start here, so a step back never underflows */

static inline uint64_t unwrap(uint64_t anchor, uint32_t v)
{
	return anchor + (uint64_t)(int64_t)(int32_t)(v - (uint32_t)anchor);
}

/* --- allocation helpers (amortised, never per packet) -------------------------- */

static bool grow(void **p, uint64_t *cap, uint64_t need, size_t elem)
{
	uint64_t n = *cap ? *cap : 16;
	void *q;

	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return false;
	memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
	*p = q;
	*cap = n;
	return true;
}

struct an *an_new(const struct an_config *cfg)
{
	struct an *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cfg = *cfg;
	a->hash_mask = 1023;
	a->hash = calloc(a->hash_mask + 1, sizeof(*a->hash));
	if (!a->hash) {
		free(a);
		return NULL;
	}
	return a;
}

void an_free(struct an *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->nflows; i++) {
		struct an_flow *f = a->flows[i];

		for (int k = 0; k < 2; k++) {
			free(f->d[k].segs);
			free(f->d[k].delays);
			free(f->d[k].bins);
			free(f->d[k].holes);
		}
		free(f);
	}
	free(a->flows);
	free(a->hash);
	free(a);
}

/* --- flows ------------------------------------------------------------------------ */

static inline uint32_t hash_ep(const uint8_t *addr, uint16_t port)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	return (h ^ port) * 2654435761u;
}

static inline uint32_t hash_flow(const uint8_t *a, uint16_t pa, const uint8_t *b, uint16_t pb)
{
	uint32_t h = hash_ep(a, pa) + hash_ep(b, pb); /* symmetric: both directions meet */

	return h ^ (h >> 15);
}

static bool rehash(struct an *a)
{
	uint32_t n = (a->hash_mask + 1) * 2;
	struct an_flow **h = calloc(n, sizeof(*h));

	if (!h)
		return false;
	/* the chains hold only the newest flow of each 4-tuple */
	for (uint32_t i = 0; i <= a->hash_mask; i++) {
		struct an_flow *f = a->hash[i], *next;

		for (; f; f = next) {
			uint32_t k = hash_flow(f->addr[0], f->port[0], f->addr[1], f->port[1]) & (n - 1);

			next = f->hnext;
			f->hnext = h[k];
			h[k] = f;
		}
	}
	free(a->hash);
	a->hash = h;
	a->hash_mask = n - 1;
	return true;
}

static struct an_flow *new_flow(struct an *a, const struct pkt_tcp *t, int64_t ts, uint32_t h)
{
	struct an_flow *f;

	if (a->nflows == a->cap_flows) {
		uint64_t cap = a->cap_flows;

		if (!grow((void **)&a->flows, &cap, a->nflows + 1, sizeof(*a->flows))) {
			a->oom = true;
			return NULL;
		}
		a->cap_flows = (uint32_t)cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		a->oom = true;
		return NULL;
	}
	f->id = a->nflows + 1;
	f->family = t->family;
	memcpy(f->addr[0], t->saddr, 16);
	memcpy(f->addr[1], t->daddr, 16);
	f->port[0] = t->sport;
	f->port[1] = t->dport;
	f->first_ns = ts;
	f->syn_dir = -1;
	f->selected = an_flow_selected(a->cfg.sel, a->cfg.nsel, f);
	a->flows[a->nflows++] = f;
	f->hnext = a->hash[h & a->hash_mask];
	a->hash[h & a->hash_mask] = f;
	if (a->nflows > (a->hash_mask + 1) / 2 * 3 / 2)
		rehash(a);
	return f;
}

static void unlink_flow(struct an *a, struct an_flow *f, uint32_t h)
{
	struct an_flow **pp = &a->hash[h & a->hash_mask];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == f) {
			*pp = f->hnext;
			f->hnext = NULL;
			return;
		}
	}
}

static inline int flow_dir(const struct an_flow *f, const struct pkt_tcp *t)
{
	if (f->family != t->family)
		return -1;
	if (f->port[0] == t->sport && f->port[1] == t->dport && !memcmp(f->addr[0], t->saddr, 16) &&
	    !memcmp(f->addr[1], t->daddr, 16))
		return 0;
	if (f->port[1] == t->sport && f->port[0] == t->dport && !memcmp(f->addr[1], t->saddr, 16) &&
	    !memcmp(f->addr[0], t->daddr, 16))
		return 1;
	return -1;
}

/* a SYN that starts a new connection on a 4-tuple whose old one ended */
static bool reused(const struct an_flow *f, const struct pkt_tcp *t, int dir)
{
	const struct an_dir *d = &f->d[dir];

	if ((t->flags & (TCP_SYN | TCP_ACK)) != TCP_SYN || !d->syns)
		return false;
	if (!(f->d[0].fins || f->d[1].fins || f->d[0].rsts || f->d[1].rsts))
		return false;
	return unwrap(d->data_start, t->seq) + 1 != d->data_start;
}

static struct an_flow *lookup(struct an *a, const struct pkt_tcp *t, int64_t ts, int *dir)
{
	struct an_flow *f = a->last;
	uint32_t h;

	if (f && (*dir = flow_dir(f, t)) >= 0 && !reused(f, t, *dir))
		return f;
	h = hash_flow(t->saddr, t->sport, t->daddr, t->dport);
	for (f = a->hash[h & a->hash_mask]; f; f = f->hnext) {
		if ((*dir = flow_dir(f, t)) >= 0) {
			if (!reused(f, t, *dir))
				return a->last = f;
			unlink_flow(a, f, h);
			break;
		}
	}
	*dir = 0;
	return a->last = new_flow(a, t, ts, h);
}

/* --- per packet ------------------------------------------------------------------ */

static struct an_bin *bin_at(struct an *a, struct an_dir *d, int64_t ts)
{
	int64_t rel = ts - a->t0_ns;
	uint64_t idx, lo, hi;

	if (rel < 0)
		rel = 0;
	/* most frames fall in the last bin: no division for them */
	if (d->nbins && rel >= d->last_bin_lo_ns && rel < d->last_bin_hi_ns)
		return &d->bins[d->nbins - 1];
	/* microsecond resolution, rounded, as tshark's io,stat bins */
	idx = (uint64_t)((rel + TK_NSEC_PER_USEC / 2) / TK_NSEC_PER_USEC) / (uint64_t)(a->cfg.bin_ns / TK_NSEC_PER_USEC);
	if (d->nbins && d->bins[d->nbins - 1].idx == idx)
		return &d->bins[d->nbins - 1];
	if (!d->nbins || idx > d->bins[d->nbins - 1].idx) {
		struct an_bin *b;

		if (d->nbins == d->cap_bins && !grow((void **)&d->bins, &d->cap_bins, d->nbins + 1, sizeof(*d->bins))) {
			a->oom = true;
			return NULL;
		}
		b = &d->bins[d->nbins++];
		memset(b, 0, sizeof(*b));
		b->idx = idx;
		/* rel in [lo, hi) rounds to a microsecond inside this bin */
		d->last_bin_lo_ns = (int64_t)idx * a->cfg.bin_ns - 500;
		d->last_bin_hi_ns = (int64_t)(idx + 1) * a->cfg.bin_ns - 500;
		return b;
	}
	/* a timestamp older than the last bin: its bin, or the one before the gap */
	lo = 0;
	hi = d->nbins;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (d->bins[mid].idx <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &d->bins[lo ? lo - 1 : 0];
}

static void add_hole(struct an *a, struct an_dir *d, uint64_t start, uint64_t end)
{
	if (d->nholes == d->cap_holes &&
	    !grow((void **)&d->holes, &d->cap_holes, d->nholes + 1, sizeof(*d->holes))) {
		a->oom = true;
		return;
	}
	d->holes[d->nholes].start = start;
	d->holes[d->nholes].end = end;
	d->nholes++;
}

/* newly covered bytes of [s, e); the rest was seen before (retransmission) */
static uint64_t account_unique(struct an *a, struct an_dir *d, uint64_t s, uint64_t e)
{
	uint64_t fresh = 0;

	/* holes below hi_end that this segment fills */
	for (uint64_t i = 0; i < d->nholes && s < d->hi_end;) {
		struct an_hole *h = &d->holes[i];
		uint64_t lo = s > h->start ? s : h->start, hi = e < h->end ? e : h->end;

		if (lo >= hi) {
			i++;
			continue;
		}
		fresh += hi - lo;
		if (lo == h->start && hi == h->end) {
			d->holes[i] = d->holes[--d->nholes];
			continue;
		}
		if (lo == h->start) {
			h->start = hi;
		} else if (hi == h->end) {
			h->end = lo;
		} else {
			uint64_t upper_end = h->end;

			h->end = lo;
			add_hole(a, d, hi, upper_end); /* may move d->holes: h is not used after */
		}
		i++;
	}
	if (e > d->hi_end) {
		if (s > d->hi_end) /* a gap: bytes the capture missed, which may come later */
			add_hole(a, d, d->hi_end, s);
		fresh += e - (s > d->hi_end ? s : d->hi_end);
		d->hi_end = e;
	}
	return fresh;
}

static void note_len(struct an_dir *d, uint32_t len)
{
	int free_slot = -1;

	if (len > 9000)
		return;
	for (int i = 0; i < 8; i++) {
		if (d->mss_cnt[i] && d->mss_len[i] == len) {
			d->mss_cnt[i]++;
			return;
		}
		if (!d->mss_cnt[i] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		d->mss_len[free_slot] = len;
		d->mss_cnt[free_slot] = 1;
		return;
	}
	for (int i = 0; i < 8; i++) /* Misra-Gries: the frequent ones survive */
		d->mss_cnt[i]--;
}

uint32_t an_dir_mss(const struct an *a, const struct an_flow *f, int dir)
{
	const struct an_dir *d = &f->d[dir], *peer = &f->d[!dir];
	uint32_t best = 0, cnt = 0;

	if (a->cfg.mss)
		return a->cfg.mss;
	if (peer->mss_opt) {
		uint32_t m = peer->mss_opt;

		/* timestamps take 12 bytes of every segment */
		if (d->ts_opt && peer->ts_opt && m > 12)
			m -= 12;
		return m;
	}
	for (int i = 0; i < 8; i++) {
		if (d->mss_cnt[i] > cnt || (d->mss_cnt[i] == cnt && d->mss_len[i] > best)) {
			cnt = d->mss_cnt[i];
			best = d->mss_len[i];
		}
	}
	return best ? best : 1460;
}

static bool seg_push(struct an *a, struct an_dir *d, const struct an_seg *s)
{
	if (d->seg_len == d->seg_cap) {
		uint32_t n = d->seg_cap ? d->seg_cap * 2 : 256;
		struct an_seg *v;

		if (n > AN_MAX_SEGS) /* the ACKs are missing: forget the oldest */
			goto drop_oldest;
		v = malloc(n * sizeof(*v));
		if (!v) {
			a->oom = true;
			goto drop_oldest;
		}
		for (uint32_t i = 0; i < d->seg_len; i++)
			v[i] = d->segs[(d->seg_head + i) & (d->seg_cap - 1)];
		free(d->segs);
		d->segs = v;
		d->seg_head = 0;
		d->seg_cap = n;
	}
	d->segs[(d->seg_head + d->seg_len) & (d->seg_cap - 1)] = *s;
	d->seg_len++;
	return true;
drop_oldest:
	d->seg_head = (d->seg_head + 1) & (d->seg_cap - 1);
	d->segs[(d->seg_head + d->seg_len - 1) & (d->seg_cap - 1)] = *s;
	return false;
}

static inline struct an_seg *seg_at(struct an_dir *d, uint32_t i)
{
	return &d->segs[(d->seg_head + i) & (d->seg_cap - 1)];
}

/* a retransmission: the segments it overlaps were sent again now */
static void seg_resent(struct an_dir *d, uint64_t s, uint64_t e, int64_t ts, uint64_t frame)
{
	uint32_t lo = 0, hi = d->seg_len;

	while (lo < hi) { /* first segment whose end is above s */
		uint32_t mid = lo + (hi - lo) / 2;

		if (seg_at(d, mid)->end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < d->seg_len; i++) {
		struct an_seg *g = seg_at(d, i);

		if (g->end - g->len >= e)
			break;
		g->ts_ns = ts;
		g->frame = frame;
		g->rexmt = true;
	}
}

static void data_segment(struct an *a, struct an_flow *f, int dir, const struct cap_frame *fr,
			 const struct pkt_tcp *t)
{
	struct an_dir *d = &f->d[dir];
	uint32_t len = t->payload_len;
	uint64_t s, e, old_hi, fresh;

	d->data_pkts++;
	d->data_bytes += len;
	if (len > d->max_payload)
		d->max_payload = len;
	if (!d->seq_init) {
		d->seq_init = true;
		d->hi_end = SEQ_BIAS + t->seq;
		d->data_start = d->hi_end;
	}
	if (!f->d[!dir].mss_opt)
		note_len(d, len);
	s = unwrap(d->hi_end, t->seq);
	e = s + len;
	old_hi = d->hi_end;
	fresh = account_unique(a, d, s, e);
	d->unique_bytes += fresh;
	if (fresh < len) {
		d->rexmt_pkts++;
		d->rexmt_bytes += len - fresh;
	}
	if (!f->selected || !a->cfg.acks)
		return;
	if (e > old_hi) {
		struct an_seg g = { e, fr->ts_ns, fr->no, len, fresh < len };

		seg_push(a, d, &g);
	} else {
		seg_resent(d, s, e, fr->ts_ns, fr->no);
	}
}

static void hist_add(struct an_dir *d, uint32_t segs)
{
	int k = segs <= 1 ? 0 : segs == 2 ? 1 : segs <= 4 ? 2 : segs <= 8 ? 3 : segs <= 16 ? 4 : 5;

	d->seg_hist[k]++;
}

/* t SACKs data above its cumulative ACK: the receiver holds bytes the
 * sender sent after it, whether or not the capture saw them (a D-SACK block,
 * at or below the ACK, does not count) */
static bool sacks_above_ack(const struct pkt_tcp *t)
{
	for (unsigned i = 0; i < t->nsack; i++)
		if ((int32_t)(t->sack[i][1] - t->ack) > 0)
			return true;
	return false;
}

/* RFC 5681's duplicate ACK: data outstanding, no payload, neither SYN nor
 * FIN (nor RST), the highest cumulative ACK number again, and the same window
 * as the ACK before it (a window update is not a duplicate). Data is
 * outstanding when the capture saw data above the ACK, or when the ACK SACKs
 * some: a capture that dropped the data sent after a hole would otherwise
 * miss the duplicates that ask for the hole. tcptrace counts the same but for
 * FINs, and only at the end of a segment it saw. */
static bool rfc5681_dupack(const struct an_dir *d, const struct pkt_tcp *t, uint64_t ack64, uint64_t prev)
{
	return ack64 == prev && (d->hi_end > ack64 || sacks_above_ack(t)) && !t->payload_len &&
	       !(t->flags & (TCP_SYN | TCP_FIN | TCP_RST)) && t->win == d->ack_win;
}

/* where the ACK number stands against the highest so far: advancing (with
 * the bytes it newly acknowledges), a duplicate, or neither; counted in d.
 * Returns the highest ACK before this one, unwrapped. */
static uint64_t ack_position(struct an *a, struct an_flow *f, struct an_dir *d, const struct cap_frame *fr,
			     const struct pkt_tcp *t, struct an_ack *ev)
{
	bool first = !d->ack_init;
	uint64_t prev, lo, hi;

	if (!d->seq_init) { /* no data seen yet: the ACK defines where it starts */
		d->seq_init = true;
		d->hi_end = SEQ_BIAS + t->ack;
		d->data_start = d->hi_end;
	}
	ev->ack64 = unwrap(d->hi_end, t->ack);
	d->acks++;
	if (first) {
		d->ack_init = true;
		d->acked_to = ev->ack64;
	}
	prev = d->acked_to;
	if (ev->ack64 > prev) {
		ev->advancing = true;
		d->acks_adv++;
		lo = prev < d->hi_end ? prev : d->hi_end;
		hi = ev->ack64 < d->hi_end ? ev->ack64 : d->hi_end;
		ev->acked_bytes = hi - lo;
		d->acked_to = ev->ack64;
		if (f->selected && a->cfg.bin_ns && ev->acked_bytes) {
			struct an_bin *b = bin_at(a, d, fr->ts_ns);

			if (b)
				b->acked_bytes += ev->acked_bytes;
		}
	} else if (!first && rfc5681_dupack(d, t, ev->ack64, prev)) {
		ev->dupack = true;
		d->dupacks++;
	}
	d->ack_win = t->win;
	return prev;
}

/* the newest transmission among the data g covers, into ev */
static void note_covered(const struct an_seg *g, int64_t *newest, struct an_ack *ev)
{
	if (g->ts_ns >= *newest) {
		*newest = g->ts_ns;
		ev->data_frame = g->frame;
		ev->data_len = g->len;
	}
}

/* the segments an advancing ACK covers leave the ring; false when it covers none */
static bool ack_covers(struct an_dir *d, uint64_t a64, int64_t *newest, struct an_ack *ev)
{
	bool covered = false;

	*newest = INT64_MIN;
	while (d->seg_len && seg_at(d, 0)->end <= a64) {
		note_covered(seg_at(d, 0), newest, ev);
		covered = true;
		ev->covered_pkts++;
		d->seg_head = (d->seg_head + 1) & (d->seg_cap - 1);
		d->seg_len--;
	}
	if (d->seg_len && seg_at(d, 0)->end - seg_at(d, 0)->len < a64) {
		/* part of a super-segment: the receiver ACKs by MSS inside it */
		note_covered(seg_at(d, 0), newest, ev);
		covered = true;
	}
	return covered;
}

/* an advancing ACK: how long after the data it covers it came, how many
 * segments it acknowledges, and whether it is a delayed-ACK candidate */
static void ack_advance(struct an *a, struct an_dir *d, const struct cap_frame *fr, struct an_ack *ev)
{
	int64_t newest;
	bool covered = ack_covers(d, ev->ack64, &newest, ev);

	if (covered) {
		d->covered_valid = true;
		d->covered_ts_ns = newest;
		d->covered_frame = ev->data_frame;
		d->covered_len = ev->data_len;
		ev->delay_ns = fr->ts_ns - newest;
	}
	ev->acked_segs = ev->mss ? (uint32_t)((ev->acked_bytes + ev->mss - 1) / ev->mss) : 0;
	ev->single = ev->acked_bytes <= ev->mss;
	ev->runt = covered && ev->data_len < ev->mss;
	if (ev->acked_bytes) {
		d->segs_acked += ev->acked_segs;
		hist_add(d, ev->acked_segs);
	}
	if (!covered)
		return;
	if (d->ndelays == d->cap_delays &&
	    !grow((void **)&d->delays, &d->cap_delays, d->ndelays + 1, sizeof(*d->delays)))
		a->oom = true;
	else
		d->delays[d->ndelays++] = ev->delay_ns;
	ev->candidate = ev->delay_ns >= a->cfg.delack_ns && (ev->runt || ev->single);
	d->candidates += ev->candidate;
}

/* an ACK sent in direction !data_dir for data_dir's data */
static void ack_segment(struct an *a, struct an_flow *f, int data_dir, const struct cap_frame *fr,
			const struct pkt_tcp *t)
{
	struct an_dir *d = &f->d[data_dir];
	struct an_ack ev = { .frame = fr->no, .ts_ns = fr->ts_ns, .data_dir = data_dir, .ack = t->ack,
			     .delay_ns = -1 };
	uint64_t prev = ack_position(a, f, d, fr, t, &ev);

	if (!f->selected || !a->cfg.acks)
		return;
	ev.mss = an_dir_mss(a, f, data_dir);
	if (ev.advancing) {
		ack_advance(a, d, fr, &ev);
	} else if (d->covered_valid && ev.ack64 == prev) {
		/* not advancing: still say how long after the newest covered data it came */
		ev.delay_ns = fr->ts_ns - d->covered_ts_ns;
		ev.data_frame = d->covered_frame;
		ev.data_len = d->covered_len;
	}
	if (a->cfg.on_ack)
		a->cfg.on_ack(a->cfg.ctx, f, &ev);
}

/* the bytes of direction d sent and not yet ACKed (a FIN's ACK passes the data's end) */
static uint64_t dir_inflight(const struct an_dir *d)
{
	uint64_t base;

	if (!d->seq_init)
		return 0;
	base = d->ack_init ? d->acked_to : d->data_start;
	return d->hi_end > base ? d->hi_end - base : 0;
}

/* the silence that frame fr ends, when it lasted on_gap's threshold */
static void note_gap(struct an *a, struct an_flow *f, const struct cap_frame *fr)
{
	struct an_gap g = { .start_ns = f->last_ns, .end_ns = fr->ts_ns, .frame = fr->no };

	if (!a->cfg.on_gap || !f->selected || fr->ts_ns - f->last_ns < a->cfg.gap_ns)
		return;
	for (int k = 0; k < 2; k++) {
		g.data[k] = f->d[k].data_bytes > 0;
		g.inflight[k] = dir_inflight(&f->d[k]);
	}
	a->cfg.on_gap(a->cfg.ctx, f, &g);
}

static void packet(struct an *a, struct an_flow *f, int dir, const struct cap_frame *fr, const struct pkt_tcp *t)
{
	struct an_dir *d = &f->d[dir];
	int64_t ts = fr->ts_ns;

	if (f->last_ns)
		note_gap(a, f, fr);
	if (!d->pkts)
		d->first_ns = ts;
	d->pkts++;
	d->wire_bytes += fr->origlen;
	d->last_ns = ts;
	f->last_ns = ts;
	if (t->pkttype == PKT_TYPE_OUTGOING)
		d->outgoing_pkts++;
	else if (t->pkttype == PKT_TYPE_HOST)
		d->incoming_pkts++;
	if (t->ttl == 64 || t->ttl == 128 || t->ttl == 255)
		d->initial_ttl_pkts++;
	if (t->flags & TCP_SYN) {
		d->syns++;
		if (t->mss_opt)
			d->mss_opt = t->mss_opt;
		d->ts_opt = t->has_ts;
		if (!d->seq_init || d->hi_end == d->data_start) {
			d->seq_init = true;
			d->hi_end = SEQ_BIAS + t->seq + 1;
			d->data_start = d->hi_end;
		}
		if (!(t->flags & TCP_ACK)) {
			if (f->syn_dir < 0) {
				f->syn_dir = dir;
				f->syn_ns = ts;
			}
		} else if (f->syn_dir == !dir && !f->synack_ns) {
			f->synack_ns = ts;
		}
	} else if (f->syn_dir == dir && f->synack_ns && !f->hs_ack_ns && (t->flags & TCP_ACK)) {
		f->hs_ack_ns = ts;
	}
	if (t->flags & TCP_FIN)
		d->fins++;
	if (t->flags & TCP_RST)
		d->rsts++;
	if (f->selected && a->cfg.bin_ns) {
		struct an_bin *b = bin_at(a, d, ts);

		if (b) {
			b->frames++;
			b->wire_bytes += fr->origlen;
			if (t->payload_len) {
				b->data_frames++;
				b->data_bytes += t->payload_len;
			}
		}
	}
	if (t->payload_len)
		data_segment(a, f, dir, fr, t);
	else if ((t->flags & TCP_ACK) && !(t->flags & (TCP_SYN | TCP_FIN | TCP_RST)))
		d->pure_acks++;
	if (t->flags & TCP_ACK)
		ack_segment(a, f, !dir, fr, t);
}

void an_frame(struct an *a, const struct cap_frame *fr)
{
	struct pkt_tcp t;
	struct an_flow *f;
	int dir;

	a->frames++;
	if (!a->have_t0) {
		a->t0_ns = fr->ts_ns;
		a->have_t0 = true;
	}
	a->tlast_ns = fr->ts_ns;
	if (a->nlinktypes == 0 || a->linktypes[a->nlinktypes - 1] != fr->linktype) {
		bool seen = false;

		for (unsigned int i = 0; i < a->nlinktypes; i++)
			seen |= a->linktypes[i] == fr->linktype;
		if (!seen && a->nlinktypes < ARRAY_SIZE(a->linktypes))
			a->linktypes[a->nlinktypes++] = fr->linktype;
	}
	switch (pkt_decode(fr->linktype, fr->data, fr->caplen, fr->origlen, &t)) {
	case PKT_TCP:
		break;
	case PKT_TRUNC:
		a->trunc_frames++;
		return;
	case PKT_BAD:
		a->bad_frames++;
		return;
	default:
		a->other_frames++;
		return;
	}
	a->tcp_frames++;
	f = lookup(a, &t, fr->ts_ns, &dir);
	if (!f)
		return;
	packet(a, f, dir, fr, &t);
}

int an_run(struct an *a, struct cap_file *c)
{
	struct cap_frame fr;
	int rc;

	while ((rc = cap_next(c, &fr)) == 1)
		an_frame(a, &fr);
	an_finish(a);
	return rc < 0 ? -1 : 0;
}

int an_run_set(struct an *a, struct cap_set *s)
{
	struct cap_frame fr;
	int rc;

	while ((rc = cap_set_next(s, &fr)) == 1)
		an_frame(a, &fr);
	an_finish(a);
	return rc < 0 ? -1 : 0;
}
