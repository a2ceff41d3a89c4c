// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hw.h"
#include "session.h"

_Static_assert(sizeof(struct up_sess_fat) == 256, "fat sessions are 256 bytes, as in the incident");
_Static_assert(offsetof(struct up_sess_fat, pkts) >= 192, "fat counters sit in the last line");
_Static_assert(sizeof(struct up_pdr) == 32, "a compiled PDR is 32 bytes");
_Static_assert(sizeof(struct up_sess_hot) == 64, "the hot part is one cache line");

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
		.pdr = {
			{ .precedence = 10, .qfi = 9, .ue_check = 1, .remote_plen = 24,
			  .remote4 = IP4(192, 0, 2, 0), .rport_lo = 0, .rport_hi = 65535, .far_id = 0,
			  .pdr_id = 1 },
		},
		.far = { { .action = UP_FAR_FORWARD, .dest_iface = 1, .far_id = 1 } },
	},
	[UP_RULES_ANY] = {
		.n_pdr = 1,
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
	p->hot_bytes = (size_t)n * sizeof(struct up_sess_hot);
	p->cold_bytes = (size_t)n * sizeof(struct up_sess_cold);
	p->hot = up_mem_alloc(p->hot_bytes ? p->hot_bytes : 1, huge);
	/* the cold part is never on the packet path: no huge pages asked */
	p->cold = up_mem_alloc(p->cold_bytes ? p->cold_bytes : 1, false);
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
	memset(p, 0, sizeof(*p));
}

static void ue_prefix6(uint32_t ue_ip4, uint8_t out[8])
{
	out[0] = 0x20;
	out[1] = 0x01;
	out[2] = 0x0d;
	out[3] = 0xb8;
	memcpy(out + 4, &ue_ip4, 4);
}

void up_pool_set(struct up_pool *p, uint32_t i, const struct up_sess_def *d, double tsc_hz)
{
	const struct up_rules *r = &up_rule_sets[d->rules < up_n_rule_sets ? d->rules : 0];

	uint32_t rate, burst;
	uint8_t gnb[16] = { 0 };
	uint64_t imsi = 1010000000000ull + i;

	up_qer_params(d->mbr_bps, tsc_hz, &rate, &burst);
	memcpy(gnb, &d->gnb_ip4, 4);
	if (p->layout == UP_LAYOUT_FAT) {
		struct up_sess_fat *s = &p->fat[i];

		memset(s, 0, sizeof(*s));
		s->seid = 0x1000000000ull + i;
		s->imsi = imsi;
		snprintf(s->dnn, sizeof(s->dnn), "%s", d->rules == UP_RULES_IOT ? "iot" : "internet");
		s->teid = d->teid;
		s->ue_ip4 = d->ue_ip4;
		ue_prefix6(d->ue_ip4, s->ue_ip6);
		s->gnb_teid = d->teid ^ 0x5a5a5a5a;
		s->charging_id = i + 1;
		memcpy(s->gnb_addr, gnb, 16);
		s->created_ns = 0;
		s->n_pdr = r->n_pdr;
		memcpy(s->pdr, r->pdr, sizeof(s->pdr));
		memcpy(s->far, r->far, sizeof(s->far));
		s->qer_rate = rate;
		s->qer_burst = burst;
		s->qer_state = burst; /* full bucket, refill time 0 */
		return;
	}
	struct up_sess_hot *h = &p->hot[i];
	struct up_sess_cold *c = &p->cold[i];

	memset(h, 0, sizeof(*h));
	h->teid = d->teid;
	h->ue_ip4 = d->ue_ip4;
	ue_prefix6(d->ue_ip4, h->ue_ip6);
	h->rules = d->rules < up_n_rule_sets ? d->rules : 0;
	h->qer_rate = rate;
	h->qer_burst = burst;
	h->qer_state = burst;
	memset(c, 0, sizeof(*c));
	c->seid = 0x1000000000ull + i;
	c->imsi = imsi;
	snprintf(c->dnn, sizeof(c->dnn), "%s", d->rules == UP_RULES_IOT ? "iot" : "internet");
	memcpy(c->gnb_addr, gnb, 16);
	c->gnb_teid = d->teid ^ 0x5a5a5a5a;
	c->charging_id = i + 1;
}

uint64_t up_pool_huge_kib(const struct up_pool *p)
{
	return p->layout == UP_LAYOUT_FAT ? up_mem_huge_kib(p->fat) : up_mem_huge_kib(p->hot);
}

void up_pool_counters(const struct up_pool *p, uint32_t i, uint64_t *pkts, uint64_t *bytes,
		      uint64_t *drops)
{
	if (p->layout == UP_LAYOUT_FAT) {
		*pkts = p->fat[i].pkts;
		*bytes = p->fat[i].bytes;
		*drops = p->fat[i].drop_pkts;
	} else {
		*pkts = p->hot[i].pkts;
		*bytes = p->hot[i].bytes;
		*drops = p->hot[i].drop_pkts;
	}
}
