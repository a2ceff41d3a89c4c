/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What udpdwell's parts share: the options, the defaults both the command
 * line and main use, the state shared with the Prometheus thread, and what
 * each part offers the others: the command line (udpdwell_cli.c), the
 * interval (udpdwell_interval.c), its records (udpdwell_records.c), the
 * Prometheus page (udpdwell_metrics.c) and the run (udpdwell.c).
 */
#ifndef UD_UDPDWELL_H
#define UD_UDPDWELL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "prom.h"
#include "record.h"
#include "recout.h"

#include "backend.h"
#include "owner.h"
#include "reasons.h"
#include "snapshot.h"
#include "stats.h"

#define DEFAULT_PORT_LO 10000
#define DEFAULT_PORT_HI 60000
#define DEFAULT_INTERVAL_S 1
#define DEFAULT_WARN_US 5000
#define DEFAULT_ALERT_US 20000

struct options {
	int backend;             /* enum ud_backend: --backend's index in ud_backend_names */
	uint16_t port_lo, port_hi;
	double interval_s;
	uint64_t intervals;      /* 0: until interrupted */
	double duration_s;       /* 0: until interrupted */
	struct rec_out out;
	uint32_t warn_us, alert_us;
	int state_on;            /* enum ud_state_on: --state-on's index */
	struct ud_thresholds thr; /* the three above, once checked */
	const char *prometheus;
	uint32_t max_sockets;
	bool all;
	uint32_t top;
	bool legacy_drops;
	bool bpf_stats;
	bool bpf_reference;
};

/* the state shared with the Prometheus thread, under lock */
struct ud_ctx {
	pthread_mutex_t lock;
	struct options *o;
	struct ud_bpf bpf;
	struct ud_reasons reasons;
	uint32_t reason_rcvbuff, reason_proto_mem;
	struct ud_snapshot cur, prev, scrape;
	uint64_t interval_start_ns;
	uint64_t evicted;
	struct ud_ledger ledger;     /* reads no socket record reports */
	uint64_t unattributed;       /* in the interval just closed */
	/* the state of each socket at the last interval, for the gauge */
	struct ud_keystate {
		uint64_t key;
		enum ud_state state;
		uint32_t pid;
		char comm[16];
	} *states;
	unsigned int nstates;
	/* owners found through /proc for sockets nobody has read yet */
	struct ud_owner_query *owners;
	unsigned int nowners, capowners;
	struct ud_row *rows;
	unsigned int caprows;
	struct rec_writer *w;
	bool tty;
	struct bpf_object *ref_obj; /* --bpf-reference */
};

/* the command line (udpdwell_cli.c): parses argv into o, or exits */
void parse_args(int argc, char **argv, struct options *o);

/* the interval (udpdwell_interval.c) */
struct ud_source source_of(const struct ud_ctx *c);
int keystate_cmp(const void *a, const void *b);
int interval(struct ud_ctx *c);

/* its records (udpdwell_records.c) */
void declare_records(const struct options *o, struct rec_writer *w);
int write_interval(struct ud_ctx *c, unsigned int nrows, uint64_t since, uint64_t now);

/* the Prometheus page (udpdwell_metrics.c) */
int render_metrics(struct prom_buf *b, void *arg);

#endif
