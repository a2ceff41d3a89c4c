// SPDX-License-Identifier: GPL-2.0-only
/*
 * The threads of a run: each one waits for the common start, runs its loop
 * (a worker's, chosen by its lookup method, or the sharded design's
 * dispatcher, which parses and hands each packet to its TEID's worker), and
 * takes its TSC, CPU and hardware-counter figures around it.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "hw.h"
#include "path_ring.h"
#include "path_worker.h"

uint64_t up_tsc_cost;

void up_measure_tsc_cost(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 1000; i++) {
		uint64_t a = up_tsc(), b = up_tsc();

		if (b - a < best)
			best = b - a;
	}
	up_tsc_cost = best;
}

static void dispatcher_loop(struct up_worker *d)
{
	struct up_engine *e = d->e;
	unsigned int batch = e->c->batch, W = e->c->workers, n;
	struct up_mbuf *m[UP_MAX_BATCH], *out[UP_MAX_WORKERS][UP_MAX_BATCH];
	unsigned int cnt[UP_MAX_WORKERS];
	uint64_t bursts = 0;

	for (;;) {
		bool timed = (bursts++ & SAMPLE_MASK) == 0;
		uint64_t t = timed ? up_tsc() : 0;

		n = rx_burst(&d->rx, m, batch);
		if (!n)
			break;
		stamp(d, UP_ST_RX, timed, &t);
		parse_burst(d, m, n);
		stamp(d, UP_ST_PARSE, timed, &t);
		if (timed) {
			d->st_pkts[UP_ST_RX] += n;
			d->st_pkts[UP_ST_PARSE] += n;
		}
		memset(cnt, 0, W * sizeof(cnt[0]));
		for (unsigned int i = 0; i < n; i++)
			if (m[i]->status == GTPU_OK) {
				unsigned int wk = engine_owner(e, m[i]->pkt.teid);

				out[wk][cnt[wk]++] = m[i];
			}
		for (unsigned int wk = 0; wk < W; wk++) {
			unsigned int done = 0;

			while (done < cnt[wk]) {
				done += ring_enqueue(&e->rings[wk], (void *const *)out[wk] + done,
						     cnt[wk] - done);
				if (done < cnt[wk])
					cpu_relax();
			}
		}
		d->pkts += n;
	}
	__atomic_store_n(&e->dispatch_done, 1, __ATOMIC_RELEASE);
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * TK_SEC_PER_NSEC_F;
}

void *up_thread_main(void *arg)
{
	struct up_worker *w = arg;
	struct up_perf perf;
	double c0;

	if (w->cpu >= 0)
		up_pin(w->cpu);
	struct up_engine *e = w->e;

	if (e->c->perf)
		up_perf_open(&perf);
	else
		perf.fd_llc = perf.fd_dtlb = -1;
	pthread_mutex_lock(&e->lock);
	e->ready++;
	pthread_cond_broadcast(&e->cv);
	while (!e->go)
		pthread_cond_wait(&e->cv, &e->lock);
	pthread_mutex_unlock(&e->lock);
	if (e->abort) {
		up_perf_stop(&perf, &w->llc, &w->dtlb);
		return NULL;
	}
	if (w->e->c->perf)
		up_perf_start(&perf);
	c0 = thread_cpu_s();
	w->tsc0 = up_tsc();
	if (w->dispatcher)
		dispatcher_loop(w);
	else
		w->loop(w);
	w->tsc1 = up_tsc();
	w->cpu_s = thread_cpu_s() - c0;
	if (w->e->c->perf)
		up_perf_stop(&perf, &w->llc, &w->dtlb);
	else
		w->llc = w->dtlb = UINT64_MAX;
	return NULL;
}
