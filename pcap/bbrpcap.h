/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bbrpcap: capture (capture.c), join (join.c), and the
 * analyses flows, throughput and acks (commands.c). Each takes argv from its
 * own name on and returns an exit code of lib/common.h's table. */
#ifndef PCAP_BBRPCAP_H
#define PCAP_BBRPCAP_H

#include <stdio.h>

#include "pcap/shared.h"
#include "record.h"

int bp_capture_main(int argc, char **argv);
int bp_join_main(int argc, char **argv);
int bp_flows_main(int argc, char **argv);
int bp_throughput_main(int argc, char **argv);
int bp_acks_main(int argc, char **argv);
int bp_gaps_main(int argc, char **argv);

#endif
