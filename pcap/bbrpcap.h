/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bbrpcap, each in its own file. */
#ifndef PCAP_BBRPCAP_H
#define PCAP_BBRPCAP_H

#include <stdio.h>

#include "pcap/analysis.h"
#include "record.h"

/* exit codes beyond lib/common.h's, documented in --help */
enum bbrpcap_exit {
	BP_EXIT_UNMATCHED = 10, /* join --strict: a collapse record found no frame */
};

/* options shared by the analysis subcommands */
struct bp_common {
	enum rec_format format;
	bool format_set;
	enum cap_reader reader;
	struct an_sel sel[16];
	unsigned int nsel;
};

int bp_capture_main(int argc, char **argv);
int bp_join_main(int argc, char **argv);

/* opens FILE and runs the analysis; returns TK_EXIT_OK or TK_EXIT_DATA (damaged
 * file: everything before the damage is in a) or TK_EXIT_FAIL (no analysis) */
int bp_analyse(const char *path, enum cap_reader reader, struct an *a);
/* parses --flow, adding to c->sel; exits 2 on a bad value */
void bp_add_flow(struct bp_common *c, const char *opt, const char *val);

#endif
