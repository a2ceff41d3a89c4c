/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Puts the events of all CPUs back in time order. The kernel side hands
 * events over in per-CPU batches, so a batch from one CPU can arrive after
 * younger events of another. Events wait here until the backend knows that
 * nothing older can still arrive (every CPU flushed), then leave sorted by
 * t_ns; events with equal t_ns keep their arrival order.
 */
#ifndef BBRTRACE_REORDER_H
#define BBRTRACE_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/contract/bbrtrace.h"

/*
 * The events between two steps of the hints: an event waits long enough to
 * leave the cache, and in time order the next ones lie anywhere in the
 * buffer, so release fetches event k + (stages + 1) x BT_REORDER_AHEAD while
 * it hands on event k, and runs the consumer's stage s for event
 * k + (stages - s) x BT_REORDER_AHEAD: each step's loads have a few events'
 * handling to arrive in.
 */
#define BT_REORDER_AHEAD 4

/* the stages of hints release runs (the consumer's, e.g. bbrtrace/detect.h's) */
#define BT_REORDER_STAGES 3

/* hints that the events in e[] are handed on soon: e[s] is the one due for
 * stage s (NULL: none now). Stage 0 comes first for an event, its last
 * stage BT_REORDER_AHEAD events before it is handed on; one call a step
 * runs every stage, for as many events (bt_reorder_set_ahead) */
typedef void (*bt_reorder_ahead_fn)(void *ctx, const struct bt_event *const e[BT_REORDER_STAGES]);

struct bt_reorder {
	struct bt_event *ev;          /* the n waiting events, in arrival order */
	struct bt_event *spare;       /* where the ones that wait on move */
	struct bt_reorder_key *keys, *tmp; /* the sort's: time and place of each */
	size_t *runs;                 /* the sort's: where each ordered run starts */
	size_t n, cap;
	bt_reorder_ahead_fn ahead;    /* NULL, or the consumer's hints ... */
	void *ahead_ctx;              /* ... and their ctx */
};

typedef int (*bt_reorder_fn)(void *ctx, const struct bt_event *e);

/* release runs ahead(ctx, ...) for the events it hands on soon; NULL: no
 * hints (the events themselves are fetched ahead all the same) */
void bt_reorder_set_ahead(struct bt_reorder *r, bt_reorder_ahead_fn ahead, void *ctx);
/* 0, or -ENOMEM */
int bt_reorder_push(struct bt_reorder *r, const struct bt_event *e);
/* hands fn every event with t_ns < before_ns, oldest first; returns how many */
size_t bt_reorder_release(struct bt_reorder *r, uint64_t before_ns, bt_reorder_fn fn, void *ctx);
void bt_reorder_free(struct bt_reorder *r);

#endif
