/* SPDX-License-Identifier: GPL-2.0-only */
/* What bbrpcap's subcommands share: running a capture file through an
 * analysis, the options every analysis takes, and where records go. */
#ifndef PCAP_SHARED_H
#define PCAP_SHARED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opt.h"
#include "pcap/analysis.h"
#include "record.h"

/* at most this many --flow selectors */
#define BP_MAX_FLOWS 16

/* options shared by the analysis subcommands; a command's settings start
 * with this struct, so the shared options' callbacks find it at cfg */
struct bp_common {
	enum rec_format format;
	bool format_set;
	const char *output;      /* -o; NULL: stdout */
	int reader;              /* enum cap_reader */
	struct an_sel sel[BP_MAX_FLOWS];
	const char *spec[BP_MAX_FLOWS]; /* each --flow as written */
	unsigned int nsel;
};

/* the capture files of a command, read as one in time order (capfile.h's
 * cap_set) */
struct bp_input {
	char *const *paths;      /* as given */
	unsigned int n;
	enum cap_reader reader;
	char *order;             /* after bp_analyse: the files as read, in time
	                          * order, comma-separated (malloc'ed; free it) */
};

/* the ring files of `capture -w FILE --ring N`: number seq of FILE (x.pcap ->
 * x-000001.pcap, x -> x-000001) */
void bp_ring_name(const char *path, uint64_t seq, char *buf, size_t len);
/* all of them as a shell would be told: x-*.pcap */
void bp_ring_glob(const char *path, char *buf, size_t len);

/* the units of the analyses' records, for --help */
extern const char bp_units_help[];

/* --reader's values, by enum cap_reader */
extern const char *const bp_reader_names[];

/* OPT_CALL for --flow: a flow number or endpoints, into the bp_common at cfg */
int bp_opt_flow(void *cfg, const char *opt, const char *val);

/* the options of flows, throughput and acks, in a table whose TK_OPT_CFG
 * has its bp_common as `com` */
#define BP_OPT_E_ANALYSIS                                                                         \
	OPT_E_CALL("flow", 0, "SPEC", bp_opt_flow,                                                 \
		   "only these flows (repeatable): a flow number from\n"                            \
		   "`flows`, an endpoint ADDR:PORT, [ADDR6]:PORT, :PORT or\n"                       \
		   "ADDR:*, or two endpoints A-B (either direction)"),                              \
	OPT_E_FORMAT(com.format, com.format_set),                                                   \
	OPT_E_OUTPUT(com.output, "write the records to FILE instead of stdout"),                   \
	OPT_E_CHOICE_D("reader", 0, "R", com.reader, bp_reader_names, "mmap",                       \
		       "mmap (the file mapped, no copy) or libpcap\n"                               \
		       "(pcap_next_ex; for cross-checks; offsets not reported)")

/*
 * Opens the files and runs the analysis over them, in time order; returns
 * TK_EXIT_OK, TK_EXIT_DATA (a file missing, unreadable, damaged or not a
 * capture: everything before the damage is in a) or TK_EXIT_FAIL (out of
 * memory). *opened says whether the files could be read as captures at all
 * (then a holds what was in them). Files that overlap in time are said, one
 * warning line for each pair.
 */
int bp_analyse(struct bp_input *in, struct an *a, bool *opened);
/* "push.pcap", or "the 3 files" */
const char *bp_input_name(const struct bp_input *in, char *buf, size_t len);
/* "-" only alone: a usage error (exit 2) otherwise; cmd names the command */
void bp_check_stdin(const char *cmd, char *const *paths, unsigned int n);
/*
 * --flow against the flows of a: TK_EXIT_DATA after one line when it was
 * given and chose none of them (the input does not hold what was asked);
 * else TK_EXIT_OK, with a warning for each SPEC that matched nothing.
 */
int bp_check_selection(const struct bp_common *c, const struct bp_input *in, const struct an *a);

/* c->output (or stdout) and a writer in c's format (the default chosen for
 * that stream); TK_EXIT_OK or TK_EXIT_FAIL after saying why */
int bp_open_records(struct bp_common *c, FILE **out, struct rec_writer **w);
/* flushes and closes both; TK_EXIT_FAIL after saying why when a write failed */
int bp_close_records(const struct bp_common *c, FILE *out, struct rec_writer *w);

#endif
