/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ackhold's judgement of each hold (did the sender wait on it, was it
 * Nagle's) and its sums per peer: a peer is a remote address, whatever its
 * ports and connections.
 */
#ifndef ACKHOLD_PEERS_H
#define ACKHOLD_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/contract/ackhold.h"

#include "ackhold/rules.h"

#define AH_NSEC_PER_MIN (60ULL * 1000000000ULL)

/* what the timer's and the application's holds did to a peer, summed */
struct ah_harm {
	uint64_t holds;         /* ended by the timer or the application */
	uint64_t timer_holds;   /* of them, by the delayed-ACK timer */
	uint64_t held_ns;
	uint64_t waits;         /* holds the sender waited on */
	uint64_t waited_ns;
	uint64_t nagle;         /* waits with Nagle's signature */
};
/* struct ah_harm's fields, listed once for the sums that go field by field */
#define AH_HARM_FIELDS(X) X(holds) X(timer_holds) X(held_ns) X(waits) X(waited_ns) X(nagle)

/* *dst += *src, field by field; ah_harm_sub: *dst -= *src */
void ah_harm_add(struct ah_harm *dst, const struct ah_harm *src);
void ah_harm_sub(struct ah_harm *dst, const struct ah_harm *src);

/* one minute of a ring (AH_WINDOW_MIN of them and the current one) */
struct ah_harm_minute {
	uint64_t minute;        /* CLOCK_MONOTONIC / AH_NSEC_PER_MIN */
	struct ah_harm h;
};

struct ah_peer {
	uint8_t addr[16];
	uint16_t family;
	uint8_t laddr[16];      /* this host's address and port of its latest hold, */
	uint16_t port;          /* else of its latest flow */
	uint64_t flows;         /* flows whose totals came (closed, or open at the end) */
	uint64_t segs, bytes, acks, timer_acks;
	uint64_t time_ns;       /* its flows' time seen, first segment to last segment or ACK */
	uint64_t holds;         /* reported holds, whatever ended them */
	uint64_t timer_holds;   /* ended by the delayed-ACK timer */
	uint64_t app_holds;     /* ended by this host's application: its read or answer */
	uint64_t data_holds;    /* ended by the sender's next data: harmless */
	uint64_t repair_holds;  /* a loss's: ended when the sender repaired it */
	uint64_t late_holds;    /* late with no delayed ACK scheduled: not the ACK policy's */
	uint64_t unseen_holds;  /* ended by an ACK that left unseen: not judged */
	uint64_t held_ns;       /* the timer's and the application's holds, summed */
	uint64_t max_hold_ns;   /* the longest of those */
	uint64_t waits;         /* holds the sender waited on */
	uint64_t waited_ns;     /* the waits' quiet time: nothing came until the ACK */
	uint64_t nagle;         /* waits with Nagle's signature */
	struct ah_harm_minute win[AH_WINDOW_MIN + 1]; /* a ring, by the ACK's minute */
};

enum ah_end { AH_END_TIMER, AH_END_DATA, AH_END_READ, AH_END_ANSWER, AH_END_REPAIR, AH_END_LATE, AH_END_UNSEEN };
#define AH_NENDS (AH_END_UNSEEN + 1)

struct ah_peers {
	struct ah_peer *v;
	size_t n, cap;
	uint32_t *slot;         /* open addressing: index + 1, 0 empty */
	size_t nslots;
	uint64_t ends[AH_NENDS]; /* the host's holds, by what ended them */
	struct ah_harm total;   /* the host's, since the start */
	struct ah_harm_minute win[AH_WINDOW_MIN + 1];
};
extern const char *const ah_end_names[];

/* rules.h's: what ended the hold */
enum ah_end ah_hold_end(const struct ah_hold *h);
/* rules.h's: the sender was silent until the ACK, and sent right after it */
bool ah_hold_waited(const struct ah_hold *h);
/* rules.h's: a wait whose latest segment was shorter than the MSS */
bool ah_hold_nagle(const struct ah_hold *h);

/* the peer of id, added if new; NULL when out of memory */
struct ah_peer *ah_peers_get(struct ah_peers *ps, const struct ah_id *id);
/* a hold and a flow's totals into their peer; -1 when out of memory */
int ah_peers_add_hold(struct ah_peers *ps, const struct ah_id *id, const struct ah_hold *h);
int ah_peers_add_totals(struct ah_peers *ps, const struct ah_id *id, const struct ah_totals *t);
/* the harm over the last AH_WINDOW_MIN minutes (this one included) at
 * now_ns (CLOCK_MONOTONIC), into *out: the host's when peer is NULL */
void ah_peers_window(const struct ah_peers *ps, const struct ah_peer *peer, uint64_t now_ns, struct ah_harm *out);
/* the peers, most held time first (the timer's and the application's), then
 * most waited; NULL when out of memory */
struct ah_peer **ah_peers_ranked(const struct ah_peers *ps);
/* the share of its flows' time in the timer's and the application's holds, 0..1 */
double ah_peer_held_share(const struct ah_peer *p);
/* the share of its flows' time its senders waited on this host, 0..1 */
double ah_peer_waited_share(const struct ah_peer *p);
void ah_peers_free(struct ah_peers *ps);
/* an address of the contract (IPv4 in the first 4 bytes) as text */
const char *ah_addr_text(const uint8_t a[16], uint16_t family, char *buf, size_t len);

#endif
