// SPDX-License-Identifier: GPL-2.0-only
/*
 * The traffic a run replays: generated (sessions, a uniform or Zipf stream,
 * frames from 64 templates, bad ones mixed in) or read from a capture, one
 * session per TEID; and the pcap writer of --pcap-out.
 */
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic.h"
#include "common.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

const char *const up_dist_names[] = { "uniform", "zipf", NULL };

static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* xorshift64*: fast, and good enough to pick sessions */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t rng_seed(uint64_t seed)
{
	uint64_t z = seed + 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return z ? z : 1;
}

/* a bijection of 32-bit words that maps only 0 to 0: distinct, non-zero TEIDs */
static uint32_t teid_of(uint32_t i, uint64_t seed)
{
	uint32_t x = (i + 1) * (uint32_t)(2 * seed + 1);

	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

struct flow {
	int family;
	uint8_t qfi, proto;
	uint8_t dst[16];
	uint16_t dport;
	unsigned int weight;
};

/* weights add up to UP_NTPL; see the rule sets in session.c for what each hits */
static const struct flow flows[] = {
	{ 4, 9, 6, { 198, 51, 100, 7 }, 443, 24 },    /* web: default PDR */
	{ 4, 9, 17, { 198, 51, 100, 9 }, 443, 16 },   /* QUIC */
	{ 4, 1, 17, { 203, 0, 113, 10 }, 5060, 6 },   /* SIP: IMS PDR */
	{ 4, 9, 6, { 198, 51, 100, 25 }, 25, 2 },     /* SMTP: FAR drop */
	{ 4, 9, 17, { 192, 0, 2, 5 }, 5683, 6 },      /* CoAP: the iot rule set's PDR */
	{ 6, 9, 6, { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, 443, 8 },
	{ 4, 7, 6, { 198, 51, 100, 7 }, 443, 2 },     /* QFI 7: no PDR */
};

static const uint16_t imix[12] = { 60, 576, 60, 60, 576, 60, 1400, 60, 576, 60, 60, 576 };

/* an inner IP packet of `size` bytes; returns where the UE address goes */
static size_t build_inner(uint8_t *b, const struct flow *f, unsigned int size, uint16_t sport,
			  uint16_t *ue_off)
{
	size_t l4;

	memset(b, 0, size);
	for (unsigned int i = 0; i < size; i++)
		b[i] = (uint8_t)(i * 7);
	if (f->family == 4) {
		b[0] = 0x45;
		b[1] = 0;
		wr16(b + 2, (uint16_t)size);
		wr16(b + 4, sport);
		wr16(b + 6, 0x4000);
		b[8] = 64;
		b[9] = f->proto;
		wr16(b + 10, 0);
		wr32(b + 12, 0x0a000001);
		memcpy(b + 16, f->dst, 4);
		*ue_off = 12;
		l4 = 20;
	} else {
		wr32(b, 0x60000000);
		wr16(b + 4, (uint16_t)(size - 40));
		b[6] = f->proto;
		b[7] = 64;
		memset(b + 8, 0, 16);
		wr32(b + 8, 0x20010db8);
		wr32(b + 12, 0x0a000001);
		b[23] = 1;
		memcpy(b + 24, f->dst, 16);
		*ue_off = 12;
		l4 = 40;
	}
	wr16(b + l4, sport);
	wr16(b + l4 + 2, f->dport);
	if (f->proto == 17) {
		wr16(b + l4 + 4, (uint16_t)(size - l4));
		wr16(b + l4 + 6, 0);
		if (f->dport == 5683) {
			/* CoAP: version 1, non-confirmable POST, no token, then the payload marker */
			b[l4 + 8] = 0x50;
			b[l4 + 9] = 0x02;
			wr16(b + l4 + 10, sport);
			b[l4 + 12] = 0xff;
		}
	} else {
		wr32(b + l4 + 4, 1);
		wr32(b + l4 + 8, 0);
		b[l4 + 12] = 5 << 4;
		b[l4 + 13] = 0x18; /* PSH ACK */
		wr16(b + l4 + 14, 65535);
		wr16(b + l4 + 16, 0);
		wr16(b + l4 + 18, 0);
	}
	return size;
}

static int build_templates(struct up_traffic *t, char *err, size_t errlen)
{
	uint8_t order[UP_NTPL], inner[UP_FRAME_MAX];
	unsigned int n = 0;
	uint64_t rs = rng_seed(7); /* the template order does not depend on --seed */

	for (unsigned int f = 0; f < sizeof(flows) / sizeof(flows[0]); f++)
		for (unsigned int w = 0; w < flows[f].weight; w++)
			order[n++] = (uint8_t)f;
	for (unsigned int i = UP_NTPL - 1; i > 0; i--) {
		unsigned int j = (unsigned int)(rng_next(&rs) % (i + 1));
		uint8_t x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	t->tpl = calloc(UP_NTPL, sizeof(*t->tpl));
	if (!t->tpl) {
		snprintf(err, errlen, "out of memory for the packet templates");
		return -1;
	}
	for (unsigned int k = 0; k < UP_NTPL; k++) {
		const struct flow *f = &flows[order[k]];
		struct up_tpl *tp = &t->tpl[k];
		unsigned int size = t->opt.pkt_size ? t->opt.pkt_size : imix[k % 12];
		struct gtpu_frame_spec fs = {
			.dst_mac = { 0x02, 0x00, 0x00, 0x00, 0x0f, 0x01 },
			.src_mac = { 0x02, 0x00, 0x00, 0x00, 0x0a, (uint8_t)(k % 16) },
			.outer_family = t->opt.outer_family,
			.sport = GTPU_PORT,
			.ttl = 64,
			.gtp = {
				.msg_type = GTPU_MSG_GPDU,
				.seq_present = k % 8 == 3,
				.seq = (uint16_t)k,
				.npdu_present = k % 16 == 5,
				.npdu = (uint8_t)k,
				.pdu_session = true,
				.pdu_type = GTPU_PDU_UL,
				.qfi = f->qfi,
			},
		};
		struct gtpu_pkt p;
		uint16_t ue_off;
		size_t len;
		int rc;

		if (fs.outer_family == 6) {
			static const uint8_t gnb[16] = { 0xfd, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
			static const uint8_t upf[16] = { 0xfd, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

			memcpy(fs.outer_src, gnb, 16);
			fs.outer_src[13] = (uint8_t)(k % 16);
			memcpy(fs.outer_dst, upf, 16);
		} else {
			uint8_t gnb[4] = { 172, 16, (uint8_t)(k % 16), 2 }, upf[4] = { 172, 16, 255, 1 };

			memcpy(fs.outer_src, gnb, 4);
			memcpy(fs.outer_dst, upf, 4);
		}
		build_inner(inner, f, size, (uint16_t)(40000 + k), &ue_off);
		len = gtpu_build_frame(tp->frame, sizeof(tp->frame), &fs, inner, size);
		rc = len ? gtpu_parse_frame(tp->frame, len, &p, NULL) : GTPU_ERR_SHORT;
		if (rc != GTPU_OK) {
			snprintf(err, errlen, "packet template %u does not parse: %s", k, gtpu_strerror(rc));
			return -1;
		}
		gtpu_frame_fix_checksums(tp->frame, len);
		tp->len = (uint16_t)len;
		tp->teid_off = (uint16_t)(p.tpdu_off - gtpu_hdr_size(&fs.gtp) + 4);
		tp->ue_off = (uint16_t)(p.tpdu_off + ue_off);
		tp->tpdu_len = p.tpdu_len;
	}
	return 0;
}

/*
 * Session i: its hashed TEID, its slot-encoded one (at a random generation:
 * slots have been reused), UE, rules. The generations come from a stream of
 * their own, so that a seed draws the same sessions and packet stream as
 * before slot-encoded TEIDs existed.
 */
static void sessions_gen(struct up_traffic *t)
{
	const struct up_gen_opts *o = &t->opt;
	uint64_t gs = rng_seed(o->seed ^ 0x6e6e6e6e6e6eull);

	up_teid_plan_init(&t->plan, t->n_sess, rng_seed(o->seed ^ 0x51075107u));
	for (uint32_t i = 0; i < t->n_sess; i++) {
		struct up_sess_def *d = &t->sess[i];
		uint32_t ue = 0x0a000000u + i + 1;

		d->teid = teid_of(i, o->seed);
		d->ue_ip4 = __builtin_bswap32(ue);
		d->rules = i % 8 == 7 ? UP_RULES_IOT : UP_RULES_INTERNET;
		d->gnb_ip4 = __builtin_bswap32(0xac100002u | (i % 16) << 8);
		d->mbr_bps = o->mbr_bps;
		t->slot_gen[i] = (uint32_t)(rng_next(&gs) >> 32);
		t->slot_teid[i] = up_teid_make(&t->plan, i, t->slot_gen[i]);
	}
}

/* the stream's sessions, Zipf: rank r has weight 1/(r+1)^s; ranks land on random sessions */
static int stream_zipf(struct up_traffic *t, uint64_t *rs)
{
	uint32_t n = t->n_sess, *perm = malloc((size_t)n * sizeof(*perm));
	double *cdf = malloc((size_t)n * sizeof(*cdf)), sum = 0;

	if (!cdf || !perm) {
		free(cdf);
		free(perm);
		return -1;
	}
	for (uint32_t r = 0; r < n; r++) {
		sum += pow((double)r + 1, -t->opt.zipf_s);
		cdf[r] = sum;
		perm[r] = r;
	}
	for (uint32_t r = n - 1; r > 0; r--) {
		uint32_t j = (uint32_t)(rng_next(rs) % (r + 1));
		uint32_t x = perm[r];

		perm[r] = perm[j];
		perm[j] = x;
	}
	for (uint32_t i = 0; i < t->len; i++) {
		double u = (double)(rng_next(rs) >> 11) * 0x1.0p-53 * sum;
		uint32_t lo = 0, hi = n - 1;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		t->sidx[i] = perm[lo];
	}
	free(cdf);
	free(perm);
	return 0;
}

/* what each position writes into its frame, under either kind of TEID */
static void specs_fill(struct up_traffic *t)
{
	for (uint32_t i = 0; i < t->len; i++) {
		uint32_t s = t->sidx[i];

		t->spec[i].teid_be = __builtin_bswap32(t->sess[s].teid);
		t->slot_spec[i].teid_be = __builtin_bswap32(t->slot_teid[s]);
		t->spec[i].ue_be = t->slot_spec[i].ue_be = t->sess[s].ue_ip4;
	}
}

/*
 * Every bad_every-th position, the bad kinds in turn. A forged TEID is,
 * with hashed TEIDs, one no session has (teid_of() is a bijection: indexes
 * from n up are nobody's); slot-encoded, the slot's generation before, or
 * a slot beyond n. A malformed frame keeps its session's TEID (the NIC
 * steers it there) but counts to no session.
 */
static int bad_fill(struct up_traffic *t)
{
	uint32_t every = t->opt.bad_every, j = 0;

	if (!every)
		return 0;
	t->bad = calloc(t->len, 1);
	if (!t->bad)
		return -1;
	for (uint32_t i = every - 1; i < t->len; i += every, j++) {
		uint32_t s = t->sidx[i], slot_teid = t->slot_teid[s];
		uint8_t kind = (uint8_t)(UP_BAD_NONE + 1 + j % (UP_NBAD - 1));

		t->bad[i] = kind;
		t->sidx[i] = UINT32_MAX;
		if (up_bad_malformed(kind))
			continue;
		if (kind == UP_BAD_STALE_TEID)
			slot_teid = up_teid_make(&t->plan, s, t->slot_gen[s] - 1);
		else
			slot_teid = up_teid_out_of_range(&t->plan, j);
		t->spec[i].teid_be = __builtin_bswap32(teid_of(t->n_sess + j, t->opt.seed));
		t->slot_spec[i].teid_be = __builtin_bswap32(slot_teid);
	}
	return 0;
}

int up_traffic_gen(struct up_traffic *t, const struct up_gen_opts *o, char *err, size_t errlen)
{
	uint64_t rs = rng_seed(o->seed), want;
	uint32_t n = o->sessions;

	memset(t, 0, sizeof(*t));
	t->opt = *o;
	if (!n) {
		snprintf(err, errlen, "no sessions to generate traffic for");
		return -1;
	}
	want = o->packets < 64 ? 64 : (o->packets + 63) / 64 * 64;
	t->len = (uint32_t)(2ull * n > (1u << 20) ? 2ull * n : (1u << 20));
	if (want < t->len)
		t->len = (uint32_t)want;
	t->n_sess = n;
	t->sess = calloc(n, sizeof(*t->sess));
	t->slot_teid = malloc((size_t)n * sizeof(*t->slot_teid));
	t->slot_gen = malloc((size_t)n * sizeof(*t->slot_gen));
	t->spec = malloc((size_t)t->len * sizeof(*t->spec));
	t->slot_spec = malloc((size_t)t->len * sizeof(*t->slot_spec));
	t->sidx = malloc((size_t)t->len * sizeof(*t->sidx));
	if (!t->sess || !t->slot_teid || !t->slot_gen || !t->spec || !t->slot_spec || !t->sidx)
		goto nomem;
	sessions_gen(t);
	if (o->dist == UP_DIST_ZIPF) {
		if (stream_zipf(t, &rs))
			goto nomem;
	} else {
		for (uint32_t i = 0; i < t->len; i++)
			t->sidx[i] = (uint32_t)(((rng_next(&rs) >> 32) * n) >> 32);
	}
	specs_fill(t);
	if (bad_fill(t))
		goto nomem;
	return build_templates(t, err, errlen);
nomem:
	up_traffic_free(t);
	snprintf(err, errlen, "out of memory for %u sessions and a stream of %u packets", n, t->len);
	return -1;
}

void up_traffic_free(struct up_traffic *t)
{
	free(t->sess);
	free(t->spec);
	free(t->slot_spec);
	free(t->slot_teid);
	free(t->slot_gen);
	free(t->bad);
	free(t->sidx);
	free(t->tpl);
	free(t->fbuf);
	free(t->foff);
	free(t->flen);
	free(t->ftpdu);
	memset(t, 0, sizeof(*t));
}

uint32_t up_traffic_pos_teid(const struct up_traffic *t, enum up_teids teids, uint32_t pos)
{
	if (t->from_pcap)
		return t->sidx[pos] == UINT32_MAX ? 0 : t->sess[t->sidx[pos]].teid;
	return __builtin_bswap32(teids == UP_TEIDS_SLOT ? t->slot_spec[pos].teid_be : t->spec[pos].teid_be);
}

size_t up_traffic_frame(const struct up_traffic *t, enum up_teids teids, uint64_t k, uint32_t pos,
			uint8_t *buf, size_t cap)
{
	const struct up_spec *sp = teids == UP_TEIDS_SLOT ? &t->slot_spec[pos] : &t->spec[pos];
	size_t len;

	if (t->from_pcap) {
		len = t->flen[pos] < cap ? t->flen[pos] : cap;
		memcpy(buf, t->fbuf + t->foff[pos], len);
		return len;
	}
	const struct up_tpl *tp = &t->tpl[k % UP_NTPL];

	len = tp->len < cap ? tp->len : cap;
	memcpy(buf, tp->frame, len);
	memcpy(buf + tp->teid_off, &sp->teid_be, 4);
	memcpy(buf + tp->ue_off, &sp->ue_be, 4);
	gtpu_frame_fix_checksums(buf, len);
	if (t->bad && t->bad[pos] == UP_BAD_CUT && len > UP_BAD_CUT_LEN)
		len = UP_BAD_CUT_LEN;
	if (t->bad && t->bad[pos] == UP_BAD_VERSION)
		buf[tp->teid_off - 4] ^= UP_BAD_VERSION_XOR;
	return len;
}

uint32_t up_traffic_tpdu(const struct up_traffic *t, uint64_t k, uint32_t pos)
{
	return t->from_pcap ? t->ftpdu[pos] : t->tpl[k % UP_NTPL].tpdu_len;
}

/* ---- pcap in ------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* the frame as Ethernet: link headers other than Ethernet are replaced by one */
static size_t to_ethernet(int dlt, const uint8_t *d, size_t n, uint8_t *out, size_t cap)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	uint16_t et;
	size_t hl;

	switch (dlt) {
	case DLT_EN10MB:
		if (n > cap)
			n = cap;
		memcpy(out, d, n);
		return n;
	case DLT_LINUX_SLL:
		if (n < 16)
			return 0;
		et = (uint16_t)(d[14] << 8 | d[15]);
		hl = 16;
		break;
	case DLT_LINUX_SLL2:
		if (n < 20)
			return 0;
		et = (uint16_t)(d[0] << 8 | d[1]);
		hl = 20;
		break;
	default: /* raw IP */
		if (n < 1)
			return 0;
		et = d[0] >> 4 == 6 ? 0x86dd : 0x0800;
		hl = 0;
		break;
	}
	n -= hl;
	if (n + 14 > cap)
		n = cap - 14;
	memcpy(out, macs, 12);
	wr16(out + 12, et);
	memcpy(out + 14, d + hl, n);
	return n + 14;
}

/* the capture, if its link type is one we read */
static pcap_t *pcap_in_open(const char *path, int *dlt, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, ebuf);

	if (!pc) {
		snprintf(err, errlen, "--pcap-in: cannot read %s: %s", path, ebuf);
		return NULL;
	}
	*dlt = pcap_datalink(pc);
	if (*dlt != DLT_EN10MB && *dlt != DLT_LINUX_SLL && *dlt != DLT_LINUX_SLL2 && *dlt != DLT_RAW &&
	    *dlt != DLT_IPV4 && *dlt != DLT_IPV6) {
		snprintf(err, errlen, "--pcap-in: %s: link type %s is not Ethernet, Linux cooked or raw IP",
			 path, pcap_datalink_val_to_name(*dlt) ? pcap_datalink_val_to_name(*dlt) : "?");
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

/* room for frame n and len more octets; the capacities grow by doubling */
static int frames_grow(struct up_traffic *t, uint32_t n, size_t used, size_t len, size_t *cap_frames,
		       size_t *cap_bytes)
{
	if (n == *cap_frames) {
		size_t nc = *cap_frames ? *cap_frames * 2 : 1024;
		size_t *fo = realloc(t->foff, nc * sizeof(*fo));
		uint16_t *fl = fo ? realloc(t->flen, nc * sizeof(*fl)) : NULL;

		if (fo)
			t->foff = fo;
		if (fl)
			t->flen = fl;
		if (!fo || !fl)
			return -1;
		*cap_frames = nc;
	}
	if (used + len > *cap_bytes) {
		size_t nc = *cap_bytes ? *cap_bytes * 2 : 1 << 20;
		uint8_t *b = realloc(t->fbuf, nc);

		if (!b)
			return -1;
		t->fbuf = b;
		*cap_bytes = nc;
	}
	return 0;
}

/* every frame of the capture, as Ethernet, into t's frame buffer */
static int frames_read(struct up_traffic *t, pcap_t *pc, int dlt, const char *path, char *err,
		       size_t errlen)
{
	struct pcap_pkthdr *ph;
	const u_char *data;
	size_t cap_frames = 0, cap_bytes = 0, used = 0;
	uint32_t n = 0;
	int rc;

	while ((rc = pcap_next_ex(pc, &ph, &data)) == 1) {
		uint8_t frame[UP_PCAP_FRAME_MAX];
		size_t len = to_ethernet(dlt, data, ph->caplen, frame, sizeof(frame));

		if (n == UINT32_MAX - 1)
			break;
		if (frames_grow(t, n, used, len, &cap_frames, &cap_bytes)) {
			snprintf(err, errlen, "--pcap-in: out of memory reading %s", path);
			return -1;
		}
		if (ph->caplen < ph->len || ph->caplen > sizeof(frame))
			t->truncated++;
		memcpy(t->fbuf + used, frame, len);
		t->foff[n] = used;
		t->flen[n] = (uint16_t)len;
		used += len;
		n++;
	}
	if (rc == -1) {
		snprintf(err, errlen, "--pcap-in: %s: %s", path, pcap_geterr(pc));
		return -1;
	}
	if (!n) {
		snprintf(err, errlen, "--pcap-in: %s holds no packets", path);
		return -1;
	}
	t->len = n;
	return 0;
}

/* the distinct TEIDs of the well-formed G-PDUs, sorted, into teids; their count */
static uint32_t frames_teids(const struct up_traffic *t, uint32_t *teids)
{
	uint32_t nt = 0, n = 0;

	for (uint32_t i = 0; i < t->len; i++) {
		struct gtpu_pkt p;

		if (gtpu_parse_frame(t->fbuf + t->foff[i], t->flen[i], &p, NULL) == GTPU_OK && p.teid)
			teids[nt++] = p.teid;
	}
	qsort(teids, nt, sizeof(*teids), cmp_u32);
	for (uint32_t i = 0; i < nt; i++)
		if (!i || teids[i] != teids[i - 1])
			teids[n++] = teids[i];
	return n;
}

/* one session per TEID, with rules that forward everything; each frame's session */
static int frames_sessions(struct up_traffic *t, uint64_t mbr_bps)
{
	uint32_t n = t->len, *teids = malloc((size_t)n * sizeof(*teids));

	t->sidx = malloc((size_t)n * sizeof(*t->sidx));
	t->ftpdu = calloc(n, sizeof(*t->ftpdu));
	if (!t->sidx || !t->ftpdu || !teids)
		goto nomem;
	t->n_sess = frames_teids(t, teids);
	t->sess = calloc(t->n_sess ? t->n_sess : 1, sizeof(*t->sess));
	if (!t->sess)
		goto nomem;
	for (uint32_t i = 0; i < t->n_sess; i++) {
		t->sess[i].teid = teids[i];
		t->sess[i].rules = UP_RULES_ANY;
		t->sess[i].mbr_bps = mbr_bps;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct gtpu_pkt p;
		uint32_t *hit;

		t->sidx[i] = UINT32_MAX;
		if (gtpu_parse_frame(t->fbuf + t->foff[i], t->flen[i], &p, NULL) != GTPU_OK || !p.teid)
			continue;
		hit = bsearch(&p.teid, teids, t->n_sess, sizeof(*teids), cmp_u32);
		t->sidx[i] = (uint32_t)(hit - teids);
		t->ftpdu[i] = p.tpdu_len;
		if (!t->sess[t->sidx[i]].ue_ip4 && p.inner_family == 4)
			memcpy(&t->sess[t->sidx[i]].ue_ip4, p.src, 4);
	}
	free(teids);
	return 0;
nomem:
	free(teids);
	return -1;
}

int up_traffic_pcap(struct up_traffic *t, const char *path, uint64_t mbr_bps, char *err,
		    size_t errlen)
{
	pcap_t *pc;
	int dlt, rc;

	memset(t, 0, sizeof(*t));
	t->from_pcap = true;
	pc = pcap_in_open(path, &dlt, err, errlen);
	if (!pc)
		return -1;
	rc = frames_read(t, pc, dlt, path, err, errlen);
	pcap_close(pc);
	if (!rc && frames_sessions(t, mbr_bps)) {
		snprintf(err, errlen, "--pcap-in: out of memory reading %s", path);
		rc = -1;
	}
	if (rc)
		up_traffic_free(t);
	return rc;
}

/* ---- pcap out -------------------------------------------------------------------- */

struct up_pcap_out {
	pcap_t *dead;
	pcap_dumper_t *d;
};

struct up_pcap_out *up_pcap_open(const char *path, char *err, size_t errlen)
{
	struct up_pcap_out *o = calloc(1, sizeof(*o));

	if (!o) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	o->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	if (!o->dead) {
		free(o);
		snprintf(err, errlen, "--pcap-out: libpcap could not start a capture file");
		return NULL;
	}
	o->d = pcap_dump_open(o->dead, path);
	if (!o->d) {
		snprintf(err, errlen, "--pcap-out: %s", pcap_geterr(o->dead));
		pcap_close(o->dead);
		free(o);
		return NULL;
	}
	return o;
}

int up_pcap_write(struct up_pcap_out *o, const uint8_t *frame, size_t len, uint64_t ts_ns)
{
	struct pcap_pkthdr h;

	h.ts.tv_sec = (time_t)(ts_ns / TK_NSEC_PER_SEC);
	h.ts.tv_usec = (suseconds_t)(ts_ns % TK_NSEC_PER_SEC); /* nanoseconds: NANO precision */
	h.caplen = h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)o->d, &h, frame);
	return 0;
}

int up_pcap_close(struct up_pcap_out *o)
{
	int rc = 0;
	FILE *f;

	if (!o)
		return 0;
	f = pcap_dump_file(o->d);
	if (pcap_dump_flush(o->d) || (f && ferror(f)))
		rc = -1;
	pcap_dump_close(o->d);
	pcap_close(o->dead);
	free(o);
	return rc;
}
