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
 *
 * This file holds the run: the host's checks, the backend and what
 * --bpf-stats adds, signals, the interval clock, the loop of intervals, the
 * teardown and main.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "common.h"
#include "log.h"
#include "prom.h"

#include "udpdwell.h"
#include "udpdwell_ref.skel.h"

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
	r->period_ns = (uint64_t)llround(o->interval_s * TK_NSEC_PER_SEC_F);
	r->end_ns = o->duration_s > 0 ? r->start_ns + (uint64_t)llround(o->duration_s * TK_NSEC_PER_SEC_F) : 0;
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
	struct options o = { 0 }; /* the defaults are the option table's (udpdwell_cli.c) */
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
