// SPDX-License-Identifier: GPL-2.0-only
/* bpf_stats per BPF program: the "prog_stats" record, written once. */
#include "bpfutil.h"
#include "common.h"
#include "progstats.h"

#define STATS_FIELDS(X)                                                                 \
	X("program", REC_STR, 0, REC_COL("program", -18, 0, 0), rv_str(name))            \
	X("run_cnt", REC_U64, 0, REC_COL("runs", 10, 0, 0), rv_u64(cnt))                 \
	X("run_time_ns", REC_U64, 0, REC_COL("run time ns", 14, 0, 0), rv_u64(ns))       \
	X("ns_per_run", REC_F64, 1, REC_COL("ns/run", 8, 0, 1), rv_f64((double)ns / (double)cnt))
static const struct rec_field stats_fields[] = { STATS_FIELDS(REC_FIELD) };
const struct rec_schema tk_prog_stats_schema = { "prog_stats", stats_fields, ARRAY_SIZE(stats_fields) };

int tk_prog_stats_write(struct rec_writer *w, struct rec_writer *err_w, const char *name, int prog_fd)
{
	uint64_t ns, cnt;

	if (prog_fd < 0 || bpfu_prog_stats(prog_fd, &ns, &cnt) || !cnt)
		return 0;
	struct rec_value v[] = { STATS_FIELDS(REC_VALUE) };
	if (err_w)
		rec_write(err_w, &tk_prog_stats_schema, v);
	return w ? rec_write(w, &tk_prog_stats_schema, v) : 0;
}
