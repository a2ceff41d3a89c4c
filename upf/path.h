/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The user-plane path, per packet: parse (Ethernet, IP, UDP 2152, GTP-U,
 * inner 5-tuple), look the session up by TEID, match its PDRs by QFI and
 * inner 5-tuple, apply the FAR, the QER token bucket and the usage
 * counters, decapsulate. Done in bursts of --batch packets, stage by stage,
 * so that with prefetching every lookup of a burst is in flight at once.
 *
 * Placement of sessions and work:
 *   global   one table and one session pool shared by every worker; packets
 *            go to workers round-robin, so any worker sees any session;
 *            counters and QER state are updated with atomics.
 *   sharded  a dispatcher thread parses each packet and hashes its TEID to
 *            a worker's ring; each worker owns its sessions, plain counters.
 *   steered  traffic arrives already split by TEID (NIC flow steering): each
 *            worker owns its sessions and its packets, no dispatcher.
 */
#ifndef UP_PATH_H
#define UP_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"
#include "traffic.h"

#define UP_MAX_BATCH 64
#define UP_MAX_WORKERS 64

enum up_design { UP_GLOBAL, UP_SHARDED, UP_STEERED };
/* how a packet finds its session: a table (own, rte_hash), or the slot its TEID names */
enum up_table_kind { UP_TABLE_OWN, UP_TABLE_RTE, UP_TABLE_SLOT };
enum up_stage { UP_ST_RX, UP_ST_PARSE, UP_ST_LOOKUP, UP_ST_RULES, UP_ST_COUNTERS, UP_ST_DECAP,
		UP_NSTAGES };

extern const char *const up_design_names[];  /* NULL-terminated, by enum */
extern const char *const up_table_names[];
extern const char *const up_layout_names[];
extern const char *const up_stage_names[];

struct up_run_cfg {
	enum up_design design;
	enum up_table_kind table;
	enum up_layout layout;
	unsigned int batch;     /* 1..UP_MAX_BATCH */
	bool prefetch;
	bool huge;              /* THP for the session pools and the table */
	unsigned int workers;
	uint64_t packets;
	bool perf;              /* hardware counters where perf_event_open has them */
	bool verify;            /* check every session's counters against the traffic */
	bool teid_check;        /* slot table: compare the TEID with the one the slot gave out */
};

struct up_result {
	struct up_run_cfg cfg;
	unsigned int threads;   /* workers, plus the dispatcher when sharded */
	uint32_t sessions;
	uint64_t packets;
	double wall_s;
	double mpps;
	double cycles_per_pkt;  /* TSC cycles of every data-path thread, per packet */
	double stage_cycles[UP_NSTAGES];
	double other_cycles;    /* the rest: loop, rings, waiting */
	double tsc_hz;
	double identity_ratio;  /* Mpps x cycles/packet / (threads x Hz) */
	double cpu_share;       /* CPU time of the threads / their wall time */
	double cpu_cycles_per_pkt; /* CPU time of the threads x TSC Hz / packets */
	bool oversubscribed;    /* more threads than CPUs */
	uint64_t malformed, not_gtpu, no_session, no_pdr, far_drop, qer_drop, forwarded;
	double llc_per_pkt, dtlb_per_pkt; /* NAN: not available */
	uint64_t huge_kib;      /* AnonHugePages backing the pools and the table */
	uint64_t proc_huge_kib; /* AnonHugePages of the whole process during the run */
	uint64_t table_bytes, session_bytes;
	/* cfg.verify */
	bool verify_ok;
	uint64_t verify_sessions, verify_pkts, verify_bytes;
	char verify_msg[256];
};

/* per-session counters after a run, by session index of the traffic */
struct up_counters {
	uint64_t *pkts, *bytes, *drops;
};

/* NULL when the configuration can run, else why not (a sentence naming the options) */
const char *up_cfg_refused(const struct up_run_cfg *c);

/* whose TEIDs a run's sessions have: slot-encoded with the slot table, else hashed */
static inline enum up_teids up_run_teids(const struct up_run_cfg *c)
{
	return c->table == UP_TABLE_SLOT ? UP_TEIDS_SLOT : UP_TEIDS_HASHED;
}

/*
 * The packets of a run in generation order, as its receive contexts build
 * them: packet g is stream position g mod L, and the k-th packet its
 * context built (so its template is k mod UP_NTPL).
 */
struct up_walk {
	const struct up_traffic *t;
	const struct up_run_cfg *c;
	struct up_slot_split split;
	uint64_t g;
	uint64_t kw[UP_MAX_WORKERS];
};

void up_walk_init(struct up_walk *wk, const struct up_traffic *t, const struct up_run_cfg *c);
void up_walk_next(struct up_walk *wk, uint32_t *pos, uint64_t *k);

/*
 * Start DPDK's EAL with enough memory for tables of up to max_sessions keys,
 * before the first run with UP_TABLE_RTE. 0, or negative with err.
 */
int up_rte_prepare(uint32_t max_sessions, bool huge, char *err, size_t errlen);

/*
 * One run. 0; -1 with a sentence in err for a setup failure. A counter
 * mismatch is not a failure here: r->verify_ok says it. `out`, when not
 * NULL, receives per-session counters (arrays of t->n_sess, caller-owned).
 */
int up_run(const struct up_traffic *t, const struct up_run_cfg *c, struct up_result *r,
	   struct up_counters *out, char *err, size_t errlen);

/* table lookups alone: the stream's TEIDs looked up in bursts */
struct up_lookup_result {
	enum up_table_kind table;
	unsigned int batch;
	uint32_t sessions;
	uint64_t lookups, misses;
	double cycles_per_lookup;
	double tsc_hz;
	uint64_t table_bytes;
	uint64_t huge_kib;
};

int up_lookup_bench(const struct up_traffic *t, enum up_table_kind kind, unsigned int batch,
		    bool huge, uint64_t lookups, struct up_lookup_result *r, char *err,
		    size_t errlen);

#endif
