/* SPDX-License-Identifier: GPL-2.0-only */
/* ackhold's settings, as its command line sets them (ackhold/args.c). */
#ifndef ACKHOLD_ACKHOLD_H
#define ACKHOLD_ACKHOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "recout.h"
#include "bpf/contract/ackhold.h"

enum ah_records { AH_RECORDS_HOLDS, AH_RECORDS_NONE };

struct options {
	uint16_t ports[AH_PORTS_MAX];
	uint32_t nports;
	double min_hold_ms;
	uint32_t max_flows;
	double duration_s;       /* 0: until Ctrl-C */
	int records;             /* enum ah_records */
	uint32_t top;            /* peers the verdict names */
	bool stats;              /* each program's bpf_stats at exit */
	const char *prometheus;  /* ADDR:PORT of /metrics, or NULL */
	uint32_t metrics_peers;  /* peers /metrics names */
	struct rec_out out;
};

/* parses argv into o; exits 2 with one line on a bad command line */
void parse_args(int argc, char **argv, struct options *o);

#endif
