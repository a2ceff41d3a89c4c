/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Slot-encoded N3 TEIDs. The UPF allocates the uplink TEIDs it receives on
 * (PFCP F-TEID with CHOOSE), so it may choose them to say where the session
 * is, and find it with no hash and no table:
 *
 *   bits 31..S   check: the slot's generation XOR a keyed hash of the slot
 *   bits S-1..0  slot: 1..n, the session's index + 1 (0 is never given out,
 *                so no TEID is 0)
 *
 * S is the fewest bits that hold slot n and one beyond it, so an
 * out-of-range slot exists (2.2M sessions: S = 22, 10 check bits). The slot's line keeps the whole TEID
 * it was given; a packet whose TEID differs there is no session's. The
 * generation changes each time the slot is given out, so a TEID of a
 * released session is refused until its slot has been reused 2^(32-S)
 * times; the keyed hash makes the check bits of a slot unguessable from
 * outside (a blind forger hits 1 in 2^(32-S)). GTP-U has no
 * authentication: whoever sees a session's packets can send with its TEID,
 * here as with any table.
 */
#ifndef UP_TEID_H
#define UP_TEID_H

#include <stdint.h>

struct up_teid_plan {
	uint32_t slots;         /* n: slots 1..n are given out */
	uint32_t slot_bits;     /* S */
	uint32_t slot_mask;     /* (1 << S) - 1 */
	uint64_t key;
};

/* the plan for n slots (1..4M); key makes the check bits unguessable */
void up_teid_plan_init(struct up_teid_plan *p, uint32_t n, uint64_t key);
/* the TEID of the session at index (0..n-1) in its gen-th allocation */
uint32_t up_teid_make(const struct up_teid_plan *p, uint32_t index, uint32_t gen);
/* a TEID whose slot is 0 or beyond n: no allocation ever gives it */
uint32_t up_teid_out_of_range(const struct up_teid_plan *p, uint32_t nonce);

/* the session index a TEID names: 0..n-1, or >= n (UINT32_MAX for slot 0) when out of range */
static inline uint32_t up_teid_index(uint32_t slot_mask, uint32_t teid)
{
	return (teid & slot_mask) - 1;
}

/*
 * Workers own contiguous ranges of slots, so that a worker's pool is
 * indexed by the session index minus the range's start: one subtraction,
 * and the NIC steers by a TEID range. The owner of index i is
 * floor(i x mul / 2^32), mul = floor(2^32 x workers / n): monotone, below
 * workers for every i < n; out-of-range indexes go to the last worker.
 */
struct up_slot_split {
	uint64_t mul;
	uint32_t slots;
	unsigned int workers;
};

static inline struct up_slot_split up_slot_split_of(uint32_t slots, unsigned int workers)
{
	struct up_slot_split s = { (((uint64_t)workers) << 32) / (slots ? slots : 1), slots, workers };

	return s;
}

static inline unsigned int up_slot_owner(const struct up_slot_split *s, uint32_t index)
{
	return index < s->slots ? (unsigned int)((index * s->mul) >> 32) : s->workers - 1;
}

#endif
