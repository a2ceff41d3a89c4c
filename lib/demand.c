// SPDX-License-Identifier: GPL-2.0-only
/* A flow's demand: its delivery over the last window, from checkpoints. */
#include <stdlib.h>
#include <string.h>

#include "demand.h"
#include "common.h"

#define DEMAND_FIRST_CAP 4
#define DEMAND_WINDOW_NS ((uint64_t)BT_DEMAND_WINDOW_MS * TK_NSEC_PER_MSEC)

/* the i-th oldest checkpoint kept (cap is a power of two) */
static const struct bt_checkpoint *cp_at(const struct bt_demand *d, unsigned int i)
{
	return &d->cp[(d->head - d->n + i) & (d->cap - 1)];
}

/* a ring twice as large (up to BT_DEMAND_SLOTS), oldest first; false without memory */
static bool grow(struct bt_demand *d)
{
	unsigned int cap = d->cap ? 2 * d->cap : DEMAND_FIRST_CAP;
	struct bt_checkpoint *cp;

	cp = malloc(cap * sizeof(*cp));
	if (!cp)
		return false;
	for (unsigned int i = 0; i < d->n; i++)
		cp[i] = *cp_at(d, i);
	free(d->cp);
	d->cp = cp;
	d->cap = cap;
	d->head = d->n % cap;
	return true;
}

/* a checkpoint now; the oldest goes once the ring has its full size */
static bool checkpoint(struct bt_demand *d, uint64_t t_ns)
{
	if (d->n == d->cap && d->cap < BT_DEMAND_SLOTS && !grow(d) && !d->cap)
		return false;
	d->cp[d->head] = (struct bt_checkpoint){ t_ns, d->acked_bytes, d->samples, d->app_limited };
	d->head = (d->head + 1) & (d->cap - 1);
	if (d->n < d->cap)
		d->n++;
	return true;
}

/* the oldest checkpoint within the window before now_ns; NULL when none */
static const struct bt_checkpoint *window_start(const struct bt_demand *d, uint64_t now_ns)
{
	for (unsigned int i = 0; i < d->n; i++) {
		const struct bt_checkpoint *c = cp_at(d, i);

		if (now_ns - c->t_ns <= DEMAND_WINDOW_NS)
			return c;
	}
	return NULL;
}

/* bt_demand_measured, and where its window began (*since_ns; 0 without one) */
static uint64_t measure(const struct bt_demand *d, uint64_t now_ns, bool *app_limited,
			uint64_t *since_ns)
{
	const struct bt_checkpoint *from = window_start(d, now_ns);
	uint64_t span, n;

	*since_ns = from ? from->t_ns : 0;
	*app_limited = false;
	if (!from)
		return 0;
	/* a young flow (or one back from idle): what it delivered, spread over the
	 * minimum span at least; a burst ACKed in microseconds is no demand */
	span = now_ns - from->t_ns;
	if (span < BT_DEMAND_MIN_SPAN_MS * TK_NSEC_PER_MSEC)
		span = BT_DEMAND_MIN_SPAN_MS * TK_NSEC_PER_MSEC;
	n = d->samples - from->samples;
	*app_limited = n && (double)(d->app_limited - from->app_limited) >= BT_DEMAND_APP_SHARE * (double)n;
	return (uint64_t)((double)(d->acked_bytes - from->acked_bytes) * 8e9 / (double)span);
}

uint64_t bt_demand_measured(const struct bt_demand *d, uint64_t now_ns, bool *app_limited)
{
	uint64_t since;

	return measure(d, now_ns, app_limited, &since);
}

/*
 * Drops the checkpoints before the first one within the window at now_ns.
 * A flow's samples come in time order, so its window only moves on: no
 * later measure starts from them, and window_start() finds its checkpoint
 * first instead of walking past them (a flow that ACKs every 50 ms kept
 * 128 checkpoints, 6.4 s, to use the last 21).
 */
static void prune(struct bt_demand *d, uint64_t now_ns)
{
	while (d->n) {
		const struct bt_checkpoint *c = cp_at(d, 0);

		if (c->t_ns > now_ns || now_ns - c->t_ns <= DEMAND_WINDOW_NS)
			return;
		d->n--;
	}
}

bool bt_demand_track(struct bt_demand *d, const struct bt_sample *s)
{
	bool app = false, took;

	if (d->una_seen && (int32_t)(s->snd_una - d->last_una) > 0)
		d->acked_bytes += (uint32_t)(s->snd_una - d->last_una);
	d->una_seen = true;
	d->last_una = s->snd_una;
	d->samples++;
	d->app_limited += s->is_app_limited;
	if (d->n && s->t_ns - d->last.t_ns < BT_DEMAND_STEP_NS)
		return false;
	took = checkpoint(d, s->t_ns);
	prune(d, s->t_ns);
	d->last.t_ns = s->t_ns;
	d->last.bps = measure(d, s->t_ns, &app, &d->last.since_ns);
	d->last.app_limited = app;
	return took;
}

uint64_t bt_demand_recent(const struct bt_demand *d)
{
	return d->last.bps;
}

void bt_demand_free(struct bt_demand *d)
{
	free(d->cp);
	memset(d, 0, sizeof(*d));
}
