/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The state of one run, as up_run() (path_run.c) steps through it: what
 * setup builds (path_setup.c), what the threads run on, and what
 * run_free() takes down; and the check of its counters (path_verify.c).
 */
#ifndef UP_PATH_RUN_H
#define UP_PATH_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "path.h"
#include "path_worker.h"
#include "table.h"
#include "table_rte.h"

#define PIN_CPUS_MAX 256         /* CPUs a run spreads its threads over, at most */

struct owner {
	unsigned int nw;                /* pools */
	uint32_t *of;                   /* traffic session -> pool */
	uint32_t *local;                /* traffic session -> index in its pool */
	uint32_t *count;                /* sessions per pool */
	uint32_t **gidx;                /* pool, local index -> traffic session */
};

/* what a run sets up, in the order it does, and run_free() takes down */
struct run_state {
	const struct up_traffic *t;
	const struct up_run_cfg *c;
	struct up_result *r;
	char *err;
	size_t errlen;
	unsigned int run_no;            /* the run's number: names its rte_hash tables apart */
	unsigned int npools;            /* one shared pool (global), or one per worker */
	struct owner o;
	struct up_pool *pools;
	struct upt *own;
	struct upt_rte **rte;
	uint32_t **pos_lists;           /* steered over several workers: each one's positions */
	struct up_engine e;
	pthread_t *tid;
	bool sync_init;
	int cpus[PIN_CPUS_MAX];
	int ncpu;
};

/* "out of memory" into the run's err; -1 */
int run_nomem(struct run_state *s);

/* the session pools and their tables, empty; 0 or -1 with err */
int pools_setup(struct run_state *s);
/* every session into its owner's pool and table; then the huge pages they got */
int sessions_insert(struct run_state *s);
/* the threads, their rings (sharded), their receive contexts and loops */
int workers_setup(struct run_state *s);
/* everything setup made, taken down; for a run set up in part too */
void run_free(struct run_state *s);

/* --verify: got's counters against the traffic the run sent, into r; 0, or -1 out of memory */
int up_verify(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
	      const struct up_counters *got);

#endif
