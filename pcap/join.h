/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bbrpcap join's files share: the join's state (the trace's records
 * and flows, the capture's ACKs of those flows), the trace's reading
 * (pcap/jointrace.c) and the joined output's writing (pcap/joinout.c);
 * pcap/join.c is the command around them.
 */
#ifndef PCAP_JOIN_H
#define PCAP_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pcap/joinmatch.h"

struct tr_flow {
	uint8_t family;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
};

struct join {
	/* trace */
	const char *trace_path;
	char *buf;
	size_t size;
	bool mapped;
	struct jm m;         /* the records, the capture's ACK events, the offset */
	size_t cap_recs;
	struct tr_flow *flows;
	uint32_t nflows, cap_flows;
	struct { uint64_t cookie; int32_t tflow; } *cookies;
	size_t ncookies, cap_cookies;
	bool use_wall;
	bool time_chosen;
	/* capture */
	size_t cap_evs;
	int32_t *flow_map;   /* an_flow id * 2 + data direction -> tflow; -2: not yet known */
	size_t cap_map;
	bool oom;
	int64_t t0_ns;
};

struct join_counts {
	uint64_t samples, samples_matched, collapses, collapses_matched, stalls, stalls_matched;
};

/* the trace into j->buf; a TK_EXIT_* code */
int join_load_file(struct join *j, const char *path);
/* reads the trace; -1 on a system error, 1 on a bad line (records before it
 * kept), 2 when it is a packet capture (nothing kept) */
int join_read_trace(struct join *j);
/*
 * The collapse lines shown without -v: a screenful. A trace of a long push
 * holds hundreds of collapses, most of them harmless, so those that
 * throttled the stream come first; every one is in the joined records, and
 * -v lists every line.
 */
#define JOIN_LINES_SHOWN 10

/* every trace record again, joined, to out; a line for each of max_lines
 * collapses to lines, in time order (the first that throttled, then the
 * first harmless ones to fill max_lines), then how many more there were */
int join_write_output(const struct join *j, FILE *out, FILE *lines, uint64_t max_lines,
		      const char *out_name, struct join_counts *n);

#endif
