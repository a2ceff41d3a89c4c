// SPDX-License-Identifier: GPL-2.0-only
/*
 * bbrtrace's command line: the option table (lib/opt.h) and its parsers,
 * what the options say together, and the checks made before anything is
 * loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bbrtrace/args.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/help.h"
#include "bbrtrace/peers.h"
#include "bbrtrace/rules.h"
#include "cli.h"
#include "common.h"
#include "log.h"
#include "netns.h"
#include "opt.h"

static const char *const bt_records_names[] = { "samples", "events", "none", NULL };

static int set_addr(void *cfg, const char *opt, const char *val)
{
	struct bt_env *env = cfg;
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
	struct bt_env *env = cfg;
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
	struct bt_env *env = cfg;

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
	struct bt_env *env = cfg;

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
	struct bt_env *env = cfg;

	if (cli_parse_double(opt, val, 0, 86400, &env->verdict_every_s))
		return -1;
	env->verdict_every_set = true;
	return 0;
}

static int set_prometheus(void *cfg, const char *opt, const char *val)
{
	struct bt_env *env = cfg;
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (cli_parse_endpoint(opt, val, &ss, &sslen))
		return -1;
	env->prometheus = val;
	env->detect = true;
	return 0;
}

/* --help-detect: printed whole, like --help, before any other option is
 * judged further */
static int help_detect(void *cfg, const char *opt, const char *val)
{
	(void)cfg;
	(void)opt;
	(void)val;
	bt_help_detect(stdout);
	exit(TK_EXIT_OK);
}

#define TK_OPT_CFG struct bt_env
static const struct opt options[] = {
	OPT_E_CHOICE_D("backend", 'b', "NAME", backend, bt_backend_names, "auto", "auto|fentry|kprobe|struct_ops"),
	OPT_E_CALL("saddr", 0, "ADDR", set_addr, "only flows with this local address (IPv4 or IPv6)"),
	OPT_E_CALL("daddr", 0, "ADDR", set_addr, "only flows with this remote address"),
	OPT_E_PORT("sport", 0, "PORT", cfg.filter.sport, "only flows with this local port"),
	OPT_E_PORT("dport", 0, "PORT", cfg.filter.dport, "only flows with this remote port"),
	OPT_E_U64("cookie", 0, "N", cfg.filter.cookie, 1, (double)UINT64_MAX,
		  "only the socket with this cookie (ss -e shows it)"),
	OPT_E_FORMAT(format, format_set),
	OPT_E_CALL("records", 0, "WHAT", set_records,
		   "samples (default), events (--detect's records only;\n"
		   "the default with --prometheus) or none"),
	OPT_E_OUTPUT(output, "write records to FILE instead of stdout"),
	OPT_E_DURATION(duration_s, "stop after SECONDS (default: until Ctrl-C)"),
	OPT_E_FLAG("set-default", 0, set_default, "struct_ops: make bbr_traced the default congestion\n"
						  "control of this network namespace while tracing"),
	OPT_E_CALL("set-default-in", 0, "NS", set_default_in,
		   "the same in network namespace NS (repeatable); both\n"
		   "put the old value back at exit, even after SIGKILL"),
	OPT_E_CALL_D("ringbuf-mb", 0, "N", set_ringbuf, "8", "ring buffer size in MiB, a power of two"),
	OPT_E_FLAG("stats", 0, stats, "print each BPF program's runs and ns/run at exit"),
	OPT_E_FLAG("no-tap", 0, no_tap, "struct_ops: plain BBR, without the tap (a benchmark)"),
	OPT_E_FLAG("probe", 0, probe, "say whether each backend loads and attaches, then exit"),
	OPT_E_FLAG("cleanup", 0, cleanup, "remove a stale bbr_traced registration, then exit"),
	OPT_E_FLAG("detect", 0, detect, "find each collapse of the bandwidth estimate, with its\n"
					"cause and evidence, and end with a verdict"),
	OPT_E_DOUBLE_D("collapse-ratio", 0, "R", collapse_ratio, 0.01, 0.99, TK_STR(BT_COLLAPSE_RATIO_DEFAULT),
		       "the drop on one ACK that is a collapse"),
	OPT_E_U32_D("max-flows", 0, "N", max_flows, 16, 4194304, TK_STR(BT_DETECT_FLOWS),
		    "--detect: flows tracked at once, 1.6 KiB each (5.7 KiB\n"
		    "at 100 ACKs/s); past N, untracked"),
	OPT_E_FLAG("check-detector", 0, check, "--detect: find each culprit both ways and count the\n"
					       "answers that differ (a self-test; costs memory)"),
	OPT_E_CALL("prometheus", 0, "ADDR:PORT", set_prometheus,
		   "serve /metrics and /verdict (the verdict over the\n"
		   "last " TK_STR(BT_WINDOW_MIN) " minutes) while tracing; implies --detect"),
	OPT_E_CALL("verdict-every", 0, "SECONDS", set_verdict_every,
		   "--detect: the verdict over the last " TK_STR(BT_WINDOW_MIN) " minutes this\n"
		   "often (default 60 with --prometheus, else 0: never)"),
	OPT_E_U32_D("metrics-peers", 0, "K", metrics_peers, 1, BT_METRICS_PEERS_MAX, TK_STR(BT_METRICS_PEERS),
		    "--prometheus: the worst peers named on /metrics; the\n"
		    "others sum as peer=\"other\""),
	OPT_E_STANDARD,
	OPT_E_CALL("help-detect", 0, NULL, help_detect,
		   "the records' fields and the detector's method"),
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP,
				  TK_EXIT_NONETNS, -1 };
static const struct opt_cli cli = { bt_help_synopsis, options, bt_help_footer, NULL, exit_codes };

/* what the options say together */
static void check_args(struct bt_env *env)
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
static void check_namespaces(const struct bt_env *env)
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

void bt_args_parse(int argc, char **argv, struct bt_env *env)
{
	int first = opt_parse(&cli, argc, argv, env);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	check_args(env);
	check_namespaces(env);
}
