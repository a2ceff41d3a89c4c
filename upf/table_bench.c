// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session tables alone (upfbench lookup): the stream's TEIDs looked up
 * in bursts in the own table or in rte_hash, in cycles per lookup, with no
 * packet and no session around them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "path.h"
#include "table.h"
#include "table_rte.h"

int up_lookup_bench(const struct up_traffic *t, enum up_table_kind kind, unsigned int batch,
		    bool huge, uint64_t lookups, struct up_lookup_result *r, char *err,
		    size_t errlen)
{
	static unsigned int bench_no;
	struct upt own = { 0 };
	struct upt_rte *rte = NULL;
	uint32_t *keys, vals[UP_MAX_BATCH];
	uint64_t pos = 0, t0, t1, sum = 0, misses = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->table = kind;
	r->batch = batch;
	r->sessions = t->n_sess;
	r->lookups = lookups;
	r->tsc_hz = up_tsc_hz();
	if (!batch || batch > UP_MAX_BATCH || t->from_pcap) {
		snprintf(err, errlen, "invalid lookup run");
		return -1;
	}
	keys = malloc((size_t)t->len * sizeof(*keys));
	if (!keys) {
		snprintf(err, errlen, "out of memory for %u keys", t->len);
		return -1;
	}
	for (uint32_t i = 0; i < t->len; i++)
		keys[i] = __builtin_bswap32(t->spec[i].teid_be);
	if (kind == UP_TABLE_OWN) {
		if (upt_init(&own, t->n_sess, huge)) {
			snprintf(err, errlen, "out of memory for the table");
			goto out;
		}
		r->table_bytes = own.bytes;
	} else {
		char name[32];
		size_t before = upt_rte_heap_bytes();

		snprintf(name, sizeof(name), "uplk%u", ++bench_no);
		rte = upt_rte_create(name, t->n_sess);
		if (!rte) {
			snprintf(err, errlen, "rte_hash_create(%u keys) failed", t->n_sess);
			goto out;
		}
		r->table_bytes = upt_rte_heap_bytes() - before;
	}
	for (uint32_t s = 0; s < t->n_sess; s++) {
		int irc = kind == UP_TABLE_OWN ? upt_insert(&own, t->sess[s].teid, s)
					       : upt_rte_insert(rte, t->sess[s].teid, s);

		if (irc) {
			snprintf(err, errlen, "insert failed: %s", strerror(-irc));
			goto out;
		}
	}
	r->huge_kib = kind == UP_TABLE_OWN ? up_mem_huge_kib(own.b) : upt_rte_huge_kib();
	t0 = up_tsc();
	for (uint64_t done = 0; done < lookups;) {
		unsigned int n = batch;

		if (lookups - done < n)
			n = (unsigned int)(lookups - done);
		if (pos + n > t->len)
			pos = 0;
		if (kind == UP_TABLE_OWN) {
			if (n > 1)
				upt_lookup_bulk(&own, keys + pos, n, vals);
			else
				vals[0] = upt_lookup(&own, keys[pos]);
		} else {
			if (n > 1)
				upt_rte_lookup_bulk(rte, keys + pos, n, vals);
			else
				vals[0] = upt_rte_lookup(rte, keys[pos]);
		}
		for (unsigned int i = 0; i < n; i++) {
			misses += vals[i] == UINT32_MAX;
			sum += vals[i];
		}
		pos += n;
		done += n;
	}
	t1 = up_tsc();
	r->misses = misses;
	r->cycles_per_lookup = (double)(t1 - t0) / (double)lookups;
	if (sum == 42) /* keep the lookups from being optimised away */
		fputc('\0', stderr);
	rc = 0;
out:
	if (own.b)
		upt_free(&own);
	upt_rte_free(rte);
	free(keys);
	return rc;
}
