// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session table's operations: buckets sized for the load (no power of
 * two), a probe past the home bucket only while its overflow count says so,
 * an insert and a delete that keep those counts, and a prefetched bulk lookup.
 */
#include <errno.h>
#include <string.h>

#include "hw.h"
#include "table.h"

int upt_init(struct upt *t, uint32_t max_keys, bool huge)
{
	uint64_t nb = (uint64_t)((double)max_keys / (UPT_SLOTS * UPT_LOAD)) + 1;

	memset(t, 0, sizeof(*t));
	if (nb > UINT32_MAX / 2)
		return -ENOMEM;
	t->nb = (uint32_t)nb;
	t->bytes = (size_t)nb * sizeof(struct upt_bucket);
	t->huge = huge;
	t->b = up_mem_alloc(t->bytes, huge);
	if (!t->b)
		return -ENOMEM;
	memset(t->b, 0, t->bytes);
	return 0;
}

void upt_free(struct upt *t)
{
	up_mem_free(t->b, t->bytes);
	memset(t, 0, sizeof(*t));
}

static inline uint32_t next_bucket(const struct upt *t, uint32_t i)
{
	return i + 1 == t->nb ? 0 : i + 1;
}

uint32_t upt_lookup_probe(const struct upt *t, const struct upt_bucket *b, uint32_t teid)
{
	uint32_t i = (uint32_t)(b - t->b);

	/* b->overflow > 0: keys homed here or earlier went further along */
	for (uint32_t n = 0; n < t->nb && t->b[i].overflow; n++) {
		unsigned int m;

		i = next_bucket(t, i);
		m = upt_match(&t->b[i], teid);
		if (m)
			return t->b[i].val[__builtin_ctz(m)];
	}
	return UPT_MISS;
}

int upt_insert(struct upt *t, uint32_t teid, uint32_t val)
{
	uint32_t home, i;

	if (!teid)
		return -EINVAL;
	if (upt_lookup(t, teid) != UPT_MISS)
		return -EEXIST;
	home = upt_home(t, upt_hash(teid));
	i = home;
	for (uint32_t n = 0; n < t->nb; n++, i = next_bucket(t, i)) {
		struct upt_bucket *b = &t->b[i];
		unsigned int free = upt_match(b, 0);

		if (!free)
			continue;
		b->teid[__builtin_ctz(free)] = teid;
		b->val[__builtin_ctz(free)] = val;
		/* every full bucket passed on the way now leads further */
		for (uint32_t j = home; j != i; j = next_bucket(t, j))
			t->b[j].overflow++;
		t->count++;
		return 0;
	}
	return -ENOSPC;
}

int upt_delete(struct upt *t, uint32_t teid)
{
	uint32_t home, i;

	if (!teid)
		return -ENOENT;
	home = upt_home(t, upt_hash(teid));
	i = home;
	for (uint32_t n = 0; n < t->nb; n++, i = next_bucket(t, i)) {
		struct upt_bucket *b = &t->b[i];
		unsigned int m = upt_match(b, teid);

		if (m) {
			b->teid[__builtin_ctz(m)] = 0;
			b->val[__builtin_ctz(m)] = 0;
			for (uint32_t j = home; j != i; j = next_bucket(t, j))
				t->b[j].overflow--;
			t->count--;
			return 0;
		}
		if (!b->overflow)
			break;
	}
	return -ENOENT;
}

void upt_lookup_bulk(const struct upt *t, const uint32_t *teids, unsigned int n, uint32_t *vals)
{
	const struct upt_bucket *b[64];

	while (n) {
		unsigned int k = n < 64 ? n : 64;

		for (unsigned int i = 0; i < k; i++) {
			b[i] = upt_bucket_of(t, teids[i]);
			up_prefetch(b[i]);
		}
		for (unsigned int i = 0; i < k; i++)
			vals[i] = upt_lookup_at(t, b[i], teids[i]);
		teids += k;
		vals += k;
		n -= k;
	}
}
