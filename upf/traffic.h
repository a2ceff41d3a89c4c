/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The traffic a run replays: sessions, and a stream of packets over them.
 *
 * Generated traffic: N sessions with random distinct TEIDs; a stream of L
 * positions, each naming a session (uniform or Zipf); and 64 frame
 * templates (uplink G-PDUs with a PDU Session Container, an IMIX size mix
 * and a mix of flows that hit each PDR, the FAR drop and no PDR at all).
 * Packet k of a receive context is template k mod 64 with the TEID and the
 * UE address of its stream position written in, the way a NIC hands over a
 * freshly written buffer. Nothing of a session is read to build a packet.
 *
 * The sessions' TEIDs come two ways, over the same sessions and stream:
 * hashed, random distinct values (what a table must do with TEIDs it did
 * not choose), and slot-encoded (teid.h: what this UPF gives out when it
 * chooses). A run uses one of the two.
 *
 * Bad traffic (bad_every): every Nth stream position is, in turn, a stale
 * TEID (a valid slot, the generation before), a TEID beyond the slots, a
 * frame cut short, a GTP-U header of version 2. The first two are no
 * session's (with hashed TEIDs, values no session has), the last two
 * malformed; none is counted to a session.
 *
 * Replayed traffic (--pcap-in): the frames of a capture in order; one
 * session per TEID seen in a G-PDU, with rules that forward everything.
 */
#ifndef UP_TRAFFIC_H
#define UP_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gtpu.h"
#include "session.h"
#include "teid.h"

#define UP_NTPL 64
#define UP_FRAME_MAX 1600        /* a generated frame */
#define UP_PCAP_FRAME_MAX 16384  /* a replayed frame; longer ones are cut and counted in truncated */

enum up_dist { UP_DIST_UNIFORM, UP_DIST_ZIPF };
extern const char *const up_dist_names[]; /* NULL-terminated, by enum */

/* who chose the sessions' TEIDs */
enum up_teids { UP_TEIDS_HASHED, UP_TEIDS_SLOT };

/* what a bad stream position carries instead of its session's packet */
enum up_bad { UP_BAD_NONE, UP_BAD_STALE_TEID, UP_BAD_SLOT_RANGE, UP_BAD_CUT, UP_BAD_VERSION, UP_NBAD };
#define UP_BAD_CUT_LEN 40       /* a cut frame: Ethernet, outer IP and no more */
#define UP_BAD_VERSION_XOR 0x60 /* GTP-U flags: version 1 -> 2 */

static inline bool up_bad_malformed(unsigned int kind)
{
	return kind == UP_BAD_CUT || kind == UP_BAD_VERSION;
}

struct up_tpl {
	uint8_t frame[UP_FRAME_MAX];
	uint16_t len;
	uint16_t teid_off;      /* where the TEID is written (4 octets) */
	uint16_t ue_off;        /* where the UE address (IPv4, or bits 32-63 of the IPv6 source) goes */
	uint16_t tpdu_len;      /* what the usage counters count for it */
};

/* one stream position: what is written into the template (network order) */
struct up_spec {
	uint32_t teid_be;
	uint32_t ue_be;
};

struct up_gen_opts {
	uint32_t sessions;
	uint64_t packets;       /* the stream is no longer than needed for this many */
	enum up_dist dist;
	double zipf_s;
	unsigned int pkt_size;  /* inner IP bytes; 0: IMIX 7:4:1 of 60/576/1400 */
	int outer_family;       /* 4 or 6 */
	uint64_t mbr_bps;
	uint64_t seed;
	uint32_t bad_every;     /* 0: no bad packets; N: every Nth stream position */
};

struct up_traffic {
	bool from_pcap;
	/* sessions */
	uint32_t n_sess;
	struct up_sess_def *sess;
	/* the stream: L positions */
	uint32_t len;
	struct up_spec *spec;   /* generated: per position, hashed TEIDs */
	struct up_spec *slot_spec; /* the same with slot-encoded TEIDs */
	uint32_t *sidx;         /* session index per position; UINT32_MAX: none */
	uint8_t *bad;           /* enum up_bad per position; NULL: none is bad */
	/* slot-encoded TEIDs: the plan, and each session's */
	struct up_teid_plan plan;
	uint32_t *slot_teid;
	uint32_t *slot_gen;     /* the generation each slot is at */
	/* generated: templates */
	struct up_tpl *tpl;
	/* replayed: frames, position i is frame i */
	uint8_t *fbuf;
	size_t *foff;
	uint16_t *flen;
	uint32_t *ftpdu;        /* T-PDU bytes of a G-PDU frame */
	uint32_t truncated;     /* frames cut by the capture's snap length */
	struct up_gen_opts opt;
};

/* 0, or -1 with a sentence in err */
int up_traffic_gen(struct up_traffic *t, const struct up_gen_opts *o, char *err, size_t errlen);
/* load a capture (Ethernet, Linux cooked v1/v2 or raw IP); 0, or -1 with a sentence in err
 * and t empty */
int up_traffic_pcap(struct up_traffic *t, const char *path, uint64_t mbr_bps, char *err,
		    size_t errlen);
void up_traffic_free(struct up_traffic *t);

/* session s's TEID as `teids` chose it */
static inline uint32_t up_traffic_teid(const struct up_traffic *t, enum up_teids teids, uint32_t s)
{
	return teids == UP_TEIDS_SLOT ? t->slot_teid[s] : t->sess[s].teid;
}

/* the steering hash (independent of the table's), worker of a TEID */
static inline uint32_t up_steer(uint32_t teid, unsigned int workers)
{
	uint32_t x = teid;

	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return (uint32_t)(((uint64_t)x * workers) >> 32);
}

/* the TEID that stream position pos carries (0: none, a replayed frame that is no G-PDU) */
uint32_t up_traffic_pos_teid(const struct up_traffic *t, enum up_teids teids, uint32_t pos);

/*
 * Write frame `k` of a receive context whose stream position is `pos`:
 * into buf, with checksums fixed (for --pcap-out; a bad frame's damage
 * comes after). Returns the length.
 */
size_t up_traffic_frame(const struct up_traffic *t, enum up_teids teids, uint64_t k, uint32_t pos,
			uint8_t *buf, size_t cap);
/* T-PDU bytes that frame (k, pos) carries, what its session's counters count */
uint32_t up_traffic_tpdu(const struct up_traffic *t, uint64_t k, uint32_t pos);

/* pcap output */
struct up_pcap_out;
struct up_pcap_out *up_pcap_open(const char *path, char *err, size_t errlen);
int up_pcap_write(struct up_pcap_out *o, const uint8_t *frame, size_t len, uint64_t ts_ns);
int up_pcap_close(struct up_pcap_out *o); /* -1 when a write failed */

#endif
