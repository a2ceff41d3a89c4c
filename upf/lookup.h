/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lookup methods: how a packet finds its session, and which lines that
 * touches. Each method is a file (lookup_own.c, lookup_rte.c,
 * lookup_inline.c, lookup_slot.c) with its steps and its worker loops
 * (path_loop.h), and one struct up_lookup that says which configurations
 * it runs and which of its loops runs each. A run picks its loop once,
 * before its threads start; nothing in a loop branches on the method.
 */
#ifndef UP_LOOKUP_H
#define UP_LOOKUP_H

#include <stdbool.h>

#include "path.h"
#include "path_worker.h"

struct up_lookup {
	/* whether this method is the one that runs c (asked in the order of lookup.c's table) */
	bool (*runs)(const struct up_run_cfg *c);
	/* which of its variants runs c: an index of loops */
	unsigned int (*variant)(const struct up_run_cfg *c);
	/* by variant: [from a ring (sharded)][shared pool (global)][prefetching] */
	up_loop_fn *const (*loops)[2][2][2];
};

extern const struct up_lookup up_lookup_own;    /* the own table's bucket, then the session */
extern const struct up_lookup up_lookup_rte;    /* rte_hash, then the session */
extern const struct up_lookup up_lookup_inline; /* the bucket is the session's hot line */
extern const struct up_lookup up_lookup_slot;   /* the TEID names the hot line */

/* the loop a worker of c runs, a configuration up_cfg_refused() accepts */
up_loop_fn *up_lookup_loop(const struct up_run_cfg *c);

#endif
