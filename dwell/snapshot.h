/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One reading of udpdwell's kernel maps, and the per-interval view computed
 * from two readings: what the live table, the JSON lines and the Prometheus
 * page all show. The kernel keeps cumulative figures; user space keeps the
 * previous reading per socket and subtracts.
 */
#ifndef UD_SNAPSHOT_H
#define UD_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/contract/udpdwell.h"
#include "reasons.h"
#include "stats.h"

struct ud_drop_count {
	uint32_t reason;
	uint64_t count;
};

/* adds count to reason's slot of v[0..*n), at most UD_MAX_REASONS of them */
void ud_drops_add(struct ud_drop_count *v, unsigned int *n, uint32_t reason, uint64_t count);
bool ud_drops_has(const struct ud_drop_count *v, unsigned int n, uint32_t reason);

/* one socket as read from the kernel (the FIFO's ring is not copied) */
struct ud_entry {
	uint64_t key;              /* ud_key(slot, gen): one socket's tenure of a slot */
	uint8_t addr[16];
	uint16_t port;
	uint32_t netns;
	uint64_t ino;
	uint32_t tgid;
	char comm[16];
	uint32_t queue_len;
	uint64_t last_event_ns;
	struct ud_cumul cumul;
	uint64_t max_ns;           /* since the socket was first seen */
	uint64_t interval_max_ns;  /* in the interval just closed */
	uint64_t oldest_stamp_ns;  /* the oldest datagram still waiting, 0: none */
	struct ud_drop_count drops[UD_MAX_REASONS];
	unsigned int ndrops;
	uint32_t slot_reads;       /* every read of the slot, any generation (mod 2^32) */
	bool reads_known;          /* false: the per-CPU figures could not be read */
};

struct ud_snapshot {
	struct ud_entry *e; /* sorted by key */
	unsigned int n, cap;
	uint64_t drop_entries;     /* (socket, reason) pairs in the kernel map */
	uint64_t orphan_drops;     /* pairs whose socket no longer holds its slot */
	struct ud_sock_stats *pcpu; /* one slot's per-CPU figures, scratch */
	int ncpus;
};

/* where the kernel keeps it: the mapped state array and the maps' fds */
struct ud_source {
	const struct ud_sock *state;
	uint32_t nslots;
	int stats_fd;
	int drops_fd;
};

/*
 * Reads every owned slot of the state array with its per-CPU figures, and
 * ud_drops. epoch is the interval number whose maximum goes to
 * interval_max_ns. Pairs of ud_drops whose socket is gone are deleted when
 * delete_orphans is set. Returns 0 or -errno.
 */
int ud_snapshot_read(struct ud_snapshot *s, const struct ud_source *src, uint64_t epoch,
		     bool delete_orphans);

/*
 * One socket from a copy of its slot and its per-CPU figures (ncpus values;
 * those of another generation are left out).
 */
void ud_entry_from(struct ud_entry *e, uint32_t slot, const struct ud_sock *st,
		   const struct ud_sock_stats *pcpu, int ncpus, uint64_t epoch);
void ud_snapshot_free(struct ud_snapshot *s);
struct ud_entry *ud_snapshot_find(const struct ud_snapshot *s, uint64_t key);
uint64_t ud_entry_drops(const struct ud_entry *e, uint32_t reason);

/*
 * The reads no socket record reports: a socket whose slot changed hands
 * before an interval showed its last reads takes them with it. Each slot's
 * count of every read (struct ud_sock_stats' reads) against what the rows
 * report tells how many; a copy racing a read can show the rows one ahead,
 * which the next interval evens out, so the shortfall is carried (owed).
 */
struct ud_ledger {
	uint32_t *seen;  /* each slot's count at the last reading */
	uint32_t nslots;
	int64_t owed;    /* reads counted but not reported yet; < 0: reported ahead */
	uint64_t total;  /* unattributed reads so far */
};

int ud_ledger_init(struct ud_ledger *l, uint32_t nslots);
void ud_ledger_free(struct ud_ledger *l);

/* the interval's view of one socket */
struct ud_row {
	uint64_t key;
	char addr[48];
	uint16_t port;
	uint64_t ino;
	uint32_t pid;         /* 0: unknown */
	char comm[16];
	struct ud_cumul d;    /* this interval */
	double avg_us, p50_us, p99_us, max_us; /* NaN when no reads */
	double oldest_wait_us; /* age of the oldest waiting datagram, 0: none */
	uint32_t queue_len;
	struct ud_drop_count drops[UD_MAX_REASONS]; /* this interval, count > 0 */
	unsigned int ndrops;
	uint64_t buffer_drops; /* SOCKET_RCVBUFF + PROTO_MEM in this interval */
	enum ud_state state;
	bool active;          /* reads, drops or waiting datagrams in the interval */
	bool idle_waiting;    /* datagrams wait but no event in the interval */
};

/*
 * The row of socket cur given its previous reading prev (NULL: new).
 * now_ns is CLOCK_MONOTONIC at the reading; since_ns the interval's start.
 */
void ud_row_build(struct ud_row *r, const struct ud_entry *cur, const struct ud_entry *prev,
		  const struct ud_thresholds *t, uint32_t reason_rcvbuff, uint32_t reason_proto_mem,
		  uint64_t now_ns, uint64_t since_ns);

/* worst first: the larger of p99 and the oldest wait, then max, then port */
/*
 * Settles one reading against the rows built from it (rows[i] from s->e[i]):
 * returns the reads of this interval that no row reports.
 */
uint64_t ud_ledger_settle(struct ud_ledger *l, const struct ud_snapshot *s,
			  const struct ud_row *rows);

int ud_row_cmp_worst(const void *a, const void *b);

#endif
