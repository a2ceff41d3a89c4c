// SPDX-License-Identifier: GPL-2.0-only
/*
 * One run, stage by stage: check its configuration, set it up
 * (path_setup.c), start its threads together and join them, sum their
 * tallies into the run's figures, collect and check the counters, take it
 * down. Also the names of the designs, tables, layouts and stages.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hw.h"
#include "path_run.h"
#include "path_worker.h"

const char *const up_design_names[] = { "global", "sharded", "steered", NULL };
const char *const up_table_names[] = { "own", "rte_hash", "slot", NULL };
const char *const up_layout_names[] = { "fat", "split", "inline", NULL };
const char *const up_stage_names[] = { "rx", "parse", "lookup", "rules", "counters", "decap", NULL };

const char *up_cfg_refused(const struct up_run_cfg *c)
{
	if (c->table == UP_TABLE_SLOT && c->layout != UP_LAYOUT_SPLIT)
		return "--table slot: the TEID names a hot line of the split layout (not --layout fat or inline)";
	if (c->layout == UP_LAYOUT_INLINE && c->table != UP_TABLE_OWN)
		return "--layout inline: the hot lines are the buckets of the project's own table (--table own)";
	return NULL;
}

/* runs so far in this process */
static unsigned int run_count;

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
	if (!up_tsc_cost)
		up_measure_tsc_cost();
	r->cfg = *c;
	r->tsc_hz = up_tsc_hz();
	r->sessions = t->n_sess;
	r->packets = c->packets;
	r->llc_per_pkt = r->dtlb_per_pkt = NAN;
	s->run_no = ++run_count;
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
		if (pthread_create(&s->tid[started], NULL, up_thread_main, &e->w[started])) {
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
	r->mpps = (double)c->packets / r->wall_s / TK_MEGA_F;
	r->cycles_per_pkt = (double)cyc / (double)c->packets;
	for (int k = 0; k < UP_NSTAGES; k++) {
		r->stage_cycles[k] = stp[k] ? (double)st[k] / (double)stp[k] : 0;
		stsum += r->stage_cycles[k];
	}
	r->other_cycles = r->cycles_per_pkt - stsum;
	r->identity_ratio = r->mpps * TK_MEGA_F * r->cycles_per_pkt / ((double)e->nthreads * hz);
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
	if (s->c->verify && up_verify(t, s->c, s->r, g))
		rc = run_nomem(s);
out:
	free(mine.pkts);
	free(mine.bytes);
	free(mine.drops);
	return rc;
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
