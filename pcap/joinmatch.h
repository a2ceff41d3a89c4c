/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The matching behind `bbrpcap join`, apart from its files and output, so
 * that it can be tested on its own (tests/unit/test_joinmatch.c).
 *
 * A record (a bbrtrace sample or collapse) names a flow, the cumulative ACK
 * number of the ACK that produced it (its snd_una) and the trace's time. An
 * event is a captured ACK frame of that flow: its ACK number and capture
 * time. The two clocks differ by an unknown offset: it is the densest
 * cluster of (frame time - record time) over the records' candidate frames.
 * Then, for each flow and ACK number, records and frames are paired in time
 * order with the least total time error (duplicate ACKs, and frames of ACKs
 * that made no sample, are told apart this way); a frame further than the
 * tolerance from its record's time is no match. Equal 32-bit ACK numbers
 * 4 GiB apart (sequence wraparound) are told apart by time.
 */
#ifndef PCAP_JOINMATCH_H
#define PCAP_JOINMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* a stall's snd_una is the ACK number it waited for (all the data in flight
 * when it began) and its time its end; stalls do not vote on the offset */
enum jm_kind { JM_OTHER = 0, JM_SAMPLE, JM_COLLAPSE, JM_STALL };

struct jm_rec {
	size_t off;          /* where the line is in the trace (the caller's) */
	size_t len;
	uint32_t lineno;
	uint8_t kind;        /* enum jm_kind: samples and collapses are matched apart */
	int32_t flow;        /* the caller's flow index; -1: no flow */
	uint32_t snd_una;
	int64_t t_ns;
	int64_t ev;          /* the matched event, -1 */
	bool throttling;     /* a collapse that throttled the stream (the caller's) */
};

struct jm_ev {
	uint32_t flow;
	uint32_t ack;
	int64_t ts_ns;
	uint64_t frame;      /* the capture's frame number */
	int64_t delay_ns;    /* how long after the newest data it covers; -1 unknown */
};

struct jm {
	struct jm_rec *recs;
	size_t nrecs;
	struct jm_ev *evs;
	size_t nevs;
	int64_t offset_ns;   /* capture - trace, once estimated */
	bool oom;
};

/* sorts the events by flow, ACK number and time: before the two below */
void jm_sort_events(struct jm *j);
/* sets j->offset_ns; false when no record has a candidate frame */
bool jm_estimate_offset(struct jm *j, size_t *support);
/* sets each record's ev; max_skew_ns is the tolerance */
void jm_match(struct jm *j, int64_t max_skew_ns);

#endif
