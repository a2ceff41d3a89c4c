/* SPDX-License-Identifier: GPL-2.0-only */
/* What bbrpcap's subcommands share: running a capture file through an
 * analysis, and the options every analysis takes. */
#ifndef PCAP_SHARED_H
#define PCAP_SHARED_H

#include <stdbool.h>

#include "pcap/analysis.h"
#include "record.h"

/* options shared by the analysis subcommands */
struct bp_common {
	enum rec_format format;
	bool format_set;
	enum cap_reader reader;
	struct an_sel sel[16];
	unsigned int nsel;
};

/* opens FILE and runs the analysis; returns TK_EXIT_OK or TK_EXIT_DATA (damaged
 * file: everything before the damage is in a) or TK_EXIT_FAIL (no analysis) */
int bp_analyse(const char *path, enum cap_reader reader, struct an *a);
/* parses --flow, adding to c->sel; exits 2 on a bad value */
void bp_add_flow(struct bp_common *c, const char *opt, const char *val);

#endif
