/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bbrpcap, each in its own file. */
#ifndef PCAP_BBRPCAP_H
#define PCAP_BBRPCAP_H

#include <stdio.h>

#include "pcap/shared.h"
#include "record.h"

/* exit codes beyond lib/common.h's, documented in --help */
enum bbrpcap_exit {
	BP_EXIT_UNMATCHED = 10, /* join --strict: a collapse record found no frame */
};

int bp_capture_main(int argc, char **argv);
int bp_join_main(int argc, char **argv);


#endif
