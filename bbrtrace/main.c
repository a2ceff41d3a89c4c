// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace: every BBR rate sample, per ACK, with the max-bw filter before and
 * after it.
 */
#include <errno.h>
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
#include "bbrtrace/sample.h"
#include "bbrtrace/verdict.h"
#include "bpfutil.h"
#include "cli.h"
#include "common.h"
#include "log.h"
#include "prom.h"
#include "record.h"

#define MAX_DEFAULT_NS 16

struct env {
	enum bt_backend_kind backend;
	struct bt_config cfg;
	enum rec_format format;
	bool format_set;
	const char *output;
	uint64_t duration_s;
	bool set_default;
	const char *default_ns[MAX_DEFAULT_NS];
	int n_default_ns;
	bool probe;
	bool cleanup;
	bool stats;
	bool detect;
	double collapse_ratio;
	const char *prometheus;
};

struct run {
	struct rec_writer *w;
	FILE *out;
	uint64_t samples;
	uint64_t t0_ns;
	int64_t mono_to_wall_ns;
	bool write_failed;
	/* --detect: the collapse detector; lock guards it against the /metrics thread */
	struct bt_detect *det;
	pthread_mutex_t lock;
	struct bt_backend *b;
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
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
"\n"
"Options:\n"
"  -b, --backend NAME      auto|fentry|kprobe|struct_ops\n"
"      --saddr ADDR        only flows with this local address (IPv4 or IPv6)\n"
"      --daddr ADDR        only flows with this remote address\n"
"      --sport PORT        only flows with this local port\n"
"      --dport PORT        only flows with this remote port\n"
"      --cookie N          only the socket with this cookie (ss -e shows it)\n"
"                          Filters run in the kernel: other flows cost nothing.\n"
"  -f, --format FMT        table (default on a terminal), csv, or json (JSON\n"
"                          lines, the default otherwise)\n"
"  -o, --output FILE       write records to FILE instead of stdout\n"
"  -d, --duration SECONDS  stop after SECONDS (integer; default: until Ctrl-C)\n"
"      --set-default       struct_ops: make bbr_traced the default congestion\n"
"                          control of this network namespace while tracing\n"
"      --set-default-in NS the same in network namespace NS (repeatable)\n"
"                          The old value comes back at exit, even after SIGKILL.\n"
"      --ringbuf-mb N      ring buffer size in MiB, a power of two (default 8)\n"
"      --stats             turn on BPF run-time statistics while tracing and\n"
"                          print each program's runs and ns/run at exit\n"
"      --no-tap            struct_ops: run bbr_traced as plain BBR, without\n"
"                          the tap (the benchmark's reference)\n"
"      --probe             say, for each backend, whether its programs load\n"
"                          (pass the verifier) and attach here, then exit\n"
"      --cleanup           remove a stale bbr_traced left registered by an older\n"
"                          run, then exit\n"
"      --detect            find each collapse of the bandwidth estimate (a drop by\n"
"                          at least --collapse-ratio on one ACK), write it as a\n"
"                          \"type\":\"collapse\" record with its cause\n"
"                          (delayed_ack, rate_drop, loss_policer, other) and its\n"
"                          evidence, and end with a verdict (default: off)\n"
"      --collapse-ratio R  the drop that counts as a collapse, 0.01..0.99\n"
"                          (default 0.30: the estimate fell by 30%% or more)\n"
"      --prometheus ADDR:PORT\n"
"                          serve /metrics in Prometheus text format while\n"
"                          tracing: samples, collapses by cause, the current\n"
"                          estimate per flow (implies --detect)\n"
"  -q, --quiet             no progress messages\n"
"  -v, --verbose           more messages (-vv: libbpf's debug output too)\n"
"  -h, --help              this help\n"
"  -V, --version           print the version\n"
"\n"
"Each sample: t_ns (CLOCK_MONOTONIC), wall_ns (CLOCK_REALTIME), cookie, saddr,\n"
"daddr, sport, dport; snd_una, snd_nxt, mss, cwnd, pacing_rate_bps; the\n"
"rate_sample's delivered, interval_us, snd_interval_us, rcv_interval_us, rtt_us,\n"
"losses, acked_sacked, prior_in_flight, is_app_limited, is_retrans,\n"
"is_ack_delayed; sample_bw_bps = delivered*mss*8/interval; BBR's bw_prev_bps\n"
"and bw_bps (max-bw filter before/after, bit/s), mode, pacing_gain and\n"
"cwnd_gain (ratios), min_rtt_us, lt_use_bw. In JSON, a \"type\":\"summary\"\n"
"record at exit gives samples, lost events and elapsed time. Events lost in a\n"
"full ring buffer are counted and reported, never hidden.\n"
"\n"
"With --detect, a collapse is an ACK after which BBR's estimate (the max-bw\n"
"filter, or lt_bw while lt_use_bw) is below (1 - R) times what it was. Its\n"
"cause: loss_policer when BBR is on its long-term rate after losses;\n"
"delayed_ack when the sample that set the new estimate is not app-limited and\n"
"rcv_interval_us >= 5 x snd_interval_us and >= 10 ms (the ACK was held, not\n"
"the data; is_ack_delayed is only a hint); rate_drop when that sample's two\n"
"intervals agree within 2x (the path delivered less); other otherwise, with\n"
"the evidence. An ACK that covers the sender's FIN is never a collapse (the\n"
"stream is over). The summary gives counts by cause; a \"type\":\"verdict\"\n"
"record and a sentence on stderr say what happened and what to fix.\n"
"\n"
"Needs root (or CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN) and kernel BTF.\n"
"\n"
"Exit status: 0 ok, 1 runtime failure, 2 bad arguments, 3 missing privilege,\n"
"4 the kernel lacks a needed feature.\n"
"Environment: TK_VMLINUX_BTF=FILE reads the kernel's BTF from FILE.\n");
}

enum {
	OPT_SADDR = 256, OPT_DADDR, OPT_SPORT, OPT_DPORT, OPT_COOKIE, OPT_SET_DEFAULT,
	OPT_SET_DEFAULT_IN, OPT_RINGBUF, OPT_PROBE, OPT_CLEANUP, OPT_STATS, OPT_NO_TAP,
	OPT_DETECT, OPT_COLLAPSE_RATIO, OPT_PROMETHEUS,
};

static void parse_args(int argc, char **argv, struct env *env)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "saddr", required_argument, NULL, OPT_SADDR },
		{ "daddr", required_argument, NULL, OPT_DADDR },
		{ "sport", required_argument, NULL, OPT_SPORT },
		{ "dport", required_argument, NULL, OPT_DPORT },
		{ "cookie", required_argument, NULL, OPT_COOKIE },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "set-default", no_argument, NULL, OPT_SET_DEFAULT },
		{ "set-default-in", required_argument, NULL, OPT_SET_DEFAULT_IN },
		{ "ringbuf-mb", required_argument, NULL, OPT_RINGBUF },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "cleanup", no_argument, NULL, OPT_CLEANUP },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "no-tap", no_argument, NULL, OPT_NO_TAP },
		{ "detect", no_argument, NULL, OPT_DETECT },
		{ "collapse-ratio", required_argument, NULL, OPT_COLLAPSE_RATIO },
		{ "prometheus", required_argument, NULL, OPT_PROMETHEUS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct cli_addr addr;
	bool no_tap = false;
	uint32_t mb = 8;
	int c, idx, verbosity = LOG_NORMAL;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:f:o:d:qvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (cli_parse_choice("--backend", optarg, bt_backend_names, &idx))
				exit(TK_EXIT_USAGE);
			env->backend = (enum bt_backend_kind)idx;
			break;
		case OPT_SADDR:
		case OPT_DADDR: {
			bool src = c == OPT_SADDR;

			if (cli_parse_addr(src ? "--saddr" : "--daddr", optarg, &addr))
				exit(TK_EXIT_USAGE);
			cli_addr_to_v6mapped(&addr, src ? env->cfg.filter.saddr : env->cfg.filter.daddr);
			*(src ? &env->cfg.filter.has_saddr : &env->cfg.filter.has_daddr) = true;
			break;
		}
		case OPT_SPORT:
			if (cli_parse_port("--sport", optarg, &env->cfg.filter.sport))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_DPORT:
			if (cli_parse_port("--dport", optarg, &env->cfg.filter.dport))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_COOKIE:
			if (cli_parse_u64("--cookie", optarg, 1, UINT64_MAX, &env->cfg.filter.cookie))
				exit(TK_EXIT_USAGE);
			break;
		case 'f':
			if (rec_format_parse("--format", optarg, &env->format))
				exit(TK_EXIT_USAGE);
			env->format_set = true;
			break;
		case 'o':
			env->output = optarg;
			break;
		case 'd':
			if (cli_parse_u64("--duration", optarg, 1, 365ULL * 86400, &env->duration_s))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_SET_DEFAULT:
			env->set_default = true;
			break;
		case OPT_SET_DEFAULT_IN:
			if (env->n_default_ns >= MAX_DEFAULT_NS)
				cli_usage_die("--set-default-in: at most %d namespaces", MAX_DEFAULT_NS);
			env->default_ns[env->n_default_ns++] = optarg;
			break;
		case OPT_RINGBUF:
			if (cli_parse_u32("--ringbuf-mb", optarg, 1, 1024, &mb))
				exit(TK_EXIT_USAGE);
			if (mb & (mb - 1))
				cli_usage_die("--ringbuf-mb: %u is not a power of two", mb);
			break;
		case OPT_PROBE:
			env->probe = true;
			break;
		case OPT_CLEANUP:
			env->cleanup = true;
			break;
		case OPT_STATS:
			env->stats = true;
			break;
		case OPT_NO_TAP:
			no_tap = true;
			break;
		case OPT_DETECT:
			env->detect = true;
			break;
		case OPT_COLLAPSE_RATIO:
			if (cli_parse_double("--collapse-ratio", optarg, 0.01, 0.99,
					     &env->collapse_ratio))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_PROMETHEUS: {
			struct sockaddr_storage ss;
			socklen_t sslen;

			if (prom_parse_listen("--prometheus", optarg, &ss, &sslen))
				exit(TK_EXIT_USAGE);
			env->prometheus = optarg;
			env->detect = true;
			break;
		}
		case 'q':
			verbosity = LOG_QUIET;
			break;
		case 'v':
			verbosity++;
			break;
		case 'h':
			usage(stdout);
			exit(TK_EXIT_OK);
		case 'V':
			cli_print_version();
			exit(TK_EXIT_OK);
		case ':':
			cli_usage_die("%s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				cli_usage_die("unknown option '-%c'", optopt);
			cli_usage_die("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_usage_die("unexpected argument '%s'", argv[optind]);
	if ((env->set_default || env->n_default_ns) && env->backend != BT_STRUCT_OPS &&
	    env->backend != BT_AUTO)
		cli_usage_die("--set-default needs the struct_ops backend");
	log_set_level(verbosity);
	env->cfg.ringbuf_bytes = mb << 20;
	env->cfg.wakeup_bytes = env->cfg.ringbuf_bytes / 32;
	env->cfg.tap = !no_tap;
	if (no_tap && env->backend != BT_STRUCT_OPS)
		cli_usage_die("--no-tap needs --backend struct_ops");
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

static uint64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int on_event(void *ctx, const struct bt_event *e)
{
	struct run *r = ctx;
	struct rec_value v[BT_SAMPLE_NFIELDS];
	struct bt_sample_strs strs;
	struct bt_sample s;

	bt_sample_decode(&s, e, r->mono_to_wall_ns);
	bt_sample_values(&s, r->t0_ns, &strs, v);
	if (rec_write(r->w, &bt_sample_schema, v))
		r->write_failed = true;
	r->samples++;
	if (r->det) {
		struct rec_value cv[BT_COLLAPSE_NFIELDS];
		struct bt_sample_strs cstrs;
		struct bt_collapse c;
		bool hit;

		pthread_mutex_lock(&r->lock);
		hit = bt_detect_feed(r->det, &s, &c);
		pthread_mutex_unlock(&r->lock);
		if (hit) {
			bt_collapse_values(&c, r->t0_ns, &cstrs, cv);
			if (rec_write(r->w, &bt_collapse_schema, cv))
				r->write_failed = true;
		}
	}
	return 0;
}

/* the /metrics page (--prometheus), on the server's thread */
static int render_metrics(struct prom_buf *pb, void *ctx)
{
	struct run *r = ctx;
	struct bt_flow_state flows[64];
	struct bt_detect_stats st;
	unsigned int n;
	uint64_t since = now_mono_ns();

	since = since > 60000000000ULL ? since - 60000000000ULL : 0;
	pthread_mutex_lock(&r->lock);
	bt_detect_stats(r->det, &st);
	n = bt_detect_flow_states(r->det, since, flows, ARRAY_SIZE(flows));
	pthread_mutex_unlock(&r->lock);

	prom_family(pb, "bbrtrace_samples_total", PROM_COUNTER, "BBR rate samples traced");
	prom_sample_u64(pb, "bbrtrace_samples_total", NULL, 0, st.samples);
	prom_family(pb, "bbrtrace_lost_events_total", PROM_COUNTER,
		    "samples lost because the ring buffer was full");
	prom_sample_u64(pb, "bbrtrace_lost_events_total", NULL, 0,
			bt_backend_counter(r->b, BT_CNT_LOST));
	prom_family(pb, "bbrtrace_collapses_total", PROM_COUNTER,
		    "collapses of BBR's bandwidth estimate, by cause");
	for (int i = 0; i < BT_NCAUSES; i++) {
		struct prom_label l = { "cause", bt_cause_names[i] };

		prom_sample_u64(pb, "bbrtrace_collapses_total", &l, 1, st.collapses[i]);
	}
	prom_family(pb, "bbrtrace_flow_bw_bps", PROM_GAUGE,
		    "BBR's current bandwidth estimate per flow seen in the last 60 s, bit/s");
	for (unsigned int i = 0; i < n; i++) {
		char sa[48], da[48], sp[8], dp[8], ck[24];
		struct prom_label l[] = { { "saddr", sa }, { "daddr", da }, { "sport", sp },
					  { "dport", dp }, { "cookie", ck } };

		cli_fmt_v6mapped(flows[i].saddr, sa, sizeof(sa));
		cli_fmt_v6mapped(flows[i].daddr, da, sizeof(da));
		snprintf(sp, sizeof(sp), "%u", flows[i].sport);
		snprintf(dp, sizeof(dp), "%u", flows[i].dport);
		snprintf(ck, sizeof(ck), "%llu", (unsigned long long)flows[i].cookie);
		prom_sample_u64(pb, "bbrtrace_flow_bw_bps", l, ARRAY_SIZE(l), flows[i].bw_bps);
	}
	return pb->failed ? -1 : 0;
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

static struct bt_backend *open_backend(const struct env *env, struct run *r, int *code)
{
	static const enum bt_backend_kind order[] = { BT_FENTRY, BT_KPROBE, BT_STRUCT_OPS };
	char refused[1536] = "", why[512];
	struct bt_backend *b;
	int worst = TK_EXIT_NOTSUP;

	if (env->backend != BT_AUTO) {
		b = bt_backend_open(env->backend, &env->cfg, on_event, r, why, sizeof(why), code);
		if (!b)
			elog("%s: %s", bt_backend_names[env->backend], why);
		else
			ilog("backend %s", bt_backend_names[env->backend]);
		return b;
	}
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		b = bt_backend_open(order[i], &env->cfg, on_event, r, why, sizeof(why), code);
		if (b) {
			if (refused[0])
				ilog("backend %s (%s)", bt_backend_names[order[i]], refused);
			else
				ilog("backend %s", bt_backend_names[order[i]]);
			return b;
		}
		if (*code != TK_EXIT_NOTSUP)
			worst = *code;
		snprintf(refused + strlen(refused), sizeof(refused) - strlen(refused), "%s%s: %s",
			 refused[0] ? "; " : "", bt_backend_names[order[i]], why);
	}
	elog("no backend works here: %s", refused);
	*code = worst;
	return NULL;
}

static const struct rec_field stats_fields[] = {
	{ "program", REC_STR, 0, "program", -18 },
	{ "run_cnt", REC_U64, 0, "runs", 10 },
	{ "run_time_ns", REC_U64, 0, "run time ns", 14 },
	{ "ns_per_run", REC_F64, 1, "ns/run", 8, 0, 1 },
};
static const struct rec_schema stats_schema = { "prog_stats", stats_fields,
						ARRAY_SIZE(stats_fields) };

/* bpf_stats per program: in the JSON output, and on stderr */
static void report_stats(struct bt_backend *b, struct run *r, enum rec_format fmt)
{
	struct rec_writer *err_w = rec_writer_new(REC_TABLE, stderr);
	const char *names[32];
	int fds[32];
	int n = bt_backend_progs(b, fds, names, 32);

	for (int i = 0; i < n; i++) {
		uint64_t ns, cnt;

		if (bpfu_prog_stats(fds[i], &ns, &cnt) || !cnt)
			continue;
		struct rec_value v[] = {
			rv_str(names[i]), rv_u64(cnt), rv_u64(ns), rv_f64((double)ns / (double)cnt),
		};
		if (fmt == REC_JSON)
			rec_write(r->w, &stats_schema, v);
		if (err_w && log_get_level() >= LOG_NORMAL)
			rec_write(err_w, &stats_schema, v);
	}
	rec_writer_free(err_w);
}

static const struct rec_field summary_fields[] = {
	{ "backend", REC_STR },
	{ "samples", REC_U64 },
	{ "lost", REC_U64 },
	{ "elapsed_s", REC_F64, 3 },
	{ "collapses_by_cause", REC_KV }, /* --detect; null otherwise */
};
static const struct rec_schema summary_schema = { "summary", summary_fields,
						  ARRAY_SIZE(summary_fields) };

int main(int argc, char **argv)
{
	struct env env = { .backend = BT_AUTO, .collapse_ratio = 0.30 };
	struct prom_server *prom = NULL;
	struct run r = {};
	struct bt_backend *b = NULL;
	struct bt_defcc *defcc = NULL;
	bool live_count;
	uint64_t start_ns, deadline_ns, last_live_ns = 0, lost;
	int code = TK_EXIT_OK, err, stats_fd = -1;
	char why[512];

	log_init(argv[0]);
	parse_args(argc, argv, &env);
	bpfu_setup_libbpf();

	if (bpfu_check_privileges(why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if (bpfu_btf_missing()) {
		elog("%s", bpfu_btf_missing());
		return TK_EXIT_NOTSUP;
	}
	if (env.cleanup) {
		int removed;

		if (bt_stale_cleanup(&removed, why, sizeof(why))) {
			elog("%s", why);
			return TK_EXIT_FAIL;
		}
		if (!removed)
			ilog("nothing to clean: no stale bbr_traced is registered");
		return TK_EXIT_OK;
	}
	/* the guardian process is forked only when a change needs undoing
	 * should bbrtrace die */
	env.cfg.guard = bt_guard_new();
	if (!env.cfg.guard) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	if (env.probe) {
		code = probe_backends(&env);
		bt_guard_release(env.cfg.guard);
		return code;
	}

	r.out = stdout;
	if (env.output) {
		r.out = fopen(env.output, "w");
		if (!r.out) {
			elog("cannot write %s: %s", env.output, strerror(errno));
			bt_guard_release(env.cfg.guard);
			return TK_EXIT_FAIL;
		}
	}
	if (!env.format_set)
		env.format = rec_format_default(r.out);
	r.w = rec_writer_new(env.format, r.out);
	if (!r.w) {
		elog("out of memory");
		code = TK_EXIT_FAIL;
		goto cleanup;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (env.stats) {
		stats_fd = bpfu_enable_stats();
		if (stats_fd < 0)
			wlog("cannot turn on BPF statistics: %s", strerror(-stats_fd));
	}
	r.mono_to_wall_ns = mono_to_wall_offset();
	b = open_backend(&env, &r, &code);
	if (!b)
		goto cleanup;
	r.b = b;
	pthread_mutex_init(&r.lock, NULL);
	if (env.detect) {
		struct bt_detect_cfg dcfg;

		bt_detect_cfg_default(&dcfg);
		dcfg.collapse_ratio = env.collapse_ratio;
		r.det = bt_detect_new(&dcfg);
		if (!r.det) {
			elog("out of memory");
			code = TK_EXIT_FAIL;
			goto cleanup;
		}
	}
	if (env.prometheus) {
		prom = prom_server_start(env.prometheus, render_metrics, &r, why, sizeof(why));
		if (!prom) {
			elog("--prometheus: %s", why);
			code = TK_EXIT_FAIL;
			goto cleanup;
		}
		ilog("serving Prometheus metrics on http://%s/metrics", env.prometheus);
	}
	if (bt_backend_kind(b) == BT_STRUCT_OPS) {
		if (env.set_default || env.n_default_ns) {
			defcc = bt_defcc_switch(env.n_default_ns ? env.default_ns : NULL,
						env.n_default_ns, "bbr_traced", env.cfg.guard, why,
						sizeof(why));
			if (!defcc) {
				elog("%s", why);
				code = TK_EXIT_FAIL;
				goto cleanup;
			}
		} else {
			ilog("tracing flows whose congestion control is bbr_traced (opt in with "
			     "--set-default, a route's congctl, or TCP_CONGESTION)");
		}
	} else if (env.set_default || env.n_default_ns) {
		wlog("--set-default ignored: backend %s traces bbr flows without opt-in",
		     bt_backend_names[bt_backend_kind(b)]);
	}

	/* on a terminal, the header tells at once what the columns will be */
	rec_write_header(r.w, &bt_sample_schema);
	rec_writer_flush(r.w);
	live_count = env.output && isatty(STDERR_FILENO) && log_get_level() >= LOG_NORMAL;
	start_ns = now_mono_ns();
	r.t0_ns = start_ns;
	deadline_ns = env.duration_s ? start_ns + env.duration_s * 1000000000ULL : 0;
	while (!exiting) {
		uint64_t now;

		/* every poll period ends with each CPU's batch flushed and read, so
		 * output and /metrics are at most one period behind */
		err = bt_backend_poll(b, 100);
		if (err == -EINTR)
			break;
		if (err < 0) {
			elog("reading the ring buffer failed: %s", strerror(-err));
			code = TK_EXIT_FAIL;
			break;
		}
		if (r.write_failed) {
			elog("writing records failed: %s", strerror(errno));
			code = TK_EXIT_FAIL;
			break;
		}
		if (rec_writer_flush(r.w) && !r.write_failed) {
			r.write_failed = true;
			continue;
		}
		now = now_mono_ns();
		if (live_count && now - last_live_ns >= 1000000000ULL) {
			fprintf(stderr, "\r%s: %llu samples, %llu lost", log_prog(),
				(unsigned long long)r.samples,
				(unsigned long long)bt_backend_counter(b, BT_CNT_LOST));
			last_live_ns = now;
		}
		if (deadline_ns && now >= deadline_ns)
			break;
	}
	bt_backend_drain(b);
	if (live_count)
		fputc('\n', stderr);

	lost = bt_backend_counter(b, BT_CNT_LOST);
	{
		double elapsed = (double)(now_mono_ns() - start_ns) * 1e-9;
		struct bt_verdict verdict;
		struct bt_verdict_strs vstrs;
		struct rec_value vv[BT_VERDICT_NFIELDS];
		struct rec_value v[] = {
			rv_str(bt_backend_names[bt_backend_kind(b)]),
			rv_u64(r.samples),
			rv_u64(lost),
			rv_f64(elapsed),
			rv_null(),
		};

		if (r.det) {
			bt_verdict_build(&verdict, r.det, env.collapse_ratio, elapsed);
			bt_verdict_values(&verdict, &vstrs, vv);
			v[4] = rv_kv(vstrs.by_cause, BT_NCAUSES);
		}

		if (env.stats)
			report_stats(b, &r, env.format);
		if (env.format == REC_JSON)
			rec_write(r.w, &summary_schema, v);
		if (r.det) {
			if (env.format == REC_JSON)
				rec_write(r.w, &bt_verdict_schema, vv);
			/* the verdict is for people: always on stderr, even with --quiet */
			fprintf(stderr, "%s: verdict: %s\n", log_prog(), verdict.text);
		}
		ilog("%llu samples in %.1f s, %llu lost%s", (unsigned long long)r.samples, elapsed,
		     (unsigned long long)lost,
		     lost ? " (ring buffer full: raise --ringbuf-mb or filter flows)" : "");
	}
cleanup:
	prom_server_stop(prom);
	bt_detect_free(r.det);
	if (stats_fd >= 0)
		close(stats_fd);
	bt_defcc_restore(defcc);
	bt_backend_close(b);
	/* everything is undone: the guardian need not act */
	bt_guard_release(env.cfg.guard);
	if (r.w && rec_writer_free(r.w) && code == TK_EXIT_OK) {
		elog("writing records failed: %s", strerror(errno));
		code = TK_EXIT_FAIL;
	}
	if (r.out && r.out != stdout)
		fclose(r.out);
	return code;
}
