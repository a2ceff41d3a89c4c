// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's help texts: --help, what a user types (the backends before the
 * options, what the tool needs after them); and --help-detect, the records'
 * fields and the detector's method, printed from bbrtrace/rules.h so that
 * the text and the detector cannot disagree.
 */
#include <stdio.h>

#include "bbrtrace/help.h"
#include "bbrtrace/rules.h"
#include "common.h"
#include "trace.h"

const char bt_help_synopsis[] =
"Usage: bbrtrace [OPTIONS]\n"
"Record each BBR rate sample as the kernel computes it, on every ACK of the\n"
"chosen flows, with BBR's max-bw filter before and after that ACK.\n"
"\n"
"Backends (--backend, default auto):\n"
"  fentry      fentry/fexit on bbr_main: every BBR flow of the host, passively\n"
"  kprobe      kprobe/kretprobe on bbr_main: the same, without BPF trampolines\n"
"  struct_ops  registers congestion control 'bbr_traced': kernel BBR through\n"
"              its kfuncs, with a tap, no kprobes. Flows opt in: --set-default,\n"
"              a route's 'congctl bbr_traced', or TCP_CONGESTION\n"
"  auto        the first that works; stderr says which, and why not the others\n"
"\n";

const char bt_help_footer[] =
"\n"
"Filters run in the kernel: other flows cost nothing. Events lost in a full\n"
"ring buffer, and ACKs whose bbr_main entry and exit probes could not be\n"
"paired (kprobe, fentry), are counted and reported, never hidden.\n"
"Needs root (or CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN) and kernel BTF.\n"
"Environment: TK_VMLINUX_BTF=FILE reads the kernel's BTF from FILE.\n"
"The detector's method and thresholds: --help-detect; all: man 8 bbrtrace.\n";

/* the records' fields, before the detector's method */
static const char fields_help[] =
"bbrtrace's records, and how --detect judges them, with the thresholds this\n"
"build applies (bbrtrace --help lists the options).\n"
"\n"
"Each sample: t_ns (CLOCK_MONOTONIC), wall_ns (CLOCK_REALTIME), cookie, saddr,\n"
"daddr, sport, dport; snd_una, snd_nxt, mss, cwnd, pacing_rate_bps; the\n"
"rate_sample's delivered, interval_us, snd_interval_us, rcv_interval_us,\n"
"rtt_us, losses, acked_sacked, prior_in_flight, is_app_limited, is_retrans,\n"
"is_ack_delayed; sample_bw_bps = delivered*mss*8/interval; BBR's bw_prev_bps\n"
"and bw_bps (max-bw filter before/after, bit/s), mode, pacing_gain and\n"
"cwnd_gain (ratios), min_rtt_us, lt_use_bw, lt_bw_bps; the sender's queue:\n"
"write_seq (write_seq - snd_nxt bytes written and not sent yet), snd_wnd (the\n"
"peer's window, bytes from snd_una) and nonagle (the kernel's: 0 Nagle on,\n"
"1 TCP_NODELAY, 2 TCP_CORK, 4 a push pending). In JSON, a \"type\":\"summary\"\n"
"record at exit gives samples, lost events and elapsed time.\n";

/* --help-detect: the records' fields and the detector's rules, with its
 * thresholds from bbrtrace/rules.h */
void bt_help_detect(FILE *f)
{
	fputs(fields_help, f);
	fprintf(f,
		"\n"
		"With --detect, a collapse is an ACK after which BBR's estimate (the max-bw\n"
		"filter, or lt_bw while lt_use_bw) is below (1 - R) times what it was. Its\n"
		"cause: %s when BBR is on its long-term rate after losses;\n"
		"%s when the sample that set the new estimate is not app-limited,\n"
		"rcv_interval_us >= %g x snd_interval_us and >= %u ms and <= %u ms (the ACK was\n"
		"held, not the data, within a delayed-ACK timer's range), and it delivered at\n"
		"most %d segments (a timer holds the last one or two; more that late, or more\n"
		"whose receive interval is >= %u ms and over the send interval by less, drained\n"
		"through a queue: %s); %s when the old maximum was over %gx what the\n"
		"flow delivered while it held (over the demand's window before the collapse,\n"
		"or before the maximum's sample if more) and the new estimate is still over\n"
		"(1 - R) x that (the maximum was a burst: a token bucket's allowance, ACKs\n"
		"compressed); %s when that sample's two intervals agree within %gx\n"
		"and the longer is %u us or more, and it carries under (1 - R) x what the\n"
		"flow delivered (the path delivered less; over that, max_expired); %s\n"
		"when the kernel flagged it a lone segment ACKed a little late\n"
		"(is_ack_delayed, at most %d delivered, under the floor); %s when an\n"
		"earlier sample is the new estimate because the\n"
		"filter's window let an old maximum expire (the evidence gives its age in\n"
		"rounds and what set it: often a burst); %s when the sample's send\n"
		"interval is over %gx its receive interval (it measured the sender's own slow\n"
		"sending); %s when both its intervals are under that noise floor, %u us\n"
		"(timing jitter, not a held ACK nor the path); %s for more segments sent\n"
		"faster than they came back (a queue drained); %s otherwise, with the\n"
		"evidence. An ACK that covers the sender's FIN is never a collapse (the\n"
		"stream is over).\n"
		"Its impact: %s when the pacing BBR now allows (the new estimate x its\n"
		"pacing gain; in PROBE_BW the gain cycle's mean, 1) is under %.2f x the flow's\n"
		"demand (its headroom, allowed/demand, is under %.2f), else %s. The\n"
		"demand is the bytes ACKed over the last %u ms (a young flow's: since its\n"
		"start, over %u ms at least), and when at least %.0f%% of those samples were\n"
		"app-limited the flow needs that much with headroom; a flow with more to send\n"
		"(a bulk flow) is throttled when the pacing allowed falls under (1 - R) x what\n"
		"it delivered, or when its path gave less (%s, %s), never by a\n"
		"%s or a sample under the noise floor (it comes back at the next). A\n"
		"throttle lasts until the pacing allowed is back above %.2f x that demand (a\n"
		"bulk flow's: (1 - R) x the demand, or all of it after %s; after\n"
		"%s, until BBR leaves its long-term rate, where the policer holds\n"
		"the flow);\n"
		"its time, and the bytes the demand wanted that the pacing held back, are\n"
		"counted. The summary gives counts by\n"
		"cause and impact, throttled_s (and throttled_us_by_cause, each throttle's\n"
		"time under the cause of the collapse that began it) and late_bytes; a\n"
		"\"type\":\"verdict\" record\n"
		"and a sentence on stderr say which collapses throttled the stream, why, and\n"
		"what to fix. No fix is proposed for throttling too small to act on: under\n"
		"%u ms and %u bytes held\n"
		"back in all, none of it still running when the trace ends, and fewer than\n"
		"%u throttles by delayed ACKs (those recur with the stream's bursts).\n"
		"Stalls: --detect also traces each write of a traced flow (the sock_send_length\n"
		"tracepoint, 6.3+, or fexit on tcp_sendmsg with the fentry backend). Data left\n"
		"unsent after a write (write_seq ahead of snd_nxt) that nothing sends for %u ms\n"
		"or more is a stall: a \"type\":\"stall\" record with its start, duration_us,\n"
		"evidence and cause: %s (a sub-MSS tail held until the data in flight is\n"
		"ACKed, Nagle on), %s, %s, %s or %s; and\n"
		"ended_by: ack, write (the application's next write took it along) or unseen (a\n"
		"timer: pacing, a tail loss probe; its duration then is a bound). The summary\n"
		"and the verdict count them (stalls_by_cause, stalled_s); when most were\n"
		"Nagle's, the verdict's fix is TCP_NODELAY on the sender (quickack nodelay\n"
		"--dport PORT, or the pusher's own option), and, when the receiver's late ACK\n"
		"ended at least as many as the next write did, also quickack on --port PORT on\n"
		"the receiver (none when they held the data for under %u ms in all). Without a\n"
		"write tap those fields are null, not 0, and the verdict says why.\n",
		bt_cause_names[BT_CAUSE_LOSS_POLICER], bt_cause_names[BT_CAUSE_DELAYED_ACK],
		BT_DELACK_RATIO, (unsigned)(BT_DELACK_FLOOR_US / TK_USEC_PER_MSEC),
		(unsigned)(BT_DELACK_CEIL_US / TK_USEC_PER_MSEC), BT_DELACK_MAX_SEGS,
		(unsigned)(BT_DELACK_FLOOR_US / TK_USEC_PER_MSEC), bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_BURST_MAX],
		BT_BURST_RATIO, bt_cause_names[BT_CAUSE_RATE_DROP], BT_AGREE_RATIO, BT_NOISE_FLOOR_US,
		bt_cause_names[BT_CAUSE_LONE_SEGMENT], BT_DELACK_MAX_SEGS, bt_cause_names[BT_CAUSE_MAX_EXPIRED],
		bt_cause_names[BT_CAUSE_SENDER_LIMITED], BT_AGREE_RATIO, bt_cause_names[BT_CAUSE_ACK_JITTER],
		BT_NOISE_FLOOR_US, bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_OTHER],
		bt_impact_names[BT_IMPACT_THROTTLING],
		BT_THROTTLE_HEADROOM, BT_THROTTLE_HEADROOM, bt_impact_names[BT_IMPACT_HARMLESS],
		BT_DEMAND_WINDOW_MS, BT_DEMAND_MIN_SPAN_MS, BT_DEMAND_APP_SHARE * 100,
		bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_LOSS_POLICER],
		bt_cause_names[BT_CAUSE_BURST_MAX], BT_THROTTLE_HEADROOM,
		bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_LOSS_POLICER],
		BT_FIX_MIN_THROTTLED_MS, BT_FIX_MIN_LATE_BYTES, BT_FIX_DELACK_RECURS,
		(unsigned)(BT_STALL_MIN_US / TK_USEC_PER_MSEC),
		bt_stall_cause_names[BT_STALL_NAGLE], bt_stall_cause_names[BT_STALL_RWND],
		bt_stall_cause_names[BT_STALL_CWND], bt_stall_cause_names[BT_STALL_PACING],
		bt_stall_cause_names[BT_STALL_OTHER], BT_STALL_FIX_MIN_MS);
}
