// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold's /metrics: the host's counts since the start, and the worst
 * peers over the window, each metric's name and meaning written once.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "prom.h"

#include "ackhold/metrics.h"

/* the peers of the window, worst first (most held, then most waited), and
 * the rest summed as "other" in h[k] */
struct page {
	uint32_t n, k;
	char (*addr)[64];
	struct ah_harm *h;
	struct ah_harm total;          /* the host's since the start */
	uint64_t ends[AH_NENDS];
	uint64_t peers;
	uint64_t flows_ended;          /* their totals came: each of their holds did before */
};

static bool worse(const struct ah_harm *a, const struct ah_harm *b)
{
	return a->held_ns != b->held_ns ? a->held_ns > b->held_ns : a->waited_ns > b->waited_ns;
}

/* a peer's window into the page when it is among the k worst so far */
static void rank(struct page *pg, const struct ah_peer *p, const struct ah_harm *h)
{
	uint32_t i = pg->n;

	if (!h->holds)
		return;
	while (i > 0 && worse(h, &pg->h[i - 1]))
		i--;
	if (i == pg->k)
		return;
	if (pg->n == pg->k)
		pg->n--;
	memmove(&pg->h[i + 1], &pg->h[i], (pg->n - i) * sizeof(pg->h[0]));
	memmove(&pg->addr[i + 1], &pg->addr[i], (pg->n - i) * sizeof(pg->addr[0]));
	pg->h[i] = *h;
	ah_addr_text(p->addr, p->family, pg->addr[i], sizeof(pg->addr[i]));
	pg->n++;
}

/* the page's figures, under the lock */
static void build(struct page *pg, const struct ah_peers *ps, uint64_t now_ns)
{
	struct ah_harm *o = &pg->h[pg->k];
	struct ah_harm h;

	for (size_t i = 0; i < ps->n; i++) {
		ah_peers_window(ps, &ps->v[i], now_ns, &h);
		rank(pg, &ps->v[i], &h);
		pg->flows_ended += ps->v[i].flows;
	}
	ah_peers_window(ps, NULL, now_ns, o);
	for (uint32_t i = 0; i < pg->n; i++)
		ah_harm_sub(o, &pg->h[i]);
	strcpy(pg->addr[pg->k], "other");
	pg->total = ps->total;
	memcpy(pg->ends, ps->ends, sizeof(pg->ends));
	pg->peers = ps->n;
}

static double secs(uint64_t ns)
{
	return (double)ns * TK_SEC_PER_NSEC_F;
}

#define WINDOW "in the last " TK_STR(AH_WINDOW_MIN) " minutes"

/* the peer families: gauges over the window, the k worst and "other" */
static void render_peers(struct prom_buf *b, const struct page *pg)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "ackhold_peer_held_seconds", "time this host held the peer's ACKs, the delayed-ACK timer's and "
					       "the application's holds, " WINDOW },
		{ "ackhold_peer_timer_holds", "holds the delayed-ACK timer ended, " WINDOW },
		{ "ackhold_peer_waited_seconds", "time the peer's senders waited on this host's ACKs, " WINDOW },
		{ "ackhold_peer_nagle_waits", "waits with Nagle's signature (a short segment, then silence "
					      "until the ACK), " WINDOW },
	};

	for (unsigned int f = 0; f < ARRAY_SIZE(fam); f++) {
		prom_family(b, fam[f].name, PROM_GAUGE, fam[f].help);
		for (uint32_t i = 0; i <= pg->n; i++) {
			uint32_t j = i < pg->n ? i : pg->k;
			const struct ah_harm *h = &pg->h[j];
			struct prom_label l = { "peer", pg->addr[j] };
			double v[] = { secs(h->held_ns), (double)h->timer_holds, secs(h->waited_ns), (double)h->nagle };

			prom_sample(b, fam[f].name, &l, 1, v[f]);
		}
	}
}

/* a family of one unlabelled sample, its name written once */
static void one(struct prom_buf *b, const char *name, enum prom_type type, const char *help, double v)
{
	prom_family(b, name, type, help);
	prom_sample(b, name, NULL, 0, v);
}

#define HOLDS "ackhold_holds_total"

/* the host's counters since the start: the kernel's, then the holds' */
static void render_host(struct prom_buf *b, const struct page *pg, const uint64_t cnt[AH_CNT_ALL])
{
	static const struct {
		const char *name, *help;
		int idx;
	} kern[] = {
		{ "ackhold_segments_total", "data segments received on the traced ports", AH_CNT_SEGS },
		{ "ackhold_timer_acks_total", "ACKs the delayed-ACK timer sent for traced flows "
					      "(TcpExtDelayedACKs counts the host's)", AH_CNT_TIMER_FIRED },
		{ "ackhold_unseen_holds_total", "holds whose ACK, or a segment with it, went by without the "
					       "tracepoints showing it: not judged", AH_CNT_UNSEEN },
		{ "ackhold_lost_records_total", "records the ring buffer had no room for: holds not counted",
		  AH_CNT_LOST },
		{ "ackhold_untracked_segments_total", "data segments of flows past --max-flows: not traced",
		  AH_CNT_UNTRACKED },
		{ "ackhold_skipped_runs_total", "runs of ackhold's programs the kernel skipped (one already "
						"running on that CPU)", AH_CNT_SKIPPED },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(kern); i++)
		one(b, kern[i].name, PROM_COUNTER, kern[i].help, (double)cnt[kern[i].idx]);
	one(b, "ackhold_acks_total", PROM_COUNTER, "ACKs this host sent that covered new data",
	    (double)(cnt[AH_CNT_ACKS] + cnt[AH_CNT_UNSEEN]));
	prom_family(b, HOLDS, PROM_COUNTER, "holds reported (--min-hold or longer, or the timer's), by what ended them");
	for (int e = 0; e < AH_NENDS; e++) {
		struct prom_label l = { "ended_by", ah_end_names[e] };

		prom_sample_u64(b, HOLDS, &l, 1, pg->ends[e]);
	}
	one(b, "ackhold_held_seconds_total", PROM_COUNTER,
	    "time the delayed-ACK timer's and the application's holds held ACKs", secs(pg->total.held_ns));
	one(b, "ackhold_waited_seconds_total", PROM_COUNTER, "time senders waited on this host's ACKs",
	    secs(pg->total.waited_ns));
	one(b, "ackhold_nagle_waits_total", PROM_COUNTER, "waits with Nagle's signature", (double)pg->total.nagle);
	one(b, "ackhold_peers", PROM_GAUGE, "peers seen since the start", (double)pg->peers);
	one(b, "ackhold_flows_ended_total", PROM_COUNTER,
	    "traced flows that ended (their sockets destroyed), every hold of theirs counted", (double)pg->flows_ended);
}

int ah_metrics_render(struct prom_buf *b, void *ctx)
{
	const struct ah_metrics *m = ctx;
	struct page pg = { .k = m->k };
	uint64_t cnt[AH_CNT_ALL];

	pg.h = calloc(m->k + 1, sizeof(*pg.h));
	pg.addr = calloc(m->k + 1, sizeof(*pg.addr));
	if (!pg.h || !pg.addr) {
		free(pg.h);
		free(pg.addr);
		return -1;
	}
	pthread_mutex_lock(m->lock);
	build(&pg, m->peers, tk_mono_ns());
	pthread_mutex_unlock(m->lock);
	ah_probe_counters(m->probe, cnt);
	cnt[AH_CNT_SKIPPED] = ah_probe_misses(m->probe);
	render_host(b, &pg, cnt);
	render_peers(b, &pg);
	free(pg.h);
	free(pg.addr);
	return b->failed ? -1 : 0;
}
