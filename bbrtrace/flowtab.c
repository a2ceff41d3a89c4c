// SPDX-License-Identifier: GPL-2.0-only
/* The detector's flow table: open addressing, linear probing, growth by doubling. */
#include <stdlib.h>

#include "bbrtrace/flowtab.h"

#define FLOWTAB_MIN_CAP 64

void bt_flowtab_init(struct bt_flowtab *t, size_t max)
{
	*t = (struct bt_flowtab){ .max = max ? max : 1 };
}

/* the slot holding key, or the empty slot where it would go */
static size_t find(const struct bt_flowtab *t, uint64_t key)
{
	size_t i = bt_flowtab_home(t, key);

	while (t->slot[i].val && t->slot[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return i;
}

void *bt_flowtab_get(const struct bt_flowtab *t, uint64_t key)
{
	return t->cap ? t->slot[find(t, key)].val : NULL;
}

/* moves every entry into a table of cap slots; -1 without memory */
static int resize(struct bt_flowtab *t, size_t cap)
{
	struct bt_flowtab n = { .cap = cap, .n = t->n, .max = t->max };

	n.slot = calloc(cap, sizeof(*n.slot));
	if (!n.slot)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].val)
			n.slot[find(&n, t->slot[i].key)] = t->slot[i];
	bt_flowtab_free(t);
	*t = n;
	return 0;
}

int bt_flowtab_put(struct bt_flowtab *t, uint64_t key, void *val)
{
	size_t i;

	if (t->n >= t->max)
		return -1;
	/* at most half full: probes stay short */
	if (2 * (t->n + 1) > t->cap && resize(t, t->cap ? 2 * t->cap : FLOWTAB_MIN_CAP))
		return -1;
	i = find(t, key);
	t->slot[i] = (struct bt_flowtab_slot){ key, val };
	t->n++;
	return 0;
}

/*
 * Backward-shift deletion: the entries after the hole that would have been
 * found past it move back into it, so that no tombstone is left and every
 * probe still meets its key before an empty slot.
 */
void *bt_flowtab_del(struct bt_flowtab *t, uint64_t key)
{
	size_t hole, i, mask = t->cap - 1;
	void *val;

	if (!t->cap)
		return NULL;
	hole = find(t, key);
	val = t->slot[hole].val;
	if (!val)
		return NULL;
	t->slot[hole].val = NULL;
	t->n--;
	for (i = (hole + 1) & mask; t->slot[i].val; i = (i + 1) & mask) {
		size_t h = bt_flowtab_home(t, t->slot[i].key);

		/* entry i may move back to the hole when its home is not in (hole, i] */
		if (((i - h) & mask) >= ((i - hole) & mask)) {
			t->slot[hole] = t->slot[i];
			t->slot[i].val = NULL;
			hole = i;
		}
	}
	return val;
}

void bt_flowtab_each(const struct bt_flowtab *t, void (*fn)(void *val, void *ctx), void *ctx)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].val)
			fn(t->slot[i].val, ctx);
}

void bt_flowtab_free(struct bt_flowtab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}
