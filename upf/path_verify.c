// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a run sent, packet by packet, in generation order (up_walk, which
 * --pcap-out writes too), and --verify: each session's counters against
 * what was sent to it, and the drops against the bad packets sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_run.h"
#include "path_worker.h"

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

int up_verify(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
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
