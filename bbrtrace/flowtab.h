/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The detector's flows, keyed by a 64-bit key (a socket cookie, or a hash of
 * the 4-tuple): an open-addressing hash table of pointers that grows as
 * flows come, up to a cap, and forgets a flow only when told (its socket
 * closed). Nothing is ever evicted to make room: past the cap, or without
 * memory, a new flow is refused and the caller counts it as untracked.
 */
#ifndef BBRTRACE_FLOWTAB_H
#define BBRTRACE_FLOWTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* a slot: its key beside its value, so that a probe reads one cache line */
struct bt_flowtab_slot {
	uint64_t key;
	void *val;          /* NULL: the slot is empty */
};

struct bt_flowtab {
	struct bt_flowtab_slot *slot; /* cap slots */
	size_t cap, n;      /* cap: a power of two, kept at least twice n */
	size_t max;         /* flows at most */
};

/* max: the cap on flows (at least 1) */
void bt_flowtab_init(struct bt_flowtab *t, size_t max);
/* the value stored under key, or NULL */
void *bt_flowtab_get(const struct bt_flowtab *t, uint64_t key);
/* the key's home slot (cap > 0): a 64-bit mix, since cookies are sequential */
static inline size_t bt_flowtab_home(const struct bt_flowtab *t, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (t->cap - 1);
}

/* a hint for a key looked up soon: its home slot, fetched into the cache
 * (inline: the hints run for every event, and must cost less than the
 * misses they hide) */
static inline void bt_flowtab_prefetch(const struct bt_flowtab *t, uint64_t key)
{
	if (t->cap)
		tk_prefetch(&t->slot[bt_flowtab_home(t, key)]);
}

/* the value under key when its home slot holds it, else NULL: a lookup that
 * never probes on, for hints only (bt_flowtab_get is the lookup) */
static inline void *bt_flowtab_peek(const struct bt_flowtab *t, uint64_t key)
{
	const struct bt_flowtab_slot *s;

	if (!t->cap)
		return NULL;
	s = &t->slot[bt_flowtab_home(t, key)];
	return s->key == key ? s->val : NULL;
}

/* stores val (not NULL) under key, which must be absent: 0, or -1 when the
 * table is at its cap or out of memory (nothing is stored) */
int bt_flowtab_put(struct bt_flowtab *t, uint64_t key, void *val);
/* removes key; returns its value, or NULL when it was absent */
void *bt_flowtab_del(struct bt_flowtab *t, uint64_t key);
/* calls fn on every value, in no particular order */
void bt_flowtab_each(const struct bt_flowtab *t, void (*fn)(void *val, void *ctx), void *ctx);
/* frees the table, not the values */
void bt_flowtab_free(struct bt_flowtab *t);

#endif
