// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive contexts, set up and taken down: the descriptors, and for
 * generated traffic the frames they point at, filled from the templates.
 */
#include <string.h>

#include "hw.h"
#include "path_rx.h"

/* not a power of two, so that the slots' headers spread over the cache sets */
#define SLOT_BYTES 2240u

int rx_init(struct up_rx *rx, const struct up_traffic *t, enum up_teids teids, uint32_t nslots)
{
	rx->t = t;
	rx->spec = teids == UP_TEIDS_SLOT ? t->slot_spec : t->spec;
	rx->nslots = nslots;
	rx->desc = up_mem_alloc((size_t)nslots * sizeof(*rx->desc), false);
	if (!rx->desc)
		return -1;
	if (t->from_pcap)
		return 0;
	rx->slots = up_mem_alloc((size_t)nslots * SLOT_BYTES, false);
	if (!rx->slots)
		return -1;
	for (uint32_t s = 0; s < nslots; s++) {
		const struct up_tpl *tp = &t->tpl[s % UP_NTPL];
		struct up_mbuf *d = &rx->desc[s];

		memcpy(rx->slots + (size_t)s * SLOT_BYTES, tp->frame, tp->len);
		d->data = rx->slots + (size_t)s * SLOT_BYTES;
		d->len = d->frame_len = tp->len;
		d->teid_off = tp->teid_off;
		d->ue_off = tp->ue_off;
		d->gtp_flags = tp->frame[tp->teid_off - 4];
	}
	return 0;
}

void rx_free(struct up_rx *rx)
{
	up_mem_free(rx->desc, (size_t)rx->nslots * sizeof(*rx->desc));
	up_mem_free(rx->slots, (size_t)rx->nslots * SLOT_BYTES);
	rx->desc = NULL;
	rx->slots = NULL;
}
