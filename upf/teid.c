// SPDX-License-Identifier: GPL-2.0-only
/*
 * Slot-encoded TEIDs: the slot bits sized for n sessions and one slot beyond,
 * the check bits the generation XOR a keyed splitmix64 hash of the slot, and
 * TEIDs that name no session's slot.
 */
#include "teid.h"

void up_teid_plan_init(struct up_teid_plan *p, uint32_t n, uint64_t key)
{
	uint32_t bits = 1;

	/* room for slots 0..n and at least one beyond */
	while (bits < 32 && ((uint64_t)1 << bits) < (uint64_t)n + 2)
		bits++;
	p->slots = n;
	p->slot_bits = bits;
	p->slot_mask = bits >= 32 ? UINT32_MAX : (uint32_t)((1ull << bits) - 1);
	p->key = key;
}

/* a keyed mix of the slot (splitmix64's finaliser): the slot's check bits at generation 0 */
static uint32_t slot_mask_of(const struct up_teid_plan *p, uint32_t slot)
{
	uint64_t z = p->key ^ ((uint64_t)slot * 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)(z ^ (z >> 31));
}

uint32_t up_teid_make(const struct up_teid_plan *p, uint32_t index, uint32_t gen)
{
	uint32_t slot = index + 1, check = gen ^ slot_mask_of(p, slot);

	return p->slot_bits >= 32 ? slot : check << p->slot_bits | slot;
}

uint32_t up_teid_out_of_range(const struct up_teid_plan *p, uint32_t nonce)
{
	uint32_t beyond = p->slot_mask - p->slots; /* slots n+1..mask, and 0 */
	uint32_t slot = nonce % (beyond + 1);

	slot = slot == beyond ? 0 : p->slots + 1 + slot;
	return p->slot_bits >= 32 ? slot : nonce << p->slot_bits | slot;
}
