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

struct bt_reorder {
	struct bt_event *ev;          /* the n waiting events, in arrival order */
	struct bt_event *spare;       /* where the ones that wait on move */
	struct bt_reorder_key *keys, *tmp; /* the sort's: time and place of each */
	size_t *runs;                 /* the sort's: where each ordered run starts */
	size_t n, cap;
};

typedef int (*bt_reorder_fn)(void *ctx, const struct bt_event *e);

/* 0, or -ENOMEM */
int bt_reorder_push(struct bt_reorder *r, const struct bt_event *e);
/* hands fn every event with t_ns < before_ns, oldest first; returns how many */
size_t bt_reorder_release(struct bt_reorder *r, uint64_t before_ns, bt_reorder_fn fn, void *ctx);
void bt_reorder_free(struct bt_reorder *r);

#endif
