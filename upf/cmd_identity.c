// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench check-identity: whether Mpps x cycles/packet = workers x Hz
 * holds for the figures given, or for the incident's.
 */
#include <stdio.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "args.h"
#include "cmd.h"

#define IDENTITY_FIELDS(X)                                                                 \
	X("label", REC_STR, 0, REC_COL("figures", -10, 0, 0), rv_str(x->label))             \
	X("mpps", REC_F64, 3, REC_COL("Mpps", 7, 0, 2), rv_f64(x->mpps))                    \
	X("cycles_per_pkt", REC_F64, 1, REC_COL("cyc/pkt", 8, 0, 0), rv_f64(x->cycles))     \
	X("workers", REC_U64, 0, REC_COL("workers", 7, 0, 0), rv_u64(x->workers))           \
	X("hz", REC_F64, 0, REC_COL("GHz", 5, TK_NANO_F, 2), rv_f64(x->ghz * TK_GIGA_F))    \
	X("implied_mpps", REC_F64, 3, REC_COL("implied Mpps", 12, 0, 2), rv_f64(implied))   \
	X("ratio", REC_F64, 3, REC_COL("ratio", 6, 0, 3), rv_f64(x->mpps / implied))        \
	X("holds", REC_BOOL, 0, REC_COL("holds", 5, 0, 0), rv_bool(up_identity_holds(x->mpps / implied)))

static const struct rec_field identity_fields[] = { IDENTITY_FIELDS(REC_FIELD) };
static const struct rec_schema identity_schema = { "identity", identity_fields, ARRAY_SIZE(identity_fields) };

/* the rate that workers x Hz / cycles allows, Mpps */
static double implied_mpps(const struct up_figures *x)
{
	return (double)x->workers * x->ghz * TK_GIGA_F / x->cycles / TK_MEGA_F;
}

static int write_identity(struct rec_writer *w, const struct up_figures *x)
{
	double implied = implied_mpps(x);
	struct rec_value v[] = { IDENTITY_FIELDS(REC_VALUE) };

	return rec_write(w, &identity_schema, v);
}

int up_cmd_check_identity(struct up_args *a)
{
	const struct up_figures given = { "given", a->id_mpps, a->id_cycles, a->id_ghz,
					  a->id_workers ? a->id_workers : 1 };
	const struct up_figures *rows = a->id_mpps ? &given : up_incident;
	unsigned int n = a->id_mpps ? 1 : UP_NINCIDENT;
	struct rec_writer *w;
	FILE *out = up_output_open(a);
	bool all = true;
	int rc = 0;

	if (!out)
		return TK_EXIT_FAIL;
	w = up_writer_open(a, out);
	for (unsigned int i = 0; w && i < n && !rc; i++)
		rc = write_identity(w, &rows[i]);
	if (!w || rec_writer_free(w) || rc) {
		up_output_close(a, out);
		return TK_EXIT_FAIL;
	}
	for (unsigned int i = 0; i < n; i++) {
		double implied = implied_mpps(&rows[i]);
		bool holds = up_identity_holds(rows[i].mpps / implied);

		all &= holds;
		note("%s: %llu workers x %.2f GHz / %.0f cycles/packet = %.1f Mpps, but %.2f Mpps was reported: the identity %s",
		     rows[i].label, (unsigned long long)rows[i].workers, rows[i].ghz, rows[i].cycles,
		     implied, rows[i].mpps, holds ? "holds" : "FAILS");
	}
	if (up_output_close(a, out))
		return TK_EXIT_FAIL;
	return all ? TK_EXIT_OK : TK_EXIT_IDENTITY;
}
