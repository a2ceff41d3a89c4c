// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a run ends with once tracing has stopped: the summary record, the
 * verdict, each BPF program's statistics, and their lines on stderr.
 */
#include <stdio.h>

#include "bbrtrace/backend.h"
#include "bbrtrace/detect.h"
#include "bbrtrace/report.h"
#include "bbrtrace/verdict.h"
#include "bpfutil.h"
#include "common.h"
#include "log.h"
#include "progstats.h"
#include "record.h"

static void report_stats(struct bt_run *r, enum rec_format fmt)
{
	struct rec_writer *err_w = rec_writer_new(REC_TABLE, stderr);
	const char *names[32];
	int fds[32];
	int n = bt_backend_progs(r->b, fds, names, 32);

	for (int i = 0; i < n; i++) {
		bool out = fmt != REC_TABLE && r->records != BT_REC_NONE;

		tk_prog_stats_write(out ? r->w : NULL, log_get_level() >= LOG_NORMAL ? err_w : NULL,
				    names[i], fds[i]);
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
	  verdict ? rv_f64((double)verdict->st.throttled_ns / TK_NSEC_PER_SEC_F) : rv_null()) \
	X("throttled_us_by_cause", REC_KV, 0, REC_NOCOL, verdict ? rv_kv(ukv, BT_NCAUSES) : rv_null()) \
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
const struct rec_schema bt_summary_schema = { "summary", summary_fields,
					      ARRAY_SIZE(summary_fields) };

static void write_summary(const struct bt_env *env, struct bt_run *r, uint64_t lost, double elapsed,
			  const struct bt_verdict *verdict)
{
	struct rec_kv kv[BT_NCAUSES], tkv[BT_NCAUSES], ukv[BT_NCAUSES], skv[BT_NSTALL_CAUSES];
	const char *no_writes, *hook = bt_backend_write_hook(r->b, &no_writes);
	double stalled_s = verdict ? (double)verdict->stalled_ns / TK_NSEC_PER_SEC_F : 0;

	if (verdict) {
		bt_verdict_by_cause(verdict, kv);
		bt_verdict_throttling_by_cause(verdict, tkv);
		bt_verdict_throttled_us_by_cause(verdict, ukv);
		bt_verdict_stalls_by_cause(verdict, skv);
	}
	struct rec_value v[] = { SUMMARY_FIELDS(REC_VALUE) };
	rec_write(r->w, &bt_summary_schema, v);
}

/* why a trace may have no sample, and the ways in, for this backend */
static const char *why_empty(const struct bt_env *env, const struct bt_run *r)
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
void bt_report(const struct bt_env *env, struct bt_run *r)
{
	double elapsed = (double)(tk_mono_ns() - r->t0_ns) * TK_SEC_PER_NSEC_F;
	uint64_t lost = bt_backend_samples_lost(r->b), unpaired = bt_backend_counter(r->b, BT_CNT_STACK);
	struct bt_verdict verdict;
	const char *no_writes;

	if (r->det) {
		bt_verdict_build(&verdict, r->det, env->collapse_ratio, elapsed, why_empty(env, r));
		if (!bt_backend_write_hook(r->b, &no_writes))
			bt_verdict_no_stalls(&verdict, no_writes);
		bt_verdict_note_lost(&verdict, lost - unpaired, bt_backend_counter(r->b, BT_CNT_LOST_WRITES),
				     unpaired);
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
	     lost > unpaired ? " (ring buffer full: raise --ringbuf-mb or filter flows)" : "");
	if (unpaired)
		wlog("%llu of the lost samples: bbr_main's entry and exit probes could not be paired "
		     "(calls nested too deep, or in progress when tracing began)",
		     (unsigned long long)unpaired);
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
