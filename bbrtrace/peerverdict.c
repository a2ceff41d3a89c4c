// SPDX-License-Identifier: GPL-2.0-only
/* The verdict by peer: the peers that need a fix, worst first, each with its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtext.h"
#include "bbrtrace/peerverdict.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/vtext.h"
#include "cli.h"
#include "common.h"
#include "record.h"

static uint64_t sum(const uint64_t *v, int n)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* the peer's throttling is worth acting on (the host verdict's floors) */
static bool throttling_matters(const struct bt_harm *h)
{
	return h->late_bytes >= BT_FIX_MIN_LATE_BYTES ||
	       h->throttled_ns >= (uint64_t)BT_FIX_MIN_THROTTLED_MS * TK_NSEC_PER_MSEC ||
	       h->throttling[BT_CAUSE_DELAYED_ACK] >= BT_FIX_DELACK_RECURS;
}

/* its Nagle or window stalls held its data long enough to act on */
static bool stalls_matter(const struct bt_harm *h)
{
	return h->stalled_ns[BT_STALL_NAGLE] + h->stalled_ns[BT_STALL_RWND] >=
	       (uint64_t)BT_STALL_FIX_MIN_MS * TK_NSEC_PER_MSEC;
}

static bool needs_fix(const struct bt_harm *h)
{
	return throttling_matters(h) || stalls_matter(h);
}

/* the cause with most throttling collapses */
static int main_cause(const struct bt_harm *h)
{
	int best = -1;

	for (int i = 0; i < BT_NCAUSES; i++)
		if (h->throttling[i] && (best < 0 || h->throttling[i] > h->throttling[best]))
			best = i;
	return best;
}

/* what to do for the peer: its delayed ACKs, its Nagle holds, its path */
static void fix_of(struct bt_peer_rank *r)
{
	const struct bt_harm *h = &r->h;
	char peer[BT_ADDR_STR], local[BT_ADDR_STR];
	int cause = main_cause(h);

	cli_fmt_v6mapped(r->addr, peer, sizeof(peer));
	cli_fmt_v6mapped(r->local, local, sizeof(local));
	r->fix[0] = '\0';
	if (throttling_matters(h) && h->throttling[BT_CAUSE_DELAYED_ACK])
		bt_fix_delack(r->fix, sizeof(r->fix), peer, local, r->port);
	else if (stalls_matter(h) && h->stalled_ns[BT_STALL_NAGLE] >= h->stalled_ns[BT_STALL_RWND])
		bt_fix_nagle(r->fix, sizeof(r->fix), local, peer, r->port, bt_nagle_ack_ended(h->nagle_ended));
	else if (stalls_matter(h))
		snprintf(r->fix, sizeof(r->fix), "the receiver %s reads faster, or a larger receive buffer",
			 peer);
	else if (cause == BT_CAUSE_LOSS_POLICER)
		bt_fix_policer(r->fix, sizeof(r->fix), peer);
	else if (cause == BT_CAUSE_RATE_DROP)
		snprintf(r->fix, sizeof(r->fix), "none on the hosts: the path to %s delivered less", peer);
}

/* "delayed ACKs throttled its streams 10 times (59 ms, 29 kB), Nagle held them 20 times (1.2 s)" */
static void harm_clause(char *buf, size_t cap, const struct bt_harm *h)
{
	char a[32], b[32];
	const char *sep = "";
	int cause = main_cause(h);
	uint64_t thr = sum(h->throttling, BT_NCAUSES);

	if (thr) {
		vt_us(a, sizeof(a), h->throttled_ns / TK_NSEC_PER_USEC);
		vt_bytes(b, sizeof(b), h->late_bytes);
		vt_cat(buf, cap, "%s throttled its streams %llu %s (%s, %s held back)",
		       cause == BT_CAUSE_DELAYED_ACK ? "delayed ACKs" : bt_cause_labels[cause],
		       (unsigned long long)thr, tk_plural(thr, "time", "times"), a, b);
		sep = ", ";
	}
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		if ((i != BT_STALL_NAGLE && i != BT_STALL_RWND) || !h->stalls[i])
			continue;
		vt_us(a, sizeof(a), h->stalled_ns[i] / TK_NSEC_PER_USEC);
		vt_cat(buf, cap, "%s%s held them %llu %s (%s)", sep,
		       i == BT_STALL_NAGLE ? "Nagle" : "its window", (unsigned long long)h->stalls[i],
		       tk_plural(h->stalls[i], "time", "times"), a);
		sep = ", ";
	}
}

struct collect {
	const struct bt_peers *p;
	uint64_t now_ns;
	struct bt_peer_verdict *pv;
};

/* a harmed peer past the top adds to the rest */
static void rest_add(struct bt_peer_verdict *pv, const struct bt_harm *h)
{
	for (int k = 0; k < BT_NCAUSES; k++)
		pv->rest.throttling[k] += h->throttling[k];
	pv->rest.throttled_ns += h->throttled_ns;
	pv->rest.late_bytes += h->late_bytes;
	for (int k = 0; k < BT_NSTALL_CAUSES; k++)
		pv->rest.stalled_ns[k] += h->stalled_ns[k];
}

static int worse(const struct bt_peer_rank *a, const struct bt_harm *h)
{
	uint64_t x = bt_harm_ns(&a->h), y = bt_harm_ns(h);

	return x != y ? x > y : a->h.late_bytes >= h->late_bytes;
}

/* one peer into the ranking: the top keeps the worst, the others add up */
static void rank_one(const struct bt_peer *peer, void *ctx)
{
	struct collect *c = ctx;
	struct bt_peer_verdict *pv = c->pv;
	struct bt_peer_rank r;
	unsigned int i;

	if (c->now_ns)
		bt_peers_window(c->p, peer, c->now_ns, &r.h);
	else
		r.h = peer->total;
	if (!r.h.flows && !peer->live_flows && !bt_harm_ns(&r.h))
		return;
	pv->peers++;
	if (!needs_fix(&r.h))
		return;
	pv->harmed++;
	memcpy(r.addr, peer->addr, 16);
	memcpy(r.local, peer->local, 16);
	r.port = peer->port;
	for (i = 0; i < pv->ntop && worse(&pv->top[i], &r.h); i++)
		;
	if (i == BT_VERDICT_TOP_PEERS) {
		rest_add(pv, &r.h);
		return;
	}
	if (pv->ntop == BT_VERDICT_TOP_PEERS) { /* the last of the top joins the rest */
		rest_add(pv, &pv->top[BT_VERDICT_TOP_PEERS - 1].h);
		pv->ntop--;
	}
	memmove(&pv->top[i + 1], &pv->top[i], (pv->ntop - i) * sizeof(pv->top[0]));
	pv->top[i] = r;
	pv->ntop++;
}

void bt_peer_verdict_build(struct bt_peer_verdict *pv, const struct bt_peers *p, uint64_t now_ns)
{
	struct collect c = { p, now_ns, pv };
	char peer[BT_ADDR_STR], held[32];

	memset(pv, 0, sizeof(*pv));
	pv->window_ns = now_ns ? BT_WINDOW_MIN * BT_NSEC_PER_MIN : 0;
	bt_peers_each(p, rank_one, &c);
	if (!pv->harmed)
		return;
	vt_cat(pv->text, sizeof(pv->text), "By peer, worst first, %u of %u %s need a fix: ", pv->harmed,
	       pv->peers, tk_plural(pv->peers, "peer", "peers"));
	for (unsigned int i = 0; i < pv->ntop; i++) {
		struct bt_peer_rank *r = &pv->top[i];

		fix_of(r);
		cli_fmt_v6mapped(r->addr, peer, sizeof(peer));
		vt_cat(pv->text, sizeof(pv->text), "%s%s: ", i ? "; " : "", peer);
		harm_clause(pv->text, sizeof(pv->text), &r->h);
		if (r->fix[0])
			vt_cat(pv->text, sizeof(pv->text), "; fix: %s", r->fix);
	}
	if (pv->harmed > pv->ntop) {
		vt_us(held, sizeof(held), bt_harm_ns(&pv->rest) / TK_NSEC_PER_USEC);
		vt_cat(pv->text, sizeof(pv->text), "; %u more %s held back for %s in all",
		       pv->harmed - pv->ntop, tk_plural(pv->harmed - pv->ntop, "peer was", "peers were"), held);
	}
	vt_cat(pv->text, sizeof(pv->text), ".");
}

void bt_peer_verdict_json(const struct bt_peer_verdict *pv, char *buf, size_t cap)
{
	char peer[BT_ADDR_STR], local[BT_ADDR_STR], fix[600];

	snprintf(buf, cap, "[");
	for (unsigned int i = 0; i < pv->ntop; i++) {
		const struct bt_peer_rank *r = &pv->top[i];

		cli_fmt_v6mapped(r->addr, peer, sizeof(peer));
		cli_fmt_v6mapped(r->local, local, sizeof(local));
		rec_json_escape(fix, sizeof(fix), r->fix);
		vt_cat(buf, cap,
		       "%s{\"peer\":\"%s\",\"port\":%u,\"local\":\"%s\",\"held_s\":%.3f,\"throttled_s\":%.3f,"
		       "\"late_bytes\":%.0f,\"throttling\":%llu,\"delayed_ack\":%llu,\"nagle_stalls\":%llu,"
		       "\"nagle_stalled_s\":%.3f,\"fix\":%s%s%s}",
		       i ? "," : "", peer, r->port, local, (double)bt_harm_ns(&r->h) / TK_NSEC_PER_SEC_F, (double)r->h.throttled_ns / TK_NSEC_PER_SEC_F,
		       r->h.late_bytes, (unsigned long long)sum(r->h.throttling, BT_NCAUSES),
		       (unsigned long long)r->h.throttling[BT_CAUSE_DELAYED_ACK],
		       (unsigned long long)r->h.stalls[BT_STALL_NAGLE], (double)r->h.stalled_ns[BT_STALL_NAGLE] / TK_NSEC_PER_SEC_F,
		       r->fix[0] ? "\"" : "", r->fix[0] ? fix : "null", r->fix[0] ? "\"" : "");
	}
	vt_cat(buf, cap, "]");
}
