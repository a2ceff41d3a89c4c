/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The session table: TEID -> session index, built for batched, prefetched
 * lookup.
 *
 * One lookup touches one cache line. A bucket is 64 bytes: 7 TEIDs, 7
 * values and an overflow count. A key lives in its home bucket (a
 * multiplicative hash, then a range reduction to any bucket count) or,
 * when that is full, in one of the next buckets (linear probing by
 * bucket). `overflow` counts the keys whose probe passes through a bucket,
 * so a lookup stops at the home bucket whenever overflow is 0. At the
 * default load (60% of slots) 2.8% of keys live outside their home bucket
 * (9.4% at 80%), and those cost a second line. Sizing never rounds to a
 * power of two, so the table stays near 64 * n / 4.2 bytes.
 *
 * A batch looks up in two passes: hash and prefetch every home bucket,
 * then compare. Up to 64 misses are then in flight instead of one.
 * TEID 0 is not a session key (it marks an empty slot); lookups of 0 miss.
 */
#ifndef UP_TABLE_H
#define UP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define UPT_MISS UINT32_MAX
#define UPT_SLOTS 7
#define UPT_LOAD 0.6

struct upt_bucket {
	uint32_t teid[UPT_SLOTS];
	uint32_t overflow;
	uint32_t val[UPT_SLOTS];
	uint32_t pad;
} __attribute__((aligned(64)));

struct upt {
	struct upt_bucket *b;
	uint32_t nb;            /* buckets */
	uint32_t count;         /* keys stored */
	size_t bytes;
	bool huge;
};

/* room for max_keys keys at UPT_LOAD; huge: THP. 0 or -ENOMEM */
int upt_init(struct upt *t, uint32_t max_keys, bool huge);
void upt_free(struct upt *t);
/* 0; -EINVAL for TEID 0; -EEXIST; -ENOSPC when every bucket is full */
int upt_insert(struct upt *t, uint32_t teid, uint32_t val);
/* 0 or -ENOENT */
int upt_delete(struct upt *t, uint32_t teid);
/* UPT_MISS when absent */
void upt_lookup_bulk(const struct upt *t, const uint32_t *teids, unsigned int n, uint32_t *vals);

static inline uint32_t upt_hash(uint32_t teid)
{
	return (uint32_t)(((uint64_t)teid * 0x9E3779B97F4A7C15ull) >> 32);
}

static inline uint32_t upt_home(const struct upt *t, uint32_t hash)
{
	return (uint32_t)(((uint64_t)hash * t->nb) >> 32);
}

static inline const struct upt_bucket *upt_bucket_of(const struct upt *t, uint32_t teid)
{
	return &t->b[upt_home(t, upt_hash(teid))];
}

/* slots of bucket b that hold teid, as a bit mask */
static inline unsigned int upt_match(const struct upt_bucket *b, uint32_t teid)
{
#if defined(__SSE2__)
	__m128i k = _mm_set1_epi32((int)teid);
	__m128i lo = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)b->teid), k);
	__m128i hi = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(b->teid + 4)), k);
	unsigned int m = (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
			 (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 4;

	return m & ((1u << UPT_SLOTS) - 1);
#else
	unsigned int m = 0;

	for (unsigned int i = 0; i < UPT_SLOTS; i++)
		m |= (unsigned int)(b->teid[i] == teid) << i;
	return m;
#endif
}

uint32_t upt_lookup_probe(const struct upt *t, const struct upt_bucket *b, uint32_t teid);

/* lookup in a bucket already located (and prefetched) with upt_bucket_of() */
static inline uint32_t upt_lookup_at(const struct upt *t, const struct upt_bucket *b, uint32_t teid)
{
	unsigned int m;

	if (__builtin_expect(teid == 0, 0))
		return UPT_MISS;
	m = upt_match(b, teid);
	if (__builtin_expect(m != 0, 1))
		return b->val[__builtin_ctz(m)];
	if (__builtin_expect(b->overflow == 0, 1))
		return UPT_MISS;
	return upt_lookup_probe(t, b, teid);
}

static inline uint32_t upt_lookup(const struct upt *t, uint32_t teid)
{
	return upt_lookup_at(t, upt_bucket_of(t, teid), teid);
}

#endif
