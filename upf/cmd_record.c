// SPDX-License-Identifier: GPL-2.0-only
/*
 * The record of one run (upf_run), which run and sweep write, and the
 * notes that explain it: the identity, the memory floor, the counters.
 */
#include <math.h>
#include <stdio.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "floor.h"
#include "hw.h"
#include "path.h"
#include "cmd.h"

#define RUN_FIELDS(X)                                                                          \
	X("label", REC_STR, 0, REC_COL("design", -11, 0, 0), rv_str(x->label))                  \
	X("design", REC_STR, 0, REC_NOCOL, rv_str(up_design_names[r->cfg.design]))              \
	X("table", REC_STR, 0, REC_COL("table", -8, 0, 0), rv_str(up_table_names[r->cfg.table])) \
	X("layout", REC_STR, 0, REC_NOCOL, rv_str(up_layout_names[r->cfg.layout]))              \
	X("batch", REC_U64, 0, REC_NOCOL, rv_u64(r->cfg.batch))                                 \
	X("prefetch", REC_BOOL, 0, REC_NOCOL, rv_bool(r->cfg.prefetch))                         \
	X("hugepages", REC_BOOL, 0, REC_NOCOL, rv_bool(r->cfg.huge))                            \
	X("workers", REC_U64, 0, REC_COL("wk", 2, 0, 0), rv_u64(r->cfg.workers))                \
	X("threads", REC_U64, 0, REC_NOCOL, rv_u64(r->threads))                                 \
	X("sessions", REC_U64, 0, REC_COL("sessions", 8, 0, 0), rv_u64(r->sessions))            \
	X("dist", REC_STR, 0, REC_NOCOL, rv_str(x->dist))                                       \
	X("packets", REC_U64, 0, REC_NOCOL, rv_u64(r->packets))                                 \
	X("wall_s", REC_F64, 6, REC_NOCOL, rv_f64(r->wall_s))                                   \
	X("mpps", REC_F64, 3, REC_COL("Mpps", 6, 0, 2), rv_f64(r->mpps))                        \
	X("cycles_per_pkt", REC_F64, 1, REC_COL("cyc/pkt", 7, 0, 0), rv_f64(r->cycles_per_pkt)) \
	X("rx_cycles", REC_F64, 1, REC_COL("rx", 4, 0, 0), rv_f64(r->stage_cycles[UP_ST_RX]))   \
	X("parse_cycles", REC_F64, 1, REC_COL("parse", 5, 0, 0),                                \
	  rv_f64(r->stage_cycles[UP_ST_PARSE]))                                                 \
	X("lookup_cycles", REC_F64, 1, REC_COL("lookup", 6, 0, 0),                              \
	  rv_f64(r->stage_cycles[UP_ST_LOOKUP]))                                                \
	X("rules_cycles", REC_F64, 1, REC_COL("rules", 5, 0, 0),                                \
	  rv_f64(r->stage_cycles[UP_ST_RULES]))                                                 \
	X("counters_cycles", REC_F64, 1, REC_COL("cntrs", 5, 0, 0),                             \
	  rv_f64(r->stage_cycles[UP_ST_COUNTERS]))                                              \
	X("decap_cycles", REC_F64, 1, REC_COL("decap", 5, 0, 0),                                \
	  rv_f64(r->stage_cycles[UP_ST_DECAP]))                                                 \
	X("other_cycles", REC_F64, 1, REC_COL("other", 5, 0, 0), rv_f64(r->other_cycles))       \
	X("tsc_hz", REC_F64, 0, REC_NOCOL, rv_f64(r->tsc_hz))                                   \
	X("floor_cycles", REC_F64, 2, REC_COL("floor", 5, 0, 1),                                \
	  fl ? rv_f64(fl->mlp_cycles) : rv_null())                                              \
	X("floor_serial_cycles", REC_F64, 1, REC_NOCOL, fl ? rv_f64(fl->serial_cycles) : rv_null()) \
	X("floor_multiple", REC_F64, 2, REC_COL("x floor", 7, 0, 2),                            \
	  fl ? rv_f64(r->cycles_per_pkt / fl->mlp_cycles) : rv_null())                          \
	X("identity_ratio", REC_F64, 3, REC_COL("ident", 5, 0, 2), rv_f64(r->identity_ratio))   \
	X("malformed", REC_U64, 0, REC_COL("malf", 5, 0, 0), rv_u64(r->malformed))              \
	X("dropped", REC_U64, 0, REC_COL("dropped", 8, 0, 0), rv_u64(dropped))                  \
	X("forwarded", REC_U64, 0, REC_NOCOL, rv_u64(r->forwarded))                             \
	X("not_gtpu", REC_U64, 0, REC_NOCOL, rv_u64(r->not_gtpu))                               \
	X("no_session", REC_U64, 0, REC_NOCOL, rv_u64(r->no_session))                           \
	X("no_pdr", REC_U64, 0, REC_NOCOL, rv_u64(r->no_pdr))                                   \
	X("far_drop", REC_U64, 0, REC_NOCOL, rv_u64(r->far_drop))                               \
	X("qer_drop", REC_U64, 0, REC_NOCOL, rv_u64(r->qer_drop))                               \
	X("llc_miss_per_pkt", REC_F64, 3, REC_NOCOL,                                            \
	  isnan(r->llc_per_pkt) ? rv_null() : rv_f64(r->llc_per_pkt))                          \
	X("dtlb_miss_per_pkt", REC_F64, 3, REC_NOCOL,                                           \
	  isnan(r->dtlb_per_pkt) ? rv_null() : rv_f64(r->dtlb_per_pkt))                         \
	X("hugepages_kib", REC_U64, 0, REC_COL("THP MiB", 7, 1.0 / 1024, 0), rv_u64(r->huge_kib)) \
	X("table_bytes", REC_U64, 0, REC_NOCOL, rv_u64(r->table_bytes))                         \
	X("session_bytes", REC_U64, 0, REC_NOCOL, rv_u64(r->session_bytes))                     \
	X("cpu_share", REC_F64, 3, REC_NOCOL, rv_f64(r->cpu_share))                             \
	X("cpu_cycles_per_pkt", REC_F64, 1, REC_NOCOL, rv_f64(r->cpu_cycles_per_pkt))           \
	X("teid_check", REC_BOOL, 0, REC_NOCOL,                                                 \
	  r->cfg.table == UP_TABLE_SLOT ? rv_bool(r->cfg.teid_check) : rv_null())               \
	/* the table says "n/a" for counters perf_event_open does not have */                  \
	X(NULL, REC_STR, 0, REC_COL("LLC/pkt", 7, 0, 0), rv_str(llc))                           \
	X(NULL, REC_STR, 0, REC_COL("dTLB/pkt", 8, 0, 0), rv_str(dtlb))

static const struct rec_field run_fields[] = { RUN_FIELDS(REC_FIELD) };
static const struct rec_schema run_schema = { "upf_run", run_fields, ARRAY_SIZE(run_fields) };

static void fmt_hw(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.3f", v);
}

int up_write_run(struct rec_writer *w, const struct run_rec *x)
{
	const struct up_result *r = &x->r;
	const struct up_floor *fl = x->floor;
	uint64_t dropped = r->not_gtpu + r->no_session + r->no_pdr + r->far_drop + r->qer_drop;
	char llc[32], dtlb[32];

	fmt_hw(r->llc_per_pkt, llc, sizeof(llc));
	fmt_hw(r->dtlb_per_pkt, dtlb, sizeof(dtlb));
	struct rec_value v[] = { RUN_FIELDS(REC_VALUE) };
	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(run_fields), "a value per field");
	return rec_write(w, &run_schema, v);
}


void up_run_notes(const struct run_rec *x)
{
	const struct up_result *r = &x->r;
	double lhs = r->mpps * TK_MEGA_F * r->cycles_per_pkt, rhs = r->threads * r->tsc_hz;
	char thp[32];

	note("%s: identity: %.3f Mpps x %.1f cycles/packet = %.1fM cycles/s; %u thread%s x %.3f GHz = %.1fM cycles/s; ratio %.3f: %s",
	     x->label, r->mpps, r->cycles_per_pkt, lhs / TK_MEGA_F, r->threads, r->threads == 1 ? "" : "s",
	     r->tsc_hz / TK_GIGA_F, rhs / TK_MEGA_F, r->identity_ratio,
	     up_identity_holds(r->identity_ratio) ? "holds"
					       : "FAILS (threads idle or descheduled for part of the run)");
	if (x->floor)
		note("%s: %.1f cycles/packet = %.2f x the memory floor (%.1f cycles per DRAM access at %u chains; %.1f with one outstanding)",
		     x->label, r->cycles_per_pkt, r->cycles_per_pkt / x->floor->mlp_cycles,
		     x->floor->mlp_cycles, x->floor->mlp_chains, x->floor->serial_cycles);
	if (isnan(r->llc_per_pkt))
		note("%s: LLC and dTLB misses per packet: n/a (%s)", x->label,
		     up_perf_missing() ? up_perf_missing() : "not measured");
	else
		note("%s: LLC misses per packet %.3f, dTLB misses per packet %.3f", x->label,
		     r->llc_per_pkt, r->dtlb_per_pkt);
	if (r->cfg.huge)
		note("%s: huge pages: asked (THP mode %s); obtained %llu KiB AnonHugePages for sessions and table (%llu KiB in the process, smaps_rollup)",
		     x->label, up_thp_mode(thp, sizeof(thp)), (unsigned long long)r->huge_kib,
		     (unsigned long long)r->proc_huge_kib);
	if (r->oversubscribed)
		note("%s: %u threads share fewer CPUs: the run is oversubscribed", x->label, r->threads);
	if (r->cpu_share < 0.9)
		note("%s: the threads ran only %.0f%% of their wall time (other load on the machine): %.1f cycles/packet while running",
		     x->label, 100 * r->cpu_share, r->cpu_cycles_per_pkt);
	if (r->cfg.verify)
		note("%s: counters: %s", x->label, r->verify_msg);
}
