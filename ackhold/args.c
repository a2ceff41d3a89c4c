// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold's command line: the option table and --help text, and the
 * parser of the value only ackhold takes (a repeated --port).
 */
#include <stdio.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "opt.h"
#include "progstats.h"

#include "ackhold/ackhold.h"
#include "ackhold/report.h"
#include "ackhold/rules.h"

#define MAX_HOLD_MS 60000 /* a minute: no ACK is held longer */
#define MIN_FLOWS 16
#define MAX_FLOWS 4194304
#define MAX_TOP 100

static const char synopsis[] =
"Usage: ackhold [OPTIONS]\n"
"\n"
"Run on the receiving host (an RTMP ingest, a CDN edge): how long this host\n"
"held each ACK of the TCP streams it receives, whether the delayed-ACK timer\n"
"sent it, and whether the sender waited on it. Per peer: the holds, the time\n"
"the sender waited on this host's ACKs and its share of the stream's time,\n"
"and Nagle's signature (a short segment, then silence until the ACK). It ends\n"
"with a verdict that names the peers held back and the narrowest fix.\n"
"\n"
"A hold is the time from the oldest data segment an ACK is the first to cover\n"
"to the ACK leaving this host, a pure ACK or data that carries it: what the\n"
"delayed-ACK timer held, or the application's answer that came first.\n"
"\n"
"Tracepoints only (tcp:tcp_probe, tcp:tcp_destroy_sock, net:net_dev_queue,\n"
"net:net_dev_start_xmit, timer:timer_expire_entry and timer_expire_exit): no\n"
"kprobes, no BPF trampolines. Other ports' segments are filtered in the\n"
"kernel; only reported holds and closing flows go up.\n"
"\n";

static void footer(FILE *f)
{
	fputs("\nRecords (-f), each a type and its keys:\n", f);
	rec_help_keys(f, &ah_hold_schema);
	rec_help_keys(f, &ah_peer_schema);
	rec_help_keys(f, &ah_verdict_schema);
	rec_help_keys(f, &tk_prog_stats_schema);
	fprintf(f,
		"A hold is written when the flow's next segment arrives; peer (worst first)\n"
		"and verdict at exit. ended_by: timer (the delayed-ACK timer), read or\n"
		"answer (this host's application read the data, or its data carried the\n"
		"ACK, before the timer), data (the sender's next data: harmless), repair\n"
		"(a lost segment's repair: the loss held it), late (no delayed ACK was\n"
		"scheduled: this host's CPU or its receive window held it), unseen (the ACK\n"
		"that ended it, or a segment with it, went by without the tracepoints\n"
		"showing it: its length not known). The sender\n"
		"waited when it was silent until the ACK, and its data came within %d RTTs\n"
		"(at least %d ms) after it; Nagle's signature is such a wait after a segment\n"
		"shorter than the MSS. Memory: %zu bytes of state per flow, in a hash map\n"
		"entry of about 0.5 KiB of kernel memory, taken as a flow comes and freed as\n"
		"it closes.\n"
		"Needs root (or CAP_BPF, CAP_PERFMON, and CAP_SYSLOG to read the delayed-ACK\n"
		"timer's address in /proc/kallsyms) and kernel BTF.\n",
		AH_WAIT_RTTS, AH_WAIT_FLOOR_MS, sizeof(struct ah_flow));
}

static int add_port(void *cfg, const char *opt, const char *val)
{
	struct options *o = cfg;
	uint16_t p;

	if (cli_parse_port(opt, val, &p))
		return -1;
	if (p == 0) {
		elog("%s: port 0 is no port a stream is received on", opt);
		return -1;
	}
	for (uint32_t i = 0; i < o->nports; i++)
		if (o->ports[i] == p)
			return 0;
	if (o->nports == AH_PORTS_MAX) {
		elog("%s: at most %d ports", opt, AH_PORTS_MAX);
		return -1;
	}
	o->ports[o->nports++] = p;
	return 0;
}

static const char *const records_names[] = { "holds", "none", NULL };

#define TK_OPT_CFG struct options
static const struct opt options[] = {
	OPT_E_CALL("port", 'p', "PORT", add_port,
		   "only streams received on this local port\n"
		   "(repeatable, up to " TK_STR(AH_PORTS_MAX) "; default: every port)"),
	OPT_E_DOUBLE_D("min-hold", 0, "MS", min_hold_ms, 0, MAX_HOLD_MS, AH_MIN_HOLD_MS_DEFAULT,
		       "report each hold this long, in ms, and each the\n"
		       "delayed-ACK timer ended"),
	OPT_E_U32_D("max-flows", 0, "N", max_flows, MIN_FLOWS, MAX_FLOWS, TK_STR(AH_FLOWS_DEFAULT),
		    "flows tracked at once; past N a new flow's segments\n"
		    "are counted untracked, and the verdict says so"),
	OPT_E_CHOICE_D("records", 0, "WHAT", records, records_names, "holds",
		       "holds, or none (the peers and the verdict only)"),
	OPT_E_U32_D("top", 0, "N", top, 1, MAX_TOP, "3", "peers the verdict names; the rest are counted"),
	OPT_E_ENDPOINT("prometheus", 0, prometheus,
		   "serve /metrics on ADDR:PORT while tracing (e.g.\n"
		   "127.0.0.1:9437): the host's counts, and the peers\n"
		   "held back most in the last " TK_STR(AH_WINDOW_MIN) " minutes"),
	OPT_E_U32_D("metrics-peers", 0, "K", metrics_peers, 1, AH_METRICS_PEERS_MAX, TK_STR(AH_METRICS_PEERS),
		    "--prometheus: the worst peers named on /metrics; the\n"
		    "rest are summed as peer=\"other\""),
	OPT_E_FLAG("stats", 0, stats, "each BPF program's runs and ns/run at exit: a\n"
		   "prog_stats record, and a table on stderr"),
	OPT_E_FORMAT(out.format, out.format_set),
	OPT_E_OUTPUT(out.path, "write the records to FILE instead of stdout"),
	OPT_E_DURATION(duration_s, "stop after SECONDS (default: until Ctrl-C)"),
	OPT_E_STANDARD,
	OPT_E_END,
};

static const int exits[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP, -1 };

static const struct opt_cli cli = {
	.synopsis = synopsis,
	.opts = options,
	.footer_fn = footer,
	.exits = exits,
};

void parse_args(int argc, char **argv, struct options *o)
{
	int first = opt_parse(&cli, argc, argv, o);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
}
