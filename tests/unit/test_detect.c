// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collapse classifier on recorded sample sequences. Each fixture in
 * tests/fixtures/detect/ is a slice of a real `repro/dip.sh` trace: the
 * bbrtrace sample records in kernel order, followed by the collapse records
 * bbrtrace's live detector wrote for them. Replaying the samples must find
 * the same collapses with the same causes, and each fixture's scenario must
 * come out as its cause (see tests/fixtures/detect/README).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "bbrtrace/detect.h"
#include "demand.h"
#include "bbrtrace/peers.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/sample.h"
#include "bbrtrace/verdict.h"
#include "cli.h"
#include "jsonl.h"
#include "log.h"

#define FIXTURES "tests/fixtures/detect/"
#define MAX_EXPECT 512

struct expect {
	uint64_t t_ns;
	int cause;
	bool reset_by_ack;
};

struct replay {
	unsigned int samples;
	unsigned int n_expect, n_found;
	struct expect expect[MAX_EXPECT];
	struct expect found[MAX_EXPECT];
	struct bt_collapse last[BT_NCAUSES]; /* the last collapse of each cause */
	struct bt_detect *d;
};

/* set by a test to replay a fixture as if the kernel side never set fin_acked */
static bool ignore_fin_acked;

/* a record of a fixture, read as bbrpcap and bbrplot read traces: every
 * field of its type must be there */
static void read_sample(const struct jl_obj *o, struct bt_sample *s)
{
	struct bt_fieldset fs;
	unsigned int n = bt_sample_read(o, s, &fs);

	/* not a field of the sample record: a fixture may carry it (see the README) */
	jl_bool(o, "fin_acked", &s->fin_acked);
	if (ignore_fin_acked)
		s->fin_acked = false;

	/* the table's time column is not in JSON; the fixtures predate
	 * lt_bw_bps and the sender's queue (write_seq, snd_wnd, nonagle) in
	 * the sample record (see their README) */
	n += !bt_has(&fs, BT_S_LT_BW_BPS);
	n += !bt_has(&fs, BT_S_WRITE_SEQ) + !bt_has(&fs, BT_S_SND_WND) + !bt_has(&fs, BT_S_NONAGLE);
	if (n != BT_SAMPLE_NFIELDS - 1)
		fail_msg("fixture: a sample record with %u of its %u fields", n, BT_SAMPLE_NFIELDS - 1);
}

static void read_collapse(const struct jl_obj *o, struct bt_collapse *c)
{
	struct bt_fieldset fs;
	unsigned int n = bt_collapse_read(o, c, &fs);

	/* the fixtures predate the impact fields and need_bps (see their README) */
	n += !bt_has(&fs, BT_C_IMPACT) + !bt_has(&fs, BT_C_HEADROOM) + !bt_has(&fs, BT_C_DEMAND_BPS) +
	     !bt_has(&fs, BT_C_NEED_BPS);
	if (n != BT_COLLAPSE_NFIELDS - 1)
		fail_msg("fixture: a collapse record with %u of its %u fields", n, BT_COLLAPSE_NFIELDS - 1);
}

static void replay_file(const char *name, struct replay *r, const struct bt_detect_cfg *cfg)
{
	char path[256], *line = NULL, err[128];
	size_t cap = 0;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	r->d = bt_detect_new(cfg);
	assert_non_null(r->d);
	while (getline(&line, &cap, f) > 0) {
		struct jl_obj o;
		const char *type;

		if (jl_parse(line, &o, err, sizeof(err)))
			fail_msg("%s: %s", path, err);
		type = jl_str(&o, "type");
		if (type && !strcmp(type, "sample")) {
			struct bt_sample s;
			struct bt_collapse c;

			read_sample(&o, &s);
			r->samples++;
			if (bt_detect_feed(r->d, &s, &c)) {
				tk_assert_cmp(r->n_found, <, MAX_EXPECT);
				r->found[r->n_found].t_ns = c.ack.t_ns;
				r->found[r->n_found].cause = c.cause;
				r->n_found++;
				r->last[c.cause] = c;
			}
		} else if (type && !strcmp(type, "collapse")) {
			struct bt_collapse c;

			read_collapse(&o, &c);
			tk_assert_cmp(r->n_expect, <, MAX_EXPECT);
			r->expect[r->n_expect].t_ns = c.ack.t_ns;
			r->expect[r->n_expect].cause = c.cause;
			r->expect[r->n_expect].reset_by_ack = c.reset_by_ack;
			r->n_expect++;
		}
	}
	free(line);
	fclose(f);
}

static unsigned int count(const struct replay *r, int cause)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->n_found; i++)
		n += r->found[i].cause == cause;
	return n;
}

/*
 * The cause the live detector's record gives, as the detector names it now:
 * the fixtures predate the cause lone_segment, which the live detector then
 * called other (see the fixtures' README).
 */
static enum bt_cause cause_now(enum bt_cause live, enum bt_cause found)
{
	return live == BT_CAUSE_OTHER && found == BT_CAUSE_LONE_SEGMENT ? found : live;
}

/*
 * The replay finds the ACKs bbrtrace found live, and the same cause for each
 * collapse set by the ACK's own sample. (A fixture is a window of a trace:
 * an older culprit may lie before the window, so those causes may differ.)
 */
static void assert_same_as_live(const struct replay *r)
{
	assert_int_equal(r->n_found, r->n_expect);
	for (unsigned int i = 0; i < r->n_found; i++) {
		tk_assert_cmp(r->found[i].t_ns, ==, r->expect[i].t_ns);
		if (r->expect[i].reset_by_ack)
			assert_string_equal(bt_cause_names[r->found[i].cause],
					    bt_cause_names[cause_now(r->expect[i].cause, r->found[i].cause)]);
	}
}

static void test_delayed_ack(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("delayed_ack.jsonl", &r, NULL);
	assert_same_as_live(&r);
	tk_assert_cmp(count(&r, BT_CAUSE_DELAYED_ACK), >=, 3);
	c = &r.last[BT_CAUSE_DELAYED_ACK];
	/* the story's sample: not app-limited, held ACK of ~40 ms, tiny estimate after */
	assert_false(c->culprit.is_app_limited);
	tk_assert_cmp(c->culprit.rcv_interval_us, >=, 5 * c->culprit.snd_interval_us);
	tk_assert_cmp(c->culprit.rcv_interval_us, >=, 30000);
	tk_assert_cmp(c->bw_bps * 100, <, c->bw_prev_bps);
	assert_non_null(strstr(c->evidence, "not app-limited"));
	bt_detect_free(r.d);
}

static void test_htb_rate_change_is_rate_drop(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("rate_drop.jsonl", &r, NULL);
	assert_same_as_live(&r);
	tk_assert_cmp(count(&r, BT_CAUSE_RATE_DROP), >=, 1);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	c = &r.last[BT_CAUSE_RATE_DROP];
	/* htb went from 100 to 10 Mbit/s: the new estimate is near the new rate */
	tk_assert_cmp(c->bw_bps, <, 15000000);
	tk_assert_cmp(c->bw_bps, >, 5000000);
	assert_false(c->culprit.is_app_limited);
	bt_detect_free(r.d);
}

/* a tbf policer on the router: BBR measured 20% losses and switched to lt_bw */
static void test_loss_policer(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	struct bt_verdict v;
	(void)state;

	replay_file("loss_policer.jsonl", &r, NULL);
	assert_same_as_live(&r);
	tk_assert_cmp(count(&r, BT_CAUSE_LOSS_POLICER), >=, 1);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	c = &r.last[BT_CAUSE_LOSS_POLICER];
	assert_true(c->ack.lt_use_bw);
	assert_true(c->reset_by_ack);
	/* the policer's 20 Mbit/s, measured by BBR over lost and delivered packets */
	tk_assert_cmp(c->bw_bps, ==, c->ack.lt_bw_bps);
	tk_assert_cmp(c->bw_bps, >, 15000000);
	tk_assert_cmp(c->bw_bps, <=, 21000000);
	tk_assert_cmp(c->bw_bps * 10, <, c->bw_prev_bps * 7);
	assert_non_null(strstr(c->evidence, "switched to its long-term rate lt_bw 19."));
	bt_verdict_build(&v, r.d, 0.30, 13, NULL);
	assert_non_null(strstr(v.text, "BBR switching to its long-term rate (19."));
	/* the flow had more to send: the policer held it while BBR paced at its
	 * long-term rate, 254 ms to the fixture's end, though the pacing stayed
	 * within 2% of what it delivered (which would have ended it at once) */
	tk_assert_cmp(v.st.throttled_ns, >=, 100ull * 1000 * 1000);
	assert_non_null(strstr(v.text, "Fix: find the policer on the path"));
	assert_null(strstr(v.text, "quickack"));
	/* a flow with more to send needs what it delivered, not 1.25 x a demand */
	assert_non_null(strstr(v.text, "fell under what the flow delivered, or its path gave less)"));
	assert_null(strstr(v.text, "x its demand"));
	bt_detect_free(r.d);
}

/* a fix only for throttling worth one: BT_FIX_MIN_LATE_BYTES or
 * BT_FIX_MIN_THROTTLED_MS reached, a throttle still running, or delayed ACKs
 * that throttled BT_FIX_DELACK_RECURS times */
static void test_throttle_negligible(void **state)
{
	struct bt_detect_stats st = { 0 };
	(void)state;

	st.throttled_ns = 11000000; /* the handshake's held ACK of a real push: 11 ms, 0 kB */
	assert_true(bt_throttle_negligible(&st));
	st.late_bytes = BT_FIX_MIN_LATE_BYTES - 1;
	st.throttled_ns = (uint64_t)BT_FIX_MIN_THROTTLED_MS * 1000000 - 1;
	assert_true(bt_throttle_negligible(&st));
	st.late_bytes = BT_FIX_MIN_LATE_BYTES;
	assert_false(bt_throttle_negligible(&st));
	st.late_bytes = 0;
	st.throttled_ns = (uint64_t)BT_FIX_MIN_THROTTLED_MS * 1000000;
	assert_false(bt_throttle_negligible(&st));
	st.throttled_ns = 0;
	st.throttles_open = 1;
	assert_false(bt_throttle_negligible(&st));
	/* one throttling delayed ACK (a handshake's) is negligible; a second recurs */
	st.throttles_open = 0;
	st.throttled_ns = 7800000; /* the README session's 3 held ACKs: 7.8 ms, 3 kB */
	st.late_bytes = 3000;
	st.throttling[BT_CAUSE_DELAYED_ACK] = BT_FIX_DELACK_RECURS - 1;
	assert_true(bt_throttle_negligible(&st));
	st.throttling[BT_CAUSE_DELAYED_ACK] = BT_FIX_DELACK_RECURS;
	assert_false(bt_throttle_negligible(&st));
}

/*
 * The same push as delayed_ack.jsonl with quickack on the receiver's route:
 * ACKs come at once, so no sample shows a held ACK and no collapse is
 * blamed on one; the verdict proposes no receiver fix.
 */
static void test_quickack_on(void **state)
{
	struct replay r;
	struct bt_verdict v;
	const struct bt_collapse *c;
	(void)state;

	replay_file("quickack_on.jsonl", &r, NULL);
	assert_same_as_live(&r);
	tk_assert_cmp(r.samples, >=, 400);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	/* the one collapse, at the push's last ACK: a lone segment ACKed microseconds late */
	assert_int_equal(count(&r, BT_CAUSE_LONE_SEGMENT), 1);
	c = &r.last[BT_CAUSE_LONE_SEGMENT];
	tk_assert_cmp(c->culprit.rcv_interval_us, <, 1000);
	assert_int_equal(c->impact, BT_IMPACT_HARMLESS);
	bt_verdict_build(&v, r.d, 0.30, 3, NULL);
	assert_null(strstr(v.text, "delayed ACKs"));
	assert_null(strstr(v.text, "quickack on"));
	assert_non_null(strstr(v.text, "No action is needed (all harmless: 1 lone late segment)"));
	assert_string_equal(v.fix, "");
	bt_detect_free(r.d);
}

/*
 * The ACK of the sender's FIN, late by the receiver's close (10.9 ms in an
 * emulated guest, quickack on): the estimate falls from 426 to 1.06 Mbit/s
 * on a sample that looks like a held ACK, but the stream is over, so it is
 * no collapse. The fixture keeps the delayed_ack record bbrtrace wrote for
 * it before it knew the FIN; without the flag the replay finds it again.
 */
static void test_fin_ack_is_no_collapse(void **state)
{
	struct replay r;
	(void)state;

	replay_file("fin_ack.jsonl", &r, NULL);
	tk_assert_cmp(r.samples, >, 300);
	assert_int_equal(r.n_expect, 1);
	assert_int_equal(r.n_found, 0);
	bt_detect_free(r.d);

	ignore_fin_acked = true;
	replay_file("fin_ack.jsonl", &r, NULL);
	ignore_fin_acked = false;
	assert_same_as_live(&r);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 1);
	tk_assert_cmp(r.last[BT_CAUSE_DELAYED_ACK].ack.rcv_interval_us, >=, 10000);
	bt_detect_free(r.d);
}

/* samples taken before the socket had a cookie belong to the same flow */
static void test_flow_before_its_cookie(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_flow_state fs[4];
	struct bt_detect_stats st;
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	memset(&s, 0, sizeof(s));
	s.saddr[15] = 2;
	s.daddr[15] = 3;
	s.sport = 50000;
	s.dport = 43100;
	s.mss = 1448;
	s.t_ns = 1;
	s.bw_bps = 1000000000;
	assert_false(bt_detect_feed(d, &s, &c));
	s.cookie = 42;
	s.t_ns = 2;
	s.bw_prev_bps = 1000000000;
	s.bw_bps = 1000000000;
	assert_false(bt_detect_feed(d, &s, &c));
	assert_int_equal(bt_detect_flow_states(d, 0, fs, 4), 1);
	tk_assert_cmp(fs[0].cookie, ==, 42);
	bt_detect_stats(d, &st);
	assert_int_equal(st.flows, 1);
	/* another connection on the same 4-tuple later is another flow */
	s.cookie = 43;
	s.t_ns = 3;
	assert_false(bt_detect_feed(d, &s, &c));
	assert_int_equal(bt_detect_flow_states(d, 0, fs, 4), 2);
	bt_detect_free(d);
}

/* a lone segment ACKed microseconds late (is_ack_delayed) is no held ACK: lone_segment */
static void test_lone_segment(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("delayed_ack.jsonl", &r, NULL);
	tk_assert_cmp(count(&r, BT_CAUSE_LONE_SEGMENT), >=, 1);
	assert_int_equal(count(&r, BT_CAUSE_OTHER), 0);
	c = &r.last[BT_CAUSE_LONE_SEGMENT];
	tk_assert_cmp(c->culprit.rcv_interval_us, <, BT_DELACK_FLOOR_US);
	assert_true(c->culprit.is_ack_delayed);
	tk_assert_cmp(c->culprit.delivered, <=, BT_DELACK_MAX_SEGS);
	assert_non_null(strstr(c->evidence, "is_ack_delayed says"));
	/* harmless: the estimate stays far above the stream */
	assert_int_equal(c->impact, BT_IMPACT_HARMLESS);
	bt_detect_free(r.d);
}

/* the ratio is the collapse threshold: a looser one finds no fewer collapses */
static void test_collapse_ratio(void **state)
{
	struct bt_detect_cfg cfg;
	struct replay r30, r90;
	(void)state;

	bt_detect_cfg_default(&cfg);
	replay_file("delayed_ack.jsonl", &r30, &cfg);
	cfg.collapse_ratio = 0.99;
	replay_file("delayed_ack.jsonl", &r90, &cfg);
	tk_assert_cmp(r90.n_found, <=, r30.n_found);
	/* delayed-ACK collapses take the estimate down by more than 99% */
	assert_int_equal(count(&r90, BT_CAUSE_DELAYED_ACK), count(&r30, BT_CAUSE_DELAYED_ACK));
	bt_detect_free(r30.d);
	bt_detect_free(r90.d);
}

static struct bt_sample mk(uint64_t t, uint64_t bw_prev, uint64_t bw, int32_t dlv, int64_t snd,
			   int64_t rcv, bool app)
{
	struct bt_sample s;

	memset(&s, 0, sizeof(s));
	s.t_ns = t;
	s.cookie = 7;
	s.mss = 1448;
	s.delivered = dlv;
	s.snd_interval_us = (uint32_t)snd;
	s.rcv_interval_us = (uint32_t)rcv;
	s.interval_us = snd > rcv ? snd : rcv;
	s.is_app_limited = app;
	s.bw_prev_bps = bw_prev;
	s.bw_bps = bw;
	s.sample_valid = s.interval_us > 0;
	return s;
}

/* the documented thresholds, at their edges */
/* the flow table's cap is an option: past it a new flow is counted untracked
 * and never judged, and no flow already tracked loses anything */
static void test_flow_table_cap(void **state)
{
	struct bt_detect_cfg cfg;
	struct bt_detect_stats st;
	struct bt_detect *d;
	struct bt_collapse c;
	uint64_t delack_bw = bt_bw_to_bps((uint32_t)((1ull << 24) / 40000), 1448);
	struct bt_sample s;
	(void)state;

	bt_detect_cfg_default(&cfg);
	cfg.max_flows = 16;
	d = bt_detect_new(&cfg);
	assert_non_null(d);
	/* flow 1000: a delayed-ACK sample, no collapse */
	s = mk(1, 0, 0, 1, 2000, 40000, false);
	s.cookie = 1000;
	assert_false(bt_detect_feed(d, &s, &c));
	for (uint64_t i = 1; i < 40; i++) {
		s = mk(i + 1, 0, 1000000, 1, 10, 10, false);
		s.cookie = 1000 + i;
		bt_detect_feed(d, &s, &c);
	}
	bt_detect_stats(d, &st);
	assert_int_equal(st.flows, 16);
	assert_int_equal(st.flows_live, 16);
	assert_int_equal(st.samples_untracked, 24);
	assert_true(st.untracked_at_cap);
	/* an untracked flow's collapse is not judged */
	s = mk(50, 1000000000, delack_bw, 10, 5000, 5000, false);
	s.cookie = 1039;
	assert_false(bt_detect_feed(d, &s, &c));
	/* flow 1000 still has its history: its culprit is found */
	s.cookie = 1000;
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_DELAYED_ACK);
	/* a place freed by a close goes to a new flow, not to one refused
	 * before (its start is missing) */
	s.cookie = 1001;
	bt_detect_close(d, &s);
	s = mk(60, 0, 1000000, 1, 10, 10, false);
	s.cookie = 1020;
	bt_detect_feed(d, &s, &c);
	s.cookie = 2000;
	bt_detect_feed(d, &s, &c);
	bt_detect_stats(d, &st);
	assert_int_equal(st.samples_untracked, 26);
	assert_int_equal(st.flows, 17);
	assert_int_equal(st.flows_live, 16);
	bt_detect_free(d);
}

/* a closed flow's state goes, and its place with it */
static void test_flow_close(void **state)
{
	struct bt_detect_cfg cfg;
	struct bt_detect_stats st;
	struct bt_detect *d;
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	bt_detect_cfg_default(&cfg);
	cfg.max_flows = 16;
	d = bt_detect_new(&cfg);
	for (uint64_t i = 0; i < 16; i++) {
		s = mk(i + 1, 0, 1000000, 1, 10, 10, false);
		s.cookie = 1 + i;
		bt_detect_feed(d, &s, &c);
	}
	for (uint64_t i = 0; i < 8; i++) {
		s.cookie = 1 + i;
		s.kind = BT_KIND_CLOSE;
		bt_detect_close(d, &s);
	}
	/* a close of a flow never seen changes nothing */
	s.cookie = 999;
	bt_detect_close(d, &s);
	for (uint64_t i = 0; i < 8; i++) {
		s = mk(100 + i, 0, 1000000, 1, 10, 10, false);
		s.cookie = 100 + i;
		bt_detect_feed(d, &s, &c);
	}
	bt_detect_stats(d, &st);
	assert_int_equal(st.flows, 24);
	assert_int_equal(st.flows_closed, 8);
	assert_int_equal(st.flows_live, 16);
	assert_int_equal(st.samples_untracked, 0);
	bt_detect_free(d);
}

static uint64_t sum_collapses(const struct bt_detect_stats *st)
{
	uint64_t n = 0;

	for (int i = 0; i < BT_NCAUSES; i++)
		n += st->collapses[i];
	return n;
}

/* the kernel's windowed max filter (lib/win_minmax.c), as BBR runs it */
struct mm {
	uint32_t t[3], v[3];
};

static void mm_set(struct mm *m, int k, uint32_t t, uint32_t v)
{
	m->t[k] = t;
	m->v[k] = v;
}

static void mm_running_max(struct mm *m, uint32_t win, uint32_t t, uint32_t v)
{
	uint32_t dt;

	if (v >= m->v[0] || t - m->t[2] > win) {
		for (int k = 0; k < 3; k++)
			mm_set(m, k, t, v);
		return;
	}
	if (v >= m->v[1]) {
		mm_set(m, 1, t, v);
		mm_set(m, 2, t, v);
	} else if (v >= m->v[2]) {
		mm_set(m, 2, t, v);
	}
	dt = t - m->t[0];
	if (dt > win) {
		mm_set(m, 0, m->t[1], m->v[1]);
		mm_set(m, 1, m->t[2], m->v[2]);
		mm_set(m, 2, t, v);
		if (t - m->t[0] > win) {
			mm_set(m, 0, m->t[1], m->v[1]);
			mm_set(m, 1, m->t[2], m->v[2]);
			mm_set(m, 2, t, v);
		}
	} else if (m->t[1] == m->t[0] && dt > win / 4) {
		mm_set(m, 1, t, v);
		mm_set(m, 2, t, v);
	} else if (m->t[2] == m->t[1] && dt > win / 2) {
		mm_set(m, 2, t, v);
	}
}

/*
 * The two ways of finding culprits (bbrtrace/culprit.h) on 200,000 samples
 * that BBR's own filter judges: random deliveries over a few intervals, so
 * that bandwidths repeat; app-limited ones that the filter skips unless they
 * set a new max; rounds of 1 to 3 samples. Every culprit and every expired
 * maximum is the same sample both ways.
 */
static void test_culprit_ways_agree(void **state)
{
	static const int64_t intervals[] = { 100, 200, 400, 1000, 2000 };
	struct bt_detect_cfg cfg;
	struct bt_detect_stats st;
	struct bt_detect *d;
	struct bt_collapse c;
	struct mm m = { 0 };
	uint32_t round = 0, seed = 12345;
	(void)state;

	bt_detect_cfg_default(&cfg);
	cfg.check = true;
	d = bt_detect_new(&cfg);
	assert_non_null(d);
	for (uint64_t i = 0; i < 200000; i++) {
		struct bt_sample s;
		int32_t dlv;
		int64_t iv;
		uint32_t bw, before = m.v[0];
		bool app;

		seed = seed * 1103515245 + 12345;
		dlv = 1 + (int32_t)(seed >> 16) % 4;
		iv = intervals[(seed >> 8) % 5];
		app = (seed >> 4) % 3 == 0;
		if ((seed >> 20) % 2 == 0)
			round++;
		bw = (uint32_t)(((uint64_t)dlv << 24) / (uint64_t)iv);
		if (!app || bw >= m.v[0])
			mm_running_max(&m, 10, round, bw);
		s = mk(i + 1, bt_bw_to_bps(before, 1448), bt_bw_to_bps(m.v[0], 1448), dlv, iv, iv, app);
		s.mode = BT_PROBE_BW;
		for (int k = 0; k < 3; k++)
			s.filter_bw[k] = m.v[k];
		s.filter_known = true;
		bt_detect_feed(d, &s, &c);
	}
	bt_detect_stats(d, &st);
	print_message("# %llu collapses, %llu culprits found both ways, %llu differently\n",
		      (unsigned long long)sum_collapses(&st), (unsigned long long)st.culprit_checks,
		      (unsigned long long)st.culprit_mismatches);
	tk_assert_cmp(st.culprit_checks, >, 1000);
	assert_int_equal(st.culprit_mismatches, 0);
	bt_detect_free(d);
}

/* flow `cookie` to 10.0.0.LAST port 1930 + LAST (from 10.0.0.1): a held
 * ACK's sample, then `throttles` collapses to its bandwidth, each throttling
 * the flow */
static void peer_flow(struct bt_detect *d, uint64_t cookie, uint8_t last, int throttles, uint64_t t)
{
	uint64_t delack_bw = bt_bw_to_bps((uint32_t)((1ull << 24) / 40000), 1448);
	struct bt_collapse c;
	struct bt_sample s = mk(t, 0, 0, 1, 2000, 40000, false);

	s.cookie = cookie;
	memcpy(s.saddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\0\0\x01", 16);
	memcpy(s.daddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\0\0\x01", 16);
	s.daddr[15] = last;
	s.dport = (uint16_t)(1930 + last);
	bt_detect_feed(d, &s, &c);
	for (int i = 0; i < throttles; i++) {
		struct bt_sample x = s;

		x = mk(t + 1000000 * (uint64_t)(i + 1), 1000000000, delack_bw, 10, 5000, 5000, false);
		memcpy(x.saddr, s.saddr, 16);
		memcpy(x.daddr, s.daddr, 16);
		x.dport = s.dport;
		x.cookie = cookie;
		assert_true(bt_detect_feed(d, &x, &c));
		assert_int_equal(c.cause, BT_CAUSE_DELAYED_ACK);
		assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	}
}

/* two receivers whose delayed ACKs throttle, and a healthy one: the verdict
 * names the two, each with the quickack commands for itself (a host route,
 * then its port's scope with its limit), worst first; with one alone, it
 * is the host's verdict as before */
static void test_verdict_by_peer(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_verdict v;
	char *five, *six, json[4096];
	(void)state;

	peer_flow(d, 1, 5, 3, 1000000000);
	bt_verdict_build(&v, d, 0.3, 10, NULL);
	assert_int_equal(v.peers.harmed, 1);
	assert_null(strstr(v.text, "By peer"));
	assert_non_null(strstr(v.text, "`quickack on --to 10.0.0.1 --host` (a host route to this sender alone), so "
					"that it ACKs at once; a socket scope on its port, `quickack on --port 1935`"));
	peer_flow(d, 2, 6, 2, 2000000000);
	peer_flow(d, 3, 7, 0, 3000000000);
	bt_verdict_build(&v, d, 0.3, 10, NULL);
	print_message("# %s\n", v.text);
	assert_int_equal(v.peers.peers, 3);
	assert_int_equal(v.peers.harmed, 2);
	assert_non_null(strstr(v.text, "By peer, worst first, 2 of 3 peers need a fix: 10.0.0.5: delayed ACKs "
					"throttled its streams 3 times"));
	five = strstr(v.text, "10.0.0.5: ");
	six = strstr(v.text, "10.0.0.6: ");
	assert_non_null(six);
	/* 10.0.0.5 before 10.0.0.6: their offsets in the text */
	assert_in_range((uintmax_t)(five - v.text), 0, (uintmax_t)(six - v.text) - 1);
	assert_non_null(strstr(five, "fix: on the receiver 10.0.0.5, `quickack on --to 10.0.0.1 --host` (a host route to "
				     "this sender alone), so that it ACKs at once; a socket scope on its port, `quickack "
				     "on --port 1935`"));
	assert_non_null(strstr(six, "fix: on the receiver 10.0.0.6, `quickack on --to 10.0.0.1 --host` (a host route to "
				    "this sender alone), so that it ACKs at once; a socket scope on its port, `quickack "
				    "on --port 1936`"));
	assert_null(strstr(v.text, "10.0.0.7"));
	assert_string_equal(v.fix, "on the receiver 10.0.0.5, `quickack on --to 10.0.0.1 --host` (a host route to this "
				   "sender alone), so that it ACKs at once; a socket scope on its port, `quickack on "
				   "--port 1935`, touches no route but does not stop these: it caps each hold at 2 jiffies (8 "
				   "ms at HZ 250) at best, and holds that long still collapse the estimate");
	bt_peer_verdict_json(&v.peers, json, sizeof(json));
	assert_non_null(strstr(json, "{\"peer\":\"10.0.0.5\",\"port\":1935,\"local\":\"10.0.0.1\","));
	/* the window's verdict, while the trace runs: the same two peers */
	bt_verdict_build_window(&v, d, 3000000000);
	print_message("# %s\n", v.text);
	assert_non_null(strstr(v.text, "In the last 5 min, 3 peers with flows: the bandwidth estimate collapsed 5 times"));
	assert_non_null(strstr(v.text, "2 of 3 peers need a fix: 10.0.0.5: "));
	/* ten minutes on, the window is empty */
	bt_verdict_build_window(&v, d, 3000000000ull + 10 * BT_NSEC_PER_MIN);
	assert_non_null(strstr(v.text, "No peer was held back enough to act on"));
	bt_detect_free(d);
}

/* a fixture flow's collapses, as the detector judged them */
struct judged {
	unsigned int n;
	struct bt_collapse c[MAX_EXPECT];
};

/* one of 1,000 other flows' next sample: a bulk flow whose estimate swings,
 * so that the detector works on them too (collapses, culprits, demand) */
static struct bt_sample crowd_sample(uint64_t i, uint64_t t)
{
	uint32_t bw = (uint32_t)(((i * 7919) % 5 + 1) << 20), prev = i % 3 ? bw : bw * 4;
	struct bt_sample s = mk(t, bt_bw_to_bps(prev, 1448), bt_bw_to_bps(bw, 1448), 10, 500, 600, i % 4 == 0);

	s.cookie = 1000000 + i % 1000;
	s.snd_una = (uint32_t)(i * 14480);
	s.daddr[15] = (uint8_t)(i % 1000 % 250);
	s.filter_bw[0] = s.filter_bw[1] = s.filter_bw[2] = bw;
	s.filter_known = true;
	return s;
}

/* the fixture's samples through a detector, alone or each followed by two of
 * the crowd's; its own collapses kept */
static void judge(const char *name, bool crowd, struct judged *out)
{
	char path[256], *line = NULL, err[128];
	struct bt_detect *d = bt_detect_new(NULL);
	size_t cap = 0;
	uint64_t k = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		struct jl_obj o;
		struct bt_sample s;
		struct bt_collapse c;
		const char *type;

		if (jl_parse(line, &o, err, sizeof(err)))
			fail_msg("%s: %s", path, err);
		type = jl_str(&o, "type");
		if (!type || strcmp(type, "sample"))
			continue;
		read_sample(&o, &s);
		if (bt_detect_feed(d, &s, &c)) {
			tk_assert_cmp(out->n, <, MAX_EXPECT);
			out->c[out->n++] = c;
		}
		for (int j = 0; crowd && j < 2; j++, k++) {
			struct bt_sample x = crowd_sample(k, s.t_ns);

			bt_detect_feed(d, &x, &c);
		}
	}
	free(line);
	fclose(f);
	bt_detect_free(d);
}

/* a flow's collapses, causes, impacts and evidence are the same whether it
 * is judged alone or among 1,000 other flows that collapse too */
static void test_judged_alike_in_a_crowd(void **state)
{
	static const char *const fixtures[] = { "delayed_ack.jsonl", "rate_drop.jsonl", "loss_policer.jsonl",
						"quickack_on.jsonl" };
	static struct judged alone, crowded;
	(void)state;

	for (unsigned int f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		judge(fixtures[f], false, &alone);
		judge(fixtures[f], true, &crowded);
		print_message("# %s: %u collapses alone, %u among 1,000 flows\n", fixtures[f], alone.n, crowded.n);
		assert_int_equal(crowded.n, alone.n);
		for (unsigned int i = 0; i < alone.n; i++) {
			assert_int_equal(crowded.c[i].ack.t_ns, alone.c[i].ack.t_ns);
			assert_int_equal(crowded.c[i].cause, alone.c[i].cause);
			assert_int_equal(crowded.c[i].impact, alone.c[i].impact);
			assert_int_equal(crowded.c[i].demand_bps, alone.c[i].demand_bps);
			assert_int_equal(crowded.c[i].culprit.t_ns, alone.c[i].culprit.t_ns);
			assert_string_equal(crowded.c[i].evidence, alone.c[i].evidence);
		}
	}
}

static void test_rule_edges(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	/* exactly 5x and exactly the 10 ms floor: delayed_ack */
	s = mk(1, 1000000000, 0, 1, 2000, 10000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((1ull << 24) / 10000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_DELAYED_ACK);
	assert_true(c.reset_by_ack);
	/* 1 us under the floor: not delayed_ack */
	s = mk(2, 1000000000, 0, 1, 0, 9999, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((1ull << 24) / 9999), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	/* just under 5x: not delayed_ack, not agreeing either */
	s = mk(3, 1000000000, 0, 1, 2001, 10000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((1ull << 24) / 10000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	/* intervals within 2x: rate_drop */
	s = mk(4, 1000000000, 0, 10, 5000, 10000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((10ull << 24) / 10000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_RATE_DROP);
	/* app-limited culprit: other, whatever its intervals */
	s = mk(5, 1000000000, 0, 1, 0, 40000, true);
	s.bw_bps = bt_bw_to_bps((uint32_t)((1ull << 24) / 40000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	/* a 29% drop is no collapse at the default 30% */
	s = mk(6, 1000000000, 710000000, 1, 100, 100, false);
	assert_false(bt_detect_feed(d, &s, &c));
	/* no culprit among the recent samples: other, says so */
	s = mk(7, 1000000000, 123, 1, 100, 100, false);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	assert_false(c.reset_by_ack);
	assert_non_null(strstr(c.evidence, "matches none"));
	bt_detect_free(d);
}

static void test_verdict_text(void **state)
{
	struct replay r;
	struct bt_verdict v;
	(void)state;

	replay_file("delayed_ack.jsonl", &r, NULL);
	bt_verdict_build(&v, r.d, 0.30, 20, NULL);
	assert_non_null(strstr(v.text, "The bandwidth estimate collapsed"));
	assert_non_null(strstr(v.text, "caused by delayed ACKs (rcv_interval ≈ 4"));
	assert_non_null(strstr(v.text, "Fix: on the receiver 10.77.2.2, `quickack on --to 10.77.1.2 --host` (a host route "
				       "to this sender alone), so that it ACKs at once; a socket scope on its port, "
				       "`quickack on --port 43100`, touches no route but does not stop these"));
	/* a paced push, app-limited: it needed 1.25 x its demand */
	assert_non_null(strstr(v.text, "(the pacing BBR allowed fell under 1.25 x its demand)"));
	bt_detect_free(r.d);

	replay_file("rate_drop.jsonl", &r, NULL);
	bt_verdict_build(&v, r.d, 0.30, 16, NULL);
	assert_null(strstr(v.text, "delayed ACKs"));
	assert_non_null(strstr(v.text, "real rate drop"));
	bt_detect_free(r.d);
}

#define MBIT 1000000ull
#define MS 1000000ull

/*
 * Not every late ACK is a delayed_ack: 194 segments sent in 2.3 ms that drained
 * over 117 ms behind a deep queue are a rate_drop; a lone segment held 300 ms,
 * longer than any delayed-ACK timer, is other; two segments held 40 ms are a
 * delayed_ack
 */
static void test_queue_is_no_delayed_ack(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	s = mk(1, 1000000000, 0, 194, 2300, 117000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((194ull << 24) / 117000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_RATE_DROP);
	assert_non_null(strstr(c.evidence, "194 segments sent in 2.300 ms drained over 117.000 ms"));
	s = mk(2, 1000000000, 0, 1, 0, 300000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((1ull << 24) / 300000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	assert_non_null(strstr(c.evidence, "longer than any delayed-ACK timer"));
	s = mk(3, 1000000000, 0, 2, 10, 40000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((2ull << 24) / 40000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_DELAYED_ACK);
	s = mk(4, 1000000000, 0, 3, 10, 40000, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((3ull << 24) / 40000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_RATE_DROP);
	bt_detect_free(d);
}

/*
 * A rate cut's queue as BBR's pacing comes down: the receive interval over
 * the send interval by less than the held ratio (5x), past the 10 ms floor
 * (the bench's two last 'other': 22.064 ms against 5.209, 21.552 against
 * 10.775). With more segments than a held ACK holds it is a queue (rate_drop);
 * with two it stays other; under the floor, and with the two intervals
 * agreeing, it is not this rule's
 */
static void test_queue_between_the_ratios(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	struct {
		int32_t dlv;
		int64_t snd, rcv;
		enum bt_cause cause;
		const char *evidence;
	} cases[] = {
		{ 19, 5209, 22064, BT_CAUSE_RATE_DROP, "19 segments sent in 5.209 ms drained over 22.064 ms" },
		{ 19, 10775, 21552, BT_CAUSE_RATE_DROP, "drained over 21.552 ms" },
		{ 2, 5209, 22064, BT_CAUSE_OTHER, "neither agree nor show a held ACK" },
		/* under the delayed-ACK floor too: a burst sent faster than it drained */
		{ 19, 2209, 9999, BT_CAUSE_RATE_DROP, "19 segments sent in 2.209 ms drained over 9.999 ms" },
		{ 19, 11000, 22000, BT_CAUSE_RATE_DROP, "agree (within 2x)" },
	};
	(void)state;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = mk(i + 1, 1000000000, 0, cases[i].dlv, cases[i].snd, cases[i].rcv, false);
		s.bw_bps = bt_bw_to_bps((uint32_t)(((uint64_t)cases[i].dlv << 24) / (uint64_t)cases[i].rcv), 1448);
		assert_true(bt_detect_feed(d, &s, &c));
		assert_int_equal(c.cause, cases[i].cause);
		assert_non_null(strstr(c.evidence, cases[i].evidence));
	}
	bt_detect_free(d);
}

/* the filter's window rotating past an old burst's maximum: max_expired, with its age and source */
static void test_max_expired(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample a, b, x;
	uint64_t bw_a = bt_bw_to_bps((uint32_t)((10ull << 24) / 50), 1448);
	uint64_t bw_b = bt_bw_to_bps((uint32_t)((10ull << 24) / 1000), 1448);
	(void)state;

	a = mk(1 * MS, bw_a, bw_a, 10, 0, 50, false); /* a burst: 10 segments in no time */
	a.min_rtt_us = 100;
	assert_false(bt_detect_feed(d, &a, &c));
	b = mk(2 * MS, bw_a, bw_a, 10, 0, 1000, false);
	assert_false(bt_detect_feed(d, &b, &c));
	x = mk(501 * MS, bw_a, bw_b, 10, 2000, 2000, false); /* its own sample is not the new max */
	x.min_rtt_us = 100;
	assert_true(bt_detect_feed(d, &x, &c));
	assert_false(c.reset_by_ack);
	assert_int_equal(c.cause, BT_CAUSE_MAX_EXPIRED);
	assert_non_null(strstr(c.evidence, "expire after 500.000 ms (5000 rounds of min_rtt 100 us): "
					   "10 segments sent in 0.000 ms, ACKed over 0.050 ms (a burst)"));
	bt_detect_free(d);
}

/* a sample the sender itself paced out slowly: sender_limited */
static void test_sender_limited(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s = mk(1, 1000000000, 0, 15, 20000, 4000, false);
	(void)state;

	s.bw_bps = bt_bw_to_bps((uint32_t)((15ull << 24) / 20000), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_SENDER_LIMITED);
	assert_non_null(strstr(c.evidence, "the sample measured the sender, not the path"));
	bt_detect_free(d);
}

/* three segments ACKed 34 us after a 10 us send, at a veth's RTT (the estimate falls from
 * 10 Gbit/s to 1 Gbit/s): ack_jitter, up to 1 ms */
static void test_ack_jitter(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s = mk(1, 10 * 1000000000ull, 0, 3, 10, 34, false);
	(void)state;

	s.bw_bps = bt_bw_to_bps((uint32_t)((3ull << 24) / 34), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_ACK_JITTER);
	assert_non_null(strstr(c.evidence, "ACKed 0.034 ms after a 0.010 ms send"));
	/* the edge: 1 us under BT_NOISE_FLOOR_US is jitter; at it, 3 segments sent
	 * faster than they came back drained through a queue */
	s = mk(2, 10 * 1000000000ull, 0, 3, 10, BT_NOISE_FLOOR_US - 1, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((3ull << 24) / (BT_NOISE_FLOOR_US - 1)), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_ACK_JITTER);
	s = mk(3, 10 * 1000000000ull, 0, 3, 10, BT_NOISE_FLOOR_US, false);
	s.bw_bps = bt_bw_to_bps((uint32_t)((3ull << 24) / BT_NOISE_FLOOR_US), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_RATE_DROP);
	assert_non_null(strstr(c.evidence, "3 segments sent in 0.010 ms drained over 1.000 ms"));
	/* app-limited, the same intervals: other, as before */
	s = mk(4, 10 * 1000000000ull, 0, 3, 10, 34, true);
	s.bw_bps = bt_bw_to_bps((uint32_t)((3ull << 24) / 34), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_OTHER);
	bt_detect_free(d);
}

/*
 * An app-limited stream at 4 Mbit/s (500 bytes ACKed per ms) with a 300 Mbit/s
 * estimate, for 1.5 s; then the collapse under test at 1.5 s; then `after_ms`
 * more ACKs at that estimate, then the estimate back at 300 Mbit/s. Returns the
 * collapse.
 */
static struct bt_collapse stream_collapse(struct bt_detect *d, uint64_t cookie, uint64_t bw_after,
					  unsigned int after_ms)
{
	struct bt_collapse c, none;
	struct bt_sample s;
	uint64_t t = 1, una = 1000;
	bool hit = false;

	for (unsigned int i = 0; i < 1500 + 1 + after_ms + 20; i++, t += MS, una += 500) {
		uint64_t bw = i < 1500 || i > 1500 + after_ms ? 300 * MBIT : bw_after;
		uint64_t prev = i == 1500 ? 300 * MBIT : i == 1501 + after_ms ? bw_after : bw;

		s = mk(t, prev, bw, 1, 1000, 1000, true);
		s.cookie = cookie;
		s.snd_una = (uint32_t)una;
		s.mode = BT_PROBE_BW;
		s.pacing_gain = 1.25; /* PROBE_BW counts as its cycle's mean, 1 */
		if (i == 1500) {
			hit = bt_detect_feed(d, &s, &c);
			continue;
		}
		assert_false(bt_detect_feed(d, &s, &none));
	}
	assert_true(hit);
	return c;
}

/* impact: the demand from the ACKed bytes; harmless above 1.25 x it, throttling under */
static void test_impact(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_detect_stats st;
	struct bt_collapse c;
	(void)state;

	/* 300 -> 200 Mbit/s for a 4 Mbit/s stream: 50x headroom */
	c = stream_collapse(d, 1, 200 * MBIT, 10);
	assert_int_equal(c.impact, BT_IMPACT_HARMLESS);
	tk_assert_cmp(c.demand_bps, >, 3900000);
	tk_assert_cmp(c.demand_bps, <, 4100000);
	tk_assert_cmp(c.headroom, >, 49);
	tk_assert_cmp(c.headroom, <, 51);
	bt_detect_stats(d, &st);
	assert_int_equal(st.throttled_ns, 0);
	/* 300 -> 3 Mbit/s for 40 ms: throttling, 0.75x; 40 ms held back 1 Mbit/s */
	c = stream_collapse(d, 2, 3 * MBIT, 40);
	assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	tk_assert_cmp(c.headroom, >, 0.74);
	tk_assert_cmp(c.headroom, <, 0.76);
	bt_detect_stats(d, &st);
	assert_int_equal(st.throttling[c.cause], 1);
	tk_assert_cmp(st.throttled_ns, >=, 40 * MS);
	tk_assert_cmp(st.throttled_ns, <=, 42 * MS);
	tk_assert_cmp(st.late_bytes, >, 4900);
	tk_assert_cmp(st.late_bytes, <, 5300);
	/* 300 -> 4.5 Mbit/s: above the demand, yet under 1.25x of it: throttling */
	c = stream_collapse(d, 3, 4500000, 5);
	assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	tk_assert_cmp(c.headroom, >, 1.1);
	tk_assert_cmp(c.headroom, <, 1.25);
	bt_detect_free(d);
}

/* a bulk flow (not app-limited) wants at least what it delivered: a collapse under that throttles it */
static void test_impact_bulk(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	for (unsigned int i = 0; i < 500; i++) {
		s = mk(1 + i * MS, 100 * MBIT, 100 * MBIT, 10, 1000, 1000, false);
		s.snd_una = 1000 + i * 12500;
		assert_false(bt_detect_feed(d, &s, &c));
	}
	s = mk(1 + 500 * MS, 100 * MBIT, 60 * MBIT, 10, 1000, 1000, false);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	/* what it delivered over the last second: 12500 bytes a ms */
	tk_assert_cmp(c.demand_bps, >, 99 * MBIT);
	tk_assert_cmp(c.demand_bps, <=, 100 * MBIT);
	tk_assert_cmp(c.headroom, >, 0.59);
	tk_assert_cmp(c.headroom, <, 0.61);
	bt_detect_free(d);
}

/*
 * A bulk iperf3 flow through a 200 Mbit/s htb with a 64 kB burst (repro/dip.sh
 * --push iperf3 --rate 200 --burst 65536, see the fixtures' README): two
 * samples of 16-32 us at the start set a 6.6 Gbit/s maximum; 108 ms in, the
 * filter lets it go for a sample at the path's rate. The live detector (before
 * burst_max) called it a rate_drop from 6.6 Gbit/s; it is a burst_max, harmless.
 */
static void test_burst_max(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("burst_max.jsonl", &r, NULL);
	assert_int_equal(r.n_found, 1);
	assert_int_equal(count(&r, BT_CAUSE_RATE_DROP), 0);
	c = &r.last[BT_CAUSE_BURST_MAX];
	assert_int_equal(c->cause, BT_CAUSE_BURST_MAX);
	assert_int_equal(c->impact, BT_IMPACT_HARMLESS);
	/* the maximum: over twice the path's 200 Mbit/s; the estimate now near it */
	tk_assert_cmp(c->bw_prev_bps, >, 2 * 200 * MBIT);
	tk_assert_cmp(c->bw_bps, >, 150 * MBIT);
	tk_assert_cmp(c->bw_bps, <, 250 * MBIT);
	assert_non_null(strstr(c->evidence, "what the flow delivered"));
	assert_non_null(strstr(c->evidence, ": a burst; the estimate is back to"));
	bt_detect_free(r.d);
}

/* a bulk flow delivering 16 Gbit/s for 100 ms, 2 MB ACKed a ms */
static void bulk_flow(struct bt_detect *d, uint64_t *t, uint32_t *una)
{
	struct bt_collapse c;
	struct bt_sample s;

	for (unsigned int i = 0; i < 100; i++, *t += MS, *una += 2000000) {
		s = mk(*t, 30000 * MBIT, 30000 * MBIT, 46, 30, 30, false);
		s.snd_una = *una;
		assert_false(bt_detect_feed(d, &s, &c));
	}
}

/* a culprit whose two intervals agree but lie under BT_NOISE_FLOOR_US measured
 * timing noise (ack_jitter), and a bulk flow it hits is not throttled; over the
 * floor the same fall is a rate_drop that throttles */
static void test_noise_floor(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	uint64_t t = 1;
	uint32_t una = 1000;
	(void)state;

	bulk_flow(d, &t, &una);
	/* 10 segments in 22 us and 25 us: 4.6 Gbit/s, under 0.7 x 16 Gbit/s */
	s = mk(t, 30000 * MBIT, bt_bw_to_bps((uint32_t)((10ull << 24) / 25), 1448), 10, 22, 25, false);
	s.snd_una = una;
	assert_true(bt_detect_feed(d, &s, &c));
	assert_string_equal(bt_cause_names[c.cause], "ack_jitter");
	assert_int_equal(c.impact, BT_IMPACT_HARMLESS);
	assert_non_null(strstr(c.evidence, "both under the 1.000 ms noise floor"));
	bt_detect_free(d);

	d = bt_detect_new(NULL);
	t = 1;
	una = 1000;
	bulk_flow(d, &t, &una);
	/* 400 segments in 1100 and 1200 us: 3.9 Gbit/s, the path's own */
	s = mk(t, 30000 * MBIT, bt_bw_to_bps((uint32_t)((400ull << 24) / 1200), 1448), 400, 1100, 1200,
	       false);
	s.snd_una = una;
	assert_true(bt_detect_feed(d, &s, &c));
	assert_string_equal(bt_cause_names[c.cause], "rate_drop");
	assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	assert_non_null(strstr(c.evidence, "Mbit/s the flow delivered"));
	/* 2 MB a ms over the checkpoints' span */
	tk_assert_cmp(c.demand_bps, >, 15000 * MBIT);
	tk_assert_cmp(c.demand_bps, <, 16500 * MBIT);
	bt_detect_free(d);
}

/* BBR on its long-term rate paces there until losses stop, whatever the
 * sample of the ACK that switched it: the noise floor does not make it harmless */
static void test_policer_under_the_noise_floor(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	uint64_t t = 1;
	uint32_t una = 1000;
	(void)state;

	bulk_flow(d, &t, &una);
	s = mk(t, 30000 * MBIT, 30000 * MBIT, 10, 22, 25, false);
	s.snd_una = una;
	s.lt_use_bw = true;
	s.lt_bw_bps = 2000 * MBIT;
	s.losses = 3;
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_LOSS_POLICER);
	assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
	bt_detect_free(d);
}

/* the burst: 46 segments sent in 0.182 ms and ACKed over 5.295 ms,
 * under the delayed-ACK floor: a queue draining at the path's rate, not other */
static void test_queue_under_the_floor(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s = mk(1, 1000 * MBIT, 0, 46, 182, 5295, false);
	(void)state;

	s.bw_bps = bt_bw_to_bps((uint32_t)((46ull << 24) / 5295), 1448);
	assert_true(bt_detect_feed(d, &s, &c));
	assert_int_equal(c.cause, BT_CAUSE_RATE_DROP);
	assert_non_null(strstr(c.evidence, "46 segments sent in 0.182 ms drained over 5.295 ms"));
	bt_detect_free(d);
}

/* the verdict: nothing throttled says so and names no fix */
static void test_verdict_nothing_throttled(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_verdict v;
	(void)state;

	stream_collapse(d, 1, 200 * MBIT, 10);
	bt_verdict_build(&v, d, 0.3, 2, NULL);
	assert_non_null(strstr(v.text, "never throttled the stream"));
	assert_non_null(strstr(v.text, "No action is needed (all harmless: 1 "));
	assert_string_equal(v.fix, "");
	stream_collapse(d, 2, 3 * MBIT, 40);
	bt_verdict_build(&v, d, 0.3, 4, NULL);
	assert_non_null(strstr(v.text, "1 of them throttled the stream"));
	assert_non_null(strstr(v.text, "for 40 ms in all") || strstr(v.text, "for 41 ms in all"));
	assert_non_null(strstr(v.text, "; 1 more was harmless ("));
	/* a throttling cause without a clause of its own is still named */
	assert_non_null(strstr(v.text, "; 1 had another cause (1 other: see each record's evidence)"));
	/* more than a negligible cost, and no cause with a known fix: the verdict says so */
	assert_false(bt_throttle_negligible(&v.st));
	assert_non_null(strstr(v.text, " No fix is proposed: neither delayed ACKs, a policer nor a rate "
				       "drop caused most of the throttling"));
	assert_string_equal(v.fix, "");
	bt_detect_free(d);
}

/*
 * A bulk flow at 36 Mbit/s behind a deep queue when its path is cut to 10
 * Mbit/s (scenarios.bats' deep queue, as the 6.18 host traced it): the
 * filter lets the old 108 Mbit/s maximum go, and the largest sample left
 * drained 70 segments, sent in 26.4 ms, over 74.9 ms. Under 0.7 x what the
 * flow delivered, that is the path giving less: a rate_drop that throttles,
 * as when this ACK's own sample shows it. The same sample with the flow
 * delivering 12 Mbit/s still gives what it had: max_expired, harmless
 */
static void test_expired_onto_a_draining_queue(void **state)
{
	const uint64_t bw_old = 108 * MBIT, per_ms[] = { 4500, 1500 };
	const uint64_t bw_q = bt_bw_to_bps((uint32_t)((70ull << 24) / 74900), 1448);
	(void)state;

	for (unsigned int k = 0; k < 2; k++) {
		struct bt_detect *d = bt_detect_new(NULL);
		struct bt_collapse c;
		struct bt_sample s;
		uint64_t t = 1, una = 1000;

		for (unsigned int i = 0; i < 1000; i++, t += MS, una += per_ms[k]) {
			s = mk(t, bw_old, bw_old, 3, 1000, 1000, false);
			s.snd_una = (uint32_t)una;
			assert_false(bt_detect_feed(d, &s, &c));
		}
		s = mk(t, bw_old, bw_old, 70, 26400, 74900, false);
		s.snd_una = (uint32_t)una;
		assert_false(bt_detect_feed(d, &s, &c));
		t += MS;
		s = mk(t, bw_old, bw_q, 3, 1000, 1000, false); /* its own sample is not the new max */
		s.snd_una = (uint32_t)una;
		assert_true(bt_detect_feed(d, &s, &c));
		assert_false(c.reset_by_ack);
		if (k == 0) {
			assert_string_equal(bt_cause_names[c.cause], bt_cause_names[BT_CAUSE_RATE_DROP]);
			assert_int_equal(c.impact, BT_IMPACT_THROTTLING);
			assert_non_null(strstr(c.evidence, "an earlier sample: 70 segments sent in 26.400 ms "
							   "drained over 74.900 ms"));
			/* the throttle's time goes to the cause that began it */
			struct bt_detect_stats st;

			s = mk(t + 5 * MS, bw_q, bw_q, 3, 1000, 1000, false);
			s.snd_una = (uint32_t)una;
			assert_false(bt_detect_feed(d, &s, &c));
			bt_detect_stats(d, &st);
			tk_assert_cmp(st.throttled_ns, ==, 5 * MS);
			tk_assert_cmp(st.throttled_ns_by[BT_CAUSE_RATE_DROP], ==, 5 * MS);
		} else {
			assert_string_equal(bt_cause_names[c.cause], bt_cause_names[BT_CAUSE_MAX_EXPIRED]);
			assert_int_equal(c.impact, BT_IMPACT_HARMLESS);
		}
		bt_detect_free(d);
	}
}

/* a stream at 4 Mbit/s, its estimate at 300 Mbit/s, then samples whose intervals
 * agree (not app-limited) at 100 and 90 Mbit/s: the path still gives more than the
 * stream delivered, so no rate drop but an old maximum let go (max_expired,
 * harmless); then one at 2 Mbit/s, under 0.7 x the stream: a rate drop, throttling. The
 * clause gives its fall from what the stream delivered, not from BBR's maximum */
static void test_verdict_rate_clause_throttling_only(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	const uint64_t drops[] = { 100 * MBIT, 90 * MBIT, 2 * MBIT };
	struct bt_collapse c;
	struct bt_verdict v;
	struct bt_sample s;
	uint64_t t = 1, una = 1000;
	(void)state;

	for (unsigned int k = 0; k < 3; k++) {
		for (unsigned int i = 0; i < 1000; i++, t += MS, una += 500) {
			s = mk(t, 300 * MBIT, 300 * MBIT, 1, 1000, 1000, true);
			s.snd_una = (uint32_t)una;
			assert_false(bt_detect_feed(d, &s, &c));
		}
		/* 10 segments over the interval that makes the rate, both ends agreeing */
		int64_t us = (int64_t)(10ull * 1448 * 8 * 1000000 / drops[k]);

		s = mk(t, 300 * MBIT, bt_bw_to_bps((uint32_t)((10ull << 24) / (uint64_t)us), 1448), 10, us,
		       us, false);
		s.snd_una = (uint32_t)una;
		t += MS;
		assert_true(bt_detect_feed(d, &s, &c));
		assert_string_equal(bt_cause_names[c.cause], bt_cause_names[k < 2 ? BT_CAUSE_MAX_EXPIRED : BT_CAUSE_RATE_DROP]);
		assert_int_equal(c.impact, k < 2 ? BT_IMPACT_HARMLESS : BT_IMPACT_THROTTLING);
		if (k < 2)
			assert_non_null(strstr(c.evidence, "the path gives "));
	}
	bt_verdict_build(&v, d, 0.3, 3, NULL);
	assert_int_equal(v.st.throttling[BT_CAUSE_RATE_DROP], 1);
	tk_assert_cmp(v.st.rate_thr.bw_bps, ==, c.bw_bps);
	assert_int_equal(v.st.collapses[BT_CAUSE_RATE_DROP], 1);
	/* from what the stream delivered (500 bytes a ms), not BBR's maximum */
	assert_non_null(strstr(v.text, "1 was a real rate drop: the path delivered less (≈ 4.0 Mbit/s, what "
				       "the flow had delivered, to 2.0 Mbit/s)"));
	bt_detect_free(d);
}

/* a flow 10 us old whose first 25 kB were ACKed in microseconds, its estimate at
 * 10 Gbit/s, collapsing to 1 Gbit/s: its demand is those bytes over 20 ms at least
 * (10 Mbit/s), not the estimate it had, and the collapse is harmless */
static void test_young_flow_demand(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_collapse c;
	struct bt_sample s;
	(void)state;

	s = mk(1000, 10000 * MBIT, 10000 * MBIT, 1, 2, 2, true);
	s.snd_una = 1000;
	assert_false(bt_detect_feed(d, &s, &c));
	s = mk(5000, 10000 * MBIT, 10000 * MBIT, 17, 3, 3, true);
	s.snd_una = 26000;
	assert_false(bt_detect_feed(d, &s, &c));
	s = mk(10000, 10000 * MBIT, 1000 * MBIT, 1, 2, 2, true);
	s.snd_una = 26000;
	assert_true(bt_detect_feed(d, &s, &c));
	tk_assert_cmp(c.demand_bps, ==, 25000ull * 8 * 1000 / BT_DEMAND_MIN_SPAN_MS);
	assert_int_equal(c.impact, BT_IMPACT_HARMLESS);
	bt_detect_free(d);
}

/* the demand's rule written out plainly, every checkpoint kept: the bytes ACKed
 * since the oldest checkpoint within the window, over that span (20 ms at least) */
struct plain_cp {
	uint64_t t_ns, acked;
};

static uint64_t plain_demand(const struct plain_cp *cp, int n, uint64_t now_ns, uint64_t acked)
{
	for (int i = 0; i < n; i++) {
		uint64_t span = now_ns - cp[i].t_ns;

		if (span > BT_DEMAND_WINDOW_MS * TK_NSEC_PER_MSEC)
			continue;
		if (span < BT_DEMAND_MIN_SPAN_MS * TK_NSEC_PER_MSEC)
			span = BT_DEMAND_MIN_SPAN_MS * TK_NSEC_PER_MSEC;
		return (uint64_t)((double)(acked - cp[i].acked) * 8e9 / (double)span);
	}
	return 0;
}

/* a flow whose ACKs come 1 ms to 400 ms apart for a minute: at each ACK the
 * demand is the plain rule's over every checkpoint ever taken, and the flow
 * keeps only the checkpoints of its window (a ring of 128 at 50 ms apart
 * held 6.4 s of them) */
static void test_demand_keeps_its_window_only(void **state)
{
	static struct plain_cp cp[4000];
	struct bt_demand d = { 0 };
	struct bt_sample s = { 0 };
	uint64_t t = TK_NSEC_PER_SEC, una = 5000, base = 0, last_cp = 0, seed = 7;
	int n = 0;
	bool app;
	(void)state;

	for (int i = 0; i < 4000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		t += (seed >> 33) % 4 ? (1 + (seed >> 40) % 60) * TK_NSEC_PER_MSEC
				      : (seed >> 40) % 400 * TK_NSEC_PER_MSEC;
		if (i)
			tk_assert_cmp(bt_demand_measured(&d, t, &app), ==, plain_demand(cp, n, t, una - base));
		una += 1000 + (seed >> 50) % 3000;
		if (!i)
			base = una; /* the first sample's snd_una: nothing ACKed yet */
		s.t_ns = t;
		s.snd_una = (uint32_t)una;
		bt_demand_track(&d, &s);
		if (!n || t - last_cp >= BT_DEMAND_STEP_NS) {
			cp[n++] = (struct plain_cp){ t, una - base };
			last_cp = t;
			tk_assert_cmp(d.last.bps, ==, plain_demand(cp, n, t, una - base));
		}
		/* a checkpoint every 10 ms at most: the window holds 101 */
		tk_assert_cmp(d.n, <=, BT_DEMAND_WINDOW_MS / 10 + 1);
	}
	bt_demand_free(&d);
}

/* lost events make the sentence say it is incomplete, and why: a full ring
 * buffer, or ACKs whose entry and exit probes did not pair; none, no clause */
static void test_verdict_notes_lost(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_verdict v;
	(void)state;

	stream_collapse(d, 1, 200 * MBIT, 10);
	bt_verdict_build(&v, d, 0.3, 2, NULL);
	bt_verdict_note_lost(&v, 0, 0, 0);
	assert_null(strstr(v.text, "lost"));
	assert_null(strstr(v.text, "no sample"));
	bt_verdict_note_lost(&v, 0, 0, 3);
	assert_null(strstr(v.text, "ring buffer"));
	assert_non_null(strstr(v.text, " 3 ACKs have no sample: bbr_main's entry and exit probes could not be "
				       "paired"));
	bt_verdict_build(&v, d, 0.3, 2, NULL);
	bt_verdict_note_lost(&v, 5, 2, 0);
	assert_non_null(strstr(v.text, "lost in a full ring buffer (5 ACKs, 2 writes)"));
	assert_null(strstr(v.text, "no sample"));
	bt_detect_free(d);
}

/* the verdict record's stall fields: counts where writes were traced, null (not 0)
 * where no write tap ran, and the sentence says why */
static void test_verdict_stalls_untraced(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_verdict v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	stream_collapse(d, 1, 200 * MBIT, 10);
	for (int untraced = 0; untraced < 2; untraced++) {
		struct rec_writer *w;

		bt_verdict_build(&v, d, 0.3, 2, NULL);
		if (untraced)
			bt_verdict_no_stalls(&v, "this kernel has no sock_send_length tracepoint (6.3+)");
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		w = rec_writer_new(REC_JSON, f);
		assert_int_equal(bt_verdict_write(w, &v), 0);
		rec_writer_free(w);
		fclose(f);
		if (untraced) {
			assert_non_null(strstr(buf, "\"stalls_by_cause\":null,\"stalled_s\":null,"
						    "\"nagle_stalls_ended_by\":null"));
			assert_non_null(strstr(v.text, " The sender's stalls were not traced: this kernel has "
						       "no sock_send_length tracepoint (6.3+)."));
		} else {
			assert_non_null(strstr(buf, "\"stalls_by_cause\":{\"nagle\":0,"));
			assert_null(strstr(v.text, "stalls were not traced"));
		}
		free(buf);
		buf = NULL;
	}
	bt_detect_free(d);
}

/* a frame's write at t on flow `cookie` to port 1935: three full segments in
 * flight from una, and its 500-byte tail, which Nagle holds behind them */
static struct bt_sample tail_write(uint64_t cookie, uint64_t t, uint32_t una)
{
	struct bt_sample w = mk(t, 0, 0, 0, 0, 0, true);

	w.cookie = cookie;
	w.dport = 1935;
	w.kind = BT_KIND_WRITE;
	w.snd_una = una;
	w.snd_nxt = una + 3 * 1448;
	w.write_seq = w.snd_nxt + 500;
	w.snd_wnd = 1 << 20;
	w.cwnd = 100;
	w.prior_in_flight = 3;
	return w;
}

/* N Nagle stalls of `ms` each on flow 3: a frame's 500-byte tail held after its
 * write until the late ACK of all in flight, then sent (the tail's own ACK) */
static void nagle_stalls(struct bt_detect *d, unsigned int n, unsigned int ms)
{
	struct bt_stall x;
	uint32_t una = 5000;

	for (unsigned int i = 0; i < n; i++, una += 3 * 1448 + 500) {
		uint64_t t = (uint64_t)(i + 1) * 1000 * MS;
		struct bt_sample w = tail_write(3, t, una), a, b;

		a = w;
		a.kind = BT_KIND_ACK;
		a.t_ns = t + (uint64_t)ms * MS;
		a.snd_una = a.snd_nxt;
		a.delivered = 3;
		b = a;
		b.t_ns = a.t_ns + MS / 10;
		b.snd_una = b.snd_nxt = w.write_seq;
		bt_detect_write(d, &w);
		bt_detect_feed(d, &a, &(struct bt_collapse){ 0 });
		bt_detect_feed(d, &b, &(struct bt_collapse){ 0 });
		assert_true(bt_detect_take_stall(d, &x));
		assert_int_equal(x.cause, BT_STALL_NAGLE);
	}
}

/* N Nagle stalls of `ms` each on flow 4 to port 1935: a frame's 500-byte
 * tail held after its write until the next frame's write outgrew a segment
 * (ffmpeg at 60 fps, ACKs delayed past the frame interval), then all ACKed */
static void nagle_stalls_written(struct bt_detect *d, unsigned int n, unsigned int ms)
{
	struct bt_stall x;
	uint32_t una = 5000;

	for (unsigned int i = 0; i < n; i++, una += 4 * 1448 + 500) {
		uint64_t t = (uint64_t)(i + 1) * 1000 * MS;
		struct bt_sample w = tail_write(4, t, una), w2, a;

		w2 = w;
		w2.t_ns = t + (uint64_t)ms * MS;
		w2.write_seq += 1448;
		a = w2;
		a.kind = BT_KIND_ACK;
		a.t_ns = w2.t_ns + MS / 10;
		a.snd_una = a.snd_nxt = w2.write_seq;
		a.delivered = 5;
		bt_detect_write(d, &w);
		bt_detect_write(d, &w2);
		bt_detect_feed(d, &a, &(struct bt_collapse){ 0 });
		assert_true(bt_detect_take_stall(d, &x));
		assert_int_equal(x.cause, BT_STALL_NAGLE);
		assert_int_equal(x.ended_by, BT_STALL_END_WRITE);
	}
}

/* Nagle's fix by what ended the holds: the next write (quick ACKs would
 * not shorten those), TCP_NODELAY alone; the receiver's late ACK, also the
 * receiver's port scope; each command with the stream's port */
static void test_verdict_nagle_fix_by_end(void **state)
{
	struct bt_detect *d = bt_detect_new(NULL);
	struct bt_verdict v;
	(void)state;

	nagle_stalls_written(d, 8, 16);
	bt_verdict_build(&v, d, 0.3, 60, NULL);
	print_message("# %s\n", v.stall_fix);
	assert_int_equal(v.st.nagle_ended[BT_STALL_END_WRITE], 8);
	assert_string_equal(v.stall_fix, "TCP_NODELAY on the sender ::, with `quickack nodelay --dport 1935` there or the "
					 "pusher's own option (ffmpeg: -tcp_nodelay 1)");
	bt_detect_free(d);

	d = bt_detect_new(NULL);
	nagle_stalls(d, 8, 40);
	bt_verdict_build(&v, d, 0.3, 60, NULL);
	print_message("# %s\n", v.stall_fix);
	assert_int_equal(v.st.nagle_ended[BT_STALL_END_ACK], 8);
	assert_string_equal(v.stall_fix, "TCP_NODELAY on the sender ::, with `quickack nodelay --dport 1935` there or the "
					 "pusher's own option (ffmpeg: -tcp_nodelay 1); and on the receiver ::, "
					 "`quickack on --port 1935`, whose ACKs within 2 jiffies end each hold sooner");
	/* as many of each: the receiver's ACK ended half, and both fixes stand */
	nagle_stalls_written(d, 8, 16);
	bt_verdict_build(&v, d, 0.3, 60, NULL);
	assert_non_null(strstr(v.stall_fix, "; and on the receiver"));
	bt_detect_free(d);
}

/* the stalls' fix: proposed when most were Nagle's and they held data for
 * BT_STALL_FIX_MIN_MS in all; under that, "too little to act on" and none */
static void test_verdict_stall_fix_floor(void **state)
{
	struct {
		unsigned int n, ms;
		bool fix;
	} cases[] = { { 3, 14, false }, { 4, 24, false }, { 4, 25, true }, { 38, 40, true } };
	(void)state;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bt_detect *d = bt_detect_new(NULL);
		struct bt_verdict v;

		nagle_stalls(d, cases[i].n, cases[i].ms);
		bt_verdict_build(&v, d, 0.3, 60, NULL);
		assert_int_equal(v.stalls, cases[i].n);
		if (cases[i].fix) {
			assert_non_null(strstr(v.stall_fix, "TCP_NODELAY on the sender"));
			assert_null(strstr(v.text, "too little to act on"));
		} else {
			assert_int_equal(v.stall_fix[0], 0);
			assert_non_null(strstr(v.text, "That is too little to act on (under 100 ms in all): "
						       "no action is needed for the stalls."));
		}
		bt_detect_free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delayed_ack),
		cmocka_unit_test(test_htb_rate_change_is_rate_drop),
		cmocka_unit_test(test_loss_policer),
		cmocka_unit_test(test_throttle_negligible),
		cmocka_unit_test(test_quickack_on),
		cmocka_unit_test(test_fin_ack_is_no_collapse),
		cmocka_unit_test(test_flow_before_its_cookie),
		cmocka_unit_test(test_lone_segment),
		cmocka_unit_test(test_collapse_ratio),
		cmocka_unit_test(test_rule_edges),
		cmocka_unit_test(test_flow_table_cap),
		cmocka_unit_test(test_flow_close),
		cmocka_unit_test(test_culprit_ways_agree),
		cmocka_unit_test(test_verdict_by_peer),
		cmocka_unit_test(test_judged_alike_in_a_crowd),
		cmocka_unit_test(test_verdict_text),
		cmocka_unit_test(test_queue_is_no_delayed_ack),
		cmocka_unit_test(test_queue_between_the_ratios),
		cmocka_unit_test(test_verdict_stall_fix_floor),
		cmocka_unit_test(test_verdict_nagle_fix_by_end),
		cmocka_unit_test(test_max_expired),
		cmocka_unit_test(test_sender_limited),
		cmocka_unit_test(test_ack_jitter),
		cmocka_unit_test(test_verdict_notes_lost),
		cmocka_unit_test(test_verdict_stalls_untraced),
		cmocka_unit_test(test_verdict_rate_clause_throttling_only),
		cmocka_unit_test(test_expired_onto_a_draining_queue),
		cmocka_unit_test(test_young_flow_demand),
		cmocka_unit_test(test_demand_keeps_its_window_only),
		cmocka_unit_test(test_impact),
		cmocka_unit_test(test_impact_bulk),
		cmocka_unit_test(test_verdict_nothing_throttled),
		cmocka_unit_test(test_burst_max),
		cmocka_unit_test(test_noise_floor),
		cmocka_unit_test(test_queue_under_the_floor),
		cmocka_unit_test(test_policer_under_the_noise_floor),
	};

	log_init("test_detect");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
