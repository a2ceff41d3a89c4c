/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inline session table: its buckets hold the sessions' hot parts
 * (struct up_sess_inline, in an up_pool of layout inline), so the one line
 * a lookup reads is the line the packet then updates, and a packet waits
 * on one random line instead of two (bucket, then session).
 *
 * A line holds UPI_WAYS entries of 32 bytes. A session lives in its home
 * line (upt_hash() of the TEID, reduced to the line count) or, when that
 * is full, in one of the lines after it (linear probing). A lookup ends at
 * a line with an entry never taken: a TEID further on would have been put
 * there. A released entry is a tombstone (UPI_TOMBSTONE in rules): free
 * for an insert, but a probe goes on past it. At UPI_LOAD sessions per
 * entry (0.8 per line), 93% of the sessions are in their home line (a
 * Poisson count of homes per line, at most two staying); the others cost
 * a second line, prefetched a step after the first. At 0.5 (90%, 141 MB
 * for 2.2M sessions) and 0.33 (95%, 211 MB) it measured a little slower
 * here.
 *
 * Sessions never move once inserted. TEID 0 is not a key (it marks a free
 * entry).
 */
#ifndef UP_INLINE_H
#define UP_INLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"
#include "table.h"

#define UPI_WAYS 2              /* entries to a 64-byte line */
#define UPI_LOAD 0.4            /* sessions per entry */
#define UPI_TOMBSTONE 0xff      /* a free entry's rules when it was ever taken */
#define UPI_PROBE (UPT_MISS - 1) /* not in its home line, which says to go on */

_Static_assert(UPI_WAYS * sizeof(struct up_sess_inline) == 64, "a line of entries is a cache line");

/* lines for n sessions at UPI_LOAD */
uint32_t upi_lines(uint32_t n);

static inline uint32_t upi_home(const struct up_pool *p, uint32_t teid)
{
	return (uint32_t)(((uint64_t)upt_hash(teid) * p->lines) >> 32);
}

/* the entries of a line that hold teid, as a bit mask */
static inline unsigned int upi_match(const struct up_pool *p, uint32_t line, uint32_t teid)
{
	const struct up_sess_inline *e = &p->ent[(size_t)line * UPI_WAYS];

	return (unsigned int)(e[0].teid == teid) | (unsigned int)(e[1].teid == teid) << 1;
}

/* a line with an entry never taken: a probe for any TEID ends there */
static inline bool upi_ends(const struct up_pool *p, uint32_t line)
{
	const struct up_sess_inline *e = &p->ent[(size_t)line * UPI_WAYS];

	return (e[0].teid == 0 && e[0].rules != UPI_TOMBSTONE) |
	       (e[1].teid == 0 && e[1].rules != UPI_TOMBSTONE);
}

/* at the home line (prefetched): teid's entry, UPT_MISS, or UPI_PROBE when the lines after may hold it */
static inline uint32_t upi_at_home(const struct up_pool *p, uint32_t home, uint32_t teid)
{
	unsigned int m = upi_match(p, home, teid);

	if (__builtin_expect(m != 0 && teid != 0, 1))
		return home * UPI_WAYS + (uint32_t)__builtin_ctz(m);
	if (__builtin_expect(upi_ends(p, home) || teid == 0, 1))
		return UPT_MISS;
	return UPI_PROBE;
}

/* past the home line: the lines after it, to the first that ends a probe */
uint32_t upi_probe(const struct up_pool *p, uint32_t home, uint32_t teid);

/* teid's entry, or UPT_MISS */
static inline uint32_t upi_lookup(const struct up_pool *p, uint32_t teid)
{
	uint32_t home = upi_home(p, teid), e = upi_at_home(p, home, teid);

	return e == UPI_PROBE ? upi_probe(p, home, teid) : e;
}

/* a free entry for teid, zeroed but for its key, and its carry zeroed: into *entry.
 * 0; -EINVAL (TEID 0), -EEXIST, -ENOSPC */
int upi_insert(struct up_pool *p, uint32_t teid, uint32_t *entry);
/* release teid's entry (its counters are gone: read them first). 0 or -ENOENT */
int upi_delete(struct up_pool *p, uint32_t teid);

/* which low halves wrapped: bits for packets, bytes, drops */
#define UPI_WRAP_PKTS 1u
#define UPI_WRAP_BYTES 2u
#define UPI_WRAP_DROPS 4u
void upi_carry(const struct up_pool *p, uint32_t e, unsigned int wrap, bool shared);

/*
 * A packet's usage on entry e: the low halves here, and when one wraps,
 * its carry into the entry's up_inline_carry, out of line (a wrap of the
 * 32-bit byte count comes once per 4 GiB of a session's traffic). The
 * total, high << 32 | low, is exact; a reader between the wrap and the
 * carry sees it 2^32 short for that moment.
 */
static inline void upi_count(const struct up_pool *p, uint32_t e, uint32_t len, uint32_t drop)
{
	struct up_sess_inline *s = &p->ent[e];
	uint32_t pkts = s->pkts_lo + 1, bytes = s->bytes_lo + len;
	uint16_t drops = (uint16_t)(s->drops_lo + drop);
	unsigned int wrap = (pkts == 0 ? UPI_WRAP_PKTS : 0) | (bytes < len ? UPI_WRAP_BYTES : 0) |
			    (drop && drops == 0 ? UPI_WRAP_DROPS : 0);

	s->pkts_lo = pkts;
	s->bytes_lo = bytes;
	s->drops_lo = drops;
	if (__builtin_expect(wrap != 0, 0))
		upi_carry(p, e, wrap, false);
}

/* the same, the entry shared between workers: atomic adds, and the carry from the one that wrapped */
static inline void upi_count_shared(const struct up_pool *p, uint32_t e, uint32_t len, uint32_t drop)
{
	struct up_sess_inline *s = &p->ent[e];
	uint32_t pkts = __atomic_fetch_add(&s->pkts_lo, 1, __ATOMIC_RELAXED);
	uint32_t bytes = __atomic_fetch_add(&s->bytes_lo, len, __ATOMIC_RELAXED);
	uint16_t drops = drop ? __atomic_fetch_add(&s->drops_lo, 1, __ATOMIC_RELAXED) : 0;
	unsigned int wrap = (pkts == UINT32_MAX ? UPI_WRAP_PKTS : 0) |
			    ((uint32_t)(bytes + len) < len ? UPI_WRAP_BYTES : 0) |
			    (drop && drops == UINT16_MAX ? UPI_WRAP_DROPS : 0);

	if (__builtin_expect(wrap != 0, 0))
		upi_carry(p, e, wrap, true);
}

#endif
