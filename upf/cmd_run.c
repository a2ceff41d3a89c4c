// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench run: one design over generated traffic or a capture, its record
 * and notes, and on request the traffic as pcap and every session's
 * counters as CSV.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "path.h"
#include "traffic.h"
#include "cmd.h"

#define PCAP_OUT_T0_NS 1700000000000000000ull /* --pcap-out's first timestamp */
#define PCAP_OUT_GAP_NS TK_NSEC_PER_USEC      /* and the gap between frames */

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
	int rc = up_check_rte(a->gen.sessions, a->run.table == UP_TABLE_RTE, a->run.huge);

	if (rc)
		return rc;
	j->out = up_output_open(a);
	if (!j->out)
		return TK_EXIT_FAIL;
	if (a->floor_mib != 0) {
		if (up_measure_floor(a, &j->floor))
			return TK_EXIT_FAIL;
		j->x.floor = &j->floor;
	}
	rc = up_load_traffic(a, a->gen.sessions,
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
	struct rec_writer *w = up_writer_open(a, j->out);

	if (!w || up_write_run(w, &j->x) || rec_writer_free(w)) {
		elog("writing the record failed");
		return TK_EXIT_FAIL;
	}
	up_run_notes(&j->x);
	if (up_output_close(a, j->out)) {
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

int up_cmd_run(struct up_args *a)
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
