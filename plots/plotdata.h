/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bbrplot's data preparation: each plot's inputs (bbrtrace JSON lines,
 * bbrpcap's throughput CSV, udpdwell socket records, upfbench and repro sweep
 * CSVs) turned into the whitespace-separated tables the gnuplot templates in
 * plots/ read. Nothing here draws; the templates do.
 */
#ifndef PLOTS_PLOTDATA_H
#define PLOTS_PLOTDATA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

/* rates below this are drawn at it: the y axes are logarithmic */
#define PD_FLOOR_MBPS 0.01

/*
 * What the functions below return on failure, with a one-line message in
 * err: the input's fault (a file missing, unreadable, malformed, or with
 * nothing to draw), or the system's (a data file that cannot be written, no
 * memory).
 */
#define PD_ERR_INPUT (-1)
#define PD_ERR_SYSTEM (-2)


/* which flow of a trace to draw */
struct pd_flow_sel {
	bool have_cookie;
	uint64_t cookie;
	const char *sender;   /* "ADDR:PORT" of the traced socket, NULL: any */
};

/* the states of a silence (bbrpcap gaps): nothing in flight, or data unACKed */
#define PD_GAP_STATES 2

struct pd_dip_info {
	/* the flow drawn */
	uint64_t cookie;
	char saddr[64], daddr[64];
	uint16_t sport, dport;
	uint64_t flows;          /* flows in the trace */
	uint64_t samples;        /* of the flow drawn */
	uint64_t collapses[BT_NCAUSES]; /* by cause, lib/trace.h's order */
	uint64_t throttling[BT_NCAUSES]; /* of those, the ones that throttled the flow */
	uint64_t stalls[BT_NSTALL_CAUSES]; /* the sender's stalls, by cause */
	double stalled_s[BT_NSTALL_CAUSES];
	/* gaps.dat: the capture's silences of the flow's data, by state (idle,
	 * in_flight): how many, seconds in all, the longest */
	uint64_t gaps[PD_GAP_STATES];
	double gap_s[PD_GAP_STATES], gap_max_s[PD_GAP_STATES];
	uint64_t need_rows;      /* need.dat's: one per collapse with a need */
	uint64_t demand_rows;    /* demand.dat's: one per demand checkpoint */
	double origin_s;         /* time 0 of the plot: the trace's first sample, or the
				  * capture's first frame if earlier (pd_dip_shift) */
	double last_s;           /* the last sample or frame, relative to origin */
	double min_mbps;         /* the lowest rate drawn that is above 0, for the axis' floor */
	bool wall;               /* times are wall_ns (else t_ns) */
	/* joined traces: capture time - trace time, the median over records with a frame */
	bool have_offset;
	double offset_s;
};

/*
 * Reads a bbrtrace JSON-lines file (a regular file: it is read twice) and
 * writes, for the flow drawn, DIR/samples.dat (t_s bw_mbps pacing_mbps
 * rcv_interval_us snd_interval_us app_limited), DIR/collapses.dat (one index
 * block per cause, in lib/trace.h's order: t_s bw_mbps bw_prev_mbps
 * throttling), DIR/need.dat (t_s need_mbps demand_mbps at each collapse),
 * DIR/stalls.dat (one index block per stall cause: t_s duration_s) and
 * DIR/demand.dat (t_s demand_mbps need_mbps window_s app_limited, at each of
 * the demand's checkpoints, lib/demand.h). Returns 0 or a PD_ERR_*; a trace
 * without samples is bad input.
 */
int pd_dip_trace(const char *trace_path, const struct pd_flow_sel *sel, const char *dir,
		 struct pd_dip_info *info, char *err, size_t errlen);

/* rates are drawn on a log axis; intervals of 0 us at this floor */
#define PD_INTERVAL_FLOOR_US 1

/*
 * Time 0 of the plot is the earlier of the trace's first sample and the
 * capture's first frame: when the capture started first_s (< 0) before
 * the trace, every data file's times move by -first_s, so that all of them
 * start at 0 or later. 0, or a PD_ERR_*.
 */
int pd_dip_shift(const char *dir, struct pd_dip_info *info, double first_s, char *err, size_t errlen);

/*
 * Reads `bbrpcap throughput --format csv` output and writes DIR/tput.dat
 * (t_s sent_mbps acked_mbps dip) for the trace flow's data direction, times
 * relative to the plot's origin (capture epoch - offset_s - origin_s); a bin
 * before the trace's first sample has a negative time until pd_dip_shift.
 * Returns the number of bins written, or a PD_ERR_*; first_s: the first bin's time.
 */
long pd_dip_tput(FILE *csv, struct pd_dip_info *info, double offset_s, const char *dir, double *first_s,
		 char *err, size_t errlen);

/*
 * Reads `bbrpcap gaps --format csv` output and writes DIR/gaps.dat (t_s
 * duration_s; one block per state: idle, then in_flight) for the trace
 * flow's data direction, on pd_dip_tput's time axis; counts them in info.
 * Returns the number of silences written, or a PD_ERR_*.
 */
long pd_dip_gaps(FILE *csv, struct pd_dip_info *info, double offset_s, const char *dir, char *err, size_t errlen);

/*
 * udpdwell JSON lines: the socket records summed per socket (address, port)
 * over all intervals, written as DIR/dwell.dat: one row per bucket, one
 * column per socket (share of its datagrams, %), with a quoted header.
 * Returns the number of sockets, or a PD_ERR_*.
 */
int pd_dwell(const char *path, const char *dir, char *err, size_t errlen);

/*
 * upfbench's sweep CSV (columns by name: label, sessions, cycles_per_pkt,
 * floor_cycles): DIR/upf.dat, one index block per label, rows sorted by
 * sessions. labels gets the labels, space-separated, in block order;
 * floor_cycles the median floor (0 when the CSV has none).
 * Returns the number of labels, or a PD_ERR_*.
 */
int pd_upf(const char *path, const char *dir, char *labels, size_t labels_len, double *floor_cycles, char *err,
	   size_t errlen);

/*
 * repro/sweep.sh's CSV: DIR/sweep.dat, one row per run: "RTT, quickack X"
 * and collapses per minute by cause, then goodput in Mbit/s.
 * Returns the number of runs, or a PD_ERR_*.
 */
int pd_sweep(const char *path, const char *dir, char *err, size_t errlen);

/*
 * One CSV line split in place into fields (RFC 4180 quotes), at most max.
 * Returns the number of fields, -1 for an unterminated quote, or
 * PD_CSV_TOO_WIDE when the line has more than max fields.
 */
#define PD_CSV_TOO_WIDE (-2)
int pd_csv_split(char *line, char **fields, int max);

#endif
