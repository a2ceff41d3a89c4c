/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The threads of a run: a worker (its input, pool, table and tallies), the
 * engine they share, and the parts of the data path every thread has:
 * which worker owns a TEID, the parse stage, and the sampled stage times.
 */
#ifndef UP_PATH_WORKER_H
#define UP_PATH_WORKER_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "gtpu_fast.h"
#include "hw.h"
#include "path.h"
#include "path_rx.h"
#include "table.h"
#include "table_rte.h"

#define SAMPLE_MASK 63u          /* stage times are taken on one burst in 64 */

/*
 * A polling thread spins, as a DPDK worker does; after many empty polls it
 * yields, so that a run with more threads than CPUs still makes progress.
 */
static inline void cpu_relax(void)
{
	static __thread unsigned int spins;

#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
	if (++spins % 4096 == 0)
		sched_yield();
}

struct up_engine;
struct up_worker;

/* a worker's whole run: one specialised loop per lookup method and design (lookup.h) */
typedef void up_loop_fn(struct up_worker *w);

struct up_worker {
	struct up_engine *e;
	unsigned int id;
	int cpu;
	bool dispatcher;
	struct up_rx rx;
	struct up_ring *in;     /* sharded worker: its ring */
	const struct upt *own;
	struct upt_rte *rte;
	struct up_pool *pool;
	/* slot table: the TEID's slot bits, and the session indexes this pool holds */
	uint32_t slot_mask, slot_base, slot_count;
	up_loop_fn *loop;
	/* results */
	uint64_t tsc0, tsc1;
	double cpu_s;
	uint64_t pkts, malformed, not_gtpu;
	uint64_t verdicts[8];   /* by enum verdict */
	uint64_t st[UP_NSTAGES], st_pkts[UP_NSTAGES];
	uint64_t llc, dtlb;
	uint64_t sink;
	uint64_t now_tick;      /* the QER clock, in ticks of 1024 TSC cycles */
	unsigned int clock_pkts; /* packets applied since it was read */
} __attribute__((aligned(64)));

struct up_engine {
	const struct up_run_cfg *c;
	const struct up_traffic *t;
	enum up_teids teids;
	struct up_slot_split split; /* slot-encoded TEIDs: which worker owns a slot */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned int ready;
	bool go, abort;
	unsigned int nthreads;
	struct up_worker *w;
	struct up_ring *rings;
	int dispatch_done;
};

/* a thread of the run: waits for the start, runs its loop (or the dispatcher's), takes its times */
void *up_thread_main(void *arg);

/* the worker that owns a TEID's session: by the steering hash, or by the range of its slot */
static inline unsigned int teid_owner(const struct up_traffic *t, enum up_teids teids,
				      const struct up_slot_split *split, unsigned int workers,
				      uint32_t teid)
{
	if (teids == UP_TEIDS_SLOT)
		return up_slot_owner(split, up_teid_index(t->plan.slot_mask, teid));
	return up_steer(teid, workers);
}

static inline unsigned int engine_owner(const struct up_engine *e, uint32_t teid)
{
	return teid_owner(e->t, e->teids, &e->split, e->c->workers, teid);
}

/* in this order: apply() computes a verdict by adding to V_NO_PDR */
enum verdict { V_NONE, V_NO_SESSION, V_NO_PDR, V_FAR_DROP, V_QER_DROP, V_FWD };
_Static_assert(UP_MAX_BATCH < 256, "apply() tallies verdicts in octets");

/* the parse stage; out of line for the reason rx_burst() is */
static __attribute__((noinline, unused)) void
parse_burst(struct up_worker *w, struct up_mbuf **m, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int rc = gtpu_parse_fast(m[i]->data, m[i]->len, &m[i]->pkt);

		if (__builtin_expect(rc == GTPU_FAST_NO, 0))
			rc = gtpu_parse_frame(m[i]->data, m[i]->len, &m[i]->pkt, NULL);

		m[i]->status = (int16_t)rc;
		if (rc < 0)
			w->malformed++;
		else if (rc > 0)
			w->not_gtpu++;
	}
}

/* what reading the TSC itself costs, taken out of each stage time; set by up_measure_tsc_cost() */
extern uint64_t up_tsc_cost;

void up_measure_tsc_cost(void);

static inline void stamp(struct up_worker *w, enum up_stage s, bool timed, uint64_t *t)
{
	if (timed) {
		uint64_t now = up_tsc();

		w->st[s] += now - *t > up_tsc_cost ? now - *t - up_tsc_cost : 0;
		*t = now;
	}
}

static inline void count_stage(struct up_worker *w, bool timed, enum up_stage s, unsigned int n)
{
	if (timed)
		w->st_pkts[s] += n;
}

#endif
