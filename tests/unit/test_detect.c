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

#include "bbrtrace/detect.h"
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
	 * lt_bw_bps in the sample record (see their README) */
	n += !bt_has(&fs, BT_S_LT_BW_BPS);
	if (n != BT_SAMPLE_NFIELDS - 1)
		fail_msg("fixture: a sample record with %u of its %u fields", n, BT_SAMPLE_NFIELDS - 1);
}

static void read_collapse(const struct jl_obj *o, struct bt_collapse *c)
{
	struct bt_fieldset fs;
	unsigned int n = bt_collapse_read(o, c, &fs);

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
				assert_true(r->n_found < MAX_EXPECT);
				r->found[r->n_found].t_ns = c.ack.t_ns;
				r->found[r->n_found].cause = c.cause;
				r->n_found++;
				r->last[c.cause] = c;
			}
		} else if (type && !strcmp(type, "collapse")) {
			struct bt_collapse c;

			read_collapse(&o, &c);
			assert_true(r->n_expect < MAX_EXPECT);
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
 * The replay finds the ACKs bbrtrace found live, and the same cause for each
 * collapse set by the ACK's own sample. (A fixture is a window of a trace:
 * an older culprit may lie before the window, so those causes may differ.)
 */
static void assert_same_as_live(const struct replay *r)
{
	assert_int_equal(r->n_found, r->n_expect);
	for (unsigned int i = 0; i < r->n_found; i++) {
		assert_true(r->found[i].t_ns == r->expect[i].t_ns);
		if (r->expect[i].reset_by_ack)
			assert_string_equal(bt_cause_names[r->found[i].cause],
					    bt_cause_names[r->expect[i].cause]);
	}
}

static void test_delayed_ack(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("delayed_ack.jsonl", &r, NULL);
	assert_same_as_live(&r);
	assert_true(count(&r, BT_CAUSE_DELAYED_ACK) >= 3);
	c = &r.last[BT_CAUSE_DELAYED_ACK];
	/* the story's sample: not app-limited, held ACK of ~40 ms, tiny estimate after */
	assert_false(c->culprit.is_app_limited);
	assert_true(c->culprit.rcv_interval_us >= 5 * c->culprit.snd_interval_us);
	assert_true(c->culprit.rcv_interval_us >= 30000);
	assert_true(c->bw_bps * 100 < c->bw_prev_bps);
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
	assert_true(count(&r, BT_CAUSE_RATE_DROP) >= 1);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	c = &r.last[BT_CAUSE_RATE_DROP];
	/* htb went from 100 to 10 Mbit/s: the new estimate is near the new rate */
	assert_true(c->bw_bps < 15000000);
	assert_true(c->bw_bps > 5000000);
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
	assert_true(count(&r, BT_CAUSE_LOSS_POLICER) >= 1);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	c = &r.last[BT_CAUSE_LOSS_POLICER];
	assert_true(c->ack.lt_use_bw);
	assert_true(c->reset_by_ack);
	/* the policer's 20 Mbit/s, measured by BBR over lost and delivered packets */
	assert_true(c->bw_bps == c->ack.lt_bw_bps);
	assert_true(c->bw_bps > 15000000 && c->bw_bps <= 21000000);
	assert_true(c->bw_bps * 10 < c->bw_prev_bps * 7);
	assert_non_null(strstr(c->evidence, "switched to its long-term rate lt_bw 19."));
	bt_verdict_build(&v, r.d, 0.30, 13, NULL);
	assert_non_null(strstr(v.text, "BBR switching to its long-term rate (19."));
	assert_non_null(strstr(v.text, "Fix: find the policer on the path"));
	assert_null(strstr(v.text, "quickack"));
	bt_detect_free(r.d);
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
	assert_true(r.samples >= 400);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 0);
	/* the one collapse, at the push's last ACK: a receive interval of microseconds */
	assert_int_equal(count(&r, BT_CAUSE_OTHER), 1);
	c = &r.last[BT_CAUSE_OTHER];
	assert_true(c->culprit.rcv_interval_us < 1000);
	bt_verdict_build(&v, r.d, 0.30, 3, NULL);
	assert_null(strstr(v.text, "delayed ACKs"));
	assert_null(strstr(v.text, "quickack on"));
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
	assert_true(r.samples > 300);
	assert_int_equal(r.n_expect, 1);
	assert_int_equal(r.n_found, 0);
	bt_detect_free(r.d);

	ignore_fin_acked = true;
	replay_file("fin_ack.jsonl", &r, NULL);
	ignore_fin_acked = false;
	assert_same_as_live(&r);
	assert_int_equal(count(&r, BT_CAUSE_DELAYED_ACK), 1);
	assert_true(r.last[BT_CAUSE_DELAYED_ACK].ack.rcv_interval_us >= 10000);
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
	assert_true(fs[0].cookie == 42);
	bt_detect_stats(d, &st);
	assert_int_equal(st.flows, 1);
	/* another connection on the same 4-tuple later is another flow */
	s.cookie = 43;
	s.t_ns = 3;
	assert_false(bt_detect_feed(d, &s, &c));
	assert_int_equal(bt_detect_flow_states(d, 0, fs, 4), 2);
	bt_detect_free(d);
}

static void test_other_microsecond_jitter(void **state)
{
	struct replay r;
	const struct bt_collapse *c;
	(void)state;

	replay_file("delayed_ack.jsonl", &r, NULL);
	assert_true(count(&r, BT_CAUSE_OTHER) >= 1);
	c = &r.last[BT_CAUSE_OTHER];
	/* a receive interval of microseconds is jitter, not a held ACK */
	assert_true(c->culprit.rcv_interval_us < 10000);
	assert_non_null(strstr(c->evidence, "floor"));
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
	assert_true(r90.n_found <= r30.n_found);
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
/* the flow table's limit is an option, and reaching it is counted */
static void test_flow_table_full(void **state)
{
	struct bt_detect_cfg cfg;
	struct bt_detect_stats st;
	struct bt_detect *d;
	struct bt_collapse c;
	(void)state;

	bt_detect_cfg_default(&cfg);
	cfg.max_flows = 16;
	d = bt_detect_new(&cfg);
	assert_non_null(d);
	for (uint64_t i = 0; i < 40; i++) {
		struct bt_sample s = mk(i + 1, 0, 1000000, 1, 10, 10, false);

		s.cookie = 1000 + i;
		bt_detect_feed(d, &s, &c);
	}
	bt_detect_stats(d, &st);
	assert_int_equal(st.flows, 40);
	/* at least the 24 flows beyond the 16 slots were evicted */
	assert_true(st.flows_evicted >= 24);
	bt_detect_free(d);
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
	assert_non_null(strstr(v.text, "Fix: on the receiver 10.77.2.2, `quickack on --to 10.77.1.2`"));
	bt_detect_free(r.d);

	replay_file("rate_drop.jsonl", &r, NULL);
	bt_verdict_build(&v, r.d, 0.30, 16, NULL);
	assert_null(strstr(v.text, "delayed ACKs"));
	assert_non_null(strstr(v.text, "real rate drop"));
	bt_detect_free(r.d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delayed_ack),
		cmocka_unit_test(test_htb_rate_change_is_rate_drop),
		cmocka_unit_test(test_loss_policer),
		cmocka_unit_test(test_quickack_on),
		cmocka_unit_test(test_fin_ack_is_no_collapse),
		cmocka_unit_test(test_flow_before_its_cookie),
		cmocka_unit_test(test_other_microsecond_jitter),
		cmocka_unit_test(test_collapse_ratio),
		cmocka_unit_test(test_rule_edges),
		cmocka_unit_test(test_flow_table_full),
		cmocka_unit_test(test_verdict_text),
	};

	log_init("test_detect");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
