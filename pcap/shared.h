/* SPDX-License-Identifier: GPL-2.0-only */
/* What bbrpcap's subcommands share: running a capture file through an
 * analysis, the options every analysis takes, and where records go. */
#ifndef PCAP_SHARED_H
#define PCAP_SHARED_H

#include <stdbool.h>
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
	unsigned int nsel;
};

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
	OPT_E_CHOICE("reader", 0, "R", com.reader, bp_reader_names,                                 \
		     "mmap (default: the file mapped, no copy) or libpcap\n"                         \
		     "(pcap_next_ex; for cross-checks; offsets not reported)")

/*
 * Opens FILE and runs the analysis; returns TK_EXIT_OK, TK_EXIT_DATA (a file
 * missing, unreadable, damaged or not a capture: everything before the damage
 * is in a) or TK_EXIT_FAIL (out of memory). *opened says whether FILE could
 * be read as a capture at all (then a holds what was in it).
 */
int bp_analyse(const char *path, enum cap_reader reader, struct an *a, bool *opened);
/* one line on stderr when --flow was given and chose none of a's flows */
void bp_warn_unmatched(const struct bp_common *c, const char *path, const struct an *a);

/* c->output (or stdout) and a writer in c's format (the default chosen for
 * that stream); TK_EXIT_OK or TK_EXIT_FAIL after saying why */
int bp_open_records(struct bp_common *c, FILE **out, struct rec_writer **w);
/* flushes and closes both; TK_EXIT_FAIL after saying why when a write failed */
int bp_close_records(const struct bp_common *c, FILE *out, struct rec_writer *w);

#endif
