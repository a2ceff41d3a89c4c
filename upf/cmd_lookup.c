// SPDX-License-Identifier: GPL-2.0-only
/*
 * upfbench lookup: the session table alone, every table at every batch
 * size, in cycles per lookup.
 */
#include <stdio.h>

#include "common.h"
#include "log.h"
#include "record.h"

#include "table.h"
#include "traffic.h"
#include "cmd.h"

#define LOOKUP_FIELDS(X)                                                                        \
	X("table", REC_STR, 0, REC_COL("table", -9, 0, 0), rv_str(up_table_names[r->table]))     \
	X("sessions", REC_U64, 0, REC_COL("sessions", 9, 0, 0), rv_u64(r->sessions))             \
	X("batch", REC_U64, 0, REC_COL("batch", 5, 0, 0), rv_u64(r->batch))                      \
	X("lookups", REC_U64, 0, REC_COL("lookups", 10, 0, 0), rv_u64(r->lookups))               \
	X("cycles_per_lookup", REC_F64, 2, REC_COL("cyc/lookup", 10, 0, 1),                      \
	  rv_f64(r->cycles_per_lookup))                                                          \
	X("mlookups_per_s", REC_F64, 2, REC_COL("Mlookup/s", 9, 0, 1),                           \
	  rv_f64(r->tsc_hz / r->cycles_per_lookup / TK_MEGA_F))                                  \
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

int up_cmd_lookup(struct up_args *a)
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
	rc = up_check_rte(a->gen.sessions, need_rte, a->run.huge);
	if (!rc && !(out = up_output_open(a)))
		rc = TK_EXIT_FAIL;
	if (!rc)
		rc = up_load_traffic(a, a->gen.sessions,
				     a->lookups ? a->lookups : up_default_lookups(a->gen.sessions), &t);
	if (!rc && !(w = up_writer_open(a, out)))
		rc = TK_EXIT_FAIL;
	if (!rc)
		rc = lookup_runs(a, &t, w, res, &nres);
	if (w && rec_writer_free(w) && !rc)
		rc = TK_EXIT_FAIL;
	lookup_notes(res, nres);
	if (up_output_close(a, out) && !rc)
		rc = TK_EXIT_FAIL;
	up_traffic_free(&t);
	return rc;
}
