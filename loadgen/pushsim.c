// SPDX-License-Identifier: GPL-2.0-only
/*
 * pushsim: a live-stream push over TCP, both ends.
 *
 * The sender writes one video-like frame per tick (bitrate / fps on average,
 * a keyframe every GOP, sizes jittered and never a multiple of the MSS, so
 * each burst ends in an undersized segment) and idles until the next tick.
 * The receiver reads like the receivers that produce delayed ACKs:
 *   prompt   reads as soon as data arrives;
 *   paced    a decoder with a playout buffer: frame k is read at
 *            first-arrival + playout + k/fps, never earlier;
 *   app-ack  reads at once and answers every N bytes with a 16-byte
 *            application acknowledgement (as RTMP does), which keeps the
 *            socket in ping-pong mode.
 *
 * Every frame starts with a 24-byte header (magic, sequence, payload length,
 * flags, scheduled send time on CLOCK_MONOTONIC), so the receiver knows the
 * frame boundaries and each frame's latency (same host, same clock).
 *
 * This file holds the run: signals, the clock both ends keep, the output
 * set up and torn down around the command, and main.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "pushsim.h"

volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

uint64_t s_to_ns(double s)
{
	return (uint64_t)llround(s * TK_NSEC_PER_SEC);
}

/* sleeps until t on CLOCK_MONOTONIC (deadline first, when it comes sooner), or a signal */
void sleep_until(uint64_t t, uint64_t deadline)
{
	struct timespec ts;

	if (deadline && t > deadline)
		t = deadline;
	ts.tv_sec = (time_t)(t / TK_NSEC_PER_SEC);
	ts.tv_nsec = (long)(t % TK_NSEC_PER_SEC);
	while (!stop_flag && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int setup(struct opts *o, struct stats *st, FILE **out)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(st, 0, sizeof(*st));
	st->role = cmd_names[o->cmd];
	st->receiver = o->cmd == CMD_RECV;
	st->mode = o->cmd == CMD_SEND ? "push" : mode_names[o->mode];
	st->summary_only = o->summary_only;
	return open_output(o, st, out);
}

/* the writer and the file closed; a failed write turns success into a failure */
static int teardown(const struct opts *o, struct stats *st, FILE *out, int rc)
{
	bool failed = st->w && rec_writer_free(st->w);

	if (out && out != stdout && fclose(out))
		failed = true;
	if ((failed || st->write_failed) && rc == TK_EXIT_OK) {
		elog("%s: write failed: %s", o->output ? o->output : "stdout", strerror(errno ? errno : EIO));
		rc = TK_EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct stats st;
	FILE *out = NULL;
	int rc;

	log_init(argv[0]);
	parse_args(argc, argv, &o);
	rc = setup(&o, &st, &out);
	if (rc == TK_EXIT_OK) {
		rc = o.cmd == CMD_SEND ? run_sender(&o, &st) : run_receiver(&o, &st);
		if (st.t0_ns)
			emit_summary(&st, tk_mono_ns());
	}
	return teardown(&o, &st, out, rc);
}
