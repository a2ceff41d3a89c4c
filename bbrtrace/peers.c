// SPDX-License-Identifier: GPL-2.0-only
/* Harm by peer, over the trace and minute by minute over a rolling window. */
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/peers.h"

#define RING (BT_WINDOW_MIN + 1)

void bt_peers_init(struct bt_peers *p, uint64_t max)
{
	memset(p, 0, sizeof(*p));
	bt_flowtab_init(&p->t, max);
}

static void peer_free(void *v, void *ctx)
{
	(void)ctx;
	free(v);
}

void bt_peers_free(struct bt_peers *p)
{
	bt_flowtab_each(&p->t, peer_free, NULL);
	bt_flowtab_free(&p->t);
}

static uint64_t addr_key(const uint8_t a[16])
{
	uint64_t hi, lo;

	memcpy(&hi, a, 8);
	memcpy(&lo, a + 8, 8);
	return hi * 0x9e3779b97f4a7c15ull ^ lo;
}

/* the peer of addr, or NULL; *clash: another address has its key (two
 * addresses in 2^64: that one is then untracked) */
static struct bt_peer *lookup(const struct bt_peers *p, const uint8_t addr[16], uint64_t *key, bool *clash)
{
	struct bt_peer *peer;

	*key = addr_key(addr);
	peer = bt_flowtab_get(&p->t, *key);
	*clash = peer && memcmp(peer->addr, addr, 16);
	return *clash ? NULL : peer;
}

struct bt_peer *bt_peers_flow_begins(struct bt_peers *p, const uint8_t addr[16], uint16_t port,
				     const uint8_t local[16], uint64_t t_ns)
{
	struct bt_harm *h[4];
	uint64_t key;
	bool clash;
	struct bt_peer *peer = lookup(p, addr, &key, &clash);

	if (clash) {
		p->untracked++;
	} else if (!peer) {
		peer = calloc(1, sizeof(*peer));
		if (!peer || bt_flowtab_put(&p->t, key, peer)) {
			free(peer);
			peer = NULL;
			p->untracked++;
		} else {
			memcpy(peer->addr, addr, 16);
		}
	}
	if (peer) {
		memcpy(peer->local, local, 16);
		peer->port = port;
		peer->live_flows++;
	}
	for (unsigned int i = 0, n = bt_peers_targets(p, peer, t_ns, h); i < n; i++)
		h[i]->flows++;
	return peer;
}

void bt_peers_flow_ends(struct bt_peers *p, struct bt_peer *peer)
{
	(void)p;
	if (peer && peer->live_flows)
		peer->live_flows--;
}

/* minute's bucket of a ring, cleared when it held an older minute */
static struct bt_harm *bucket(struct bt_harm_minute *ring, uint64_t minute)
{
	struct bt_harm_minute *b = &ring[minute % RING];

	if (b->minute != minute) {
		memset(b, 0, sizeof(*b));
		b->minute = minute;
	}
	return &b->h;
}

unsigned int bt_peers_targets(struct bt_peers *p, struct bt_peer *peer, uint64_t t_ns,
			      struct bt_harm *out[4])
{
	uint64_t minute = t_ns / BT_NSEC_PER_MIN;

	out[0] = &p->total;
	out[1] = bucket(p->win, minute);
	if (!peer)
		return 2;
	peer->last_ns = t_ns;
	out[2] = &peer->total;
	out[3] = bucket(peer->win, minute);
	return 4;
}

static void harm_add(struct bt_harm *to, const struct bt_harm *h)
{
	for (int i = 0; i < BT_NCAUSES; i++) {
		to->collapses[i] += h->collapses[i];
		to->throttling[i] += h->throttling[i];
	}
	to->throttled_ns += h->throttled_ns;
	to->late_bytes += h->late_bytes;
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		to->stalls[i] += h->stalls[i];
		to->stalled_ns[i] += h->stalled_ns[i];
	}
	for (int i = 0; i < BT_NSTALL_ENDS; i++)
		to->nagle_ended[i] += h->nagle_ended[i];
	to->flows += h->flows;
	to->active_ns += h->active_ns;
}

void bt_peers_window(const struct bt_peers *p, const struct bt_peer *peer, uint64_t now_ns,
		     struct bt_harm *out)
{
	const struct bt_harm_minute *ring = peer ? peer->win : p->win;
	uint64_t now = now_ns / BT_NSEC_PER_MIN;

	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < RING; i++)
		if (ring[i].minute <= now && ring[i].minute + BT_WINDOW_MIN > now)
			harm_add(out, &ring[i].h);
}

uint64_t bt_harm_ns(const struct bt_harm *h)
{
	return h->throttled_ns + h->stalled_ns[BT_STALL_NAGLE] + h->stalled_ns[BT_STALL_RWND];
}

struct expire_ctx {
	struct bt_peers *p;
	uint64_t now_ns;
	uint64_t keys[64];
	unsigned int n;
};

static void find_idle(void *v, void *ctx)
{
	const struct bt_peer *peer = v;
	struct expire_ctx *e = ctx;

	if (e->n < 64 && !peer->live_flows && peer->last_ns + BT_WINDOW_MIN * BT_NSEC_PER_MIN < e->now_ns)
		e->keys[e->n++] = addr_key(peer->addr);
}

/* the idle peers go 64 at a time (the table cannot change while it is walked) */
void bt_peers_expire(struct bt_peers *p, uint64_t now_ns)
{
	struct expire_ctx e = { p, now_ns, { 0 }, 0 };

	do {
		e.n = 0;
		bt_flowtab_each(&p->t, find_idle, &e);
		for (unsigned int i = 0; i < e.n; i++)
			free(bt_flowtab_del(&p->t, e.keys[i]));
	} while (e.n == 64);
}

struct each_ctx {
	void (*fn)(const struct bt_peer *peer, void *ctx);
	void *ctx;
};

static void each_one(void *v, void *ctx)
{
	struct each_ctx *e = ctx;

	e->fn(v, e->ctx);
}

void bt_peers_each(const struct bt_peers *p, void (*fn)(const struct bt_peer *peer, void *ctx), void *ctx)
{
	struct each_ctx e = { fn, ctx };

	bt_flowtab_each(&p->t, each_one, &e);
}
