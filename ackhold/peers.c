// SPDX-License-Identifier: GPL-2.0-only
/* ackhold: each hold judged, and the sums per peer (remote address). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"

#include "ackhold/peers.h"
#include "ackhold/rules.h"

const char *const ah_end_names[] = { "timer", "data", "read", "answer", "repair", "late", "unseen", NULL };

enum ah_end ah_hold_end(const struct ah_hold *h)
{
	if (h->unseen)
		return AH_END_UNSEEN;
	if (h->repair)
		return AH_END_REPAIR;
	if (h->timer)
		return AH_END_TIMER;
	if (h->quiet_ns <= AH_DATA_ENDED_MS * TK_NSEC_PER_MSEC)
		return AH_END_DATA;
	if (!h->armed)
		return AH_END_LATE;
	return h->answer ? AH_END_ANSWER : AH_END_READ;
}

bool ah_hold_waited(const struct ah_hold *h)
{
	uint64_t window = (uint64_t)AH_WAIT_RTTS * h->rtt_us * TK_NSEC_PER_USEC;

	if (window < AH_WAIT_FLOOR_MS * TK_NSEC_PER_MSEC)
		window = AH_WAIT_FLOOR_MS * TK_NSEC_PER_MSEC;
	return h->quiet_ns > window && h->resume_ns != AH_NO_RESUME && h->resume_ns <= window;
}

bool ah_hold_nagle(const struct ah_hold *h)
{
	return ah_hold_waited(h) && h->mss && h->last_len < h->mss;
}

static uint32_t addr_hash(const uint8_t a[16])
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (int i = 0; i < 16; i++)
		h = (h ^ a[i]) * 16777619u;
	return h;
}

static int grow_slots(struct ah_peers *ps)
{
	size_t n = ps->nslots ? ps->nslots * 2 : 64;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < ps->n; i++) {
		size_t j = addr_hash(ps->v[i].addr) & (n - 1);

		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(ps->slot);
	ps->slot = s;
	ps->nslots = n;
	return 0;
}

struct ah_peer *ah_peers_get(struct ah_peers *ps, const struct ah_id *id)
{
	size_t j;

	/* at most half full, so a probe ends at an empty slot */
	if (2 * (ps->n + 1) > ps->nslots && grow_slots(ps))
		return NULL;
	for (j = addr_hash(id->raddr) & (ps->nslots - 1); ps->slot[j]; j = (j + 1) & (ps->nslots - 1))
		if (!memcmp(ps->v[ps->slot[j] - 1].addr, id->raddr, 16))
			return &ps->v[ps->slot[j] - 1];
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 32;
		struct ah_peer *v = realloc(ps->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		ps->v = v;
		ps->cap = cap;
	}
	memset(&ps->v[ps->n], 0, sizeof(ps->v[0]));
	memcpy(ps->v[ps->n].addr, id->raddr, 16);
	ps->v[ps->n].family = id->family;
	ps->v[ps->n].port = id->lport;
	memcpy(ps->v[ps->n].laddr, id->laddr, 16);
	ps->slot[j] = (uint32_t)++ps->n;
	return &ps->v[ps->n - 1];
}

/*
 * minute's bucket of a ring, cleared when it held an older minute; NULL
 * when it holds a newer one: a hold is written at the flow's next segment,
 * which may come minutes after its ACK, and one older than the ring is
 * past the window (it counts since the start only)
 */
static struct ah_harm *bucket(struct ah_harm_minute *ring, uint64_t minute)
{
	struct ah_harm_minute *b = &ring[minute % (AH_WINDOW_MIN + 1)];

	if (b->minute > minute)
		return NULL;
	if (b->minute != minute) {
		memset(&b->h, 0, sizeof(b->h));
		b->minute = minute;
	}
	return &b->h;
}

#define ONE(f) +1
_Static_assert(sizeof(struct ah_harm) == (0 AH_HARM_FIELDS(ONE)) * sizeof(uint64_t),
	       "AH_HARM_FIELDS lists every field of struct ah_harm");
#undef ONE

void ah_harm_add(struct ah_harm *dst, const struct ah_harm *src)
{
#define ADD(f) dst->f += src->f;
	AH_HARM_FIELDS(ADD)
#undef ADD
}

void ah_harm_sub(struct ah_harm *dst, const struct ah_harm *src)
{
#define SUB(f) dst->f -= src->f;
	AH_HARM_FIELDS(SUB)
#undef SUB
}

static void harm_add(struct ah_harm *s, const struct ah_hold *h, enum ah_end end)
{
	if (!s)
		return;
	s->holds++;
	s->timer_holds += end == AH_END_TIMER;
	s->held_ns += h->hold_ns;
	if (!ah_hold_waited(h))
		return;
	s->waits++;
	s->waited_ns += h->quiet_ns;
	s->nagle += ah_hold_nagle(h);
}

/* a hold the timer or the application ended: into the host's and the
 * peer's sums, since the start and in the ACK's minute */
static void add_harm(struct ah_peers *ps, struct ah_peer *p, const struct ah_hold *h, enum ah_end end)
{
	uint64_t minute = h->ack_ns / AH_NSEC_PER_MIN;

	harm_add(&ps->total, h, end);
	harm_add(bucket(ps->win, minute), h, end);
	harm_add(bucket(p->win, minute), h, end);
}

void ah_peers_window(const struct ah_peers *ps, const struct ah_peer *peer, uint64_t now_ns, struct ah_harm *out)
{
	const struct ah_harm_minute *ring = peer ? peer->win : ps->win;
	uint64_t now = now_ns / AH_NSEC_PER_MIN;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i <= AH_WINDOW_MIN; i++) {
		const struct ah_harm *h = &ring[i].h;

		if (ring[i].minute > now || ring[i].minute + AH_WINDOW_MIN <= now)
			continue;
		ah_harm_add(out, h);
	}
}

int ah_peers_add_hold(struct ah_peers *ps, const struct ah_id *id, const struct ah_hold *h)
{
	struct ah_peer *p = ah_peers_get(ps, id);
	enum ah_end end = ah_hold_end(h);

	if (!p)
		return -1;
	p->port = id->lport;
	memcpy(p->laddr, id->laddr, 16);
	p->holds++;
	ps->ends[end]++;
	switch (end) {
	case AH_END_DATA:
		p->data_holds++;
		return 0; /* the sender was sending: it neither waited nor was held back */
	case AH_END_REPAIR:
		p->repair_holds++;
		return 0; /* the loss held it, not this host */
	case AH_END_LATE:
		p->late_holds++;
		return 0; /* no delayed ACK was scheduled: not the ACK policy's */
	case AH_END_UNSEEN:
		p->unseen_holds++;
		return 0; /* its end, and so its length, not known */
	case AH_END_TIMER:
		p->timer_holds++;
		break;
	case AH_END_READ:
	case AH_END_ANSWER:
		p->app_holds++;
		break;
	}
	add_harm(ps, p, h, end);
	p->held_ns += h->hold_ns;
	if (h->hold_ns > p->max_hold_ns)
		p->max_hold_ns = h->hold_ns;
	if (!ah_hold_waited(h))
		return 0;
	p->waits++;
	p->waited_ns += h->quiet_ns;
	p->nagle += ah_hold_nagle(h);
	return 0;
}

int ah_peers_add_totals(struct ah_peers *ps, const struct ah_id *id, const struct ah_totals *t)
{
	struct ah_peer *p = ah_peers_get(ps, id);

	if (!p)
		return -1;
	if (!p->holds) {
		p->port = id->lport;
		memcpy(p->laddr, id->laddr, 16);
	}
	p->flows++;
	p->segs += t->segs;
	p->bytes += t->bytes;
	p->acks += t->acks;
	p->timer_acks += t->timer_acks;
	if (t->first_ns && t->last_ns > t->first_ns)
		p->time_ns += t->last_ns - t->first_ns;
	return 0;
}

static double share(uint64_t part, uint64_t whole)
{
	if (!whole)
		return 0;
	return part >= whole ? 1.0 : (double)part / (double)whole;
}

double ah_peer_held_share(const struct ah_peer *p)
{
	return share(p->held_ns, p->time_ns);
}

double ah_peer_waited_share(const struct ah_peer *p)
{
	return share(p->waited_ns, p->time_ns);
}

static int by_harm(const void *a, const void *b)
{
	const struct ah_peer *x = *(struct ah_peer *const *)a, *y = *(struct ah_peer *const *)b;

	if (x->held_ns != y->held_ns)
		return x->held_ns > y->held_ns ? -1 : 1;
	if (x->waited_ns != y->waited_ns)
		return x->waited_ns > y->waited_ns ? -1 : 1;
	return memcmp(x->addr, y->addr, 16);
}

struct ah_peer **ah_peers_ranked(const struct ah_peers *ps)
{
	struct ah_peer **r = malloc((ps->n ? ps->n : 1) * sizeof(*r));

	if (!r)
		return NULL;
	for (size_t i = 0; i < ps->n; i++)
		r[i] = &ps->v[i];
	qsort(r, ps->n, sizeof(*r), by_harm);
	return r;
}

void ah_peers_free(struct ah_peers *ps)
{
	free(ps->v);
	free(ps->slot);
	memset(ps, 0, sizeof(*ps));
}

const char *ah_addr_text(const uint8_t a[16], uint16_t family, char *buf, size_t len)
{
	uint8_t m[16] = { [10] = 0xff, [11] = 0xff };

	if (family == AF_INET6)
		return cli_fmt_v6mapped(a, buf, len);
	memcpy(m + 12, a, 4);
	return cli_fmt_v6mapped(m, buf, len);
}
