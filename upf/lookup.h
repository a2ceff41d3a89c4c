/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lookup paths: how a packet finds its session, and which of the
 * workers' loops (one per path, design and prefetching) a run's workers
 * run. A run picks its loop once, before its threads start.
 */
#ifndef UP_LOOKUP_H
#define UP_LOOKUP_H

#include "path.h"
#include "path_worker.h"

/* the loop a worker of c runs, a configuration up_cfg_refused() accepts */
up_loop_fn *up_lookup_loop(const struct up_run_cfg *c);

#endif
