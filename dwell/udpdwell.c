// SPDX-License-Identifier: GPL-2.0-only
/*
 * udpdwell: is the media server slow, or is the network bad?
 *
 * For every UDP socket in a port range, how long each datagram waits in the
 * socket's receive queue before the application reads it (dwell time), and
 * the datagrams the kernel drops for it, by reason. Aggregated in the kernel
 * (bpf/contract/udpdwell.h, bpf/udpdwell.bpf.h); user space reads the maps once per
 * interval and prints a top-like table, CSV or JSON lines, and serves
 * Prometheus metrics.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "cli.h"
#include "common.h"
#include "log.h"
#include "prom.h"
#include "record.h"

#include "backend.h"
#include "owner.h"
#include "udpdwell_ref.skel.h"
#include "reasons.h"
#include "snapshot.h"
#include "stats.h"

#define DEFAULT_WARN_US 5000
#define DEFAULT_ALERT_US 20000

static const char usage[] =
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
"Options:\n"
"  -b, --backend NAME     auto|fentry|kprobe|tracepoint (default auto)\n"
"                         fentry: fentry/fexit on __udp_enqueue_schedule_skb\n"
"                           (dated at its start, counted only when it succeeds)\n"
"                           and fexit on udp_recvmsg/udpv6_recvmsg\n"
"                         kprobe: the same hooks with kprobe/kretprobe\n"
"                         tracepoint: sock:sk_data_ready and sock:sock_recv_length\n"
"                           (kernel 6.3+); needs neither kprobes nor trampolines\n"
"                         auto tries them in that order and prints in one line\n"
"                         which one runs and why the others were refused.\n"
"                         Drops come from skb:kfree_skb (its rx_sk names the\n"
"                         socket) or, on kernels without rx_sk, from\n"
"                         udp:udp_fail_queue_rcv_skb (buffer drops only).\n"
"  -p, --ports LO-HI      local ports to watch; one port is PORT (default 10000-60000)\n"
"  -i, --interval S       seconds per interval, 0.1..3600 (default 1)\n"
"      --once             print one interval, then exit\n"
"  -c, --count N          stop after N intervals (default: run until interrupted)\n"
"  -f, --format FMT       table|csv|json (default: table on a terminal, else json);\n"
"                         table refreshes in place, worst dwell first\n"
"      --warn-us US       WARN when the measure reaches US microseconds (default 5000)\n"
"      --alert-us US      ALERT when it reaches US microseconds (default 20000)\n"
"      --state-on WHAT    p99|max: the measure is the interval's estimated p99\n"
"                         (default) or its maximum. The age of the oldest datagram\n"
"                         still waiting counts too, so a stuck reader alerts. Any\n"
"                         SOCKET_RCVBUFF or PROTO_MEM drop in the interval is ALERT.\n"
"      --prometheus ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                         ([::1]:PORT for IPv6): udp_socket_dwell_seconds (histogram),\n"
"                         udp_socket_drops_total, udp_socket_state (0 OK, 1 WARN,\n"
"                         2 ALERT), udp_socket_queue_length\n"
"      --max-sockets N    sockets tracked at once, 16..65536 (default 512; 16.3 KiB\n"
"                         of kernel memory each, plus 128 bytes per CPU). When all\n"
"                         are taken, a new socket takes the place of the least\n"
"                         recently active one (LRU, approximated by a CLOCK hand as\n"
"                         the kernel's LRU maps do), and evictions are counted.\n"
"      --all              list idle sockets too\n"
"      --top N            show at most N sockets per interval (default: all)\n"
"      --legacy-drops     count drops through udp:udp_fail_queue_rcv_skb, as on\n"
"                         kernels whose kfree_skb has no rx_sk\n"
"      --bpf-stats        turn on BPF run-time statistics and print, per interval,\n"
"                         each program's runs and cost (bpf_prog records)\n"
"      --bpf-reference    with --bpf-stats, also attach empty programs to the\n"
"                         tracepoint backend's hooks: their cost per run is the\n"
"                         floor (dispatch and the statistics' own clock reads)\n"
"  -v, --verbose          more detail on stderr (-vv: libbpf's debug output)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"Output, per interval (all figures cover that interval only):\n"
"  one \"interval\" record: time, interval_s, backend, sockets shown, tracked,\n"
"    packets, unmatched reads, FIFO resynchronisations, evicted sockets;\n"
"  one \"socket\" record per socket: port, addr, pid, comm (the last reader, or\n"
"    the process holding the socket), packets (reads), avg_us, p50_us, p99_us,\n"
"    max_us, queue_len (datagrams waiting), buckets, drops {reason: count}, state.\n"
"  p50/p99 are estimated from the 9 buckets by linear interpolation. The buckets\n"
"  follow Prometheus le semantics (upper-inclusive): <=10us, <=50us, <=100us,\n"
"  <=500us, <=1ms, <=5ms, <=10ms, <=50ms, >50ms; exactly 10 us is in the first.\n"
"  Drop reasons are the kernel's enum skb_drop_reason names, read from its BTF.\n"
"\n"
"Exit status: 0 success (also after Ctrl-C, which prints the interval in\n"
"progress), 1 runtime failure, 2 bad arguments, 3 missing privilege (root or\n"
"CAP_BPF+CAP_PERFMON), 4 the kernel lacks what every backend needs.\n";

enum {
	OPT_ONCE = 1000,
	OPT_WARN,
	OPT_ALERT,
	OPT_STATE_ON,
	OPT_PROM,
	OPT_MAX_SOCKETS,
	OPT_ALL,
	OPT_TOP,
	OPT_LEGACY_DROPS,
	OPT_BPF_STATS,
	OPT_BPF_REF,
};

struct options {
	enum ud_backend backend;
	uint16_t port_lo, port_hi;
	double interval_s;
	uint64_t count;          /* 0: unlimited */
	enum rec_format format;
	bool format_set;
	struct ud_thresholds thr;
	const char *prometheus;
	uint32_t max_sockets;
	bool all;
	uint32_t top;
	bool legacy_drops;
	bool bpf_stats;
	bool bpf_reference;
};

/* the state shared with the Prometheus thread, under lock */
struct ud_ctx {
	pthread_mutex_t lock;
	struct options *o;
	struct ud_bpf bpf;
	struct ud_reasons reasons;
	uint32_t reason_rcvbuff, reason_proto_mem;
	struct ud_snapshot cur, prev, scrape;
	uint64_t interval_start_ns;
	uint64_t interval_start_epoch;
	uint64_t evicted;
	/* the state of each socket at the last interval, for the gauge */
	struct ud_keystate {
		uint64_t key;
		enum ud_state state;
		uint32_t pid;
		char comm[16];
	} *states;
	unsigned int nstates;
	/* owners found through /proc for sockets nobody has read yet */
	struct ud_owner_query *owners;
	unsigned int nowners, capowners;
	struct ud_row *rows;
	unsigned int caprows;
	struct rec_writer *w;
	bool tty;
	struct bpf_object *ref_obj; /* --bpf-reference */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int parse_ports(const char *opt, const char *s, uint16_t *lo, uint16_t *hi)
{
	const char *dash = strchr(s, '-');
	char first[16];

	if (!dash)
		return cli_parse_port(opt, s, lo) ? -1 : (*hi = *lo, 0);
	if ((size_t)(dash - s) >= sizeof(first) || dash == s) {
		elog("%s: '%s' is not PORT or LO-HI", opt, s);
		return -1;
	}
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	if (cli_parse_port(opt, first, lo) || cli_parse_port(opt, dash + 1, hi))
		return -1;
	if (*lo > *hi) {
		elog("%s: '%s' has its low port above its high port", opt, s);
		return -1;
	}
	return 0;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "ports", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "count", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "warn-us", required_argument, NULL, OPT_WARN },
		{ "alert-us", required_argument, NULL, OPT_ALERT },
		{ "state-on", required_argument, NULL, OPT_STATE_ON },
		{ "prometheus", required_argument, NULL, OPT_PROM },
		{ "max-sockets", required_argument, NULL, OPT_MAX_SOCKETS },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "legacy-drops", no_argument, NULL, OPT_LEGACY_DROPS },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "bpf-reference", no_argument, NULL, OPT_BPF_REF },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const state_on[] = { "p99", "max", NULL };
	struct sockaddr_storage ss;
	socklen_t sslen;
	int c, idx, verbose = 0;
	bool quiet = false;

	o->backend = UD_BACKEND_AUTO;
	o->port_lo = 10000;
	o->port_hi = 60000;
	o->interval_s = 1;
	o->thr.warn_us = DEFAULT_WARN_US;
	o->thr.alert_us = DEFAULT_ALERT_US;
	o->thr.on = UD_STATE_ON_P99;
	o->max_sockets = UD_DEFAULT_SOCKETS;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:p:i:c:f:vqhV", longs, NULL)) != -1) {
		uint32_t u32;

		switch (c) {
		case 'b':
			if (cli_parse_choice("--backend", optarg, ud_backend_names, &idx))
				exit(TK_EXIT_USAGE);
			o->backend = (enum ud_backend)idx;
			break;
		case 'p':
			if (parse_ports("--ports", optarg, &o->port_lo, &o->port_hi))
				exit(TK_EXIT_USAGE);
			break;
		case 'i':
			if (cli_parse_double("--interval", optarg, 0.1, 3600, &o->interval_s))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_ONCE:
			o->count = 1;
			break;
		case 'c':
			if (cli_parse_u64("--count", optarg, 1, UINT32_MAX, &o->count))
				exit(TK_EXIT_USAGE);
			break;
		case 'f':
			if (rec_format_parse("--format", optarg, &o->format))
				exit(TK_EXIT_USAGE);
			o->format_set = true;
			break;
		case OPT_WARN:
			if (cli_parse_u32("--warn-us", optarg, 1, 3600000000U, &u32))
				exit(TK_EXIT_USAGE);
			o->thr.warn_us = u32;
			break;
		case OPT_ALERT:
			if (cli_parse_u32("--alert-us", optarg, 1, 3600000000U, &u32))
				exit(TK_EXIT_USAGE);
			o->thr.alert_us = u32;
			break;
		case OPT_STATE_ON:
			if (cli_parse_choice("--state-on", optarg, state_on, &idx))
				exit(TK_EXIT_USAGE);
			o->thr.on = (enum ud_state_on)idx;
			break;
		case OPT_PROM:
			if (prom_parse_listen("--prometheus", optarg, &ss, &sslen))
				exit(TK_EXIT_USAGE);
			o->prometheus = optarg;
			break;
		case OPT_MAX_SOCKETS:
			if (cli_parse_u32("--max-sockets", optarg, 16, 65536, &o->max_sockets))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_TOP:
			if (cli_parse_u32("--top", optarg, 1, 1000000, &o->top))
				exit(TK_EXIT_USAGE);
			break;
		case OPT_LEGACY_DROPS:
			o->legacy_drops = true;
			break;
		case OPT_BPF_STATS:
			o->bpf_stats = true;
			break;
		case OPT_BPF_REF:
			o->bpf_reference = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(TK_EXIT_OK);
		case 'V':
			cli_print_version();
			exit(TK_EXIT_OK);
		default:
			cli_getopt_die(c, argv);
		}
	}
	if (optind < argc)
		cli_usage_die("%s: unexpected argument (see --help)", argv[optind]);
	if (o->bpf_reference && !o->bpf_stats)
		cli_usage_die("--bpf-reference: only with --bpf-stats");
	if (o->thr.warn_us > o->thr.alert_us)
		cli_usage_die("--warn-us: %.0f is above --alert-us %.0f", o->thr.warn_us,
			      o->thr.alert_us);
	log_set_level(quiet ? LOG_QUIET : verbose);
}

/* --- records ------------------------------------------------------------------ */

static const struct rec_field socket_fields[] = {
	{ "port", REC_U64, 0, "PORT", 5 },
	{ "addr", REC_STR, 0, "ADDR", -20 },
	{ "pid", REC_U64, 0, "PID", 7 },
	{ "comm", REC_STR, 0, "COMM", -15 },
	{ "packets", REC_U64, 0, "PKTS", 7 },
	{ "avg_us", REC_F64, 1, "AVG us", 9, 0, 1 },
	{ "p50_us", REC_F64, 1, "P50 us", 9, 0, 1 },
	{ "p99_us", REC_F64, 1, "P99 us", 9, 0, 1 },
	{ "max_us", REC_F64, 1, "MAX us", 10, 0, 1 },
	{ "queue_len", REC_U64, 0, "QUEUE", 5 },
	{ "buckets", REC_U64_LIST, 0, "<=10us/50/100/500us/1ms/5/10/50ms/>50ms", -40 },
	{ "drops", REC_KV, 0, "DROPS", -24 },
	{ "state", REC_STR, 0, "STATE", -5 },
};
static const struct rec_schema socket_schema = { "socket", socket_fields,
						  ARRAY_SIZE(socket_fields) };

static const struct rec_field interval_fields[] = {
	{ "time", REC_STR, 0, "TIME (UTC)", -24 },
	{ "interval_s", REC_F64, 3, "INTERVAL s", 10, 0, 1 },
	{ "backend", REC_STR, 0, "BACKEND", -10 },
	{ "sockets", REC_U64, 0, "SOCKETS", 7 },
	{ "tracked", REC_U64, 0, "TRACKED", 7 },
	{ "packets", REC_U64, 0, "PKTS", 8 },
	{ "unmatched", REC_U64, 0, "UNMATCHED", 9 },
	{ "resync_added", REC_U64, 0, "RESYNC+", 7 },
	{ "resync_dropped", REC_U64, 0, "RESYNC-", 7 },
	{ "ring_full", REC_U64, 0, "RINGFULL", 8 },
	{ "evicted", REC_U64, 0, "EVICTED", 7 },
};
static const struct rec_schema interval_schema = { "interval", interval_fields,
						    ARRAY_SIZE(interval_fields) };

static const struct rec_field bpf_fields[] = {
	{ "prog", REC_STR, 0, "BPF PROGRAM", -22 },
	{ "run_cnt", REC_U64, 0, "RUNS", 12 },
	{ "run_time_ns", REC_U64, 0, "TIME ns", 14 },
	{ "ns_per_run", REC_F64, 1, "ns/RUN", 8, 0, 1 },
};
static const struct rec_schema bpf_schema = { "bpf_prog", bpf_fields, ARRAY_SIZE(bpf_fields) };

static void iso_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", base, (int)(ts.tv_nsec / 1000000) % 1000);
}

static struct rec_value f64_or_null(double d) { return isnan(d) ? rv_null() : rv_f64(d); }

static int write_socket(struct ud_ctx *c, const struct ud_row *r)
{
	struct rec_kv kv[UD_MAX_REASONS];
	char names[UD_MAX_REASONS][32];
	struct rec_value v[ARRAY_SIZE(socket_fields)];

	for (unsigned int i = 0; i < r->ndrops; i++) {
		kv[i].key = ud_reason_name(&c->reasons, r->drops[i].reason, names[i], sizeof(names[i]));
		kv[i].val = r->drops[i].count;
	}
	v[0] = rv_u64(r->port);
	v[1] = rv_str(r->addr);
	v[2] = r->pid ? rv_u64(r->pid) : rv_null();
	v[3] = r->comm[0] ? rv_str(r->comm) : rv_null();
	v[4] = rv_u64(r->d.packets);
	v[5] = f64_or_null(r->avg_us);
	v[6] = f64_or_null(r->p50_us);
	v[7] = f64_or_null(r->p99_us);
	v[8] = f64_or_null(r->max_us);
	v[9] = rv_u64(r->queue_len);
	v[10] = rv_list(r->d.buckets, UD_NBUCKETS);
	v[11] = rv_kv(kv, r->ndrops);
	v[12] = rv_str(ud_state_name(r->state));
	return rec_write(c->w, &socket_schema, v);
}

static int write_bpf_stats(struct ud_ctx *c, struct bpf_object *obj)
{
	struct bpf_program *p;

	if (!obj)
		return 0;
	bpf_object__for_each_program(p, obj) {
		struct rec_value v[ARRAY_SIZE(bpf_fields)];
		uint64_t t = 0, n = 0;
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpfu_prog_stats(fd, &t, &n))
			continue;
		v[0] = rv_str(bpf_program__name(p));
		v[1] = rv_u64(n);
		v[2] = rv_u64(t);
		v[3] = n ? rv_f64((double)t / (double)n) : rv_null();
		if (rec_write(c->w, &bpf_schema, v))
			return -1;
	}
	return 0;
}

/* --- owners ------------------------------------------------------------------- */

static struct ud_owner_query *owner_find(struct ud_ctx *c, uint64_t ino)
{
	for (unsigned int i = 0; i < c->nowners; i++)
		if (c->owners[i].ino == ino)
			return &c->owners[i];
	return NULL;
}

/*
 * Resolve through /proc the sockets that have no reader yet, and the idle
 * ones with datagrams waiting: a socket nobody holds any more is closed, and
 * its entry is deleted.
 */
static void resolve_owners(struct ud_ctx *c, struct ud_row *rows, unsigned int n)
{
	unsigned int need = 0;

	c->nowners = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (!rows[i].ino || !(rows[i].pid == 0 || rows[i].idle_waiting))
			continue;
		if (c->nowners == c->capowners) {
			unsigned int ncap = c->capowners ? c->capowners * 2 : 16;
			struct ud_owner_query *p = realloc(c->owners, ncap * sizeof(*p));

			if (!p)
				return;
			c->owners = p;
			c->capowners = ncap;
		}
		c->owners[c->nowners++].ino = rows[i].ino;
		need++;
	}
	if (!need || ud_owner_resolve("/proc", c->owners, c->nowners) < 0)
		return;
	for (unsigned int i = 0; i < n; i++) {
		struct ud_owner_query *q;

		if (!rows[i].ino || !(rows[i].pid == 0 || rows[i].idle_waiting))
			continue;
		q = owner_find(c, rows[i].ino);
		if (!q)
			continue;
		if (q->pid && !rows[i].pid) {
			rows[i].pid = q->pid;
			memcpy(rows[i].comm, q->comm, sizeof(rows[i].comm));
		} else if (!q->pid && rows[i].idle_waiting) {
			/* closed: its queue was purged; give its slot back */
			ud_bpf_forget(&c->bpf, rows[i].key);
			rows[i].active = false;
		}
	}
}

/* --- one interval -------------------------------------------------------------- */

static uint64_t counter(struct ud_ctx *c, uint32_t idx)
{
	return bpfu_percpu_sum(c->bpf.counters_fd, idx);
}

static void update_evicted(struct ud_ctx *c)
{
	c->evicted = counter(c, UD_CNT_EVICTED);
}

static struct ud_source source_of(const struct ud_ctx *c)
{
	return (struct ud_source){ .state = c->bpf.state, .nslots = c->bpf.nslots,
				   .stats_fd = c->bpf.stats_fd, .drops_fd = c->bpf.drops_fd };
}

static int keystate_cmp(const void *a, const void *b)
{
	const struct ud_keystate *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* reads the maps, closes the interval, writes its records; returns 0 or -1 */
static int interval(struct ud_ctx *c, bool last)
{
	struct options *o = c->o;
	uint64_t epoch, now, since = c->interval_start_ns;
	struct ud_source src = source_of(c);
	struct ud_snapshot tmp;
	unsigned int nrows = 0, shown;
	struct ud_cumul tot = { 0 };
	char tbuf[40];
	int err;

	pthread_mutex_lock(&c->lock);
	epoch = *c->bpf.epoch;
	__atomic_store_n(c->bpf.epoch, epoch + 1, __ATOMIC_SEQ_CST);
	now = mono_ns();
	err = ud_snapshot_read(&c->cur, &src, epoch, true);
	if (err) {
		pthread_mutex_unlock(&c->lock);
		elog("cannot read the socket map: %s", strerror(-err));
		return -1;
	}
	if (c->caprows < c->cur.n) {
		struct ud_row *p = realloc(c->rows, c->cur.n * sizeof(*p));

		if (!p) {
			pthread_mutex_unlock(&c->lock);
			elog("out of memory");
			return -1;
		}
		c->rows = p;
		c->caprows = c->cur.n;
	}
	for (unsigned int i = 0; i < c->cur.n; i++) {
		const struct ud_entry *e = &c->cur.e[i];

		ud_row_build(&c->rows[nrows++], e, ud_snapshot_find(&c->prev, e->key), &o->thr,
			     c->reason_rcvbuff, c->reason_proto_mem, now, since);
	}
	resolve_owners(c, c->rows, nrows);
	update_evicted(c);

	/* keep each socket's state and owner for the Prometheus gauge */
	free(c->states);
	c->states = calloc(nrows ? nrows : 1, sizeof(*c->states));
	c->nstates = 0;
	for (unsigned int i = 0; c->states && i < nrows; i++) {
		struct ud_keystate *k = &c->states[c->nstates++];

		k->key = c->rows[i].key;
		k->state = c->rows[i].state;
		k->pid = c->rows[i].pid;
		memcpy(k->comm, c->rows[i].comm, sizeof(k->comm));
	}
	if (c->nstates)
		qsort(c->states, c->nstates, sizeof(*c->states), keystate_cmp);

	/* this reading is the next interval's baseline */
	tmp = c->prev;
	c->prev = c->cur;
	c->cur = tmp;
	c->interval_start_ns = now;
	pthread_mutex_unlock(&c->lock);

	if (nrows)
		qsort(c->rows, nrows, sizeof(*c->rows), ud_row_cmp_worst);
	shown = 0;
	for (unsigned int i = 0; i < nrows; i++) {
		struct ud_row *r = &c->rows[i];

		tot.packets += r->d.packets;
		tot.unmatched += r->d.unmatched;
		tot.resync_added += r->d.resync_added;
		tot.resync_dropped += r->d.resync_dropped;
		tot.ring_full += r->d.ring_full;
		if (r->active || o->all)
			shown++;
	}
	if (o->top && shown > o->top)
		shown = o->top;

	if (c->tty && o->format == REC_TABLE && !(o->count == 1))
		fputs("\033[H\033[J", stdout);
	{
		struct rec_value v[ARRAY_SIZE(interval_fields)];

		iso_time(tbuf, sizeof(tbuf));
		v[0] = rv_str(tbuf);
		v[1] = rv_f64((double)(now - since) / 1e9);
		v[2] = rv_str(ud_backend_names[c->bpf.kind]);
		v[3] = rv_u64(shown);
		v[4] = rv_u64(c->prev.n);
		v[5] = rv_u64(tot.packets);
		v[6] = rv_u64(tot.unmatched);
		v[7] = rv_u64(tot.resync_added);
		v[8] = rv_u64(tot.resync_dropped);
		v[9] = rv_u64(tot.ring_full);
		v[10] = rv_u64(c->evicted);
		if (rec_write(c->w, &interval_schema, v))
			goto write_err;
	}
	for (unsigned int i = 0, k = 0; i < nrows && k < shown; i++) {
		if (!(c->rows[i].active || o->all))
			continue;
		k++;
		if (write_socket(c, &c->rows[i]))
			goto write_err;
	}
	if (o->bpf_stats && (write_bpf_stats(c, c->bpf.obj) || write_bpf_stats(c, c->ref_obj)))
		goto write_err;
	if (c->w && rec_writer_format(c->w) != REC_JSON)
		rec_writer_reset_header(c->w);
	if (rec_writer_flush(c->w))
		goto write_err;
	(void)last;
	return 0;
write_err:
	elog("cannot write the output: %s", strerror(errno));
	return -1;
}

/* --- Prometheus ------------------------------------------------------------------ */

static const struct ud_keystate *keystate_find(const struct ud_ctx *c, uint64_t key)
{
	struct ud_keystate k = { .key = key };

	return c->nstates ? bsearch(&k, c->states, c->nstates, sizeof(*c->states), keystate_cmp)
			  : NULL;
}

/* one series per (port, addr, pid, comm): sockets sharing them are summed */
struct series {
	uint16_t port;
	char addr[48];
	uint32_t pid;
	char comm[16];
	uint64_t buckets[UD_NBUCKETS];
	uint64_t sum_ns;
	uint64_t queue_len;
	enum ud_state state;
	struct ud_drop_count drops[UD_MAX_REASONS];
	unsigned int ndrops;
};

static int series_cmp(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int d;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if ((d = strcmp(x->addr, y->addr)))
		return d;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

static int render_metrics(struct prom_buf *b, void *arg)
{
	static const double le_s[UD_NBUCKETS - 1] = { 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2 };
	struct ud_ctx *c = arg;
	struct ud_source src = source_of(c);
	struct series *s = NULL;
	unsigned int n = 0;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	if (ud_snapshot_read(&c->scrape, &src, *c->bpf.epoch, false)) {
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	s = calloc(c->scrape.n ? c->scrape.n : 1, sizeof(*s));
	if (!s) {
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	for (unsigned int i = 0; i < c->scrape.n; i++) {
		const struct ud_entry *e = &c->scrape.e[i];
		const struct ud_keystate *k = keystate_find(c, e->key);
		struct series *x = &s[n++];

		x->port = e->port;
		cli_fmt_v6mapped(e->addr, x->addr, sizeof(x->addr));
		x->pid = e->tgid ? e->tgid : (k ? k->pid : 0);
		snprintf(x->comm, sizeof(x->comm), "%s", e->tgid ? e->comm : (k ? k->comm : ""));
		memcpy(x->buckets, e->cumul.buckets, sizeof(x->buckets));
		x->sum_ns = e->cumul.sum_ns;
		x->queue_len = e->queue_len;
		x->state = k ? k->state : UD_OK;
		x->ndrops = e->ndrops;
		memcpy(x->drops, e->drops, sizeof(x->drops));
	}
	qsort(s, n, sizeof(*s), series_cmp);
	/* merge equal label sets */
	if (n > 1) {
		unsigned int w = 0;

		for (unsigned int r = 1; r < n; r++) {
			struct series *a = &s[w], *x = &s[r];

			if (series_cmp(a, x)) {
				s[++w] = *x;
				continue;
			}
			for (int i = 0; i < UD_NBUCKETS; i++)
				a->buckets[i] += x->buckets[i];
			a->sum_ns += x->sum_ns;
			a->queue_len += x->queue_len;
			if (x->state > a->state)
				a->state = x->state;
			for (unsigned int i = 0; i < x->ndrops; i++) {
				unsigned int j;

				for (j = 0; j < a->ndrops; j++)
					if (a->drops[j].reason == x->drops[i].reason)
						break;
				if (j < a->ndrops)
					a->drops[j].count += x->drops[i].count;
				else if (a->ndrops < UD_MAX_REASONS)
					a->drops[a->ndrops++] = x->drops[i];
			}
		}
		n = w + 1;
	}

	err |= prom_family(b, "udp_socket_dwell_seconds", PROM_HISTOGRAM,
			   "Time each datagram waited in the socket receive queue, from the "
			   "kernel's enqueue to the application's read.");
	for (unsigned int i = 0; i < n; i++) {
		char port[8], pid[12];
		struct prom_label l[4] = { { "port", port }, { "addr", s[i].addr },
					   { "pid", pid }, { "comm", s[i].comm } };

		snprintf(port, sizeof(port), "%u", s[i].port);
		snprintf(pid, sizeof(pid), "%u", s[i].pid);
		err |= prom_histogram(b, "udp_socket_dwell_seconds", l, 4, le_s, s[i].buckets,
				      UD_NBUCKETS - 1, (double)s[i].sum_ns / 1e9);
	}
	err |= prom_family(b, "udp_socket_drops_total", PROM_COUNTER,
			   "Datagrams the kernel dropped for the socket, by drop reason "
			   "(enum skb_drop_reason of the running kernel).");
	for (unsigned int i = 0; i < n; i++) {
		char port[8], pid[12], rbuf[32];

		snprintf(port, sizeof(port), "%u", s[i].port);
		snprintf(pid, sizeof(pid), "%u", s[i].pid);
		for (unsigned int j = 0; j < s[i].ndrops; j++) {
			struct prom_label l[5] = {
				{ "port", port }, { "addr", s[i].addr }, { "pid", pid },
				{ "comm", s[i].comm },
				{ "reason", ud_reason_name(&c->reasons, s[i].drops[j].reason, rbuf,
							   sizeof(rbuf)) },
			};

			err |= prom_sample_u64(b, "udp_socket_drops_total", l, 5, s[i].drops[j].count);
		}
	}
	err |= prom_family(b, "udp_socket_state", PROM_GAUGE,
			   "The socket's state at the last interval: 0 OK, 1 WARN, 2 ALERT.");
	for (unsigned int i = 0; i < n; i++) {
		char port[8], pid[12];
		struct prom_label l[4] = { { "port", port }, { "addr", s[i].addr },
					   { "pid", pid }, { "comm", s[i].comm } };

		snprintf(port, sizeof(port), "%u", s[i].port);
		snprintf(pid, sizeof(pid), "%u", s[i].pid);
		err |= prom_sample(b, "udp_socket_state", l, 4, (double)s[i].state);
	}
	err |= prom_family(b, "udp_socket_queue_length", PROM_GAUGE,
			   "Datagrams waiting in the receive queue at the socket's last event.");
	for (unsigned int i = 0; i < n; i++) {
		char port[8], pid[12];
		struct prom_label l[4] = { { "port", port }, { "addr", s[i].addr },
					   { "pid", pid }, { "comm", s[i].comm } };

		snprintf(port, sizeof(port), "%u", s[i].port);
		snprintf(pid, sizeof(pid), "%u", s[i].pid);
		err |= prom_sample_u64(b, "udp_socket_queue_length", l, 4, s[i].queue_len);
	}
	err |= prom_family(b, "udpdwell_sockets_evicted_total", PROM_COUNTER,
			   "Sockets evicted from the bounded (LRU) socket map.");
	err |= prom_sample_u64(b, "udpdwell_sockets_evicted_total", NULL, 0, c->evicted);
	err |= prom_family(b, "udpdwell_sockets_tracked", PROM_GAUGE,
			   "Sockets in the kernel's socket map.");
	err |= prom_sample_u64(b, "udpdwell_sockets_tracked", NULL, 0, c->scrape.n);
	pthread_mutex_unlock(&c->lock);
	free(s);
	return err ? -1 : 0;
}

/* --- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct ud_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER, .o = &o };
	struct ud_bpf_opts bo = { 0 };
	struct udpdwell_ref_bpf *ref = NULL;
	struct prom_server *prom = NULL;
	struct itimerspec its = { 0 };
	int res;
	int sfd = -1, tfd = -1, stats_fd = -1, rc = TK_EXIT_FAIL;
	uint64_t intervals = 0;
	const char *nobtf;
	char why[1024];
	sigset_t mask;

	log_init(argv[0]);
	parse_args(argc, argv, &o);
	if (!o.format_set)
		o.format = rec_format_default(stdout);
	c.tty = isatty(STDOUT_FILENO);
	bpfu_setup_libbpf();

	if (bpfu_check_privileges(false, why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if ((nobtf = bpfu_btf_missing())) {
		elog("%s", nobtf);
		return TK_EXIT_NOTSUP;
	}
	if (ud_reasons_load(&c.reasons, NULL)) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	if (!ud_reason_value(&c.reasons, "SOCKET_RCVBUFF", &c.reason_rcvbuff))
		c.reason_rcvbuff = UD_REASON_LEGACY_RCVBUFF;
	if (!ud_reason_value(&c.reasons, "PROTO_MEM", &c.reason_proto_mem))
		c.reason_proto_mem = UD_REASON_LEGACY_PROTO_MEM;

	bo.port_lo = o.port_lo;
	bo.port_hi = o.port_hi;
	bo.max_sockets = o.max_sockets;
	bo.legacy_drops = o.legacy_drops;
	bo.reason_rcvbuff = c.reason_rcvbuff;
	bo.reason_proto_mem = c.reason_proto_mem;
	res = ud_bpf_open(o.backend, &bo, &c.bpf);
	if (res != TK_EXIT_OK) {
		elog("%s", c.bpf.summary);
		ud_reasons_free(&c.reasons);
		return res;
	}
	if (o.bpf_stats) {
		stats_fd = bpfu_enable_stats();
		if (stats_fd < 0) {
			elog("cannot turn on BPF run-time statistics: %s", strerror(-stats_fd));
			goto out;
		}
	}
	if (o.bpf_reference) {
		ref = udpdwell_ref_bpf__open_and_load();
		if (!ref || udpdwell_ref_bpf__attach(ref)) {
			elog("--bpf-reference: cannot attach the reference programs: %s", strerror(errno));
			goto out;
		}
		c.ref_obj = ref->obj;
	}
	/* once everything counts: scripts start their traffic at this line */
	ilog("%s", c.bpf.summary);
	vlog("drops counted through %s", c.bpf.legacy_drops ? "udp:udp_fail_queue_rcv_skb"
							      : "skb:kfree_skb (rx_sk)");
	vlog("watching local ports %u-%u, at most %u sockets", o.port_lo, o.port_hi,
	     o.max_sockets);
	c.w = rec_writer_new(o.format, stdout);
	if (!c.w) {
		elog("out of memory");
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (sfd < 0 || tfd < 0) {
		elog("cannot set up the timer: %s", strerror(errno));
		goto out;
	}
	its.it_interval.tv_sec = (time_t)o.interval_s;
	its.it_interval.tv_nsec = (long)((o.interval_s - floor(o.interval_s)) * 1e9);
	its.it_value = its.it_interval;
	c.interval_start_ns = mono_ns();
	if (timerfd_settime(tfd, 0, &its, NULL)) {
		elog("cannot set up the timer: %s", strerror(errno));
		goto out;
	}
	if (o.prometheus) {
		prom = prom_server_start(o.prometheus, render_metrics, &c, why, sizeof(why));
		if (!prom) {
			elog("--prometheus: %s", why);
			goto out;
		}
		ilog("serving Prometheus metrics on http://%s/metrics", o.prometheus);
	}

	for (;;) {
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { tfd, POLLIN, 0 } };
		uint64_t ticks;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			elog("poll: %s", strerror(errno));
			goto out;
		}
		if (p[0].revents) {
			/* Ctrl-C or SIGTERM: print the interval in progress, then stop */
			if (interval(&c, true))
				goto out;
			break;
		}
		if (p[1].revents && read(tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks)) {
			if (interval(&c, false))
				goto out;
			if (o.count && ++intervals >= o.count)
				break;
		}
	}
	rc = TK_EXIT_OK;
out:
	prom_server_stop(prom);
	if (c.w && rec_writer_free(c.w) && rc == TK_EXIT_OK) {
		elog("cannot write the output: %s", strerror(errno));
		rc = TK_EXIT_FAIL;
	}
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (stats_fd >= 0)
		close(stats_fd);
	udpdwell_ref_bpf__destroy(ref);
	ud_bpf_close(&c.bpf);
	ud_snapshot_free(&c.cur);
	ud_snapshot_free(&c.prev);
	ud_snapshot_free(&c.scrape);
	free(c.states);
	free(c.owners);
	free(c.rows);
	ud_reasons_free(&c.reasons);
	return rc;
}
