// SPDX-License-Identifier: GPL-2.0-only
/*
 * One tracing run: the output opened, the backend, the detector and the
 * /metrics server started, the poll loop that feeds every event through the
 * detector, and the teardown, newest first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bbrtrace/backend.h"
#include "bbrtrace/defaultcc.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/guard.h"
#include "bbrtrace/metrics.h"
#include "bbrtrace/peers.h"
#include "bbrtrace/report.h"
#include "bbrtrace/run.h"
#include "bbrtrace/sample.h"
#include "bbrtrace/verdict.h"
#include "bpfutil.h"
#include "chooser.h"
#include "common.h"
#include "log.h"
#include "netns.h"
#include "prom.h"
#include "progstats.h"
#include "record.h"
#include "rtscan.h"

static volatile sig_atomic_t exiting, verdict_asked;

void bt_run_on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* SIGUSR1: the window verdict now */
void bt_run_on_usr1(int sig)
{
	(void)sig;
	verdict_asked = 1;
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
		int64_t a = m1.tv_sec * (int64_t)TK_NSEC_PER_SEC + m1.tv_nsec;
		int64_t b = m2.tv_sec * (int64_t)TK_NSEC_PER_SEC + m2.tv_nsec;
		int64_t rt = r.tv_sec * (int64_t)TK_NSEC_PER_SEC + r.tv_nsec;

		if (b - a < best_gap) {
			best_gap = b - a;
			best = rt - (a + (b - a) / 2);
		}
	}
	return best;
}

static void write_failed(struct bt_run *r)
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
static void detect_lock(struct bt_run *r)
{
	if (!r->locked) {
		pthread_mutex_lock(&r->lock);
		r->locked = true;
	}
}

static void detect_unlock(struct bt_run *r)
{
	if (r->locked) {
		r->locked = false;
		pthread_mutex_unlock(&r->lock);
	}
}

/* --detect: the event through the detector, and the records it ends in */
static void detect_event(struct bt_run *r, const struct bt_sample *s)
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
	struct bt_run *r = ctx;
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

/* the window verdict now: a record, and a line on stderr */
static void write_window_verdict(struct bt_run *r, uint64_t now_ns)
{
	struct bt_verdict *v = malloc(sizeof(*v));

	if (!v)
		return;
	bt_metrics_window_verdict(r, v, now_ns);
	if (r->records != BT_REC_NONE && r->format != REC_TABLE && bt_verdict_write(r->w, v))
		write_failed(r);
	fprintf(stderr, "%s: verdict over the last %u min: %s\n", log_prog(), BT_WINDOW_MIN, v->text);
	free(v);
}

struct open_ctx {
	const struct bt_env *env;
	struct bt_run *r;
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

static struct bt_backend *open_backend(const struct bt_env *env, struct bt_run *r, int *code)
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

/* CSV: every record type the trace may hold shares the file's one header */
static void declare_records(const struct bt_env *env, struct rec_writer *w)
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
		rec_writer_declare(w, &tk_prog_stats_schema);
	rec_writer_declare(w, &bt_summary_schema);
	if (env->detect)
		rec_writer_declare(w, &bt_verdict_schema);
	if (env->verdict_every_s > 0 || env->prometheus)
		rec_writer_declare(w, &bt_window_verdict_schema);
}

int bt_run_open_output(struct bt_env *env, struct bt_run *r)
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
static int switch_default_cc(const struct bt_env *env, struct bt_run *r)
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
int bt_run_start(struct bt_env *env, struct bt_run *r)
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
		const struct prom_page verdict_page = { "/verdict", "application/json", bt_metrics_verdict, r };

		r->prom = prom_server_start(env->prometheus, bt_metrics_render, r, &verdict_page, why, sizeof(why));
		if (!r->prom) {
			elog("--prometheus: %s", why);
			return TK_EXIT_FAIL;
		}
		ilog("serving Prometheus metrics on http://%s/metrics", env->prometheus);
	}
	return switch_default_cc(env, r);
}

/* polls until Ctrl-C, --duration or an error; returns the exit code so far */
int bt_run_loop(const struct bt_env *env, struct bt_run *r)
{
	bool live_count = env->output && isatty(STDERR_FILENO) && log_get_level() >= LOG_NORMAL;
	uint64_t deadline_ns, last_live_ns = 0, next_verdict_ns = 0;
	uint64_t every_ns = (uint64_t)(env->verdict_every_s * TK_NSEC_PER_SEC_F);
	int err, code = TK_EXIT_OK;

	/* on a terminal, the header tells at once what the columns will be */
	if (r->records == BT_REC_SAMPLES) {
		rec_write_header(r->w, &bt_sample_schema);
		rec_writer_flush(r->w);
	}
	r->t0_ns = tk_mono_ns();
	deadline_ns = env->duration_s > 0 ? r->t0_ns + (uint64_t)(env->duration_s * TK_NSEC_PER_SEC_F) : 0;
	while (!exiting) {
		uint64_t now;

		/* the detector's hints, while they pay (bbrtrace/detect.h); they
		 * run outside its lock, in this thread, the one that feeds it */
		if (r->det)
			bt_backend_set_ahead(r->b, bt_detect_hints_pay(r->det) ? bt_detect_ahead : NULL,
					     r->det);
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
				(unsigned long long)bt_backend_samples_lost(r->b));
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

/* the routes of w->ns (NULL: this namespace) that name bbr_traced; a scan
 * that fails says which routes went unchecked, rather than nothing */
static void scan_routes(struct route_warn *w)
{
	char err[256];

	if (rtscan_congctl("bbr_traced", one_route, w, err, sizeof(err)) < 0)
		wlog("cannot tell which routes%s%s still name congctl bbr_traced, which goes away now: %s "
		     "(see: ip%s%s route show | grep bbr_traced)",
		     w->ns ? " in network namespace " : "", w->ns ? w->ns : "", err, w->ns ? " -n " : "",
		     w->ns ? w->ns : "");
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

	scan_routes(&w);
	while (self >= 0 && d && (e = readdir(d))) {
		char msg[256];
		int fd;

		if (e->d_name[0] == '.' || (fd = netns_open(e->d_name, msg, sizeof(msg))) < 0)
			continue;
		if (netns_enter_fd(fd) == 0) {
			w.ns = e->d_name;
			scan_routes(&w);
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
int bt_run_stop(const struct bt_env *env, struct bt_run *r, int code)
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
