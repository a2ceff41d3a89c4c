// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench floor: the memory floor alone, cycles per random DRAM access,
 * in one record.
 */
#include <stdio.h>

#include "common.h"
#include "record.h"

#include "floor.h"
#include "hw.h"
#include "cmd.h"

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
	X("tsc_hz", REC_F64, 0, REC_COL("TSC GHz", 7, TK_NANO_F, 3), rv_f64(f.tsc_hz))

static const struct rec_field floor_fields[] = { FLOOR_FIELDS(REC_FIELD) };
static const struct rec_schema floor_schema = { "memory_floor", floor_fields, ARRAY_SIZE(floor_fields) };

int up_cmd_floor(struct up_args *a)
{
	struct up_floor f;
	struct rec_writer *w;
	FILE *out = up_output_open(a);
	int rc = 0;

	if (!out)
		return TK_EXIT_FAIL;
	if (up_measure_floor(a, &f)) {
		up_output_close(a, out);
		return TK_EXIT_FAIL;
	}
	struct rec_value v[] = { FLOOR_FIELDS(REC_VALUE) };
	w = up_writer_open(a, out);
	if (!w || rec_write(w, &floor_schema, v))
		rc = TK_EXIT_FAIL;
	if (w && rec_writer_free(w))
		rc = TK_EXIT_FAIL;
	if (up_output_close(a, out))
		rc = TK_EXIT_FAIL;
	return rc;
}
