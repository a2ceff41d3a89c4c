// SPDX-License-Identifier: GPL-2.0-only
/*
 * The inline table's operations: a probe past the home line (to a line with
 * an entry never taken), an insert, a delete that leaves a tombstone, and the
 * counters' high words carried when they wrap.
 */
#include <errno.h>
#include <string.h>

#include "inline.h"

uint32_t upi_lines(uint32_t n)
{
	return (uint32_t)((double)n / (UPI_WAYS * UPI_LOAD)) + 1;
}

static inline uint32_t next_line(const struct up_pool *p, uint32_t i)
{
	return i + 1 == p->lines ? 0 : i + 1;
}

uint32_t upi_probe(const struct up_pool *p, uint32_t home, uint32_t teid)
{
	uint32_t i = home;

	if (!teid)
		return UPT_MISS;
	for (uint32_t n = 1; n < p->lines && !upi_ends(p, i); n++) {
		unsigned int m;

		i = next_line(p, i);
		m = upi_match(p, i, teid);
		if (m)
			return i * UPI_WAYS + (uint32_t)__builtin_ctz(m);
	}
	return UPT_MISS;
}

int upi_insert(struct up_pool *p, uint32_t teid, uint32_t *entry)
{
	uint32_t i;

	if (!teid)
		return -EINVAL;
	if (upi_lookup(p, teid) != UPT_MISS)
		return -EEXIST;
	i = upi_home(p, teid);
	for (uint32_t n = 0; n < p->lines; n++, i = next_line(p, i))
		for (uint32_t e = i * UPI_WAYS; e < (i + 1) * UPI_WAYS; e++) {
			if (p->ent[e].teid)
				continue;
			memset(&p->ent[e], 0, sizeof(p->ent[e]));
			memset(&p->carry[e], 0, sizeof(p->carry[e]));
			p->ent[e].teid = teid;
			p->stored++;
			*entry = e;
			return 0;
		}
	return -ENOSPC;
}

int upi_delete(struct up_pool *p, uint32_t teid)
{
	uint32_t e = upi_lookup(p, teid);

	if (e == UPT_MISS)
		return -ENOENT;
	memset(&p->ent[e], 0, sizeof(p->ent[e]));
	p->ent[e].rules = UPI_TOMBSTONE;
	p->stored--;
	return 0;
}

void upi_carry(const struct up_pool *p, uint32_t e, unsigned int wrap, bool shared)
{
	struct up_inline_carry *c = &p->carry[e];

	if (!shared) {
		c->pkts_hi += !!(wrap & UPI_WRAP_PKTS);
		c->bytes_hi += !!(wrap & UPI_WRAP_BYTES);
		c->drops_hi += !!(wrap & UPI_WRAP_DROPS);
		return;
	}
	if (wrap & UPI_WRAP_PKTS)
		__atomic_fetch_add(&c->pkts_hi, 1, __ATOMIC_RELAXED);
	if (wrap & UPI_WRAP_BYTES)
		__atomic_fetch_add(&c->bytes_hi, 1, __ATOMIC_RELAXED);
	if (wrap & UPI_WRAP_DROPS)
		__atomic_fetch_add(&c->drops_hi, 1, __ATOMIC_RELAXED);
}
