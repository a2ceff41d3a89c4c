// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capture's side, per flow direction, decided after the last frame: was
 * the capture taken at the sender of the direction's data, or at its
 * receiver? Told by --side, else by the packets' direction (pcap's packet
 * type), else by TTLs left at their initial value, else by the handshake's
 * gaps; and the names of the sides and of what decided them.
 */
#include "pcap/analysis.h"

/* a is less than b by AN_SIDE_RATIO at least (timestamps may go backwards: no proof then) */
static bool clearly_less(int64_t a, int64_t b)
{
	return a >= 0 && b > 0 && a < b / AN_SIDE_RATIO;
}

/* where the capture was taken relative to the sender of dir's data */
static void decide_side(const struct an *a, struct an_flow *f, int dir)
{
	const struct an_dir *s = &f->d[dir], *r = &f->d[!dir];
	enum an_side side = AN_SIDE_UNKNOWN;
	enum an_side_basis basis = AN_BASIS_NONE;

	if (a->cfg.side != AN_SIDE_UNKNOWN) {
		side = a->cfg.side;
		basis = AN_BASIS_OPTION;
	} else if (s->outgoing_pkts > s->incoming_pkts && r->incoming_pkts > r->outgoing_pkts) {
		side = AN_SIDE_SENDER;
		basis = AN_BASIS_PKTTYPE;
	} else if (s->incoming_pkts > s->outgoing_pkts && r->outgoing_pkts > r->incoming_pkts) {
		side = AN_SIDE_RECEIVER;
		basis = AN_BASIS_PKTTYPE;
	} else if (s->pkts && r->pkts && s->initial_ttl_pkts == s->pkts && r->initial_ttl_pkts == 0) {
		side = AN_SIDE_SENDER;
		basis = AN_BASIS_TTL;
	} else if (s->pkts && r->pkts && r->initial_ttl_pkts == r->pkts && s->initial_ttl_pkts == 0) {
		side = AN_SIDE_RECEIVER;
		basis = AN_BASIS_TTL;
	} else if (f->syn_dir >= 0 && f->synack_ns && f->hs_ack_ns &&
		   (clearly_less(f->hs_ack_ns - f->synack_ns, f->synack_ns - f->syn_ns) ||
		    clearly_less(f->synack_ns - f->syn_ns, f->hs_ack_ns - f->synack_ns))) {
		/* near the client, SYN -> SYN/ACK is the round trip */
		bool near_client = f->synack_ns - f->syn_ns > f->hs_ack_ns - f->synack_ns;

		side = (dir == f->syn_dir) == near_client ? AN_SIDE_SENDER : AN_SIDE_RECEIVER;
		basis = AN_BASIS_HANDSHAKE;
	}
	f->side[dir] = side;
	f->side_basis[dir] = basis;
}

void an_finish(struct an *a)
{
	for (uint32_t i = 0; i < a->nflows; i++)
		for (int dir = 0; dir < 2; dir++)
			decide_side(a, a->flows[i], dir);
}

const char *const an_side_choices[] = { "auto", "sender", "receiver", NULL };

const char *an_side_name(enum an_side s)
{
	return s == AN_SIDE_UNKNOWN ? "unknown" : an_side_choices[s];
}

const char *an_basis_name(enum an_side_basis b)
{
	static const char *const n[] = { "none", "handshake", "option", "packet_type", "ttl" };

	return n[b];
}
