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
#include "dwellrec.h"
#include "log.h"
#include "opt.h"
#include "prom.h"
#include "record.h"
#include "recout.h"

#include "backend.h"
#include "owner.h"
#include "udpdwell_ref.skel.h"
#include "reasons.h"
#include "snapshot.h"
#include "stats.h"

#define XSTR(x) #x
#define STR(x) XSTR(x)

#define DEFAULT_PORT_LO 10000
#define DEFAULT_PORT_HI 60000
#define DEFAULT_INTERVAL_S 1
#define MIN_INTERVAL_S 0.1
#define MAX_INTERVAL_S 3600
#define DEFAULT_WARN_US 5000
#define DEFAULT_ALERT_US 20000
#define MAX_THRESHOLD_US 3600000000U   /* an hour */
#define MIN_SOCKETS 16
#define MAX_SOCKETS 65536
#define MAX_TOP 1000000

struct options {
	int backend;             /* enum ud_backend: --backend's index in ud_backend_names */
	uint16_t port_lo, port_hi;
	double interval_s;
	uint64_t intervals;      /* 0: until interrupted */
	double duration_s;       /* 0: until interrupted */
	struct rec_out out;
	uint32_t warn_us, alert_us;
	int state_on;            /* enum ud_state_on: --state-on's index */
	struct ud_thresholds thr; /* the three above, once checked */
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
	uint64_t evicted;
	struct ud_ledger ledger;     /* reads no socket record reports */
	uint64_t unattributed;       /* in the interval just closed */
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

/* what main opens and closes, besides the context */
struct run {
	struct udpdwell_ref_bpf *ref;
	struct prom_server *prom;
	int stats_fd;            /* --bpf-stats */
	int sig_fd;              /* SIGINT, SIGTERM and SIGHUP */
	int timer_fd;
	uint64_t start_ns, period_ns;
	uint64_t end_ns;         /* --duration's end; 0: none */
	uint64_t next_ns;        /* when the timer fires next */
	uint64_t intervals;      /* written so far */
};

/* --- the command line ----------------------------------------------------------------- */

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
"  fentry      fentry/fexit on __udp_enqueue_schedule_skb (dated at its start,\n"
"              counted only when it succeeds) and fexit on\n"
"              udp_recvmsg/udpv6_recvmsg\n"
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
	      "  one \"socket\" record per socket: port, addr, pid, comm (the last reader, or\n"
	      "    the process holding the socket), packets (reads), avg_us, p50_us, p99_us,\n"
	      "    max_us, queue_len (datagrams waiting), buckets, drops {reason: count},\n"
	      "    state.\n"
	      "  p50/p99 are estimated from the " STR(UD_NBUCKETS) " buckets by linear interpolation. The\n"
	      "  buckets follow Prometheus le semantics (upper-inclusive):\n  ", f);
	for (int i = 0; i < UD_NBUCKETS; i++)
		fprintf(f, "%s%s", ud_bucket_name((unsigned int)i), i + 1 < UD_NBUCKETS ? ", " : ";\n");
	fprintf(f, "  exactly %g us is in the first.\n"
		   "  Drop reasons are the kernel's enum skb_drop_reason names, read from its BTF.\n"
		   "\n"
		   "Ctrl-C (or SIGTERM, SIGHUP) prints the interval in progress, then exits 0. Needs root\n"
		   "(or CAP_BPF and CAP_PERFMON, where the kernel allows it: at kernel.perf_event_paranoid\n"
		   "3 some kernels, Debian's 6.1 among them, want root) and kernel BTF.\n",
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

static int set_prometheus(void *cfg, const char *opt, const char *val)
{
	struct options *o = cfg;
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (cli_parse_endpoint(opt, val, &ss, &sslen))
		return -1;
	o->prometheus = val;
	return 0;
}

static const char *const state_on_names[] = { "p99", "max", NULL };

#define TK_OPT_CFG struct options
static const struct opt options[] = {
	OPT_E_CHOICE("backend", 'b', "NAME", backend, ud_backend_names, "auto|fentry|kprobe|tracepoint (default auto)"),
	OPT_E_CALL("ports", 'p', "LO-HI", set_ports,
		   "local ports to watch; one port is PORT (default\n"
		   STR(DEFAULT_PORT_LO) "-" STR(DEFAULT_PORT_HI) ")"),
	{ "interval", 0, OPT_SECONDS, "SECONDS",
	  "seconds per interval, " STR(MIN_INTERVAL_S) ".." STR(MAX_INTERVAL_S) ", decimals allowed\n"
	  "(default " STR(DEFAULT_INTERVAL_S) ")",
	  OPT_AT(interval_s), MIN_INTERVAL_S, MAX_INTERVAL_S },
	OPT_E_CALL("once", 0, NULL, set_once, "print one interval, then exit (--intervals 1)"),
	OPT_E_U64("intervals", 0, "N", intervals, 1, UINT32_MAX,
		  "stop after N intervals (default: until interrupted)"),
	OPT_E_DURATION(duration_s, "stop after SECONDS, printing the interval in\n"
				   "progress (default: until interrupted)"),
	OPT_E_FORMAT(out.format, out.format_set),
	OPT_E_OUTPUT(out.path, "write the records to FILE instead of stdout; the\n"
			       "table refreshes in place, worst dwell first, only on\n"
			       "a terminal"),
	OPT_E_U32("warn-us", 0, "US", warn_us, 1, MAX_THRESHOLD_US,
		  "WARN when the measure reaches US microseconds\n(default " STR(DEFAULT_WARN_US) ")"),
	OPT_E_U32("alert-us", 0, "US", alert_us, 1, MAX_THRESHOLD_US,
		  "ALERT when it reaches US microseconds (default " STR(DEFAULT_ALERT_US) ")"),
	OPT_E_CHOICE("state-on", 0, "WHAT", state_on, state_on_names,
		     "p99|max: the measure is the interval's estimated\n"
		     "p99 (default) or its maximum. The age of the oldest\n"
		     "datagram still waiting counts too, so a stuck\n"
		     "reader alerts. Any SOCKET_RCVBUFF or PROTO_MEM drop\n"
		     "in the interval is ALERT."),
	OPT_E_CALL("prometheus", 0, "ADDR:PORT", set_prometheus,
		   "serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		   "([::1]:PORT for IPv6): udp_socket_dwell_seconds\n"
		   "(histogram), udp_socket_drops_total, udp_socket_state\n"
		   "(" UD_STATE_LEGEND "), udp_socket_queue_length,\n"
		   "udpdwell_sockets_tracked, udpdwell_sockets_evicted_total\n"
		   "and udpdwell_unattributed_reads_total"),
	OPT_E_U32("max-sockets", 0, "N", max_sockets, MIN_SOCKETS, MAX_SOCKETS,
		  "sockets tracked at once, " STR(MIN_SOCKETS) ".." STR(MAX_SOCKETS) " (default "
		  STR(UD_DEFAULT_SOCKETS) ";\n"
		  "16.3 KiB of kernel memory each, plus 128 bytes per\n"
		  "CPU). When all are taken, a new socket takes the\n"
		  "place of the least recently active one (LRU,\n"
		  "approximated by a CLOCK hand as the kernel's LRU maps\n"
		  "do), and evictions are counted."),
	OPT_E_FLAG("all", 0, all, "list idle sockets too"),
	OPT_E_U32("top", 0, "N", top, 1, MAX_TOP, "show at most N sockets per interval (default: all)"),
	OPT_E_FLAG("legacy-drops", 0, legacy_drops, "count drops through udp:udp_fail_queue_rcv_skb, as\n"
						    "on kernels whose kfree_skb has no rx_sk"),
	OPT_E_FLAG("bpf-stats", 0, bpf_stats, "turn on BPF run-time statistics and print, per\n"
					      "interval, each program's runs and cost (bpf_prog\n"
					      "records)"),
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

static void parse_args(int argc, char **argv, struct options *o)
{
	int first = opt_parse(&cli, argc, argv, o);

	if (first < argc)
		cli_usage_die("unexpected argument '%s' (see --help)", argv[first]);
	check_args(o);
}

/* --- records (lib/dwellrec.h) ------------------------------------------------- */

/* CSV: every record type the output may hold shares the file's one header */
static void declare_records(const struct options *o, struct rec_writer *w)
{
	rec_writer_declare(w, &ud_interval_schema);
	rec_writer_declare(w, &ud_socket_schema);
	if (o->bpf_stats)
		rec_writer_declare(w, &ud_bpf_schema);
}

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

/* one socket's row r as its record, its drops named */
static int write_socket(struct ud_ctx *c, const struct ud_row *r)
{
	struct ud_socket_rec s = { .port = r->port, .pid = r->pid, .packets = r->d.packets,
				   .avg_us = r->avg_us, .p50_us = r->p50_us, .p99_us = r->p99_us,
				   .max_us = r->max_us, .queue_len = r->queue_len, .state = r->state };
	char unknown[32];

	snprintf(s.addr, sizeof(s.addr), "%s", r->addr);
	snprintf(s.comm, sizeof(s.comm), "%.*s", (int)sizeof(r->comm), r->comm);
	memcpy(s.buckets, r->d.buckets, sizeof(s.buckets));
	for (unsigned int i = 0; i < r->ndrops; i++) {
		struct ud_drop *d = &s.drops.v[s.drops.n++];

		snprintf(d->reason, sizeof(d->reason), "%s",
			 ud_reason_name(&c->reasons, r->drops[i].reason, unknown, sizeof(unknown)));
		d->count = r->drops[i].count;
	}
	return ud_socket_write(c->w, &s);
}

static int write_bpf_stats(struct ud_ctx *c, struct bpf_object *obj)
{
	struct bpf_program *p;

	if (!obj)
		return 0;
	bpf_object__for_each_program(p, obj) {
		struct ud_bpf_rec b = { 0 };
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpfu_prog_stats(fd, &b.run_time_ns, &b.run_cnt))
			continue;
		snprintf(b.prog, sizeof(b.prog), "%s", bpf_program__name(p));
		b.ns_per_run = b.run_cnt ? (double)b.run_time_ns / (double)b.run_cnt : NAN;
		if (ud_bpf_write(c->w, &b))
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

/* room for n rows; -1 when there is no memory */
static int reserve_rows(struct ud_ctx *c, unsigned int n)
{
	struct ud_row *p;

	if (c->caprows >= n)
		return 0;
	p = realloc(c->rows, n * sizeof(*p));
	if (!p)
		return -1;
	c->rows = p;
	c->caprows = n;
	return 0;
}

/* each socket's state and owner at this interval, for the Prometheus gauge */
static void keep_states(struct ud_ctx *c, unsigned int nrows)
{
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
}

/*
 * Closes the interval: reads the maps, builds one row per socket against the
 * previous reading, which this reading replaces as the next interval's
 * baseline. Sets *now to the reading's time; returns the number of rows, or
 * -1 after one line saying why.
 */
static int close_interval(struct ud_ctx *c, uint64_t *now)
{
	struct ud_source src = source_of(c);
	uint64_t epoch, since = c->interval_start_ns;
	struct ud_snapshot tmp;
	unsigned int nrows = 0;
	int err;

	pthread_mutex_lock(&c->lock);
	epoch = *c->bpf.epoch;
	__atomic_store_n(c->bpf.epoch, epoch + 1, __ATOMIC_SEQ_CST);
	*now = tk_mono_ns();
	err = ud_snapshot_read(&c->cur, &src, epoch, true);
	if (err || reserve_rows(c, c->cur.n)) {
		pthread_mutex_unlock(&c->lock);
		if (err)
			elog("cannot read the socket map: %s", strerror(-err));
		else
			elog("out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < c->cur.n; i++) {
		const struct ud_entry *e = &c->cur.e[i];

		ud_row_build(&c->rows[nrows++], e, ud_snapshot_find(&c->prev, e->key), &c->o->thr,
			     c->reason_rcvbuff, c->reason_proto_mem, *now, since);
	}
	c->unattributed = ud_ledger_settle(&c->ledger, &c->cur, c->rows);
	resolve_owners(c, c->rows, nrows);
	update_evicted(c);
	keep_states(c, nrows);
	tmp = c->prev;
	c->prev = c->cur;
	c->cur = tmp;
	c->interval_start_ns = *now;
	pthread_mutex_unlock(&c->lock);
	return (int)nrows;
}

static bool is_shown(const struct options *o, const struct ud_row *r) { return r->active || o->all; }

/* the interval's totals over every socket; returns how many sockets are shown */
static unsigned int add_up(const struct ud_ctx *c, unsigned int nrows, struct ud_cumul *tot)
{
	const struct options *o = c->o;
	unsigned int n = 0;

	for (unsigned int i = 0; i < nrows; i++) {
		const struct ud_row *r = &c->rows[i];

		tot->packets += r->d.packets;
		tot->unmatched += r->d.unmatched;
		tot->resync_added += r->d.resync_added;
		tot->resync_dropped += r->d.resync_dropped;
		tot->ring_full += r->d.ring_full;
		if (is_shown(o, r))
			n++;
	}
	return o->top && n > o->top ? o->top : n;
}

/* the interval's records: the interval, its sockets worst first, the programs' costs */
static int write_interval(struct ud_ctx *c, unsigned int nrows, uint64_t since, uint64_t now)
{
	const struct options *o = c->o;
	struct ud_cumul tot = { 0 };
	unsigned int shown = add_up(c, nrows, &tot);
	struct ud_interval_rec iv = { .interval_s = (double)(now - since) / 1e9, .sockets = shown,
				      .tracked = c->prev.n, .packets = tot.packets, .unmatched = tot.unmatched,
				      .resync_added = tot.resync_added, .resync_dropped = tot.resync_dropped,
				      .ring_full = tot.ring_full, .evicted = c->evicted,
				      .unattributed = c->unattributed };

	/* a live table redraws the screen; a single interval is just printed */
	if (c->tty && o->out.format == REC_TABLE && o->intervals != 1)
		fputs("\033[H\033[J", o->out.f);
	iso_time(iv.time, sizeof(iv.time));
	snprintf(iv.backend, sizeof(iv.backend), "%s", ud_backend_names[c->bpf.kind]);
	if (ud_interval_write(c->w, &iv))
		return -1;
	for (unsigned int i = 0, k = 0; i < nrows && k < shown; i++) {
		if (!is_shown(o, &c->rows[i]))
			continue;
		k++;
		if (write_socket(c, &c->rows[i]))
			return -1;
	}
	if (o->bpf_stats && (write_bpf_stats(c, c->bpf.obj) || write_bpf_stats(c, c->ref_obj)))
		return -1;
	/* a table repeats its headers each interval; CSV has one for the file */
	if (rec_writer_format(c->w) == REC_TABLE)
		rec_writer_reset_header(c->w);
	return rec_writer_flush(c->w);
}

/* reads the maps, closes the interval, writes its records; returns 0 or -1 */
static int interval(struct ud_ctx *c)
{
	uint64_t since = c->interval_start_ns, now;
	int nrows = close_interval(c, &now);

	if (nrows < 0)
		return -1;
	if (nrows)
		qsort(c->rows, (size_t)nrows, sizeof(*c->rows), ud_row_cmp_worst);
	if (write_interval(c, (unsigned int)nrows, since, now)) {
		elog("cannot write the output: %s", strerror(errno));
		return -1;
	}
	return 0;
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

/* the series of one socket entry e of the scrape */
static void series_of(const struct ud_ctx *c, const struct ud_entry *e, struct series *x)
{
	const struct ud_keystate *k = keystate_find(c, e->key);

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

/* x's figures added to a's, which has the same labels */
static void series_add(struct series *a, const struct series *x)
{
	for (int i = 0; i < UD_NBUCKETS; i++)
		a->buckets[i] += x->buckets[i];
	a->sum_ns += x->sum_ns;
	a->queue_len += x->queue_len;
	if (x->state > a->state)
		a->state = x->state;
	for (unsigned int i = 0; i < x->ndrops; i++)
		ud_drops_add(a->drops, &a->ndrops, x->drops[i].reason, x->drops[i].count);
}

/* sorts the n series and merges those with equal labels; returns how many are left */
static unsigned int series_merge(struct series *s, unsigned int n)
{
	unsigned int w = 0;

	if (n < 2)
		return n;
	qsort(s, n, sizeof(*s), series_cmp);
	for (unsigned int r = 1; r < n; r++) {
		if (series_cmp(&s[w], &s[r]))
			s[++w] = s[r];
		else
			series_add(&s[w], &s[r]);
	}
	return w + 1;
}

/* a series' four labels, in the caller's buffers */
struct labels {
	char port[8], pid[12];
	struct prom_label l[4];
};

static const struct prom_label *labels_of(const struct series *s, struct labels *b)
{
	snprintf(b->port, sizeof(b->port), "%u", s->port);
	snprintf(b->pid, sizeof(b->pid), "%u", s->pid);
	b->l[0] = (struct prom_label){ "port", b->port };
	b->l[1] = (struct prom_label){ "addr", s->addr };
	b->l[2] = (struct prom_label){ "pid", b->pid };
	b->l[3] = (struct prom_label){ "comm", s->comm };
	return b->l;
}
#define NLABELS ARRAY_SIZE(((struct labels *)0)->l)

/* the metric names, in Prometheus's base units; monitoring/ names them too */
#define METRIC_DWELL "udp_socket_dwell_seconds"
#define METRIC_DROPS "udp_socket_drops_total"
#define METRIC_STATE "udp_socket_state"
#define METRIC_QUEUE "udp_socket_queue_length"
#define METRIC_EVICTED "udpdwell_sockets_evicted_total"
#define METRIC_TRACKED "udpdwell_sockets_tracked"
#define METRIC_UNATTRIBUTED "udpdwell_unattributed_reads_total"

static int put_dwell(struct prom_buf *b, const struct series *s, unsigned int n)
{
	double le_s[UD_NBUCKETS - 1];
	int err;

	for (int i = 0; i < UD_NBUCKETS - 1; i++)
		le_s[i] = ud_le_us[i] / 1e6;
	err = prom_family(b, METRIC_DWELL, PROM_HISTOGRAM,
			  "Time each datagram waited in the socket receive queue, from the "
			  "kernel's enqueue to the application's read.");
	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_histogram(b, METRIC_DWELL, labels_of(&s[i], &lb), NLABELS, le_s,
				      s[i].buckets, UD_NBUCKETS - 1, (double)s[i].sum_ns / 1e9);
	}
	return err;
}

static int put_drops(struct prom_buf *b, const struct ud_ctx *c, const struct series *s, unsigned int n)
{
	int err = prom_family(b, METRIC_DROPS, PROM_COUNTER,
			      "Datagrams the kernel dropped for the socket, by drop reason "
			      "(enum skb_drop_reason of the running kernel).");

	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;
		struct prom_label l[NLABELS + 1];
		char rbuf[32];

		memcpy(l, labels_of(&s[i], &lb), sizeof(lb.l));
		for (unsigned int j = 0; j < s[i].ndrops; j++) {
			l[NLABELS] = (struct prom_label){
				"reason", ud_reason_name(&c->reasons, s[i].drops[j].reason, rbuf, sizeof(rbuf))
			};
			err |= prom_sample_u64(b, METRIC_DROPS, l, NLABELS + 1, s[i].drops[j].count);
		}
	}
	return err;
}

static int put_gauges(struct prom_buf *b, const struct series *s, unsigned int n)
{
	int err = prom_family(b, METRIC_STATE, PROM_GAUGE,
			      "The socket's state at the last interval: " UD_STATE_LEGEND ".");

	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_sample(b, METRIC_STATE, labels_of(&s[i], &lb), NLABELS, (double)s[i].state);
	}
	err |= prom_family(b, METRIC_QUEUE, PROM_GAUGE,
			   "Datagrams waiting in the receive queue at the socket's last event.");
	for (unsigned int i = 0; i < n; i++) {
		struct labels lb;

		err |= prom_sample_u64(b, METRIC_QUEUE, labels_of(&s[i], &lb), NLABELS,
				       s[i].queue_len);
	}
	return err;
}

static int put_map(struct prom_buf *b, const struct ud_ctx *c)
{
	int err = prom_family(b, METRIC_EVICTED, PROM_COUNTER,
			      "Sockets evicted from the bounded (LRU) socket map.");

	err |= prom_sample_u64(b, METRIC_EVICTED, NULL, 0, c->evicted);
	err |= prom_family(b, METRIC_TRACKED, PROM_GAUGE, "Sockets in the kernel's socket map.");
	err |= prom_sample_u64(b, METRIC_TRACKED, NULL, 0, c->scrape.n);
	err |= prom_family(b, METRIC_UNATTRIBUTED, PROM_COUNTER,
			   "Reads of sockets evicted before an interval reported them (as of the "
			   "last interval).");
	err |= prom_sample_u64(b, METRIC_UNATTRIBUTED, NULL, 0, c->ledger.total);
	return err;
}

/* the /metrics page, on the server's thread: the maps as they are now */
static int render_metrics(struct prom_buf *b, void *arg)
{
	struct ud_ctx *c = arg;
	struct ud_source src = source_of(c);
	struct series *s = NULL;
	unsigned int n = 0;
	int err = -1;

	pthread_mutex_lock(&c->lock);
	if (ud_snapshot_read(&c->scrape, &src, *c->bpf.epoch, false) == 0)
		s = calloc(c->scrape.n ? c->scrape.n : 1, sizeof(*s));
	if (s) {
		for (unsigned int i = 0; i < c->scrape.n; i++)
			series_of(c, &c->scrape.e[i], &s[n++]);
		n = series_merge(s, n);
		/* one family after the other, in this order */
		err = put_dwell(b, s, n);
		err |= put_drops(b, c, s, n);
		err |= put_gauges(b, s, n);
		err |= put_map(b, c);
	}
	pthread_mutex_unlock(&c->lock);
	free(s);
	return err ? -1 : 0;
}

/* --- setup, run, teardown ------------------------------------------------------------ */

/* privileges, BTF, and the kernel's drop reasons: what any backend needs */
static int check_host(struct ud_ctx *c)
{
	const char *nobtf;
	char why[512];

	if (bpfu_check_privileges(false, why, sizeof(why))) {
		elog("%s", why);
		return TK_EXIT_NOPERM;
	}
	if ((nobtf = bpfu_btf_missing())) {
		elog("%s", nobtf);
		return TK_EXIT_NOTSUP;
	}
	if (ud_reasons_load(&c->reasons, NULL)) {
		elog("out of memory");
		return TK_EXIT_FAIL;
	}
	if (!ud_reason_value(&c->reasons, "SOCKET_RCVBUFF", &c->reason_rcvbuff))
		c->reason_rcvbuff = UD_REASON_LEGACY_RCVBUFF;
	if (!ud_reason_value(&c->reasons, "PROTO_MEM", &c->reason_proto_mem))
		c->reason_proto_mem = UD_REASON_LEGACY_PROTO_MEM;
	return TK_EXIT_OK;
}

/* the backend, then --bpf-stats and --bpf-reference */
static int open_bpf(struct ud_ctx *c, struct run *r)
{
	const struct options *o = c->o;
	struct ud_bpf_opts bo = { .port_lo = o->port_lo, .port_hi = o->port_hi, .max_sockets = o->max_sockets,
				  .legacy_drops = o->legacy_drops, .reason_rcvbuff = c->reason_rcvbuff,
				  .reason_proto_mem = c->reason_proto_mem };
	int code = ud_bpf_open((enum ud_backend)o->backend, &bo, &c->bpf);

	if (code != TK_EXIT_OK) {
		elog("%s", c->bpf.summary);
		return code;
	}
	if (ud_ledger_init(&c->ledger, c->bpf.nslots)) {
		elog("out of memory for %u sockets' read counts", c->bpf.nslots);
		return TK_EXIT_FAIL;
	}
	if (o->bpf_stats) {
		r->stats_fd = bpfu_enable_stats();
		if (r->stats_fd < 0) {
			elog("cannot turn on BPF run-time statistics: %s", strerror(-r->stats_fd));
			return TK_EXIT_FAIL;
		}
	}
	if (o->bpf_reference) {
		r->ref = udpdwell_ref_bpf__open_and_load();
		if (!r->ref || udpdwell_ref_bpf__attach(r->ref)) {
			elog("--bpf-reference: cannot attach the reference programs: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
		c->ref_obj = r->ref->obj;
	}
	/* once everything counts: scripts start their traffic at this line */
	ilog("%s", c->bpf.summary);
	vlog("drops counted through %s", c->bpf.legacy_drops ? "udp:udp_fail_queue_rcv_skb"
							       : "skb:kfree_skb (rx_sk)");
	vlog("watching local ports %u-%u, at most %u sockets", o->port_lo, o->port_hi, o->max_sockets);
	return TK_EXIT_OK;
}

/* the timer for the next interval's end: the next multiple of --interval
 * from the start, or --duration's end when it comes first */
static int arm_timer(struct run *r, uint64_t now)
{
	struct itimerspec its = { 0 };

	r->next_ns = r->start_ns + ((now - r->start_ns) / r->period_ns + 1) * r->period_ns;
	if (r->end_ns && r->next_ns >= r->end_ns)
		r->next_ns = r->end_ns;
	its.it_value.tv_sec = (time_t)(r->next_ns / TK_NSEC_PER_SEC);
	its.it_value.tv_nsec = (long)(r->next_ns % TK_NSEC_PER_SEC);
	return timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* SIGINT, SIGTERM and SIGHUP (a closed terminal) as a descriptor; blocked before any thread starts (the
 * Prometheus server's), which would otherwise take them and die of them.
 * Ctrl-C while the backend loads is read once it runs: one interval, exit 0 */
static int catch_signals(struct run *r)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (r->sig_fd < 0) {
		elog("cannot catch signals: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

/* the interval timer, from now */
static int start_clock(struct ud_ctx *c, struct run *r)
{
	const struct options *o = c->o;

	r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	r->start_ns = tk_mono_ns();
	r->period_ns = (uint64_t)llround(o->interval_s * 1e9);
	r->end_ns = o->duration_s > 0 ? r->start_ns + (uint64_t)llround(o->duration_s * 1e9) : 0;
	c->interval_start_ns = r->start_ns;
	if (r->timer_fd < 0 || arm_timer(r, r->start_ns)) {
		elog("cannot set up the timer: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

/* everything between the arguments and the first interval */
static int setup(struct ud_ctx *c, struct run *r)
{
	struct options *o = c->o;
	char why[512];
	int code = check_host(c);

	if (code == TK_EXIT_OK)
		code = rec_out_open(&o->out);
	if (code == TK_EXIT_OK)
		code = open_bpf(c, r);
	if (code != TK_EXIT_OK)
		return code;
	c->w = o->out.w;
	c->tty = isatty(fileno(o->out.f));
	declare_records(o, c->w);
	if (o->prometheus) {
		r->prom = prom_server_start(o->prometheus, render_metrics, c, NULL, why, sizeof(why));
		if (!r->prom) {
			elog("--prometheus: %s", why);
			return TK_EXIT_FAIL;
		}
		ilog("serving Prometheus metrics on http://%s/metrics", o->prometheus);
	}
	return start_clock(c, r);
}

/* intervals until --intervals, --duration, Ctrl-C or SIGTERM; the last one
 * printed covers the time up to the end */
static int run_intervals(struct ud_ctx *c, struct run *r)
{
	for (;;) {
		struct pollfd p[2] = { { r->sig_fd, POLLIN, 0 }, { r->timer_fd, POLLIN, 0 } };
		uint64_t ticks;
		bool last;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			elog("poll: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
		if (p[0].revents) /* the interval in progress, then stop */
			return interval(c) ? TK_EXIT_FAIL : TK_EXIT_OK;
		if (!p[1].revents || read(r->timer_fd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
			continue;
		last = r->next_ns == r->end_ns || (c->o->intervals && r->intervals + 1 >= c->o->intervals);
		if (interval(c))
			return TK_EXIT_FAIL;
		r->intervals++;
		if (last)
			return TK_EXIT_OK;
		if (arm_timer(r, tk_mono_ns())) {
			elog("cannot set up the timer: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
	}
}

/* undoes everything, newest first; returns the final exit code */
static int teardown(struct ud_ctx *c, struct run *r, int code)
{
	prom_server_stop(r->prom);
	code = rec_out_close(&c->o->out, code);
	if (r->sig_fd >= 0)
		close(r->sig_fd);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	udpdwell_ref_bpf__destroy(r->ref);
	ud_bpf_close(&c->bpf);
	ud_snapshot_free(&c->cur);
	ud_snapshot_free(&c->prev);
	ud_snapshot_free(&c->scrape);
	ud_ledger_free(&c->ledger);
	free(c->states);
	free(c->owners);
	free(c->rows);
	ud_reasons_free(&c->reasons);
	return code;
}

int main(int argc, char **argv)
{
	struct options o = { .backend = UD_BACKEND_AUTO, .port_lo = DEFAULT_PORT_LO, .port_hi = DEFAULT_PORT_HI,
			     .interval_s = DEFAULT_INTERVAL_S, .warn_us = DEFAULT_WARN_US,
			     .alert_us = DEFAULT_ALERT_US, .state_on = UD_STATE_ON_P99,
			     .max_sockets = UD_DEFAULT_SOCKETS };
	struct ud_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER, .o = &o };
	struct run r = { .stats_fd = -1, .sig_fd = -1, .timer_fd = -1 };
	int code;

	log_init(argv[0]);
	/* first of all: a signal at any moment of start-up is read once the
	 * intervals run (one interval, exit 0), never a death half set up */
	if (catch_signals(&r))
		return TK_EXIT_FAIL;
	parse_args(argc, argv, &o);
	bpfu_setup_libbpf();
	code = setup(&c, &r);
	if (code == TK_EXIT_OK)
		code = run_intervals(&c, &r);
	return teardown(&c, &r, code);
}
