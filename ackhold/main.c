// SPDX-License-Identifier: GPL-2.0-only
/*
 * ackhold: from the receiving host, are my delayed ACKs holding this sender
 * back? This file holds the run: signals, the probe, the loop that reads
 * the kernel's records until --duration or Ctrl-C, and the end: the flows
 * still open, each peer, the verdict.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "bpfutil.h"
#include "common.h"
#include "log.h"
#include "progstats.h"
#include "prom.h"

#include "ackhold/ackhold.h"
#include "ackhold/metrics.h"
#include "ackhold/peers.h"
#include "ackhold/probe.h"
#include "ackhold/report.h"
#include "ackhold/verdict.h"

/* how often the loop looks at the clock and the signals while no record comes */
#define POLL_MS 100

struct run {
	const struct options *o;
	struct ah_probe probe;
	struct ah_peers peers;
	pthread_mutex_t lock;    /* peers, against /metrics' thread */
	struct ah_metrics metrics;
	struct prom_server *prom;
	struct rec_writer *w;
	int sig_fd;
	int stats_fd;            /* bpf_stats on while open (--stats) */
	bool failed;             /* out of memory, or a record not written */
};

static int on_record(void *ctx, const struct ah_rec *r)
{
	struct run *run = ctx;
	int rc = 0;

	pthread_mutex_lock(&run->lock);
	if (r->kind == AH_REC_HOLD)
		rc = ah_peers_add_hold(&run->peers, &r->id, &r->hold);
	else if (r->kind == AH_REC_CLOSE)
		rc = ah_peers_add_totals(&run->peers, &r->id, &r->totals);
	pthread_mutex_unlock(&run->lock);
	if (rc)
		run->failed = true;
	if (r->kind == AH_REC_HOLD && run->o->records == AH_RECORDS_HOLDS && ah_write_hold(run->w, &r->id, &r->hold))
		run->failed = true;
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP as a descriptor, before anything is loaded:
 * a signal during start-up ends the run once it starts, with its report */
static int catch_signals(struct run *r)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sig_fd < 0) {
		elog("cannot catch signals: %s", strerror(errno));
		return TK_EXIT_FAIL;
	}
	return TK_EXIT_OK;
}

static bool signalled(const struct run *r)
{
	struct pollfd p = { r->sig_fd, POLLIN, 0 };

	return poll(&p, 1, 0) > 0;
}

/* /metrics on --prometheus's address, from its own thread */
static int serve_metrics(struct run *r)
{
	char why[256];

	r->metrics = (struct ah_metrics){ &r->lock, &r->peers, &r->probe, r->o->metrics_peers };
	r->prom = prom_server_start(r->o->prometheus, ah_metrics_render, &r->metrics, NULL, why, sizeof(why));
	if (!r->prom) {
		elog("--prometheus: %s", why);
		return TK_EXIT_FAIL;
	}
	ilog("serving Prometheus metrics on http://%s/metrics", r->o->prometheus);
	return TK_EXIT_OK;
}

/* records until --duration's end or a signal */
static int trace(struct run *r)
{
	uint64_t end = r->o->duration_s > 0 ? tk_mono_ns() + (uint64_t)llround(r->o->duration_s * TK_NSEC_PER_SEC_F) : 0;

	while (!signalled(r) && !(end && tk_mono_ns() >= end)) {
		if (ah_probe_poll(&r->probe, POLL_MS) < 0) {
			elog("cannot read the kernel's records: %s", strerror(errno));
			return TK_EXIT_FAIL;
		}
		if (r->failed)
			break;
	}
	return TK_EXIT_OK;
}

/* each program's bpf_stats (--stats): records, and a table on stderr */
static void report_stats(struct run *r)
{
	struct rec_writer *err_w = log_get_level() >= LOG_NORMAL ? rec_writer_new(REC_TABLE, stderr) : NULL;

	r->failed |= ah_probe_stats(&r->probe, r->w, err_w) != 0;
	if (err_w)
		rec_writer_free(err_w);
}

/* the peers, worst first, and the verdict; one line of counts on stderr */
static void report(struct run *r, const uint64_t cnt[AH_CNT_ALL])
{
	struct ah_peer **ranked = ah_peers_ranked(&r->peers);
	char *text = malloc(AH_VERDICT_MAX);

	if (!ranked || !text) {
		elog("out of memory for the report");
		r->failed = true;
	} else {
		for (size_t i = 0; i < r->peers.n; i++)
			r->failed |= ah_write_peer(r->w, ranked[i]) != 0;
		ah_verdict(text, AH_VERDICT_MAX, ranked, r->peers.n, r->o->top, r->o->min_hold_ms, cnt);
		r->failed |= ah_write_verdict(r->w, cnt, r->peers.n, text) != 0;
	}
	ilog("%zu peer(s); %" PRIu64 " data segments, %" PRIu64 " ACKs of new data (%" PRIu64 " by the "
	     "delayed-ACK timer, %" PRIu64 " unseen); %" PRIu64 " records lost, %" PRIu64 " program runs "
	     "skipped, %" PRIu64 " segments of untracked flows",
	     r->peers.n, cnt[AH_CNT_SEGS], cnt[AH_CNT_ACKS] + cnt[AH_CNT_UNSEEN], cnt[AH_CNT_TIMER_FIRED],
	     cnt[AH_CNT_UNSEEN], cnt[AH_CNT_LOST], cnt[AH_CNT_SKIPPED], cnt[AH_CNT_UNTRACKED]);
	free(ranked);
	free(text);
}

static int run(struct run *r)
{
	struct options *o = (struct options *)r->o;
	uint64_t cnt[AH_CNT_ALL];
	int code = rec_out_open(&o->out);

	if (code == TK_EXIT_OK)
		code = ah_probe_open(&r->probe, o, on_record, r);
	if (code == TK_EXIT_OK && o->prometheus)
		code = serve_metrics(r);
	if (code != TK_EXIT_OK)
		return code;
	if (o->stats && (r->stats_fd = bpfu_enable_stats()) < 0)
		wlog("cannot turn on BPF statistics (--stats): %s", strerror(-r->stats_fd));
	r->w = o->out.w;
	rec_writer_declare(r->w, &ah_hold_schema);
	rec_writer_declare(r->w, &ah_peer_schema);
	rec_writer_declare(r->w, &ah_verdict_schema);
	if (o->stats)
		rec_writer_declare(r->w, &tk_prog_stats_schema);
	/* once everything counts: scripts start their traffic at this line */
	ilog("tracing the ACKs of %s (Ctrl-C ends)", o->nports ? "the chosen ports" : "every port");
	code = trace(r);
	prom_server_stop(r->prom);
	r->prom = NULL;
	/* the programs stop first, so the records read and the flows walked
	 * after are the whole and final state */
	ah_probe_stop(&r->probe);
	ah_probe_counters(&r->probe, cnt);
	cnt[AH_CNT_SKIPPED] = ah_probe_misses(&r->probe);
	ah_probe_open_flows(&r->probe);
	if (code == TK_EXIT_OK)
		report(r, cnt);
	if (code == TK_EXIT_OK && o->stats)
		report_stats(r);
	return r->failed && code == TK_EXIT_OK ? TK_EXIT_FAIL : code;
}

int main(int argc, char **argv)
{
	struct options o = { 0 }; /* the defaults are the option table's (ackhold/args.c) */
	struct run r = { .o = &o, .lock = PTHREAD_MUTEX_INITIALIZER, .sig_fd = -1, .stats_fd = -1 };
	int code;

	log_init(argv[0]);
	if (catch_signals(&r))
		return TK_EXIT_FAIL;
	parse_args(argc, argv, &o);
	bpfu_setup_libbpf();
	code = run(&r);
	code = rec_out_close(&o.out, code);
	ah_probe_close(&r.probe);
	ah_peers_free(&r.peers);
	close(r.sig_fd);
	if (r.stats_fd >= 0)
		close(r.stats_fd);
	return code;
}
