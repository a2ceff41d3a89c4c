// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions and their rules: the predefined rule sets compiled (PDRs and their
 * vector form), the QER's rate and burst in TSC ticks, and the session pool
 * in its fat, split or inline layout, filled and read back.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hw.h"
#include "inline.h"
#include "session.h"

_Static_assert(sizeof(struct up_sess_fat) == 256, "fat sessions are 256 bytes, as in the incident");
_Static_assert(offsetof(struct up_sess_fat, pkts) >= 192, "fat counters sit in the last line");
_Static_assert(sizeof(struct up_pdr) == 32, "a compiled PDR is 32 bytes");
_Static_assert(sizeof(struct up_sess_hot) == 64, "the hot part is one cache line");
_Static_assert(sizeof(struct up_sess_inline) == 32, "two inline sessions to a cache line");

#define UE6_POOL { 0x20, 0x01, 0x0d, 0xb8 } /* 2001:db8::/32, the documentation prefix */

#define PORTS_ANY 0, 65535
#define IP4(a, b, c, d) __builtin_bswap32((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

/*
 * internet: IMS signalling (QFI 1, UDP to 203.0.113.0/24 ports 5060-5061),
 * SMTP blocked (TCP port 25), everything else on QFI 9 forwarded.
 * iot: QFI 9 to 192.0.2.0/24 only. any: forward everything (pcap replay).
 */
const struct up_rules_def up_rule_defs[] = {
	[UP_RULES_INTERNET] = {
		.n_pdr = 3,
		.ue6_pool = UE6_POOL,
		.pdr = {
			{ .precedence = 10, .qfi = 1, .proto = 17, .ue_check = 1, .remote_plen = 24,
			  .remote4 = IP4(203, 0, 113, 0), .rport_lo = 5060, .rport_hi = 5061,
			  .far_id = 0, .pdr_id = 1 },
			{ .precedence = 50, .qfi = 9, .proto = 6, .ue_check = 1, .rport_lo = 25,
			  .rport_hi = 25, .far_id = 1, .pdr_id = 2 },
			{ .precedence = 100, .qfi = 9, .ue_check = 1, .rport_lo = 0, .rport_hi = 65535,
			  .far_id = 0, .pdr_id = 3 },
		},
		.far = { { .action = UP_FAR_FORWARD, .dest_iface = 1, .far_id = 1 },
			 { .action = UP_FAR_DROP, .far_id = 2 } },
	},
	[UP_RULES_IOT] = {
		.n_pdr = 1,
		.ue6_pool = UE6_POOL,
		.pdr = {
			{ .precedence = 10, .qfi = 9, .ue_check = 1, .remote_plen = 24,
			  .remote4 = IP4(192, 0, 2, 0), .rport_lo = 0, .rport_hi = 65535, .far_id = 0,
			  .pdr_id = 1 },
		},
		.far = { { .action = UP_FAR_FORWARD, .dest_iface = 1, .far_id = 1 } },
	},
	[UP_RULES_ANY] = {
		.n_pdr = 1,
		.ue6_pool = UE6_POOL,
		.pdr = { { .precedence = 255, .rport_lo = 0, .rport_hi = 65535, .far_id = 0,
			   .pdr_id = 1 } },
		.far = { { .action = UP_FAR_FORWARD, .dest_iface = 1, .far_id = 1 } },
	},
};
const unsigned int up_n_rule_sets = sizeof(up_rule_defs) / sizeof(up_rule_defs[0]);
struct up_rules up_rule_sets[sizeof(up_rule_defs) / sizeof(up_rule_defs[0])];
struct up_rules_vec up_rule_vecs[sizeof(up_rule_defs) / sizeof(up_rule_defs[0])];

void up_pdr_compile(const struct up_pdr_def *d, struct up_pdr *o)
{
	memset(o, 0, sizeof(*o));
	if (d->qfi) {
		o->key_val |= UP_KEY_QFI(d->qfi) | UP_KEY_HAS_QFI;
		o->key_mask |= UP_KEY_QFI(0xff) | UP_KEY_HAS_QFI;
	}
	if (d->proto) {
		o->key_val |= UP_KEY_PROTO(d->proto);
		o->key_mask |= UP_KEY_PROTO(0xff);
	}
	if (d->ue_check) {
		o->key_val |= UP_KEY_UE_OK;
		o->key_mask |= UP_KEY_UE_OK;
	}
	if (d->remote_plen) {
		uint32_t mask = d->remote_plen >= 32 ? ~0u : ~(~0u >> d->remote_plen);

		o->key_val |= UP_KEY_IPV4;
		o->key_mask |= UP_KEY_IPV4;
		o->remote_mask = __builtin_bswap32(mask);
		o->remote4 = d->remote4 & o->remote_mask;
	}
	o->rport_lo = d->rport_lo;
	o->rport_span = d->rport_hi >= d->rport_lo ? (uint16_t)(d->rport_hi - d->rport_lo) : 0;
	o->far_id = d->far_id < UP_MAX_FAR ? d->far_id : 0;
	o->precedence = d->precedence > 255 ? 255 : (uint8_t)d->precedence;
	o->pdr_id = d->pdr_id;
}

void up_rules_compile(const struct up_rules_def *d, struct up_rules *o)
{
	memset(o, 0, sizeof(*o));
	o->n_pdr = d->n_pdr > UP_MAX_PDR ? UP_MAX_PDR : d->n_pdr;
	memcpy(o->ue6_pool, d->ue6_pool, sizeof(o->ue6_pool));
	for (unsigned int i = 0; i < o->n_pdr; i++)
		up_pdr_compile(&d->pdr[i], &o->pdr[i]);
	memcpy(o->far, d->far, sizeof(o->far));
}

/* the fields of a 64-bit PDR key (UP_KEY_*) moved to their places in the 32-bit one (UP_VKEY_*) */
static uint32_t vkey_of(uint64_t k)
{
	return (k >> 24 & 1 ? UP_VKEY_UE_OK : 0) | (k >> 32 & 1 ? UP_VKEY_IPV4 : 0) |
	       UP_VKEY_PROTO(k >> 16 & 0xff) | UP_VKEY_QFI(k & 0xff) | (k >> 8 & 1 ? UP_VKEY_HAS_QFI : 0);
}

void up_rules_vec_compile(const struct up_rules *r, struct up_rules_vec *o)
{
	memset(o, 0, sizeof(*o));
	for (unsigned int i = 0; i < 4; i++) {
		if (i >= r->n_pdr) {
			/* an empty range: the lane never matches (live masks it out too) */
			o->port_lo[i] = 1;
			o->port_hi[i] = 0;
			continue;
		}
		const struct up_pdr *d = &r->pdr[i];

		o->key_val[i] = vkey_of(d->key_val);
		o->key_mask[i] = vkey_of(d->key_mask);
		o->remote4[i] = d->remote4;
		o->remote_mask[i] = d->remote_mask;
		o->port_lo[i] = d->rport_lo;
		o->port_hi[i] = (int32_t)d->rport_lo + d->rport_span;
		o->far_fwd[i] = r->far[d->far_id].action == UP_FAR_FORWARD;
	}
	o->live = (1u << r->n_pdr) - 1;
	memcpy(o->ue6_pool, r->ue6_pool, sizeof(o->ue6_pool));
}

void up_rules_init(void)
{
	for (unsigned int i = 0; i < up_n_rule_sets; i++) {
		up_rules_compile(&up_rule_defs[i], &up_rule_sets[i]);
		up_rules_vec_compile(&up_rule_sets[i], &up_rule_vecs[i]);
	}
}

void up_qer_params(uint64_t mbr_bps, double tsc_hz, uint32_t *rate, uint32_t *burst)
{
	double ticks_per_s = tsc_hz / (1 << UP_QER_TICK_SHIFT);
	double r = (double)mbr_bps / 8.0 / ticks_per_s * 65536.0;
	double b = (double)mbr_bps / 8.0 * 0.01; /* 10 ms at the rate */

	*rate = r >= 4294967295.0 ? UINT32_MAX : r < 1 ? 1 : (uint32_t)r;
	*burst = b >= 4294967295.0 ? UINT32_MAX : b < 3000 ? 3000 : (uint32_t)b;
}

/* the inline table: lines of two entries, zeroed (free and never taken), and their carries */
static int pool_init_inline(struct up_pool *p, uint32_t n, bool huge)
{
	p->lines = upi_lines(n);
	p->ent_bytes = (size_t)p->lines * UPI_WAYS * sizeof(struct up_sess_inline);
	p->carry_bytes = (size_t)p->lines * UPI_WAYS * sizeof(struct up_inline_carry);
	p->ent = up_mem_alloc(p->ent_bytes, huge);
	p->carry = up_mem_alloc(p->carry_bytes, false);
	if (!p->ent || !p->carry)
		return -ENOMEM;
	memset(p->ent, 0, p->ent_bytes);
	memset(p->carry, 0, p->carry_bytes);
	return 0;
}

int up_pool_init(struct up_pool *p, enum up_layout layout, uint32_t n, bool huge)
{
	up_rules_init();
	memset(p, 0, sizeof(*p));
	p->layout = layout;
	p->n = n;
	p->huge = huge;
	if (layout == UP_LAYOUT_FAT) {
		p->fat_bytes = (size_t)n * sizeof(struct up_sess_fat);
		p->fat = up_mem_alloc(p->fat_bytes ? p->fat_bytes : 1, huge);
		if (!p->fat)
			return -ENOMEM;
		return 0;
	}
	p->cold_bytes = (size_t)n * sizeof(struct up_sess_cold);
	/* the cold part is never on the packet path: no huge pages asked */
	p->cold = up_mem_alloc(p->cold_bytes ? p->cold_bytes : 1, false);
	if (layout == UP_LAYOUT_INLINE) {
		if (!p->cold || pool_init_inline(p, n, huge)) {
			up_pool_free(p);
			return -ENOMEM;
		}
		return 0;
	}
	p->hot_bytes = (size_t)n * sizeof(struct up_sess_hot);
	p->hot = up_mem_alloc(p->hot_bytes ? p->hot_bytes : 1, huge);
	if (!p->hot || !p->cold) {
		up_pool_free(p);
		return -ENOMEM;
	}
	return 0;
}

void up_pool_free(struct up_pool *p)
{
	up_mem_free(p->fat, p->fat_bytes ? p->fat_bytes : 1);
	up_mem_free(p->hot, p->hot_bytes ? p->hot_bytes : 1);
	up_mem_free(p->cold, p->cold_bytes ? p->cold_bytes : 1);
	up_mem_free(p->ent, p->ent_bytes);
	up_mem_free(p->carry, p->carry_bytes);
	memset(p, 0, sizeof(*p));
}

/* the UE's /64: its DNN's pool, then (in this generator) its IPv4 address */
static void ue_prefix6(const struct up_rules *r, uint32_t ue_ip4, uint8_t out[8])
{
	memcpy(out, r->ue6_pool, 4);
	memcpy(out + 4, &ue_ip4, 4);
}

/* the incident's 256-byte session, in the order a control plane fills it */
static void fat_set(struct up_sess_fat *s, uint32_t i, const struct up_sess_def *d,
		    const struct up_rules *r, uint32_t rate, uint32_t burst)
{
	memset(s, 0, sizeof(*s));
	s->seid = 0x1000000000ull + i;
	s->imsi = 1010000000000ull + i;
	snprintf(s->dnn, sizeof(s->dnn), "%s", d->rules == UP_RULES_IOT ? "iot" : "internet");
	s->teid = d->teid;
	s->ue_ip4 = d->ue_ip4;
	ue_prefix6(r, d->ue_ip4, s->ue_ip6);
	s->gnb_teid = d->teid ^ 0x5a5a5a5a;
	s->charging_id = i + 1;
	memcpy(s->gnb_addr, &d->gnb_ip4, 4);
	s->created_ns = 0;
	s->n_pdr = r->n_pdr;
	memcpy(s->pdr, r->pdr, sizeof(s->pdr));
	memcpy(s->far, r->far, sizeof(s->far));
	s->qer_rate = rate;
	s->qer_burst = burst;
	s->qer_state = burst; /* full bucket, refill time 0 */
}

/* identity, tunnel and charging data: what the data path never reads */
static void cold_set(struct up_sess_cold *c, uint32_t i, const struct up_sess_def *d, uint32_t line)
{
	memset(c, 0, sizeof(*c));
	c->seid = 0x1000000000ull + i;
	c->imsi = 1010000000000ull + i;
	snprintf(c->dnn, sizeof(c->dnn), "%s", d->rules == UP_RULES_IOT ? "iot" : "internet");
	memcpy(c->gnb_addr, &d->gnb_ip4, 4);
	c->gnb_teid = d->teid ^ 0x5a5a5a5a;
	c->charging_id = i + 1;
	c->line = line;
}

/* the profile of this rate and burst, added when new; -ENOSPC past UP_MAX_QER_PROFILES */
static int qer_profile(struct up_pool *p, uint32_t rate, uint32_t burst)
{
	for (unsigned int q = 0; q < p->n_qer; q++)
		if (p->qer[q].rate == rate && p->qer[q].burst == burst)
			return (int)q;
	if (p->n_qer == UP_MAX_QER_PROFILES)
		return -ENOSPC;
	p->qer[p->n_qer] = (struct up_qer_profile){ rate, burst };
	return (int)p->n_qer++;
}

/* an inline entry for session i: its TEID inserted, its hot part in 32 bytes */
static int inline_set(struct up_pool *p, uint32_t i, const struct up_sess_def *d,
		      uint8_t rules, uint32_t rate, uint32_t burst)
{
	const struct up_rules *r = &up_rule_sets[rules];
	int q = qer_profile(p, rate, burst), rc;
	uint8_t ue6[8];
	uint32_t e;

	if (q < 0)
		return q;
	ue_prefix6(r, d->ue_ip4, ue6);
	rc = upi_insert(p, d->teid, &e);
	if (rc)
		return rc;
	p->ent[e].ue_ip4 = d->ue_ip4;
	memcpy(&p->ent[e].ue6_mid, ue6 + 4, 4);
	p->ent[e].rules = rules;
	p->ent[e].qer = (uint8_t)q;
	p->ent[e].qer_state = burst;
	p->carry[e].cold = i;
	cold_set(&p->cold[i], i, d, e);
	return 0;
}

int up_pool_set(struct up_pool *p, uint32_t i, const struct up_sess_def *d, double tsc_hz)
{
	uint8_t rules = d->rules < up_n_rule_sets ? (uint8_t)d->rules : 0;
	uint32_t rate, burst;
	struct up_sess_hot *h;

	up_qer_params(d->mbr_bps, tsc_hz, &rate, &burst);
	if (p->layout == UP_LAYOUT_FAT) {
		fat_set(&p->fat[i], i, d, &up_rule_sets[rules], rate, burst);
		return 0;
	}
	if (p->layout == UP_LAYOUT_INLINE)
		return inline_set(p, i, d, rules, rate, burst);
	h = &p->hot[i];
	memset(h, 0, sizeof(*h));
	h->teid = d->teid;
	h->ue_ip4 = d->ue_ip4;
	ue_prefix6(&up_rule_sets[rules], d->ue_ip4, h->ue_ip6);
	h->rules = rules;
	h->qer_rate = rate;
	h->qer_burst = burst;
	h->qer_state = burst;
	cold_set(&p->cold[i], i, d, i);
	return 0;
}

uint64_t up_pool_huge_kib(const struct up_pool *p)
{
	if (p->layout == UP_LAYOUT_INLINE)
		return up_mem_huge_kib(p->ent);
	return p->layout == UP_LAYOUT_FAT ? up_mem_huge_kib(p->fat) : up_mem_huge_kib(p->hot);
}

void up_pool_counters(const struct up_pool *p, uint32_t i, uint64_t *pkts, uint64_t *bytes,
		      uint64_t *drops)
{
	if (p->layout == UP_LAYOUT_FAT) {
		*pkts = p->fat[i].pkts;
		*bytes = p->fat[i].bytes;
		*drops = p->fat[i].drop_pkts;
	} else if (p->layout == UP_LAYOUT_INLINE) {
		uint32_t e = p->cold[i].line;

		*pkts = (uint64_t)p->carry[e].pkts_hi << 32 | p->ent[e].pkts_lo;
		*bytes = (uint64_t)p->carry[e].bytes_hi << 32 | p->ent[e].bytes_lo;
		*drops = (uint64_t)p->carry[e].drops_hi << 16 | p->ent[e].drops_lo;
	} else {
		*pkts = p->hot[i].pkts;
		*bytes = p->hot[i].bytes;
		*drops = p->hot[i].drop_pkts;
	}
}
