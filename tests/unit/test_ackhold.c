// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold's judgement, without a kernel: what ended each hold, when the
 * sender waited, Nagle's signature (ackhold/rules.h), the sums per peer and
 * their ranking, and the verdict's words and fix for the cases the live
 * tests meet (the delayed-ACK timer's holds, Nagle's, holds that held
 * nothing back, a loss's, blind spots).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "ackhold/peers.h"
#include "ackhold/verdict.h"

#define MS 1000000ULL

static struct ah_id peer_id(uint8_t last)
{
	struct ah_id id = { .lport = 1935, .rport = 50000, .family = 2 };

	id.raddr[0] = 10, id.raddr[1] = 77, id.raddr[2] = 1, id.raddr[3] = last;
	id.laddr[0] = 10, id.laddr[1] = 77, id.laddr[2] = 2, id.laddr[3] = 2;
	return id;
}

/* a hold of HOLD ms whose last segment came QUIET ms before the ACK and the
 * next RESUME ms after it, at an RTT of 50 us */
static struct ah_hold hold(double hold_ms, double quiet_ms, double resume_ms, bool timer)
{
	struct ah_hold h = { .hold_ns = (uint64_t)(hold_ms * MS), .quiet_ns = (uint64_t)(quiet_ms * MS),
			     .resume_ns = resume_ms < 0 ? AH_NO_RESUME : (uint64_t)(resume_ms * MS),
			     .segs = 1, .bytes = 1448, .last_len = 1448, .mss = 1448, .rtt_us = 50, .timer = timer };

	return h;
}

static void test_what_ended_a_hold(void **state)
{
	struct ah_hold h = hold(40, 40, 5, true);

	(void)state;
	assert_int_equal(ah_hold_end(&h), AH_END_TIMER);
	h.repair = 1; /* a loss's, whatever sent the ACK */
	assert_int_equal(ah_hold_end(&h), AH_END_REPAIR);
	h = hold(16, 0.02, 0.05, false); /* the next segment came and was ACKed at once */
	assert_int_equal(ah_hold_end(&h), AH_END_DATA);
	h = hold(16, 1.0, 0.05, false); /* 1 ms is still the data's */
	assert_int_equal(ah_hold_end(&h), AH_END_DATA);
	h = hold(18, 2.0, 0.05, false);
	h.armed = 1; /* a delayed ACK was scheduled: the application's read ended it */
	assert_int_equal(ah_hold_end(&h), AH_END_READ);
	h.answer = 1;
	assert_int_equal(ah_hold_end(&h), AH_END_ANSWER);
	h.armed = 0; /* none was: late for another reason (quick ACKs on, in a slow guest) */
	assert_int_equal(ah_hold_end(&h), AH_END_LATE);
}

static void test_the_sender_waited(void **state)
{
	struct ah_hold h;

	(void)state;
	/* silent until the ACK, its data right after: it waited */
	h = hold(40, 40, 0.05, true);
	assert_true(ah_hold_waited(&h));
	/* its next frame 10 ms later: application-limited, it did not wait */
	h = hold(40, 40, 10, true);
	assert_false(ah_hold_waited(&h));
	/* no data after (the flow ended) */
	h = hold(40, 40, -1, true);
	assert_false(ah_hold_waited(&h));
	/* the ACK came right after its data: not silent, whatever followed */
	h = hold(17, 0.02, 0.04, false);
	assert_false(ah_hold_waited(&h));
	/* the window is 2 RTTs when that is over 2 ms: 30 ms RTT, resume in 50 */
	h = hold(40, 70, 50, true);
	h.rtt_us = 30000;
	assert_true(ah_hold_waited(&h));
	h.quiet_ns = 50 * MS; /* not silent for longer than the window */
	assert_false(ah_hold_waited(&h));
}

static void test_nagles_signature(void **state)
{
	struct ah_hold h = hold(40, 40, 0.05, true);

	(void)state;
	assert_false(ah_hold_nagle(&h)); /* a full segment */
	h.last_len = 300;
	assert_true(ah_hold_nagle(&h));
	h.resume_ns = 10 * MS; /* short, but the sender did not wait */
	assert_false(ah_hold_nagle(&h));
}

static void test_peers_sum_and_rank(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2), b = peer_id(3);
	struct ah_hold h;
	struct ah_totals t = { .first_ns = 1 * MS, .last_ns = 10001 * MS, .segs = 100, .acks = 60, .timer_acks = 5 };
	struct ah_peer **r;

	(void)state;
	for (int i = 0; i < 5; i++) {
		h = hold(40, 40, 10, true);
		assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	}
	h = hold(16, 0.02, 0.05, false); /* harmless: not held time */
	assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	h = hold(45, 45, 0.05, true);
	h.last_len = 200;
	assert_int_equal(ah_peers_add_hold(&ps, &b, &h), 0);
	assert_int_equal(ah_peers_add_totals(&ps, &a, &t), 0);
	assert_int_equal(ps.n, 2);
	r = ah_peers_ranked(&ps);
	assert_non_null(r);
	assert_memory_equal(r[0]->addr, a.raddr, 16); /* 200 ms held against 45 */
	assert_int_equal(r[0]->holds, 6);
	assert_int_equal(r[0]->timer_holds, 5);
	assert_int_equal(r[0]->data_holds, 1);
	assert_int_equal(r[0]->held_ns, 200 * MS);
	assert_int_equal(r[0]->waits, 0);
	tk_assert_near(ah_peer_held_share(r[0]), 0.02, 1e-9);
	assert_int_equal(r[1]->waits, 1);
	assert_int_equal(r[1]->nagle, 1);
	free(r);
	ah_peers_free(&ps);
}

static void verdict_of(struct ah_peers *ps, const uint64_t cnt[AH_CNT_ALL], char *buf)
{
	struct ah_peer **r = ah_peers_ranked(ps);

	ah_verdict(buf, AH_VERDICT_MAX, r, ps->n, 3, 10, cnt);
	free(r);
}

/* /metrics' window: the last AH_WINDOW_MIN minutes by the ACK's time; a hold
 * written late (its flow's next segment minutes after its ACK) lands in its
 * own minute, or nowhere once the ring holds newer ones; the host's sums and
 * its holds by what ended them count every hold since the start */
static void test_peers_window(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2), b = peer_id(3);
	struct ah_hold h = hold(40, 40, 1, true);
	struct ah_harm w;
	uint64_t min = AH_NSEC_PER_MIN;

	(void)state;
	h.ack_ns = 100 * min + 1;
	assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	h.ack_ns = 103 * min;
	assert_int_equal(ah_peers_add_hold(&ps, &b, &h), 0);
	ah_peers_window(&ps, &ps.v[0], 104 * min, &w);
	assert_int_equal(w.holds, 1);
	assert_int_equal(w.held_ns, 40 * MS);
	assert_int_equal(w.waits, 1);   /* silent 40 ms, its data 1 ms after the ACK */
	ah_peers_window(&ps, NULL, 104 * min, &w);
	assert_int_equal(w.timer_holds, 2);
	ah_peers_window(&ps, &ps.v[0], (100 + AH_WINDOW_MIN) * min, &w);
	assert_int_equal(w.holds, 0);   /* minute 100 left the window */
	ah_peers_window(&ps, NULL, (100 + AH_WINDOW_MIN) * min, &w);
	assert_int_equal(w.holds, 1);
	h.ack_ns = 110 * min;           /* the ring's slot of minute 104 */
	assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	h.ack_ns = 98 * min;            /* written late, older than its slot's minute: since the start only */
	assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	ah_peers_window(&ps, &ps.v[0], 110 * min, &w);
	assert_int_equal(w.holds, 1);
	assert_int_equal(ps.total.holds, 4);
	assert_int_equal(ps.total.held_ns, 160 * MS);
	assert_int_equal(ps.ends[AH_END_TIMER], 4);
	h = hold(16, 0.02, 0.05, false); /* the sender's data ended it: counted apart, no harm */
	assert_int_equal(ah_peers_add_hold(&ps, &a, &h), 0);
	assert_int_equal(ps.ends[AH_END_DATA], 1);
	assert_int_equal(ps.total.holds, 4);
	ah_peers_free(&ps);
}

static void test_verdict_timer_holds_get_the_host_route(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2);
	struct ah_hold h = hold(42, 42, 8, true);
	uint64_t cnt[AH_CNT_ALL] = { 0 };
	char *buf = malloc(AH_VERDICT_MAX);

	(void)state;
	ah_peers_add_hold(&ps, &a, &h);
	verdict_of(&ps, cnt, buf);
	assert_non_null(strstr(buf, "This host held back 1 of its 1 peer(s). 10.77.1.2 (to port 1935): this host "
				    "delayed 1 of its ACKs (1 sent by the delayed-ACK timer, 0 by its application's "
				    "read or answer)"));
	assert_non_null(strstr(buf, "Fix: on the receiver 10.77.2.2, `quickack on --to 10.77.1.2 --host`"));
	free(buf);
	ah_peers_free(&ps);
}

static void test_verdict_nagle_holds_get_nodelay(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2);
	struct ah_hold h = hold(40, 40, 0.05, true);
	uint64_t cnt[AH_CNT_ALL] = { 0 };
	char *buf = malloc(AH_VERDICT_MAX);

	(void)state;
	h.last_len = 500;
	ah_peers_add_hold(&ps, &a, &h);
	verdict_of(&ps, cnt, buf);
	assert_non_null(strstr(buf, "1 with Nagle's signature"));
	assert_non_null(strstr(buf, "Fix: TCP_NODELAY on the sender 10.77.1.2, with `quickack nodelay --dport 1935`"));
	free(buf);
	ah_peers_free(&ps);
}

static void test_verdict_nothing_held_back(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2);
	struct ah_hold h = hold(16, 0.02, 0.05, false);
	uint64_t cnt[AH_CNT_ALL] = { 0 };
	char *buf = malloc(AH_VERDICT_MAX);

	(void)state;
	verdict_of(&ps, cnt, buf);
	assert_string_equal(buf, "No stream's data arrived on the ports traced.");
	ah_peers_add_hold(&ps, &a, &h);
	h = hold(30, 30, -1, false);
	h.repair = 1;
	ah_peers_add_hold(&ps, &a, &h);
	h = hold(24, 24, 0.05, false); /* no delayed ACK scheduled */
	ah_peers_add_hold(&ps, &a, &h);
	verdict_of(&ps, cnt, buf);
	assert_non_null(strstr(buf, "This host held back none of its 1 peer(s)"));
	assert_non_null(strstr(buf, "1 more hold ended with the sender's next data"));
	assert_non_null(strstr(buf, "1 hold waited for a lost segment's repair"));
	assert_non_null(strstr(buf, "1 ACK left late with no delayed ACK scheduled"));
	assert_null(strstr(buf, "Fix:"));
	free(buf);
	ah_peers_free(&ps);
}

static void test_verdict_says_what_it_missed_first(void **state)
{
	struct ah_peers ps = { 0 };
	struct ah_id a = peer_id(2);
	struct ah_hold h = hold(42, 42, 8, true);
	uint64_t cnt[AH_CNT_ALL] = { [AH_CNT_LOST] = 3, [AH_CNT_UNSEEN] = 1, [AH_CNT_UNTRACKED] = 7 };
	char *buf = malloc(AH_VERDICT_MAX);

	(void)state;
	ah_peers_add_hold(&ps, &a, &h);
	verdict_of(&ps, cnt, buf);
	assert_true(strncmp(buf, "3 records were lost", 19) == 0);
	assert_non_null(strstr(buf, "1 hold ended unseen (the tracepoints did not show the ACK that ended it"));
	assert_non_null(strstr(buf, "7 segments came on flows not tracked"));
	free(buf);
	ah_peers_free(&ps);
}

static void test_verdict_names_the_top_and_counts_the_rest(void **state)
{
	struct ah_peers ps = { 0 };
	uint64_t cnt[AH_CNT_ALL] = { 0 };
	char *buf = malloc(AH_VERDICT_MAX);

	(void)state;
	for (uint8_t i = 0; i < 200; i++) { /* more peers than the table's first size */
		struct ah_id id = peer_id(i);
		struct ah_hold h = hold(20 + i % 30, 20 + i % 30, 8, true);

		assert_int_equal(ah_peers_add_hold(&ps, &id, &h), 0);
	}
	assert_int_equal(ps.n, 200);
	verdict_of(&ps, cnt, buf);
	assert_non_null(strstr(buf, "This host held back 200 of its 200 peer(s)."));
	assert_non_null(strstr(buf, " 197 more peer(s): 197 holds"));
	free(buf);
	ah_peers_free(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_what_ended_a_hold),
		cmocka_unit_test(test_the_sender_waited),
		cmocka_unit_test(test_nagles_signature),
		cmocka_unit_test(test_peers_sum_and_rank),
		cmocka_unit_test(test_peers_window),
		cmocka_unit_test(test_verdict_timer_holds_get_the_host_route),
		cmocka_unit_test(test_verdict_nagle_holds_get_nodelay),
		cmocka_unit_test(test_verdict_nothing_held_back),
		cmocka_unit_test(test_verdict_says_what_it_missed_first),
		cmocka_unit_test(test_verdict_names_the_top_and_counts_the_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
