// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench: how many cycles per packet does a GTP-U user-plane path cost,
 * and which design removes the cache misses?
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "log.h"
#include "record.h"

#include "args.h"
#include "floor.h"
#include "gtpu.h"
#include "hw.h"
#include "path.h"
#include "table_rte.h"
#include "traffic.h"

#define MAX_SWEEP_DESIGNS 512
#define PCAP_OUT_T0_NS 1700000000000000000ull /* --pcap-out's first timestamp */
#define PCAP_OUT_GAP_NS 1000                  /* and the gap between frames */
#define DECODE_MBR_BPS 100000000              /* decode runs no QER: any rate */

/* notes: after a table, in its stream; on stderr under CSV and JSON */
static FILE *notes;

#define note(...)                                                 \
	do {                                                      \
		if (log_get_level() >= LOG_NORMAL) {              \
			fprintf(notes, "%s: ", log_prog());       \
			fprintf(notes, __VA_ARGS__);              \
			fputc('\n', notes);                       \
		}                                                 \
	} while (0)

/* ---- output ---------------------------------------------------------------------------- */

/* -o FILE, or stdout; NULL after one line */
static FILE *output_open(const struct up_args *a)
{
	FILE *f;

	if (!a->output)
		return stdout;
	f = fopen(a->output, "w");
	if (!f)
		elog("--output: cannot write %s: %s", a->output, strerror(errno));
	return f;
}

/* 0, or TK_EXIT_FAIL after one line when the output could not be written */
static int output_close(const struct up_args *a, FILE *f)
{
	if (!f)
		return 0;
	if (f == stdout ? fflush(f) : fclose(f)) {
		elog("--output: writing %s failed", a->output ? a->output : "stdout");
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* a writer in -f's format (by default as lib/record says for this stream); notes follow a table */
static struct rec_writer *writer_open(const struct up_args *a, FILE *out)
{
	struct rec_writer *w = rec_writer_new(a->fmt_set ? a->fmt : rec_format_default(out), out);

	if (w)
		notes = rec_writer_format(w) == REC_TABLE ? out : stderr;
	return w;
}

/* ---- the run record ------------------------------------------------------------------- */

struct run_rec {
	char label[48];
	const char *dist;
	struct up_result r;
	const struct up_floor *floor;   /* NULL: not measured */
};

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

static int write_run(struct rec_writer *w, const struct run_rec *x)
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

static bool identity_holds(double ratio)
{
	return fabs(ratio - 1) <= UP_IDENTITY_TOLERANCE;
}

static void run_notes(const struct run_rec *x)
{
	const struct up_result *r = &x->r;
	double lhs = r->mpps * 1e6 * r->cycles_per_pkt, rhs = r->threads * r->tsc_hz;
	char thp[32];

	note("%s: identity: %.3f Mpps x %.1f cycles/packet = %.1fM cycles/s; %u thread%s x %.3f GHz = %.1fM cycles/s; ratio %.3f: %s",
	     x->label, r->mpps, r->cycles_per_pkt, lhs / 1e6, r->threads, r->threads == 1 ? "" : "s",
	     r->tsc_hz / 1e9, rhs / 1e6, r->identity_ratio,
	     identity_holds(r->identity_ratio) ? "holds"
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

/* ---- what the commands share ---------------------------------------------------------- */

static int measure_floor(const struct up_args *a, struct up_floor *f)
{
	char err[256];
	size_t bytes = a->floor_mib == UP_FLOOR_DEFAULT ? up_floor_default_bytes()
							: (size_t)a->floor_mib << 20;

	vlog("measuring the memory floor over %zu MiB", bytes >> 20);
	if (up_floor_measure(bytes, f, err, sizeof(err))) {
		elog("%s", err);
		return -1;
	}
	return 0;
}

/* the capture (--pcap-in), or sessions and packets generated */
static int load_traffic(const struct up_args *a, uint32_t sessions, uint64_t packets,
			struct up_traffic *t)
{
	char err[256];
	struct up_gen_opts g = a->gen;

	if (a->pcap_in) {
		if (up_traffic_pcap(t, a->pcap_in, a->gen.mbr_bps, err, sizeof(err))) {
			elog("%s", err);
			return TK_EXIT_DATA;
		}
		if (t->truncated)
			wlog("--pcap-in: %u frames were cut short by the capture's snap length; they count as malformed",
			     t->truncated);
		return 0;
	}
	g.sessions = sessions;
	g.packets = packets;
	vlog("generating %u sessions and their packet stream", sessions);
	if (up_traffic_gen(t, &g, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_FAIL;
	}
	return 0;
}

/* DPDK's EAL, when a table of max_sessions keys will be an rte_hash */
static int check_rte(uint32_t max_sessions, bool needed, bool huge)
{
	char err[256];
	int rc;

	if (!needed)
		return 0;
	rc = up_rte_prepare(max_sessions, huge, err, sizeof(err));
	if (rc) {
		elog("%s", err);
		return rc == -ENOTSUP ? TK_EXIT_NOTSUP : TK_EXIT_FAIL;
	}
	return 0;
}

/* ---- run -------------------------------------------------------------------------------- */

static int write_pcap_out(const struct up_args *a, const struct up_traffic *t,
			  const struct up_run_cfg *c)
{
	char err[256];
	struct up_pcap_out *po = up_pcap_open(a->pcap_out, err, sizeof(err));
	uint8_t frame[UP_PCAP_FRAME_MAX];
	struct up_walk wk;

	if (!po) {
		elog("%s", err);
		return -1;
	}
	up_walk_init(&wk, t, c);
	for (uint64_t g = 0; g < c->packets; g++) {
		uint32_t pos;
		uint64_t k;
		size_t len;

		/* the packet the receive context of g built: template k mod UP_NTPL */
		up_walk_next(&wk, &pos, &k);
		len = up_traffic_frame(t, up_run_teids(c), k, pos, frame, sizeof(frame));
		up_pcap_write(po, frame, len, PCAP_OUT_T0_NS + g * PCAP_OUT_GAP_NS);
	}
	if (up_pcap_close(po)) {
		elog("--pcap-out: writing %s failed", a->pcap_out);
		return -1;
	}
	return 0;
}

#define COUNTER_FIELDS(X)                                                            \
	X("teid", REC_U64, 0, REC_COL("teid", 10, 0, 0), rv_u64(up_traffic_teid(t, teids, s))) \
	X("pkts", REC_U64, 0, REC_COL("pkts", 10, 0, 0), rv_u64(c->pkts[s]))          \
	X("bytes", REC_U64, 0, REC_COL("bytes", 12, 0, 0), rv_u64(c->bytes[s]))       \
	X("drop_pkts", REC_U64, 0, REC_COL("drop_pkts", 10, 0, 0), rv_u64(c->drops[s]))

static const struct rec_field counter_fields[] = { COUNTER_FIELDS(REC_FIELD) };
static const struct rec_schema counter_schema = { NULL, counter_fields, ARRAY_SIZE(counter_fields) };

/* every session's counters, under the TEID the run gave it */
static int write_counters(const char *path, const struct up_traffic *t, enum up_teids teids,
			  const struct up_counters *c)
{
	FILE *f = fopen(path, "w");
	struct rec_writer *w;
	int rc = 0;

	if (!f) {
		elog("--counters-out: cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	w = rec_writer_new(REC_CSV, f);
	for (uint32_t s = 0; w && s < t->n_sess && !rc; s++) {
		struct rec_value v[] = { COUNTER_FIELDS(REC_VALUE) };

		rc = rec_write(w, &counter_schema, v);
	}
	if (!w || rec_writer_free(w) || rc || fclose(f)) {
		elog("--counters-out: writing %s failed", path);
		return -1;
	}
	return 0;
}

/* what one run command holds */
struct run_job {
	FILE *out;
	struct up_traffic t;
	struct up_floor floor;
	struct up_counters cnt;
	struct run_rec x;
};

/* the output, the floor, the traffic (and its pcap), the counters' room */
static int run_prepare(struct up_args *a, struct run_job *j)
{
	int rc = check_rte(a->gen.sessions, a->run.table == UP_TABLE_RTE, a->run.huge);

	if (rc)
		return rc;
	j->out = output_open(a);
	if (!j->out)
		return TK_EXIT_FAIL;
	if (a->floor_mib != 0) {
		if (measure_floor(a, &j->floor))
			return TK_EXIT_FAIL;
		j->x.floor = &j->floor;
	}
	rc = load_traffic(a, a->gen.sessions,
			  a->packets_set ? a->run.packets : up_default_packets(a->gen.sessions), &j->t);
	if (rc)
		return rc;
	if (!a->packets_set)
		a->run.packets = a->pcap_in ? j->t.len : up_default_packets(a->gen.sessions);
	if (a->pcap_out && write_pcap_out(a, &j->t, &a->run))
		return TK_EXIT_FAIL;
	if (a->counters_out) {
		j->cnt.pkts = calloc(j->t.n_sess + 1, sizeof(uint64_t));
		j->cnt.bytes = calloc(j->t.n_sess + 1, sizeof(uint64_t));
		j->cnt.drops = calloc(j->t.n_sess + 1, sizeof(uint64_t));
		if (!j->cnt.pkts || !j->cnt.bytes || !j->cnt.drops) {
			elog("out of memory for %u sessions' counters", j->t.n_sess);
			return TK_EXIT_FAIL;
		}
	}
	return 0;
}

/* the record and its notes, the counters file; whether the counters were exact */
static int run_report(const struct up_args *a, struct run_job *j)
{
	struct rec_writer *w = writer_open(a, j->out);

	if (!w || write_run(w, &j->x) || rec_writer_free(w)) {
		elog("writing the record failed");
		return TK_EXIT_FAIL;
	}
	run_notes(&j->x);
	if (output_close(a, j->out)) {
		j->out = NULL;
		return TK_EXIT_FAIL;
	}
	j->out = NULL;
	if (a->counters_out && write_counters(a->counters_out, &j->t, up_run_teids(&a->run), &j->cnt))
		return TK_EXIT_FAIL;
	if (a->run.verify && !j->x.r.verify_ok) {
		elog("counters are not exact: %s", j->x.r.verify_msg);
		return TK_EXIT_COUNTERS;
	}
	return TK_EXIT_OK;
}

static void run_job_free(struct run_job *j)
{
	if (j->out && j->out != stdout)
		fclose(j->out);
	free(j->cnt.pkts);
	free(j->cnt.bytes);
	free(j->cnt.drops);
	up_traffic_free(&j->t);
}

static int cmd_run(struct up_args *a)
{
	struct run_job j = { 0 };
	char err[256];
	int rc = run_prepare(a, &j);

	if (!rc) {
		a->run.perf = true;
		if (a->preset)
			snprintf(j.x.label, sizeof(j.x.label), "%s", a->preset);
		else
			up_label(&a->run, j.x.label, sizeof(j.x.label));
		j.x.dist = a->pcap_in ? "pcap" : up_dist_names[a->gen.dist];
		vlog("running %s: %u sessions, %llu packets", j.x.label, j.t.n_sess,
		     (unsigned long long)a->run.packets);
		if (up_run(&j.t, &a->run, &j.x.r, a->counters_out ? &j.cnt : NULL, err, sizeof(err))) {
			elog("%s", err);
			rc = TK_EXIT_FAIL;
		} else {
			rc = run_report(a, &j);
		}
	}
	run_job_free(&j);
	return rc;
}

/* ---- sweep ------------------------------------------------------------------------------ */

/* the designs a sweep runs at each session count */
struct sweep {
	struct up_run_cfg cfgs[MAX_SWEEP_DESIGNS];
	const char *labels[MAX_SWEEP_DESIGNS]; /* a preset's name; NULL: up_label's */
	unsigned int n;
	struct rec_writer *w;
	const struct up_floor *floor;
	unsigned int done;
};

/* whether the sweep has this design already (the same label) */
static bool sweep_has(const struct sweep *s, const struct up_run_cfg *c)
{
	char label[48], other[48];

	up_label(c, label, sizeof(label));
	for (unsigned int i = 0; i < s->n; i++) {
		up_label(&s->cfgs[i], other, sizeof(other));
		if (!strcmp(label, other))
			return true;
	}
	return false;
}

/* the product of the knobs' lists, the last knob varying fastest */
static void sweep_product(const struct up_args *a, struct sweep *s)
{
	unsigned int total = 1;

	for (int k = 0; k < UP_NKNOBS; k++)
		if (a->knob[k].n && (total *= a->knob[k].n) > MAX_SWEEP_DESIGNS)
			cli_usage_die("sweep: more than %u designs", MAX_SWEEP_DESIGNS);
	for (unsigned int i = 0; i < total; i++) {
		struct up_run_cfg c = a->run;
		unsigned int rest = i;

		for (int k = UP_NKNOBS - 1; k >= 0; k--) {
			unsigned int n = a->knob[k].n;

			if (n) {
				up_knob_set(&c, (enum up_knob)k, a->knob[k].v[rest % n]);
				rest /= n;
			}
		}
		up_check_workers(&c);
		if (up_cfg_refused(&c)) {
			char label[48];

			up_label(&c, label, sizeof(label));
			wlog("sweep: leaving out %s: %s", label, up_cfg_refused(&c));
			continue;
		}
		/* --teid-check on,off makes the tables' designs twice: once is enough */
		if (sweep_has(s, &c))
			continue;
		s->labels[s->n] = NULL;
		s->cfgs[s->n++] = c;
	}
	if (!s->n)
		cli_usage_die("sweep: no design left to run (see the lines above)");
}

/* the presets (--presets, or sweep's default ones), or the product of the knobs' lists */
static void sweep_designs(const struct up_args *a, struct sweep *s)
{
	if (!a->presets.n) {
		sweep_product(a, s);
		return;
	}
	for (unsigned int i = 0; i < a->presets.n; i++) {
		const struct up_preset *p = &up_presets[a->presets.v[i]];

		s->cfgs[s->n] = a->run;
		up_preset_apply(&s->cfgs[s->n], p);
		s->labels[s->n++] = p->name;
	}
}

/* one design over one traffic: its record, and whether its counters were exact */
static int sweep_one(const struct up_args *a, struct sweep *s, unsigned int i,
		     const struct up_traffic *t, uint64_t packets)
{
	struct run_rec x = { .dist = up_dist_names[a->gen.dist], .floor = s->floor };
	struct up_run_cfg c = s->cfgs[i];
	char err[256];

	c.packets = packets;
	c.perf = true;
	if (s->labels[i])
		snprintf(x.label, sizeof(x.label), "%s", s->labels[i]);
	else
		up_label(&c, x.label, sizeof(x.label));
	if (up_run(t, &c, &x.r, NULL, err, sizeof(err))) {
		elog("%s at %u sessions: %s", x.label, t->n_sess, err);
		return TK_EXIT_FAIL;
	}
	s->done++;
	ilog("sweep %u/%u: %s at %u sessions: %.1f cycles/packet, %.3f Mpps%s", s->done,
	     s->n * a->sessions.n, x.label, t->n_sess, x.r.cycles_per_pkt, x.r.mpps,
	     c.verify ? (x.r.verify_ok ? ", counters exact" : ", COUNTERS NOT EXACT") : "");
	if (write_run(s->w, &x) || rec_writer_flush(s->w)) {
		elog("writing the record failed");
		return TK_EXIT_FAIL;
	}
	if (c.verify && !x.r.verify_ok) {
		elog("%s: counters are not exact: %s", x.label, x.r.verify_msg);
		return TK_EXIT_COUNTERS;
	}
	return 0;
}

/* every session count: its traffic generated once, then every design over it */
static int sweep_runs(const struct up_args *a, struct sweep *s)
{
	int rc = 0;

	for (unsigned int k = 0; k < a->sessions.n && !rc; k++) {
		uint32_t sessions = (uint32_t)a->sessions.v[k];
		uint64_t packets = a->packets_set ? a->run.packets : up_default_packets(sessions);
		struct up_traffic t;

		rc = load_traffic(a, sessions, packets, &t);
		if (rc)
			break;
		for (unsigned int i = 0; i < s->n && !rc; i++)
			rc = sweep_one(a, s, i, &t, packets);
		up_traffic_free(&t);
	}
	return rc;
}

/* DPDK's EAL for the largest table, when a design uses rte_hash */
static int sweep_check_rte(const struct up_args *a, const struct sweep *s)
{
	bool need_rte = false;
	uint64_t max_sess = 0;

	for (unsigned int i = 0; i < s->n; i++)
		need_rte |= s->cfgs[i].table == UP_TABLE_RTE;
	for (unsigned int k = 0; k < a->sessions.n; k++)
		if (a->sessions.v[k] > max_sess)
			max_sess = a->sessions.v[k];
	return check_rte((uint32_t)max_sess, need_rte, true);
}

static int cmd_sweep(struct up_args *a)
{
	struct sweep s = { 0 };
	struct up_floor floor;
	FILE *out;
	int rc;

	sweep_designs(a, &s);
	rc = sweep_check_rte(a, &s);
	if (rc)
		return rc;
	out = output_open(a);
	if (!out)
		return TK_EXIT_FAIL;
	if (a->floor_mib != 0) {
		if (measure_floor(a, &floor)) {
			output_close(a, out);
			return TK_EXIT_FAIL;
		}
		s.floor = &floor;
		note("memory floor: %.1f cycles per DRAM access with one outstanding (%.1f ns), %.1f at %u chains (%zu MiB, %llu KiB on huge pages)",
		     floor.serial_cycles, floor.serial_ns, floor.mlp_cycles, floor.mlp_chains,
		     floor.bytes >> 20, (unsigned long long)floor.huge_kib);
	}
	s.w = writer_open(a, out);
	notes = stderr;
	rc = s.w ? sweep_runs(a, &s) : TK_EXIT_FAIL;
	if (rec_writer_free(s.w) && !rc)
		rc = TK_EXIT_FAIL;
	if (output_close(a, out) && !rc)
		rc = TK_EXIT_FAIL;
	return rc;
}

/* ---- lookup ----------------------------------------------------------------------------- */

#define LOOKUP_FIELDS(X)                                                                        \
	X("table", REC_STR, 0, REC_COL("table", -9, 0, 0), rv_str(up_table_names[r->table]))     \
	X("sessions", REC_U64, 0, REC_COL("sessions", 9, 0, 0), rv_u64(r->sessions))             \
	X("batch", REC_U64, 0, REC_COL("batch", 5, 0, 0), rv_u64(r->batch))                      \
	X("lookups", REC_U64, 0, REC_COL("lookups", 10, 0, 0), rv_u64(r->lookups))               \
	X("cycles_per_lookup", REC_F64, 2, REC_COL("cyc/lookup", 10, 0, 1),                      \
	  rv_f64(r->cycles_per_lookup))                                                          \
	X("mlookups_per_s", REC_F64, 2, REC_COL("Mlookup/s", 9, 0, 1),                           \
	  rv_f64(r->tsc_hz / r->cycles_per_lookup / 1e6))                                        \
	X("tsc_hz", REC_F64, 0, REC_NOCOL, rv_f64(r->tsc_hz))                                    \
	X("table_bytes", REC_U64, 0, REC_COL("table MiB", 9, 1.0 / (1 << 20), 1),                \
	  rv_u64(r->table_bytes))                                                                \
	X("hugepages", REC_BOOL, 0, REC_NOCOL, rv_bool(a->run.huge))                             \
	X("hugepages_kib", REC_U64, 0, REC_COL("THP MiB", 7, 1.0 / 1024, 0), rv_u64(r->huge_kib)) \
	X("misses", REC_U64, 0, REC_COL("misses", 6, 0, 0), rv_u64(r->misses))                   \
	X("dist", REC_STR, 0, REC_NOCOL, rv_str(up_dist_names[a->gen.dist]))

static const struct rec_field lookup_fields[] = { LOOKUP_FIELDS(REC_FIELD) };
static const struct rec_schema lookup_schema = { "upf_lookup", lookup_fields, ARRAY_SIZE(lookup_fields) };

static int write_lookup(struct rec_writer *w, const struct up_args *a, const struct up_lookup_result *r)
{
	struct rec_value v[] = { LOOKUP_FIELDS(REC_VALUE) };

	return rec_write(w, &lookup_schema, v);
}

/* each batch size's own table against rte_hash's, as a ratio */
static void lookup_notes(const struct up_lookup_result *res, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < n; j++)
			if (res[i].table == UP_TABLE_OWN && res[j].table == UP_TABLE_RTE &&
			    res[i].batch == res[j].batch)
				note("batch %u: own table %.1f cycles/lookup, rte_hash %.1f: own = %.2f x rte_hash",
				     res[i].batch, res[i].cycles_per_lookup, res[j].cycles_per_lookup,
				     res[i].cycles_per_lookup / res[j].cycles_per_lookup);
}

/* every batch size x every table, a record each */
static int lookup_runs(const struct up_args *a, const struct up_traffic *t, struct rec_writer *w,
		       struct up_lookup_result *res, unsigned int *nres)
{
	const struct up_list *tables = &a->knob[UP_K_TABLE], *batches = &a->knob[UP_K_BATCH];
	uint64_t lookups = a->lookups ? a->lookups : up_default_lookups(a->gen.sessions);

	for (unsigned int b = 0; b < batches->n; b++)
		for (unsigned int i = 0; i < tables->n; i++) {
			struct up_lookup_result *r = &res[*nres];
			char err[256];

			if (up_lookup_bench(t, (enum up_table_kind)tables->v[i], (unsigned int)batches->v[b],
					    a->run.huge, lookups, r, err, sizeof(err))) {
				elog("%s", err);
				return TK_EXIT_FAIL;
			}
			(*nres)++;
			if (write_lookup(w, a, r))
				return TK_EXIT_FAIL;
		}
	return 0;
}

static int cmd_lookup(struct up_args *a)
{
	const struct up_list *tables = &a->knob[UP_K_TABLE];
	struct up_lookup_result res[UP_MAX_LIST * UP_MAX_LIST];
	unsigned int nres = 0;
	struct up_traffic t = { 0 };
	struct rec_writer *w = NULL;
	bool need_rte = false;
	FILE *out = NULL;
	int rc;

	for (unsigned int i = 0; i < tables->n; i++)
		need_rte |= tables->v[i] == UP_TABLE_RTE;
	rc = check_rte(a->gen.sessions, need_rte, a->run.huge);
	if (!rc && !(out = output_open(a)))
		rc = TK_EXIT_FAIL;
	if (!rc)
		rc = load_traffic(a, a->gen.sessions,
				  a->lookups ? a->lookups : up_default_lookups(a->gen.sessions), &t);
	if (!rc && !(w = writer_open(a, out)))
		rc = TK_EXIT_FAIL;
	if (!rc)
		rc = lookup_runs(a, &t, w, res, &nres);
	if (w && rec_writer_free(w) && !rc)
		rc = TK_EXIT_FAIL;
	lookup_notes(res, nres);
	if (output_close(a, out) && !rc)
		rc = TK_EXIT_FAIL;
	up_traffic_free(&t);
	return rc;
}

/* ---- floor ------------------------------------------------------------------------------- */

#define FLOOR_FIELDS(X)                                                                      \
	X("buffer_mib", REC_U64, 0, REC_COL("buffer MiB", 10, 0, 0), rv_u64(f.bytes >> 20))   \
	X("l3_mib", REC_F64, 1, REC_COL("L3 MiB", 6, 0, 0),                                  \
	  rv_f64((double)up_l3_bytes() / (1 << 20)))                                         \
	X("floor_serial_cycles", REC_F64, 1, REC_COL("serial cyc", 10, 0, 1),                 \
	  rv_f64(f.serial_cycles))                                                            \
	X("floor_serial_ns", REC_F64, 1, REC_COL("serial ns", 9, 0, 1), rv_f64(f.serial_ns))  \
	X("floor_cycles", REC_F64, 2, REC_COL("MLP cyc", 7, 0, 1), rv_f64(f.mlp_cycles))      \
	X("floor_chains", REC_U64, 0, REC_COL("chains", 6, 0, 0), rv_u64(f.mlp_chains))       \
	X("hugepages_kib", REC_U64, 0, REC_COL("THP MiB", 7, 1.0 / 1024, 0), rv_u64(f.huge_kib)) \
	X("tsc_hz", REC_F64, 0, REC_COL("TSC GHz", 7, 1e-9, 3), rv_f64(f.tsc_hz))

static const struct rec_field floor_fields[] = { FLOOR_FIELDS(REC_FIELD) };
static const struct rec_schema floor_schema = { "memory_floor", floor_fields, ARRAY_SIZE(floor_fields) };

static int cmd_floor(struct up_args *a)
{
	struct up_floor f;
	struct rec_writer *w;
	FILE *out = output_open(a);
	int rc = 0;

	if (!out)
		return TK_EXIT_FAIL;
	if (measure_floor(a, &f)) {
		output_close(a, out);
		return TK_EXIT_FAIL;
	}
	struct rec_value v[] = { FLOOR_FIELDS(REC_VALUE) };
	w = writer_open(a, out);
	if (!w || rec_write(w, &floor_schema, v))
		rc = TK_EXIT_FAIL;
	if (w && rec_writer_free(w))
		rc = TK_EXIT_FAIL;
	if (output_close(a, out))
		rc = TK_EXIT_FAIL;
	return rc;
}

/* ---- decode ------------------------------------------------------------------------------- */

/* one frame as the codec sees it */
struct decoded {
	uint32_t frame;
	int st;
	bool gtp, inner;        /* the GTP-U header parsed; the inner packet too */
	struct gtpu_pkt p;
	struct gtpu_hdr h;
	uint64_t ext[GTPU_MAX_EXT];
	char src[64], dst[64];
};

#define DECODE_FIELDS(X)                                                                         \
	X("frame", REC_U64, 0, REC_COL("frame", 6, 0, 0), rv_u64(d->frame))                       \
	X("status", REC_STR, 0, REC_COL("status", -11, 0, 0), rv_str(gtpu_status_name(d->st)))    \
	X("outer", REC_U64, 0, REC_NOCOL, d->p.outer_family ? rv_u64(d->p.outer_family) : rv_null()) \
	X("msg_type", REC_U64, 0, REC_COL("msg", 3, 0, 0), d->gtp ? rv_u64(h->msg_type) : rv_null()) \
	X("flags", REC_U64, 0, REC_NOCOL, d->gtp ? rv_u64(h->flags) : rv_null())                  \
	X("teid", REC_U64, 0, REC_COL("teid", 10, 0, 0), d->gtp ? rv_u64(h->teid) : rv_null())    \
	X("seq", REC_U64, 0, REC_COL("seq", 5, 0, 0), opt ? rv_u64(h->seq) : rv_null())           \
	X("npdu", REC_U64, 0, REC_NOCOL, opt ? rv_u64(h->npdu) : rv_null())                       \
	X("next_ext", REC_U64, 0, REC_NOCOL, opt ? rv_u64(h->next_ext) : rv_null())               \
	X("ext_types", REC_U64_LIST, 0, REC_COL("ext", -8, 0, 0),                                 \
	  d->gtp ? rv_list(d->ext, h->n_ext) : rv_null())                                         \
	X("pdu_type", REC_U64, 0, REC_NOCOL, pdu ? rv_u64(h->pdu_type) : rv_null())               \
	X("qfi", REC_U64, 0, REC_COL("qfi", 3, 0, 0), pdu ? rv_u64(h->qfi) : rv_null())           \
	X("gtp_len", REC_U64, 0, REC_NOCOL, d->gtp ? rv_u64(h->length) : rv_null())               \
	X("tpdu_len", REC_U64, 0, REC_COL("tpdu", 5, 0, 0), d->gtp ? rv_u64(h->tpdu_len) : rv_null()) \
	X("inner", REC_U64, 0, REC_NOCOL, d->st == GTPU_OK ? rv_u64(d->p.inner_family) : rv_null()) \
	X("inner_src", REC_STR, 0, REC_COL("inner src", -20, 0, 0), d->inner ? rv_str(d->src) : rv_null()) \
	X("inner_dst", REC_STR, 0, REC_COL("inner dst", -20, 0, 0), d->inner ? rv_str(d->dst) : rv_null()) \
	X("proto", REC_U64, 0, REC_COL("proto", 5, 0, 0), d->inner ? rv_u64(d->p.proto) : rv_null()) \
	X("sport", REC_U64, 0, REC_COL("sport", 5, 0, 0), d->inner ? rv_u64(d->p.sport) : rv_null()) \
	X("dport", REC_U64, 0, REC_COL("dport", 5, 0, 0), d->inner ? rv_u64(d->p.dport) : rv_null()) \
	X("inner_len", REC_U64, 0, REC_COL("len", 5, 0, 0), d->inner ? rv_u64(d->p.inner_len) : rv_null())

static const struct rec_field decode_fields[] = { DECODE_FIELDS(REC_FIELD) };
static const struct rec_schema decode_schema = { "gtpu_packet", decode_fields, ARRAY_SIZE(decode_fields) };

static void decode_frame(const struct up_traffic *t, uint32_t i, struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	d->frame = i + 1;
	d->st = gtpu_parse_frame(t->fbuf + t->foff[i], t->flen[i], &d->p, &d->h);
	/* the GTP-U header itself parsed: report it */
	d->gtp = d->st == GTPU_OK || d->st == GTPU_NOT_GPDU || d->st == GTPU_ERR_INNER;
	d->inner = d->st == GTPU_OK && d->p.inner_family;
	if (d->gtp)
		for (int k = 0; k < d->h.n_ext; k++)
			d->ext[k] = d->h.ext_type[k];
	if (d->inner) {
		int fam = d->p.inner_family == 4 ? AF_INET : AF_INET6;

		inet_ntop(fam, d->p.src, d->src, sizeof(d->src));
		inet_ntop(fam, d->p.dst, d->dst, sizeof(d->dst));
	}
}

static int write_decoded(struct rec_writer *w, const struct decoded *d)
{
	const struct gtpu_hdr *h = &d->h;
	bool opt = d->gtp && h->has_opt, pdu = d->gtp && h->has_pdu_session;
	struct rec_value v[] = { DECODE_FIELDS(REC_VALUE) };

	return rec_write(w, &decode_schema, v);
}

static int cmd_decode(struct up_args *a)
{
	struct up_traffic t;
	struct rec_writer *w;
	char err[256];
	FILE *out;
	int rc = 0;

	if (up_traffic_pcap(&t, a->pcap_in, DECODE_MBR_BPS, err, sizeof(err))) {
		elog("%s", err);
		return TK_EXIT_DATA;
	}
	out = output_open(a);
	w = out ? writer_open(a, out) : NULL;
	for (uint32_t i = 0; w && i < t.len && !rc; i++) {
		struct decoded d;

		decode_frame(&t, i, &d);
		rc = write_decoded(w, &d);
	}
	if (!w || rec_writer_free(w) || rc)
		rc = TK_EXIT_FAIL;
	if (output_close(a, out))
		rc = TK_EXIT_FAIL;
	up_traffic_free(&t);
	return rc;
}

/* ---- check-identity ------------------------------------------------------------------------- */

#define IDENTITY_FIELDS(X)                                                                 \
	X("label", REC_STR, 0, REC_COL("figures", -10, 0, 0), rv_str(x->label))             \
	X("mpps", REC_F64, 3, REC_COL("Mpps", 7, 0, 2), rv_f64(x->mpps))                    \
	X("cycles_per_pkt", REC_F64, 1, REC_COL("cyc/pkt", 8, 0, 0), rv_f64(x->cycles))     \
	X("workers", REC_U64, 0, REC_COL("workers", 7, 0, 0), rv_u64(x->workers))           \
	X("hz", REC_F64, 0, REC_COL("GHz", 5, 1e-9, 2), rv_f64(x->ghz * 1e9))               \
	X("implied_mpps", REC_F64, 3, REC_COL("implied Mpps", 12, 0, 2), rv_f64(implied))   \
	X("ratio", REC_F64, 3, REC_COL("ratio", 6, 0, 3), rv_f64(x->mpps / implied))        \
	X("holds", REC_BOOL, 0, REC_COL("holds", 5, 0, 0), rv_bool(identity_holds(x->mpps / implied)))

static const struct rec_field identity_fields[] = { IDENTITY_FIELDS(REC_FIELD) };
static const struct rec_schema identity_schema = { "identity", identity_fields, ARRAY_SIZE(identity_fields) };

/* the rate that workers x Hz / cycles allows, Mpps */
static double implied_mpps(const struct up_figures *x)
{
	return (double)x->workers * x->ghz * 1e9 / x->cycles / 1e6;
}

static int write_identity(struct rec_writer *w, const struct up_figures *x)
{
	double implied = implied_mpps(x);
	struct rec_value v[] = { IDENTITY_FIELDS(REC_VALUE) };

	return rec_write(w, &identity_schema, v);
}

static int cmd_check_identity(struct up_args *a)
{
	const struct up_figures given = { "given", a->id_mpps, a->id_cycles, a->id_ghz,
					  a->id_workers ? a->id_workers : 1 };
	const struct up_figures *rows = a->id_mpps ? &given : up_incident;
	unsigned int n = a->id_mpps ? 1 : UP_NINCIDENT;
	struct rec_writer *w;
	FILE *out = output_open(a);
	bool all = true;
	int rc = 0;

	if (!out)
		return TK_EXIT_FAIL;
	w = writer_open(a, out);
	for (unsigned int i = 0; w && i < n && !rc; i++)
		rc = write_identity(w, &rows[i]);
	if (!w || rec_writer_free(w) || rc) {
		output_close(a, out);
		return TK_EXIT_FAIL;
	}
	for (unsigned int i = 0; i < n; i++) {
		double implied = implied_mpps(&rows[i]);
		bool holds = identity_holds(rows[i].mpps / implied);

		all &= holds;
		note("%s: %llu workers x %.2f GHz / %.0f cycles/packet = %.1f Mpps, but %.2f Mpps was reported: the identity %s",
		     rows[i].label, (unsigned long long)rows[i].workers, rows[i].ghz, rows[i].cycles,
		     implied, rows[i].mpps, holds ? "holds" : "FAILS");
	}
	if (output_close(a, out))
		return TK_EXIT_FAIL;
	return all ? TK_EXIT_OK : TK_EXIT_IDENTITY;
}

static int (*const commands[UP_NCMDS])(struct up_args *a) = {
	[UP_CMD_RUN] = cmd_run,
	[UP_CMD_SWEEP] = cmd_sweep,
	[UP_CMD_LOOKUP] = cmd_lookup,
	[UP_CMD_FLOOR] = cmd_floor,
	[UP_CMD_DECODE] = cmd_decode,
	[UP_CMD_IDENTITY] = cmd_check_identity,
};

int main(int argc, char **argv)
{
	struct up_args a;

	log_init(argv[0]);
	notes = stderr;
	up_args_parse(&a, argc, argv);
	return commands[a.cmd](&a);
}
