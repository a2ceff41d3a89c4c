// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace: every BBR rate sample, per ACK, with the max-bw filter before and
 * after it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bbrtrace/backend.h"
#include "bbrtrace/defaultcc.h"
#include "bbrtrace/guard.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/peers.h"
#include "bbrtrace/rules.h"
#include "bbrtrace/sample.h"
#include "bbrtrace/verdict.h"
#include "bpfutil.h"
#include "chooser.h"
#include "cli.h"
#include "common.h"
#include "log.h"
#include "netns.h"
#include "opt.h"
#include "prom.h"
#include "record.h"
#include "rtscan.h"

#define MAX_DEFAULT_NS 16
/* with --prometheus, a daemon's window verdict once a minute: as often as
 * the window (BT_WINDOW_MIN) moves */
#define BT_VERDICT_EVERY_S 60
/* /metrics names this many peers, the worst first, and sums the others: the
 * series stay bounded however many peers the host has */
#define BT_METRICS_PEERS 10
#define BT_METRICS_PEERS_MAX 1000 /* --metrics-peers' range */

/* what the output holds (--records): every ACK's sample and the detector's
 * records; the detector's records only (collapses, stalls, the summary and
 * the verdict); or nothing (the verdict on stderr, /metrics) */
enum bt_records { BT_REC_SAMPLES = 0, BT_REC_EVENTS, BT_REC_NONE };
static const char *const bt_records_names[] = { "samples", "events", "none", NULL };

struct env {
	int backend;              /* enum bt_backend_kind */
	int records;              /* enum bt_records */
	bool records_set;
	struct bt_config cfg;
	enum rec_format format;
	bool format_set;
	const char *output;
	double duration_s;        /* 0: until Ctrl-C */
	uint32_t ringbuf_mb;
	uint32_t max_flows;
	bool no_tap;
	bool set_default;
	const char *default_ns[MAX_DEFAULT_NS];
	int n_default_ns;
	bool probe;
	bool cleanup;
	bool stats;
	bool detect;
	bool check;
	double collapse_ratio;
	const char *prometheus;
	double verdict_every_s;   /* a window verdict this often; 0: never */
	bool verdict_every_set;
	uint32_t metrics_peers;   /* peers named on /metrics, the worst first */
};

/* one tracing run: what it opened, and what it counted */
struct run {
	struct rec_writer *w;
	int records;              /* enum bt_records */
	enum rec_format format;
	FILE *out;
	uint64_t samples;
	uint64_t writes;          /* write events (the write tap, with --detect) */
	uint64_t t0_ns;
	int64_t mono_to_wall_ns;
	bool write_failed;
	int write_errno;          /* why the first failed write failed */
	const char *out_name;     /* the output, for messages */
	/* --detect: the collapse detector; lock guards it against the /metrics thread */
	struct bt_detect *det;
	pthread_mutex_t lock;
	bool locked;              /* the trace loop holds lock until its poll returns */
	struct bt_backend *b;
	struct bt_defcc *defcc;
	struct prom_server *prom;
	int stats_fd;
	uint32_t metrics_peers;   /* --metrics-peers */
};

static volatile sig_atomic_t exiting, verdict_asked;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* SIGUSR1: the window verdict now */
static void on_usr1(int sig)
{
	(void)sig;
	verdict_asked = 1;
}

/* --- the command line ----------------------------------------------------------------- */

static const char synopsis[] =
"Usage: bbrtrace [OPTIONS]\n"
"Record each BBR rate sample as the kernel computes it, on every ACK of the\n"
"chosen flows, with BBR's max-bw filter before and after that ACK.\n"
"\n"
"Backends (--backend, default auto):\n"
"  fentry      fentry/fexit on bbr_main: every BBR flow of the host, passively\n"
"  kprobe      kprobe/kretprobe on bbr_main: the same, for kernels without BPF\n"
"              trampolines\n"
"  struct_ops  registers congestion control 'bbr_traced': kernel BBR called\n"
"              through its kfuncs, with a tap. Works without kprobes. Flows opt\n"
"              in with setsockopt(TCP_CONGESTION, \"bbr_traced\"), a route's\n"
"              'congctl bbr_traced', or the default-CC sysctl (--set-default)\n"
"  auto        the first of fentry, kprobe, struct_ops that works; one line on\n"
"              stderr says which and why the others were refused\n"
"\n";

static const char footer[] =
"\n"
"Filters run in the kernel: other flows cost nothing.\n"
"\n"
"Each sample: t_ns (CLOCK_MONOTONIC), wall_ns (CLOCK_REALTIME), cookie, saddr,\n"
"daddr, sport, dport; snd_una, snd_nxt, mss, cwnd, pacing_rate_bps; the\n"
"rate_sample's delivered, interval_us, snd_interval_us, rcv_interval_us, rtt_us,\n"
"losses, acked_sacked, prior_in_flight, is_app_limited, is_retrans,\n"
"is_ack_delayed; sample_bw_bps = delivered*mss*8/interval; BBR's bw_prev_bps\n"
"and bw_bps (max-bw filter before/after, bit/s), mode, pacing_gain and\n"
"cwnd_gain (ratios), min_rtt_us, lt_use_bw, lt_bw_bps; the sender's queue:\n"
"write_seq (write_seq - snd_nxt bytes written and not sent yet), snd_wnd (the\n"
"peer's window, bytes from snd_una) and nonagle (the kernel's: 0 Nagle on,\n"
"1 TCP_NODELAY, 2 TCP_CORK, 4 a push pending). In JSON, a\n"
"\"type\":\"summary\" record at exit gives samples, lost events and elapsed time.\n"
"Events lost in a full ring buffer are counted and reported, never hidden.\n";

/* the detector's rules, with its thresholds from bbrtrace/rules.h */
static void detect_help(FILE *f)
{
	fprintf(f,
		"\n"
		"With --detect, a collapse is an ACK after which BBR's estimate (the max-bw\n"
		"filter, or lt_bw while lt_use_bw) is below (1 - R) times what it was. Its\n"
		"cause: %s when BBR is on its long-term rate after losses;\n"
		"%s when the sample that set the new estimate is not app-limited,\n"
		"rcv_interval_us >= %g x snd_interval_us and >= %u ms and <= %u ms (the ACK was\n"
		"held, not the data, within a delayed-ACK timer's range), and it delivered at\n"
		"most %d segments (a timer holds the last one or two; more that late, or\n"
		"more whose receive interval is >= %u ms and over the send interval by less,\n"
		"drained through a queue: %s); %s when that sample's two\n"
		"intervals agree within %gx (the path delivered less); %s when the\n"
		"kernel flagged it a lone segment ACKed a little late (is_ack_delayed, at\n"
		"most %d delivered, under the floor); %s when an earlier sample is\n"
		"the new estimate because the filter's window let an old maximum expire\n"
		"(the evidence gives its age in rounds and what set it: often a burst);\n"
		"%s when the sample's send interval is over %gx its receive\n"
		"interval (it measured the sender's own slow sending); %s\n"
		"when its receive interval is over %gx its send interval but under %u us\n"
		"(the ACK came microseconds late: timing jitter, not a held ACK); %s\n"
		"otherwise, with the evidence. An ACK that covers the sender's FIN is never a\n"
		"collapse (the stream is over).\n"
		"Its impact: %s when the pacing BBR now allows (the new estimate x its\n"
		"pacing gain; in PROBE_BW the gain cycle's mean, 1) is under %.2f x the flow's\n"
		"demand (its headroom, allowed/demand, is under %.2f), else %s. The demand is\n"
		"the bytes ACKed over the last %u ms (a young flow's: since its start, over\n"
		"%u ms at least), and when at least %.0f%% of those samples were app-limited the\n"
		"flow needs that much with headroom; a flow with more to send (a bulk flow) is\n"
		"throttled when the pacing allowed falls under what it delivered, or when its\n"
		"path gave less (%s, %s). A throttle\n"
		"lasts until the pacing allowed is back above %.2f x that demand (a bulk\n"
		"flow's: the demand);\n"
		"its time, and the bytes the demand wanted that the pacing held back, are\n"
		"counted. The summary gives counts by cause and impact, throttled_s and\n"
		"late_bytes; a \"type\":\"verdict\" record and a sentence on stderr say\n"
		"which collapses throttled the stream, why, and what to fix. No fix is\n"
		"proposed for throttling too small to act on: under %u ms and %u bytes held\n"
		"back in all, none of it still running when the trace ends, and fewer than\n"
		"%u throttles by delayed ACKs (those recur with the stream's bursts).\n"
		"Stalls: --detect also traces each write of a traced flow (the\n"
		"sock_send_length tracepoint, 6.3+, or fexit on tcp_sendmsg with the fentry\n"
		"backend). Data left unsent after a write (write_seq ahead of snd_nxt) that\n"
		"nothing sends for %u ms or more is a stall: a \"type\":\"stall\" record with\n"
		"its start, duration_us, evidence and cause: %s (a sub-MSS tail held until\n"
		"the data in flight is ACKed, Nagle on), %s, %s,\n"
		"%s or %s; and ended_by: ack, write (the application's next\n"
		"write took it along) or unseen (a timer: pacing, a tail loss probe; its\n"
		"duration then is a bound). The summary and the verdict count them\n"
		"(stalls_by_cause, stalled_s); when most were Nagle's, the verdict's fix is\n"
		"TCP_NODELAY on the sender or quickack on the receiver (none when they held\n"
		"the data for under %u ms in all). Without a write tap those fields are\n"
		"null, not 0, and the verdict says why.\n"
		"\n"
		"Needs root (or CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN) and kernel BTF.\n"
		"Environment: TK_VMLINUX_BTF=FILE reads the kernel's BTF from FILE.\n",
		bt_cause_names[BT_CAUSE_LOSS_POLICER], bt_cause_names[BT_CAUSE_DELAYED_ACK],
		BT_DELACK_RATIO, BT_DELACK_FLOOR_US / 1000, BT_DELACK_CEIL_US / 1000, BT_DELACK_MAX_SEGS,
		BT_DELACK_FLOOR_US / 1000, bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_RATE_DROP], BT_AGREE_RATIO,
		bt_cause_names[BT_CAUSE_LONE_SEGMENT], BT_DELACK_MAX_SEGS, bt_cause_names[BT_CAUSE_MAX_EXPIRED],
		bt_cause_names[BT_CAUSE_SENDER_LIMITED], BT_AGREE_RATIO, bt_cause_names[BT_CAUSE_ACK_JITTER],
		BT_AGREE_RATIO, BT_JITTER_MAX_US, bt_cause_names[BT_CAUSE_OTHER],
		bt_impact_names[BT_IMPACT_THROTTLING],
		BT_THROTTLE_HEADROOM, BT_THROTTLE_HEADROOM, bt_impact_names[BT_IMPACT_HARMLESS],
		BT_DEMAND_WINDOW_MS, BT_DEMAND_MIN_SPAN_MS, BT_DEMAND_APP_SHARE * 100,
		bt_cause_names[BT_CAUSE_RATE_DROP], bt_cause_names[BT_CAUSE_LOSS_POLICER], BT_THROTTLE_HEADROOM,
		BT_FIX_MIN_THROTTLED_MS, BT_FIX_MIN_LATE_BYTES, BT_FIX_DELACK_RECURS, BT_STALL_MIN_US / 1000,
		bt_stall_cause_names[BT_STALL_NAGLE], bt_stall_cause_names[BT_STALL_RWND],
		bt_stall_cause_names[BT_STALL_CWND], bt_stall_cause_names[BT_STALL_PACING],
		bt_stall_cause_names[BT_STALL_OTHER], BT_STALL_FIX_MIN_MS);
}

static int set_addr(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;
	bool src = !strcmp(opt, "--saddr");
	struct cli_addr addr;

	if (cli_parse_addr(opt, val, &addr))
		return -1;
	cli_addr_to_v6mapped(&addr, src ? env->cfg.filter.saddr : env->cfg.filter.daddr);
	*(src ? &env->cfg.filter.has_saddr : &env->cfg.filter.has_daddr) = true;
	return 0;
}

static int set_default_in(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;
	char msg[256];

	if (netns_check_name(val, msg, sizeof(msg))) {
		elog("%s: %s", opt, msg);
		return -1;
	}
	if (env->n_default_ns >= MAX_DEFAULT_NS) {
		elog("%s: at most %d namespaces", opt, MAX_DEFAULT_NS);
		return -1;
	}
	env->default_ns[env->n_default_ns++] = val;
	return 0;
}

static int set_ringbuf(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;

	if (cli_parse_u32(opt, val, 1, 1024, &env->ringbuf_mb))
		return -1;
	if (env->ringbuf_mb & (env->ringbuf_mb - 1)) {
		elog("%s: %u is not a power of two", opt, env->ringbuf_mb);
		return -1;
	}
	return 0;
}

static int set_records(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;

	for (int i = 0; bt_records_names[i]; i++) {
		if (!strcmp(val, bt_records_names[i])) {
			env->records = i;
			env->records_set = true;
			return 0;
		}
	}
	elog("%s: '%s' is not one of samples|events|none", opt, val);
	return -1;
}

static int set_verdict_every(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;

	if (cli_parse_double(opt, val, 0, 86400, &env->verdict_every_s))
		return -1;
	env->verdict_every_set = true;
	return 0;
}

static int set_prometheus(void *cfg, const char *opt, const char *val)
{
	struct env *env = cfg;
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (cli_parse_endpoint(opt, val, &ss, &sslen))
		return -1;
	env->prometheus = val;
	env->detect = true;
	return 0;
}

#define TK_OPT_CFG struct env
static const struct opt options[] = {
	OPT_E_CHOICE("backend", 'b', "NAME", backend, bt_backend_names, "auto|fentry|kprobe|struct_ops"),
	OPT_E_CALL("saddr", 0, "ADDR", set_addr, "only flows with this local address (IPv4 or IPv6)"),
	OPT_E_CALL("daddr", 0, "ADDR", set_addr, "only flows with this remote address"),
	OPT_E_PORT("sport", 0, "PORT", cfg.filter.sport, "only flows with this local port"),
	OPT_E_PORT("dport", 0, "PORT", cfg.filter.dport, "only flows with this remote port"),
	OPT_E_U64("cookie", 0, "N", cfg.filter.cookie, 1, (double)UINT64_MAX,
		  "only the socket with this cookie (ss -e shows it)"),
	OPT_E_FORMAT(format, format_set),
	OPT_E_CALL("records", 0, "WHAT", set_records,
		   "samples: every ACK's sample, and --detect's records\n"
		   "(the default); events: --detect's records only\n"
		   "(collapses, stalls, the summary, the verdict; the\n"
		   "default with --prometheus); none: no record"),
	OPT_E_OUTPUT(output, "write records to FILE instead of stdout"),
	OPT_E_DURATION(duration_s, "stop after SECONDS (default: until Ctrl-C)"),
	OPT_E_FLAG("set-default", 0, set_default, "struct_ops: make bbr_traced the default congestion\n"
						  "control of this network namespace while tracing"),
	OPT_E_CALL("set-default-in", 0, "NS", set_default_in,
		   "the same in network namespace NS (repeatable)\n"
		   "The old value comes back at exit, even after SIGKILL."),
	OPT_E_CALL("ringbuf-mb", 0, "N", set_ringbuf, "ring buffer size in MiB, a power of two (default 8)"),
	OPT_E_FLAG("stats", 0, stats, "turn on BPF run-time statistics while tracing and\n"
				      "print each program's runs and ns/run at exit"),
	OPT_E_FLAG("no-tap", 0, no_tap, "struct_ops: run bbr_traced as plain BBR, without\n"
					"the tap (the benchmark's reference)"),
	OPT_E_FLAG("probe", 0, probe, "say, for each backend, whether its programs load\n"
				      "(pass the verifier) and attach here, then exit"),
	OPT_E_FLAG("cleanup", 0, cleanup, "remove a stale bbr_traced left registered by an older\n"
					  "run, then exit"),
	OPT_E_FLAG("detect", 0, detect, "find each collapse of the bandwidth estimate (a drop by\n"
					"at least --collapse-ratio on one ACK), write it as a\n"
					"\"type\":\"collapse\" record with its cause and its\n"
					"evidence, and end with a verdict (default: off)"),
	OPT_E_DOUBLE("collapse-ratio", 0, "R", collapse_ratio, 0.01, 0.99,
		     "the drop that counts as a collapse, 0.01..0.99\n"
		     "(default " TK_STR(BT_COLLAPSE_RATIO_DEFAULT) ": the estimate fell by that\n"
		     "fraction or more)"),
	OPT_E_U32("max-flows", 0, "N", max_flows, 16, 4194304,
		  "--detect: flows tracked at once (default " TK_STR(BT_DETECT_FLOWS) "), about\n"
		  "1.3 KiB each, 5 KiB for a busy one; a flow leaves when\n"
		  "its socket closes, none is evicted: past N a new flow\n"
		  "is counted untracked and not judged"),
	OPT_E_FLAG("check-detector", 0, check, "--detect: find each culprit both ways (the filter's\n"
					       "values, and the flow's last 2048 samples) and count\n"
					       "the answers that differ (a self-test; costs memory)"),
	OPT_E_CALL("prometheus", 0, "ADDR:PORT", set_prometheus,
		   "serve /metrics in Prometheus text format while\n"
		   "tracing: samples, collapses and stalls by cause, and\n"
		   "the worst peers over the last " TK_STR(BT_WINDOW_MIN) " minutes; and\n"
		   "/verdict, the window verdict as JSON (implies --detect)"),
	OPT_E_CALL("verdict-every", 0, "SECONDS", set_verdict_every,
		   "--detect: write the verdict over the last " TK_STR(BT_WINDOW_MIN) " minutes\n"
		   "(a \"window_verdict\" record, and a line on stderr) this\n"
		   "often, 0 for never (default 60 with --prometheus,\n"
		   "else 0); SIGUSR1 asks for one at once"),
	OPT_E_U32("metrics-peers", 0, "K", metrics_peers, 1, BT_METRICS_PEERS_MAX,
		  "--prometheus: the peers named on /metrics, the worst\n"
		  "over the window first (default " TK_STR(BT_METRICS_PEERS) "); the others are\n"
		  "one series, peer=\"other\""),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP,
				  TK_EXIT_NONETNS, -1 };
static const struct opt_cli cli = { synopsis, options, footer, detect_help, exit_codes };

/* what the options say together */
static void check_args(struct env *env)
{
	if ((env->set_default || env->n_default_ns) && env->backend != BT_STRUCT_OPS &&
	    env->backend != BT_AUTO)
		cli_usage_die("--set-default needs the struct_ops backend");
	if (env->no_tap && env->backend != BT_STRUCT_OPS)
		cli_usage_die("--no-tap needs --backend struct_ops");
	if (env->check)
		env->detect = true;
	if (env->prometheus && !env->records_set)
		env->records = BT_REC_EVENTS;
	if (env->prometheus && !env->verdict_every_set)
		env->verdict_every_s = BT_VERDICT_EVERY_S;
	if (env->verdict_every_s > 0 && !env->detect)
		cli_usage_die("--verdict-every: the verdict needs --detect");
	if (env->records == BT_REC_EVENTS && !env->detect)
		cli_usage_die("--records events: only --detect (or --prometheus) makes events; without "
			      "it the records are the samples");
	env->cfg.ringbuf_bytes = env->ringbuf_mb << 20;
	env->cfg.wakeup_bytes = env->cfg.ringbuf_bytes / 32;
	env->cfg.tap = !env->no_tap;
	env->cfg.writes = env->detect && env->cfg.tap;
	env->cfg.closes = env->detect && env->cfg.tap;
}

/*
 * Each --set-default-in namespace exists: checked before anything is loaded,
 * so that a misspelt name costs nothing. Exits TK_EXIT_NONETNS when one does
 * not; a namespace that cannot be opened for another reason (no privilege)
 * is left to the privilege check and to the switch itself.
 */
static void check_namespaces(const struct env *env)
{
	for (int i = 0; i < env->n_default_ns; i++) {
		char msg[512];
		int fd = netns_open(env->default_ns[i], msg, sizeof(msg));

		if (fd >= 0)
			close(fd);
		if (fd != -ENOENT)
			continue;
		elog("--set-default-in: %s: create it (ip netns add %s) or name one that `ip netns list` shows",
		     msg, env->default_ns[i]);
		exit(TK_EXIT_NONETNS);
	}
}

static void parse_args(int argc, char **argv, struct env *env)
{
	int first = opt_parse(&cli, argc, argv, env);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	check_args(env);
	check_namespaces(env);
}

static int64_t mono_to_wall_offset(void)
{
	struct timespec m1, r, m2;
	int64_t best = 0, best_gap = INT64_MAX;

	/* the realtime reading closest to the middle of two monotonic ones */
	for (int i = 0; i < 5; i++) {
		clock_gettime(CLOCK_MONOTONIC, &m1);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m2);
		int64_t a = m1.tv_sec * 1000000000LL + m1.tv_nsec;
		int64_t b = m2.tv_sec * 1000000000LL + m2.tv_nsec;
		int64_t rt = r.tv_sec * 1000000000LL + r.tv_nsec;

		if (b - a < best_gap) {
			best_gap = b - a;
			best = rt - (a + (b - a) / 2);
		}
	}
	return best;
}

static void write_failed(struct run *r)
{
	if (!r->write_failed)
		r->write_errno = errno;
	r->write_failed = true;
}

/*
 * The detector's lock, for the events of one poll: taken at the first and
 * let go when the poll returns (detect_unlock), not once per event; /metrics
 * and /verdict wait one poll's events at most.
 */
static void detect_lock(struct run *r)
{
	if (!r->locked) {
		pthread_mutex_lock(&r->lock);
		r->locked = true;
	}
}

static void detect_unlock(struct run *r)
{
	if (r->locked) {
		r->locked = false;
		pthread_mutex_unlock(&r->lock);
	}
}

/* --detect: the event through the detector, and the records it ends in */
static void detect_event(struct run *r, const struct bt_sample *s)
{
	struct bt_collapse c;
	struct bt_stall x;
	bool hit = false, stalled;

	detect_lock(r);
	if (s->kind == BT_KIND_WRITE)
		bt_detect_write(r->det, s);
	else
		hit = bt_detect_feed(r->det, s, &c);
	stalled = bt_detect_take_stall(r->det, &x);
	if (r->records == BT_REC_NONE)
		return;
	if (stalled && bt_stall_write(r->w, &x, r->t0_ns))
		write_failed(r);
	if (hit && bt_collapse_write(r->w, &c, r->t0_ns))
		write_failed(r);
}

static int on_event(void *ctx, const struct bt_event *e)
{
	struct run *r = ctx;
	struct bt_sample s;

	bt_sample_decode(&s, e, r->mono_to_wall_ns);
	if (s.kind == BT_KIND_CLOSE) {
		if (r->det) {
			detect_lock(r);
			bt_detect_close(r->det, &s);
		}
		return 0;
	}
	if (s.kind == BT_KIND_ACK) {
		if (r->records == BT_REC_SAMPLES && bt_sample_write(r->w, &s, r->t0_ns))
			write_failed(r);
		r->samples++;
	} else {
		r->writes++;
	}
	if (r->det)
		detect_event(r, &s);
	return 0;
}

/*
 * The metric names, in Prometheus's base units (bytes, seconds): BBR's
 * estimate is in bit/s, so the gauge is it divided by 8
 */
#define METRIC_SAMPLES "bbrtrace_samples_total"
#define METRIC_LOST "bbrtrace_lost_events_total"
#define METRIC_UNTRACKED "bbrtrace_untracked_samples_total"
#define METRIC_FLOWS "bbrtrace_flows"
#define METRIC_COLLAPSES "bbrtrace_collapses_total"
#define METRIC_PEER_ACTIVE "bbrtrace_peer_active_seconds"
#define METRIC_PEER_HELD "bbrtrace_peer_held_seconds"
#define METRIC_PEER_THROTTLED "bbrtrace_peer_throttled_seconds"
#define METRIC_PEER_DELACK "bbrtrace_peer_delayed_ack_throttles"
#define METRIC_PEER_NAGLE "bbrtrace_peer_nagle_stalled_seconds"
#define METRIC_THROTTLING "bbrtrace_throttling_collapses_total"
#define METRIC_THROTTLED "bbrtrace_throttled_seconds_total"
#define METRIC_LATE "bbrtrace_late_bytes_total"
#define METRIC_WRITES "bbrtrace_writes_total"
#define METRIC_LOST_WRITES "bbrtrace_lost_writes_total"
#define METRIC_STALLS "bbrtrace_stalls_total"
#define METRIC_STALLED "bbrtrace_stalled_seconds_total"

/* the worst peers over the window, and the others summed: /metrics' peer
 * families, built under the detector's lock and written after it */
struct peers_page {
	unsigned int n, k;            /* peers ranked; room for k, and "other" after them */
	char (*addr)[48];
	struct bt_harm *h;
};

struct peers_rank {
	const struct bt_peers *p;
	uint64_t now_ns;
	unsigned int k;
	struct peers_page *pg;
};

/* one peer into the page: the K worst by time held back (then by active
 * time, so that quiet busy peers come before idle ones), the rest in "other" */
static void rank_peer(const struct bt_peer *peer, void *ctx)
{
	struct peers_rank *c = ctx;
	struct peers_page *pg = c->pg;
	struct bt_harm h;
	unsigned int i;

	bt_peers_window(c->p, peer, c->now_ns, &h);
	for (i = 0; i < pg->n; i++) {
		uint64_t a = bt_harm_ns(&pg->h[i]), b = bt_harm_ns(&h);

		if (b > a || (b == a && h.active_ns > pg->h[i].active_ns))
			break;
	}
	if (i == c->k)
		return;
	if (pg->n == c->k)
		pg->n--;
	memmove(&pg->h[i + 1], &pg->h[i], (pg->n - i) * sizeof(pg->h[0]));
	memmove(&pg->addr[i + 1], &pg->addr[i], (pg->n - i) * sizeof(pg->addr[0]));
	pg->h[i] = h;
	cli_fmt_v6mapped(peer->addr, pg->addr[i], sizeof(pg->addr[i]));
	pg->n++;
}

/* the window's K worst peers, and "other": the host's window less theirs */
static void peers_page_build(struct peers_page *pg, const struct run *r, uint64_t now_ns)
{
	const struct bt_peers *p = bt_detect_peers(r->det);
	struct peers_rank c = { p, now_ns, r->metrics_peers, pg };
	struct bt_harm *o;

	pg->n = 0;
	pg->k = r->metrics_peers;
	o = &pg->h[pg->k];
	memset(pg->h, 0, (pg->k + 1) * sizeof(*pg->h));
	bt_peers_each(p, rank_peer, &c);
	bt_peers_window(p, NULL, now_ns, o);
	for (unsigned int i = 0; i < pg->n; i++) {
		o->active_ns -= pg->h[i].active_ns;
		o->throttled_ns -= pg->h[i].throttled_ns;
		o->throttling[BT_CAUSE_DELAYED_ACK] -= pg->h[i].throttling[BT_CAUSE_DELAYED_ACK];
		for (int k = 0; k < BT_NSTALL_CAUSES; k++)
			o->stalled_ns[k] -= pg->h[i].stalled_ns[k];
	}
	snprintf(pg->addr[pg->k], sizeof(pg->addr[0]), "other");
}

/* the peer families: per peer, over the window, gauges */
static void render_peers(struct prom_buf *pb, const struct run *r, const struct peers_page *pg)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ METRIC_PEER_ACTIVE, "time the peer's flows were active, summed over them, in the last "
				      TK_STR(BT_WINDOW_MIN) " minutes" },
		{ METRIC_PEER_HELD, "time the peer's streams were held back (throttled, or stalled by "
				    "Nagle or its window), summed over its flows, in the window" },
		{ METRIC_PEER_THROTTLED, "time the peer's flows were throttled by collapses, in the window" },
		{ METRIC_PEER_DELACK, "collapses caused by the peer's delayed ACKs that throttled a flow, "
				      "in the window" },
		{ METRIC_PEER_NAGLE, "time the peer's streams were held by Nagle's algorithm, in the window" },
	};

	(void)r;
	for (unsigned int f = 0; f < ARRAY_SIZE(fam); f++) {
		prom_family(pb, fam[f].name, PROM_GAUGE, fam[f].help);
		for (unsigned int i = 0; i <= pg->n; i++) {
			unsigned int k = i < pg->n ? i : pg->k;
			const struct bt_harm *h = &pg->h[k];
			struct prom_label l = { "peer", pg->addr[k] };
			double v[] = { (double)h->active_ns / 1e9, (double)bt_harm_ns(h) / 1e9,
				       (double)h->throttled_ns / 1e9, (double)h->throttling[BT_CAUSE_DELAYED_ACK],
				       (double)h->stalled_ns[BT_STALL_NAGLE] / 1e9 };

			prom_sample(pb, fam[f].name, &l, 1, v[f]);
		}
	}
}

/* the /metrics page (--prometheus), on the server's thread */
static int render_metrics(struct prom_buf *pb, void *ctx)
{
	struct run *r = ctx;
	struct bt_detect_stats st;
	struct peers_page peers_page = { 0 };

	peers_page.h = calloc(r->metrics_peers + 1, sizeof(*peers_page.h));
	peers_page.addr = calloc(r->metrics_peers + 1, sizeof(*peers_page.addr));
	if (!peers_page.h || !peers_page.addr) {
		free(peers_page.h);
		free(peers_page.addr);
		return -1;
	}
	pthread_mutex_lock(&r->lock);
	bt_detect_stats(r->det, &st);
	peers_page_build(&peers_page, r, tk_mono_ns());
	pthread_mutex_unlock(&r->lock);

	prom_family(pb, METRIC_SAMPLES, PROM_COUNTER, "BBR rate samples traced");
	prom_sample_u64(pb, METRIC_SAMPLES, NULL, 0, st.samples);
	prom_family(pb, METRIC_LOST, PROM_COUNTER,
		    "samples lost because the ring buffer was full");
	prom_sample_u64(pb, METRIC_LOST, NULL, 0,
			bt_backend_counter(r->b, BT_CNT_LOST));
	prom_family(pb, METRIC_UNTRACKED, PROM_COUNTER,
		    "samples of flows the detector could not track (at --max-flows, or out of memory): "
		    "not judged");
	prom_sample_u64(pb, METRIC_UNTRACKED, NULL, 0, st.samples_untracked);
	prom_family(pb, METRIC_FLOWS, PROM_GAUGE, "flows the detector tracks now (their sockets are open)");
	prom_sample_u64(pb, METRIC_FLOWS, NULL, 0, st.flows_live);
	prom_family(pb, METRIC_COLLAPSES, PROM_COUNTER,
		    "collapses of BBR's bandwidth estimate, by cause");
	for (int i = 0; i < BT_NCAUSES; i++) {
		struct prom_label l = { "cause", bt_cause_names[i] };

		prom_sample_u64(pb, METRIC_COLLAPSES, &l, 1, st.collapses[i]);
	}
	prom_family(pb, METRIC_THROTTLING, PROM_COUNTER,
		    "collapses that throttled their flow (the pacing allowed under 1.25 x its demand), by cause");
	for (int i = 0; i < BT_NCAUSES; i++) {
		struct prom_label l = { "cause", bt_cause_names[i] };

		prom_sample_u64(pb, METRIC_THROTTLING, &l, 1, st.throttling[i]);
	}
	prom_family(pb, METRIC_THROTTLED, PROM_COUNTER, "time flows spent throttled, summed over flows");
	prom_sample(pb, METRIC_THROTTLED, NULL, 0, (double)st.throttled_ns / 1e9);
	prom_family(pb, METRIC_LATE, PROM_COUNTER,
		    "bytes the throttled flows' demand wanted that the pacing held back");
	prom_sample(pb, METRIC_LATE, NULL, 0, st.late_bytes);
	prom_family(pb, METRIC_WRITES, PROM_COUNTER, "writes of traced flows seen (the write tap, for stalls)");
	prom_sample_u64(pb, METRIC_WRITES, NULL, 0, st.writes);
	prom_family(pb, METRIC_LOST_WRITES, PROM_COUNTER,
		    "writes' events lost because the ring buffer was full");
	prom_sample_u64(pb, METRIC_LOST_WRITES, NULL, 0, bt_backend_counter(r->b, BT_CNT_LOST_WRITES));
	prom_family(pb, METRIC_STALLS, PROM_COUNTER,
		    "stalls of the sender: data written and not sent for 10 ms or more, by cause");
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		struct prom_label l = { "cause", bt_stall_cause_names[i] };

		prom_sample_u64(pb, METRIC_STALLS, &l, 1, st.stalls[i]);
	}
	prom_family(pb, METRIC_STALLED, PROM_COUNTER, "time senders spent stalled, by cause");
	for (int i = 0; i < BT_NSTALL_CAUSES; i++) {
		struct prom_label l = { "cause", bt_stall_cause_names[i] };

		prom_sample(pb, METRIC_STALLED, &l, 1, (double)st.stalled_ns[i] / 1e9);
	}
	render_peers(pb, r, &peers_page);
	free(peers_page.h);
	free(peers_page.addr);
	return pb->failed ? -1 : 0;
}

/* the window verdict (bbrtrace/verdict.h), built under the detector's lock */
static void window_verdict(struct run *r, struct bt_verdict *v, uint64_t now_ns)
{
	pthread_mutex_lock(&r->lock);
	bt_detect_expire(r->det, now_ns);
	bt_verdict_build_window(v, r->det, now_ns);
	pthread_mutex_unlock(&r->lock);
}

/* /verdict: the window verdict record, as JSON */
static int render_verdict(struct prom_buf *pb, void *ctx)
{
	struct run *r = ctx;
	struct bt_verdict *v = malloc(sizeof(*v));
	struct rec_writer *w;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc = -1;

	if (!v)
		return -1;
	window_verdict(r, v, tk_mono_ns());
	f = open_memstream(&text, &len);
	w = f ? rec_writer_new(REC_JSON, f) : NULL;
	if (w) {
		rc = bt_verdict_write(w, v);
		rc = rec_writer_free(w) || rc ? -1 : 0;
	}
	if (f && fclose(f))
		rc = -1;
	if (!rc)
		rc = prom_buf_append_raw(pb, text);
	free(text);
	free(v);
	return rc;
}

/* the window verdict now: a record, and a line on stderr */
static void write_window_verdict(struct run *r, uint64_t now_ns)
{
	struct bt_verdict *v = malloc(sizeof(*v));

	if (!v)
		return;
	window_verdict(r, v, now_ns);
	if (r->records != BT_REC_NONE && r->format != REC_TABLE && bt_verdict_write(r->w, v))
		write_failed(r);
	fprintf(stderr, "%s: verdict over the last %u min: %s\n", log_prog(), BT_WINDOW_MIN, v->text);
	free(v);
}

/* one line per backend: does it load (verifier) and attach here? */
static int probe_backends(const struct env *env)
{
	for (int k = BT_FENTRY; k <= BT_STRUCT_OPS; k++) {
		struct bt_config cfg = env->cfg;
		struct bt_backend *b;
		char why[512], load[600], attach[600];
		int code;

		cfg.load_only = true;
		b = bt_backend_open(k, &cfg, NULL, NULL, why, sizeof(why), &code);
		if (b) {
			int fds[16];
			const char *names[16];
			int n = bt_backend_progs(b, fds, names, 16);

			snprintf(load, sizeof(load), "ok (%d programs passed the verifier)", n);
			bt_backend_close(b);
			cfg.load_only = false;
			b = bt_backend_open(k, &cfg, NULL, NULL, why, sizeof(why), &code);
			if (b) {
				snprintf(attach, sizeof(attach), "ok");
				bt_backend_close(b);
			} else {
				snprintf(attach, sizeof(attach), "no: %s", why);
			}
		} else {
			snprintf(load, sizeof(load), "no: %s", why);
			snprintf(attach, sizeof(attach), "-");
		}
		printf("%-10s load: %s; attach: %s\n", bt_backend_names[k], load, attach);
	}
	return TK_EXIT_OK;
}

struct open_ctx {
	const struct env *env;
	struct run *r;
	struct bt_backend *b;
};

/* the chooser's way to open one of bbrtrace's backends */
static int open_one(int kind, void *p, char *why, size_t len)
{
	struct open_ctx *o = p;
	int code = TK_EXIT_OK;

	o->b = bt_backend_open((enum bt_backend_kind)kind, &o->env->cfg, on_event, o->r, why, len,
			       &code);
	return o->b ? TK_EXIT_OK : code;
}

static struct bt_backend *open_backend(const struct env *env, struct run *r, int *code)
{
	static const int order[] = { BT_FENTRY, BT_KPROBE, BT_STRUCT_OPS };
	struct open_ctx o = { env, r, NULL };
	const struct tk_chooser ch = { bt_backend_names, order, ARRAY_SIZE(order), open_one, &o };
	struct tk_choice c;

	tk_choose(&ch, env->backend, &c);
	if (c.kind < 0)
		elog("%s", c.line);
	else
		ilog("%s", c.line);
	*code = c.code;
	return o.b;
}

/* bpf_stats per program: one record in the JSON output, and on stderr */
#define STATS_FIELDS(X)                                                                 \
	X("program", REC_STR, 0, REC_COL("program", -18, 0, 0), rv_str(name))            \
	X("run_cnt", REC_U64, 0, REC_COL("runs", 10, 0, 0), rv_u64(cnt))                 \
	X("run_time_ns", REC_U64, 0, REC_COL("run time ns", 14, 0, 0), rv_u64(ns))       \
	X("ns_per_run", REC_F64, 1, REC_COL("ns/run", 8, 0, 1), rv_f64((double)ns / (double)cnt))
static const struct rec_field stats_fields[] = { STATS_FIELDS(REC_FIELD) };
static const struct rec_schema stats_schema = { "prog_stats", stats_fields,
						ARRAY_SIZE(stats_fields) };

static void report_stats(struct run *r, enum rec_format fmt)
{
	struct rec_writer *err_w = rec_writer_new(REC_TABLE, stderr);
	const char *names[32];
	int fds[32];
	int n = bt_backend_progs(r->b, fds, names, 32);

	for (int i = 0; i < n; i++) {
		const char *name = names[i];
		uint64_t ns, cnt;

		if (bpfu_prog_stats(fds[i], &ns, &cnt) || !cnt)
			continue;
		struct rec_value v[] = { STATS_FIELDS(REC_VALUE) };
		if (fmt != REC_TABLE && r->records != BT_REC_NONE)
			rec_write(r->w, &stats_schema, v);
		if (err_w && log_get_level() >= LOG_NORMAL)
			rec_write(err_w, &stats_schema, v);
	}
	rec_writer_free(err_w);
}

/* the summary that closes a JSON trace; collapses_by_cause only with --detect */
#define SUMMARY_FIELDS(X)                                                                \
	X("backend", REC_STR, 0, REC_NOCOL, rv_str(bt_backend_names[bt_backend_kind(r->b)])) \
	X("samples", REC_U64, 0, REC_NOCOL, rv_u64(r->samples))                          \
	X("lost", REC_U64, 0, REC_NOCOL, rv_u64(lost))                                   \
	X("elapsed_s", REC_F64, 3, REC_NOCOL, rv_f64(elapsed))                           \
	X("collapses_by_cause", REC_KV, 0, REC_NOCOL, verdict ? rv_kv(kv, BT_NCAUSES) : rv_null()) \
	X("throttling_by_cause", REC_KV, 0, REC_NOCOL, verdict ? rv_kv(tkv, BT_NCAUSES) : rv_null()) \
	X("throttled_s", REC_F64, 3, REC_NOCOL,                                           \
	  verdict ? rv_f64((double)verdict->st.throttled_ns / 1e9) : rv_null())           \
	X("late_bytes", REC_U64, 0, REC_NOCOL,                                            \
	  verdict ? rv_u64((uint64_t)verdict->st.late_bytes) : rv_null())                 \
	X("samples_untracked", REC_U64, 0, REC_NOCOL, verdict ? rv_u64(verdict->st.samples_untracked) : rv_null()) \
	X("flows_closed", REC_U64, 0, REC_NOCOL, verdict ? rv_u64(verdict->st.flows_closed) : rv_null()) \
	X("flows_open", REC_U64, 0, REC_NOCOL, verdict ? rv_u64(verdict->st.flows_live) : rv_null()) \
	X("culprit_checks", REC_U64, 0, REC_NOCOL, verdict && env->check ? rv_u64(verdict->st.culprit_checks) : rv_null()) \
	X("culprit_mismatches", REC_U64, 0, REC_NOCOL,                                    \
	  verdict && env->check ? rv_u64(verdict->st.culprit_mismatches) : rv_null())    \
	X("writes", REC_U64, 0, REC_NOCOL, verdict && hook ? rv_u64(r->writes) : rv_null())  \
	X("writes_lost", REC_U64, 0, REC_NOCOL,                                          \
	  verdict && hook ? rv_u64(bt_backend_counter(r->b, BT_CNT_LOST_WRITES)) : rv_null()) \
	X("stalls_by_cause", REC_KV, 0, REC_NOCOL, verdict && hook ? rv_kv(skv, BT_NSTALL_CAUSES) : rv_null()) \
	X("stalled_s", REC_F64, 3, REC_NOCOL, verdict && hook ? rv_f64(stalled_s) : rv_null())
static const struct rec_field summary_fields[] = { SUMMARY_FIELDS(REC_FIELD) };
static const struct rec_schema summary_schema = { "summary", summary_fields,
						  ARRAY_SIZE(summary_fields) };

static void write_summary(const struct env *env, struct run *r, uint64_t lost, double elapsed,
			  const struct bt_verdict *verdict)
{
	struct rec_kv kv[BT_NCAUSES], tkv[BT_NCAUSES], skv[BT_NSTALL_CAUSES];
	const char *no_writes, *hook = bt_backend_write_hook(r->b, &no_writes);
	double stalled_s = verdict ? (double)verdict->stalled_ns / 1e9 : 0;

	if (verdict) {
		bt_verdict_by_cause(verdict, kv);
		bt_verdict_throttling_by_cause(verdict, tkv);
		bt_verdict_stalls_by_cause(verdict, skv);
	}
	struct rec_value v[] = { SUMMARY_FIELDS(REC_VALUE) };
	rec_write(r->w, &summary_schema, v);
}

/* what needs no tracing: --cleanup and --probe; returns -1 to go on */
static int housekeeping(struct env *env)
{
	char why[512];
	int removed, code;

	if (bpfu_check_privileges(true, why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if (bpfu_btf_missing()) {
		elog("%s", bpfu_btf_missing());
		return TK_EXIT_NOTSUP;
	}
	if (env->cleanup) {
		if (bt_stale_cleanup(&removed, why, sizeof(why))) {
			elog("%s", why);
			return TK_EXIT_FAIL;
		}
		if (!removed)
			ilog("nothing to clean: no stale bbr_traced is registered");
		return TK_EXIT_OK;
	}
	if (env->probe) {
		code = probe_backends(env);
		return code;
	}
	return -1;
}

/* CSV: every record type the trace may hold shares the file's one header */
static void declare_records(const struct env *env, struct rec_writer *w)
{
	if (env->records == BT_REC_NONE)
		return;
	if (env->records == BT_REC_SAMPLES)
		rec_writer_declare(w, &bt_sample_schema);
	if (env->detect) {
		rec_writer_declare(w, &bt_collapse_schema);
		rec_writer_declare(w, &bt_stall_schema);
	}
	if (env->stats)
		rec_writer_declare(w, &stats_schema);
	rec_writer_declare(w, &summary_schema);
	if (env->detect)
		rec_writer_declare(w, &bt_verdict_schema);
	if (env->verdict_every_s > 0 || env->prometheus)
		rec_writer_declare(w, &bt_window_verdict_schema);
}

static int open_output(struct env *env, struct run *r)
{
	r->out = stdout;
	r->out_name = env->output ? env->output : "stdout";
	if (env->output) {
		r->out = fopen(env->output, "w");
		if (!r->out) {
			elog("cannot write %s: %s", env->output, strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
	if (!env->format_set)
		env->format = rec_format_default(r->out);
	r->w = rec_writer_new(env->format, r->out);
	if (!r->w) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	r->records = env->records;
	r->format = env->format;
	r->metrics_peers = env->metrics_peers;
	declare_records(env, r->w);
	return TK_EXIT_OK;
}

/* struct_ops: make bbr_traced the default where asked, or say how flows opt in */
static int switch_default_cc(const struct env *env, struct run *r)
{
	bool asked = env->set_default || env->n_default_ns;
	char why[512];

	if (bt_backend_kind(r->b) != BT_STRUCT_OPS) {
		if (asked)
			wlog("--set-default ignored: backend %s traces bbr flows without opt-in",
			     bt_backend_names[bt_backend_kind(r->b)]);
		return TK_EXIT_OK;
	}
	if (!asked) {
		ilog("tracing flows whose congestion control is bbr_traced (opt in with "
		     "--set-default, a route's congctl, or TCP_CONGESTION)");
		return TK_EXIT_OK;
	}
	r->defcc = bt_defcc_switch(env->n_default_ns ? env->default_ns : NULL, env->n_default_ns,
				   "bbr_traced", env->cfg.guard, why, sizeof(why));
	if (!r->defcc) {
		elog("%s", why);
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

/* everything between the arguments and the first poll */
static int start_tracing(struct env *env, struct run *r)
{
	char why[512];
	int code;

	if (env->stats) {
		r->stats_fd = bpfu_enable_stats();
		if (r->stats_fd < 0)
			wlog("cannot turn on BPF statistics: %s", strerror(-r->stats_fd));
	}
	r->mono_to_wall_ns = mono_to_wall_offset();
	r->b = open_backend(env, r, &code);
	if (!r->b)
		return code;
	if (env->detect) {
		const char *no_writes, *hook = bt_backend_write_hook(r->b, &no_writes);

		if (hook)
			ilog("stalls: the write tap runs on %s", hook);
		else
			wlog("stalls of the sender are not traced: %s", no_writes);
	}
	if (env->detect) {
		struct bt_detect_cfg dcfg;

		bt_detect_cfg_default(&dcfg);
		dcfg.collapse_ratio = env->collapse_ratio;
		dcfg.max_flows = env->max_flows;
		dcfg.check = env->check;
		r->det = bt_detect_new(&dcfg);
		if (!r->det) {
			elog("out of memory");
			return TK_EXIT_FAIL;
		}
	}
	if (env->prometheus) {
		const struct prom_page verdict_page = { "/verdict", "application/json", render_verdict, r };

		r->prom = prom_server_start(env->prometheus, render_metrics, r, &verdict_page, why, sizeof(why));
		if (!r->prom) {
			elog("--prometheus: %s", why);
			return TK_EXIT_FAIL;
		}
		ilog("serving Prometheus metrics on http://%s/metrics", env->prometheus);
	}
	return switch_default_cc(env, r);
}

/* polls until Ctrl-C, --duration or an error; returns the exit code so far */
static int trace_loop(const struct env *env, struct run *r)
{
	bool live_count = env->output && isatty(STDERR_FILENO) && log_get_level() >= LOG_NORMAL;
	uint64_t deadline_ns, last_live_ns = 0, next_verdict_ns = 0;
	uint64_t every_ns = (uint64_t)(env->verdict_every_s * 1e9);
	int err, code = TK_EXIT_OK;

	/* on a terminal, the header tells at once what the columns will be */
	if (r->records == BT_REC_SAMPLES) {
		rec_write_header(r->w, &bt_sample_schema);
		rec_writer_flush(r->w);
	}
	r->t0_ns = tk_mono_ns();
	deadline_ns = env->duration_s > 0 ? r->t0_ns + (uint64_t)(env->duration_s * 1e9) : 0;
	while (!exiting) {
		uint64_t now;

		/* every poll period ends with each CPU's batch flushed and read, so
		 * output and /metrics are at most one period behind */
		err = bt_backend_poll(r->b, 100);
		detect_unlock(r);
		if (err == -EINTR)
			break;
		if (err < 0) {
			elog("reading the ring buffer failed: %s", strerror(-err));
			code = TK_EXIT_FAIL;
			break;
		}
		if (r->write_failed || rec_writer_flush(r->w)) {
			elog("writing records to %s failed: %s", r->out_name,
			     strerror(r->write_failed ? r->write_errno : errno));
			code = TK_EXIT_FAIL;
			break;
		}
		now = tk_mono_ns();
		if (live_count && now - last_live_ns >= TK_NSEC_PER_SEC) {
			fprintf(stderr, "\r%s: %llu samples, %llu lost", log_prog(),
				(unsigned long long)r->samples,
				(unsigned long long)bt_backend_counter(r->b, BT_CNT_LOST));
			last_live_ns = now;
		}
		if (r->det && (verdict_asked || (every_ns && now >= next_verdict_ns))) {
			if (next_verdict_ns || verdict_asked)
				write_window_verdict(r, now);
			verdict_asked = 0;
			next_verdict_ns = now + every_ns;
		}
		if (deadline_ns && now >= deadline_ns)
			break;
	}
	bt_backend_drain(r->b);
	detect_unlock(r);
	if (live_count)
		fputc('\n', stderr);
	return code;
}

/* why a trace may have no sample, and the ways in, for this backend */
static const char *why_empty(const struct env *env, const struct run *r)
{
	bool filtered = env->cfg.filter.has_saddr || env->cfg.filter.has_daddr || env->cfg.filter.sport ||
			env->cfg.filter.dport || env->cfg.filter.cookie;

	if (filtered)
		return "Check the filters (--saddr, --daddr, --sport, --dport, --cookie): they run in the "
		       "kernel and may have matched no flow.";
	if (bt_backend_kind(r->b) != BT_STRUCT_OPS)
		return "The kernel backends trace flows whose congestion control is bbr: make it the "
		       "default of the flow's network namespace (sysctl "
		       "net.ipv4.tcp_congestion_control=bbr there), or set TCP_CONGESTION to bbr in "
		       "the application.";
	return "The struct_ops backend traces only flows whose congestion control is bbr_traced. A "
	       "flow in another network namespace (every container's is) needs it there: "
	       "--set-default-in NS makes it that namespace's default while bbrtrace runs; or the "
	       "application sets TCP_CONGESTION to bbr_traced (iperf3 -C bbr_traced); or a route "
	       "names it (quickack congctl ROUTE bbr_traced --netns NS).";
}

/* the summary, the verdict and the statistics, once tracing has stopped */
static void report(const struct env *env, struct run *r)
{
	double elapsed = (double)(tk_mono_ns() - r->t0_ns) * 1e-9;
	uint64_t lost = bt_backend_counter(r->b, BT_CNT_LOST);
	struct bt_verdict verdict;
	const char *no_writes;

	if (r->det) {
		bt_verdict_build(&verdict, r->det, env->collapse_ratio, elapsed, why_empty(env, r));
		if (!bt_backend_write_hook(r->b, &no_writes))
			bt_verdict_no_stalls(&verdict, no_writes);
		bt_verdict_note_lost(&verdict, lost, bt_backend_counter(r->b, BT_CNT_LOST_WRITES));
	}
	if (env->stats)
		report_stats(r, env->format);
	/* a table is for people: its summary and verdict go to stderr below */
	if (env->format != REC_TABLE && env->records != BT_REC_NONE) {
		write_summary(env, r, lost, elapsed, r->det ? &verdict : NULL);
		if (r->det)
			bt_verdict_write(r->w, &verdict);
	}
	/* the verdict is for people: always on stderr, even with --quiet */
	if (r->det)
		fprintf(stderr, "%s: verdict: %s\n", log_prog(), verdict.text);
	ilog("%llu samples in %.1f s, %llu lost%s", (unsigned long long)r->samples, elapsed,
	     (unsigned long long)lost,
	     lost ? " (ring buffer full: raise --ringbuf-mb or filter flows)" : "");
	if (bt_backend_counter(r->b, BT_CNT_LOST_WRITES))
		wlog("%llu writes' events lost (ring buffer full): stalls around them may be missed or "
		     "longer than reported",
		     (unsigned long long)bt_backend_counter(r->b, BT_CNT_LOST_WRITES));
	if (r->det && verdict.st.samples_untracked)
		wlog("%llu samples and writes came from flows the detector could not track (%s): they "
		     "are not judged",
		     (unsigned long long)verdict.st.samples_untracked,
		     verdict.st.untracked_at_cap ? "the table was at --max-flows; raise it" : "out of memory");
	if (r->det && env->check)
		ilog("--check-detector: %llu culprits found both ways, %llu differently",
		     (unsigned long long)verdict.st.culprit_checks,
		     (unsigned long long)verdict.st.culprit_mismatches);
}

struct route_warn {
	const char *ns;
	unsigned int n;
};

static void one_route(void *ctx, const char *route)
{
	struct route_warn *w = ctx;

	wlog("the route %s%s%s still names congctl bbr_traced, which goes away now: new "
	     "connections on it cannot use it (undo: quickack congctl %s off%s%s)",
	     route, w->ns ? " in network namespace " : "", w->ns ? w->ns : "", route,
	     w->ns ? " --netns " : "", w->ns ? w->ns : "");
	w->n++;
}

/*
 * Before bbr_traced goes: the routes that name it in their congctl, in this
 * namespace and every named one. Once it is gone, such a route names a
 * congestion control the kernel does not have, which new connections on it
 * cannot use and which makes iproute2 6.1's `ip route show` crash.
 */
static void warn_routes_naming_bbr_traced(void)
{
	struct route_warn w = { NULL, 0 };
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	DIR *d = opendir(NETNS_RUN_DIR);
	struct dirent *e;

	rtscan_congctl("bbr_traced", one_route, &w);
	while (self >= 0 && d && (e = readdir(d))) {
		char msg[256];
		int fd;

		if (e->d_name[0] == '.' || (fd = netns_open(e->d_name, msg, sizeof(msg))) < 0)
			continue;
		if (netns_enter_fd(fd) == 0) {
			w.ns = e->d_name;
			rtscan_congctl("bbr_traced", one_route, &w);
			netns_enter_fd(self);
		}
		close(fd);
	}
	if (d)
		closedir(d);
	if (self >= 0)
		close(self);
}

/* undoes everything, newest first; returns the final exit code */
static int stop_tracing(const struct env *env, struct run *r, int code)
{
	prom_server_stop(r->prom);
	bt_detect_free(r->det);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	bt_defcc_restore(r->defcc);
	if (r->b && bt_backend_kind(r->b) == BT_STRUCT_OPS)
		warn_routes_naming_bbr_traced();
	bt_backend_close(r->b);
	/* everything is undone: the guardian need not act */
	bt_guard_release(env->cfg.guard);
	if (r->w && rec_writer_free(r->w) && code == TK_EXIT_OK) {
		elog("writing records to %s failed: %s", r->out_name, strerror(errno));
		code = TK_EXIT_FAIL;
	}
	if (r->out && r->out != stdout)
		fclose(r->out);
	return code;
}

int main(int argc, char **argv)
{
	struct env env = { .backend = BT_AUTO, .collapse_ratio = BT_COLLAPSE_RATIO_DEFAULT, .ringbuf_mb = 8,
			   .max_flows = BT_DETECT_FLOWS, .metrics_peers = BT_METRICS_PEERS };
	struct run r = { .stats_fd = -1 };
	int code;

	log_init(argv[0]);
	/* first of all: each stops the trace cleanly, even during start-up (it
	 * is read once tracing runs); a closed terminal (SIGHUP) too; a closed
	 * pipe is a write error (EPIPE) */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGUSR1, on_usr1);
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &env);
	bpfu_setup_libbpf();
	/* the guardian process is forked only when a change needs undoing
	 * should bbrtrace die */
	env.cfg.guard = bt_guard_new();
	if (!env.cfg.guard) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	code = housekeeping(&env);
	if (code >= 0) {
		bt_guard_release(env.cfg.guard);
		return code;
	}
	pthread_mutex_init(&r.lock, NULL);
	code = open_output(&env, &r);
	if (code == TK_EXIT_OK)
		code = start_tracing(&env, &r);
	if (code == TK_EXIT_OK) {
		code = trace_loop(&env, &r);
		report(&env, &r);
	}
	return stop_tracing(&env, &r, code);
}
