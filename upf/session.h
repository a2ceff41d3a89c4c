/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sessions and their rules: PDRs (match by QFI and an inner 5-tuple filter),
 * FARs (forward or drop), a QER (token bucket for the maximum bit rate) and
 * usage counters (packets and bytes of T-PDU).
 *
 * Two layouts of the same session:
 *   fat    256 bytes, in the order a control plane fills it, as in the
 *          incident: identity first, then the PDRs, FARs, QER and counters
 *          spread over all four cache lines. A packet touches all four.
 *   split  the fields a packet touches in one 64-byte line (TEID, UE
 *          address, rule set, QER state, counters); PDRs and FARs are
 *          shared read-only rule sets (3GPP predefined rules), which stay
 *          in L1; identity and charging data in a cold array the data path
 *          never reads.
 *   inline the hot part in 32 bytes, two sessions to a line, and the
 *          lines are the session table's buckets (inline.h): the line a
 *          lookup reads is the line the packet then updates. What does not
 *          fit moves out: QER rate and burst to shared QER profiles, the
 *          UE's IPv6 pool to the rule set, the counters' high halves to a
 *          carry array (with the cold part's index) that a packet touches
 *          only when a low half wraps.
 */
#ifndef UP_SESSION_H
#define UP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gtpu.h"

enum up_layout { UP_LAYOUT_FAT, UP_LAYOUT_SPLIT, UP_LAYOUT_INLINE };

enum up_far_action { UP_FAR_DROP = 0, UP_FAR_FORWARD = 1 };

#define UP_MAX_PDR 3
#define UP_MAX_FAR 2

/* one uplink PDR as the control plane states it: all set conditions must hold */
struct up_pdr_def {
	uint16_t precedence;    /* lower is tried first; the array is kept sorted */
	uint8_t qfi;            /* 0: any QFI */
	uint8_t proto;          /* 0: any inner protocol */
	uint8_t ue_check;       /* the inner source must be the session's UE address */
	uint8_t remote_plen;    /* inner IPv4 destination prefix length, 0: any */
	uint8_t far_id;         /* index into the FARs of the same rule set */
	uint32_t remote4;       /* network order */
	uint16_t rport_lo, rport_hi; /* inner destination port range */
	uint16_t pdr_id;
};

/*
 * The same PDR compiled for matching (32 bytes): the packet's QFI, protocol,
 * UE check and family packed in one word (up_pkt_key) are compared under a
 * mask, the destination prefix under its mask, the port as one range check.
 */
struct up_pdr {
	uint64_t key_val, key_mask;
	uint32_t remote4, remote_mask; /* network order */
	uint16_t rport_lo, rport_span;
	uint8_t far_id;
	uint8_t precedence;
	uint16_t pdr_id;
};

struct up_far {
	uint8_t action;         /* enum up_far_action */
	uint8_t dest_iface;     /* 1: core (N6) */
	uint16_t pad;
	uint32_t far_id;
};

/* a set of rules shared by many sessions */
struct up_rules_def {
	uint8_t n_pdr;
	uint8_t ue6_pool[4];    /* the DNN's UE IPv6 pool: octets 0-3 of every UE's /64 */
	struct up_pdr_def pdr[UP_MAX_PDR];
	struct up_far far[UP_MAX_FAR];
};

struct up_rules {
	uint8_t n_pdr;
	uint8_t ue6_pool[4];
	struct up_pdr pdr[UP_MAX_PDR];
	struct up_far far[UP_MAX_FAR];
};

/*
 * QER token bucket, one 64-bit word so that the shared (global) design can
 * update it with one compare-and-swap: the high 32 bits are the time of the
 * last refill in ticks of 1024 TSC cycles, the low 32 bits the tokens in
 * bytes. The rate is in bytes per 2^16 ticks (fixed point).
 */
#define UP_QER_TICK_SHIFT 10

struct up_sess_fat {
	/* line 0: identity */
	uint64_t seid;
	uint64_t imsi;
	char dnn[24];
	uint32_t teid;
	uint32_t ue_ip4;        /* network order */
	uint8_t ue_ip6[8];      /* the /64 prefix */
	uint32_t gnb_teid;
	uint32_t charging_id;
	/* line 1 */
	uint8_t gnb_addr[16];
	uint64_t created_ns;
	uint8_t n_pdr;
	uint8_t pad[7];
	struct up_pdr pdr[UP_MAX_PDR]; /* lines 1-2 */
	/* line 3 */
	struct up_far far[UP_MAX_FAR];
	uint32_t qer_rate;
	uint32_t qer_burst;
	uint64_t qer_state;
	uint64_t pkts, bytes, drop_pkts;
	uint8_t pad3[8];
} __attribute__((aligned(64)));

/*
 * The hot line of the split layout, all a packet reads and writes of its
 * session: the TEID (with the slot table, the one the slot gave out), the
 * UE's IPv4 address and IPv6 /64 prefix for the PDRs' UE check, the rule
 * set, the QER and the usage counters.
 */
struct up_sess_hot {
	uint32_t teid;
	uint32_t ue_ip4;
	uint8_t ue_ip6[8];
	uint16_t rules;
	uint16_t pad;
	uint32_t qer_rate;
	uint32_t qer_burst;
	uint32_t pad2;
	uint64_t qer_state;
	uint64_t pkts, bytes, drop_pkts;
} __attribute__((aligned(64)));

/*
 * The inline layout's hot part, 32 bytes, two to a 64-byte line: the key
 * (4), the UE's IPv4 address (4), bits 32-63 of its IPv6 /64 prefix (4;
 * bits 0-31 are its DNN's pool, in the rule set), the rule set (1), the
 * QER profile (1), the token bucket (8), and the low halves of the usage
 * counters (4 + 4 + 2): a packet that wraps one carries into the entry's
 * up_inline_carry.
 */
struct up_sess_inline {
	uint32_t teid;          /* 0: a free entry */
	uint32_t ue_ip4;        /* network order */
	uint32_t ue6_mid;       /* octets 4-7 of the UE's /64 */
	uint8_t rules;          /* a free entry: UPI_TOMBSTONE when it was ever taken */
	uint8_t qer;            /* index into the pool's QER profiles */
	uint16_t drops_lo;
	uint64_t qer_state;
	uint32_t pkts_lo;
	uint32_t bytes_lo;
} __attribute__((aligned(32)));

/* per inline entry, apart: touched when a counter's low half wraps, and by the control plane */
struct up_inline_carry {
	uint32_t cold;          /* the session's cold part */
	uint32_t pkts_hi, bytes_hi;
	uint32_t drops_hi;      /* above the 16 bits of drops_lo */
};

/* a QER's parameters, shared by the sessions of one maximum bit rate */
struct up_qer_profile {
	uint32_t rate, burst;
};
#define UP_MAX_QER_PROFILES 256

struct up_sess_cold {
	uint64_t seid;
	uint64_t imsi;
	char dnn[24];
	uint8_t gnb_addr[16];
	uint32_t gnb_teid;
	uint32_t charging_id;
	uint64_t created_ns;
	uint32_t line;          /* its hot part: the same index (split), an entry of the table (inline) */
};

/*
 * A rule set compiled for matching its PDRs side by side (SSE2): lane i is
 * PDR i. The packet's key is 32 bits (UP_VKEY_*), the port range signed
 * 32-bit bounds.
 */
struct up_rules_vec {
	uint32_t key_val[4], key_mask[4];
	uint32_t remote4[4], remote_mask[4]; /* network order */
	int32_t port_lo[4], port_hi[4];
	uint8_t far_fwd[4];     /* the PDR's FAR forwards */
	uint32_t live;          /* (1 << n_pdr) - 1 */
	uint8_t ue6_pool[4];    /* octets 0-3 of the UE IPv6 prefixes of the rule set's DNN */
} __attribute__((aligned(64)));

/*
 * The 32-bit key: the UE check and IPv4 in the low octet, then protocol,
 * QFI and has-QFI in the order gtpu_pkt stores them after inner_family, so
 * that one load builds most of it.
 */
#define UP_VKEY_UE_OK ((uint32_t)1 << 0)
#define UP_VKEY_IPV4 ((uint32_t)1 << 1)
#define UP_VKEY_PROTO(p) ((uint32_t)(p) << 8)
#define UP_VKEY_QFI(q) ((uint32_t)(q) << 16)
#define UP_VKEY_HAS_QFI ((uint32_t)1 << 24)

/* what the control plane knows of a session; the input to a pool */
struct up_sess_def {
	uint32_t teid;
	uint32_t ue_ip4;        /* network order */
	uint16_t rules;         /* index into the rule sets */
	uint32_t gnb_ip4;
	uint64_t mbr_bps;
};

struct up_pool {
	enum up_layout layout;
	uint32_t n;
	bool huge;
	struct up_sess_fat *fat;
	struct up_sess_hot *hot;
	struct up_sess_cold *cold;
	size_t fat_bytes, hot_bytes, cold_bytes;
	/* inline: the table's lines of two entries, their carries, the QER profiles */
	uint32_t lines;
	uint32_t stored;
	struct up_sess_inline *ent;
	struct up_inline_carry *carry;
	size_t ent_bytes, carry_bytes;
	struct up_qer_profile qer[UP_MAX_QER_PROFILES];
	unsigned int n_qer;
};

/* the rule sets the generator uses, by index (0: internet, 1: iot, 2: any) */
extern const struct up_rules_def up_rule_defs[];
extern const unsigned int up_n_rule_sets;
/* the same, compiled by up_rules_init() (up_pool_init calls it) */
extern struct up_rules up_rule_sets[];
extern struct up_rules_vec up_rule_vecs[];
void up_rules_vec_compile(const struct up_rules *r, struct up_rules_vec *out);
void up_rules_init(void);
void up_pdr_compile(const struct up_pdr_def *d, struct up_pdr *out);
void up_rules_compile(const struct up_rules_def *d, struct up_rules *out);
#define UP_RULES_INTERNET 0
#define UP_RULES_IOT 1
#define UP_RULES_ANY 2

int up_pool_init(struct up_pool *p, enum up_layout layout, uint32_t n, bool huge);
void up_pool_free(struct up_pool *p);
/* fill slot i from def (inline: insert its TEID); tsc_hz sets the QER rate. 0 or -errno */
int up_pool_set(struct up_pool *p, uint32_t i, const struct up_sess_def *d, double tsc_hz);
uint64_t up_pool_huge_kib(const struct up_pool *p);
void up_pool_counters(const struct up_pool *p, uint32_t i, uint64_t *pkts, uint64_t *bytes,
		      uint64_t *drops);

/* QER parameters from a bit rate: rate in bytes per 2^16 ticks, burst in bytes */
void up_qer_params(uint64_t mbr_bps, double tsc_hz, uint32_t *rate, uint32_t *burst);

/*
 * The PDRs (of n, at most UP_MAX_PDR) that match the packet, as a bit mask;
 * the lowest bit is the first match in precedence order. Every condition of
 * every PDR is evaluated without a branch: which PDR a packet hits depends
 * on the traffic mix, and a mispredicted branch costs more than the checks.
 */
/* the packet's side of up_pdr.key_val: QFI, has-QFI, protocol, UE check, IPv4 */
#define UP_KEY_QFI(q) ((uint64_t)(q))
#define UP_KEY_HAS_QFI ((uint64_t)1 << 8)
#define UP_KEY_PROTO(p) ((uint64_t)(p) << 16)
#define UP_KEY_UE_OK ((uint64_t)1 << 24)
#define UP_KEY_IPV4 ((uint64_t)1 << 32)

/* pdr points at UP_MAX_PDR entries (as in up_rules and up_sess_fat), n of them in use */
static inline unsigned int up_pdr_hits(const struct up_pdr pdr[UP_MAX_PDR], unsigned int n,
				       const struct gtpu_pkt *p, uint32_t ue_ip4,
				       const uint8_t *ue_ip6)
{
	uint32_t src4, dst4;
	uint64_t src6, ue6, key;
	unsigned int is4 = p->inner_family == 4, is6 = p->inner_family == 6, ue_ok, hits = 0;

	__builtin_memcpy(&src4, p->src, 4);
	__builtin_memcpy(&dst4, p->dst, 4);
	__builtin_memcpy(&src6, p->src, 8);
	__builtin_memcpy(&ue6, ue_ip6, 8);
	ue_ok = (is4 & (src4 == ue_ip4)) | (is6 & (src6 == ue6));
	key = UP_KEY_QFI(p->qfi) | (p->has_qfi ? UP_KEY_HAS_QFI : 0) | UP_KEY_PROTO(p->proto) |
	      (ue_ok ? UP_KEY_UE_OK : 0) | (is4 ? UP_KEY_IPV4 : 0);
#pragma GCC unroll 4
	for (unsigned int i = 0; i < UP_MAX_PDR; i++) {
		const struct up_pdr *d = &pdr[i];
		uint32_t port_off = (uint32_t)p->dport - d->rport_lo;

		hits |= (unsigned int)((((key ^ d->key_val) & d->key_mask) == 0) &
				       ((dst4 & d->remote_mask) == d->remote4) &
				       (port_off <= d->rport_span)) << i;
	}
	return hits & ((1u << n) - 1);
}

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

_Static_assert(offsetof(struct gtpu_pkt, proto) == offsetof(struct gtpu_pkt, inner_family) + 1 &&
	       offsetof(struct gtpu_pkt, qfi) == offsetof(struct gtpu_pkt, inner_family) + 2 &&
	       offsetof(struct gtpu_pkt, has_qfi) == offsetof(struct gtpu_pkt, inner_family) + 3,
	       "up_vkey() reads inner_family, proto, qfi and has_qfi as one word");

/* the packet's 32-bit key for up_rules_vec (has_qfi is 0 or 1) */
static inline uint32_t up_vkey(const struct gtpu_pkt *p, unsigned int ue_ok)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t w;

	__builtin_memcpy(&w, &p->inner_family, 4);
	return (w & ~(uint32_t)0xff) | (ue_ok ? UP_VKEY_UE_OK : 0) |
	       (p->inner_family == 4 ? UP_VKEY_IPV4 : 0);
#else
	return UP_VKEY_QFI(p->qfi) | (p->has_qfi ? UP_VKEY_HAS_QFI : 0) | UP_VKEY_PROTO(p->proto) |
	       (ue_ok ? UP_VKEY_UE_OK : 0) | (p->inner_family == 4 ? UP_VKEY_IPV4 : 0);
#endif
}

/* the same bit mask as up_pdr_hits(), every PDR of the set at once */
static inline unsigned int up_rules_vec_hits(const struct up_rules_vec *r, uint32_t key,
					     uint32_t dst4, uint32_t dport)
{
#if defined(__SSE2__)
	__m128i k = _mm_set1_epi32((int)key), d = _mm_set1_epi32((int)dst4);
	__m128i pt = _mm_set1_epi32((int)dport), ok, out;

	ok = _mm_cmpeq_epi32(_mm_and_si128(_mm_xor_si128(k, _mm_load_si128((const __m128i *)r->key_val)),
					   _mm_load_si128((const __m128i *)r->key_mask)),
			     _mm_setzero_si128());
	ok = _mm_and_si128(ok, _mm_cmpeq_epi32(_mm_and_si128(d, _mm_load_si128((const __m128i *)r->remote_mask)),
					       _mm_load_si128((const __m128i *)r->remote4)));
	out = _mm_or_si128(_mm_cmpgt_epi32(_mm_load_si128((const __m128i *)r->port_lo), pt),
			   _mm_cmpgt_epi32(pt, _mm_load_si128((const __m128i *)r->port_hi)));
	ok = _mm_andnot_si128(out, ok);
	return (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(ok)) & r->live;
#else
	unsigned int hits = 0;

	for (unsigned int i = 0; i < 4; i++)
		hits |= (unsigned int)((((key ^ r->key_val[i]) & r->key_mask[i]) == 0) &
				       ((dst4 & r->remote_mask[i]) == r->remote4[i]) &
				       ((int32_t)dport >= r->port_lo[i]) &
				       ((int32_t)dport <= r->port_hi[i])) << i;
	return hits & r->live;
#endif
}

/* the first matching PDR, or NULL */
static inline const struct up_pdr *up_pdr_match(const struct up_pdr pdr[UP_MAX_PDR], unsigned int n,
						const struct gtpu_pkt *p, uint32_t ue_ip4,
						const uint8_t *ue_ip6)
{
	unsigned int hits = up_pdr_hits(pdr, n, p, ue_ip4, ue_ip6);

	return hits ? &pdr[__builtin_ctz(hits)] : NULL;
}

/* token bucket step on a state word: true when len bytes may pass (len 0 always passes) */
static inline bool up_qer_step(uint64_t *state, uint64_t now_tick, uint32_t rate,
			       uint32_t burst, uint32_t len)
{
	uint64_t s = *state, tokens = (uint32_t)s;
	uint32_t last = (uint32_t)(s >> 32);
	uint32_t dt = (uint32_t)now_tick - last;
	uint64_t add = ((uint64_t)dt * rate) >> 16;
	bool pass;

	/* below one byte of refill, keep the old timestamp so fractions accumulate */
	last = add ? (uint32_t)now_tick : last;
	tokens += add;
	tokens = tokens > burst ? burst : tokens;
	pass = tokens >= len;
	tokens -= pass ? len : 0;
	*state = (uint64_t)last << 32 | tokens;
	return pass;
}

/* the same, shared between workers: a compare-and-swap loop */
static inline bool up_qer_step_atomic(uint64_t *state, uint64_t now_tick, uint32_t rate,
				      uint32_t burst, uint32_t len)
{
	uint64_t old = __atomic_load_n(state, __ATOMIC_RELAXED), nw;
	bool pass;

	do {
		nw = old;
		pass = up_qer_step(&nw, now_tick, rate, burst, len);
	} while (!__atomic_compare_exchange_n(state, &old, nw, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return pass;
}

#endif
