/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Receive contexts: the packet descriptors of a run, and the ring of frames
 * each context writes the way a NIC would, generated from templates or
 * replayed from a capture. rx_burst() is the receive stage of the data
 * path.
 */
#ifndef UP_PATH_RX_H
#define UP_PATH_RX_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gtpu.h"
#include "hw.h"
#include "path.h"

#define RX_SLOTS 512u            /* a NIC-sized ring per receive context; a multiple of UP_NTPL */

_Static_assert(RX_SLOTS % UP_NTPL == 0, "slot k always holds template k mod UP_NTPL");

struct up_mbuf {
	const uint8_t *data;
	uint16_t len;
	uint16_t out_off;       /* after decapsulation: where the forwarded packet starts */
	uint16_t out_len;
	int16_t status;         /* enum gtpu_status */
	uint16_t teid_off, ue_off;
	uint16_t frame_len;     /* the template's: a cut frame is restored on the slot's next use */
	uint8_t gtp_flags;      /* the template's first GTP-U octet, likewise */
	uint8_t pad;
	struct gtpu_pkt pkt;
};

struct up_rx {
	const struct up_traffic *t;
	const struct up_spec *spec; /* generated: the stream with the run's kind of TEIDs */
	const uint32_t *pos_list; /* steered: this worker's stream positions; NULL: all */
	uint32_t len;           /* positions in one cycle */
	uint32_t idx, stride;
	uint64_t k, quota;
	uint8_t *slots;         /* generated traffic: RX_SLOTS frames */
	uint32_t nslots;
	struct up_mbuf *desc;
};

/* nslots descriptors, and for generated traffic their frames from the templates; 0 or -1 */
int rx_init(struct up_rx *rx, const struct up_traffic *t, enum up_teids teids, uint32_t nslots);
void rx_free(struct up_rx *rx);

/* the next stream position of this context */
static inline void rx_advance(uint32_t *idx, uint32_t stride, uint32_t len)
{
	uint32_t i = *idx + stride;

	while (i >= len)
		i -= len;
	*idx = i;
}

/* replayed frames: the descriptor points at the capture's frame */
static inline void rx_replayed(struct up_rx *rx, struct up_mbuf **m, unsigned int n)
{
	const struct up_traffic *t = rx->t;
	const uint32_t *pl = rx->pos_list;
	uint32_t idx = rx->idx, len = rx->len, stride = rx->stride, mask = rx->nslots - 1;
	uint64_t k = rx->k;

	for (unsigned int j = 0; j < n; j++, k++) {
		uint32_t pos = pl ? pl[idx] : idx;
		struct up_mbuf *d = &rx->desc[k & mask];

		d->data = t->fbuf + t->foff[pos];
		d->len = t->flen[pos];
		m[j] = d;
		rx_advance(&idx, stride, len);
	}
	rx->k = k;
	rx->idx = idx;
}

/*
 * Generated frames: the position's TEID and UE address written into the
 * slot's template. With bad positions, each frame is also cut or has its
 * GTP-U version changed, or is restored, as its position says; without,
 * those two writes are not in the loop at all.
 */
static inline __attribute__((always_inline)) void
rx_generated(struct up_rx *rx, struct up_mbuf **m, unsigned int n, const bool damaged)
{
	const uint8_t *bad = rx->t->bad;
	const uint32_t *pl = rx->pos_list;
	const struct up_spec *spec = rx->spec;
	uint32_t idx = rx->idx, len = rx->len, stride = rx->stride, mask = rx->nslots - 1;
	uint64_t k = rx->k;

	/* locals: the frame writes below may alias anything, so rx's fields would be reloaded */
	for (unsigned int j = 0; j < n; j++, k++) {
		uint32_t pos = pl ? pl[idx] : idx;
		struct up_mbuf *d = &rx->desc[k & mask];
		uint8_t *f = (uint8_t *)(uintptr_t)d->data;
		const uint8_t *ahead = rx->desc[(k + UP_MAX_BATCH) & mask].data;
		struct up_spec sp = spec[pos];

		memcpy(f + d->teid_off, &sp.teid_be, 4);
		memcpy(f + d->ue_off, &sp.ue_be, 4);
		if (damaged) {
			uint8_t kind = bad[pos];

			d->len = kind == UP_BAD_CUT ? UP_BAD_CUT_LEN : d->frame_len;
			f[d->teid_off - 4] = (uint8_t)(d->gtp_flags ^
						       (kind == UP_BAD_VERSION ? UP_BAD_VERSION_XOR : 0));
		}
		m[j] = d;
		/* the NIC has written these by now: bring the headers of a later burst in */
		up_prefetch_w(ahead);
		up_prefetch_w(ahead + 64);
		rx_advance(&idx, stride, len);
	}
	rx->k = k;
	rx->idx = idx;
}

/*
 * The next n packets of this context, written into its ring like a NIC
 * would. Out of line, one copy in each file for all its loops: whether the
 * compiler inlined it would otherwise depend on how many loops a file
 * holds, and so would the loops' code, which is what upfbench measures.
 */
static __attribute__((noinline, unused)) unsigned int
rx_burst(struct up_rx *rx, struct up_mbuf **m, unsigned int n)
{
	if (rx->quota - rx->k < n)
		n = (unsigned int)(rx->quota - rx->k);
	if (rx->t->from_pcap)
		rx_replayed(rx, m, n);
	else if (rx->t->bad)
		rx_generated(rx, m, n, true);
	else
		rx_generated(rx, m, n, false);
	return n;
}

#endif
