// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user-plane path (upf/path_*.c, upf/lookup*.c and friends): rules,
 * QER, the generator, exact counters in every design, pcap round trip, the
 * memory floor, and the rte_hash back end (or its absence).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "upf/floor.h"
#include "upf/hw.h"
#include "upf/path.h"
#include "upf/table_rte.h"
#include "upf/traffic.h"

static struct gtpu_pkt pkt4(uint8_t qfi, uint8_t proto, const char *src, const char *dst,
			    uint16_t dport)
{
	struct gtpu_pkt p;

	memset(&p, 0, sizeof(p));
	p.has_qfi = 1;
	p.qfi = qfi;
	p.proto = proto;
	p.inner_family = 4;
	inet_pton(AF_INET, src, p.src);
	inet_pton(AF_INET, dst, p.dst);
	p.dport = dport;
	return p;
}

static void test_pdr_match(void **state)
{
	const struct up_rules *inet = &up_rule_sets[UP_RULES_INTERNET];
	const struct up_rules *iot = &up_rule_sets[UP_RULES_IOT];
	uint32_t ue;
	uint8_t ue6[8] = { 0x20, 0x01, 0x0d, 0xb8, 10, 0, 0, 7 };
	struct gtpu_pkt p;
	const struct up_pdr *m;
	(void)state;

	up_rules_init();
	inet_pton(AF_INET, "10.0.0.7", &ue);
	/* IMS signalling: QFI 1, UDP to 203.0.113.0/24 port 5060 */
	p = pkt4(1, 17, "10.0.0.7", "203.0.113.10", 5060);
	m = up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6);
	assert_non_null(m);
	assert_int_equal(m->pdr_id, 1);
	/* the same on port 5062 is outside the filter, and QFI 1 has no other PDR */
	p.dport = 5062;
	assert_null(up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6));
	/* SMTP on QFI 9 hits the blocking PDR (precedence 50) before the default one */
	p = pkt4(9, 6, "10.0.0.7", "198.51.100.25", 25);
	m = up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6);
	assert_int_equal(m->pdr_id, 2);
	assert_int_equal(inet->far[m->far_id].action, UP_FAR_DROP);
	/* web on QFI 9: the default PDR, forwarded */
	p = pkt4(9, 6, "10.0.0.7", "198.51.100.7", 443);
	m = up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6);
	assert_int_equal(m->pdr_id, 3);
	assert_int_equal(inet->far[m->far_id].action, UP_FAR_FORWARD);
	/* a spoofed source fails the UE check */
	p = pkt4(9, 6, "10.0.0.8", "198.51.100.7", 443);
	assert_null(up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6));
	/* no QFI at all: only PDRs without a QFI condition could match */
	p = pkt4(9, 6, "10.0.0.7", "198.51.100.7", 443);
	p.has_qfi = 0;
	assert_null(up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6));
	/* IPv6: the UE check compares the /64 prefix */
	memset(&p, 0, sizeof(p));
	p.has_qfi = 1;
	p.qfi = 9;
	p.proto = 6;
	p.inner_family = 6;
	memcpy(p.src, ue6, 8);
	p.src[15] = 1;
	p.dport = 443;
	m = up_pdr_match(inet->pdr, inet->n_pdr, &p, ue, ue6);
	assert_int_equal(m->pdr_id, 3);
	/* ... and an IPv4 destination prefix never matches an IPv6 packet */
	assert_null(up_pdr_match(iot->pdr, iot->n_pdr, &p, ue, ue6));
	p = pkt4(9, 17, "10.0.0.7", "192.0.2.5", 5683);
	assert_non_null(up_pdr_match(iot->pdr, iot->n_pdr, &p, ue, ue6));
	p = pkt4(9, 17, "10.0.0.7", "192.0.3.5", 5683);
	assert_null(up_pdr_match(iot->pdr, iot->n_pdr, &p, ue, ue6));
}

static void test_pdr_compile(void **state)
{
	struct up_pdr_def d = { .precedence = 7, .qfi = 3, .proto = 17, .remote_plen = 16,
				.remote4 = 0x0000a8c0 /* 192.168.0.0 in network order */,
				.rport_lo = 10, .rport_hi = 20, .far_id = 1, .pdr_id = 9 };
	struct up_pdr c[UP_MAX_PDR];
	const uint8_t ue6[8] = { 0 };
	struct gtpu_pkt p = pkt4(3, 17, "1.1.1.1", "192.168.200.1", 10);
	(void)state;

	memset(c, 0, sizeof(c));
	up_pdr_compile(&d, &c[0]);
	assert_int_equal(c[0].rport_span, 10);
	assert_int_equal(c[0].remote_mask, htonl(0xffff0000));
	assert_int_equal(up_pdr_hits(c, 1, &p, 0, ue6), 1);
	p.dport = 21;
	assert_int_equal(up_pdr_hits(c, 1, &p, 0, ue6), 0);
	p.dport = 20;
	inet_pton(AF_INET, "192.169.0.1", p.dst);
	assert_int_equal(up_pdr_hits(c, 1, &p, 0, ue6), 0);
	/* n masks the unused (zeroed) entries, which would match port 0 */
	p.dport = 0;
	assert_int_equal(up_pdr_hits(c, 0, &p, 0, ue6), 0);
	assert_int_equal(up_pdr_hits(c, 3, &p, 0, ue6), 6);
}

/* the vector form of every rule set answers as the scalar form, on packets near every edge */
static void test_pdr_vec_matches_scalar(void **state)
{
	static const uint8_t qfis[] = { 0, 1, 7, 9, 63 }, protos[] = { 0, 1, 6, 17, 132 };
	static const char *const dsts[] = { "203.0.113.10", "203.0.112.255", "198.51.100.25",
					    "192.0.2.5", "192.0.3.5", "0.0.0.0" };
	static const uint16_t ports[] = { 0, 1, 24, 25, 26, 443, 5059, 5060, 5061, 5062, 5683, 65535 };
	const uint8_t ue6[8] = { 0x20, 0x01, 0x0d, 0xb8, 10, 0, 0, 7 };
	uint32_t ue;
	unsigned int checked = 0, hit = 0;
	(void)state;

	up_rules_init();
	inet_pton(AF_INET, "10.0.0.7", &ue);
	/* every combination: rule set, family (4, none, 6), QFI, has-QFI, protocol, destination, port, spoofed */
	for (unsigned int k = 0; k < up_n_rule_sets * 3 * 5 * 2 * 5 * 6 * 12 * 2; k++) {
		unsigned int x = k, rs, fam, spoof, want, got, ue_ok, is4, is6;
		const struct up_rules *r;
		struct gtpu_pkt p;
		uint32_t src4, dst4;
		uint64_t src6, u6;

		rs = x % up_n_rule_sets, x /= up_n_rule_sets;
		fam = (x % 3) * 2, x /= 3;
		p = pkt4(qfis[x % 5], protos[x / 5 / 2 % 5], (x / 5 / 2 / 5 / 6 / 12) ? "10.0.0.8" : "10.0.0.7",
			 dsts[x / 5 / 2 / 5 % 6], ports[x / 5 / 2 / 5 / 6 % 12]);
		p.has_qfi = (uint8_t)(x / 5 % 2);
		spoof = x / 5 / 2 / 5 / 6 / 12;
		p.inner_family = (uint8_t)(fam == 2 ? 0 : fam);
		if (fam == 6) {
			memset(p.src, 0, 16);
			memcpy(p.src, ue6, 8);
			p.src[7] ^= (uint8_t)spoof;
			p.src[15] = 1;
			memcpy(p.dst + 4, "\x20\x01\x0d\xb8", 4);
		}
		r = &up_rule_sets[rs];
		want = up_pdr_hits(r->pdr, r->n_pdr, &p, ue, ue6);
		memcpy(&src4, p.src, 4);
		memcpy(&dst4, p.dst, 4);
		memcpy(&src6, p.src, 8);
		memcpy(&u6, ue6, 8);
		is4 = p.inner_family == 4;
		is6 = p.inner_family == 6;
		ue_ok = (is4 & (src4 == ue)) | (is6 & (src6 == u6));
		got = up_rules_vec_hits(&up_rule_vecs[rs], up_vkey(&p, ue_ok), dst4, p.dport);
		assert_int_equal(got, want);
		/* the first hit's FAR */
		if (want)
			assert_int_equal(up_rule_vecs[rs].far_fwd[__builtin_ctz(want)],
					 r->far[r->pdr[__builtin_ctz(want)].far_id].action == UP_FAR_FORWARD);
		checked++;
		hit += want != 0;
	}
	tk_assert_cmp(checked, >, 10000);
	/* the grid reaches both sides of the rules */
	tk_assert_cmp(hit, >, 100);
	tk_assert_cmp(hit, <, checked - 100);
}

static void test_qer_token_bucket(void **state)
{
	uint32_t rate, burst;
	uint64_t s, a;
	double hz = 2.0e9;
	uint64_t tick = 1000000; /* ticks of 1024 TSC cycles */
	unsigned int passed = 0;
	(void)state;

	/* 8 Mbit/s = 1 MB/s; the bucket holds 10 ms of it: 10000 bytes */
	up_qer_params(8000000, hz, &rate, &burst);
	assert_int_equal(burst, 10000);
	s = a = burst;
	for (int i = 0; i < 20; i++) {
		bool p1 = up_qer_step(&s, tick, rate, burst, 1000);
		bool p2 = up_qer_step_atomic(&a, tick, rate, burst, 1000);

		assert_int_equal(p1, p2);
		passed += p1;
	}
	/* the first step refills to the burst: 10 packets of 1000 bytes pass */
	assert_int_equal(passed, 10);
	assert_int_equal(s, a);
	/* 1 ms later, 1000 bytes came back: one more packet */
	tick += (uint64_t)(hz / 1024 / 1000) + 1;
	assert_true(up_qer_step(&s, tick, rate, burst, 1000));
	assert_false(up_qer_step(&s, tick, rate, burst, 1000));
	/* 0 bytes always pass and take nothing */
	assert_true(up_qer_step(&s, tick, rate, burst, 0));
}

static struct up_traffic gen(uint32_t sessions, uint64_t packets, enum up_dist dist)
{
	struct up_gen_opts o = { .sessions = sessions, .packets = packets, .dist = dist,
				 .zipf_s = 0.99, .outer_family = 4, .mbr_bps = 100000000,
				 .seed = 3 };
	struct up_traffic t;
	char err[256];

	assert_int_equal(up_traffic_gen(&t, &o, err, sizeof(err)), 0);
	return t;
}

static void test_generator(void **state)
{
	struct up_traffic t = gen(2000, 100000, UP_DIST_UNIFORM);
	uint32_t *seen = calloc(t.n_sess, sizeof(uint32_t));
	unsigned int qfi_seen[64] = { 0 }, v6 = 0;
	(void)state;

	/* distinct, non-zero TEIDs */
	for (uint32_t i = 0; i < t.n_sess; i++) {
		assert_int_not_equal(t.sess[i].teid, 0);
		for (uint32_t j = i + 1; j < t.n_sess && j < i + 50; j++)
			assert_int_not_equal(t.sess[i].teid, t.sess[j].teid);
	}
	for (uint32_t i = 0; i < t.len; i++) {
		tk_assert_cmp(t.sidx[i], <, t.n_sess);
		assert_int_equal(ntohl(t.spec[i].teid_be), t.sess[t.sidx[i]].teid);
		seen[t.sidx[i]]++;
	}
	for (uint32_t i = 0; i < t.n_sess; i++)
		tk_assert_cmp(seen[i], >, 0); /* 100000 uniform draws over 2000 */
	/* every template parses as an uplink G-PDU with a PDU Session Container */
	for (unsigned int k = 0; k < UP_NTPL; k++) {
		struct gtpu_pkt p;
		uint8_t f[UP_FRAME_MAX];
		size_t n = up_traffic_frame(&t, UP_TEIDS_HASHED, k, k, f, sizeof(f));

		assert_int_equal(gtpu_parse_frame(f, n, &p, NULL), GTPU_OK);
		assert_int_equal(p.teid, t.sess[t.sidx[k]].teid);
		assert_int_equal(p.pdu_type, GTPU_PDU_UL);
		assert_int_equal(p.tpdu_len, up_traffic_tpdu(&t, k, k));
		qfi_seen[p.qfi]++;
		v6 += p.inner_family == 6;
	}
	assert_int_equal(qfi_seen[1], 6);
	assert_int_equal(qfi_seen[7], 2);
	assert_int_equal(qfi_seen[9], 56);
	assert_int_equal(v6, 8);
	free(seen);
	up_traffic_free(&t);
}

static void test_zipf_is_skewed(void **state)
{
	struct up_traffic t = gen(10000, 200000, UP_DIST_ZIPF);
	uint32_t *count = calloc(t.n_sess, sizeof(uint32_t)), max = 0;
	(void)state;

	for (uint32_t i = 0; i < t.len; i++)
		count[t.sidx[i]]++;
	for (uint32_t i = 0; i < t.n_sess; i++)
		if (count[i] > max)
			max = count[i];
	/* rank 1 of 10000 at s=0.99 gets about 1/H = 10% of the draws */
	tk_assert_cmp(max, >, t.len / 20);
	free(count);
	up_traffic_free(&t);
}

static void run_one(const struct up_traffic *t, enum up_design d, unsigned int workers,
		    enum up_layout l, unsigned int batch, bool prefetch, enum up_table_kind tk)
{
	struct up_run_cfg c = { .design = d, .table = tk, .layout = l, .batch = batch,
				.prefetch = prefetch, .workers = workers, .packets = 30011,
				.verify = true, .teid_check = true };
	struct up_result r;
	char err[256];

	assert_int_equal(up_run(t, &c, &r, NULL, err, sizeof(err)), 0);
	if (!r.verify_ok)
		fail_msg("%s, %u workers, %s, %s, batch %u%s: %s", up_design_names[d], workers,
			 up_layout_names[l], up_table_names[tk], batch, prefetch ? ", prefetch" : "",
			 r.verify_msg);
	assert_int_equal(r.verify_pkts, c.packets);
	assert_int_equal(r.malformed + r.not_gtpu + r.no_session + r.no_pdr + r.far_drop +
				 r.qer_drop + r.forwarded,
			 c.packets);
	assert_int_equal(r.threads, workers + (d == UP_SHARDED));
}

static void test_counters_exact_every_design(void **state)
{
	struct up_traffic t = gen(700, 30011, UP_DIST_ZIPF);
	(void)state;

	for (int d = UP_GLOBAL; d <= UP_STEERED; d++)
		for (unsigned int w = 1; w <= 2; w++) {
			for (int l = UP_LAYOUT_FAT; l <= UP_LAYOUT_INLINE; l++) {
				run_one(&t, d, w, l, 32, true, UP_TABLE_OWN);
				run_one(&t, d, w, l, 1, false, UP_TABLE_OWN);
				run_one(&t, d, w, l, 7, true, UP_TABLE_OWN);
			}
			run_one(&t, d, w, UP_LAYOUT_SPLIT, 32, true, UP_TABLE_SLOT);
			run_one(&t, d, w, UP_LAYOUT_SPLIT, 1, false, UP_TABLE_SLOT);
			run_one(&t, d, w, UP_LAYOUT_SPLIT, 7, true, UP_TABLE_SLOT);
		}
	up_traffic_free(&t);
}

/* the bad packets of the first `packets` of a stream, by kind */
static void bad_expected(const struct up_traffic *t, uint64_t packets, uint64_t *forged,
			 uint64_t *malformed)
{
	*forged = *malformed = 0;
	for (uint64_t g = 0; g < packets; g++) {
		uint8_t kind = t->bad[g % t->len];

		*forged += kind == UP_BAD_STALE_TEID || kind == UP_BAD_SLOT_RANGE;
		*malformed += kind == UP_BAD_CUT || kind == UP_BAD_VERSION;
	}
}

static void test_bad_packets_dropped(void **state)
{
	struct up_gen_opts o = { .sessions = 500, .packets = 20000, .outer_family = 4,
				 .mbr_bps = 100000000, .seed = 5, .bad_every = 6 };
	struct up_traffic t;
	uint64_t forged, malformed;
	char err[256];
	(void)state;

	assert_int_equal(up_traffic_gen(&t, &o, err, sizeof(err)), 0);
	bad_expected(&t, 30011, &forged, &malformed);
	/* every 6th packet, four kinds in turn: a quarter each */
	tk_assert_cmp(forged, >, 30011 / 6 / 2 - 4);
	tk_assert_cmp(forged, <, 30011 / 6 / 2 + 4);
	tk_assert_cmp(malformed, >, 30011 / 6 / 2 - 4);
	tk_assert_cmp(malformed, <, 30011 / 6 / 2 + 4);
	for (int d = UP_GLOBAL; d <= UP_STEERED; d++)
		for (unsigned int w = 1; w <= 2; w++) {
			struct up_run_cfg c = { .design = d, .table = UP_TABLE_OWN, .layout = UP_LAYOUT_SPLIT,
						.batch = 8, .prefetch = true, .workers = w,
						.packets = 30011, .verify = true, .teid_check = true };
			enum up_table_kind tables[3] = { UP_TABLE_OWN, UP_TABLE_OWN, UP_TABLE_SLOT };
			enum up_layout layouts[3] = { UP_LAYOUT_SPLIT, UP_LAYOUT_INLINE, UP_LAYOUT_SPLIT };

			for (int k = 0; k < 3; k++) {
				struct up_result r;

				c.table = tables[k];
				c.layout = layouts[k];
				assert_int_equal(up_run(&t, &c, &r, NULL, err, sizeof(err)), 0);
				if (!r.verify_ok)
					fail_msg("%s, %u workers, %s/%s: %s", up_design_names[d], w,
						 up_layout_names[c.layout], up_table_names[c.table], r.verify_msg);
				assert_int_equal(r.no_session, forged);
				assert_int_equal(r.malformed, malformed);
			}
		}
	up_traffic_free(&t);
}

/* without the check, a stale TEID is charged to the slot's session: the counters say so */
static void test_slot_unchecked(void **state)
{
	struct up_gen_opts o = { .sessions = 500, .packets = 20000, .outer_family = 4,
				 .mbr_bps = 100000000, .seed = 5, .bad_every = 6 };
	struct up_run_cfg c = { .design = UP_STEERED, .table = UP_TABLE_SLOT, .layout = UP_LAYOUT_SPLIT,
				.batch = 8, .prefetch = true, .workers = 1, .packets = 20000,
				.verify = true, .teid_check = false };
	struct up_traffic t;
	struct up_result r;
	uint64_t out_of_range = 0;
	char err[256];
	(void)state;

	assert_int_equal(up_traffic_gen(&t, &o, err, sizeof(err)), 0);
	for (uint32_t g = 0; g < 20000; g++)
		out_of_range += t.bad[g % t.len] == UP_BAD_SLOT_RANGE;
	assert_int_equal(up_run(&t, &c, &r, NULL, err, sizeof(err)), 0);
	assert_false(r.verify_ok);
	/* a slot beyond the pool is still no session's: that is a bound, not the check */
	assert_int_equal(r.no_session, out_of_range);
	up_traffic_free(&t);
}

/* a bad position's frame, under either kind of TEID: malformed, or a TEID no session has */
static void test_bad_frames(void **state)
{
	struct up_gen_opts o = { .sessions = 300, .packets = 5000, .outer_family = 6,
				 .mbr_bps = 100000000, .seed = 9, .bad_every = 3 };
	struct up_traffic t;
	uint8_t f[UP_FRAME_MAX];
	unsigned int kinds[UP_NBAD] = { 0 };
	char err[256];
	(void)state;

	assert_int_equal(up_traffic_gen(&t, &o, err, sizeof(err)), 0);
	for (uint32_t pos = 0; pos < t.len; pos++) {
		uint8_t kind = t.bad[pos];

		kinds[kind]++;
		for (int teids = UP_TEIDS_HASHED; teids <= UP_TEIDS_SLOT; teids++) {
			size_t n = up_traffic_frame(&t, teids, pos, pos, f, sizeof(f));
			struct gtpu_pkt p;
			int rc = gtpu_parse_frame(f, n, &p, NULL);

			if (up_bad_malformed(kind)) {
				tk_assert_cmp(rc, <, 0);
				continue;
			}
			assert_int_equal(rc, GTPU_OK);
			assert_int_equal(p.teid, up_traffic_pos_teid(&t, teids, pos));
			if (kind == UP_BAD_NONE) {
				assert_int_equal(p.teid, up_traffic_teid(&t, teids, t.sidx[pos]));
				continue;
			}
			assert_int_equal(t.sidx[pos], UINT32_MAX);
			if (teids == UP_TEIDS_SLOT) {
				uint32_t i = up_teid_index(t.plan.slot_mask, p.teid);

				if (kind == UP_BAD_SLOT_RANGE) {
					tk_assert_cmp(i, >=, t.n_sess);
				} else {
					tk_assert_cmp(i, <, t.n_sess);
					assert_int_not_equal(t.slot_teid[i], p.teid);
				}
			} else {
				for (uint32_t s = 0; s < t.n_sess; s++)
					assert_int_not_equal(p.teid, t.sess[s].teid);
			}
		}
	}
	for (int k = UP_BAD_STALE_TEID; k < UP_NBAD; k++)
		tk_assert_cmp(kinds[k], >=, t.len / 3 / 4);
	up_traffic_free(&t);
}

static void test_verdicts(void **state)
{
	struct up_traffic t;
	struct up_gen_opts o = { .sessions = 50, .packets = 20000, .outer_family = 6,
				 .mbr_bps = 8000, .seed = 9 };
	struct up_run_cfg c = { .design = UP_STEERED, .layout = UP_LAYOUT_SPLIT, .batch = 16,
				.prefetch = true, .workers = 1, .packets = 20000, .verify = true };
	struct up_result r;
	char err[256];
	(void)state;

	/* outer IPv6, 8 kbit/s per session: the QER drops most of it */
	assert_int_equal(up_traffic_gen(&t, &o, err, sizeof(err)), 0);
	assert_int_equal(up_run(&t, &c, &r, NULL, err, sizeof(err)), 0);
	assert_true(r.verify_ok);
	tk_assert_cmp(r.qer_drop, >, 10000);
	tk_assert_cmp(r.far_drop, >, 0);
	tk_assert_cmp(r.no_pdr, >, 0);
	tk_assert_cmp(r.forwarded, >, 0);
	assert_int_equal(r.malformed, 0);
	assert_int_equal(r.no_session, 0);
	up_traffic_free(&t);
}

static void test_pcap_roundtrip(void **state)
{
	struct up_traffic t = gen(300, 5000, UP_DIST_UNIFORM), back;
	char path[] = "/tmp/test_upf_path.XXXXXX", err[256];
	int fd = mkstemp(path);
	struct up_pcap_out *po;
	uint8_t f[UP_FRAME_MAX];
	struct up_run_cfg c = { .design = UP_GLOBAL, .layout = UP_LAYOUT_FAT, .batch = 8,
				.prefetch = false, .workers = 2, .packets = 5000, .verify = true };
	struct up_result r;
	struct up_counters a, b;
	(void)state;

	tk_assert_cmp(fd, >=, 0);
	close(fd);
	po = up_pcap_open(path, err, sizeof(err));
	assert_non_null(po);
	for (uint64_t g = 0; g < 5000; g++) {
		size_t n = up_traffic_frame(&t, UP_TEIDS_HASHED, g, (uint32_t)(g % t.len), f, sizeof(f));

		assert_int_equal(up_pcap_write(po, f, n, g * 1000), 0);
	}
	assert_int_equal(up_pcap_close(po), 0);
	assert_int_equal(up_traffic_pcap(&back, path, 100000000, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(back.len, 5000);
	tk_assert_cmp(back.n_sess, <=, 300);
	assert_int_equal(back.truncated, 0);
	/* the replay counts exactly what the capture holds */
	a.pkts = calloc(back.n_sess, 8);
	a.bytes = calloc(back.n_sess, 8);
	a.drops = calloc(back.n_sess, 8);
	assert_int_equal(up_run(&back, &c, &r, &a, err, sizeof(err)), 0);
	assert_true(r.verify_ok);
	assert_int_equal(r.verify_pkts, 5000);
	/* and the same as the generated traffic counted by a sharded run (W=1, one order) */
	c.design = UP_SHARDED;
	c.workers = 1;
	b.pkts = calloc(t.n_sess, 8);
	b.bytes = calloc(t.n_sess, 8);
	b.drops = calloc(t.n_sess, 8);
	assert_int_equal(up_run(&t, &c, &r, &b, err, sizeof(err)), 0);
	for (uint32_t i = 0; i < back.n_sess; i++) {
		uint32_t j = 0;

		while (t.sess[j].teid != back.sess[i].teid)
			j++;
		assert_int_equal(a.pkts[i], b.pkts[j]);
		assert_int_equal(a.bytes[i], b.bytes[j]);
	}
	free(a.pkts);
	free(a.bytes);
	free(a.drops);
	free(b.pkts);
	free(b.bytes);
	free(b.drops);
	up_traffic_free(&back);
	up_traffic_free(&t);
}

static void test_pcap_errors(void **state)
{
	struct up_traffic t;
	char path[] = "/tmp/test_upf_path.XXXXXX", err[256];
	int fd = mkstemp(path);
	(void)state;

	tk_assert_cmp(fd, >=, 0);
	assert_int_equal(write(fd, "not a capture", 13), 13);
	close(fd);
	assert_int_equal(up_traffic_pcap(&t, path, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--pcap-in: cannot read"));
	unlink(path);
	assert_int_equal(up_traffic_pcap(&t, "/nonexistent/x.pcap", 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

static void test_floor(void **state)
{
	struct up_floor f;
	char err[128];
	(void)state;

	assert_int_equal(up_floor_measure(16 << 20, &f, err, sizeof(err)), 0);
	assert_int_equal(f.bytes, 16 << 20);
	tk_assert_cmp(f.serial_cycles, >, 0);
	tk_assert_cmp(f.mlp_cycles, >, 0);
	tk_assert_cmp(f.mlp_cycles, <=, f.serial_cycles);
	tk_assert_cmp(f.mlp_chains, >=, 1);
	tk_assert_cmp(f.mlp_chains, <=, 64);
	assert_int_equal(up_floor_measure(1000, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range"));
}

static void test_lookup_bench(void **state)
{
	struct up_traffic t = gen(5000, 50000, UP_DIST_UNIFORM);
	struct up_lookup_result r;
	char err[128];
	(void)state;

	assert_int_equal(up_lookup_bench(&t, UP_TABLE_OWN, 32, false, 50000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.misses, 0);
	assert_int_equal(r.lookups, 50000);
	tk_assert_cmp(r.cycles_per_lookup, >, 0);
	up_traffic_free(&t);
}

static void test_rte_hash(void **state)
{
	struct up_traffic t = gen(400, 10000, UP_DIST_UNIFORM);
	char err[256];
	int rc = up_rte_prepare(400, false, err, sizeof(err));
	(void)state;

	if (upt_rte_missing()) {
		/* built without DPDK: the back end says so and refuses */
		assert_int_equal(rc, -ENOTSUP);
		assert_non_null(strstr(err, "built without DPDK"));
	} else {
		struct up_lookup_result r;

		assert_int_equal(rc, 0);
		run_one(&t, UP_STEERED, 1, UP_LAYOUT_SPLIT, 32, true, UP_TABLE_RTE);
		run_one(&t, UP_GLOBAL, 2, UP_LAYOUT_FAT, 1, false, UP_TABLE_RTE);
		run_one(&t, UP_SHARDED, 1, UP_LAYOUT_SPLIT, 16, true, UP_TABLE_RTE);
		assert_int_equal(up_lookup_bench(&t, UP_TABLE_RTE, 32, false, 10000, &r, err,
						 sizeof(err)), 0);
		assert_int_equal(r.misses, 0);
	}
	up_traffic_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pdr_match),
		cmocka_unit_test(test_pdr_compile),
		cmocka_unit_test(test_pdr_vec_matches_scalar),
		cmocka_unit_test(test_qer_token_bucket),
		cmocka_unit_test(test_generator),
		cmocka_unit_test(test_zipf_is_skewed),
		cmocka_unit_test(test_counters_exact_every_design),
		cmocka_unit_test(test_bad_packets_dropped),
		cmocka_unit_test(test_slot_unchecked),
		cmocka_unit_test(test_bad_frames),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_pcap_roundtrip),
		cmocka_unit_test(test_pcap_errors),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_lookup_bench),
		cmocka_unit_test(test_rte_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
