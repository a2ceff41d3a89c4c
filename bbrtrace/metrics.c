// SPDX-License-Identifier: GPL-2.0-only
/*
 * What --prometheus serves while bbrtrace traces: /metrics, the detector's
 * counts and the worst peers over the window, and /verdict, the window
 * verdict as JSON; each built under the detector's lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbrtrace/backend.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/metrics.h"
#include "bbrtrace/peers.h"
#include "cli.h"
#include "common.h"
#include "prom.h"
#include "record.h"

/*
 * The metric names, in Prometheus's base units (bytes, seconds): BBR's
 * estimate is in bit/s, so the gauge is it divided by 8
 */
#define METRIC_SAMPLES "bbrtrace_samples_total"
#define METRIC_LOST "bbrtrace_lost_events_total"
#define METRIC_UNTRACKED "bbrtrace_untracked_samples_total"
#define METRIC_FLOWS "bbrtrace_flows"
#define METRIC_COLLAPSES "bbrtrace_collapses_total"
#define METRIC_PEER_ACTIVE "bbrtrace_peer_active_seconds"
#define METRIC_PEER_HELD "bbrtrace_peer_held_seconds"
#define METRIC_PEER_THROTTLED "bbrtrace_peer_throttled_seconds"
#define METRIC_PEER_DELACK "bbrtrace_peer_delayed_ack_throttles"
#define METRIC_PEER_NAGLE "bbrtrace_peer_nagle_stalled_seconds"
#define METRIC_THROTTLING "bbrtrace_throttling_collapses_total"
#define METRIC_THROTTLED "bbrtrace_throttled_seconds_total"
#define METRIC_LATE "bbrtrace_late_bytes_total"
#define METRIC_WRITES "bbrtrace_writes_total"
#define METRIC_LOST_WRITES "bbrtrace_lost_writes_total"
#define METRIC_STALLS "bbrtrace_stalls_total"
#define METRIC_STALLED "bbrtrace_stalled_seconds_total"

/* the worst peers over the window, and the others summed: /metrics' peer
 * families, built under the detector's lock and written after it */
struct peers_page {
	unsigned int n, k;            /* peers ranked; room for k, and "other" after them */
	char (*addr)[48];
	struct bt_harm *h;
};

struct peers_rank {
	const struct bt_peers *p;
	uint64_t now_ns;
	unsigned int k;
	struct peers_page *pg;
};

/* one peer into the page: the K worst by time held back (then by active
 * time, so that quiet busy peers come before idle ones), the rest in "other" */
static void rank_peer(const struct bt_peer *peer, void *ctx)
{
	struct peers_rank *c = ctx;
	struct peers_page *pg = c->pg;
	struct bt_harm h;
	unsigned int i;

	bt_peers_window(c->p, peer, c->now_ns, &h);
	for (i = 0; i < pg->n; i++) {
		uint64_t a = bt_harm_ns(&pg->h[i]), b = bt_harm_ns(&h);

		if (b > a || (b == a && h.active_ns > pg->h[i].active_ns))
			break;
	}
	if (i == c->k)
		return;
	if (pg->n == c->k)
		pg->n--;
	memmove(&pg->h[i + 1], &pg->h[i], (pg->n - i) * sizeof(pg->h[0]));
	memmove(&pg->addr[i + 1], &pg->addr[i], (pg->n - i) * sizeof(pg->addr[0]));
	pg->h[i] = h;
	cli_fmt_v6mapped(peer->addr, pg->addr[i], sizeof(pg->addr[i]));
	pg->n++;
}

/* the window's K worst peers, and "other": the host's window less theirs */
static void peers_page_build(struct peers_page *pg, const struct bt_run *r, uint64_t now_ns)
{
	const struct bt_peers *p = bt_detect_peers(r->det);
	struct peers_rank c = { p, now_ns, r->metrics_peers, pg };
	struct bt_harm *o;

	pg->n = 0;
	pg->k = r->metrics_peers;
	o = &pg->h[pg->k];
	memset(pg->h, 0, (pg->k + 1) * sizeof(*pg->h));
	bt_peers_each(p, rank_peer, &c);
	bt_peers_window(p, NULL, now_ns, o);
	for (unsigned int i = 0; i < pg->n; i++) {
		o->active_ns -= pg->h[i].active_ns;
		o->throttled_ns -= pg->h[i].throttled_ns;
		o->throttling[BT_CAUSE_DELAYED_ACK] -= pg->h[i].throttling[BT_CAUSE_DELAYED_ACK];
		for (int k = 0; k < BT_NSTALL_CAUSES; k++)
			o->stalled_ns[k] -= pg->h[i].stalled_ns[k];
	}
	snprintf(pg->addr[pg->k], sizeof(pg->addr[0]), "other");
}

/* the peer families: per peer, over the window, gauges */
static void render_peers(struct prom_buf *pb, const struct bt_run *r, const struct peers_page *pg)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ METRIC_PEER_ACTIVE, "time the peer's flows were active, summed over them, in the last "
				      TK_STR(BT_WINDOW_MIN) " minutes" },
		{ METRIC_PEER_HELD, "time the peer's streams were held back (throttled, or stalled by "
				    "Nagle or its window), summed over its flows, in the window" },
		{ METRIC_PEER_THROTTLED, "time the peer's flows were throttled by collapses, in the window" },
		{ METRIC_PEER_DELACK, "collapses caused by the peer's delayed ACKs that throttled a flow, "
				      "in the window" },
		{ METRIC_PEER_NAGLE, "time the peer's streams were held by Nagle's algorithm, in the window" },
	};

	(void)r;
	for (unsigned int f = 0; f < ARRAY_SIZE(fam); f++) {
		prom_family(pb, fam[f].name, PROM_GAUGE, fam[f].help);
		for (unsigned int i = 0; i <= pg->n; i++) {
			unsigned int k = i < pg->n ? i : pg->k;
			const struct bt_harm *h = &pg->h[k];
			struct prom_label l = { "peer", pg->addr[k] };
			double v[] = { (double)h->active_ns / TK_NSEC_PER_SEC_F, (double)bt_harm_ns(h) / TK_NSEC_PER_SEC_F,
				       (double)h->throttled_ns / TK_NSEC_PER_SEC_F, (double)h->throttling[BT_CAUSE_DELAYED_ACK],
				       (double)h->stalled_ns[BT_STALL_NAGLE] / TK_NSEC_PER_SEC_F };

			prom_sample(pb, fam[f].name, &l, 1, v[f]);
		}
	}
}

/* the /metrics page (--prometheus), on the server's thread */
int bt_metrics_render(struct prom_buf *pb, void *ctx)
{
	struct bt_run *r = ctx;
	struct bt_detect_stats st;
	struct peers_page peers_page = { 0 };

	peers_page.h = calloc(r->metrics_peers + 1, sizeof(*peers_page.h));
	peers_page.addr = calloc(r->metrics_peers + 1, sizeof(*peers_page.addr));
	if (!peers_page.h || !peers_page.addr) {
		free(peers_page.h);
		free(peers_page.addr);
		return -1;
	}
	pthread_mutex_lock(&r->lock);
	bt_detect_stats(r->det, &st);
	peers_page_build(&peers_page, r, tk_mono_ns());
	pthread_mutex_unlock(&r->lock);

	prom_family(pb, METRIC_SAMPLES, PROM_COUNTER, "BBR rate samples traced");
	prom_sample_u64(pb, METRIC_SAMPLES, NULL, 0, st.samples);
	prom_family(pb, METRIC_LOST, PROM_COUNTER,
		    "samples lost: the ring buffer was full, or bbr_main's entry and exit probes "
		    "could not be paired");
	prom_sample_u64(pb, METRIC_LOST, NULL, 0, bt_backend_samples_lost(r->b));
	prom_family(pb, METRIC_UNTRACKED, PROM_COUNTER,
		    "samples of flows the detector could not track (at --max-flows, or out of memory): "
		    "not judged");
	prom_sample_u64(pb, METRIC_UNTRACKED, NULL, 0, st.samples_untracked);
	prom_family(pb, METRIC_FLOWS, PROM_GAUGE, "flows the detector tracks now (their sockets are open)");
	prom_sample_u64(pb, METRIC_FLOWS, NULL, 0, st.flows_live);
	prom_family(pb, METRIC_COLLAPSES, PROM_COUNTER,
		    "collapses of BBR's bandwidth estimate, by cause");
	for (int i = 0; i < BT_NCAUSES; i++) {
		struct prom_label l = { "cause", bt_cause_names[i] };

		prom_sample_u64(pb, METRIC_COLLAPSES, &l, 1, st.collapses[i]);
	}
	prom_family(pb, METRIC_THROTTLING, PROM_COUNTER,
		    "collapses that throttled their flow (the pacing allowed under what it needed: need_bps), by cause");
	for (int i = 0; i < BT_NCAUSES; i++) {
		struct prom_label l = { "cause", bt_cause_names[i] };

		prom_sample_u64(pb, METRIC_THROTTLING, &l, 1, st.throttling[i]);
	}
	prom_family(pb, METRIC_THROTTLED, PROM_COUNTER, "time flows spent throttled, summed over flows");
	prom_sample(pb, METRIC_THROTTLED, NULL, 0, (double)st.throttled_ns / TK_NSEC_PER_SEC_F);
	prom_family(pb, METRIC_LATE, PROM_COUNTER,
		    "bytes the throttled flows' demand wanted that the pacing held back");
	prom_sample(pb, METRIC_LATE, NULL, 0, st.late_bytes);
	prom_family(pb, METRIC_WRITES, PROM_COUNTER, "writes of traced flows seen (the write tap, for stalls)");
	prom_sample_u64(pb, METRIC_WRITES, NULL, 0, st.writes);
	prom_family(pb, METRIC_LOST_WRITES, PROM_COUNTER,
		    "writes' events lost because the ring buffer was full");
	prom_sample_u64(pb, METRIC_LOST_WRITES, NULL, 0, bt_backend_counter(r->b, BT_CNT_LOST_WRITES));
	prom_family(pb, METRIC_STALLS, PROM_COUNTER,
		    "stalls of the sender: data written and not sent for 10 ms or more, by cause");
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		struct prom_label l = { "cause", bt_stall_cause_names[i] };

		prom_sample_u64(pb, METRIC_STALLS, &l, 1, st.stalls[i]);
	}
	prom_family(pb, METRIC_STALLED, PROM_COUNTER, "time senders spent stalled, by cause");
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		struct prom_label l = { "cause", bt_stall_cause_names[i] };

		prom_sample(pb, METRIC_STALLED, &l, 1, (double)st.stalled_ns[i] / TK_NSEC_PER_SEC_F);
	}
	render_peers(pb, r, &peers_page);
	free(peers_page.h);
	free(peers_page.addr);
	return pb->failed ? -1 : 0;
}

/* the window verdict (bbrtrace/verdict.h), built under the detector's lock */
void bt_metrics_window_verdict(struct bt_run *r, struct bt_verdict *v, uint64_t now_ns)
{
	pthread_mutex_lock(&r->lock);
	bt_detect_expire(r->det, now_ns);
	bt_verdict_build_window(v, r->det, now_ns);
	pthread_mutex_unlock(&r->lock);
}

/* /verdict: the window verdict record, as JSON */
int bt_metrics_verdict(struct prom_buf *pb, void *ctx)
{
	struct bt_run *r = ctx;
	struct bt_verdict *v = malloc(sizeof(*v));
	struct rec_writer *w;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc = -1;

	if (!v)
		return -1;
	bt_metrics_window_verdict(r, v, tk_mono_ns());
	f = open_memstream(&text, &len);
	w = f ? rec_writer_new(REC_JSON, f) : NULL;
	if (w) {
		rc = bt_verdict_write(w, v);
		rc = rec_writer_free(w) || rc ? -1 : 0;
	}
	if (f && fclose(f))
		rc = -1;
	if (!rc)
		rc = prom_buf_append_raw(pb, text);
	free(text);
	free(v);
	return rc;
}
