/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What upfbench's commands share: the notes stream and the output, the
 * run record that run and sweep write, and what a command prepares before
 * it measures (the memory floor, the traffic, DPDK's EAL).
 */
#ifndef UP_CMD_H
#define UP_CMD_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"
#include "record.h"

#include "args.h"
#include "floor.h"
#include "path.h"
#include "traffic.h"

/* ---- output (cmd_output.c) ---- */

/* notes: after a table, in its stream; on stderr under CSV and JSON */
extern FILE *up_notes;

#define note(...)                                                 \
	do {                                                      \
		if (log_get_level() >= LOG_NORMAL) {              \
			fprintf(up_notes, "%s: ", log_prog());    \
			fprintf(up_notes, __VA_ARGS__);           \
			fputc('\n', up_notes);                    \
		}                                                 \
	} while (0)

/* -o FILE, or stdout; NULL after one line */
FILE *up_output_open(const struct up_args *a);
/* 0, or TK_EXIT_FAIL after one line when the output could not be written */
int up_output_close(const struct up_args *a, FILE *f);
/* a writer in -f's format (by default as lib/record says for this stream); notes follow a table */
struct rec_writer *up_writer_open(const struct up_args *a, FILE *out);

/* ---- the run record (cmd_record.c) ---- */

struct run_rec {
	char label[48];
	const char *dist;
	struct up_result r;
	const struct up_floor *floor;   /* NULL: not measured */
};

int up_write_run(struct rec_writer *w, const struct run_rec *x);
void up_run_notes(const struct run_rec *x);

static inline bool up_identity_holds(double ratio)
{
	return fabs(ratio - 1) <= UP_IDENTITY_TOLERANCE;
}

/* ---- what the commands share (cmd_prepare.c) ---- */

int up_measure_floor(const struct up_args *a, struct up_floor *f);
/* the capture (--pcap-in), or sessions and packets generated */
int up_load_traffic(const struct up_args *a, uint32_t sessions, uint64_t packets,
		    struct up_traffic *t);
/* DPDK's EAL, when a table of max_sessions keys will be an rte_hash */
int up_check_rte(uint32_t max_sessions, bool needed, bool huge);

/* ---- the commands, one file each ---- */

int up_cmd_run(struct up_args *a);
int up_cmd_sweep(struct up_args *a);
int up_cmd_lookup(struct up_args *a);
int up_cmd_floor(struct up_args *a);
int up_cmd_decode(struct up_args *a);
int up_cmd_check_identity(struct up_args *a);

#endif
