// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell's command line: the option table and --help text, the parser of
 * the value only udpdwell takes (a port range), and what the options say
 * together.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "dwellrec.h"
#include "log.h"
#include "opt.h"

#include "udpdwell.h"

#define XSTR(x) #x
#define STR(x) XSTR(x)

#define MIN_INTERVAL_S 0.1
#define MAX_INTERVAL_S 3600
#define MAX_THRESHOLD_US 3600000000U   /* an hour */
#define MIN_SOCKETS 16
#define MAX_SOCKETS 65536
#define MAX_TOP 1000000

static const char synopsis[] =
"Usage: udpdwell [OPTIONS]\n"
"\n"
"Is the media server slow, or is the network bad? For every UDP socket whose\n"
"local port is in a range, udpdwell measures how long each datagram waits in\n"
"the socket's receive queue between the kernel's enqueue and the application's\n"
"read (the dwell time), and counts the datagrams the kernel drops for the\n"
"socket, by reason. A server that holds packets shows long dwell times or\n"
"buffer drops; a bad network shows neither.\n"
"\n"
"Everything is aggregated in the kernel (BPF maps): no event per packet.\n"
"\n"
"Backends (--backend, default auto):\n"
"  fentry      fentry/fexit on __udp_enqueue_schedule_skb\n"
"              (dated at its start, counted only when it\n"
"              succeeds) and fexit on udp_recvmsg/udpv6_recvmsg\n"
"  kprobe      the same hooks with kprobe/kretprobe\n"
"  tracepoint  sock:sk_data_ready and sock:sock_recv_length (kernel 6.3+);\n"
"              needs neither kprobes nor trampolines\n"
"  auto        tries them in that order and prints in one line which one runs\n"
"              and why the others were refused\n"
"Drops come from skb:kfree_skb (its rx_sk names the socket) or, on kernels\n"
"without rx_sk, from udp:udp_fail_queue_rcv_skb (buffer drops only).\n"
"\n";

/* the output, with the buckets' labels from lib/dwellrec.h */
static void footer(FILE *f)
{
	fputs("\n"
	      "Output, per interval (all figures cover that interval only):\n"
	      "  one \"interval\" record: time, interval_s, backend, sockets shown, tracked,\n"
	      "    packets, unmatched reads, FIFO resynchronisations, evicted sockets,\n"
	      "    unattributed (reads of evicted sockets after their last interval: every\n"
	      "    read is in a socket record or counted here);\n"
	      "  one \"socket\" record per socket: port, addr, pid, comm\n"
	      "    (the last reader, or the process holding the socket),\n"
	      "    packets (reads), avg_us, p50_us, p99_us, max_us, queue_len\n"
	      "    (datagrams waiting), buckets, drops {reason: count}, state.\n"
	      "  p50/p99 are estimated from the " STR(UD_NBUCKETS) " buckets by linear interpolation. The\n"
	      "  buckets follow Prometheus le semantics (upper-inclusive):\n  ", f);
	for (int i = 0; i < UD_NBUCKETS; i++)
		fprintf(f, "%s%s", ud_bucket_name((unsigned int)i), i + 1 < UD_NBUCKETS ? ", " : ";\n");
	fprintf(f, "  exactly %g us is in the first.\n"
		   "  Drop reasons are the kernel's enum skb_drop_reason names, read from its BTF.\n"
		   "\n"
		   "Ctrl-C (or SIGTERM, SIGHUP) prints the interval in progress,\n"
		   "then exits 0. Needs root (or CAP_BPF and CAP_PERFMON, where\n"
		   "the kernel allows it: at kernel.perf_event_paranoid 3 some\n"
		   "kernels, Debian's 6.1 among them, want root) and kernel BTF.\n",
		ud_le_us[0]);
}

static int set_ports(void *cfg, const char *opt, const char *val)
{
	struct options *o = cfg;
	const char *dash = strchr(val, '-');
	char first[16];

	if (!dash)
		return cli_parse_port(opt, val, &o->port_lo) ? -1 : (o->port_hi = o->port_lo, 0);
	if ((size_t)(dash - val) >= sizeof(first) || dash == val) {
		elog("%s: '%s' is not PORT or LO-HI", opt, val);
		return -1;
	}
	memcpy(first, val, (size_t)(dash - val));
	first[dash - val] = '\0';
	if (cli_parse_port(opt, first, &o->port_lo) || cli_parse_port(opt, dash + 1, &o->port_hi))
		return -1;
	if (o->port_lo > o->port_hi) {
		elog("%s: '%s' has its low port above its high port", opt, val);
		return -1;
	}
	return 0;
}

static int set_once(void *cfg, const char *opt, const char *val)
{
	struct options *o = cfg;

	(void)opt;
	(void)val;
	o->intervals = 1;
	return 0;
}


static const char *const state_on_names[] = { "p99", "max", NULL };

#define TK_OPT_CFG struct options
static const struct opt options[] = {
	OPT_E_CHOICE_D("backend", 'b', "NAME", backend, ud_backend_names, "auto", "auto|fentry|kprobe|tracepoint"),
	OPT_E_CALL_D("ports", 'p', "LO-HI", set_ports, STR(DEFAULT_PORT_LO) "-" STR(DEFAULT_PORT_HI),
		     "local ports to watch; one port is PORT"),
	{ "interval", 0, OPT_SECONDS, "SECONDS",
	  "seconds per interval, " STR(MIN_INTERVAL_S) ".." STR(MAX_INTERVAL_S) ", decimals allowed",
	  OPT_AT(interval_s), MIN_INTERVAL_S, MAX_INTERVAL_S, .def = STR(DEFAULT_INTERVAL_S) },
	OPT_E_CALL("once", 0, NULL, set_once, "print one interval, then exit (--intervals 1)"),
	OPT_E_U64("intervals", 0, "N", intervals, 1, UINT32_MAX,
		  "stop after N intervals (default: until interrupted)"),
	OPT_E_DURATION(duration_s, "stop after SECONDS, printing the interval in\n"
				   "progress (default: until interrupted)"),
	OPT_E_FORMAT(out.format, out.format_set),
	OPT_E_OUTPUT(out.path, "write the records to FILE instead of stdout; the\n"
			       "table refreshes in place, worst dwell first, only on\n"
			       "a terminal"),
	OPT_E_U32_D("warn-us", 0, "US", warn_us, 1, MAX_THRESHOLD_US, STR(DEFAULT_WARN_US),
		    "WARN when the measure reaches US microseconds"),
	OPT_E_U32_D("alert-us", 0, "US", alert_us, 1, MAX_THRESHOLD_US, STR(DEFAULT_ALERT_US),
		    "ALERT when it reaches US microseconds"),
	OPT_E_CHOICE_D("state-on", 0, "WHAT", state_on, state_on_names, "p99",
		       "p99|max: the measure is the interval's estimated\n"
		       "p99 or its maximum. The age of the oldest datagram\n"
		       "still waiting counts too, so a stuck reader alerts.\n"
		       "Any SOCKET_RCVBUFF or PROTO_MEM drop in the\n"
		       "interval is ALERT."),
	OPT_E_ENDPOINT("prometheus", 0, prometheus,
		   "serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		   "([::1]:PORT for IPv6): udp_socket_dwell_seconds\n"
		   "(histogram), udp_socket_drops_total,\n"
		   "udp_socket_state (" UD_STATE_LEGEND "),\n"
		   "udp_socket_queue_length, udpdwell_sockets_tracked,\n"
		   "udpdwell_sockets_evicted_total and\n"
		   "udpdwell_unattributed_reads_total"),
	OPT_E_U32_D("max-sockets", 0, "N", max_sockets, MIN_SOCKETS, MAX_SOCKETS, STR(UD_DEFAULT_SOCKETS),
		    "sockets tracked at once, " STR(MIN_SOCKETS) ".." STR(MAX_SOCKETS) "; 16.3 KiB of\n"
		    "kernel memory each, plus 128 bytes per CPU. When all\n"
		    "are taken, a new socket takes the place of the least\n"
		    "recently active one (LRU, approximated by a CLOCK hand\n"
		    "as the kernel's LRU maps do), and evictions are\n"
		    "counted."),
	OPT_E_FLAG("all", 0, all, "list idle sockets too"),
	OPT_E_U32("top", 0, "N", top, 1, MAX_TOP, "show at most N sockets per interval (default: all)"),
	OPT_E_FLAG("legacy-drops", 0, legacy_drops, "count drops through udp:udp_fail_queue_rcv_skb, as\n"
						    "on kernels whose kfree_skb has no rx_sk"),
	OPT_E_FLAG("bpf-stats", 0, bpf_stats, "turn on BPF run-time statistics and\n"
					      "print, per interval, each program's\n"
					      "runs and cost (bpf_prog records)"),
	OPT_E_FLAG("bpf-reference", 0, bpf_reference,
		   "with --bpf-stats, also attach empty programs to the\n"
		   "tracepoint backend's hooks: their cost per run is the\n"
		   "floor (dispatch and the statistics' own clock reads)"),
	OPT_E_STANDARD,
	OPT_E_END,
};
#undef TK_OPT_CFG

static const int exit_codes[] = { TK_EXIT_OK, TK_EXIT_FAIL, TK_EXIT_USAGE, TK_EXIT_NOPERM, TK_EXIT_NOTSUP, -1 };
static const struct opt_cli cli = { synopsis, options, NULL, footer, exit_codes };

/* what the options say together */
static void check_args(struct options *o)
{
	if (o->bpf_reference && !o->bpf_stats)
		cli_usage_die("--bpf-reference: only with --bpf-stats");
	if (o->warn_us > o->alert_us)
		cli_usage_die("--warn-us: %u is above --alert-us %u", o->warn_us, o->alert_us);
	o->thr.warn_us = o->warn_us;
	o->thr.alert_us = o->alert_us;
	o->thr.on = (enum ud_state_on)o->state_on;
}

void parse_args(int argc, char **argv, struct options *o)
{
	int first = opt_parse(&cli, argc, argv, o);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	check_args(o);
}
