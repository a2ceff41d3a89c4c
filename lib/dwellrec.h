/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * udpdwell's records: written by udpdwell, read by bbrplot. This file is the
 * one place that names their fields, the dwell buckets' labels and the
 * sockets' states; the writer and every reader go through it.
 *
 * Each record type is one list, a field a line: X(member, C type, kept as,
 * JSON decimals, table column). The member's name is the field's JSON name
 * (stringified, so a name is typed once, with its unit in it: avg_us,
 * interval_s); the record's struct is declared from the list, and the
 * writer and the reader walk the same list, so no field is written that is
 * not read back. "Kept as" (UD_KEEP_*, below) says in one word both the
 * value written and how a reader stores it back. The round-trip test
 * (tests/unit/test_dwellrec.c) writes every record type through the writer
 * and reads it back through the reader, and rewrites udpdwell's real output
 * (tests/fixtures/plots/dwell.jsonl) byte for byte.
 */
#ifndef TK_DWELLREC_H
#define TK_DWELLREC_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/contract/udpdwell.h"
#include "jsonl.h"
#include "record.h"

/* --- the buckets: UD_NBUCKETS, upper-inclusive edges UD_LE0..UD_LE7 (the contract) */

/* upper edges of buckets 0..UD_NBUCKETS-2 in microseconds (the last is +Inf) */
extern const double ud_le_us[UD_NBUCKETS - 1];
/* bucket i's label, from its edge: "<=10us" ... "<=50ms", ">50ms" */
const char *ud_bucket_name(unsigned int i);

/* --- the sockets' states ------------------------------------------------------------ */

/* X(name, value): each worse than the one before (the Prometheus gauge's value) */
#define UD_STATES(X, SEP) X(OK, 0) SEP X(WARN, 1) SEP X(ALERT, 2)

enum ud_state {
#define UD_STATE_ENUM(name, value) UD_##name = value,
	UD_STATES(UD_STATE_ENUM, )
#undef UD_STATE_ENUM
};
#define UD_STATE_ONE(name, value) +1
enum { UD_NSTATES = 0 UD_STATES(UD_STATE_ONE, ) };
#undef UD_STATE_ONE
/* "0 OK, 1 WARN, 2 ALERT", for help texts */
#define UD_STATE_LEGEND_ENTRY(name, value) #value " " #name
#define UD_STATE_LEGEND UD_STATES(UD_STATE_LEGEND_ENTRY, ", ")

/* "OK", "WARN", "ALERT" ("?" for none of them) */
const char *ud_state_name(enum ud_state s);
/* the state of that name, or -1 */
int ud_state_parse(const char *name);

/* --- what the records carry ---------------------------------------------------------- */

#define UD_TEXT_LEN 64
typedef char ud_text[UD_TEXT_LEN];
typedef uint64_t ud_buckets[UD_NBUCKETS];

/* distinct drop reasons kept per socket, and carried by its record */
#define UD_MAX_REASONS 24
struct ud_drops {
	struct ud_drop {
		ud_text reason;  /* the kernel's enum skb_drop_reason name, short */
		uint64_t count;
	} v[UD_MAX_REASONS];
	unsigned int n;
};

/*
 * How a field is kept: its value written, and a reader's way back.
 *   TEXT          a string, as is
 *   TEXT_OR_NULL  a string; "" is written null ("unknown"), and null reads ""
 *   UINT          an unsigned integer of the member's width (a wider number
 *                 is not read)
 *   UINT_OR_NULL  the same; 0 is written null, and null reads 0
 *   REAL          a double, with the field's decimals
 *   REAL_OR_NULL  the same; NaN is written null, and null reads NaN
 *   BUCKETS       the UD_NBUCKETS counts, a JSON array of exactly that many
 *   DROPS         reason -> count, a JSON object of at most UD_MAX_REASONS
 *   STATE         enum ud_state, by its name
 */
enum ud_keep {
	UD_KEEP_TEXT,
	UD_KEEP_TEXT_OR_NULL,
	UD_KEEP_UINT,
	UD_KEEP_UINT_OR_NULL,
	UD_KEEP_REAL,
	UD_KEEP_REAL_OR_NULL,
	UD_KEEP_BUCKETS,
	UD_KEEP_DROPS,
	UD_KEEP_STATE,
};

/* the shapes most fields share: a count, and a dwell time (null without reads) */
#define UD_COUNT(X, name, head, width) X(name, uint64_t, UINT, 0, REC_COL(head, width, 0, 0))
#define UD_DWELL_US(X, name, head, width) X(name, double, REAL_OR_NULL, 1, REC_COL(head, width, 0, 1))

/*
 * One interval: when it closed (UTC, ISO 8601 with milliseconds), its
 * length, the backend, the sockets shown and tracked, and the totals over
 * every socket: reads, reads that matched no enqueue, the FIFO's
 * resynchronisations, events that found the ring full; sockets evicted, and
 * reads of evicted sockets that no socket record reports (their slot changed
 * hands before the interval closed).
 */
#define UD_INTERVAL_FIELDS(X)                                                            \
	X(time, ud_text, TEXT, 0, REC_COL("TIME (UTC)", -24, 0, 0))                       \
	X(interval_s, double, REAL, 3, REC_COL("INTERVAL s", 10, 0, 1))                   \
	X(backend, ud_text, TEXT, 0, REC_COL("BACKEND", -10, 0, 0))                       \
	UD_COUNT(X, sockets, "SOCKETS", 7)                                                \
	UD_COUNT(X, tracked, "TRACKED", 7)                                                \
	UD_COUNT(X, packets, "PKTS", 8)                                                   \
	UD_COUNT(X, unmatched, "UNMATCHED", 9)                                            \
	UD_COUNT(X, resync_added, "RESYNC+", 7)                                           \
	UD_COUNT(X, resync_dropped, "RESYNC-", 7)                                         \
	UD_COUNT(X, ring_full, "RINGFULL", 8)                                             \
	UD_COUNT(X, evicted, "EVICTED", 7)                                                \
	UD_COUNT(X, unattributed, "UNATTRIB", 8)

/*
 * One socket over one interval: its local port and address, the last
 * reader (or the process holding it), reads, the dwell's average,
 * estimated p50 and p99 and maximum, datagrams waiting, the dwell buckets,
 * drops by reason, and its state. The buckets' table column is headed by
 * their labels (ud_buckets_head, lib/dwellrec.c).
 */
#define UD_SOCKET_FIELDS(X)                                                              \
	X(port, uint16_t, UINT, 0, REC_COL("PORT", 5, 0, 0))                              \
	X(addr, ud_text, TEXT, 0, REC_COL("ADDR", -20, 0, 0))                             \
	X(pid, uint32_t, UINT_OR_NULL, 0, REC_COL("PID", 7, 0, 0))                        \
	X(comm, ud_text, TEXT_OR_NULL, 0, REC_COL("COMM", -15, 0, 0))                     \
	UD_COUNT(X, packets, "PKTS", 7)                                                   \
	UD_DWELL_US(X, avg_us, "AVG us", 9)                                               \
	UD_DWELL_US(X, p50_us, "P50 us", 9)                                               \
	UD_DWELL_US(X, p99_us, "P99 us", 9)                                               \
	UD_DWELL_US(X, max_us, "MAX us", 10)                                              \
	X(queue_len, uint32_t, UINT, 0, REC_COL("QUEUE", 5, 0, 0))                        \
	X(buckets, ud_buckets, BUCKETS, 0, REC_COL(ud_buckets_head, -40, 0, 0))           \
	X(drops, struct ud_drops, DROPS, 0, REC_COL("DROPS", -24, 0, 0))                  \
	X(state, enum ud_state, STATE, 0, REC_COL("STATE", -5, 0, 0))

/* one BPF program's run-time statistics (--bpf-stats); ns_per_run null without runs */
#define UD_BPF_FIELDS(X)                                                                 \
	X(prog, ud_text, TEXT, 0, REC_COL("BPF PROGRAM", -22, 0, 0))                      \
	UD_COUNT(X, run_cnt, "RUNS", 12)                                                  \
	UD_COUNT(X, run_time_ns, "TIME ns", 14)                                           \
	X(ns_per_run, double, REAL_OR_NULL, 1, REC_COL("ns/RUN", 8, 0, 1))

#define UD_MEMBER(name, type, kept, dec, col) type name;
struct ud_interval_rec { UD_INTERVAL_FIELDS(UD_MEMBER) };
struct ud_socket_rec { UD_SOCKET_FIELDS(UD_MEMBER) };
struct ud_bpf_rec { UD_BPF_FIELDS(UD_MEMBER) };
#undef UD_MEMBER

/* each record's field indexes: UD_IV_time, UD_SK_buckets, UD_BP_prog, ... */
#define UD_IV_INDEX(name, type, kept, dec, col) UD_IV_##name,
#define UD_SK_INDEX(name, type, kept, dec, col) UD_SK_##name,
#define UD_BP_INDEX(name, type, kept, dec, col) UD_BP_##name,
enum ud_interval_field { UD_INTERVAL_FIELDS(UD_IV_INDEX) UD_INTERVAL_NFIELDS };
enum ud_socket_field { UD_SOCKET_FIELDS(UD_SK_INDEX) UD_SOCKET_NFIELDS };
enum ud_bpf_field { UD_BPF_FIELDS(UD_BP_INDEX) UD_BPF_NFIELDS };
#undef UD_IV_INDEX
#undef UD_SK_INDEX
#undef UD_BP_INDEX

extern const struct rec_schema ud_interval_schema; /* "type":"interval" */
extern const struct rec_schema ud_socket_schema;   /* "type":"socket" */
extern const struct rec_schema ud_bpf_schema;      /* "type":"bpf_prog" */

/* --- the writer's side: one record through w; rec_write()'s result ------------------- */

int ud_interval_write(struct rec_writer *w, const struct ud_interval_rec *r);
int ud_socket_write(struct rec_writer *w, const struct ud_socket_rec *r);
int ud_bpf_write(struct rec_writer *w, const struct ud_bpf_rec *r);

/* --- the readers' side ------------------------------------------------------------- */

/* which fields a record held; bit i is field i of its record type */
struct ud_fieldset {
	uint32_t bits;
};
static inline bool ud_has(const struct ud_fieldset *fs, unsigned int field)
{
	return fs->bits >> field & 1;
}

/* the parsed line is a record of schema s's type */
bool ud_record_is(const struct jl_obj *o, const struct rec_schema *s);
/*
 * A parsed JSON line back into the struct it was written from; fields the
 * line lacks (or holds with another type, or too long or wide for their
 * member) stay zero and their bits clear. Returns the number of fields found.
 */
unsigned int ud_interval_read(const struct jl_obj *o, struct ud_interval_rec *r, struct ud_fieldset *fs);
unsigned int ud_socket_read(const struct jl_obj *o, struct ud_socket_rec *r, struct ud_fieldset *fs);
unsigned int ud_bpf_read(const struct jl_obj *o, struct ud_bpf_rec *r, struct ud_fieldset *fs);

#endif
