// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stall tracker (bbrtrace/stall.c) on event sequences built to the
 * kernel's rules: a write's event shows the socket after TCP sent what it
 * could, an ACK's before TCP sends on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bbrtrace/rules.h"
#include "bbrtrace/stall.h"
#include "bpf/contract/bbrtrace.h"

#define MSS 1448
#define MS 1000000ULL

/* the flow's state at t: sequence numbers relative to 1000 */
static struct bt_sample ev(uint8_t kind, uint64_t t_ns, uint32_t una, uint32_t nxt, uint32_t wseq)
{
	struct bt_sample s;

	memset(&s, 0, sizeof(s));
	s.kind = kind;
	s.t_ns = t_ns;
	s.snd_una = 1000 + una;
	s.snd_nxt = 1000 + nxt;
	s.write_seq = 1000 + wseq;
	s.mss = MSS;
	s.cwnd = 100;
	s.snd_wnd = 1 << 20;
	s.prior_in_flight = (nxt - una + MSS - 1) / MSS;
	return s;
}

static bool step(struct bt_stall_state *st, struct bt_sample s, struct bt_stall *out)
{
	return bt_stall_step(st, &s, out);
}

/* a write that sent the tail and then held the socket: TCP took the ACK that
 * came meanwhile in only when the write let go, 1.25 ms on (a ffmpeg push
 * under load); the stall ends when the data left, the last packet's pacing
 * stamp, not at that ACK, and never before the last event, which saw it held */
static void test_sent_before_the_event(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	struct bt_sample a;
	(void)state;

	for (int clamp = 0; clamp < 2; clamp++) {
		bt_stall_reset(&st);
		assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 3 * MSS, 3 * MSS + 400), &x));
		assert_false(step(&st, ev(BT_KIND_WRITE, 21937000, 0, 3 * MSS, 3 * MSS + 408), &x));
		a = ev(BT_KIND_ACK, 23207000, 6 * MSS, 6 * MSS, 6 * MSS + 160);
		a.sent_ago_us = clamp ? 30000 : 1248;
		assert_true(step(&st, a, &x));
		assert_int_equal(x.cause, BT_STALL_NAGLE);
		assert_int_equal(x.ended_by, BT_STALL_END_WRITE);
		assert_int_equal(x.duration_us, clamp ? 21937 : 21959);
	}
}

/* a frame: 3 full segments sent, a 500-byte tail held by Nagle; the ACK of
 * the first two comes at once, the third's 40 ms late (the receiver's
 * delayed-ACK timer), and the tail goes out on it */
static void test_nagle_until_the_late_ack(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 100 * MS, 0, 3 * MSS, 3 * MSS + 500), &x));
	assert_false(step(&st, ev(BT_KIND_ACK, 100 * MS + 50000, 2 * MSS, 3 * MSS, 3 * MSS + 500), &x));
	assert_false(step(&st, ev(BT_KIND_ACK, 140 * MS, 3 * MSS, 3 * MSS, 3 * MSS + 500), &x));
	/* the tail's own ACK shows it sent: the late ACK ended the stall */
	assert_true(step(&st, ev(BT_KIND_ACK, 140 * MS + 60000, 3 * MSS + 500, 3 * MSS + 500, 3 * MSS + 500), &x));
	assert_int_equal(x.cause, BT_STALL_NAGLE);
	assert_int_equal(x.ended_by, BT_STALL_END_ACK);
	assert_int_equal(x.duration_us, 40000);
	assert_int_equal(x.held_bytes, 500);
	assert_int_equal(x.in_flight_bytes, 3 * MSS);
	assert_int_equal(x.at.t_ns, 100 * MS);
	assert_non_null(strstr(x.evidence, "500 bytes under one MSS"));
}

/* the same tail, but the application's next frame comes first (33 ms): its
 * write takes the tail along; an ACK in between that left data in flight did
 * not release it */
static void test_nagle_until_the_next_write(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 3 * MSS, 3 * MSS + 500), &x));
	assert_false(step(&st, ev(BT_KIND_ACK, 50000, 2 * MSS, 3 * MSS, 3 * MSS + 500), &x));
	assert_true(step(&st, ev(BT_KIND_WRITE, 33 * MS, 2 * MSS, 6 * MSS, 6 * MSS + 200), &x));
	assert_int_equal(x.cause, BT_STALL_NAGLE);
	assert_int_equal(x.ended_by, BT_STALL_END_WRITE);
	assert_int_equal(x.duration_us, 33000);
	/* the new frame's own tail opens the next one */
	assert_true(st.open);
	assert_int_equal(st.cur.held_bytes, 200);

	/* the next frame's write sent the tail, and the ACK of it came back
	 * before send() returned: its event comes first, with more written */
	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 3 * MSS, 3 * MSS + 500), &x));
	assert_true(step(&st, ev(BT_KIND_ACK, 33 * MS, 5 * MSS, 5 * MSS, 6 * MSS + 200), &x));
	assert_int_equal(x.ended_by, BT_STALL_END_WRITE);
	assert_int_equal(x.duration_us, 33000);
}

/* held for less than BT_STALL_MIN_US: how TCP works, no stall */
static void test_short_hold_is_no_stall(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, MSS, MSS + 100), &x));
	assert_false(step(&st, ev(BT_KIND_ACK, (BT_STALL_MIN_US - 1) * 1000ULL, MSS, MSS, MSS + 100), &x));
	assert_false(step(&st, ev(BT_KIND_ACK, BT_STALL_MIN_US * 1000ULL, MSS + 100, MSS + 100, MSS + 100), &x));
	assert_false(st.open);
}

/* TCP_NODELAY (nonagle 1): a sub-MSS tail that waits is not Nagle's */
static void test_nodelay_is_not_nagle(void **state)
{
	struct bt_sample s = ev(BT_KIND_WRITE, 0, 0, MSS, MSS + 100);
	char why[192];
	(void)state;

	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_NAGLE);
	s.nonagle = 1;
	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_OTHER);
	s.rtt_us = 250; /* the pacing clock ahead */
	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_PACING);
}

/* the window checks come first: a full receive window, then a full cwnd */
static void test_window_causes(void **state)
{
	struct bt_sample s = ev(BT_KIND_WRITE, 0, 0, 10 * MSS, 20 * MSS);
	char why[192];
	(void)state;

	s.snd_wnd = 10 * MSS;
	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_RWND);
	assert_non_null(strstr(why, "window"));
	s.snd_wnd = 1 << 20;
	s.cwnd = 10;
	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_CWND);
	s.cwnd = 11;
	assert_int_equal(bt_stall_cause_of(&s, why, sizeof(why)), BT_STALL_OTHER);
}

/* sent by something neither tap sees (a timer): ended "unseen", at the
 * latest by the event that shows it; the FIN's ACK ends a stall unreported */
static void test_unseen_end_and_fin(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	struct bt_sample fin;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 10 * MSS, 20 * MSS), &x));
	assert_false(step(&st, ev(BT_KIND_WRITE, 5 * MS, 0, 10 * MSS, 21 * MSS), &x));
	assert_true(step(&st, ev(BT_KIND_ACK, 25 * MS, 2 * MSS, 12 * MSS, 21 * MSS), &x));
	assert_int_equal(x.ended_by, BT_STALL_END_UNSEEN);
	assert_int_equal(x.duration_us, 25000);

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, MSS, MSS + 10), &x));
	fin = ev(BT_KIND_ACK, 50 * MS, MSS + 11, MSS + 11, MSS + 11);
	fin.fin_acked = true;
	assert_false(bt_stall_step(&st, &fin, &x));
	assert_false(st.open);
}

/* everything written long before; the receiver's window holds the rest:
 * the ACK after which it has no room opens the stall, a window update nobody
 * sees ends it, and the next ACK shows the data gone. With room left in the
 * window, an ACK opens nothing (what holds the rest shows elsewhere). */
static void test_window_full_after_an_ack(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	struct bt_sample a;
	(void)state;

	bt_stall_reset(&st);
	a = ev(BT_KIND_ACK, 5 * MS, 40 * MSS, 80 * MSS, 400 * MSS);
	a.snd_wnd = 45 * MSS; /* room for 5 segments: TCP sends them */
	assert_false(bt_stall_step(&st, &a, &x));
	assert_false(st.open);
	a = ev(BT_KIND_ACK, 10 * MS, 45 * MSS, 85 * MSS, 400 * MSS);
	a.snd_wnd = 40 * MSS + MSS / 2; /* half a segment of room */
	assert_false(bt_stall_step(&st, &a, &x));
	assert_true(st.open);
	assert_int_equal(st.cur.cause, BT_STALL_RWND);
	assert_int_equal(st.cur.held_bytes, (400 - 85) * MSS);
	/* an ACK of all in flight, the window shut: still stalled */
	a = ev(BT_KIND_ACK, 11 * MS, 85 * MSS, 85 * MSS, 400 * MSS);
	a.snd_wnd = 0;
	assert_false(bt_stall_step(&st, &a, &x));
	/* 100 ms on, data past the old window's end was sent and ACKed */
	a = ev(BT_KIND_ACK, 111 * MS, 95 * MSS, 110 * MSS, 400 * MSS);
	a.snd_wnd = 30 * MSS;
	assert_true(bt_stall_step(&st, &a, &x));
	assert_int_equal(x.cause, BT_STALL_RWND);
	assert_int_equal(x.ended_by, BT_STALL_END_UNSEEN);
	assert_int_equal(x.duration_us, 101000);
	assert_non_null(strstr(x.evidence, "no room for a segment"));
}

/* a write that read the socket before the ACK that precedes it in time order
 * took effect (another CPU processed it while send() returned): its snd_una is
 * behind that ACK's, and the tail it left went out on that ACK (a real ffmpeg
 * push: on the wire 10 us after the write). No stall: the next write finds
 * nothing held. A write after it that is not stale still opens one. */
static void test_write_read_before_the_ack(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	(void)state;

	bt_stall_reset(&st);
	/* the ACK of all in flight (taken in at 99.995 ms), the write queued meanwhile */
	assert_false(step(&st, ev(BT_KIND_ACK, 99995000, 3 * MSS, 3 * MSS, 3 * MSS + 1092), &x));
	/* the write's view: the tail held, snd_una before that ACK */
	assert_false(step(&st, ev(BT_KIND_WRITE, 100 * MS, 0, 3 * MSS, 3 * MSS + 1092), &x));
	assert_false(st.open);
	/* the next frame's write 11.6 ms on: nothing was held */
	assert_false(step(&st, ev(BT_KIND_WRITE, 111600000, 3 * MSS, 6 * MSS + 1092, 6 * MSS + 1092), &x));
	/* a later write that is current, with data in flight and a tail held: Nagle */
	assert_false(step(&st, ev(BT_KIND_WRITE, 130 * MS, 3 * MSS, 9 * MSS, 9 * MSS + 500), &x));
	assert_true(st.open);
	assert_int_equal(st.cur.cause, BT_STALL_NAGLE);
}

/* a real ffmpeg push under load, on the wire: a frame's 262-byte tail held
 * by Nagle went out 6.8 ms on by a tail loss probe (a timer, no ACK came),
 * and the next frame's write 15.7 ms on found it gone. The probe is out at
 * that write and was not at the first: ended unseen, 15.7 ms at the most.
 * A probe already out when the stall began says nothing. */
static void test_probe_sent_the_tail(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	struct bt_sample w;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 6 * MSS, 6 * MSS + 262), &x));
	w = ev(BT_KIND_WRITE, 15708000, 0, 12 * MSS, 12 * MSS + 63);
	w.tlp_out = true;
	assert_true(bt_stall_step(&st, &w, &x));
	assert_int_equal(x.cause, BT_STALL_NAGLE);
	assert_int_equal(x.ended_by, BT_STALL_END_UNSEEN);
	assert_int_equal(x.duration_us, 15708);

	bt_stall_reset(&st);
	w = ev(BT_KIND_WRITE, 0, 0, 6 * MSS, 6 * MSS + 262);
	w.tlp_out = true;
	assert_false(bt_stall_step(&st, &w, &x));
	w = ev(BT_KIND_WRITE, 15708000, 0, 12 * MSS, 12 * MSS + 63);
	w.tlp_out = true;
	assert_true(bt_stall_step(&st, &w, &x));
	assert_int_equal(x.ended_by, BT_STALL_END_WRITE);
}

/* the same push: a write left a 953-byte tail (Nagle); 40 us on, the next
 * write made it 2059 bytes, a full segment and more, which the pacing clock
 * (44 us ahead) held; the pacing timer sent it, and the next event came
 * 25.8 ms on. Nagle held the tail 40 us and pacing 44 us: no stall. */
static void test_tail_outgrows_nagle(void **state)
{
	struct bt_stall_state st;
	struct bt_stall x;
	struct bt_sample w;
	(void)state;

	bt_stall_reset(&st);
	assert_false(step(&st, ev(BT_KIND_WRITE, 0, 0, 5 * MSS, 5 * MSS + 953), &x));
	assert_int_equal(st.cur.cause, BT_STALL_NAGLE);
	w = ev(BT_KIND_WRITE, 40000, 0, 5 * MSS, 5 * MSS + 2059);
	w.rtt_us = 44;
	assert_false(bt_stall_step(&st, &w, &x)); /* Nagle's: 40 us, under the floor */
	assert_true(st.open);
	assert_int_equal(st.cur.cause, BT_STALL_PACING);
	assert_false(step(&st, ev(BT_KIND_ACK, 25858000, 5 * MSS, 7 * MSS, 5 * MSS + 2059), &x));
	assert_false(st.open);

	/* a pacing clock 15 ms ahead: a stall of 15 ms, ended by the pacing timer */
	bt_stall_reset(&st);
	w = ev(BT_KIND_WRITE, 0, 0, 5 * MSS, 8 * MSS);
	w.rtt_us = 15000;
	assert_false(bt_stall_step(&st, &w, &x));
	assert_true(step(&st, ev(BT_KIND_ACK, 30 * MS, 5 * MSS, 6 * MSS, 8 * MSS), &x));
	assert_int_equal(x.cause, BT_STALL_PACING);
	assert_int_equal(x.ended_by, BT_STALL_END_UNSEEN);
	assert_int_equal(x.duration_us, 15000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nagle_until_the_late_ack),
		cmocka_unit_test(test_write_read_before_the_ack),
		cmocka_unit_test(test_nagle_until_the_next_write),
		cmocka_unit_test(test_short_hold_is_no_stall),
		cmocka_unit_test(test_nodelay_is_not_nagle),
		cmocka_unit_test(test_window_causes),
		cmocka_unit_test(test_unseen_end_and_fin),
		cmocka_unit_test(test_window_full_after_an_ack),
		cmocka_unit_test(test_probe_sent_the_tail),
		cmocka_unit_test(test_tail_outgrows_nagle),
		cmocka_unit_test(test_sent_before_the_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
